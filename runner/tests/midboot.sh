#!/usr/bin/env bash
# runner/tests/midboot.sh: the mid-boot dead zone from real guest boots, for
# the three variants of kernel-changes/ (before, midboot, after).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch midboot
prims=rcu,rcu_exp,srcu,srcu_exp,tasks
boot() { "$rcuwb" -q -d "$db" boot -M midboot-test -n 2 "$@"; }
probe() { # probe VARIANT STAGES PRIMS [BOOT_PARAMS]
	boot -k "$1" -p "$2" --probe-prims "$3" --watchdog 3 ${4:+-b "$4"}
}

echo "midboot: the dead zone before, during and after the change"

# before: v4.10 semantics.  A synchronous normal GP in the dead zone never
# returns; with rcu_normal, neither does an expedited one (the article's
# quick quiz); without it, the expedited GP has a workqueue and returns.
start=$(date +%s)
probe before 1 rcu
expect "before: stage 1 synchronize_rcu deadlocks" "deadlock:stage 1 (dead-zone) synchronize_rcu did not return" "$(last "outcome || ':' || outcome_detail")"
took=$(( $(date +%s) - start ))
expect "before: the deadlock ended the guest in well under a minute (${took} s)" yes "$([ "$took" -lt 40 ] && echo yes)"
probe before 1 rcu_exp rcupdate.rcu_normal=1
expect "before, rcu_normal=1: stage 1 synchronize_rcu_expedited deadlocks" "deadlock:stage 1 (dead-zone) synchronize_rcu_expedited did not return" "$(last "outcome || ':' || outcome_detail")"
probe before 1 rcu_exp
expect "before, rcu_normal=0: stage 1 synchronize_rcu_expedited returns" "ok" "$(last outcome)"
probe before 1 tasks
expect "before: stage 1 synchronize_rcu_tasks deadlocks (it waits for normal GPs)" "deadlock:stage 1 (dead-zone) synchronize_rcu_tasks did not return" "$(last "outcome || ':' || outcome_detail")"
boot -k before -g normal,expedited --nwriters 1
expect "before: rcuscale normal and expedited both measure" "ok:expedited:ok:normal" \
	"$(q "SELECT group_concat(outcome || ':' || gp_mode, ':') FROM (SELECT * FROM runs WHERE variant='before' AND kind='rcuscale' ORDER BY gp_mode)")"

# midboot: the change.  Every probe call completes; rcuscale's init-time
# check now sees every GP expedited and aborts a normal-GP test (seed 002).
for bp in "" rcupdate.rcu_normal=1; do
	probe midboot 1234 "$prims" "$bp"
	expect "midboot${bp:+, $bp}: every probe call at every stage completes" "ok:20:0" \
		"$(last "outcome || ':' || (SELECT COUNT(*) FROM probes WHERE run_id = runs.id) || ':' || (SELECT COUNT(*) FROM probes WHERE run_id = runs.id AND outcome <> 'ok')")"
done
start=$(date +%s)
boot -k midboot -g normal --nwriters 1
expect "midboot: rcuscale normal GPs abort, reported as such" "rcuscale-aborted:All grace periods expedited, no normal ones to measure!" "$(last "outcome || ':' || outcome_detail")"
took=$(( $(date +%s) - start ))
expect "midboot: the aborted guest was ended at once (${took} s)" yes "$([ "$took" -lt 30 ] && echo yes)"

# after: the change plus the deferred check: upstream 6.1.
for bp in "" rcupdate.rcu_normal=1; do
	probe after 1234 "$prims" "$bp"
	expect "after${bp:+, $bp}: every probe call at every stage completes" "ok:20:0" \
		"$(last "outcome || ':' || (SELECT COUNT(*) FROM probes WHERE run_id = runs.id) || ':' || (SELECT COUNT(*) FROM probes WHERE run_id = runs.id AND outcome <> 'ok')")"
done
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
expect "the mid-boot table shows the three deadlocks" 3 "$("$rcuwb" -d "$db" summary --probes | grep -oE 'DEADLOCK( |$)' | wc -l)"

finish midboot
