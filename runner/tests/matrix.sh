#!/usr/bin/env bash
# runner/tests/matrix.sh: `rcuwb run` on a small real matrix: every run stored,
# --resume idempotent, deleted runs rerun exactly, and a runner killed with
# SIGKILL in the middle leaves no guest behind and resumes to a complete set;
# Kconfig scenarios as a dimension (kconfigs: [tiny, leaf2], needs
# 'make kernel VARIANTS=after KCONFIGS=leaf2'); what a kernel cannot do (probe
# stages on stock) refused before any guest boots; schema migrations 1-7 -> 8.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch matrix
variant=${RCUWB_TEST_VARIANT:-after}
# The runs of matrix mt that count as done (what --resume does not plan
# again): not interrupted, host-failed or host-busy (status of the view
# run_status).  A run that other work on the host disturbed stays stored
# beside its repeat, so the checks below count these, not every row.
counted="matrix='mt' AND status NOT IN ('interrupted', 'host-failed', 'host-busy')"
complete() { # every planned run done exactly once, and ok
	test "$(q "SELECT COUNT(*) FROM run_status WHERE $counted")" = 6 &&
	test "$(q "SELECT COUNT(*) FROM (SELECT DISTINCT cell, variant, rep FROM run_status WHERE $counted)")" = 6 &&
	test "$(q "SELECT COUNT(*) FROM run_status WHERE $counted AND outcome <> 'ok'")" = 0
}
planned() { "$rcuwb" -d "$db" run -n --resume "$work/mt.yaml" | sed -n 's/^\([0-9]*\) runs,.*/\1/p'; }
# rcuwb run --resume, repeated (as make bench does) while runs come out
# host-busy, at most 3 times
resume() {
	local i
	for i in 1 2 3; do
		"$rcuwb" -q -d "$db" run --resume "$work/mt.yaml" || return
		[ "$(planned)" = 0 ] && return
		echo "  (host-busy runs: --resume again, $i of 3)"
	done
}

# 2 topologies x (normal, expedited, probe stage 4) = 6 runs
cat > "$work/mt.yaml" <<EOY
name: mt
variants: [$variant]
topologies:
  - {vcpus: 1}
  - {vcpus: 2, nodes: 2}
modes: [normal, expedited]
probe: {stages: ["4"], watchdog: 3}
rcuscale: {nreaders: 0, holdoff: 1, nwriters: 1}
reps: 1
timeout: 120
EOY
echo "matrix: rcuwb run on a real matrix (results in $db)"

check "dry run plans 6 runs" grep -q '^6 runs' <<< "$("$rcuwb" -d "$db" run -n "$work/mt.yaml")"
check "dry run --json is valid JSON" json_pp <<< "$("$rcuwb" -d "$db" -j run -n "$work/mt.yaml")"

# SIGKILL in the middle: autodestroy takes the guests with the connection.
"$rcuwb" -q -d "$db" run "$work/mt.yaml" &
pid=$!
for _ in $(seq 1 120); do
	[ "$(q "SELECT COUNT(*) FROM runs" 2>/dev/null || echo 0)" -ge 2 ] && break
	sleep 0.5
done
kill -9 "$pid"; wait "$pid" 2>/dev/null
for _ in $(seq 1 20); do no_domains && break; sleep 0.5; done
check "killed runner's guests are gone (autodestroy)" no_domains
partial=$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt'")
check "killed runner kept the finished runs ($partial)" test "$partial" -ge 2 -a "$partial" -lt 6
resume
check "resume after SIGKILL completes the matrix, each run once" complete
check "no staging left behind" test -z "$(ls /var/lib/libvirt/rcuwb 2>/dev/null | grep "^rcuwb-")"

before=$(q "SELECT COUNT(*) FROM runs")
"$rcuwb" -q -d "$db" run --resume "$work/mt.yaml"
check "resume of a complete matrix runs nothing" test "$(q "SELECT COUNT(*) FROM runs")" = "$before"

gone=$(q "SELECT group_concat(cell || '|' || variant || '|' || rep, ' ') FROM (SELECT * FROM run_status WHERE $counted ORDER BY id LIMIT 2)")
q "PRAGMA foreign_keys=ON; DELETE FROM runs WHERE id IN (SELECT id FROM run_status WHERE $counted ORDER BY id LIMIT 2)"
check "resume plans exactly the two deleted runs" test "$(planned)" = 2
resume
again=$(q "SELECT group_concat(cell || '|' || variant || '|' || rep, ' ') FROM (SELECT * FROM run_status WHERE $counted ORDER BY id DESC LIMIT 2)")
check "the rerun runs are the deleted ones" test "$(tr ' ' '\n' <<< "$gone" | sort)" = "$(tr ' ' '\n' <<< "$again" | sort)"
check "matrix still complete" complete
check "probe run classified ok (stage 4)" test "$(q "SELECT outcome FROM runs WHERE kind='probe' LIMIT 1")" = ok

# A run that other work on the host disturbed is not a data point: the
# runner stores how much CPU other processes took, and --resume repeats it.
# (every stored run of mt, host-busy ones and their repeats included: the
# migrations below must keep them all)
nmt=$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt'")
check "every run records the other processes' CPU" test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt' AND host_other_cpu >= 0")" = "$nmt"
busy=$(q "SELECT id FROM run_status WHERE $counted AND kind='rcuscale' ORDER BY id LIMIT 1")
bcell=$(q "SELECT cell FROM runs WHERE id=$busy")
nbusy=$(q "SELECT COUNT(*) FROM run_status WHERE matrix='mt' AND cell='$bcell' AND status = 'host-busy'")
q "UPDATE runs SET host_other_cpu = host_pus WHERE id=$busy"
check "--resume plans the host-busy run again" test "$(planned)" = 1
check "summary counts it as host-busy" grep -q "not ok: $((nbusy + 1)) host-busy" \
	<<< "$("$rcuwb" -d "$db" summary -M mt | grep -F " $bcell ")"

# A database of schema 1 (before host_other_cpu and probes.call/evidence)
# is brought up to date in place, its runs untouched.
drop9="DROP TABLE IF EXISTS gp_anatomy; DROP TABLE IF EXISTS traces"
drop8="$drop9; DROP VIEW IF EXISTS run_status"
drop7="$drop8; ALTER TABLE runs DROP COLUMN host_uri"
drop6="$drop7; DROP INDEX runs_schedule; DROP TABLE rounds; DROP TABLE changepoints;
	ALTER TABLE runs DROP COLUMN commit_id; ALTER TABLE runs DROP COLUMN commit_date;
	ALTER TABLE runs DROP COLUMN schedule"
drop5="$drop6; ALTER TABLE runs DROP COLUMN kconfig; ALTER TABLE runs DROP COLUMN kconfig_sha"
cp "$db" "$work/v1.db"
sqlite3 "$work/v1.db" "$drop8; ALTER TABLE runs DROP COLUMN host_other_cpu; ALTER TABLE probes DROP COLUMN call;
	ALTER TABLE probes DROP COLUMN evidence; ALTER TABLE runs DROP COLUMN source;
	ALTER TABLE runs DROP COLUMN build_key; $drop5; PRAGMA user_version=1"
"$rcuwb" -d "$work/v1.db" summary -M mt >/dev/null
expect "schema 1 database migrated, runs kept" "9|$nmt|0" \
	"$(sqlite3 "$work/v1.db" "SELECT (SELECT user_version FROM pragma_user_version), COUNT(*), COUNT(host_other_cpu) FROM runs WHERE matrix='mt'")"
expect "schema 1 database: probes gain call and evidence" "2" \
	"$(sqlite3 "$work/v1.db" "SELECT COUNT(*) FROM pragma_table_info('probes') WHERE name IN ('call', 'evidence')")"
# and one of schema 2 (host_other_cpu, but no probes.call/evidence)
cp "$db" "$work/v2.db"
sqlite3 "$work/v2.db" "$drop8; ALTER TABLE probes DROP COLUMN call; ALTER TABLE probes DROP COLUMN evidence;
	ALTER TABLE runs DROP COLUMN source; ALTER TABLE runs DROP COLUMN build_key; $drop5; PRAGMA user_version=2"
"$rcuwb" -d "$work/v2.db" summary --probes >/dev/null
expect "schema 2 database migrated, runs and columns there" "9|$nmt|2" \
	"$(sqlite3 "$work/v2.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM pragma_table_info('probes') WHERE name IN ('call', 'evidence'))")"

# and one of schema 3 (before runs.source and runs.build_key)
# old_db VERSION SQL: a copy of the database taken back to schema VERSION by
# SQL, then opened (and so migrated) by rcuwb summary
old_db() {
	cp "$db" "$work/v$1.db"
	sqlite3 "$work/v$1.db" "$2; PRAGMA user_version=$1"
	"$rcuwb" -d "$work/v$1.db" summary -M mt >/dev/null
}
old_db 3 "$drop8; ALTER TABLE runs DROP COLUMN source; ALTER TABLE runs DROP COLUMN build_key; $drop5"
expect "schema 3 database migrated: runs kept, source and build_key added" "9|$nmt|2" \
	"$(sqlite3 "$work/v3.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name IN ('source', 'build_key'))")"
check "every run records its kernel's source and build key" \
	test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt' AND source LIKE 'debian linux-source-6.1 %' AND length(build_key) = 16")" = "$nmt"
# and one of schema 4 (before runs.kconfig and runs.kconfig_sha): its runs
# keep a NULL scenario, which is tiny
old_db 4 "$drop5"
expect "schema 4 database migrated: runs kept, kconfig and kconfig_sha added" "9|$nmt|2|0" \
	"$(sqlite3 "$work/v4.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name IN ('kconfig', 'kconfig_sha')) || '|' ||
		(SELECT COUNT(kconfig) FROM runs WHERE matrix='mt')")"
check "every run records its Kconfig scenario and the fragments' hash" \
	test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt' AND kconfig = 'tiny' AND length(kconfig_sha) = 16")" = "$nmt"
# and one of schema 5 (before runs.commit_id, commit_date, schedule and the
# rounds and changepoints tables)
old_db 5 "$drop6"
expect "schema 5 database migrated: runs kept, commit and schedule columns and the history tables added" "9|$nmt|3|2" \
	"$(sqlite3 "$work/v5.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name IN ('commit_id', 'commit_date', 'schedule')) || '|' ||
		(SELECT COUNT(*) FROM sqlite_master WHERE name IN ('rounds', 'changepoints'))")"
# and one of schema 6 (before runs.host_uri): its runs keep a NULL URI
old_db 6 "$drop7"
expect "schema 6 database migrated: runs kept, host_uri added" "9|$nmt|1|0" \
	"$(sqlite3 "$work/v6.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name = 'host_uri') || '|' ||
		(SELECT COUNT(host_uri) FROM runs WHERE matrix='mt')")"
# and one of schema 7 (before the view run_status): it gains the view, and
# its status is the runner's (summary counted the host-busy run above by it)
old_db 7 "$drop8"
expect "schema 7 database migrated: runs kept, the view run_status added, one run host-busy" "9|$nmt|$nmt|1" \
	"$(sqlite3 "$work/v7.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM run_status WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM run_status WHERE id=$busy AND status = 'host-busy')")"
# and one of schema 8 (before the traces and gp_anatomy tables of the anatomy)
old_db 8 "$drop9"
expect "schema 8 database migrated: runs kept, the anatomy's tables added" "9|$nmt|2" \
	"$(sqlite3 "$work/v8.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM sqlite_master WHERE name IN ('traces', 'gp_anatomy'))")"
check "every run records its host's URI" test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt' AND host_uri = 'qemu:///system'")" = "$nmt"
check "a Debian kernel's runs have no commit id" test "$(q "SELECT COUNT(commit_id) FROM runs WHERE matrix='mt'")" = 0

# Kconfig scenarios: one cell, the kernel in tiny and in leaf2 (tiny with
# RCU_FANOUT_LEAF=2: a scenario that rebuilds kernel/rcu alone, so make
# check does not build a whole tree for it); each run stores its scenario,
# and summary shows the two apart.
cat > "$work/kc.yaml" <<EOY
name: kc
variants: [$variant]
kconfigs: [tiny, leaf2]
topologies: [{vcpus: 1}]
rcuscale: {nreaders: 0, holdoff: 1, nwriters: 1}
timeout: 120
EOY
"$rcuwb" -q -d "$db" run "$work/kc.yaml"
expect "a kconfigs: [tiny, leaf2] matrix runs each scenario once, ok" "leaf2|v1-n1/normal/w1-r0/k=leaf2|ok tiny|v1-n1/normal/w1-r0|ok" \
	"$(q "SELECT group_concat(kconfig || '|' || cell || '|' || outcome, ' ') FROM (SELECT * FROM runs WHERE matrix='kc' ORDER BY kconfig)")"
kcdir() { q "SELECT run_dir FROM runs WHERE matrix='kc' AND kconfig='$1'"; }
check "the two scenarios' kernels differ as leaf2.config says (leaf fan-out 2 against 16, HZ 250 both)" \
	bash -c "grep -qx CONFIG_RCU_FANOUT_LEAF=2 '$(kcdir leaf2)/kernel.config' &&
		 grep -qx CONFIG_RCU_FANOUT_LEAF=16 '$(kcdir tiny)/kernel.config' &&
		 test \"$(q "SELECT group_concat(kconfig_hz || kconfig_preempt) FROM runs WHERE matrix='kc'")\" = 250full,250full"
check "the leaf2 guest says so at boot, the tiny one does not" \
	bash -c "grep -q 'Build-time adjustment of leaf fanout to 2' '$(kcdir leaf2)/console.log' &&
		 ! grep -q 'leaf fanout' '$(kcdir tiny)/console.log'"
summ=$("$rcuwb" -d "$db" summary -M kc)
check "summary shows the two scenarios apart" \
	test "$(grep -c "^kc .* v1-n1/normal/w1-r0\(/k=leaf2\)\? " <<< "$summ")" = 2 -a -n "$(grep -F "v1-n1/normal/w1-r0/k=leaf2" <<< "$summ")"

"$rcuwb" -q -d "$db" report --out "$work/kc-report" --matrix kc --no-plots >/dev/null 2>&1
check "the report keeps the two scenarios apart" \
	grep -qF "v1-n1/normal/w1-r0/h1/hz250-full-idle/k=leaf2" "$work/kc-report/report.md"

# The gate between two scenarios of one kernel (stats/exec/rcuwb-settings.R --by
# kconfig): the runs of tiny and leaf2 pair up in one cell, their configs
# differ by design and are allowed; one run a side decides nothing.
sett=$(Rscript "$here/../../stats/exec/rcuwb-settings.R" --db "$db" --matrix kc --by kconfig 2>&1); rc=$?
check "settings --by kconfig pairs tiny and leaf2 in one cell and cannot decide on 1+1 runs (exit 3)" \
	test "$rc" = 3 -a -n "$(grep -F "v1-n1/normal/w1-r0/h1" <<< "$sett")" -a -z "$(grep -F "k=leaf2" <<< "$sett")" \
	-a -z "$(grep -i "not comparable" <<< "$sett")"

# A pair the matrix names that is not built, an unknown scenario, and probe
# stages for a kernel without the probe: one line each, before any guest.
sed 's/kconfigs: .*/kconfigs: [tiny, preempt-none]/' "$work/kc.yaml" > "$work/kc-unbuilt.yaml"
if [ ! -f "${RCUWB_CACHE:-$HOME/.cache/rcuwb}/kernels/$variant/preempt-none/build.json" ]; then
	before=$(q "SELECT COUNT(*) FROM runs")
	msg=$("$rcuwb" -d "$db" run "$work/kc-unbuilt.yaml" 2>&1)
	check "an unbuilt (variant, scenario) names the make kernel to run, no guest booted" \
		test "$(wc -l <<< "$msg")" = 1 -a -n "$(grep -F "run 'make kernel VARIANTS=$variant KCONFIGS=preempt-none'" <<< "$msg")" \
		-a "$(q "SELECT COUNT(*) FROM runs")" = "$before"
fi
sed 's/kconfigs: .*/kconfigs: [tiny, nope]/' "$work/kc.yaml" > "$work/kc-bad.yaml"
msg=$("$rcuwb" -d "$db" run "$work/kc-bad.yaml" 2>&1)
check "an unknown scenario names file, line and the scenarios there are" \
	grep -q "^rcuwb: error: $work/kc-bad.yaml:3: kconfigs: no Kconfig scenario 'nope' (.*); there are: .*tiny.*tree" <<< "$msg"
printf 'variants: [stock]\ntopologies: [{vcpus: 1}]\nprobe: {stages: ["4"]}\n' > "$work/noprobe.yaml"
before=$(q "SELECT COUNT(*) FROM runs")
msg=$("$rcuwb" -d "$db" run "$work/noprobe.yaml" 2>&1)
expect "probe stages on stock (no probe) fail at once, one line naming the variant" \
	"rcuwb: error: $work/noprobe.yaml:3: probe: kernel variant 'stock' (Kconfig scenario tiny) has no mid-boot probe (its tree has no kernel/rcu/midboot_probe.c): give probe stages only to variants with the probe patch|$before" \
	"$msg|$(q "SELECT COUNT(*) FROM runs")"

msg=$("$rcuwb" -d "$db" run /nonexistent.yaml 2>&1)
check "missing matrix named" test "$msg" = "rcuwb: error: cannot open matrix /nonexistent.yaml: No such file or directory"
printf 'variants: [%s]\ntopologies: [{vcpus: 0}]\n' "$variant" > "$work/bad.yaml"
msg=$("$rcuwb" -d "$db" run "$work/bad.yaml" 2>&1)
check "bad matrix names file, line and key" test "$msg" = "rcuwb: error: $work/bad.yaml:2: topologies[0].vcpus: give a whole number from 1 to 64"
check "no domain left at the end" no_domains

finish matrix
