/*
 * yaml_node.h - what the library's YAML readers (scenarios here; kernel
 * profiles and calibrations in src/hw) share: messages at a node, node
 * types in words, libyaml's own errors, plain scalars as numbers. Internal
 * to the library.
 */
#ifndef CS_CONFIG_YAML_NODE_H
#define CS_CONFIG_YAML_NODE_H

#include <stdbool.h>
#include <yaml.h>

#include "clustersim/clustersim.h"

/* "file:line:col: message" at `node` into diag (the file's first 300 bytes,
 * the message's first 680); returns CS_ERR_INPUT. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
cs_status
cs__yaml_at(cs_diag *diag, const char *file, const yaml_node_t *node, const char *fmt, ...);
/* "a mapping", "a list", "a scalar" or "an empty value". */
const char *cs__yaml_type_word(const yaml_node_t *node);
/* libyaml's parse error as "file:line:col: yaml: problem (context, line
 * n)" (CS_ERR_INPUT), or "out of memory parsing 'file'" (CS_ERR_NOMEM). */
cs_status cs__yaml_error(const yaml_parser_t *yp, const char *file, cs_diag *diag);
/* The first document of `buf` into *doc, read by *yp, which the caller
 * deletes after (it reads on: a second document is the caller's to
 * refuse). One pass over the events comes first and refuses nesting deeper
 * than CS_CONFIG_MAX_DEPTH levels at its place: libyaml builds a deep
 * document in time quadratic in its depth (80,000 levels, 30 s). Else
 * libyaml's error (cs__yaml_error), *yp then deleted already. */
cs_status cs__yaml_load(yaml_parser_t *yp, const char *buf, size_t len, const char *file,
			yaml_document_t *doc, cs_diag *diag);
/* The keys of mapping `map` in `doc`: plain scalars, each once; else the
 * message at the offending key (CS_ERR_INPUT). */
cs_status cs__yaml_check_keys(cs_diag *diag, const char *file, yaml_document_t *doc, const yaml_node_t *map);
/* A plain scalar's number, YAML's non-finite spellings included (the
 * caller refuses them); false when the node is not one. */
bool cs__yaml_number(const yaml_node_t *node, double *out);

#endif
