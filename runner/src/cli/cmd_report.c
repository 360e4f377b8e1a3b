/* cmd_report.c: rcuwb report: the Markdown and HTML statistics report of the results database (stats/exec/rcuwb-report.R). */
#include <string.h>

#include "cli.h"

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
			return run_rscript("report.R", argc, argv, NULL, 0);
	return run_rscript("report.R", argc, argv, extra, 2);
}
