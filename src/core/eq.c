/*
 * eq.c - the event queue: a flat-array 4-ary min-heap.
 *
 * Entries are {time, seq, index}, ordered by time and then by seq, the
 * insertion counter, so equal times come out first-in first-out and every
 * key is distinct (the order is total, the run deterministic).
 *
 * A 4-ary heap is shallower than a binary one (log4 n levels) and the four
 * children of a node are adjacent in memory, so sift-down touches one or two
 * cache lines per level. Both sifts move a hole instead of swapping.
 * The array grows geometrically; a push allocates only when it doubles.
 */
#include "core/eq.h"

#include <stdbool.h>
#include <stdlib.h>

#define EQ_ARITY 4
#define EQ_MIN_CAP 64

struct cs_eq {
	cs_eq_entry *heap;
	uint64_t size;
	uint64_t cap;
	uint64_t next_seq;
};

static inline bool eq_less(const cs_eq_entry *a, const cs_eq_entry *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

cs_eq *cs_eq_new(void)
{
	cs_eq *q = calloc(1, sizeof(*q));
	return q;
}

void cs_eq_free(cs_eq *q)
{
	if (!q)
		return;
	free(q->heap);
	free(q);
}

static int eq_grow(cs_eq *q)
{
	uint64_t cap = q->cap ? q->cap * 2 : EQ_MIN_CAP;
	if (cap > SIZE_MAX / sizeof(cs_eq_entry))
		return -1;
	cs_eq_entry *h = realloc(q->heap, (size_t)cap * sizeof(*h));
	if (!h)
		return -1;
	q->heap = h;
	q->cap = cap;
	return 0;
}

int cs_eq_push(cs_eq *q, int64_t time, uint32_t index)
{
	if (q->size == q->cap && eq_grow(q) != 0)
		return -1;
	cs_eq_entry e = { .time = time, .seq = q->next_seq++, .index = index };
	cs_eq_entry *h = q->heap;
	uint64_t i = q->size++;
	while (i > 0) {
		uint64_t parent = (i - 1) / EQ_ARITY;
		if (!eq_less(&e, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = e;
	return 0;
}

int cs_eq_pop(cs_eq *q, cs_eq_entry *out)
{
	if (q->size == 0)
		return -1;
	cs_eq_entry *h = q->heap;
	*out = h[0];
	uint64_t n = --q->size;
	if (n == 0)
		return 0;
	/* Sift the last entry down from the root. */
	cs_eq_entry last = h[n];
	uint64_t i = 0;
	for (;;) {
		uint64_t first = i * EQ_ARITY + 1;
		if (first >= n)
			break;
		uint64_t end = first + EQ_ARITY < n ? first + EQ_ARITY : n;
		uint64_t best = first;
		for (uint64_t c = first + 1; c < end; c++)
			if (eq_less(&h[c], &h[best]))
				best = c;
		if (!eq_less(&h[best], &last))
			break;
		h[i] = h[best];
		i = best;
	}
	h[i] = last;
	return 0;
}

uint64_t cs_eq_size(const cs_eq *q)
{
	return q->size;
}

int cs_eq_peek(const cs_eq *q, cs_eq_entry *out)
{
	if (q->size == 0)
		return -1;
	*out = q->heap[0];
	return 0;
}
