/* yamlcfg.h: reading rcuwb's YAML files (libyaml documents) with file:line:key errors. */
#ifndef RCUWB_YAMLCFG_H
#define RCUWB_YAMLCFG_H

#include <stddef.h>

#include <yaml.h>

/* One loaded YAML file: its path (for errors) and its document. */
struct ycfg {
	const char *path;
	yaml_document_t *doc;
};

/*
 * Load the YAML document of path (a `what`: "matrix", "schedule") into *doc;
 * errors name the file and the line.  An empty file has no root node.
 */
int ycfg_load(const char *path, const char *what, yaml_document_t *doc);
yaml_node_t *ycfg_node(struct ycfg *c, int i);
int ycfg_line(const yaml_node_t *n);
/* set_err("PATH:LINE: KEY: MSG"); returns -1 */
int ycfg_err(struct ycfg *c, const yaml_node_t *n, const char *key, const char *msg);
/* The text of a scalar node, NULL for anything else. */
const char *ycfg_scalar(const yaml_node_t *n);
int ycfg_int(struct ycfg *c, yaml_node_t *n, const char *key, int min, int max, int *out);
int ycfg_str(struct ycfg *c, yaml_node_t *n, const char *key, char *out, size_t cap);
/* A sequence of at most max items, or a single scalar standing for a one-element sequence. */
int ycfg_seq(struct ycfg *c, yaml_node_t *n, const char *key, int max, yaml_node_t **items, int *count);

/* Every key k and value v of mapping node map. */
#define YCFG_FOR_PAIRS(c, map, k, v)							\
	for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;			\
	     p_ < (map)->data.mapping.pairs.top &&					\
	     ((k) = ycfg_node(c, p_->key), (v) = ycfg_node(c, p_->value), 1); p_++)

#endif
