#!/usr/bin/env bash
# build/tests/sync-tree.sh: build/sync-tree.sh on small synthetic trees.
# What make needs from a shared build tree: after a sync DST has SRC's
# content; every rewritten file has an mtime newer than the objects built
# before it, even when SRC's copy is older; identical files (same inode or
# not) keep theirs; .git and .rcuwb-* stay out.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/runner/tests/lib.sh"
work=$(mktemp -d /tmp/rcuwb-sync.XXXXXX)
trap 'rm -rf "$work"' EXIT
from=$work/a/src into=$work/work/src
sync() { "$top/build/sync-tree.sh" "$from" "$into"; }
same() { diff -r --no-dereference -x .git -x '.rcuwb-*' "$from" "$into" >/dev/null; }
mtime() { stat -c %Y.%y "$into/$1"; }

mkdir -p "$from/kernel/rcu" "$from/include/linux" "$from/gone/deep" "$from/.git" "$from/arch"
echo 'int a;' > "$from/kernel/rcu/tree.c"
echo 'int b;' > "$from/kernel/rcu/update.c"
echo '#define X 1' > "$from/include/linux/x.h"
echo old > "$from/gone/deep/f.c"
echo git > "$from/.git/HEAD"
echo key > "$from/.rcuwb-src"
echo same > "$from/hardlinked.c"
ln -s ../include "$from/arch/include"
echo file > "$from/becomes-link"
expect "a first sync copies every path" "6 paths rewritten" "$(sync 2>&1)"
check "DST has SRC's content" same
check "no .git is copied" test ! -e "$into/.git"
check "no .rcuwb-* is copied" test ! -e "$into/.rcuwb-src"
check "a symbolic link stays a link" test -L "$into/arch/include"
expect "a second sync rewrites nothing" "0 paths rewritten" "$(sync 2>&1)"

# The objects of the last build; SRC's next variant made long before them.
sleep 1.1
touch "$work/objects"
tree_before=$(mtime kernel/rcu/tree.c) x_before=$(mtime include/linux/x.h)
rm -rf "$work/b"; cp -a "$work/a" "$work/b"
from=$work/b/src
echo 'int a2;' > "$from/kernel/rcu/tree.c"
touch -d '2001-01-01' "$from/kernel/rcu/tree.c"
rm -rf "$from/gone"
mkdir -p "$from/new/dir" && echo 'int n;' > "$from/new/dir/n.c" && touch -d '2001-01-01' "$from/new/dir/n.c"
rm "$from/becomes-link" && ln -s kernel "$from/becomes-link"
rm "$from/arch/include" && ln -s ../kernel "$from/arch/include"
ln -f "$into/hardlinked.c" "$from/hardlinked.c"
echo other-git > "$from/.git/HEAD"
echo 'int b;' > "$from/kernel/rcu/update.c" # same content, a new inode and mtime
expect "the next variant: 5 paths rewritten" "5 paths rewritten" "$(sync 2>&1)"
check "DST has the new SRC's content" same
check "a changed file is newer than the objects, though SRC's is from 2001" test "$into/kernel/rcu/tree.c" -nt "$work/objects"
check "a new file is newer than the objects" test "$into/new/dir/n.c" -nt "$work/objects"
check "a removed directory is gone" test ! -e "$into/gone"
check "a file that became a link is a link" test -L "$into/becomes-link"
expect "a retargeted link points where SRC's does" ../kernel "$(readlink "$into/arch/include")"
expect "an unchanged file keeps its mtime" "$x_before" "$(mtime include/linux/x.h)"
check "an equal file in another inode is not rewritten" test ! "$into/kernel/rcu/update.c" -nt "$work/objects"
check "the old mtime was not the changed file's" test "$tree_before" != "$(mtime kernel/rcu/tree.c)"
check "no .git is copied from the new SRC either" test ! -e "$into/.git"

# Back to the first variant: only what differs comes back.
from=$work/a/src
expect "back to the first variant: 5 paths rewritten" "5 paths rewritten" "$(sync 2>&1)"
check "DST has the first SRC's content again" same
check "a missing SRC fails in one line" test "$("$top/build/sync-tree.sh" "$work/nope" "$into" 2>&1 | wc -l)" -eq 1
finish sync-tree
