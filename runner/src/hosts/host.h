/* host.h: the host machine as hwloc sees it (PUs, NUMA nodes), and its name. */
#ifndef RCUWB_HOST_H
#define RCUWB_HOST_H

#include <hwloc.h>

struct host_info {
	char name[64];
	unsigned pus, cores, nodes;
};

/*
 * Read the host topology with hwloc.  synthetic != NULL loads a synthetic
 * description instead (e.g. "node:2 core:2 pu:1"), for tests.
 */
int host_probe(struct host_info *h, const char *synthetic);
/* A loaded hwloc topology: the host's, or a synthetic one.  Caller destroys it. */
int host_topology(hwloc_topology_t *t, const char *synthetic);

#endif
