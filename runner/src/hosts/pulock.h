/* pulock.h: host PUs reserved across rcuwb processes: one lock file per PU, held while a guest runs there. */
#ifndef RCUWB_PULOCK_H
#define RCUWB_PULOCK_H

#include <limits.h>
#include <stdbool.h>

#define PULOCK_MAX 1024

/*
 * Two runners on one host (two timers, or a user beside a timer) must not
 * pin guests to the same PUs: each would store 2:1-oversubscribed runs as
 * clean.  Every runner takes an exclusive flock(2) on DIR/pu-N.lock before
 * it pins a guest to host PU N and drops it when the guest has ended.  The
 * kernel drops the locks of a runner that dies, and its guests die with it
 * (they are autodestroyed with its libvirt connection), so nothing stale is
 * left to clean up.
 */
struct pulocks {
	char dir[PATH_MAX];
	int fd[PULOCK_MAX];		/* by OS index of the PU; -1 = not held */
};

/*
 * The lock directory: $RCUWB_PU_LOCKS, else /run/rcuwb/pus (created; for a
 * user who cannot write /run: $XDG_RUNTIME_DIR/rcuwb-pus, which only
 * that user's runners share).  -1 with set_err() when it cannot be made.
 */
int pulock_init(struct pulocks *l);
/* Take PU os_index's lock without waiting: 1 taken (or already ours), 0 held by another process, -1 error. */
int pulock_try(struct pulocks *l, unsigned os_index);
void pulock_release(struct pulocks *l, unsigned os_index);
/* Drop every lock this process holds. */
void pulock_fini(struct pulocks *l);

#endif
