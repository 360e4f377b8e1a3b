#!/usr/bin/env bash
# runner/tests/hosts.sh: one matrix over two libvirt endpoints that share
# nothing with the runner but the connection (build/test-hosts.sh: the
# system daemon over ssh, through an sshd of the test's own on 127.0.0.1
# with a throwaway key, and a session daemon of another user), with real
# guests: blocks per host, nothing of this machine's in
# the remote domain XML, a host unreachable at the start, and the session
# daemon killed in the middle of a matrix.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch hosts
variant=${RCUWB_TEST_VARIANT:-after}
setup=$here/../../build/test-hosts.sh
runner=
cleanup() {
	[ -z "$runner" ] || kill "$runner" 2>/dev/null
	"$setup" down >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# What the test must leave as it found it: the system libvirtd (its pid,
# its configuration, the domains that are not rcuwb's) and the machine's
# TCP listeners.
listeners() { # "ADDR:PORT" of every listening TCP socket, hex as in /proc/net/tcp*
	awk 'FNR > 1 && $4 == "0A" { print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u
}
machine_state() {
	echo "libvirtd $(pgrep -x -u root libvirtd | sort | tr '\n' ' ')"
	cat /etc/libvirt/*.conf 2>/dev/null | sha256sum
	virsh -c qemu:///system list --all --name 2>/dev/null | grep -v -e '^rcuwb-' -e '^$' | sort
}
state0=$(machine_state)
listen0=$(listeners)

"$setup" up "$work/hosts.yaml" || { bad "the two test endpoints came up"; finish hosts; exit 1; }
# the only listener the endpoints add is the test's sshd, on 127.0.0.1,
# and it takes no password: only the throwaway key
port=$(sed -n 's|^ *- uri: qemu+ssh://root@127.0.0.1:\([0-9]*\)/.*|\1|p' "$work/hosts.yaml")
expect "the endpoints add one listener: the test's sshd on 127.0.0.1:$port" \
	"$(printf '0100007F:%04X' "$port")" "$(comm -13 <(echo "$listen0") <(listeners) | tr '\n' ' ' | sed 's/ $//')"
check "that sshd refuses a login without the key" bash -c "! ssh -F /dev/null -p '$port' -o BatchMode=yes \
	-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o PubkeyAuthentication=no root@127.0.0.1 true"
expect "the system libvirtd was not restarted or reconfigured to serve the endpoints" "$state0" "$(machine_state)"
session_uri=$(sed -n 's/^ *- uri: \(qemu+unix.*\)/\1/p' "$work/hosts.yaml")
ssh_uri=$(sed -n 's/^ *- uri: \(qemu+ssh.*\)/\1/p' "$work/hosts.yaml")
pool_ssh=/var/lib/libvirt/rcuwb-pool
pool_session=/var/lib/rcuwb-session/pool
# rcuwb's guests on an endpoint, running or not
guests() { virsh -c "$1" list --all --name 2>/dev/null | grep '^rcuwb-'; }
session_qemus() { pgrep -u rcuwb-session -f qemu-system; }
# what the two pools hold beyond staged kernels and initramfs images (and
# their upload markers): a console log left behind, say
left_in_pools() {
	ls "$pool_ssh" "$pool_session" 2>/dev/null | grep -v -e '^$' -e ':$' |
		grep -Ev '^[0-9a-f]{16}-(vmlinux|initramfs\.cpio)(\.ok)?$'
}

mat() { # NAME REPS: before and after in one 1-vCPU cell, normal GPs
	cat > "$work/$1.yaml" <<-EOF
		name: $1
		variants: [before, $variant]
		topologies: [{vcpus: 1}]
		modes: [normal]
		rcuscale: {nwriters: 1, nreaders: 0, holdoff: 1}
		reps: $2
		timeout: 120
		seed: 3
	EOF
}

# 1. A matrix over both endpoints (one PU each), with a third host that
# cannot be reached at the start: the matrix finishes on the two.
mat split 4
cp "$work/hosts.yaml" "$work/hosts3.yaml"
printf '  - uri: qemu+ssh://root@127.0.0.1:1/system\n    label: nowhere\n    reconnect: 5\n' >> "$work/hosts3.yaml"
timeout 600 "$rcuwb" -d "$db" run --hosts "$work/hosts3.yaml" "$work/split.yaml" > "$work/split.out" 2>&1
rc=$?
expect "the matrix over the endpoints finished" 0 "$rc"
check "the unreachable host was named and left to retry" grep -q "cannot reach libvirt at qemu+ssh://root@127.0.0.1:1/system" "$work/split.out"
expect "every planned run stored once, ok" "8|8|8" \
	"$(q "SELECT COUNT(*) || '|' || COUNT(DISTINCT variant || rep) || '|' || SUM(outcome = 'ok') FROM runs WHERE matrix='split'")"
expect "runs on both endpoints" "session|ssh" "$(q "SELECT group_concat(host, '|') FROM (SELECT DISTINCT host FROM runs WHERE matrix='split' ORDER BY host)")"
expect "each repetition (block: both variants) on one host" 4 \
	"$(q "SELECT COUNT(*) FROM (SELECT rep FROM runs WHERE matrix='split' GROUP BY rep HAVING COUNT(DISTINCT host) = 1 AND COUNT(DISTINCT variant) = 2)")"
expect "each host's URI stored with its runs" 2 \
	"$(q "SELECT COUNT(*) FROM (SELECT DISTINCT host, host_uri FROM runs WHERE matrix='split' AND ((host = 'ssh' AND host_uri = '$ssh_uri') OR (host = 'session' AND host_uri = '$session_uri')))")"
expect "every run has its samples" 0 "$(q "SELECT COUNT(*) FROM runs WHERE matrix='split' AND nsamples < 100")"
expect "host load measured through libvirt on both" 8 "$(q "SELECT COUNT(host_other_cpu) FROM runs WHERE matrix='split'")"

# The ssh host's guests were made of pool volumes and a console stream:
# no path of this machine's results, cache or home in their XML.
ssh_xml=$(q "SELECT run_dir FROM runs WHERE matrix='split' AND host='ssh' LIMIT 1")/domain.xml
check "an ssh guest's kernel and initrd are pool volumes" \
	grep -q "<kernel>$pool_ssh/[0-9a-f]\{16\}-vmlinux</kernel>" "$ssh_xml"
check "its console is a pty (read as a stream), logged into the pool" \
	grep -q "<serial type=\"pty\">" "$ssh_xml"
# every absolute path in an element's text or an attribute
paths=$(grep -o '[>"]/[^<">][^<"]*' "$ssh_xml" | cut -c2- | sort -u)
expect "every path in it is in the host's pool" "" "$(grep -v "^$pool_ssh/" <<< "$paths")"
check "none is this machine's results, cache or home" \
	bash -c "! grep -q -e '$work' -e '${RCUWB_CACHE:-$HOME/.cache/rcuwb}' -e '$HOME' -e /var/lib/libvirt/rcuwb/ '$ssh_xml'"
check "the console log came back into the run directory" test -s "${ssh_xml%/*}/console.log"
expect "the pools hold only kernel and initramfs volumes (the KVM trial's log is gone too)" "" "$(left_in_pools)"
check "each volume was uploaded at most once to each host" \
	test -z "$(grep "uploading " "$work/split.out" | sort | uniq -d)"
check "no guest left on either endpoint" bash -c "[ -z \"\$(virsh -c '$ssh_uri' list --all --name | grep rcuwb-; virsh -c '$session_uri' list --all --name | grep rcuwb-)\" ]"
"$rcuwb" -d "$db" summary -M split > "$work/summary.out" 2>&1
check "summary shows runs per host" bash -c "grep -q 'ssh' '$work/summary.out' && grep -q 'session' '$work/summary.out'"

# 2. The session daemon killed in the middle of a matrix, back 3 s later:
# the run in flight there is stored as host-failed and run again on the
# ssh host; the runner reconnects, destroys the guest left behind, and the
# host rejoins.  Every planned run ends stored exactly once as a result.
mat drop 6
timeout 600 "$rcuwb" -d "$db" run --hosts "$work/hosts.yaml" "$work/drop.yaml" > "$work/drop.out" 2>&1 &
runner=$!
for _ in $(seq 1 600); do [ -n "$(guests "$session_uri")" ] && break; sleep 0.1; done
sleep 1
inflight=$(guests "$session_uri" | head -1)
"$setup" kill-session
sleep 3
"$setup" start-session >/dev/null 2>&1
wait "$runner"
rc=$?
runner=
expect "the matrix finished on what was left" 0 "$rc"
check "a guest was in flight on the session host when its daemon died" test -n "$inflight"
check "the runner saw the connection close and reconnected" \
	bash -c "grep -q 'lost the connection to libvirt at qemu+unix' '$work/drop.out' && grep -q 'reconnected to libvirt at qemu+unix' '$work/drop.out'"
expect "the run in flight stored as host-failed, saying why" 1 \
	"$(q "SELECT COUNT(*) FROM runs WHERE matrix='drop' AND outcome='host-failed' AND host='session' AND outcome_detail LIKE 'lost the connection%'")"
expect "and run again, on its host once it was back (blocks wait out a short outage)" 1 \
	"$(q "SELECT COUNT(*) FROM runs a JOIN runs b ON a.variant = b.variant AND a.rep = b.rep AND a.matrix = b.matrix
	      WHERE a.matrix='drop' AND a.outcome='host-failed' AND b.outcome='ok' AND b.id > a.id AND b.host = a.host")"
expect "every planned run stored exactly once as a result" "12|12" \
	"$(q "SELECT COUNT(*) || '|' || COUNT(DISTINCT variant || '|' || rep) FROM runs WHERE matrix='drop' AND outcome NOT IN ('host-failed', 'interrupted')")"
check "the guest in flight is gone from the session host" bash -c "! virsh -c '$session_uri' list --all --name | grep -q '$inflight'"
expect "no domain left on either endpoint" "" "$(guests "$ssh_uri"; guests "$session_uri")"
expect "no QEMU of the session user left" "" "$(session_qemus)"
expect "the pools hold only kernel and initramfs volumes (the lost run's log is gone)" "" "$(left_in_pools)"
# (the two endpoints share this machine's 2 PUs: each sees the other's
# guest as other load, so runs come out host-busy, which --resume repeats)
busy=$(q "SELECT COUNT(*) FROM run_status WHERE matrix='drop' AND status = 'host-busy'")
check "--resume plans again only the host-busy runs" grep -q "^$busy runs" \
	<<< "$("$rcuwb" -d "$db" run -n --resume --hosts "$work/hosts.yaml" "$work/drop.yaml")"

# 3. A guest whose QEMU fails at start on a remote host (an option QEMU does
# not know, through the domain template), and the KVM trial failing there
# in each way it can here: at start (the same template), QEMU killed under
# the running trial guest, the trial guest hung past its time limit.  Each
# time the runner says so and goes on with TCG, and nothing is left on the
# host.  Every trial has a verdict cache of its own (RCUWB_ACCEL_CACHE; by
# default the verdict holds for every rcuwb process until the host reboots).
sed -e "s|^<domain type='qemu'>|<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>|" \
	-e "s|^</domain>|  <qemu:commandline><qemu:arg value='-rcuwb-no-such-option'/></qemu:commandline>\n</domain>|" \
	"$here/../../VMs/domain.xml" > "$work/fails-at-start.xml"
tboot() { # DIR ACCEL [ARGS]: one 1-vCPU boot on the ssh host, results in DIR/rcuwb.db, KVM verdict in DIR/accel
	mkdir -p "$1"
	RCUWB_ACCEL_CACHE=$1/accel "$rcuwb" -d "$1/rcuwb.db" -c "$ssh_uri" boot -k "$variant" -n 1 --boot-only -t 60 -M trial -a "$2" "${@:3}"
}
RCUWB_DOMAIN_TEMPLATE=$work/fails-at-start.xml tboot "$work/start" tcg > "$work/start.out" 2>&1
expect "a remote guest whose QEMU fails at start is stored as qemu-failed" qemu-failed \
	"$(sqlite3 "$work/start/rcuwb.db" "SELECT outcome FROM runs")"
check "QEMU's own words are kept" sqlite3 "$work/start/rcuwb.db" "SELECT 1 FROM runs WHERE outcome_detail LIKE '%rcuwb-no-such-option%'"
expect "and its console log left the host" "" "$(left_in_pools)"
if [ -c /dev/kvm ] && virsh -c "$ssh_uri" capabilities | grep -q "<domain type='kvm'"; then
	RCUWB_DOMAIN_TEMPLATE=$work/fails-at-start.xml tboot "$work/t1" auto > "$work/t1.out" 2>&1
	check "a KVM trial whose QEMU fails at start: TCG, saying why" \
		grep -q "KVM cannot run this guest here (qemu-failed: .*): using TCG" "$work/t1.out"
	expect "and nothing of it left on the host" "" "$(left_in_pools)$(guests "$ssh_uri")"
	# QEMU killed under the trial guest, once libvirt has it running; if the
	# trial fails before it runs here, its QEMU cannot be killed
	tboot "$work/t2" auto > "$work/t2.out" 2>&1 &
	tb=$!
	killed=
	for _ in $(seq 1 300); do
		dom=$(guests "$ssh_uri" | head -1)
		if [ -n "$dom" ] && [ "$(virsh -c "$ssh_uri" domstate "$dom" 2>/dev/null)" = running ]; then
			killed=$(pgrep -f "guest=$dom,.*-accel kvm") && kill -9 $killed
			break
		fi
		kill -0 "$tb" 2>/dev/null || break
		sleep 0.1
	done
	wait "$tb"
	if [ -n "$killed" ]; then
		check "a KVM trial whose QEMU is killed: TCG, saying why" \
			grep -q "KVM cannot run this guest here (host-failed: .*): using TCG" "$work/t2.out"
	else
		check "a KVM trial that fails before its guest runs: TCG, saying why ($(grep -o 'KVM cannot run this guest here ([a-z-]*' "$work/t2.out"))" \
			grep -q "KVM cannot run this guest here (.*): using TCG" "$work/t2.out"
	fi
	check "and the run after it ran under TCG" test "$(sqlite3 "$work/t2/rcuwb.db" "SELECT accel || outcome FROM runs")" = tcgok
	expect "and nothing of it left on the host" "" "$(left_in_pools)$(guests "$ssh_uri")"
	# a trial guest that does not finish in time (0 s: at its first check)
	RCUWB_KVM_PROBE_TIMEOUT=0 tboot "$work/t3" auto > "$work/t3.out" 2>&1
	check "a KVM trial that does not finish in time: TCG, saying why ($(grep -o 'KVM cannot run this guest here ([a-z-]*' "$work/t3.out"))" \
		grep -q "KVM cannot run this guest here (.*): using TCG" "$work/t3.out"
	expect "and nothing of it left on the host" "" "$(left_in_pools)$(guests "$ssh_uri")"
	# the verdict is kept: another results directory on the same host tries no more
	mkdir -p "$work/t4" && cp -r "$work/t3/accel" "$work/t4/"
	tboot "$work/t4" auto > "$work/t4.out" 2>&1
	check "the verdict is kept for the host: no second trial, TCG ($(grep -c 'trying a guest under KVM' "$work/t4.out") trials)" \
		bash -c "! grep -q 'trying a guest under KVM' '$work/t4.out' && test \"\$(sqlite3 '$work/t4/rcuwb.db' 'SELECT accel || outcome FROM runs')\" = tcgok"
else
	echo "  (no KVM offered at $ssh_uri: no KVM trial to test)"
fi

# 4. Bad hosts files: one line naming the file, line and key.
printf 'hosts:\n  - uri: qemu:///system\n    pus: lots\n' > "$work/bad1.yaml"
expect "a bad PU budget is named" "rcuwb: error: $work/bad1.yaml:3: pus: give a whole number from 1 to 4096" \
	"$("$rcuwb" -d "$db" run -n --hosts "$work/bad1.yaml" "$work/drop.yaml" 2>&1)"
printf 'hosts:\n  - uri: qemu:///system\n    label: a\n  - uri: qemu+ssh://x/system\n    label: a\n' > "$work/bad2.yaml"
check "two hosts with one label are refused" grep -q "bad2.yaml:4: label: two hosts with one label" \
	<<< "$("$rcuwb" -d "$db" run -n --hosts "$work/bad2.yaml" "$work/drop.yaml" 2>&1)"

# 5. The machine as it was: the endpoints down, nothing of the test's left.
"$setup" down > /dev/null 2>&1
expect "the system libvirtd's pid, configuration and other domains are as before the test" "$state0" "$(machine_state)"
expect "no listener of the test's is left" "$listen0" "$(listeners)"
finish hosts
