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

int pulock_init(struct pulocks *l)
{
	unsigned i;

	for (i = 0; i < PULOCK_MAX; i++)
		l->fd[i] = -1;
	if (runtime_dir("RCUWB_PU_LOCKS", "pus", l->dir, sizeof(l->dir)) < 0)
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
