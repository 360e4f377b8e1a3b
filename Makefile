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
VARIANTS    ?= v4.9 v4.10 v4.11 after
export RCUWB_CACHE

RCUWB := runner/rcuwb
MATRIX ?= perf-configs/quick.yaml
# the variants a matrix names, so that exactly those kernels get built
matrix_variants = $(shell sed -n 's/^variants: *\[\(.*\)\]/\1/p' $(1) | tr ',' ' ')

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

# The main job: the quick matrix (before vs after, 2 guest shapes, normal and
# expedited GPs, 3 runs each), then this run's table.
bench: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="$(call matrix_variants,$(MATRIX))"
	@mkdir -p $(RESULTS); since=$$(date -u +%Y-%m-%dT%H:%M:%SZ); \
	/usr/bin/time -f "%M %e" -o $(RESULTS)/.bench-time $(RCUWB) -d $(DB) run $(MATRIX) && \
	echo && echo "Grace-period latency of this run (rcuscale writer-duration samples, microseconds):" && \
	$(RCUWB) -d $(DB) summary --since $$since && \
	read rss wall < $(RESULTS)/.bench-time && \
	echo "runner: $$((rss / 1024)) MiB max resident over the matrix, $$wall s"

# The mid-boot dead zone: every probe stage and primitive, release by release
# (v4.9, v4.10, v4.11, after), with and without rcu_normal, and the table of
# what happened.
midboot: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="$(call matrix_variants,perf-configs/midboot.yaml)"
	@since=$$(date -u +%Y-%m-%dT%H:%M:%SZ); \
	$(RCUWB) -d $(DB) run perf-configs/midboot.yaml; \
	echo && $(RCUWB) -d $(DB) summary --probes --since $$since && \
	$(RCUWB) -d $(DB) summary -M midboot --since $$since

# Statistics report of everything in the database (results/report/).
report: runner
	@$(RCUWB) -d $(DB) report --out $(RESULTS)/report

# Pools of runs for measuring the gate's false-alarm and detection rates.
gate-calibration: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="after after-aa planted"
	@$(RCUWB) -d $(DB) run perf-configs/gate-calibration.yaml
	@$(RCUWB) -d $(DB) run perf-configs/gate-calibration-exp.yaml
	@Rscript stats/gate-calibration.R --db $(DB) --matrix gatecal,gatecal-exp --baseline after \
		--aa after-aa --planted planted --n 5,8 --trials 200

# RESULTS.md and stats/results/ from the database (after bench, midboot and
# gate-calibration).
results: runner
	@stats/results.sh $(DB)

check: deps libvirt runner initramfs
	@$(MAKE) -s kernel VARIANTS="v4.9 v4.10 v4.11 after planted"
	@mkdir -p runner/obj; rm -f runner/obj/check.log
	@set -o pipefail; { \
		$(MAKE) -s -C runner unit && \
		runner/tests/kvm-recheck-parity.sh && \
		kernel-changes/tests/roundtrip.sh && \
		kernel-changes/tests/apply-failure.sh && \
		Rscript stats/tests/run.R && \
		runner/tests/integration.sh && \
		runner/tests/matrix.sh && \
		runner/tests/midboot.sh; \
	} 2>&1 | tee runner/obj/check.log; rc=$$?; \
	awk '/^[a-z-]+: [0-9]+ passed, [0-9]+ failed$$/ { p += $$2; f += $$4 } \
	     END { printf "check: %d passed, %d failed\n", p, f }' runner/obj/check.log; \
	exit $$rc

clean:
	$(MAKE) -C runner clean

.PHONY: all deps libvirt tree kernel initramfs runner bench midboot report gate-calibration results check clean
