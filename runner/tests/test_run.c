/* test_run.c: unit tests of topologies, cell keys, command lines and outcome classification. */
#include "unit.h"

#include "common.h"
#include "run.h"
#include "topo.h"

static void test_topo_make(void **state)
{
	struct guest_topo t;
	char key[48];

	(void)state;
	assert_int_equal(topo_make(&t, 4, 2, 512, 0, 0, 0), 0);
	assert_int_equal(t.nnodes, 2);
	assert_int_equal(t.sockets, 2);
	assert_int_equal(t.cores, 2);
	assert_int_equal(t.cells[1].first_cpu, 2);
	assert_int_equal(t.cells[1].ncpus, 2);
	assert_int_equal(t.cells[1].mem_mib, 256);
	topo_key(&t, key, sizeof(key));
	assert_string_equal(key, "v4-n2");

	assert_int_equal(topo_make(&t, 2, 0, 512, 0, 0, 0), 0);
	assert_int_equal(t.nnodes, 0);
	topo_key(&t, key, sizeof(key));
	assert_string_equal(key, "v2-n1");

	assert_int_equal(topo_make(&t, 8, 2, 512, 2, 2, 2), 0);
	topo_key(&t, key, sizeof(key));
	assert_string_equal(key, "v8-n2-s2c2t2");
}

static void test_topo_errors(void **state)
{
	struct guest_topo t;

	(void)state;
	assert_int_equal(topo_make(&t, 3, 2, 512, 0, 0, 0), -1);
	assert_non_null(strstr(last_err(), "3 vcpus do not split evenly over 2 NUMA nodes"));
	assert_int_equal(topo_make(&t, 65, 0, 512, 0, 0, 0), -1);
	assert_non_null(strstr(last_err(), "vcpus 65 out of range"));
	assert_int_equal(topo_make(&t, 4, 4, 128, 0, 0, 0), -1);
	assert_non_null(strstr(last_err(), "memory 128 MiB too small"));
	assert_int_equal(topo_make(&t, 4, 0, 512, 3, 0, 0), -1);
	assert_non_null(strstr(last_err(), "!= vcpus 4"));
}

static void test_cpulist(void **state)
{
	unsigned long long m;

	(void)state;
	assert_int_equal(parse_cpulist("0-3", &m), 0);
	assert_true(m == 0xf);
	assert_int_equal(parse_cpulist("0,2-3", &m), 0);
	assert_true(m == 0xd);
	assert_int_equal(parse_cpulist("3-1", &m), -1);
	assert_int_equal(parse_cpulist("x", &m), -1);
}

static void test_cmdline_and_cell(void **state)
{
	struct run_spec s;
	char buf[512];

	(void)state;
	run_spec_init(&s);
	s.gp = GP_EXPEDITED;
	s.nwriters = 2;
	snprintf(s.boot_params, sizeof(s.boot_params), "rcupdate.rcu_normal=1");
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	/* holdoff "boot" (the default): 2 s, past the end of boot in both modes */
	assert_string_equal(buf, "console=ttyS0 panic=-1 rcuscale.gp_exp=1 rcuscale.holdoff=2 "
			    "rcuscale.nreaders=0 rcuscale.nwriters=2 rcuscale.shutdown=1 rcupdate.rcu_normal=1");
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/expedited/w2-r0/rcupdate.rcu_normal=1");
	s.gp = GP_NORMAL;
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, " rcuscale.holdoff=2 "));
	s.holdoff_s = 3;
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, " rcuscale.holdoff=3 "));
	s.emulator_apart = true;
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/normal/w2-r0-ea/rcupdate.rcu_normal=1");
	s.emulator_apart = false;
	/* rcuscale.minruntime: passed to rcuscale runs, and a cell of its own */
	s.minruntime_s = 1;
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, " rcuscale.minruntime=1"));
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/normal/w2-r0-m1/rcupdate.rcu_normal=1");
	s.kind = RUN_PROBE;
	snprintf(s.probe_stages, sizeof(s.probe_stages), "1");
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	assert_null(strstr(buf, "minruntime"));
	s.kind = RUN_RCUSCALE;
	s.minruntime_s = 0;
	s.gp = GP_EXPEDITED;

	s.kind = RUN_PROBE;
	snprintf(s.probe_stages, sizeof(s.probe_stages), "12");
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, " rcuscale.shutdown=0 midboot.stages=12 midboot.watchdog_s=5 midboot.shutdown=1"));
	/* probe boots run no rcuscale writers, whatever nwriters says */
	assert_non_null(strstr(buf, " rcuscale.nwriters=0 "));
	assert_null(strstr(buf, "rcuscale.nwriters=2"));
	assert_null(strstr(buf, "midboot.calls"));
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/probe-12/rcupdate.rcu_normal=1");
	s.probe_calls = 3;
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, " midboot.calls=3"));
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/probe-12-x3/rcupdate.rcu_normal=1");
	s.probe_calls = 1;
	assert_true(run_probe_stages_ok("01234"));
	assert_true(run_probe_stages_ok("0"));
	assert_false(run_probe_stages_ok(""));
	assert_false(run_probe_stages_ok("5"));
	assert_false(run_probe_stages_ok("11"));
	assert_false(run_probe_stages_ok("012345"));

	/* a Kconfig scenario other than tiny is a cell of its own; tiny keeps the old names */
	snprintf(s.kconfig, sizeof(s.kconfig), "tree");
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/probe-12/k=tree/rcupdate.rcu_normal=1");
	s.kind = RUN_RCUSCALE;
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/expedited/w2-r0/k=tree/rcupdate.rcu_normal=1");
	snprintf(s.kconfig, sizeof(s.kconfig), "tiny");
	run_cell_key(&s, buf, sizeof(buf));
	assert_string_equal(buf, "v2-n1/expedited/w2-r0/rcupdate.rcu_normal=1");
	s.kconfig[0] = '\0';

	/* a pre-5.11 kernel takes rcuperf's parameters */
	{
		struct kernel_build k = { .param_prefix = "rcuperf" };

		s.kernel = &k;
		assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
		assert_string_equal(buf, "console=ttyS0 panic=-1 rcuperf.gp_exp=1 rcuperf.holdoff=3 "
				    "rcuperf.nreaders=0 rcuperf.nwriters=2 rcuperf.shutdown=1 rcupdate.rcu_normal=1");
		s.kernel = NULL;
	}

	s.kind = RUN_BOOT;
	assert_int_equal(run_cmdline(&s, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "rcuscale.holdoff=3600"));
	assert_non_null(strstr(buf, "rcuwb_poweroff"));
	assert_int_equal(run_cmdline(&s, buf, 20), -1);
}

static void classify(const char *log, enum run_kind kind, enum guest_end end, struct run_result *r)
{
	struct run_spec s;
	struct console c;

	run_spec_init(&s);
	topo_make(&s.topo, 4, 2, 512, 0, 0, 0);
	s.kind = kind;
	console_init(&c);
	console_feed(&c, log, strlen(log));
	console_finish(&c);
	run_classify(&s, &c, end, "end detail", r);
	console_free(&c);
}

#define GOOD "[ 0.4] smp: Brought up 2 nodes, 4 CPUs\n" \
	     "[ 6.0] rcu-scale:    0 writer-duration:     0 1500\n" \
	     "[ 6.1] rcu-scale: start: 1 end: 2 duration: 1 gps: 1 batches: 1\n"

static void test_classify(void **state)
{
	struct run_result r;

	(void)state;
	classify(GOOD, RUN_RCUSCALE, END_SHUTDOWN, &r);
	assert_int_equal(r.outcome, OUT_OK);
	classify(GOOD, RUN_RCUSCALE, END_TIMEOUT, &r);
	assert_int_equal(r.outcome, OUT_TIMEOUT);
	classify("[ 0.4] smp: Brought up 1 node, 4 CPUs\n", RUN_RCUSCALE, END_SHUTDOWN, &r);
	assert_int_equal(r.outcome, OUT_TOPOLOGY_MISMATCH);
	assert_string_equal(r.detail, "asked for 4 vCPUs on 2 nodes, guest brought up 4 CPUs on 1 nodes");
	classify(GOOD "[ 7] Kernel panic - not syncing: x\n", RUN_RCUSCALE, END_EARLY, &r);
	assert_int_equal(r.outcome, OUT_CRASH);
	classify(GOOD "[ 7] WARNING: at foo\n", RUN_RCUSCALE, END_SHUTDOWN, &r);
	assert_int_equal(r.outcome, OUT_BADNESS);
	classify("[ 0.7] rcu-scale:!!! All grace periods expedited, no normal ones to measure!\n",
		 RUN_RCUSCALE, END_EARLY, &r);
	assert_int_equal(r.outcome, OUT_RCUSCALE_ABORTED);
	classify(GOOD "[ 0.1] midboot-probe: HUNG stage=1 point=dead-zone prim=synchronize_rcu call=1 after_s=5 caller_pid=1 gp_kthread=0 wq_workers=2 needs=gp_kthread missing=1\n"
		 "[ 0.1] midboot-probe: diag end\n",
		 RUN_PROBE, END_EARLY, &r);
	assert_int_equal(r.outcome, OUT_DEADLOCK);
	assert_string_equal(r.detail, "stage 1 (dead-zone) synchronize_rcu did not return: the boot task (pid 1) "
			    "waits for RCU's grace-period kthread, which does not exist and which only it would create");
	/* hung without evidence: a deadlock only once the run's timeout passed */
	classify(GOOD "[ 0.1] midboot-probe: HUNG stage=2 point=kthreads prim=synchronize_rcu call=1 after_s=5 caller_pid=1 gp_kthread=1 wq_workers=2 needs=gp_kthread missing=0\n",
		 RUN_PROBE, END_TIMEOUT, &r);
	assert_int_equal(r.outcome, OUT_DEADLOCK);
	assert_string_equal(r.detail, "stage 2 (kthreads) synchronize_rcu did not return within the run's 300 s timeout");
	classify(GOOD "[ 0.1] midboot-probe: HUNG stage=2 point=kthreads prim=synchronize_rcu call=1 after_s=5 caller_pid=1 gp_kthread=1 wq_workers=2 needs=gp_kthread missing=0\n",
		 RUN_PROBE, END_CRASHED, &r);
	assert_int_equal(r.outcome, OUT_CRASH);
	classify(GOOD "[ 6.2] rcu-scale: Test complete\n"
		 "[ 6.3] rcu-scale:!!! All grace periods normal, no expedited ones to measure!\n",
		 RUN_RCUSCALE, END_SHUTDOWN, &r);
	assert_int_equal(r.outcome, OUT_RCUSCALE_ERROR);
	assert_string_equal(r.detail, "All grace periods normal, no expedited ones to measure!");
	classify("", RUN_RCUSCALE, END_START_FAILED, &r);
	assert_int_equal(r.outcome, OUT_QEMU_FAILED);
	classify("[ 0.4] smp: Brought up 2 nodes, 4 CPUs\n", RUN_RCUSCALE, END_SHUTDOWN, &r);
	assert_int_equal(r.outcome, OUT_CRASH);
	classify("[ 0.4] smp: Brought up 2 nodes, 4 CPUs\nrcuwb-init: up cpus=0-3 nodes=0-1\n",
		 RUN_BOOT, END_SHUTDOWN, &r);
	assert_int_equal(r.outcome, OUT_OK);
	classify(GOOD, RUN_RCUSCALE, END_INTERRUPTED, &r);
	assert_int_equal(r.outcome, OUT_INTERRUPTED);
}

static void test_early_verdict(void **state)
{
	struct run_spec s;
	struct console c;

	(void)state;
	run_spec_init(&s);
	console_init(&c);
	assert_null(run_early_verdict(&s, &c));
	console_feed(&c, "[ 0.7] rcu-scale:!!! All grace periods expedited, no normal ones to measure!\n", 78);
	assert_non_null(run_early_verdict(&s, &c));
	s.kind = RUN_PROBE;	/* the probe outlives an rcuscale abort */
	assert_null(run_early_verdict(&s, &c));
	console_feed(&c, "midboot-probe: HUNG stage=1 point=dead-zone prim=synchronize_rcu after_s=5\n", 76);
	assert_null(run_early_verdict(&s, &c));	/* suspected only: wait */
	console_free(&c);
	console_init(&c);
	{
		static const char evid[] = "midboot-probe: HUNG stage=1 point=dead-zone prim=synchronize_rcu call=1 "
			"after_s=3 caller_pid=1 gp_kthread=0 wq_workers=2 needs=gp_kthread missing=1\n"
			"midboot-probe: diag end\n";

		console_feed(&c, evid, sizeof(evid) - 1);
	}
	assert_non_null(run_early_verdict(&s, &c));
	console_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topo_make),
		cmocka_unit_test(test_topo_errors),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_cmdline_and_cell),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_early_verdict),
	};
	RUN_UNIT_TESTS("run", tests);
}
