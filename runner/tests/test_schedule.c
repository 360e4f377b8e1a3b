/* test_schedule.c: unit tests of schedule files: parsing, defaults, errors with file:line:key; matrix overrides. */
#include <unistd.h>

#include "unit.h"

#include "common.h"
#include "matrix.h"
#include "schedule.h"

static char path[64], mpath[64];

static int load(const char *text, struct schedule *s)
{
	FILE *f;

	snprintf(mpath, sizeof(mpath), "/tmp/rcuwb-sched-m-%d.yaml", (int)getpid());
	f = fopen(mpath, "w");
	fputs("variants: [a]\ntopologies: [{vcpus: 1}]\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "/tmp/rcuwb-sched-%d.yaml", (int)getpid());
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return schedule_load(path, s);
}

static void expect_error(const char *text, const char *msg)
{
	struct schedule s;
	char want[1024];

	assert_int_equal(load(text, &s), -1);
	snprintf(want, sizeof(want), "%s:%s", path, msg);
	if (strcmp(last_err(), want))
		fail_msg("got  '%s'\nwant '%s'", last_err(), want);
}

/* a valid schedule with one more line */
static char *with(const char *line)
{
	static char text[1024];

	snprintf(text, sizeof(text), "source: {git: /tmp, branch: main}\nmatrix: %s\nbaseline: {rev: v1}\n%s",
		 mpath, line);
	return text;
}

static void test_parse(void **state)
{
	struct schedule s;
	char text[1024];

	(void)state;
	load("", &s);	/* writes the matrix file */
	snprintf(text, sizeof(text),
		 "name: night\nsource: {git: rcuwb-6.1, branch: series, remote: origin}\nmatrix: %s\n"
		 "baseline: {policy: fixed, rev: rcuwb/0007}\ngate: {threshold: 0.1, alpha: 0.01, stat: mean}\n"
		 "history: {min_commits: 3, alpha: 0.01, permutations: 999, seed: 5}\n"
		 "notify: [/bin/mail, -s, 'rcuwb: round', a@b]\n", mpath);
	assert_int_equal(load(text, &s), 0);
	assert_string_equal(s.name, "night");
	assert_string_equal(s.repo, "rcuwb-6.1");
	assert_string_equal(s.branch, "series");
	assert_string_equal(s.remote, "origin");
	assert_int_equal(s.policy, BASELINE_FIXED);
	assert_string_equal(s.baseline_rev, "rcuwb/0007");
	assert_string_equal(s.threshold, "0.1");
	assert_string_equal(s.stat, "mean");
	assert_int_equal(s.cp_min_commits, 3);
	assert_int_equal(s.cp_permutations, 999);
	assert_string_equal(s.notify[2], "rcuwb: round");
	assert_null(s.notify[4]);
	schedule_free(&s);
	/* a hosts file from the source tree, as rcuwb run --hosts takes it */
	assert_int_equal(load(with("hosts: perf-configs/hosts/example.yaml\n"), &s), 0);
	snprintf(text, sizeof(text), "%s/perf-configs/hosts/example.yaml", RCUWB_SRCDIR);
	assert_string_equal(s.hosts, text);
	schedule_free(&s);
	/* a sequential round */
	assert_int_equal(load(with("gate: {threshold: 0.05, max_runs: 20, batch: 5, budget: 45m}\n"), &s), 0);
	assert_int_equal(s.max_runs, 20);
	assert_int_equal(s.batch, 5);
	assert_int_equal(s.budget_s, 2700);
	schedule_free(&s);
}

static void test_defaults(void **state)
{
	struct schedule s;

	(void)state;
	load("", &s);
	assert_int_equal(load(with(""), &s), 0);
	assert_int_equal(s.policy, BASELINE_LAST_ACCEPTED);
	assert_string_equal(s.threshold, "0.05");
	assert_string_equal(s.cp_alpha, "0.05");
	assert_int_equal(s.cp_min_commits, 2);
	assert_int_equal(s.cp_permutations, 199);
	assert_int_equal(s.jobs, 1);
	assert_int_equal(s.max_runs, 0);		/* one gate on the matrix's reps */
	assert_int_equal(s.batch, 4);
	assert_int_equal(s.budget_s, 1800);
	assert_string_equal(s.hosts, "");		/* this machine */
	assert_string_equal(s.cp_min_change, "0.05");	/* the gate's threshold */
	assert_null(s.notify[0]);
	assert_int_equal(strncmp(s.name, "rcuwb-sched-", 12), 0);	/* the file's name */
	schedule_free(&s);
}

static void test_errors(void **state)
{
	(void)state;
	load("", &(struct schedule){ 0 });
	expect_error("- a\n", "1: a schedule is a YAML mapping (see perf-configs/schedules/README.md)");
	expect_error(with("color: red\n"), "4: color: unknown key (name, source, matrix, hosts, jobs, baseline, gate, history, notify)");
	expect_error(with("gate: {threshold: 5}\n"), "4: gate.threshold: give a fraction between 0 and 1 (0.05 is 5%)");
	expect_error(with("baseline: {policy: newest, rev: a}\n"), "4: baseline.policy: give last-accepted or fixed");
	expect_error(with("gate: {max_runs: 20, budget: 10}\n"),
		     "4: gate.budget: give a time from 1m to a week, such as 90s, 20m or 2h");
	expect_error(with("gate: {max_runs: 4, batch: 8}\n"), "4: gate.batch: more than gate.max_runs: give a smaller batch");
	expect_error(with("gate: {max_runs: 100, batch: 2}\n"),
		     "4: gate.max_runs: more than 19 looks of gate.batch runs: give a larger batch");
	expect_error(with("history: {permutations: 5}\n"), "4: history.permutations: give a whole number from 19 to 100000");
	expect_error(with("notify: mail\n"), "4: notify: give the command as a list: [PROGRAM, ARG, ...] (no shell)");
	expect_error(with("name: a/b\n"), "4: name: letters, digits, '.', '_', '-'");
	expect_error(with("hosts: perf-configs/hosts/nowhere.yaml\n"), "1: hosts: no such file (a path from the working "
		     "directory or from rcuwb's data directory, e.g. perf-configs/hosts/NAME.yaml)");
	expect_error("source: {git: /tmp}\n", "1: source.branch: missing: the branch to follow");
	expect_error("source: {debian: '6.12'}\n", "1: source.debian: a schedule follows a git branch; Debian package "
		     "versions are measured as variants (kernel-changes/README.md)");
	expect_error("source: {git: /tmp, branch: b}\nbaseline: {rev: a}\n",
		     "1: matrix: missing: the matrix file whose cells each round runs");
	expect_error("source: {git: /tmp, branch: b}\nmatrix: /nonexistent.yaml\nbaseline: {rev: a}\n",
		     "1: matrix: no such file (a path from the working directory or from rcuwb's data directory)");
}

static void test_override(void **state)
{
	struct matrix m;

	(void)state;
	load("", &(struct schedule){ 0 });
	assert_int_equal(matrix_load(mpath, &m), 0);
	assert_int_equal(matrix_override(&m, "s@0123456789ab", "x.1,y.2"), 0);
	assert_string_equal(m.name, "s@0123456789ab");
	assert_int_equal(m.nvariants, 2);
	assert_string_equal(m.variants[1], "y.2");
	assert_int_equal(matrix_override(&m, NULL, "a,b c"), -1);
	assert_string_equal(last_err(), "--variants: 'b c': a variant name has letters, digits, '.', '_', '-'");
	assert_int_equal(matrix_override(&m, "bad name", NULL), -1);
}

/* the files load() wrote: nothing of a test run stays in /tmp */
static int remove_files(void **state)
{
	(void)state;
	if (path[0])
		unlink(path);
	if (mpath[0])
		unlink(mpath);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_override),
	};

	RUN_UNIT_GROUP("schedule", tests, NULL, remove_files);
}
