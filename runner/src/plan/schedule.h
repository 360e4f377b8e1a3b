/* schedule.h: schedules (perf-configs/schedules/NAME.yaml): what a nightly round follows, runs and tells. */
#ifndef RCUWB_SCHEDULE_H
#define RCUWB_SCHEDULE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define SCHEDULE_MAX_ARGS 32

enum baseline_policy {
	BASELINE_LAST_ACCEPTED,		/* the last head whose round the gate passed */
	BASELINE_FIXED,			/* always baseline.rev */
};

struct schedule {
	char path[PATH_MAX];
	char name[48];
	char repo[PATH_MAX];		/* git: a path, a URL, or a name in $RCUWB_CACHE/git */
	char branch[128];		/* the branch (any revision) to follow */
	char remote[128];		/* fetched before each round, "" = none */
	char matrix[PATH_MAX];		/* its cells; its variants are replaced by baseline and head */
	char hosts[PATH_MAX];		/* hosts file (rcuwb run --hosts), "" = this machine */
	int jobs;			/* guests at once (rcuwb run -J), default 1 */
	enum baseline_policy policy;
	char baseline_rev[128];		/* fixed: the baseline; last-accepted: the first one */
	char threshold[16], alpha[16], stat[32];	/* gate settings, as the gate takes them */
	int max_runs;			/* > 0: the round runs looks of batch runs a side until the */
	int batch, budget_s;		/* sequential gate decides (seqrun.h); 0: the matrix's reps */
	int cp_min_commits, cp_permutations, cp_seed;
	char cp_alpha[16];
	char cp_min_change[16];		/* smallest change reported; default: threshold */
	char *notify[SCHEDULE_MAX_ARGS + 1];	/* argv, NULL-terminated; notify[0] NULL = none */
	int line_notify;
};

/*
 * Load a schedule: a path, or NAME for perf-configs/schedules/NAME.yaml.
 * Errors name the file, the line and the key.
 */
int schedule_load(const char *name_or_path, struct schedule *s);
void schedule_free(struct schedule *s);
/* The text of the numbers schedule_history_args() puts in an argv. */
struct history_args {
	char min_commits[16], permutations[16], seed[16];
};
/*
 * The schedule's change-point settings as rcuwb-history.R options
 * (--min-commits, --alpha, --permutations, --seed, --min-change and, when
 * the gate names them, --stat), appended to argv at n; returns the new n
 * (at most 12 more entries).
 */
int schedule_history_args(const struct schedule *s, struct history_args *b, const char **argv, int n);
/*
 * The local git directory of the schedule's source: source.git as a path,
 * or a name in $RCUWB_CACHE/git (as build/kernel.sh reads it).  A URL is
 * refused: a schedule follows a local clone and fetches its remote.
 */
int schedule_repo(const struct schedule *s, char *out, size_t cap);

#endif
