/* topo.h: guest CPU/NUMA topology: from options, validated, as a cell key. */
#ifndef RCUWB_TOPO_H
#define RCUWB_TOPO_H

#include <stdbool.h>

#define TOPO_MAX_NODES 16
#define TOPO_MAX_VCPUS 64	/* perf-configs/kconfig/base.config: NR_CPUS=64 */

struct numa_cell {
	unsigned first_cpu, ncpus;	/* contiguous vCPU range */
	unsigned mem_mib;
};

struct guest_topo {
	unsigned vcpus;
	unsigned sockets, dies, cores, threads;
	unsigned nnodes;		/* 0: no <numa> element (flat guest) */
	struct numa_cell cells[TOPO_MAX_NODES];
	unsigned distance[TOPO_MAX_NODES][TOPO_MAX_NODES];	/* 0: libvirt default */
	unsigned mem_mib;
};

/*
 * Fill in a topology from vCPUs, NUMA nodes (0 or 1 = flat) and memory;
 * sockets/cores/threads left 0 are derived (one socket per node, one thread
 * per core).  Returns -1 with set_err() naming the bad value.
 */
int topo_make(struct guest_topo *t, unsigned vcpus, unsigned nodes, unsigned mem_mib,
	      unsigned sockets, unsigned cores, unsigned threads);
/* Short stable key, e.g. "v4-n2" or "v8-n2-s2c2t2". */
void topo_key(const struct guest_topo *t, char *out, unsigned cap);
/* Parse "0-3" / "0,2-3" (the kernel's cpulist format) into a bitmap. */
int parse_cpulist(const char *s, unsigned long long *mask);

#endif
