/* rounds.h: the rounds table: one row per nightly round of a schedule, what it measured and its verdict. */
#ifndef RCUWB_ROUNDS_H
#define RCUWB_ROUNDS_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct round_row {
	int64_t id;
	char matrix[64];
	char commit[48], build_key[24], baseline[48];
	char started[32], ended[32];
	char status[16];		/* running | done | failed */
	char verdict[16];		/* PASS | SLOWDOWN | INCONCLUSIVE | FAILED | BASELINE | "" */
	int exit_code;
};

/* The round of (schedule, commit); 0 found, 1 none, -1 error. */
int round_get(sqlite3 *db, const char *schedule, const char *commit, struct round_row *r);
/* A finished round of the schedule with build key `key`; 0 found, 1 none, -1 error. */
int round_by_key(sqlite3 *db, const char *schedule, const char *key, struct round_row *r);
/* The newest head the gate passed (or the first round's own baseline); 0 found, 1 none, -1 error. */
int round_last_accepted(sqlite3 *db, const char *schedule, char *commit, size_t cap);
/* Start (or restart) the round of (schedule, commit): status running. */
int round_begin(sqlite3 *db, const char *schedule, const struct round_row *r, const char *commit_date);
/* End it: status, verdict and exit code. */
int round_end(sqlite3 *db, const char *schedule, const char *commit, const char *status,
	      const char *verdict, int exit_code);

#endif
