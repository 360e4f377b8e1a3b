/* cmd_run.c: rcuwb run: a whole matrix, placed on the host, interleaved, resumable. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "session.h"
#include "cli.h"
#include "common.h"
#include "db.h"
#include "dispatch.h"
#include "hosts.h"
#include "matrix.h"
#include "place.h"
#include "variant.h"

static const char run_help[] =
	"Usage: rcuwb run [OPTIONS] MATRIX\n"
	"\n"
	"Run every cell of a matrix (perf-configs/NAME.yaml; see perf-configs/README.md):\n"
	"each repetition visits the cells in a seeded shuffled order and runs every\n"
	"kernel variant of a cell back to back, so host drift lands on both sides of\n"
	"each comparison.  Guests run side by side as long as they fit the CPU budget,\n"
	"each pinned to host PUs of its own (within one host NUMA node when it fits);\n"
	"a guest larger than the budget runs alone and its oversubscription is stored.\n"
	"Every run is committed when it ends, with the CPU other processes took\n"
	"meanwhile (over 5% of the host's PUs: host-busy, left out of statistics);\n"
	"Ctrl-C destroys the guests and keeps what finished.\n"
	"\n"
	"  -n, --dry-run        print the plan and an estimated duration, run nothing\n"
	"  -R, --resume         run only the runs of the matrix missing from the database\n"
	"                       (or stored as interrupted, host-failed or host-busy)\n"
	"  -J, --jobs N         at most N guests at once (default: as many as fit)\n"
	"  -C, --cpus N         host PUs guests may use (default: all)\n"
	"  -a, --accel MODE     auto, kvm or tcg (default auto)\n"
	"      --hosts FILE     run on the libvirt hosts of FILE (perf-configs/hosts/NAME.yaml;\n"
	"                       perf-configs/hosts/README.md), each repetition of a cell on\n"
	"                       one host; default: this machine (-c URI)\n"
	"      --host-topology T plan against a synthetic hwloc topology (with --dry-run)\n"
	"      --name NAME      store the runs as matrix NAME (default: the file's name:)\n"
	"      --variants A,B   run these kernel variants instead of the file's variants:\n"
	"      --schedule NAME  store the runs as of schedule NAME (rcuwb nightly sets it)\n"
	"      --cell CELL      run only this cell of the matrix (a name --dry-run prints)\n"
	"      --reps N         N repetitions instead of the file's reps:\n"
	"  -h, --help           this text\n"
	"\n"
	"Without --resume, a matrix that already has runs gets new repetitions after\n"
	"the stored ones.\n";

struct run_opts {
	bool dry_run, resume;
	int jobs, cpus;
	const char *accel, *synthetic, *path;
	const char *name, *variants, *schedule, *cell, *hosts;
	int reps;
};

static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' }, { "resume", no_argument, NULL, 'R' },
		{ "jobs", required_argument, NULL, 'J' }, { "cpus", required_argument, NULL, 'C' },
		{ "accel", required_argument, NULL, 'a' },
		{ "host-topology", required_argument, NULL, 'T' },
		{ "name", required_argument, NULL, 'N' }, { "variants", required_argument, NULL, 'V' },
		{ "schedule", required_argument, NULL, 'S' }, { "cell", required_argument, NULL, 'E' },
		{ "reps", required_argument, NULL, 'P' }, { "hosts", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	int c, ret = 0;

	while (ret == 0 && (c = getopt_long(argc, argv, "nRJ:C:a:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': o->dry_run = true; break;
		case 'R': o->resume = true; break;
		case 'J': ret = parse_int("--jobs", optarg, 1, 256, &o->jobs); break;
		case 'C': ret = parse_int("--cpus", optarg, 1, PLACE_MAX_PUS, &o->cpus); break;
		case 'a': o->accel = optarg; break;
		case 'T': o->synthetic = optarg; break;
		case 'N': o->name = optarg; break;
		case 'V': o->variants = optarg; break;
		case 'S': o->schedule = optarg; break;
		case 'E': o->cell = optarg; break;
		case 'P': ret = parse_int("--reps", optarg, 1, 10000, &o->reps); break;
		case 'H': o->hosts = optarg; break;
		case 'h': print_usage(run_help); return 1;
		default: return bad_usage("run");
		}
	}
	if (ret)
		return ret;
	if (optind != argc - 1)
		return set_err("run takes one matrix file: see 'rcuwb run --help'");
	if (o->hosts && o->cpus)
		return set_err("--cpus and --hosts: give each host's PU budget as pus: in %s", o->hosts);
	o->path = argv[optind];
	return 0;
}

/* "perf-configs/quick" also finds perf-configs/quick.yaml */
static const char *resolve(const char *path, char *buf, size_t cap)
{
	if (access(path, R_OK) == 0)
		return path;
	snprintf(buf, cap, "%s.yaml", path);
	return access(buf, R_OK) == 0 ? buf : path;
}

/* Keep the runs of one cell; -1 naming the cells when there are none. */
static int only_cell(const char *cell, struct planned_run *runs, size_t *n)
{
	struct buf names = { 0 };
	size_t i, k = 0;
	int ret = 0;

	for (i = 0; i < *n; i++)
		if (!strcmp(runs[i].cell, cell))
			runs[k++] = runs[i];
	if (!k) {
		for (i = 0; i < *n; i++)
			if (runs[i].rep == 1 && runs[i].variant == 0)
				buf_printf(&names, "%s%s", names.len ? ", " : "", runs[i].cell);
		ret = set_err("--cell '%s': the matrix has no such cell (it has: %s)", cell,
			      names.data ? names.data : "none");
		buf_free(&names);
	}
	*n = k;
	return ret;
}

/* Drop what is stored (resume) or shift repetitions after the stored ones. */
static size_t select_runs(sqlite3 *db, const struct matrix *m, struct planned_run *runs, size_t n,
			  bool resume)
{
	int stored = db ? db_max_rep(db, m->name) : 0;
	size_t i, k = 0;

	if (!resume) {
		if (stored)
			info("rcuwb: matrix %s has repetitions 1-%d stored: adding %d-%d "
			     "(--resume fills gaps instead)\n", m->name, stored, stored + 1, stored + m->reps);
		for (i = 0; i < n; i++)
			runs[i].rep += stored;
		return n;
	}
	for (i = 0; i < n; i++)
		if (!db_has_run(db, m->name, runs[i].cell, m->variants[runs[i].variant], runs[i].rep))
			runs[k++] = runs[i];
	return k;
}

static double estimate_s(sqlite3 *db, const struct planned_run *p)
{
	double t = db ? db_avg_wall(db, p->cell) : -1;

	return t > 0 ? t : 12;
}

static void print_plan(sqlite3 *db, const struct matrix *m, const struct planned_run *runs, size_t n,
		       const struct placer *pl, int jobs)
{
	json_object *arr = json_output ? json_object_new_array() : NULL;
	double total = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct planned_run *p = &runs[i];
		double est = estimate_s(db, p);

		total += est;
		if (arr) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "index", json_object_new_int((int)i + 1));
			json_object_object_add(o, "variant", json_object_new_string(m->variants[p->variant]));
			json_object_object_add(o, "kconfig", json_object_new_string(m->kconfigs[p->kconfig]));
			json_object_object_add(o, "cell", json_object_new_string(p->cell));
			json_object_object_add(o, "rep", json_object_new_int(p->rep));
			json_object_object_add(o, "vcpus", json_object_new_int((int)m->topos[p->topo].vcpus));
			json_object_object_add(o, "est_s", json_object_new_double(est));
			json_object_array_add(arr, o);
		} else {
			printf("%4zu  rep %-3d %-10s %s\n", i + 1, p->rep, m->variants[p->variant], p->cell);
		}
	}
	if (arr) {
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY));
		json_object_put(arr);
	} else {
		printf("%zu runs, seed %llu, %u host PUs; about %.1f min if one guest runs at a time "
		       "(up to %d at once where they fit)\n", n, m->seed, pl->npus, total / 60,
		       jobs ? jobs : (int)pl->npus);
	}
}

/* The kernel of a planned run: kernels[] holds every variant in every scenario. */
static struct kernel_build *kernel_of(const struct matrix *m, struct kernel_build *k, int variant, int kconfig)
{
	return &k[variant * m->nkconfigs + kconfig];
}

/* Every variant's file read and checked: a broken one stops the matrix before the first guest, --dry-run too. */
static int check_variants(const struct matrix *m)
{
	int v;

	for (v = 0; v < m->nvariants; v++)
		if (variant_check(m->variants[v]) < 0)
			return set_err("matrix %s: %s", m->path, last_err());
	return 0;
}

/* Every (variant, scenario) kernel, built, and able to run what the matrix asks, before any guest boots. */
static int load_kernels(const struct matrix *m, struct kernel_build *k)
{
	char where[PATH_MAX + 32];
	int v, c;

	snprintf(where, sizeof(where), "%s:%d: probe", m->path, m->probe_line);
	for (v = 0; v < m->nvariants; v++)
		for (c = 0; c < m->nkconfigs; c++) {
			struct kernel_build *kb = kernel_of(m, k, v, c);

			if (kernel_load(m->variants[v], m->kconfigs[c], kb) < 0 ||
			    (m->nprobes && kernel_need_probe(kb, where) < 0) || matrix_check_rcuscale(m, kb) < 0)
				return -1;
		}
	return 0;
}

static void free_kernels(const struct matrix *m, struct kernel_build *k)
{
	int i;

	for (i = 0; k && i < m->nvariants * m->nkconfigs; i++)
		kernel_free(&k[i]);
	free(k);
}

/* The hosts: the file's, or this machine alone (its budget --cpus). */
static int load_hosts(const struct run_opts *o, struct hosts *hs)
{
	if (o->hosts) {
		char buf[PATH_MAX];

		return hosts_load(resolve(o->hosts, buf, sizeof(buf)), hs);
	}
	hosts_single(hs, opt_uri);
	hs->h[0].pus = (unsigned)o->cpus;
	return 0;
}

static void print_hosts(const struct hosts *hs)
{
	int i;

	if (!hs->path[0] || json_output)
		return;
	for (i = 0; i < hs->n; i++) {
		printf("host %-12s %s", hs->h[i].label[0] ? hs->h[i].label : "(its name)", hs->h[i].uri);
		if (hs->h[i].pus)
			printf(", %u PUs for guests", hs->h[i].pus);
		printf("\n");
	}
}

static int dry_run(const struct run_opts *o, const struct hosts *hs, struct matrix *m,
		   struct planned_run *runs, size_t n)
{
	sqlite3 *db = NULL;
	struct placer pl;

	if (place_init(&pl, o->synthetic, (unsigned)o->cpus) < 0)
		return -1;
	if (access(opt_db, R_OK) == 0 && db_open(opt_db, &db) < 0)
		return -1;
	n = select_runs(db, m, runs, n, o->resume && db);
	print_hosts(hs);
	print_plan(db, m, runs, n, &pl, o->jobs);
	if (db)
		db_close(db);
	return 0;
}

int do_run(int argc, char **argv)
{
	struct run_opts o = { .accel = "auto" };
	struct kernel_build *kernels = NULL;
	struct planned_run *runs = NULL;
	struct dispatch d = { 0 };
	struct session sess = { 0 };
	struct pulocks locks;
	struct hosts hs;
	struct matrix m;
	char buf[PATH_MAX];
	bool locked = false;
	size_t n = 0;
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : -1;
	if (matrix_load(resolve(o.path, buf, sizeof(buf)), &m) < 0 ||
	    matrix_override(&m, o.name, o.variants) < 0)
		return -1;
	if (check_variants(&m) < 0 || load_hosts(&o, &hs) < 0)
		return -1;
	if (o.reps)
		m.reps = o.reps;
	if (!o.dry_run && !o.synthetic) {
		kernels = calloc((size_t)(m.nvariants * m.nkconfigs), sizeof(*kernels));
		if (!kernels || load_kernels(&m, kernels) < 0) {
			if (!kernels)
				set_err("out of memory");
			goto out_err;
		}
		matrix_fit_kernels(&m, kernels);
	}
	if (matrix_expand(&m, &runs, &n) < 0)
		goto out_err;
	if (o.cell && only_cell(o.cell, runs, &n) < 0)
		goto out_err;
	if (o.schedule)
		snprintf(m.schedule, sizeof(m.schedule), "%s", o.schedule);
	if (o.dry_run) {
		ret = dry_run(&o, &hs, &m, runs, n);
		free(runs);
		return ret;
	}
	if (o.synthetic) {
		set_err("--host-topology only plans (with --dry-run): guests need the real host");
		goto out_err;
	}
	if (pulock_init(&locks) < 0)
		goto out_err;
	locked = true;
	if (session_open(&sess, &hs, &kernels[0], o.accel, &locks) < 0)
		goto out_close;
	n = select_runs(sess.db, &m, runs, n, o.resume);
	d = (struct dispatch){ .sess = &sess, .m = &m, .runs = runs, .n = n, .kernels = kernels, .jobs = o.jobs,
			       .fleet = hs.path[0] != '\0', .accel = o.accel, .locks = &locks };
	info("rcuwb: matrix %s: %zu runs, seed %llu, on %d host(s)\n", m.name, n, m.seed, sess.nhosts);
	ret = dispatch_run(&d);
	dispatch_clear_progress();
	if (ret == 0 && session_interrupted(&sess))
		ret = set_err("interrupted: %d of %zu runs stored in %s; continue with: rcuwb run --resume %s",
			      d.done, n, opt_db, o.path);
	else if (ret == 0 && d.errors)
		ret = set_err("%d of %zu runs could not be stored or kept (see above), so the matrix stopped; "
			      "continue with: rcuwb run --resume %s", d.errors, n, o.path);
	else if (ret == 0)
		info("rcuwb: matrix %s: %d runs, %d not ok%s, in %.0f s\n", m.name, d.done, d.failed,
		     d.requeued ? " (host-failed runs and their repeats included)" : "", now_s() - d.t0);
	dispatch_free(&d);
	session_close(&sess);
	pulock_fini(&locks);
	free_kernels(&m, kernels);
	free(runs);
	return ret;
out_close:
	session_close(&sess);
	if (locked)
		pulock_fini(&locks);
out_err:
	free_kernels(&m, kernels);
	free(runs);
	return -1;
}
