#!/usr/bin/env bash
# build/test-hosts.sh: two independent libvirt endpoints on this machine,
# for the multi-host tests (runner/tests/hosts.sh).  Test only.
#
#   test-hosts.sh up HOSTS_FILE   start them and write a hosts file naming both
#   test-hosts.sh down            switch them off again
#   test-hosts.sh kill-session    SIGKILL the session daemon (its QEMUs live on)
#   test-hosts.sh start-session   start it (again)
#
# "tcp": the system libvirtd, restarted with a TCP listener on 127.0.0.1
# only and auth none, reached as qemu+tcp://127.0.0.1/system.  The runner
# then uses nothing of this machine for it but the connection: the same
# code path as a host across the network.  `down` restarts libvirtd without
# the listener.
# "session": an unprivileged qemu:///session libvirtd of the system user
# rcuwb-session (created when missing), reached through its socket.
#
# Where systemd is PID 1 this script does not touch the daemons: set up the
# endpoints by hand (README "Several hosts").
set -euo pipefail
. "$(dirname "$0")/lib.sh"

user=rcuwb-session
home=/var/lib/rcuwb-session
conf=/run/rcuwb/libvirtd-tcp.conf
tcp_uri=qemu+tcp://127.0.0.1/system

[ "$(id -u)" -eq 0 ] || die "run as root: it restarts the system libvirtd and creates user $user"
[ "$(cat /proc/1/comm 2>/dev/null)" != systemd ] ||
	die "systemd runs the daemons here: set up $tcp_uri and a session endpoint by hand"

uid() { id -u "$user"; }
session_dir() { echo "/run/user/$(uid)"; }
session_uri() { echo "qemu+unix:///session?socket=$(session_dir)/libvirt/libvirt-sock"; }
answers() { timeout 10 virsh -c "$1" version >/dev/null 2>&1; }
wait_for() { # URI WHAT
	local _
	for _ in $(seq 1 30); do answers "$1" && return 0; sleep 1; done
	die "$2 does not answer at $1 after 30 s"
}

# the root libvirtd's pid, if one runs (a stale pid file names it no more)
root_libvirtd() {
	local pid
	pid=$(cat /run/libvirtd.pid 2>/dev/null || true)
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = libvirtd ] &&
		[ "$(stat -c %u "/proc/$pid")" = 0 ]; then
		echo "$pid"
	else
		pgrep -x -u root libvirtd | head -1
	fi
}

system_libvirtd() { # [--listen -f CONF]: (re)start the system daemon with these options
	local pid
	pid=$(root_libvirtd)
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		! kill -0 "$pid" 2>/dev/null || die "libvirtd ($pid) did not exit within 60 s"
	fi
	rm -f /run/libvirtd.pid
	pgrep -x -u root virtlogd >/dev/null || virtlogd -d -p /run/virtlogd.pid
	libvirtd -d -p /run/libvirtd.pid "$@"
	wait_for qemu:///system "libvirtd"
}

# is the root libvirtd the one with the test's TCP listener?
listening() {
	local pid
	pid=$(root_libvirtd)
	[ -n "$pid" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "--listen"
}

tcp_up() {
	listening && answers "$tcp_uri" && return 0
	mkdir -p "${conf%/*}"
	cat > "$conf" <<-EOF
		# build/test-hosts.sh: test only, switched off by 'test-hosts.sh down'
		listen_tls = 0
		listen_tcp = 1
		listen_addr = "127.0.0.1"
		auth_tcp = "none"
	EOF
	system_libvirtd --listen -f "$conf"
	wait_for "$tcp_uri" "libvirtd's TCP listener"
}

tcp_down() {
	# decided by the daemon's command line, not by whether the port answers
	listening || { rm -f "$conf"; return 0; }
	system_libvirtd
	rm -f "$conf"
}

session_up() {
	local d
	getent passwd "$user" >/dev/null ||
		useradd --system --create-home --home-dir "$home" --shell /usr/sbin/nologin "$user"
	d=$(session_dir)
	mkdir -p "$d" && chown "$user:" "$d" && chmod 700 "$d"
	answers "$(session_uri)" && return 0
	# from / : the daemon must not keep the caller's directory busy
	(cd / && setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
		env -i HOME="$home" XDG_RUNTIME_DIR="$d" PATH=/usr/sbin:/usr/bin:/sbin:/bin libvirtd -d)
	wait_for "$(session_uri)" "the session libvirtd of $user"
}

session_kill() {
	pkill -KILL -x -u "$user" libvirtd || true
	for _ in $(seq 1 50); do pgrep -x -u "$user" libvirtd >/dev/null || break; sleep 0.1; done
	rm -f "$(session_dir)/libvirt/libvirt-sock"
}

session_down() {
	local uri
	getent passwd "$user" >/dev/null || return 0
	uri=$(session_uri)
	# a guest the test left behind: destroyed, not orphaned
	if answers "$uri"; then
		virsh -c "$uri" list --name | grep '^rcuwb-' | xargs -r -n1 virsh -c "$uri" destroy >/dev/null 2>&1 || true
	fi
	pkill -TERM -x -u "$user" libvirtd || true
	pkill -KILL -u "$user" -f qemu-system || true
}

case "${1:-}" in
up)
	[ $# -eq 2 ] || die "usage: $0 up HOSTS_FILE"
	tcp_up
	session_up
	cat > "$2" <<-EOF
		# written by build/test-hosts.sh: two endpoints on this machine, one PU each
		hosts:
		  - uri: $tcp_uri
		    label: tcp
		    cpus: "0"
		    reconnect: 20
		  - uri: $(session_uri)
		    label: session
		    cpus: "1"
		    pool: $home/pool
		    reconnect: 20
	EOF
	say "endpoints up: tcp ($tcp_uri) and session ($(session_uri)); hosts file $2"
	;;
down)
	session_down
	tcp_down
	say "endpoints down: no TCP listener, no session daemon"
	;;
kill-session) session_kill ;;
start-session) session_up ;;
*) die "usage: $0 up HOSTS_FILE | down | kill-session | start-session" ;;
esac
