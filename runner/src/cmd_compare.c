/*
 * cmd_compare.c: rcuwb compare BASE CAND: did my change slow grace periods?
 *
 * Resolves the two sides (side.c), builds what is missing (patch sides
 * first, so a patch that does not apply stops everything before a build),
 * then runs both sides interleaved in looks: each look adds --batch runs a
 * side to every cell not yet decided (rcuwb run --resume up to look x
 * batch repetitions, so a compare stopped and started again fills gaps and
 * stores nothing twice) and gates every cell with the sequential gate
 * (stats/R/sequential.R), whose error rates hold however many looks are
 * taken.  A cell stops once decided; the compare ends when every cell is,
 * at --max-runs, or when the next look would not fit the --budget (that
 * look is then the final one).  The looks taken so far are kept in
 * RESULTS/compare/NAME.looks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sqlite3.h>

#include "cli.h"
#include "commits.h"
#include "common.h"
#include "db.h"
#include "kernel.h"
#include "matrix.h"
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
	"  -m, --matrix FILE    the cells (default perf-configs/compare.yaml)\n"
	"      --cell CELL      only this cell (a name 'rcuwb run -n FILE' prints)\n"
	"  -t, --threshold P    the slowdown to rule out or show (default 10%%; 1%%-100%%)\n"
	"      --batch N        runs a side added to a cell per look (default 4)\n"
	"      --max-runs N     at most N runs a side per cell (default 40)\n"
	"  -B, --budget TIME    wall time for the runs: 90s, 20m, 2h (default 30m)\n"
	"      --name NAME      store the runs as matrix NAME (default compare-BASE-CAND)\n"
	"  -J, --jobs N         guests at once (default 1)\n"
	"\n"
	"Exit status as 'rcuwb gate': 0 PASS, 1 SLOWDOWN, 2 hard failure, sides not\n"
	"comparable, or bad input (one line, before anything is built), 3\n"
	"INCONCLUSIVE.  With rcuwb --json the final verdict is the gate's JSON.\n";

#define COMPARE_MAX_CELLS 64

struct cell {
	char name[192];			/* the matrix's cell (rcuwb run --cell) */
	char prefix[192];		/* "topology/mode/": how the gate's cell key starts */
	char verdict[16];		/* "" = not decided yet */
	char line[256];			/* its state after the last look */
};

struct compare {
	const char *matrix_path, *only_cell, *name_opt;
	char threshold[16];
	int batch, max_runs, budget_s, jobs;
	struct side base, cand;
	struct matrix m;
	char name[64], vars[140], looks_path[PATH_MAX], json[PATH_MAX];
	struct cell cells[COMPARE_MAX_CELLS];
	int ncells;
	long long cutoffs[32];		/* the largest run id of each look taken */
	int nlooks;
	bool final;			/* the last look was the final one */
	bool no_minruntime;		/* a side's kernel has no rcuscale.minruntime */
	struct buf text;		/* the gate's text at the last look */
};

/* "10%" or "0.1": the threshold as gate.R takes it ("10%"); 1% to 100%. */
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
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || x < 0 || strlen(end) > 1 || (*end && !strchr("smh", *end)))
		return set_err("--budget '%s': give a time such as 90s, 20m or 2h", v);
	x *= *end == 'h' ? 3600 : *end == 'm' ? 60 : 1;
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
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	int o, ret = 0;

	c->matrix_path = RCUWB_SRCDIR "/perf-configs/compare.yaml";
	snprintf(c->threshold, sizeof(c->threshold), "10%%");
	c->batch = 4;
	c->max_runs = 40;
	c->budget_s = 1800;
	c->jobs = 1;
	optind = 1;
	while (!ret && (o = getopt_long(argc, argv, "m:t:B:J:h", opts, NULL)) != -1) {
		switch (o) {
		case 'm': c->matrix_path = optarg; break;
		case 'c': c->only_cell = optarg; break;
		case 't': ret = parse_threshold(optarg, c->threshold, sizeof(c->threshold)); break;
		case 'b': ret = parse_int("--batch", optarg, 2, 100, &c->batch); break;
		case 'x': ret = parse_int("--max-runs", optarg, 4, 1000, &c->max_runs); break;
		case 'B': ret = parse_budget(optarg, &c->budget_s); break;
		case 'n': c->name_opt = optarg; break;
		case 'J': ret = parse_int("--jobs", optarg, 1, 256, &c->jobs); break;
		case 'h': print_usage(compare_help); return 1;
		default: return bad_usage("compare");
		}
	}
	if (ret)
		return ret;
	if (c->batch > c->max_runs)
		return set_err("--batch %d is more than --max-runs %d", c->batch, c->max_runs);
	if ((c->max_runs + c->batch - 1) / c->batch > 19)
		return set_err("--max-runs %d in batches of %d is more than 19 looks: give a larger --batch",
			       c->max_runs, c->batch);
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

/* The matrix's cells, each with the start of the gate's key for it. */
static int load_cells(struct compare *c)
{
	struct planned_run *runs = NULL;
	size_t n = 0, i;
	int k;

	if (matrix_load(c->matrix_path, &c->m) < 0 || matrix_override(&c->m, c->name, c->vars) < 0)
		return -1;
	c->m.reps = 1;
	if (c->no_minruntime)
		c->m.minruntime_s = 0;
	c->ncells = 0;
	if (matrix_expand(&c->m, &runs, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		struct cell *x = &c->cells[c->ncells];
		char *slash;

		for (k = 0; k < c->ncells && strcmp(c->cells[k].name, runs[i].cell); k++)
			;
		if (k < c->ncells || (c->only_cell && strcmp(runs[i].cell, c->only_cell)))
			continue;
		if (c->ncells == COMPARE_MAX_CELLS) {
			free(runs);
			return set_err("%s: more than %d cells", c->matrix_path, COMPARE_MAX_CELLS);
		}
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", runs[i].cell);
		snprintf(x->prefix, sizeof(x->prefix), "%s", runs[i].cell);
		slash = strchr(x->prefix, '/');
		slash = slash ? strchr(slash + 1, '/') : NULL;
		if (slash)
			slash[1] = '\0';
		for (k = 0; k < c->ncells; k++)
			if (!strcmp(c->cells[k].prefix, x->prefix)) {
				free(runs);
				return set_err("%s: cells %s and %s differ in more than topology and GP mode: "
					       "compare takes one cell of each", c->matrix_path, c->cells[k].name,
					       x->name);
			}
		c->ncells++;
	}
	free(runs);
	if (!c->ncells)
		return set_err(c->only_cell ? "--cell '%s': not a cell of %s (see rcuwb run -n %s)" :
			       "%s: no cells", c->only_cell ? c->only_cell : c->matrix_path, c->matrix_path,
			       c->matrix_path);
	return 0;
}

/*
 * The cells as the built kernels can run them: without rcuscale.minruntime
 * on either side when one side's kernel lacks it (rcuwb run drops it alike).
 */
static int fit_kernels(struct compare *c)
{
	int nk = c->m.nvariants * c->m.nkconfigs, i, rc = 0;
	struct kernel_build *k;

	if (!c->m.minruntime_s)
		return 0;
	k = calloc((size_t)nk, sizeof(*k));
	if (!k)
		return set_err("out of memory");
	for (i = 0; i < nk && rc == 0; i++)
		rc = kernel_load(c->m.variants[i / c->m.nkconfigs], c->m.kconfigs[i % c->m.nkconfigs], &k[i]);
	if (rc == 0) {
		matrix_fit_kernels(&c->m, k);
		c->no_minruntime = !c->m.minruntime_s;
	}
	for (i = 0; i < nk; i++)
		kernel_free(&k[i]);
	free(k);
	return rc < 0 || (c->no_minruntime && load_cells(c) < 0) ? -1 : 0;
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

/* The state file's directory: beside the database. */
static int state_paths(struct compare *c)
{
	char db[PATH_MAX], dir[PATH_MAX + 16];

	snprintf(db, sizeof(db), "%s", opt_db);
	if (path_fmt(dir, sizeof(dir), "%s/compare", dirname(db)) < 0 ||
	    path_fmt(c->looks_path, sizeof(c->looks_path), "%s/%s.looks", dir, c->name) < 0 ||
	    path_fmt(c->json, sizeof(c->json), "%s/%s.gate.json", dir, c->name) < 0)
		return -1;
	return mkdir_p(dir);
}

/*
 * The looks taken before and the cells they decided (a compare stopped and
 * started again): lines "look MAXID" and "decided CELL VERDICT".
 */
static int load_looks(struct compare *c)
{
	char line[300], cell[200], verdict[16];
	long long id;
	FILE *f;
	int k;

	if (state_paths(c) < 0)
		return -1;
	f = fopen(c->looks_path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "look %lld", &id) == 1 && c->nlooks < 32) {
			c->cutoffs[c->nlooks++] = id;
		} else if (sscanf(line, "decided %199s %15s", cell, verdict) == 2) {
			for (k = 0; k < c->ncells; k++)
				if (!strcmp(c->cells[k].name, cell))
					snprintf(c->cells[k].verdict, sizeof(c->cells[k].verdict), "%s", verdict);
		}
	}
	fclose(f);
	if (c->nlooks)
		info("rcuwb: %s: going on after look %d (%s)\n", c->name, c->nlooks, c->looks_path);
	return 0;
}

static int append_state(struct compare *c, const char *line)
{
	FILE *f = fopen(c->looks_path, "ae");

	if (!f || fputs(line, f) < 0 || fclose(f) < 0)
		return set_err("cannot write %s: %s", c->looks_path, strerror(errno));
	return 0;
}

static int save_look(struct compare *c, long long maxid)
{
	char line[40];

	c->cutoffs[c->nlooks++] = maxid;
	snprintf(line, sizeof(line), "look %lld\n", maxid);
	return append_state(c, line);
}

/* The largest run id of the compare's matrix (0: none). */
static int max_run_id(const struct compare *c, long long *out)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int rc;

	if (db_open(opt_db, &db) < 0)
		return -1;
	rc = sqlite3_prepare_v2(db, "SELECT coalesce(MAX(id), 0) FROM runs WHERE matrix = ?", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, c->name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : SQLITE_ERROR;
		*out = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK)
		set_err("%s: %s", opt_db, sqlite3_errmsg(db));
	db_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

/*
 * Ctrl-C (or SIGTERM) reaches the runner of the look in progress, which
 * destroys its guests and keeps what finished; compare waits for it, then
 * stops.  Started again, it goes on from the stored runs.
 */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int check_interrupted(const struct compare *c)
{
	if (!interrupted)
		return 0;
	return set_err("interrupted: the runs that finished are kept; 'rcuwb compare' with the same "
		       "arguments goes on from them (state in %s)", c->looks_path);
}

/* Each undecided cell to `reps` runs a side. */
static int run_look(struct compare *c, int reps)
{
	int i;

	for (i = 0; i < c->ncells; i++) {
		struct commit_run cr = { .matrix_path = c->m.path, .name = c->name, .variants = c->vars,
					 .cell = c->cells[i].name, .reps = reps, .resume = true, .jobs = c->jobs };

		if (!c->cells[i].verdict[0] && commit_run(&cr) < 0)
			return check_interrupted(c), -1;
		if (check_interrupted(c) < 0)
			return -1;
	}
	return 0;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "";
}

static double jnum(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : 0;
}

/* "+3.1%", or "none" where the gate's JSON has null (too few runs to bound it) */
static void jpct(json_object *o, const char *key, char *out, size_t cap)
{
	json_object *v;

	if (json_object_object_get_ex(o, key, &v) && v)
		snprintf(out, cap, "%+.1f%%", 100 * json_object_get_double(v));
	else
		snprintf(out, cap, "none");
}

/* A gated row of a cell: "mean +3.1% [.., +8.0%] look 2 of 2". */
static void row_state(json_object *rows, const char *key, char *out, size_t cap)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; rows && i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i), *g;

		if (strcmp(jstr(r, "cell"), key) || !json_object_object_get_ex(r, "gated", &g) ||
		    !json_object_get_boolean(g))
			continue;
		char est[16], up[16];

		jpct(r, "estimate", est, sizeof(est));
		jpct(r, "upper", up, sizeof(up));
		len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s %s [upper bound %s]",
					len ? ", " : "", jstr(r, "stat"), est, up);
	}
}

/* The gate's verdict per cell from its JSON: decided cells stop. */
static int read_verdicts(struct compare *c)
{
	json_object *o = json_object_from_file(c->json), *cells, *rows = NULL;
	size_t i;
	int k;

	if (!o || !json_object_object_get_ex(o, "cells", &cells))
		return o ? (json_object_put(o), 0) : set_err("the gate wrote no verdict to %s", c->json);
	json_object_object_get_ex(o, "rows", &rows);
	for (i = 0; i < json_object_array_length(cells); i++) {
		json_object *x = json_object_array_get_idx(cells, i);
		const char *key = jstr(x, "cell"), *v = jstr(x, "verdict");
		char rs[160];

		for (k = 0; k < c->ncells && strncmp(key, c->cells[k].prefix, strlen(c->cells[k].prefix)); k++)
			;
		if (k == c->ncells)
			continue;
		row_state(rows, key, rs, sizeof(rs));
		{
			struct cell *cl = &c->cells[k];
			char line[sizeof(cl->line)];

			snprintf(line, sizeof(line), "%-12s %.60s  %d+%d runs  %s", v, cl->name,
				 (int)jnum(x, "n_old"), (int)jnum(x, "n_new"), rs);
			memcpy(cl->line, line, sizeof(line));
		}
		if (strcmp(v, "INCONCLUSIVE") && !c->cells[k].verdict[0]) {
			char line[300];

			snprintf(c->cells[k].verdict, sizeof(c->cells[k].verdict), "%s", v);
			snprintf(line, sizeof(line), "decided %s %s\n", c->cells[k].name, v);
			if (append_state(c, line) < 0) {
				json_object_put(o);
				return -1;
			}
		}
	}
	json_object_put(o);
	return 0;
}

/* The sequential gate over every look so far: its exit code; its text in c->text. */
static int gate_look(struct compare *c, bool final)
{
	char looks[32 * 24] = "", maxr[16];
	const char *extra[12] = { "--threshold", c->threshold, "--looks", looks, "--max-runs", maxr };
	size_t len = 0;
	int i, n = 6, rc;

	for (i = 0; i + 1 < c->nlooks; i++)	/* the earlier looks; the last is this one */
		len += (size_t)snprintf(looks + len, sizeof(looks) - len, "%s%lld", i ? "," : "", c->cutoffs[i]);
	snprintf(maxr, sizeof(maxr), "%d", c->max_runs);
	if (final)
		extra[n++] = "--final";
	extra[n] = NULL;
	unlink(c->json);
	c->text.len = 0;
	rc = commit_gate(c->base.variant, c->cand.variant, c->name, extra, c->json, &c->text);
	if (rc < 0)
		return -1;
	return read_verdicts(c) < 0 ? -1 : rc;
}

static bool all_decided(const struct compare *c)
{
	int i;

	for (i = 0; i < c->ncells; i++)
		if (!c->cells[i].verdict[0])
			return false;
	return true;
}

static void show_cells(const struct compare *c, int look, double elapsed)
{
	int i;

	info("rcuwb: %s, look %d (%.0f s of %d s):\n", c->name, look, elapsed, c->budget_s);
	for (i = 0; i < c->ncells; i++)
		info("  %s\n", c->cells[i].line[0] ? c->cells[i].line : c->cells[i].name);
}

/* Looks until every cell is decided, max_runs, or the budget. */
static int looks(struct compare *c)
{
	double t0 = now_s(), last = 0;
	int rc = 3;

	for (;;) {
		int look = c->nlooks + 1, reps = look * c->batch;
		long long maxid;
		bool final;
		double t1 = now_s();

		if (reps > c->max_runs)
			reps = c->max_runs;
		if (run_look(c, reps) < 0 || max_run_id(c, &maxid) < 0 || save_look(c, maxid) < 0)
			return -1;
		last = now_s() - t1;
		final = reps >= c->max_runs || now_s() - t0 + last > c->budget_s;
		rc = gate_look(c, final);
		if (rc < 0)
			return -1;
		show_cells(c, look, now_s() - t0);
		if (rc == 2 || all_decided(c) || final)
			break;
	}
	return rc;
}

/* The verdict: the gate's text, or its JSON with rcuwb --json. */
static void print_verdict(struct compare *c)
{
	struct buf j = { 0 };

	if (json_output && read_file(c->json, &j) == 0)
		fwrite(j.data, 1, j.len, stdout);
	else if (c->text.len)
		fwrite(c->text.data, 1, c->text.len, stdout);
	buf_free(&j);
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
		     c->ncells, c->matrix_path, c->threshold, c->batch, c->max_runs, c->budget_s);
		rc = build_sides(c);
	}
	if (rc == 0)
		rc = fit_kernels(c) < 0 || load_looks(c) < 0 ? -1 : 0;
	if (rc == 0) {
		catch_signals();
		rc = looks(c);
	}
	if (rc >= 0)
		print_verdict(c);
	buf_free(&c->text);
	free(c);
	if (rc == KERNEL_REFUSED)	/* build/kernel.sh said which patch and hunk */
		return 2;
	if (rc < 0) {
		report_err();
		return interrupted ? 128 + interrupted : 2;
	}
	return rc;
}
