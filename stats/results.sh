#!/usr/bin/env bash
# stats/results.sh [DB]: regenerate RESULTS.md and stats/results/ (the full
# report with its plots and CSVs) from a results database filled by
# `make bench`, `make midboot` and `make gate-calibration`.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
db=${1:-$top/results/rcuwb.db}
rcuwb=$top/runner/rcuwb
out=$top/stats/results
[ -r "$db" ] || { echo "results.sh: no database $db: run 'make bench midboot gate-calibration' first" >&2; exit 1; }
q() { sqlite3 -cmd ".timeout 10000" "$db" "$1"; }
# opened by the runner once: the schema up to date (the view run_status,
# whose host_busy the counts below read)
"$rcuwb" -d "$db" summary -M - >/dev/null || exit 1

# The scaling study: perf-configs/full.yaml when it has been run, else its
# reduced form (one run a cell).
scaling=full-reduced
[ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'full' AND outcome = 'ok'")" -gt 0 ] && scaling=full

gate() { # gate ARGS...: the gate's text and its exit code
	"$rcuwb" -d "$db" gate "$@" 2>&1
	echo "(exit code $?)"
}

# The mid-boot section: the release variants' outcomes from perf-configs/midboot.yaml.
midboot_section() {
	local boots busy slow hung bytimeout
	boots=$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'midboot' AND kind = 'probe'")
	busy=$(q "SELECT COUNT(*) FROM run_status WHERE matrix = 'midboot' AND host_busy")
	slow=$(q "SELECT COUNT(*) FROM probes p JOIN runs r ON p.run_id = r.id WHERE r.matrix = 'midboot' AND p.outcome = 'slow'")
	hung=$(q "SELECT COUNT(*) FROM probes p JOIN runs r ON p.run_id = r.id WHERE r.matrix = 'midboot' AND p.outcome = 'hung'")
	bytimeout=$(q "SELECT COUNT(*) FROM probes p JOIN runs r ON p.run_id = r.id WHERE r.matrix = 'midboot' AND p.outcome = 'deadlock' AND p.evidence LIKE 'no return before%'")
	cat <<EOS
## The mid-boot dead zone, release by release (\`make midboot\`, perf-configs/midboot.yaml)

The kernel's history, each step a variant of 6.1 (kernel-changes/README.md
has the code behind each row):

| variant | release semantics | what its boots show below |
|---------|-------------------|---------------------------|
| \`v4.9\` | expedited GPs always handed to a workqueue, \`rcu_normal\` honoured in boot, no boot-time expediting | the dead zone: \`synchronize_rcu()\` deadlocks at stages 0 and 1, \`synchronize_rcu_tasks()\` at stage 1, \`synchronize_rcu_expedited()\` at stage 0 (handed to \`rcu_gp_wq\`, no worker yet) and, with \`rcu_normal=1\`, at stage 1; at stage 1 without \`rcu_normal\` the expedited GP has a worker and completes |
| \`v4.10\` | + 52d7e48b86fc: while \`RCU_SCHEDULER_INIT\` every GP is expedited and driven by the requesting task | \`synchronize_rcu()\`, \`synchronize_rcu_expedited()\` and \`synchronize_rcu_tasks()\` complete wherever they can be called, \`rcu_normal\` or not; rcuscale's init-time check does not fire |
| \`v4.11\` | + boot-time expediting of every normal GP until \`rcu_end_inkernel_boot()\` | the probe as in v4.10, but rcuscale's normal-GP test aborts: "All grace periods expedited, no normal ones to measure!" |
| \`after\` | + 9683937df9eb (v4.13): the check moves to the end of the test; = 6.1 | probe as in v4.10, and rcuscale measures both GP modes |

In every variant, 6.1 as shipped included, Tree SRCU deadlocks at stage 0:
its grace period is work on \`rcu_gp_wq\`, and no workqueue worker exists
before \`workqueue_init()\`: 6.1's own remaining boot-time gap, for SRCU.

$boots probe boots, $(q "SELECT min(started_at) || ' to ' || max(ended_at) || ', accelerator ' || group_concat(DISTINCT accel) || ', ' || max(host_pus) || ' host PUs, oversubscription ' || printf('%.1f', max(oversub)) FROM runs WHERE matrix = 'midboot'")
(2 vCPUs a guest): stages 0 and 1 in boots of their own, one
primitive a boot, stages 2-4 together; 3 calls of the primitive per stage
and boot; 5 boots a cell; no rcuscale writer runs beside the probe. Each
cell: median (interquartile range) of the calls that returned, then
boots/calls; DEADLOCK d/b when in d of its b boots a call could never
return, with the evidence under the table; n/a where the probe cannot call
the primitive (Tasks RCU before \`rcu_init_tasks_generic()\`, where it
oopses). $busy of these runs were host-busy; $slow calls were slow (returned
after the 3 s watchdog) and $hung hung without a verdict.

\`\`\`
$("$rcuwb" -d "$db" summary --probes -M midboot)
\`\`\`

The slowest call that completed, per stage, over all variants: the
watchdog (3 s) that triggers the probe's diagnostics, and the run timeout
(60 s) that a hang without evidence waits for before it counts as a
deadlock, are both far above it. $bytimeout of the deadlocked calls above rest
on that timeout; all others carry the probe's evidence.

\`\`\`
$(q "SELECT 'stage ' || p.stage || ' ' || p.point || ': ' || printf('%.1f ms', MAX(p.duration_ns) / 1e6) || ' (' || p.prim || ', ' || r.variant || ')' FROM probes p JOIN runs r ON p.run_id = r.id WHERE r.matrix = 'midboot' AND p.outcome IN ('ok', 'slow') GROUP BY p.stage ORDER BY p.stage")
\`\`\`

rcuscale in the same matrix (\`rcuwb summary -M midboot\`, its probe cells
left out): v4.11's normal-GP
runs are \`rcuscale-aborted\`; with \`rcu_normal=1\` an expedited test measures
normal GPs, which v4.9-v4.11 refuse at init and 6.1 reports at the end
(\`rcuscale-error\`):

\`\`\`
$("$rcuwb" -d "$db" summary -M midboot | grep -v '/probe-')
\`\`\`
EOS
}

# The gate's calibration: planted slowdowns on one binary (make gate-calibration).
calibration_section() {
	cat <<EOS
## How good is the gate? (\`make gate-calibration\`, perf-configs/gatecal-*.yaml)

One binary, \`planted\` (patch 0008), whose plant is the dose, against
itself with the plant at zero: normal GPs get whole ticks
(\`rcutree.planted_gp_tick_permille\`: N/1000 ticks of 4 ms per
\`synchronize_rcu()\`, doses set from a pilot's control mean), expedited GPs
extra expedited GPs inside the interval rcuscale measures, one per call at
most, until their time is N/1000 of the measured time
(\`rcutree.planted_exp_time_permille\`: the time on rcuscale's own clock,
rcuscale's slow first GPs included, so the per-run mean grows by N/1000
whatever a GP costs that boot; the kernel prints which calls held one);
both plants run on rcuscale's own clock.
\`gatecal-v1\`/\`-v2\` (80 repetitions: a control of 80 runs and 80 of each
dose, so that n = 20 draws from 4n) plant 10% and 25%; \`gatecal-doses-v1\`/\`-v2\`
(16 repetitions, each with a control of its own, interleaved) plant 5% and
50%.
1- and 2-vCPU guests, one rcuscale writer, holdoff boot; \`make
gate-calibration\` runs the 1-vCPU matrices \`gatecal-v1\` and
\`gatecal-doses-v1\` two guests side by side on a PU each (runs stored by
an earlier rcuwb ran one at a time), the others one guest at a time;
$(q "SELECT COUNT(*) FROM runs WHERE matrix LIKE 'gatecal%'") runs: normal GPs $(q "SELECT min(started_at) || ' to ' || max(ended_at) FROM runs WHERE matrix LIKE 'gatecal%' AND gp_mode = 'normal'"),
expedited GPs $(q "SELECT min(started_at) || ' to ' || max(ended_at) FROM runs WHERE matrix LIKE 'gatecal%' AND gp_mode = 'expedited'"),
$(q "SELECT COUNT(*) FROM run_status WHERE matrix LIKE 'gatecal%' AND host_busy") host-busy.

$(Rscript "$top/stats/gate-calibration.R" --db "$db" --plots "$out/plots" 2>&1)

![Power curve](stats/results/plots/power_curve.svg)
EOS
}

# Item 11's side-by-side measurement: holdoff 3 s against holdoff boot.
holdoff_section() {
	cat <<EOS
## Cost per run: holdoff 3 s against holdoff boot (perf-configs/holdoff.yaml)

\`after\`, 1, 2 and 4 vCPUs (the last 2 NUMA nodes, oversubscribed 2:1),
both GP modes, one writer per vCPU, the two settings interleaved in one
matrix, one guest at a time, $(q "SELECT COUNT(*) FROM runs WHERE matrix = 'holdoff'") runs ($(q "SELECT min(started_at) || ' to ' || max(ended_at) FROM runs WHERE matrix = 'holdoff'")).
The gate compares holdoff boot (candidate) with holdoff 3 s (baseline) on
the same binary: the measurement must not move.

\`\`\`
$(Rscript "$top/stats/settings.R" --db "$db" --matrix holdoff --baseline-param rcuscale.holdoff=3 --names "holdoff 3 s,holdoff boot" 2>&1)
\`\`\`
EOS
}

# Where QEMU's own threads run (make emulator).
emulator_section() {
	cat <<EOS
## QEMU's threads apart from the vCPU or beside it (\`make emulator\`)

A 1-vCPU guest of \`after\`, both GP modes, one writer, holdoff boot, one
guest at a time; \`emulator: apart\` (QEMU's own threads on the other host
PU) alternated with \`emulator: shared\` (on the vCPU's PU), $(q "SELECT COUNT(*) FROM runs WHERE matrix LIKE 'emu-%'") runs.

\`\`\`
$(Rscript "$top/stats/settings.R" --db "$db" --matrix emu-apart,emu-shared --by emulator --names "emulator shared,emulator apart" 2>&1)
\`\`\`
EOS
}

# One guest at a time against two side by side (make sidebyside).
sidebyside_section() {
	cat <<EOS
## One guest at a time or two side by side (\`make sidebyside\`)

A 1-vCPU guest of \`after\`, both GP modes, one writer, holdoff boot;
\`run -J 1\` (one guest at a time) alternated with \`run -J 2\` (two guests at
once, each pinned to a host PU of its own, QEMU's threads beside its vCPU),
$(q "SELECT COUNT(*) || ' runs, ' || SUM(host_busy) || ' host-busy (left out), ' || min(started_at) || ' to ' || max(ended_at) FROM run_status WHERE matrix LIKE 'side-%'").

\`\`\`
$(Rscript "$top/stats/settings.R" --db "$db" --matrix side-solo,side-pair --by matrix --names "one at a time,side by side" 2>&1)
\`\`\`
EOS
}

# More GPs per boot: 1, 2 and 4 rcuscale writers (make gpsperboot).
gpsperboot_section() {
	cat <<EOS
## More GPs per boot: 1, 2 and 4 rcuscale writers (\`make gpsperboot\`)

A 1-vCPU guest of \`after\`, both GP modes, holdoff boot, 1, 2 or 4
rcuscale writers (rcuscale's own parameter; each writer measures at least
100 GPs, so a boot gives at least 100, 200 or 400), alternated, two guests
side by side on a PU each,
$(q "SELECT COUNT(*) || ' runs, ' || IFNULL(SUM(host_busy), 0) || ' host-busy (left out), ' || min(started_at) || ' to ' || max(ended_at) FROM run_status WHERE matrix LIKE 'gpb-%'").
The gate compares the settings cell by cell with the writers left out of
the key; more writers contend for the same GPs, so a difference there is
what they measure, not a fault.

\`\`\`
$(Rscript "$top/stats/settings.R" --db "$db" --matrix gpb-w1,gpb-w2 --by matrix --drop writers --names "1 writer,2 writers" 2>&1)
\`\`\`

\`\`\`
$(Rscript "$top/stats/settings.R" --db "$db" --matrix gpb-w1,gpb-w4 --by matrix --drop writers --names "1 writer,4 writers" 2>&1)
\`\`\`
EOS
}

# Debian's two kernel lines as packaged (perf-configs/lines.yaml).
lines_section() {
	cat <<EOS
## Debian's 6.1 against Debian's 6.12 (perf-configs/lines.yaml)

\`stock\` ($(q "SELECT group_concat(DISTINCT kernel_version || ' from ' || source) FROM runs WHERE matrix = 'lines' AND variant = 'stock'"))
against \`stock-6.12\` ($(q "SELECT group_concat(DISTINCT kernel_version || ' from ' || source) FROM runs WHERE matrix = 'lines' AND variant = 'stock-6.12'")),
both as packaged, both in rcuwb's \`tiny\` Kconfig scenario (HZ 250,
preemptible Tree RCU, NO_HZ idle, no RCU priority boosting); 1-, 2- and
4-vCPU guests (the 4-vCPU one with 2 NUMA nodes, 2:1 oversubscribed, \`!\`),
one rcuscale writer per vCPU, holdoff boot, one guest at a time:
$(q "SELECT COUNT(*) || ' runs, ' || SUM(outcome = 'ok') || ' ok, ' || SUM(host_busy) || ' host-busy (left out), ' || min(started_at) || ' to ' || max(ended_at) FROM run_status WHERE matrix = 'lines'").

\`\`\`
$("$rcuwb" -d "$db" summary -M lines)
\`\`\`

The gate, 6.12 against 6.1 (\`rcuwb gate --baseline stock --candidate stock-6.12 --matrix lines\`):

\`\`\`
$(gate --baseline stock --candidate stock-6.12 --matrix lines)
\`\`\`
EOS
}

# The mid-boot table of the 6.12 series (perf-configs/midboot-6.12.yaml).
midboot612_section() {
	cat <<EOS
## The mid-boot dead zone on 6.12 (\`make midboot MIDBOOT=perf-configs/midboot-6.12.yaml\`)

The same matrix as 6.1's above, on Debian's 6.12
($(q "SELECT group_concat(DISTINCT kernel_version) FROM runs WHERE matrix = 'midboot-6.12'")): the series of
\`kernel-changes/6.12/\` (its README says what differs from 6.1 and why
0001 needs a workqueue path of its own there).
$(q "SELECT COUNT(*) || ' boots (' || SUM(kind = 'probe') || ' probe boots), ' || SUM(host_busy) || ' host-busy, ' || min(started_at) || ' to ' || max(ended_at) || ', accelerator ' || group_concat(DISTINCT accel) FROM run_status WHERE matrix = 'midboot-6.12'");
$(q "SELECT COUNT(*) FROM probes p JOIN runs r ON p.run_id = r.id WHERE r.matrix = 'midboot-6.12' AND p.outcome = 'slow'") slow calls,
$(q "SELECT COUNT(*) FROM probes p JOIN runs r ON p.run_id = r.id WHERE r.matrix = 'midboot-6.12' AND p.outcome = 'hung'") hung without a verdict,
$(q "SELECT COUNT(*) FROM probes p JOIN runs r ON p.run_id = r.id WHERE r.matrix = 'midboot-6.12' AND p.outcome = 'deadlock' AND p.evidence LIKE 'no return before%'") deadlocks resting on the timeout alone.

\`\`\`
$("$rcuwb" -d "$db" summary --probes -M midboot-6.12)
\`\`\`

rcuscale in the same matrix:

\`\`\`
$("$rcuwb" -d "$db" summary -M midboot-6.12 | grep -v '/probe-')
\`\`\`
EOS
}

# Kconfig scenarios of one kernel (perf-configs/kconfigs.yaml).
kconfigs_section() {
	cat <<EOS
## Kernel configuration as the variable (perf-configs/kconfigs.yaml)

One kernel, \`after\` (6.1 as shipped; the probe idle), built in three
Kconfig scenarios of \`perf-configs/kconfig/scenarios/\`: \`tiny\` (HZ 250,
preemptible), \`tree\` (the kernel's rcuscale TREE scenario: HZ 1000,
preemptible, RCU tracing) and \`preempt-none\` (HZ 1000, non-preemptible
Tree RCU); 1- and 2-vCPU guests, one writer per vCPU, holdoff boot, one
guest at a time:
$(q "SELECT COUNT(*) || ' runs, ' || SUM(outcome = 'ok') || ' ok, ' || SUM(host_busy) || ' host-busy (left out), ' || min(started_at) || ' to ' || max(ended_at) FROM run_status WHERE matrix = 'kconfigs'").

\`\`\`
$("$rcuwb" -d "$db" summary -M kconfigs)
\`\`\`

\`tree\` against \`tiny\` (\`Rscript stats/settings.R --matrix kconfigs --by kconfig --names tiny,tree\`):

\`\`\`
$(Rscript "$top/stats/settings.R" --db "$db" --matrix kconfigs --by kconfig --names tiny,tree 2>&1; echo "(exit code $?)")
\`\`\`

\`preempt-none\` against \`tree\` (the same HZ; only the preemption model differs):

\`\`\`
$(Rscript "$top/stats/settings.R" --db "$db" --matrix kconfigs --by kconfig --names tree,preempt-none 2>&1; echo "(exit code $?)")
\`\`\`
EOS
}

# results.sh DB --section NAME: print that section only (midboot,
# midboot-6.12, lines, kconfigs, calibration, holdoff, emulator, sidebyside,
# gpsperboot), for a
# database that holds only its matrices.
if [ "${2:-}" = "--section" ]; then
	case "${3:-}" in
	midboot) midboot_section ;;
	midboot-6.12) midboot612_section ;;
	lines) lines_section ;;
	kconfigs) kconfigs_section ;;
	calibration) mkdir -p "$out/plots"; calibration_section ;;
	holdoff) holdoff_section ;;
	emulator) emulator_section ;;
	sidebyside) sidebyside_section ;;
	gpsperboot) gpsperboot_section ;;
	*) echo "results.sh: --section midboot, midboot-6.12, lines, kconfigs, calibration, holdoff, emulator, sidebyside or gpsperboot" >&2; exit 64 ;;
	esac
	exit
fi

scaling_section() {
	local runs guest_s
	runs=$(q "SELECT COUNT(*) FROM runs WHERE matrix = '$scaling'")
	guest_s=$(q "SELECT CAST(ROUND(SUM(wall_s)) AS INTEGER) FROM runs WHERE matrix = '$scaling'")
	cat <<EOS
## Scaling with vCPUs and NUMA nodes (perf-configs/$scaling.yaml)

Every topology of \`perf-configs/full.yaml\` (1-16 vCPUs, 1/2/4 NUMA nodes),
normal and expedited grace periods, \`before\` and \`after\`, $([ "$scaling" = full ] &&
		echo "ten runs a cell" || echo "one run a cell (\`full.yaml\` itself has ten)"):
$runs runs stored, $guest_s s of guest time. On 2 host PUs every guest above
2 vCPUs is oversubscribed (\`!\`), by up to 8:1, and its latencies say more
about the host's scheduler than about RCU.

All samples of a cell's ok runs pooled (\`rcuwb summary -M $scaling\`):

\`\`\`
$("$rcuwb" -d "$db" summary -M "$scaling")
\`\`\`
EOS
	[ "$scaling" = full ] || return 0
	cat <<EOS

Per-run p50, median over runs with a CI, \`after\` against \`before\` in every
cell (\`rcuwb gate --baseline before --candidate after --matrix full\`; Holm
over all cells; its caveat line counts the host-busy runs left out). The
mid-boot change only alters boot-time behaviour, so no cell should move:

\`\`\`
$(gate --baseline before --candidate after --matrix full)
\`\`\`
EOS
}

rm -rf "$out" && mkdir -p "$out"
"$rcuwb" -q -d "$db" report --out "$out" --matrix midboot,$scaling --baseline before \
	--candidate after --title "rcuwb: RCU grace periods before and after the mid-boot change" >/dev/null ||
	{ echo "results.sh: rcuwb report failed" >&2; exit 1; }

host=$(q "SELECT host || ', ' || host_pus || ' host PUs, QEMU ' || qemu_version || ', libvirt ' || libvirt_version FROM runs ORDER BY id DESC LIMIT 1")
accel=$(q "SELECT group_concat(DISTINCT accel) FROM runs")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
kernel=$(q "SELECT kernel_version || ', HZ=' || kconfig_hz || ', preempt=' || kconfig_preempt || ', NO_HZ=' || kconfig_nohz FROM runs ORDER BY id DESC LIMIT 1")
span=$(q "SELECT min(started_at) || ' to ' || max(ended_at) FROM runs")

{
cat <<EOT
# rcuwb results

Measured by rcuwb on **$host** ($cpu), guests under **${accel^^}**
(this host's KVM cannot run a stock kernel; see \`../shared/machine-notes.md\`),
guest kernel Linux $kernel, runs from $span.
Regenerate with \`make results\` after \`make bench midboot gate-calibration\` and
\`make bench MATRIX=perf-configs/full.yaml\` (or \`full-reduced.yaml\`).

**Read these numbers as what they are.** Under TCG every guest instruction is
emulated, so absolute latencies are not those of hardware; the host has 2 PUs,
so a 4-vCPU guest is oversubscribed 2:1, which stalls expedited grace periods
(they IPI every CPU and wait for a descheduled vCPU). Every table and plot of
the full report ([stats/results/report.md](stats/results/report.md), HTML
beside it) states the accelerator and oversubscription of its runs.

$(midboot_section)

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'midboot-6.12'")" -gt 0 ] && midboot612_section)

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'lines'")" -gt 0 ] && lines_section)

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'kconfigs'")" -gt 0 ] && kconfigs_section)

## Grace-period latency before and after (\`make bench\`, perf-configs/quick.yaml)

All samples of a cell's ok runs pooled (\`rcuwb summary -M quick\`; the full
report has per-run statistics with bootstrap CIs):

\`\`\`
$("$rcuwb" -d "$db" summary -M quick)
\`\`\`

$(scaling_section)

## Regression gate

\`rcuwb gate --baseline before --candidate after --matrix quick\`:

\`\`\`
$(gate --baseline before --candidate after --matrix quick)
\`\`\`

\`rcuwb gate --baseline after --candidate v4.11 --matrix midboot\` (v4.11
aborts rcuscale's normal-GP test, the bug seed 002 fixed):

\`\`\`
$(gate --baseline after --candidate v4.11 --matrix midboot)
\`\`\`

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'gatecal-v1'")" -gt 0 ] && calibration_section)

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'holdoff'")" -gt 0 ] && holdoff_section)

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'emu-apart'")" -gt 0 ] && emulator_section)

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'side-pair'")" -gt 0 ] && sidebyside_section)

$( [ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'gpb-w4'")" -gt 0 ] && gpsperboot_section)

## Plots

![GP latency vs vCPUs](stats/results/plots/latency_vs_vcpus.svg)

![Mid-boot outcomes](stats/results/plots/midboot_grid.svg)

More in [stats/results/report.md](stats/results/report.md).
EOT
} > "$top/RESULTS.md"
echo "results.sh: wrote RESULTS.md and $out"
