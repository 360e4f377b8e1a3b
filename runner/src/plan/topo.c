/* topo.c: guest CPU/NUMA topology. */
#include "topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int topo_make(struct guest_topo *t, unsigned vcpus, unsigned nodes, unsigned mem_mib,
	      unsigned sockets, unsigned cores, unsigned threads)
{
	unsigned i;

	memset(t, 0, sizeof(*t));
	if (vcpus < 1 || vcpus > TOPO_MAX_VCPUS)
		return set_err("vcpus %u out of range: give 1 to %d (the guest kernel's NR_CPUS)",
			       vcpus, TOPO_MAX_VCPUS);
	if (nodes > TOPO_MAX_NODES)
		return set_err("numa nodes %u out of range: give 0 to %d", nodes, TOPO_MAX_NODES);
	if (nodes > 1 && vcpus % nodes)
		return set_err("%u vcpus do not split evenly over %u NUMA nodes", vcpus, nodes);
	if (mem_mib < 64 * (nodes ? nodes : 1))
		return set_err("memory %u MiB too small: give at least 64 MiB per NUMA node", mem_mib);
	threads = threads ? threads : 1;
	sockets = sockets ? sockets : (nodes > 1 ? nodes : 1);
	cores = cores ? cores : vcpus / (sockets * threads);
	if (sockets * cores * threads != vcpus)
		return set_err("sockets %u x cores %u x threads %u != vcpus %u",
			       sockets, cores, threads, vcpus);
	t->vcpus = vcpus;
	t->sockets = sockets;
	t->dies = 1;
	t->cores = cores;
	t->threads = threads;
	t->mem_mib = mem_mib;
	t->nnodes = nodes > 1 ? nodes : 0;
	for (i = 0; i < t->nnodes; i++) {
		t->cells[i].first_cpu = i * (vcpus / nodes);
		t->cells[i].ncpus = vcpus / nodes;
		t->cells[i].mem_mib = mem_mib / nodes;
	}
	if (t->nnodes)
		t->mem_mib = t->cells[0].mem_mib * t->nnodes;
	return 0;
}

void topo_key(const struct guest_topo *t, char *out, unsigned cap)
{
	int n = snprintf(out, cap, "v%u-n%u", t->vcpus, t->nnodes ? t->nnodes : 1);
	unsigned dflt_sockets = t->nnodes ? t->nnodes : 1;

	if (n > 0 && (unsigned)n < cap &&
	    (t->sockets != dflt_sockets || t->threads != 1))
		snprintf(out + n, cap - (unsigned)n, "-s%uc%ut%u", t->sockets, t->cores, t->threads);
}

int parse_cpulist(const char *s, unsigned long long *mask)
{
	const char *p = s;

	*mask = 0;
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b;

		if (end == p)
			return set_err("bad CPU list '%s'", s);
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p)
				return set_err("bad CPU list '%s'", s);
		}
		if (b < a || b >= 64)
			return set_err("bad CPU range in '%s'", s);
		for (; a <= b; a++)
			*mask |= 1ULL << a;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return set_err("bad CPU list '%s'", s);
	}
	return 0;
}
