/*
 * db.c: the SQLite results database.
 *
 * One row in runs per guest run (failed ones too), its samples in samples,
 * its mid-boot probe lines in probes.  A run is written in one transaction
 * when it ends, so an interrupted matrix loses at most the runs in flight.
 * The schema is versioned with PRAGMA user_version.
 */
#define _GNU_SOURCE
#include "db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatomy.h"
#include "common.h"
#include "gpstats.h"
#include "hostload.h"

/*
 * 1: first release.
 * 2: runs.host_other_cpu, the PUs other processes used during the run.
 * 3: probes.call (which call of the stage and primitive) and
 *    probes.evidence (why a deadlock is one); probe outcomes ok, slow,
 *    hung, deadlock, skipped.
 * 4: runs.source (the kernel's source: "debian PACKAGE VERSION" or
 *    "git REPO REV COMMIT") and runs.build_key (build/kernel.sh's content key).
 * 5: runs.kconfig (the kernel's Kconfig scenario, perf-configs/kconfig/
 *    scenarios/NAME.config; NULL before: those runs' kernels were built as
 *    the scenario tiny is) and runs.kconfig_sha (hash of the fragments asked
 *    for; config_sha is the final .config's).
 * 6: runs.commit_id and runs.commit_date (a git source's commit and its
 *    committer date, from build.json; NULL for Debian sources), runs.schedule
 *    (the schedule whose nightly round ran it); tables rounds (one row per
 *    nightly round: what it measured, against what, and its verdict) and
 *    changepoints (detected change points and their triage state; the R
 *    side, stats/R/changepoint.R, writes it).
 * 7: runs.host_uri, the libvirt URI of the host the run ran on (runs.host
 *    is its label from the hosts file, or the local host's name).
 * 8: the view run_status (below).
 * 9: tables traces (one row per rcuscale run of a kernel with RCU's trace
 *    events: what its ftrace dump held, and why it was not analysed) and
 *    gp_anatomy (one row per rcuscale writer call in such a run: its grace
 *    period's time per phase, results/anatomy.h; docs/anatomy.md).
 */
#define SCHEMA_VERSION 9

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS runs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, matrix TEXT, cell TEXT NOT NULL, rep INTEGER,"
	" kind TEXT NOT NULL, variant TEXT NOT NULL, kernel_version TEXT, config_sha TEXT,"
	" kconfig_hz INTEGER, kconfig_preempt TEXT, kconfig_nohz TEXT, patches TEXT,"
	" gp_mode TEXT, nwriters INTEGER, nreaders INTEGER, boot_params TEXT, cmdline TEXT,"
	" vcpus INTEGER, sockets INTEGER, cores INTEGER, threads INTEGER, numa_nodes INTEGER,"
	" mem_mib INTEGER, accel TEXT, qemu_version TEXT, libvirt_version TEXT, host TEXT,"
	" host_pus INTEGER, pinned TEXT, oversub REAL, started_at TEXT, ended_at TEXT, wall_s REAL,"
	" outcome TEXT NOT NULL, outcome_detail TEXT, guest_cpus INTEGER, guest_nodes INTEGER,"
	" boot_time_us INTEGER, gps INTEGER, batches INTEGER, nsamples INTEGER,"
	" p50_us REAL, p90_us REAL, p99_us REAL, run_dir TEXT, seed INTEGER, rerun_of INTEGER,"
	" host_other_cpu REAL, source TEXT, build_key TEXT, kconfig TEXT, kconfig_sha TEXT,"
	" commit_id TEXT, commit_date TEXT, schedule TEXT, host_uri TEXT);"
	"CREATE INDEX IF NOT EXISTS runs_matrix ON runs(matrix, cell, variant);"
	"CREATE TABLE IF NOT EXISTS samples ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" writer INTEGER, seq INTEGER, duration_ns INTEGER);"
	"CREATE INDEX IF NOT EXISTS samples_run ON samples(run_id);"
	"CREATE TABLE IF NOT EXISTS probes ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" stage INTEGER, point TEXT, prim TEXT, duration_ns INTEGER, outcome TEXT,"
	" gp_exp INTEGER, gp_normal INTEGER, sched TEXT, call INTEGER, evidence TEXT);"
	"CREATE INDEX IF NOT EXISTS probes_run ON probes(run_id);"
	/* one row per nightly round (rcuwb nightly): what it measured, against what, its verdict */
	"CREATE TABLE IF NOT EXISTS rounds ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, schedule TEXT NOT NULL, matrix TEXT NOT NULL,"
	" commit_id TEXT NOT NULL, commit_date TEXT, build_key TEXT, baseline_commit TEXT,"
	" started_at TEXT NOT NULL, ended_at TEXT, status TEXT NOT NULL DEFAULT 'running',"
	" verdict TEXT, exit_code INTEGER, UNIQUE (schedule, commit_id));"
	/*
	 * Change points and their triage state; stats/R/changepoint.R writes
	 * them and creates nothing.  last_good: last measured commit of the old
	 * segment; first_bad: first measured commit of the new one (the change
	 * lies in (last_good, first_bad]); size/lo/hi: relative change and its
	 * bounds (fractions); p: permutation p-value; why: the reason given with
	 * ack/invalid; updated_at: last time it was detected again or its state
	 * changed.
	 */
	"CREATE TABLE IF NOT EXISTS changepoints ("
	" id INTEGER PRIMARY KEY, schedule TEXT NOT NULL, cell TEXT NOT NULL, stat TEXT NOT NULL,"
	" last_good TEXT NOT NULL, first_bad TEXT NOT NULL, size REAL, lo REAL, hi REAL, p REAL,"
	" state TEXT NOT NULL DEFAULT 'new' CHECK (state IN ('new', 'acknowledged', 'invalid')),"
	" why TEXT, created_at TEXT NOT NULL, updated_at TEXT,"
	" UNIQUE (schedule, cell, stat, last_good, first_bad));"
	/*
	 * A traced run's dump: events read, events of other kinds, lines that
	 * did not parse, events the ring buffer lost, printk lines dropped;
	 * incomplete: why its calls were not cut into phases (NULL: they were);
	 * calls: rows in gp_anatomy; skipped: calls without all their events.
	 */
	"CREATE TABLE IF NOT EXISTS traces ("
	" run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
	" events INTEGER, other_events INTEGER, bad_lines INTEGER, lost INTEGER,"
	" printk_dropped INTEGER, incomplete TEXT, calls INTEGER, skipped INTEGER);"
	/*
	 * One writer call: mode normal or expedited; t_us: its request in the
	 * dump's clock; total_us: request to callback invoked (normal) or done
	 * (expedited); NAME_us: the phases of results/anatomy.h, NULL where a
	 * phase is not the mode's (return_us also where the writer made no
	 * further request); own: expedited, the call ran its own GP.
	 */
	"CREATE TABLE IF NOT EXISTS gp_anatomy ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" mode TEXT NOT NULL, writer INTEGER, call INTEGER, gp_seq INTEGER, own INTEGER,"
	" t_us REAL, total_us REAL, fqs_scans INTEGER, last_cpu INTEGER, driver TEXT,"
	" request_us REAL, init_us REAL, qs_us REAL, cleanup_us REAL, callback_us REAL,"
	" funnel_us REAL, handoff_us REAL, reset_us REAL, select_us REAL, wait_us REAL,"
	" wake_us REAL, piggyback_us REAL, return_us REAL);"
	"CREATE INDEX IF NOT EXISTS gp_anatomy_run ON gp_anatomy(run_id);";

/*
 * run_status: every column of runs and
 *   host_busy        1 when processes other than rcuwb's used more than
 *                    HOST_BUSY_SHARE of the host's PUs during the run (as
 *                    load_is_busy()), else 0 (also when not measured)
 *   host_busy_share  HOST_BUSY_SHARE, for texts that name the rule
 *   status           the outcome, or host-busy for an ok run that was
 *                    host_busy: such a run is left out of statistics and
 *                    repeated by --resume
 * The host-busy rule's one home in SQL: summary, --resume, stats/R, the
 * shell tests and stats/results.sh read it here.  db_open() makes it again
 * whenever its text here changes (view_current()).
 */
#define SHARE HOST_BUSY_STR(HOST_BUSY_SHARE)
static const char run_status_view[] =
	"CREATE VIEW run_status AS SELECT r.*,"
	" CASE WHEN outcome = 'ok' AND host_busy THEN 'host-busy' ELSE outcome END AS status"
	" FROM (SELECT runs.*, coalesce(host_other_cpu > " SHARE " * host_pus, 0) AS host_busy,"
	" " SHARE " AS host_busy_share FROM runs) r";
#undef SHARE

/*
 * What refers to columns an older schema's runs lack: made after migrate()'s
 * ALTERs (the view dropped here is then made again by run_status_view).
 */
static const char schema_late[] =
	"CREATE INDEX IF NOT EXISTS runs_schedule ON runs(schedule, commit_id);"
	"DROP VIEW IF EXISTS run_status;";

const char *db_default_path(void)
{
	const char *e = getenv("RCUWB_DB");

	return e && *e ? e : "results/rcuwb.db";
}

static int exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		set_err("sqlite: %s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int version = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return version;
}

/* Is the view run_status there, as run_status_view makes it? */
static bool view_current(sqlite3 *db)
{
	sqlite3_stmt *st;
	bool same = false;

	if (sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'run_status'",
			       -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		same = sqlite3_column_text(st, 0) &&
		       !strcmp((const char *)sqlite3_column_text(st, 0), run_status_view);
	sqlite3_finalize(st);
	return same;
}

/* Create the schema, or bring an older one up to date; stored runs stay as they are. */
static int migrate(sqlite3 *db)
{
	char sql[64];
	int v;

	if (exec(db, "BEGIN IMMEDIATE"))
		return -1;
	/* read again inside the transaction: another runner may have just migrated */
	v = user_version(db);
	if (exec(db, schema) ||
	    (v == 1 && exec(db, "ALTER TABLE runs ADD COLUMN host_other_cpu REAL")) ||
	    (v >= 1 && v < 3 && exec(db, "ALTER TABLE probes ADD COLUMN call INTEGER;"
				    "ALTER TABLE probes ADD COLUMN evidence TEXT")) ||
	    (v >= 1 && v < 4 && exec(db, "ALTER TABLE runs ADD COLUMN source TEXT;"
				    "ALTER TABLE runs ADD COLUMN build_key TEXT")) ||
	    (v >= 1 && v < 5 && exec(db, "ALTER TABLE runs ADD COLUMN kconfig TEXT;"
				    "ALTER TABLE runs ADD COLUMN kconfig_sha TEXT")) ||
	    (v >= 1 && v < 6 && exec(db, "ALTER TABLE runs ADD COLUMN commit_id TEXT;"
				    "ALTER TABLE runs ADD COLUMN commit_date TEXT;"
				    "ALTER TABLE runs ADD COLUMN schedule TEXT")) ||
	    (v >= 1 && v < 7 && exec(db, "ALTER TABLE runs ADD COLUMN host_uri TEXT")) ||
	    exec(db, schema_late) || exec(db, run_status_view))
		goto fail;
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", SCHEMA_VERSION);
	if (exec(db, sql) || exec(db, "COMMIT"))
		goto fail;
	return 0;
fail:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int db_open(const char *path, sqlite3 **db)
{
	int version;

	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		set_err("cannot open results database %s: %s", path, sqlite3_errmsg(*db));
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	sqlite3_busy_timeout(*db, 10000);
	version = user_version(*db);
	if (version > SCHEMA_VERSION) {
		set_err("%s has schema version %d, newer than this rcuwb (%d): use a newer rcuwb",
			path, version, SCHEMA_VERSION);
		db_close(*db);
		return -1;
	}
	if (exec(*db, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;") ||
	    ((version < SCHEMA_VERSION || !view_current(*db)) && migrate(*db))) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", last_err());
		db_close(*db);
		return set_err("%s: %s", path, msg);
	}
	return 0;
}

void db_close(sqlite3 *db)
{
	sqlite3_close(db);
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

/* "" is stored as NULL */
static int bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	return *s ? bind_text(st, i, s) : sqlite3_bind_null(st, i);
}

static int insert_run(sqlite3 *db, const struct run_spec *s, const struct run_env *e,
		      const struct console *c, const struct run_result *r)
{
	static const char sql[] =
		"INSERT INTO runs (matrix, cell, rep, kind, variant, kernel_version, config_sha,"
		" kconfig_hz, kconfig_preempt, kconfig_nohz, patches, gp_mode, nwriters, nreaders,"
		" boot_params, cmdline, vcpus, sockets, cores, threads, numa_nodes, mem_mib, accel,"
		" qemu_version, libvirt_version, host, host_pus, pinned, oversub, started_at, ended_at,"
		" wall_s, outcome, outcome_detail, guest_cpus, guest_nodes, boot_time_us, gps, batches,"
		" nsamples, p50_us, p90_us, p99_us, run_dir, seed, rerun_of, host_other_cpu, source,"
		" build_key, kconfig, kconfig_sha, commit_id, commit_date, schedule, host_uri)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		" ?,?,?,?)";
	const struct kernel_build *k = s->kernel;
	char t0[32], t1[32];
	struct gp_stats gs;
	double *us = gp_samples_us(c);
	sqlite3_stmt *st;
	int i = 1, rc;

	if (!us)
		return set_err("out of memory");
	gp_stats_compute(us, c->nsamples, &gs);
	free(us);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	iso_time(e->started, t0);
	iso_time(e->ended, t1);
	bind_text(st, i++, s->matrix);
	bind_text(st, i++, e->cell);
	sqlite3_bind_int(st, i++, s->rep);
	bind_text(st, i++, s->kind == RUN_PROBE ? "probe" : "rcuscale");
	bind_text(st, i++, k->variant);
	bind_text(st, i++, k->version);
	bind_text(st, i++, k->config_sha);
	sqlite3_bind_int(st, i++, k->hz);
	bind_text(st, i++, k->preempt);
	bind_text(st, i++, k->nohz);
	bind_text(st, i++, k->patches_json ? k->patches_json : "[]");
	bind_text(st, i++, gp_mode_name(s->gp));
	sqlite3_bind_int(st, i++, s->nwriters);
	sqlite3_bind_int(st, i++, s->nreaders);
	bind_text(st, i++, s->boot_params);
	bind_text(st, i++, e->cmdline);
	sqlite3_bind_int(st, i++, (int)s->topo.vcpus);
	sqlite3_bind_int(st, i++, (int)s->topo.sockets);
	sqlite3_bind_int(st, i++, (int)s->topo.cores);
	sqlite3_bind_int(st, i++, (int)s->topo.threads);
	sqlite3_bind_int(st, i++, (int)(s->topo.nnodes ? s->topo.nnodes : 1));
	sqlite3_bind_int(st, i++, (int)s->topo.mem_mib);
	bind_text(st, i++, e->accel);
	bind_text(st, i++, e->qemu_version);
	bind_text(st, i++, e->libvirt_version);
	bind_text(st, i++, e->host);
	sqlite3_bind_int(st, i++, (int)e->host_pus);
	bind_text(st, i++, e->pinned);
	sqlite3_bind_double(st, i++, e->oversub);
	bind_text(st, i++, t0);
	bind_text(st, i++, t1);
	sqlite3_bind_double(st, i++, e->ended - e->started);
	bind_text(st, i++, outcome_name(r->outcome));
	bind_text(st, i++, r->detail);
	if (c->smp_cpus >= 0) {
		sqlite3_bind_int(st, i++, c->smp_cpus);
		sqlite3_bind_int(st, i++, c->smp_nodes);
	} else {
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
	}
	if (c->boot_time_s >= 0)
		sqlite3_bind_int64(st, i++, (sqlite3_int64)(c->boot_time_s * 1e6 + 0.5));
	else
		sqlite3_bind_null(st, i++);
	if (c->have_summary) {
		sqlite3_bind_int64(st, i++, c->gps);
		sqlite3_bind_int64(st, i++, c->batches);
	} else {
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
	}
	sqlite3_bind_int64(st, i++, (sqlite3_int64)c->nsamples);
	if (gs.n) {
		sqlite3_bind_double(st, i++, gs.p50);
		sqlite3_bind_double(st, i++, gs.p90);
		sqlite3_bind_double(st, i++, gs.p99);
	} else {
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
	}
	bind_text(st, i++, e->run_dir);
	sqlite3_bind_int64(st, i++, (sqlite3_int64)e->seed);
	if (e->rerun_of > 0)
		sqlite3_bind_int64(st, i++, e->rerun_of);
	else
		sqlite3_bind_null(st, i++);
	if (e->host_other >= 0)
		sqlite3_bind_double(st, i++, e->host_other);
	else
		sqlite3_bind_null(st, i++);
	bind_text(st, i++, k->source);
	bind_text(st, i++, k->build_key);
	bind_text(st, i++, k->kconfig);
	bind_text(st, i++, k->kconfig_sha);
	bind_text_or_null(st, i++, k->commit);
	bind_text_or_null(st, i++, k->commit_date);
	bind_text_or_null(st, i++, s->schedule);
	bind_text_or_null(st, i++, e->host_uri);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : set_err("sqlite: storing run: %s", sqlite3_errmsg(db));
}

static int insert_samples(sqlite3 *db, int64_t id, const struct console *c)
{
	sqlite3_stmt *st;
	size_t i;

	if (sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	for (i = 0; i < c->nsamples; i++) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, c->samples[i].writer);
		sqlite3_bind_int(st, 3, c->samples[i].seq);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)c->samples[i].ns);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return set_err("sqlite: storing samples: %s", sqlite3_errmsg(db));
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * A probe call's outcome: ok, slow (returned after its watchdog fired),
 * deadlock (with the probe's evidence, or never returned before a run that
 * was classified a deadlock for it timed out), hung (reported, never
 * returned, no verdict), skipped (the probe could not make the call).
 */
static const char *probe_outcome(const struct probe_result *p, const struct run_result *r,
				 const char **evidence)
{
	*evidence = NULL;
	if (p->skipped)
		return "skipped";
	if (p->slow)
		return "slow";
	if (!p->hung)
		return "ok";
	if (p->evidence) {
		*evidence = p->evidence_text;
		return "deadlock";
	}
	if (r->outcome == OUT_DEADLOCK) {
		*evidence = "no return before the run's timeout";
		return "deadlock";
	}
	return "hung";
}

static int insert_probes(sqlite3 *db, int64_t id, const struct console *c, const struct run_result *r)
{
	sqlite3_stmt *st;
	size_t i;

	if (sqlite3_prepare_v2(db, "INSERT INTO probes (run_id, stage, point, prim, duration_ns, outcome,"
			       " gp_exp, gp_normal, sched, call, evidence) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	for (i = 0; i < c->nprobes; i++) {
		const struct probe_result *p = &c->probes[i];
		const char *evidence;
		const char *outcome = probe_outcome(p, r, &evidence);

		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, p->stage);
		bind_text(st, 3, p->point);
		bind_text(st, 4, p->prim);
		if (p->ns < 0)	/* hung or skipped: no latency */
			sqlite3_bind_null(st, 5);
		else
			sqlite3_bind_int64(st, 5, p->ns);
		bind_text(st, 6, outcome);
		if (p->gp_exp >= 0)
			sqlite3_bind_int(st, 7, p->gp_exp);
		else
			sqlite3_bind_null(st, 7);
		if (p->gp_normal >= 0)
			sqlite3_bind_int(st, 8, p->gp_normal);
		else
			sqlite3_bind_null(st, 8);
		bind_text(st, 9, p->sched);
		sqlite3_bind_int(st, 10, p->call);
		if (evidence)
			bind_text(st, 11, evidence);
		else
			sqlite3_bind_null(st, 11);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return set_err("sqlite: storing probe lines: %s", sqlite3_errmsg(db));
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

int db_store_run(sqlite3 *db, const struct run_spec *s, const struct run_env *e,
		 const struct console *c, const struct run_result *r, int64_t *id)
{
	if (exec(db, "BEGIN IMMEDIATE"))
		return -1;
	if (insert_run(db, s, e, c, r))
		goto fail;
	*id = sqlite3_last_insert_rowid(db);
	if (insert_samples(db, *id, c) || insert_probes(db, *id, c, r))
		goto fail;
	return exec(db, "COMMIT");
fail:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* INSERT INTO gp_anatomy with a column per phase (anat_phase_name()_us) */
static int anatomy_insert_sql(struct buf *b)
{
	int p;

	buf_printf(b, "INSERT INTO gp_anatomy (run_id, mode, writer, call, gp_seq, own, t_us, total_us,"
		   " fqs_scans, last_cpu, driver");
	for (p = 0; p < PH_NR; p++)
		buf_printf(b, ", %s_us", anat_phase_name(p));
	buf_printf(b, ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?");
	for (p = 0; p < PH_NR; p++)
		buf_printf(b, ", ?");
	buf_printf(b, ")");
	return b->data ? 0 : set_err("out of memory");
}

static int bind_call(sqlite3_stmt *st, int64_t run_id, const struct anat_call *c)
{
	int i = 1, p;

	sqlite3_bind_int64(st, i++, run_id);
	bind_text(st, i++, c->expedited ? "expedited" : "normal");
	sqlite3_bind_int(st, i++, c->pid);
	sqlite3_bind_int(st, i++, c->call);
	sqlite3_bind_int64(st, i++, c->gp_seq);
	if (c->expedited)
		sqlite3_bind_int(st, i++, c->own);
	else
		sqlite3_bind_null(st, i++);
	sqlite3_bind_double(st, i++, c->t_us);
	sqlite3_bind_double(st, i++, c->total_us);
	sqlite3_bind_int(st, i++, c->fqs_scans);
	sqlite3_bind_int(st, i++, c->last_cpu);
	bind_text_or_null(st, i++, c->driver);
	for (p = 0; p < PH_NR; p++, i++)
		if (isnan(c->phase_us[p]))
			sqlite3_bind_null(st, i);
		else
			sqlite3_bind_double(st, i, c->phase_us[p]);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static int insert_calls(sqlite3 *db, int64_t run_id, const struct anatomy *a)
{
	struct buf sql = { 0 };
	sqlite3_stmt *st = NULL;
	size_t i;
	int ret = 0;

	if (anatomy_insert_sql(&sql) < 0)
		return -1;
	if (sqlite3_prepare_v2(db, sql.data, -1, &st, NULL) != SQLITE_OK)
		ret = -1;
	for (i = 0; !ret && i < a->n; i++) {
		ret = bind_call(st, run_id, &a->calls[i]);
		sqlite3_reset(st);
	}
	if (ret)
		set_err("sqlite: storing the anatomy of run %lld: %s", (long long)run_id, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	buf_free(&sql);
	return ret;
}

int db_store_anatomy(sqlite3 *db, int64_t run_id, const struct trace *t, const struct anatomy *a)
{
	const char *why = trace_incomplete(t);
	sqlite3_stmt *st;
	char del[96];
	int rc;

	if (exec(db, "BEGIN IMMEDIATE"))
		return -1;
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO traces (run_id, events, other_events, bad_lines,"
			       " lost, printk_dropped, incomplete, calls, skipped)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK) {
		set_err("sqlite: %s", sqlite3_errmsg(db));
		goto fail;
	}
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, (int64_t)t->n);
	sqlite3_bind_int64(st, 3, t->other);
	sqlite3_bind_int64(st, 4, t->bad);
	if (t->lost_unknown)
		sqlite3_bind_null(st, 5);
	else
		sqlite3_bind_int64(st, 5, t->lost);
	sqlite3_bind_int64(st, 6, t->printk_dropped);
	if (why)
		bind_text(st, 7, why);
	else
		sqlite3_bind_null(st, 7);
	sqlite3_bind_int64(st, 8, why ? 0 : (int64_t)a->n);
	sqlite3_bind_int64(st, 9, why ? 0 : (int64_t)a->skipped);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		set_err("sqlite: storing the trace of run %lld: %s", (long long)run_id, sqlite3_errmsg(db));
		goto fail;
	}
	snprintf(del, sizeof(del), "DELETE FROM gp_anatomy WHERE run_id = %lld", (long long)run_id);
	if (exec(db, del) || (!why && insert_calls(db, run_id, a)))
		goto fail;
	return exec(db, "COMMIT");
fail:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int int_query(sqlite3 *db, const char *sql, const char *const *args, int nargs, int dflt)
{
	sqlite3_stmt *st;
	int i, v = dflt;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	for (i = 0; i < nargs; i++)
		bind_text(st, i + 1, args[i]);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

int db_max_rep(sqlite3 *db, const char *matrix)
{
	const char *args[] = { matrix };

	return int_query(db, "SELECT MAX(rep) FROM runs WHERE matrix = ?", args, 1, 0);
}

int db_has_run(sqlite3 *db, const char *matrix, const char *cell, const char *variant, int rep)
{
	char r[16];
	const char *args[] = { matrix, cell, variant, r };

	snprintf(r, sizeof(r), "%d", rep);
	return int_query(db, "SELECT COUNT(*) FROM run_status WHERE matrix = ? AND cell = ? AND variant = ?"
			 " AND rep = CAST(? AS INTEGER) AND status"
			 " NOT IN ('interrupted', 'host-failed', 'host-busy')", args, 4, 0) > 0;
}

double db_avg_wall(sqlite3 *db, const char *cell)
{
	sqlite3_stmt *st;
	double v = -1;

	if (sqlite3_prepare_v2(db, "SELECT AVG(wall_s) FROM runs WHERE cell = ? AND outcome = 'ok'",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	bind_text(st, 1, cell);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

int db_next_rep(sqlite3 *db, const char *matrix, const char *cell, const char *variant)
{
	const char *args[] = { matrix, cell, variant };

	return int_query(db, "SELECT MAX(rep) FROM runs WHERE matrix = ? AND cell = ? AND variant = ?",
			 args, 3, 0) + 1;
}

void db_col_text(sqlite3_stmt *st, int i, char *out, size_t cap)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(out, cap, "%s", t ? (const char *)t : "");
}

int db_get_run(sqlite3 *db, int64_t id, struct stored_run *r)
{
	static const char sql[] =
		"SELECT matrix, cell, kind, variant, gp_mode, boot_params, config_sha, patches, run_dir,"
		" rep, nwriters, nreaders, vcpus, sockets, cores, threads, numa_nodes, mem_mib, kconfig"
		" FROM runs WHERE id = ?";
	sqlite3_stmt *st;
	int rc;

	memset(r, 0, sizeof(*r));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		r->id = id;
		db_col_text(st, 0, r->matrix, sizeof(r->matrix));
		db_col_text(st, 1, r->cell, sizeof(r->cell));
		db_col_text(st, 2, r->kind, sizeof(r->kind));
		db_col_text(st, 3, r->variant, sizeof(r->variant));
		db_col_text(st, 4, r->gp_mode, sizeof(r->gp_mode));
		db_col_text(st, 5, r->boot_params, sizeof(r->boot_params));
		db_col_text(st, 6, r->config_sha, sizeof(r->config_sha));
		db_col_text(st, 7, r->patches, sizeof(r->patches));
		db_col_text(st, 8, r->run_dir, sizeof(r->run_dir));
		r->rep = sqlite3_column_int(st, 9);
		r->nwriters = sqlite3_column_int(st, 10);
		r->nreaders = sqlite3_column_int(st, 11);
		r->vcpus = sqlite3_column_int(st, 12);
		r->sockets = sqlite3_column_int(st, 13);
		r->cores = sqlite3_column_int(st, 14);
		r->threads = sqlite3_column_int(st, 15);
		r->numa_nodes = sqlite3_column_int(st, 16);
		r->mem_mib = sqlite3_column_int(st, 17);
		db_col_text(st, 18, r->kconfig, sizeof(r->kconfig));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : set_err("no run %lld in the results database", (long long)id);
}
