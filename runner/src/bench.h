/* bench.h: a runner session: libvirt, host, database and accelerator shared by its runs; per-run report lines. */
#ifndef RCUWB_BENCH_H
#define RCUWB_BENCH_H

#include "job.h"

/* Open the results database (opt_db), read the host, connect, choose the accelerator. */
int bench_open(struct bench *b, const struct kernel_build *k, const char *accel);
void bench_close(struct bench *b);
/* One line per finished run (or a JSON object with --json). */
void bench_report_run(const struct job *j, int idx, int total);

#endif
