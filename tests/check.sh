#!/usr/bin/env bash
# tests/check.sh: every test suite of `make check`, in pipeline order.
#
# Each suite runs even when an earlier one failed, with a time limit of its
# own; a suite that needs guest kernels does not run when they could not be
# built.  Every suite ends with a line "NAME: N passed, M failed"; one that
# exits non-zero without counting a failure (it crashed, or hit its time
# limit) counts as one failure.  The last two lines are the totals: the
# tests, then the suites that failed or did not run.  Exit 0 only when
# every suite ran and passed.
#
# Where a suite runs (the second column of the table below):
#   a, b   in one of two lanes that start at once, beside the kernel
#          builds: suites that build no kernel, boot no guest and time
#          nothing, so they may share the 2 PUs with a build and each other;
#          their output is printed whole when the lanes have ended
#   k      after the kernels are built, still beside lanes a and b: suites
#          that build kernels of their own in the shared build trees
#   g      last, one at a time, with nothing else running: suites that boot
#          guests (their runs are flagged host-busy when something else
#          takes CPU, and some of them time or gate what they measure)
#
#   tests/check.sh LOG     everything also goes to LOG
#   SUITES="unit hosts" tests/check.sh LOG    only these suites (make check SUITES=...)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
log=${1:-runner/obj/check.log}
mkdir -p "$(dirname "$log")"
: > "$log"
limit=${RCUWB_SUITE_TIMEOUT:-2400}	# seconds a suite may take

# The kernels the guest suites boot: every variant of the 6.1 series in
# `tiny`, `after` in `leaf2` (the Kconfig axis: a scenario that differs from
# tiny in kernel/rcu alone), `after` and `planted` in `trace` (the anatomy)
# and in `flavours` (Tasks Trace RCU), and the 6.12 ones.
kernels() {
	make -s kernel VARIANTS="v4.9 v4.10 v4.11 before after planted stock" &&
	make -s kernel VARIANTS="after" KCONFIGS=leaf2 &&
	make -s kernel VARIANTS="after planted" KCONFIGS=trace &&
	make -s kernel VARIANTS="after planted" KCONFIGS=flavours &&
	make -s kernel VARIANTS="stock-6.12 after-6.12 v4.9-6.12"
}

# NAME WHERE COMMAND...  (WHERE: a, b, k or g, above)
suites=(
	"unit          a  make -s -C runner unit"
	"install       a  runner/tests/install.sh"
	"unit-san      a  make -s -C runner unit-san"
	"fuzz-regress  a  make -s -C runner fuzz-regress"
	"roundtrip     a  kernel-changes/tests/roundtrip.sh"
	"apply-failure a  kernel-changes/tests/apply-failure.sh"
	"sync-tree     a  build/tests/sync-tree.sh"
	"stats         b  Rscript stats/tests/run.R"
	"sources       k  build/tests/sources.sh"
	"parity        g  runner/tests/kvm-recheck-parity.sh"
	"integration   g  runner/tests/integration.sh"
	"matrix        g  runner/tests/matrix.sh"
	"sanitizers    g  runner/tests/sanitizers.sh"
	"faults        g  runner/tests/faults.sh"
	"hosts         g  runner/tests/hosts.sh"
	"gate          g  runner/tests/gate.sh"
	"compare       g  runner/tests/compare.sh"
	"plant         g  runner/tests/plant.sh"
	"midboot       g  runner/tests/midboot.sh"
	"anatomy       g  runner/tests/anatomy.sh"
	"flavours      g  runner/tests/flavours.sh"
	"debian612     g  runner/tests/debian612.sh"
	"nightly       g  runner/tests/nightly.sh"
)

# the suites asked for (all by default)
if [ -n "${SUITES:-}" ]; then
	chosen=()
	for s in "${suites[@]}"; do
		read -r name _ <<< "$s"
		[[ " $SUITES " == *" $name "* ]] && chosen+=("$s")
	done
	for name in $SUITES; do
		printf '%s\n' "${suites[@]}" | grep -q "^$name " ||
			{ echo "check: SUITES: no suite '$name' (see tests/check.sh)" >&2; exit 2; }
	done
	suites=("${chosen[@]}")
fi
needs_kernels=false
for s in "${suites[@]}"; do
	read -r _ where _ <<< "$s"
	[ "$where" = g ] && needs_kernels=true
done

passed=0 failed=0 nsuites=${#suites[@]}
bad_suites=() not_run=()
outdir=$(mktemp -d "${TMPDIR:-/tmp}/rcuwb-check.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$outdir"' EXIT

# the "N passed, M failed" lines a suite printed, added up: "P F"
counts() {
	awk '/^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 } END { print p + 0, f + 0 }' "$1"
}

say() { echo "$*" | tee -a "$log"; }

# run NAME COMMAND...: run one suite with its time limit; its output to
# $outdir/NAME.out (and, with live=1 in the environment, to the terminal
# and the log as it comes), its exit status and seconds to NAME.rc
run() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	if [ "${live:-0}" = 1 ]; then
		timeout --kill-after=30 "$limit" "$@" 2>&1 | tee "$outdir/$name.out" | tee -a "$log"
		rc=${PIPESTATUS[0]}
	else
		timeout --kill-after=30 "$limit" "$@" > "$outdir/$name.out" 2>&1
		rc=$?
	fi
	echo "$rc $(($(date +%s) - t0))" > "$outdir/$name.rc"
}

# tally NAME [quiet]: count a suite that ran (printing its output first
# unless it was printed live)
tally() {
	local name=$1 rc secs p f
	[ "${2:-}" = quiet ] || tee -a "$log" < "$outdir/$name.out"
	read -r rc secs < "$outdir/$name.rc"
	read -r p f < <(counts "$outdir/$name.out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			say "$name: FAIL did not finish within $limit s"
		else
			say "$name: FAIL exited $rc without counting a failure"
		fi
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -eq 0 ] || bad_suites+=("$name")
	say "check: $name took $secs s"
}

# lane WHERE: the chosen suites of one lane, one after another
lane() {
	local s name where cmd
	for s in "${suites[@]}"; do
		read -r name where cmd <<< "$s"
		[ "$where" = "$1" ] || continue
		# shellcheck disable=SC2086 # the command is words
		run "$name" $cmd
		echo "check: $name ended (lane $1)"
	done
}

start=$(date +%s)
lane a & lane_a=$!
lane b & lane_b=$!

kernels_ok=true
if $needs_kernels; then
	say "check: building the guest kernels the suites boot (beside lanes a and b)"
	if ! kernels 2>&1 | tee -a "$log"; then
		kernels_ok=false
		say "check: FAIL the guest kernels could not be built: the suites that boot guests do not run"
	fi
fi
for s in "${suites[@]}"; do
	read -r name where cmd <<< "$s"
	# shellcheck disable=SC2086 # the command is words
	[ "$where" = k ] && live=1 run "$name" $cmd
done
wait "$lane_a" "$lane_b"

# what ran beside the builds, in table order, then the guest suites
for s in "${suites[@]}"; do
	read -r name where cmd <<< "$s"
	case $where in
	a | b) tally "$name" ;;
	k) tally "$name" quiet ;;
	g)
		if ! $kernels_ok; then
			not_run+=("$name")
			continue
		fi
		# shellcheck disable=SC2086 # the command is words
		live=1 run "$name" $cmd
		tally "$name" quiet
		;;
	esac
done

list() { [ $# -eq 0 ] && echo none || echo "$*"; }
say "check: $(($(date +%s) - start)) s"
say "check: $passed passed, $failed failed"
say "check: $nsuites suites: ${#bad_suites[@]} failed ($(list "${bad_suites[@]}")), ${#not_run[@]} did not run ($(list "${not_run[@]}"))"
$kernels_ok && [ "$failed" -eq 0 ] && [ ${#not_run[@]} -eq 0 ]
