/* variant.h: kernel variant files (kernel-changes/variants): read and checked before anything runs. */
#ifndef RCUWB_VARIANT_H
#define RCUWB_VARIANT_H

#include <limits.h>
#include <stddef.h>

#define VARIANT_MAX_PATCHES 64

/*
 * A variant file, as build/kernel.sh reads it (kernel-changes/README.md):
 * '#' starts a comment; "source debian LINE [VERSION]", "source git REPO
 * REV", "series DIR", and otherwise one patch file a line.
 */
struct variant {
	char path[PATH_MAX];
	enum { SRC_DEBIAN, SRC_GIT } source;
	char line[16];			/* debian: "6.12" */
	char pin[64];			/* debian: a package version, "" = newest */
	char repo[PATH_MAX];		/* git: a path, a URL or a name in $RCUWB_CACHE/git */
	char rev[128];			/* git: a commit, tag or branch */
	char series[64];		/* "" = the tree's line */
	char patches[VARIANT_MAX_PATCHES][128];
	int patch_line[VARIANT_MAX_PATCHES];	/* the file's line of each patch */
	int npatches;
	int at;				/* parsing: the line being read */
};

/*
 * Parse a variant file.  Errors name the file and the line, e.g.
 * "kernel-changes/variants/x:3: 'source debian 6.x': LINE is MAJOR.MINOR
 * (e.g. 'source debian 6.12')".  Every word is checked for characters
 * that would break a path, a shell word or a git revision.
 */
int variant_load(const char *path, struct variant *v);
/*
 * The file of variant ARG: ARG itself when it holds a '/', else
 * variant_changes_dir()/variants/ARG.  -1 with set_err() when it does not
 * exist (unknown variant).
 */
int variant_file(const char *arg, char *path, size_t size);
/* Where variant files and series live: $RCUWB_CHANGES, else kernel-changes/ of the source tree. */
const char *variant_changes_dir(void);
/*
 * The variant NAME as `rcuwb run` will build and boot it: its file in
 * $RCUWB_CHANGES/variants (else kernel-changes/variants of the source tree)
 * parsed and checked.
 */
int variant_check(const char *name);

#endif
