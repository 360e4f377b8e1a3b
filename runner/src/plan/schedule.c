/*
 * schedule.c: schedules.
 *
 * A schedule is a YAML file (perf-configs/schedules/README.md documents it):
 * the git source to follow, the matrix to run on each new commit, the
 * baseline policy, the gate's and the change-point analysis's settings and
 * an optional notify command.  Every error names the file, line and key.
 */
#define _GNU_SOURCE
#include "schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "kernel.h"
#include "proc.h"
#include "yamlcfg.h"

static bool plain_name(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(s);
}

/* A number the R side reads (threshold, alpha): digits and one '.', in (0, 1). */
static int get_fraction(struct ycfg *c, yaml_node_t *n, const char *key, char *out, size_t cap)
{
	char *end;
	double v;

	if (ycfg_str(c, n, key, out, cap) < 0)
		return -1;
	v = strtod(out, &end);
	if (end == out || *end || !(v > 0 && v < 1))
		return ycfg_err(c, n, key, "give a fraction between 0 and 1 (0.05 is 5%)");
	return 0;
}

static int parse_source(struct ycfg *c, yaml_node_t *n, struct schedule *s)
{
	yaml_node_t *k, *v;

	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, "source", "give {git: REPO, branch: BRANCH[, remote: REMOTE]}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r;

		if (!strcmp(ks, "git"))
			r = ycfg_str(c, v, "source.git", s->repo, sizeof(s->repo));
		else if (!strcmp(ks, "branch"))
			r = ycfg_str(c, v, "source.branch", s->branch, sizeof(s->branch));
		else if (!strcmp(ks, "remote"))
			r = ycfg_str(c, v, "source.remote", s->remote, sizeof(s->remote));
		else if (!strcmp(ks, "debian"))
			return ycfg_err(c, k, "source.debian", "a schedule follows a git branch; Debian package "
					"versions are measured as variants (kernel-changes/README.md)");
		else
			return ycfg_err(c, k, ks, "unknown key in source (git, branch, remote)");
		if (r < 0)
			return -1;
	}
	if (!s->repo[0])
		return ycfg_err(c, n, "source.git", "missing: the git repository to follow");
	if (!s->branch[0])
		return ycfg_err(c, n, "source.branch", "missing: the branch to follow");
	return 0;
}

static int parse_baseline(struct ycfg *c, yaml_node_t *n, struct schedule *s)
{
	yaml_node_t *k, *v;
	char policy[32] = "last-accepted";

	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, "baseline", "give {policy: last-accepted|fixed, rev: REV}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r;

		if (!strcmp(ks, "policy"))
			r = ycfg_str(c, v, "baseline.policy", policy, sizeof(policy));
		else if (!strcmp(ks, "rev"))
			r = ycfg_str(c, v, "baseline.rev", s->baseline_rev, sizeof(s->baseline_rev));
		else
			return ycfg_err(c, k, ks, "unknown key in baseline (policy, rev)");
		if (r < 0)
			return -1;
	}
	if (!strcmp(policy, "last-accepted"))
		s->policy = BASELINE_LAST_ACCEPTED;
	else if (!strcmp(policy, "fixed"))
		s->policy = BASELINE_FIXED;
	else
		return ycfg_err(c, n, "baseline.policy", "give last-accepted or fixed");
	if (!s->baseline_rev[0])
		return ycfg_err(c, n, "baseline.rev", "missing: the baseline commit (fixed) or the first "
				"baseline (last-accepted): a commit, tag or branch");
	return 0;
}

/* gate.budget: "90s", "20m", "2h"; one minute to a week. */
static int get_budget(struct ycfg *c, yaml_node_t *n, int *out)
{
	char v[32];
	long x;

	if (ycfg_str(c, n, "gate.budget", v, sizeof(v)) < 0)
		return -1;
	if (duration_s(v, &x) < 0 || x < 60 || x > 7 * 86400)
		return ycfg_err(c, n, "gate.budget", "give a time from 1m to a week, such as 90s, 20m or 2h");
	*out = (int)x;
	return 0;
}

static int parse_gate(struct ycfg *c, yaml_node_t *n, struct schedule *s)
{
	yaml_node_t *k, *v;

	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, "gate", "give {threshold: 0.05, alpha: 0.05, stat: mean,p90}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r;

		if (!strcmp(ks, "threshold"))
			r = get_fraction(c, v, "gate.threshold", s->threshold, sizeof(s->threshold));
		else if (!strcmp(ks, "alpha"))
			r = get_fraction(c, v, "gate.alpha", s->alpha, sizeof(s->alpha));
		else if (!strcmp(ks, "stat"))
			r = ycfg_str(c, v, "gate.stat", s->stat, sizeof(s->stat));
		else if (!strcmp(ks, "max_runs"))
			r = ycfg_int(c, v, "gate.max_runs", 2, 1000, &s->max_runs);
		else if (!strcmp(ks, "batch"))
			r = ycfg_int(c, v, "gate.batch", 1, 100, &s->batch);
		else if (!strcmp(ks, "budget"))
			r = get_budget(c, v, &s->budget_s);
		else
			return ycfg_err(c, k, ks, "unknown key in gate (threshold, alpha, stat, max_runs, batch, "
					"budget)");
		if (r < 0)
			return -1;
	}
	if (s->max_runs && s->batch > s->max_runs)
		return ycfg_err(c, n, "gate.batch", "more than gate.max_runs: give a smaller batch");
	if (s->max_runs && (s->max_runs + s->batch - 1) / s->batch > 19)
		return ycfg_err(c, n, "gate.max_runs", "more than 19 looks of gate.batch runs: give a larger batch");
	return 0;
}

static int parse_history(struct ycfg *c, yaml_node_t *n, struct schedule *s)
{
	yaml_node_t *k, *v;

	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, "history", "give {min_commits: 2, alpha: 0.05, permutations: 199, seed: 1}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r;

		if (!strcmp(ks, "min_commits"))
			r = ycfg_int(c, v, "history.min_commits", 1, 100, &s->cp_min_commits);
		else if (!strcmp(ks, "alpha"))
			r = get_fraction(c, v, "history.alpha", s->cp_alpha, sizeof(s->cp_alpha));
		else if (!strcmp(ks, "permutations"))
			r = ycfg_int(c, v, "history.permutations", 19, 100000, &s->cp_permutations);
		else if (!strcmp(ks, "seed"))
			r = ycfg_int(c, v, "history.seed", 0, 1 << 30, &s->cp_seed);
		else if (!strcmp(ks, "min_change"))
			r = get_fraction(c, v, "history.min_change", s->cp_min_change, sizeof(s->cp_min_change));
		else
			return ycfg_err(c, k, ks, "unknown key in history (min_commits, alpha, permutations, seed, "
					"min_change)");
		if (r < 0)
			return -1;
	}
	return 0;
}

static int parse_notify(struct ycfg *c, yaml_node_t *n, struct schedule *s)
{
	yaml_node_t *items[SCHEDULE_MAX_ARGS];
	int i, count;

	if (n->type != YAML_SEQUENCE_NODE)
		return ycfg_err(c, n, "notify", "give the command as a list: [PROGRAM, ARG, ...] (no shell)");
	if (ycfg_seq(c, n, "notify", SCHEDULE_MAX_ARGS, items, &count) < 0)
		return -1;
	schedule_free(s);	/* a second notify: key replaces the first (found by fuzzing: it leaked) */
	for (i = 0; i < count; i++) {
		if (!ycfg_scalar(items[i]))
			return ycfg_err(c, items[i], "notify", "each argument is a string");
		s->notify[i] = strdup(ycfg_scalar(items[i]));
		if (!s->notify[i])
			return set_err("out of memory");
	}
	s->line_notify = ycfg_line(n);
	return 0;
}

/* A relative path is from the working directory, else from rcuwb's data directory; -1 if neither. */
static int find_file(char *path, size_t cap)
{
	char alt[PATH_MAX];
	const char *dir;

	if (access(path, R_OK) && path[0] != '/' && (dir = data_dir()) &&
	    path_fmt(alt, sizeof(alt), "%s/%s", dir, path) == 0 && access(alt, R_OK) == 0)
		snprintf(path, cap, "%s", alt);
	return access(path, R_OK) ? -1 : 0;
}

static int parse_top(struct ycfg *c, yaml_node_t *root, struct schedule *s)
{
	yaml_node_t *k, *v;

	if (!root || root->type != YAML_MAPPING_NODE)
		return set_err("%s:1: a schedule is a YAML mapping (see perf-configs/schedules/README.md)", c->path);
	YCFG_FOR_PAIRS(c, root, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r;

		if (!strcmp(ks, "name")) {
			r = ycfg_str(c, v, "name", s->name, sizeof(s->name));
			if (!r && !plain_name(s->name))
				return ycfg_err(c, v, "name", "letters, digits, '.', '_', '-'");
		} else if (!strcmp(ks, "source")) {
			r = parse_source(c, v, s);
		} else if (!strcmp(ks, "matrix")) {
			r = ycfg_str(c, v, "matrix", s->matrix, sizeof(s->matrix));
		} else if (!strcmp(ks, "hosts")) {
			r = ycfg_str(c, v, "hosts", s->hosts, sizeof(s->hosts));
		} else if (!strcmp(ks, "jobs")) {
			r = ycfg_int(c, v, "jobs", 1, 256, &s->jobs);
		} else if (!strcmp(ks, "baseline")) {
			r = parse_baseline(c, v, s);
		} else if (!strcmp(ks, "gate")) {
			r = parse_gate(c, v, s);
		} else if (!strcmp(ks, "history")) {
			r = parse_history(c, v, s);
		} else if (!strcmp(ks, "notify")) {
			r = parse_notify(c, v, s);
		} else {
			return ycfg_err(c, k, ks, "unknown key (name, source, matrix, hosts, jobs, baseline, gate, history, notify)");
		}
		if (r < 0)
			return -1;
	}
	if (!s->repo[0])
		return ycfg_err(c, root, "source", "missing: {git: REPO, branch: BRANCH}");
	if (!s->matrix[0])
		return ycfg_err(c, root, "matrix", "missing: the matrix file whose cells each round runs");
	if (!s->baseline_rev[0])
		return ycfg_err(c, root, "baseline", "missing: {policy: last-accepted|fixed, rev: REV}");
	if (find_file(s->matrix, sizeof(s->matrix)) < 0)
		return ycfg_err(c, root, "matrix", "no such file (a path from the working directory or from "
				"rcuwb's data directory)");
	if (s->hosts[0] && find_file(s->hosts, sizeof(s->hosts)) < 0)
		return ycfg_err(c, root, "hosts", "no such file (a path from the working directory or from "
				"rcuwb's data directory, e.g. perf-configs/hosts/NAME.yaml)");
	return 0;
}

/* "NAME" is perf-configs/schedules/NAME.yaml in the data directory, else a path; -1 with set_err(). */
static int resolve(const char *arg, char *out, size_t cap)
{
	const char *dir;

	if (strchr(arg, '/') || strstr(arg, ".yaml"))
		return path_fmt(out, cap, "%s", arg);
	if (!(dir = data_dir()))
		return -1;
	return path_fmt(out, cap, "%s/perf-configs/schedules/%s.yaml", dir, arg);
}

int schedule_load(const char *name_or_path, struct schedule *s)
{
	yaml_document_t doc;
	struct ycfg c = { .path = s->path, .doc = &doc };
	const char *base;
	int ret;

	memset(s, 0, sizeof(*s));
	if (resolve(name_or_path, s->path, sizeof(s->path)) < 0)
		return -1;
	base = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
	/* the file's name without .yaml: nightly.x86.yaml is "nightly.x86" */
	snprintf(s->name, sizeof(s->name), "%.*s", (int)(strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".yaml") ?
							   strlen(base) - 5 : strlen(base)), base);
	snprintf(s->threshold, sizeof(s->threshold), "0.05");
	snprintf(s->alpha, sizeof(s->alpha), "0.05");
	snprintf(s->cp_alpha, sizeof(s->cp_alpha), "0.05");
	s->jobs = 1;
	s->batch = 4;
	s->budget_s = 1800;
	s->cp_min_commits = 2;
	s->cp_permutations = 199;
	s->cp_seed = 1;
	if (ycfg_load(s->path, "schedule", &doc) < 0)
		return -1;
	ret = parse_top(&c, yaml_document_get_root_node(&doc), s);
	yaml_document_delete(&doc);
	if (!s->cp_min_change[0])
		snprintf(s->cp_min_change, sizeof(s->cp_min_change), "%s", s->threshold);
	if (!ret && !plain_name(s->name))
		ret = set_err("%s: the schedule's name '%s' (from the file's name) has other characters than letters, "
			      "digits, '.', '_', '-': give a name: key", s->path, s->name);
	if (ret < 0)
		schedule_free(s);
	return ret;
}

void schedule_free(struct schedule *s)
{
	int i;

	for (i = 0; i < SCHEDULE_MAX_ARGS && s->notify[i]; i++) {
		free(s->notify[i]);
		s->notify[i] = NULL;
	}
}

int schedule_repo(const struct schedule *s, char *out, size_t cap)
{
	const char *g = s->repo;
	char gitdir[PATH_MAX];

	if (strstr(g, "://") || (strchr(g, ':') && !strchr(g, '/')))
		return set_err("%s: source.git: '%s' is a URL; give a local clone and set source.remote to "
			       "fetch into it", s->path, g);
	if (strchr(g, '/'))
		snprintf(out, cap, "%s", g);
	else if (path_fmt(out, cap, "%s/git/%s", cache_dir(), g) < 0)
		return -1;
	{
		const char *argv[] = { "git", "-C", out, "rev-parse", "--git-dir", NULL };

		if (proc_line(argv, gitdir, sizeof(gitdir)) < 0)
			return set_err("%s: source.git: %s is not a git repository", s->path, out);
	}
	return 0;
}

int schedule_history_args(const struct schedule *s, struct history_args *b, const char **argv, int n)
{
	snprintf(b->min_commits, sizeof(b->min_commits), "%d", s->cp_min_commits);
	snprintf(b->permutations, sizeof(b->permutations), "%d", s->cp_permutations);
	snprintf(b->seed, sizeof(b->seed), "%d", s->cp_seed);
	argv[n++] = "--min-commits";
	argv[n++] = b->min_commits;
	argv[n++] = "--alpha";
	argv[n++] = s->cp_alpha;
	argv[n++] = "--permutations";
	argv[n++] = b->permutations;
	argv[n++] = "--seed";
	argv[n++] = b->seed;
	argv[n++] = "--min-change";
	argv[n++] = s->cp_min_change;
	if (s->stat[0]) {
		argv[n++] = "--stat";
		argv[n++] = s->stat;
	}
	return n;
}
