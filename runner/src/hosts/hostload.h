/* hostload.h: how much host CPU other work took while a run was going (from /proc). */
#ifndef RCUWB_HOSTLOAD_H
#define RCUWB_HOSTLOAD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A run is "host-busy" when processes other than rcuwb's own used more than
 * this share of the host's PUs on average while it ran.  A guest's grace
 * periods then measure the host's scheduler as much as the kernel: on 2 PUs,
 * one niced R process beside a 4-vCPU TCG guest moved expedited p50 from
 * 2 ms to 20-30 ms.  The one home of the rule: load_is_busy() for a run
 * going on, the database's view run_status (db.c) for stored runs, which
 * everything else (summary, --resume, stats/R, the shell tests) reads.
 */
#define HOST_BUSY_SHARE 0.05
#define HOST_BUSY_STR_(x) #x
#define HOST_BUSY_STR(x) HOST_BUSY_STR_(x)

struct proc_cpu {
	int pid;
	unsigned long long start;	/* starttime: tells a reused pid apart */
	unsigned long long ticks;	/* utime+stime (+cutime+cstime but for pid 1) */
};

struct load_snap {
	struct proc_cpu *procs;		/* sorted by pid */
	size_t n;
	double t;			/* wall clock, seconds; 0 = not taken */
};

/*
 * The CPU ticks of every process under proc_root ("/proc") that is not
 * rcuwb's own: not `self`, not a kernel thread, not libvirtd or virtlogd,
 * not a QEMU whose "-name guest=" carries `tag` ("-PID-" of this runner).
 * A child's ticks count in its parent's once reaped, except under pid 1,
 * which reaps rcuwb's own QEMUs (libvirt daemonizes them).
 */
int load_snapshot(const char *proc_root, int self, const char *tag, struct load_snap *s);
/* CPU seconds the processes of `b` used since `a` (new processes: all of theirs). */
double load_other_cpu_s(const struct load_snap *a, const struct load_snap *b, long ticks_per_s);
void load_snap_free(struct load_snap *s);

/* Average PUs other work used between two snapshots, -1 when unknown. */
double load_other_pus(const struct load_snap *a, const struct load_snap *b);
/* Did other work take more than HOST_BUSY_SHARE of the host's PUs? */
bool load_is_busy(double other_pus, unsigned host_pus);

#endif
