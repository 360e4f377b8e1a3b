/*
 * side.c: what one side of `rcuwb compare` names, turned into a kernel
 * variant that build/kernel.sh builds and the runner boots.
 *
 * A named variant stays what it is.  A git revision becomes the variant
 * REPO.COMMIT12 ("source git REPO COMMIT").  Patches become the variant
 * BASE.pHASH: the other side's variant file with the patches appended,
 * HASH the SHA-256 of their contents, so the same patches make the same
 * variant (and, by build/kernel.sh's content key, the same build).  The
 * generated files live in a changes directory of their own beside links to
 * kernel-changes/, so kernel-changes/ itself is never written to.
 */
#define _GNU_SOURCE
#include "side.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "commits.h"
#include "common.h"

/* REPO@REV with REPO an existing directory: split; false otherwise. */
static bool split_git(const char *arg, char *repo, size_t cap, const char **rev)
{
	const char *at = strrchr(arg, '@');
	struct stat st;

	if (!at || at == arg || !at[1] || (size_t)(at - arg) >= PATH_MAX || cap < PATH_MAX)
		return false;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%.*s", (int)(at - arg), arg);
	*rev = at + 1;
	/* absolute: build/kernel.sh takes a REPO without '/' for a name in $RCUWB_CACHE/git */
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && realpath(path, repo) && strlen(repo) < cap;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.patch files of a directory, in name order. */
static int dir_patches(const char *dir, struct side *s)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[VARIANT_MAX_PATCHES];
	int n = 0, i, ret = 0;

	if (!d)
		return set_err("%s: cannot read the directory: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l < 7 || strcmp(e->d_name + l - 6, ".patch"))
			continue;
		if (n == VARIANT_MAX_PATCHES) {
			ret = set_err("%s: more than %d patches", dir, VARIANT_MAX_PATCHES);
			break;
		}
		if (!(names[n] = strdup(e->d_name))) {
			ret = set_err("out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		if (!ret && path_fmt(s->patches[i], sizeof(s->patches[i]), "%s/%s", dir, names[i]) < 0)
			ret = -1;
		free(names[i]);
	}
	s->npatches = n;
	if (!ret && !n)
		return set_err("%s: no *.patch file in the directory", dir);
	return ret;
}

int side_parse(const char *arg, struct side *s)
{
	const char *rev;
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->arg = arg;
	if (split_git(arg, s->repo, sizeof(s->repo), &rev)) {
		s->kind = SIDE_GIT;
		if (commit_resolve(s->repo, rev, s->commit, sizeof(s->commit)) < 0)
			return set_err("%s: %s", arg, last_err());
		commit_variant(s->repo, s->commit, s->variant, sizeof(s->variant));
		snprintf(s->text, sizeof(s->text), "# rcuwb compare: %s = %s\nsource git %s %s\n", arg,
			 s->commit, s->repo, s->commit);
		return 0;
	}
	if (stat(arg, &st) == 0) {
		s->kind = SIDE_PATCHES;
		if (S_ISDIR(st.st_mode))
			return dir_patches(arg, s);
		snprintf(s->patches[0], sizeof(s->patches[0]), "%s", arg);
		s->npatches = 1;
		return 0;
	}
	if (strchr(arg, '/') || strchr(arg, '@'))
		return set_err("%s: no such file or directory, and not REPO@REV of a git directory", arg);
	s->kind = SIDE_VARIANT;
	snprintf(s->variant, sizeof(s->variant), "%s", arg);
	return variant_check(arg);
}

int side_first_parent(const struct side *cand, struct side *base)
{
	char arg[PATH_MAX + 64];
	static char keep[PATH_MAX + 64];

	if (cand->kind != SIDE_GIT)
		return set_err("%s: give BASE as well (only REPO@REV stands alone: BASE is its first parent)",
			       cand->arg);
	snprintf(arg, sizeof(arg), "%s@%s^", cand->repo, cand->commit);
	snprintf(keep, sizeof(keep), "%s", arg);
	if (side_parse(keep, base) < 0)
		return set_err("%s has no first parent: give BASE", cand->arg);
	return 0;
}

/* SHA-256 of the patches' contents, as 10 hex digits. */
static int patches_hash(const struct side *s, char out[11])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	int i, ret = 0;

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		ret = set_err("sha256: cannot initialise");
	for (i = 0; i < s->npatches && !ret; i++) {
		struct buf b = { 0 };

		if (read_file(s->patches[i], &b) < 0)
			ret = -1;
		else if (!EVP_DigestUpdate(ctx, b.data, b.len))
			ret = set_err("sha256: cannot hash %s", s->patches[i]);
		buf_free(&b);
	}
	if (!ret && !EVP_DigestFinal_ex(ctx, md, &len))
		ret = set_err("sha256: cannot finish");
	EVP_MD_CTX_free(ctx);
	for (i = 0; !ret && i < 5; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	return ret;
}

/* The patch file's name as a variant file may hold it: letters, digits and ._+- only. */
static void patch_name(const char *path, int i, char *out, size_t cap)
{
	const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t k;

	snprintf(out, cap, "%s", b);
	for (k = 0; out[k]; k++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-", out[k]))
			out[k] = '_';
	if (out[0] == '.' || out[0] == '-')
		snprintf(out, cap, "%02d.patch", i + 1);
}

int side_on_top(struct side *s, const struct side *base)
{
	char hash[11], path[PATH_MAX + 80], name[128];
	struct buf b = { 0 };
	size_t len;
	int i;

	if (patches_hash(s, hash) < 0)
		return -1;
	snprintf(s->variant, sizeof(s->variant), "%.40s.p%s", base->variant, hash);
	if (base->kind == SIDE_PATCHES)
		return set_err("%s: patches on top of patches: make one side a variant or REPO@REV", s->arg);
	if (base->kind == SIDE_GIT) {
		snprintf(s->text, sizeof(s->text), "%s", base->text);
	} else {
		if (!variant_changes_dir() ||
		    path_fmt(path, sizeof(path), "%s/variants/%s", variant_changes_dir(), base->variant) < 0 ||
		    read_file(path, &b) < 0)
			return -1;
		snprintf(s->text, sizeof(s->text), "%.*s", (int)b.len, b.data ? b.data : "");
		buf_free(&b);
	}
	len = strlen(s->text);
	if (len && s->text[len - 1] != '\n' && len + 1 < sizeof(s->text))
		s->text[len++] = '\n';
	len += (size_t)snprintf(s->text + len, sizeof(s->text) - len,
				"# rcuwb compare: %s on top of %s\n", s->arg, base->arg);
	for (i = 0; i < s->npatches && len < sizeof(s->text); i++) {
		patch_name(s->patches[i], i, name, sizeof(name));
		len += (size_t)snprintf(s->text + len, sizeof(s->text) - len, "p-%s/%s\n", hash, name);
	}
	return len < sizeof(s->text) ? 0 : set_err("%s: too many patches for one variant file", s->arg);
}

/* dir/NAME -> target, unless it is there already. */
static int link_into(const char *dir, const char *name, const char *target)
{
	char path[PATH_MAX + 300];

	if (path_fmt(path, sizeof(path), "%s/%s", dir, name) < 0)
		return -1;
	if (symlink(target, path) < 0 && errno != EEXIST)
		return set_err("cannot link %s to %s: %s", path, target, strerror(errno));
	return 0;
}

/* Every entry of src (but skip) linked into dst. */
static int link_entries(const char *src, const char *dst, const char *skip)
{
	char target[PATH_MAX + 300];
	DIR *d = opendir(src);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return set_err("cannot read %s: %s", src, strerror(errno));
	while (!ret && (e = readdir(d))) {
		if (e->d_name[0] == '.' || (skip && !strcmp(e->d_name, skip)))
			continue;
		ret = path_fmt(target, sizeof(target), "%s/%s", src, e->d_name) < 0 ? -1 :
			link_into(dst, e->d_name, target);
	}
	closedir(d);
	return ret;
}

/* A generated side's variant file, and its patches under p-HASH/. */
static int write_side(const char *dir, const struct side *s)
{
	char path[PATH_MAX + 200], name[128];
	const char *hash = strrchr(s->variant, '.') ? strrchr(s->variant, '.') + 2 : "";
	int i;

	for (i = 0; s->kind == SIDE_PATCHES && i < s->npatches; i++) {
		patch_name(s->patches[i], i, name, sizeof(name));
		if (path_fmt(path, sizeof(path), "%s/p-%s", dir, hash) < 0 || mkdir_p(path) < 0 ||
		    path_fmt(path, sizeof(path), "%s/p-%s/%s", dir, hash, name) < 0 ||
		    copy_file(s->patches[i], path) < 0)
			return -1;
	}
	if (path_fmt(path, sizeof(path), "%s/variants/%s", dir, s->variant) < 0)
		return -1;
	unlink(path);	/* a link to kernel-changes/ must not be written through */
	return write_file(path, s->text, strlen(s->text));
}

int side_changes_dir(const char *dir, struct side *const *sides, int n)
{
	char src[PATH_MAX], vars[PATH_MAX + 16];
	int i;

	if (!variant_changes_dir())
		return -1;
	snprintf(src, sizeof(src), "%s", variant_changes_dir());
	if (path_fmt(vars, sizeof(vars), "%s/variants", dir) < 0 || mkdir_p(vars) < 0 ||
	    link_entries(src, dir, "variants") < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (sides[i]->kind != SIDE_VARIANT && write_side(dir, sides[i]) < 0)
			return -1;
	if (path_fmt(src + strlen(src), sizeof(src) - strlen(src), "/variants") < 0 ||
	    link_entries(src, vars, NULL) < 0)
		return -1;
	return 0;
}
