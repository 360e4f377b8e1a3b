/* cmd_stats.c: rcuwb report, gate and history: the R statistics in stats/, on the results database. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "db.h"
#include "proc.h"
#include "schedule.h"

#ifndef RCUWB_SRCDIR
#define RCUWB_SRCDIR "."
#endif

static const char report_help[] =
	"Usage: rcuwb report [--out DIR] [OPTIONS]\n"
	"\n"
	"Write a Markdown and a self-contained HTML report (tables, plots, CSVs) of\n"
	"the results database to DIR (default results/report): per-cell summaries with\n"
	"bootstrap confidence intervals, candidate-vs-baseline comparisons\n"
	"(the gate's verdicts, with a forest plot), expedited vs normal, latency\n"
	"vs vCPUs, ECDFs, the mid-boot outcome grid.  Options go to\n"
	"stats/exec/rcuwb-report.R:\n"
	"  --matrix NAME[,NAME] --variants V1,V2 --since TIME --baseline V\n"
	"  --candidate V2[,V3] --metrics p50[,p90,p99] --alpha A --threshold 5%%\n"
	"  --title TEXT --no-plots (the baseline defaults to the matrix's first variant)\n";

static const char gate_help[] =
	"Usage: rcuwb gate --baseline V1 --candidate V2 [OPTIONS]\n"
	"\n"
	"Decide, cell by cell, whether V2 is slower than V1 beyond a threshold, and exit:\n"
	"  0  PASS: in every cell a slowdown beyond the threshold is ruled out (the\n"
	"     one-sided upper confidence bound of the relative change is below it)\n"
	"  1  SLOWDOWN: shown in some cell (one-sided rank-sum test, Holm over the\n"
	"     testable cells, and an estimate above the threshold), or the candidate\n"
	"     fails (timeout, qemu-failed, ...) significantly more often\n"
	"  2  hard failure in the candidate (deadlock, rcuscale abort, crash, badness,\n"
	"     topology mismatch), or sides not comparable (accelerator, QEMU, libvirt,\n"
	"     host, oversubscription or kernel config differ: named)\n"
	"  3  INCONCLUSIVE: neither shown nor ruled out; says how many runs per side\n"
	"     would decide\n"
	"Gated: the per-run mean and p90 of the GP latency, on the log scale (normal\n"
	"GPs, which end on ticks: the mean; their p90 reported); PASS splits alpha\n"
	"between mean and p90, SLOWDOWN between them and the failure test, so the\n"
	"false-alarm rate is at most alpha; p50 and p99 reported.  --stat gates what it\n"
	"names in both modes.  A timed-out run counts as a latency of at least the\n"
	"timeout.  Options go to stats/exec/rcuwb-gate.R:\n"
	"  --threshold 5%% --alpha 0.05 --stat mean,p90 --min-runs 3 --matrix NAME\n"
	"  --since TIME --allow-config --junit FILE; --looks ID,... --max-runs N [--final]:\n"
	"  one look of a sequential design (what 'rcuwb compare' runs); with rcuwb\n"
	"  --json the verdict is JSON on stdout.\n";

static const char history_help[] =
	"Usage: rcuwb history show [--out DIR] SCHEDULE\n"
	"       rcuwb history update [--out DIR] SCHEDULE\n"
	"       rcuwb history list [--schedule NAME] [--state new,acknowledged,invalid]\n"
	"       rcuwb history ack ID --why TEXT\n"
	"       rcuwb history invalid ID --why TEXT\n"
	"       rcuwb history reopen ID\n"
	"\n"
	"A schedule's history: the per-run values of its nightly rounds per cell and\n"
	"gated statistic, in the branch's first-parent commit order, and the change\n"
	"points E-divisive finds in them (stats/R/changepoint.R), each with the commit\n"
	"range it lies in, the first suspect commit and its size with a CI.\n"
	"show writes the dashboard (DIR/index.html, self-contained, and DIR/index.md;\n"
	"default results/history/NAME); update also stores the change points (rcuwb\n"
	"nightly runs it after each round).  A change point is new until acknowledged\n"
	"(ack: real, known) or marked invalid (noise, a harness change): either way it\n"
	"is not reported as new again.  list shows them; reopen makes one new again.\n"
	"show and update take the analysis settings from the schedule's history: keys\n"
	"(min_commits, alpha, permutations, seed, min_change: the smallest relative\n"
	"change reported, default the gate's threshold); --stat mean,p90 chooses the\n"
	"statistics.  With rcuwb --json, JSON on stdout.\n";

/* Run Rscript on stats/exec/rcuwb-SCRIPT with the database and the caller's options. */
static int rscript(const char *script, int argc, char **argv, const char *const *extra, int nextra)
{
	char path[4096];
	const char **args = calloc((size_t)(argc + nextra + 8), sizeof(*args));
	int i, n = 0, status;
	sqlite3 *db;

	if (!args)
		return set_err("out of memory");
	snprintf(path, sizeof(path), RSCRIPT_PATH_FMT, RCUWB_SRCDIR, script);
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
	/* R reads the schema db.c makes (the view run_status, the table changepoints): bring it up to date */
	if (db_open(opt_db, &db) < 0) {
		free(args);
		return -1;
	}
	db_close(db);
	/* the script's exit code is the command's (gate: 0-3; 64 bad input; 127 no Rscript: make deps) */
	status = proc_run(args, NULL, NULL);
	free(args);
	return status;
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

/* show|update SCHEDULE: the schedule's name, repository and head for rcuwb-history.R */
static int history_of_schedule(int argc, char **argv)
{
	const char *extra[32], *args[64];
	char repo[PATH_MAX], out[PATH_MAX], head[300];
	struct history_args hb;
	struct schedule s;
	int i, n = 0, nargs = 0, ret;
	bool has_out = false;
	const char *sched = NULL;

	for (i = 2; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] == '-') {
			has_out |= !strcmp(argv[i], "--out");
			continue;
		}
		if (i > 2 && argv[i - 1][0] == '-' && strcmp(argv[i - 1], "--json"))
			continue;	/* an option's value */
		sched = argv[i];
	}
	if (!sched)
		return set_err("history %s needs a schedule: see 'rcuwb history --help'", argv[1]);
	if (schedule_load(sched, &s) < 0)
		return -1;
	ret = schedule_repo(&s, repo, sizeof(repo));
	snprintf(head, sizeof(head), "%s%s%s", s.remote[0] ? "refs/remotes/" : "", s.remote[0] ? s.remote : "",
		 s.remote[0] ? "/" : "");
	snprintf(head + strlen(head), sizeof(head) - strlen(head), "%s", s.branch);
	snprintf(out, sizeof(out), "results/history/%s", s.name);
	extra[n++] = argv[1];	/* the verb first: history.R takes the first verb it sees */
	extra[n++] = "--schedule";
	extra[n++] = s.name;
	extra[n++] = "--repo";
	extra[n++] = repo;
	extra[n++] = "--head";
	extra[n++] = head;
	n = schedule_history_args(&s, &hb, extra, n);
	if (!has_out) {
		extra[n++] = "--out";
		extra[n++] = out;
	}
	if (json_output)
		extra[n++] = "--json";
	for (i = 0; i < argc && nargs < 60; i++)
		if (argv[i] != sched && i != 1)
			args[nargs++] = argv[i];
	args[nargs] = NULL;
	if (!ret)
		ret = rscript("history.R", nargs, (char **)args, extra, n);
	schedule_free(&s);
	return ret;
}

int do_history(int argc, char **argv)
{
	const char *extra[1] = { "--json" };

	if (wants_help(argc, argv) || argc < 2) {
		print_usage(history_help);
		return argc < 2 ? set_err("history needs show, update, list, ack, invalid or reopen") : 0;
	}
	if (!strcmp(argv[1], "show") || !strcmp(argv[1], "update"))
		return history_of_schedule(argc, argv);
	return rscript("history.R", argc, argv, extra, json_output ? 1 : 0);
}
