/* test_trace.c: unit tests of the ftrace-dump reader and of cutting writer calls into phases. */
#include "unit.h"

#include <math.h>

#include "anatomy.h"
#include "trace.h"

/* Lines as the 6.1 dump prints them, with and without the printk time. */
static const char dump_head[] =
	"[    2.0] random: other line\n"
	"[    2.1]     init-1         0..... 606870us : rcu_exp_grace_period: rcu_preempt 8 snap\n"
	"[    2.855356] Dumping ftrace buffer:\n"
	"[    2.855356] ---------------------------------\n";
static const char dump_tail[] = "[    2.9] ---------------------------------\n[    3.0] reboot: Power down\n";

static void feed(struct trace *t, const char *body)
{
	assert_int_equal(trace_parse(t, dump_head, strlen(dump_head)), 0);
	assert_int_equal(trace_parse(t, body, strlen(body)), 0);
	assert_int_equal(trace_parse(t, dump_tail, strlen(dump_tail)), 0);
}

static void test_event_line(void **state)
{
	struct trace t = { 0 };
	const struct tevent *e;

	(void)state;
	feed(&t, "[ 2.9]   <idle>-0         1d.s2. 2293009us : rcu_quiescent_state_report: rcu_preempt -1043 2>1 0 0 1 0\n"
		 "rcu_scal-25        0d.... 2281134us+: rcu_callback: rcu_preempt rhp=ffff8880011b7e58 func=0xffffffff8107de34 1\n"
		 "kworker/-13        0..... 607228us : rcu_exp_grace_period: rcu_preempt 8 reset\n"
		 "rcu_pree-11        1d..1. 2297138us : rcu_fqs: rcu_preempt -1043 0 dti\n"
		 "rcu_pree-11        1d..1. 2297139us : sched_switch: prev_comm=x\n"
		 "garbage without a stamp\n");
	assert_true(t.dump_begun && t.dump_ended);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.other, 1);
	assert_int_equal(t.bad, 1);
	e = &t.ev[0];
	assert_int_equal(e->kind, TEV_QS_REPORT);
	assert_string_equal(e->comm, "<idle>");
	assert_int_equal(e->pid, 0);
	assert_int_equal(e->cpu, 1);
	assert_true(e->us == 2293009);
	assert_int_equal(e->seq, -1043);
	assert_true(e->mask == 2 && e->qsmask == 1 && e->level == 0 && e->grplo == 0);
	e = &t.ev[1];	/* a delay mark after "us" */
	assert_int_equal(e->kind, TEV_CALLBACK);
	assert_string_equal(e->comm, "rcu_scal");
	assert_int_equal(e->pid, 25);
	assert_string_equal(e->rhp, "ffff8880011b7e58");
	e = &t.ev[2];
	assert_int_equal(e->kind, TEV_EXP);
	assert_string_equal(e->comm, "kworker/");
	assert_string_equal(e->what, "reset");
	assert_int_equal(e->seq, 8);
	assert_int_equal(t.ev[3].fqs_cpu, 0);
	assert_null(trace_incomplete(&t));
	trace_free(&t);
}

static void test_incomplete(void **state)
{
	struct trace t = { 0 };
	static const char cut[] = "[ 2.1] Dumping ftrace buffer:\n[ 2.1] ---------------------------------\n"
				  "x-1  0..... 10us : rcu_grace_period: rcu_preempt 5 start\n";

	(void)state;
	assert_non_null(strstr(trace_incomplete(&t), "no ftrace dump"));
	assert_int_equal(trace_parse(&t, cut, strlen(cut)), 0);
	assert_non_null(strstr(trace_incomplete(&t), "cut off"));
	trace_free(&t);
	feed(&t, "CPU:1 [LOST 17 EVENTS]\nx-1  0..... 10us : rcu_grace_period: rcu_preempt 5 start\n");
	assert_int_equal(t.lost, 17);
	assert_non_null(strstr(trace_incomplete(&t), "lost events"));
	trace_free(&t);
	feed(&t, "** 3 printk messages dropped **\nx-1  0..... 10us : rcu_grace_period: rcu_preempt 5 start\n");
	assert_int_equal(t.printk_dropped, 3);
	assert_non_null(strstr(trace_incomplete(&t), "printk dropped"));
	trace_free(&t);
	feed(&t, "");
	assert_non_null(trace_incomplete(&t));
	trace_free(&t);
}

/*
 * One writer, two normal calls: request at 100, GP 5 starts at 200, its
 * kthread first waits at 210, the last QS report at 300, GP end at 320,
 * the callback invoked (on the writer's CPU 0) at 400, the next request at
 * 450.  An invocation of the same rcu_head on another CPU, and a report of
 * another GP, must not be taken.
 */
static const char normal_calls[] =
	"rcu_scal-20  0d.... 100us : rcu_callback: rcu_preempt rhp=ffff1 func=0xf 1\n"
	"rcu_pree-11  0..... 200us : rcu_grace_period: rcu_preempt 5 start\n"
	"rcu_pree-11  0..... 210us : rcu_grace_period: rcu_preempt 5 fqswait\n"
	"rcu_pree-11  0..... 250us : rcu_grace_period: rcu_preempt 5 fqsstart\n"
	"  <idle>-0   0d.s2. 290us : rcu_quiescent_state_report: rcu_preempt 1 1>0 0 0 1 0\n"
	"  <idle>-0   0d.s2. 300us : rcu_quiescent_state_report: rcu_preempt 5 1>0 0 0 1 0\n"
	"rcu_pree-11  0d..1. 320us : rcu_grace_period: rcu_preempt 5 end\n"
	"  <idle>-0   1..s1. 350us : rcu_invoke_callback: rcu_preempt rhp=ffff1 func=0xf\n"
	"  <idle>-0   0..s1. 400us : rcu_invoke_callback: rcu_preempt rhp=ffff1 func=0xf\n"
	"rcu_scal-20  0d.... 450us : rcu_callback: rcu_preempt rhp=ffff1 func=0xf 1\n"
	"rcu_pree-11  0..... 460us : rcu_grace_period: rcu_preempt 9 start\n"
	"rcu_pree-11  0..... 470us : rcu_grace_period: rcu_preempt 9 fqswait\n"
	"  <idle>-0   0d.s2. 480us : rcu_quiescent_state_report: rcu_preempt 9 1>0 0 0 1 0\n"
	"rcu_pree-11  0d..1. 490us : rcu_grace_period: rcu_preempt 9 end\n"
	"  <idle>-0   0..s1. 500us : rcu_invoke_callback: rcu_preempt rhp=ffff1 func=0xf\n";

static void test_normal(void **state)
{
	struct trace t = { 0 };
	struct anatomy a;
	const struct anat_call *c;
	double sum = 0;
	int p;

	(void)state;
	feed(&t, normal_calls);
	assert_int_equal(anatomy_build(&t, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.skipped, 0);
	c = &a.calls[0];
	assert_false(c->expedited);
	assert_int_equal(c->pid, 20);
	assert_int_equal(c->call, 0);
	assert_int_equal(c->gp_seq, 5);
	assert_true(c->phase_us[PH_REQUEST] == 100);
	assert_true(c->phase_us[PH_INIT] == 10);
	assert_true(c->phase_us[PH_QS] == 90);
	assert_true(c->phase_us[PH_CLEANUP] == 20);
	assert_true(c->phase_us[PH_CALLBACK] == 80);
	assert_true(c->phase_us[PH_RETURN] == 50);
	assert_true(isnan(c->phase_us[PH_FUNNEL]));
	assert_int_equal(c->fqs_scans, 1);
	assert_int_equal(c->last_cpu, 0);
	for (p = 0; p < PH_NR; p++)
		sum += isnan(c->phase_us[p]) ? 0 : c->phase_us[p];
	assert_true(sum == 450 - 100);		/* the phases add up to request to next request */
	assert_true(c->total_us == 300);
	c = &a.calls[1];
	assert_int_equal(c->call, 1);
	assert_true(isnan(c->phase_us[PH_RETURN]));	/* no next request */
	anatomy_free(&a);
	trace_free(&t);
}

/* A call whose GP never ends in the dump is skipped, not cut wrongly. */
static void test_missing(void **state)
{
	struct trace t = { 0 };
	struct anatomy a;

	(void)state;
	feed(&t, "rcu_scal-20  0d.... 100us : rcu_callback: rcu_preempt rhp=ffff1 func=0xf 1\n"
		 "rcu_pree-11  0..... 200us : rcu_grace_period: rcu_preempt 5 start\n");
	assert_int_equal(anatomy_build(&t, &a), 0);
	assert_int_equal(a.n, 0);
	assert_int_equal(a.skipped, 1);
	anatomy_free(&a);
	trace_free(&t);
}

/*
 * Two writers, expedited: 20 runs GP 16 (driven by a kworker; "done"
 * before "endwake"), 21 piggy-backs on it.
 */
static const char exp_calls[] =
	"rcu_scal-20  0..... 1000us : rcu_exp_grace_period: rcu_preempt 16 snap\n"
	"rcu_scal-21  1..... 1001us : rcu_exp_grace_period: rcu_preempt 16 snap\n"
	"rcu_scal-21  1..... 1002us : rcu_exp_funnel_lock: rcu_preempt 0 0 1 wait\n"
	"rcu_scal-20  0..... 1003us : rcu_exp_grace_period: rcu_preempt 16 start\n"
	"kworker/-13  0..... 1010us : rcu_exp_grace_period: rcu_preempt 16 reset\n"
	"kworker/-13  0..... 1011us : rcu_exp_grace_period: rcu_preempt 16 select\n"
	"kworker/-13  0..... 1014us : rcu_exp_grace_period: rcu_preempt 16 startwait\n"
	"kworker/-13  0..... 1020us : rcu_exp_grace_period: rcu_preempt 16 end\n"
	"rcu_scal-20  0..... 1026us : rcu_exp_grace_period: rcu_preempt 16 done\n"
	"rcu_scal-21  1..... 1027us : rcu_exp_grace_period: rcu_preempt 16 done\n"
	"kworker/-13  0..... 1028us : rcu_exp_grace_period: rcu_preempt 16 endwake\n"
	"rcu_scal-20  0..... 1030us : rcu_exp_grace_period: rcu_preempt 20 snap\n";

static void test_expedited(void **state)
{
	struct trace t = { 0 };
	struct anatomy a;
	const struct anat_call *c;

	(void)state;
	feed(&t, exp_calls);
	assert_int_equal(anatomy_build(&t, &a), 0);
	assert_int_equal(a.n, 2);	/* the last snap has no done */
	assert_int_equal(a.skipped, 1);
	c = &a.calls[0];
	assert_true(c->expedited && c->own);
	assert_int_equal(c->pid, 20);
	assert_string_equal(c->driver, "kworker/");
	assert_true(c->phase_us[PH_FUNNEL] == 3);
	assert_true(c->phase_us[PH_HANDOFF] == 7);
	assert_true(c->phase_us[PH_RESET] == 1);
	assert_true(c->phase_us[PH_SELECT] == 3);
	assert_true(c->phase_us[PH_WAIT] == 6);
	assert_true(c->phase_us[PH_WAKE] == 6);
	assert_true(c->phase_us[PH_RETURN] == 4);
	assert_true(isnan(c->phase_us[PH_PIGGYBACK]));
	assert_true(c->total_us == 26);
	c = &a.calls[1];
	assert_true(c->expedited && !c->own);
	assert_int_equal(c->pid, 21);
	assert_true(c->phase_us[PH_PIGGYBACK] == 26);
	assert_true(isnan(c->phase_us[PH_FUNNEL]) && isnan(c->phase_us[PH_RETURN]));
	anatomy_free(&a);
	trace_free(&t);
}

static void test_phase_names(void **state)
{
	int p;

	(void)state;
	for (p = 0; p < PH_NR; p++) {
		assert_string_not_equal(anat_phase_name(p), "?");
		assert_true(anat_phase_of(p, false) || anat_phase_of(p, true));
	}
	assert_true(anat_phase_of(PH_RETURN, false) && anat_phase_of(PH_RETURN, true));
	assert_false(anat_phase_of(PH_QS, true));
	assert_false(anat_phase_of(PH_WAIT, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_line), cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_normal),	   cmocka_unit_test(test_missing),
		cmocka_unit_test(test_expedited),  cmocka_unit_test(test_phase_names),
	};

	RUN_UNIT_TESTS("trace", tests);
}
