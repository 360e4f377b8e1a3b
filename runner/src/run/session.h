/* session.h: a runner session: its hosts and results database, shared by its runs. */
#ifndef RCUWB_SESSION_H
#define RCUWB_SESSION_H

#include "hosts.h"
#include "job.h"

/* A runner session: what every job of one runner invocation shares. */
struct session {
	struct vmhost *hosts;		/* hosts[0]: the only one without a hosts file */
	int nhosts;
	sqlite3 *db;
	char results_dir[PATH_MAX];	/* run directories go to results_dir/runs */
	unsigned seq;
};

/*
 * Open the results database (opt_db) and connect to every host of hs: its
 * identity, placement and accelerator (k boots for an accelerator probe).
 * With a hosts file (hs->path set), a host that cannot be reached now is
 * retried in the background and one that cannot be set up is left out, as
 * long as one host is up; without one, any failure fails.
 */
int session_open(struct session *sess, const struct hosts *hs, const struct kernel_build *k, const char *accel,
		 struct pulocks *locks);
/* Set up a host that came up after session_open() (no-op when it is set up). */
int session_host_ready(struct session *sess, struct vmhost *h, const struct kernel_build *k, const char *accel,
		       struct pulocks *locks);
void session_close(struct session *sess);
/* Ctrl-C or SIGTERM reached the runner. */
bool session_interrupted(const struct session *sess);

#endif
