#!/usr/bin/env bash
# build/tree-git.sh [LINE]: a git tree made here, $RCUWB_CACHE/git/rcuwb-LINE
# (a bare repository): one commit importing Debian's pristine linux-source-LINE
# tree (default 6.1), then one commit per patch of kernel-changes/LINE/series,
# applied with "git am" so that each carries its patch's author, date and
# message.  Tags: "import" and "rcuwb/NNNN" after patch NNNN; branch "series"
# at the last one.  The commits are reproducible (dates from the tree and
# the patches), so the same tree and series give the same commit ids.
#
# It serves the tests (git variants at these commits build the same vmlinux
# as the patch-stack variants) and is the example of "source git" variants in
# kernel-changes/README.md; any other repository works the same way.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/.." && pwd)
changes=${RCUWB_CHANGES:-$top/kernel-changes}
line=${1:-$RCUWB_DEFAULT_LINE}
sfile=$changes/$line/series
[ -f "$sfile" ] || die "no series for Linux $line: $sfile"
tree=$("$top/build/tree.sh" "$line")
mapfile -t series < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$sfile")
for p in "${series[@]}"; do [ -f "$changes/$line/$p" ] || die "$sfile lists $p, which does not exist"; done

repo=$RCUWB_CACHE/git/rcuwb-$line
key=$( { cat "$tree/.rcuwb-debian" "$0"; for p in "${series[@]}"; do sha256sum < "$changes/$line/$p"; done; } |
	sha256sum | cut -c1-16)
if [ "$(cat "$repo/rcuwb-key" 2>/dev/null)" = "$key" ]; then
	say "git tree $repo up to date ($(git -C "$repo" rev-parse --short series): import + ${#series[@]} patches)"
	exit 0
fi

mkdir -p "$RCUWB_CACHE/git"
tmp=$(mktemp -d "$RCUWB_CACHE/git/.tree-git.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
wt=$tmp/wt
cp -al "$tree" "$wt"
rm -f "$wt/.rcuwb-debian" "$wt/.rcuwb-tarball"
# Files the series touches get their own inodes: git am never writes into
# the pristine tree.
sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "${series[@]/#/$changes/$line/}" | sort -u |
	while IFS= read -r f; do
		[ -f "$wt/$f" ] || continue
		cp -p "$wt/$f" "$wt/$f.tmp" && mv -f "$wt/$f.tmp" "$wt/$f"
	done

git init -q --bare "$tmp/repo.git"
export GIT_DIR=$tmp/repo.git GIT_WORK_TREE=$wt
g() { (cd "$wt" && git -c user.name=rcuwb -c user.email=rcuwb@localhost -c core.autocrlf=false "$@"); }
when="@$(stat -c %Y "$tree/Makefile") +0000"
say "importing $(cat "$tree/.rcuwb-debian") into git (about 1-2 min)"
# -f: every file of the tree, whatever its .gitignore says (Debian's adds
# "/*", ignoring everything at the top level of its packaging repository).
g add -A -f .
GIT_AUTHOR_DATE=$when GIT_COMMITTER_DATE=$when g commit -q \
	-m "Import Debian $(cat "$tree/.rcuwb-debian") (Linux $(tree_version "$tree"))" \
	-m "The pristine tree as Debian ships it, imported by rcuwb's build/tree-git.sh."
g tag import
for p in "${series[@]}"; do
	if ! msg=$(g am -q --committer-date-is-author-date "$changes/$line/$p" 2>&1); then
		die "$p does not apply with git am: $(echo "$msg" | head -n 2 | tr '\n' ' ')"
	fi
	g tag "rcuwb/${p%%-*}"
done
g branch -q series
echo "$key" > "$GIT_DIR/rcuwb-key"
rm -rf "$repo"
mv "$GIT_DIR" "$repo"
say "git tree $repo: import + ${#series[@]} patches (tags import, rcuwb/0001..; branch series)"
