/*
 * schedule.c - ring and double-binary-tree schedules as explicit transfers.
 */
#include <stdlib.h>

#include "coll/schedule.h"

void cs_coll_sched_free(cs_coll_sched *s)
{
	free(s->x);
	s->x = NULL;
	s->n = s->cap = 0;
	s->nsteps = 0;
}

int cs__coll_sched_push(cs_coll_sched *s, int32_t step, int64_t src, int64_t dst, int64_t off, int64_t len,
			int reduce)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		cs_coll_xfer *x = realloc(s->x, cap * sizeof(*x));
		if (x == NULL)
			return -1;
		s->x = x;
		s->cap = cap;
	}
	s->x[s->n++] = (cs_coll_xfer){ step, src, dst, off, len, reduce };
	if (step + 1 > s->nsteps)
		s->nsteps = step + 1;
	return 0;
}

void cs_coll_chunk(int64_t count, int64_t nchunk, int64_t c, int64_t *off, int64_t *len)
{
	int64_t lo = c * count / nchunk, hi = (c + 1) * count / nchunk;
	*off = lo;
	*len = hi - lo;
}

static int64_t mod(int64_t a, int64_t n)
{
	a %= n;
	return a < 0 ? a + n : a;
}

int64_t cs_coll_ring_owned_chunk(int64_t r, int64_t n) { return mod(r + 1, n); }

/* One ring phase of n-1 steps starting at step `base`: in step k rank r
 * sends chunk (r + shift - k) mod n to rank r+1. */
static int ring_phase(cs_coll_sched *s, int64_t n, int64_t count, int32_t base, int64_t shift, int reduce)
{
	for (int64_t k = 0; k < n - 1; k++) {
		for (int64_t r = 0; r < n; r++) {
			int64_t off, len;
			cs_coll_chunk(count, n, mod(r + shift - k, n), &off, &len);
			if (cs__coll_sched_push(s, base + (int32_t)k, r, mod(r + 1, n), off, len, reduce))
				return -1;
		}
	}
	return 0;
}

int cs_coll_ring_schedule(cs_coll_op op, int64_t n, int64_t count, cs_coll_sched *s)
{
	if (n < 2)
		return 0;
	int32_t base = s->nsteps;
	switch (op) {
	case CS_COLL_REDUCE_SCATTER: return ring_phase(s, n, count, base, 0, 1);
	case CS_COLL_ALL_GATHER: return ring_phase(s, n, count, base, 1, 0);
	case CS_COLL_ALL_REDUCE:
		if (ring_phase(s, n, count, base, 0, 1))
			return -1;
		return ring_phase(s, n, count, base + (int32_t)(n - 1), 1, 0);
	default: return -1;
	}
}

void cs_coll_btree(int64_t n, int64_t i, int64_t *parent, int64_t *child0, int64_t *child1)
{
	*parent = *child0 = *child1 = -1;
	if (n < 2)
		return;
	if (i == 0) {
		int64_t h = 1;
		while (2 * h < n)
			h *= 2;
		*child1 = h;
		return;
	}
	int64_t b = i & -i; /* lowest set bit: the level of i */
	*parent = (i ^ b) | (b << 1);
	if (*parent >= n)
		*parent = i ^ b;
	int64_t h = b / 2;
	if (h == 0)
		return;
	*child0 = i - h;
	while (h > 0 && i + h >= n)
		h /= 2;
	if (h > 0)
		*child1 = i + h;
}

/* Parent rank in tree t (-1 at the root). */
static int64_t tree_parent(int64_t nnodes, int64_t ppn, int t, int64_t rank)
{
	int64_t node = rank / ppn, local = rank % ppn;
	if (local > 0)
		return rank - 1;
	int64_t v = t == 0 ? node : nnodes - 1 - node, pv, c0, c1;
	cs_coll_btree(nnodes, v, &pv, &c0, &c1);
	if (pv < 0)
		return -1;
	return (t == 0 ? pv : nnodes - 1 - pv) * ppn;
}

int cs_coll_tree_schedule(int64_t nnodes, int64_t ppn, int64_t count, cs_coll_sched *s)
{
	int64_t n = nnodes * ppn;
	if (n < 2)
		return 0;
	int64_t *depth = calloc((size_t)n, sizeof(*depth));
	int64_t *height = calloc((size_t)n, sizeof(*height));
	int rc = -1;
	if (depth == NULL || height == NULL)
		goto out;
	int32_t base = s->nsteps;
	for (int t = 0; t < 2; t++) {
		int64_t off, len, maxd = 0;
		cs_coll_chunk(count, 2, t, &off, &len);
		for (int64_t r = 0; r < n; r++) {
			depth[r] = 0;
			height[r] = 0;
			for (int64_t p = tree_parent(nnodes, ppn, t, r); p >= 0;
			     p = tree_parent(nnodes, ppn, t, p))
				depth[r]++;
			if (depth[r] > maxd)
				maxd = depth[r];
		}
		/* heights, deepest ranks first */
		for (int64_t d = maxd; d > 0; d--)
			for (int64_t r = 0; r < n; r++)
				if (depth[r] == d) {
					int64_t p = tree_parent(nnodes, ppn, t, r);
					if (height[r] + 1 > height[p])
						height[p] = height[r] + 1;
				}
		for (int64_t r = 0; r < n; r++) {
			int64_t p = tree_parent(nnodes, ppn, t, r);
			if (p < 0 || len == 0)
				continue;
			if (cs__coll_sched_push(s, base + (int32_t)height[r], r, p, off, len, 1))
				goto out;
			if (cs__coll_sched_push(s, base + (int32_t)(maxd + depth[r] - 1), p, r, off, len, 0))
				goto out;
		}
	}
	rc = 0;
out:
	free(depth);
	free(height);
	return rc;
}

int64_t cs_coll_ring_steps(cs_coll_op op, int64_t n)
{
	if (n < 2)
		return 0;
	switch (op) {
	case CS_COLL_ALL_REDUCE: return 2 * (n - 1);
	case CS_COLL_SEND_RECV: return 1;
	default: return n - 1;
	}
}

double cs_coll_ring_bytes_on_wire(cs_coll_op op, double bytes, int64_t n)
{
	if (n < 2)
		return 0;
	double frac = (double)(n - 1) / (double)n;
	switch (op) {
	case CS_COLL_ALL_REDUCE: return 2 * frac * bytes;
	case CS_COLL_SEND_RECV: return bytes;
	default: return frac * bytes;
	}
}

int64_t cs_coll_tree_depth(int64_t nnodes, int64_t ppn)
{
	int64_t d = ppn > 0 ? ppn - 1 : 0;
	for (int64_t h = 1; h < nnodes; h *= 2)
		d++;
	return d;
}
