#!/usr/bin/env bash
# build/libvirtd.sh: make sure qemu:///system answers.
#
# Where systemd is PID 1 it starts libvirtd through systemctl.  Elsewhere
# (containers, these CI machines) it starts virtlogd and libvirtd itself, as
# daemons with pid files, and never a second copy of either.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

uri=qemu:///system
up() { timeout 20 virsh -c "$uri" version >/dev/null 2>&1; }

# The 45-second trap: libvirt's capability probe runs with DAC override and
# sees /dev/kvm, but the per-domain check runs as libvirt-qemu and cannot open
# a 0600 root:root /dev/kvm.  libvirt then throws its QEMU capability cache
# away and re-probes about ten times on every domain start (~45 s a start).
# udev normally gives /dev/kvm group kvm, mode 0660 (libvirt-qemu is in group
# kvm); do the same here.  This only changes the device node's permissions.
if [ -c /dev/kvm ] && [ "$(stat -c '%G %a' /dev/kvm)" != "kvm 660" ] && getent group kvm >/dev/null; then
	[ "$(id -u)" -eq 0 ] || die "/dev/kvm is $(stat -c '%U:%G %a' /dev/kvm): run 'sudo make libvirt' (it sets root:kvm 0660, as udev does)"
	chgrp kvm /dev/kvm && chmod 0660 /dev/kvm
	say "/dev/kvm set to root:kvm 0660 (avoids libvirt's per-start capability re-probe)"
fi

if up; then say "libvirt is up ($uri)"; exit 0; fi
[ "$(id -u)" -eq 0 ] || die "libvirt ($uri) is not running: run 'sudo make libvirt'"

if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; then
	systemctl start virtlogd.socket libvirtd.socket libvirtd.service || die "systemctl could not start libvirtd: see 'journalctl -u libvirtd'"
else
	running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
	running /run/virtlogd.pid || pgrep -x virtlogd >/dev/null || virtlogd -d -p /run/virtlogd.pid ||
		die "virtlogd did not start: run 'virtlogd -v' to see why"
	if ! running /run/libvirtd.pid && ! pgrep -x libvirtd >/dev/null; then
		libvirtd -d -p /run/libvirtd.pid || die "libvirtd did not start: run 'libvirtd -v' to see why"
		# started by rcuwb: its tests may stop and start this one (faults.sh), no other
		mkdir -p /run/rcuwb && cat /run/libvirtd.pid > /run/rcuwb/libvirtd.ours
	fi
fi
for _ in $(seq 1 30); do up && { say "libvirt is up ($uri)"; exit 0; }; sleep 1; done
die "libvirtd started but $uri does not answer after 30 s: see /var/log/libvirt/libvirtd.log"
