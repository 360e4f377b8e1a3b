#!/usr/bin/env bash
# runner/tests/sanitizers.sh: real guests with the runner built with
# AddressSanitizer and UndefinedBehaviorSanitizer (runner/rcuwb-san, made by
# `make -C runner unit-san`): a boot, a small matrix, the summary, the
# parser, and a traced boot (Kconfig scenario trace: the ftrace dump read,
# cut into phases and stored), each without a sanitizer report.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch sanitizers
variant=${RCUWB_TEST_VARIANT:-after}
san=$here/../rcuwb-san
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:exitcode=99
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
[ -x "$san" ] || { bad "runner/rcuwb-san is built ('make -C runner unit-san')"; finish sanitizers; exit 1; }

echo "sanitizers: real guests with the ASan/UBSan runner (results in $db)"
clean() { # LOG: no sanitizer report in it
	! grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer" "$1"
}

"$san" -q -d "$db" boot -k "$variant" -n 2 -g expedited -M san > "$work/boot.out" 2>&1
expect "a boot under the sanitizers exits cleanly" 0 $?
check "with no sanitizer report" clean "$work/boot.out"
expect "and its run stored ok" ok "$(last outcome)"

printf 'name: san-mt\nvariants: [%s]\ntopologies: [{vcpus: 1}]\nmodes: [normal, expedited]\n' "$variant" > "$work/mt.yaml"
printf 'rcuscale: {nwriters: 1, nreaders: 0, holdoff: 1}\nreps: 1\ntimeout: 120\n' >> "$work/mt.yaml"
"$san" -q -d "$db" run "$work/mt.yaml" > "$work/run.out" 2>&1
expect "a matrix (placement, PU locks, interleaving) under the sanitizers exits cleanly" 0 $?
check "with no sanitizer report" clean "$work/run.out"
expect "both runs stored ok" 2 "$(q "SELECT COUNT(*) FROM runs WHERE matrix = 'san-mt' AND outcome = 'ok'")"

"$san" -d "$db" summary > "$work/summary.out" 2>&1
expect "summary under the sanitizers exits cleanly" 0 $?
check "with no sanitizer report" clean "$work/summary.out"
"$san" parse "$(last run_dir)/console.log" > "$work/parse.out" 2>&1
expect "parse of the last console under the sanitizers exits cleanly" 0 $?
check "with no sanitizer report" clean "$work/parse.out"
# a traced run: its ftrace dump read, its calls cut and stored (job.c), and
# the ftrace path of --kvm-recheck and anatomy --console on its console
"$san" -q -d "$db" boot -k "$variant" -K trace -n 2 -g expedited -M san-trace > "$work/trace.out" 2>&1
expect "a traced boot under the sanitizers exits cleanly" 0 $?
check "with no sanitizer report" clean "$work/trace.out"
expect "its calls cut into phases" 1 "$(q "SELECT COUNT(*) > 100 FROM gp_anatomy WHERE run_id = (SELECT MAX(id) FROM runs)")"
"$san" parse --kvm-recheck "$(last run_dir)/console.log" > "$work/recheck.out" 2>&1 &&
	"$san" anatomy --console "$(last run_dir)/console.log" >> "$work/recheck.out" 2>&1
expect "parse --kvm-recheck and anatomy --console of it under the sanitizers exit cleanly" 0 $?
check "with no sanitizer report" clean "$work/recheck.out"
check "no domain left" no_domains
for f in "$work"/*.out; do clean "$f" || { echo "--- $f"; head -n 40 "$f"; }; done
finish sanitizers
