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
#   tests/check.sh LOG     everything also goes to LOG
#   SUITES="unit hosts" tests/check.sh LOG    only these suites (make check SUITES=...)
set -uo pipefail
cd "$(dirname "$0")/.."
log=${1:-runner/obj/check.log}
mkdir -p "$(dirname "$log")"
: > "$log"
limit=${RCUWB_SUITE_TIMEOUT:-2400}	# seconds a suite may take

# The kernels the guest suites boot: every variant of the 6.1 series in
# `tiny`, `after` in `tree` (the Kconfig axis), and the 6.12 ones.
kernels() {
	make -s kernel VARIANTS="v4.9 v4.10 v4.11 before after planted stock" &&
	make -s kernel VARIANTS="after" KCONFIGS=tree &&
	make -s kernel VARIANTS="stock-6.12 after-6.12 v4.9-6.12"
}

# NAME NEEDS-KERNELS COMMAND...  (when any chosen suite needs the kernels, they
# are built first, the kernel trees with them, which the tree suites use)
suites=(
	"unit          no  make -s -C runner unit"
	"install       no  runner/tests/install.sh"
	"unit-san      no  make -s -C runner unit-san"
	"fuzz-regress  no  make -s -C runner fuzz-regress"
	"roundtrip     no  kernel-changes/tests/roundtrip.sh"
	"apply-failure no  kernel-changes/tests/apply-failure.sh"
	"sync-tree     no  build/tests/sync-tree.sh"
	"sources       no  build/tests/sources.sh"
	"stats         no  Rscript stats/tests/run.R"
	"parity        yes runner/tests/kvm-recheck-parity.sh"
	"integration   yes runner/tests/integration.sh"
	"matrix        yes runner/tests/matrix.sh"
	"sanitizers    yes runner/tests/sanitizers.sh"
	"faults        yes runner/tests/faults.sh"
	"hosts         yes runner/tests/hosts.sh"
	"gate          yes runner/tests/gate.sh"
	"compare       yes runner/tests/compare.sh"
	"plant         yes runner/tests/plant.sh"
	"midboot       yes runner/tests/midboot.sh"
	"debian612     yes runner/tests/debian612.sh"
	"nightly       yes runner/tests/nightly.sh"
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
	read -r _ needs _ <<< "$s"
	[ "$needs" = yes ] && needs_kernels=true
done

passed=0 failed=0 nsuites=${#suites[@]}
bad_suites=() not_run=()

# the "N passed, M failed" lines a suite printed, added up: "P F"
counts() {
	awk '/^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 } END { print p + 0, f + 0 }' "$1"
}

say() { echo "$*" | tee -a "$log"; }

kernels_ok=true
start=$(date +%s)
if $needs_kernels; then
	say "check: building the guest kernels the suites boot"
fi
if $needs_kernels && ! kernels 2>&1 | tee -a "$log"; then
	kernels_ok=false
	say "check: FAIL the guest kernels could not be built: the suites that boot guests do not run"
fi

for s in "${suites[@]}"; do
	read -r name needs cmd <<< "$s"
	if [ "$needs" = yes ] && ! $kernels_ok; then
		not_run+=("$name")
		continue
	fi
	out=$(mktemp)
	t0=$(date +%s)
	# shellcheck disable=SC2086 # the command is words
	timeout --kill-after=30 "$limit" $cmd 2>&1 | tee "$out" | tee -a "$log"
	rc=${PIPESTATUS[0]}
	read -r p f < <(counts "$out")
	rm -f "$out"
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
	say "check: $name took $(($(date +%s) - t0)) s"
done

list() { [ $# -eq 0 ] && echo none || echo "$*"; }
say "check: $(($(date +%s) - start)) s"
say "check: $passed passed, $failed failed"
say "check: $nsuites suites: ${#bad_suites[@]} failed ($(list "${bad_suites[@]}")), ${#not_run[@]} did not run ($(list "${not_run[@]}"))"
$kernels_ok && [ "$failed" -eq 0 ] && [ ${#not_run[@]} -eq 0 ]
