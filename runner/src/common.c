/* common.c: error reporting, output modes and small helpers. */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

bool json_output;
bool quiet;

static char errmsg[1024];

int set_err(const char *fmt, ...)
{
	char msg[sizeof(errmsg)];
	va_list ap;

	/* through a copy: callers may wrap the last error, set_err("...: %s", last_err()) */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(errmsg, msg, sizeof(errmsg));
	return -1;
}

const char *last_err(void)
{
	return errmsg[0] ? errmsg : "unknown error";
}

void report_err(void)
{
	if (json_output) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "error", json_object_new_string(last_err()));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		fprintf(stderr, "rcuwb: error: %s\n", last_err());
	}
}

void info(const char *fmt, ...)
{
	va_list ap;

	if (quiet || json_output)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *d;

		while (cap < b->len + n + 1)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d)
			return set_err("out of memory");
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n, ret;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return set_err("out of memory");
	ret = buf_append(b, s, (size_t)n);
	free(s);
	return ret;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int path_fmt(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap)
		return set_err("path too long: %s...", out);
	return 0;
}

/* BINDIR/REL canonical into out when it holds stats/ and perf-configs/ (rcuwb's data). */
static bool holds_data(const char *bindir, const char *rel, char *out)
{
	char cand[PATH_MAX], sub[PATH_MAX + 16];

	if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", bindir, rel) >= sizeof(cand) || !realpath(cand, out))
		return false;
	snprintf(sub, sizeof(sub), "%s/stats", out);
	if (access(sub, R_OK | X_OK))
		return false;
	snprintf(sub, sizeof(sub), "%s/perf-configs", out);
	return access(sub, R_OK | X_OK) == 0;
}

const char *data_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX], *slash;
	const char *env = getenv("RCUWB_DATADIR");

	if (env && *env) {
		if (access(env, R_OK | X_OK))
			return set_err("RCUWB_DATADIR=%s: %s", env, strerror(errno)), NULL;
		snprintf(dir, sizeof(dir), "%s", env);
		return dir;
	}
	if (!realpath("/proc/self/exe", exe))
		return set_err("no rcuwb data directory: /proc/self/exe: %s (set RCUWB_DATADIR)", strerror(errno)), NULL;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	if (holds_data(exe, "..", dir) || holds_data(exe, "../share/rcuwb", dir))
		return dir;
	set_err("no rcuwb data directory: RCUWB_DATADIR is unset and neither %s/.. (a checkout) nor "
		"%s/../share/rcuwb (an install) holds stats/ and perf-configs/", exe, exe);
	return NULL;
}

int read_file(const char *path, struct buf *out)
{
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return set_err("cannot open %s: %s", path, strerror(errno));
	out->len = 0;
	if (buf_append(out, "", 0) < 0)
		goto fail;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (buf_append(out, chunk, (size_t)n) < 0)
			goto fail;
	if (n < 0) {
		set_err("cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return set_err("cannot create %s: %s", path, strerror(errno));
	if (fwrite(data, 1, len, f) != len || fclose(f) != 0)
		return set_err("cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* Streamed in chunks: a vmlinux is staged per run and need not sit in memory. */
int copy_file(const char *from, const char *to)
{
	char chunk[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, ret = 0;
	ssize_t n;

	if (in < 0)
		return set_err("cannot open %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return set_err("cannot create %s: %s", to, strerror(errno));
	}
	while ((n = read(in, chunk, sizeof(chunk))) > 0)
		if (write(out, chunk, (size_t)n) != n) {
			ret = set_err("cannot write %s: %s", to, strerror(errno));
			break;
		}
	if (n < 0)
		ret = set_err("cannot read %s: %s", from, strerror(errno));
	if (close(out) < 0 && ret == 0)
		ret = set_err("cannot write %s: %s", to, strerror(errno));
	close(in);
	return ret;
}

int mkdir_p(const char *path)
{
	char tmp[4096];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return set_err("path too long: %s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return set_err("cannot create directory %s: %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return set_err("cannot create directory %s: %s", tmp, strerror(errno));
	return 0;
}

int runtime_dir(const char *env, const char *leaf, char *out, size_t cap)
{
	const char *set = getenv(env), *run = getenv("XDG_RUNTIME_DIR");
	int n;

	if (set && *set)
		n = snprintf(out, cap, "%s", set);
	else if (geteuid() == 0 || !run || !*run)
		n = snprintf(out, cap, "/run/rcuwb/%s", leaf);
	else
		n = snprintf(out, cap, "%s/rcuwb-%s", run, leaf);
	if (n < 0 || (size_t)n >= cap)
		return set_err("%s: path too long", env);
	if (mkdir_p(out) < 0)
		return -1;
	if (access(out, W_OK | X_OK) < 0)
		return set_err("%s: %s", out, strerror(errno));
	return 0;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int duration_s(const char *v, long *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || x < 0 || strlen(end) > 1 || (*end && !strchr("smh", *end)))
		return -1;
	*out = x * (*end == 'h' ? 3600 : *end == 'm' ? 60 : 1);
	return 0;
}

void iso_time(double t, char out[32])
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *data_path(const char *env, const char *rel, char *out, size_t cap)
{
	const char *e = env ? getenv(env) : NULL, *dir;

	if (e && *e)
		return e;
	if (!(dir = data_dir()) || path_fmt(out, cap, "%s/%s", dir, rel) < 0)
		return NULL;
	return out;
}

const char *rscript_path(const char *name, char *out, size_t cap)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "stats/exec/rcuwb-%s", name);
	return data_path(NULL, rel, out, cap);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}
