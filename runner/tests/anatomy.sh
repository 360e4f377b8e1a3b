#!/usr/bin/env bash
# runner/tests/anatomy.sh: grace-period anatomy on real traced guests
# (issue 34).  after and planted, both in the Kconfig scenario trace, 1 vCPU,
# normal GPs, 3 runs a side, with rcutree.planted_gp_tick_permille=1000 (a
# parameter after does not have): planted's synchronize_rcu() returns one
# 4 ms tick (HZ 250) late on every call, after the GP's callback has run,
# so the anatomy must put a tick in the phase "return" and nothing
# comparable anywhere else.  Tolerance: the return's change within 15% of
# a tick; every other phase's within 10% of a tick (the 1-vCPU phases are
# whole ticks: request, qs and callback 3.9-4.0 ms each here).
# Also: every call of a run stored (rcuscale's sample count), an expedited
# traced run whose console `rcuwb parse --kvm-recheck` reads exactly as the
# kernel's kvm-recheck-rcuscale.sh does (its ftrace path), and a run whose
# trace buffer is too small: it lost events, says so, and is not cut.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch anatomy
tick=4000
cache=${RCUWB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rcuwb}
tree=$(cat "$cache/src/pristine" 2>/dev/null) || { bad "a kernel tree (make tree)"; finish anatomy; exit; }

"$rcuwb" -q -d "$db" -j anatomy -n 3 -g normal -b "rcutree.planted_gp_tick_permille=1000" \
	after planted > "$work/a.json" 2> "$work/a.err"
expect "rcuwb anatomy after planted exits 0" 0 $?
sed 's/^/    /' "$work/a.err" | grep -E 'most of the change|return ' || :
expect "6 traced runs, ok, each with its trace whole" "6|6" \
	"$(q "SELECT COUNT(*), SUM(t.incomplete IS NULL) FROM runs r JOIN traces t ON t.run_id = r.id WHERE r.outcome = 'ok' AND r.kconfig = 'trace'")"
expect "every rcuscale sample's call cut into phases" \
	"$(q "SELECT SUM(nsamples) FROM runs")" "$(q "SELECT COUNT(*) FROM gp_anatomy")"
expect "... with no call skipped" 0 "$(q "SELECT SUM(skipped) FROM traces")"
expect "the phase carrying the change is the return" return "$(jq -r '.cells[0].carrier' "$work/a.json")"
ret=$(jq -r '.phases[] | select(.phase == "return") | .change_us' "$work/a.json")
check "... by one tick (+$ret us of $tick, within 15%)" \
	awk -v c="$ret" -v t="$tick" 'BEGIN { exit !(c > 0.85 * t && c < 1.15 * t) }'
others=$(jq -r '[.phases[] | select(.phase != "return") | .change_us | fabs] | max' "$work/a.json")
check "... and every other phase by less than 10% of a tick (largest: $others us)" \
	awk -v c="$others" -v t="$tick" 'BEGIN { exit !(c < 0.1 * t) }'
check "the text names it too" grep -q "most of the change is in return" "$work/a.err"
check "the same comparison again from the stored runs (--matrix)" \
	bash -c "'$rcuwb' -d '$db' anatomy --matrix anatomy-after-planted | grep -q 'most of the change is in return'"

# One console log, described; the kernel's own script on the same log.
log=$(q "SELECT run_dir FROM runs WHERE variant = 'after' ORDER BY id LIMIT 1")/console.log
expect "anatomy --console: the run's calls" "$(q "SELECT nsamples FROM runs WHERE variant = 'after' ORDER BY id LIMIT 1")" \
	"$("$rcuwb" -j anatomy --console "$log" | jq -r .calls)"
"$rcuwb" -q -d "$db" boot -k after -K trace -n 1 -g expedited -M exp > /dev/null 2>&1
expect "an expedited traced run, ok, cut into phases" "ok|0" \
	"$(last "outcome || '|' || (SELECT skipped FROM traces WHERE run_id = runs.id)")"
mkdir -p "$work/res"
cp "$(last run_dir)/console.log" "$work/res/console.log"
want=$(cd "$tree" && bash tools/testing/selftests/rcutorture/bin/kvm-recheck-rcuscale.sh "$work/res")
check "the kernel's script read it from the ftrace dump" grep -q "Computed from ftrace data" <<< "$want"
# (gawk prints its "Distribution" lines in hash order: compared as sets)
expect "parse --kvm-recheck prints what kvm-recheck-rcuscale.sh prints" "$(sort <<< "$want")" \
	"$("$rcuwb" parse --kvm-recheck "$work/res/console.log" | sort)"

# A buffer too small for the run (the matrix's trace_buf_size comes after the scenario's)
"$rcuwb" -d "$db" boot -k after -K trace -n 1 -g normal -M small -b "trace_buf_size=8k" > /dev/null 2> "$work/small.err"
expect "a run that lost events: stored, the loss and the reason recorded, no call cut" "ok|1|1|0" \
	"$(last "outcome || '|' || (SELECT (lost IS NULL OR lost > 0) || '|' || (incomplete LIKE '%lost events%') FROM traces WHERE run_id = runs.id) || '|' || (SELECT COUNT(*) FROM gp_anatomy WHERE run_id = runs.id)")"
check "... and says so" grep -q "its trace is not analysed: the trace buffer lost events" "$work/small.err"
check "no domain left" no_domains
finish anatomy
