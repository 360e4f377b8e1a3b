/* kernel.c: load a built guest kernel (build.json from build/kernel.sh); Kconfig scenarios. */
#include "kernel.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common.h"
#include "matrix.h"
#include "proc.h"

const char *cache_dir(void)
{
	static char dir[PATH_MAX];
	const char *e = getenv("RCUWB_CACHE");

	if (e && *e)
		return e;
	if ((e = getenv("XDG_CACHE_HOME")) && *e)
		snprintf(dir, sizeof(dir), "%s/rcuwb", e);
	else
		snprintf(dir, sizeof(dir), "%s/.cache/rcuwb", getenv("HOME") ? getenv("HOME") : "/root");
	return dir;
}

const char *kconfig_dir(void)
{
	static char path[PATH_MAX];

	return data_path("RCUWB_KCONFIG_DIR", "perf-configs/kconfig", path, sizeof(path));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The scenario names of dir's NAME.config files, sorted, space-separated. */
static void list_scenarios(const char *dir, char *out, size_t cap)
{
	char *names[64];
	size_t n = 0, i, len = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	out[0] = '\0';
	while (d && n < 64 && (e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l > 7 && !strcmp(e->d_name + l - 7, ".config") && (names[n] = strndup(e->d_name, l - 7)))
			n++;
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		if (len < cap)
			len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", names[i]);
		free(names[i]);
	}
}

bool kconfig_exists(const char *name, char *avail, size_t cap)
{
	char dir[PATH_MAX], path[PATH_MAX + 80];

	if (!kconfig_dir()) {
		snprintf(avail, cap, "(%s)", last_err());
		return false;
	}
	snprintf(dir, sizeof(dir), "%s/scenarios", kconfig_dir());
	snprintf(path, sizeof(path), "%s/%.64s.config", dir, name);
	if (!strchr(name, '/') && name[0] != '.' && access(path, R_OK) == 0)
		return true;
	list_scenarios(dir, avail, cap);
	return false;
}

static int copy_str(json_object *o, const char *key, char *dst, size_t cap, const char *file)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return set_err("%s: missing string \"%s\": rebuild it with 'make kernel'", file, key);
	snprintf(dst, cap, "%s", json_object_get_string(v));
	return 0;
}

/* The string member KEY of O, or "" (an older build.json has no such member). */
static const char *opt_str(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : "";
}

/* The capabilities of the kernel (see kernel.h for a build.json without them). */
static void read_caps(json_object *o, struct kernel_build *k)
{
	json_object *v;

	k->midboot_probe = !json_object_object_get_ex(o, "midboot_probe", &v) || json_object_get_boolean(v);
	k->rcuscale_minruntime = json_object_object_get_ex(o, "rcuscale_minruntime", &v) &&
				 json_object_get_boolean(v);
	snprintf(k->param_prefix, sizeof(k->param_prefix), "%s",
		 *opt_str(o, "rcuscale_param") ? opt_str(o, "rcuscale_param") : "rcuscale");
	snprintf(k->console_prefix, sizeof(k->console_prefix), "%s",
		 *opt_str(o, "rcuscale_console") ? opt_str(o, "rcuscale_console") : "rcu-scale");
}

/* build.json's "source" object as one line, e.g. "git rcuwb-6.1 rcuwb/0001 1a2b..". */
static void read_source(json_object *o, struct kernel_build *k)
{
	json_object *s = NULL;
	const char *kind;

	json_object_object_get_ex(o, "source", &s);
	kind = opt_str(s, "kind");
	if (!strcmp(kind, "debian"))
		snprintf(k->source, sizeof(k->source), "debian %s %s", opt_str(s, "package"),
			 opt_str(s, "version"));
	else if (!strcmp(kind, "git"))
		snprintf(k->source, sizeof(k->source), "git %s %s %s", opt_str(s, "repo"),
			 opt_str(s, "rev"), opt_str(s, "commit"));
	else
		k->source[0] = '\0';
	if (!strcmp(kind, "git")) {
		snprintf(k->commit, sizeof(k->commit), "%s", opt_str(s, "commit"));
		snprintf(k->commit_date, sizeof(k->commit_date), "%s", opt_str(s, "date"));
	}
}

bool kernel_has_option(const struct kernel_build *k, const char *option)
{
	char line[256];
	size_t n = strlen(option);
	FILE *f = fopen(k->config, "re");
	bool set = false;

	if (!f)
		return false;
	while (!set && fgets(line, sizeof(line), f))
		set = !strncmp(line, option, n) && !strcmp(line + n, "=y\n");
	fclose(f);
	return set;
}

static void read_kconfig(struct kernel_build *k)
{
	char line[256];
	FILE *f = fopen(k->config, "re");
	bool rcu_trace = false, events = false;

	strcpy(k->preempt, "?");
	strcpy(k->nohz, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CONFIG_HZ=", 10))
			k->hz = atoi(line + 10);
		else if (!strcmp(line, "CONFIG_PREEMPT=y\n"))
			strcpy(k->preempt, "full");
		else if (!strcmp(line, "CONFIG_PREEMPT_VOLUNTARY=y\n"))
			strcpy(k->preempt, "voluntary");
		else if (!strcmp(line, "CONFIG_PREEMPT_NONE=y\n"))
			strcpy(k->preempt, "none");
		else if (!strcmp(line, "CONFIG_HZ_PERIODIC=y\n"))
			strcpy(k->nohz, "periodic");
		else if (!strcmp(line, "CONFIG_NO_HZ_IDLE=y\n"))
			strcpy(k->nohz, "idle");
		else if (!strcmp(line, "CONFIG_NO_HZ_FULL=y\n"))
			strcpy(k->nohz, "full");
		else if (!strcmp(line, "CONFIG_RCU_TRACE=y\n"))
			rcu_trace = true;
		else if (!strcmp(line, "CONFIG_EVENT_TRACING=y\n"))
			events = true;
	}
	fclose(f);
	k->rcu_trace = rcu_trace && events;
}

/*
 * scenarios/KCONFIG.boot: boot parameters every run of the scenario gets,
 * on one or more lines ('#' starts a comment), as rcutorture's .boot files.
 */
static int read_scenario_boot(struct kernel_build *k)
{
	char path[PATH_MAX], line[512];
	size_t len = 0;
	FILE *f;

	if (!kconfig_dir())
		return 0;
	snprintf(path, sizeof(path), "%s/scenarios/%.64s.boot", kconfig_dir(), k->kconfig);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *s = line;

		if (hash)
			*hash = '\0';
		s[strcspn(s, "\n")] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			continue;
		if (len + strlen(s) + 2 > sizeof(k->scenario_boot)) {
			fclose(f);
			return set_err("%s: longer than %zu bytes: shorten it", path, sizeof(k->scenario_boot) - 1);
		}
		len += (size_t)snprintf(k->scenario_boot + len, sizeof(k->scenario_boot) - len, "%s%s",
					len ? " " : "", s);
	}
	fclose(f);
	return 0;
}

int kernel_load(const char *variant, const char *kconfig, struct kernel_build *k)
{
	char path[PATH_MAX];
	json_object *o, *p;
	int ret = -1;

	memset(k, 0, sizeof(*k));
	kconfig = kconfig && *kconfig ? kconfig : KCONFIG_DEFAULT;
	snprintf(path, sizeof(path), "%s/kernels/%s/%s/build.json", cache_dir(), variant, kconfig);
	/* before scenarios, kernels/VARIANT/build.json was the tiny build (build/kernel.sh removes it) */
	if (access(path, R_OK) && !strcmp(kconfig, KCONFIG_DEFAULT))
		snprintf(path, sizeof(path), "%s/kernels/%s/build.json", cache_dir(), variant);
	if (access(path, R_OK)) {
		snprintf(path, sizeof(path), "%s/kernels/%s/%s/build.json", cache_dir(), variant, kconfig);
		return set_err("kernel variant '%s' is not built in Kconfig scenario '%s' (no %s): "
			       "run 'make kernel VARIANTS=%s KCONFIGS=%s'", variant, kconfig, path, variant, kconfig);
	}
	snprintf(k->build_json, sizeof(k->build_json), "%s", path);
	o = json_object_from_file(path);
	if (!o)
		return set_err("%s: not valid JSON (%s): rebuild it with 'make kernel'",
			       path, json_util_get_last_err());
	if (copy_str(o, "variant", k->variant, sizeof(k->variant), path) ||
	    copy_str(o, "kernel_version", k->version, sizeof(k->version), path) ||
	    copy_str(o, "vmlinux", k->vmlinux, sizeof(k->vmlinux), path) ||
	    copy_str(o, "config", k->config, sizeof(k->config), path) ||
	    copy_str(o, "config_sha", k->config_sha, sizeof(k->config_sha), path))
		goto out;
	snprintf(k->build_key, sizeof(k->build_key), "%s", opt_str(o, "build_key"));
	snprintf(k->kconfig, sizeof(k->kconfig), "%s", kconfig);
	snprintf(k->kconfig_sha, sizeof(k->kconfig_sha), "%s", opt_str(o, "kconfig_sha"));
	read_caps(o, k);
	read_source(o, k);
	k->patches_json = strdup(json_object_object_get_ex(o, "patches", &p) ?
				 json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN) : "[]");
	snprintf(k->initramfs, sizeof(k->initramfs), "%s/initramfs/initramfs.cpio", cache_dir());
	if (access(k->vmlinux, R_OK)) {
		set_err("%s is missing: run 'make kernel VARIANTS=%s KCONFIGS=%s'", k->vmlinux, variant, kconfig);
		goto out;
	}
	if (access(k->initramfs, R_OK)) {
		set_err("%s is missing: run 'make initramfs'", k->initramfs);
		goto out;
	}
	read_kconfig(k);
	ret = read_scenario_boot(k);
out:
	json_object_put(o);
	return ret;
}

int kernel_need_probe(const struct kernel_build *k, const char *what)
{
	if (k->midboot_probe)
		return 0;
	return set_err("%s: kernel variant '%s' (Kconfig scenario %s) has no mid-boot probe (its tree has no "
		       "kernel/rcu/midboot_probe.c): give probe stages only to variants with the probe patch",
		       what, k->variant, k->kconfig);
}

void kernel_free(struct kernel_build *k)
{
	free(k->patches_json);
	k->patches_json = NULL;
}

int kernel_fit_matrix(struct matrix *m)
{
	int nk = m->nvariants * m->nkconfigs, i, rc = 0;
	struct kernel_build *k;

	if (!m->minruntime_s)
		return 0;
	k = calloc((size_t)nk, sizeof(*k));
	if (!k)
		return set_err("out of memory");
	for (i = 0; i < nk && rc == 0; i++)
		rc = kernel_load(m->variants[i / m->nkconfigs], m->kconfigs[i % m->nkconfigs], &k[i]);
	if (rc == 0)
		matrix_fit_kernels(m, k);
	for (i = 0; i < nk; i++)
		kernel_free(&k[i]);
	free(k);
	return rc;
}

int kernel_make(const char *variant, const char *kconfig)
{
	char script[PATH_MAX];
	const char *argv[] = { script, variant, kconfig, NULL };
	const char *dir = data_dir();
	int rc;

	if (!dir)
		return -1;
	snprintf(script, sizeof(script), "%s/build/kernel.sh", dir);
	/* kernel.sh reads the variant file with this program (rcuwb variant --shell) */
	if (proc_self())
		setenv("RCUWB_BIN", proc_self(), 1);
	rc = proc_run(argv, NULL, NULL);
	if (rc == 3)	/* exit 3: a patch does not apply */
		return set_err("%s: a patch does not apply (see above)", variant), KERNEL_REFUSED;
	return rc == 0 ? 0 : rc < 0 ? -1 :
		set_err("build/kernel.sh %s %s failed (exit %d; see above)", variant, kconfig, rc);
}
