/*
 * cmd_compare.c: rcuwb compare BASE CAND: did my change slow grace periods?
 *
 * Resolves the two sides (side.c), builds what is missing (patch sides
 * first, so a patch that does not apply stops everything before a build),
 * then runs both sides interleaved in looks until the sequential gate
 * decides each cell (seqrun.c, the engine nightly rounds share).  The
 * looks taken so far are kept in RESULTS/compare/NAME.looks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commits.h"
#include "common.h"
#include "db.h"
#include "kernel.h"
#include "matrix.h"
#include "seqrun.h"
#include "side.h"

static const char compare_help[] =
	"Usage: rcuwb compare [OPTIONS] BASE CAND\n"
	"       rcuwb compare [OPTIONS] REPO@REV\n"
	"\n"
	"Did CAND slow grace periods against BASE?  Builds both, runs them\n"
	"interleaved in looks of --batch runs a side, and stops each cell of the\n"
	"compare matrix as soon as the sequential gate decides it: PASS (a slowdown\n"
	"beyond --threshold is ruled out) or SLOWDOWN; INCONCLUSIVE only when\n"
	"--max-runs or the --budget ends first, with the runs a decision needs.\n"
	"The gate's error rates hold however many looks it takes.\n"
	"\n"
	"BASE and CAND are each a kernel variant (kernel-changes/variants/NAME), a\n"
	"patch file or a directory of *.patch files (applied in name order on top of\n"
	"the other side's source and patches), or REPO@REV (a git revision of a\n"
	"kernel tree).  REPO@REV alone compares it with its first parent.\n"
	"\n"
	"  -m, --matrix FILE    the cells (default perf-configs/compare.yaml in the data\n"
	"                       directory that 'rcuwb --help' names)\n"
	"      --cell CELL      only this cell (a name 'rcuwb run -n FILE' prints)\n"
	"  -t, --threshold P    the slowdown to rule out or show (default 10%%; 1%%-100%%)\n"
	"      --batch N        runs a side added to a cell per look (default 4)\n"
	"      --max-runs N     at most N runs a side per cell (default 40)\n"
	"  -B, --budget TIME    wall time for the runs: 90s, 20m, 2h (default 30m)\n"
	"      --name NAME      store the runs as matrix NAME (default compare-BASE-CAND)\n"
	"  -J, --jobs N         guests at once (default 1)\n"
	"      --anatomy-runs N after a SLOWDOWN, N traced runs a side of the slow cells\n"
	"                       show where the time went (rcuwb anatomy; default 4)\n"
	"      --no-anatomy     not that (it needs both sides built in scenario trace)\n"
	"\n"
	"Exit status as 'rcuwb gate': 0 PASS, 1 SLOWDOWN, 2 hard failure, sides not\n"
	"comparable, or bad input (one line, before anything is built), 3\n"
	"INCONCLUSIVE.  With rcuwb --json the final verdict is the gate's JSON.\n";

struct compare {
	const char *matrix_path, *only_cell, *name_opt;
	char default_matrix[PATH_MAX];	/* DATADIR/perf-configs/compare.yaml */
	char threshold[16];
	struct side base, cand;
	struct matrix m;
	char name[64], vars[140];
	bool no_minruntime;		/* a side's kernel has no rcuscale.minruntime */
	bool no_anatomy;		/* --no-anatomy */
	int anatomy_runs;		/* traced runs a side after a SLOWDOWN */
	const char *gate_args[3];
	struct seqrun sq;		/* the looks */
};

/* "10%" or "0.1": the threshold as rcuwb-gate.R takes it ("10%"); 1% to 100%. */
static int parse_threshold(const char *v, char *out, size_t cap)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || (*end && strcmp(end, "%")))
		return set_err("--threshold '%s': give a percentage such as 10%% (or 0.1)", v);
	if (!*end)
		x *= 100;
	if (x < 1 || x > 100)
		return set_err("--threshold '%s': give 1%% to 100%%", v);
	snprintf(out, cap, "%g%%", x);
	return 0;
}

/* "90s", "20m", "2h" or plain seconds; one minute to a week. */
static int parse_budget(const char *v, int *out)
{
	long x;

	if (duration_s(v, &x) < 0)
		return set_err("--budget '%s': give a time such as 90s, 20m or 2h", v);
	if (x < 60 || x > 7 * 86400)
		return set_err("--budget '%s': give one minute to a week", v);
	*out = (int)x;
	return 0;
}

static int parse_opts(int argc, char **argv, struct compare *c)
{
	static const struct option opts[] = {
		{ "matrix", required_argument, NULL, 'm' }, { "cell", required_argument, NULL, 'c' },
		{ "threshold", required_argument, NULL, 't' }, { "batch", required_argument, NULL, 'b' },
		{ "max-runs", required_argument, NULL, 'x' }, { "budget", required_argument, NULL, 'B' },
		{ "name", required_argument, NULL, 'n' }, { "jobs", required_argument, NULL, 'J' },
		{ "anatomy-runs", required_argument, NULL, 'A' }, { "no-anatomy", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	int o, ret = 0;

	snprintf(c->threshold, sizeof(c->threshold), "10%%");
	c->sq.batch = 4;
	c->sq.max_runs = 40;
	c->sq.budget_s = 1800;
	c->sq.jobs = 1;
	c->anatomy_runs = 4;
	optind = 1;
	while (!ret && (o = getopt_long(argc, argv, "m:t:B:J:h", opts, NULL)) != -1) {
		switch (o) {
		case 'm': c->matrix_path = optarg; break;
		case 'c': c->only_cell = optarg; break;
		case 't': ret = parse_threshold(optarg, c->threshold, sizeof(c->threshold)); break;
		case 'b': ret = parse_int("--batch", optarg, 2, 100, &c->sq.batch); break;
		case 'x': ret = parse_int("--max-runs", optarg, 4, 1000, &c->sq.max_runs); break;
		case 'B': ret = parse_budget(optarg, &c->sq.budget_s); break;
		case 'n': c->name_opt = optarg; break;
		case 'J': ret = parse_int("--jobs", optarg, 1, 256, &c->sq.jobs); break;
		case 'A': ret = parse_int("--anatomy-runs", optarg, 2, 100, &c->anatomy_runs); break;
		case 'N': c->no_anatomy = true; break;
		case 'h': print_usage(compare_help); return 1;
		default: return bad_usage("compare");
		}
	}
	if (ret)
		return ret;
	if (!c->matrix_path) {
		c->matrix_path = data_path(NULL, "perf-configs/compare.yaml", c->default_matrix,
					   sizeof(c->default_matrix));
		if (!c->matrix_path)
			return -1;
	}
	if (c->sq.batch > c->sq.max_runs)
		return set_err("--batch %d is more than --max-runs %d", c->sq.batch, c->sq.max_runs);
	if ((c->sq.max_runs + c->sq.batch - 1) / c->sq.batch > 19)
		return set_err("--max-runs %d in batches of %d is more than 19 looks: give a larger --batch",
			       c->sq.max_runs, c->sq.batch);
	if (argc - optind < 1 || argc - optind > 2)
		return set_err("give BASE and CAND (or REPO@REV alone): see 'rcuwb compare --help'");
	return 0;
}

/* The two sides, checked and made buildable; nothing is built yet. */
static int resolve_sides(struct compare *c, int argc, char **argv)
{
	bool alone = argc - optind == 1;
	struct side *sides[2] = { &c->base, &c->cand };

	if (side_parse(argv[argc - 1], &c->cand) < 0 ||
	    (alone ? side_first_parent(&c->cand, &c->base) : side_parse(argv[optind], &c->base)) < 0)
		return -1;
	if (c->base.kind == SIDE_PATCHES && c->cand.kind == SIDE_PATCHES)
		return set_err("BASE and CAND are both patches: make one of them a variant or REPO@REV");
	if (c->cand.kind == SIDE_PATCHES && side_on_top(&c->cand, &c->base) < 0)
		return -1;
	if (c->base.kind == SIDE_PATCHES && side_on_top(&c->base, &c->cand) < 0)
		return -1;
	if (!strcmp(c->base.variant, c->cand.variant))
		return set_err("BASE and CAND are the same kernel (%s): nothing to compare", c->base.variant);
	snprintf(c->vars, sizeof(c->vars), "%s,%s", c->base.variant, c->cand.variant);
	if (c->name_opt)
		snprintf(c->name, sizeof(c->name), "%s", c->name_opt);
	else
		snprintf(c->name, sizeof(c->name), "compare-%.26s-%.26s", c->base.variant, c->cand.variant);
	if (c->base.kind == SIDE_VARIANT && c->cand.kind == SIDE_VARIANT)
		return 0;
	{
		char dir[PATH_MAX];

		if (path_fmt(dir, sizeof(dir), "%s/compare/changes", cache_dir()) < 0 ||
		    side_changes_dir(dir, sides, 2) < 0)
			return -1;
		/* build/kernel.sh and rcuwb run read the variants from there */
		setenv("RCUWB_CHANGES", dir, 1);
	}
	return 0;
}

/* The matrix's cells, one per topology and GP mode. */
static int load_cells(struct compare *c)
{
	if (matrix_load(c->matrix_path, &c->m) < 0 || matrix_override(&c->m, c->name, c->vars) < 0)
		return -1;
	c->m.reps = 1;
	if (c->no_minruntime)
		c->m.minruntime_s = 0;
	c->sq.base_var = c->base.variant;
	c->sq.cand_var = c->cand.variant;
	return seqrun_cells(&c->sq, &c->m, c->only_cell);
}

/*
 * The cells as the built kernels can run them: without rcuscale.minruntime
 * on either side when one side's kernel lacks it (rcuwb run drops it alike).
 */
static int fit_kernels(struct compare *c)
{
	if (!c->m.minruntime_s)
		return 0;
	if (kernel_fit_matrix(&c->m) < 0)
		return -1;
	c->no_minruntime = !c->m.minruntime_s;
	return c->no_minruntime ? load_cells(c) : 0;
}

/* Patch sides first: a patch that does not apply stops the compare before any build. */
static int build_sides(struct compare *c)
{
	const struct side *order[2] = { &c->cand, &c->base };
	int i, k, rc;

	if (c->base.kind == SIDE_PATCHES) {
		order[0] = &c->base;
		order[1] = &c->cand;
	}
	for (i = 0; i < 2; i++)
		for (k = 0; k < c->m.nkconfigs; k++) {
			rc = kernel_make(order[i]->variant, c->m.kconfigs[k]);
			if (rc < 0)
				return rc;
		}
	return 0;
}

/* The looks' state and the gate's JSON: beside the database. */
static int state_paths(struct compare *c)
{
	char db[PATH_MAX], dir[PATH_MAX + 16];

	snprintf(db, sizeof(db), "%s", opt_db);
	if (path_fmt(dir, sizeof(dir), "%s/compare", dirname(db)) < 0 ||
	    path_fmt(c->sq.state_path, sizeof(c->sq.state_path), "%s/%s.looks", dir, c->name) < 0 ||
	    path_fmt(c->sq.json_path, sizeof(c->sq.json_path), "%s/%s.gate.json", dir, c->name) < 0)
		return -1;
	return mkdir_p(dir);
}

static int start_looks(struct compare *c)
{
	c->gate_args[0] = "--threshold";
	c->gate_args[1] = c->threshold;
	c->gate_args[2] = NULL;
	c->sq.matrix_path = c->m.path;
	c->sq.name = c->name;
	c->sq.gate_args = c->gate_args;
	return state_paths(c) < 0 || seqrun_load(&c->sq) < 0 ? -1 : 0;
}

/* The verdict: the gate's text, or its JSON with rcuwb --json. */
static void print_verdict(struct compare *c)
{
	struct buf j = { 0 };

	if (json_output && read_file(c->sq.json_path, &j) == 0)
		fwrite(j.data, 1, j.len, stdout);
	else if (c->sq.text.len)
		fwrite(c->sq.text.data, 1, c->sq.text.len, stdout);
	buf_free(&j);
}

/*
 * A SLOWDOWN: where the time went in the slow cells, from traced runs of
 * both sides (rcuwb anatomy), after the verdict.  Not with --json (stdout
 * is the gate's JSON there) or --no-anatomy; a failure is a warning, the
 * verdict stands.
 */
static void anatomy_of_slowdown(struct compare *c)
{
	const char *cells[SEQRUN_MAX_CELLS];
	char name[96];
	int i, n = 0;

	if (c->no_anatomy || json_output)
		return;
	for (i = 0; i < c->sq.ncells; i++)
		if (!strcmp(c->sq.cells[i].verdict, "SLOWDOWN"))
			cells[n++] = c->sq.cells[i].prefix;
	if (!n)
		return;
	snprintf(name, sizeof(name), "anatomy-%.55s", c->name);	/* a matrix name: 63 at most */
	printf("\nWhere the time went (traced runs of the slow cells, %d a side: rcuwb anatomy --matrix %s):\n",
	       c->anatomy_runs, name);
	fflush(stdout);
	if (anatomy_after_slowdown(c->base.variant, c->cand.variant, name, cells, n, c->anatomy_runs) < 0)
		info("rcuwb: warning: no anatomy of the slowdown: %s\n", last_err());
}

int do_compare(int argc, char **argv)
{
	struct compare *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return set_err("out of memory"), 2;
	rc = parse_opts(argc, argv, c);
	if (rc > 0) {	/* --help */
		free(c);
		return 0;
	}
	if (rc == 0)
		rc = resolve_sides(c, argc, argv) < 0 || load_cells(c) < 0 ? -1 : 0;
	if (rc == 0) {
		info("rcuwb: compare %s (%s) against %s (%s): %d cell(s) of %s, %s threshold, looks of %d runs a "
		     "side up to %d, budget %d s\n", c->cand.variant, c->cand.arg, c->base.variant, c->base.arg,
		     c->sq.ncells, c->matrix_path, c->threshold, c->sq.batch, c->sq.max_runs, c->sq.budget_s);
		rc = build_sides(c);
	}
	if (rc == 0)
		rc = fit_kernels(c) < 0 || start_looks(c) < 0 ? -1 : 0;
	if (rc == 0) {
		seqrun_catch_signals();
		rc = seqrun_looks(&c->sq);
	}
	if (rc >= 0)
		print_verdict(c);
	if (rc == 1)
		anatomy_of_slowdown(c);
	seqrun_free(&c->sq);
	free(c);
	if (rc == KERNEL_REFUSED)	/* build/kernel.sh said which patch and hunk */
		return 2;
	if (rc < 0) {
		report_err();
		return seqrun_interrupted() ? 128 + seqrun_interrupted() : 2;
	}
	return rc;
}
