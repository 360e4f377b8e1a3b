/*
 * cmd_nightly.c: rcuwb nightly SCHEDULE: one scheduled round.
 *
 * lock -> resolve the head (fetch) -> baseline -> build both -> run the
 * matrix (baseline and head interleaved) -> gate -> change points and
 * dashboard -> record the round -> notify.  Each stage prints one line; a
 * round's files (its variant files, gate.json, history.json, round.json)
 * are in $RCUWB_CACHE/schedules/NAME/rounds/COMMIT12/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "common.h"
#include "db.h"
#include "kernel.h"
#include "matrix.h"
#include "commits.h"
#include "proc.h"
#include "rounds.h"
#include "schedule.h"
#include "seqrun.h"

static const char nightly_help[] =
	"Usage: rcuwb nightly [OPTIONS] SCHEDULE\n"
	"\n"
	"One scheduled round of SCHEDULE (perf-configs/schedules/NAME.yaml, or a path;\n"
	"see perf-configs/schedules/README.md): resolve the head of the followed branch\n"
	"(fetching the remote first when the schedule names one); if that commit was\n"
	"measured already, say so and stop; else build it and the baseline, run the\n"
	"schedule's matrix with both (each cell and repetition runs the two back to back,\n"
	"so drift within the round shows on both sides), gate the head against the\n"
	"baseline, update the change-point analysis and the dashboard, and run the\n"
	"notify command with the round's JSON on its standard input.  With gate.max_runs\n"
	"the round runs in looks of gate.batch runs a side until the sequential gate\n"
	"decides every cell (as rcuwb compare), gate.max_runs or gate.budget.\n"
	"\n"
	"  -f, --force   measure the head again (new repetitions) although it was measured\n"
	"  -w, --wait    wait for a round that holds the lock instead of leaving\n"
	"  -h, --help    this text\n"
	"\n"
	"Rounds on one database take turns: the lock is DB.lock beside the database.\n"
	"A round that was killed or failed is completed (its missing runs only, then\n"
	"gated again) by the next round on the same head; if the head moved on, its\n"
	"row stays as it was and its runs stay in the history.\n"
	"\n"
	"Exit: 0 nothing new (or already measured), 1 a new change point or a gate\n"
	"SLOWDOWN, 2 hard failure (build, boot, gate refused), 3 gate INCONCLUSIVE.\n";

struct round {
	struct schedule s;
	struct matrix m;
	char repo[PATH_MAX];		/* the local git directory */
	char dir[PATH_MAX];		/* this round's files */
	char head[48], head_date[40], head_subject[256], base[48];
	char head_var[64], base_var[64];
	struct round_row row;
	bool force, wait;
	sqlite3 *db;
	json_object *out;		/* the round's JSON report */
	json_object *stages;
	int hard;			/* a stage failed: exit 2 */
};

static int parse_opts(int argc, char **argv, struct round *r, const char **name)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' }, { "wait", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "fwh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': r->force = true; break;
		case 'w': r->wait = true; break;
		case 'h': print_usage(nightly_help); return 1;
		default: return bad_usage("nightly");
		}
	}
	if (optind != argc - 1)
		return set_err("nightly takes one schedule: see 'rcuwb nightly --help'");
	*name = argv[optind];
	return 0;
}

/* One line per stage on stderr, and the same in the JSON report. */
static void stage(struct round *r, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void stage(struct round *r, const char *name, const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	info("nightly %s: %-8s %s\n", r->s.name, name, msg);
	json_object_object_add(o, "stage", json_object_new_string(name));
	json_object_object_add(o, "message", json_object_new_string(msg));
	json_object_array_add(r->stages, o);
}

/* A stage that failed: its line, and the round's exit code becomes 2. */
static int stage_failed(struct round *r, const char *name)
{
	stage(r, name, "FAILED: %s", last_err());
	r->hard = 1;
	return -1;
}

/* The lock beside the database; 1 when another round holds it and we leave. */
static int take_lock(struct round *r, int *fd)
{
	char path[PATH_MAX], pid[32];

	if (path_fmt(path, sizeof(path), "%s.lock", opt_db) < 0)
		return -1;
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0)
		return set_err("cannot open the round lock %s: %s", path, strerror(errno));
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return set_err("cannot lock %s: %s", path, strerror(errno));
		if (!r->wait) {
			stage(r, "lock", "another round holds %s: leaving (--wait waits for it)", path);
			return 1;
		}
		stage(r, "lock", "another round holds %s: waiting", path);
		if (flock(*fd, LOCK_EX) < 0)
			return set_err("cannot lock %s: %s", path, strerror(errno));
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(*fd, 0) < 0 || pwrite(*fd, pid, strlen(pid), 0) < 0)
		return set_err("cannot write %s: %s", path, strerror(errno));
	return 0;
}

static int resolve_head(struct round *r)
{
	char ref[300], spec[512];

	if (r->s.remote[0]) {
		const char *argv[] = { "git", "-C", r->repo, "fetch", "--quiet", r->s.remote, spec, NULL };

		snprintf(spec, sizeof(spec), "+refs/heads/%s:refs/remotes/%s/%s", r->s.branch, r->s.remote,
			 r->s.branch);
		if (proc_run(argv, NULL, NULL) != 0)
			return set_err("git fetch %s %s failed in %s (see above)", r->s.remote, r->s.branch, r->repo);
		snprintf(ref, sizeof(ref), "refs/remotes/%s/%s", r->s.remote, r->s.branch);
	} else {
		snprintf(ref, sizeof(ref), "%s", r->s.branch);
	}
	if (commit_resolve(r->repo, ref, r->head, sizeof(r->head)) < 0)
		return set_err("%s: source.branch: %s", r->s.path, last_err());
	commit_subject(r->repo, r->head, r->head_subject, sizeof(r->head_subject));
	git_line(r->repo, r->head_date, sizeof(r->head_date), "show", "-s", "--format=%cI", r->head, NULL);
	return 0;
}

static int resolve_baseline(struct round *r)
{
	int rc = 1;

	if (r->s.policy == BASELINE_LAST_ACCEPTED) {
		rc = round_last_accepted(r->db, r->s.name, r->base, sizeof(r->base));
		if (rc < 0)
			return -1;
	}
	if (rc == 1 && commit_resolve(r->repo, r->s.baseline_rev, r->base, sizeof(r->base)) < 0)
		return set_err("%s: baseline.rev: %s", r->s.path, last_err());
	return 0;
}

static int build_stage(struct round *r)
{
	struct kernel_build k;
	double t0 = now_s();

	commit_variant(r->repo, r->head, r->head_var, sizeof(r->head_var));
	commit_variant(r->repo, r->base, r->base_var, sizeof(r->base_var));
	if (commit_build(r->repo, r->base, &r->m) < 0 || commit_build(r->repo, r->head, &r->m) < 0)
		return -1;
	if (kernel_load(r->head_var, r->m.kconfigs[0], &k) < 0)
		return -1;
	snprintf(r->row.build_key, sizeof(r->row.build_key), "%s", k.build_key);
	kernel_free(&k);
	stage(r, "build", "%s (head) and %s (baseline) built in %.0f s; head build %s", r->head_var,
	      r->base_var, now_s() - t0, r->row.build_key);
	return 0;
}

/* 0: go on; 1: nothing to do (already measured); -1 error. */
static int measured_stage(struct round *r)
{
	struct round_row old;
	int rc = round_get(r->db, r->s.name, r->head, &old);

	if (rc < 0)
		return -1;
	if (rc == 0 && !strcmp(old.status, "done") && !r->force) {
		stage(r, "measured", "%.12s was measured in the round of %s (verdict %s): nothing to do "
		      "(--force measures it again)", r->head, old.started, old.verdict);
		return 1;
	}
	if (rc == 0 && strcmp(old.status, "done"))
		stage(r, "measured", "%.12s: completing the round started %s (%s)", r->head, old.started,
		      old.status);
	return 0;
}

/* After the build: the same content measured under another commit id is not measured again. */
static int same_content_stage(struct round *r)
{
	struct round_row old;
	int rc = round_by_key(r->db, r->s.name, r->row.build_key, &old);

	if (rc < 0)
		return -1;
	if (rc == 0 && strcmp(old.commit, r->head) && !r->force) {
		stage(r, "measured", "%.12s builds the same kernel (build %s) as %.12s, measured in the round "
		      "of %s: nothing to do", r->head, r->row.build_key, old.commit, old.started);
		return 1;
	}
	return 0;
}

static int run_stage(struct round *r)
{
	char vars[140];
	struct commit_run cr = { .matrix_path = r->m.path, .name = r->row.matrix, .variants = vars,
				 .schedule = r->s.name, .resume = !r->force, .jobs = r->s.jobs,
				 .hosts = r->s.hosts };
	double t0 = now_s();

	if (strcmp(r->head, r->base))
		snprintf(vars, sizeof(vars), "%s,%s", r->base_var, r->head_var);
	else
		snprintf(vars, sizeof(vars), "%s", r->head_var);
	if (commit_run(&cr) < 0)
		return -1;
	stage(r, "run", "matrix %s: %s against %s in %.0f s", r->row.matrix, r->head_var,
	      strcmp(r->head, r->base) ? r->base_var : "nothing (head is the baseline)", now_s() - t0);
	return 0;
}

/* The gate's JSON (gate.json in the round's directory) into the report. */
static void attach_json(struct round *r, const char *key, const char *file)
{
	json_object *o = json_object_from_file(file);

	if (o)
		json_object_object_add(r->out, key, o);
}

/* The schedule's gate settings as gate options into args[7], NULL-terminated. */
static void gate_args(const struct round *r, const char *args[7])
{
	const char *a[7] = { "--threshold", r->s.threshold, "--alpha", r->s.alpha,
			     r->s.stat[0] ? "--stat" : NULL, r->s.stat, NULL };

	memcpy(args, a, sizeof(a));
}

/* Exit code of the gate: 0 PASS, 1 SLOWDOWN, 2 refused, 3 INCONCLUSIVE; -1 not run. */
static int gate_stage(struct round *r, const char **verdict)
{
	char json[PATH_MAX];
	const char *extra[7];
	int rc;

	gate_args(r, extra);
	if (!strcmp(r->head, r->base)) {
		*verdict = "BASELINE";
		stage(r, "gate", "head is the baseline: nothing to gate");
		return 0;
	}
	if (path_fmt(json, sizeof(json), "%s/gate.json", r->dir) < 0)
		return -1;
	unlink(json);	/* never attach an earlier round's verdict */
	rc = commit_gate(r->base_var, r->head_var, r->row.matrix, extra, json, NULL);
	*verdict = gate_verdict(rc);
	attach_json(r, "gate", json);
	stage(r, "gate", "%s against %s: %s (exit %d; %s)", r->head_var, r->base_var, *verdict, rc, json);
	return rc < 0 ? -1 : rc;
}

/*
 * A sequential round (gate.max_runs): looks of gate.batch runs a side of
 * every undecided cell until the sequential gate decides each, gate.max_runs
 * or gate.budget (seqrun.h, the engine of rcuwb compare).  The looks are in
 * the round's directory, so a killed round is completed from its runs.
 * The gate's exit code, -1 if the runs or the gate could not run.
 */
static int seq_stage(struct round *r, const char **verdict)
{
	struct seqrun *sq = calloc(1, sizeof(*sq));
	const char *args[7];
	double t0 = now_s();
	int rc;

	if (!sq)
		return set_err("out of memory");
	gate_args(r, args);
	*sq = (struct seqrun){ .matrix_path = r->m.path, .name = r->row.matrix, .base_var = r->base_var,
			       .cand_var = r->head_var, .schedule = r->s.name, .hosts = r->s.hosts,
			       .gate_args = args, .batch = r->s.batch, .max_runs = r->s.max_runs,
			       .budget_s = r->s.budget_s, .jobs = r->s.jobs };
	/* the cells as rcuwb run names them for these two kernels */
	snprintf(sq->vars, sizeof(sq->vars), "%s,%s", r->base_var, r->head_var);
	rc = matrix_override(&r->m, NULL, sq->vars) < 0 || kernel_fit_matrix(&r->m) < 0 ||
	     path_fmt(sq->state_path, sizeof(sq->state_path), "%s/looks", r->dir) < 0 ||
	     path_fmt(sq->json_path, sizeof(sq->json_path), "%s/gate.json", r->dir) < 0 ||
	     seqrun_cells(sq, &r->m, NULL) < 0 || seqrun_load(sq) < 0 ? -1 : seqrun_looks(sq);
	if (rc >= 0) {
		*verdict = gate_verdict(rc);
		attach_json(r, "gate", sq->json_path);
		stage(r, "run", "matrix %s: %s against %s in %d look(s) of %d runs a side, %.0f s",
		      r->row.matrix, r->head_var, r->base_var, sq->nlooks, r->s.batch, now_s() - t0);
		stage(r, "gate", "%s against %s: %s (exit %d; sequential, at most %d runs a side; %s)",
		      r->head_var, r->base_var, *verdict, rc, r->s.max_runs, sq->json_path);
	}
	seqrun_free(sq);
	free(sq);
	return rc;
}

/* Change points of the schedule's history; 1 when a new one was found, -1 error. */
static int history_stage(struct round *r)
{
	char script[PATH_MAX], json[PATH_MAX], out[PATH_MAX];
	const char *argv[40] = { "Rscript", script, "--db", opt_db, "update", "--schedule", r->s.name,
				 "--repo", r->repo, "--head", r->head, "--json", json, "--out", out };
	struct history_args b;
	int rc, n = 15;

	if (!rscript_path("history.R", script, sizeof(script)))
		return -1;
	if (path_fmt(json, sizeof(json), "%s/history.json", r->dir) < 0 ||
	    path_fmt(out, sizeof(out), "%s/schedules/%s/dashboard", cache_dir(), r->s.name) < 0)
		return -1;
	n = schedule_history_args(&r->s, &b, argv, n);
	argv[n] = NULL;
	unlink(json);
	rc = proc_run(argv, NULL, NULL);
	if (rc != 0 && rc != 1)
		return rc < 0 ? -1 : set_err("stats/exec/rcuwb-history.R failed (exit %d; see above)", rc);
	attach_json(r, "history", json);
	stage(r, "history", "%s; dashboard %s/index.html", rc ? "NEW change points (see above)" : "no new change point",
	      out);
	return rc;
}

static void notify(struct round *r, const char *text)
{
	int rc;

	if (!r->s.notify[0])
		return;
	rc = proc_run((const char *const *)r->s.notify, text, NULL);
	if (rc == 0)
		stage(r, "notify", "%s: done", r->s.notify[0]);
	else
		stage(r, "notify", "%s failed (exit %d): the round's result stands", r->s.notify[0], rc);
}

static int open_round(struct round *r, const char *name)
{
	char mpath[PATH_MAX];

	if (schedule_load(name, &r->s) < 0)
		return -1;
	snprintf(mpath, sizeof(mpath), "%s", r->s.matrix);
	if (matrix_load(mpath, &r->m) < 0)
		return -1;
	if (r->force && r->s.max_runs)
		return set_err("%s: --force: a sequential round (gate.max_runs) goes on from the runs its "
			       "commit has; to measure a commit anew, give the schedule another name",
			       r->s.path);
	return schedule_repo(&r->s, r->repo, sizeof(r->repo));
}

/* Stages after the lock; the exit code, or -1 on a hard failure reported as a stage. */
static int round_stages(struct round *r)
{
	const char *verdict = "FAILED";
	int rc, gate = -1, hist = 0;
	bool seq;

	if (resolve_head(r) < 0)
		return stage_failed(r, "head");
	stage(r, "head", "%s %.12s %s (%s)", r->s.branch, r->head, r->head_subject, r->head_date);
	rc = measured_stage(r);
	if (rc)
		return rc < 0 ? stage_failed(r, "measured") : 0;
	if (resolve_baseline(r) < 0)
		return stage_failed(r, "baseline");
	stage(r, "baseline", "%.12s (%s)", r->base, r->s.policy == BASELINE_FIXED ? "fixed" : "last accepted");
	if (build_stage(r) < 0)
		return stage_failed(r, "build");
	rc = same_content_stage(r);
	if (rc)
		return rc < 0 ? stage_failed(r, "measured") : 0;
	snprintf(r->row.matrix, sizeof(r->row.matrix), "%s@%.12s", r->s.name, r->head);
	if (path_fmt(r->dir, sizeof(r->dir), "%s/schedules/%s/rounds/%.12s", cache_dir(), r->s.name,
		     r->head) < 0 || mkdir_p(r->dir) < 0)
		return stage_failed(r, "round");
	snprintf(r->row.commit, sizeof(r->row.commit), "%s", r->head);
	snprintf(r->row.baseline, sizeof(r->row.baseline), "%s", r->base);
	if (round_begin(r->db, r->s.name, &r->row, r->head_date) < 0)
		return stage_failed(r, "round");
	/* a sequential round runs and gates in looks; the head alone (the baseline) runs once */
	seq = r->s.max_runs && strcmp(r->head, r->base);
	gate = seq ? seq_stage(r, &verdict) : run_stage(r);
	if (gate < 0) {
		stage_failed(r, "run");
		round_end(r->db, r->s.name, r->head, "failed", "FAILED", 2);
		return -1;
	}
	if (!seq)
		gate = gate_stage(r, &verdict);
	hist = history_stage(r);
	if (hist < 0)
		stage_failed(r, "history");
	/* any other gate exit (64 bad input, 70 internal, 127 no Rscript, a signal) is a hard failure */
	rc = (gate != 0 && gate != 1 && gate != 3) || hist < 0 ? 2 : gate == 1 || hist == 1 ? 1 : gate == 3 ? 3 : 0;
	/* a round that failed stays to be completed (re-gated) by the next one */
	if (round_end(r->db, r->s.name, r->head, rc == 2 ? "failed" : "done", verdict, rc) < 0)
		return stage_failed(r, "round");
	json_object_object_add(r->out, "verdict", json_object_new_string(verdict));
	return rc;
}

static void report(struct round *r, int rc)
{
	char path[PATH_MAX];
	const char *text;

	json_object_object_add(r->out, "schedule", json_object_new_string(r->s.name));
	json_object_object_add(r->out, "head", json_object_new_string(r->head));
	json_object_object_add(r->out, "head_subject", json_object_new_string(r->head_subject));
	json_object_object_add(r->out, "baseline", json_object_new_string(r->base));
	json_object_object_add(r->out, "matrix", json_object_new_string(r->row.matrix));
	json_object_object_add(r->out, "exit_code", json_object_new_int(rc));
	text = json_object_to_json_string_ext(r->out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
	if (r->dir[0] && path_fmt(path, sizeof(path), "%s/round.json", r->dir) == 0)
		write_file(path, text, strlen(text));
	if (json_output)
		printf("%s\n", text);
	/* a round that measured, or any failure; not "already measured" nor "another round runs" */
	if (rc || r->row.matrix[0])
		notify(r, text);
}

int do_nightly(int argc, char **argv)
{
	struct round r = { 0 };
	const char *name = NULL;
	int lock = -1, rc;

	/* a schedule that cannot run is a hard failure (2), never "something new" (1) */
	rc = parse_opts(argc, argv, &r, &name);
	if (rc) {
		if (rc < 0)
			report_err();
		return rc > 0 ? 0 : 2;
	}
	if (open_round(&r, name) < 0) {
		report_err();
		schedule_free(&r.s);
		return 2;
	}
	r.out = json_object_new_object();
	r.stages = json_object_new_array();
	json_object_object_add(r.out, "stages", r.stages);
	rc = take_lock(&r, &lock);
	if (rc < 0) {
		report_err();
		rc = 2;
	} else if (rc == 1) {
		report(&r, 0);	/* another round runs: leave, nothing new */
		rc = 0;
	} else {
		if (db_open(opt_db, &r.db) < 0)
			rc = stage_failed(&r, "database");
		else
			rc = round_stages(&r);
		if (rc < 0 || r.hard)
			rc = 2;
		report(&r, rc);
	}
	if (r.db)
		db_close(r.db);
	if (lock >= 0)
		close(lock);
	json_object_put(r.out);
	schedule_free(&r.s);
	return rc;
}
