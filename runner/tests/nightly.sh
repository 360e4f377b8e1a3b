#!/usr/bin/env bash
# runner/tests/nightly.sh: scheduled rounds with real guests (issue 12).
#
# In a private clone of the git tree of 'make tree-git' (rcuwb-6.1; the
# clone shares its objects, and the cache's repository is never written),
# a branch on top of the commit of variant after (tag rcuwb/0007):
#   nightly-planted: 8 commits; commit 4 applies patch 0008 (the planted
#     delays) with planted_gp_tick_permille = 250 by default: a quarter of
#     the normal GPs end one 4 ms tick later (+1 ms on a 12 ms GP, +8%);
#     the other 7 touch Documentation/ only.
# A schedule follows the branch; its matrix is one cell (1 vCPU, normal
# GPs, 4 runs a side: the smallest that lets the gate decide, a one-sided
# rank-sum of 4 against 4 reaching p = 0.014).  The branch head moves one
# commit a round, as a nightly would see it.  Checked: schedule file errors,
# the systemd units (systemd-analyze verify), a round killed in the middle
# and completed by the next with nothing measured twice, a second round on
# the same head measuring nothing, the change point of the planted branch
# at exactly the planted commit, bisect finding it (and, started again,
# repeating no run), the dashboard loaded in headless Chromium, and a
# sequential round (gate.max_runs: looks until the
# gate decides, the engine of rcuwb compare) calling the planted commit a
# SLOWDOWN at its second look.
#
# That a branch without a change gives no change point (the false-alarm
# rate of the history, alpha per series) is a rate, so it is measured where
# a rate can be: by simulation in stats/tests/testthat/test-changepoint.R
# (A/A histories, with the rate's confidence interval), not by one real
# branch whose assertion would fail at that rate by design.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
top=$(cd "$here/../.." && pwd)
scratch nightly
"$top/build/tree-git.sh" > /dev/null || exit 1
# the test's own repository: a bare clone sharing the cache's objects, so
# that the branches and commits below never touch the user's repository
repo=$work/rcuwb-6.1.git
git clone -q --bare --shared "${RCUWB_CACHE:-$HOME/.cache/rcuwb}/git/rcuwb-6.1" "$repo" || exit 1
G() { git --git-dir="$repo" "$@"; }
export GIT_AUTHOR_NAME=rcuwb GIT_AUTHOR_EMAIL=rcuwb@localhost GIT_COMMITTER_NAME=rcuwb GIT_COMMITTER_EMAIL=rcuwb@localhost
t0=$(date +%s)

# commit PARENT BASE_TREE_REV N SUBJECT [planted]: a commit on PARENT whose
# tree is BASE_TREE_REV's plus Documentation/rcuwb-nightly.txt with N lines
# (and, planted, the planted delay on by default); prints its id
commit() {
	local parent=$1 base=$2 n=$3 subject=$4 idx=$work/index blob i
	rm -f "$idx"
	GIT_INDEX_FILE=$idx G read-tree "$base"
	blob=$(for i in $(seq "$n"); do echo "rcuwb nightly test commit $i"; done | G hash-object -w --stdin)
	GIT_INDEX_FILE=$idx G update-index --add --cacheinfo "100644,$blob,Documentation/rcuwb-nightly.txt"
	if [ "${5:-}" = planted ]; then
		blob=$(G show "$base:kernel/rcu/tree.c" |
			sed 's/^static int planted_gp_tick_permille;$/static int planted_gp_tick_permille = 250;/' |
			G hash-object -w --stdin)
		GIT_INDEX_FILE=$idx G update-index --cacheinfo "100644,$blob,kernel/rcu/tree.c"
	fi
	GIT_AUTHOR_DATE="@$((1764806400 + n * 3600)) +0000" GIT_COMMITTER_DATE="@$((1764806400 + n * 3600)) +0000" \
		G commit-tree "$(GIT_INDEX_FILE=$idx G write-tree)" -p "$parent" -m "$subject"
}

base=$(G rev-parse rcuwb/0007)
planted=()
prev=$base
for i in 1 2 3 4 5 6 7 8; do
	if [ "$i" -eq 4 ]; then
		c=$(commit "$prev" rcuwb/0008 "$i" "rcu: plant a one-tick delay in a quarter of normal GPs (test)" planted)
	elif [ "$i" -gt 4 ]; then
		c=$(commit "$prev" "$prev" "$i" "Documentation: nightly test commit $i")
	else
		c=$(commit "$prev" rcuwb/0007 "$i" "Documentation: nightly test commit $i")
	fi
	planted+=("$c") prev=$c
done
expect "the planted branch has 8 commits on top of after" 8 "${#planted[@]}"
expect "commit 4 alone changes compiled code" "kernel/rcu/rcu.h kernel/rcu/rcuscale.c kernel/rcu/tree.c" \
	"$(G diff --name-only "${planted[2]}" "${planted[3]}" -- kernel | tr '\n' ' ' | sed 's/ $//')"

cat > "$work/cell.yaml" <<EOF
name: nightly-cell
variants: [unused]
topologies: [{vcpus: 1}]
modes: [normal]
rcuscale: {nreaders: 0, holdoff: 1}
reps: 4
timeout: 120
seed: 3
EOF
schedule() { # NAME BRANCH
	cat > "$work/$1.yaml" <<EOF
name: $1
source: {git: $repo, branch: $2}
matrix: $work/cell.yaml
jobs: 2
baseline: {policy: last-accepted, rev: rcuwb/0007}
gate: {threshold: 0.05}
history: {min_commits: 2, alpha: 0.05, permutations: 199, seed: 1}
notify: [sh, -c, 'cat > "\$0"', $work/$1.notified]
EOF
}
schedule planted nightly-planted
nightly() { "$rcuwb" -d "$db" nightly "$@"; }

# --- schedule files and units --------------------------------------------
printf 'name: x\nsource: {git: %s}\nmatrix: %s/cell.yaml\nbaseline: {rev: a}\n' "$repo" "$work" > "$work/bad.yaml"
err=$(nightly "$work/bad.yaml" 2>&1)
expect "a schedule that cannot run is a hard failure (exit 2, not 1 'something new')" 2 $?
expect "a schedule without a branch: one line naming file, line and key" \
	"rcuwb: error: $work/bad.yaml:2: source.branch: missing: the branch to follow" "$err"
printf 'name: x\nsource: {git: %s, branch: b}\nmatrix: %s/cell.yaml\nbaseline: {rev: a}\ngate: {threshold: 5}\n' "$repo" "$work" > "$work/bad.yaml"
expect "a threshold of 5 (not a fraction)" \
	"rcuwb: error: $work/bad.yaml:5: gate.threshold: give a fraction between 0 and 1 (0.05 is 5%)" \
	"$(nightly "$work/bad.yaml" 2>&1)"
units=$work/units
check "schedule install writes the units" "$rcuwb" -d "$db" schedule install --at 03:15 --unit-dir "$units" "$work/planted.yaml"
check "systemd-analyze verify accepts them" \
	env SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$units/rcuwb-nightly-planted.service" "$units/rcuwb-nightly-planted.timer"
expect "the timer fires at 03:15" "OnCalendar=*-*-* 03:15:00" "$(grep '^OnCalendar=' "$units/rcuwb-nightly-planted.timer")"
expect "schedule list shows it" "planted" "$("$rcuwb" -j schedule list --unit-dir "$units" | sed -n 's/.*"schedule": *"\(.*\)".*/\1/p')"
expect "--cron prints one crontab line" "15 3 * * *" "$("$rcuwb" -d "$db" schedule install --cron --at 03:15 "$work/planted.yaml" | cut -d' ' -f1-5)"
check "schedule remove deletes both" "$rcuwb" schedule remove --unit-dir "$units" planted
check "... and nothing is left" test -z "$(ls -A "$units")"

# --- rounds on the planted branch -----------------------------------------
declare -A code
round() { # SCHEDULE BRANCH COMMIT: move the branch, run one round
	G update-ref "refs/heads/$2" "$3"
	nightly "$work/$1.yaml" > "$work/round.out" 2> "$work/round.err"
	code[$1:$3]=$?
	sed 's/^/    /' "$work/round.err" | grep -E 'nightly .*(head|gate|history|measured|FAILED)' || :
}
round planted nightly-planted "${planted[0]}"
# Commit 1 only touches Documentation: an A/A round.  With 4 runs a side
# the gate cannot promise PASS (one run's p90 a tick off leaves the bound
# over +5%: INCONCLUSIVE), but it must never call it a slowdown or fail.
case "${code[planted:${planted[0]}]}" in 0 | 3) r1=ok ;; *) r1="exit ${code[planted:${planted[0]}]}" ;; esac
expect "round 1: the gate does not call commit 1 (documentation only) a slowdown" ok "$r1"
expect "round 1 stored 4 runs of each side with the schedule and commit ids" "4 4" \
	"$(q "SELECT SUM(commit_id = '${planted[0]}'), SUM(commit_id = '$base') FROM runs WHERE schedule = 'planted'" | tr '|' ' ')"

# round 2 killed while its guests run, then completed by the next round
G update-ref refs/heads/nightly-planted "${planted[1]}"
setsid "$rcuwb" -d "$db" nightly "$work/planted.yaml" > /dev/null 2>&1 &
pid=$!
m="planted@${planted[1]:0:12}"
for _ in $(seq 240); do
	[ "$(q "SELECT COUNT(*) FROM runs WHERE matrix = '$m'")" -ge 3 ] && break
	sleep 0.5
done
kill -TERM -- "-$pid" 2>/dev/null
wait "$pid"
stored=$(q "SELECT COUNT(*) FROM runs WHERE matrix = '$m' AND outcome != 'interrupted'")
check "the killed round had stored some runs, not all ($stored of 8)" test "$stored" -ge 3 -a "$stored" -lt 8
expect "the killed round is left running in rounds" running "$(q "SELECT status FROM rounds WHERE matrix = '$m'")"
round planted nightly-planted "${planted[1]}"
check "the next round completes it" grep -q "completing the round" "$work/round.err"
# (a run the host disturbed is kept as host-busy and run again: not a result)
expect "round 2 has every run exactly once" "8 8" \
	"$(q "SELECT COUNT(*), COUNT(DISTINCT variant || rep) FROM run_status WHERE matrix = '$m'
	      AND status NOT IN ('interrupted', 'host-busy')" | tr '|' ' ')"
expect "round 2 done" done "$(q "SELECT status FROM rounds WHERE matrix = '$m'")"
check "no domain left" no_domains

for i in 2 3 4 5 6 7; do round planted nightly-planted "${planted[$i]}"; done
expect "round 4 (the planted commit): the gate says SLOWDOWN" 1 "${code[planted:${planted[3]}]}"
# The baseline policy is last-accepted: the newest commit whose round PASSed.
# Commits 1-3 change only documentation, but 4 runs a side may leave one of
# them INCONCLUSIVE (it then does not become the baseline), so the expected
# baseline is read from the rounds' own exit codes.
accepted=$base
for i in 0 1 2; do [ "${code[planted:${planted[$i]}]}" != 0 ] || accepted=${planted[$i]}; done
expect "... and the baseline stays at the last accepted commit before it (${accepted:0:12})" "$accepted" \
	"$(q "SELECT baseline_commit FROM rounds WHERE commit_id = '${planted[7]}'")"
n=$(q "SELECT COUNT(*) FROM runs WHERE schedule = 'planted'")
nightly "$work/planted.yaml" > /dev/null 2> "$work/round.err"
expect "a second round on the same head exits 0" 0 $?
check "... says it was measured" grep -q "was measured in the round of" "$work/round.err"
expect "... and measures nothing" "$n" "$(q "SELECT COUNT(*) FROM runs WHERE schedule = 'planted'")"

# --- the change points -------------------------------------------------------
cps=$("$rcuwb" -d "$db" -j history list --schedule planted)
firsts=$(echo "$cps" | sed -n 's/.*"first_bad": "\([0-9a-f]*\)".*/\1/p' | sort -u)
expect "the change points of the planted branch are at the planted commit, and only there" "${planted[3]}" "$firsts"
check "the mean's change point is one of them" grep -q '"stat": "mean"' <<< "$cps"
check "the notify command got the round's JSON" grep -Eq "\"head\": *\"${planted[7]}\"" "$work/planted.notified"
id=$(echo "$cps" | sed -n 's/.*"id": \([0-9]*\).*/\1/p' | head -n1)
check "history ack records the reason" "$rcuwb" -d "$db" history ack "$id" --why "planted on purpose (test)"
expect "... and the state" acknowledged "$(q "SELECT state FROM changepoints WHERE id = $id")"

# --- bisect between the branch's ends -----------------------------------------
# Steps of one look of 4 runs a side (--max-reps 4: the look is final, and
# 4 against 4 decides a +8% change that moves every run; the looks until a
# decision are the sequential round's, below), so that the test's cost is
# bounded; started again with the same options, the same looks from the
# stored runs.
"$rcuwb" -d "$db" bisect --max-reps 4 --good rcuwb/0007 --bad "${planted[7]}" "$work/planted.yaml" > "$work/bisect.out" 2> "$work/bisect.err"
expect "bisect exits 0" 0 $?
sed 's/^/    /' "$work/bisect.err" | grep -E 'bisect:|against' || :
expect "bisect names the planted commit" "first bad commit: ${planted[3]} rcu: plant a one-tick delay in a quarter of normal GPs (test)" "$(cat "$work/bisect.out")"
n=$(q "SELECT COUNT(*) FROM runs WHERE matrix LIKE 'bisect@%'")
"$rcuwb" -d "$db" -j bisect --max-reps 4 --good rcuwb/0007 --bad "${planted[7]}" "$work/planted.yaml" > "$work/bisect.json" 2>/dev/null
expect "bisect started again (JSON): the same commit" "${planted[3]}" "$(sed -n 's/.*"first_bad": *"\([0-9a-f]*\)".*/\1/p' "$work/bisect.json")"
expect "... from the stored runs: no run repeated" "$n" "$(q "SELECT COUNT(*) FROM runs WHERE matrix LIKE 'bisect@%'")"

# --- the dashboard in a real browser ---------------------------------------
dash=$work/dashboard
check "history show writes the dashboard" "$rcuwb" -d "$db" history show --out "$dash" "$work/planted.yaml"
check "the Markdown twin names the planted commit" grep -q "${planted[3]:0:12}" "$dash/index.md"
if command -v chromium > /dev/null; then
	chrome=(chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files
		--enable-logging=stderr --v=0 --virtual-time-budget=5000)
	dom=$("${chrome[@]}" --dump-dom "file://$dash/index.html" 2> "$work/chrome.err")
	charts=$(echo "$dom" | sed -n 's/.*data-charts="\([0-9]*\)".*/\1/p')
	loaded=$(echo "$dom" | sed -n 's/.*data-charts-loaded="\([0-9]*\)".*/\1/p')
	check "Chromium loads the page and its charts ($loaded of $charts)" test -n "$charts" -a "$charts" -ge 2 -a "$loaded" = "$charts"
	"${chrome[@]}" --window-size=1200,1600 --screenshot="$work/dashboard.png" "file://$dash/index.html" 2>> "$work/chrome.err"
	check "a screenshot of it" test -s "$work/dashboard.png"
	check "no console error" bash -c "! grep -E 'CONSOLE.*(rcuwb dashboard|Uncaught|Error)' '$work/chrome.err'"
	# RCUWB_KEEP_DASHBOARD=DIR keeps the screenshot, the Markdown twin and the change points
	if [ -n "${RCUWB_KEEP_DASHBOARD:-}" ]; then
		mkdir -p "$RCUWB_KEEP_DASHBOARD"
		cp "$work/dashboard.png" "$dash/index.md" "$RCUWB_KEEP_DASHBOARD/"
		"$rcuwb" -d "$db" history list --schedule planted > "$RCUWB_KEEP_DASHBOARD/changepoints.txt"
		"$rcuwb" -d "$db" summary -M "planted@${planted[3]:0:12}" > "$RCUWB_KEEP_DASHBOARD/round4.txt"
	fi
else
	bad "chromium is installed (make deps)"
fi

# --- a sequential round: looks until the gate decides -----------------------
# The planted commit against rcuwb/0007 (fixed), looks of 4 runs a side up
# to 8.  A 4+4 look cannot cross the O'Brien-Fleming-type boundary at half
# the information (the rank-sum z of 4 against 4 reaches 2.17, the boundary
# is about 3), so the round takes its second look, the final one, and
# decides there.
G update-ref refs/heads/nightly-seq "${planted[3]}"
sed -e 's/^name: planted$/name: seq/' -e 's/branch: nightly-planted/branch: nightly-seq/' \
	-e 's/^baseline: .*/baseline: {policy: fixed, rev: rcuwb\/0007}/' \
	-e 's/^gate: .*/gate: {threshold: 0.05, max_runs: 8, batch: 4, budget: 10m}/' -e 's/planted\.notified/seq.notified/' \
	"$work/planted.yaml" > "$work/seq.yaml"
nightly "$work/seq.yaml" > "$work/seq.out" 2> "$work/seq.err"
rc=$?
sed 's/^/    /' "$work/seq.err" | grep -E 'nightly .*(run|gate) ' || :
expect "sequential round on the planted commit: SLOWDOWN (exit 1)" 1 "$rc"
m="seq@${planted[3]:0:12}"
expect "... stopped at its second look, 8 runs a side" "8 8" \
	"$(q "SELECT SUM(commit_id = '${planted[3]}'), SUM(commit_id = '$base') FROM runs WHERE matrix = '$m' AND outcome = 'ok'" | tr '|' ' ')"
looks=${RCUWB_CACHE:-$HOME/.cache/rcuwb}/schedules/seq/rounds/${planted[3]:0:12}/looks
expect "... its looks and decision kept in the round's directory" "2 1" \
	"$(grep -c '^look ' "$looks" 2>/dev/null) $(grep -c ' SLOWDOWN$' "$looks" 2>/dev/null)"
check "... the gate line says sequential" grep -q "gate .*SLOWDOWN (exit 1; sequential, at most 8 runs a side" "$work/seq.err"
n=$(q "SELECT COUNT(*) FROM runs WHERE matrix = '$m'")
nightly "$work/seq.yaml" > /dev/null 2> "$work/seq2.err"
expect "a second round on the same head measures nothing" "0 $n" "$? $(q "SELECT COUNT(*) FROM runs WHERE matrix = '$m'")"
expect "--force is refused for a sequential round, one line" \
	"rcuwb: error: $work/seq.yaml: --force: a sequential round (gate.max_runs) goes on from the runs its commit has; to measure a commit anew, give the schedule another name" \
	"$(nightly --force "$work/seq.yaml" 2>&1)"

check "no domain left" no_domains
check "the cache's repository has no branch of the test's" \
	test -z "$(git --git-dir="${RCUWB_CACHE:-$HOME/.cache/rcuwb}/git/rcuwb-6.1" for-each-ref --format=x refs/heads/nightly-\*)"
echo "nightly: $(( $(date +%s) - t0 )) s"
finish nightly
