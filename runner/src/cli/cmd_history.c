/* cmd_history.c: rcuwb history: a schedule's per-commit history and its change points (stats/exec/rcuwb-history.R). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "schedule.h"

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
	extra[n++] = argv[1];	/* the verb first: rcuwb-history.R takes the first verb it sees */
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
		ret = run_rscript("history.R", nargs, (char **)args, extra, n);
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
	return run_rscript("history.R", argc, argv, extra, json_output ? 1 : 0);
}
