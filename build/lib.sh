# build/lib.sh: shared shell helpers for the build stages (sourced, not run).
# shellcheck shell=bash

RCUWB_CACHE=${RCUWB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rcuwb}
# The Debian line that variants without a "source" line are built from.
RCUWB_DEFAULT_LINE=6.1

die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }
# the input is wrong (a patch that does not apply): exit 3, for callers that tell it apart
refuse() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 3; }
say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

# Path of the pristine tree of the default line (the file .../pristine
# records the current one; build/tree.sh writes it).
pristine_tree() {
	local p="$RCUWB_CACHE/src/pristine"
	[ -f "$p" ] || die "no kernel tree in $RCUWB_CACHE/src: run 'make tree' first"
	cat "$p"
}

# "6.1.N" read from the tree's own Makefile, never hard-coded.
tree_version() {
	makefile_version < "$1/Makefile"
}

# The same, of a Makefile on stdin.  It reads all of its input: a writer
# into a pipe that awk left early would die of SIGPIPE (and, under
# pipefail, take the script with it).
makefile_version() {
	awk -F' *= *' 'done {next} /^VERSION =/{v=$2} /^PATCHLEVEL =/{p=$2} /^SUBLEVEL =/{s=$2}
		/^EXTRAVERSION/{done=1} END{print v"."p"."s}'
}

# The version of Debian package $1 that is installed, or nothing.
deb_installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ] &&
		dpkg-query -W -f='${Version}' "$1"
}

# The version that "apt-get install $1" would take, or nothing.
deb_candidate() {
	LC_ALL=C apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}'
}

# Every version of package $1 the mirror has, newest first.
deb_versions() {
	LC_ALL=C apt-cache madison "$1" 2>/dev/null | awk -F' *[|] *' '{print $2}'
}

# The directory of the Debian tree of package linux-source-LINE at VERSION.
debian_tree_dir() {
	printf '%s/src/debian/linux-source-%s_%s\n' "$RCUWB_CACHE" "$1" "$2"
}
