#!/usr/bin/env bash
# build/tree.sh [LINE [VERSION]]: extract Debian's linux-source-LINE tree
# (default: the 6.1 line) at package VERSION (default: the installed
# package, else the newest on the mirror) once into the cache, and print
# its path.
#
# Trees live side by side, one per package version, in
# $RCUWB_CACHE/src/debian/linux-source-LINE_VERSION, each with the exact
# version in .rcuwb-debian.  The installed package's tarball in /usr/src is
# used where it has the version asked for; any other version's .deb is
# fetched from the mirror (apt-get download: nothing is installed) and its
# tarball read from it.  The trees are never built in or patched: variants
# get hard-linked copies (see kernel.sh).  For the default line, the file
# $RCUWB_CACHE/src/pristine names the tree (the one the 6.1 series and its
# tests are checked against).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

line=${1:-$RCUWB_DEFAULT_LINE}
want=${2:-}
[[ $line =~ ^[0-9]+\.[0-9]+$ ]] || die "bad Debian kernel line '$line' (e.g. 6.1 or 6.12)"
pkg=linux-source-$line
have=$(deb_installed "$pkg" || :)
version=${want:-${have:-$(deb_candidate "$pkg")}}
if [ -z "$version" ] && [ "$(id -u)" -eq 0 ]; then # package lists not fetched yet
	apt-get update -q >/dev/null 2>&1 || :
	version=$(deb_candidate "$pkg")
fi
[ -n "$version" ] || die "no package $pkg on the mirror ('apt-cache policy $pkg'): install it or pin another line"
dest=$(debian_tree_dir "$line" "$version")

publish() { # the default line's installed tree is "the pristine tree"
	if [ "$line" = "$RCUWB_DEFAULT_LINE" ] && [ -z "$want" ]; then
		echo "$dest" > "$RCUWB_CACHE/src/pristine.new"
		mv "$RCUWB_CACHE/src/pristine.new" "$RCUWB_CACHE/src/pristine"
	fi
	say "kernel tree $(tree_version "$dest") ($pkg $version) ready at $dest"
	(cd "$dest" && pwd -P)
}

if [ "$(cat "$dest/.rcuwb-debian" 2>/dev/null)" = "$pkg $version" ]; then
	publish
	exit 0
fi
mkdir -p "$RCUWB_CACHE/src/debian"
# one extraction of a line at a time (make check extracts beside its tests):
# whoever waited finds the tree ready
exec 8>"$RCUWB_CACHE/src/.tree-$line.lock"
flock 8
if [ "$(cat "$dest/.rcuwb-debian" 2>/dev/null)" = "$pkg $version" ]; then
	publish
	exit 0
fi
tmp=$(mktemp -d "$RCUWB_CACHE/src/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

tarball=/usr/src/$pkg.tar.xz
# A tree of rcuwb before trees were kept per version: adopt it if it is
# the installed tarball's.
old=$(cat "$RCUWB_CACHE/src/pristine" 2>/dev/null || :)
if [ "$version" = "$have" ] && [ -r "$tarball" ] && [[ $old == "$RCUWB_CACHE"/src/linux-* ]] && [ -d "$old" ] &&
   [ "$(cat "$old/.rcuwb-tarball" 2>/dev/null)" = "$(stat -c '%s-%Y' "$tarball")" ]; then
	echo "$pkg $version" > "$old/.rcuwb-debian"
	mv "$old" "$dest"
	publish
	exit 0
fi

if [ "$version" != "$have" ] || [ ! -r "$tarball" ]; then
	say "fetching $pkg $version from the mirror (apt-get download)"
	(cd "$tmp" && apt-get download -q "$pkg=$version" >"$tmp/apt.log" 2>&1) ||
		die "cannot fetch $pkg=$version ($(grep -m1 -E '^E:' "$tmp/apt.log" || tail -n1 "$tmp/apt.log")); versions on the mirror: $(deb_versions "$pkg" | tr '\n' ' ')"
	deb=$(ls "$tmp"/*.deb)
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" > "$tmp/src.tar.xz" ||
		die "$deb holds no usr/src/$pkg.tar.xz"
	rm -f "$deb"
	tarball=$tmp/src.tar.xz
fi
say "extracting $pkg $version (about 20 s, 1.5 GB)"
mkdir "$tmp/x"
tar -C "$tmp/x" -xf "$tarball"
top=$(find "$tmp/x" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$top" ] && [ -f "$top/Makefile" ] || die "$pkg $version does not contain a kernel tree"
ver=$(tree_version "$top")
case "$ver" in "$line".*) ;; *) die "$pkg $version holds Linux $ver, expected $line.N" ;; esac
echo "$pkg $version" > "$top/.rcuwb-debian"
rm -rf "$dest"
mv "$top" "$dest"
publish
