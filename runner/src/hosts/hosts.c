/*
 * hosts.c: the hosts file.
 *
 *   hosts:
 *     - uri: qemu+ssh://bench@big1/system
 *       label: big1
 *       pus: 32
 *       cpus: 0-31
 *       pool: /var/lib/libvirt/rcuwb-pool
 *       reconnect: 300
 *
 * perf-configs/hosts/README.md documents the keys.
 */
#define _GNU_SOURCE
#include "hosts.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "topo.h"
#include "yamlcfg.h"

static bool plain(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(s);
}

static void spec_defaults(struct host_spec *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->pool, sizeof(h->pool), "%s", HOSTS_DEFAULT_POOL);
	h->reconnect_s = HOSTS_DEFAULT_RECONNECT_S;
}

void hosts_single(struct hosts *hs, const char *uri)
{
	memset(hs, 0, sizeof(*hs));
	hs->n = 1;
	spec_defaults(&hs->h[0]);
	snprintf(hs->h[0].uri, sizeof(hs->h[0].uri), "%s", uri);
}

bool hosts_uri_is_local(const char *uri)
{
	return !strcmp(uri, "qemu:///system");
}

static int parse_host(struct ycfg *c, yaml_node_t *n, struct host_spec *h)
{
	yaml_node_t *k, *v;

	spec_defaults(h);
	if (n->type != YAML_MAPPING_NODE)
		return ycfg_err(c, n, "hosts", "each host is a mapping: {uri: URI, label: NAME, pus: N}");
	YCFG_FOR_PAIRS(c, n, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";
		int r, pus = 0;

		if (!strcmp(ks, "uri"))
			r = ycfg_str(c, v, "uri", h->uri, sizeof(h->uri));
		else if (!strcmp(ks, "label"))
			r = ycfg_str(c, v, "label", h->label, sizeof(h->label));
		else if (!strcmp(ks, "pus")) {
			r = ycfg_int(c, v, "pus", 1, 4096, &pus);
			h->pus = (unsigned)pus;
		} else if (!strcmp(ks, "cpus")) {
			char list[128];

			r = ycfg_str(c, v, "cpus", list, sizeof(list));
			if (r == 0 && (parse_cpulist(list, &h->cpus) < 0 || !h->cpus))
				return ycfg_err(c, v, "cpus", "give host PUs 0-63 as a list, e.g. \"1\" or \"0-3,8\"");
		} else if (!strcmp(ks, "pool"))
			r = ycfg_str(c, v, "pool", h->pool, sizeof(h->pool));
		else if (!strcmp(ks, "reconnect"))
			r = ycfg_int(c, v, "reconnect", 1, 86400, &h->reconnect_s);
		else
			return ycfg_err(c, k, ks, "unknown key (uri, label, pus, cpus, pool, reconnect)");
		if (r < 0)
			return -1;
	}
	if (!h->uri[0])
		return ycfg_err(c, n, "uri", "missing: the libvirt URI of the host, e.g. qemu+ssh://user@host/system");
	if (strpbrk(h->uri, " \t\"'`$\\;|&<>"))
		return ycfg_err(c, n, "uri", "no spaces, quotes or shell characters in a URI");
	if (h->label[0] && !plain(h->label))
		return ycfg_err(c, n, "label", "letters, digits, '.', '_' and '-' only");
	if (h->pool[0] != '/')
		return ycfg_err(c, n, "pool", "give an absolute directory on that host");
	return 0;
}

static int parse_root(struct ycfg *c, yaml_node_t *root, struct hosts *hs)
{
	yaml_node_t *k, *v, *items[HOSTS_MAX + 1];
	int i, j, count = 0;

	if (!root)
		return set_err("%s: empty: give a hosts: list (perf-configs/hosts/README.md)", c->path);
	if (root->type != YAML_MAPPING_NODE)
		return ycfg_err(c, root, "hosts", "give a mapping with a hosts: list");
	YCFG_FOR_PAIRS(c, root, k, v) {
		const char *ks = ycfg_scalar(k) ? ycfg_scalar(k) : "?";

		if (strcmp(ks, "hosts"))
			return ycfg_err(c, k, ks, "unknown key (hosts)");
		if (v->type != YAML_SEQUENCE_NODE)
			return ycfg_err(c, v, "hosts", "give a list of hosts");
		if (ycfg_seq(c, v, "hosts", HOSTS_MAX, items, &count) < 0)
			return -1;
		for (i = 0; i < count; i++)
			if (parse_host(c, items[i], &hs->h[i]) < 0)
				return -1;
		for (i = 0; i < count; i++)
			for (j = 0; j < i; j++) {
				if (!strcmp(hs->h[i].uri, hs->h[j].uri))
					return ycfg_err(c, items[i], "uri", "listed twice");
				if (hs->h[i].label[0] && !strcmp(hs->h[i].label, hs->h[j].label))
					return ycfg_err(c, items[i], "label", "two hosts with one label");
			}
	}
	if (!count)
		return ycfg_err(c, root, "hosts", "missing: list at least one host");
	hs->n = count;
	return 0;
}

int hosts_load(const char *path, struct hosts *hs)
{
	yaml_document_t doc;
	struct ycfg c = { .path = path, .doc = &doc };
	int ret;

	memset(hs, 0, sizeof(*hs));
	snprintf(hs->path, sizeof(hs->path), "%s", path);
	if (ycfg_load(path, "hosts file", &doc) < 0)
		return -1;
	ret = parse_root(&c, yaml_document_get_root_node(&doc), hs);
	yaml_document_delete(&doc);
	return ret;
}
