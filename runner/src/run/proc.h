/* proc.h: running other programs (git, build/kernel.sh, Rscript, rcuwb itself, notify commands). */
#ifndef RCUWB_PROC_H
#define RCUWB_PROC_H

#include "common.h"

/*
 * Run argv[0] (looked up in PATH) with argv, no shell.  input: written to
 * its standard input, which is then closed (NULL: /dev/null).  out: its
 * standard output is collected there (NULL: it goes to ours).  Its standard
 * error is ours.  Returns its exit code (128 + N when killed by signal N),
 * or -1 with set_err() when it could not be started.  Not both input and out.
 */
int proc_run(const char *const *argv, const char *input, struct buf *out);
/* proc_run() with out, the output's trailing newlines removed; -1 unless it exits 0. */
int proc_line(const char *const *argv, char *line, size_t cap);
/* The path of this program (for running rcuwb's own subcommands). */
const char *proc_self(void);

#endif
