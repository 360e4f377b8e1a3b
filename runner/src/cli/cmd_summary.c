/* cmd_summary.c: rcuwb summary: per-cell table of stored runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "common.h"
#include "db.h"
#include "gpstats.h"
#include "probetab.h"

static const char summary_help[] =
	"Usage: rcuwb summary [--matrix NAME] [--variant NAME] [--since TIME] [--probes]\n"
	"\n"
	"One line per (matrix, variant, cell) of the results database: runs stored,\n"
	"runs that ended ok, failures by outcome (host-busy: an ok run that other\n"
	"processes on the host disturbed), rcuscale samples of the ok runs and\n"
	"their p50/p90/p99 grace-period latency in microseconds (all samples of the\n"
	"cell's ok runs pooled; nearest rank as kvm-recheck-rcuscale.sh), the\n"
	"accelerator and the worst oversubscription (vCPUs per host PU; > 1 distorts\n"
	"expedited grace periods).  --since keeps runs started at or after TIME\n"
	"(UTC, e.g. 2026-12-03T08:00:00Z).  'rcuwb report' does the statistics proper.\n"
	"\n"
	"--probes prints the mid-boot table instead: a line per variant x boot\n"
	"parameters x stage, a column per primitive: median [interquartile range] of\n"
	"the latencies of the calls that returned, in ms, with boots/calls; or\n"
	"DEADLOCK d/b when in d of b boots a call could never return, each with its\n"
	"evidence (the probe found missing what the blocked boot task would create,\n"
	"or the call did not return before the run's timeout) after the table.\n";

/* Column widths of the text table: the longest name of each, at least the header's. */
struct widths {
	int variant, cell;
};

struct cell_row {
	const char *since;
	const char *matrix, *variant, *cell, *accel, *failures, *hosts;
	int runs, ok;
	double oversub;
	struct gp_stats st;
};

/* status: the run_status view's (db.c): the outcome, or host-busy */
static const char groups_sql[] =
	"SELECT matrix, variant, cell, COUNT(*), SUM(status = 'ok'), GROUP_CONCAT(DISTINCT accel),"
	" MAX(oversub), (SELECT GROUP_CONCAT(o.n || ' ' || o.status, ', ') FROM"
	"   (SELECT r2.status AS status, COUNT(*) AS n FROM run_status r2 WHERE r2.matrix = c.matrix AND"
	"    r2.variant = c.variant AND r2.cell = c.cell AND r2.status <> 'ok'"
	"    AND (?3 IS NULL OR r2.started_at >= ?3)"
	"    GROUP BY r2.status) o),"
	" (SELECT GROUP_CONCAT(h.host || ':' || h.n, ',') FROM"
	"   (SELECT coalesce(host, '?') AS host, COUNT(*) AS n FROM runs r3 WHERE r3.matrix IS c.matrix AND"
	"    r3.variant = c.variant AND r3.cell = c.cell AND (?3 IS NULL OR r3.started_at >= ?3)"
	"    GROUP BY 1 ORDER BY 1) h)"
	" FROM run_status c WHERE (?1 IS NULL OR matrix = ?1) AND (?2 IS NULL OR variant = ?2)"
	" AND (?3 IS NULL OR started_at >= ?3)"
	" GROUP BY matrix, variant, cell ORDER BY matrix, cell, variant";

static const char widths_sql[] =
	"SELECT MAX(length(variant)), MAX(length(cell)) FROM runs WHERE (?1 IS NULL OR matrix = ?1)"
	" AND (?2 IS NULL OR variant = ?2) AND (?3 IS NULL OR started_at >= ?3)";

static const char samples_sql[] =
	"SELECT s.duration_ns FROM samples s JOIN run_status r ON s.run_id = r.id"
	" WHERE r.matrix = ? AND r.variant = ? AND r.cell = ? AND r.status = 'ok'"
	" AND (?4 IS NULL OR r.started_at >= ?4)";

static int cell_stats(sqlite3 *db, struct cell_row *row)
{
	struct buf b = { 0 };
	sqlite3_stmt *st;
	double v;

	if (sqlite3_prepare_v2(db, samples_sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, row->matrix, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, row->variant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, row->cell, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, row->since, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = sqlite3_column_double(st, 0) / 1000.;
		if (buf_append(&b, &v, sizeof(v)) < 0)
			break;
	}
	sqlite3_finalize(st);
	gp_stats_compute((double *)b.data, b.len / sizeof(double), &row->st);
	buf_free(&b);
	return 0;
}

/* The widths the rows selected by MATRIX, VARIANT and SINCE need. */
static int table_widths(sqlite3 *db, const char *matrix, const char *variant, const char *since,
			struct widths *w)
{
	sqlite3_stmt *st;

	w->variant = 8;
	w->cell = 26;
	if (sqlite3_prepare_v2(db, widths_sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, matrix, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, variant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, since, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		if (sqlite3_column_int(st, 0) > w->variant)
			w->variant = sqlite3_column_int(st, 0);
		if (sqlite3_column_int(st, 1) > w->cell)
			w->cell = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

static void print_row(const struct cell_row *r, const struct widths *w, json_object *arr)
{
	if (arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "matrix", json_object_new_string(r->matrix));
		json_object_object_add(o, "variant", json_object_new_string(r->variant));
		json_object_object_add(o, "cell", json_object_new_string(r->cell));
		json_object_object_add(o, "runs", json_object_new_int(r->runs));
		json_object_object_add(o, "ok", json_object_new_int(r->ok));
		json_object_object_add(o, "failures", json_object_new_string(r->failures));
		json_object_object_add(o, "samples", json_object_new_int64((int64_t)r->st.n));
		if (r->st.n) {
			json_object_object_add(o, "p50_us", json_object_new_double(r->st.p50));
			json_object_object_add(o, "p90_us", json_object_new_double(r->st.p90));
			json_object_object_add(o, "p99_us", json_object_new_double(r->st.p99));
		}
		json_object_object_add(o, "accel", json_object_new_string(r->accel));
		json_object_object_add(o, "max_oversub", json_object_new_double(r->oversub));
		json_object_object_add(o, "hosts", json_object_new_string(r->hosts));
		json_object_array_add(arr, o);
		return;
	}
	printf("%-12s %-*s %-*s %4d %4d %8zu", r->matrix, w->variant, r->variant, w->cell, r->cell,
	       r->runs, r->ok, r->st.n);
	if (r->st.n)
		printf(" %9.0f %9.0f %9.0f", r->st.p50, r->st.p90, r->st.p99);
	else
		printf(" %9s %9s %9s", "-", "-", "-");
	printf("  %-5s %4.1f%s%s%s\n", r->accel, r->oversub, r->oversub > 1 ? "!" : " ",
	       r->failures[0] ? "  not ok: " : "", r->failures);
}

static const char hosts_sql[] =
	"SELECT coalesce(host, '?'), coalesce(host_uri, ''), GROUP_CONCAT(DISTINCT accel), MAX(host_pus),"
	" GROUP_CONCAT(DISTINCT qemu_version), COUNT(*), SUM(status = 'ok'), SUM(status <> 'ok')"
	" FROM run_status WHERE (?1 IS NULL OR matrix = ?1) AND (?2 IS NULL OR variant = ?2)"
	" AND (?3 IS NULL OR started_at >= ?3) GROUP BY 1, 2 ORDER BY 1, 2";

/* Runs per host: where they ran, on what, and how they ended. */
static int print_hosts(sqlite3 *db, const char *matrix, const char *variant, const char *since)
{
	sqlite3_stmt *st;
	int n = 0;

	if (sqlite3_prepare_v2(db, hosts_sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, matrix, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, variant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, since, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t[5];
		int i;

		for (i = 0; i < 5; i++)
			t[i] = sqlite3_column_text(st, i) ? (const char *)sqlite3_column_text(st, i) : "";
		if (!n++)
			printf("\n%-16s %-5s %4s %-8s %5s %5s %6s  %s\n", "host", "accel", "PUs", "QEMU", "runs",
			       "ok", "not ok", "libvirt URI");
		printf("%-16s %-5s %4s %-8s %5d %5d %6d  %s\n", t[0], t[2], t[3], t[4],
		       sqlite3_column_int(st, 5), sqlite3_column_int(st, 6), sqlite3_column_int(st, 7),
		       t[1][0] ? t[1] : "(not stored)");
	}
	sqlite3_finalize(st);
	return 0;
}

int do_summary(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "matrix", required_argument, NULL, 'M' },
		{ "variant", required_argument, NULL, 'k' },
		{ "since", required_argument, NULL, 's' },
		{ "probes", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *matrix = NULL, *variant = NULL, *since = NULL;
	json_object *arr = json_output ? json_object_new_array() : NULL;
	struct widths w;
	sqlite3_stmt *st;
	sqlite3 *db;
	int c, rows = 0, ret = 0;
	bool probes = false;

	while ((c = getopt_long(argc, argv, "M:k:s:Ph", opts, NULL)) != -1) {
		switch (c) {
		case 'M': matrix = optarg; break;
		case 'k': variant = optarg; break;
		case 's': since = optarg; break;
		case 'P': probes = true; break;
		case 'h': print_usage(summary_help); return 0;
		default: return bad_usage("summary");
		}
	}
	if (db_open(opt_db, &db) < 0)
		return -1;
	if (probes) {
		if (arr)
			json_object_put(arr);
		ret = probe_table_print(db, matrix, variant, since);
		db_close(db);
		return ret;
	}
	if (table_widths(db, matrix, variant, since, &w) < 0 ||
	    (sqlite3_prepare_v2(db, groups_sql, -1, &st, NULL) != SQLITE_OK &&
	     set_err("sqlite: %s", sqlite3_errmsg(db)))) {
		db_close(db);
		return -1;
	}
	sqlite3_bind_text(st, 1, matrix, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, variant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, since, -1, SQLITE_STATIC);
	if (!arr)
		printf("%-12s %-*s %-*s %4s %4s %8s %9s %9s %9s  %-5s %5s\n", "matrix", w.variant, "variant",
		       w.cell, "cell", "runs", "ok", "samples", "p50(us)", "p90(us)", "p99(us)", "accel",
		       "oversub");
	while (ret == 0 && sqlite3_step(st) == SQLITE_ROW) {
		struct cell_row r = {
			.since = since,
			.matrix = (const char *)sqlite3_column_text(st, 0),
			.variant = (const char *)sqlite3_column_text(st, 1),
			.cell = (const char *)sqlite3_column_text(st, 2),
			.runs = sqlite3_column_int(st, 3),
			.ok = sqlite3_column_int(st, 4),
			.accel = (const char *)sqlite3_column_text(st, 5),
			.oversub = sqlite3_column_double(st, 6),
			.failures = (const char *)sqlite3_column_text(st, 7),
			.hosts = (const char *)sqlite3_column_text(st, 8),
		};
		r.matrix = r.matrix ? r.matrix : "";
		r.accel = r.accel ? r.accel : "";
		r.failures = r.failures ? r.failures : "";
		r.hosts = r.hosts ? r.hosts : "";
		ret = cell_stats(db, &r);
		if (ret == 0)
			print_row(&r, &w, arr);
		rows++;
	}
	sqlite3_finalize(st);
	if (!arr && rows && ret == 0)
		ret = print_hosts(db, matrix, variant, since);
	db_close(db);
	if (arr) {
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY));
		json_object_put(arr);
	} else if (!rows) {
		printf("(no runs stored in %s)\n", opt_db);
	}
	return ret;
}
