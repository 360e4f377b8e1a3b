/* test_probetab.c: unit tests of the mid-boot table's cells. */
#include "unit.h"

#include "probetab.h"

static void test_quantiles(void **state)
{
	int64_t ns[] = { 9000, 1000, 5000, 3000, 7000 };
	struct probe_cell pc = { .boots = 5, .calls = 5 };
	char out[64];

	(void)state;
	probe_cell_quantiles(&pc, ns, 5);
	assert_int_equal(pc.n, 5);
	assert_int_equal(pc.min, 1000);
	assert_int_equal(pc.max, 9000);
	/* nearest rank: sorted[max(1, int(n * p / 100))], 1-based */
	assert_int_equal(pc.q1, 1000);
	assert_int_equal(pc.median, 3000);
	assert_int_equal(pc.q3, 5000);
	probe_cell_format(&pc, out, sizeof(out));
	assert_string_equal(out, "3.00us (1.00us-5.00us) 5/5");
	pc.slow = 1;
	probe_cell_format(&pc, out, sizeof(out));
	assert_string_equal(out, "3.00us (1.00us-5.00us) 5/5 slow:1");
	pc.slow = 0;
	pc.median = 850;
	pc.q1 = 12345678;
	pc.q3 = 2368110000LL;
	probe_cell_format(&pc, out, sizeof(out));
	assert_string_equal(out, "850ns (12.3ms-2.37s) 5/5");
}

static void test_deadlock_and_empty(void **state)
{
	struct probe_cell pc = { .boots = 5, .calls = 5, .deadlock_boots = 5 };
	char out[64];

	(void)state;
	probe_cell_quantiles(&pc, NULL, 0);
	assert_int_equal(pc.median, -1);
	probe_cell_format(&pc, out, sizeof(out));
	assert_string_equal(out, "DEADLOCK 5/5");
	pc.deadlock_boots = 0;
	pc.hung = 2;
	probe_cell_format(&pc, out, sizeof(out));
	assert_string_equal(out, "- 5/5 hung:2");
	pc.hung = 0;
	pc.skipped = 5;
	probe_cell_format(&pc, out, sizeof(out));
	assert_string_equal(out, "n/a 5/5");
	pc.hung = 2;
	pc.skipped = 0;
	/* a short buffer truncates, never overflows */
	probe_cell_format(&pc, out, 4);
	assert_string_equal(out, "- 5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_deadlock_and_empty),
	};
	RUN_UNIT_TESTS("probetab", tests);
}
