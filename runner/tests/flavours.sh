#!/usr/bin/env bash
# runner/tests/flavours.sh: RCU flavours as a matrix dimension, and
# asynchronous GPs, on real
# guests (issue 35).  after and planted (without its plant's parameters the
# same kernel as after), both built in the Kconfig scenario flavours (tiny
# with Tasks Trace and Tasks Rude RCU forced in), 1 vCPU, 3 runs a side:
# SRCU's normal and expedited GPs and Tasks Trace RCU's normal ones
# (rcuscale.scale_type), stored apart from each other and from rcu's
# cells, summarised per cell and gated per cell; then asynchronous GPs
# (modes: [async]) of rcu and srcu, 2 runs a side.  Also: the expedited Tasks
# Trace cell is left out and said so, never run as normal; a flavour the
# kernel lacks (tasks-tracing in tiny), an unknown flavour and a flavour
# whose every mode is missing are refused in one line naming the file and
# line before any guest boots; a database stored before flavours keeps its
# cells.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch flavours

cat > "$work/f.yaml" <<EOY
name: f
variants: [after, planted]
kconfigs: [flavours]
topologies:
  - {vcpus: 1}
modes: [normal, expedited]
flavours: [srcu, tasks-tracing]
rcuscale: {nreaders: 0, nwriters: 1, holdoff: 1}
reps: 3
timeout: 120
EOY
echo "flavours: SRCU and Tasks Trace RCU grace periods (results in $db)"
plan=$("$rcuwb" -d "$db" run -n "$work/f.yaml" 2>&1)
check "the plan has 18 runs: srcu in both modes, tasks-tracing normal ($(grep -o '^[0-9]* runs' <<< "$plan"))" \
	grep -q "^18 runs" <<< "$plan"
check "... and says why there is no expedited tasks-tracing cell" \
	grep -q "flavour tasks-tracing: no expedited cells (rcuscale's expedited Tasks Trace RCU GP is synchronize_rcu_tasks_trace() itself)" <<< "$plan"
"$rcuwb" -q -d "$db" run "$work/f.yaml"
# runs that other work on the host disturbed are left out: repeat them
for _ in 1 2 3; do
	grep -q '^0 runs' <<< "$("$rcuwb" -d "$db" run -n --resume "$work/f.yaml" 2>/dev/null)" && break
	"$rcuwb" -q -d "$db" run --resume "$work/f.yaml"
done
cells=$(q "SELECT cell || ' ' || COUNT(*) FROM run_status WHERE status = 'ok' AND nsamples >= 100
	   GROUP BY cell ORDER BY cell" | tr '\n' ',')
expect "18 clean runs of 100 GPs or more, in three cells of their own" \
	"v1-n1/expedited/w1-r0/f=srcu/k=flavours 6,v1-n1/normal/w1-r0/f=srcu/k=flavours 6,v1-n1/normal/w1-r0/f=tasks-tracing/k=flavours 6," \
	"$cells"
expect "each run's kernel was told its flavour" 18 \
	"$(q "SELECT COUNT(*) FROM runs WHERE cmdline LIKE '% rcuscale.scale_type=' ||
	      substr(cell, instr(cell, '/f=') + 3, instr(cell, '/k=') - instr(cell, '/f=') - 3) || '%'")"
expect "and its console shows rcuscale measured that flavour" 18 \
	"$(for d in $(q "SELECT run_dir || '|' || substr(cell, instr(cell, '/f=') + 3, instr(cell, '/k=') - instr(cell, '/f=') - 3) FROM runs"); do
		grep -q "^\[ *[0-9.]*\] ${d#*|}-scale: Test complete" "${d%|*}/console.log" && echo x
	   done | wc -l)"
# SRCU's expedited GPs do not wait for ticks: far below its normal ones
exp=$(q "SELECT AVG(s.duration_ns) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.cell LIKE '%expedited%f=srcu%'")
norm=$(q "SELECT AVG(s.duration_ns) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.cell LIKE '%normal%f=srcu%'")
check "srcu: expedited GPs (mean ${exp%.*} ns) take under half of normal ones (${norm%.*} ns)" \
	awk -v e="$exp" -v n="$norm" 'BEGIN { exit !(e > 0 && e < n / 2) }'

# Asynchronous GPs: rcuscale.gp_async, at most 10 callbacks in flight per
# writer (rcuwb's default async_max), rcu and srcu.  A sample is one
# call_rcu() (srcu_call_rcu()), and every 10th also waits in the barrier
# for the GPs of those in flight: most samples are short, a few a GP long.
cat > "$work/a.yaml" <<EOY
name: a
variants: [after, planted]
kconfigs: [flavours]
topologies:
  - {vcpus: 1}
modes: [async]
flavours: [rcu, srcu]
rcuscale: {nreaders: 0, nwriters: 1, holdoff: 1}
reps: 2
timeout: 120
EOY
"$rcuwb" -q -d "$db" run "$work/a.yaml"
for _ in 1 2 3; do
	grep -q '^0 runs' <<< "$("$rcuwb" -d "$db" run -n --resume "$work/a.yaml" 2>/dev/null)" && break
	"$rcuwb" -q -d "$db" run --resume "$work/a.yaml"
done
cells=$(q "SELECT cell || ' ' || COUNT(*) FROM run_status WHERE matrix = 'a' AND status = 'ok' AND nsamples >= 100
	   GROUP BY cell ORDER BY cell" | tr '\n' ',')
expect "async: 8 clean runs in two cells of their own" \
	"v1-n1/async/w1-r0-a10/f=srcu/k=flavours 4,v1-n1/async/w1-r0-a10/k=flavours 4," "$cells"
expect "... every kernel told gp_async=1 gp_async_max=10" 8 \
	"$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'a' AND cmdline LIKE '% rcuscale.gp_exp=0 %rcuscale.gp_async=1 rcuscale.gp_async_max=10%'")"
med=$(q "SELECT s.duration_ns FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.cell LIKE '%async%f=srcu%'
	 ORDER BY s.duration_ns LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM samples s JOIN runs r ON r.id = s.run_id
	 WHERE r.cell LIKE '%async%f=srcu%')")
amean=$(q "SELECT AVG(s.duration_ns) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.cell LIKE '%async%f=srcu%'")
check "srcu async: the median call (${med} ns) is no GP, the mean per callback (${amean%.*} ns) under half a synchronous GP (${norm%.*} ns)" \
	awk -v m="$med" -v a="$amean" -v n="$norm" 'BEGIN { exit !(m < n / 20 && a < n / 2 && a > m) }'
out=$("$rcuwb" -d "$db" gate --matrix a --baseline after --candidate planted 2>&1); rc=$?
grep -E '(PASS|SLOWDOWN|INCONCLUSIVE) +v1-n1/' <<< "$out" | sed 's/^ */    /'
check "the gate judges the async cells (exit $rc)" test "$rc" -le 1 -o "$rc" -eq 3
for c in "async/w1-r0-a10/h1/hz250-full-idle/k=flavours" "async/w1-r0-a10/h1/hz250-full-idle/f=srcu/k=flavours"; do
	check "... with a verdict of its own for $c" grep -qE "(PASS|SLOWDOWN|INCONCLUSIVE) +v1-n1/$c(:|\$)" <<< "$out"
done

# A database stored before flavours (schema 9, by the runner of 581d1c7:
# after, 1 vCPU, normal and expedited, with and without a boot parameter;
# data/schema9-pre-flavours.{sql,yaml}): its cells are the ones this runner plans.
sqlite3 "$work/old.db" < "$here/data/schema9-pre-flavours.sql"
expect "a database from before flavours: --resume of its matrix plans nothing" "0 runs" \
	"$("$rcuwb" -d "$work/old.db" run -n --resume "$here/data/schema9-pre-flavours.yaml" 2>&1 | grep -o '^[0-9]* runs')"
expect "... its stored cells are the cells planned now" \
	"$("$rcuwb" -d "$work/old.db" run -n "$here/data/schema9-pre-flavours.yaml" 2>/dev/null | awk '$2 == "rep" { print $5 }' | sort | tr '\n' ' ')" \
	"$(sqlite3 "$work/old.db" "SELECT cell FROM runs" | sort | tr '\n' ' ')"
check "... and it is summarised" bash -c "'$rcuwb' -d '$work/old.db' summary -M pre | grep -q 'v1-n1/normal/w1-r0 '"

# refused RC MSG PATTERN: exit non-zero, one line, matching PATTERN
refused() { [ "$1" -ne 0 ] && [ "$(grep -c . <<< "$2")" = 1 ] && grep -q -- "$3" <<< "$2"; }

sum=$("$rcuwb" -d "$db" summary -M f 2>&1)
check "the summary has the flavours' cells apart ($(grep -c 'f=srcu\|f=tasks-tracing' <<< "$sum") lines)" \
	test "$(grep -c 'f=srcu\|f=tasks-tracing' <<< "$sum")" -ge 3
out=$("$rcuwb" -d "$db" gate --matrix f --baseline after --candidate planted 2>&1); rc=$?
grep -E '(PASS|SLOWDOWN|INCONCLUSIVE) +v1-n1/' <<< "$out" | sed 's/^ */    /'
check "the gate judges it (exit $rc: 0 PASS, 1 SLOWDOWN or 3 INCONCLUSIVE, not an error)" \
	test "$rc" -le 1 -o "$rc" -eq 3
for c in "normal/w1-r0/h1/hz250-full-idle/f=srcu/k=flavours" "expedited/w1-r0/h1/hz250-full-idle/f=srcu/k=flavours" \
	 "normal/w1-r0/h1/hz250-full-idle/f=tasks-tracing/k=flavours"; do
	check "... with a verdict of its own for $c" grep -qE "(PASS|SLOWDOWN|INCONCLUSIVE) +v1-n1/$c(:|\$)" <<< "$out"
done

# Refused before any guest boots, in one line naming file and line.
n0=$(q "SELECT COUNT(*) FROM runs")
sed 's/kconfigs: \[flavours\]/kconfigs: [tiny]/' "$work/f.yaml" > "$work/tiny.yaml"
msg=$("$rcuwb" -d "$db" run "$work/tiny.yaml" 2>&1); rc=$?
check "tasks-tracing in tiny: refused in one line ($msg)" refused "$rc" "$msg" \
	"^rcuwb: error: $work/tiny.yaml:7: flavours: after (tiny): flavour tasks-tracing needs CONFIG_TASKS_TRACE_RCU=y"
sed 's/flavours: \[srcu, tasks-tracing\]/flavours: [srcu, tree-srcu]/' "$work/f.yaml" > "$work/bad.yaml"
msg=$("$rcuwb" -d "$db" run "$work/bad.yaml" 2>&1); rc=$?
check "an unknown flavour: refused in one line ($msg)" refused "$rc" "$msg" \
	"$work/bad.yaml:7: flavours: no flavour 'tree-srcu': give one of rcu, srcu"
sed -e 's/modes: \[normal, expedited\]/modes: [expedited]/' -e 's/flavours: \[srcu, tasks-tracing\]/flavours: [tasks]/' \
	"$work/f.yaml" > "$work/exp.yaml"
msg=$("$rcuwb" -d "$db" run "$work/exp.yaml" 2>&1); rc=$?
check "expedited Tasks RCU alone: refused in one line ($msg)" refused "$rc" "$msg" \
	"modes: flavour tasks has no expedited GPs"
expect "... and nothing ran" "$n0" "$(q "SELECT COUNT(*) FROM runs")"
check "no domain left" no_domains
finish flavours
