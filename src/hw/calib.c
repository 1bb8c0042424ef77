/*
 * calib.c - calibration files (calib.h): libyaml's document API keeps every
 * node's line and column, so each message is "file:line:col: ..." at the
 * node at fault, as the kernel profile's parser words them. The document
 * is freed before returning; the caller owns the cs_calib.
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
static const char *const net_keys[CS_CALIB_NETS] = {
	"scale_up_bandwidth", "scale_out_bandwidth", "latency"
};

void cs_calib_init(cs_calib *c)
{
	memset(c, 0, sizeof *c);
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		c->factor[k] = 1.0;
	for (int k = 0; k < CS_CALIB_NETS; k++)
		c->net[k] = 1.0;
}

typedef struct parser {
	const char *file;
	yaml_document_t doc;
	cs_diag *diag;
} parser;

const char *cs_calib_key(cs_compute_kind k)
{
	return (int)k >= 0 && k < CS_COMPUTE_KINDS ? class_keys[k] : NULL;
}

const char *cs_calib_net_key(cs_calib_net k)
{
	return (int)k >= 0 && k < CS_CALIB_NETS ? net_keys[k] : NULL;
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

/* One section: a mapping of the keys keys[0..n) to positive factors. */
static cs_status parse_section(parser *ps, const char *section, const yaml_node_t *map,
			       const char *const *keys, int n, const char *allowed, double *factor,
			       bool *has)
{
	if (map->type != YAML_MAPPING_NODE)
		return at(ps, map, "'%s' must be a mapping of name: factor, not %s", section,
			  type_word(map));
	cs_status st = check_keys(ps, map);
	if (st != CS_OK)
		return st;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		int c = 0;
		while (c < n && strcmp(keys[c], text(k)) != 0)
			c++;
		if (c == n) {
			const char *near = cs_suggest(text(k), keys, (size_t)n);
			char hint[64] = "";
			if (near)
				snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
			return at(ps, k, "unknown key '%.100s' in '%s'%s; allowed: %s", text(k), section,
				  hint, allowed);
		}
		double f;
		if (!v || v->type != YAML_SCALAR_NODE)
			return at(ps, v ? v : k, "'%s' expects a number, not %s", keys[c],
				  v ? type_word(v) : "nothing");
		if (!cs__yaml_number(v, &f))
			return at(ps, v, "'%s' expects a number, not '%.60s'", keys[c], text(v));
		if (!isfinite(f) || !(f > 0.0))
			return at(ps, v, "'%s' must be a positive finite number, not '%.60s'", keys[c],
				  text(v));
		factor[c] = f;
		has[c] = true;
	}
	return CS_OK;
}

static cs_status parse_root(parser *ps, const yaml_node_t *root, cs_calib *out)
{
	static const char *const sections[] = { "calibration", "network" };
	if (root->type != YAML_MAPPING_NODE)
		return at(ps, root, "the top level must be a mapping with the keys 'calibration' and "
			  "'network', not %s", type_word(root));
	cs_status st = check_keys(ps, root);
	if (st != CS_OK)
		return st;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		if (strcmp(text(k), sections[0]) == 0) {
			st = parse_section(ps, sections[0], v, class_keys, CS_COMPUTE_HOST,
					   "gemm, attention, memory_bound, optimizer", out->factor,
					   out->has_factor);
		} else if (strcmp(text(k), sections[1]) == 0) {
			st = parse_section(ps, sections[1], v, net_keys, CS_CALIB_NETS,
					   "scale_up_bandwidth, scale_out_bandwidth, latency", out->net,
					   out->has_net);
		} else {
			const char *near = cs_suggest(text(k), sections, 2);
			char hint[64] = "";
			if (near)
				snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
			return at(ps, k, "unknown key '%.100s'%s; allowed: calibration, network", text(k),
				  hint);
		}
		if (st != CS_OK)
			return st;
	}
	return CS_OK;
}

cs_status cs_calib_parse(const char *buf, size_t len, const char *file, cs_calib *out,
			 cs_diag *diag)
{
	parser one = { .file = file, .diag = diag };
	yaml_parser_t yp;
	yaml_document_t extra;
	cs_status st;

	cs_calib_init(out);
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
			 "mapping with the keys 'calibration' and 'network')", file);
		st = CS_ERR_INPUT;
	} else if ((st = parse_root(&one, root, out)) == CS_OK) {
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
		cs_calib_init(out);
	return st;
}

cs_status cs_calib_load(const char *path, cs_calib *out, cs_diag *diag)
{
	char *buf = NULL;
	size_t len = 0;
	cs_calib_init(out);
	cs_status st = cs_file_read(path, CS__CALIB_MAX_BYTES, &buf, &len, diag);
	if (st == CS_OK)
		st = cs_calib_parse(buf, len, path, out, diag);
	free(buf);
	return st;
}

static void write_section(FILE *f, const char *name, const char *const *keys, int n,
			  const double *v, const bool *has)
{
	bool any = false;
	for (int k = 0; k < n; k++)
		any |= has[k];
	if (!any)
		return;
	fprintf(f, "%s:\n", name);
	for (int k = 0; k < n; k++)
		if (has[k])
			fprintf(f, "  %s: %.4g\n", keys[k], v[k]);
}

int cs_calib_write(FILE *f, const char *scenario, const char *source, const cs_calib *c)
{
	fprintf(f, "# calibration of %s from %s, made by clustersim calibrate\n", scenario, source);
	write_section(f, "calibration", class_keys, CS_COMPUTE_HOST, c->factor, c->has_factor);
	write_section(f, "network", net_keys, CS_CALIB_NETS, c->net, c->has_net);
	return ferror(f) ? -1 : 0;
}
