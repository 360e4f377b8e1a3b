/* pulock.c: host PUs reserved across rcuwb processes with flock(2). */
#define _GNU_SOURCE
#include "pulock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static int usable_dir(const char *dir)
{
	if (mkdir_p(dir) < 0)
		return -1;
	if (access(dir, W_OK | X_OK) < 0)
		return set_err("%s: %s", dir, strerror(errno));
	return 0;
}

int pulock_init(struct pulocks *l)
{
	const char *env = getenv("RCUWB_PU_LOCKS"), *run = getenv("XDG_RUNTIME_DIR");
	unsigned i;

	for (i = 0; i < PULOCK_MAX; i++)
		l->fd[i] = -1;
	if (env && *env)
		snprintf(l->dir, sizeof(l->dir), "%s", env);
	else if (geteuid() == 0 || !run || !*run)
		snprintf(l->dir, sizeof(l->dir), "/run/rcuwb/pus");
	else
		snprintf(l->dir, sizeof(l->dir), "%s/rcuwb-pus", run);
	if (usable_dir(l->dir) < 0)
		return set_err("host PU locks: %s (set RCUWB_PU_LOCKS to a writable directory)", last_err());
	return 0;
}

int pulock_try(struct pulocks *l, unsigned os_index)
{
	char path[PATH_MAX];
	int fd;

	if (os_index >= PULOCK_MAX)
		return set_err("host PU %u: more than %d PUs", os_index, PULOCK_MAX);
	if (l->fd[os_index] >= 0)
		return 1;
	if (path_fmt(path, sizeof(path), "%s/pu-%u.lock", l->dir, os_index) < 0)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return set_err("%s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;

		close(fd);
		if (err == EWOULDBLOCK)
			return 0;
		return set_err("%s: flock: %s", path, strerror(err));
	}
	l->fd[os_index] = fd;
	return 1;
}

void pulock_release(struct pulocks *l, unsigned os_index)
{
	if (os_index < PULOCK_MAX && l->fd[os_index] >= 0) {
		close(l->fd[os_index]);	/* drops the flock */
		l->fd[os_index] = -1;
	}
}

void pulock_fini(struct pulocks *l)
{
	unsigned i;

	for (i = 0; i < PULOCK_MAX; i++)
		pulock_release(l, i);
}
