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
#include "config/yaml_node.h"
#include "hw/calib.h"

#define CS__CALIB_MAX_BYTES ((size_t)1 << 20)

static const char *const class_keys[CS_COMPUTE_KINDS] = { "gemm", "attention", "memory_bound", "optimizer",
							  NULL };
static const char *const net_keys[CS_CALIB_NETS] = { "scale_up_bandwidth", "scale_out_bandwidth", "latency" };
/* host: the gap, then each class's kernel count factor */
static const char *const host_keys[1 + CS_COMPUTE_HOST] = { "kernel_gap_us", "gemm_kernels",
							    "attention_kernels", "memory_bound_kernels",
							    "optimizer_kernels" };

void cs_calib_init(cs_calib *c)
{
	memset(c, 0, sizeof *c);
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		c->factor[k] = 1.0;
	for (int k = 0; k < CS_CALIB_NETS; k++)
		c->net[k] = 1.0;
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		c->kernels[k] = 1.0;
}

static int cmp_shape(const cs_calib_shape *a, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	if (a->m != m)
		return a->m < m ? -1 : 1;
	if (a->n != n)
		return a->n < n ? -1 : 1;
	if (a->k != k)
		return a->k < k ? -1 : 1;
	return (a->batch > batch) - (a->batch < batch);
}

/* The first shape not before (m, n, k, batch). */
static size_t lower_bound(const cs_calib *c, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	size_t lo = 0, hi = c->nshapes;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cmp_shape(&c->shape[mid], m, n, k, batch) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

double cs_calib_gemm_factor(const cs_calib *c, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	size_t i = lower_bound(c, m, n, k, batch);
	if (i < c->nshapes && cmp_shape(&c->shape[i], m, n, k, batch) == 0)
		return c->shape[i].factor;
	return c->factor[CS_COMPUTE_GEMM];
}

int cs_calib_set_shape(cs_calib *c, const cs_calib_shape *s)
{
	size_t i = lower_bound(c, s->m, s->n, s->k, s->batch);
	if (i < c->nshapes && cmp_shape(&c->shape[i], s->m, s->n, s->k, s->batch) == 0) {
		c->shape[i] = *s;
		return 0;
	}
	if (c->nshapes == CS_CALIB_MAX_SHAPES)
		return -1;
	memmove(&c->shape[i + 1], &c->shape[i], (c->nshapes - i) * sizeof *c->shape);
	c->shape[i] = *s;
	c->nshapes++;
	return 0;
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

const char *cs_calib_net_key(cs_calib_net k) { return (int)k >= 0 && k < CS_CALIB_NETS ? net_keys[k] : NULL; }

#define at(ps, node, ...) cs__yaml_at((ps)->diag, (ps)->file, (node), __VA_ARGS__)

#define type_word cs__yaml_type_word

static const char *text(const yaml_node_t *node) { return (const char *)node->data.scalar.value; }

static yaml_node_t *node_at(parser *ps, int id) { return yaml_document_get_node(&ps->doc, id); }

static cs_status check_keys(parser *ps, const yaml_node_t *map)
{
	return cs__yaml_check_keys(ps->diag, ps->file, &ps->doc, map);
}

/* The host's figures beyond which no framework drives a GPU: a second
 * between two kernels, a thousand kernels launched per kernel of the model.
 * Larger ones would only overflow the step's integer time. */
static const double host_max[1 + CS_COMPUTE_HOST] = { CS_CALIB_MAX_GAP_US, CS_CALIB_MAX_KERNELS,
						      CS_CALIB_MAX_KERNELS, CS_CALIB_MAX_KERNELS,
						      CS_CALIB_MAX_KERNELS };

/* One section: a mapping of the keys keys[0..n) to positive factors, each
 * at most max[key] when max is given. */
static cs_status parse_section(parser *ps, const char *section, const yaml_node_t *map,
			       const char *const *keys, int n, const char *allowed, double *factor, bool *has,
			       int zero_ok, const double *max)
{
	if (map->type != YAML_MAPPING_NODE)
		return at(ps, map, "'%s' must be a mapping of name: factor, not %s", section, type_word(map));
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
		if (c == zero_ok && (!isfinite(f) || f < 0.0))
			return at(ps, v, "'%s' must be a finite number, zero or more, not '%.60s'", keys[c],
				  text(v));
		if (c != zero_ok && (!isfinite(f) || !(f > 0.0)))
			return at(ps, v, "'%s' must be a positive finite number, not '%.60s'", keys[c],
				  text(v));
		if (max && f > max[c])
			return at(ps, v, "'%s' must be at most %g, not '%.60s'", keys[c], max[c], text(v));
		factor[c] = f;
		has[c] = true;
	}
	return CS_OK;
}

/* gemm_shapes: a list of [M, N, K, batch, factor]. */
static cs_status parse_shapes(parser *ps, const yaml_node_t *list, cs_calib *out)
{
	if (list->type != YAML_SEQUENCE_NODE)
		return at(ps, list, "'gemm_shapes' must be a list of [M, N, K, batch, factor], not %s",
			  type_word(list));
	for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
	     it++) {
		yaml_node_t *row = node_at(ps, *it);
		if (row->type != YAML_SEQUENCE_NODE ||
		    row->data.sequence.items.top - row->data.sequence.items.start != 5)
			return at(ps, row, "a GEMM shape is [M, N, K, batch, factor], five numbers");
		double v[5];
		for (int i = 0; i < 5; i++) {
			yaml_node_t *x = node_at(ps, row->data.sequence.items.start[i]);
			if (x->type != YAML_SCALAR_NODE || !cs__yaml_number(x, &v[i]) || !isfinite(v[i]) ||
			    !(v[i] > 0) || (i < 4 && (v[i] != floor(v[i]) || v[i] > CS_CALIB_MAX_DIM)))
				return at(ps, x,
					  i < 4 ? "'%s' must be a whole number from 1 to 1e12"
						: "'%s' must be a positive finite number",
					  (const char *[]){ "M", "N", "K", "batch", "factor" }[i]);
		}
		cs_calib_shape s = { (int64_t)v[0], (int64_t)v[1], (int64_t)v[2], (int64_t)v[3], v[4] };
		size_t before = out->nshapes;
		if (cs_calib_set_shape(out, &s) != 0)
			return at(ps, row, "more than %d GEMM shapes", CS_CALIB_MAX_SHAPES);
		if (out->nshapes == before)
			return at(ps, row, "GEMM shape [%lld, %lld, %lld, %lld] is listed twice",
				  (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.batch);
	}
	return CS_OK;
}

static cs_status parse_root(parser *ps, const yaml_node_t *root, cs_calib *out)
{
	static const char *const sections[] = { "calibration", "gemm_shapes", "host", "network" };
	if (root->type != YAML_MAPPING_NODE)
		return at(ps, root,
			  "the top level must be a mapping of 'calibration', 'gemm_shapes', "
			  "'host' and 'network', not %s",
			  type_word(root));
	cs_status st = check_keys(ps, root);
	if (st != CS_OK)
		return st;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		if (strcmp(text(k), "calibration") == 0) {
			st = parse_section(ps, "calibration", v, class_keys, CS_COMPUTE_HOST,
					   "gemm, attention, memory_bound, optimizer", out->factor,
					   out->has_factor, -1, NULL);
		} else if (strcmp(text(k), "gemm_shapes") == 0) {
			st = parse_shapes(ps, v, out);
		} else if (strcmp(text(k), "host") == 0) {
			double h[1 + CS_COMPUTE_HOST] = { 0, 1, 1, 1, 1 };
			bool has[1 + CS_COMPUTE_HOST] = { 0 };
			st = parse_section(ps, "host", v, host_keys, 1 + CS_COMPUTE_HOST,
					   "kernel_gap_us, gemm_kernels, attention_kernels, "
					   "memory_bound_kernels, optimizer_kernels",
					   h, has, 0, host_max);
			out->kernel_gap_us = h[0];
			out->has_gap = has[0];
			for (int c = 0; c < CS_COMPUTE_HOST; c++) {
				out->kernels[c] = h[1 + c];
				out->has_kernels[c] = has[1 + c];
			}
		} else if (strcmp(text(k), "network") == 0) {
			st = parse_section(ps, "network", v, net_keys, CS_CALIB_NETS,
					   "scale_up_bandwidth, scale_out_bandwidth, latency", out->net,
					   out->has_net, -1, NULL);
		} else {
			const char *near = cs_suggest(text(k), sections, 4);
			char hint[64] = "";
			if (near)
				snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
			return at(ps, k,
				  "unknown key '%.100s'%s; allowed: calibration, gemm_shapes, host, "
				  "network",
				  text(k), hint);
		}
		if (st != CS_OK)
			return st;
	}
	return CS_OK;
}

cs_status cs_calib_parse(const char *buf, size_t len, const char *file, cs_calib *out, cs_diag *diag)
{
	parser one = { .file = file, .diag = diag };
	yaml_parser_t yp;
	yaml_document_t extra;
	cs_status st;

	cs_calib_init(out);
	if ((st = cs__yaml_load(&yp, buf, len, file, &one.doc, diag)) != CS_OK)
		return st;
	yaml_node_t *root = yaml_document_get_root_node(&one.doc);
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
		snprintf(diag->msg, sizeof diag->msg,
			 "%.300s:1:1: empty calibration (expected a "
			 "mapping of 'calibration', 'gemm_shapes', 'host' and 'network')",
			 file);
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

static void write_section(FILE *f, const char *name, const char *const *keys, int n, const double *v,
			  const bool *has)
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
	if (c->nshapes) {
		fprintf(f, "gemm_shapes:  # [M, N, K, batch, factor]\n");
		for (size_t i = 0; i < c->nshapes; i++)
			fprintf(f, "  - [%lld, %lld, %lld, %lld, %.4g]\n", (long long)c->shape[i].m,
				(long long)c->shape[i].n, (long long)c->shape[i].k,
				(long long)c->shape[i].batch, c->shape[i].factor);
	}
	double h[1 + CS_COMPUTE_HOST];
	bool has[1 + CS_COMPUTE_HOST];
	h[0] = c->kernel_gap_us;
	has[0] = c->has_gap;
	for (int k = 0; k < CS_COMPUTE_HOST; k++) {
		h[1 + k] = c->kernels[k];
		has[1 + k] = c->has_kernels[k];
	}
	write_section(f, "host", host_keys, 1 + CS_COMPUTE_HOST, h, has);
	write_section(f, "network", net_keys, CS_CALIB_NETS, c->net, c->has_net);
	return ferror(f) ? -1 : 0;
}
