/* seqrun.h: a matrix's cells run in looks until the sequential gate decides each (compare, nightly). */
#ifndef RCUWB_SEQRUN_H
#define RCUWB_SEQRUN_H

#include <limits.h>
#include <stdbool.h>

#include "commits.h"
#include "common.h"
#include "matrix.h"

#define SEQRUN_MAX_CELLS 64
#define SEQRUN_MAX_LOOKS COMMIT_MAX_LOOKS

struct seq_cell {
	char name[192];			/* the matrix's cell (rcuwb run --cell) */
	char prefix[192];		/* "topology/mode/": how the gate's cell key starts */
	char verdict[16];		/* "" = not decided yet */
	char line[256];			/* its state after the last look */
};

/*
 * The caller fills in the first block, then seqrun_cells(), seqrun_load()
 * and seqrun_looks().  Each look runs every undecided cell to look x batch
 * repetitions a side (rcuwb run --resume, so a sequence stopped and started
 * again fills gaps and stores nothing twice) and gates every cell with the
 * sequential gate over the looks so far; a decided cell gets no more runs.
 * The looks end when every cell is decided, at max_runs, or when the next
 * look would not fit the budget (the last look is then the final one).
 */
struct seqrun {
	const char *matrix_path;	/* the cells */
	const char *name;		/* the runs are stored as this matrix */
	const char *base_var, *cand_var;
	const char *schedule;		/* stored with the runs; NULL: none */
	const char *hosts;		/* hosts file; NULL or "": this machine */
	const char *const *gate_args;	/* --threshold X and more gate options, NULL-terminated */
	int batch, max_runs, budget_s, jobs;
	char state_path[PATH_MAX];	/* the looks taken and the cells decided */
	char json_path[PATH_MAX];	/* the gate's JSON at the last look */

	char vars[140];
	struct seq_cell cells[SEQRUN_MAX_CELLS];
	int ncells;
	long long cutoffs[SEQRUN_MAX_LOOKS];	/* the largest run id of each look taken */
	int nlooks;
	struct buf text;		/* the gate's text at the last look */
};

/*
 * The cells of matrix m (its variants and repetitions do not matter), or
 * only `only` (NULL: all): one per topology and GP mode.  An error names
 * the matrix file.
 */
int seqrun_cells(struct seqrun *s, const struct matrix *m, const char *only);
/* The looks and decisions a stopped sequence had taken (state_path), if any. */
int seqrun_load(struct seqrun *s);
/* The looks; the gate's exit code (0 PASS, 1 SLOWDOWN, 2, 3 INCONCLUSIVE) or -1. */
int seqrun_looks(struct seqrun *s);
/* Ctrl-C and SIGTERM end the look in progress and keep its runs. */
void seqrun_catch_signals(void);
/* The signal that ended the looks, 0 if none. */
int seqrun_interrupted(void);
void seqrun_free(struct seqrun *s);

#endif
