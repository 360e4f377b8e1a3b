#!/usr/bin/env bash
# runner/tests/midboot.sh: the mid-boot dead zone from real guest boots, for
# the release variants of kernel-changes/ (v4.9, v4.10, v4.11, after), and
# the probe's verdicts: a deadlock with evidence ends the guest at once, a
# call that returns after its watchdog is slow, not a deadlock.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch midboot
boot_label=midboot-test

echo "midboot: the dead zone, release by release"

# v4.9: a synchronous normal GP in the dead zone never returns; with
# rcu_normal, neither does an expedited one (the article's quick quiz);
# without it, the expedited GP has a workqueue worker at stage 1 and
# returns, but not at stage 0, before workqueue_init().
start=$(date +%s)
probe v4.9 1 rcu
expect "v4.9: stage 1 synchronize_rcu deadlocks, with evidence" \
	"deadlock:stage 1 (dead-zone) synchronize_rcu did not return: $kthread" "$(outcome)"
took=$(( $(date +%s) - start ))
expect "v4.9: the evidence ended the guest at once, not at the 60 s timeout (${took} s)" yes "$([ "$took" -lt 30 ] && echo yes)"
expect "v4.9: the probe row is a deadlock with its evidence" "deadlock:$kthread" \
	"$(q "SELECT outcome || ':' || evidence FROM probes ORDER BY rowid DESC LIMIT 1")"
probe v4.9 1 tasks
expect "v4.9: stage 1 synchronize_rcu_tasks deadlocks (it waits for a normal GP)" \
	"deadlock:stage 1 (dead-zone) synchronize_rcu_tasks did not return: $kthread" "$(outcome)"
probe v4.9 1 rcu_exp rcupdate.rcu_normal=1
expect "v4.9, rcu_normal=1: stage 1 synchronize_rcu_expedited deadlocks" \
	"deadlock:stage 1 (dead-zone) synchronize_rcu_expedited did not return: $kthread" "$(outcome)"
probe v4.9 1 rcu_exp
expect "v4.9, rcu_normal=0: stage 1 synchronize_rcu_expedited returns (workers exist)" "ok:1:0" "$(calls)"
probe v4.9 0 rcu_exp
expect "v4.9: stage 0 synchronize_rcu_expedited deadlocks: handed to rcu_gp_wq, no worker yet" \
	"deadlock:stage 0 (pre-workqueues) synchronize_rcu_expedited did not return: $worker" "$(outcome)"
probe v4.9 234 "$prims"
expect "v4.9: stages 2-4, every primitive returns" "ok:15:0" "$(calls)"
boot -k v4.9 -g normal,expedited --nwriters 1
expect "v4.9: rcuscale normal and expedited both measure" "ok:expedited:ok:normal" \
	"$(q "SELECT group_concat(outcome || ':' || gp_mode, ':') FROM (SELECT * FROM runs WHERE variant='v4.9' AND kind='rcuscale' ORDER BY gp_mode)")"

# v4.10: the mid-boot fix.  Every RCU probe call completes at every stage,
# rcu_normal or not; rcuscale's init-time check runs after the switch to
# runtime mode and does not abort a normal-GP test.
for bp in "" rcupdate.rcu_normal=1; do
	probe v4.10 1234 "$prims" "$bp"
	expect "v4.10${bp:+, $bp}: every probe call at stages 1-4 completes" "ok:20:0" "$(calls)"
	probe v4.10 0 rcu,rcu_exp,tasks "$bp"
	expect "v4.10${bp:+, $bp}: stage 0 synchronize_rcu(_expedited) complete, Tasks RCU not callable yet" \
		"ok:3:0:skipped" "$(calls):$(q "SELECT outcome FROM probes WHERE prim = 'synchronize_rcu_tasks' ORDER BY rowid DESC LIMIT 1")"
done
expect "a skipped call stores no latency" "" "$(q "SELECT duration_ns FROM probes WHERE outcome = 'skipped' ORDER BY rowid DESC LIMIT 1")"
boot -k v4.10 -g normal --nwriters 1
expect "v4.10: rcuscale normal GPs are measured, not aborted" "ok:1" "$(last "outcome || ':' || (nsamples > 0)")"

# v4.11: boot-time expediting of every normal GP until the end of boot.
# The probe calls complete; rcuscale's init-time check sees every GP
# expedited and aborts a normal-GP test (what seed 002 fixed in v4.13).
probe v4.11 1234 "$prims"
expect "v4.11: every probe call at stages 1-4 completes" "ok:20:0" "$(calls)"
start=$(date +%s)
boot -k v4.11 -g normal --nwriters 1
expect "v4.11: rcuscale normal GPs abort, reported as such" "rcuscale-aborted:All grace periods expedited, no normal ones to measure!" "$(outcome)"
took=$(( $(date +%s) - start ))
expect "v4.11: the aborted guest was ended at once (${took} s)" yes "$([ "$took" -lt 30 ] && echo yes)"

# after: 6.1 as shipped.  Everything completes and measures, except what
# 6.1 itself cannot do before workqueue_init(): Tree SRCU queues its grace
# period on rcu_gp_wq, which has no worker yet.
for bp in "" rcupdate.rcu_normal=1; do
	probe after 1234 "$prims" "$bp"
	expect "after${bp:+, $bp}: every probe call at stages 1-4 completes" "ok:20:0" "$(calls)"
done
probe after 0 rcu,rcu_exp
expect "after: stage 0 synchronize_rcu and synchronize_rcu_expedited complete" "ok:2:0" "$(calls)"
probe after 0 srcu
expect "after: stage 0 synchronize_srcu deadlocks in 6.1 too (no rcu_gp_wq worker yet)" \
	"deadlock:stage 0 (pre-workqueues) synchronize_srcu did not return: $worker" "$(outcome)"
boot -k after -g normal,expedited --nwriters 1
expect "after: rcuscale normal and expedited both measure" "ok:expedited:ok:normal" \
	"$(q "SELECT group_concat(outcome || ':' || gp_mode, ':') FROM (SELECT * FROM runs WHERE variant='after' AND kind='rcuscale' ORDER BY gp_mode)")"
# after + rcu_normal: every GP is normal; the deferred check (seed 002) lets
# the "expedited" test run and warns at its end: data, but not of the kind
# asked for, so not ok.
boot -k after -g expedited --nwriters 1 -b rcupdate.rcu_normal=1
expect "after, rcu_normal=1: expedited rcuscale runs to the end and warns" \
	"rcuscale-error:All grace periods normal, no expedited ones to measure!:1" \
	"$(last "outcome || ':' || outcome_detail || ':' || (nsamples > 0)")"

# A slow call is not a deadlock: planted's 375 ticks (1.5 s at HZ=250) added
# to every synchronize_rcu() make stage 4's call outlast a 1 s watchdog,
# then return.
boot -k planted -p 4 --probe-prims rcu --watchdog 1 -t 60 -b rcutree.planted_gp_tick_permille=375000
expect "planted: a call that returns after its watchdog is slow, the run ok" "ok:slow" \
	"$(last outcome):$(q "SELECT outcome FROM probes ORDER BY rowid DESC LIMIT 1")"
expect "planted: the slow call's latency is stored (> 1.5 s)" 1 \
	"$(q "SELECT duration_ns > 1500000000 FROM probes ORDER BY rowid DESC LIMIT 1")"

table=$("$rcuwb" -d "$db" summary --probes)
echo "$table" | sed 's/^/    /'
expect "the mid-boot table shows the five deadlocked cells" 5 "$(echo "$table" | grep -oE 'DEADLOCK [0-9]+/[0-9]+' | wc -l)"
expect "each deadlock has its evidence under the table" 5 "$(echo "$table" | grep -c 'boots): the boot task')"
expect "the table says slow:1 for the planted call" 1 "$(echo "$table" | grep -c 'slow:1')"
check "no domain is left behind" no_domains

finish midboot
