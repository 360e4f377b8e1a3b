/* commits.h: measuring git commits: a commit as kernel variant REPO.COMMIT12, built, run, gated. */
#ifndef RCUWB_COMMITS_H
#define RCUWB_COMMITS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "matrix.h"

/* git -C repo ARGS... (NULL-terminated, at most 8), its output's first line into out. */
int git_line(const char *repo, char *out, size_t cap, ...);
/* The commit id of rev in repo; -1 with an error naming both. */
int commit_resolve(const char *repo, const char *rev, char *out, size_t cap);
/* The subject line of a commit ("" when git cannot say). */
void commit_subject(const char *repo, const char *commit, char *out, size_t cap);
/* The kernel variant name of a commit: REPO.COMMIT12 (REPO: the directory's name). */
void commit_variant(const char *repo, const char *commit, char *var, size_t cap);
/*
 * Build commit (variant commit_variant()) in every Kconfig scenario of m,
 * unless built before.  One work tree per repository (REPO.work) is checked
 * out commit after commit, so a commit recompiles only what it changed;
 * the commit's variant then gets the same build by its content key (0 s).
 * Variant files go to $RCUWB_CACHE/nightly/variants (build/kernel.sh
 * runs with RCUWB_CHANGES=$RCUWB_CACHE/nightly).  The work tree is shared
 * by every schedule and bisection of the repository, whatever their
 * database: a lock beside it ($RCUWB_CACHE/nightly/REPO.lock) makes
 * builds take turns.
 */
int commit_build(const char *repo, const char *commit, const struct matrix *m);

/* One rcuwb run of a matrix file under another name, with other variants. */
struct commit_run {
	const char *matrix_path;	/* the cells */
	const char *name;		/* stored as this matrix */
	const char *variants;		/* A,B,... */
	const char *schedule;		/* NULL: none */
	const char *cell;		/* NULL: every cell */
	const char *hosts;		/* hosts file; NULL or "": this machine */
	int reps;			/* 0: the file's */
	int jobs;			/* guests at once; 0: one */
	bool resume;			/* fill gaps (else add repetitions) */
};
int commit_run(const struct commit_run *cr);
/*
 * A look's cutoff for the sequential gate (gate --looks): the largest run
 * id among the runs of matrix `name` of variants `vars` (A,B,...) with
 * repetition at most reps; 0 when none.  Defined by repetitions, not by
 * when the look was taken, so a sequence started again sees the same looks.
 */
int commit_look_cutoff(const char *name, const char *vars, int reps, long long *out);
/*
 * rcuwb gate of candidate against baseline on the runs of matrix `name`:
 * its exit code (0 PASS, 1 SLOWDOWN, 2 refused/hard failure, 3
 * INCONCLUSIVE), -1 if it could not run.  extra: more gate options
 * (NULL-terminated, may be NULL); json: where its JSON goes (NULL: none);
 * text: its text (NULL: on our stdout).
 */
int commit_gate(const char *baseline, const char *candidate, const char *name, const char *const *extra,
		const char *json, struct buf *text);
#define COMMIT_MAX_LOOKS 32

/* A sequential gate's looks: each one's cutoff (commit_look_cutoff()); the last is this one. */
struct gate_looks {
	const char *const *extra;	/* gate options before the looks (NULL-terminated, at most 24) */
	const long long *cutoffs;
	int nlooks;			/* at most COMMIT_MAX_LOOKS */
	int max_runs;			/* the design's runs a side at most */
	bool final;			/* the last look: it spends what is left */
};
/* The sequential gate (gate --looks --max-runs [--final]) at the last of lk's looks; as commit_gate(). */
int commit_gate_seq(const char *baseline, const char *candidate, const char *name, const struct gate_looks *lk,
		    const char *json, struct buf *text);
/* "PASS", "SLOWDOWN", "INCONCLUSIVE" or "FAILED" for a gate exit code. */
const char *gate_verdict(int rc);

#endif
