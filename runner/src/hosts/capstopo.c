/* capstopo.c: the host topology from libvirt's capabilities XML. */
#include "capstopo.h"

#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "common.h"

static unsigned uattr(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, BAD_CAST name);
	unsigned r = v ? (unsigned)strtoul((const char *)v, NULL, 10) : 0;

	xmlFree(v);
	return r;
}

static int by_place(const void *a, const void *b)
{
	const struct caps_cpu *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Distinct (node, socket, core) among sorted CPUs. */
static unsigned count_cores(const struct caps_cpu *c, unsigned n)
{
	unsigned i, k = n ? 1 : 0;

	for (i = 1; i < n; i++)
		k += c[i].node != c[i - 1].node || c[i].socket != c[i - 1].socket || c[i].core != c[i - 1].core;
	return k;
}

int capstopo_parse(const char *xml, struct host_info *h, struct caps_cpu *cpus, unsigned cap, unsigned *n)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "capabilities.xml", NULL,
				      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlXPathContextPtr ctx = doc ? xmlXPathNewContext(doc) : NULL;
	xmlXPathObjectPtr cells = ctx ? xmlXPathEvalExpression(
		BAD_CAST "/capabilities/host/topology/cells/cell", ctx) : NULL;
	int i, ret = 0;

	*n = 0;
	h->pus = h->cores = h->nodes = 0;
	if (!cells || !cells->nodesetval || !cells->nodesetval->nodeNr) {
		ret = set_err("libvirt's capabilities carry no host topology (no <cells>)");
		goto out;
	}
	for (i = 0; i < cells->nodesetval->nodeNr; i++) {
		xmlNodePtr cell = cells->nodesetval->nodeTab[i], c, cpu;
		unsigned node = uattr(cell, "id");

		for (c = cell->children; c; c = c->next) {
			if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, BAD_CAST "cpus"))
				continue;
			for (cpu = c->children; cpu; cpu = cpu->next) {
				if (cpu->type != XML_ELEMENT_NODE || xmlStrcmp(cpu->name, BAD_CAST "cpu"))
					continue;
				if (*n == cap) {
					ret = set_err("the host has more than %u CPUs", cap);
					goto out;
				}
				cpus[*n] = (struct caps_cpu){ .id = uattr(cpu, "id"), .node = node,
							      .socket = uattr(cpu, "socket_id"),
							      .core = uattr(cpu, "core_id") };
				(*n)++;
			}
		}
	}
	if (!*n) {
		ret = set_err("libvirt's capabilities list no host CPUs");
		goto out;
	}
	qsort(cpus, *n, sizeof(*cpus), by_place);
	h->pus = *n;
	h->cores = count_cores(cpus, *n);
	h->nodes = (unsigned)cells->nodesetval->nodeNr;
out:
	xmlXPathFreeObject(cells);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	return ret;
}
