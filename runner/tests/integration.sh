#!/usr/bin/env bash
# runner/tests/integration.sh: real guests through real libvirt into a real
# SQLite file.  Needs the 'after' kernel, the initramfs and libvirt up
# ('make check' sees to all three).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch integration
variant=${RCUWB_TEST_VARIANT:-after}


echo "integration: guests under libvirt (results in $db)"

# 1. A 4-vCPU guest with 2 NUMA nodes, normal GPs: samples land in the DB,
#    and the guest saw the CPUs and nodes it was given.
"$rcuwb" -q -d "$db" boot -k "$variant" -n 4 -N 2 -g normal --nwriters 2 -M it
id=$(q "SELECT max(id) FROM runs")
check "v4-n2 normal run stored as ok" test "$(q "SELECT outcome FROM runs WHERE id=$id")" = ok
check "its samples are in the samples table" test "$(q "SELECT count(*) FROM samples WHERE run_id=$id")" -ge 100
check "samples match the run's count" test "$(q "SELECT count(*) FROM samples WHERE run_id=$id")" = "$(q "SELECT nsamples FROM runs WHERE id=$id")"
check "guest brought up 4 CPUs on 2 nodes" test "$(q "SELECT guest_cpus || '/' || guest_nodes FROM runs WHERE id=$id")" = 4/2
check "accelerator and host recorded" test -n "$(q "SELECT accel || host_pus || qemu_version || libvirt_version FROM runs WHERE id=$id AND accel IN ('kvm','tcg')")"
check "boot time recorded" test "$(q "SELECT boot_time_us > 0 FROM runs WHERE id=$id")" = 1
rundir=$(q "SELECT run_dir FROM runs WHERE id=$id")
check "run dir keeps console, XML, cmdline, config" test -s "$rundir/console.log" -a -s "$rundir/domain.xml" -a -s "$rundir/cmdline" -a -s "$rundir/kernel.config"
check "kept domain XML is schema-valid" virt-xml-validate "$rundir/domain.xml" domain
check "rcuwb parse agrees with kvm-recheck-rcuscale.sh on it" "$here/kvm-recheck-parity.sh" "$rundir/console.log"
check "no domain left behind" no_domains

# 2. A flat 2-vCPU guest, expedited GPs.
"$rcuwb" -q -d "$db" boot -k "$variant" -n 2 -g expedited -M it
check "v2 expedited run stored as ok" test "$(q "SELECT outcome || ':' || gp_mode || ':' || guest_cpus FROM runs ORDER BY id DESC LIMIT 1")" = ok:expedited:2
check "nothing else on the host: the run is not host-busy" test "$(last "host_other_cpu >= 0 AND NOT host_busy")" = 1

# 2b. A busy loop beside the guest: the run is kept, flagged host-busy, and
#     left out of the cell's statistics.
timeout 120 bash -c 'while :; do :; done' &
hog=$!
"$rcuwb" -q -d "$db" boot -k "$variant" -n 2 -g expedited -M it-busy
kill "$hog"; wait "$hog" 2>/dev/null
check "a run beside a busy loop is host-busy (other work > 0.5 PU)" test "$(last "status = 'host-busy' AND host_other_cpu > 0.5")" = 1
check "summary leaves it out of the samples" grep -Eq ' 1 +0 +0 .*not ok: 1 host-busy' <<< "$("$rcuwb" -d "$db" summary -M it-busy)"

# 3. Boot only: init reports the CPUs and nodes it sees.
"$rcuwb" -q -d "$db" boot -k "$variant" -n 4 -N 2 --boot-only -M it
check "boot-only guest ok" test "$(q "SELECT outcome FROM runs ORDER BY id DESC LIMIT 1")" = ok
check "init saw CPUs 0-3 on nodes 0-1" grep -q 'rcuwb-init: up cpus=0-3 nodes=0-1' "$(q "SELECT run_dir FROM runs ORDER BY id DESC LIMIT 1")/console.log"

"$rcuwb" -q -d "$db" boot -k "$variant" -n 4 -N 4 --boot-only -M it
check "4-node guest brought up 4 CPUs on 4 nodes" test "$(q "SELECT outcome || ':' || guest_cpus || '/' || guest_nodes FROM runs ORDER BY id DESC LIMIT 1")" = ok:4/4

# A guest that does not bring up what it was given is not a data point.
"$rcuwb" -q -d "$db" boot -k "$variant" -n 2 -N 2 -b "maxcpus=1" -M it
check "maxcpus=1 guest stored as topology-mismatch" test "$(q "SELECT outcome FROM runs ORDER BY id DESC LIMIT 1")" = topology-mismatch

# 4. A guest that cannot finish in time is destroyed and stored as a timeout.
start=$(date +%s)
"$rcuwb" -q -d "$db" boot -k "$variant" -n 2 -t 3 -M it
check "forced timeout stored as timeout" test "$(q "SELECT outcome FROM runs ORDER BY id DESC LIMIT 1")" = timeout
check "timeout ended the guest within 15 s" test $(( $(date +%s) - start )) -lt 15
check "no domain left after the timeout" no_domains

# 5. A guest that panics (no init to run) is stored as a crash.
"$rcuwb" -q -d "$db" boot -k "$variant" -n 2 -b "rdinit=/nonexistent" -M it
check "forced panic stored as crash" test "$(q "SELECT outcome FROM runs ORDER BY id DESC LIMIT 1")" = crash

# 6. Bad input: one line naming the value, exit 1, nothing stored.
before=$(q "SELECT count(*) FROM runs")
msg=$("$rcuwb" -d "$db" boot -k "$variant" -n 3 -N 2 2>&1); rc=$?
check "uneven NUMA split refused with a clear message" test "$rc" = 1 -a "$msg" = "rcuwb: error: 3 vcpus do not split evenly over 2 NUMA nodes"
msg=$("$rcuwb" -d "$db" boot -k "$variant" --gp sometimes 2>&1); rc=$?
check "bad --gp refused naming the value" test "$rc" = 1 -a "$msg" = "rcuwb: error: --gp 'sometimes': give normal, expedited or normal,expedited"
msg=$("$rcuwb" -d "$db" boot -k no-such-variant 2>&1); rc=$?
check "unknown variant refused with what to do" grep -q "kernel variant 'no-such-variant' is not built" <<< "$msg"
msg=$("$rcuwb" -d "$db" boot --vcpus x 2>&1); rc=$?
check "non-numeric --vcpus refused" test "$rc" = 1 -a "$msg" = "rcuwb: error: --vcpus 'x': give a whole number from 1 to 64"
check "nothing stored by refused commands" test "$(q "SELECT count(*) FROM runs")" = "$before"
check "summary lists the stored cells" grep -q 'v4-n2/normal/w2-r0' <<< "$("$rcuwb" -d "$db" summary -M it)"
check "summary --json is valid JSON" json_pp <<< "$("$rcuwb" -d "$db" -j summary -M it)"
# rerun: the same XML and command line again, stored as a new run.
first=$(q "SELECT MIN(id) FROM runs")
"$rcuwb" -q -d "$db" rerun "$first"
expect "rerun stored as a new ok run of the same cell" "ok:$first:$(q "SELECT cell FROM runs WHERE id=$first")" "$(last "outcome || ':' || rerun_of || ':' || cell")"
# the guest's name and the runner's pid in its description differ by design
strip() { sed -e 's/rcuwb-[0-9]*-[0-9]*-[0-9]*-[0-9]*/NAME/g' -e 's/, pid [0-9]*</, pid PID</' "$1/domain.xml"; }
dir1=$(q "SELECT run_dir FROM runs WHERE id=$first") dir2=$(last run_dir)
xmldiff=$(diff <(strip "$dir1") <(strip "$dir2"))
expect "rerun booted the same domain XML" "" "$xmldiff"
check "rerun kept the same command line" test "$(last cmdline)" = "$(q "SELECT cmdline FROM runs WHERE id=$first")"
msg=$("$rcuwb" -d "$db" rerun 99999 2>&1)
expect "rerun of a missing run named" "rcuwb: error: no run 99999 in the results database" "$msg"
check "no domain left at the end" no_domains

finish integration
