/*
 * job.c: one run from spec to stored result.
 *
 * QEMU runs as libvirt-qemu, which cannot reach a kernel under /root/.cache
 * or a results directory under a private home.  The kernel, initramfs and
 * console file are therefore staged in a directory libvirt owns
 * ($RCUWB_STAGE, default /var/lib/libvirt/rcuwb/NAME) for the life of the
 * guest; the console log then moves to the run's own directory, next to the
 * domain XML, command line, kernel config and patch list that reproduce it.
 */
#define _GNU_SOURCE
#include "job.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common.h"
#include "domxml.h"

static const char *stage_root(void)
{
	const char *e = getenv("RCUWB_STAGE");

	return e && *e ? e : "/var/lib/libvirt/rcuwb";
}

static void name_job(struct bench *b, struct job *j)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(j->guest.name, sizeof(j->guest.name), "rcuwb-%s-%d-%u", stamp, (int)getpid(), ++b->seq);
}

static const char *on_console(struct guest *g, const char *data, size_t len)
{
	struct job *j = g->opaque;

	if (console_feed(&j->con, data, len) < 0)
		return "console parser out of memory";
	return run_early_verdict(&j->spec, &j->con);
}

/* Unknown (t = 0) when /proc cannot be read: the run goes on without it. */
static void take_load(struct load_snap *s)
{
	char tag[24];

	snprintf(tag, sizeof(tag), "-%d-", (int)getpid());
	if (load_snapshot("/proc", (int)getpid(), tag, s) < 0)
		memset(s, 0, sizeof(*s));
}

static int stage_files(struct job *j, char *kernel, char *initrd, size_t cap)
{
	if (path_fmt(j->stage_dir, sizeof(j->stage_dir), "%s/%s", stage_root(), j->guest.name) ||
	    mkdir_p(j->stage_dir) < 0 ||
	    path_fmt(kernel, cap, "%s/vmlinux", j->stage_dir) ||
	    path_fmt(initrd, cap, "%s/initramfs.cpio", j->stage_dir) ||
	    path_fmt(j->guest.console_path, sizeof(j->guest.console_path), "%s/console.log", j->stage_dir))
		return -1;
	if (copy_file(j->spec.kernel->vmlinux, kernel) < 0 ||
	    copy_file(j->spec.kernel->initramfs, initrd) < 0)
		return -1;
	return 0;
}

/* The host PUs (0..npus-1) not given to the guest, in libvirt syntax; false if none. */
static bool other_pus(unsigned npus, const struct placement *pl, char *out, size_t cap)
{
	size_t len = 0;
	unsigned pu, i;

	out[0] = '\0';
	for (pu = 0; pu < npus && len < cap; pu++) {
		for (i = 0; i < pl->npus && pl->os[i] != pu; i++)
			;
		if (i == pl->npus)
			len += (size_t)snprintf(out + len, cap - len, "%s%u", len ? "," : "", pu);
	}
	return len > 0 && len < cap;
}

int job_start(struct bench *b, struct job *j)
{
	char kernel[PATH_MAX], initrd[PATH_MAX];
	struct domain_params dp = { 0 };
	struct run_env *e = &j->env;

	console_init(&j->con);
	console_set_prefix(&j->con, j->spec.kernel->console_prefix);
	if (!j->spec.kconfig[0])
		snprintf(j->spec.kconfig, sizeof(j->spec.kconfig), "%s", j->spec.kernel->kconfig);
	name_job(b, j);
	run_cell_key(&j->spec, e->cell, sizeof(e->cell));
	if (run_cmdline(&j->spec, e->cmdline, sizeof(e->cmdline)) < 0)
		return -1;
	snprintf(e->accel, sizeof(e->accel), "%s", b->kvm ? "kvm" : "tcg");
	hv_version_str(b->hv.qemu_version, e->qemu_version);
	hv_version_str(b->hv.libvirt_version, e->libvirt_version);
	snprintf(e->host, sizeof(e->host), "%s", b->host.name);
	e->host_pus = b->host.pus;
	e->oversub = (double)j->spec.topo.vcpus / (b->host.pus ? b->host.pus : 1);
	if (j->place) {
		e->oversub = j->place->oversub;
		snprintf(e->pinned, sizeof(e->pinned), "%s", j->place->cpuset);
		dp.pin = j->place->os;
		dp.npin = j->place->npus;
		if (j->spec.emulator_apart && other_pus(b->host.pus, j->place, j->emu_cpuset,
							sizeof(j->emu_cpuset))) {
			int w = snprintf(e->pinned, sizeof(e->pinned), "%s emulator:%s",
					 j->place->cpuset, j->emu_cpuset);

			if (w < 0 || (size_t)w >= sizeof(e->pinned))
				return set_err("pinning %s emulator:%s is too long to store",
					       j->place->cpuset, j->emu_cpuset);
			dp.emulator_cpuset = j->emu_cpuset;
		}
		if (b->numa_host)
			dp.mem_nodeset = j->place->nodeset;
	}
	if (b->results_dir[0] &&
	    path_fmt(e->run_dir, sizeof(e->run_dir), "%s/runs/%s", b->results_dir, j->guest.name))
		return -1;
	if (stage_files(j, kernel, initrd, sizeof(kernel)) < 0)
		return -1;
	dp.name = j->guest.name;
	dp.kvm = b->kvm;
	dp.topo = &j->spec.topo;
	dp.kernel = kernel;
	dp.initrd = initrd;
	dp.cmdline = e->cmdline;
	dp.console = j->guest.console_path;
	j->xml = j->xml_again ? domxml_retarget(j->xml_again, &dp) : domxml_build(domxml_template_path(), &dp);
	if (!j->xml)
		return -1;
	j->guest.xml = j->xml;
	j->guest.timeout_s = j->spec.timeout_s;
	j->guest.on_console = on_console;
	j->guest.opaque = j;
	take_load(&j->load0);
	e->started = now_s();
	return guest_start(&b->hv, &j->guest);
}

static json_object *run_json(const struct job *j)
{
	const struct run_spec *s = &j->spec;
	json_object *o = json_object_new_object();
	char t[32];

	json_object_object_add(o, "id", json_object_new_int64(j->id));
	json_object_object_add(o, "name", json_object_new_string(j->guest.name));
	json_object_object_add(o, "matrix", json_object_new_string(s->matrix));
	json_object_object_add(o, "cell", json_object_new_string(j->env.cell));
	json_object_object_add(o, "variant", json_object_new_string(s->kernel->variant));
	json_object_object_add(o, "kconfig", json_object_new_string(s->kernel->kconfig));
	json_object_object_add(o, "kernel_version", json_object_new_string(s->kernel->version));
	json_object_object_add(o, "config_sha", json_object_new_string(s->kernel->config_sha));
	json_object_object_add(o, "cmdline", json_object_new_string(j->env.cmdline));
	json_object_object_add(o, "vcpus", json_object_new_int((int)s->topo.vcpus));
	json_object_object_add(o, "numa_nodes", json_object_new_int((int)(s->topo.nnodes ? s->topo.nnodes : 1)));
	json_object_object_add(o, "accel", json_object_new_string(j->env.accel));
	json_object_object_add(o, "host_pus", json_object_new_int((int)j->env.host_pus));
	json_object_object_add(o, "oversub", json_object_new_double(j->env.oversub));
	json_object_object_add(o, "host_other_cpu", j->env.host_other >= 0 ?
			       json_object_new_double(j->env.host_other) : NULL);
	iso_time(j->env.started, t);
	json_object_object_add(o, "started_at", json_object_new_string(t));
	json_object_object_add(o, "wall_s", json_object_new_double(j->env.ended - j->env.started));
	json_object_object_add(o, "outcome", json_object_new_string(outcome_name(j->result.outcome)));
	json_object_object_add(o, "outcome_detail", json_object_new_string(j->result.detail));
	json_object_object_add(o, "samples", json_object_new_int64((int64_t)j->con.nsamples));
	return o;
}

/* Console, XML, command line, kernel config and patch list: enough to rerun by hand. */
static int keep_run_dir(struct job *j)
{
	const char *d = j->env.run_dir;
	char path[PATH_MAX + 32], src[PATH_MAX + 32];
	json_object *o;
	int ret;

	if (mkdir_p(d) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/console.log", d);
	if (rename(j->guest.console_path, path) < 0 &&
	    (errno != EXDEV || copy_file(j->guest.console_path, path) < 0))
		return set_err("cannot keep the console log in %s: %s", d, strerror(errno));
	snprintf(path, sizeof(path), "%s/domain.xml", d);
	if (write_file(path, j->xml, strlen(j->xml)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cmdline", d);
	if (write_file(path, j->env.cmdline, strlen(j->env.cmdline)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/kernel.config", d);
	if (copy_file(j->spec.kernel->config, path) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s", j->spec.kernel->build_json);
	snprintf(path, sizeof(path), "%s/build.json", d);
	if (copy_file(src, path) < 0)
		return -1;
	o = run_json(j);
	snprintf(path, sizeof(path), "%s/run.json", d);
	ret = json_object_to_file_ext(path, o, JSON_C_TO_STRING_PRETTY) < 0 ?
		set_err("cannot write %s", path) : 0;
	json_object_put(o);
	return ret;
}

static void unstage(struct job *j)
{
	char path[PATH_MAX + 32];
	static const char *const files[] = { "vmlinux", "initramfs.cpio", "console.log" };
	size_t i;

	if (!j->stage_dir[0])
		return;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", j->stage_dir, files[i]);
		unlink(path);
	}
	for (i = 0; i < 10; i++) {	/* virtlogd's rotations of a large console */
		snprintf(path, sizeof(path), "%s/console.log.%zu", j->stage_dir, i);
		unlink(path);
	}
	rmdir(j->stage_dir);
}

/* rcuwb-STAMP-PID-N: is the runner that started it gone? */
static bool orphaned(const char *name)
{
	int pid = 0;

	if (sscanf(name, "rcuwb-%*d-%*d-%d-", &pid) != 1 || pid <= 0)
		return false;
	return kill(pid, 0) < 0 && errno == ESRCH;
}

void job_clean_stale(struct hypervisor *hv)
{
	DIR *d = opendir(stage_root());
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct job j = { 0 };
		virDomainPtr dom;

		if (strncmp(e->d_name, "rcuwb-", 6) || !orphaned(e->d_name))
			continue;
		/*
		 * A runner killed while libvirt was still starting its guest can
		 * leave that guest behind (autodestroy is attached too late).
		 */
		dom = virDomainLookupByName(hv->conn, e->d_name);
		if (dom) {
			info("rcuwb: destroying %s, left by a runner that was killed\n", e->d_name);
			virDomainDestroy(dom);
			virDomainFree(dom);
		}
		snprintf(j.stage_dir, sizeof(j.stage_dir), "%s/%.200s", stage_root(), e->d_name);
		unstage(&j);
	}
	closedir(d);
}

int job_finish(struct bench *b, struct job *j)
{
	int kept = 0, stored = 0;

	struct load_snap load1;

	console_finish(&j->con);
	j->env.ended = j->guest.ended ? j->guest.ended : now_s();
	take_load(&load1);
	j->env.host_other = load_other_pus(&j->load0, &load1);
	load_snap_free(&load1);
	load_snap_free(&j->load0);
	run_classify(&j->spec, &j->con, j->guest.end, j->guest.end_detail, &j->result);
	if (b->db)	/* stored even when the run directory cannot be written */
		stored = db_store_run(b->db, &j->spec, &j->env, &j->con, &j->result, &j->id);
	if (j->env.run_dir[0])
		kept = keep_run_dir(j);
	unstage(j);
	return stored < 0 || kept < 0 ? -1 : 0;
}

void job_free(struct job *j)
{
	console_free(&j->con);
	load_snap_free(&j->load0);
	free(j->xml);
	j->xml = NULL;
}

int job_run(struct bench *b, struct job *j)
{
	if (job_start(b, j) < 0 && j->guest.end != END_START_FAILED)
		return -1;
	if (hv_wait(&b->hv, 1) < 0)
		return -1;
	return job_finish(b, j);
}
