#!/usr/bin/env bash
# kernel-changes/tests/roundtrip.sh: check the kernel patch series, one
# series directory at a time (kernel-changes/6.1 against Debian's 6.1
# tree, kernel-changes/6.12 against Debian's 6.12 tree: every directory
# of kernel-changes/ named LINE, a Debian kernel line, with a series file).
#
#   1. The release-semantics patches (the patches of the tree's "after"
#      variant -- "after" for 6.1, "after-LINE" otherwise -- before the
#      first that creates a file: 0001-0006), applied in order
#      with "patch -p1 --fuzz=0" to a fresh hard-linked copy of the
#      pristine tree, give back every file they touch byte for byte (0001
#      must really change each of them, so that the comparison cannot pass
#      vacuously).
#   2. Every variant of variants/ on that Debian tree (its installed or
#      newest version: no pinned version; for 6.1, no "source" line too)
#      applies in order with --fuzz=0: the probe on each release stack,
#      for 6.1 the planted delay on top of after.
#   3. The series file lists every patch file, each subject says
#      [PATCH n/N] with n its place in the series and N its length, and a
#      patch that ports an upstream commit (a "Port of" note) keeps a
#      From: and Signed-off-by: that are not rcuwb's.
#   4. scripts/checkpatch.pl --strict, run from the pristine tree, reports
#      0 errors, 0 warnings and 0 checks for every patch of the series.
#
# The pristine tree of 6.1 is the one $RCUWB_CACHE/src/pristine names;
# that of any other line is what "build/tree.sh LINE" prints (extracted
# once, cached).  The pristine trees are never written to: the scratch copy is made with
# cp -al, and every file a patch touches gets its own inode before any
# patch runs.  Exit status 0 if every check passed, 1 otherwise; the last
# line is "roundtrip: N passed, M failed".
set -uo pipefail

cache=${RCUWB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rcuwb}
kc=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok - ${line:+$line: }$*"; }
fail() { failed=$((failed + 1)); echo "FAIL - ${line:+$line: }$*"; }
finish() {
	echo "roundtrip: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# A variant's patch names (its "source" and "series" lines left out).
variant_patches() { sed -e 's/#.*//' -e '/^[[:space:]]*\(source\|series\)[[:space:]]/d' -e 's/[[:space:]]//g' -e '/^$/d' "$kc/variants/$1"; }
# Whether a variant is built on Debian's LINE tree as extracted by
# build/tree.sh LINE (6.1: no "source" line, or "source debian 6.1" as
# before; other lines: "source debian LINE" with no pinned version) and
# looks its patches up in kernel-changes/LINE; git variants are checked
# by build/tests/sources.sh.
on_tree() { # on_tree VARIANT LINE
	local f=$kc/variants/$1 l=${2//./\\.} s
	s=$(sed -n 's/^[[:space:]]*series[[:space:]]\+\([^[:space:]#]*\).*/\1/p' "$f" | head -n 1)
	[ -z "$s" ] || [ "$s" = "$2" ] || return 1
	if [ "$2" = 6.1 ]; then
		! grep -qE '^[[:space:]]*source[[:space:]]' "$f" ||
			grep -qE '^[[:space:]]*source[[:space:]]+debian[[:space:]]+6\.1([[:space:]]|$)' "$f"
	else
		grep -qE "^[[:space:]]*source[[:space:]]+debian[[:space:]]+$l[[:space:]]*(#.*)?\$" "$f"
	fi
}

check_series() { # check_series LINE
local line sd pristine after tmp tree stack same series rt n i p f v vt msg out subj from left
line=$1
sd=$kc/$line
echo "# series $line"
if [ "$line" = 6.1 ]; then
	if [ ! -f "$cache/src/pristine" ] || [ ! -d "$(cat "$cache/src/pristine")" ]; then
		fail "no pristine tree ($cache/src/pristine)"
		return
	fi
	pristine=$(cat "$cache/src/pristine")
	after=after
else
	pristine=$(bash "$kc/../build/tree.sh" "$line" 2>/dev/null | tail -n 1)
	if [ -z "$pristine" ] || [ ! -d "$pristine" ]; then
		fail "no pristine tree (build/tree.sh $line)"
		return
	fi
	after=after-$line
fi

# The series in order; the round-trip patches are those of variant
# "after" before the first that creates a file (the probe): tools after it
# (0009, rcuscale's minruntime) change pristine files and stay changed.
mapfile -t series < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$sd/series")
for p in "${series[@]}"; do
	[ -f "$sd/$p" ] || { fail "series lists $p, which does not exist"; return; }
done
rt=()
while IFS= read -r p; do
	! grep -q '^--- /dev/null' "$sd/$p" || break
	rt+=("$p")
done < <(variant_patches "$after")
if [ ${#rt[@]} -lt 2 ]; then
	fail "variant $after must list the release-semantics patches"
	return
fi

# Numbering, file list and authorship.
n=${#series[@]}
i=0
for p in "${series[@]}"; do
	i=$((i + 1))
	subj=$(sed -n 's/^Subject: //p' "$sd/$p" | head -n 1)
	case $subj in
	"[PATCH $i/$n] "*) ok "$p is [PATCH $i/$n]" ;;
	*) fail "$p: subject '$subj' is not [PATCH $i/$n]" ;;
	esac
	if grep -q '^\[ Port of' "$sd/$p"; then
		from=$(sed -n 's/^From: //p' "$sd/$p" | head -n 1 | tr -d '"')
		if [[ $from != *rcuwb* ]] && grep -q "^Signed-off-by: $from\$" "$sd/$p"; then
			ok "$p keeps its upstream author and Signed-off-by ($from)"
		else
			fail "$p ports an upstream commit but From: is '$from' without its Signed-off-by"
		fi
	fi
done
for f in "$sd"/0*.patch; do
	grep -qx "${f##*/}" <<<"$(printf '%s\n' "${series[@]}")" || fail "${f##*/} is not listed in series"
done

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/roundtrip.XXXXXX") || { fail "mktemp under $cache"; return; }
tmps+=("$tmp")
tree=$tmp/linux
cp -al "$pristine" "$tree" || { fail "cp -al $pristine"; return; }

files_of() { sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$@" | sort -u; }

# Give every file any patch touches its own inode, so that nothing below
# can write through a hard link into the pristine tree.
while IFS= read -r f; do
	if [ -f "$tree/$f" ]; then
		cp -p "$tree/$f" "$tree/$f.rt-tmp" && mv -f "$tree/$f.rt-tmp" "$tree/$f"
	fi
done < <(files_of "${series[@]/#/$sd/}")

apply() { # apply DESC PATCH [--dry-run]
	local msg
	if msg=$(patch -d "$tree" -p1 --fuzz=0 -N -s --no-backup-if-mismatch -r - "${@:3}" < "$sd/$2" 2>&1); then
		ok "$1"
	else
		fail "$1: $(echo "$msg" | head -n 3 | tr '\n' ' ')"
		return 1
	fi
}

# Every variant, on its own copy, with --fuzz=0.
for v in "$kc"/variants/*; do
	v=${v##*/}
	on_tree "$v" "$line" || continue
	vt=$tmp/v-$v
	cp -al "$tree" "$vt" || { fail "cp -al for variant $v"; continue; }
	msg=
	while IFS= read -r p; do
		[ -f "$sd/$p" ] || { msg="no patch $p"; break; }
		while IFS= read -r f; do # own inodes before patching
			[ -f "$vt/$f" ] && cp -p "$vt/$f" "$vt/$f.rt-tmp" && mv -f "$vt/$f.rt-tmp" "$vt/$f"
		done < <(files_of "$sd/$p")
		if ! out=$(patch -d "$vt" -p1 --fuzz=0 -N -s --no-backup-if-mismatch -r - < "$sd/$p" 2>&1); then
			msg="$p: $(echo "$out" | head -n 2 | tr '\n' ' ')"
			break
		fi
	done < <(variant_patches "$v")
	if [ -z "$msg" ]; then ok "variant $v applies with --fuzz=0"; else fail "variant $v: $msg"; fi
	rm -rf "$vt"
done

stack=
for p in "${rt[@]}"; do
	stack=${stack:+$stack+}${p%%-*}
	apply "$p applies with --fuzz=0 (stack $stack)" "$p" || return
	if [ "$p" = "${rt[0]}" ]; then
		same=
		for f in $(files_of "$sd/$p"); do
			cmp -s "$tree/$f" "$pristine/$f" && same="$same $f"
		done
		if [ -z "$same" ]; then
			ok "${p%%-*} changes every file it touches"
		else
			fail "${p%%-*} leaves unchanged:$same"
		fi
	fi
done

for f in $(files_of "${rt[@]/#/$sd/}"); do
	if [ ! -e "$pristine/$f" ]; then
		if [ -e "$tree/$f" ]; then
			fail "$f: not in the pristine tree but left behind"
		else
			ok "$f: absent, as in the pristine tree"
		fi
	elif cmp -s "$tree/$f" "$pristine/$f"; then
		ok "$f: identical to the pristine file"
	else
		fail "$f: differs from the pristine file"
	fi
done

left=$(find "$tree" \( -name '*.orig' -o -name '*.rej' -o -name '*.rt-tmp' \) 2>/dev/null | head -n 3)
if [ -z "$left" ]; then
	ok "no .orig/.rej files left"
else
	fail "left behind: $left"
fi

if ! command -v perl >/dev/null; then
	fail "perl not found: cannot run checkpatch.pl"
else
	for p in "${series[@]}"; do
		out=$(cd "$pristine" && perl scripts/checkpatch.pl --strict --color=never "$sd/$p" 2>&1)
		# A here-string, not a pipe: under pipefail, "echo | grep -q" fails
		# with SIGPIPE when grep stops reading before echo has written all.
		if grep -q '^total: 0 errors, 0 warnings, 0 checks,' <<<"$out"; then
			ok "checkpatch --strict clean: $p"
		else
			fail "checkpatch --strict: $p: $(echo "$out" | grep -E '^(ERROR|WARNING|CHECK|total)' | head -n 5 | tr '\n' ' ')"
		fi
	done
fi

}

tmps=()
trap 'rm -rf "${tmps[@]}"' EXIT
for d in "$kc"/[0-9]*.[0-9]*/; do
	d=${d%/}
	[ -f "$d/series" ] || continue
	check_series "${d##*/}"
done

finish
