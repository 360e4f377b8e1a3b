/*
 * probetab.c: the mid-boot table of "rcuwb summary --probes".
 *
 * A line per variant x boot parameters x stage, a column per primitive.
 * Each cell says how the primitive's calls at that stage went over the
 * boots of that variant: the median and interquartile range of the
 * latencies of the calls that returned, with the number of boots and
 * calls, or DEADLOCK with the number of boots in which a call could never
 * return.  Every deadlock's evidence follows the table.
 */
#include "probetab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "gpstats.h"

static const char cells_sql[] =
	"SELECT r.variant, COALESCE(r.boot_params, ''), p.stage, p.point, p.prim,"
	" COUNT(DISTINCT p.run_id), COUNT(*),"
	" COUNT(DISTINCT CASE WHEN p.outcome = 'deadlock' THEN p.run_id END),"
	" SUM(p.outcome = 'hung'), SUM(p.outcome = 'slow'), GROUP_CONCAT(p.duration_ns),"
	" GROUP_CONCAT(DISTINCT p.evidence), SUM(p.outcome = 'skipped')"
	" FROM probes p JOIN runs r ON p.run_id = r.id"
	" WHERE (?1 IS NULL OR r.matrix = ?1) AND (?2 IS NULL OR r.variant = ?2)"
	" AND (?3 IS NULL OR r.started_at >= ?3)"
	" GROUP BY r.variant, r.boot_params, p.stage, p.prim"
	" ORDER BY r.variant, r.boot_params, p.stage, p.prim";

/* The probe's primitives, in the order of the table's columns. */
static const char *const prim_cols[] = {
	"synchronize_rcu", "synchronize_rcu_expedited", "synchronize_srcu",
	"synchronize_srcu_expedited", "synchronize_rcu_tasks",
};
#define NCOLS (sizeof(prim_cols) / sizeof(prim_cols[0]))
#define CELL_W 30

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank, as kvm-recheck-rcuscale.sh defines it (gp_rank()). */
static int64_t rank(const int64_t *v, size_t n, int pct)
{
	return v[gp_rank(n, pct) - 1];
}

void probe_cell_quantiles(struct probe_cell *pc, int64_t *ns, size_t n)
{
	pc->n = n;
	if (!n) {
		pc->median = pc->q1 = pc->q3 = pc->min = pc->max = -1;
		return;
	}
	qsort(ns, n, sizeof(ns[0]), cmp_i64);
	pc->min = ns[0];
	pc->max = ns[n - 1];
	pc->median = rank(ns, n, 50);
	pc->q1 = rank(ns, n, 25);
	pc->q3 = rank(ns, n, 75);
}

/* A latency with a unit that keeps three significant digits: 850ns, 12.3us, 1.84ms, 2.37s. */
static void fmt_dur(int64_t ns, char *out, size_t cap)
{
	double v = (double)ns;

	if (v < 1e3)
		snprintf(out, cap, "%.0fns", v);
	else if (v < 1e6)
		snprintf(out, cap, "%.*fus", v < 1e4 ? 2 : v < 1e5 ? 1 : 0, v / 1e3);
	else if (v < 1e9)
		snprintf(out, cap, "%.*fms", v < 1e7 ? 2 : v < 1e8 ? 1 : 0, v / 1e6);
	else
		snprintf(out, cap, "%.2fs", v / 1e9);
}

void probe_cell_format(const struct probe_cell *pc, char *out, size_t cap)
{
	char med[16], q1[16], q3[16];
	int k;

	if (pc->deadlock_boots)
		k = snprintf(out, cap, "DEADLOCK %d/%d", pc->deadlock_boots, pc->boots);
	else if (pc->skipped == pc->calls && pc->calls)
		k = snprintf(out, cap, "n/a %d/%d", pc->boots, pc->calls);
	else if (pc->n) {
		fmt_dur(pc->median, med, sizeof(med));
		fmt_dur(pc->q1, q1, sizeof(q1));
		fmt_dur(pc->q3, q3, sizeof(q3));
		k = snprintf(out, cap, "%s (%s-%s) %d/%d", med, q1, q3, pc->boots, pc->calls);
	} else
		k = snprintf(out, cap, "- %d/%d", pc->boots, pc->calls);
	if (k > 0 && (size_t)k < cap && pc->slow)
		k += snprintf(out + k, cap - (size_t)k, " slow:%d", pc->slow);
	if (k > 0 && (size_t)k < cap && pc->hung)
		snprintf(out + k, cap - (size_t)k, " hung:%d", pc->hung);
}

/* The comma list of GROUP_CONCAT as numbers. */
static int64_t *parse_list(const char *list, size_t *n)
{
	size_t cap = 1, i;
	int64_t *v;
	char *end;

	for (i = 0; list && list[i]; i++)
		cap += list[i] == ',';
	v = malloc(cap * sizeof(*v));
	*n = 0;
	if (!v)
		return NULL;
	while (list && *list) {
		v[(*n)++] = strtoll(list, &end, 10);
		if (*end != ',')
			break;
		list = end + 1;
	}
	return v;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s ? s : "";
}

/* Read one row of cells_sql into pc; -1 when out of memory. */
static int read_cell(sqlite3_stmt *st, struct probe_cell *pc)
{
	size_t n;
	int64_t *ns = parse_list((const char *)sqlite3_column_text(st, 10), &n);

	if (!ns)
		return set_err("out of memory");
	pc->boots = sqlite3_column_int(st, 5);
	pc->calls = sqlite3_column_int(st, 6);
	pc->deadlock_boots = sqlite3_column_int(st, 7);
	pc->hung = sqlite3_column_int(st, 8);
	pc->slow = sqlite3_column_int(st, 9);
	pc->skipped = sqlite3_column_int(st, 12);
	probe_cell_quantiles(pc, ns, n);
	free(ns);
	return 0;
}

static json_object *cell_json(sqlite3_stmt *st, const struct probe_cell *pc)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "variant", json_object_new_string(col_text(st, 0)));
	json_object_object_add(o, "boot_params", json_object_new_string(col_text(st, 1)));
	json_object_object_add(o, "stage", json_object_new_int(sqlite3_column_int(st, 2)));
	json_object_object_add(o, "point", json_object_new_string(col_text(st, 3)));
	json_object_object_add(o, "prim", json_object_new_string(col_text(st, 4)));
	json_object_object_add(o, "boots", json_object_new_int(pc->boots));
	json_object_object_add(o, "calls", json_object_new_int(pc->calls));
	json_object_object_add(o, "deadlock_boots", json_object_new_int(pc->deadlock_boots));
	json_object_object_add(o, "hung", json_object_new_int(pc->hung));
	json_object_object_add(o, "slow", json_object_new_int(pc->slow));
	json_object_object_add(o, "skipped", json_object_new_int(pc->skipped));
	json_object_object_add(o, "returned", json_object_new_int((int)pc->n));
	if (pc->n) {
		json_object_object_add(o, "median_ns", json_object_new_int64(pc->median));
		json_object_object_add(o, "q1_ns", json_object_new_int64(pc->q1));
		json_object_object_add(o, "q3_ns", json_object_new_int64(pc->q3));
		json_object_object_add(o, "min_ns", json_object_new_int64(pc->min));
		json_object_object_add(o, "max_ns", json_object_new_int64(pc->max));
	}
	if (sqlite3_column_text(st, 11))
		json_object_object_add(o, "evidence", json_object_new_string(col_text(st, 11)));
	return o;
}

struct row {
	char variant[64], bp[256], point[24];
	int stage;
	char cell[NCOLS][64];
	bool used;
};

static void flush_row(struct row *r)
{
	size_t i;

	if (!r->used)
		return;
	printf("%-8s %-22s %d %-14s", r->variant, r->bp[0] ? r->bp : "-", r->stage, r->point);
	for (i = 0; i < NCOLS; i++)
		printf(" %*s", CELL_W, r->cell[i][0] ? r->cell[i] : "-");
	printf("\n");
	memset(r, 0, sizeof(*r));
}

/* Put one cell into the current row, starting a new row when the key changes. */
static void add_cell(struct row *r, sqlite3_stmt *st, const struct probe_cell *pc)
{
	const char *prim = col_text(st, 4);
	int stage = sqlite3_column_int(st, 2);
	size_t i;

	if (!r->used || strcmp(r->variant, col_text(st, 0)) || strcmp(r->bp, col_text(st, 1)) ||
	    r->stage != stage) {
		flush_row(r);
		snprintf(r->variant, sizeof(r->variant), "%s", col_text(st, 0));
		snprintf(r->bp, sizeof(r->bp), "%s", col_text(st, 1));
		snprintf(r->point, sizeof(r->point), "%s", col_text(st, 3));
		r->stage = stage;
		r->used = true;
	}
	for (i = 0; i < NCOLS; i++)
		if (!strcmp(prim, prim_cols[i]))
			probe_cell_format(pc, r->cell[i], sizeof(r->cell[i]));
}

/* Evidence lines after the table: one per deadlocked cell. */
static void add_evidence(struct buf *ev, sqlite3_stmt *st, const struct probe_cell *pc)
{
	if (!pc->deadlock_boots)
		return;
	buf_printf(ev, "  %s %s stage %d %s (%d/%d boots): %s\n", col_text(st, 0),
		   col_text(st, 1)[0] ? col_text(st, 1) : "-", sqlite3_column_int(st, 2),
		   col_text(st, 4), pc->deadlock_boots, pc->boots, col_text(st, 11));
}

int probe_table_print(sqlite3 *db, const char *matrix, const char *variant, const char *since)
{
	json_object *arr = json_output ? json_object_new_array() : NULL;
	struct row row = { 0 };
	struct buf ev = { 0 };
	struct probe_cell pc;
	sqlite3_stmt *st;
	int rows = 0, ret = 0;

	if (sqlite3_prepare_v2(db, cells_sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("sqlite: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, matrix, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, variant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, since, -1, SQLITE_STATIC);
	if (!arr)
		printf("%-8s %-22s %-16s %*s %*s %*s %*s %*s\n", "variant", "boot params", "stage",
		       CELL_W, "rcu", CELL_W, "rcu_exp", CELL_W, "srcu", CELL_W, "srcu_exp",
		       CELL_W, "tasks");
	while (!ret && sqlite3_step(st) == SQLITE_ROW) {
		if ((ret = read_cell(st, &pc)) < 0)
			break;
		rows++;
		if (arr) {
			json_object_array_add(arr, cell_json(st, &pc));
			continue;
		}
		add_cell(&row, st, &pc);
		add_evidence(&ev, st, &pc);
	}
	sqlite3_finalize(st);
	flush_row(&row);
	if (arr) {
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY));
		json_object_put(arr);
	} else if (!rows) {
		printf("(no mid-boot probe results stored)\n");
	} else {
		printf("(median (interquartile range) of the calls that returned, boots/calls;\n"
		       " DEADLOCK d/b: a call could never return in d of the cell's b boots;\n"
		       " slow:N returned after the probe's watchdog; hung:N reported hung, no verdict;\n"
		       " n/a: not callable at that stage, the probe skipped it)\n");
		if (ev.len)
			printf("Deadlock evidence:\n%s", ev.data);
	}
	buf_free(&ev);
	return ret;
}
