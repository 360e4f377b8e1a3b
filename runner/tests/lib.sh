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
# the last run's EXPR: of its row in runs, and of the view run_status
# (runner/src/results/db.c, named runs here too): host_busy (other processes took
# over HOST_BUSY_SHARE of the host's PUs) and status (the outcome, or
# host-busy for such an ok run: left out of statistics, repeated by --resume)
last() { q "SELECT $1 FROM run_status AS runs ORDER BY id DESC LIMIT 1"; }
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

# The mid-boot probe's tests (midboot.sh, debian612.sh): 2-vCPU boots stored
# under the matrix label $boot_label; the last run's outcome; its probe
# calls as "outcome:calls stored:calls not ok"; the probe's two kinds of
# deadlock evidence.
boot_label=adhoc
boot() { "$rcuwb" -q -d "$db" boot -M "$boot_label" -n 2 "$@"; }
probe() { # probe VARIANT STAGES PRIMS [BOOT_PARAMS]
	boot -k "$1" -p "$2" --probe-prims "$3" --watchdog 3 -t 60 ${4:+-b "$4"}
}
outcome() { last "outcome || ':' || outcome_detail"; }
calls() {
	last "outcome || ':' || (SELECT COUNT(*) FROM probes WHERE run_id = runs.id) || ':' ||
	      (SELECT COUNT(*) FROM probes WHERE run_id = runs.id AND outcome NOT IN ('ok', 'skipped'))"
}
prims=rcu,rcu_exp,srcu,srcu_exp,tasks
kthread="the boot task (pid 1) waits for RCU's grace-period kthread, which does not exist and which only it would create"
worker="the boot task (pid 1) waits for a workqueue worker to run the work pending on rcu_gp_wq, which does not exist and which only it would create"
