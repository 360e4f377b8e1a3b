/* session.c: a runner session: open the results database and its hosts, close them. */
#define _GNU_SOURCE
#include "session.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel.h"
#include "cli.h"
#include "common.h"
#include "vmhost.h"

/* A host is up: identity, placement, accelerator (again after an outage: only what it lacks). */
int session_host_ready(struct session *sess, struct vmhost *h, const struct kernel_build *k, const char *accel,
		       struct pulocks *locks)
{
	char qemu[16], libvirt[16];

	if (h->ready)
		return 0;
	if (vmhost_setup(h, locks) < 0 || accel_choose(sess, h, k, accel) < 0) {
		h->ready = false;
		return set_err("host %s: %s", h->spec.label[0] ? h->spec.label : h->spec.uri, last_err());
	}
	vmhost_link_same_machine(h, sess->hosts, sess->nhosts);
	hv_version_str(h->hv.qemu_version, qemu);
	hv_version_str(h->hv.libvirt_version, libvirt);
	info("rcuwb: host %s (%s): %s guests, %u PUs (%u for guests), %u NUMA node(s), QEMU %s, libvirt %s%s\n",
	     h->info.name, h->spec.uri, h->kvm ? "KVM" : "TCG", h->info.pus, h->pl.npus, h->info.nodes, qemu,
	     libvirt, h->remote ? "; reached through libvirt only" : "");
	return 0;
}

int session_open(struct session *sess, const struct hosts *hs, const struct kernel_build *k, const char *accel,
		 struct pulocks *locks)
{
	char dbdir[PATH_MAX];
	bool fleet = hs->path[0] != '\0';
	int i, up = 0;

	snprintf(dbdir, sizeof(dbdir), "%s", opt_db);
	snprintf(sess->results_dir, sizeof(sess->results_dir), "%s", dirname(dbdir));
	if (mkdir_p(sess->results_dir) < 0 || db_open(opt_db, &sess->db) < 0)
		return -1;
	sess->hosts = calloc((size_t)hs->n, sizeof(*sess->hosts));
	if (!sess->hosts)
		return set_err("out of memory");
	for (i = 0; i < hs->n; i++) {
		struct vmhost *h = &sess->hosts[i];

		/* the session owns it from here: session_close() closes what was opened */
		sess->nhosts = i + 1;
		if (vmhost_open(h, &hs->h[i], i, fleet) < 0)
			return -1;
		if (h->hv.lost)
			continue;	/* a fleet host down at the start: it joins when it is back */
		if (session_host_ready(sess, h, k, accel, locks) < 0) {
			if (!fleet)
				return -1;
			info("rcuwb: %s: left out of this matrix\n", last_err());
			h->hv.gone = true;	/* not set up again, its runs go elsewhere */
			continue;
		}
		up++;
	}
	if (!up)
		return set_err(fleet ? "%s: no host could be reached" : "%s", fleet ? hs->path : last_err());
	info("rcuwb: results in %s\n", opt_db);
	return 0;
}

bool session_interrupted(const struct session *sess)
{
	int i;

	for (i = 0; i < sess->nhosts; i++)
		if (sess->hosts[i].hv.interrupted)
			return true;
	return false;
}

void session_close(struct session *sess)
{
	int i;

	for (i = 0; i < sess->nhosts; i++)
		vmhost_close(&sess->hosts[i]);
	free(sess->hosts);
	sess->hosts = NULL;
	sess->nhosts = 0;
	if (sess->db)
		db_close(sess->db);
	sess->db = NULL;
}
