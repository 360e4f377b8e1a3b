/* matrix.h: measurement matrices (perf-configs/NAME.yaml): parse, validate, expand into interleaved runs. */
#ifndef RCUWB_MATRIX_H
#define RCUWB_MATRIX_H

#include <limits.h>
#include <stddef.h>

#include "run.h"
#include "topo.h"

struct kernel_build;

#define MATRIX_MAX 16
#define MATRIX_MAX_RUNS 1000000	/* runs of one matrix: more is a typo, not a plan */
/*
 * rcuscale.gp_async_max of async cells unless the matrix says: the kernel's
 * default, 1000, is never reached in rcuscale's 100 calls of a writer, so
 * an async run would time kmalloc() and call_rcu() alone and no GP.
 */
#define ASYNC_MAX_DEFAULT 10

struct matrix {
	char path[PATH_MAX];
	char name[64];
	char variants[MATRIX_MAX][64];
	int nvariants;
	char kconfigs[MATRIX_MAX][64];	/* Kconfig scenarios, a dimension of cells */
	int nkconfigs;
	struct guest_topo topos[MATRIX_MAX];
	int ntopos;
	bool normal, expedited, async;	/* rcuscale GP modes */
	int async_max;			/* rcuscale.gp_async_max of async cells */
	char flavours[MATRIX_MAX][16];	/* rcuscale scale types, a dimension of cells: default [rcu] */
	int nflavours;
	int flavours_line;		/* line of the flavours key, for errors */
	char probe_stages[MATRIX_MAX][8];	/* mid-boot probe: stages x prims, */
	int nprobes;				/* one boot per combination */
	char probe_prims[MATRIX_MAX][64];	/* "" = all primitives */
	int nprims;
	int probe_watchdog_s;
	int probe_calls;
	int probe_line;				/* line of the probe key, for errors */
	char boot_params[MATRIX_MAX][256];	/* a dimension: "" = none */
	int nboot_params;
	int nwriters, nreaders, holdoff_s, writer_holdoff_us;
	int minruntime_s;		/* rcuscale.minruntime, 0 = not passed */
	bool emulator_apart;		/* emulator: apart */
	int reps, timeout_s;
	unsigned long long seed;
	char schedule[64];		/* set by rcuwb nightly: stored with every run */
};

/* One planned run: indexes into the matrix's dimensions. */
struct planned_run {
	int variant, topo, mode;	/* mode: 0 normal, 1 expedited, 2 async, 3 + k * nprims + j probe */
	int kconfig;			/* index into kconfigs */
	int flavour;			/* index into flavours (rcuscale cells) */
	int boot_params, rep;		/* rep counts from 1 */
	char cell[192];
};

/*
 * Parse a matrix file.  Errors name the file, the line and the key, e.g.
 * "perf-configs/quick.yaml:7: topologies[1].vcpus: give a whole number from 1 to 64".
 */
int matrix_load(const char *path, struct matrix *m);
/*
 * Every run of the matrix, in run order: repetition by repetition, the cells
 * shuffled (seeded: the same seed gives the same order), and within a cell
 * every variant back to back, in alternating order, so that slow drift of
 * the host lands on both sides of every comparison.
 */
int matrix_expand(const struct matrix *m, struct planned_run **runs, size_t *n);
/*
 * Fit the matrix to its kernels (k[variant * nkconfigs + kconfig]): when
 * one of them has no rcuscale.minruntime, no run of the matrix gets it (the
 * two sides of a comparison must measure alike), and it says so on stderr.
 * Call before matrix_expand(): the cells' names show minruntime.
 */
void matrix_fit_kernels(struct matrix *m, const struct kernel_build *k);
/*
 * Does kernel k's rcuscale offer every flavour and GP mode of the matrix?
 * -1 with an error naming the file, its line, the kernel and what it
 * lacks: before any guest boots.
 */
int matrix_check_rcuscale(const struct matrix *m, const struct kernel_build *k);
/*
 * Replace what the file says by what the command line says: the matrix's
 * name (name, NULL = keep) and its kernel variants (variants, a
 * comma-separated list, NULL = keep).
 */
int matrix_override(struct matrix *m, const char *name, const char *variants);
/* The run spec of a planned run (kernel left NULL: the caller sets it). */
void matrix_spec(const struct matrix *m, const struct planned_run *p, struct run_spec *s);

#endif
