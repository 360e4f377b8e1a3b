/* side.h: one side of `rcuwb compare`: a kernel variant, patches on top of the other side, or a git revision, as a variant build/kernel.sh builds. */
#ifndef RCUWB_SIDE_H
#define RCUWB_SIDE_H

#include <limits.h>
#include <stdbool.h>

#include "variant.h"

struct side {
	const char *arg;		/* as the user gave it */
	enum { SIDE_VARIANT, SIDE_PATCHES, SIDE_GIT } kind;
	char variant[64];		/* what it is built and stored as */
	char repo[PATH_MAX];		/* git: the repository; */
	char commit[48];		/* and the commit REV resolves to */
	char patches[VARIANT_MAX_PATCHES][PATH_MAX];	/* patches: the files, in order */
	int npatches;
	char text[16384];		/* the variant file written for it ("" for a named variant) */
};

/*
 * What arg names, checked before anything is built: REPO@REV (a git
 * revision: REPO a directory, REV resolving to a commit), an existing patch
 * file or directory of *.patch files (applied in name order; on top of the
 * other side: side_on_top()), or a kernel variant's name (its file read and
 * checked).  Errors name the argument and what to do.
 */
int side_parse(const char *arg, struct side *s);
/* CAND given alone as REPO@REV: BASE is its first parent. */
int side_first_parent(const struct side *cand, struct side *base);
/* A patches side gets base's source and patches with its own after them: NAME.pHASH. */
int side_on_top(struct side *s, const struct side *base);
/*
 * Make every side buildable and runnable from one changes directory
 * (dir, used as $RCUWB_CHANGES): kernel-changes' series directories and
 * variant files linked, a variant file written for each generated side,
 * its patches copied under p-HASH/.
 */
int side_changes_dir(const char *dir, struct side *const *sides, int n);

#endif
