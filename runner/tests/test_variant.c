/* test_variant.c: unit tests of variant files: every shipped one, and errors with file:line. */
#include <dirent.h>
#include <unistd.h>

#include "unit.h"

#include "common.h"
#include "variant.h"

static char path[64];

static void write_text(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/rcuwb-variant-%d", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void expect_error(const char *text, const char *msg)
{
	struct variant v;
	char want[1024];

	write_text(text);
	assert_int_equal(variant_load(path, &v), -1);
	snprintf(want, sizeof(want), "%s:%s", path, msg);
	if (strcmp(last_err(), want))
		fail_msg("got  '%s'\nwant '%s'", last_err(), want);
}

/* Every variant the project ships reads cleanly. */
static void test_shipped(void **state)
{
	char dir[PATH_MAX], name[PATH_MAX + 300];
	struct dirent *e;
	struct variant v;
	int n = 0;
	DIR *d;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/kernel-changes/variants", RCUWB_SRCDIR);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s/%s", dir, e->d_name);
		if (variant_load(name, &v) < 0)
			fail_msg("%s", last_err());
		n++;
	}
	closedir(d);
	assert_true(n >= 10);
}

static void test_parse(void **state)
{
	struct variant v;

	(void)state;
	write_text("# a comment\n\nsource debian 6.12 6.12.117-1~deb12u1  # pinned\nseries 6.12\n"
		   "0001-x.patch\n6.1/0002-y.patch\n");
	assert_int_equal(variant_load(path, &v), 0);
	assert_int_equal(v.source, SRC_DEBIAN);
	assert_string_equal(v.line, "6.12");
	assert_string_equal(v.pin, "6.12.117-1~deb12u1");
	assert_string_equal(v.series, "6.12");
	assert_int_equal(v.npatches, 2);
	assert_string_equal(v.patches[1], "6.1/0002-y.patch");
	/* build/kernel.sh names a missing patch by its line (rcuwb variant --shell: name_lines) */
	assert_int_equal(v.patch_line[0], 5);
	assert_int_equal(v.patch_line[1], 6);
	write_text("source git rcuwb-6.1 rcuwb/0001\n0007-probe.patch");
	assert_int_equal(variant_load(path, &v), 0);
	assert_int_equal(v.source, SRC_GIT);
	assert_string_equal(v.repo, "rcuwb-6.1");
	assert_string_equal(v.rev, "rcuwb/0001");
	assert_int_equal(v.npatches, 1);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("source debian 6\n", "1: expected 'source debian LINE [VERSION]' (e.g. 'source debian 6.12' or "
		     "'source debian 6.12 6.12.117-1~deb12u1')");
	expect_error("#\nsource svn x y\n", "2: unknown source 'svn': use 'source debian LINE [VERSION]' or "
		     "'source git REPO REV'");
	expect_error("source git repo\n", "1: expected 'source git REPO REV' (REPO: a path, a URL, or a name in "
		     "$RCUWB_CACHE/git; REV: a commit, tag or branch)");
	expect_error("source git repo $(reboot)\n", "1: 'source git repo $(reboot)': a repository or revision with "
		     "characters git and the shell would read otherwise (use letters, digits and ._+-/:@~^=)");
	expect_error("source git repo --upload-pack=x\n", "1: 'source git repo --upload-pack=x': a repository or "
		     "revision with characters git and the shell would read otherwise (use letters, digits and ._+-/:@~^=)");
	expect_error("0001-a.patch\n../../etc/passwd\n", "2: '../../etc/passwd' is not a patch file name (letters, "
		     "digits, '._+-', at most one directory of kernel-changes, no '..')");
	expect_error("0001-a.patch extra\n", "1: '0001-a.patch ...': one patch file a line, or a 'source' or "
		     "'series' line");
	expect_error("series ../x\n", "1: expected 'series DIR' (a directory of kernel-changes, e.g. 'series 6.12')");
	expect_error("0001-a.patch\r\n", "1: '0001-a.patch\r' is not a patch file name (letters, digits, '._+-', at "
		     "most one directory of kernel-changes, no '..')");
}

static void test_check_names_the_file(void **state)
{
	(void)state;
	assert_int_equal(setenv("RCUWB_CHANGES", "/nonexistent-changes", 1), 0);
	assert_int_equal(variant_check("after"), -1);
	assert_string_equal(last_err(), "unknown variant 'after': no file /nonexistent-changes/variants/after "
			    "(see kernel-changes/README.md)");
	assert_int_equal(unsetenv("RCUWB_CHANGES"), 0);
	assert_int_equal(variant_check("after"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_check_names_the_file),
	};
	int ret;

	ret = cmocka_run_group_tests_name("variant", tests, NULL, NULL);
	unlink(path);
	printf("variant: %zu passed, %d failed\n", ARRAY_SIZE(tests) - (size_t)ret, ret);
	return ret ? 1 : 0;
}
