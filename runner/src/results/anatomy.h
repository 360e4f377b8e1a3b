/* anatomy.h: each rcuscale writer call cut into the phases of its grace period, from RCU's trace events. */
#ifndef RCUWB_ANATOMY_H
#define RCUWB_ANATOMY_H

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"

/*
 * The phases, in the order they follow one another in a call (docs/anatomy.md
 * says what each means and which events bound it).  A call's phases add up
 * to the time from its request to the writer's next request.
 */
enum anat_phase {
	/* normal GPs (synchronize_rcu() = call_rcu() + wait) */
	PH_REQUEST,		/* call_rcu() to the start of the GP that serves it */
	PH_INIT,		/* GP start to the GP kthread's first wait for quiescent states */
	PH_QS,			/* that wait to the last quiescent-state report */
	PH_CLEANUP,		/* last report to the GP's end (kthread wake-up, cleanup) */
	PH_CALLBACK,		/* GP end to the callback's invocation on its CPU */
	/* expedited GPs (synchronize_rcu_expedited()) */
	PH_FUNNEL,		/* snapshot to the start of its own GP (funnel lock, mutex) */
	PH_HANDOFF,		/* GP start to the tree reset: the hand-off to who drives it */
	PH_RESET,		/* tree reset to CPU selection */
	PH_SELECT,		/* selection (IPIs) to the start of the wait */
	PH_WAIT,		/* waiting for the selected CPUs to the GP's end */
	PH_WAKE,		/* GP end to the requester seeing its GP done (woken) */
	PH_PIGGYBACK,		/* snapshot to done for a call whose GP someone else ran */
	/* both */
	PH_RETURN,		/* the call's end (callback invoked / done) to the writer's next request */
	PH_NR
};

struct anat_call {
	bool expedited;
	int pid;		/* the writer */
	int call;		/* the writer's call number in the trace, from 0 */
	long gp_seq;		/* its GP's sequence number (expedited: the snapshot) */
	bool own;		/* expedited: the call ran its own GP */
	double t_us;		/* the request, in the dump's clock */
	double total_us;	/* request to the end of the call (callback invoked / done) */
	double phase_us[PH_NR];	/* NAN where the phase does not apply */
	int fqs_scans;		/* normal: force-quiescent-state scans in the GP */
	int last_cpu;		/* normal: the CPU whose quiescent state came last, -1 */
	char driver[17];	/* expedited, own: the task that reset the tree */
};

struct anatomy {
	struct anat_call *calls;
	size_t n, cap;
	size_t skipped;		/* calls whose events were not all in the trace */
};

/* Cut the writers' calls in t into phases; -1 (set_err) when out of memory. */
int anatomy_build(const struct trace *t, struct anatomy *a);
void anatomy_free(struct anatomy *a);
/* "request", "init", ...: the phase's name in the database and reports */
const char *anat_phase_name(enum anat_phase p);
/* Whether phase p belongs to normal (false) or expedited (true) GPs; PH_RETURN to both. */
bool anat_phase_of(enum anat_phase p, bool expedited);

#endif
