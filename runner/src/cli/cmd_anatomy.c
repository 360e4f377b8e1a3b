/*
 * cmd_anatomy.c: rcuwb anatomy: where the grace periods' time goes, phase by
 * phase, from RCU's own trace events.
 *
 * BASE CAND: both variants built in the Kconfig scenario "trace", a matrix
 * of traced cells written to RESULTS/anatomy/NAME.yaml and run by `rcuwb
 * run --resume` (each run's calls are cut into phases as it is stored,
 * job.c), then the per-phase comparison of stats/exec/rcuwb-anatomy.
 * --matrix NAME: that comparison on runs already stored.  --console LOG:
 * one console log's calls, no database.
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "anatomy.h"
#include "cli.h"
#include "common.h"
#include "kernel.h"
#include "proc.h"
#include "trace.h"

#define TRACE_KCONFIG "trace"

static const char anatomy_help[] =
	"Usage: rcuwb anatomy [OPTIONS] BASE CAND\n"
	"       rcuwb anatomy --matrix NAME [--base B [--cand C]] [--overhead]\n"
	"       rcuwb anatomy --console LOG [--calls]\n"
	"\n"
	"Where the grace periods' time goes: every rcuscale writer call of a traced\n"
	"run cut into the phases of its grace period (docs/anatomy.md), from RCU's\n"
	"trace events, which rcuscale dumps to the console.  BASE and CAND, kernel\n"
	"variants (kernel-changes/variants/NAME), are built in the Kconfig scenario\n"
	"'trace' and run in traced cells of their own (never pooled with untraced\n"
	"runs, never gated); then, per cell and phase: the median and 90th\n"
	"percentile of each side, CAND's change with its 95% interval (runs are the\n"
	"unit), and the phase that carries most of the change.\n"
	"\n"
	"  -n, --runs N         traced runs a side per cell (default 6)\n"
	"  -v, --vcpus LIST     guest sizes, e.g. 1,2 (default 1)\n"
	"  -g, --modes LIST     normal, expedited or both (default normal,expedited)\n"
	"  -b, --boot-params P  more boot parameters for both sides (a plant's dose)\n"
	"      --name NAME      store the runs as matrix NAME (default anatomy-BASE-CAND)\n"
	"  -J, --jobs N         guests at once (default 1)\n"
	"  -m, --matrix NAME    compare stored traced runs of matrix NAME (no runs)\n"
	"      --base B, --cand C  the variants of --matrix (default: its first two;\n"
	"                       --base alone: that variant's phases, described)\n"
	"      --plot FILE      the comparison as paired bars per phase (PNG, SVG, PDF)\n"
	"      --overhead       with --matrix: rcuscale's latency in its traced cells\n"
	"                       against the same cells untraced (what tracing costs)\n"
	"      --console LOG    one console log's calls, per phase (no database)\n"
	"      --calls          with --console: every call, not the summary\n"
	"\n"
	"With rcuwb --json: JSON.  Exit 0, or 2 on bad input or a failed build/run.\n";

struct anatomy_opts {
	const char *console, *matrix, *base, *cand, *name, *boot, *vcpus, *modes, *plot;
	int runs, jobs;
	bool calls, overhead;
};

static int parse_args(int argc, char **argv, struct anatomy_opts *o)
{
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'n' },	{ "vcpus", required_argument, NULL, 'v' },
		{ "modes", required_argument, NULL, 'g' },	{ "boot-params", required_argument, NULL, 'b' },
		{ "name", required_argument, NULL, 'N' },	{ "jobs", required_argument, NULL, 'J' },
		{ "matrix", required_argument, NULL, 'm' },	{ "base", required_argument, NULL, 'B' },
		{ "cand", required_argument, NULL, 'C' },	{ "console", required_argument, NULL, 'L' },
		{ "calls", no_argument, NULL, 'c' },		{ "help", no_argument, NULL, 'h' },
		{ "overhead", no_argument, NULL, 'O' },		{ "plot", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct anatomy_opts){ .runs = 6, .jobs = 1, .vcpus = "1", .modes = "normal,expedited" };
	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:v:g:b:J:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': if (parse_int("--runs", optarg, 2, 1000, &o->runs) < 0) return -1; break;
		case 'J': if (parse_int("--jobs", optarg, 1, 64, &o->jobs) < 0) return -1; break;
		case 'v': o->vcpus = optarg; break;
		case 'g': o->modes = optarg; break;
		case 'b': o->boot = optarg; break;
		case 'N': o->name = optarg; break;
		case 'm': o->matrix = optarg; break;
		case 'B': o->base = optarg; break;
		case 'C': o->cand = optarg; break;
		case 'L': o->console = optarg; break;
		case 'c': o->calls = true; break;
		case 'O': o->overhead = true; break;
		case 'P': o->plot = optarg; break;
		case 'h': print_usage(anatomy_help); return 1;
		default: return bad_usage("anatomy");
		}
	}
	if (o->console)
		return optind == argc ? 0 : set_err("anatomy --console LOG takes no other argument");
	if (o->matrix)
		return optind == argc ? 0 : set_err("anatomy --matrix NAME takes no BASE CAND: use --base, --cand");
	if (o->overhead)
		return set_err("anatomy --overhead reads a matrix's runs: give --matrix NAME");
	if (argc - optind != 2)
		return set_err("anatomy takes BASE and CAND (two kernel variants): see 'rcuwb anatomy --help'");
	o->base = argv[optind];
	o->cand = argv[optind + 1];
	return 0;
}

/* --- one console log ------------------------------------------------------ */

/* Median and 90th percentile (nearest rank) of phase p over the calls of one mode. */
static size_t phase_quantiles(const struct anatomy *a, bool exp, int p, double *med, double *p90)
{
	double *v = malloc((a->n ? a->n : 1) * sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->calls[i].expedited == exp && !isnan(a->calls[i].phase_us[p]))
			v[n++] = a->calls[i].phase_us[p];
	if (n) {
		qsort(v, n, sizeof(*v), cmp_double);
		*med = v[(n + 1) / 2 - 1];
		*p90 = v[(size_t)ceil(0.9 * (double)n) - 1];
	}
	free(v);
	return n;
}

static json_object *call_json(const struct anat_call *c)
{
	json_object *o = json_object_new_object(), *ph = json_object_new_object();
	int p;

	json_object_object_add(o, "mode", json_object_new_string(c->expedited ? "expedited" : "normal"));
	json_object_object_add(o, "writer", json_object_new_int(c->pid));
	json_object_object_add(o, "call", json_object_new_int(c->call));
	json_object_object_add(o, "gp_seq", json_object_new_int64(c->gp_seq));
	if (c->expedited)
		json_object_object_add(o, "own", json_object_new_boolean(c->own));
	json_object_object_add(o, "t_us", json_object_new_double(c->t_us));
	json_object_object_add(o, "total_us", json_object_new_double(c->total_us));
	if (!c->expedited) {
		json_object_object_add(o, "fqs_scans", json_object_new_int(c->fqs_scans));
		json_object_object_add(o, "last_cpu", json_object_new_int(c->last_cpu));
	} else if (c->driver[0]) {
		json_object_object_add(o, "driver", json_object_new_string(c->driver));
	}
	for (p = 0; p < PH_NR; p++)
		if (!isnan(c->phase_us[p]))
			json_object_object_add(ph, anat_phase_name(p), json_object_new_double(c->phase_us[p]));
	json_object_object_add(o, "phases_us", ph);
	return o;
}

static void print_calls(const struct anatomy *a)
{
	size_t i;
	int p;

	printf("%-9s %6s %5s %10s %4s %9s  %s\n", "mode", "writer", "call", "gp_seq", "own", "total_us",
	       "phases (us)");
	for (i = 0; i < a->n; i++) {
		const struct anat_call *c = &a->calls[i];

		printf("%-9s %6d %5d %10ld %4s %9.0f ", c->expedited ? "expedited" : "normal", c->pid, c->call,
		       c->gp_seq, c->expedited && !c->own ? "no" : "yes", c->total_us);
		for (p = 0; p < PH_NR; p++)
			if (!isnan(c->phase_us[p]))
				printf(" %s=%.0f", anat_phase_name(p), c->phase_us[p]);
		printf("\n");
	}
}

/* Per mode and phase: calls, median, 90th percentile (a description of one run, not a comparison). */
static void print_summary(const struct anatomy *a, json_object *jo)
{
	int m, p;

	for (m = 0; m < 2; m++) {
		json_object *jm = json_object_new_object();
		bool any = false;

		for (p = 0; p < PH_NR; p++) {
			double med = 0, p90 = 0;
			size_t n;

			if (!anat_phase_of(p, m) || !(n = phase_quantiles(a, m, p, &med, &p90)))
				continue;
			if (!any && !jo)
				printf("%s GPs: %-9s %6s %10s %10s\n", m ? "expedited" : "normal", "phase", "calls",
				       "median_us", "p90_us");
			any = true;
			if (jo) {
				json_object *jp = json_object_new_object();

				json_object_object_add(jp, "calls", json_object_new_int64((int64_t)n));
				json_object_object_add(jp, "median_us", json_object_new_double(med));
				json_object_object_add(jp, "p90_us", json_object_new_double(p90));
				json_object_object_add(jm, anat_phase_name(p), jp);
			} else {
				printf("%*s %-9s %6zu %10.0f %10.0f\n", m ? 15 : 12, "", anat_phase_name(p), n, med,
				       p90);
			}
		}
		if (jo && any)
			json_object_object_add(jo, m ? "expedited" : "normal", jm);
		else
			json_object_put(jm);
	}
}

static int one_console(const struct anatomy_opts *o)
{
	struct trace t = { 0 };
	struct anatomy a = { 0 };
	const char *why;
	int ret = trace_parse_file(&t, o->console);

	why = ret ? NULL : trace_incomplete(&t);
	if (!ret && !why)
		ret = anatomy_build(&t, &a);
	if (!ret && json_output) {
		json_object *jo = json_object_new_object(), *arr = json_object_new_array();
		size_t i;

		json_object_object_add(jo, "log", json_object_new_string(o->console));
		json_object_object_add(jo, "events", json_object_new_int64((int64_t)t.n));
		json_object_object_add(jo, "lost", t.lost_unknown ? NULL : json_object_new_int64(t.lost));
		json_object_object_add(jo, "incomplete", why ? json_object_new_string(why) : NULL);
		json_object_object_add(jo, "calls", json_object_new_int64((int64_t)a.n));
		json_object_object_add(jo, "skipped", json_object_new_int64((int64_t)a.skipped));
		if (o->calls) {
			for (i = 0; i < a.n; i++)
				json_object_array_add(arr, call_json(&a.calls[i]));
			json_object_object_add(jo, "per_call", arr);
		} else {
			json_object_put(arr);
			print_summary(&a, jo);
		}
		printf("%s\n", json_object_to_json_string_ext(jo, JSON_C_TO_STRING_PRETTY));
		json_object_put(jo);
	} else if (!ret) {
		printf("%s: %zu RCU events, %ld lost%s\n", o->console, t.n, t.lost, t.lost_unknown ? " (and more)" : "");
		if (why)
			printf("not analysed: %s\n", why);
		else if (o->calls)
			print_calls(&a);
		else
			print_summary(&a, NULL);
		if (!why)
			printf("%zu calls, %zu without all their events\n", a.n, a.skipped);
	}
	anatomy_free(&a);
	trace_free(&t);
	return ret < 0 ? 2 : 0;
}

/* --- traced runs of two variants ------------------------------------------- */

/* What runs traced: both sides, these topologies and modes, so many runs a side. */
struct traced {
	const char *base, *cand, *name, *boot;
	char topos[1024];	/* YAML lines "  - {vcpus: N, nodes: K}" */
	char modes[64];		/* "normal, expedited" */
	int runs, jobs;
};

static int add_topo(struct traced *t, int vcpus, int nodes)
{
	size_t len = strlen(t->topos);

	if (nodes > 1)
		snprintf(t->topos + len, sizeof(t->topos) - len, "  - {vcpus: %d, nodes: %d}\n", vcpus, nodes);
	else
		snprintf(t->topos + len, sizeof(t->topos) - len, "  - {vcpus: %d}\n", vcpus);
	return strlen(t->topos) + 1 < sizeof(t->topos) ? 0 : set_err("anatomy: too many topologies");
}

/* RESULTS/anatomy/NAME.yaml: the traced cells, both sides */
static int write_matrix(const struct traced *t, char *path, size_t cap)
{
	char *dbdup = strdup(opt_db);
	struct buf y = { 0 };
	int ret;

	if (!dbdup || path_fmt(path, cap, "%s/anatomy", dirname(dbdup)) < 0 || mkdir_p(path) < 0 ||
	    path_fmt(path + strlen(path), cap - strlen(path), "/%s.yaml", t->name) < 0) {
		free(dbdup);
		return -1;
	}
	free(dbdup);
	buf_printf(&y, "# rcuwb anatomy %s %s: traced cells (Kconfig scenario %s), written by rcuwb\n"
		   "name: %s\nvariants: [%s, %s]\nkconfigs: [%s]\ntopologies:\n%smodes: [%s]\n"
		   "rcuscale: {nreaders: 0, holdoff: boot}\n",
		   t->base, t->cand, TRACE_KCONFIG, t->name, t->base, t->cand, TRACE_KCONFIG, t->topos, t->modes);
	if (t->boot)
		buf_printf(&y, "boot_params: [\"%s\"]\n", t->boot);
	buf_printf(&y, "reps: %d\ntimeout: 180\nseed: 34\n", t->runs);
	ret = y.data ? write_file(path, y.data, y.len) : set_err("out of memory");
	buf_free(&y);
	return ret;
}

/* Both sides built in the tracing scenario, then `rcuwb run --resume` of the traced cells. */
static int run_traced(const struct traced *t)
{
	char path[4096], jobs[16];
	const char *argv[12];
	struct buf out = { 0 };
	int n = 0, rc;

	if (strchr(t->boot ? t->boot : "", '"') || strchr(t->modes, ']') || strchr(t->modes, '\n'))
		return set_err("--boot-params/--modes: no quotes, brackets or newlines");
	rc = kernel_make(t->base, TRACE_KCONFIG);
	if (!rc)
		rc = kernel_make(t->cand, TRACE_KCONFIG);
	if (rc)
		return rc == KERNEL_REFUSED ? set_err("anatomy: a side cannot be built in scenario %s (above)",
						      TRACE_KCONFIG) : -1;
	if (write_matrix(t, path, sizeof(path)) < 0)
		return -1;
	info("anatomy: %s %s in traced cells (%s)\n", t->base, t->cand, path);
	snprintf(jobs, sizeof(jobs), "%d", t->jobs);
	argv[n++] = proc_self();
	argv[n++] = "-d";
	argv[n++] = opt_db;
	if (quiet || json_output)
		argv[n++] = "-q";
	argv[n++] = "run";
	argv[n++] = "--resume";
	argv[n++] = "-J";
	argv[n++] = jobs;
	argv[n++] = path;
	argv[n] = NULL;
	/* with --json, stdout is the comparison's alone */
	rc = proc_run(argv, NULL, json_output ? &out : NULL);
	buf_free(&out);
	if (rc < 0)
		return -1;
	return rc ? set_err("anatomy: the traced runs failed (rcuwb run exited %d): see above", rc) : 0;
}

/* stats/exec/rcuwb-anatomy.R on matrix NAME: its exit code, or -1 */
static int compare_phases(const char *matrix, const char *base, const char *cand, const struct anatomy_opts *o)
{
	const char *extra[12], *argv0[] = { "anatomy", NULL };
	int n = 0;

	extra[n++] = "--matrix";
	extra[n++] = matrix;
	if (base) {
		extra[n++] = "--base";
		extra[n++] = base;
	}
	if (cand) {
		extra[n++] = "--cand";
		extra[n++] = cand;
	}
	if (o && o->overhead)
		extra[n++] = "--overhead";
	if (o && o->plot) {
		extra[n++] = "--plot";
		extra[n++] = o->plot;
	}
	if (json_output)
		extra[n++] = "--json";
	return run_rscript("anatomy.R", 1, (char **)argv0, extra, n);
}

int anatomy_after_slowdown(const char *base, const char *cand, const char *name, const char *const *cells, int n,
			   int runs)
{
	struct traced t = { .base = base, .cand = cand, .name = name, .runs = runs, .jobs = 1 };
	bool normal = false, exp = false;
	int i, j, rc, seen[64][2];

	for (i = 0; i < n && i < 64; i++) {
		int vcpus, nodes;
		char mode[16];

		if (sscanf(cells[i], "v%d-n%d/%15[^/]", &vcpus, &nodes, mode) != 3)
			return set_err("anatomy: cell '%s' is not v<vcpus>-n<nodes>/<mode>/", cells[i]);
		for (j = 0; j < i && (seen[j][0] != vcpus || seen[j][1] != nodes); j++)
			;
		seen[i][0] = vcpus;
		seen[i][1] = nodes;
		if (j == i && add_topo(&t, vcpus, nodes) < 0)
			return -1;
		normal |= !strcmp(mode, "normal");
		exp |= !strcmp(mode, "expedited");
	}
	snprintf(t.modes, sizeof(t.modes), "%s%s%s", normal ? "normal" : "", normal && exp ? ", " : "",
		 exp ? "expedited" : "");
	rc = run_traced(&t);
	return rc < 0 ? -1 : compare_phases(name, base, cand, NULL);
}

/* --vcpus 1,2 as topology lines */
static int vcpu_topos(const char *list, struct traced *t)
{
	char *dup = strdup(list), *tok, *save = NULL;
	int v, ret = 0;

	if (!dup)
		return set_err("out of memory");
	for (tok = strtok_r(dup, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save))
		ret = parse_int("--vcpus", tok, 1, 64, &v) < 0 || add_topo(t, v, 1) < 0 ? -1 : 0;
	free(dup);
	return ret;
}

int do_anatomy(int argc, char **argv)
{
	struct anatomy_opts o;
	struct traced t = { 0 };
	char name[96];
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : (report_err(), 2);
	if (o.console)
		return one_console(&o);
	if (!o.matrix) {
		if (o.name)
			snprintf(name, sizeof(name), "%s", o.name);
		else
			snprintf(name, sizeof(name), "anatomy-%.27s-%.27s", o.base, o.cand);
		t = (struct traced){ .base = o.base, .cand = o.cand, .name = name, .boot = o.boot,
				     .runs = o.runs, .jobs = o.jobs };
		snprintf(t.modes, sizeof(t.modes), "%s", o.modes);
		if (vcpu_topos(o.vcpus, &t) < 0 || run_traced(&t) != 0) {
			report_err();
			return 2;
		}
		o.matrix = name;
	}
	rc = compare_phases(o.matrix, o.base, o.cand, &o);
	if (rc < 0)
		report_err();
	return rc < 0 ? 2 : rc;
}
