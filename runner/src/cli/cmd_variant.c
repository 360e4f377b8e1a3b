/* cmd_variant.c: rcuwb variant: a kernel variant file read and checked, as everything that builds or boots it reads it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "common.h"
#include "variant.h"

static const char variant_help[] =
	"Usage: rcuwb variant [--shell] NAME|FILE\n"
	"\n"
	"Read a kernel variant file (kernel-changes/variants/NAME, or FILE when the\n"
	"argument holds a '/'; format in kernel-changes/README.md), check it, and\n"
	"print its source, series and patches with the line each patch is on.  A\n"
	"bad line is one error naming the file and the line.  This is the one\n"
	"reader of variant files: rcuwb run checks a matrix's variants with it and\n"
	"build/kernel.sh builds from what --shell prints.\n"
	"\n"
	"  --shell      shell assignments for build/kernel.sh: src_kind, deb_line,\n"
	"               deb_pin, git_repo, git_rev, series, names=(...) and\n"
	"               name_lines=(...), every value single-quoted\n"
	"  -j           (global) JSON\n"
	"  -h, --help   this text\n";

/* 'value' for a shell: every ' becomes '\'' */
static void shell_quote(const char *s)
{
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

static void shell_var(const char *name, const char *value)
{
	printf("%s=", name);
	shell_quote(value);
	putchar('\n');
}

static void print_shell(const struct variant *v)
{
	int i;

	shell_var("src_kind", v->source == SRC_GIT ? "git" : "debian");
	shell_var("deb_line", v->line);
	shell_var("deb_pin", v->pin);
	shell_var("git_repo", v->repo);
	shell_var("git_rev", v->rev);
	shell_var("series", v->series);
	fputs("names=(", stdout);
	for (i = 0; i < v->npatches; i++) {
		if (i)
			putchar(' ');
		shell_quote(v->patches[i]);
	}
	fputs(")\nname_lines=(", stdout);
	for (i = 0; i < v->npatches; i++)
		printf("%s%d", i ? " " : "", v->patch_line[i]);
	fputs(")\n", stdout);
}

static void print_json(const char *arg, const struct variant *v)
{
	json_object *o = json_object_new_object(), *src = json_object_new_object();
	json_object *patches = json_object_new_array();
	int i;

	json_object_object_add(o, "variant", json_object_new_string(arg));
	json_object_object_add(o, "file", json_object_new_string(v->path));
	if (v->source == SRC_GIT) {
		json_object_object_add(src, "kind", json_object_new_string("git"));
		json_object_object_add(src, "repo", json_object_new_string(v->repo));
		json_object_object_add(src, "rev", json_object_new_string(v->rev));
	} else {
		json_object_object_add(src, "kind", json_object_new_string("debian"));
		json_object_object_add(src, "line", v->line[0] ? json_object_new_string(v->line) : NULL);
		json_object_object_add(src, "version", v->pin[0] ? json_object_new_string(v->pin) : NULL);
	}
	json_object_object_add(o, "source", src);
	json_object_object_add(o, "series", v->series[0] ? json_object_new_string(v->series) : NULL);
	for (i = 0; i < v->npatches; i++) {
		json_object *p = json_object_new_object();

		json_object_object_add(p, "name", json_object_new_string(v->patches[i]));
		json_object_object_add(p, "line", json_object_new_int(v->patch_line[i]));
		json_object_array_add(patches, p);
	}
	json_object_object_add(o, "patches", patches);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void print_human(const struct variant *v)
{
	int i;

	printf("%s\n", v->path);
	if (v->source == SRC_GIT)
		printf("  source   git %s %s\n", v->repo, v->rev);
	else
		printf("  source   debian %s %s\n", v->line[0] ? v->line : "(the default line)",
		       v->pin[0] ? v->pin : "(the newest package)");
	printf("  series   %s\n", v->series[0] ? v->series : "(the tree's line)");
	for (i = 0; i < v->npatches; i++)
		printf("  line %-3d %s\n", v->patch_line[i], v->patches[i]);
}

int do_variant(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shell", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char path[PATH_MAX];
	struct variant *v;
	bool shell = false;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': shell = true; break;
		case 'h': print_usage(variant_help); return 0;
		default: return bad_usage("variant");
		}
	}
	if (optind != argc - 1)
		return set_err("variant takes one variant name or file: see 'rcuwb variant --help'");
	if (variant_file(argv[optind], path, sizeof(path)) < 0)
		return -1;
	v = malloc(sizeof(*v));
	if (!v)
		return set_err("out of memory");
	ret = variant_load(path, v);
	if (ret == 0 && shell)
		print_shell(v);
	else if (ret == 0 && json_output)
		print_json(argv[optind], v);
	else if (ret == 0)
		print_human(v);
	free(v);
	return ret;
}
