/* test_db.c: unit tests of the results database's schema on real SQLite: the run_status view. */
#define _GNU_SOURCE
#include "unit.h"

#include <unistd.h>

#include <math.h>

#include "anatomy.h"
#include "common.h"
#include "db.h"
#include "trace.h"
#include "hostload.h"

static char path[64];

static void sql(sqlite3 *db, const char *s)
{
	char *msg = NULL;

	if (sqlite3_exec(db, s, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", s, msg ? msg : "?");
}

static int int_of(sqlite3 *db, const char *s)
{
	sqlite3_stmt *st;
	int v;

	assert_int_equal(sqlite3_prepare_v2(db, s, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void unlink_db(void)
{
	char p[80];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/rcuwb-test-db.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(path);	/* db_open makes it, as on a first run */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink_db();
	return 0;
}

/* A run of cell c with the given outcome and host load (other < 0: not measured). */
static void add_run(sqlite3 *db, const char *cell, int rep, const char *outcome, double other, int pus)
{
	char s[512], o[32];

	if (other < 0)
		snprintf(o, sizeof(o), "NULL");
	else
		snprintf(o, sizeof(o), "%.17g", other);
	snprintf(s, sizeof(s), "INSERT INTO runs (matrix, cell, rep, kind, variant, outcome, host_other_cpu, host_pus)"
		 " VALUES ('m', '%s', %d, 'rcuscale', 'v', '%s', %s, %d)", cell, rep, outcome, o, pus);
	sql(db, s);
}

static const struct {
	const char *cell, *outcome;
	double other;
	int pus;
	const char *status;
} cases[] = {
	{ "quiet", "ok", HOST_BUSY_SHARE * 8 / 4, 8, "ok" },
	{ "at-share", "ok", HOST_BUSY_SHARE * 8, 8, "ok" },	/* not over it */
	{ "busy", "ok", HOST_BUSY_SHARE * 8 + 0.1, 8, "host-busy" },
	{ "unmeasured", "ok", -1, 8, "ok" },			/* schema 1 runs: not busy */
	{ "busy-timeout", "timeout", HOST_BUSY_SHARE * 2 * 4, 2, "timeout" },
	{ "interrupted", "interrupted", 0, 2, "interrupted" },
};

/* The view's status and host_busy of every case, and the C rule (load_is_busy) agreeing. */
static void check_cases(sqlite3 *db)
{
	char s[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sqlite3_stmt *st;

		snprintf(s, sizeof(s), "SELECT status, host_busy, host_busy_share, outcome FROM run_status"
			 " WHERE cell = '%s'", cases[i].cell);
		assert_int_equal(sqlite3_prepare_v2(db, s, -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), cases[i].status);
		assert_int_equal(sqlite3_column_int(st, 1), load_is_busy(cases[i].other, (unsigned)cases[i].pus));
		assert_true(sqlite3_column_double(st, 2) == HOST_BUSY_SHARE);
		assert_string_equal((const char *)sqlite3_column_text(st, 3), cases[i].outcome);
		sqlite3_finalize(st);
	}
}

/* A new database with a run of every case. */
static sqlite3 *db_with_cases(void)
{
	sqlite3 *db;
	size_t i;

	assert_int_equal(db_open(path, &db), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		add_run(db, cases[i].cell, 1, cases[i].outcome, cases[i].other, cases[i].pus);
	return db;
}

static void test_schema_and_view(void **state)
{
	sqlite3 *db = db_with_cases();

	(void)state;
	assert_int_equal(int_of(db, "PRAGMA user_version"), 9);
	assert_int_equal(int_of(db, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('runs', 'samples',"
				" 'probes', 'rounds', 'changepoints', 'run_status')"), 6);
	check_cases(db);
	/* every column of runs is in the view, and the three it adds */
	assert_int_equal(int_of(db, "SELECT (SELECT COUNT(*) FROM pragma_table_info('run_status')) -"
				" (SELECT COUNT(*) FROM pragma_table_info('runs'))"), 3);
	/* --resume: an ok or failed run is there, a host-busy or interrupted one is not */
	assert_int_equal(db_has_run(db, "m", "quiet", "v", 1), 1);
	assert_int_equal(db_has_run(db, "m", "busy-timeout", "v", 1), 1);
	assert_int_equal(db_has_run(db, "m", "busy", "v", 1), 0);
	assert_int_equal(db_has_run(db, "m", "interrupted", "v", 1), 0);
	assert_int_equal(db_has_run(db, "m", "quiet", "v", 2), 0);
	db_close(db);
}

/* A schema 7 database (no view) gains it; a view of another rule is made again. */
static void test_view_migrated(void **state)
{
	sqlite3 *db = db_with_cases();

	(void)state;
	sql(db, "DROP VIEW run_status; PRAGMA user_version=7");
	db_close(db);
	assert_int_equal(db_open(path, &db), 0);
	assert_int_equal(int_of(db, "PRAGMA user_version"), 9);
	check_cases(db);
	/* a view another rcuwb made with another share (0.5): this one's rule is put back */
	sql(db, "DROP VIEW run_status; CREATE VIEW run_status AS SELECT runs.*, 0 AS host_busy,"
		" 0.5 AS host_busy_share, outcome AS status FROM runs");
	db_close(db);
	assert_int_equal(db_open(path, &db), 0);
	check_cases(db);
	assert_int_equal(int_of(db, "SELECT COUNT(*) FROM run_status"), sizeof(cases) / sizeof(cases[0]));
	db_close(db);
}

/*
 * A traced run: its trace row, and a row per call with a column per phase
 * (every phase of anatomy.h has one); stored again, it replaces the first;
 * an incomplete trace stores why and no call.
 */
static void test_anatomy(void **state)
{
	sqlite3 *db = db_with_cases();
	struct trace t = { 0 };
	struct anatomy a = { 0 };
	struct anat_call c[2];
	int p;

	(void)state;
	memset(c, 0, sizeof(c));
	for (p = 0; p < PH_NR; p++)
		c[0].phase_us[p] = c[1].phase_us[p] = NAN;
	c[0].phase_us[PH_REQUEST] = 4000;
	c[0].phase_us[PH_RETURN] = 60;
	c[0].pid = 20;
	c[1].expedited = c[1].own = true;
	c[1].phase_us[PH_HANDOFF] = 7;
	snprintf(c[1].driver, sizeof(c[1].driver), "kworker/");
	a.calls = c;
	a.n = 2;
	t.dump_begun = t.dump_ended = true;
	t.n = 50;
	assert_int_equal(db_store_anatomy(db, 1, &t, &a), 0);
	assert_int_equal(db_store_anatomy(db, 1, &t, &a), 0);
	assert_int_equal(int_of(db, "SELECT COUNT(*) FROM gp_anatomy WHERE run_id = 1"), 2);
	assert_int_equal(int_of(db, "SELECT request_us + return_us FROM gp_anatomy WHERE mode = 'normal'"), 4060);
	assert_int_equal(int_of(db, "SELECT handoff_us FROM gp_anatomy WHERE mode = 'expedited' AND own"
				" AND driver = 'kworker/' AND request_us IS NULL"), 7);
	assert_int_equal(int_of(db, "SELECT events * (incomplete IS NULL) * calls FROM traces"), 100);
	t.lost = 3;
	assert_int_equal(db_store_anatomy(db, 1, &t, &a), 0);
	assert_int_equal(int_of(db, "SELECT COUNT(*) FROM gp_anatomy"), 0);
	assert_int_equal(int_of(db, "SELECT lost * (incomplete LIKE '%lost events%') FROM traces"), 3);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_and_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_anatomy, setup, teardown),
	};

	RUN_UNIT_TESTS("db", tests);
}
