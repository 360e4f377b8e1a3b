# runner/tests/lib.sh: what the shell tests share (sourced).  Each test sets
# $db, calls these, and ends with `finish NAME`, which prints the line
# "NAME: N passed, M failed" that 'make check' adds up.
# shellcheck shell=bash
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rcuwb=$here/../rcuwb
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "  ok   $1"; }
bad() { fail=$((fail + 1)); echo "  FAIL $1${2:+ ($2)}"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds
check() {
	local d=$1; shift
	if "$@" >/dev/null 2>&1; then ok "$d"; else bad "$d"; fi
}
# expect DESCRIPTION WANT GOT
expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$3', want '$2'"; fi
}
# (a busy timeout: two queries may open the WAL database at the same moment)
q() { sqlite3 -cmd ".timeout 10000" "$db" "$1"; }
last() { q "SELECT $1 FROM runs ORDER BY id DESC LIMIT 1"; }
no_domains() { [ -z "$(virsh -c qemu:///system list --all --name | grep '^rcuwb-')" ]; }
# a scratch directory removed at exit
scratch() {
	work=$(mktemp -d "/tmp/rcuwb-$1.XXXXXX")
	db=$work/rcuwb.db
	trap 'rm -rf "$work"' EXIT
}
finish() {
	echo "$1: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
