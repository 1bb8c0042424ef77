/*
 * kprof_parse.c - a kernel profile's YAML text into raw tables
 * (cs__kprof_read; kprof_load.c has the public entry points).
 *
 * The text is loaded with libyaml's document API so that every node keeps
 * its line and column; every message is "file:line:col: ..." at the node at
 * fault. This file checks keys, types, numbers, row lengths and the order
 * of rows; kprof_build.c checks the grids' shapes and builds the lookups.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "config/config.h"
#include "config/yaml_node.h"
#include "hw/kprof_int.h"

typedef struct parser {
	const char *file;
	yaml_document_t doc;
	cs_diag *diag;
	cs__kprof_raw *raw;
} parser;

/* A table's columns: names for messages, and which hold integers or bools. */
typedef struct columns {
	size_t n;
	const char *names[7];
	char kind[7]; /* 'i' positive integer, 'f' positive number, 'b' bool */
	const char *shape;
} columns;

static const columns gemm_cols = { 4, { "M", "N", "K", "TFLOPs" }, "iiif", "[M, N, K, TFLOPs]" };
static const columns attn_cols = { 7,
				   { "causal", "batch", "heads", "seq", "head_dim", "fwd_TFLOPs",
				     "bwd_TFLOPs" },
				   "biiiiff",
				   "[causal, batch, heads, seq, head_dim, fwd_TFLOPs, bwd_TFLOPs]" };
static const columns mem_cols = { 2, { "bytes", "GBps" }, "if", "[bytes, GBps]" };
static const columns cont_cols = { 2, { "sm_fraction", "rate" }, "zf", "[sm_fraction, rate]" };

static const char *const layout_names[CS_GEMM_LAYOUTS] = { "NN", "NT", "TN" };
static const char *const dtype_names[CS_GEMM_DTYPES] = { "bf16", "fp8" };
static const char *const backend_names[CS_ATTN_BACKENDS] = { "cudnn", "flash2" };

#define at(ps, node, ...) cs__yaml_at((ps)->diag, (ps)->file, (node), __VA_ARGS__)

#define type_word cs__yaml_type_word

static const char *text(const yaml_node_t *node) { return (const char *)node->data.scalar.value; }

static yaml_node_t *node_at(parser *ps, int id) { return yaml_document_get_node(&ps->doc, id); }

/* The value of `key` in map (and the key's node in *key_node), or NULL. */
static yaml_node_t *find_key(parser *ps, const yaml_node_t *map, const char *key, yaml_node_t **key_node)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key);
		if (k && k->type == YAML_SCALAR_NODE && strcmp(text(k), key) == 0) {
			*key_node = k;
			return node_at(ps, p->value);
		}
	}
	return NULL;
}

static yaml_node_t *find(parser *ps, const yaml_node_t *map, const char *key)
{
	yaml_node_t *k;
	return find_key(ps, map, key, &k);
}

/* `node` must be a mapping whose keys are among allowed[n], each once. */
static cs_status check_map(parser *ps, const yaml_node_t *node, const char *path, const char *const *allowed,
			   size_t n)
{
	if (node->type != YAML_MAPPING_NODE)
		return at(ps, node, "'%s' must be a mapping, not %s", path, type_word(node));
	cs_status st = cs__yaml_check_keys(ps->diag, ps->file, &ps->doc, node);
	if (st != CS_OK)
		return st;
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *key = node_at(ps, p->key);
		const char *near;
		size_t i;

		for (i = 0; i < n && strcmp(allowed[i], text(key)) != 0; i++)
			;
		if (i < n)
			continue;
		near = cs_suggest(text(key), allowed, n);
		{
			char where[64] = "", hint[64] = "";
			if (path[0])
				snprintf(where, sizeof where, " in '%.40s'", path);
			if (near)
				snprintf(hint, sizeof hint, " (did you mean '%.40s'?)", near);
			return at(ps, key, "unknown key '%.100s'%s%s", text(key), where, hint);
		}
	}
	return CS_OK;
}

/* A positive finite number (kind 'f'), a finite number >= 0 ('z'), a
 * positive integer below 2^53 ('i') or true/false ('b', as 1 and 0);
 * messages name it "'name' in 'in'" (in NULL: "'name'"). */
static cs_status value(parser *ps, const yaml_node_t *node, char kind, const char *name, const char *in,
		       double *out)
{
	char what[96];

	if (node->type == YAML_SCALAR_NODE && kind != 'b' && cs__yaml_number(node, out) && isfinite(*out) &&
	    (*out > 0 || (kind == 'z' && *out == 0)) &&
	    (kind != 'i' || (*out == floor(*out) && *out <= 9007199254740992.0)))
		return CS_OK; /* the common case, without formatting a message's subject */
	if (in)
		snprintf(what, sizeof what, "'%s' in '%.40s'", name, in);
	else
		snprintf(what, sizeof what, "'%.60s'", name);
	if (node->type != YAML_SCALAR_NODE)
		return at(ps, node, "%s expects %s, not %s", what, kind == 'b' ? "true or false" : "a number",
			  type_word(node));
	if (kind == 'b') {
		if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    (strcmp(text(node), "true") == 0 || strcmp(text(node), "false") == 0)) {
			*out = text(node)[0] == 't';
			return CS_OK;
		}
		return at(ps, node, "%s expects true or false, not '%.60s'", what, text(node));
	}
	if (!cs__yaml_number(node, out))
		return at(ps, node, "%s expects a number, not '%.60s'", what, text(node));
	if (!isfinite(*out) || *out < 0 || (*out == 0 && kind != 'z'))
		return at(ps, node, "%s must be a %s finite number, not '%.60s'", what,
			  kind == 'z' ? "non-negative" : "positive", text(node));
	if (kind == 'i' && (*out != floor(*out) || *out > 9007199254740992.0))
		return at(ps, node, "%s must be a positive integer, not '%.60s'", what, text(node));
	return CS_OK;
}

static cs_status string(parser *ps, const yaml_node_t *node, const char *key, char *out, size_t size)
{
	if (node->type != YAML_SCALAR_NODE)
		return at(ps, node, "'%s' expects text, not %s", key, type_word(node));
	if (node->data.scalar.length == 0 || node->data.scalar.length >= size)
		return at(ps, node, "'%s' must be 1 to %d characters long", key, (int)size - 1);
	memcpy(out, text(node), node->data.scalar.length + 1);
	return CS_OK;
}

/* Rows must go by increasing first columns (GEMM: M, N, K; membound:
 * bytes): true when row b comes strictly after row a. */
static bool after(const double *a, const double *b, size_t keys)
{
	for (size_t i = 0; i < keys; i++)
		if (a[i] != b[i])
			return b[i] > a[i];
	return false;
}

static cs_status table(parser *ps, const yaml_node_t *key, const yaml_node_t *node, const columns *cols,
		       size_t sorted_keys, cs__kprof_table *t)
{
	size_t n;

	if (node->type != YAML_SEQUENCE_NODE)
		return at(ps, node, "'%s' must be a list of rows %s, not %s", t->path, cols->shape,
			  type_word(node));
	n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
	if (n == 0)
		return at(ps, node, "'%s' has no rows", t->path);
	t->cols = cols->n;
	t->line0 = (int)key->start_mark.line + 1;
	t->col0 = (int)key->start_mark.column + 1;
	t->v = malloc(n * cols->n * sizeof *t->v);
	t->line = malloc(n * sizeof *t->line);
	t->col = malloc(n * sizeof *t->col);
	if (!t->v || !t->line || !t->col) {
		snprintf(ps->diag->msg, sizeof ps->diag->msg, "out of memory loading '%.300s'", ps->file);
		return CS_ERR_NOMEM;
	}
	for (size_t r = 0; r < n; r++) {
		yaml_node_t *row = node_at(ps, node->data.sequence.items.start[r]);
		double *v = t->v + r * cols->n;
		size_t len;

		if (!row || row->type != YAML_SEQUENCE_NODE)
			return at(ps, row ? row : node, "a row of '%s' must be a list %s, not %s", t->path,
				  cols->shape, row ? type_word(row) : "nothing");
		len = (size_t)(row->data.sequence.items.top - row->data.sequence.items.start);
		if (len != cols->n)
			return at(ps, row, "a row of '%s' has %d values; expected %d: %s", t->path, (int)len,
				  (int)cols->n, cols->shape);
		for (size_t c = 0; c < len; c++) {
			yaml_node_t *cell = node_at(ps, row->data.sequence.items.start[c]);
			cs_status st;

			if (!cell)
				return at(ps, row, "'%s' in '%s' is missing", cols->names[c], t->path);
			if ((st = value(ps, cell, cols->kind[c], cols->names[c], t->path, &v[c])) != CS_OK)
				return st;
		}
		t->line[r] = (int)row->start_mark.line + 1;
		t->col[r] = (int)row->start_mark.column + 1;
		t->n = r + 1;
		if (sorted_keys && r > 0 && !after(v - cols->n, v, sorted_keys))
			return at(ps, row,
				  "a row of '%s' is out of order or repeated: rows go by increasing "
				  "%s",
				  t->path, sorted_keys == 1 ? cols->names[0] : "M, then N, then K");
	}
	return CS_OK;
}

static cs_status parse_launch(parser *ps, const yaml_node_t *node)
{
	/* eager_op_us and graph_kernel_us required; sync_us (the host's wait for
	 * an idle GPU) optional, 0 when absent */
	static const char *const keys[] = { "eager_op_us", "graph_kernel_us", "sync_us" };
	double *dst[] = { &ps->raw->eager_us, &ps->raw->graph_us, &ps->raw->sync_us };
	cs_status st = check_map(ps, node, "launch", keys, 3);

	for (size_t i = 0; st == CS_OK && i < 3; i++) {
		const yaml_node_t *v = find(ps, node, keys[i]);
		char what[64];
		snprintf(what, sizeof what, "launch.%s", keys[i]);
		if (!v && i == 2)
			continue;
		st = v ? value(ps, v, 'f', what, NULL, dst[i]) : at(ps, node, "'launch' lacks '%s'", keys[i]);
	}
	return st;
}

static cs_status parse_gemm(parser *ps, const yaml_node_t *node)
{
	cs_status st = check_map(ps, node, "gemm", dtype_names, CS_GEMM_DTYPES);

	for (int d = 0; st == CS_OK && d < CS_GEMM_DTYPES; d++) {
		const yaml_node_t *dn = find(ps, node, dtype_names[d]);
		char path[16];
		if (!dn)
			continue;
		snprintf(path, sizeof path, "gemm.%s", dtype_names[d]);
		st = check_map(ps, dn, path, layout_names, CS_GEMM_LAYOUTS);
		for (int l = 0; st == CS_OK && l < CS_GEMM_LAYOUTS; l++) {
			yaml_node_t *key = NULL;
			const yaml_node_t *ln = find_key(ps, dn, layout_names[l], &key);
			cs__kprof_table *t = &ps->raw->gemm[d][l];
			if (!ln)
				continue;
			snprintf(t->path, sizeof t->path, "%s.%s", path, layout_names[l]);
			st = table(ps, key, ln, &gemm_cols, 3, t);
		}
	}
	return st;
}

static cs_status parse_attention(parser *ps, const yaml_node_t *node)
{
	cs_status st = check_map(ps, node, "attention", backend_names, CS_ATTN_BACKENDS);

	for (int b = 0; st == CS_OK && b < CS_ATTN_BACKENDS; b++) {
		yaml_node_t *key = NULL;
		const yaml_node_t *bn = find_key(ps, node, backend_names[b], &key);
		cs__kprof_table *t = &ps->raw->attn[b];
		if (!bn)
			continue;
		snprintf(t->path, sizeof t->path, "attention.%s", backend_names[b]);
		st = table(ps, key, bn, &attn_cols, 0, t);
	}
	return st;
}

static cs_status parse_membound(parser *ps, const yaml_node_t *node)
{
	const char *names[CS_MEM_KINDS];
	cs_status st;

	for (int k = 0; k < CS_MEM_KINDS; k++)
		names[k] = cs_kprof_mem_kind_name((cs_mem_kind)k);
	st = check_map(ps, node, "membound", names, CS_MEM_KINDS);
	for (int k = 0; st == CS_OK && k < CS_MEM_KINDS; k++) {
		yaml_node_t *key = NULL;
		const yaml_node_t *kn = find_key(ps, node, names[k], &key);
		cs__kprof_table *t = &ps->raw->mem[k];
		if (!kn)
			continue;
		snprintf(t->path, sizeof t->path, "membound.%s", names[k]);
		st = table(ps, key, kn, &mem_cols, 1, t);
	}
	return st;
}

static cs_status parse_clock(parser *ps, const yaml_node_t *node)
{
	static const char *const keys[] = { "cap_w",     "gemm_boost", "gemm_table",  "headroom_w",
					    "window_ms", "idle_w",     "attention_w", "membound_w" };
	cs_kprof_clock *c = &ps->raw->clock;
	double *dst[] = { &c->cap_w,     &c->gemm_boost, &c->gemm_table, &c->headroom_w,
			  &c->window_ns, &c->idle_w,     &c->attention_w };
	const char *names[CS_MEM_KINDS];
	const yaml_node_t *v;
	cs_status st = check_map(ps, node, "clock", keys, 8);

	for (size_t i = 0; st == CS_OK && i < 7; i++) {
		v = find(ps, node, keys[i]);
		st = v ? value(ps, v, i >= 5 ? 'z' : 'f', keys[i], "clock", dst[i])
		       : at(ps, node, "'clock' lacks '%s'", keys[i]);
	}
	if (st != CS_OK)
		return st;
	if (c->gemm_boost < 1.0)
		return at(ps, find(ps, node, "gemm_boost"),
			  "'gemm_boost' in 'clock' must be at least 1 "
			  "(full clock is never slower than the cap)");
	c->window_ns *= 1e6;
	if (!(v = find(ps, node, "membound_w")))
		return at(ps, node, "'clock' lacks 'membound_w' (the power of each memory-bound kind)");
	for (int k = 0; k < CS_MEM_KINDS; k++)
		names[k] = cs_kprof_mem_kind_name((cs_mem_kind)k);
	if ((st = check_map(ps, v, "clock.membound_w", names, CS_MEM_KINDS)) != CS_OK)
		return st;
	for (int k = 0; k < CS_MEM_KINDS; k++) {
		const yaml_node_t *w = find(ps, v, names[k]);
		if (!w)
			return at(ps, v, "'clock.membound_w' lacks '%s'", names[k]);
		if ((st = value(ps, w, 'z', names[k], "clock.membound_w", &c->membound_w[k])) != CS_OK)
			return st;
	}
	ps->raw->has_clock = true;
	return CS_OK;
}

static cs_status parse_root(parser *ps, const yaml_node_t *root)
{
	static const char *const keys[] = {
		"name",      "gpu",      "derived",    "derived_from",        "rule", "launch", "gemm",
		"attention", "membound", "contention", "document_mask_floor", "clock"
	};
	const yaml_node_t *v;
	cs_status st = check_map(ps, root, "", keys, sizeof keys / sizeof keys[0]);
	char scratch[64];
	double d = 0;

	if (st != CS_OK)
		return st;
	if (!(v = find(ps, root, "name")))
		return at(ps, root, "the profile lacks 'name'");
	if ((st = string(ps, v, "name", ps->raw->name, sizeof ps->raw->name)) != CS_OK)
		return st;
	if ((v = find(ps, root, "gpu")) &&
	    (st = string(ps, v, "gpu", ps->raw->gpu, sizeof ps->raw->gpu)) != CS_OK)
		return st;
	if ((v = find(ps, root, "derived")) && (st = value(ps, v, 'b', "derived", NULL, &d)) != CS_OK)
		return st;
	ps->raw->derived = d != 0;
	if ((v = find(ps, root, "derived_from")) &&
	    (st = string(ps, v, "derived_from", scratch, sizeof scratch)) != CS_OK)
		return st;
	if (ps->raw->derived && !v)
		return at(ps, find(ps, root, "derived"), "a derived profile needs 'derived_from'");
	if ((v = find(ps, root, "rule")) && (v->type != YAML_SCALAR_NODE || !v->data.scalar.length))
		return at(ps, v, "'rule' expects text, not %s", type_word(v));
	if (!(v = find(ps, root, "launch")))
		return at(ps, root, "the profile lacks 'launch' (eager_op_us, graph_kernel_us)");
	if ((st = parse_launch(ps, v)) != CS_OK)
		return st;
	if (!(v = find(ps, root, "gemm")))
		return at(ps, root, "the profile lacks 'gemm' (at least 'gemm.bf16.NN')");
	if ((st = parse_gemm(ps, v)) != CS_OK)
		return st;
	if (!ps->raw->gemm[CS_GEMM_BF16][CS_GEMM_NN].n)
		return at(ps, v, "'gemm' lacks 'bf16.NN', the full grid the other tables refer to");
	if ((v = find(ps, root, "attention")) && (st = parse_attention(ps, v)) != CS_OK)
		return st;
	if (!(v = find(ps, root, "membound")))
		return at(ps, root, "the profile lacks 'membound' (at least 'membound.copy')");
	if ((st = parse_membound(ps, v)) != CS_OK)
		return st;
	if (!ps->raw->mem[CS_MEM_COPY].n)
		return at(ps, v, "'membound' lacks 'copy', the curve other kinds fall back to");
	if ((v = find(ps, root, "document_mask_floor"))) {
		if ((st = value(ps, v, 'z', "document_mask_floor", NULL, &ps->raw->doc_floor)) != CS_OK)
			return st;
		if (ps->raw->doc_floor >= 1.0)
			return at(ps, v, "'document_mask_floor' must be below 1");
	}
	if ((v = find(ps, root, "clock")) && (st = parse_clock(ps, v)) != CS_OK)
		return st;
	yaml_node_t *key = NULL;
	if ((v = find_key(ps, root, "contention", &key))) {
		cs__kprof_table *t = &ps->raw->contention;
		snprintf(t->path, sizeof t->path, "contention");
		if ((st = table(ps, key, v, &cont_cols, 1, t)) != CS_OK)
			return st;
		for (size_t r = 0; r < t->n; r++) {
			double f = t->v[2 * r], rate = t->v[2 * r + 1];
			if (f > 1.0 || rate > 1.0 || (r == 0 && (f != 0.0 || rate != 1.0)))
				return at(ps, key,
					  "'contention' rows are [sm_fraction, rate] with both "
					  "in (0, 1], starting at [0, 1]");
		}
	}
	return CS_OK;
}

cs_status cs__kprof_read(const char *buf, size_t len, const char *file, cs__kprof_raw *raw, cs_diag *diag)
{
	parser one, *ps = &one;
	yaml_parser_t yp;
	yaml_document_t extra;
	yaml_node_t *root;
	cs_status st;

	memset(&one, 0, sizeof one);
	one.file = file;
	one.diag = diag;
	one.raw = raw;
	if ((st = cs__yaml_load(&yp, buf, len, ps->file, &ps->doc, ps->diag)) != CS_OK)
		return st;
	root = yaml_document_get_root_node(&ps->doc);
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
		      root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
		snprintf(ps->diag->msg, sizeof ps->diag->msg,
			 "%.300s:1:1: empty profile (expected a "
			 "mapping with 'name', 'launch', 'gemm' and 'membound')",
			 ps->file);
		st = CS_ERR_INPUT;
	} else if (root->type != YAML_MAPPING_NODE) {
		st = at(ps, root, "the top level must be a mapping, not %s", type_word(root));
	} else if ((st = parse_root(ps, root)) == CS_OK) {
		/* a second document is refused, not silently ignored */
		if (!yaml_parser_load(&yp, &extra)) {
			st = cs__yaml_error(&yp, ps->file, ps->diag);
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);
			if (r2)
				st = at(ps, r2, "only one yaml document per profile");
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&ps->doc);
	yaml_parser_delete(&yp);
	return st;
}

void cs__kprof_raw_free(cs__kprof_raw *raw)
{
	cs__kprof_table *all[] = { &raw->gemm[0][0], raw->attn, raw->mem, &raw->contention };
	size_t counts[] = { CS_GEMM_DTYPES * CS_GEMM_LAYOUTS, CS_ATTN_BACKENDS, CS_MEM_KINDS, 1 };

	for (size_t a = 0; a < 4; a++)
		for (size_t i = 0; i < counts[a]; i++) {
			free(all[a][i].v);
			free(all[a][i].line);
			free(all[a][i].col);
		}
}
