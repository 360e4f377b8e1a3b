#!/usr/bin/env bash
# runner/tests/install.sh: `make install PREFIX=DIR` gives a rcuwb that runs
# away from its checkout: PREFIX/bin/rcuwb finds its data (the R statistics,
# perf-configs/, VMs/, build/, kernel-changes/) in PREFIX/share/rcuwb
# (data_dir(), runner/src/common.c).  No root, no kernels, no guests; the
# gate's check needs Rscript (make deps).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch install
top=$(cd "$here/../.." && pwd)
prefix=$work/prefix
bin=$prefix/bin/rcuwb
data=$prefix/share/rcuwb
unset RCUWB_DATADIR RCUWB_CHANGES RCUWB_KCONFIG_DIR RCUWB_DOMAIN_TEMPLATE
export RCUWB_CACHE=$work/cache
cd "$work" || exit 1	# nothing of the checkout from here

echo "install: make install PREFIX=$prefix"
make -s -C "$top" install PREFIX="$prefix" > "$work/make.out" 2>&1
expect "make install PREFIX=DIR succeeds" 0 $?
check "the program is PREFIX/bin/rcuwb" test -x "$bin"
for f in stats/R perf-configs/compare.yaml perf-configs/kconfig VMs/domain.xml kernel-changes/variants/after; do
	check "the data has $f" test -e "$data/$f"
done
check "build/kernel.sh is there and executable" test -x "$data/build/kernel.sh"
check "the folders' tests stay behind" test ! -e "$data/stats/tests"

"$bin" --help > "$work/help.out" 2>&1
expect "rcuwb --help exits 0" 0 $?
check "and names PREFIX/share/rcuwb as its data" grep -qxF "  $(cd "$data" && pwd -P)" "$work/help.out"

"$bin" run --dry-run "$data/perf-configs/quick.yaml" > "$work/plan.out" 2>&1
expect "run --dry-run of the installed quick.yaml (variants, Kconfig scenarios from the install) exits 0" 0 $?
check "and prints a plan" grep -q "rep 1 " "$work/plan.out"
# make midboot builds the kernels a matrix needs from this plan (the Makefile's matrix_kernels)
plan=$("$bin" -j run --dry-run "$data/perf-configs/kconfigs.yaml" 2>&1)
expect "-j run --dry-run: every run's variant and Kconfig scenario" "after|preempt-none tiny tree" \
	"$(sed -n 's/.*"variant": *"\([^"]*\)".*/\1/p' <<< "$plan" | sort -u | tr '\n' ' ' | sed 's/ $//')|$(
	   sed -n 's/.*"kconfig": *"\([^"]*\)".*/\1/p' <<< "$plan" | sort -u | tr '\n' ' ' | sed 's/ $//')"

"$bin" -d "$work/rcuwb.db" schedule install --cron rcuwb-6.1 > "$work/cron.out" 2>&1
expect "a schedule by name (perf-configs/schedules/NAME.yaml of the install) exits 0" 0 $?
check "its crontab line works in the data directory" grep -qF "cd $(cd "$data" && pwd -P) && " "$work/cron.out"

"$bin" -d "$work/rcuwb.db" summary > /dev/null 2>&1	# an empty results database
"$bin" -d "$work/rcuwb.db" gate --baseline before --candidate after > "$work/gate.out" 2>&1
expect "gate runs the installed stats/exec/rcuwb-gate.R: exit 64, no such variant stored" 64 $?
check "which says so" grep -q "not in the database" "$work/gate.out"

mkdir -p "$work/lone/bin" && cp "$bin" "$work/lone/bin/rcuwb"
"$work/lone/bin/rcuwb" run --dry-run "$data/perf-configs/quick.yaml" > "$work/lone.out" 2>&1
expect "a binary without its data fails" 1 $?
check "in one line naming where it looked" grep -qF "neither $work/lone/bin/.. (a checkout) nor $work/lone/bin/../share/rcuwb" \
	"$work/lone.out"
RCUWB_DATADIR=$data "$work/lone/bin/rcuwb" run --dry-run "$data/perf-configs/quick.yaml" > /dev/null 2>&1
expect "and works with RCUWB_DATADIR" 0 $?

for f in "$work"/*.out; do [ "$fail" -eq 0 ] || { echo "--- $f"; head -n 20 "$f"; }; done
finish install
