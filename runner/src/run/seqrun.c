/*
 * seqrun.c: a matrix's cells run in looks until the sequential gate
 * (stats/R/sequential.R) decides each: the one engine of 'rcuwb compare'
 * and of a nightly round whose schedule asks for it.  See seqrun.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "commits.h"
#include "common.h"
#include "seqrun.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

void seqrun_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int seqrun_interrupted(void)
{
	return interrupted;
}

static int check_interrupted(const struct seqrun *s)
{
	if (!interrupted)
		return 0;
	return set_err("interrupted: the runs that finished are kept; started again with the same "
		       "arguments it goes on from them (state in %s)", s->state_path);
}

/* A cell's gate key starts with its first two parts: "topology/mode/". */
static void cell_prefix(const char *cell, char *out, size_t cap)
{
	char *slash;

	snprintf(out, cap, "%s", cell);
	slash = strchr(out, '/');
	slash = slash ? strchr(slash + 1, '/') : NULL;
	if (slash)
		slash[1] = '\0';
}

/* Add cell `name` unless it is there; -1 when two cells share a prefix. */
static int add_cell(struct seqrun *s, const struct matrix *m, const char *name)
{
	struct seq_cell *x = &s->cells[s->ncells];
	int k;

	for (k = 0; k < s->ncells; k++)
		if (!strcmp(s->cells[k].name, name))
			return 0;
	if (s->ncells == SEQRUN_MAX_CELLS)
		return set_err("%s: more than %d cells", m->path, SEQRUN_MAX_CELLS);
	memset(x, 0, sizeof(*x));
	snprintf(x->name, sizeof(x->name), "%s", name);
	cell_prefix(name, x->prefix, sizeof(x->prefix));
	for (k = 0; k < s->ncells; k++)
		if (!strcmp(s->cells[k].prefix, x->prefix))
			return set_err("%s: cells %s and %s differ in more than topology and GP mode: "
				       "the sequential gate takes one cell of each", m->path,
				       s->cells[k].name, x->name);
	s->ncells++;
	return 0;
}

int seqrun_cells(struct seqrun *s, const struct matrix *m, const char *only)
{
	struct planned_run *runs = NULL;
	size_t n = 0, i;
	int rc = 0;

	snprintf(s->vars, sizeof(s->vars), "%s,%s", s->base_var, s->cand_var);
	s->ncells = 0;
	if (matrix_expand(m, &runs, &n) < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++)
		if (!only || !strcmp(runs[i].cell, only))
			rc = add_cell(s, m, runs[i].cell);
	free(runs);
	if (rc == 0 && !s->ncells)
		return set_err(only ? "--cell '%s': not a cell of %s (see rcuwb run -n %s)" : "%s: no cells",
			       only ? only : m->path, m->path, m->path);
	return rc;
}

/* The largest run id of the sequence's matrix (0: none). */
static int max_run_id(const struct seqrun *s, long long *out)
{
	return commit_look_cutoff(s->name, s->vars, INT_MAX, out);
}

/*
 * Lines "look MAXID" and "decided CELL VERDICT" of a sequence stopped
 * before.  A state whose matrix has no runs in this database (a database
 * made anew) is another sequence's: it is dropped.
 */
int seqrun_load(struct seqrun *s)
{
	char line[300], cell[200], verdict[16];
	long long id;
	FILE *f = fopen(s->state_path, "re");
	int k;

	if (!f)
		return errno == ENOENT ? 0 : set_err("cannot read %s: %s", s->state_path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "look %lld", &id) == 1 && s->nlooks < SEQRUN_MAX_LOOKS) {
			s->cutoffs[s->nlooks++] = id;
		} else if (sscanf(line, "decided %199s %15s", cell, verdict) == 2) {
			for (k = 0; k < s->ncells; k++)
				if (!strcmp(s->cells[k].name, cell))
					snprintf(s->cells[k].verdict, sizeof(s->cells[k].verdict), "%s", verdict);
		}
	}
	fclose(f);
	if (!s->nlooks)
		return 0;
	if (max_run_id(s, &id) < 0)
		return -1;
	if (id < s->cutoffs[s->nlooks - 1]) {
		info("rcuwb: %s: %s is not about the runs of %s: starting anew\n", s->name, s->state_path, opt_db);
		s->nlooks = 0;
		for (k = 0; k < s->ncells; k++)
			s->cells[k].verdict[0] = '\0';
		return unlink(s->state_path) < 0 ? set_err("cannot remove %s: %s", s->state_path, strerror(errno)) : 0;
	}
	info("rcuwb: %s: going on after look %d (%s)\n", s->name, s->nlooks, s->state_path);
	return 0;
}

static int append_state(const struct seqrun *s, const char *line)
{
	FILE *f = fopen(s->state_path, "ae");

	if (!f || fputs(line, f) < 0 || fclose(f) < 0)
		return set_err("cannot write %s: %s", s->state_path, strerror(errno));
	return 0;
}

static int save_look(struct seqrun *s, long long maxid)
{
	char line[40];

	if (s->nlooks == SEQRUN_MAX_LOOKS)
		return set_err("%s: more than %d looks", s->name, SEQRUN_MAX_LOOKS);
	s->cutoffs[s->nlooks++] = maxid;
	snprintf(line, sizeof(line), "look %lld\n", maxid);
	return append_state(s, line);
}

/* Each undecided cell to `reps` runs a side. */
static int run_look(struct seqrun *s, int reps)
{
	int i;

	for (i = 0; i < s->ncells; i++) {
		struct commit_run cr = { .matrix_path = s->matrix_path, .name = s->name, .variants = s->vars,
					 .schedule = s->schedule, .cell = s->cells[i].name, .hosts = s->hosts,
					 .reps = reps, .resume = true, .jobs = s->jobs };

		if (!s->cells[i].verdict[0] && commit_run(&cr) < 0)
			return check_interrupted(s), -1;
		if (check_interrupted(s) < 0)
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

/* The gated rows of a cell: "mean +3.1% [upper bound +8.0%], p90 ...". */
static void row_state(json_object *rows, const char *key, char *out, size_t cap)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; rows && i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i), *g;
		char est[16], up[16];

		if (strcmp(jstr(r, "cell"), key) || !json_object_object_get_ex(r, "gated", &g) ||
		    !json_object_get_boolean(g))
			continue;
		jpct(r, "estimate", est, sizeof(est));
		jpct(r, "upper", up, sizeof(up));
		len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s %s [upper bound %s]",
					len ? ", " : "", jstr(r, "stat"), est, up);
	}
}

/* One cell of the gate's JSON: its line, and its verdict once decided. */
static int read_cell(struct seqrun *s, json_object *x, json_object *rows)
{
	const char *key = jstr(x, "cell"), *v = jstr(x, "verdict");
	struct seq_cell *cl = NULL;
	char rs[160], line[300];
	int k;

	for (k = 0; k < s->ncells && !cl; k++)
		if (!strncmp(key, s->cells[k].prefix, strlen(s->cells[k].prefix)))
			cl = &s->cells[k];
	if (!cl)
		return 0;
	row_state(rows, key, rs, sizeof(rs));
	snprintf(cl->line, sizeof(cl->line), "%-12.12s %.60s  %d+%d runs  %.160s", v, cl->name,
		 (int)jnum(x, "n_old"), (int)jnum(x, "n_new"), rs);
	if (!strcmp(v, "INCONCLUSIVE") || cl->verdict[0])
		return 0;
	snprintf(cl->verdict, sizeof(cl->verdict), "%s", v);
	snprintf(line, sizeof(line), "decided %s %s\n", cl->name, v);
	return append_state(s, line);
}

/* The gate's verdict per cell from its JSON: decided cells stop. */
static int read_verdicts(struct seqrun *s)
{
	json_object *o = json_object_from_file(s->json_path), *cells, *rows = NULL;
	size_t i;
	int rc = 0;

	if (!o || !json_object_object_get_ex(o, "cells", &cells))
		return o ? (json_object_put(o), 0) : set_err("the gate wrote no verdict to %s", s->json_path);
	json_object_object_get_ex(o, "rows", &rows);
	for (i = 0; i < json_object_array_length(cells) && rc == 0; i++)
		rc = read_cell(s, json_object_array_get_idx(cells, i), rows);
	json_object_put(o);
	return rc;
}

/* The sequential gate over every look so far: its exit code; its text in s->text. */
static int gate_look(struct seqrun *s, bool final)
{
	struct gate_looks lk = { .extra = s->gate_args, .cutoffs = s->cutoffs, .nlooks = s->nlooks,
				 .max_runs = s->max_runs, .final = final };
	int rc;

	unlink(s->json_path);
	s->text.len = 0;
	rc = commit_gate_seq(s->base_var, s->cand_var, s->name, &lk, s->json_path, &s->text);
	if (rc < 0)
		return -1;
	return read_verdicts(s) < 0 ? -1 : rc;
}

static bool all_decided(const struct seqrun *s)
{
	int i;

	for (i = 0; i < s->ncells; i++)
		if (!s->cells[i].verdict[0])
			return false;
	return true;
}

static void show_cells(const struct seqrun *s, int look, double elapsed)
{
	int i;

	info("rcuwb: %s, look %d (%.0f s of %d s):\n", s->name, look, elapsed, s->budget_s);
	for (i = 0; i < s->ncells; i++)
		info("  %s\n", s->cells[i].line[0] ? s->cells[i].line : s->cells[i].name);
}

int seqrun_looks(struct seqrun *s)
{
	double t0 = now_s(), last;
	int rc = 3;

	for (;;) {
		int look = s->nlooks + 1, reps = look * s->batch;
		long long maxid;
		bool final;
		double t1 = now_s();

		if (reps > s->max_runs)
			reps = s->max_runs;
		if (run_look(s, reps) < 0 || max_run_id(s, &maxid) < 0 || save_look(s, maxid) < 0)
			return -1;
		last = now_s() - t1;
		final = reps >= s->max_runs || now_s() - t0 + last > s->budget_s;
		rc = gate_look(s, final);
		if (rc < 0)
			return -1;
		show_cells(s, look, now_s() - t0);
		if (rc == 2 || all_decided(s) || final)
			break;
	}
	return rc;
}

void seqrun_free(struct seqrun *s)
{
	buf_free(&s->text);
}
