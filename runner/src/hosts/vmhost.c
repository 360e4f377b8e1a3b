/*
 * vmhost.c: one libvirt host behind one interface.
 *
 * The local host (qemu:///system) keeps this machine's ways: hwloc for its
 * topology, /proc for other load.  Any other URI is treated as remote, even
 * when it points back at this machine: its topology comes from libvirt's
 * capabilities and its other load from libvirt's CPU statistics, so the
 * same code runs against a host across the network.
 */
#define _GNU_SOURCE
#include "vmhost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "capstopo.h"
#include "common.h"
#include "stage.h"

static bool reachable(const struct vmhost *h)
{
	return h->hv.conn && !h->hv.lost;
}

/* Delete the logs of ended guests (all: every guest, at exit); those that fail stay listed. */
static void sweep_logs(struct vmhost *h, bool all)
{
	int i, k = 0;

	for (i = 0; i < h->nlogs; i++) {
		struct host_log *l = &h->logs[i];

		if ((all || l->ended) && reachable(h) && stage_drop_log(h->hv.conn, l->guest) == 0)
			continue;
		h->logs[k++] = *l;
	}
	h->nlogs = k;
}

/* The connection is back: what could not be deleted while it was away. */
static void on_back(void *opaque)
{
	sweep_logs(opaque, false);
}

int vmhost_track_log(struct vmhost *h, const char *guest)
{
	struct host_log *l;

	if (!h->remote)
		return 0;
	l = realloc(h->logs, (size_t)(h->nlogs + 1) * sizeof(*l));
	if (!l)
		return set_err("out of memory");
	h->logs = l;
	l += h->nlogs++;
	snprintf(l->guest, sizeof(l->guest), "%s", guest);
	l->ended = false;
	return 0;
}

void vmhost_drop_log(struct vmhost *h, const char *guest)
{
	int i;

	for (i = 0; i < h->nlogs; i++)
		if (!strcmp(h->logs[i].guest, guest))
			h->logs[i].ended = true;
	sweep_logs(h, false);
}

int vmhost_open(struct vmhost *h, const struct host_spec *spec, int idx, bool lazy)
{
	int ret;

	memset(h, 0, sizeof(*h));
	h->spec = *spec;
	h->idx = idx;
	h->remote = !hosts_uri_is_local(spec->uri);
	h->load.timer = -1;
	ret = lazy ? hv_open_lazy(&h->hv, spec->uri, spec->reconnect_s) : hv_open(&h->hv, spec->uri);
	h->hv.on_back = on_back;
	h->hv.back_opaque = h;
	return ret;
}

static int setup_local(struct vmhost *h, struct pulocks *locks)
{
	char label[64];

	snprintf(label, sizeof(label), "%s", h->spec.label);
	if (host_probe(&h->info, NULL) < 0 || place_init(&h->pl, NULL, h->spec.cpus ? 0 : h->spec.pus) < 0 ||
	    (h->spec.cpus && place_restrict(&h->pl, h->spec.cpus, h->spec.pus) < 0))
		return -1;
	if (label[0])
		snprintf(h->info.name, sizeof(h->info.name), "%s", label);
	h->pl.locks = locks;
	h->numa_host = h->pl.nnodes > 1;
	if (gethostname(h->machine, sizeof(h->machine) - 1) < 0 || !strcmp(h->machine, "localhost"))
		h->machine[0] = '\0';
	stage_local_clean_stale(&h->hv);
	return 0;
}

static int setup_remote(struct vmhost *h)
{
	struct caps_cpu cpus[PLACE_MAX_PUS];
	unsigned os[PLACE_MAX_PUS], node[PLACE_MAX_PUS], n, i;
	char *caps = virConnectGetCapabilities(h->hv.conn), *name;
	int ret;

	if (!caps)
		return set_err("libvirt at %s: no capabilities: %s", h->spec.uri, hv_err());
	ret = capstopo_parse(caps, &h->info, cpus, PLACE_MAX_PUS, &n);
	free(caps);
	if (ret < 0)
		return set_err("libvirt at %s: %s", h->spec.uri, last_err());
	for (i = 0; i < n; i++) {
		os[i] = cpus[i].id;
		node[i] = cpus[i].node;
	}
	if (place_init_cpus(&h->pl, os, node, n, h->spec.cpus ? 0 : h->spec.pus) < 0 ||
	    (h->spec.cpus && place_restrict(&h->pl, h->spec.cpus, h->spec.pus) < 0))
		return set_err("%s: %s", h->spec.uri, last_err());
	name = virConnectGetHostname(h->hv.conn);
	snprintf(h->info.name, sizeof(h->info.name), "%s", h->spec.label[0] ? h->spec.label : name ? name : "?");
	snprintf(h->machine, sizeof(h->machine), "%s", name && strcmp(name, "localhost") ? name : "");
	free(name);
	h->numa_host = h->pl.nnodes > 1;
	stage_remote_clean_stale(h->hv.conn);
	return nodeload_start(&h->load, &h->hv);
}

int vmhost_setup(struct vmhost *h, struct pulocks *locks)
{
	int ret = h->remote ? setup_remote(h) : setup_local(h, locks);

	h->ready = ret == 0;
	return ret;
}

void vmhost_link_same_machine(struct vmhost *h, struct vmhost *hosts, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct vmhost *o = &hosts[i];

		if (o == h || !o->ready || !h->machine[0] || strcmp(o->machine, h->machine))
			continue;
		/* the local host reads /proc, which leaves out every QEMU of this runner already */
		if (h->remote)
			nodeload_add_sibling(&h->load, &o->hv);
		if (o->remote)
			nodeload_add_sibling(&o->load, &h->hv);
	}
}

void vmhost_close(struct vmhost *h)
{
	guests_stop_all(&h->hv, END_INTERRUPTED, "runner exiting");
	sweep_logs(h, true);
	hv_close(&h->hv);
	nodeload_stop(&h->load);
	free(h->logs);
	h->logs = NULL;
	h->nlogs = 0;
}

bool vmhost_usable(const struct vmhost *h)
{
	return h->ready && h->hv.conn && !h->hv.lost && !h->hv.gone && !h->hv.interrupted;
}

void vmhost_mark(struct vmhost *h, struct host_mark *m)
{
	char tag[24];

	memset(m, 0, sizeof(*m));
	if (h->remote) {
		nodeload_mark(&h->load, &m->nl);
		return;
	}
	snprintf(tag, sizeof(tag), "-%d-", (int)getpid());
	if (load_snapshot("/proc", (int)getpid(), tag, &m->snap) < 0)
		memset(&m->snap, 0, sizeof(m->snap));	/* unknown: the run goes on without it */
}

double vmhost_other_pus(struct vmhost *h, struct host_mark *a, struct host_mark *b)
{
	double v = h->remote ? nodeload_other_pus(&a->nl, &b->nl) : load_other_pus(&a->snap, &b->snap);

	vmhost_mark_free(a);
	vmhost_mark_free(b);
	return v;
}

void vmhost_mark_free(struct host_mark *m)
{
	load_snap_free(&m->snap);
}
