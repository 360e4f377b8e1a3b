/*
 * domxml.c: libvirt domain XML for one guest.
 *
 * The template is parsed with libxml2 and the runner's values are set as
 * attributes and text nodes through libxml2, which escapes them: a kernel
 * command line or a path with '<', '&' or quotes cannot change the XML.
 */
#include "domxml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xpath.h>

#include "common.h"

const char *domxml_template_path(void)
{
	static char path[PATH_MAX];

	return data_path("RCUWB_DOMAIN_TEMPLATE", "VMs/domain.xml", path, sizeof(path));
}

/* The single element at path (created, with parents, if missing). */
static xmlNodePtr node_at(xmlDocPtr doc, const char *path)
{
	xmlNodePtr cur = xmlDocGetRootElement(doc);
	char tmp[128], *save = NULL, *part;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (part = strtok_r(tmp, "/", &save); part && cur; part = strtok_r(NULL, "/", &save)) {
		xmlNodePtr child;

		for (child = cur->children; child; child = child->next)
			if (child->type == XML_ELEMENT_NODE && !xmlStrcmp(child->name, BAD_CAST part))
				break;
		cur = child ? child : xmlNewChild(cur, NULL, BAD_CAST part, NULL);
	}
	return cur;
}

/* Replace the text of an element with a literal (escaped on output). */
static void set_text(xmlNodePtr n, const char *text)
{
	xmlNodePtr child = n->children;

	while (child) {
		xmlNodePtr next = child->next;

		xmlUnlinkNode(child);
		xmlFreeNode(child);
		child = next;
	}
	xmlAddChild(n, xmlNewText(BAD_CAST text));
}

static void set_uint_attr(xmlNodePtr n, const char *attr, unsigned v)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", v);
	xmlSetProp(n, BAD_CAST attr, BAD_CAST s);
}

static void set_uint_text(xmlNodePtr n, unsigned v)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", v);
	set_text(n, s);
}

static void remove_children_named(xmlNodePtr parent, const char *name)
{
	xmlNodePtr c = parent->children;

	while (c) {
		xmlNodePtr next = c->next;

		if (c->type == XML_ELEMENT_NODE && !xmlStrcmp(c->name, BAD_CAST name)) {
			xmlUnlinkNode(c);
			xmlFreeNode(c);
		}
		c = next;
	}
}

static void add_numa(xmlNodePtr cpu, const struct guest_topo *t)
{
	xmlNodePtr numa, cell;
	unsigned i, j;
	char cpus[32];

	remove_children_named(cpu, "numa");
	if (!t->nnodes)
		return;
	numa = xmlNewChild(cpu, NULL, BAD_CAST "numa", NULL);
	for (i = 0; i < t->nnodes; i++) {
		const struct numa_cell *c = &t->cells[i];

		cell = xmlNewChild(numa, NULL, BAD_CAST "cell", NULL);
		set_uint_attr(cell, "id", i);
		if (c->ncpus > 1)
			snprintf(cpus, sizeof(cpus), "%u-%u", c->first_cpu, c->first_cpu + c->ncpus - 1);
		else
			snprintf(cpus, sizeof(cpus), "%u", c->first_cpu);
		xmlSetProp(cell, BAD_CAST "cpus", BAD_CAST cpus);
		set_uint_attr(cell, "memory", c->mem_mib);
		xmlSetProp(cell, BAD_CAST "unit", BAD_CAST "MiB");
		if (!t->distance[i][0])
			continue;
		xmlNodePtr dist = xmlNewChild(cell, NULL, BAD_CAST "distances", NULL);

		for (j = 0; j < t->nnodes; j++) {
			xmlNodePtr sib = xmlNewChild(dist, NULL, BAD_CAST "sibling", NULL);

			set_uint_attr(sib, "id", j);
			set_uint_attr(sib, "value", t->distance[i][j]);
		}
	}
}

static void add_pinning(xmlNodePtr root, const struct domain_params *p)
{
	char all[512] = "", one[16];
	size_t len = 0;
	xmlNodePtr tune;
	unsigned i;

	remove_children_named(root, "cputune");
	remove_children_named(root, "numatune");
	for (i = 0; i < p->npin && len < sizeof(all); i++)
		len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%u", i ? "," : "", p->pin[i]);
	if (p->npin) {
		tune = xmlNewChild(root, NULL, BAD_CAST "cputune", NULL);
		for (i = 0; i < p->topo->vcpus; i++) {
			xmlNodePtr pin = xmlNewChild(tune, NULL, BAD_CAST "vcpupin", NULL);

			snprintf(one, sizeof(one), "%u", p->npin == p->topo->vcpus ? p->pin[i] : 0);
			set_uint_attr(pin, "vcpu", i);
			xmlSetProp(pin, BAD_CAST "cpuset", BAD_CAST(p->npin == p->topo->vcpus ? one : all));
		}
		xmlSetProp(xmlNewChild(tune, NULL, BAD_CAST "emulatorpin", NULL), BAD_CAST "cpuset",
			   BAD_CAST(p->emulator_cpuset ? p->emulator_cpuset : all));
	}
	if (p->mem_nodeset) {
		tune = xmlNewChild(root, NULL, BAD_CAST "numatune", NULL);
		xmlNodePtr mem = xmlNewChild(tune, NULL, BAD_CAST "memory", NULL);

		xmlSetProp(mem, BAD_CAST "mode", BAD_CAST "strict");
		xmlSetProp(mem, BAD_CAST "nodeset", BAD_CAST p->mem_nodeset);
	}
}

/* Name and the files of this guest: kernel, initrd, console. */
static void set_paths(xmlDocPtr doc, const struct domain_params *p)
{
	set_text(node_at(doc, "name"), p->name);
	if (p->description)
		set_text(node_at(doc, "description"), p->description);
	set_text(node_at(doc, "os/kernel"), p->kernel);
	set_text(node_at(doc, "os/initrd"), p->initrd);
	if (p->console)
		xmlSetProp(node_at(doc, "devices/serial/source"), BAD_CAST "path", BAD_CAST p->console);
}

static char *serialise(xmlDocPtr doc)
{
	xmlChar *out = NULL;
	char *ret;
	int len;

	xmlDocDumpFormatMemoryEnc(doc, &out, &len, "UTF-8", 1);
	if (!out) {
		set_err("cannot serialise the domain XML");
		return NULL;
	}
	ret = strdup((const char *)out);
	xmlFree(out);
	return ret;
}

char *domxml_build(const char *template_path, const struct domain_params *p)
{
	xmlDocPtr doc;
	xmlNodePtr root, cpu, topo, serial;
	char *ret = NULL;

	if (!template_path)	/* no data directory: the error is set */
		return NULL;
	doc = xmlReadFile(template_path, NULL, XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc) {
		set_err("%s: not well-formed XML (%s)", template_path,
			xmlGetLastError() ? xmlGetLastError()->message : "?");
		return NULL;
	}
	root = xmlDocGetRootElement(doc);
	if (!root || xmlStrcmp(root->name, BAD_CAST "domain")) {
		set_err("%s: the root element must be <domain>", template_path);
		goto out;
	}
	xmlSetProp(root, BAD_CAST "type", BAD_CAST(p->kvm ? "kvm" : "qemu"));
	set_uint_text(node_at(doc, "memory"), p->topo->mem_mib);
	xmlSetProp(node_at(doc, "memory"), BAD_CAST "unit", BAD_CAST "MiB");
	set_uint_text(node_at(doc, "vcpu"), p->topo->vcpus);
	set_text(node_at(doc, "os/cmdline"), p->cmdline);

	cpu = node_at(doc, "cpu");
	if (p->kvm)
		xmlSetProp(cpu, BAD_CAST "mode", BAD_CAST "host-passthrough");
	else
		xmlUnsetProp(cpu, BAD_CAST "mode");
	topo = node_at(doc, "cpu/topology");
	set_uint_attr(topo, "sockets", p->topo->sockets);
	set_uint_attr(topo, "dies", p->topo->dies);
	set_uint_attr(topo, "cores", p->topo->cores);
	set_uint_attr(topo, "threads", p->topo->threads);
	add_numa(cpu, p->topo);
	add_pinning(root, p);

	serial = node_at(doc, "devices/serial");
	xmlSetProp(serial, BAD_CAST "type", BAD_CAST(p->console ? "file" : "pty"));
	if (!p->console) {
		xmlNodePtr src = node_at(doc, "devices/serial/source");

		xmlUnlinkNode(src);
		xmlFreeNode(src);
		if (p->console_log) {
			xmlNodePtr log = xmlNewNode(NULL, BAD_CAST "log");

			xmlSetProp(log, BAD_CAST "file", BAD_CAST p->console_log);
			xmlSetProp(log, BAD_CAST "append", BAD_CAST "off");
			/* before <target>: libvirt's order */
			if (serial->children)
				xmlAddPrevSibling(serial->children, log);
			else
				xmlAddChild(serial, log);
		}
	}
	set_paths(doc, p);
	ret = serialise(doc);
out:
	xmlFreeDoc(doc);
	return ret;
}

char *domxml_retarget(const char *xml, const struct domain_params *p)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "domain.xml", NULL,
				      XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	char *ret;

	if (!doc) {
		set_err("the stored domain XML is not well-formed");
		return NULL;
	}
	/* a run of a remote host read its console as a pty stream: again here, a file */
	if (p->console) {
		xmlNodePtr log = node_at(doc, "devices/serial/log");

		xmlSetProp(node_at(doc, "devices/serial"), BAD_CAST "type", BAD_CAST "file");
		xmlUnlinkNode(log);	/* virtlogd's copy in that host's pool */
		xmlFreeNode(log);
	}
	set_paths(doc, p);
	ret = serialise(doc);
	xmlFreeDoc(doc);
	return ret;
}
