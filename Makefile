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
KCONFIGS    ?= tiny
export RCUWB_CACHE

RCUWB := runner/rcuwb
# The kernels a matrix needs, as the runner plans it (rcuwb -j run
# --dry-run, the one reader of matrix files): every variant in every Kconfig
# scenario of its runs.
plan_keys = sed -n 's/.*"$(1)": *"\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' '
matrix_kernels = plan=$$($(RCUWB) -j run --dry-run $(1)) || exit 2; \
	$(MAKE) -s kernel VARIANTS="$$(echo "$$plan" | $(call plan_keys,variant))" \
		KCONFIGS="$$(echo "$$plan" | $(call plan_keys,kconfig))"

all: runner

deps:
	@build/deps.sh

libvirt: deps
	@build/libvirtd.sh

tree: deps
	@build/tree.sh >/dev/null

# A git tree made here: Debian's 6.1 tree imported, then one commit per patch
# of kernel-changes/6.1/series (git am), in $(RCUWB_CACHE)/git/rcuwb-6.1.
tree-git: tree
	@build/tree-git.sh

# Every variant in every Kconfig scenario (perf-configs/kconfig/scenarios/).
kernel: tree runner
	@for v in $(VARIANTS); do for k in $(KCONFIGS); do build/kernel.sh $$v $$k || exit 1; done; done

initramfs: tree
	@build/initramfs.sh

runner: deps
	@$(MAKE) -s -C runner

# The main job: after against before (BASE, CAND) with `rcuwb compare` on
# the shapes that fit this host (perf-configs/fit-host.sh; MATRIX=FILE for
# a named matrix), both GP modes: runs are added look by look until the
# sequential gate decides each cell or BENCH_BUDGET of runs is spent; then
# the latency table of this bench's runs.
BASE ?= before
CAND ?= after
BENCH_BUDGET ?= 10m
BENCH_MAX_RUNS ?= 20
bench: deps libvirt initramfs runner
	@mkdir -p $(RESULTS); since=$$(date -u +%Y-%m-%dT%H:%M:%SZ); \
	m=$(if $(filter command line environment,$(origin MATRIX)),$(MATRIX),$(RESULTS)/bench.yaml); \
	[ "$$m" != "$(RESULTS)/bench.yaml" ] || perf-configs/fit-host.sh "$$m" || exit 2; \
	$(RCUWB) -d $(DB) compare --matrix "$$m" --budget $(BENCH_BUDGET) --max-runs $(BENCH_MAX_RUNS) \
		--name bench-$$(date -u +%Y%m%d-%H%M%S) $(BASE) $(CAND); rc=$$?; \
	echo && echo "Grace-period latency of this bench (rcuscale writer-duration samples, microseconds):" && \
	$(RCUWB) -d $(DB) summary --since $$since; \
	echo "(compare exit status $$rc: 0 pass, 1 slowdown, 2 hard failure or bad input, 3 inconclusive)"

# Did my change slow grace periods?  make compare BASE=after CAND=my.patch
# (a variant, a patch file or directory, or REPO@REV; CAND=REPO@REV alone
# compares a commit with its parent).  COMPARE_OPTS: more options, e.g.
# --cell v1-n1/expedited/w1-r0 --threshold 5%.
compare: deps libvirt initramfs runner
	@$(RCUWB) -d $(DB) compare $(COMPARE_OPTS) $(if $(filter command line environment,$(origin BASE)),$(BASE)) $(CAND)

# The mid-boot dead zone: every probe stage and primitive, release by release
# (v4.9, v4.10, v4.11, after), with and without rcu_normal, and the table of
# what happened.  MIDBOOT=perf-configs/midboot-6.12.yaml: the same on 6.12.
MIDBOOT ?= perf-configs/midboot.yaml
midboot: deps libvirt initramfs runner
	@$(call matrix_kernels,$(MIDBOOT))
	@since=$$(date -u +%Y-%m-%dT%H:%M:%SZ); \
	$(RCUWB) -d $(DB) run $(MIDBOOT); \
	echo && $(RCUWB) -d $(DB) summary --probes --since $$since && \
	$(RCUWB) -d $(DB) summary -M $$(sed -n 's/^name: *//p' $(MIDBOOT)) --since $$since

# Statistics report of everything in the database (results/report/).
report: runner
	@$(RCUWB) -d $(DB) report --out $(RESULTS)/report

# The gate's calibration: planted slowdowns of known size on one binary
# (perf-configs/studies/gatecal-*.yaml), then its dose-response (between and within
# boots), false-alarm and detection rates with CIs, variance decomposition
# and runs needed.
# The 1-vCPU matrices (GATECAL_SIDE) run two guests side by side, on a PU
# each: `make sidebyside` measured the same means and no wider spread
# there, at twice the runs per hour.  The others run one guest at a time.
GATECAL := gatecal-v1 gatecal-v2 gatecal-doses-v1 gatecal-doses-v2 gatecal-exp10-v3 gatecal-exp-v1
GATECAL_SIDE := gatecal-v1 gatecal-doses-v1 gatecal-exp-v1
gate-calibration: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="planted"
	@for m in $(GATECAL); do j=1; case " $(GATECAL_SIDE) " in *" $$m "*) j=2;; esac; \
		$(RCUWB) -d $(DB) run -J $$j perf-configs/studies/$$m.yaml || exit 1; done
	@Rscript stats/exec/rcuwb-gate-calibration.R --db $(DB) --plots $(RESULTS)/gate-calibration

# What the holdoff costs: holdoff 3 s against holdoff boot on one binary,
# one guest at a time; the gate's verdict on the change and runs per hour.
# In these settings targets the gate's verdict (exit 0-3) is the answer,
# printed, not a failure of the target; a bad command line (64) is.
holdoff: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="after"
	@$(RCUWB) -d $(DB) run -J 1 perf-configs/studies/holdoff.yaml
	@Rscript stats/exec/rcuwb-settings.R --db $(DB) --matrix holdoff --baseline-param rcuscale.holdoff=3 \
		--names "holdoff 3 s,holdoff boot" || [ $$? -le 3 ]

# Does it matter where QEMU's own threads run?  1-vCPU guests with them
# apart from the vCPU and on its PU, alternated EMU_REPS times.
EMU_REPS ?= 10
emulator: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="after"
	@for i in $$(seq $(EMU_REPS)); do for e in apart shared; do \
		$(RCUWB) -q -d $(DB) run -J 1 perf-configs/studies/emu-$$e.yaml || exit 1; done; done
	@Rscript stats/exec/rcuwb-settings.R --db $(DB) --matrix emu-apart,emu-shared --by emulator \
		--names "emulator shared,emulator apart" || [ $$? -le 3 ]

# One guest at a time or two side by side (issue 10 item 7): 1-vCPU guests,
# both GP modes, run -J 1 alternated with run -J 2 SIDE_REPS times; the
# gate's verdict on side by side and what a decision costs in each.
SIDE_REPS ?= 15
sidebyside: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="after"
	@for i in $$(seq $(SIDE_REPS)); do \
		$(RCUWB) -q -d $(DB) run -J 1 perf-configs/studies/side-solo.yaml || exit 1; \
		$(RCUWB) -q -d $(DB) run -J 2 perf-configs/studies/side-pair.yaml || exit 1; done
	@Rscript stats/exec/rcuwb-settings.R --db $(DB) --matrix side-solo,side-pair --by matrix \
		--names "one at a time,side by side" || [ $$? -le 3 ]

# More GPs per boot (issue 10 item 7): 1-vCPU guests of after with 1, 2 and
# 4 rcuscale writers (about 100 GPs each), alternated GPB_REPS times, two
# guests side by side; what a decision costs with each (more writers
# measure contended GPs, a different quantity: the gate may well say so).
GPB_REPS ?= 15
gpsperboot: deps libvirt initramfs runner
	@$(MAKE) -s kernel VARIANTS="after"
	@for i in $$(seq $(GPB_REPS)); do for w in 1 2 4; do \
		$(RCUWB) -q -d $(DB) run -J 2 perf-configs/studies/gpb-w$$w.yaml || exit 1; done; done
	@for w in 2 4; do Rscript stats/exec/rcuwb-settings.R --db $(DB) --matrix gpb-w1,gpb-w$$w --by matrix \
		--drop writers --names "1 writer,$$w writers" || [ $$? -le 3 ] || exit 1; done

# The generated sections of RESULTS.md (between its BEGIN/END generated
# markers; the hand-written rest stays) and stats/results/ from the database
# (after bench, midboot and gate-calibration).
results: runner
	@stats/results.sh $(DB)

# Every suite runs, even after one failed (tests/check.sh); the last lines
# count the tests and the suites that failed or did not run.
# SUITES="unit stats": only those.
check: deps libvirt runner initramfs
	@SUITES="$(SUITES)" tests/check.sh runner/obj/check.log

# The inner loop: no root, no kernels, no guests (the C unit tests, the
# install, the fuzzers' seeds and past findings, the R tests without their
# Monte Carlo checks of error rates; a test that needs the kernel tree
# skips without it).  make check still runs everything.
check-unit: runner
	@env -u RCUWB_CACHE RCUWB_SKIP_MONTE_CARLO=1 SUITES="unit install fuzz-regress stats" tests/check.sh runner/obj/check-unit.log

# libFuzzer on the parsers (console, probe lines, matrix, schedule, variant
# and series files): FUZZ_TIME seconds each; findings in runner/obj/fuzz/.
FUZZ_TIME ?= 120
fuzz: deps
	@$(MAKE) -s -C runner fuzz FUZZ_TIME=$(FUZZ_TIME)

# rcuwb and its data (R statistics, matrices, domain template, kernel build
# scripts) under PREFIX (default /usr/local): PREFIX/bin/rcuwb runs from any
# directory.  Needs the runner's build dependencies, not root (unless PREFIX
# is a system directory).
install:
	@$(MAKE) -s -C runner install

uninstall:
	@$(MAKE) -s -C runner uninstall

clean:
	$(MAKE) -C runner clean

.PHONY: all deps libvirt tree tree-git kernel initramfs runner bench compare midboot report gate-calibration holdoff emulator sidebyside gpsperboot results check check-unit fuzz install uninstall clean
