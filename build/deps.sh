#!/usr/bin/env bash
# build/deps.sh: install the Debian packages rcuwb needs (idempotent).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs=(
	# kernel tree and guest kernel build
	linux-source-6.1 build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils ccache gawk time
	# guests: QEMU driven by libvirt
	qemu-system-x86 libvirt-daemon-system libvirt-clients libvirt-dev libxml2-dev libxml2-utils
	# runner: host topology, results database, JSON, YAML, unit tests
	hwloc libhwloc-dev libsqlite3-dev sqlite3 libjson-c-dev libyaml-dev libcmocka-dev pkg-config
	# libFuzzer harnesses and sanitizer builds (clang's compiler-rt has libFuzzer)
	clang libclang-rt-14-dev
	# statistics (stats/ is an R package, loaded from source with pkgload)
	r-base-core r-cran-dbi r-cran-rsqlite r-cran-ggplot2 r-cran-testthat r-cran-jsonlite r-cran-base64enc r-cran-svglite r-cran-xml2 r-cran-energy r-cran-pkgload
	# the sequential gate's spending boundaries
	r-cran-rpact
	# nightly schedules: systemd-analyze verify of the timer units; the
	# dashboard test loads the page in a real (headless) browser
	systemd chromium
	# the tests read the JSON of rcuwb's commands
	jq
)
# The multi-host test reaches libvirt over ssh, through an sshd of its own
# (build/test-hosts.sh), where systemd does not run the daemons.  Where it
# does, installing openssh-server would start a system-wide sshd: not ours
# to do (that test is set up by hand there).
[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] || pkgs+=(openssh-server)

missing=()
for p in "${pkgs[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	say "all ${#pkgs[@]} packages present"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}): run 'sudo make deps' (installing needs root)"
say "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null || die "apt-get update failed: check the network and /etc/apt/sources.list"
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/rcuwb-apt.log 2>&1; then
	die "apt-get install failed ($(grep -m1 -E '^E:' /tmp/rcuwb-apt.log || tail -n1 /tmp/rcuwb-apt.log)); full log in /tmp/rcuwb-apt.log"
fi
say "installed ${#missing[@]} packages"
