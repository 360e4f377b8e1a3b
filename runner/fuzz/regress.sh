#!/bin/bash
# runner/fuzz/regress.sh FUZZER...: replay every harness on its seeds and on
# the inputs of past findings (fuzz/regressions/NAME/), once each, under
# ASan and UBSan (`make fuzz-regress`, part of make check).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/seeds.sh"

pass=0 fail=0
for f in "$@"; do
	name=${f##*/fuzz_}
	dir=$top/runner/obj/fuzz/regress-$name
	rm -rf "$dir"
	mkdir -p "$dir"
	seed_dirs "$name" "$dir"
	[ -d "$here/regressions/$name" ] && cp -f "$here/regressions/$name"/* "$dir/" 2>/dev/null
	n=$(ls "$dir" | wc -l)
	"$f" -runs=0 -rss_limit_mb=2048 -timeout=10 "$dir" > "$dir.log" 2>&1 &
	pid=$!
	wait "$pid"
	rc=$?
	rm -rf "/tmp/rcuwb-fuzz-$pid"
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "  ok   fuzz harness $name replays its $n seeds and past findings cleanly"
	else
		fail=$((fail + 1))
		echo "  FAIL fuzz harness $name on one of its $n inputs: $(grep -m1 -E 'ERROR|runtime error' "$dir.log") (log $dir.log)"
	fi
done
echo "fuzz-regress: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
