/* test_gpstats.c: unit tests of the kvm-recheck-rcuscale.sh statistics. */
#include "unit.h"

#include "gpstats.h"

/* int(n * pct / 100), at least 1: the script's definition, not ceil(). */
static void test_rank(void **state)
{
	(void)state;
	assert_int_equal(gp_rank(1, 50), 1);
	assert_int_equal(gp_rank(1, 99), 1);
	assert_int_equal(gp_rank(2, 50), 1);
	assert_int_equal(gp_rank(2, 90), 1);
	assert_int_equal(gp_rank(10, 50), 5);
	assert_int_equal(gp_rank(10, 90), 9);
	assert_int_equal(gp_rank(10, 99), 9);
	assert_int_equal(gp_rank(101, 50), 50);
	assert_int_equal(gp_rank(101, 99), 99);
	assert_int_equal(gp_rank(400, 99), 396);
}

static void test_stats(void **state)
{
	double v[] = { 10, 1, 9, 2, 8, 3, 7, 4, 6, 5 };
	struct gp_stats st;

	(void)state;
	gp_stats_compute(v, 10, &st);
	assert_int_equal(st.n, 10);
	assert_true(st.min == 1 && st.max == 10);
	assert_true(st.avg == 5.5);
	assert_true(st.p50 == 5);	/* sorted[5 - 1] */
	assert_true(st.p90 == 9);
	assert_true(st.p99 == 9);
	gp_stats_compute(v, 0, &st);
	assert_int_equal(st.n, 0);
}

static void test_ties(void **state)
{
	double v[] = { 3, 3, 3, 1 };
	struct gp_stats st;

	(void)state;
	gp_stats_compute(v, 4, &st);
	assert_true(st.p50 == 3 && st.min == 1 && st.max == 3);
}

static void test_awk_fmt(void **state)
{
	char s[64];

	(void)state;
	awk_fmt(411, s);
	assert_string_equal(s, "411");
	awk_fmt(24628.8123, s);
	assert_string_equal(s, "24628.8");
	awk_fmt(9104.34, s);
	assert_string_equal(s, "9104.34");
	awk_fmt(0.001, s);
	assert_string_equal(s, "0.001");
	awk_fmt(1234567.5, s);
	assert_string_equal(s, "1.23457e+06");
	awk_fmt(-10, s);
	assert_string_equal(s, "-10");
}

static void test_kvm_recheck_output(void **state)
{
	struct console c;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	console_init(&c);
	console_feed(&c, "[ 1] rcu-scale:    0 writer-duration:     0 1500\n"
			 "[ 1] rcu-scale:    0 writer-duration:     1 2500\n"
			 "[ 1] rcu-scale: start: 1 end: 2 duration: 1 gps: 2 batches: 9\n", 160);
	console_finish(&c);
	assert_int_equal(gp_print_kvm_recheck(f, &c), 0);
	fclose(f);
	assert_string_equal(out,
		"Histogram bucket size: 0.01\n"
		"1.5 1\n"
		"2.5 1\n"
		"Average grace-period duration: 2 microseconds\n"
		"Minimum grace-period duration: 1.5\n"
		"50th percentile grace-period duration: 1.5\n"
		"90th percentile grace-period duration: 1.5\n"
		"99th percentile grace-period duration: 1.5\n"
		"Maximum grace-period duration: 2.5\n"
		"Grace periods: 2 Batches: 1 Ratio: 2\n"
		"Computed from rcuscale printk output.\n");
	free(out);
	console_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_awk_fmt),
		cmocka_unit_test(test_kvm_recheck_output),
	};
	RUN_UNIT_TESTS("gpstats", tests);
}
