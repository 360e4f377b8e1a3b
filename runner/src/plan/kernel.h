/* kernel.h: a built guest kernel (variant, Kconfig scenario), as build/kernel.sh describes it in build.json. */
#ifndef RCUWB_KERNEL_H
#define RCUWB_KERNEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* The Kconfig scenario of a kernel when none is named (and of runs stored before scenarios). */
#define KCONFIG_DEFAULT "tiny"

struct kernel_build {
	char variant[64];
	char kconfig[64];		/* Kconfig scenario: perf-configs/kconfig/scenarios/NAME.config */
	char kconfig_sha[24];		/* hash of the fragments asked for ("" before scenarios) */
	char version[32];		/* "6.1.N", read from the tree */
	char vmlinux[PATH_MAX];
	char config[PATH_MAX];		/* the final .config */
	char build_json[PATH_MAX];	/* kernels/VARIANT/KCONFIG/build.json */
	char config_sha[24];
	char build_key[24];		/* build/kernel.sh's content key ("" before it) */
	char source[PATH_MAX];		/* "debian PACKAGE VERSION", "git REPO REV COMMIT" or "" */
	char commit[48];		/* a git source's commit id, "" otherwise */
	char commit_date[40];		/* its committer date (ISO 8601), "" otherwise */
	char initramfs[PATH_MAX];
	char *patches_json;		/* [{"name":..,"sha256":..}] */
	int hz;				/* CONFIG_HZ */
	char preempt[24];		/* none | voluntary | full */
	char nohz[16];			/* periodic | idle | full */
	/*
	 * What the kernel can do.  A build.json from before build/kernel.sh
	 * recorded these is of a 6.1 tree with rcuscale (all rcuwb built then)
	 * and is taken to have the probe: a probe boot of a kernel without it
	 * then fails in the guest (no probe output) instead of before it.
	 */
	bool midboot_probe;		/* kernel/rcu/midboot_probe.c */
	bool rcuscale_minruntime;	/* rcuscale.minruntime (v6.6, or 6.1 with patch 0009) */
	char param_prefix[16];		/* rcuscale's module parameters: "rcuscale" or "rcuperf" (< 5.11) */
	char console_prefix[16];	/* its console lines: "rcu-scale" or "rcu-perf" */
	bool rcu_trace;			/* RCU's trace events built in (RCU_TRACE, EVENT_TRACING): anatomy */
	/* the scenario's boot parameters (scenarios/KCONFIG.boot, as rcutorture's .boot files) */
	char scenario_boot[512];
};

/* Cache directory: $RCUWB_CACHE, else $XDG_CACHE_HOME/rcuwb, else ~/.cache/rcuwb. */
const char *cache_dir(void);
/* The directory of the Kconfig fragments: $RCUWB_KCONFIG_DIR, else perf-configs/kconfig. */
const char *kconfig_dir(void);
/*
 * Whether scenario NAME has a fragment (scenarios/NAME.config); if not, the
 * names that do, space-separated, in avail.
 */
bool kconfig_exists(const char *name, char *avail, size_t cap);
/* Load kernels/VARIANT/KCONFIG/build.json (and read HZ etc. from its .config). */
int kernel_load(const char *variant, const char *kconfig, struct kernel_build *k);
/* Is option (e.g. "CONFIG_TASKS_TRACE_RCU") =y in k's final .config? */
bool kernel_has_option(const struct kernel_build *k, const char *option);
/*
 * Build a variant in a Kconfig scenario (build/kernel.sh, its progress on
 * stderr; a build of the same content is reused in 0 s).  -1 with
 * set_err(); KERNEL_REFUSED when a patch does not apply (build/kernel.sh
 * said so, in one line naming the patch and the hunk, and changed no tree).
 */
#define KERNEL_REFUSED (-2)
int kernel_make(const char *variant, const char *kconfig);
void kernel_free(struct kernel_build *k);
struct matrix;
/*
 * Fit matrix m to the built kernels of its variants and Kconfig scenarios
 * (matrix_fit_kernels(): no rcuscale.minruntime when one lacks it); -1
 * when one is not built.
 */
int kernel_fit_matrix(struct matrix *m);
/* -1 with an error naming the kernel and `what` (who asked) when k has no mid-boot probe. */
int kernel_need_probe(const struct kernel_build *k, const char *what);

#endif
