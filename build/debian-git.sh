#!/usr/bin/env bash
# build/debian-git.sh LINE [VERSION...]: Debian's package versions of
# linux-source-LINE as a git history, for schedules to follow.
#
# $RCUWB_CACHE/git/debian-LINE (bare): one commit per package version, in
# the order given (default: every version on the mirror, oldest first), each
# the pristine tree of that version (build/tree.sh LINE VERSION: fetched
# with apt-get download, nothing installed), committed with the date of its
# Makefile and tagged debian/VERSION ('~' and ':' as '_'), on branch
# "versions".  A version imported before is kept; new ones go on top, so
# the branch only grows, as a package archive does.  A nightly schedule
# that follows the branch (perf-configs/schedules/debian-6.12.yaml) measures
# the versions in order, each against the last accepted one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

line=${1:?usage: debian-git.sh LINE [VERSION...]}
shift
[[ $line =~ ^[0-9]+\.[0-9]+$ ]] || die "bad Debian kernel line '$line' (e.g. 6.1 or 6.12)"
pkg=linux-source-$line
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
	mapfile -t versions < <(apt-cache madison "$pkg" | awk -F'|' '{gsub(/ /, "", $2); print $2}' | sort -u -V)
	[ ${#versions[@]} -gt 0 ] || die "no versions of $pkg on the mirror ('apt-cache madison $pkg')"
fi

repo=$RCUWB_CACHE/git/debian-$line
[ -d "$repo" ] || git init -q --bare "$repo"
export GIT_DIR=$repo
g() { git -c user.name=rcuwb -c user.email=rcuwb@localhost -c core.autocrlf=false "$@"; }
for v in "${versions[@]}"; do
	tag=debian/$(printf '%s' "$v" | tr ':~' '__')
	if g rev-parse -q --verify "refs/tags/$tag" > /dev/null; then
		say "$pkg $v: already in $repo ($tag)"
		continue
	fi
	tree=$("$(dirname "$0")/tree.sh" "$line" "$v")
	idx=$(mktemp -u "$repo/index.XXXXXX")
	(cd "$tree" && GIT_INDEX_FILE=$idx GIT_WORK_TREE=$tree g add -A -f -- . ':!.rcuwb-debian' ':!.rcuwb-tarball')
	t=$(GIT_INDEX_FILE=$idx g write-tree)
	rm -f "$idx"
	parent=$(g rev-parse -q --verify refs/heads/versions || :)
	when="@$(stat -c %Y "$tree/Makefile") +0000"
	c=$(GIT_AUTHOR_DATE=$when GIT_COMMITTER_DATE=$when g commit-tree "$t" ${parent:+-p "$parent"} \
		-m "Debian $pkg $v (Linux $(tree_version "$tree"))" \
		-m "The pristine tree of the package, imported by rcuwb's build/debian-git.sh.")
	g update-ref refs/heads/versions "$c"
	g tag "$tag" "$c"
	say "$pkg $v: commit $(g rev-parse --short "$c") ($tag)"
done
say "git history $repo: $(g rev-list --count versions) versions on branch versions"
