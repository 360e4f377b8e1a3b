#!/usr/bin/env bash
# build/sync-tree.sh SRC DST: make the kernel tree DST hold SRC's content,
# rewriting only what differs, so that make in DST's object directory
# recompiles only that.
#
# kernel.sh builds every variant of a line (6.1, 6.12) in one Kconfig
# scenario from one shared tree and object directory.  Switching variants
# rewrites the files whose content differs (GNU diff -rq: files that are
# the same inode, e.g. both hard links into a Debian tree, are not read).
# A rewritten or new file is a fresh copy with the current mtime, never a
# hard link or a copy that keeps an old mtime: make must see it as newer
# than every object built from the variant before, whenever SRC was made.
# Files only in DST are removed; .git and .rcuwb-* (rcuwb's bookkeeping)
# are neither compared nor copied.
#
# Prints "N paths rewritten" on stdout.  An output line of diff that is not
# understood stops the sync with an error (never a half-understood tree).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=${1:?usage: sync-tree.sh SRC DST}
dst=${2:?usage: sync-tree.sh SRC DST}
src=${src%/} dst=${dst%/}
[ -d "$src" ] || die "sync-tree: no source tree $src"
mkdir -p "$dst"

# rel PATH-IN-DIFF-OUTPUT ROOT -> the path relative to ROOT
rel() { local p=${1#"$2"}; echo "${p#/}"; }

# Replace DST/P with a fresh copy of SRC/P (file, symlink or directory).
rewrite() {
	rm -rf "${dst:?}/$1"
	mkdir -p "$(dirname "$dst/$1")"
	cp -R -P --preserve=mode "$src/$1" "$dst/$1"
}

list=$(mktemp)
trap 'rm -f "$list"' EXIT
LC_ALL=C diff -rq --no-dereference -x .git -x '.rcuwb-*' "$dst" "$src" > "$list" && rc=0 || rc=$?
[ "$rc" -le 1 ] || die "sync-tree: diff -rq $dst $src failed (exit $rc)"

n=0
while IFS= read -r l; do
	case $l in
	"Files $dst/"*" and $src/"*" differ" | "Symbolic links $dst/"*" and $src/"*" differ")
		p=${l#* "$dst/"}; rewrite "${p%% and "$src/"*}" ;;
	"File $dst/"*" while file $src/"*)
		p=${l#"File $dst/"}; rewrite "${p%% is a *}" ;;
	"Only in $src: "* | "Only in $src/"*)
		p=${l#"Only in "}; d=$(rel "${p%%: *}" "$src"); rewrite "${d:+$d/}${p#*: }" ;;
	"Only in $dst: "* | "Only in $dst/"*)
		p=${l#"Only in "}; d=$(rel "${p%%: *}" "$dst"); rm -rf "${dst:?}/${d:+$d/}${p#*: }" ;;
	*) die "sync-tree: cannot read diff's line '$l' (syncing $src into $dst)" ;;
	esac
	n=$((n + 1))
done < "$list"
echo "$n paths rewritten"
