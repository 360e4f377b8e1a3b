/*
 * cmd_bisect.c: rcuwb bisect: the first commit of a first-parent range
 * whose runs belong with the bad end, found by measuring.
 *
 * The ends are measured first (interleaved) and must differ (the gate says
 * SLOWDOWN of bad against good).  Each step builds and runs the middle
 * commit of what is left and gates it against both ends (the rule is in
 * classify()).
 * The ends and each step are sequential: looks of --reps runs, up to
 * --max-reps, each gated with the sequential gate over the looks so far
 * (stats/R/sequential.R: alpha spent over the looks, so that taking more
 * runs after an undecided look does not raise the error rates); a commit
 * that does not build, or stays undecided, is skipped (as git bisect
 * skip).  A look is defined by repetitions (the runs up to look x
 * --reps), so a restarted bisection sees the same looks.  Every run
 * is stored under matrix "bisect@GOOD12..BAD12", so a bisection that was
 * interrupted repeats no finished run when it is started again: it
 * recomputes each finished step from the stored runs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "commits.h"
#include "common.h"
#include "matrix.h"
#include "proc.h"
#include "schedule.h"

static const char bisect_help[] =
	"Usage: rcuwb bisect --good REV --bad REV [OPTIONS] SCHEDULE\n"
	"\n"
	"Find the first commit between GOOD and BAD (the branch's first-parent commits\n"
	"after GOOD, up to BAD) whose grace-period latency belongs with BAD, in the\n"
	"repository and matrix of SCHEDULE (perf-configs/schedules/NAME.yaml or a path).\n"
	"Each step builds a commit, runs it, and gates it against both ends with the\n"
	"sequential gate of rcuwb compare: looks of --reps runs up to --max-reps, each\n"
	"decision at its designed level however many looks it took.  A commit that does\n"
	"not build or stays undecided is skipped.  Started again, a bisection repeats\n"
	"no run it finished.\n"
	"\n"
	"  -g, --good REV       a commit without the slowdown\n"
	"  -b, --bad REV        a later commit with it\n"
	"  -c, --cell CELL      the matrix cell to measure (default: its first)\n"
	"  -s, --stat STAT      the gated statistic (default mean)\n"
	"  -r, --reps N         runs per commit and look (default 4)\n"
	"  -m, --max-reps N     runs per commit at most (default 12; at most 19 looks)\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit: 0 found (the commit is printed, and in JSON with the evidence of each\n"
	"step), 1 an error (one line says which), 3 not found (the ends do not differ,\n"
	"or every candidate was skipped).\n";

#define BISECT_MAX_LOOKS 19	/* rpact designs have at most 20 stages */

struct bisect {
	const char *good_rev, *bad_rev, *cell, *stat, *sched;
	int reps, max_reps;
	struct schedule s;
	struct matrix m;
	char repo[PATH_MAX], name[64], good[48], bad[48];
	char cellname[192];
	char (*commits)[48];
	int n;
	json_object *steps;
};

static int parse_opts(int argc, char **argv, struct bisect *b)
{
	static const struct option opts[] = {
		{ "good", required_argument, NULL, 'g' }, { "bad", required_argument, NULL, 'b' },
		{ "cell", required_argument, NULL, 'c' }, { "stat", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' }, { "max-reps", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	int c, ret = 0;

	b->stat = "mean";
	b->reps = 4;
	b->max_reps = 12;
	while (ret == 0 && (c = getopt_long(argc, argv, "g:b:c:s:r:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g': b->good_rev = optarg; break;
		case 'b': b->bad_rev = optarg; break;
		case 'c': b->cell = optarg; break;
		case 's': b->stat = optarg; break;
		case 'r': ret = parse_int("--reps", optarg, 3, 1000, &b->reps); break;
		case 'm': ret = parse_int("--max-reps", optarg, 3, 1000, &b->max_reps); break;
		case 'h': print_usage(bisect_help); return 1;
		default: return bad_usage("bisect");
		}
	}
	if (ret)
		return ret;
	if (optind != argc - 1 || !b->good_rev || !b->bad_rev)
		return set_err("bisect takes --good REV --bad REV and one schedule: see 'rcuwb bisect --help'");
	if (b->max_reps < b->reps)
		b->max_reps = b->reps;
	if ((b->max_reps + b->reps - 1) / b->reps > BISECT_MAX_LOOKS)
		return set_err("--max-reps %d in looks of %d is more than %d looks: give a larger --reps",
			       b->max_reps, b->reps, BISECT_MAX_LOOKS);
	b->sched = argv[optind];
	return 0;
}

/* The first-parent commits after good up to bad, oldest first. */
static int list_commits(struct bisect *b)
{
	const char *argv[] = { "git", "-C", b->repo, "rev-list", "--first-parent", "--reverse", NULL, NULL };
	char range[120];
	struct buf out = { 0 };
	char *line, *save = NULL;
	int rc;

	snprintf(range, sizeof(range), "%s..%s", b->good, b->bad);
	argv[6] = range;
	rc = proc_run(argv, NULL, &out);
	if (rc != 0) {
		buf_free(&out);
		return rc < 0 ? -1 : set_err("git rev-list %s failed in %s", range, b->repo);
	}
	b->commits = calloc(out.len / 41 + 1, sizeof(*b->commits));
	if (!b->commits) {
		buf_free(&out);
		return set_err("out of memory");
	}
	for (line = strtok_r(out.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		snprintf(b->commits[b->n++], sizeof(b->commits[0]), "%s", line);
	buf_free(&out);
	{
		char parent[48] = "", first[60];

		snprintf(first, sizeof(first), "%s^1", b->n ? b->commits[0] : b->bad);
		if (!b->n || strcmp(b->commits[b->n - 1], b->bad) ||
		    git_line(b->repo, parent, sizeof(parent), "rev-parse", "-q", "--verify", first, NULL) < 0 ||
		    strcmp(parent, b->good))
			return set_err("%.12s is not a first-parent descendant of %.12s: give --good on the "
				       "branch's first-parent line below --bad", b->bad, b->good);
	}
	return 0;
}

/* The cell to run: --cell, or the matrix's first. */
static int pick_cell(struct bisect *b)
{
	struct planned_run *runs = NULL;
	size_t n = 0, i;

	if (matrix_expand(&b->m, &runs, &n) < 0)
		return -1;
	snprintf(b->cellname, sizeof(b->cellname), "%s", b->cell ? b->cell : runs[0].cell);
	for (i = 0; i < n && strcmp(runs[i].cell, b->cellname); i++)
		;
	free(runs);
	return i < n ? 0 : set_err("--cell '%s': not a cell of %s (see rcuwb run --dry-run)", b->cellname, b->m.path);
}

/* Run commits (variants a[,b,c]) to `reps` runs each (stored runs count). */
static int measure(struct bisect *b, const char *vars, int reps)
{
	struct commit_run cr = { .matrix_path = b->m.path, .name = b->name, .variants = vars,
				 .cell = b->cellname, .reps = reps, .resume = true, .jobs = b->s.jobs };

	return commit_run(&cr);
}

/* The looks of one sequence (the ends, or one step): each one's cutoff. */
struct looks {
	long long cut[BISECT_MAX_LOOKS];
	int n;
};

/* The look at `reps` runs of vars (A[,B]): its cutoff joins l. */
static int take_look(const struct bisect *b, struct looks *l, const char *vars, int reps)
{
	if (l->n == BISECT_MAX_LOOKS)
		return set_err("%s: more than %d looks", b->name, BISECT_MAX_LOOKS);
	return commit_look_cutoff(b->name, vars, reps, &l->cut[l->n++]);
}

/* The runs a look after one at reps takes. */
static int next_reps(const struct bisect *b, int reps)
{
	return reps + b->reps > b->max_reps ? b->max_reps : reps + b->reps;
}

/*
 * The sequential gate of candidate against baseline over the looks so far
 * (the last is this one; final: --max-reps reached, it spends what is
 * left): its exit code, its text in t.
 */
static int gate(struct bisect *b, const char *base, const char *cand, const struct looks *l, bool final,
		struct buf *t)
{
	const char *extra[] = { "--stat", b->stat, NULL };
	struct gate_looks lk = { .extra = extra, .cutoffs = l->cut, .nlooks = l->n, .max_runs = b->max_reps,
				 .final = final };

	t->len = 0;
	if (t->data)
		t->data[0] = '\0';
	return commit_gate_seq(base, cand, b->name, &lk, NULL, t);
}

/* The gate's verdict line of the stat ("    PASS         mean ..."), trimmed. */
static void verdict_line(const struct buf *t, const char *stat, char *out, size_t cap)
{
	char key[40];
	const char *p;

	snprintf(out, cap, "-");
	snprintf(key, sizeof(key), " %s ", stat);
	for (p = t->data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		size_t len = strcspn(p, "\n");
		const char *hit = strstr(p, key);

		if (hit && hit < p + len && strstr(p, "[")) {
			while (*p == ' ')
				p++, len--;
			snprintf(out, cap, "%.*s", (int)len, p);
		}
	}
}

enum side { SIDE_GOOD, SIDE_BAD, SIDE_UNDECIDED, SIDE_SKIP, SIDE_ERROR };

/*
 * A commit is bad when the gate finds it slower than the good end
 * (SLOWDOWN) and does not find the bad end slower than it; good when the
 * gate finds the bad end slower than it and it passes against the good end;
 * undecided otherwise (the comparisons are inconclusive or contradict).
 */
static enum side classify(int vs_good, int bad_vs)
{
	/* only a gate that ran counts: PASS 0, SLOWDOWN 1, INCONCLUSIVE 3 */
	if (vs_good == 1 && (bad_vs == 0 || bad_vs == 3))
		return SIDE_BAD;
	if (bad_vs == 1 && vs_good == 0)
		return SIDE_GOOD;
	return SIDE_UNDECIDED;
}

static void add_step(struct bisect *b, const char *commit, const char *subject, int reps, const char *side,
		     const char *vs_good, const char *bad_vs)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "commit", json_object_new_string(commit));
	json_object_object_add(o, "subject", json_object_new_string(subject));
	json_object_object_add(o, "runs", json_object_new_int(reps));
	json_object_object_add(o, "side", json_object_new_string(side));
	json_object_object_add(o, "vs_good", json_object_new_string(vs_good));
	json_object_object_add(o, "bad_vs", json_object_new_string(bad_vs));
	json_object_array_add(b->steps, o);
	info("bisect: %.12s %-9s %d runs  %s\n", commit, side, reps, subject);
	info("    against good: %s\n    bad against it: %s\n", vs_good, bad_vs);
}

/* Measure and classify one commit. */
static enum side step(struct bisect *b, const char *commit)
{
	char var[64], gv[64], bv[64], subject[256] = "", l1[512], l2[512];
	struct buf t = { 0 };
	struct looks l = { .n = 0 };
	enum side side = SIDE_UNDECIDED;
	int reps, g = -1, k = -1;
	bool final;

	commit_subject(b->repo, commit, subject, sizeof(subject));
	commit_variant(b->repo, commit, var, sizeof(var));
	commit_variant(b->repo, b->good, gv, sizeof(gv));
	commit_variant(b->repo, b->bad, bv, sizeof(bv));
	if (commit_build(b->repo, commit, &b->m) < 0) {
		add_step(b, commit, subject, 0, "skip", last_err(), "-");
		return SIDE_SKIP;
	}
	for (reps = b->reps;; reps = next_reps(b, reps)) {
		/* a run that fails is the host's failure, not the commit's */
		if (measure(b, var, reps) < 0 || take_look(b, &l, var, reps) < 0) {
			buf_free(&t);
			return SIDE_ERROR;
		}
		final = reps >= b->max_reps;
		g = gate(b, gv, var, &l, final, &t);
		verdict_line(&t, b->stat, l1, sizeof(l1));
		k = gate(b, var, bv, &l, final, &t);
		verdict_line(&t, b->stat, l2, sizeof(l2));
		side = classify(g, k);
		if (side != SIDE_UNDECIDED || final)
			break;
	}
	add_step(b, commit, subject, reps,
		 side == SIDE_BAD ? "bad" : side == SIDE_GOOD ? "good" : "skip", l1, l2);
	buf_free(&t);
	return side == SIDE_UNDECIDED ? SIDE_SKIP : side;
}

/* The ends, interleaved, until the gate separates them (or max-reps). */
static int ends(struct bisect *b)
{
	char gv[64], bv[64], vars[140], line[512];
	struct buf t = { 0 };
	struct looks l = { .n = 0 };
	int reps, rc = -1;

	commit_variant(b->repo, b->good, gv, sizeof(gv));
	commit_variant(b->repo, b->bad, bv, sizeof(bv));
	if (commit_build(b->repo, b->good, &b->m) < 0 || commit_build(b->repo, b->bad, &b->m) < 0)
		return -1;
	snprintf(vars, sizeof(vars), "%s,%s", gv, bv);
	for (reps = b->reps;; reps = next_reps(b, reps)) {
		if (measure(b, vars, reps) < 0 || take_look(b, &l, vars, reps) < 0) {
			buf_free(&t);
			return -1;
		}
		rc = gate(b, gv, bv, &l, reps >= b->max_reps, &t);
		/* decided: SLOWDOWN, or PASS (the ends do not differ by the threshold) */
		if (rc == 0 || rc == 1 || rc == 2 || rc < 0 || reps >= b->max_reps)
			break;
	}
	verdict_line(&t, b->stat, line, sizeof(line));
	info("bisect: ends: %.12s (good) against %.12s (bad): %s\n", b->good, b->bad, line);
	buf_free(&t);
	if (rc != 0 && rc != 1 && rc != 3)
		return set_err("the gate could not compare the ends (exit %d, see above)", rc);
	if (rc != 1)
		return 1;
	return 0;
}

static int bisect_range(struct bisect *b, int *first_bad)
{
	int lo = -1, hi = b->n - 1;	/* commits[lo] good (-1: the good end), commits[hi] bad */
	char *skip = calloc((size_t)b->n, 1);

	if (!skip)
		return set_err("out of memory");
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2, off, pick = -1;
		enum side s;

		/* the middle, or the nearest candidate not skipped */
		for (off = 0; off < hi - lo && pick < 0; off++) {
			if (mid + off < hi && !skip[mid + off])
				pick = mid + off;
			else if (mid - off > lo && !skip[mid - off])
				pick = mid - off;
		}
		if (pick < 0)
			break;
		s = step(b, b->commits[pick]);
		if (s == SIDE_ERROR) {
			free(skip);
			return -1;
		}
		if (s == SIDE_BAD)
			hi = pick;
		else if (s == SIDE_GOOD)
			lo = pick;
		else
			skip[pick] = 1;
	}
	*first_bad = hi;
	free(skip);
	return hi - lo == 1 ? 0 : 1;
}

int do_bisect(int argc, char **argv)
{
	struct bisect b = { 0 };
	json_object *out;
	int rc, first = -1;

	rc = parse_opts(argc, argv, &b);
	if (rc)
		return rc > 0 ? 0 : -1;
	if (schedule_load(b.sched, &b.s) < 0)
		return -1;
	if (matrix_load(b.s.matrix, &b.m) < 0 || schedule_repo(&b.s, b.repo, sizeof(b.repo)) < 0 ||
	    commit_resolve(b.repo, b.good_rev, b.good, sizeof(b.good)) < 0 ||
	    commit_resolve(b.repo, b.bad_rev, b.bad, sizeof(b.bad)) < 0 || list_commits(&b) < 0 ||
	    pick_cell(&b) < 0) {
		schedule_free(&b.s);
		free(b.commits);
		return -1;
	}
	snprintf(b.name, sizeof(b.name), "bisect@%.12s..%.12s", b.good, b.bad);
	b.steps = json_object_new_array();
	info("bisect: %d commits after %.12s up to %.12s; cell %s, statistic %s, matrix %s\n", b.n, b.good,
	     b.bad, b.cellname, b.stat, b.name);
	rc = ends(&b);
	if (rc == 0)
		rc = bisect_range(&b, &first);
	out = json_object_new_object();
	json_object_object_add(out, "good", json_object_new_string(b.good));
	json_object_object_add(out, "bad", json_object_new_string(b.bad));
	json_object_object_add(out, "cell", json_object_new_string(b.cellname));
	json_object_object_add(out, "stat", json_object_new_string(b.stat));
	json_object_object_add(out, "matrix", json_object_new_string(b.name));
	json_object_object_add(out, "steps", b.steps);
	if (rc == 0) {
		char subject[256] = "";

		commit_subject(b.repo, b.commits[first], subject, sizeof(subject));
		json_object_object_add(out, "first_bad", json_object_new_string(b.commits[first]));
		if (!json_output)
			printf("first bad commit: %s %s\n", b.commits[first], subject);
	} else if (rc == 1 && !json_output) {
		printf("not found: %s\n", first < 0 ? "the ends do not differ at the runs allowed (--max-reps)"
			: "every candidate left was skipped");
	}
	if (json_output)
		printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
	json_object_put(out);
	schedule_free(&b.s);
	free(b.commits);
	return rc < 0 ? -1 : rc == 1 ? 3 : 0;
}
