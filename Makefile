# rcuwb: benchmarking workbench for Linux RCU grace periods.
#
# The pipeline, one folder a stage:
#   kernel-changes/ -> build/ -> VMs/ -> runner/ -> results DB -> stats/ -> RESULTS.md
#
#   make bench   set up everything, build the guest kernel, run the default
#                matrix in libvirt/QEMU guests, print the summary table
#   make check   set up everything, run every test (unit, parity, real guests)
#
# Setup (make deps, make libvirt) needs root: it installs Debian packages and
# starts libvirtd where systemd does not.

SHELL := /bin/bash

RCUWB_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rcuwb
RESULTS     ?= $(CURDIR)/results
DB          ?= $(RESULTS)/rcuwb.db
VARIANTS    ?= stock
export RCUWB_CACHE

RCUWB := runner/rcuwb
# Default matrix of 'make bench': normal and expedited GPs, 3 runs each, on a
# flat 2-vCPU guest and on a 4-vCPU guest with 2 NUMA nodes.
BENCH_VARIANT ?= stock
BENCH_REPS    ?= 3
BENCH_SHAPES  ?= "-n 2" "-n 4 -N 2"

all: runner

deps:
	@build/deps.sh

libvirt: deps
	@build/libvirtd.sh

tree: deps
	@build/tree.sh

kernel: tree
	@for v in $(VARIANTS); do build/kernel.sh $$v || exit 1; done

initramfs: tree
	@build/initramfs.sh

runner: deps
	@$(MAKE) -s -C runner

bench: deps libvirt kernel initramfs runner
	@since=$$(date -u +%Y-%m-%dT%H:%M:%SZ); \
	for shape in $(BENCH_SHAPES); do \
		$(RCUWB) -d $(DB) boot -k $(BENCH_VARIANT) $$shape -g normal,expedited \
			-r $(BENCH_REPS) -M bench || exit 1; \
	done; \
	echo; echo "Grace-period latency of this run (rcuscale writer-duration, microseconds):"; \
	$(RCUWB) -d $(DB) summary -M bench --since $$since

check: deps libvirt runner
	@$(MAKE) -s VARIANTS=stock kernel initramfs
	@rm -f runner/obj/check.log
	@set -o pipefail; { \
		$(MAKE) -s -C runner unit && \
		runner/tests/kvm-recheck-parity.sh && \
		runner/tests/integration.sh; \
	} 2>&1 | tee runner/obj/check.log; rc=$$?; \
	awk '/^[a-z-]+: [0-9]+ passed, [0-9]+ failed$$/ { p += $$2; f += $$4 } \
	     END { printf "check: %d passed, %d failed\n", p, f }' runner/obj/check.log; \
	exit $$rc

clean:
	$(MAKE) -C runner clean

.PHONY: all deps libvirt tree kernel initramfs runner bench check clean
