/* flavour.h: the RCU flavours rcuscale measures (its scale_type), what each needs of the kernel, and its GP modes. */
#ifndef RCUWB_FLAVOUR_H
#define RCUWB_FLAVOUR_H

#include <stdbool.h>
#include <stddef.h>

struct kernel_build;

struct flavour {
	const char *name;		/* rcuscale.scale_type */
	const char *kconfig;		/* the option its rcuscale ops need, NULL = none */
	/*
	 * NULL: its expedited GPs are GPs of their own (rcuscale's exp_sync);
	 * else why an expedited cell would measure normal GPs again.
	 */
	const char *no_expedited;
	/* NULL: it has call_rcu()-style GPs (rcuscale's .async); else why not */
	const char *no_async;
};

/* Why flavour f has no GPs of rcuscale mode `mode` (0 normal, 1 expedited, 2 async), NULL when it has. */
const char *flavour_lacks(const struct flavour *f, int mode);

#define FLAVOUR_DEFAULT "rcu"

/* The flavour called name, NULL when rcuwb knows none by that name. */
const struct flavour *flavour_find(const char *name);
/* Every flavour's name, ", "-separated, for error messages. */
const char *flavour_names(void);
/*
 * Does k's rcuscale offer the flavour?  0 yes; -1 no, with set_err() saying
 * why (the option its kernel lacks, the Kconfig scenario that has it).
 */
int flavour_offered(const struct kernel_build *k, const struct flavour *f);
/*
 * Can k's rcuscale run async GPs of flavour f on a guest of vcpus vCPUs?
 * 0 yes; -1 with set_err() saying why not (6.1's per-CPU count of
 * callbacks in flight hangs a writer whose callbacks run elsewhere).
 */
int flavour_async_runs(const struct kernel_build *k, const struct flavour *f, unsigned vcpus);

#endif
