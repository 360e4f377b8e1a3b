/* accel.c: choose KVM or TCG by trying. */
#define _GNU_SOURCE
#include "accel.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/*
 * The local host's verdict holds for its boot and QEMU version; a remote
 * host's for its URI, name and QEMU version (its boot id is not visible
 * through libvirt).
 */
static void cache_key(struct vmhost *h, char *out, size_t cap)
{
	char boot_id[64] = "?";
	FILE *f;

	if (h->remote) {
		char *name = virConnectGetHostname(h->hv.conn);

		snprintf(out, cap, "%s@%s qemu-%lu", h->spec.uri, name ? name : "?", h->hv.qemu_version);
		free(name);
		return;
	}
	f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (f) {
		if (!fgets(boot_id, sizeof(boot_id), f))
			strcpy(boot_id, "?");
		boot_id[strcspn(boot_id, "\n")] = '\0';
		fclose(f);
	}
	snprintf(out, cap, "%s qemu-%lu", boot_id, h->hv.qemu_version);
}

static int cached_verdict(struct vmhost *h, const char *path)
{
	char key[400], line[440];
	FILE *f = fopen(path, "re");
	int verdict = -1;

	if (!f)
		return -1;
	cache_key(h, key, sizeof(key));
	if (fgets(line, sizeof(line), f) && !strncmp(line, key, strlen(key)))
		verdict = strstr(line + strlen(key), " kvm") ? 1 : 0;
	fclose(f);
	return verdict;
}

static void store_verdict(struct vmhost *h, const char *path, int kvm)
{
	char key[400], tmp[PATH_MAX + 60];
	FILE *f;

	/* written whole, then renamed: a runner beside this one reads it whole or not at all */
	if (snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return;
	f = fopen(tmp, "we");
	if (!f)
		return;
	cache_key(h, key, sizeof(key));
	fprintf(f, "%s %s\n", key, kvm ? "kvm" : "tcg");
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
}

/*
 * Where a host's verdict is kept: a file in the runtime directory that every
 * rcuwb process shares until the host reboots ($RCUWB_ACCEL_CACHE, else
 * /run/rcuwb/accel), named for the host (the local one, or a remote one by
 * a hash of its URI; the file's first line holds the whole key).  Where that
 * directory cannot be made, the results directory, as before.
 */
static void verdict_path(struct session *sess, struct vmhost *h, char *out, size_t cap)
{
	char dir[PATH_MAX];
	unsigned long long hash = 1469598103934665603ULL;	/* FNV-1a */

	if (runtime_dir("RCUWB_ACCEL_CACHE", "accel", dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "%s", sess->results_dir);
	if (!h->remote) {
		snprintf(out, cap, "%s/accel-probe", dir);
		return;
	}
	for (const char *c = h->spec.uri; *c; c++)
		hash = (hash ^ (unsigned char)*c) * 1099511628211ULL;
	snprintf(out, cap, "%s/accel-probe.%016llx", dir, hash);
}

/*
 * Boot a guest under KVM: 1 it ran, 0 KVM cannot run it here (QEMU failed
 * at start, died, or the guest crashed or hung: whichever way it fails on
 * this machine), -1 the trial said nothing about KVM (the runner could not
 * stage it, was interrupted, or lost the host): not a verdict to keep.
 * Its cleanup is the one every run has (job_finish()).
 */
static int kvm_boots(struct session *sess, struct vmhost *h, const struct kernel_build *k)
{
	const char *t = getenv("RCUWB_KVM_PROBE_TIMEOUT");
	struct job j = { .trial = true };
	int ran, v;

	h->kvm = true;
	j.host = h;
	run_spec_init(&j.spec);
	j.spec.kind = RUN_BOOT;
	j.spec.kernel = k;
	topo_make(&j.spec.topo, 1, 0, 256, 0, 0, 0);
	j.spec.timeout_s = t ? atoi(t) : 20;
	info("rcuwb: trying a guest under KVM (up to %d s)...\n", j.spec.timeout_s);
	ran = job_run(sess, &j);
	h->kvm = false;
	if (ran < 0 && j.guest.end != END_START_FAILED)
		v = set_err("the KVM trial guest could not be started: %s", last_err());
	else if (j.result.outcome == OUT_INTERRUPTED || j.guest.lost_with_conn)
		v = set_err("the KVM trial was cut short (%s%s%s): start again", outcome_name(j.result.outcome),
			    j.result.detail[0] ? ": " : "", j.result.detail);
	else
		v = j.result.outcome == OUT_OK;
	if (v == 0)
		info("rcuwb: KVM cannot run this guest here (%s%s%s): using TCG\n",
		     outcome_name(j.result.outcome), j.result.detail[0] ? ": " : "", j.result.detail);
	job_free(&j);
	return v;
}

/* This machine's /dev/kvm can be opened at all (the local host only). */
static bool local_kvm_opens(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int accel_choose(struct session *sess, struct vmhost *h, const struct kernel_build *k, const char *mode)
{
	char path[PATH_MAX + 40];
	int v;

	h->kvm = false;
	if (!strcmp(mode, "tcg"))
		return 0;
	if (!strcmp(mode, "kvm")) {
		if (!hv_has_kvm(&h->hv))
			return set_err("--accel kvm: libvirt at %s offers no KVM domains", h->spec.uri);
		h->kvm = true;
		return 0;
	}
	if (strcmp(mode, "auto"))
		return set_err("--accel %s: give auto, kvm or tcg", mode);
	if ((!h->remote && !local_kvm_opens()) || !hv_has_kvm(&h->hv))
		return 0;
	verdict_path(sess, h, path, sizeof(path));
	v = cached_verdict(h, path);
	if (v < 0) {
		v = kvm_boots(sess, h, k);
		if (v < 0)
			return -1;
		store_verdict(h, path, v);
	}
	h->kvm = v;
	return 0;
}
