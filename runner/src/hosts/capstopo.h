/* capstopo.h: a host's topology as libvirt reports it (capabilities XML: NUMA cells, CPUs, siblings), for hosts reached only through libvirt. */
#ifndef RCUWB_CAPSTOPO_H
#define RCUWB_CAPSTOPO_H

#include "host.h"

struct caps_cpu {
	unsigned id, node, socket, core;
};

/*
 * Read <host><topology><cells> of a capabilities document: h gets the
 * counts of PUs, cores and nodes (not the name), cpus the PUs ordered by
 * node, socket, core, id (siblings next to each other, as hwloc orders
 * them).  A host whose capabilities carry no topology is refused.
 */
int capstopo_parse(const char *xml, struct host_info *h, struct caps_cpu *cpus, unsigned cap, unsigned *n);

#endif
