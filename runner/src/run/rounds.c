/*
 * rounds.c: the rounds table (schema in db.c).
 *
 * rcuwb nightly writes a row when a round starts (status running) and
 * updates it when the round ends (done, with the gate's verdict, or
 * failed).  A row still running when the next round takes the lock belongs
 * to a round that was killed: the next round completes it.
 */
#define _GNU_SOURCE
#include "rounds.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "db.h"

#define ROUND_COLS "id, matrix, commit_id, build_key, baseline_commit, started_at, ended_at, status," \
	" verdict, exit_code"

static void read_row(sqlite3_stmt *st, struct round_row *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	db_col_text(st, 1, r->matrix, sizeof(r->matrix));
	db_col_text(st, 2, r->commit, sizeof(r->commit));
	db_col_text(st, 3, r->build_key, sizeof(r->build_key));
	db_col_text(st, 4, r->baseline, sizeof(r->baseline));
	db_col_text(st, 5, r->started, sizeof(r->started));
	db_col_text(st, 6, r->ended, sizeof(r->ended));
	db_col_text(st, 7, r->status, sizeof(r->status));
	db_col_text(st, 8, r->verdict, sizeof(r->verdict));
	r->exit_code = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 9);
}

/* One row of sql (text parameters a and, unless NULL, b); 0 found, 1 none, -1 error. */
static int one_row(sqlite3 *db, const char *sql, const char *a, const char *b, struct round_row *r)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	if (b)
		sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_row(st, r);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : set_err("sqlite: %s", sqlite3_errmsg(db));
}

int round_get(sqlite3 *db, const char *schedule, const char *commit, struct round_row *r)
{
	return one_row(db, "SELECT " ROUND_COLS " FROM rounds WHERE schedule = ? AND commit_id = ?",
		       schedule, commit, r);
}

int round_by_key(sqlite3 *db, const char *schedule, const char *key, struct round_row *r)
{
	return one_row(db, "SELECT " ROUND_COLS " FROM rounds WHERE schedule = ? AND build_key = ?"
		       " AND status = 'done' ORDER BY id LIMIT 1", schedule, key, r);
}

int round_last_accepted(sqlite3 *db, const char *schedule, char *commit, size_t cap)
{
	struct round_row r;
	int rc = one_row(db, "SELECT " ROUND_COLS " FROM rounds WHERE schedule = ? AND status = 'done'"
			 " AND verdict IN ('PASS', 'BASELINE') ORDER BY id DESC LIMIT 1", schedule, NULL, &r);

	if (rc == 0)
		snprintf(commit, cap, "%s", r.commit);
	return rc;
}

static int exec_bound(sqlite3 *db, const char *sql, const char *const *params, int n)
{
	sqlite3_stmt *st;
	int i, rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	for (i = 0; i < n; i++)
		if (params[i] && *params[i])
			sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, i + 1);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : set_err("sqlite: rounds: %s", sqlite3_errmsg(db));
}

int round_begin(sqlite3 *db, const char *schedule, const struct round_row *r, const char *commit_date)
{
	char now[32];
	const char *p[7];

	iso_time(now_s(), now);
	p[0] = schedule, p[1] = r->matrix, p[2] = r->commit, p[3] = commit_date;
	p[4] = r->build_key, p[5] = r->baseline, p[6] = now;
	return exec_bound(db, "INSERT INTO rounds (schedule, matrix, commit_id, commit_date, build_key,"
			  " baseline_commit, started_at, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running')"
			  " ON CONFLICT (schedule, commit_id) DO UPDATE SET matrix = ?2, build_key = ?5,"
			  " baseline_commit = ?6, status = 'running', ended_at = NULL", p, 7);
}

int round_end(sqlite3 *db, const char *schedule, const char *commit, const char *status,
	      const char *verdict, int exit_code)
{
	char now[32], code[16];
	const char *p[6];

	iso_time(now_s(), now);
	snprintf(code, sizeof(code), "%d", exit_code);
	p[0] = status, p[1] = verdict, p[2] = code, p[3] = now, p[4] = schedule, p[5] = commit;
	return exec_bound(db, "UPDATE rounds SET status = ?1, verdict = ?2, exit_code = CAST(?3 AS INTEGER),"
			  " ended_at = ?4 WHERE schedule = ?5 AND commit_id = ?6", p, 6);
}
