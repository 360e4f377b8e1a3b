/* probetab.h: the mid-boot table: probe calls per variant, boot parameters, stage and primitive. */
#ifndef RCUWB_PROBETAB_H
#define RCUWB_PROBETAB_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* One cell: the calls of one primitive at one stage, over the boots of one variant. */
struct probe_cell {
	int boots, calls;		/* boots that reached the stage, calls stored */
	int deadlock_boots, hung, slow;	/* boots with a deadlock; calls hung (no verdict) or slow */
	int skipped;			/* calls the probe did not make (primitive not usable yet) */
	size_t n;			/* latencies of the calls that returned */
	int64_t median, q1, q3, min, max;	/* ns, nearest rank; -1 if n == 0 */
};

/* Quantiles of n latencies (sorted in place). */
void probe_cell_quantiles(struct probe_cell *pc, int64_t *ns, size_t n);
/*
 * The cell as the table prints it: "DEADLOCK d/b" when a boot deadlocked,
 * else "median (q1-q3) boots/calls", e.g. "1.84ms (1.20ms-2.00ms) 5/15", with
 * " slow:N" / " hung:N"; "n/a b/c" when the probe skipped every call.
 */
void probe_cell_format(const struct probe_cell *pc, char *out, size_t cap);

/* Print the table (or JSON) of the stored probe calls; filters may be NULL. */
int probe_table_print(sqlite3 *db, const char *matrix, const char *variant, const char *since);

#endif
