/*
 * place.c - decoded Chakra nodes onto a program's streams.
 *
 * Nodes are taken in a dependency order that keeps file order wherever the
 * dependencies allow (Kahn's algorithm, the ready node earliest in the file
 * first), so a trace written in dependency order, as clustersim and the
 * Chakra converters write them, keeps its order on every stream. A node's
 * dependencies become, per counter, the highest value it needs: "stream s
 * has completed k ops" or "k messages have arrived in this mailbox".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/chakra_int.h"

typedef struct idpos {
	uint64_t id;
	int64_t idx;
} idpos;

static int cmp_idpos(const void *a, const void *b)
{
	const idpos *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* A min-heap of node indices. */
static void heap_push(int64_t *h, int64_t *n, int64_t v)
{
	int64_t i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static int64_t heap_pop(int64_t *h, int64_t *n)
{
	int64_t top = h[0], v = h[--(*n)], i = 0;
	for (;;) {
		int64_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n > 0)
		h[i] = v;
	return top;
}

/* Rewrite the graph's dependency ids as node indices. */
static cs_status resolve(cs__chakra_graph *g, cs_diag *diag)
{
	idpos *map = malloc(((size_t)g->n + 1) * sizeof *map);
	if (!map) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	for (int64_t i = 0; i < g->n; i++)
		map[i] = (idpos){ g->nodes[i].id, i };
	qsort(map, (size_t)g->n, sizeof *map, cmp_idpos);
	cs_status st = CS_OK;
	for (int64_t i = 1; i < g->n && st == CS_OK; i++)
		if (map[i].id == map[i - 1].id) {
			snprintf(diag->msg, sizeof diag->msg, "%s: node %" PRIu64 ": id used by two nodes",
				 g->name, map[i].id);
			st = CS_ERR_INPUT;
		}
	for (int64_t i = 0; i < g->n && st == CS_OK; i++) {
		cs__chakra_node *x = &g->nodes[i];
		int32_t kept = 0, ctrl = x->nctrl;
		for (int32_t k = 0; k < x->ndeps; k++) {
			idpos key = { g->deps[x->dep0 + k], -1 };
			int64_t lo = 0, hi = g->n; /* the first entry with that id */
			while (lo < hi) {
				int64_t mid = lo + (hi - lo) / 2;
				if (map[mid].id < key.id)
					lo = mid + 1;
				else
					hi = mid;
			}
			if ((lo == g->n || map[lo].id != key.id) && k < x->nctrl) {
				g->dropped++;
				ctrl--;
				continue;
			}
			if (lo == g->n || map[lo].id != key.id) {
				snprintf(diag->msg, sizeof diag->msg,
					 "%s: node %" PRIu64 ": depends on node %" PRIu64
					 ", which is not in the trace",
					 g->name, x->id, key.id);
				st = CS_ERR_INPUT;
				break;
			}
			g->deps[x->dep0 + kept++] = (uint64_t)map[lo].idx;
		}
		x->ndeps = kept;
		x->nctrl = ctrl;
	}
	free(map);
	return st;
}

/* Kahn's algorithm over the graph's (resolved) dependencies, the ready
 * node earliest in the file first: the order into `order`, and how many
 * nodes it holds (fewer than g->n when they form a cycle), or -1 when out
 * of memory. */
static int64_t order_nodes(const cs__chakra_graph *g, int64_t *order)
{
	int64_t n = g->n, nh = 0, placed = 0;
	int64_t *indeg = calloc((size_t)n + 1, sizeof *indeg);
	int64_t *off = calloc((size_t)n + 2, sizeof *off);
	int64_t *succ = malloc(((size_t)g->ndeps + 1) * sizeof *succ);
	int64_t *heap = malloc(((size_t)n + 1) * sizeof *heap);
	if (!indeg || !off || !succ || !heap) {
		placed = -1;
		goto out;
	}
	for (int64_t i = 0; i < n; i++) {
		indeg[i] = g->nodes[i].ndeps;
		for (int32_t k = 0; k < g->nodes[i].ndeps; k++)
			off[g->deps[g->nodes[i].dep0 + k] + 2]++;
	}
	for (int64_t i = 0; i < n; i++)
		off[i + 2] += off[i + 1];
	for (int64_t i = 0; i < n; i++)
		for (int32_t k = 0; k < g->nodes[i].ndeps; k++)
			succ[off[g->deps[g->nodes[i].dep0 + k] + 1]++] = i;
	for (int64_t i = 0; i < n; i++)
		if (indeg[i] == 0)
			heap_push(heap, &nh, i);
	while (nh > 0) {
		int64_t i = heap_pop(heap, &nh);
		order[placed++] = i;
		for (int64_t k = off[i]; k < off[i + 1]; k++)
			if (--indeg[succ[k]] == 0)
				heap_push(heap, &nh, succ[k]);
	}
out:
	free(indeg);
	free(off);
	free(succ);
	free(heap);
	return placed;
}

/* Leave out every node's control dependencies. */
static void drop_ctrl(cs__chakra_graph *g)
{
	for (int64_t i = 0; i < g->n; i++) {
		cs__chakra_node *x = &g->nodes[i];
		memmove(g->deps + x->dep0, g->deps + x->dep0 + x->nctrl,
			(size_t)(x->ndeps - x->nctrl) * sizeof *g->deps);
		g->dropped += x->nctrl;
		x->ndeps -= x->nctrl;
		x->nctrl = 0;
	}
}

cs_status cs__chakra_place(cs__chakra_graph *g, cs_program *p, cs_diag *diag)
{
	cs_status st = resolve(g, diag);
	if (st != CS_OK)
		return st;
	int64_t n = g->n;
	int64_t *order = malloc(((size_t)n + 1) * sizeof *order);
	int32_t *value = malloc(((size_t)n + 1) * sizeof *value);
	uint8_t *counter = malloc((size_t)n + 1);
	int32_t ord[2] = { 0, 0 };
	st = CS_ERR_NOMEM;
	snprintf(diag->msg, sizeof diag->msg, "out of memory");
	if (!order || !value || !counter)
		goto out;
	int64_t placed = order_nodes(g, order);
	int ctrl = 0;
	for (int64_t i = 0; i < n && !ctrl; i++)
		ctrl = g->nodes[i].nctrl > 0;
	if (placed >= 0 && placed < n && ctrl) {
		/* PyTorch's converter writes control dependencies that close
		 * cycles; data dependencies alone are what Chakra's feeder follows */
		drop_ctrl(g);
		g->ctrl_cycle = 1;
		placed = order_nodes(g, order);
	}
	if (placed < 0)
		goto out;
	if (placed < n) {
		uint8_t *in = calloc((size_t)n + 1, 1);
		if (!in)
			goto out;
		for (int64_t k = 0; k < placed; k++)
			in[order[k]] = 1;
		int64_t i = 0;
		while (in[i])
			i++;
		free(in);
		snprintf(diag->msg, sizeof diag->msg, "%s: node %" PRIu64 ": its dependencies form a cycle",
			 g->name, g->nodes[i].id);
		st = CS_ERR_INPUT;
		goto out;
	}
	for (int64_t k = 0; k < n; k++) {
		int64_t i = order[k];
		const cs__chakra_node *x = &g->nodes[i];
		if (x->stream < 0) {
			counter[i] = x->mbox;
			value[i] = ++ord[x->mbox - CS_MBOX_UP];
		} else {
			cs_dep best[CS_COUNTERS] = { { 0, 0 } }, list[CS_COUNTERS];
			int nl = 0;
			for (int32_t d = 0; d < x->ndeps; d++) {
				int64_t j = (int64_t)g->deps[x->dep0 + d];
				if (value[j] > best[counter[j]].value)
					best[counter[j]] =
						(cs_dep){ .value = value[j], .counter = counter[j] };
			}
			for (int c = 0; c < CS_COUNTERS; c++)
				if (best[c].value > 0)
					list[nl++] = best[c];
			int32_t at = cs_program_add(p, (cs_stream)x->stream, &x->op, list, nl);
			if (at < 0)
				goto out;
			counter[i] = (uint8_t)x->stream;
			value[i] = at;
		}
	}
	st = CS_OK;
	diag->msg[0] = 0;
out:
	free(order);
	free(value);
	free(counter);
	return st;
}
