/*
 * commits.c: measuring git commits.
 *
 * rcuwb nightly and rcuwb bisect measure commits of a git branch: each
 * commit becomes a kernel variant (a variant file "source git REPO COMMIT"
 * that build/kernel.sh builds), runs as a variant of a matrix (rcuwb run,
 * this program, as a child) and is compared by the gate (stats/exec/rcuwb-gate.R).
 */
#define _GNU_SOURCE
#include "commits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli.h"
#include "db.h"
#include "kernel.h"
#include "proc.h"

int git_line(const char *repo, char *out, size_t cap, ...)
{
	const char *argv[12] = { "git", "-C", repo };
	int n = 3;
	va_list ap;

	va_start(ap, cap);
	while (n < 11 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return proc_line(argv, out, cap);
}

int commit_resolve(const char *repo, const char *rev, char *out, size_t cap)
{
	char spec[300];

	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	if (git_line(repo, out, cap, "rev-parse", "-q", "--verify", spec, NULL) < 0)
		return set_err("%s has no commit, tag or branch '%s'", repo, rev);
	return 0;
}

static void repo_label(const char *repo, char *out, size_t cap)
{
	size_t len = strlen(repo);
	const char *b;
	size_t n;

	while (len > 1 && repo[len - 1] == '/')	/* "dir/" is "dir" */
		len--;
	b = memrchr(repo, '/', len) ? (const char *)memrchr(repo, '/', len) + 1 : repo;
	n = len - (size_t)(b - repo);

	if (n > 4 && !strcmp(b + n - 4, ".git"))
		n -= 4;
	snprintf(out, cap, "%.*s", (int)(n < 40 ? n : 40), b);
}

void commit_subject(const char *repo, const char *commit, char *out, size_t cap)
{
	if (git_line(repo, out, cap, "show", "-s", "--format=%s", commit, NULL) < 0)
		out[0] = '\0';
}

void commit_variant(const char *repo, const char *commit, char *var, size_t cap)
{
	char label[48];

	repo_label(repo, label, sizeof(label));
	snprintf(var, cap, "%s.%.12s", label, commit);
}

static int write_variant(const char *repo, const char *var, const char *commit)
{
	char path[PATH_MAX], text[PATH_MAX + 128];

	if (path_fmt(path, sizeof(path), "%s/nightly/variants/%s", cache_dir(), var) < 0)
		return -1;
	snprintf(text, sizeof(text), "# rcuwb: commit %s of %s\nsource git %s %s\n", commit, repo, repo, commit);
	return write_file(path, text, strlen(text));
}

/* The work tree's lock, held while a commit builds; -1 on error. */
static int lock_work(const char *label)
{
	char path[PATH_MAX];
	int fd;

	if (path_fmt(path, sizeof(path), "%s/nightly/%s.lock", cache_dir(), label) < 0)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		set_err("cannot lock %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int commit_build(const char *repo, const char *commit, const struct matrix *m)
{
	char work[64], label[48], var[64], dir[PATH_MAX], path[PATH_MAX];
	int i, lock, ret = 0;

	if (path_fmt(dir, sizeof(dir), "%s/nightly/variants", cache_dir()) < 0 || mkdir_p(dir) < 0)
		return -1;
	/* build/kernel.sh reads $RCUWB_CHANGES/variants/VARIANT (these variants have no patches) */
	dir[strlen(dir) - strlen("/variants")] = '\0';
	setenv("RCUWB_CHANGES", dir, 1);
	repo_label(repo, label, sizeof(label));
	snprintf(work, sizeof(work), "%s.work", label);
	commit_variant(repo, commit, var, sizeof(var));
	lock = lock_work(label);
	if (lock < 0)
		return -1;
	for (i = 0; i < m->nkconfigs && !ret; i++) {
		ret = path_fmt(path, sizeof(path), "%s/kernels/%s/%s/build.json", cache_dir(), var, m->kconfigs[i]);
		if (ret || access(path, R_OK) == 0)
			continue;
		if (write_variant(repo, work, commit) < 0 || kernel_make(work, m->kconfigs[i]) < 0 ||
		    write_variant(repo, var, commit) < 0 || kernel_make(var, m->kconfigs[i]) < 0)
			ret = -1;
	}
	close(lock);
	return ret;
}

int commit_run(const struct commit_run *cr)
{
	const char *argv[32];
	char reps[16], jobs[16];
	int n = 0, rc;

	argv[n++] = proc_self();
	argv[n++] = "-d";
	argv[n++] = opt_db;
	argv[n++] = "-c";
	argv[n++] = opt_uri;
	if (quiet || json_output)
		argv[n++] = "-q";
	argv[n++] = "run";
	if (cr->resume)
		argv[n++] = "--resume";
	snprintf(jobs, sizeof(jobs), "%d", cr->jobs > 0 ? cr->jobs : 1);
	argv[n++] = "-J";
	argv[n++] = jobs;
	argv[n++] = "--name";
	argv[n++] = cr->name;
	argv[n++] = "--variants";
	argv[n++] = cr->variants;
	if (cr->schedule) {
		argv[n++] = "--schedule";
		argv[n++] = cr->schedule;
	}
	if (cr->hosts && cr->hosts[0]) {
		argv[n++] = "--hosts";
		argv[n++] = cr->hosts;
	}
	if (cr->cell) {
		argv[n++] = "--cell";
		argv[n++] = cr->cell;
	}
	if (cr->reps > 0) {
		snprintf(reps, sizeof(reps), "%d", cr->reps);
		argv[n++] = "--reps";
		argv[n++] = reps;
	}
	argv[n++] = cr->matrix_path;
	argv[n] = NULL;
	rc = proc_run(argv, NULL, NULL);
	return rc == 0 ? 0 : rc < 0 ? -1 : set_err("rcuwb run %s failed (exit %d; see above)", cr->name, rc);
}

int commit_look_cutoff(const char *name, const char *vars, int reps, long long *out)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int rc;

	if (db_open(opt_db, &db) < 0)
		return -1;
	rc = sqlite3_prepare_v2(db, "SELECT coalesce(MAX(id), 0) FROM runs WHERE matrix = ?1 AND rep <= ?2"
				" AND instr(',' || ?3 || ',', ',' || variant || ',') > 0", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 2, reps);
		sqlite3_bind_text(st, 3, vars, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : SQLITE_ERROR;
		*out = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK)
		set_err("%s: %s", opt_db, sqlite3_errmsg(db));
	db_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

int commit_gate(const char *baseline, const char *candidate, const char *name, const char *const *extra,
		const char *json, struct buf *text)
{
	char script[PATH_MAX];
	const char *argv[40] = { "Rscript", script, "--db", opt_db, "--baseline", baseline, "--candidate",
				 candidate, "--matrix", name };
	int n = 10;

	if (!rscript_path("gate.R", script, sizeof(script)))
		return -1;
	while (extra && *extra && n < 34)
		argv[n++] = *extra++;
	if (json) {
		argv[n++] = "--json";
		argv[n++] = json;
	}
	if (!text && (quiet || json_output))
		argv[n++] = "--quiet";
	argv[n] = NULL;
	return proc_run(argv, NULL, text);
}

int commit_gate_seq(const char *baseline, const char *candidate, const char *name, const struct gate_looks *lk,
		    const char *json, struct buf *text)
{
	char looks[COMMIT_MAX_LOOKS * 24] = "", maxr[16];
	const char *argv[32];
	size_t len = 0;
	int i, n = 0;

	for (i = 0; lk->extra && lk->extra[i] && n < 24; i++)
		argv[n++] = lk->extra[i];
	for (i = 0; i + 1 < lk->nlooks && len < sizeof(looks); i++)	/* the earlier looks */
		len += (size_t)snprintf(looks + len, sizeof(looks) - len, "%s%lld", i ? "," : "", lk->cutoffs[i]);
	snprintf(maxr, sizeof(maxr), "%d", lk->max_runs);
	argv[n++] = "--looks";
	argv[n++] = looks;
	argv[n++] = "--max-runs";
	argv[n++] = maxr;
	if (lk->final)
		argv[n++] = "--final";
	argv[n] = NULL;
	return commit_gate(baseline, candidate, name, argv, json, text);
}

const char *gate_verdict(int rc)
{
	return rc == 0 ? "PASS" : rc == 1 ? "SLOWDOWN" : rc == 3 ? "INCONCLUSIVE" : "FAILED";
}
