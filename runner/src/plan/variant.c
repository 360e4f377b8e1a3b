/*
 * variant.c: kernel variant files.
 *
 * The one reader of variant files: build/kernel.sh builds from what
 * `rcuwb variant --shell` prints from it, and `rcuwb run` (and --dry-run)
 * refuses a broken variant before the first guest starts, with the file
 * and line of what is wrong.
 */
#define _GNU_SOURCE
#include "variant.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define MAX_WORDS 6

struct words {
	char w[MAX_WORDS][PATH_MAX];
	int n;
};

/* The words of one line before any '#'; -1 when there are too many or one is too long. */
static int split_words(const char *line, struct words *out)
{
	const char *p = line, *end = line + strcspn(line, "#");

	out->n = 0;
	while (p < end) {
		size_t len;

		p += strspn(p, " \t");	/* what bash's read -a splits on */
		if (p >= end)
			break;
		len = strcspn(p, " \t#");
		if (p + len > end)
			len = (size_t)(end - p);
		if (out->n == MAX_WORDS || len >= PATH_MAX)
			return -1;
		memcpy(out->w[out->n], p, len);
		out->w[out->n++][len] = '\0';
		p += len;
	}
	return 0;
}

static bool only(const char *s, const char *allowed)
{
	return *s && strspn(s, allowed) == strlen(s);
}

#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

/* A patch file: a name, or DIR/NAME under kernel-changes; never leaving it. */
static bool good_patch(const char *s)
{
	return only(s, ALNUM "._+-/") && s[0] != '/' && s[0] != '.' && !strstr(s, "..") && !strstr(s, "//");
}

static bool good_line(const char *s)
{
	const char *dot = strchr(s, '.');

	return dot && dot != s && dot[1] && only(s, "0123456789.") && !strchr(dot + 1, '.');
}

/* A git repository (path, URL, name) or revision: no whitespace, quotes or shell metacharacters. */
static bool good_git_word(const char *s)
{
	return only(s, ALNUM "._+-/:@~^=") && s[0] != '-';
}

static int parse_source(const char *where, const struct words *w, struct variant *v)
{
	if (w->n >= 2 && !strcmp(w->w[1], "debian")) {
		if (w->n < 3 || w->n > 4 || !good_line(w->w[2]) || strlen(w->w[2]) >= sizeof(v->line))
			return set_err("%s: expected 'source debian LINE [VERSION]' (e.g. 'source debian 6.12' or "
				       "'source debian 6.12 6.12.117-1~deb12u1')", where);
		if (w->n == 4 && (!only(w->w[3], ALNUM ".+~:-") || strlen(w->w[3]) >= sizeof(v->pin)))
			return set_err("%s: '%s' is not a Debian package version (digits, letters, '.', '+', '~', ':', '-')",
				       where, w->w[3]);
		v->source = SRC_DEBIAN;
		snprintf(v->line, sizeof(v->line), "%.*s", (int)sizeof(v->line) - 1, w->w[2]);
		snprintf(v->pin, sizeof(v->pin), "%.*s", (int)sizeof(v->pin) - 1, w->n == 4 ? w->w[3] : "");
		return 0;
	}
	if (w->n >= 2 && !strcmp(w->w[1], "git")) {
		if (w->n != 4)
			return set_err("%s: expected 'source git REPO REV' (REPO: a path, a URL, or a name in "
				       "$RCUWB_CACHE/git; REV: a commit, tag or branch)", where);
		if (!good_git_word(w->w[2]) || !good_git_word(w->w[3]) || strlen(w->w[3]) >= sizeof(v->rev))
			return set_err("%s: 'source git %s %s': a repository or revision with characters git and the "
				       "shell would read otherwise (use letters, digits and ._+-/:@~^=)", where, w->w[2], w->w[3]);
		v->source = SRC_GIT;
		snprintf(v->repo, sizeof(v->repo), "%.*s", (int)sizeof(v->repo) - 1, w->w[2]);
		snprintf(v->rev, sizeof(v->rev), "%.*s", (int)sizeof(v->rev) - 1, w->w[3]);
		return 0;
	}
	return set_err("%s: unknown source '%s': use 'source debian LINE [VERSION]' or 'source git REPO REV'",
		       where, w->n >= 2 ? w->w[1] : "");
}

static int parse_patch(const char *where, const char *name, char (*names)[128], int *n, int max)
{
	if (!good_patch(name) || strlen(name) >= 128)
		return set_err("%s: '%s' is not a patch file name (letters, digits, '._+-', at most one directory "
			       "of kernel-changes, no '..')", where, name);
	if (*n == max)
		return set_err("%s: more than %d patches", where, max);
	memcpy(names[(*n)++], name, strlen(name) + 1);	/* shorter than 128: checked above */
	return 0;
}

/* Call fn on every line of a file, with "FILE:LINE" to name it. */
static int each_line(const char *path, int (*fn)(const char *where, const char *line, void *arg), void *arg)
{
	struct buf b = { 0 };
	char where[PATH_MAX + 16];
	char *p, *nl;
	int n = 0, ret = 0;

	if (read_file(path, &b) < 0)
		return -1;
	for (p = b.data; ret == 0 && p && p < b.data + b.len; p = nl ? nl + 1 : NULL) {
		nl = memchr(p, '\n', (size_t)(b.data + b.len - p));
		if (nl)
			*nl = '\0';
		snprintf(where, sizeof(where), "%s:%d", path, ++n);
		if (strlen(p) != (size_t)((nl ? nl : b.data + b.len) - p))
			ret = set_err("%s: a NUL byte: this is not a text file", where);
		else
			ret = fn(where, p, arg);
	}
	buf_free(&b);
	return ret;
}

static int variant_line(const char *where, const char *line, void *arg)
{
	struct variant *v = arg;
	struct words w;

	v->at++;
	if (split_words(line, &w) < 0)
		return set_err("%s: too many or too long words", where);
	if (!w.n)
		return 0;
	if (!strcmp(w.w[0], "source"))
		return parse_source(where, &w, v);
	if (!strcmp(w.w[0], "series")) {
		if (w.n != 2 || !only(w.w[1], ALNUM "._-") || w.w[1][0] == '.' || strlen(w.w[1]) >= sizeof(v->series))
			return set_err("%s: expected 'series DIR' (a directory of kernel-changes, e.g. 'series 6.12')", where);
		snprintf(v->series, sizeof(v->series), "%.*s", (int)sizeof(v->series) - 1, w.w[1]);
		return 0;
	}
	if (w.n != 1)
		return set_err("%s: '%s ...': one patch file a line, or a 'source' or 'series' line", where, w.w[0]);
	if (parse_patch(where, w.w[0], v->patches, &v->npatches, VARIANT_MAX_PATCHES) < 0)
		return -1;
	v->patch_line[v->npatches - 1] = v->at;
	return 0;
}

int variant_load(const char *path, struct variant *v)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->path, sizeof(v->path), "%s", path);
	v->source = SRC_DEBIAN;
	return each_line(path, variant_line, v);
}

const char *variant_changes_dir(void)
{
	static char path[PATH_MAX];

	return data_path("RCUWB_CHANGES", "kernel-changes", path, sizeof(path));
}

int variant_file(const char *arg, char *path, size_t size)
{
	if (strchr(arg, '/')) {
		if (path_fmt(path, size, "%s", arg) < 0)
			return -1;
		return access(path, R_OK) < 0 ? set_err("cannot read variant file %s: %s", path, strerror(errno)) : 0;
	}
	if (!variant_changes_dir() || path_fmt(path, size, "%s/variants/%s", variant_changes_dir(), arg) < 0)
		return -1;
	if (access(path, R_OK) < 0)
		return set_err("unknown variant '%s': no file %s (see kernel-changes/README.md)", arg, path);
	return 0;
}

int variant_check(const char *name)
{
	char path[PATH_MAX];
	struct variant *v;
	int ret;

	if (strchr(name, '/'))
		return set_err("bad variant name '%s' (letters, digits, . _ -)", name);
	if (variant_file(name, path, sizeof(path)) < 0)
		return -1;
	v = malloc(sizeof(*v));
	if (!v)
		return set_err("out of memory");
	ret = variant_load(path, v);
	free(v);
	return ret;
}
