/* kernel.h: a built guest kernel variant, as build/kernel.sh describes it in build.json. */
#ifndef RCUWB_KERNEL_H
#define RCUWB_KERNEL_H

#include <limits.h>

struct kernel_build {
	char variant[64];
	char version[32];		/* "6.1.N", read from the tree */
	char vmlinux[PATH_MAX];
	char config[PATH_MAX];		/* the final .config */
	char config_sha[24];
	char build_key[24];		/* build/kernel.sh's content key ("" before it) */
	char source[PATH_MAX];		/* "debian PACKAGE VERSION", "git REPO REV COMMIT" or "" */
	char initramfs[PATH_MAX];
	char *patches_json;		/* [{"name":..,"sha256":..}] */
	int hz;				/* CONFIG_HZ */
	char preempt[24];		/* none | voluntary | full */
	char nohz[16];			/* periodic | idle | full */
};

/* Cache directory: $RCUWB_CACHE, else $XDG_CACHE_HOME/rcuwb, else ~/.cache/rcuwb. */
const char *cache_dir(void);
/* Load kernels/VARIANT/build.json (and read HZ etc. from its .config). */
int kernel_load(const char *variant, struct kernel_build *k);
void kernel_free(struct kernel_build *k);

#endif
