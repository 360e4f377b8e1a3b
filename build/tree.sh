#!/usr/bin/env bash
# build/tree.sh: extract the linux-source-6.1 tarball once into the cache.
#
# The pristine tree is never built in or patched: variants get hard-linked
# copies (see kernel.sh).  A new package version (new tarball) gets a new
# directory named after the version the tree's Makefile reports.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -r "$RCUWB_TARBALL" ] || die "$RCUWB_TARBALL not found: install linux-source-6.1 ('make deps')"
mkdir -p "$RCUWB_CACHE/src"
stamp=$(stat -c '%s-%Y' "$RCUWB_TARBALL")
if [ -f "$RCUWB_CACHE/src/pristine" ]; then
	tree=$(cat "$RCUWB_CACHE/src/pristine")
	if [ -f "$tree/.rcuwb-tarball" ] && [ "$(cat "$tree/.rcuwb-tarball")" = "$stamp" ]; then
		say "kernel tree $(tree_version "$tree") ready at $tree"
		exit 0
	fi
fi

tmp=$(mktemp -d "$RCUWB_CACHE/src/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say "extracting $RCUWB_TARBALL (about 20 s, 1.5 GB)"
tar -C "$tmp" -xf "$RCUWB_TARBALL"
top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -f "$top/Makefile" ] || die "$RCUWB_TARBALL does not contain a kernel tree"
ver=$(tree_version "$top")
case "$ver" in 6.1.*) ;; *) die "$RCUWB_TARBALL holds Linux $ver, expected 6.1.N" ;; esac
echo "$stamp" > "$top/.rcuwb-tarball"
dest="$RCUWB_CACHE/src/linux-$ver"
rm -rf "$dest"
mv "$top" "$dest"
echo "$dest" > "$RCUWB_CACHE/src/pristine.new"
mv "$RCUWB_CACHE/src/pristine.new" "$RCUWB_CACHE/src/pristine"
say "kernel tree $ver ready at $dest"
