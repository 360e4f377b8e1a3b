/* console.h: incremental parser of a guest's serial console (rcuscale, probe, badness). */
#ifndef RCUWB_CONSOLE_H
#define RCUWB_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* One rcuscale "writer-duration" line. */
struct gp_sample {
	int writer, seq;
	double ns;		/* field 5, converted the way awk converts it */
};

enum badness_kind { BAD_WARNING, BAD_BUG, BAD_OOPS, BAD_PANIC, BAD_STALL, BAD_NR };

/*
 * One call of the mid-boot probe (kernel-changes/0007): its completion line,
 * or its HUNG line and RCU's diagnostics after it.
 */
struct probe_result {
	int stage, call;
	char point[24], prim[40], sched[12];
	bool hung;		/* reported HUNG and not returned (yet) */
	bool slow;		/* reported HUNG, then returned: ns is its latency */
	bool skipped;		/* not called: the primitive is not usable at this stage */
	int64_t ns;		/* -1 when hung */
	int gp_exp, gp_normal;	/* -1 when not printed */
	/* from the HUNG line and the diagnostics that follow it */
	char needs[16];		/* gp_kthread, wq_worker, exp */
	int missing, caller_pid;	/* -1 when not printed */
	bool wq_pending;	/* rcu_gp_wq showed pending work */
	bool evidence;		/* the call can never return (see console_evidence) */
	char evidence_text[160];
};

/*
 * A guest that writes more than this to its console is flooding it (a
 * printk storm, or worse): the runner stops it, so that the log stays
 * bounded; a healthy rcuwb guest writes tens of kilobytes.  Below 2 MiB,
 * where virtlogd (which writes the console file for QEMU) rotates it.
 */
#define CONSOLE_MAX_BYTES (3ULL << 19)

struct console {
	unsigned long long bytes;	/* fed so far */

	/* the kernel's rcuscale line tags: "-scale: " and "-scale:!!! " (or "-perf") */
	char tag[24], errtag[24];

	/* rcuscale */
	struct gp_sample *samples;
	size_t nsamples, cap_samples;
	bool have_summary;
	double summary_gps;	/* field 9 of the last "gps: ... batches:" line */
	long long gps, batches;
	unsigned long long start_ns, end_ns, duration_ns;
	bool test_complete;
	int nerrors;		/* "!!!" lines */
	char first_error[160];
	bool aborted;		/* "All grace periods ... to measure!" before "Test complete" */
	char abort_msg[96];

	/* guest */
	int smp_nodes, smp_cpus;	/* -1 until "smp: Brought up" */
	double boot_time_s;		/* printk time of "Run /init as init process", -1 */
	char init_cpus[64], init_nodes[64];	/* "rcuwb-init: up cpus=.. nodes=.." */
	bool init_up;
	bool power_down;		/* "reboot: Power down" */
	int bad_count[BAD_NR];
	char first_bad[160];

	/* mid-boot probe */
	struct probe_result *probes;
	size_t nprobes, cap_probes;
	bool probe_done;
	long diag;		/* index of the probe whose diagnostics are being read, -1 */
	bool diag_wq;		/* inside the "workqueue rcu_gp:" block of those */

	/* incremental state: the line being read */
	struct buf line;
};

/* An empty console of a kernel whose rcuscale prints "rcu-scale: " lines. */
void console_init(struct console *c);
/*
 * The kernel's console prefix, from build.json: "rcu-scale", or "rcu-perf"
 * (rcuperf, before 5.11); lines of every scale_type ("srcu-scale: ", ...)
 * are read, as kvm-recheck-rcuscale.sh reads them.
 */
void console_set_prefix(struct console *c, const char *prefix);
void console_free(struct console *c);
/* Feed bytes as they arrive; lines may be split anywhere. */
int console_feed(struct console *c, const char *data, size_t len);
/* End of log: a last line without newline still counts (as in awk). */
int console_finish(struct console *c);
/* Parse a whole file. */
int console_parse_file(struct console *c, const char *path);

const char *badness_name(enum badness_kind k);
/* Number of probe calls reported hung that never returned. */
size_t console_hung(const struct console *c, const struct probe_result **first);
/*
 * Number of those whose deadlock is certain: the boot task (pid 1, stages
 * 0-3) waits for a thing that only it would go on to create and that the
 * probe found missing: RCU's grace-period kthread (a normal GP), or a
 * workqueue worker (Tree SRCU, or an expedited GP that was not driven by
 * its requester) for work that rcu_gp_wq's diagnostics showed pending.
 */
size_t console_deadlocks(const struct console *c, const struct probe_result **first);

/* awk's string-to-number conversion of a field (exported for tests). */
double awk_strtonum(const char *s, size_t len);

#endif
