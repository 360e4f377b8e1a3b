/* fuzz_file.h: the harnesses of file parsers write each input to a file of their own first. */
#ifndef RCUWB_FUZZ_FILE_H
#define RCUWB_FUZZ_FILE_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The input as the file /tmp/rcuwb-fuzz-PID/NAME (the parsers name the
 * file in their errors and take the matrix's name from it); NULL when it
 * cannot be written, which ends the run: a harness that silently tests
 * nothing would be worse.
 */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[128];
	int fd;

	setenv("RCUWB_DATADIR", RCUWB_SRCDIR, 0);	/* the checkout's perf-configs/ (the harness is in obj/fuzz) */
	snprintf(path, sizeof(path), "/tmp/rcuwb-fuzz-%d", (int)getpid());
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "/tmp/rcuwb-fuzz-%d/%s", (int)getpid(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		perror(path);
		abort();
	}
	close(fd);
	return path;
}

#endif
