/*
 * nodeload.c: host-busy for a host the runner reaches only through libvirt.
 *
 * The local host's other load comes from /proc (hostload.c).  A remote
 * host's is its busy CPU time (user + kernel, which includes its guests')
 * minus the CPU time of the rcuwb guests this runner has there; what is
 * left is everything else on that host, libvirtd included.
 */
#define _GNU_SOURCE
#include "nodeload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* The host's user + kernel nanoseconds over all CPUs; false if libvirt cannot say. */
static bool node_busy(struct hypervisor *hv, unsigned long long *busy)
{
	virNodeCPUStatsPtr p;
	int i, n = 0;
	bool found = false;

	*busy = 0;
	if (hv->lost || !hv->conn ||
	    virNodeGetCPUStats(hv->conn, VIR_NODE_CPU_STATS_ALL_CPUS, NULL, &n, 0) < 0 || n <= 0)
		return false;
	p = calloc((size_t)n, sizeof(*p));
	if (!p || virNodeGetCPUStats(hv->conn, VIR_NODE_CPU_STATS_ALL_CPUS, p, &n, 0) < 0) {
		free(p);
		return false;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(p[i].field, VIR_NODE_CPU_STATS_USER) ||
		    !strcmp(p[i].field, VIR_NODE_CPU_STATS_KERNEL)) {
			*busy += p[i].value;
			found = true;
		}
	free(p);
	return found;
}

static struct nodeload_guest *find(struct nodeload *l, const char *name)
{
	int i;

	for (i = 0; i < l->ng; i++)
		if (!strcmp(l->g[i].name, name))
			return &l->g[i];
	return NULL;
}

/* The next of this runner's guests on the machine: hv's, then its siblings'. */
static struct guest *next_guest(struct nodeload *l, struct guest *gu, int *which)
{
	if (gu && gu->next)
		return gu->next;
	for (;;) {
		struct hypervisor *hv;

		++*which;
		if (*which > l->nsib)
			return NULL;
		hv = *which == 0 ? l->hv : l->sib[*which - 1];
		if (!hv->lost && hv->guests)
			return hv->guests;
	}
}

/* A guest's entry, made (its CPU time counted from its start) when it is new. */
static struct nodeload_guest *entry(struct nodeload *l, const struct guest *gu)
{
	struct nodeload_guest *e = find(l, gu->name), *g;

	if (e)
		return e;
	g = realloc(l->g, (size_t)(l->ng + 1) * sizeof(*g));
	if (!g)
		return NULL;
	l->g = g;
	e = &l->g[l->ng++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", gu->name);
	e->t = gu->started;
	return e;
}

/* CPU seconds rcuwb's guests on the host used since the last sample; ended ones forgotten. */
static double guests_cpu_s(struct nodeload *l, double now)
{
	struct guest *gu;
	double sum = 0;
	int i, k, which = -1;

	for (i = 0; i < l->ng; i++)
		l->g[i].seen = false;
	for (gu = next_guest(l, NULL, &which); gu; gu = next_guest(l, gu, &which)) {
		virDomainInfo info;
		struct nodeload_guest *e;

		if (!gu->dom || virDomainGetInfo(gu->dom, &info) < 0 || !(e = entry(l, gu)))
			continue;
		sum += (double)(info.cpuTime - e->cpu_ns) / 1e9;
		if (now > e->t)
			e->rate = (double)(info.cpuTime - e->cpu_ns) / 1e9 / (now - e->t);
		e->cpu_ns = info.cpuTime;
		e->t = now;
		e->seen = true;
	}
	for (i = 0, k = 0; i < l->ng; i++) {
		if (!l->g[i].seen)	/* ended: at its last rate until now */
			sum += l->g[i].rate * (now - l->g[i].t);
		else
			l->g[k++] = l->g[i];
	}
	l->ng = k;
	return sum;
}

static void sample(struct nodeload *l)
{
	unsigned long long busy;
	double now = now_s(), g;

	l->valid = node_busy(l->hv, &busy);
	if (!l->valid)
		return;
	g = guests_cpu_s(l, now);
	if (l->t > 0 && busy >= l->busy_ns) {
		double other = (double)(busy - l->busy_ns) / 1e9 - g;

		l->other_s += other > 0 ? other : 0;
	}
	l->busy_ns = busy;
	l->t = now;
}

static void on_tick(int timer, void *opaque)
{
	(void)timer;
	sample(opaque);
}

int nodeload_start(struct nodeload *l, struct hypervisor *hv)
{
	nodeload_stop(l);	/* a host set up again */
	memset(l, 0, sizeof(*l));
	l->hv = hv;
	sample(l);
	l->timer = virEventAddTimeout(NODELOAD_PERIOD_MS, on_tick, l, NULL);
	return l->timer < 0 ? set_err("libvirt event loop: cannot add a timer") : 0;
}

void nodeload_add_sibling(struct nodeload *l, struct hypervisor *hv)
{
	if (l->nsib < NODELOAD_MAX_SIBLINGS)
		l->sib[l->nsib++] = hv;
}

void nodeload_stop(struct nodeload *l)
{
	if (l->timer >= 0 && l->hv)
		virEventRemoveTimeout(l->timer);
	l->nsib = 0;
	l->timer = -1;
	free(l->g);
	l->g = NULL;
	l->ng = 0;
}

void nodeload_mark(struct nodeload *l, struct nodeload_mark *m)
{
	sample(l);
	m->valid = l->valid;
	m->other_s = l->other_s;
	m->t = l->t;
}

double nodeload_other_pus(const struct nodeload_mark *a, const struct nodeload_mark *b)
{
	if (!a->valid || !b->valid || b->t <= a->t)
		return -1;
	return (b->other_s - a->other_s) / (b->t - a->t);
}
