/* cmd_stats.c: rcuwb report and rcuwb gate: the R statistics in stats/, on the results database. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"

#ifndef RCUWB_SRCDIR
#define RCUWB_SRCDIR "."
#endif

static const char report_help[] =
	"Usage: rcuwb report [--out DIR] [OPTIONS]\n"
	"\n"
	"Write a Markdown and a self-contained HTML report (tables, plots, CSVs) of\n"
	"the results database to DIR (default results/report): per-cell summaries with\n"
	"bootstrap confidence intervals, candidate-vs-baseline comparisons\n"
	"(Hodges-Lehmann shift, Mann-Whitney U, Holm), expedited vs normal, latency\n"
	"vs vCPUs, ECDFs, the mid-boot outcome grid.  Options go to stats/report.R:\n"
	"  --matrix NAME[,NAME] --variants V1,V2 --since TIME --baseline V\n"
	"  --candidate V2[,V3] --metrics p50[,p90,p99] --alpha A --title TEXT --no-plots\n";

static const char gate_help[] =
	"Usage: rcuwb gate --baseline V1 --candidate V2 [OPTIONS]\n"
	"\n"
	"Decide whether V2 regressed against V1, cell by cell, and exit with:\n"
	"  0  pass\n"
	"  1  a statistically significant slowdown beyond the threshold (cell, size, CI named)\n"
	"  2  hard failure in the candidate (deadlock, rcuscale abort, crash, badness,\n"
	"     topology mismatch)\n"
	"  3  not enough data to decide (how many more runs are needed is said)\n"
	"Options go to stats/gate.R: --threshold 5%% --alpha 0.05 --min-runs 5\n"
	"  --matrix NAME --since TIME --metrics p50 --junit FILE --no-power-check;\n"
	"with rcuwb --json the verdict is JSON on stdout.\n";

/* Run Rscript on stats/SCRIPT with the database and the caller's options. */
static int rscript(const char *script, int argc, char **argv, const char *const *extra, int nextra)
{
	char path[4096];
	const char **args = calloc((size_t)(argc + nextra + 8), sizeof(*args));
	int i, n = 0, status;
	pid_t pid;

	if (!args)
		return set_err("out of memory");
	snprintf(path, sizeof(path), "%s/stats/%s", RCUWB_SRCDIR, script);
	args[n++] = "Rscript";
	args[n++] = path;
	args[n++] = "--db";
	args[n++] = opt_db;
	for (i = 0; i < nextra; i++)
		args[n++] = extra[i];
	for (i = 1; i < argc; i++)
		args[n++] = argv[i];
	if (access(opt_db, R_OK)) {
		free(args);
		return set_err("no results database at %s: run 'make bench' or 'rcuwb run' first", opt_db);
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execvp("Rscript", (char *const *)args);
		fprintf(stderr, "rcuwb: error: cannot run Rscript: %s (run 'make deps')\n", strerror(errno));
		_exit(127);
	}
	free(args);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return set_err("cannot run Rscript: %s", strerror(errno));
	/* the script's exit code is the command's (gate: 0-3; 64 bad input) */
	return WIFEXITED(status) ? WEXITSTATUS(status) : 70;
}

static bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	return false;
}

int do_report(int argc, char **argv)
{
	const char *extra[2] = { "--out", "results/report" };
	int i;

	if (wants_help(argc, argv)) {
		print_usage(report_help);
		return 0;
	}
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--out") || !strncmp(argv[i], "--out=", 6))
			return rscript("report.R", argc, argv, NULL, 0);
	return rscript("report.R", argc, argv, extra, 2);
}

int do_gate(int argc, char **argv)
{
	const char *extra[1] = { "--json" };

	if (wants_help(argc, argv)) {
		print_usage(gate_help);
		return 0;
	}
	return rscript("gate.R", argc, argv, extra, json_output ? 1 : 0);
}
