#!/usr/bin/env bash
# build/test-hosts.sh: two independent libvirt endpoints on this machine,
# for the multi-host tests (runner/tests/hosts.sh).  Test only.
#
#   test-hosts.sh up HOSTS_FILE   start them and write a hosts file naming both
#   test-hosts.sh down            switch them off again
#   test-hosts.sh kill-session    SIGKILL the session daemon (its QEMUs live on)
#   test-hosts.sh start-session   start it (again)
#
# "ssh": the system libvirtd, untouched, reached over ssh as a host across
# the network is: qemu+ssh://root@127.0.0.1:PORT/system, through an sshd
# of the test's own on 127.0.0.1 that takes one throwaway key (no
# passwords), whose host key is checked against a known_hosts file of its
# own (the ssh wrapper in the URI's command=; nothing of the user's ~/.ssh
# is read or written).  The runner then uses nothing of this machine for it
# but the connection.  `down` stops that sshd and removes its keys.
# "session": an unprivileged qemu:///session libvirtd of the system user
# rcuwb-session (created when missing), reached through its socket.
#
# Where systemd is PID 1 this script does not touch the daemons: set up the
# endpoints by hand (docs/hosts.md).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

user=rcuwb-session
home=/var/lib/rcuwb-session
sshdir=/run/rcuwb/test-ssh

[ "$(id -u)" -eq 0 ] || die "run as root: it reaches root's libvirtd over ssh and creates user $user"
[ "$(cat /proc/1/comm 2>/dev/null)" != systemd ] ||
	die "systemd runs the daemons here: set up an ssh and a session endpoint by hand"

uid() { id -u "$user"; }
session_dir() { echo "/run/user/$(uid)"; }
session_uri() { echo "qemu+unix:///session?socket=$(session_dir)/libvirt/libvirt-sock"; }
answers() { timeout 10 virsh -c "$1" version >/dev/null 2>&1; }
wait_for() { # URI WHAT
	local _
	for _ in $(seq 1 30); do answers "$1" && return 0; sleep 1; done
	die "$2 does not answer at $1 after 30 s"
}

ssh_uri() { echo "qemu+ssh://root@127.0.0.1:$(cat "$sshdir/port")/system?command=$sshdir/ssh"; }
sshd_running() { [ -f "$sshdir/sshd.pid" ] && kill -0 "$(cat "$sshdir/sshd.pid")" 2>/dev/null; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

ssh_up() {
	local port
	sshd_running && answers "$(ssh_uri)" && return 0
	[ -x /usr/sbin/sshd ] || die "no /usr/sbin/sshd: run 'make deps' (openssh-server)"
	rm -rf "$sshdir"
	mkdir -p "$sshdir" /run/sshd
	chmod 700 "$sshdir"
	for port in $(seq 22120 22199); do port_free "$port" && break; done
	echo "$port" > "$sshdir/port"
	ssh-keygen -q -t ed25519 -N '' -C rcuwb-test-host -f "$sshdir/host_key"
	ssh-keygen -q -t ed25519 -N '' -C rcuwb-test-client -f "$sshdir/client_key"
	cp "$sshdir/client_key.pub" "$sshdir/authorized_keys"
	echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$sshdir/host_key.pub")" > "$sshdir/known_hosts"
	cat > "$sshdir/sshd_config" <<-EOF
		# build/test-hosts.sh: test only, stopped by 'test-hosts.sh down'
		ListenAddress 127.0.0.1
		Port $port
		HostKey $sshdir/host_key
		AuthorizedKeysFile $sshdir/authorized_keys
		AuthenticationMethods publickey
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		PermitRootLogin prohibit-password
		AllowUsers root
		UsePAM no
		PidFile $sshdir/sshd.pid
	EOF
	cat > "$sshdir/ssh" <<-EOF
		#!/bin/sh
		# the test's ssh: its key, its known_hosts, no user or system ssh configuration
		exec ssh -F /dev/null -o IdentitiesOnly=yes -o IdentityFile=$sshdir/client_key \\
			-o UserKnownHostsFile=$sshdir/known_hosts -o GlobalKnownHostsFile=/dev/null \\
			-o StrictHostKeyChecking=yes -o BatchMode=yes "\$@"
	EOF
	chmod 700 "$sshdir/ssh"
	/usr/sbin/sshd -f "$sshdir/sshd_config" -E "$sshdir/sshd.log" || die "sshd did not start: see $sshdir/sshd.log"
	wait_for "$(ssh_uri)" "libvirtd over the test's sshd"
}

ssh_down() {
	sshd_running && kill "$(cat "$sshdir/sshd.pid")"
	rm -rf "$sshdir"
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
		env -i HOME="$home" XDG_RUNTIME_DIR="$d" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		libvirtd -d -p "$(session_pidfile)")
	wait_for "$(session_uri)" "the session libvirtd of $user"
}

# The session daemon this script started (its pid file), and the QEMUs that
# daemon started (libvirt's pid files): only those are ever signalled.
session_pidfile() { echo "$(session_dir)/rcuwb-test-libvirtd.pid"; }
session_pid() {
	local pid
	pid=$(cat "$(session_pidfile)" 2>/dev/null) || return 1
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = libvirtd ] && [ "$(stat -c %U "/proc/$pid")" = "$user" ] &&
		echo "$pid"
}
session_qemus() {
	local f pid
	for f in "$(session_dir)"/libvirt/qemu/run/*.pid; do
		pid=$(cat "$f" 2>/dev/null) || continue
		[ "$(stat -c %U "/proc/$pid" 2>/dev/null)" = "$user" ] && echo "$pid"
	done
}

session_kill() {
	local pid
	pid=$(session_pid) || return 0
	kill -KILL "$pid"
	for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	rm -f "$(session_dir)/libvirt/libvirt-sock"
}

session_down() {
	local uri pid
	getent passwd "$user" >/dev/null || return 0
	uri=$(session_uri)
	# a guest the test left behind: destroyed, not orphaned
	if answers "$uri"; then
		virsh -c "$uri" list --name | grep '^rcuwb-' | xargs -r -n1 virsh -c "$uri" destroy >/dev/null 2>&1 || true
	fi
	session_qemus | xargs -r kill -KILL
	pid=$(session_pid) && kill -TERM "$pid"
	return 0
}

case "${1:-}" in
up)
	[ $# -eq 2 ] || die "usage: $0 up HOSTS_FILE"
	ssh_up
	session_up
	cat > "$2" <<-EOF
		# written by build/test-hosts.sh: two endpoints on this machine, one PU each
		hosts:
		  - uri: $(ssh_uri)
		    label: ssh
		    cpus: "0"
		    reconnect: 20
		  - uri: $(session_uri)
		    label: session
		    cpus: "1"
		    pool: $home/pool
		    reconnect: 20
	EOF
	say "endpoints up: ssh ($(ssh_uri)) and session ($(session_uri)); hosts file $2"
	;;
down)
	session_down
	ssh_down
	say "endpoints down: the test's sshd stopped, no session daemon"
	;;
kill-session) session_kill ;;
start-session) session_up ;;
*) die "usage: $0 up HOSTS_FILE | down | kill-session | start-session" ;;
esac
