/* cli.h: the subcommands of rcuwb (main.c's table, one cmd_NAME.c each) and the helpers they share. */
#ifndef RCUWB_CLI_H
#define RCUWB_CLI_H

#include <getopt.h>
#include <stdbool.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* Global options, parsed by main.c before the subcommand. */
extern const char *opt_db;
extern const char *opt_uri;

int do_parse(int argc, char **argv);
int do_boot(int argc, char **argv);
int do_run(int argc, char **argv);
int do_rerun(int argc, char **argv);
int do_compare(int argc, char **argv);
int do_report(int argc, char **argv);
int do_gate(int argc, char **argv);
int do_summary(int argc, char **argv);
int do_nightly(int argc, char **argv);
int do_schedule(int argc, char **argv);
int do_history(int argc, char **argv);
int do_bisect(int argc, char **argv);
int do_variant(int argc, char **argv);
int do_anatomy(int argc, char **argv);
/*
 * After a SLOWDOWN (rcuwb compare): BASE and CAND, kernel variants, built
 * in the Kconfig scenario trace and run traced (runs a side) in the
 * topologies and GP modes of cells ("v2-n1/normal/..."), stored as matrix
 * name, then the per-phase comparison printed (cmd_anatomy.c).  Its exit
 * code, or -1 with set_err().
 */
int anatomy_after_slowdown(const char *base, const char *cand, const char *name, const char *const *cells, int n,
			   int runs);

/* Strict number parsing: -1 with set_err() naming the option and the value. */
int parse_int(const char *opt, const char *val, int min, int max, int *out);
/* Unknown option / missing argument: the getopt error, with the command's usage hint. */
int bad_usage(const char *cmd);
/* Help text of a subcommand on stdout. */
void print_usage(const char *text);
/* -h or --help among a subcommand's arguments (those that pass options through to R). */
bool wants_help(int argc, char **argv);
/*
 * Rscript stats/SCRIPT --db DB EXTRA... ARGV[1..]: the R commands (report,
 * gate, history); the script's exit code, or -1 with set_err().
 */
int run_rscript(const char *script, int argc, char **argv, const char *const *extra, int nextra);

#endif
