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

/* One line of the mid-boot probe (kernel-changes/0004). */
struct probe_result {
	int stage;
	char point[24], prim[40], sched[12];
	bool hung;
	int64_t ns;		/* -1 when hung */
	int gp_exp, gp_normal;	/* -1 when not printed */
};

struct console {
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

	/* incremental state: the line being read */
	struct buf line;
};

void console_init(struct console *c);
void console_free(struct console *c);
/* Feed bytes as they arrive; lines may be split anywhere. */
int console_feed(struct console *c, const char *data, size_t len);
/* End of log: a last line without newline still counts (as in awk). */
int console_finish(struct console *c);
/* Parse a whole file. */
int console_parse_file(struct console *c, const char *path);

const char *badness_name(enum badness_kind k);
/* Number of probe calls that were reported hung. */
size_t console_hung(const struct console *c, const struct probe_result **first);

/* awk's string-to-number conversion of a field (exported for tests). */
double awk_strtonum(const char *s, size_t len);

#endif
