#!/usr/bin/env bash
# kernel-changes/tests/apply-failure.sh: when a patch no longer applies (as
# when Debian's tree moves to a newer 6.1.N), build/kernel.sh stops with one
# line naming the patch and the failed hunk, and leaves no half-patched tree.
set -uo pipefail
kc=$(cd "$(dirname "$0")/.." && pwd)
cache=${RCUWB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rcuwb}
[ -f "$cache/src/pristine" ] || { echo "apply-failure: no kernel tree: run 'make tree'"; exit 1; }
work=$(mktemp -d /tmp/rcuwb-apply.XXXXXX)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local d=$1; shift; if "$@"; then pass=$((pass + 1)); echo "  ok   $d"; else fail=$((fail + 1)); echo "  FAIL $d"; fi; }

# A private cache whose 6.1 tree is the real one (a symlink: kernel.sh copies
# the tree it resolves to), and a flat copy of the series (the layout before
# kernel-changes/6.1) whose second patch expects a line the tree does not
# have.
real=$(cat "$cache/src/pristine")
mkdir -p "$work/cache/src/debian" "$work/changes/variants"
ln -s "$real" "$work/cache/src/debian/$(basename "$real")"
cp "$cache/src/pristine" "$work/cache/src/pristine"
cp "$kc"/6.1/0*.patch "$work/changes/"
p2=$(ls "$work"/changes/0002-*.patch)
# change the first context line of the first hunk (lines starting with one space)
awk 'BEGIN{done=0} /^@@/{h++} h==1 && !done && /^ / {sub(/^ /, " broken_"); done=1} {print}' "$p2" > "$p2.new" && mv "$p2.new" "$p2"
printf '%s\n' "$(basename "$(ls "$work"/changes/0001-*.patch)")" "$(basename "$p2")" > "$work/changes/variants/broken"
before=$(find "$(cat "$cache/src/pristine")/kernel/rcu" -type f -newer "$work/cache/src/pristine" | wc -l)

msg=$(RCUWB_CACHE=$work/cache RCUWB_CHANGES=$work/changes "$kc/../build/kernel.sh" broken 2>&1); rc=$?
echo "  (kernel.sh said: $msg)"
check "kernel.sh fails" test "$rc" -ne 0
check "the message names the patch" grep -q "$(basename "$p2") does not apply to Linux 6.1." <<< "$msg"
check "the message names the file and the failed hunk" grep -Eq ": [A-Za-z0-9_./-]+: Hunk #[0-9]+ FAILED at [0-9]+" <<< "$msg"
check "one error line" test "$(grep -c 'error:' <<< "$msg")" -eq 1
check "no half-patched tree is left" test ! -e "$work/cache/kernels/broken/src" -a ! -e "$work/cache/kernels/broken/src.new"
check "the pristine tree is untouched" test "$(find "$(cat "$cache/src/pristine")/kernel/rcu" -type f -newer "$work/cache/src/pristine" | wc -l)" -eq "$before"
echo "apply-failure: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
