/* dispatch.h: a matrix's runs onto hosts, as blocks: every variant of one cell and repetition on one host; requeued when a host drops. */
#ifndef RCUWB_DISPATCH_H
#define RCUWB_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "session.h"
#include "kernel.h"
#include "matrix.h"
#include "pulock.h"

struct dispatch {
	/* set by the caller */
	struct session *sess;
	const struct matrix *m;
	const struct planned_run *runs;
	size_t n;
	struct kernel_build *kernels;	/* kernel_of(): variant * nkconfigs + kconfig */
	int jobs;			/* guests at once per host, 0 = as many as fit */
	bool fleet;			/* a hosts file: runs of a dropped host move to the others */
	const char *accel;		/* for hosts that come up later */
	struct pulocks *locks;

	/* results */
	int done, failed, errors, requeued;
	double t0;

	/* state */
	signed char *state;		/* per run: pending, running, done */
	int *owner;			/* per run: the host whose block it is in, -1 none */
	struct dispatch_slot **active;
	int nactive, cap;
	int *host_running;
	double down_since;
};

/*
 * Run everything: each host takes whole blocks (cell, repetition: every
 * variant) as it has room, so a host with more PUs takes more blocks and
 * host differences stay within blocks.  A run whose host dropped
 * (END_HOST_FAILED through a lost connection) is stored as host-failed and,
 * with a hosts file, run again in its block: on its host when it is back,
 * on another once the host is gone for good (lost longer than its
 * reconnect time), when its pending runs go to the others too.  A host
 * that comes back takes new blocks.  Returns -1 when nothing can go on (every host down
 * for longer than its reconnect time, or an error of this process).
 */
int dispatch_run(struct dispatch *d);
void dispatch_free(struct dispatch *d);
/* Clear the progress line (before other output on a terminal). */
void dispatch_clear_progress(void);

#endif
