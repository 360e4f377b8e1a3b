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

# The scaling study: perf-configs/full.yaml when it has been run, else its
# reduced form (one run a cell).
scaling=full-reduced
[ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'full' AND outcome = 'ok'")" -gt 0 ] && scaling=full

rm -rf "$out" && mkdir -p "$out"
"$rcuwb" -q -d "$db" report --out "$out" --matrix midboot,$scaling --baseline before \
	--candidate after,midboot --title "rcuwb: RCU grace periods before and after the mid-boot change" >/dev/null ||
	{ echo "results.sh: rcuwb report failed" >&2; exit 1; }
gate() { # gate ARGS...: the gate's text and its exit code
	"$rcuwb" -d "$db" gate "$@" 2>&1
	echo "(exit code $?)"
}

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

## The mid-boot dead zone (\`make midboot\`, perf-configs/midboot.yaml)

One boot per variant x \`rcu_normal\` x stage x primitive (2 vCPUs, watchdog 3 s):
median latency of the synchronous grace-period call, or DEADLOCK when the
probe's watchdog reported that it never returned. Stage 1 is the dead zone
proper (an early_initcall before RCU's grace-period kthread exists), 2 RCU's
kthreads up but still \`RCU_SCHEDULER_INIT\`, 3 runtime mode before the end of
the in-kernel boot, 4 after boot.

\`\`\`
$("$rcuwb" -d "$db" summary --probes -M midboot)
\`\`\`

rcuscale in the same matrix (\`rcuwb summary -M midboot\`):

\`\`\`
$("$rcuwb" -d "$db" summary -M midboot)
\`\`\`

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

\`rcuwb gate --baseline after --candidate midboot --matrix midboot\` (midboot
aborts rcuscale's normal-GP test, the bug seed 002 fixed):

\`\`\`
$(gate --baseline after --candidate midboot --matrix midboot)
\`\`\`

## How good is the gate? (\`make gate-calibration\`, perf-configs/gate-calibration.yaml)

Pools of 16 runs per variant and cell of a 1-vCPU guest (one rcuscale
writer): \`after\` against \`after-aa\`, which builds the byte-identical kernel
(A/A: every flag is a false alarm), and against \`planted\`, which adds a known
delay to every grace period: \`rcutree.planted_gp_delay_us\` sleeps in the
normal grace-period kthread, \`rcutree.planted_exp_delay_us\` spins in the
expedited worker. Each trial gates n runs drawn per side from the pools.
Normal grace periods end on scheduler ticks (4 ms at HZ=250), so a planted
1.2 ms or 3 ms moves their latency by a whole tick, not by 10% or 25%: the
10% and 25% slowdowns are the expedited cells (3 us and 7 us on about 28 us).

$(Rscript "$top/stats/gate-calibration.R" --db "$db" --matrix gatecal,gatecal-exp --baseline after --aa after-aa \
	--planted planted --n 5,8 --trials 200 2>&1)

## Plots

![GP latency vs vCPUs](stats/results/plots/latency_vs_vcpus.svg)

![Mid-boot outcomes](stats/results/plots/midboot_grid.svg)

More in [stats/results/report.md](stats/results/report.md).
EOT
} > "$top/RESULTS.md"
echo "results.sh: wrote RESULTS.md and $out"
