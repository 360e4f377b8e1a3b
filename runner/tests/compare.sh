#!/usr/bin/env bash
# runner/tests/compare.sh: rcuwb compare with real builds and real guests.
# Bad input is refused in one line before anything builds; a patch that
# starts every normal grace period two ticks late comes out SLOWDOWN against
# the variant it is applied to, and traced runs of both show the ticks in
# the phase before the GP's start (rcuwb anatomy, run after a SLOWDOWN); a
# documentation-only patch PASS; a compare killed in its first look and
# started again stores no run twice.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch compare
data=$here/data/compare
base=${RCUWB_TEST_VARIANT:-after}
cell=v1-n1/normal/w1-r0-m1
cache=${RCUWB_CACHE:-$HOME/.cache/rcuwb}
builds() { ls "$cache/builds" 2>/dev/null | wc -l; }
cmp() { "$rcuwb" -d "$db" compare --cell "$cell" --batch 4 --budget 20m "$@"; }
# refused RC MSG PATTERN: exit 2, one line, naming what is wrong
refused() {
	[ "$1" -eq 2 ] && [ "$(grep -c . <<< "$2")" = 1 ] && grep -q -- "$3" <<< "$2"
}

# 1. Bad input: one line, exit 2, nothing built, nothing stored.
b0=$(builds)
git init -q "$work/repo" && git -C "$work/repo" commit -q --allow-empty -m one
for t in "no-such-variant $base|unknown variant 'no-such-variant'" \
	 "$base $base|the same kernel" \
	 "$work/repo@no-such-rev|has no commit, tag or branch 'no-such-rev'" \
	 "-t 200% $base stock|--threshold '200%': give 1% to 100%" \
	 "-B 5s $base stock|--budget '5s': give one minute to a week" \
	 "--max-runs 200 --batch 2 $base stock|more than 19 looks" \
	 "$work/nothing.patch|no such file or directory"; do
	args=${t%%|*} want=${t#*|}
	# shellcheck disable=SC2086 # the arguments are words
	msg=$("$rcuwb" -d "$db" compare $args 2>&1); rc=$?
	check "refused: compare $args ($msg)" refused "$rc" "$msg" "$want"
done
expect "nothing was built for bad input" "$b0" "$(builds)"
check "nothing was stored" test ! -s "$db" -o "$(q "SELECT COUNT(*) FROM runs" 2>/dev/null || echo 0)" = 0

# A patch that does not apply: the candidate side is prepared first, so it
# stops the compare before any build, in one line naming patch and hunk.
sed 's/struct rcu_node \*rnp = rcu_get_root();/struct rcu_node *rnp = rcu_get_root(); broken/' \
	"$data/0001-rcu-test-slow-normal-gp.patch" > "$work/0001-broken.patch"
msg=$("$rcuwb" -d "$db" compare "$base" "$work/0001-broken.patch" 2>&1); rc=$?
err=$(grep 'error:' <<< "$msg")
check "a patch that does not apply: exit 2 ($rc), one error line naming it and the hunk ($err)" \
	bash -c "[ $rc -eq 2 ] && [ \"\$(grep -c 'error:' <<< '$err')\" = 1 ] &&
		 grep -q '0001-broken.patch does not apply to Linux .*kernel/rcu/tree.c: Hunk #1 FAILED' <<< '$err'"
expect "and nothing was built" "$b0" "$(builds)"

# 2. A patch planting a slowdown per normal GP (a jiffy's sleep: two ticks):
# SLOWDOWN in one look of 4 runs a side (its final look: the rank-sum of 4
# against 4 reaches p = 0.014; the first of two looks could not decide: at
# half the information the boundary is out of reach of 4 against 4, which
# nightly.sh's sequential round shows with real guests), then 2 traced runs a
# side for the anatomy (8 ms a GP is hard to miss).
cmp --max-runs 4 --anatomy-runs 2 "$base" "$data/0001-rcu-test-slow-normal-gp.patch" > "$work/slow.out" 2> "$work/slow.err"
rc=$?
expect "a patch slowing every normal GP by two ticks: SLOWDOWN (exit 1; $(grep -m1 'SLOWDOWN\|PASS\|INCONCLUSIVE' "$work/slow.out"))" 1 "$rc"
check "it says per cell what its look saw" grep -q "look 1 (" "$work/slow.err"
slowvar=$(sed -n "s/^rcuwb: compare \([^ ]*\) .*/\1/p" "$work/slow.err")
check "the candidate is a variant of its own ($slowvar) on top of $base" test -n "$slowvar" -a "${slowvar%%.p*}" = "$base"
check "its runs' build.json names the test patch" \
	grep -q '0001-rcu-test-slow-normal-gp.patch' "$(q "SELECT run_dir FROM runs WHERE variant = '$slowvar' LIMIT 1")/build.json"
check "the gate's table says sequential" grep -q "rule (sequential" "$work/slow.out"
check "every run got rcuscale.minruntime=1 (compare.yaml; both kernels have it)" \
	test "$(q "SELECT COUNT(*) FROM runs WHERE variant = '$slowvar' AND cmdline LIKE '% rcuscale.minruntime=1%'")" -gt 0 -a \
	"$(q "SELECT COUNT(*) FROM runs WHERE cmdline NOT LIKE '% rcuscale.minruntime=1%' AND matrix NOT LIKE 'anatomy-%'")" = 0

# ... and where the time went: the patch sleeps a jiffy in rcu_gp_init()
# before it traces the GP's start, so the traced runs put the delay in the
# phase from call_rcu() to the GP's start (request)
check "after the SLOWDOWN, where the time went: traced runs of the slow cell" \
	grep -q "^Where the time went (traced runs of the slow cells, 2 a side" "$work/slow.out"
expect "... 2 traced runs a side, every trace whole" "4|4" \
	"$(q "SELECT COUNT(*), SUM(t.incomplete IS NULL) FROM runs r JOIN traces t ON t.run_id = r.id WHERE r.matrix LIKE 'anatomy-compare-%'")"
check "... the change is in request, the phase the patch delays ($(grep -o 'most of the change is in [a-z]*: [^ ]* us' "$work/slow.out"))" \
	grep -q "most of the change is in request" "$work/slow.out"

# 3. A documentation-only patch, in one look of 4 runs a side, killed during
# it and started again: it goes on from the stored runs, stores none twice,
# and PASSes (the bound of 4 against 4 is their largest difference).
# (its own process group, as a terminal's Ctrl-C reaches every process of it)
setsid "$rcuwb" -d "$db" compare --cell "$cell" --batch 4 --max-runs 4 --budget 20m \
	"$base" "$data/0001-doc-test-only.patch" > "$work/doc1.out" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
	[ "$(q "SELECT COUNT(*) FROM runs WHERE variant LIKE '$base.p%' AND variant <> '$slowvar'" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
	sleep 0.5
done
kill -INT -- "-$pid"
wait "$pid"
expect "Ctrl-C stops it, saying how to go on" 130 "$?"
check "in one line" grep -q "interrupted: the runs that finished are kept" "$work/doc1.out"
docvar=$(sed -n "s/^rcuwb: compare \([^ ]*\) .*/\1/p" "$work/doc1.out")
mid=$(q "SELECT COUNT(*) FROM runs WHERE variant = '$docvar'")
cmp --max-runs 4 "$base" "$data/0001-doc-test-only.patch" > "$work/doc.out" 2> "$work/doc.err"
rc=$?
expect "a documentation-only patch: PASS on normal GPs (exit 0; $(grep -m1 'SLOWDOWN\|PASS\|INCONCLUSIVE' "$work/doc.out"))" 0 "$rc"
check "no anatomy without a SLOWDOWN" bash -c "! grep -q 'Where the time went' '$work/doc.out'"
expect "after Ctrl-C ($mid of its runs stored) and a restart, no run is stored twice" 0 \
	"$(q "SELECT COUNT(*) FROM (SELECT variant, rep FROM runs WHERE matrix = (SELECT matrix FROM runs
	      WHERE variant = '$docvar' LIMIT 1) AND outcome NOT IN ('interrupted', 'host-failed')
	      GROUP BY variant, rep HAVING COUNT(*) > 1)")"
check "no domain left" no_domains
finish compare
