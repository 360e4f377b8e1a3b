/*
 * matrix.c: measurement matrices.
 *
 * A matrix is a YAML file (parsed with libyaml) that lists kernel variants,
 * guest topologies, grace-period modes or probe stages, rcuscale parameters,
 * extra boot parameters and repetitions; perf-configs/README.md documents
 * it.  Every error names the file, the line and the key.
 */
#define _GNU_SOURCE
#include "matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "common.h"
#include "flavour.h"
#include "kernel.h"
#include "yamlcfg.h"

static int parse_cells(struct ycfg *c, yaml_node_t *n, const char *key, struct guest_topo *t)
{
	yaml_node_t *items[TOPO_MAX_NODES], *k, *v;
	unsigned next = 0;
	int i, count;

	if (ycfg_seq(c, n, key, TOPO_MAX_NODES, items, &count) < 0)
		return -1;
	t->nnodes = (unsigned)count;
	for (i = 0; i < count; i++) {
		struct numa_cell *cell = &t->cells[i];
		char cpus[32] = "", sub[48];
		unsigned long long mask;
		int mem = 0;

		snprintf(sub, sizeof(sub), "%s[%d]", key, i);
		if (items[i]->type != YAML_MAPPING_NODE)
			return ycfg_err(c, items[i], sub, "give {cpus: 0-1, memory: MiB}");
		YCFG_FOR_PAIRS(c, items[i], k, v) {
			const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";

			if (!strcmp(ks, "cpus")) {
				if (ycfg_str(c, v, "cpus", cpus, sizeof(cpus)) < 0)
					return -1;
			} else if (!strcmp(ks, "memory")) {
				if (ycfg_int(c, v, "memory", 16, 1 << 20, &mem) < 0)
					return -1;
			} else {
				return ycfg_err(c, k, ks, "unknown key in a NUMA cell (cpus, memory)");
			}
		}
		if (parse_cpulist(cpus, &mask) < 0 || !mask)
			return ycfg_err(c, items[i], sub, "cpus: give a range such as 0-3");
		cell->first_cpu = (unsigned)__builtin_ctzll(mask);
		cell->ncpus = (unsigned)__builtin_popcountll(mask);
		if (mask >> cell->first_cpu != (1ULL << cell->ncpus) - 1 || cell->first_cpu != next)
			return ycfg_err(c, items[i], sub, "cells must cover vCPUs 0.. in contiguous ranges, in order");
		next += cell->ncpus;
		cell->mem_mib = (unsigned)mem;
	}
	return 0;
}

static int parse_distances(struct ycfg *c, yaml_node_t *n, struct guest_topo *t)
{
	yaml_node_t *rows[TOPO_MAX_NODES], *cols[TOPO_MAX_NODES];
	int i, j, nr, nc, d;

	if (ycfg_seq(c, n, "distances", TOPO_MAX_NODES, rows, &nr) < 0)
		return -1;
	for (i = 0; i < nr; i++) {
		if (ycfg_seq(c, rows[i], "distances", TOPO_MAX_NODES, cols, &nc) < 0)
			return -1;
		if (nc != nr)
			return ycfg_err(c, rows[i], "distances", "give a square matrix, a row per NUMA cell");
		for (j = 0; j < nc; j++) {
			if (ycfg_int(c, cols[j], "distances", 10, 255, &d) < 0)
				return -1;
			t->distance[i][j] = (unsigned)d;
		}
	}
	return nr;
}

static int parse_topology(struct ycfg *c, yaml_node_t *n, const char *key, int dflt_mem,
			  struct guest_topo *t)
{
	int vcpus = 0, nodes = 0, sockets = 0, cores = 0, threads = 0, mem = dflt_mem, ndist = -1;
	yaml_node_t *k, *v, *cells = NULL, *dist = NULL;
	struct guest_topo tmp;
	unsigned i, total = 0;

	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, key, "give {vcpus: N, nodes: K, ...}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		char sub[96];
		int r = 0;

		snprintf(sub, sizeof(sub), "%s.%s", key, ks);
		if (!strcmp(ks, "vcpus"))
			r = ycfg_int(c, v, sub, 1, TOPO_MAX_VCPUS, &vcpus);
		else if (!strcmp(ks, "nodes"))
			r = ycfg_int(c, v, sub, 0, TOPO_MAX_NODES, &nodes);
		else if (!strcmp(ks, "sockets"))
			r = ycfg_int(c, v, sub, 1, 64, &sockets);
		else if (!strcmp(ks, "cores"))
			r = ycfg_int(c, v, sub, 1, 64, &cores);
		else if (!strcmp(ks, "threads"))
			r = ycfg_int(c, v, sub, 1, 8, &threads);
		else if (!strcmp(ks, "memory"))
			r = ycfg_int(c, v, sub, 64, 1 << 20, &mem);
		else if (!strcmp(ks, "cells"))
			cells = v;
		else if (!strcmp(ks, "distances"))
			dist = v;
		else
			return ycfg_err(c, k, sub, "unknown key (vcpus, nodes, sockets, cores, threads, memory, cells, distances)");
		if (r < 0)
			return -1;
	}
	if (!vcpus)
		return ycfg_err(c, n, key, "vcpus is missing");
	if (cells && nodes)
		return ycfg_err(c, n, key, "give nodes or cells, not both");
	if (topo_make(t, (unsigned)vcpus, cells ? 0 : (unsigned)nodes, (unsigned)mem,
		      (unsigned)sockets, (unsigned)cores, (unsigned)threads) < 0) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", last_err());
		return ycfg_err(c, n, key, msg);
	}
	if (cells) {
		tmp = *t;
		if (parse_cells(c, cells, "cells", &tmp) < 0)
			return -1;
		for (i = 0; i < tmp.nnodes; i++) {
			if (!tmp.cells[i].mem_mib)
				tmp.cells[i].mem_mib = (unsigned)mem / tmp.nnodes;
			total += tmp.cells[i].ncpus;
		}
		if (total != tmp.vcpus)
			return ycfg_err(c, cells, "cells", "the cells' cpus must add up to vcpus");
		tmp.mem_mib = 0;
		for (i = 0; i < tmp.nnodes; i++)
			tmp.mem_mib += tmp.cells[i].mem_mib;
		if (tmp.nnodes == 1)
			tmp.nnodes = 0;
		*t = tmp;
	}
	if (dist) {
		ndist = parse_distances(c, dist, t);
		if (ndist < 0)
			return -1;
		if ((unsigned)ndist != t->nnodes)
			return ycfg_err(c, dist, "distances", "give one row per NUMA cell");
	}
	return 0;
}

/*
 * Boot parameters go onto the guest's kernel command line (in the domain
 * XML, the run directory's cmdline file and the cell's name): words of
 * key[=value], the key in letters, digits and "._-", the value printable
 * ASCII without quotes, backslashes or shell metacharacters, which the
 * kernel's own parser (parse_args()) or a shell rerunning it would read
 * otherwise.  Returns NULL when good, else what is wrong.
 */
static const char *bad_boot_params(const char *s)
{
	static const char key_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
	const char *p;

	for (p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return "a control or non-ASCII character: give words of key=value";
		if (strchr("\"'`$\\;&|<>(){}", *p))
			return "quotes, backslashes and shell metacharacters would be read by the kernel's parser "
			       "or a shell: give words of key=value";
	}
	for (p = s; *p;) {
		size_t key;

		p += strspn(p, " ");
		if (!*p)
			break;
		key = strspn(p, key_chars);
		if (!key || (p[key] && p[key] != ' ' && p[key] != '='))
			return "each word is key or key=value, the key in letters, digits and ._-";
		p += strcspn(p, " ");
	}
	return NULL;
}

static int parse_boot_params(struct ycfg *c, yaml_node_t *n, struct matrix *m)
{
	yaml_node_t *items[MATRIX_MAX];
	const char *why;
	int i;

	if (ycfg_seq(c, n, "boot_params", MATRIX_MAX, items, &m->nboot_params) < 0)
		return -1;
	for (i = 0; i < m->nboot_params; i++) {
		if (ycfg_str(c, items[i], "boot_params", m->boot_params[i], sizeof(m->boot_params[i])) < 0)
			return -1;
		if ((why = bad_boot_params(m->boot_params[i])))
			return ycfg_err(c, items[i], "boot_params", why);
	}
	return 0;
}

static bool good_name(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(s);
}

static int parse_variants(struct ycfg *c, yaml_node_t *n, struct matrix *m)
{
	yaml_node_t *items[MATRIX_MAX];
	int i;

	if (ycfg_seq(c, n, "variants", MATRIX_MAX, items, &m->nvariants) < 0)
		return -1;
	for (i = 0; i < m->nvariants; i++) {
		if (ycfg_str(c, items[i], "variants", m->variants[i], sizeof(m->variants[i])) < 0)
			return -1;
		if (!good_name(m->variants[i]))
			return ycfg_err(c, items[i], "variants", "a variant name has letters, digits, '.', '_', '-'");
	}
	return 0;
}

/* kconfigs: scenario names, each with a fragment perf-configs/kconfig/scenarios/NAME.config */
static int parse_kconfigs(struct ycfg *c, yaml_node_t *n, struct matrix *m)
{
	yaml_node_t *items[MATRIX_MAX];
	char avail[512], msg[700];
	int i, j;

	if (ycfg_seq(c, n, "kconfigs", MATRIX_MAX, items, &m->nkconfigs) < 0)
		return -1;
	for (i = 0; i < m->nkconfigs; i++) {
		if (ycfg_str(c, items[i], "kconfigs", m->kconfigs[i], sizeof(m->kconfigs[i])) < 0)
			return -1;
		if (!good_name(m->kconfigs[i]))
			return ycfg_err(c, items[i], "kconfigs", "a scenario name has letters, digits, '.', '_', '-'");
		if (!kconfig_exists(m->kconfigs[i], avail, sizeof(avail))) {
			snprintf(msg, sizeof(msg), "no Kconfig scenario '%s' (no %s/scenarios/%s.config); there are: %s",
				 m->kconfigs[i], kconfig_dir() ? kconfig_dir() : "perf-configs/kconfig", m->kconfigs[i],
				 avail[0] ? avail : "none");
			return ycfg_err(c, items[i], "kconfigs", msg);
		}
		for (j = 0; j < i; j++)
			if (!strcmp(m->kconfigs[j], m->kconfigs[i]))
				return ycfg_err(c, items[i], "kconfigs", "a scenario is listed twice");
	}
	return 0;
}

/* flavours: rcuscale scale types (flavour.c), each once */
static int parse_flavours(struct ycfg *c, yaml_node_t *n, struct matrix *m)
{
	yaml_node_t *items[MATRIX_MAX];
	char msg[300];
	int i, j;

	if (ycfg_seq(c, n, "flavours", MATRIX_MAX, items, &m->nflavours) < 0)
		return -1;
	if (!m->nflavours)
		return ycfg_err(c, n, "flavours", "give at least one flavour (the default is [rcu])");
	for (i = 0; i < m->nflavours; i++) {
		if (ycfg_str(c, items[i], "flavours", m->flavours[i], sizeof(m->flavours[i])) < 0)
			return -1;
		if (!flavour_find(m->flavours[i])) {
			snprintf(msg, sizeof(msg), "no flavour '%s': give one of %s", m->flavours[i], flavour_names());
			return ycfg_err(c, items[i], "flavours", msg);
		}
		for (j = 0; j < i; j++)
			if (!strcmp(m->flavours[j], m->flavours[i]))
				return ycfg_err(c, items[i], "flavours", "a flavour is listed twice");
	}
	return 0;
}

static int parse_modes(struct ycfg *c, yaml_node_t *n, struct matrix *m)
{
	yaml_node_t *items[MATRIX_MAX];
	int i, count;

	m->normal = m->expedited = m->async = false;
	if (ycfg_seq(c, n, "modes", MATRIX_MAX, items, &count) < 0)
		return -1;
	for (i = 0; i < count; i++) {
		const char *s = ycfg_scalar(items[i]);

		if (s && !strcmp(s, "normal"))
			m->normal = true;
		else if (s && !strcmp(s, "expedited"))
			m->expedited = true;
		else if (s && !strcmp(s, "async"))
			m->async = true;
		else
			return ycfg_err(c, items[i], "modes", "give normal, expedited and/or async");
	}
	return 0;
}

/* rcuscale.holdoff: seconds, or "boot" (HOLDOFF_BOOT: until boot has ended) */
static int get_holdoff(struct ycfg *c, yaml_node_t *n, int *out)
{
	if (ycfg_scalar(n) && !strcmp(ycfg_scalar(n), "boot")) {
		*out = HOLDOFF_BOOT;
		return 0;
	}
	return ycfg_int(c, n, "rcuscale.holdoff (seconds or boot)", 0, 3600, out);
}

/* emulator: shared (QEMU's threads on the vCPUs' PUs) or apart */
static int get_emulator(struct ycfg *c, yaml_node_t *n, bool *apart)
{
	const char *s = ycfg_scalar(n);

	if (s && (!strcmp(s, "apart") || !strcmp(s, "shared"))) {
		*apart = !strcmp(s, "apart");
		return 0;
	}
	return ycfg_err(c, n, "emulator", "give apart or shared");
}

static int parse_rcuscale(struct ycfg *c, yaml_node_t *n, struct matrix *m)
{
	yaml_node_t *k, *v;

	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, "rcuscale",
				"give {nwriters: N, nreaders: N, holdoff: S, writer_holdoff: US, minruntime: S, async_max: N}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r;

		if (!strcmp(ks, "nwriters"))
			r = ycfg_int(c, v, "rcuscale.nwriters", -1, 1024, &m->nwriters);
		else if (!strcmp(ks, "nreaders"))
			r = ycfg_int(c, v, "rcuscale.nreaders", -1, 1024, &m->nreaders);
		else if (!strcmp(ks, "holdoff"))
			r = get_holdoff(c, v, &m->holdoff_s);
		else if (!strcmp(ks, "writer_holdoff"))
			r = ycfg_int(c, v, "rcuscale.writer_holdoff", 0, 1000000, &m->writer_holdoff_us);
		else if (!strcmp(ks, "minruntime"))
			r = ycfg_int(c, v, "rcuscale.minruntime (seconds)", 0, 600, &m->minruntime_s);
		else if (!strcmp(ks, "async_max"))
			r = ycfg_int(c, v, "rcuscale.async_max (callbacks in flight per writer)", 1, 100000,
				     &m->async_max);
		else
			return ycfg_err(c, k, ks, "unknown rcuscale key (nwriters, nreaders, holdoff, writer_holdoff, "
					"minruntime, async_max)");
		if (r < 0)
			return -1;
	}
	return 0;
}

static int parse_probe(struct ycfg *c, yaml_node_t *n, struct matrix *m)
{
	yaml_node_t *k, *v, *items[MATRIX_MAX];
	int i;

	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, "probe", "give {stages: [0, 1, 234], prims: [rcu, \"srcu,tasks\"], calls: N, watchdog: S}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";

		if (!strcmp(ks, "stages")) {
			if (ycfg_seq(c, v, "probe.stages", MATRIX_MAX, items, &m->nprobes) < 0)
				return -1;
			for (i = 0; i < m->nprobes; i++) {
				const char *s = ycfg_scalar(items[i]);

				if (!s || !run_probe_stages_ok(s))
					return ycfg_err(c, items[i], "probe.stages", "give stage digits 0-4, e.g. 0, 1 or 234");
				snprintf(m->probe_stages[i], sizeof(m->probe_stages[i]), "%s", s);
			}
		} else if (!strcmp(ks, "prims")) {
			if (ycfg_seq(c, v, "probe.prims", MATRIX_MAX, items, &m->nprims) < 0)
				return -1;
			for (i = 0; i < m->nprims; i++) {
				if (ycfg_str(c, items[i], "probe.prims", m->probe_prims[i], sizeof(m->probe_prims[i])) < 0)
					return -1;
				if (strspn(m->probe_prims[i], "abcdefghijklmnopqrstuvwxyz0123456789,_-") !=
				    strlen(m->probe_prims[i]))
					return ycfg_err(c, items[i], "probe.prims",
							"give primitive names (lower-case letters, digits, '_'), comma-separated");
			}
		} else if (!strcmp(ks, "calls")) {
			if (ycfg_int(c, v, "probe.calls", 1, 100, &m->probe_calls) < 0)
				return -1;
		} else if (!strcmp(ks, "watchdog")) {
			if (ycfg_int(c, v, "probe.watchdog", 1, 600, &m->probe_watchdog_s) < 0)
				return -1;
		} else {
			return ycfg_err(c, k, ks, "unknown probe key (stages, prims, calls, watchdog)");
		}
	}
	return 0;
}

/* Is GP mode `mode` (0 normal, 1 expedited, 2 async) asked for? */
static bool mode_asked(const struct matrix *m, int mode)
{
	return mode == 0 ? m->normal : mode == 1 ? m->expedited : m->async;
}

/* Can a cell of flavour f in GP mode `mode` be run? */
static bool flavour_has_mode(const struct matrix *m, int f, int mode)
{
	return mode > 2 || !flavour_lacks(flavour_find(m->flavours[f]), mode);
}

/*
 * The modes apply where a flavour has them: an expedited cell of a flavour
 * without expedited GPs is left out (matrix_expand() says so in one line;
 * it is never run as normal); a flavour left with no cell is an error.
 */
static int check_flavour_modes(struct ycfg *c, yaml_node_t *root, struct matrix *m)
{
	char msg[300];

	for (int f = 0; f < m->nflavours; f++) {
		int mode, left = 0, lacked = -1;

		for (mode = 0; mode < 3; mode++)
			if (mode_asked(m, mode) && flavour_has_mode(m, f, mode))
				left++;
			else if (mode_asked(m, mode))
				lacked = mode;
		if (!left && lacked >= 0 && !m->nprobes) {
			snprintf(msg, sizeof(msg), "flavour %s has no %s GPs (%s) and the matrix asks for no other "
				 "mode: add one to modes, or drop %s", m->flavours[f], gp_mode_name((enum gp_mode)lacked),
				 flavour_lacks(flavour_find(m->flavours[f]), lacked), m->flavours[f]);
			return ycfg_err(c, root, "modes", msg);
		}
	}
	return 0;
}

/* One line for each flavour and mode asked for whose cells the matrix leaves out. */
static void tell_left_out(const struct matrix *m)
{
	for (int f = 0; f < m->nflavours; f++)
		for (int mode = 1; mode < 3; mode++)
			if (mode_asked(m, mode) && !flavour_has_mode(m, f, mode))
				info("rcuwb: %s: flavour %s: no %s cells (%s)\n", m->path, m->flavours[f],
				     gp_mode_name((enum gp_mode)mode), flavour_lacks(flavour_find(m->flavours[f]), mode));
}

int matrix_check_rcuscale(const struct matrix *m, const struct kernel_build *k)
{
	if (m->async && strcmp(k->param_prefix, "rcuscale"))
		return set_err("%s: modes: async: %s (%s): Linux %s has rcuperf, whose gp_async rcuwb does not set",
			       m->path, k->variant, k->kconfig, k->version);
	for (int f = 0; f < m->nflavours; f++) {
		const struct flavour *fl = flavour_find(m->flavours[f]);

		if (flavour_offered(k, fl) < 0)
			return set_err("%s:%d: flavours: %s", m->path, m->flavours_line, last_err());
		for (int t = 0; m->async && !fl->no_async && t < m->ntopos; t++)
			if (flavour_async_runs(k, fl, m->topos[t].vcpus) < 0)
				return set_err("%s:%d: flavours: %s", m->path, m->flavours_line, last_err());
	}
	return 0;
}

static int parse_top(struct ycfg *c, yaml_node_t *root, struct matrix *m)
{
	yaml_node_t *k, *v, *topos = NULL, *items[MATRIX_MAX];
	int i, mem = 512, seed = 1;
	bool have_modes = false;

	if (!root || root->type != YAML_MAPPING_NODE)
		return set_err("%s:1: the file must be a YAML mapping (see perf-configs/README.md)", c->path);
	YCFG_FOR_PAIRS(c, root, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r = 0;

		if (!strcmp(ks, "name"))
			r = ycfg_str(c, v, "name", m->name, sizeof(m->name));
		else if (!strcmp(ks, "variants"))
			r = parse_variants(c, v, m);
		else if (!strcmp(ks, "kconfigs"))
			r = parse_kconfigs(c, v, m);
		else if (!strcmp(ks, "topologies"))
			topos = v;
		else if (!strcmp(ks, "modes"))
			r = parse_modes(c, v, m), have_modes = true;
		else if (!strcmp(ks, "flavours"))
			r = parse_flavours(c, v, m), m->flavours_line = ycfg_line(k);
		else if (!strcmp(ks, "rcuscale"))
			r = parse_rcuscale(c, v, m);
		else if (!strcmp(ks, "probe"))
			r = parse_probe(c, v, m), m->probe_line = ycfg_line(k);
		else if (!strcmp(ks, "boot_params"))
			r = parse_boot_params(c, v, m);
		else if (!strcmp(ks, "reps"))
			r = ycfg_int(c, v, "reps", 1, 10000, &m->reps);
		else if (!strcmp(ks, "timeout"))
			r = ycfg_int(c, v, "timeout", 1, 86400, &m->timeout_s);
		else if (!strcmp(ks, "memory"))
			r = ycfg_int(c, v, "memory", 64, 1 << 20, &mem);
		else if (!strcmp(ks, "seed"))
			r = ycfg_int(c, v, "seed", 0, 1 << 30, &seed);
		else if (!strcmp(ks, "emulator"))
			r = get_emulator(c, v, &m->emulator_apart);
		else
			return ycfg_err(c, k, ks, "unknown key (name, variants, kconfigs, topologies, modes, flavours, rcuscale, "
				      "probe, boot_params, reps, timeout, memory, seed, emulator)");
		if (r < 0)
			return -1;
	}
	m->seed = (unsigned long long)seed;
	if (!good_name(m->name))
		return ycfg_err(c, root, "name", "the matrix's name (from the file's name unless given) has other characters "
				"than letters, digits, '.', '_', '-': give a name: key");
	if (!m->nvariants)
		return ycfg_err(c, root, "variants", "missing: list the kernel variants to run");
	if (!topos)
		return ycfg_err(c, root, "topologies", "missing: list at least one guest topology");
	if (ycfg_seq(c, topos, "topologies", MATRIX_MAX, items, &m->ntopos) < 0)
		return -1;
	for (i = 0; i < m->ntopos; i++) {
		char key[32];

		snprintf(key, sizeof(key), "topologies[%d]", i);
		if (parse_topology(c, items[i], key, mem, &m->topos[i]) < 0)
			return -1;
	}
	if (m->nprobes && !have_modes)
		m->normal = false;	/* a probe matrix runs no rcuscale cells unless asked */
	if (!m->normal && !m->expedited && !m->async && !m->nprobes)
		return ycfg_err(c, root, "modes", "nothing to run: give modes and/or probe stages");
	return check_flavour_modes(c, root, m);
}

int matrix_load(const char *path, struct matrix *m)
{
	yaml_document_t doc;
	struct ycfg c = { .path = path, .doc = &doc };
	const char *base;
	int ret;

	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->normal = true;
	m->async_max = ASYNC_MAX_DEFAULT;
	m->nwriters = -1;
	m->holdoff_s = HOLDOFF_BOOT;
	m->reps = 1;
	m->timeout_s = 300;
	m->probe_watchdog_s = 5;
	m->probe_calls = 1;
	m->nboot_params = 1;	/* one empty entry */
	m->nprims = 1;		/* all primitives */
	m->nkconfigs = 1;
	snprintf(m->kconfigs[0], sizeof(m->kconfigs[0]), "%s", KCONFIG_DEFAULT);
	m->nflavours = 1;
	snprintf(m->flavours[0], sizeof(m->flavours[0]), "%s", FLAVOUR_DEFAULT);
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	snprintf(m->name, sizeof(m->name), "%.*s", (int)strcspn(base, "."), base);
	if (ycfg_load(path, "matrix", &doc) < 0)
		return -1;
	ret = parse_top(&c, yaml_document_get_root_node(&doc), m);
	yaml_document_delete(&doc);
	return ret;
}

int matrix_override(struct matrix *m, const char *name, const char *variants)
{
	char buf[MATRIX_MAX * 64], *tok, *save = NULL;

	if (name && (strlen(name) >= sizeof(m->name) || strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@:/") != strlen(name) || !*name))
		return set_err("--name '%s': give at most %zu letters, digits or ._-@:/", name, sizeof(m->name) - 1);
	if (name)
		snprintf(m->name, sizeof(m->name), "%s", name);
	if (!variants)
		return 0;
	if (strlen(variants) >= sizeof(buf))
		return set_err("--variants: too long");
	snprintf(buf, sizeof(buf), "%s", variants);
	m->nvariants = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (m->nvariants == MATRIX_MAX)
			return set_err("--variants: at most %d variants", MATRIX_MAX);
		if (!good_name(tok) || strlen(tok) >= sizeof(m->variants[0]))
			return set_err("--variants: '%s': a variant name has letters, digits, '.', '_', '-'", tok);
		snprintf(m->variants[m->nvariants++], sizeof(m->variants[0]), "%s", tok);
	}
	return m->nvariants ? 0 : set_err("--variants: give at least one variant");
}

void matrix_fit_kernels(struct matrix *m, const struct kernel_build *k)
{
	int i;

	for (i = 0; m->minruntime_s && i < m->nvariants * m->nkconfigs; i++)
		if (!k[i].rcuscale_minruntime) {
			info("rcuwb: %s: rcuscale.minruntime not passed to any run: %s (%s) has no such parameter "
			     "(a 6.1 tree needs patch 0009; build.json \"rcuscale_minruntime\": false)\n",
			     m->name, k[i].variant, k[i].kconfig);
			m->minruntime_s = 0;
		}
}

/* splitmix64: small, seedable, the same everywhere */
static unsigned long long next_rand(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void matrix_spec(const struct matrix *m, const struct planned_run *p, struct run_spec *s)
{
	run_spec_init(s);
	snprintf(s->matrix, sizeof(s->matrix), "%s", m->name);
	snprintf(s->schedule, sizeof(s->schedule), "%s", m->schedule);
	snprintf(s->kconfig, sizeof(s->kconfig), "%s", m->kconfigs[p->kconfig]);
	s->rep = p->rep;
	s->topo = m->topos[p->topo];
	s->nwriters = m->nwriters;
	s->nreaders = m->nreaders;
	s->holdoff_s = m->holdoff_s;
	s->writer_holdoff_us = m->writer_holdoff_us;
	s->minruntime_s = m->minruntime_s;
	s->async_max = m->async_max;
	s->emulator_apart = m->emulator_apart;
	s->timeout_s = m->timeout_s;
	snprintf(s->boot_params, sizeof(s->boot_params), "%s", m->boot_params[p->boot_params]);
	if (p->mode >= 3) {
		s->kind = RUN_PROBE;
		snprintf(s->probe_stages, sizeof(s->probe_stages), "%s", m->probe_stages[(p->mode - 3) / m->nprims]);
		snprintf(s->probe_prims, sizeof(s->probe_prims), "%s", m->probe_prims[(p->mode - 3) % m->nprims]);
		s->probe_watchdog_s = m->probe_watchdog_s;
		s->probe_calls = m->probe_calls;
	} else {
		s->gp = p->mode == 2 ? GP_ASYNC : p->mode ? GP_EXPEDITED : GP_NORMAL;
		snprintf(s->flavour, sizeof(s->flavour), "%s", m->flavours[p->flavour]);
	}
}

int matrix_expand(const struct matrix *m, struct planned_run **runs, size_t *n)
{
	int nmodes = 3 + m->nprobes * m->nprims;
	int ncells_max = m->ntopos * nmodes * m->nboot_params * m->nkconfigs * m->nflavours;
	struct planned_run *cells = calloc((size_t)ncells_max, sizeof(*cells)), *out;
	unsigned long long seed = m->seed;
	int t, mode, bp, kc, fl, ncells = 0, rep, i, v;
	unsigned long long total;
	size_t k = 0;

	if (!cells)
		return set_err("out of memory");
	tell_left_out(m);
	for (t = 0; t < m->ntopos; t++)
		for (mode = 0; mode < nmodes; mode++)
			for (bp = 0; bp < m->nboot_params; bp++)
				for (kc = 0; kc < m->nkconfigs; kc++)
					for (fl = 0; fl < (mode < 3 ? m->nflavours : 1); fl++) {
						if ((mode < 3 && !mode_asked(m, mode)) || !flavour_has_mode(m, fl, mode))
							continue;
						cells[ncells++] = (struct planned_run){ .topo = t, .mode = mode,
											.boot_params = bp, .kconfig = kc,
											.flavour = fl };
					}
	total = (unsigned long long)ncells * (unsigned long long)m->reps * (unsigned long long)m->nvariants;
	if (total > MATRIX_MAX_RUNS) {
		free(cells);
		return set_err("%s: %llu runs (%d cells x %d variants x %d reps): at most %d in one matrix",
			       m->path, total, ncells, m->nvariants, m->reps, MATRIX_MAX_RUNS);
	}
	out = calloc((size_t)total, sizeof(*out));
	if (!out) {
		free(cells);
		return set_err("out of memory");
	}
	for (rep = 1; rep <= m->reps; rep++) {
		for (i = ncells - 1; i > 0; i--) {	/* Fisher-Yates */
			int j = (int)(next_rand(&seed) % (unsigned long long)(i + 1));
			struct planned_run tmp = cells[i];

			cells[i] = cells[j];
			cells[j] = tmp;
		}
		for (i = 0; i < ncells; i++)
			for (v = 0; v < m->nvariants; v++) {
				struct planned_run *p = &out[k++];
				struct run_spec s;

				*p = cells[i];
				p->rep = rep;
				/* A B in odd repetitions, B A in even ones */
				p->variant = rep % 2 ? v : m->nvariants - 1 - v;
				matrix_spec(m, p, &s);
				run_cell_key(&s, p->cell, sizeof(p->cell));
			}
	}
	free(cells);
	*runs = out;
	*n = k;
	return 0;
}
