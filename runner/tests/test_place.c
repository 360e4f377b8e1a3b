/* test_place.c: unit tests of guest placement on synthetic hwloc host topologies. */
#include "unit.h"

#include "common.h"
#include "place.h"

static void test_within_one_node(void **state)
{
	struct placer p;
	struct placement a, b, c;

	(void)state;
	assert_int_equal(place_init(&p, "node:2 core:2 pu:1", 0), 0);
	assert_int_equal(p.npus, 4);
	assert_int_equal(p.nnodes, 2);
	assert_int_equal(place_take(&p, 2, &a), 0);
	assert_string_equal(a.cpuset, "0,1");
	assert_string_equal(a.nodeset, "0");
	assert_true(a.oversub == 1.0);
	assert_int_equal(place_take(&p, 1, &b), 0);
	assert_string_equal(b.nodeset, "1");
	/* 2 more vCPUs: only one PU left */
	assert_int_equal(place_take(&p, 2, &c), 1);
	place_release(&p, &a);
	assert_int_equal(place_take(&p, 2, &c), 0);
	assert_string_equal(c.cpuset, "0,1");
}

static void test_packs_fullest_node(void **state)
{
	struct placer p;
	struct placement a, b;

	(void)state;
	assert_int_equal(place_init(&p, "node:2 core:4 pu:1", 0), 0);
	assert_int_equal(place_take(&p, 1, &a), 0);	/* node 0 now has 3 free */
	assert_int_equal(place_take(&p, 3, &b), 0);	/* fits node 0 exactly */
	assert_string_equal(b.nodeset, "0");
	assert_string_equal(b.cpuset, "1,2,3");
}

static void test_across_nodes_and_oversubscribed(void **state)
{
	struct placer p;
	struct placement a, b;

	(void)state;
	assert_int_equal(place_init(&p, "node:2 core:2 pu:2", 0), 0);
	assert_int_equal(p.npus, 8);
	assert_int_equal(place_take(&p, 6, &a), 0);	/* no node has 6 PUs */
	assert_string_equal(a.nodeset, "0,1");
	place_release(&p, &a);
	assert_int_equal(place_take(&p, 16, &b), 0);	/* larger than the host: alone, on all */
	assert_int_equal(b.npus, 8);
	assert_true(b.oversub == 2.0);
	assert_int_equal(place_take(&p, 1, &a), 1);
}

static void test_budget(void **state)
{
	struct placer p;
	struct placement a;

	(void)state;
	assert_int_equal(place_init(&p, "node:1 core:4 pu:1", 2), 0);
	assert_int_equal(p.npus, 2);
	assert_int_equal(place_take(&p, 4, &a), 0);
	assert_true(a.oversub == 2.0);
	assert_int_equal(place_init(&p, "node:1 core:2 pu:1", 4), -1);
	assert_string_equal(last_err(), "--cpus 4: the host has only 2 PUs");
	assert_int_equal(place_init(&p, "bogus:7", 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_one_node),
		cmocka_unit_test(test_packs_fullest_node),
		cmocka_unit_test(test_across_nodes_and_oversubscribed),
		cmocka_unit_test(test_budget),
	};
	RUN_UNIT_TESTS("place", tests);
}
