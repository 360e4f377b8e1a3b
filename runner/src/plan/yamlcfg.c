/*
 * yamlcfg.c: reading rcuwb's YAML files (matrices, schedules).
 *
 * A file is loaded whole as a libyaml document; the typed getters check a
 * node and report what is wrong with it as "FILE:LINE: KEY: what to give".
 */
#define _GNU_SOURCE
#include "yamlcfg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int ycfg_load(const char *path, const char *what, yaml_document_t *doc)
{
	yaml_parser_t parser;
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return set_err("cannot open %s %s: %s", what, path, strerror(errno));
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, doc))
		ret = set_err("%s:%zu: not valid YAML: %s", path, parser.problem_mark.line + 1,
			      parser.problem ? parser.problem : "?");
	yaml_parser_delete(&parser);
	fclose(f);
	return ret;
}

yaml_node_t *ycfg_node(struct ycfg *c, int i)
{
	return yaml_document_get_node(c->doc, i);
}

int ycfg_line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

int ycfg_err(struct ycfg *c, const yaml_node_t *n, const char *key, const char *msg)
{
	return set_err("%s:%d: %s: %s", c->path, ycfg_line(n), key, msg);
}

const char *ycfg_scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int ycfg_int(struct ycfg *c, yaml_node_t *n, const char *key, int min, int max, int *out)
{
	const char *s = ycfg_scalar(n);
	char *end, msg[96];
	long v;

	snprintf(msg, sizeof(msg), "give a whole number from %d to %d", min, max);
	if (!s)
		return ycfg_err(c, n, key, msg);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return ycfg_err(c, n, key, msg);
	*out = (int)v;
	return 0;
}

int ycfg_str(struct ycfg *c, yaml_node_t *n, const char *key, char *out, size_t cap)
{
	const char *s = ycfg_scalar(n);

	if (!s)
		return ycfg_err(c, n, key, "give a string");
	if (strlen(s) >= cap)
		return ycfg_err(c, n, key, "too long");
	snprintf(out, cap, "%s", s);
	return 0;
}

int ycfg_seq(struct ycfg *c, yaml_node_t *n, const char *key, int max, yaml_node_t **items, int *count)
{
	yaml_node_item_t *it;
	char msg[64];

	*count = 0;
	if (n->type == YAML_SCALAR_NODE) {
		items[(*count)++] = n;
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return ycfg_err(c, n, key, "give a list");
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		if (*count == max) {
			snprintf(msg, sizeof(msg), "at most %d entries", max);
			return ycfg_err(c, n, key, msg);
		}
		items[(*count)++] = ycfg_node(c, *it);
	}
	if (!*count)
		return ycfg_err(c, n, key, "the list is empty");
	return 0;
}
