#!/usr/bin/env bash
# runner/tests/plant.sh: the expedited time plant of patch 0008 on real
# guests.  Two boots of planted (1 vCPU, expedited GPs, one writer) with
# rcutree.planted_exp_time_permille=100: the kernel's report of what it
# planted must add up to rcuscale's own samples, and its extra time must be
# the dose.
#
# With one writer the plant's measured and extra time are rcuscale's
# intervals split where an extra GP began (rcu_planted_exp_account()), so
# the report, printed when the writer is done, covers exactly the samples
# it had then.  Patch 0009 (minruntime, as upstream 7221f493c5ff) makes the
# writer done at 101 calls or more: it also waits for jiffies to pass the
# start plus minruntime seconds, so with minruntime=0 at least one tick,
# and 101 expedited GPs can take less than that.  rcuscale goes on
# overwriting its last sample until the guest powers off, so the report
# less the samples before the last is one call, which took some time: more
# than 0 and less than the others together.
# An earlier revision timed both parts on clock reads of its own and left
# the time between them and rcuscale's uncounted: 6% of every call, so
# samples 0-99 alone came to more than its report of 101 calls.
# This holds whatever else the host does, so host-busy runs are kept.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch plant

cat > "$work/p.yaml" <<EOY
name: p
variants: [planted]
topologies:
  - {vcpus: 1}
modes: [expedited]
rcuscale: {nreaders: 0, nwriters: 1, holdoff: boot}
boot_params: ["rcutree.planted_gp_tick_permille=0 rcutree.planted_exp_time_permille=100"]
reps: 2
timeout: 60
EOY
echo "plant: the expedited time plant against rcuscale's samples (results in $db)"
"$rcuwb" -q -d "$db" run -J 1 "$work/p.yaml"
expect "2 runs, both ok" "2" "$(q "SELECT COUNT(*) FROM runs WHERE outcome = 'ok'")"

for id in $(q "SELECT id FROM runs WHERE outcome = 'ok' ORDER BY id"); do
	dir=$(q "SELECT run_dir FROM runs WHERE id = $id")
	rep=$(grep -ao 'planted_exp_time_permille=100: calls [0-9]* measured_ns [0-9]* extra_ns [0-9]* extras [0-9]*' \
		"$dir/console.log" | head -n1)
	read -r calls measured extra extras < <(awk '{print $3, $5, $7, $9}' <<< "$rep")
	n=$(q "SELECT COUNT(*) FROM samples WHERE run_id = $id")
	expect "run $id: the kernel reports as many calls as rcuscale stored samples" "$n" "${calls:-none}"
	check "run $id: at least 101 calls ($n)" test "${n:-0}" -ge 101
	sum_before=$(q "SELECT SUM(duration_ns) FROM samples WHERE run_id = $id AND seq < $((n - 1))")
	last_call=$((${measured:-0} + ${extra:-0} - ${sum_before:-0}))
	check "run $id: the report less the samples before the last is one call's time (${last_call} ns of $((measured + extra)))" \
		test "$last_call" -gt 0 -a "$last_call" -lt "${sum_before:-0}"
	# the plant stops when its extra time reaches 10% of the measured time
	# and adds one GP at a time: at most one GP (under 1 ms here) over
	check "run $id: extra time is 10% of the measured time, one GP at most over ($extras extra GPs: $extra of $measured ns)" \
		test "${extras:-0}" -gt 0 -a "$((extra * 1000))" -ge "$((measured * 100 - 1000000 * 1000))" \
		-a "$((extra * 1000))" -le "$((measured * 100 + 1000000 * 1000))"
done
check "no domain left at the end" no_domains

finish plant
