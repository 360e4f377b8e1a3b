# build/lib.sh: shared shell helpers for the build stages (sourced, not run).
# shellcheck shell=bash

RCUWB_CACHE=${RCUWB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rcuwb}
RCUWB_TARBALL=${RCUWB_TARBALL:-/usr/src/linux-source-6.1.tar.xz}

die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }
say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

# Path of the pristine tree (the file .../pristine records the current one).
pristine_tree() {
	local p="$RCUWB_CACHE/src/pristine"
	[ -f "$p" ] || die "no kernel tree in $RCUWB_CACHE/src: run 'make tree' first"
	cat "$p"
}

# "6.1.N" read from the tree's own Makefile, never hard-coded.
tree_version() {
	awk -F' *= *' '/^VERSION =/{v=$2} /^PATCHLEVEL =/{p=$2} /^SUBLEVEL =/{s=$2}
		/^EXTRAVERSION/{exit} END{print v"."p"."s}' "$1/Makefile"
}
