/*
 * groups.c - named process groups: a comm-group file ({"NAME": [ranks]},
 * what ASTRA-sim's --comm-group-configuration reads and Chakra's PyTorch
 * converter pairs with traces whose pg_name is a number) matched against
 * the scenario's mesh: a name stands for the group kind whose group holding
 * the rank has exactly those ranks.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/chakra.h"
#include "chakra/chakra_int.h"
#include "core/file.h"

typedef struct named {
	char *name;
	int64_t *ranks; /* sorted */
	int64_t n;
} named;

struct cs_chakra_groups {
	named *g; /* sorted by name */
	int64_t n;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

void cs_chakra_groups_free(cs_chakra_groups *gs)
{
	if (!gs)
		return;
	for (int64_t i = 0; i < gs->n; i++) {
		free(gs->g[i].name);
		free(gs->g[i].ranks);
	}
	free(gs->g);
	free(gs);
}

static cs_status bad(cs_diag *diag, const char *path, const char *key, const char *what)
{
	snprintf(diag->msg, sizeof diag->msg, "%.900s: process group '%.64s': %s", path, key, what);
	return CS_ERR_INPUT;
}

static cs_status fill(cs_chakra_groups *gs, json_t *root, const char *path, cs_diag *diag)
{
	const char *key;
	json_t *val;
	gs->g = calloc(json_object_size(root) + 1, sizeof *gs->g);
	if (!gs->g)
		goto nomem;
	json_object_foreach(root, key, val)
	{
		if (!json_is_array(val) || json_array_size(val) == 0)
			return bad(diag, path, key, "not a list of ranks");
		named *g = &gs->g[gs->n++];
		g->name = strdup(key);
		g->ranks = malloc(json_array_size(val) * sizeof *g->ranks);
		if (!g->name || !g->ranks)
			goto nomem;
		size_t i;
		json_t *r;
		json_array_foreach(val, i, r)
		{
			if (!json_is_integer(r) || json_integer_value(r) < 0)
				return bad(diag, path, key, "a rank that is not a whole number >= 0");
			g->ranks[g->n++] = json_integer_value(r);
		}
		qsort(g->ranks, (size_t)g->n, sizeof *g->ranks, cmp_i64);
		for (int64_t k = 1; k < g->n; k++)
			if (g->ranks[k] == g->ranks[k - 1])
				return bad(diag, path, key, "a rank listed twice");
	}
	qsort(gs->g, (size_t)gs->n, sizeof *gs->g, cmp_named);
	return CS_OK;
nomem:
	snprintf(diag->msg, sizeof diag->msg, "out of memory");
	return CS_ERR_NOMEM;
}

cs_status cs__chakra_json_load(const char *path, size_t limit, json_t **out, cs_diag *diag)
{
	char *buf;
	size_t len;
	*out = NULL;
	cs_status st = cs_file_read(path, limit, &buf, &len, diag);
	if (st != CS_OK)
		return st;
	json_error_t err;
	*out = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	free(buf);
	if (!*out) {
		snprintf(diag->msg, sizeof diag->msg, "%.800s:%d:%d: %.200s", path, err.line, err.column,
			 err.text);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

cs_status cs_chakra_groups_load(const char *path, cs_chakra_groups **out, cs_diag *diag)
{
	json_t *root;
	*out = NULL;
	cs_status rd = cs__chakra_json_load(path, CS_CHAKRA_GROUPS_MAX_BYTES, &root, diag);
	if (rd != CS_OK)
		return rd;
	cs_status st;
	cs_chakra_groups *gs = calloc(1, sizeof *gs);
	if (!json_is_object(root)) {
		snprintf(diag->msg, sizeof diag->msg,
			 "%.900s: not a JSON object of process groups ({\"NAME\": [ranks]})", path);
		st = CS_ERR_INPUT;
	} else if (!gs) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		st = CS_ERR_NOMEM;
	} else {
		st = fill(gs, root, path, diag);
	}
	json_decref(root);
	if (st != CS_OK) {
		cs_chakra_groups_free(gs);
		return st;
	}
	*out = gs;
	return CS_OK;
}

static int same_members(const cs_group *g, const named *x)
{
	if (cs_group_size(g) != x->n)
		return 0;
	for (int64_t i = 0; i < x->n; i++) {
		int64_t r = cs_group_member(g, i);
		if (!bsearch(&r, x->ranks, (size_t)x->n, sizeof(int64_t), cmp_i64))
			return 0;
	}
	return 1;
}

int cs_chakra_groups_kind(const cs_chakra_groups *gs, const char *name, const cs_mesh *mesh,
			  int64_t gpus_per_node, int64_t rank, uint8_t *kind, char *why, size_t cap)
{
	named key = { .name = (char *)name };
	const named *x = gs ? bsearch(&key, gs->g, (size_t)gs->n, sizeof *gs->g, cmp_named) : NULL;
	if (!x)
		return -1;
	if (!bsearch(&rank, x->ranks, (size_t)x->n, sizeof(int64_t), cmp_i64)) {
		snprintf(why, cap, "process group '%.64s' does not hold rank %" PRId64, name, rank);
		return -2;
	}
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		cs_group g = cs_mesh_group(mesh, (cs_group_kind)k, rank, gpus_per_node);
		if (same_members(&g, x)) {
			*kind = (uint8_t)k;
			return 0;
		}
	}
	snprintf(why, cap,
		 "process group '%.64s' (%" PRId64 " ranks, from %" PRId64 " to %" PRId64
		 ") is no group of the scenario's parallelism",
		 name, x->n, x->ranks[0], x->ranks[x->n - 1]);
	return -2;
}
