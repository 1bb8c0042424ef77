/*
 * calib.c - calibration files (calib.h): libyaml's document API keeps every
 * node's line and column, so each message is "file:line:col: ..." at the
 * node at fault, as the kernel profile's parser words them. The document
 * is freed before returning; the caller owns factor[].
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "config/config.h"
#include "core/file.h"
#include "hw/yaml_node.h"
#include "hw/calib.h"

#define CS__CALIB_MAX_BYTES ((size_t)1 << 20)

static const char *const class_keys[CS_COMPUTE_KINDS] = {
	"gemm", "attention", "memory_bound", "optimizer", NULL
};

typedef struct parser {
	const char *file;
	yaml_document_t doc;
	cs_diag *diag;
} parser;

const char *cs_calib_key(cs_compute_kind k)
{
	return (int)k >= 0 && k < CS_COMPUTE_KINDS ? class_keys[k] : NULL;
}

#define at(ps, node, ...) cs__yaml_at((ps)->diag, (ps)->file, (node), __VA_ARGS__)

#define type_word cs__yaml_type_word

static const char *text(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

static yaml_node_t *node_at(parser *ps, int id)
{
	return yaml_document_get_node(&ps->doc, id);
}

static cs_status check_keys(parser *ps, const yaml_node_t *map)
{
	return cs__yaml_check_keys(ps->diag, ps->file, &ps->doc, map);
}

static cs_status parse_classes(parser *ps, const yaml_node_t *map, double *factor)
{
	if (map->type != YAML_MAPPING_NODE)
		return at(ps, map, "'calibration' must be a mapping of class: factor, not %s",
			  type_word(map));
	cs_status st = check_keys(ps, map);
	if (st != CS_OK)
		return st;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		int c = 0;
		while (c < CS_COMPUTE_HOST && strcmp(class_keys[c], text(k)) != 0)
			c++;
		if (c == CS_COMPUTE_HOST) {
			const char *near = cs_suggest(text(k), class_keys, CS_COMPUTE_HOST);
			char hint[64] = "";
			if (near)
				snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
			return at(ps, k, "unknown class '%.100s' in 'calibration'%s; allowed: gemm, "
				  "attention, memory_bound, optimizer", text(k), hint);
		}
		double f;
		if (!v || v->type != YAML_SCALAR_NODE)
			return at(ps, v ? v : k, "'%s' expects a number, not %s", class_keys[c],
				  v ? type_word(v) : "nothing");
		if (!cs__yaml_number(v, &f))
			return at(ps, v, "'%s' expects a number, not '%.60s'", class_keys[c], text(v));
		if (!isfinite(f) || !(f > 0.0))
			return at(ps, v, "'%s' must be a positive finite number, not '%.60s'",
				  class_keys[c], text(v));
		factor[c] = f;
	}
	return CS_OK;
}

static cs_status parse_root(parser *ps, const yaml_node_t *root, double *factor)
{
	if (root->type != YAML_MAPPING_NODE)
		return at(ps, root, "the top level must be a mapping with the key 'calibration', not %s",
			  type_word(root));
	cs_status st = check_keys(ps, root);
	if (st != CS_OK)
		return st;
	const yaml_node_t *classes = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key);
		if (strcmp(text(k), "calibration") != 0) {
			static const char *const allowed[] = { "calibration" };
			const char *near = cs_suggest(text(k), allowed, 1);
			return at(ps, k, "unknown key '%.100s'%s; allowed: calibration", text(k),
				  near ? " (did you mean 'calibration'?)" : "");
		}
		classes = node_at(ps, p->value);
	}
	if (!classes)
		return at(ps, root, "no 'calibration' mapping");
	return parse_classes(ps, classes, factor);
}

cs_status cs_calib_parse(const char *buf, size_t len, const char *file,
			 double factor[CS_COMPUTE_KINDS], cs_diag *diag)
{
	parser one = { .file = file, .diag = diag };
	yaml_parser_t yp;
	yaml_document_t extra;
	cs_status st;

	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		factor[k] = 1.0;
	if (!yaml_parser_initialize(&yp)) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory parsing '%.300s'", file);
		return CS_ERR_NOMEM;
	}
	yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&yp, &one.doc)) {
		st = cs__yaml_error(&yp, file, diag);
		yaml_parser_delete(&yp);
		return st;
	}
	yaml_node_t *root = yaml_document_get_root_node(&one.doc);
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
		snprintf(diag->msg, sizeof diag->msg, "%.300s:1:1: empty calibration (expected a "
			 "mapping with the key 'calibration')", file);
		st = CS_ERR_INPUT;
	} else if ((st = parse_root(&one, root, factor)) == CS_OK) {
		if (!yaml_parser_load(&yp, &extra)) {
			st = cs__yaml_error(&yp, file, diag);
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);
			if (r2)
				st = at(&one, r2, "only one yaml document per calibration");
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&one.doc);
	yaml_parser_delete(&yp);
	if (st != CS_OK)
		for (int k = 0; k < CS_COMPUTE_KINDS; k++)
			factor[k] = 1.0;
	return st;
}

cs_status cs_calib_load(const char *path, double factor[CS_COMPUTE_KINDS], cs_diag *diag)
{
	char *buf = NULL;
	size_t len = 0;
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		factor[k] = 1.0;
	cs_status st = cs_file_read(path, CS__CALIB_MAX_BYTES, &buf, &len, diag);
	if (st == CS_OK)
		st = cs_calib_parse(buf, len, path, factor, diag);
	free(buf);
	return st;
}

int cs_calib_write(FILE *f, const char *scenario, const char *trace,
		   const double factor[CS_COMPUTE_KINDS], const bool have[CS_COMPUTE_KINDS])
{
	fprintf(f, "# calibration of %s from %s, made by clustersim calibrate\ncalibration:\n",
		scenario, trace);
	for (int k = 0; k < CS_COMPUTE_HOST; k++)
		if (have[k])
			fprintf(f, "  %s: %.4g\n", class_keys[k], factor[k]);
	return ferror(f) ? -1 : 0;
}
