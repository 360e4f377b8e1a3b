/* run.h: one guest run: what it asks for (spec), its kernel command line, and how it ended. */
#ifndef RCUWB_RUN_H
#define RCUWB_RUN_H

#include <stdbool.h>

#include "console.h"
#include "kernel.h"
#include "topo.h"

/* RUN_BOOT: boot to init and power off (accelerator probe, topology checks). */
enum run_kind { RUN_RCUSCALE, RUN_PROBE, RUN_BOOT };
/* GP_ASYNC: rcuscale.gp_async, call_rcu()-style GPs with at most async_max callbacks in flight */
enum gp_mode { GP_NORMAL, GP_EXPEDITED, GP_ASYNC };

/*
 * holdoff "boot": start measuring once boot is over, not after a fixed 3 s.
 * "Over" is measured, not SYSTEM_RUNNING: normal-GP writers that start
 * right at SYSTEM_RUNNING (holdoff 0) see GPs of 2 ticks instead of 3 in
 * their first 0.3 s on a 1-vCPU guest (12 of the first 30 samples of 10
 * runs, none later, none with holdoff 3), and a planted tick shows up 8%
 * short; expedited writers with holdoff 0-1 s meet the clocksource switch
 * from tsc-early to tsc (stop_machine, 1.5 s into boot) in their first GP.
 * 2 s after rcuscale starts (0.5 s into boot) is past both on every guest
 * measured here, in both modes.
 */
#define HOLDOFF_BOOT (-1)

struct run_spec {
	char matrix[64];		/* matrix name, "adhoc" for single runs */
	char schedule[64];		/* the schedule of a nightly round (rcuwb nightly), "" otherwise */
	int rep;			/* repetition within the cell */
	enum run_kind kind;
	const struct kernel_build *kernel;
	char kconfig[64];		/* Kconfig scenario, "" = KCONFIG_DEFAULT */
	struct guest_topo topo;
	enum gp_mode gp;
	char flavour[16];		/* rcuscale.scale_type, "" = rcu (the kernel's default) */
	int nwriters, nreaders;		/* rcuscale; -1 = kernel default */
	int holdoff_s;			/* rcuscale.holdoff, HOLDOFF_BOOT = until boot ends */
	int writer_holdoff_us;		/* rcuscale.writer_holdoff, 0 = none */
	int minruntime_s;		/* rcuscale.minruntime, 0 = not passed */
	int async_max;			/* rcuscale.gp_async_max of GP_ASYNC runs */
	bool emulator_apart;		/* QEMU's own threads on PUs apart from the vCPUs' */
	char probe_stages[8];		/* midboot.stages (RUN_PROBE) */
	char probe_prims[64];		/* midboot.prims, "" = all */
	int probe_watchdog_s;
	int probe_calls;		/* midboot.calls: calls per stage and primitive */
	char boot_params[512];		/* extra kernel parameters */
	int timeout_s;
};

/* How a run ended, most specific first (see run_classify()). */
enum outcome {
	OUT_OK, OUT_TIMEOUT, OUT_CRASH, OUT_BADNESS, OUT_RCUSCALE_ERROR,
	OUT_RCUSCALE_ABORTED, OUT_DEADLOCK, OUT_TOPOLOGY_MISMATCH, OUT_QEMU_FAILED,
	OUT_INTERRUPTED, OUT_HOST_FAILED, OUT_NR
};

/* What the runner saw of the guest from outside (libvirt). */
enum guest_end {
	END_SHUTDOWN,		/* guest powered off */
	END_CRASHED,		/* QEMU or guest crash reported by libvirt */
	END_TIMEOUT,		/* runner destroyed it at the deadline */
	END_EARLY,		/* runner destroyed it on a console verdict */
	END_INTERRUPTED,	/* Ctrl-C / SIGTERM */
	END_START_FAILED,	/* domain did not start */
	END_HOST_FAILED,	/* QEMU died under the guest (killed from outside) */
};

struct run_result {
	enum outcome outcome;
	char detail[256];
};

const char *outcome_name(enum outcome o);
/* Whether s is a midboot.stages value: distinct stage digits 0-4, e.g. "1" or "01234". */
bool run_probe_stages_ok(const char *s);
const char *gp_mode_name(enum gp_mode g);

/* Defaults: 2-vCPU flat guest, 512 MiB, normal GPs, kernel's writer count. */
void run_spec_init(struct run_spec *s);
/* The rcuscale.holdoff (seconds) a run's kernel gets. */
int run_holdoff_s(const struct run_spec *s);

/*
 * "v4-n2/expedited/w-1-r0" + "/f=FLAVOUR" (not for rcu: cells stored before
 * flavours keep their names) + "/k=SCENARIO" (not for the default scenario,
 * tiny: cells stored before scenarios keep their names) + extra
 * parameters: runs of one cell are comparable.
 */
void run_cell_key(const struct run_spec *s, char *out, unsigned cap);
/* The guest's kernel command line. */
int run_cmdline(const struct run_spec *s, char *out, unsigned cap);
/*
 * Should the runner stop the guest now?  Returns a reason string (for the
 * log) once the console holds a verdict that the rest of the boot cannot
 * change (probe watchdog, rcuscale abort, panic), else NULL.
 */
const char *run_early_verdict(const struct run_spec *s, const struct console *c);
/* Final classification from the console and how the guest ended. */
void run_classify(const struct run_spec *s, const struct console *c, enum guest_end end,
		  const char *end_detail, struct run_result *r);

#endif
