/* cmd_rerun.c: rcuwb rerun: repeat one stored run with the same kernel, XML and command line. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runline.h"
#include "session.h"
#include "cli.h"
#include "common.h"
#include "evloop.h"
#include "db.h"

static const char rerun_help[] =
	"Usage: rcuwb rerun [--timeout S] RUN_ID\n"
	"\n"
	"Boot the domain XML kept in a stored run's directory again (same kernel\n"
	"command line, topology, pinning), with the same kernel variant, and store\n"
	"the result as a new run of the same matrix and cell (rerun_of = RUN_ID).\n"
	"Refuses when the variant's kernel was rebuilt with another configuration or\n"
	"other patches since: the run would not be the same.  Like the rcutorture\n"
	"scripts' kvm-again.sh.\n";

/* The spec the outcome is judged against, from the stored run. */
/* What follows the first `tag` in `s`, NULL when there is none. */
static const char *after(const char *s, const char *tag)
{
	const char *p = strstr(s, tag);

	return p ? p + strlen(tag) : NULL;
}

static int spec_of(const struct stored_run *r, struct run_spec *s)
{
	const char *p;

	run_spec_init(s);
	snprintf(s->matrix, sizeof(s->matrix), "%s", r->matrix);
	s->rep = r->rep;
	snprintf(s->kconfig, sizeof(s->kconfig), "%s", r->kconfig[0] ? r->kconfig : KCONFIG_DEFAULT);
	s->kind = !strcmp(r->kind, "probe") ? RUN_PROBE : RUN_RCUSCALE;
	s->gp = !strcmp(r->gp_mode, "expedited") ? GP_EXPEDITED : !strcmp(r->gp_mode, "async") ? GP_ASYNC : GP_NORMAL;
	s->nwriters = r->nwriters;
	s->nreaders = r->nreaders;
	/* what the cell's name says of the rest (run_cell_key()): "/w1-r0-a10" and "/f=srcu" */
	p = after(r->cell, "-r");
	if (s->gp == GP_ASYNC && p && !strncmp(p + strspn(p, "0123456789"), "-a", 2))
		s->async_max = atoi(p + strspn(p, "0123456789") + 2);
	p = after(r->cell, "/f=");
	if (p)
		snprintf(s->flavour, sizeof(s->flavour), "%.*s", (int)strcspn(p, "/"), p);
	snprintf(s->boot_params, sizeof(s->boot_params), "%s", r->boot_params);
	return topo_make(&s->topo, (unsigned)r->vcpus, r->numa_nodes > 1 ? (unsigned)r->numa_nodes : 0,
			 (unsigned)r->mem_mib, (unsigned)r->sockets, (unsigned)r->cores, (unsigned)r->threads);
}

static int same_kernel(const struct stored_run *r, const struct kernel_build *k)
{
	if (strcmp(r->config_sha, k->config_sha) || strcmp(r->patches, k->patches_json))
		return set_err("run %" PRId64 " used kernel %s with config %s and patches %s; the kernel built "
			       "now has config %s and patches %s: check out the kernel-changes and Kconfig "
			       "fragments of then and 'make kernel VARIANTS=%s'", r->id, r->variant,
			       r->config_sha, r->patches, k->config_sha, k->patches_json, r->variant);
	return 0;
}

static int read_stored(const struct stored_run *r, const char *name, struct buf *out)
{
	char path[4200];

	if (path_fmt(path, sizeof(path), "%s/%s", r->run_dir, name) < 0)
		return -1;
	return read_file(path, out);
}

int do_rerun(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	struct buf xml = { 0 }, cmdline = { 0 };
	struct stored_run r;
	struct kernel_build k = { 0 };
	struct session sess = { 0 };
	struct hosts hs;
	struct job j = { 0 };
	int c, id, timeout = 300, ret = -1;
	sqlite3 *db;

	while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_int("--timeout", optarg, 1, 86400, &timeout) < 0)
				return -1;
			break;
		case 'h': print_usage(rerun_help); return 0;
		default: return bad_usage("rerun");
		}
	}
	if (optind != argc - 1 || parse_int("RUN_ID", argv[optind], 1, 1 << 30, &id) < 0)
		return set_err("rerun takes one run id: see 'rcuwb rerun --help'");
	if (db_open(opt_db, &db) < 0)
		return -1;
	ret = db_get_run(db, id, &r);
	db_close(db);
	if (ret < 0 || spec_of(&r, &j.spec) < 0 || kernel_load(r.variant, j.spec.kconfig, &k) < 0 || same_kernel(&r, &k) < 0 ||
	    read_stored(&r, "domain.xml", &xml) < 0 || read_stored(&r, "cmdline", &cmdline) < 0)
		goto out;
	j.spec.kernel = &k;
	j.spec.timeout_s = timeout;
	j.xml_again = xml.data;
	j.env.rerun_of = id;
	hosts_single(&hs, opt_uri);
	ret = session_open(&sess, &hs, &k, "auto", NULL);
	if (ret == 0 && job_start(&sess, &j) < 0 && j.guest.end != END_START_FAILED)
		ret = -1;
	if (ret == 0) {
		snprintf(j.env.cmdline, sizeof(j.env.cmdline), "%s", cmdline.data);
		ret = evloop_wait(&j.host->hv, 1);
	}
	if (ret == 0 && (ret = job_finish(&sess, &j)) == 0)
		runline_print(&j, 1, 1);
	job_free(&j);
	session_close(&sess);
out:
	kernel_free(&k);
	buf_free(&xml);
	buf_free(&cmdline);
	return ret;
}
