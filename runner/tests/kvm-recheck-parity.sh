#!/usr/bin/env bash
# runner/tests/kvm-recheck-parity.sh [LOG...]: `rcuwb parse --kvm-recheck` must
# print exactly what the kernel's own kvm-recheck-rcuscale.sh prints, on real
# console logs and on damaged copies of them (truncated anywhere, NUL bytes,
# interleaved printk, missing summary, garbage numbers, empty).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rcuwb=$here/../rcuwb
cache=${RCUWB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rcuwb}
tree=$(cat "$cache/src/pristine" 2>/dev/null) || { echo "kvm-recheck-parity: no kernel tree: run 'make tree'"; exit 1; }
script=$tree/tools/testing/selftests/rcutorture/bin/kvm-recheck-rcuscale.sh
[ -x "$script" ] || [ -f "$script" ] || { echo "kvm-recheck-parity: $script missing"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=("$@")
[ ${#logs[@]} -gt 0 ] || logs=("$here"/data/*.log)

# Damaged copies of each real log (deterministic: seeded perl).
n=0
for log in "${logs[@]}"; do
	n=$((n + 1))
	cp "$log" "$work/real$n.log"
	size=$(stat -c %s "$log")
	for cut in 1 $((size / 3)) $((size / 2 + 7)) $((size - 5)); do
		head -c "$cut" "$log" > "$work/cut$n-$cut.log"
	done
	grep -v 'gps: .* batches:' "$log" > "$work/nosummary$n.log"
	perl -e 'srand(42); while (<>) { substr($_, int(rand(length($_))), 0) = "\0" if rand() < 0.2; print }' \
		"$log" > "$work/nul$n.log"
	perl -e 'srand(7); while (<>) { if (rand() < 0.1 && length($_) > 20) { my $p = int(rand(length($_) - 1));
		substr($_, $p, 0) = "[ 9.9] random: crng init done\n" } print }' "$log" > "$work/interleave$n.log"
	perl -e 'srand(3); while (<>) { s/(writer-duration:\s+\d+ )(\d+)/$1 . (rand() < 0.5 ? "$2abc" : "1e3")/e
		if rand() < 0.05; s/^\[[^]]*\]// if rand() < 0.1; print }' "$log" > "$work/garbage$n.log"
done
: > "$work/empty.log"
printf '[ 1.0] rcu-scale:    0 writer-duration:     0 0\n' > "$work/zero.log"
printf 'no timestamp rcu-scale:    0 writer-duration:     0 1234\n[unclosed rcu-scale: 1 writer-duration: 2 99' > "$work/odd.log"

# The ftrace path's "Distribution" lines (tab-indented) come in gawk's hash
# order: each run of them is compared as a set.
tab_sorted() {
	awk '/^\t/ { block[++n] = $0; next }
	     { if (n) { flush() } print }
	     function flush(  i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && block[j-1] > block[j]; j--) { t = block[j]; block[j] = block[j-1]; block[j-1] = t }
	                                 for (i = 1; i <= n; i++) print block[i]; n = 0 }
	     END { if (n) flush() }'
}

pass=0 fail=0
for log in "$work"/*.log; do
	name=$(basename "$log" .log)
	mkdir -p "$work/res/$name"
	cp "$log" "$work/res/$name/console.log"
	want=$(cd "$tree" && bash "$script" "$work/res/$name" 2>/dev/null | tab_sorted)
	got=$("$rcuwb" parse --kvm-recheck "$log" 2>/dev/null | tab_sorted)
	if [ "$want" == "$got" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "kvm-recheck-parity: $name differs:"
		diff <(echo "$want") <(echo "$got") | head -n 10
	fi
done
echo "kvm-recheck-parity: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
