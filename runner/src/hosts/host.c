/* host.c: the host machine as hwloc sees it. */
#include "host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "common.h"

int host_topology(hwloc_topology_t *t, const char *synthetic)
{
	if (hwloc_topology_init(t) < 0)
		return set_err("hwloc: cannot initialise a topology");
	if (synthetic && hwloc_topology_set_synthetic(*t, synthetic) < 0) {
		hwloc_topology_destroy(*t);
		return set_err("hwloc: bad synthetic topology '%s'", synthetic);
	}
	if (hwloc_topology_load(*t) < 0) {
		hwloc_topology_destroy(*t);
		return set_err("hwloc: cannot read the host topology");
	}
	return 0;
}

int host_probe(struct host_info *h, const char *synthetic)
{
	hwloc_topology_t t;
	int nodes;

	memset(h, 0, sizeof(*h));
	if (gethostname(h->name, sizeof(h->name) - 1) < 0)
		strcpy(h->name, "?");
	if (host_topology(&t, synthetic) < 0)
		return -1;
	h->pus = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	h->cores = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
	nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	h->nodes = nodes > 0 ? (unsigned)nodes : 1;
	hwloc_topology_destroy(t);
	return 0;
}
