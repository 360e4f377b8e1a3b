#!/usr/bin/env bash
# build/tests/sources.sh: kernels built from git trees, and builds keyed by
# content (real builds, in the real cache, so ccache and earlier builds are
# shared).
#
#   1. build/tree-git.sh makes rcuwb-6.1: an import commit, then one commit
#      per patch of the 6.1 series, tagged.
#   2. Each git variant at such a commit (git-v4.9 git-v4.10 git-v4.11
#      git-after: the commit, the probe on top where the stack lacks it, and
#      0009, rcuscale's minruntime)
#      builds a vmlinux byte-identical to its patch-stack variant's.
#   3. A second name for the same content (after-aa beside after) is built
#      in 0 s: the same build key, the same published build; an unchanged
#      variant is not rebuilt.
#   4. A variant that follows a branch, moved to a commit that changes only
#      documentation, recompiles nothing (no object file newer than before)
#      and gives the same vmlinux; the time it takes is printed.
#   5. A variant file with a bad line, a git REV that does not exist, or
#      an unknown Kconfig scenario fails with one line naming the file,
#      line or revision.
#   6. kconfig-check.sh: a scenario's line for an option overrides
#      base.config's; what did not stick names the fragment and line.
#   7. A pinned older Debian package (stock-6.1.192-2) builds beside the
#      newest (stock): its own tree in the cache, its own build key, the
#      pinned version in its build.json; while the newest is 6.1.192-3,
#      which changed one file the guest does not build, the same vmlinux.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/build/lib.sh"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
finish() { echo "sources: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }
work=$(mktemp -d /tmp/rcuwb-sources.XXXXXX)
created=()
cleanup() {
	local k
	for k in "${created[@]}"; do rm -rf "$RCUWB_CACHE/builds/$k"; done
	rm -rf "$work"
}
trap cleanup EXIT

kernel() { "$top/build/kernel.sh" "$@"; }
# build.json of VARIANT in Kconfig scenario tiny (kernels/VARIANT/KCONFIG/build.json)
json_of() { echo "$RCUWB_CACHE/kernels/$1/tiny/build.json"; }
key_of() { sed -n 's/^  "build_key": "\(.*\)",$/\1/p' "$(json_of "$1")"; }
vmlinux_of() { sed -n 's/^  "vmlinux": "\(.*\)",$/\1/p' "$(json_of "$1")"; }

# The subject of a patch file, its folded header lines unfolded, without
# the [PATCH n/N] prefix (what git am makes the commit's subject).
subject_of() {
	awk '/^Subject: /{s=substr($0, 10); on=1; next} on && /^[ \t]/{sub(/^[ \t]+/, " "); s=s $0; next}
		on{exit} END{sub(/^\[PATCH [0-9\/]*\] /, "", s); print s}' "$1"
}

# 1. The git tree.
if ! "$top/build/tree-git.sh" 2>"$work/tree-git.log"; then
	bad "tree-git.sh: $(tail -n1 "$work/tree-git.log")"
	finish
fi
repo=$RCUWB_CACHE/git/rcuwb-6.1
n=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/kernel-changes/6.1/series" | wc -l)
check "rcuwb-6.1 has the import and one commit per series patch ($n)" \
	test "$(git -C "$repo" rev-list --count import..series)" -eq "$n"
check "each commit carries its patch's subject" \
	test "$(git -C "$repo" log -1 --format=%s rcuwb/0002)" = "$(subject_of "$top"/kernel-changes/6.1/0002-*.patch)"
check "the upstream author of a port is kept" \
	test "$(git -C "$repo" log -1 --format=%an rcuwb/0002)" = "Paul E. McKenney"

# 2. git variants = patch-stack variants, byte for byte.
for v in v4.9 v4.10 v4.11 after; do
	if ! kernel "$v" 2>"$work/$v.log" || ! kernel "git-$v" 2>"$work/git-$v.log"; then
		bad "build $v / git-$v: $(tail -n1 "$work/$v.log" "$work/git-$v.log" | grep error | head -n1)"
		continue
	fi
	echo "  (git-$v: $(grep -oE '[0-9]+ paths rewritten|built in [0-9]+ s|up to date|same content as [^ ]*' "$work/git-$v.log" | paste -sd, -))"
	check "git-$v records its commit" grep -q "\"commit\": \"$(git -C "$repo" rev-parse "$(sed -n 's/^source git [^ ]* //p' "$top/kernel-changes/variants/git-$v")^{commit}")\"" \
		"$(json_of "git-$v")"
	check "git-$v builds the same vmlinux as $v" cmp -s "$(vmlinux_of "$v")" "$(vmlinux_of "git-$v")"
done

# 3. Same content, other name: 0 s.
kernel after 2>/dev/null
t0=$(date +%s%N)
msg=$(kernel after-aa 2>&1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "  (after-aa: $msg; $ms ms)"
check "after-aa has after's build key" test "$(key_of after-aa)" = "$(key_of after)"
check "after-aa is not built again (same content as after, or up to date)" \
	grep -qE "same content as|kernel up to date" <<< "$msg"
check "after-aa's vmlinux is after's file" test "$(vmlinux_of after-aa)" = "$(vmlinux_of after)"
check "build.json records the scenario and what the kernel can do" \
	test "$(grep -c -e '"kconfig": "tiny"' -e '"midboot_probe": true' -e '"rcuscale_param": "rcuscale"' \
		-e '"rcuscale_console": "rcu-scale"' "$(json_of after)")" = 4
msg=$(kernel after 2>&1)
check "an unchanged variant is not rebuilt" grep -q "kernel up to date" <<< "$msg"

# 4. A branch that moves by a documentation-only commit.
# The branch lives in a repository of the cache (kept, like the variant's
# tree, so that the next run is incremental too), made anew when rcuwb-6.1
# was.
scratch=$RCUWB_CACHE/git/srctest-follow.git
if [ "$(git -C "$scratch" rev-parse -q --verify rcuwb/0007 2>/dev/null)" != "$(git -C "$repo" rev-parse rcuwb/0007)" ]; then
	rm -rf "$scratch"
	git clone -q --bare --shared "$repo" "$scratch"
fi
doc_commit() { # PARENT TEXT: a commit on PARENT that appends TEXT to a document
	local idx=$work/index blob tree
	blob=$( { git -C "$scratch" cat-file blob "$1:Documentation/RCU/whatisRCU.rst"; echo "$2"; } |
		git -C "$scratch" hash-object -w --stdin)
	GIT_INDEX_FILE=$idx git -C "$scratch" read-tree "$1"
	GIT_INDEX_FILE=$idx git -C "$scratch" update-index --cacheinfo "100644,$blob,Documentation/RCU/whatisRCU.rst"
	tree=$(GIT_INDEX_FILE=$idx git -C "$scratch" write-tree)
	git -C "$scratch" -c user.name=rcuwb -c user.email=rcuwb@localhost commit-tree "$tree" -p "$1" -m "doc: $2"
}
nonce=$(date +%s%N)
c1=$(doc_commit rcuwb/0007 "rcuwb test $nonce a")
git -C "$scratch" update-ref refs/heads/follow "$c1"
mkdir -p "$work/changes/variants"
ln -s "$top/kernel-changes/6.1" "$work/changes/6.1"
# as git-after: the commit, and 0009 (rcuscale's minruntime) on top
printf 'source git %s follow\n0009-rcuscale-Add-minruntime-module-parameter.patch\n' "$scratch" \
	> "$work/changes/variants/srctest-follow"
follow() { RCUWB_CHANGES=$work/changes "$top/build/kernel.sh" srctest-follow; }
if ! follow 2>"$work/follow1.log"; then
	bad "srctest-follow at the first commit: $(grep error "$work/follow1.log" | head -n1)"
	finish
fi
created+=("$(key_of srctest-follow)")
out=$RCUWB_CACHE/work/6.1-tiny/out # the 6.1 line's build tree (kernel.sh)
touch "$work/marker"
sleep 1
c2=$(doc_commit "$c1" "rcuwb test $nonce b")
git -C "$scratch" update-ref refs/heads/follow "$c2"
t0=$(date +%s%N)
follow 2>"$work/follow2.log"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
created+=("$(key_of srctest-follow)")
echo "  (a documentation-only commit: rebuilt in $ms ms: $(grep -o 'built in [0-9]* s.*' "$work/follow2.log"))"
check "the moved branch builds" test "$rc" -eq 0
check "it is a new build key (the tree changed)" test "${created[0]}" != "${created[1]}"
check "nothing was recompiled" test -z "$(find "$out" -name '*.o' -newer "$work/marker" | head -n 3)"
check "the vmlinux is git-after's" cmp -s "$(vmlinux_of srctest-follow)" "$(vmlinux_of git-after)"

# 5. Bad input: one line naming what is wrong.
printf 'source git rcuwb-6.1 no-such-rev\n' > "$work/changes/variants/srctest-badrev"
msg=$(RCUWB_CHANGES=$work/changes "$top/build/kernel.sh" srctest-badrev 2>&1); rc=$?
check "a missing revision fails in one line naming it" \
	test "$rc" -ne 0 -a "$(wc -l <<< "$msg")" -eq 1 -a -n "$(grep "no commit, tag or branch 'no-such-rev'" <<< "$msg")"
printf '# ok\nsource svn x y\n' > "$work/changes/variants/srctest-badline"
msg=$(RCUWB_CHANGES=$work/changes "$top/build/kernel.sh" srctest-badline 2>&1); rc=$?
check "an unknown source fails naming file and line" \
	test "$rc" -ne 0 -a -n "$(grep -F "srctest-badline:2: unknown source 'svn'" <<< "$msg")"
msg=$("$top/build/kernel.sh" after no-such-scenario 2>&1); rc=$?
check "an unknown Kconfig scenario fails in one line naming the file and the scenarios there are" \
	test "$rc" -ne 0 -a "$(wc -l <<< "$msg")" -eq 1 -a -n "$(grep -F "scenarios/no-such-scenario.config (there are: " <<< "$msg" | grep -w tiny)"

# 6. A scenario overrides base.config: the last fragment's line is checked.
printf 'CONFIG_A=y\n# CONFIG_B is not set\n' > "$work/k.config"
printf 'CONFIG_A=n\nCONFIG_B=y\n' > "$work/base.frag"
printf 'CONFIG_A=y\nCONFIG_B=n\n' > "$work/scen.frag"
check "kconfig-check: a scenario's line wins over base's" "$top/build/kconfig-check.sh" "$work/k.config" "$work/base.frag" "$work/scen.frag"
msg=$("$top/build/kconfig-check.sh" "$work/k.config" "$work/scen.frag" "$work/base.frag"); rc=$?
check "kconfig-check: an option that did not stick names the fragment and line that asked" \
	test "$rc" -ne 0 -a "$msg" = "CONFIG_A=n (got y, $work/base.frag:1); CONFIG_B=y (got n, $work/base.frag:2)"

# 7. A pinned older package, beside the newest.  (A pin was a second 6.12
# tree, 6.12.117 beside 6.12.118, until this: a stable step changes
# headers every file includes, so it cost a full build in every cold
# make check; a Debian revision of the same upstream release costs
# ccache's hits.)
pin=6.1.192-2 pinned=stock-6.1.192-2
if ! kernel stock 2>"$work/stock.log" || ! kernel "$pinned" 2>"$work/pinned.log"; then
	bad "build stock / $pinned: $(grep -h error "$work/stock.log" "$work/pinned.log" | head -n1)"
	finish
fi
echo "  ($pinned: $(grep -ho 'built in [0-9]* s\|same content as [^ ]*\|kernel up to date' "$work/pinned.log" | tail -n1))"
deb_version() { sed -n 's/^  "source": {"kind": "debian", "package": "linux-source-6.1", "version": "\(.*\)"},$/\1/p' "$(json_of "$1")"; }
newest=$(deb_version stock)
check "$pinned's build.json names the pinned package" test "$(deb_version "$pinned")" = "$pin"
check "$pinned is a build of its own, not stock's ($newest)" test "$(key_of "$pinned")" != "$(key_of stock)"
check "both trees stay in the cache side by side" \
	test -d "$RCUWB_CACHE/src/debian/linux-source-6.1_$pin" -a -d "$RCUWB_CACHE/src/debian/linux-source-6.1_$newest"
if [ "$newest" = 6.1.192-3 ]; then
	check "$pin builds the same vmlinux as 6.1.192-3 (they differ in fs/nfsd/nfs4state.c only)" \
		cmp -s "$(vmlinux_of "$pinned")" "$(vmlinux_of stock)"
else
	echo "  (the newest 6.1 package is $newest, not 6.1.192-3: the two vmlinux are not compared)"
fi
finish
