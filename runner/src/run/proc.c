/*
 * proc.c: running other programs.
 *
 * fork and execvp with the argument vector as it is (no shell, so nothing
 * in a schedule file is ever interpreted by one), a pipe for the input or
 * the output, and the exit status turned into one number.
 */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(const char *const *argv, int in_fd, int out_fd)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (dup2(in_fd >= 0 ? in_fd : null, 0) < 0 || (out_fd >= 0 && dup2(out_fd, 1) < 0))
		_exit(126);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "rcuwb: error: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int feed(int fd, const char *input)
{
	size_t len = strlen(input), off = 0;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	ssize_t w = 0;

	while (off < len && (w = write(fd, input + off, len - off)) > 0)
		off += (size_t)w;
	signal(SIGPIPE, old);
	close(fd);
	/* a command that does not read its input is not an error */
	return w < 0 && errno != EPIPE ? -1 : 0;
}

static int drain(int fd, struct buf *out)
{
	char chunk[4096];
	ssize_t r;

	while ((r = read(fd, chunk, sizeof(chunk))) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && buf_append(out, chunk, (size_t)r) < 0)
			break;
	close(fd);
	return r < 0 ? -1 : 0;
}

int proc_run(const char *const *argv, const char *input, struct buf *out)
{
	int fds[2] = { -1, -1 }, status, ret = 0;
	pid_t pid;

	if ((input || out) && pipe2(fds, O_CLOEXEC) < 0)
		return set_err("cannot run %s: pipe: %s", argv[0], strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child(argv, input ? fds[0] : -1, out ? fds[1] : -1);
	if (pid < 0) {
		ret = set_err("cannot run %s: fork: %s", argv[0], strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	if (input) {
		close(fds[0]);
		ret = feed(fds[1], input);
	} else if (out) {
		close(fds[1]);
		ret = drain(fds[0], out);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return set_err("cannot run %s: wait: %s", argv[0], strerror(errno));
	if (ret < 0)
		return set_err("cannot run %s: i/o: %s", argv[0], strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* "PROG ARG... failed (exit N)", the command's first words; returns -1 */
static int failed(const char *const *argv, int rc)
{
	struct buf cmd = { 0 };
	int i, ret;

	for (i = 0; argv[i] && i < 6; i++)
		buf_printf(&cmd, "%s%s", i ? " " : "", argv[i]);
	ret = set_err("%s failed (exit %d)", cmd.data ? cmd.data : argv[0], rc);
	buf_free(&cmd);
	return ret;
}

int proc_line(const char *const *argv, char *line, size_t cap)
{
	struct buf out = { 0 };
	int rc = proc_run(argv, NULL, &out);

	if (rc != 0) {
		buf_free(&out);
		return rc < 0 ? -1 : failed(argv, rc);
	}
	while (out.len && (out.data[out.len - 1] == '\n' || out.data[out.len - 1] == '\r'))
		out.len--;
	snprintf(line, cap, "%.*s", (int)out.len, out.data ? out.data : "");
	buf_free(&out);
	return 0;
}

const char *proc_self(void)
{
	static char self[4096];
	ssize_t n;

	if (!self[0]) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			snprintf(self, sizeof(self), "rcuwb");
		else
			self[n] = '\0';
	}
	return self;
}
