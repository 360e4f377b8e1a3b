#!/bin/bash
# runner/fuzz/run.sh SECONDS FUZZER...: run each libFuzzer harness for SECONDS
# from a corpus seeded with real consoles and the shipped configuration
# files (`make fuzz`).  Prints executions and time per harness; exits 1 when
# a harness found something (its input is left as obj/fuzz/NAME-crash-*).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:?usage: run.sh SECONDS FUZZER...}
shift
. "$here/seeds.sh"

# every harness at once (they share the host's PUs); then the report
pids=()
for f in "$@"; do
	name=${f##*/fuzz_}
	corpus=$top/runner/obj/fuzz/corpus-$name
	mkdir -p "$corpus"
	seed_dirs "$name" "$corpus"
	"$f" -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 -max_len=65536 \
		-timeout=10 -artifact_prefix="$top/runner/obj/fuzz/$name-" "$corpus" \
		> "$top/runner/obj/fuzz/$name.log" 2>&1 &
	pids+=("$!")
done
rcs=()
for pid in "${pids[@]}"; do
	wait "$pid"
	rcs+=("$?")
	rm -rf "/tmp/rcuwb-fuzz-$pid"	# the file parsers' scratch file (fuzz_file.h)
done

total=0 found=0 i=0
for f in "$@"; do
	name=${f##*/fuzz_}
	log=$top/runner/obj/fuzz/$name.log
	corpus=$top/runner/obj/fuzz/corpus-$name
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1)
	if [ "${rcs[$i]}" -ne 0 ]; then
		found=$((found + 1))
		echo "fuzz $name: FOUND something after ${execs:-?} executions: $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$log") (log $log)"
	else
		echo "fuzz $name: ${execs:-0} executions in $secs s (${rate:-?}/s, $cov, corpus $(ls "$corpus" | wc -l)), nothing found"
	fi
	total=$((total + ${execs:-0}))
	i=$((i + 1))
done
echo "fuzz: $total executions in all ($# harnesses at once for $secs s on $(nproc) PUs), $found found something"
[ "$found" -eq 0 ]
