/* trace.h: RCU's trace events out of the ftrace dump on a guest's console. */
#ifndef RCUWB_TRACE_H
#define RCUWB_TRACE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The events rcuwb reads (include/trace/events/rcu.h, 6.1 and 6.12); the
 * others in a dump are counted and skipped.
 */
enum tev_kind {
	TEV_GP,			/* rcu_grace_period: NAME SEQ WHAT */
	TEV_QS_REPORT,		/* rcu_quiescent_state_report: NAME SEQ MASK>QSMASK LEVEL LO HI TASKS */
	TEV_FQS,		/* rcu_fqs: NAME SEQ CPU WHAT */
	TEV_CALLBACK,		/* rcu_callback: NAME rhp=P func=F QLEN */
	TEV_INVOKE,		/* rcu_invoke_callback: NAME rhp=P func=F */
	TEV_EXP,		/* rcu_exp_grace_period: NAME SEQ WHAT */
	TEV_EXP_FUNNEL,		/* rcu_exp_funnel_lock: NAME LEVEL LO HI WHAT */
	TEV_NR
};

struct tevent {
	double us;		/* the dump's timestamp, microseconds since the buffer began */
	int cpu, pid;
	char comm[17];		/* as the dump prints it: at most 8 characters */
	enum tev_kind kind;
	long seq;		/* gp_seq or expedited sequence; -1 where the event has none */
	char what[16];		/* "start", "end", "snap", "fqsstart", ... ("" for callbacks) */
	char rhp[24];		/* callbacks: the rcu_head's (hashed) address */
	unsigned long mask, qsmask;	/* quiescent-state reports */
	int level, grplo, grphi;	/* quiescent-state reports, funnel lock */
	int fqs_cpu;		/* rcu_fqs: the CPU found quiescent */
};

struct trace {
	struct tevent *ev;	/* in dump order, which is time order */
	size_t n, cap;
	bool dump_begun;	/* "Dumping ftrace buffer:" */
	bool dump_ended;	/* its closing dashes after at least one event */
	long lost;		/* events the ring buffer overwrote ("[LOST N EVENTS]"), summed */
	bool lost_unknown;	/* "[LOST EVENTS]": a count the kernel did not know */
	long printk_dropped;	/* "** N printk messages dropped **" while it dumped */
	long other;		/* events of kinds rcuwb does not read */
	long bad;		/* lines inside the dump that did not parse */
};

/*
 * Parse console text: every event line of the ftrace dump, and what says
 * whether the dump is whole.  -1 (set_err) only when out of memory.
 */
int trace_parse(struct trace *t, const char *text, size_t len);
/* A console log file; -1 (set_err) when it cannot be read. */
int trace_parse_file(struct trace *t, const char *path);
/* One line (without newline, "[ time]" prefix allowed); exported for tests. */
int trace_line(struct trace *t, const char *line, size_t len);
void trace_free(struct trace *t);
/*
 * Why the trace cannot be analysed (no dump, dump cut off, events lost), or
 * NULL when it is whole.
 */
const char *trace_incomplete(const struct trace *t);
const char *tev_kind_name(enum tev_kind k);

#endif
