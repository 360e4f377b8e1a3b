/*
 * main.c: rcuwb, the RCU grace-period workbench's runner.
 *
 * One subcommand a file (cmd_*.c), as bpftool and perf do; global options
 * before the subcommand; --json for machine-readable output everywhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "db.h"
#include "proc.h"

#ifndef RCUWB_VERSION
#define RCUWB_VERSION "0.1"
#endif

const char *opt_db;
const char *opt_uri = "qemu:///system";

static int do_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "run", do_run, "run a measurement matrix (perf-configs/NAME.yaml): placed, interleaved, resumable" },
	{ "compare", do_compare, "did CAND slow grace periods against BASE? build, run in looks until decided" },
	{ "rerun", do_rerun, "repeat one stored run: same kernel, domain XML and command line" },
	{ "boot", do_boot, "boot guests of one kernel variant, run rcuscale (or the probe), store every run" },
	{ "variant", do_variant, "read and check a kernel variant file: source, series, patches (-j, --shell)" },
	{ "parse", do_parse, "read a console log: rcuscale samples, statistics, probe lines, badness" },
	{ "report", do_report, "statistics report (Markdown + HTML, plots) of the results database (R)" },
	{ "anatomy", do_anatomy, "where GP time goes, phase by phase, from RCU's trace events (traced runs)" },
	{ "gate", do_gate, "regression gate: exit 0 pass, 1 slowdown, 2 hard failure, 3 not enough data" },
	{ "summary", do_summary, "per-cell table of stored runs: runs, samples, p50/p90/p99" },
	{ "nightly", do_nightly, "one scheduled round: new commit -> build, run, gate, change points, notify" },
	{ "schedule", do_schedule, "install, list or remove a schedule's systemd timer (or print a crontab line)" },
	{ "bisect", do_bisect, "find the first commit of a range whose runs belong with the slow end" },
	{ "history", do_history, "per-commit history of a schedule: change points (list, ack), dashboard" },
	{ "help", do_help, "this text" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"Usage: rcuwb [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Benchmark Linux RCU grace periods in QEMU guests driven through libvirt.\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out,
		"\n"
		"Options:\n"
		"  -j, --json        machine-readable output (JSON) on stdout\n"
		"  -q, --quiet       no progress on stderr\n"
		"  -d, --db PATH     results database (default $RCUWB_DB or results/rcuwb.db)\n"
		"  -c, --connect URI libvirt URI (default qemu:///system)\n"
		"  -V, --version     print the version\n"
		"  -h, --help        this text; 'rcuwb COMMAND --help' for a command\n"
		"\n"
		"Data (stats/, perf-configs/, VMs/, build/, kernel-changes/): $RCUWB_DATADIR,\n"
		"else the checkout the binary is in, else PREFIX/share/rcuwb (make install):\n"
		"  %s\n", data_dir() ? data_dir() : last_err());
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

int parse_int(const char *opt, const char *val, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < min || v > max)
		return set_err("%s '%s': give a whole number from %d to %d", opt, val, min, max);
	*out = (int)v;
	return 0;
}

int bad_usage(const char *cmd)
{
	return set_err("bad arguments: see 'rcuwb %s --help'", cmd);
}

void print_usage(const char *text)
{
	/* the texts are written as printf formats without arguments: "%%" is one '%' */
	for (; *text; text++) {
		if (text[0] == '%' && text[1] == '%')
			text++;
		putchar(*text);
	}
}

/* Run Rscript on stats/exec/rcuwb-SCRIPT with the database and the caller's options. */
int run_rscript(const char *script, int argc, char **argv, const char *const *extra, int nextra)
{
	char path[4096];
	const char **args;
	int i, n = 0, status;
	sqlite3 *db;

	if (!rscript_path(script, path, sizeof(path)))
		return -1;
	args = calloc((size_t)(argc + nextra + 8), sizeof(*args));
	if (!args)
		return set_err("out of memory");
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

bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "db", required_argument, NULL, 'd' },
		{ "connect", required_argument, NULL, 'c' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t i;
	int c;

	opt_db = db_default_path();
	while ((c = getopt_long(argc, argv, "+jqd:c:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json_output = true; break;
		case 'q': quiet = true; break;
		case 'd': opt_db = optarg; break;
		case 'c': opt_uri = optarg; break;
		case 'V': printf("rcuwb %s\n", RCUWB_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (strcmp(argv[optind], cmds[i].name))
			continue;
		argv += optind;
		argc -= optind;
		optind = 0;	/* reset getopt for the subcommand */
		c = cmds[i].fn(argc, argv);	/* < 0: error; else the exit code */
		if (c < 0) {
			report_err();
			return 1;
		}
		return c;
	}
	set_err("unknown command '%s': see 'rcuwb --help'", argv[optind]);
	report_err();
	return 2;
}
