/* session.h: a runner session: its hosts and results database, shared by its runs. */
#ifndef RCUWB_SESSION_H
#define RCUWB_SESSION_H

#include "hosts.h"
#include "job.h"

/*
 * Open the results database (opt_db) and connect to every host of hs: its
 * identity, placement and accelerator (k boots for an accelerator probe).
 * With a hosts file (hs->path set), a host that cannot be reached now is
 * retried in the background and one that cannot be set up is left out, as
 * long as one host is up; without one, any failure fails.
 */
int bench_open(struct bench *b, const struct hosts *hs, const struct kernel_build *k, const char *accel,
	       struct pulocks *locks);
/* Set up a host that came up after bench_open() (no-op when it is set up). */
int bench_host_ready(struct bench *b, struct vmhost *h, const struct kernel_build *k, const char *accel,
		     struct pulocks *locks);
void bench_close(struct bench *b);
/* Ctrl-C or SIGTERM reached the runner. */
bool bench_interrupted(const struct bench *b);
#endif
