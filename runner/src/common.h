/* common.h: error reporting, output modes and small helpers shared by all modules. */
#ifndef RCUWB_COMMON_H
#define RCUWB_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Output mode, set once from the global options (bpftool style). */
extern bool json_output;
extern bool quiet;

/*
 * Errors are recorded where they happen and reported once, by the command
 * that gives up: set_err() stores the message (printf style) and returns -1
 * so that "return set_err(...)" reads naturally.
 */
int set_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *last_err(void);
/* Report the stored error (human: "rcuwb: error: ...", JSON: {"error": ...}). */
void report_err(void);
/* Progress and notes for people on stderr; silent with --quiet or --json. */
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable byte buffer. */
struct buf {
	char *data;
	size_t len, cap;
};
int buf_append(struct buf *b, const void *p, size_t n);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(struct buf *b);

/* snprintf into a path buffer; -1 with set_err() when it does not fit. */
int path_fmt(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * rcuwb's data (stats/, perf-configs/, VMs/, build/, kernel-changes/):
 * $RCUWB_DATADIR if set, else the checkout the binary sits in
 * (BINDIR/.., the binary being runner/rcuwb), else the install layout
 * (BINDIR/../share/rcuwb).  NULL with set_err() naming where it looked.
 */
const char *data_dir(void);
/*
 * A path of rcuwb's data: $env when env is given and set, else
 * data_dir()/rel written to out; NULL (the error set) when there is none.
 */
const char *data_path(const char *env, const char *rel, char *out, size_t cap);
/* stats/exec/rcuwb-NAME (an R entry script) of the data, in out; NULL as data_path(). */
const char *rscript_path(const char *name, char *out, size_t cap);

/* qsort() comparator of doubles, ascending. */
int cmp_double(const void *a, const void *b);

/* Whole file into a NUL-terminated buffer; -1 with set_err() on failure. */
int read_file(const char *path, struct buf *out);
int write_file(const char *path, const void *data, size_t len);
int copy_file(const char *from, const char *to);
int mkdir_p(const char *path);
/*
 * A per-boot directory that every rcuwb process of this user shares, for
 * state that holds until the host reboots (PU locks, the KVM verdict):
 * $env when set, else /run/rcuwb/LEAF (root, or no XDG_RUNTIME_DIR), else
 * $XDG_RUNTIME_DIR/rcuwb-LEAF; created, and writable, or -1 with set_err().
 */
int runtime_dir(const char *env, const char *leaf, char *out, size_t cap);

/* Wall clock as seconds, and as an ISO-8601 UTC string into out[32]. */
double now_s(void);
void iso_time(double t, char out[32]);
/* "90s", "20m", "2h" or plain seconds into *out; -1 (no message) if malformed. */
int duration_s(const char *v, long *out);

#endif
