/* cmd_parse.c: rcuwb parse: what a console log says (samples, statistics, probe, badness). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "common.h"
#include "console.h"
#include "gpstats.h"
#include "kvmftrace.h"

static const char parse_help[] =
	"Usage: rcuwb parse [--kvm-recheck] [--prefix P] CONSOLE_LOG\n"
	"\n"
	"Read a guest console log and print the run's summary: rcuscale samples and\n"
	"grace-period statistics in microseconds (percentiles by nearest rank, as\n"
	"the kernel's tools/testing/selftests/rcutorture/bin/kvm-recheck-rcuscale.sh\n"
	"defines them), rcuscale errors, mid-boot probe lines, the topology the\n"
	"guest reported, its boot time and kernel badness.\n"
	"\n"
	"  --kvm-recheck   print exactly what kvm-recheck-rcuscale.sh prints (from the\n"
	"                  expedited GPs of an ftrace dump, when the log has one:\n"
	"                  kvm-recheck-rcuscale-ftrace.sh)\n"
	"  --prefix P      the kernel's rcuscale console prefix: rcu-scale (default),\n"
	"                  or rcu-perf for a kernel before 5.11 (build.json's\n"
	"                  rcuscale_console)\n"
	"  -h, --help      this text\n";

/*
 * kvm-recheck-rcuscale.sh: the ftrace dump's expedited GPs when it holds
 * enough of them (kvm-recheck-rcuscale-ftrace.sh), else rcuscale's lines.
 */
static int kvm_recheck(const char *path, const struct console *c)
{
	struct buf text = { 0 };
	int ret = read_file(path, &text);

	if (!ret)
		ret = kvm_recheck_ftrace(stdout, text.data ? text.data : "", text.len);
	buf_free(&text);
	return ret == KVMFTRACE_NOT_MINE ? gp_print_kvm_recheck(stdout, c) : ret;
}

static json_object *jdouble(double v)
{
	return json_object_new_double(v);
}

static void print_json(const char *path, const struct console *c, const struct gp_stats *st)
{
	json_object *o = json_object_new_object(), *gp = json_object_new_object();
	json_object *probes = json_object_new_array(), *bad = json_object_new_object();
	size_t i;

	json_object_object_add(o, "log", json_object_new_string(path));
	json_object_object_add(gp, "samples", json_object_new_int64((int64_t)st->n));
	if (st->n) {
		json_object_object_add(gp, "avg_us", jdouble(st->avg));
		json_object_object_add(gp, "min_us", jdouble(st->min));
		json_object_object_add(gp, "p50_us", jdouble(st->p50));
		json_object_object_add(gp, "p90_us", jdouble(st->p90));
		json_object_object_add(gp, "p99_us", jdouble(st->p99));
		json_object_object_add(gp, "max_us", jdouble(st->max));
	}
	if (c->have_summary) {
		json_object_object_add(gp, "gps", json_object_new_int64(c->gps));
		json_object_object_add(gp, "batches", json_object_new_int64(c->batches));
		json_object_object_add(gp, "duration_ns", json_object_new_int64((int64_t)c->duration_ns));
	}
	json_object_object_add(gp, "errors", json_object_new_int(c->nerrors));
	if (c->nerrors)
		json_object_object_add(gp, "first_error", json_object_new_string(c->first_error));
	json_object_object_add(gp, "aborted", json_object_new_boolean(c->aborted));
	json_object_object_add(o, "rcuscale", gp);
	if (c->smp_cpus >= 0) {
		json_object_object_add(o, "guest_cpus", json_object_new_int(c->smp_cpus));
		json_object_object_add(o, "guest_nodes", json_object_new_int(c->smp_nodes));
	}
	if (c->boot_time_s >= 0)
		json_object_object_add(o, "boot_time_s", jdouble(c->boot_time_s));
	for (i = 0; i < BAD_NR; i++)
		json_object_object_add(bad, badness_name(i), json_object_new_int(c->bad_count[i]));
	json_object_object_add(o, "badness", bad);
	for (i = 0; i < c->nprobes; i++) {
		const struct probe_result *p = &c->probes[i];
		json_object *e = json_object_new_object();

		json_object_object_add(e, "stage", json_object_new_int(p->stage));
		json_object_object_add(e, "point", json_object_new_string(p->point));
		json_object_object_add(e, "prim", json_object_new_string(p->prim));
		json_object_object_add(e, "outcome", json_object_new_string(p->hung ? "deadlock" : "ok"));
		if (!p->hung)
			json_object_object_add(e, "ns", json_object_new_int64(p->ns));
		json_object_array_add(probes, e);
	}
	json_object_object_add(o, "probes", probes);
	json_object_object_add(o, "probe_done", json_object_new_boolean(c->probe_done));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
	json_object_put(o);
}

static void print_human(const char *path, const struct console *c, const struct gp_stats *st)
{
	size_t i;

	printf("%s\n", path);
	if (st->n)
		printf("  grace periods (us): n %zu  avg %.1f  min %.1f  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n",
		       st->n, st->avg, st->min, st->p50, st->p90, st->p99, st->max);
	else
		printf("  grace periods: no rcuscale samples\n");
	if (c->have_summary)
		printf("  rcuscale: gps %lld  batches %lld  duration %.3f s\n",
		       c->gps, c->batches, (double)c->duration_ns / 1e9);
	if (c->nerrors)
		printf("  rcuscale errors: %d (first: %s)%s\n", c->nerrors, c->first_error,
		       c->aborted ? " [test aborted]" : "");
	if (c->smp_cpus >= 0)
		printf("  guest: %d CPUs on %d NUMA nodes\n", c->smp_cpus, c->smp_nodes);
	if (c->boot_time_s >= 0)
		printf("  boot: /init started at %.6f s\n", c->boot_time_s);
	for (i = 0; i < BAD_NR; i++)
		if (c->bad_count[i])
			printf("  badness: %s x%d\n", badness_name(i), c->bad_count[i]);
	if (c->bad_count[0] + c->bad_count[1] + c->bad_count[2] + c->bad_count[3] + c->bad_count[4])
		printf("  first: %s\n", c->first_bad);
	for (i = 0; i < c->nprobes; i++) {
		const struct probe_result *p = &c->probes[i];

		if (p->hung)
			printf("  probe: stage %d %-10s %-28s DEADLOCK\n", p->stage, p->point, p->prim);
		else
			printf("  probe: stage %d %-10s %-28s %.3f ms\n", p->stage, p->point, p->prim,
			       (double)p->ns / 1e6);
	}
}

int do_parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kvm-recheck", no_argument, NULL, 'k' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *prefix = "rcu-scale";
	bool recheck = false;
	struct console c;
	struct gp_stats st;
	double *us;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, "kp:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'k': recheck = true; break;
		case 'p': prefix = optarg; break;
		case 'h': print_usage(parse_help); return 0;
		default: return bad_usage("parse");
		}
	}
	if (optind != argc - 1)
		return set_err("parse takes one console log: see 'rcuwb parse --help'");
	console_init(&c);
	console_set_prefix(&c, prefix);
	if (console_parse_file(&c, argv[optind]) < 0) {
		console_free(&c);
		return -1;
	}
	if (recheck) {
		ret = kvm_recheck(argv[optind], &c);
		console_free(&c);
		return ret;
	}
	us = gp_samples_us(&c);
	if (!us) {
		console_free(&c);
		return set_err("out of memory");
	}
	gp_stats_compute(us, c.nsamples, &st);
	free(us);
	if (json_output)
		print_json(argv[optind], &c, &st);
	else
		print_human(argv[optind], &c, &st);
	console_free(&c);
	return 0;
}
