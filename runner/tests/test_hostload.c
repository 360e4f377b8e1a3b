/* test_hostload.c: unit tests of the other-processes CPU accounting on a fake /proc. */
#define _GNU_SOURCE
#include "unit.h"

#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "hostload.h"

static char root[64];

static void put(const char *rel, const char *data, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void proc(int pid, const char *comm, unsigned flags, unsigned long long utime,
		 unsigned long long stime, long long cutime, unsigned long long start)
{
	char rel[128], line[512];
	int n;

	snprintf(rel, sizeof(rel), "%s/%d", root, pid);
	mkdir(rel, 0755);
	n = snprintf(line, sizeof(line), "%d (%s) S 1 %d %d 0 -1 %u 10 0 0 0 %llu %llu %lld 0 20 0 1 0 %llu "
		     "1000 100 18446744073709551615\n", pid, comm, pid, pid, flags, utime, stime, cutime, start);
	snprintf(rel, sizeof(rel), "%d/stat", pid);
	put(rel, line, (size_t)n);
}

static void cmdline(int pid, const char *args, size_t len)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/cmdline", pid);
	put(rel, args, len);
}

static const char our_qemu[] = "qemu-system-x86_64\0-name\0guest=rcuwb-20261203-121514-4242-7,debug-threads=on\0";
static const char their_qemu[] = "qemu-system-x86_64\0-name\0guest=rcuwb-20261203-121514-999-1,debug-threads=on\0";

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/rcuwb-proc-XXXXXX");
	assert_non_null(mkdtemp(root));
	put("stat", "cpu 1 2 3\n", 10);	/* not a process */
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_other_processes_only(void **state)
{
	struct load_snap a, b;

	(void)state;
	proc(1, "init", 0, 10, 5, 1000, 1);
	proc(42, "rcuwb", 0, 500, 10, 0, 50);				/* the runner itself */
	proc(100, "weird) (name", 0, 100, 0, 0, 60);			/* parentheses in comm */
	proc(200, "qemu-system-x86", 0, 9000, 100, 0, 70);		/* our guest */
	cmdline(200, our_qemu, sizeof(our_qemu));
	proc(201, "qemu-system-x86", 0, 300, 0, 0, 71);			/* another runner's */
	cmdline(201, their_qemu, sizeof(their_qemu));
	proc(300, "libvirtd", 0, 700, 0, 90000, 5);
	proc(400, "kworker/0:1", 0x00208040, 800, 0, 0, 2);		/* kernel thread */
	proc(600, "make", 0, 5, 0, 40, 80);
	assert_int_equal(load_snapshot(root, 42, "-4242-", &a), 0);
	assert_int_equal(a.n, 4);	/* 1, 100, 201, 600 */
	assert_int_equal(a.procs[0].pid, 1);
	assert_int_equal(a.procs[0].ticks, 15);	/* pid 1: without the QEMUs it reaped */
	assert_int_equal(a.procs[1].pid, 100);
	assert_int_equal(a.procs[3].ticks, 45);	/* reaped children count */

	proc(1, "init", 0, 11, 5, 99000, 1);		/* +1, and reaped our QEMU */
	proc(42, "rcuwb", 0, 900, 10, 0, 50);
	proc(100, "weird) (name", 0, 150, 0, 0, 60);	/* +50 */
	proc(200, "qemu-system-x86", 0, 19000, 100, 0, 70);
	proc(201, "qemu-system-x86", 0, 320, 0, 0, 71);	/* +20 */
	proc(300, "libvirtd", 0, 900, 0, 99000, 5);
	proc(400, "kworker/0:1", 0x00208040, 5000, 0, 0, 2);
	proc(500, "Rscript", 0, 25, 5, 0, 90);		/* new: +30 */
	proc(600, "make", 0, 7, 0, 0, 95);		/* pid reused: +7 */
	proc(700, "qemu-system-x86", 0, 4000, 50, 0, 96);	/* an exited QEMU, not yet reaped */
	cmdline(700, "", 0);
	assert_int_equal(load_snapshot(root, 42, "-4242-", &b), 0);
	assert_int_equal(b.n, 5);
	assert_true(load_other_cpu_s(&a, &b, 100) > 1.079 && load_other_cpu_s(&a, &b, 100) < 1.081);
	/* nothing moved: zero */
	assert_true(load_other_cpu_s(&b, &b, 100) == 0);
	load_snap_free(&a);
	load_snap_free(&b);
}

static void test_unknown_and_threshold(void **state)
{
	struct load_snap a = { 0 }, b = { 0 };

	(void)state;
	assert_true(load_other_pus(&a, &b) < 0);	/* no snapshots: unknown */
	assert_int_equal(load_snapshot("/nonexistent-proc", 1, "-1-", &a), -1);
	assert_true(a.t == 0 && load_other_pus(&a, &b) < 0);
	assert_false(load_is_busy(-1, 2));
	assert_false(load_is_busy(0.09, 2));		/* under 5% of 2 PUs */
	assert_true(load_is_busy(0.11, 2));
	assert_false(load_is_busy(1.5, 64));
	assert_false(load_is_busy(5, 0));		/* host size unknown */
}

static void test_real_proc(void **state)
{
	struct load_snap a, b;
	size_t i;

	(void)state;
	assert_int_equal(load_snapshot("/proc", (int)getpid(), "-none-", &a), 0);
	assert_true(a.n > 0 && a.t > 0);
	for (i = 1; i < a.n; i++)
		assert_true(a.procs[i - 1].pid < a.procs[i].pid);
	for (i = 0; i < a.n; i++)
		assert_true(a.procs[i].pid != (int)getpid());
	assert_int_equal(load_snapshot("/proc", (int)getpid(), "-none-", &b), 0);
	assert_true(load_other_pus(&a, &b) >= 0);
	load_snap_free(&a);
	load_snap_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_other_processes_only, setup, teardown),
		cmocka_unit_test(test_unknown_and_threshold),
		cmocka_unit_test(test_real_proc),
	};
	RUN_UNIT_TESTS("hostload", tests);
}
