#!/usr/bin/env bash
# runner/tests/debian612.sh: kernels from Debian's second tree, 6.12, in
# real guests: stock 6.12 runs rcuscale (normal and expedited GPs) and its
# runs record their source; the mid-boot probe runs on 6.12 at every stage
# (0-4), as shipped (after-6.12) and with v4.9's semantics (v4.9-6.12),
# with the outcomes kernel-changes/6.12/README.md explains.  (A pinned older
# package beside the newest: build/tests/sources.sh.)
#
# make check builds the kernels first (stock-6.12, after-6.12, v4.9-6.12).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch debian612
cache=${RCUWB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rcuwb}
boot_label=debian612-test
json() { # json VARIANT KEY: a string member of the variant's tiny build.json
	sed -n "s/^  \"$2\": \"\\(.*\\)\",\$/\\1/p" "$cache/kernels/$1/tiny/build.json"
}

echo "debian612: Debian's 6.12 tree in real guests"

# Stock 6.12: rcuscale measures both GP modes; the run says where its
# kernel came from.
boot -k stock-6.12 -g normal,expedited --nwriters 1
expect "stock-6.12: rcuscale normal and expedited both measure" "ok:expedited:ok:normal" \
	"$(q "SELECT group_concat(outcome || ':' || gp_mode, ':') FROM (SELECT * FROM runs WHERE variant='stock-6.12' ORDER BY gp_mode)")"
expect "stock-6.12: every run has its samples" 0 \
	"$(q "SELECT COUNT(*) FROM runs WHERE variant='stock-6.12' AND (nsamples IS NULL OR nsamples < 50)")"
newest=$(last "source")
expect "stock-6.12: the run records its Debian source" yes \
	"$([[ $newest =~ ^debian\ linux-source-6\.12\ 6\.12\.[0-9]+- ]] && echo yes)"
expect "stock-6.12: and a 6.12 kernel version" yes \
	"$([[ $(last kernel_version) == 6.12.* ]] && echo yes)"

# after-6.12: 6.12 as shipped, plus the probe.  Every call completes at
# stages 1-4; at stage 0 (before workqueue_init()) RCU's requester-driven
# GPs complete, Tree SRCU's GP work waits on rcu_gp_wq with no worker, and
# Tasks RCU is not initialised yet.
probe after-6.12 1234 "$prims"
expect "after-6.12: every probe call at stages 1-4 completes" "ok:20:0" "$(calls)"
probe after-6.12 0 rcu,rcu_exp,tasks
expect "after-6.12: stage 0 synchronize_rcu and synchronize_rcu_expedited complete, tasks skipped" "ok:3:0" "$(calls)"
expect "after-6.12: stage 0 Tasks RCU is skipped, not called" "skipped" \
	"$(q "SELECT outcome FROM probes WHERE prim = 'synchronize_rcu_tasks' ORDER BY rowid DESC LIMIT 1")"
probe after-6.12 0 srcu
expect "after-6.12: stage 0 synchronize_srcu deadlocks in 6.12 too (no rcu_gp_wq worker yet)" \
	"deadlock:stage 0 (pre-workqueues) synchronize_srcu did not return: $worker" "$(outcome)"

# v4.9-6.12: the dead zone on 6.12.
probe v4.9-6.12 1 rcu
expect "v4.9-6.12: stage 1 synchronize_rcu deadlocks, with evidence" \
	"deadlock:stage 1 (dead-zone) synchronize_rcu did not return: $kthread" "$(outcome)"
probe v4.9-6.12 0 rcu_exp
expect "v4.9-6.12: stage 0 synchronize_rcu_expedited deadlocks: handed to rcu_gp_wq, no worker yet" \
	"deadlock:stage 0 (pre-workqueues) synchronize_rcu_expedited did not return: $worker" "$(outcome)"
probe v4.9-6.12 1 rcu_exp
expect "v4.9-6.12: stage 1 synchronize_rcu_expedited returns (rcu_gp_wq has workers)" "ok:1:0" "$(calls)"

check "no domain left" no_domains
finish debian612
