/* place.c: guests on host PUs, through hwloc. */
#include "place.h"

#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#include "common.h"
#include "host.h"

int place_init_cpus(struct placer *p, const unsigned *os, const unsigned *node, unsigned n, unsigned budget)
{
	unsigned i;

	memset(p, 0, sizeof(*p));
	if (!n)
		return set_err("the host has no PUs");
	if (budget > n)
		return set_err("a budget of %u PUs: the host has only %u", budget, n);
	for (i = 0; i < n && i < PLACE_MAX_PUS && (!budget || i < budget); i++) {
		p->os_index[i] = os[i];
		p->node[i] = node[i];
		if (node[i] + 1 > p->nnodes)
			p->nnodes = node[i] + 1;
	}
	p->npus = i;
	return 0;
}

int place_init(struct placer *p, const char *synthetic, unsigned budget)
{
	unsigned os[PLACE_MAX_PUS], node[PLACE_MAX_PUS], n = 0;
	hwloc_topology_t t;
	hwloc_obj_t pu = NULL;

	if (host_topology(&t, synthetic) < 0)
		return -1;
	while ((pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu)) && n < PLACE_MAX_PUS) {
		hwloc_obj_t nd = NULL;
		unsigned i;

		os[n] = pu->os_index;
		/* the NUMA node whose cpuset holds this PU */
		for (i = 0; (nd = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i)); i++)
			if (hwloc_bitmap_isset(nd->cpuset, pu->os_index))
				break;
		node[n++] = nd ? nd->os_index : 0;
	}
	hwloc_topology_destroy(t);
	if (!n)
		return set_err("hwloc: no PUs found");
	if (budget > n)
		return set_err("--cpus %u: the host has only %u PUs", budget, n);
	return place_init_cpus(p, os, node, n, budget);
}

static void describe(const struct placer *p, struct placement *pl, unsigned vcpus)
{
	bool nodes[PLACE_MAX_PUS] = { false };
	size_t len = 0;
	unsigned i;

	pl->cpuset[0] = pl->nodeset[0] = '\0';
	for (i = 0; i < pl->npus; i++) {
		pl->os[i] = p->os_index[pl->pu[i]];
		len += (size_t)snprintf(pl->cpuset + len, sizeof(pl->cpuset) - len, "%s%u", i ? "," : "",
					p->os_index[pl->pu[i]]);
		if (len >= sizeof(pl->cpuset))
			len = sizeof(pl->cpuset) - 1;
		nodes[p->node[pl->pu[i]]] = true;
	}
	len = 0;
	for (i = 0; i < p->nnodes && len < sizeof(pl->nodeset); i++)
		if (nodes[i])
			len += (size_t)snprintf(pl->nodeset + len, sizeof(pl->nodeset) - len, "%s%u",
						len ? "," : "", i);
	pl->oversub = (double)vcpus / pl->npus;
}

static unsigned free_in_node(const struct placer *p, const bool *avail, unsigned node)
{
	unsigned i, n = 0;

	for (i = 0; i < p->npus; i++)
		n += avail[i] && p->node[i] == node;
	return n;
}

/* The PUs not busy here and, with shared locks, not held by another runner (those get locked). */
static int reserve_free(struct placer *p, bool *avail, unsigned *n)
{
	unsigned i;
	int r;

	*n = 0;
	memset(avail, 0, p->npus * sizeof(*avail));
	for (i = 0; i < p->npus; i++) {
		if (p->busy[i])
			continue;
		r = p->locks ? pulock_try(p->locks, p->os_index[i]) : 1;
		if (r < 0)
			return -1;
		avail[i] = r == 1;
		*n += avail[i];
	}
	return 0;
}

/* Unlock the reserved PUs the guest does not get. */
static void unreserve(struct placer *p, const bool *avail, const bool *taken)
{
	unsigned i;

	for (i = 0; p->locks && i < p->npus; i++)
		if (avail[i] && !(taken && taken[i]))
			pulock_release(p->locks, p->os_index[i]);
}

int place_take(struct placer *p, unsigned vcpus, struct placement *out)
{
	unsigned want = vcpus < p->npus ? vcpus : p->npus, i, node, best = ~0U, navail;
	bool avail[PLACE_MAX_PUS], taken[PLACE_MAX_PUS] = { false };

	memset(out, 0, sizeof(*out));
	if (p->npus - p->nbusy < want)
		return 1;
	if (reserve_free(p, avail, &navail) < 0) {
		unreserve(p, avail, NULL);
		return -1;
	}
	if (navail < want) {
		unreserve(p, avail, NULL);
		return 1;
	}
	/* the fullest node that still fits: packs guests, keeps big holes */
	for (node = 0; node < p->nnodes; node++) {
		unsigned f = free_in_node(p, avail, node);

		if (f >= want && (best == ~0U || f < free_in_node(p, avail, best)))
			best = node;
	}
	for (i = 0; i < p->npus && out->npus < want; i++)
		if (avail[i] && (best == ~0U || p->node[i] == best))
			out->pu[out->npus++] = i;
	for (i = 0; i < out->npus; i++)
		p->busy[out->pu[i]] = taken[out->pu[i]] = true;
	p->nbusy += out->npus;
	unreserve(p, avail, taken);
	describe(p, out, vcpus);
	return 0;
}

void place_release(struct placer *p, const struct placement *pl)
{
	unsigned i;

	for (i = 0; i < pl->npus; i++)
		if (p->busy[pl->pu[i]]) {
			p->busy[pl->pu[i]] = false;
			p->nbusy--;
			if (p->locks)
				pulock_release(p->locks, p->os_index[pl->pu[i]]);
		}
}

int place_restrict(struct placer *p, unsigned long long mask, unsigned budget)
{
	unsigned i, k = 0;

	for (i = 0; i < p->npus; i++) {
		if (p->os_index[i] >= 64 || !(mask >> p->os_index[i] & 1))
			continue;
		p->os_index[k] = p->os_index[i];
		p->node[k] = p->node[i];
		k++;
	}
	if (!k)
		return set_err("none of the host's PUs is in the list given");
	if (budget > k)
		return set_err("a budget of %u PUs, but the list gives %u", budget, k);
	p->npus = budget ? budget : k;
	return 0;
}
