#!/usr/bin/env bash
# runner/tests/matrix.sh: `rcuwb run` on a small real matrix: every run stored,
# --resume idempotent, deleted runs rerun exactly, and a runner killed with
# SIGKILL in the middle leaves no guest behind and resumes to a complete set.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
scratch matrix
variant=${RCUWB_TEST_VARIANT:-after}
complete() { # every planned run exactly once
	test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt'")" = 6 &&
	test "$(q "SELECT COUNT(*) FROM (SELECT DISTINCT cell, variant, rep FROM runs WHERE matrix='mt')")" = 6 &&
	test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt' AND outcome <> 'ok'")" = 0
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
"$rcuwb" -q -d "$db" run --resume "$work/mt.yaml"
check "resume after SIGKILL completes the matrix, each run once" complete
check "no staging left behind" test -z "$(ls /var/lib/libvirt/rcuwb 2>/dev/null | grep "^rcuwb-")"

before=$(q "SELECT COUNT(*) FROM runs")
"$rcuwb" -q -d "$db" run --resume "$work/mt.yaml"
check "resume of a complete matrix runs nothing" test "$(q "SELECT COUNT(*) FROM runs")" = "$before"

gone=$(q "SELECT group_concat(cell || '|' || variant || '|' || rep, ' ') FROM (SELECT * FROM runs WHERE matrix='mt' ORDER BY id LIMIT 2)")
q "PRAGMA foreign_keys=ON; DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE matrix='mt' ORDER BY id LIMIT 2)"
"$rcuwb" -q -d "$db" run --resume "$work/mt.yaml"
check "resume reruns exactly the two deleted runs" test "$(q "SELECT COUNT(*) FROM runs")" = "$before"
again=$(q "SELECT group_concat(cell || '|' || variant || '|' || rep, ' ') FROM (SELECT * FROM runs WHERE matrix='mt' ORDER BY id DESC LIMIT 2)")
check "the rerun runs are the deleted ones" test "$(tr ' ' '\n' <<< "$gone" | sort)" = "$(tr ' ' '\n' <<< "$again" | sort)"
check "matrix still complete" complete
check "probe run classified ok (stage 4)" test "$(q "SELECT outcome FROM runs WHERE kind='probe' LIMIT 1")" = ok

# A run that other work on the host disturbed is not a data point: the
# runner stores how much CPU other processes took, and --resume repeats it.
check "every run records the other processes' CPU" test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt' AND host_other_cpu >= 0")" = 6
busy=$(q "SELECT id FROM runs WHERE matrix='mt' AND kind='rcuscale' ORDER BY id LIMIT 1")
q "UPDATE runs SET host_other_cpu = host_pus WHERE id=$busy"
check "--resume plans the host-busy run again" grep -q '^1 runs' <<< "$("$rcuwb" -d "$db" run -n --resume "$work/mt.yaml")"
check "summary counts it as host-busy" grep -q 'not ok: 1 host-busy' <<< "$("$rcuwb" -d "$db" summary -M mt)"

# A database of schema 1 (before host_other_cpu and probes.call/evidence)
# is brought up to date in place, its runs untouched.
cp "$db" "$work/v1.db"
sqlite3 "$work/v1.db" "ALTER TABLE runs DROP COLUMN host_other_cpu; ALTER TABLE probes DROP COLUMN call;
	ALTER TABLE probes DROP COLUMN evidence; ALTER TABLE runs DROP COLUMN source;
	ALTER TABLE runs DROP COLUMN build_key; PRAGMA user_version=1"
"$rcuwb" -d "$work/v1.db" summary -M mt >/dev/null
expect "schema 1 database migrated, runs kept" "4|6|0" \
	"$(sqlite3 "$work/v1.db" "SELECT (SELECT user_version FROM pragma_user_version), COUNT(*), COUNT(host_other_cpu) FROM runs WHERE matrix='mt'")"
expect "schema 1 database: probes gain call and evidence" "2" \
	"$(sqlite3 "$work/v1.db" "SELECT COUNT(*) FROM pragma_table_info('probes') WHERE name IN ('call', 'evidence')")"
# and one of schema 2 (host_other_cpu, but no probes.call/evidence)
cp "$db" "$work/v2.db"
sqlite3 "$work/v2.db" "ALTER TABLE probes DROP COLUMN call; ALTER TABLE probes DROP COLUMN evidence;
	ALTER TABLE runs DROP COLUMN source; ALTER TABLE runs DROP COLUMN build_key; PRAGMA user_version=2"
"$rcuwb" -d "$work/v2.db" summary --probes >/dev/null
expect "schema 2 database migrated, runs and columns there" "4|6|2" \
	"$(sqlite3 "$work/v2.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM pragma_table_info('probes') WHERE name IN ('call', 'evidence'))")"

# and one of schema 3 (before runs.source and runs.build_key)
cp "$db" "$work/v3.db"
sqlite3 "$work/v3.db" "ALTER TABLE runs DROP COLUMN source; ALTER TABLE runs DROP COLUMN build_key; PRAGMA user_version=3"
"$rcuwb" -d "$work/v3.db" summary -M mt >/dev/null
expect "schema 3 database migrated: runs kept, source and build_key added" "4|6|2" \
	"$(sqlite3 "$work/v3.db" "SELECT (SELECT user_version FROM pragma_user_version) || '|' ||
		(SELECT COUNT(*) FROM runs WHERE matrix='mt') || '|' ||
		(SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name IN ('source', 'build_key'))")"
check "every run records its kernel's source and build key" \
	test "$(q "SELECT COUNT(*) FROM runs WHERE matrix='mt' AND source LIKE 'debian linux-source-6.1 %' AND length(build_key) = 16")" = 6

msg=$("$rcuwb" -d "$db" run /nonexistent.yaml 2>&1)
check "missing matrix named" test "$msg" = "rcuwb: error: cannot open matrix /nonexistent.yaml: No such file or directory"
printf 'variants: [%s]\ntopologies: [{vcpus: 0}]\n' "$variant" > "$work/bad.yaml"
msg=$("$rcuwb" -d "$db" run "$work/bad.yaml" 2>&1)
check "bad matrix names file, line and key" test "$msg" = "rcuwb: error: $work/bad.yaml:2: topologies[0].vcpus: give a whole number from 1 to 64"
check "no domain left at the end" no_domains

finish matrix
