/* place.h: where guests run on the host: a CPU budget of host PUs, pinning, oversubscription. */
#ifndef RCUWB_PLACE_H
#define RCUWB_PLACE_H

#include <stdbool.h>

#include "pulock.h"

#define PLACE_MAX_PUS PULOCK_MAX

struct placer {
	unsigned npus;			/* PUs in the budget */
	unsigned os_index[PLACE_MAX_PUS];
	unsigned node[PLACE_MAX_PUS];	/* host NUMA node of each PU */
	unsigned nnodes;
	bool busy[PLACE_MAX_PUS];
	unsigned nbusy;
	struct pulocks *locks;		/* shared with other runners; NULL = this process alone */
};

struct placement {
	unsigned npus;
	unsigned pu[PLACE_MAX_PUS];	/* indexes into the placer */
	unsigned os[PLACE_MAX_PUS];	/* the same PUs' OS indexes */
	char cpuset[256];		/* host PUs (os indexes), libvirt syntax */
	char nodeset[64];		/* host NUMA nodes of those PUs */
	double oversub;			/* vCPUs per PU given */
};

/*
 * Read the host (or a synthetic topology such as "node:2 core:2 pu:1") with
 * hwloc; budget = how many PUs guests may use (0 = all).
 */
int place_init(struct placer *p, const char *synthetic, unsigned budget);
/* The same from a list of PUs (OS index, NUMA node), e.g. from libvirt's view of a remote host. */
int place_init_cpus(struct placer *p, const unsigned *os, const unsigned *node, unsigned n, unsigned budget);
/*
 * Give a guest of vcpus vCPUs PUs of its own: within one host NUMA node when
 * one has enough free PUs, else across nodes.  A guest larger than the whole
 * budget runs alone on all of it, oversubscribed.  With p->locks set, a PU is
 * free only when no other rcuwb process holds it, and the guest's PUs stay
 * locked until place_release().  Returns 1 when it does not fit now (wait
 * for a guest to end, here or in another runner), 0 when placed, -1 on error.
 */
int place_take(struct placer *p, unsigned vcpus, struct placement *out);
void place_release(struct placer *p, const struct placement *pl);
/* Keep only the PUs whose OS index is in mask (bit i = PU i), then at most budget of them (0 = all). */
int place_restrict(struct placer *p, unsigned long long mask, unsigned budget);

#endif
