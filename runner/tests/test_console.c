/* test_console.c: unit tests of the console parser (rcuscale, probe, badness, topology). */
#include "unit.h"

#include "console.h"
#include "gpstats.h"

static void feed_all(struct console *c, const char *s, size_t len)
{
	console_init(c);
	assert_int_equal(console_feed(c, s, len), 0);
	assert_int_equal(console_finish(c), 0);
}

#define FEED(c, lit) feed_all(c, lit, sizeof(lit) - 1)

static void test_samples_and_summary(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[    6.1] rcu-scale:    0 writer-duration:     0 1500\n"
		 "[    6.2] rcu-scale:    1 writer-duration:     7 2500\r\n"
		 "[    6.3] rcu-scale: start: 10 end: 30 duration: 20 gps: 411 batches: 213\n");
	assert_int_equal(c.nsamples, 2);
	assert_int_equal(c.samples[1].writer, 1);
	assert_int_equal(c.samples[1].seq, 7);
	assert_true(c.samples[1].ns == 2500);
	assert_true(c.have_summary);
	assert_int_equal(c.gps, 411);
	assert_int_equal(c.batches, 213);
	assert_int_equal(c.duration_ns, 20);
	console_free(&c);
}

/* A line may arrive in any number of pieces. */
static void test_split_feed(void **state)
{
	static const char log[] = "[ 1.0] rcu-scale:    0 writer-duration:     0 123456\n"
				  "[ 1.1] smp: Brought up 2 nodes, 4 CPUs\n";
	struct console c;
	size_t i;

	(void)state;
	console_init(&c);
	for (i = 0; i < sizeof(log) - 1; i++)
		assert_int_equal(console_feed(&c, log + i, 1), 0);
	console_finish(&c);
	assert_int_equal(c.nsamples, 1);
	assert_true(c.samples[0].ns == 123456);
	assert_int_equal(c.smp_cpus, 4);
	assert_int_equal(c.smp_nodes, 2);
	console_free(&c);
}

/* A guest that prints megabytes without a newline: the line is cut, the runner does not grow, parsing goes on. */
static void test_flood_without_newline(void **state)
{
	static const char after[] = "\n[ 2.0] rcu-scale:    0 writer-duration:     0 4242\n";
	char chunk[65536];
	struct console c;
	int i;

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	console_init(&c);
	for (i = 0; i < 64; i++)	/* 4 MiB */
		assert_int_equal(console_feed(&c, chunk, sizeof(chunk)), 0);
	assert_true(c.line.cap <= 8192);
	assert_int_equal(console_feed(&c, after, sizeof(after) - 1), 0);
	console_finish(&c);
	assert_int_equal(c.nsamples, 1);
	assert_true(c.samples[0].ns == 4242);
	console_free(&c);
}

/* awk counts a last line without newline; a truncated number keeps its prefix. */
static void test_truncated_last_line(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[ 1.0] rcu-scale:    0 writer-duration:     0 1000\n"
		 "[ 1.0] rcu-scale:    0 writer-duration:     1 20");
	assert_int_equal(c.nsamples, 2);
	assert_true(c.samples[1].ns == 20);
	assert_false(c.have_summary);
	console_free(&c);
}

/* Another CPU's printk inside the line: fields shift as they do for awk. */
static void test_interleaved_printk(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[ 1.0] rcu-scale:    0 writer-dur[ 1.0] random: crng init done\n"
		 "ation:     0 1000\n"
		 "[ 1.1] foo rcu-scale:    0 writer-duration:     1 3000\n");
	/* only the third line matches; "foo" shifts the fields: $5 is the "1" */
	assert_int_equal(c.nsamples, 1);
	assert_true(c.samples[0].ns == 1);
	assert_int_equal(c.samples[0].writer, 0);
	console_free(&c);
}

static void test_missing_summary(void **state)
{
	struct console c;
	double *us;
	struct gp_stats st;

	(void)state;
	FEED(&c, "[ 1.0] rcu-scale:    0 writer-duration:     0 1000\n");
	assert_false(c.have_summary);
	us = gp_samples_us(&c);
	gp_stats_compute(us, c.nsamples, &st);
	assert_int_equal(st.n, 1);
	assert_true(st.p50 == 1.0 && st.p99 == 1.0);
	free(us);
	console_free(&c);
}

static void test_nul_bytes(void **state)
{
	static const char log[] = "[ 1.0] rcu-scale:    0 writer-duration:     0 1\0" "000\n"
				  "\0\0\0[ 2.0] smp: Brought up 1 node, 2 CPUs\n"
				  "[ 3.0] rcu-scale:\0 0 writer-duration: 0 5000\n";
	struct console c;

	(void)state;
	feed_all(&c, log, sizeof(log) - 1);
	/* NUL ends the number's prefix; "-scale:\0" is not "-scale: " */
	assert_int_equal(c.nsamples, 1);
	assert_true(c.samples[0].ns == 1);
	assert_int_equal(c.smp_cpus, 2);
	assert_int_equal(c.smp_nodes, 1);
	console_free(&c);
}

static void test_awk_strtonum(void **state)
{
	(void)state;
	assert_true(awk_strtonum("123", 3) == 123);
	assert_true(awk_strtonum("12abc", 5) == 12);
	assert_true(awk_strtonum("0x1A", 4) == 0);
	assert_true(awk_strtonum("1e3", 3) == 1000);
	assert_true(awk_strtonum("1e", 2) == 1);
	assert_true(awk_strtonum(".5", 2) == 0.5);
	assert_true(awk_strtonum("-7", 2) == -7);
	assert_true(awk_strtonum("inf", 3) == 0);
	assert_true(awk_strtonum("writer-duration:", 16) == 0);
	assert_true(awk_strtonum("", 0) == 0);
}

static void test_errors_and_abort(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[ 0.7] rcu-scale:!!! All grace periods expedited, no normal ones to measure!\n"
		 "[ 0.8] rcu-scale:!!! out of memory\n");
	assert_int_equal(c.nerrors, 2);
	assert_true(c.aborted);
	assert_string_equal(c.abort_msg, "All grace periods expedited, no normal ones to measure!");
	assert_string_equal(c.first_error, "All grace periods expedited, no normal ones to measure!");
	console_free(&c);
}

/* A pre-5.11 kernel's rcuperf prints "rcu-perf: " lines: read with its prefix, and only then. */
static void test_rcuperf_prefix(void **state)
{
	static const char log[] = "[ 6.1] rcu-perf:    0 writer-duration:     0 1500\n"
				  "[ 6.3] rcu-perf: start: 10 end: 30 duration: 20 gps: 411 batches: 213\n"
				  "[ 6.4] rcu-perf:!!! All grace periods expedited, no normal ones to measure!\n";
	struct console c;

	(void)state;
	FEED(&c, log);
	assert_int_equal(c.nsamples, 0);
	assert_false(c.have_summary || c.aborted);
	console_free(&c);
	console_init(&c);
	console_set_prefix(&c, "rcu-perf");
	assert_int_equal(console_feed(&c, log, sizeof(log) - 1), 0);
	assert_int_equal(c.nsamples, 1);
	assert_true(c.samples[0].ns == 1500);
	assert_int_equal(c.gps, 411);
	assert_true(c.aborted);
	console_free(&c);
}

/* 9683937df9eb: at cleanup the same message only warns. */
static void test_deferred_check_warns(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[ 6.0] rcu-scale: Test complete\n"
		 "[ 6.1] rcu-scale:!!! All grace periods normal, no expedited ones to measure!\n"
		 "[ 6.2] rcu-scale:    0 writer-duration:     0 1500\n");
	assert_false(c.aborted);
	assert_int_equal(c.nerrors, 1);
	assert_int_equal(c.nsamples, 1);
	console_free(&c);
}

static void test_badness(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[ 1.0] WARNING: CPU: 0 PID: 1 at kernel/rcu/tree.c:123 foo\n"
		 "[ 2.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n"
		 "[ 3.0] Kernel panic - not syncing: boom\n"
		 "[ 4.0] BUG: kernel NULL pointer dereference\n");
	assert_int_equal(c.bad_count[BAD_WARNING], 1);
	assert_int_equal(c.bad_count[BAD_STALL], 1);
	assert_int_equal(c.bad_count[BAD_PANIC], 1);
	assert_int_equal(c.bad_count[BAD_BUG], 1);
	assert_string_equal(c.first_bad, "WARNING: CPU: 0 PID: 1 at kernel/rcu/tree.c:123 foo");
	console_free(&c);
}

static void test_guest_lines(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[    1.235828] Run /init as init process\n"
		 "rcuwb-init: up cpus=0-3 nodes=0-1\r\n"
		 "[    6.7] reboot: Power down\n");
	assert_true(c.boot_time_s > 1.2358 && c.boot_time_s < 1.2359);
	assert_true(c.init_up);
	assert_string_equal(c.init_cpus, "0-3");
	assert_string_equal(c.init_nodes, "0-1");
	assert_true(c.power_down);
	console_free(&c);
}

static void test_probe_lines(void **state)
{
	struct console c;
	const struct probe_result *first = NULL;

	(void)state;
	FEED(&c, "[ 0.1] midboot-probe: state stage=2 point=kthreads caller=swapper/0 pid=1 cpus=2 gp_kthread=1 wq_workers=4 sched=init gp_exp=1 gp_normal=0\n"
		 "[ 0.1] midboot-probe: stage=2 point=kthreads prim=synchronize_rcu ns=4200 gp_exp=1 gp_normal=0 sched=init clock=local_clock\n"
		 "[ 5.1] midboot-probe: HUNG stage=1 point=dead-zone prim=synchronize_rcu_expedited after_s=5\n"
		 "[ 9.0] midboot-probe: done\n");
	assert_int_equal(c.nprobes, 2);
	assert_int_equal(c.probes[0].call, 1);	/* no call=: the first */
	assert_false(c.probes[0].skipped);
	assert_int_equal(c.probes[0].stage, 2);
	assert_string_equal(c.probes[0].point, "kthreads");
	assert_string_equal(c.probes[0].prim, "synchronize_rcu");
	assert_int_equal(c.probes[0].ns, 4200);
	assert_int_equal(c.probes[0].gp_exp, 1);
	assert_int_equal(c.probes[0].gp_normal, 0);
	assert_string_equal(c.probes[0].sched, "init");
	assert_false(c.probes[0].hung);
	assert_int_equal(console_hung(&c, &first), 1);
	assert_int_equal(first->stage, 1);
	assert_string_equal(first->prim, "synchronize_rcu_expedited");
	assert_int_equal(console_deadlocks(&c, NULL), 0);	/* a HUNG line alone is no verdict */
	assert_true(c.probe_done);
	console_free(&c);
}

/* A HUNG line, RCU's diagnostics, and whether they make the deadlock certain. */
static void test_probe_evidence(void **state)
{
	struct console c;
	const struct probe_result *first = NULL;

	(void)state;
	/* normal GP, no GP kthread, the boot task waits: certain */
	FEED(&c, "[ 3.4] midboot-probe: HUNG stage=1 point=dead-zone prim=synchronize_rcu call=1 after_s=3 caller_pid=1 gp_kthread=0 wq_workers=2 needs=gp_kthread missing=1\n"
		 "[ 3.4] rcu: rcu_preempt: wait state: RCU_GP_IDLE(0) ->state: 0x1ffff ->rt_priority 255\n"
		 "[ 3.4] midboot-probe: diag end\n");
	assert_int_equal(console_deadlocks(&c, &first), 1);
	assert_int_equal(first->caller_pid, 1);
	assert_string_equal(first->needs, "gp_kthread");
	assert_non_null(strstr(first->evidence_text, "grace-period kthread"));
	console_free(&c);

	/* the same, but the verdict waits for the end of the diagnostics */
	FEED(&c, "[ 3.4] midboot-probe: HUNG stage=1 point=dead-zone prim=synchronize_rcu call=1 after_s=3 caller_pid=1 gp_kthread=0 wq_workers=2 needs=gp_kthread missing=1\n");
	assert_int_equal(console_deadlocks(&c, NULL), 0);
	console_free(&c);

	/* expedited GP handed to rcu_gp_wq before any worker exists: certain */
	FEED(&c, "[ 3.4] midboot-probe: HUNG stage=0 point=pre-workqueues prim=synchronize_rcu_expedited call=1 after_s=3 caller_pid=1 gp_kthread=0 wq_workers=0 needs=exp missing=1\n"
		 "[ 3.4] workqueue rcu_gp: flags=0x8\n"
		 "[ 3.4]   pwq 0: cpus=0 node=0 flags=0x4 nice=0 active=1/256 refcnt=2\n"
		 "[ 3.4]     pending: 0xffffffff81076cfe\n"
		 "[ 3.4] midboot-probe: diag end\n");
	assert_int_equal(console_deadlocks(&c, &first), 1);
	assert_non_null(strstr(first->evidence_text, "rcu_gp_wq"));
	console_free(&c);

	/* no worker, but nothing pending on rcu_gp_wq: only suspected */
	FEED(&c, "[ 3.4] midboot-probe: HUNG stage=0 point=pre-workqueues prim=synchronize_rcu_expedited call=1 after_s=3 caller_pid=1 gp_kthread=0 wq_workers=0 needs=exp missing=1\n"
		 "[ 3.4] workqueue events: flags=0x0\n"
		 "[ 3.4]     pending: 0xffffffff81000000\n"
		 "[ 3.4] midboot-probe: diag end\n");
	assert_int_equal(console_hung(&c, NULL), 1);
	assert_int_equal(console_deadlocks(&c, NULL), 0);
	console_free(&c);

	/* the kthread exists, or the caller is not the boot task: no verdict */
	FEED(&c, "[ 3.4] midboot-probe: HUNG stage=2 point=kthreads prim=synchronize_rcu call=1 after_s=3 caller_pid=1 gp_kthread=1 wq_workers=4 needs=gp_kthread missing=0\n"
		 "[ 3.4] midboot-probe: diag end\n"
		 "[ 9.4] midboot-probe: HUNG stage=4 point=after-boot prim=synchronize_rcu call=2 after_s=3 caller_pid=77 gp_kthread=0 wq_workers=4 needs=gp_kthread missing=1\n"
		 "[ 9.4] midboot-probe: diag end\n");
	assert_int_equal(console_hung(&c, NULL), 2);
	assert_int_equal(console_deadlocks(&c, NULL), 0);
	console_free(&c);
}

/* A primitive the probe could not call at a stage is skipped, not ok. */
static void test_probe_skipped(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[ 0.3] midboot-probe: stage=0 point=pre-workqueues prim=synchronize_rcu_tasks skipped=not-initialized\n");
	assert_int_equal(c.nprobes, 1);
	assert_true(c.probes[0].skipped);
	assert_int_equal(c.probes[0].ns, -1);
	assert_int_equal(console_hung(&c, NULL), 0);
	console_free(&c);
}

/* A call that returns after its watchdog fired is slow, with its latency. */
static void test_probe_slow(void **state)
{
	struct console c;

	(void)state;
	FEED(&c, "[ 3.4] midboot-probe: HUNG stage=1 point=dead-zone prim=synchronize_rcu call=1 after_s=3 caller_pid=1 gp_kthread=0 wq_workers=2 needs=gp_kthread missing=1\n"
		 "[ 3.4] midboot-probe: diag end\n"
		 "[ 4.0] midboot-probe: stage=1 point=dead-zone prim=synchronize_rcu call=1 ns=3600000000 gp_exp=0 gp_normal=0 sched=init clock=local_clock\n"
		 "[ 4.0] midboot-probe: stage=1 point=dead-zone prim=synchronize_rcu call=2 ns=1000 gp_exp=0 gp_normal=0 sched=init clock=local_clock\n");
	assert_int_equal(c.nprobes, 2);
	assert_true(c.probes[0].slow);
	assert_false(c.probes[0].hung);
	assert_false(c.probes[0].evidence);
	assert_int_equal(c.probes[0].ns, 3600000000LL);
	assert_int_equal(c.probes[1].call, 2);
	assert_false(c.probes[1].slow);
	assert_int_equal(console_hung(&c, NULL), 0);
	console_free(&c);
}

/* The real log of a 4-vCPU, 2-node TCG guest (runner/tests/data). */
static void test_real_log(void **state)
{
	struct console c;
	struct gp_stats st;
	double *us;

	(void)state;
	console_init(&c);
	assert_int_equal(console_parse_file(&c, RCUWB_TESTDATA "/tcg-v4-n2-normal.log"), 0);
	assert_true(c.nsamples > 400);
	assert_true(c.have_summary);
	assert_int_equal((size_t)c.gps, c.nsamples);
	assert_int_equal(c.smp_cpus, 4);
	assert_int_equal(c.smp_nodes, 2);
	assert_true(c.power_down);
	us = gp_samples_us(&c);
	gp_stats_compute(us, c.nsamples, &st);
	assert_true(st.min <= st.p50 && st.p50 <= st.p90 && st.p90 <= st.p99 && st.p99 <= st.max);
	free(us);
	console_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_and_summary),
		cmocka_unit_test(test_split_feed),
		cmocka_unit_test(test_flood_without_newline),
		cmocka_unit_test(test_truncated_last_line),
		cmocka_unit_test(test_interleaved_printk),
		cmocka_unit_test(test_missing_summary),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_awk_strtonum),
		cmocka_unit_test(test_errors_and_abort),
		cmocka_unit_test(test_rcuperf_prefix),
		cmocka_unit_test(test_deferred_check_warns),
		cmocka_unit_test(test_badness),
		cmocka_unit_test(test_guest_lines),
		cmocka_unit_test(test_probe_lines),
		cmocka_unit_test(test_probe_evidence),
		cmocka_unit_test(test_probe_slow),
		cmocka_unit_test(test_probe_skipped),
		cmocka_unit_test(test_real_log),
	};
	RUN_UNIT_TESTS("console", tests);
}
