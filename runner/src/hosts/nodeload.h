/* nodeload.h: a host's other load through libvirt: its CPU time (virNodeGetCPUStats) minus its rcuwb guests' own (virDomainGetInfo). */
#ifndef RCUWB_NODELOAD_H
#define RCUWB_NODELOAD_H

#include <stdbool.h>

#include "guest.h"

struct nodeload_guest {
	char name[64];
	unsigned long long cpu_ns;	/* at the last sample */
	double t, rate;			/* when, and its CPU seconds per second since the sample before */
	bool seen;			/* still running at this sample */
};

#define NODELOAD_MAX_SIBLINGS 16

struct nodeload {
	struct hypervisor *hv;
	/*
	 * Other connections of this runner to the same machine (another
	 * libvirt daemon on it): their guests are this runner's too.
	 */
	struct hypervisor *sib[NODELOAD_MAX_SIBLINGS];
	int nsib;
	int timer;
	bool valid;			/* false: the host's CPU time cannot be read: unknown */
	double t;			/* last sample */
	unsigned long long busy_ns;	/* the host's user + kernel time at t */
	double other_s;			/* CPU seconds others used since the first sample */
	struct nodeload_guest *g;
	int ng;
};

struct nodeload_mark {
	double other_s, t;
	bool valid;
};

/*
 * Sample every NODELOAD_PERIOD_MS, and at every mark.  A guest that ended
 * since the last sample is counted at its last measured rate up to now
 * (marks come right after a guest ends, so "now" is about its end).
 */
#define NODELOAD_PERIOD_MS 500
int nodeload_start(struct nodeload *l, struct hypervisor *hv);
/* Count the guests of hv (another daemon on the same machine) as this runner's own too. */
void nodeload_add_sibling(struct nodeload *l, struct hypervisor *hv);
void nodeload_stop(struct nodeload *l);
void nodeload_mark(struct nodeload *l, struct nodeload_mark *m);
/* Average PUs others used between two marks, -1 when unknown. */
double nodeload_other_pus(const struct nodeload_mark *a, const struct nodeload_mark *b);

#endif
