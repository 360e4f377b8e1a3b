/* test_place.c: unit tests of guest placement on synthetic hwloc host topologies. */
#include "unit.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* A lock directory of this test's own, so that no real runner is disturbed. */
static void lock_dir(char *dir, size_t cap)
{
	snprintf(dir, cap, "/tmp/rcuwb-test-pulock-%d", (int)getpid());
	assert_int_equal(setenv("RCUWB_PU_LOCKS", dir, 1), 0);
}

/* Remove the test's lock directory (its pu-N.lock files too). */
static void rm_lock_dir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Two runners (two sets of locks: flock conflicts between open files even in one process). */
static void test_two_runners_share_pus(void **state)
{
	struct pulocks la, lb;
	struct placer a, b;
	struct placement pa, pb, pc;
	char dir[64];

	(void)state;
	lock_dir(dir, sizeof(dir));
	assert_int_equal(pulock_init(&la), 0);
	assert_int_equal(pulock_init(&lb), 0);
	assert_string_equal(la.dir, dir);
	assert_int_equal(place_init(&a, "node:1 core:2 pu:1", 0), 0);
	assert_int_equal(place_init(&b, "node:1 core:2 pu:1", 0), 0);
	a.locks = &la;
	b.locks = &lb;
	assert_int_equal(place_take(&a, 1, &pa), 0);
	assert_string_equal(pa.cpuset, "0");
	/* b sees PU 0 held: a 2-vCPU guest must wait, a 1-vCPU one gets PU 1 */
	assert_int_equal(place_take(&b, 2, &pb), 1);
	assert_int_equal(b.nbusy, 0);
	assert_int_equal(place_take(&b, 1, &pb), 0);
	assert_string_equal(pb.cpuset, "1");
	/* now a cannot place anything, and its failed try left PU 0 as it was */
	assert_int_equal(place_take(&a, 1, &pc), 1);
	assert_int_equal(pulock_try(&lb, 0), 0);
	place_release(&a, &pa);
	place_release(&b, &pb);
	assert_int_equal(place_take(&b, 2, &pb), 0);
	assert_string_equal(pb.cpuset, "0,1");
	assert_int_equal(place_take(&a, 1, &pa), 1);
	place_release(&b, &pb);
	pulock_fini(&la);
	pulock_fini(&lb);
	rm_lock_dir(dir);
}

/* A runner that dies holds nothing: the kernel drops its locks. */
static void test_dead_runner_releases(void **state)
{
	struct pulocks l;
	char dir[64];
	int status;
	pid_t pid;

	(void)state;
	lock_dir(dir, sizeof(dir));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pulocks c;

		_exit(pulock_init(&c) == 0 && pulock_try(&c, 3) == 1 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(pulock_init(&l), 0);
	assert_int_equal(pulock_try(&l, 3), 1);
	assert_int_equal(pulock_try(&l, 3), 1);	/* already ours */
	assert_int_equal(pulock_try(&l, PULOCK_MAX), -1);
	pulock_fini(&l);
	rm_lock_dir(dir);
}

/* A lock directory that cannot be made is one clear error. */
static void test_bad_lock_dir(void **state)
{
	struct pulocks l;

	(void)state;
	assert_int_equal(setenv("RCUWB_PU_LOCKS", "/proc/rcuwb-no/pus", 1), 0);
	assert_int_equal(pulock_init(&l), -1);
	assert_non_null(strstr(last_err(), "set RCUWB_PU_LOCKS to a writable directory"));
}

/* The per-boot directory every rcuwb process shares: the environment's, made when missing. */
static void test_runtime_dir(void **state)
{
	char want[64], got[PATH_MAX];
	struct stat st;

	(void)state;
	snprintf(want, sizeof(want), "/tmp/rcuwb-test-runtime-%d/accel", (int)getpid());
	assert_int_equal(setenv("RCUWB_TEST_RUNTIME", want, 1), 0);
	assert_int_equal(runtime_dir("RCUWB_TEST_RUNTIME", "accel", got, sizeof(got)), 0);
	assert_string_equal(got, want);
	assert_int_equal(stat(got, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(rmdir(got), 0);
	*strrchr(want, '/') = '\0';
	assert_int_equal(rmdir(want), 0);
	assert_int_equal(setenv("RCUWB_TEST_RUNTIME", "/proc/rcuwb-no/accel", 1), 0);
	assert_int_equal(runtime_dir("RCUWB_TEST_RUNTIME", "accel", got, sizeof(got)), -1);
	assert_non_null(strstr(last_err(), "/proc/rcuwb-no"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_one_node),
		cmocka_unit_test(test_packs_fullest_node),
		cmocka_unit_test(test_across_nodes_and_oversubscribed),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_two_runners_share_pus),
		cmocka_unit_test(test_dead_runner_releases),
		cmocka_unit_test(test_bad_lock_dir),
		cmocka_unit_test(test_runtime_dir),
	};
	RUN_UNIT_TESTS("place", tests);
}
