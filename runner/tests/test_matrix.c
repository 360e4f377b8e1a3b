/* test_matrix.c: unit tests of matrix files: parsing, errors with file:line:key, expansion, interleaving. */
#include <unistd.h>

#include "unit.h"

#include "common.h"
#include "matrix.h"

static char path[64];

static int load(const char *text, struct matrix *m)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/rcuwb-matrix-%d.yaml", (int)getpid());
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return matrix_load(path, m);
}

static void expect_error(const char *text, const char *msg)
{
	struct matrix m;
	char want[1024];

	assert_int_equal(load(text, &m), -1);
	snprintf(want, sizeof(want), "%s:%s", path, msg);
	if (strcmp(last_err(), want))
		fail_msg("got  '%s'\nwant '%s'", last_err(), want);
}

/* The error starts with file:msg (the rest names a temporary directory). */
static void expect_error_start(const char *text, const char *msg)
{
	struct matrix m;
	char want[1024];

	assert_int_equal(load(text, &m), -1);
	snprintf(want, sizeof(want), "%s:%s", path, msg);
	if (strncmp(last_err(), want, strlen(want)))
		fail_msg("got  '%s'\nwant '%s...'", last_err(), want);
}

static void test_parse(void **state)
{
	struct matrix m;

	(void)state;
	assert_int_equal(load("name: t\nvariants: [before, after]\n"
			      "topologies:\n  - {vcpus: 2}\n  - {vcpus: 4, nodes: 2, memory: 1024}\n"
			      "  - vcpus: 4\n    cells: [{cpus: 0-2, memory: 300}, {cpus: 3, memory: 100}]\n"
			      "    distances: [[10, 21], [21, 10]]\n"
			      "modes: [normal, expedited]\nrcuscale: {nwriters: 2, holdoff: 1}\nemulator: apart\n"
			      "boot_params: ['', rcupdate.rcu_normal=1]\nreps: 3\nseed: 7\n", &m), 0);
	assert_string_equal(m.name, "t");
	assert_int_equal(m.nvariants, 2);
	assert_int_equal(m.ntopos, 3);
	assert_int_equal(m.topos[1].nnodes, 2);
	assert_int_equal(m.topos[1].cells[1].mem_mib, 512);
	assert_int_equal(m.topos[2].cells[0].ncpus, 3);
	assert_int_equal(m.topos[2].cells[1].first_cpu, 3);
	assert_int_equal(m.topos[2].mem_mib, 400);
	assert_int_equal(m.topos[2].distance[0][1], 21);
	assert_true(m.normal && m.expedited);
	assert_int_equal(m.nwriters, 2);
	assert_int_equal(m.holdoff_s, 1);
	assert_true(m.emulator_apart);
	assert_int_equal(m.nboot_params, 2);
	assert_string_equal(m.boot_params[1], "rcupdate.rcu_normal=1");
	assert_int_equal(m.reps, 3);
	assert_true(m.seed == 7);
	unlink(path);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("variants: [a]\ntopologies:\n  - {vcpus: 2}\n  - {vcpus: x}\n",
		     "4: topologies[1].vcpus: give a whole number from 1 to 64");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nrepz: 3\n",
		     "3: repz: unknown key (name, variants, kconfigs, topologies, modes, flavours, rcuscale, probe, boot_params, "
		     "reps, timeout, memory, seed, emulator)");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nemulator: far\n",
		     "3: emulator: give apart or shared");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nrcuscale: {holdoff: soon}\n",
		     "3: rcuscale.holdoff (seconds or boot): give a whole number from 0 to 3600");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nrcuscale: {minruntime: -1}\n",
		     "3: rcuscale.minruntime (seconds): give a whole number from 0 to 600");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nrcuscale: {minrt: 1}\n",
		     "3: minrt: unknown rcuscale key (nwriters, nreaders, holdoff, writer_holdoff, minruntime, async_max)");
	expect_error("variants: [a]\ntopologies: [{vcpus: 3, nodes: 2}]\n",
		     "2: topologies[0]: 3 vcpus do not split evenly over 2 NUMA nodes");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nmodes: [fast]\n",
		     "3: modes: give normal, expedited and/or async");
	expect_error("topologies: [{vcpus: 2}]\n", "1: variants: missing: list the kernel variants to run");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nprobe: {stages: [\"15\"]}\n",
		     "3: probe.stages: give stage digits 0-4, e.g. 0, 1 or 234");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nprobe: {stages: [\"0\"], calls: 0}\n",
		     "3: probe.calls: give a whole number from 1 to 100");
	expect_error("variants: [a]\ntopologies:\n - vcpus: 4\n   cells: [{cpus: 1-3}, {cpus: 0}]\n",
		     "4: cells[0]: cells must cover vCPUs 0.. in contiguous ranges, in order");
	expect_error("variants: [a b]\ntopologies: [{vcpus: 2}]\n",
		     "1: variants: a variant name has letters, digits, '.', '_', '-'");
	/* values that reach the kernel command line, the domain XML or a file name */
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nboot_params: [\"x=\\\"1 2\\\"\"]\n",
		     "3: boot_params: quotes, backslashes and shell metacharacters would be read by the kernel's "
		     "parser or a shell: give words of key=value");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nboot_params:\n  - \"a=1\"\n  - \"b=1\\nc=2\"\n",
		     "5: boot_params: a control or non-ASCII character: give words of key=value");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nboot_params: [\"=1\"]\n",
		     "3: boot_params: each word is key or key=value, the key in letters, digits and ._-");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nprobe: {stages: [\"0\"], prims: [\"rcu tasks\"]}\n",
		     "3: probe.prims: give primitive names (lower-case letters, digits, '_'), comma-separated");
	expect_error("name: my matrix\nvariants: [a]\ntopologies: [{vcpus: 2}]\n",
		     "1: name: the matrix's name (from the file's name unless given) has other characters than "
		     "letters, digits, '.', '_', '-': give a name: key");
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}\n", "3: not valid YAML: did not find expected ',' or ']'");
	unlink(path);
}

static void test_missing_file(void **state)
{
	struct matrix m;

	(void)state;
	assert_int_equal(matrix_load("/nonexistent/x.yaml", &m), -1);
	assert_string_equal(last_err(), "cannot open matrix /nonexistent/x.yaml: No such file or directory");
}

static void test_expand_interleaved(void **state)
{
	struct planned_run *r, *r2;
	struct matrix m;
	size_t n, n2, i, j;
	int seen[4][2][4] = { { { 0 } } };	/* cell index x variant x rep */

	(void)state;
	assert_int_equal(load("variants: [A, B]\ntopologies: [{vcpus: 1}, {vcpus: 2}]\n"
			      "modes: [normal, expedited]\nreps: 3\nseed: 5\n", &m), 0);
	assert_int_equal(matrix_expand(&m, &r, &n), 0);
	assert_int_equal(n, 2 * 2 * 2 * 3);
	for (i = 0; i < n; i += 2) {
		/* a cell's variants back to back, A B then B A by repetition */
		assert_string_equal(r[i].cell, r[i + 1].cell);
		assert_int_equal(r[i].rep, r[i + 1].rep);
		assert_int_equal(r[i].variant, r[i].rep % 2 ? 0 : 1);
		assert_int_equal(r[i + 1].variant, r[i].rep % 2 ? 1 : 0);
		seen[r[i].topo * 2 + r[i].mode][0][r[i].rep]++;
		seen[r[i].topo * 2 + r[i].mode][1][r[i].rep]++;
	}
	for (i = 0; i < 4; i++)	/* every run exactly once */
		for (j = 1; j <= 3; j++)
			assert_true(seen[i][0][j] == 1 && seen[i][1][j] == 1);
	/* the same seed gives the same order; another seed another one */
	assert_int_equal(matrix_expand(&m, &r2, &n2), 0);
	for (i = 0; i < n; i++)
		assert_string_equal(r[i].cell, r2[i].cell);
	free(r2);
	m.seed = 6;
	assert_int_equal(matrix_expand(&m, &r2, &n2), 0);
	for (i = 0; i < n && !strcmp(r[i].cell, r2[i].cell); i++)
		;
	assert_true(i < n);
	free(r2);
	free(r);
	unlink(path);
}

/* A matrix of millions of runs is a typo: refused, without an int overflow on the way. */
static void test_too_many_runs(void **state)
{
	struct planned_run *r = NULL;
	struct matrix m;
	char want[512];
	size_t n = 0;

	(void)state;
	assert_int_equal(load("variants: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p]\n"
			      "topologies: [{vcpus: 1}, {vcpus: 2}, {vcpus: 3}, {vcpus: 4}, {vcpus: 5}, {vcpus: 6},"
			      " {vcpus: 7}, {vcpus: 8}, {vcpus: 9}, {vcpus: 10}, {vcpus: 11}, {vcpus: 12},"
			      " {vcpus: 13}, {vcpus: 14}, {vcpus: 15}, {vcpus: 16}]\nreps: 10000\n", &m), 0);
	assert_int_equal(matrix_expand(&m, &r, &n), -1);
	snprintf(want, sizeof(want), "%s: 2560000 runs (16 cells x 16 variants x 10000 reps): at most 1000000 in one matrix",
		 path);
	assert_string_equal(last_err(), want);
	assert_null(r);
}

static void test_probe_dimensions(void **state)
{
	struct planned_run *r;
	struct run_spec s;
	struct matrix m;
	size_t n;

	(void)state;
	assert_int_equal(load("variants: [A]\ntopologies: [{vcpus: 2}]\n"
			      "probe: {stages: [\"1\", \"234\"], prims: [rcu, \"srcu,tasks\"], watchdog: 3}\n"
			      "boot_params: ['', rcupdate.rcu_normal=1]\n", &m), 0);
	assert_false(m.normal || m.expedited);
	assert_int_equal(matrix_expand(&m, &r, &n), 0);
	assert_int_equal(n, 2 * 2 * 2);
	matrix_spec(&m, &r[0], &s);
	assert_int_equal(s.kind, RUN_PROBE);
	assert_int_equal(s.probe_watchdog_s, 3);
	free(r);
	unlink(path);
}

/* kconfigs: a dimension of cells; names must have a fragment; tiny keeps old cell names */
static void test_kconfigs(void **state)
{
	char dir[64], f[512];
	struct planned_run *r;
	struct run_spec s;
	struct matrix m;
	size_t n, i, ntree = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rcuwb-kconfig-%d", (int)getpid());
	snprintf(f, sizeof(f), "mkdir -p %s/scenarios && touch %s/scenarios/tiny.config %s/scenarios/tree.config",
		 dir, dir, dir);
	assert_int_equal(system(f), 0);
	setenv("RCUWB_KCONFIG_DIR", dir, 1);

	assert_int_equal(load("variants: [A]\ntopologies: [{vcpus: 1}]\n", &m), 0);
	assert_int_equal(m.nkconfigs, 1);
	assert_string_equal(m.kconfigs[0], "tiny");
	assert_int_equal(load("variants: [A, B]\nkconfigs: [tiny, tree]\ntopologies: [{vcpus: 1}]\n"
			      "modes: [normal, expedited]\nreps: 2\n", &m), 0);
	assert_int_equal(m.nkconfigs, 2);
	assert_int_equal(matrix_expand(&m, &r, &n), 0);
	assert_int_equal(n, 2 * 2 * 2 * 2);
	for (i = 0; i < n; i++) {
		matrix_spec(&m, &r[i], &s);
		assert_string_equal(s.kconfig, m.kconfigs[r[i].kconfig]);
		assert_true((strstr(r[i].cell, "/k=tree") != NULL) == (r[i].kconfig == 1));
		assert_null(strstr(r[i].cell, "k=tiny"));
		ntree += r[i].kconfig == 1;
		if (i % 2)	/* a cell's variants back to back, in one scenario */
			assert_string_equal(r[i].cell, r[i - 1].cell);
	}
	assert_int_equal(ntree, n / 2);
	free(r);

	expect_error_start("variants: [a]\ntopologies: [{vcpus: 2}]\nkconfigs: [tiny, nope]\n",
		     "3: kconfigs: no Kconfig scenario 'nope' (no /tmp/rcuwb-kconfig-");
	assert_int_equal(load("variants: [a]\ntopologies: [{vcpus: 2}]\nkconfigs: [tiny, nope]\n", &m), -1);
	snprintf(f, sizeof(f), "%s/scenarios/nope.config); there are: tiny tree", dir);
	assert_non_null(strstr(last_err(), f));
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nkconfigs: [tree, tree]\n",
		     "3: kconfigs: a scenario is listed twice");
	/* a name that would leave the scenarios directory is refused as a name */
	expect_error("variants: [a]\ntopologies: [{vcpus: 2}]\nkconfigs: [../x]\n",
		     "3: kconfigs: a scenario name has letters, digits, '.', '_', '-'");
	unsetenv("RCUWB_KCONFIG_DIR");
	snprintf(f, sizeof(f), "rm -rf %s", dir);
	assert_int_equal(system(f), 0);
	unlink(path);
}

/* minruntime: every run gets it, or none does when one kernel lacks it */
static void test_minruntime_fit(void **state)
{
	struct kernel_build k[2] = { { .variant = "after", .kconfig = "tiny", .rcuscale_minruntime = true },
				     { .variant = "stock", .kconfig = "tiny", .rcuscale_minruntime = true } };
	struct planned_run *runs;
	struct matrix m;
	size_t n, i;

	(void)state;
	assert_int_equal(load("name: t\nvariants: [after, stock]\ntopologies: [{vcpus: 1}]\n"
			      "modes: [expedited]\nrcuscale: {nwriters: 1, minruntime: 2}\n", &m), 0);
	assert_int_equal(m.minruntime_s, 2);
	matrix_fit_kernels(&m, k);
	assert_int_equal(m.minruntime_s, 2);
	assert_int_equal(matrix_expand(&m, &runs, &n), 0);
	for (i = 0; i < n; i++)
		assert_string_equal(runs[i].cell, "v1-n1/expedited/w1-r0-m2");
	free(runs);
	k[1].rcuscale_minruntime = false;
	matrix_fit_kernels(&m, k);
	assert_int_equal(m.minruntime_s, 0);
	assert_int_equal(matrix_expand(&m, &runs, &n), 0);
	for (i = 0; i < n; i++)
		assert_string_equal(runs[i].cell, "v1-n1/expedited/w1-r0");
	free(runs);
	unlink(path);
}

/* flavours: a dimension of cells; cells of rcu keep their names; modes where the flavour has them */
static void test_flavours(void **state)
{
	struct planned_run *r, *r1;
	struct run_spec s;
	struct matrix m;
	char cmd[1024];
	size_t n, n1, i, nexp = 0;

	(void)state;
	/* the same matrix without and with "flavours: [rcu]": the same runs, in the same order */
	assert_int_equal(load("variants: [A, B]\ntopologies: [{vcpus: 1}, {vcpus: 2}]\nmodes: [normal, expedited]\n"
			      "reps: 3\nseed: 9\n", &m), 0);
	assert_int_equal(m.nflavours, 1);
	assert_string_equal(m.flavours[0], "rcu");
	assert_int_equal(matrix_expand(&m, &r, &n), 0);
	assert_int_equal(load("variants: [A, B]\ntopologies: [{vcpus: 1}, {vcpus: 2}]\nmodes: [normal, expedited]\n"
			      "reps: 3\nseed: 9\nflavours: [rcu]\n", &m), 0);
	assert_int_equal(matrix_expand(&m, &r1, &n1), 0);
	assert_int_equal(n, n1);
	for (i = 0; i < n; i++) {
		assert_string_equal(r[i].cell, r1[i].cell);
		assert_null(strstr(r[i].cell, "f="));
		matrix_spec(&m, &r1[i], &s);
		assert_int_equal(run_cmdline(&s, cmd, sizeof(cmd)), 0);
		assert_null(strstr(cmd, "scale_type"));
	}
	free(r);
	free(r1);

	/* srcu in both modes, tasks-tracing in normal only (said on stderr) */
	assert_int_equal(load("variants: [A]\ntopologies: [{vcpus: 1}]\nmodes: [normal, expedited]\n"
			      "flavours: [srcu, tasks-tracing]\n", &m), 0);
	assert_int_equal(matrix_expand(&m, &r, &n), 0);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++) {
		matrix_spec(&m, &r[i], &s);
		assert_int_equal(run_cmdline(&s, cmd, sizeof(cmd)), 0);
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " ");
		if (!strcmp(s.flavour, "srcu")) {
			assert_non_null(strstr(r[i].cell, "/w-1-r0/f=srcu"));
			assert_non_null(strstr(cmd, " rcuscale.scale_type=srcu "));
		} else {
			assert_string_equal(r[i].cell, "v1-n1/normal/w-1-r0/f=tasks-tracing");
			assert_non_null(strstr(cmd, " rcuscale.scale_type=tasks-tracing "));
		}
		nexp += s.gp == GP_EXPEDITED;
	}
	assert_int_equal(nexp, 1);
	free(r);

	/* async: rcuscale.gp_async with at most async_max callbacks in flight (default 10) */
	assert_int_equal(load("variants: [A]\ntopologies: [{vcpus: 1}]\nmodes: [async]\nflavours: [rcu, srcu]\n", &m), 0);
	assert_int_equal(matrix_expand(&m, &r, &n), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		matrix_spec(&m, &r[i], &s);
		assert_int_equal(s.gp, GP_ASYNC);
		assert_int_equal(run_cmdline(&s, cmd, sizeof(cmd)), 0);
		assert_non_null(strstr(cmd, "rcuscale.gp_exp=0 "));
		assert_non_null(strstr(cmd, " rcuscale.gp_async=1 rcuscale.gp_async_max=10"));
		assert_string_equal(r[i].cell, strcmp(s.flavour, "srcu") ? "v1-n1/async/w-1-r0-a10" : "v1-n1/async/w-1-r0-a10/f=srcu");
	}
	free(r);
	assert_int_equal(load("variants: [A]\ntopologies: [{vcpus: 1}]\nmodes: [normal, async]\n"
			      "rcuscale: {async_max: 1}\nflavours: [tasks-rude]\n", &m), 0);
	assert_int_equal(matrix_expand(&m, &r, &n), 0);
	assert_int_equal(n, 1);	/* no async tasks-rude cell */
	assert_string_equal(r[0].cell, "v1-n1/normal/w-1-r0/f=tasks-rude");
	free(r);
	expect_error("variants: [a]\ntopologies: [{vcpus: 1}]\nrcuscale: {async_max: 0}\n",
		     "3: rcuscale.async_max (callbacks in flight per writer): give a whole number from 1 to 100000");

	expect_error("variants: [a]\ntopologies: [{vcpus: 1}]\nflavours: [srcu, nope]\n",
		     "3: flavours: no flavour 'nope': give one of rcu, srcu, srcud, tasks, tasks-tracing, tasks-rude");
	expect_error("variants: [a]\ntopologies: [{vcpus: 1}]\nflavours: [srcu, srcu]\n",
		     "3: flavours: a flavour is listed twice");
	expect_error("variants: [a]\ntopologies: [{vcpus: 1}]\nmodes: [expedited]\nflavours: [rcu, tasks]\n",
		     "1: modes: flavour tasks has no expedited GPs (rcuscale's expedited Tasks RCU GP is "
		     "synchronize_rcu_tasks() itself) and the matrix asks for no other mode: add one to "
		     "modes, or drop tasks");
	unlink(path);
}

/* a flavour the kernel's rcuscale does not offer is refused before anything runs */
static void test_flavours_offered(void **state)
{
	struct kernel_build k = { .variant = "after", .kconfig = "tiny", .version = "6.1.192",
				  .param_prefix = "rcuscale", .config = "/nonexistent" };
	struct matrix m;

	(void)state;
	assert_int_equal(load("variants: [after]\ntopologies: [{vcpus: 1}]\nflavours: [rcu, srcu, srcud]\n", &m), 0);
	assert_int_equal(matrix_check_rcuscale(&m, &k), 0);
	assert_int_equal(load("variants: [after]\ntopologies: [{vcpus: 1}]\n\nflavours: [srcu, tasks-tracing]\n", &m), 0);
	assert_int_equal(matrix_check_rcuscale(&m, &k), -1);
	assert_non_null(strstr(last_err(), ":4: flavours: after (tiny): flavour tasks-tracing needs "
				"CONFIG_TASKS_TRACE_RCU=y, which this build lacks"));
	assert_int_equal(load("variants: [after]\ntopologies: [{vcpus: 1}]\nflavours: [tasks-rude]\n", &m), 0);
	assert_int_equal(matrix_check_rcuscale(&m, &k), -1);
	assert_non_null(strstr(last_err(), "Linux 6.1.192's rcuscale has no tasks-rude"));
	/* 6.1's rcuscale hangs an async writer whose callbacks run on another CPU: refused on 2+ vCPUs */
	assert_int_equal(load("variants: [after]\ntopologies: [{vcpus: 1}, {vcpus: 2}]\nmodes: [async]\n"
			      "flavours: [rcu, srcu]\n", &m), 0);
	assert_int_equal(matrix_check_rcuscale(&m, &k), -1);
	assert_non_null(strstr(last_err(), ":4: flavours: after (tiny): srcu async on 2 vCPUs: Linux 6.1.192's "
				"rcuscale counts callbacks in flight per CPU"));
	m.topos[1].vcpus = 1;
	assert_int_equal(matrix_check_rcuscale(&m, &k), 0);
	m.topos[1].vcpus = 2;
	snprintf(k.version, sizeof(k.version), "6.12.118");
	assert_int_equal(matrix_check_rcuscale(&m, &k), 0);
	snprintf(k.version, sizeof(k.version), "6.1.192");
	snprintf(k.param_prefix, sizeof(k.param_prefix), "rcuperf");
	assert_int_equal(load("variants: [after]\ntopologies: [{vcpus: 1}]\nflavours: [srcu]\n", &m), 0);
	assert_int_equal(matrix_check_rcuscale(&m, &k), -1);
	assert_non_null(strstr(last_err(), "rcuperf"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_expand_interleaved),
		cmocka_unit_test(test_too_many_runs),
		cmocka_unit_test(test_probe_dimensions),
		cmocka_unit_test(test_flavours),
		cmocka_unit_test(test_flavours_offered),
		cmocka_unit_test(test_kconfigs),
		cmocka_unit_test(test_minruntime_fit),
	};
	RUN_UNIT_TESTS("matrix", tests);
}
