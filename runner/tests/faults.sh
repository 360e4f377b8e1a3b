#!/usr/bin/env bash
# runner/tests/faults.sh: the fault matrix, with real guests.  Each fault is
# injected into a real `rcuwb run`; each test says what happened to the runs
# in flight and proves that nothing stored was lost or stored twice.  The
# fault table (fault, injection, what rcuwb did, runs lost) is written to
# runner/obj/faults.md from the checks themselves (RESULTS.md shows it).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch faults
variant=${RCUWB_TEST_VARIANT:-after}
table=$here/../obj/faults.md
rows=()
mounts=()
cleanup() {
	local m
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

mat() { # NAME VCPUS REPS: one cell, expedited GPs (the shortest runs)
	printf 'name: %s\nvariants: [%s]\ntopologies: [{vcpus: %s}]\nmodes: [expedited]\n' "$1" "$variant" "$2" > "$work/$1.yaml"
	printf 'rcuscale: {nwriters: 1, nreaders: 0, holdoff: 1}\nreps: %s\ntimeout: 120\nseed: 5\n' "$3" >> "$work/$1.yaml"
}
results() { # MATRIX: runs that are results (not repeated by --resume)
	q "SELECT COUNT(*) FROM runs WHERE matrix='$1' AND outcome NOT IN ('interrupted', 'host-failed')"
}
once() { # MATRIX N: every planned run stored exactly once as a result
	test "$(results "$1")" = "$2" &&
	test "$(q "SELECT COUNT(DISTINCT cell || '|' || variant || '|' || rep) FROM runs WHERE matrix='$1'
		   AND outcome NOT IN ('interrupted', 'host-failed')")" = "$2"
}
all_rows() { q "SELECT COUNT(*) FROM runs WHERE matrix='$1'"; }
no_staging() { test -z "$(ls /var/lib/libvirt/rcuwb 2>/dev/null | grep '^rcuwb-')"; }
# row FAULT INJECTION WHAT-RCUWB-DID LOST: a line of the fault table, once its checks passed
row() { rows+=("| $1 | $2 | $3 | $4 |"); }
tmpfs() { # DIR SIZE: a tmpfs of its own, unmounted at exit
	mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" && mounts+=("$1")
}

echo "faults: the fault matrix with real guests (results in $db)"

# 1. QEMU killed from outside (as the OOM killer would) while its guest runs.
mat qk 1 3
f0=$fail
"$rcuwb" -q -d "$db" run "$work/qk.yaml" &
pid=$!
qpid=
qdom=
for _ in $(seq 1 300); do
	# a run's guest, not the accelerator probe's KVM trial guest
	read -r qpid qdom < <(pgrep -af "guest=rcuwb-[0-9-]*-$pid-.* -accel tcg" |
		sed -n '1s/^\([0-9]*\) .*guest=\(rcuwb-[0-9-]*\),.*/\1 \2/p')
	[ -n "$qpid" ] && break
	sleep 0.1
done
# killed while libvirt still starts it, the guest never ran (qemu-failed):
# wait until libvirt has it running, as the OOM killer would find it
for _ in $(seq 1 300); do
	[ "$(virsh -c qemu:///system domstate "$qdom" 2>/dev/null)" = running ] && break
	sleep 0.1
done
sleep 1
kill -9 "$qpid"
wait "$pid"
expect "the runner goes on after its guest's QEMU is killed" 0 $?
expect "the killed run is stored as host-failed, not as the kernel's crash" \
	"host-failed:libvirt reported the guest failed (QEMU died; killed from outside?)" \
	"$(q "SELECT outcome || ':' || outcome_detail FROM runs WHERE matrix='qk' AND outcome <> 'ok'")"
"$rcuwb" -q -d "$db" run --resume "$work/qk.yaml"
check "--resume repeats it: every run once" once qk 3
expect "and the host-failed row is kept" 4 "$(all_rows qk)"
check "no domain left" no_domains
[ "$fail" -eq "$f0" ] && row "a guest's QEMU killed" "\`kill -9\` on its qemu-system process, 1 s into the run" \
	"run stored as \`host-failed\` (no panic on its console: not the kernel's fault), the matrix went on; \`--resume\` repeated it" 0

# 2. Two runners on one database and one host at once, 2-vCPU guests on 2 PUs.
mat two-a 2 2
mat two-b 2 2
f0=$fail
"$rcuwb" -d "$db" run "$work/two-a.yaml" > "$work/a.out" 2>&1 &
a=$!
"$rcuwb" -d "$db" run "$work/two-b.yaml" > "$work/b.out" 2>&1 &
b=$!
wait "$a"; ra=$?
wait "$b"; rb=$?
expect "two runners started together both finish" "0 0" "$ra $rb"
check "the first stored its runs exactly once" once two-a 2
check "the second stored its runs exactly once" once two-b 2
expect "no guest of one ran beside a guest of the other (host PUs reserved across runners)" 0 \
	"$(q "SELECT COUNT(*) FROM runs x JOIN runs y ON x.matrix = 'two-a' AND y.matrix = 'two-b'
	      WHERE x.started_at < y.ended_at AND y.started_at < x.ended_at")"
check "one runner said it waited for the other's PUs" grep -q "waiting for host PUs that another rcuwb process holds" \
	"$work/a.out" "$work/b.out"
expect "all four runs 1:1 on their PUs and not host-busy" 4 \
	"$(q "SELECT COUNT(*) FROM run_status WHERE matrix IN ('two-a', 'two-b') AND status = 'ok' AND oversub = 1.0
	      AND host_other_cpu >= 0")"
[ "$fail" -eq "$f0" ] && row "two runners at once" "two \`rcuwb run\` started together on one database, 2-vCPU guests on a 2-PU host" \
	"the second waited for the PUs the first held (one lock per host PU); no two guests overlapped; all runs clean and 1:1" 0

# 3. The runner killed (SIGKILL and SIGTERM in turn) at 12 random points of a
#    matrix, resumed each time.
mat kill 1 6
f0=$fail
RANDOM=14	# the same points every time
for i in $(seq 1 12); do
	"$rcuwb" -q -d "$db" run --resume "$work/kill.yaml" > /dev/null 2>&1 &
	pid=$!
	sleep "$((RANDOM % 8)).$((RANDOM % 10))"
	if ((i % 2)); then kill -KILL "$pid"; else kill -TERM "$pid"; fi
	wait "$pid" 2>/dev/null
done
mid=$(results kill)
"$rcuwb" -q -d "$db" run --resume "$work/kill.yaml"
check "after 12 kills and resumes every run is stored exactly once ($mid of 6 before the last resume)" once kill 6
check "interrupted runs (SIGTERM) are kept, not replaced" \
	test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='kill' AND outcome = 'interrupted'")" -ge 1
check "no domain left" no_domains
check "no stale staging left" no_staging
[ "$fail" -eq "$f0" ] && row "the runner killed" "SIGKILL and SIGTERM in turn at 12 random points of a 6-run matrix, \`--resume\` after each" \
	"finished runs kept; SIGTERM stored the run in flight as \`interrupted\`; SIGKILL's guest died with the connection (autodestroy) and the next runner removed its staging; each run stored once" 0

# refused: EXIT-STATUS, one line, starting "rcuwb: error: " and naming FILE
refused() { # MSG RC FILE
	[ "$2" -ne 0 ] && [ "$(wc -l <<< "$1")" = 1 ] && [[ $1 == "rcuwb: error: "*"$3"* ]]
}

# A database rcuwb must refuse before any guest starts, in one line naming
# it, and leave as it was: refused_db FAULT INJECTION DB
refused_db() {
	local f0=$fail sum msg rc
	sum=$(sha256sum < "$3")
	msg=$("$rcuwb" -d "$3" run "$work/qk.yaml" 2>&1)
	rc=$?
	check "$1 is refused in one line naming it ($msg)" refused "$msg" "$rc" "$3"
	expect "and left as it was" "$sum" "$(sha256sum < "$3")"
	check "no domain started" no_domains
	[ "$fail" -eq "$f0" ] && row "$1" "$2" "refused before any guest started, in one line: \`${msg//$work\//}\`" 0
}

# 4. A read-only database (a read-only filesystem: root ignores file modes).
tmpfs "$work/ro" 16m
cp "$db" "$work/ro/rcuwb.db"
mount -o remount,ro "$work/ro"
refused_db "a read-only database" "the database on a filesystem remounted read-only" "$work/ro/rcuwb.db"

# 5. A corrupt database.
cp "$db" "$work/corrupt.db"
dd if=/dev/urandom of="$work/corrupt.db" bs=1 seek=0 count=100 conv=notrunc status=none
refused_db "a corrupt database" "its first 100 bytes overwritten at random" "$work/corrupt.db"

# 6. The results directory on a full filesystem: the database and the run
#    directories on a small tmpfs, filled up.
f0=$fail
full=$work/full
tmpfs "$full" 24m
cp "$db" "$full/rcuwb.db"
fq() { sqlite3 -cmd ".timeout 10000" "$full/rcuwb.db" "$1"; }
maxid=$(fq "SELECT MAX(id) FROM runs")
before=$(fq "SELECT COUNT(*) || ':' || SUM(id) || ':' || SUM(nsamples) FROM runs")
mat fm 1 2
dd if=/dev/zero of="$full/fill" bs=64k status=none 2>/dev/null
msg=$("$rcuwb" -d "$full/rcuwb.db" run "$work/fm.yaml" 2>&1)
rc=$?
err=$(grep '^rcuwb: error:' <<< "$msg")
check "a full results filesystem fails the matrix with one error line (exit $rc: $err)" \
	test "$rc" -ne 0 -a "$(grep -c '^rcuwb: error:' <<< "$msg")" = 1
rm -f "$full/fill"
expect "the stored runs are all there" "$before" \
	"$(fq "SELECT COUNT(*) || ':' || SUM(id) || ':' || SUM(nsamples) FROM runs WHERE id <= $maxid")"
expect "and the database is sound" ok "$(fq "PRAGMA integrity_check")"
"$rcuwb" -q -d "$full/rcuwb.db" run --resume "$work/fm.yaml"
expect "with space again, --resume completes the matrix, each run once" 2:2 \
	"$(fq "SELECT COUNT(*) || ':' || COUNT(DISTINCT rep) FROM runs WHERE matrix = 'fm' AND outcome = 'ok'")"
check "no domain left" no_domains
[ "$fail" -eq "$f0" ] && row "the results filesystem full" "database and run directories on a 24 MiB tmpfs filled up with \`dd\`" \
	"the matrix stopped with \`${err//$work\//}\`; stored runs intact (integrity_check ok); \`--resume\` completed it once there was space" 0

# 8. libvirtd killed (SIGKILL) 1 s into a run of a matrix, restarted 5 s later:
# only a libvirtd that rcuwb started (build/libvirtd.sh, where systemd does
# not run the daemons: CI) is killed; anyone else's is left alone and this
# fault is skipped (hosts.sh kills a session daemon of its own mid-matrix).
lv_pid=$(pgrep -x -u root libvirtd | head -1)
if [ -n "$lv_pid" ] && [ "$(cat /run/rcuwb/libvirtd.ours 2>/dev/null)" = "$lv_pid" ]; then
	mat lv 1 4
	f0=$fail
	"$rcuwb" -d "$db" run "$work/lv.yaml" > "$work/lv.out" 2>&1 &
	pid=$!
	for _ in $(seq 1 300); do
		pgrep -f "guest=rcuwb-[0-9-]*-$pid-.* -accel tcg" > /dev/null && break
		sleep 0.1
	done
	sleep 1
	flight=$(( $(all_rows lv) + 1 ))
	kill -KILL "$lv_pid"
	sleep 5
	"$here/../../build/libvirtd.sh" > /dev/null 2>&1
	wait "$pid"
	rc=$?
	expect "the runner finishes the matrix after libvirtd came back ($(grep -m1 'rcuwb: error' "$work/lv.out"))" 0 "$rc"
	check "it said it lost the connection and reconnected" \
		grep -q "reconnected to libvirt at qemu:///system after" "$work/lv.out"
	inflight=$(q "SELECT outcome FROM runs WHERE matrix = 'lv' ORDER BY id LIMIT 1 OFFSET $((flight - 1))")
	"$rcuwb" -q -d "$db" run --resume "$work/lv.yaml"
	check "with --resume every run is stored exactly once (the run in flight: $inflight)" once lv 4
	check "no domain left" no_domains
	[ "$fail" -eq "$f0" ] && row "libvirtd killed and restarted" "\`kill -KILL\` on the libvirtd rcuwb started, 1 s into a run of a 4-run matrix, \`build/libvirtd.sh\` 5 s later" \
		"the runner noticed the closed connection (close callback), started nothing, reconnected once libvirtd was back, found its guest by name; the run in flight was stored as \`$inflight\`$([ "$inflight" = ok ] || echo ' and repeated by `--resume`'); the matrix finished" 0
else
	echo "  skip libvirtd killed and restarted: the system libvirtd (pid ${lv_pid:-none}) was not started by rcuwb, so this test leaves it alone"
fi

# 7. A guest that floods its console (init writes 64 KiB lines without end).
f0=$fail
start=$(date +%s)
"$rcuwb" -q -d "$db" boot -k "$variant" -n 1 --boot-only -b rcuwb_flood -t 120 -M flood
took=$(( $(date +%s) - start ))
expect "a flooding guest is stopped and classified" \
	"badness:console flood: the guest wrote more than 1536 KiB to its console" "$(last "outcome || ':' || outcome_detail")"
size=$(stat -c %s "$(last run_dir)/console.log")
check "its kept log stays bounded ($((size >> 10)) KiB)" test "$size" -ge $((3 << 19)) -a "$size" -lt $((2 << 20))
check "it was stopped before its timeout ($took s)" test "$took" -lt 100
check "no domain left" no_domains
check "no stale staging left" no_staging
[ "$fail" -eq "$f0" ] && row "a guest flooding its console" "init writing 64 KiB lines without end (\`rcuwb_flood\` on the kernel command line)" \
	"stopped at 1.5 MiB of console (below virtlogd's 2 MiB rotation), $took s into the run, stored as \`badness\` (console flood); log kept at $((size >> 10)) KiB; the parser keeps at most 4 KiB of a line" 0

check "no console log or staging of these runs left on the host" \
	bash -c "! ls /var/lib/libvirt/rcuwb /var/lib/libvirt/rcuwb-pool 2>/dev/null | grep -q '^rcuwb-'"

mkdir -p "$(dirname "$table")"
{
	echo "| fault | how it is injected | what rcuwb did | runs lost |"
	echo "| --- | --- | --- | --- |"
	printf '%s\n' "${rows[@]}"
} > "$table"
echo "faults: the fault table is in $table"
finish faults
