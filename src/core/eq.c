/*
 * eq.c - the event queue: a radix heap of {time, index}.
 *
 * A discrete-event simulation never schedules before the event it is
 * running, so the queue is monotone: every push is at or after the last
 * time popped (`last`). A radix heap exploits that for integer times
 * (Ahuja, Mehlhorn, Orlin and Tarjan 1990): an entry lives in bucket b, the
 * bit length of (time XOR last), so bucket 0 holds the entries at `last`
 * and bucket b those whose highest bit differing from `last` is bit b - 1.
 * A push appends to its bucket; a pop takes bucket 0's first entry, and when
 * bucket 0 is empty first moves the lowest non-empty bucket's entries down,
 * relative to its least time, which becomes `last`. An entry only ever moves
 * to lower buckets, so pushes cost O(1) and pops O(log range) amortised,
 * whatever the number pending.
 *
 * Order: entries of equal time always share a bucket, which keeps them in
 * insertion order (appends, and moves in order into buckets that are
 * empty), so equal times pop first-in first-out, as a (time, sequence)
 * heap pops them.
 *
 * Small buckets are sorted, not moved. An entry moves down once per bit
 * of its distance it loses, and when the pending times are sparse (a run
 * where no two ops end together) most refills take a bucket of a few
 * entries that would move again and again. A refill from bucket k with at
 * most SORT_MAX entries instead sorts them (stably, by time) into bucket
 * 0, which becomes a sorted run of every pending time below `bound`, the
 * first time bucket k's range leaves for higher buckets: all the others
 * are at or above it. A push below `bound` is inserted into the run in
 * order, after any equal time; one at or above it goes to its bucket as
 * before (its bucket relative to any time of the run is its bucket
 * relative to `last`, since those share every bit from k - 1 up). Without
 * a sorted run, bucket 0 is the run of the entries at `last`, and `bound`
 * is last + 1.
 */
#include "core/eq.h"

#include <stdlib.h>
#include <string.h>

#define EQ_BUCKETS 65
#define EQ_MIN_CAP 16
#define SORT_MAX 16
#define SHIFT_MAX 32

typedef struct bucket {
	cs_eq_entry *v;
	uint64_t n, cap;
} bucket;

struct cs_eq {
	bucket b[EQ_BUCKETS];
	uint64_t head;     /* bucket 0's first entry not yet popped */
	uint64_t nonempty; /* bit b - 1 set when bucket b (b >= 1) holds entries */
	int64_t last;      /* the time popped last */
	int64_t bound;     /* bucket 0 holds the pending times below it */
	uint64_t size;
	/* buckets [0, resv_k) hold at least resv_n entries each (capacities
	 * only grow): a refill within that needs no reservation pass */
	int resv_k;
	uint64_t resv_n;
};

cs_eq *cs_eq_new(void)
{
	cs_eq *q = calloc(1, sizeof(cs_eq));
	if (q)
		q->bound = 1;
	return q;
}

void cs_eq_free(cs_eq *q)
{
	if (!q)
		return;
	for (int i = 0; i < EQ_BUCKETS; i++)
		free(q->b[i].v);
	free(q);
}

static inline int bucket_of(int64_t last, int64_t time)
{
	uint64_t x = (uint64_t)time ^ (uint64_t)last;
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* The bound of a run of the times at t alone (t may be the largest time). */
static inline int64_t just_after(int64_t t) { return t < INT64_MAX ? t + 1 : INT64_MAX; }

/* Room for n entries in b: 0, or -1 on out-of-memory (b unchanged). */
static int reserve(bucket *b, uint64_t n)
{
	if (n <= b->cap)
		return 0;
	if (n > SIZE_MAX / sizeof(cs_eq_entry))
		return -1;
	cs_eq_entry *v = realloc(b->v, (size_t)n * sizeof *v);
	if (!v)
		return -1;
	b->v = v;
	b->cap = n;
	return 0;
}

/* Room for one more entry in b. */
static int grow(bucket *b) { return b->n < b->cap ? 0 : reserve(b, b->cap ? 2 * b->cap : EQ_MIN_CAP); }

static int append(cs_eq *q, int k, cs_eq_entry e)
{
	bucket *b = &q->b[k];
	if (grow(b) != 0)
		return -1;
	b->v[b->n++] = e;
	if (k)
		q->nonempty |= 1ull << (k - 1);
	return 0;
}

/* Undo the run: its times after `last` go to their buckets, in order
 * (a run holds every pending time below its bound, so those buckets
 * hold nothing else, and appending keeps equal times in insertion
 * order); bucket 0 keeps the entries at `last`. Capacity is reserved
 * first: a failed allocation leaves the queue as it was. */
static int dissolve_run(cs_eq *q)
{
	bucket *run = &q->b[0];
	uint64_t count[EQ_BUCKETS] = { 0 }, at = q->head;
	while (at < run->n && run->v[at].time == q->last)
		at++;
	for (uint64_t i = at; i < run->n; i++)
		count[bucket_of(q->last, run->v[i].time)]++;
	for (int j = 1; j < EQ_BUCKETS; j++)
		if (count[j] && reserve(&q->b[j], q->b[j].n + count[j]) != 0)
			return -1;
	for (uint64_t i = at; i < run->n; i++) {
		int j = bucket_of(q->last, run->v[i].time);
		q->b[j].v[q->b[j].n++] = run->v[i];
		q->nonempty |= 1ull << (j - 1);
	}
	memmove(run->v, &run->v[q->head], (size_t)(at - q->head) * sizeof *run->v);
	run->n = at - q->head;
	q->head = 0;
	q->bound = just_after(q->last);
	return 0;
}

/* Into the run in bucket 0, after every entry not later than e: 0, 1 when
 * e belongs in a bucket instead (the run was undone), -1 on out-of-memory.
 * A run that pushes keep feeding may never empty: when it is full and half
 * of it has been popped, the rest moves to the front instead of the array
 * growing. And it may grow long: a push that would shift more than
 * SHIFT_MAX entries undoes the run first (each entry it moves came with a
 * push), so no push costs more than that. */
static int insert_run(cs_eq *q, cs_eq_entry e)
{
	bucket *b = &q->b[0];
	if (b->n - q->head > SHIFT_MAX && b->v[b->n - 1 - SHIFT_MAX].time > e.time) {
		if (dissolve_run(q) != 0)
			return -1;
		if (e.time >= q->bound)
			return 1; /* its bucket's now */
	}
	if (b->n == b->cap && q->head > 0 && q->head >= b->n / 2) {
		memmove(b->v, &b->v[q->head], (size_t)(b->n - q->head) * sizeof e);
		b->n -= q->head;
		q->head = 0;
	}
	if (grow(b) != 0)
		return -1;
	uint64_t i = b->n;
	for (; i > q->head && b->v[i - 1].time > e.time; i--)
		b->v[i] = b->v[i - 1];
	b->v[i] = e;
	b->n++;
	return 0;
}

int cs_eq_push(cs_eq *q, int64_t time, uint32_t index)
{
	if (time < q->last)
		return -1; /* before the last time popped: not a monotone queue */
	cs_eq_entry e = { .time = time, .index = index };
	int rc = time < q->bound ? insert_run(q, e) : 1;
	if (rc > 0)
		rc = append(q, bucket_of(q->last, time), e);
	if (rc != 0)
		return -1;
	q->size++;
	return 0;
}

/* The first time after bucket k's range, least one of its times: the
 * bound of a run made of it. Above INT64_MAX for the top buckets, whose
 * run would hold every time: those are moved, not sorted. */
static uint64_t run_end(int64_t least, int k) { return (((uint64_t)least >> (k - 1)) + 1) << (k - 1); }

/* Refill from bucket k, small: sort it into bucket 0 as the run of every
 * time below the first one bucket k could not hold. */
static int sort_into_run(cs_eq *q, int k, int64_t least)
{
	bucket *src = &q->b[k], *run = &q->b[0];
	if (reserve(run, src->n) != 0)
		return -1;
	for (uint64_t i = 0; i < src->n; i++) {
		cs_eq_entry e = src->v[i];
		uint64_t j = i;
		for (; j > 0 && run->v[j - 1].time > e.time; j--)
			run->v[j] = run->v[j - 1];
		run->v[j] = e;
	}
	run->n = src->n;
	q->head = 0;
	q->last = least;
	q->bound = (int64_t)run_end(least, k);
	src->n = 0;
	q->nonempty &= ~(1ull << (k - 1));
	return 0;
}

/* Bucket 0 is empty: move the lowest non-empty bucket down, relative to its
 * least time. The buckets it feeds are empty, so they never grow beyond
 * what the moved bucket held: capacity is reserved before any entry moves,
 * and a failed allocation leaves the queue as it was. */
static int refill(cs_eq *q, int bounded, int64_t end)
{
	int k = __builtin_ctzll(q->nonempty) + 1;
	bucket *src = &q->b[k];
	int64_t least = src->v[0].time;
	for (uint64_t i = 1; i < src->n; i++)
		if (src->v[i].time < least)
			least = src->v[i].time;
	if (bounded && least >= end)
		return 1; /* left as it was: pushes before `least` stay allowed */
	if (src->n <= SORT_MAX && run_end(least, k) <= (uint64_t)INT64_MAX)
		return sort_into_run(q, k, least);
	for (int j = 0; (k > q->resv_k || src->n > q->resv_n) && j < k; j++)
		if (reserve(&q->b[j], src->n) != 0)
			return -1;
	if (k >= q->resv_k && src->n >= q->resv_n) {
		q->resv_k = k;
		q->resv_n = src->n;
	}
	q->b[0].n = 0;
	q->head = 0;
	q->last = least;
	q->bound = just_after(least);
	for (uint64_t i = 0; i < src->n; i++) {
		int j = bucket_of(least, src->v[i].time);
		bucket *d = &q->b[j];
		d->v[d->n++] = src->v[i];
		if (j)
			q->nonempty |= 1ull << (j - 1);
	}
	src->n = 0;
	q->nonempty &= ~(1ull << (k - 1));
	return 0;
}

/* Pop the least entry; with `bounded`, only if it is before `end`. */
static int take(cs_eq *q, int bounded, int64_t end, cs_eq_entry *out)
{
	if (q->size == 0)
		return 1;
	if (q->head == q->b[0].n) {
		int rc = refill(q, bounded, end);
		if (rc != 0)
			return rc;
	} else if (bounded && q->b[0].v[q->head].time >= end) {
		return 1;
	}
	*out = q->b[0].v[q->head++];
	q->last = out->time;
	q->size--;
	if (q->head == q->b[0].n) {
		q->b[0].n = q->head = 0;
		q->bound = just_after(q->last);
	}
	return 0;
}

int cs_eq_pop(cs_eq *q, cs_eq_entry *out) { return take(q, 0, 0, out) == 0 ? 0 : -1; }

int cs_eq_pop_before(cs_eq *q, int64_t end, cs_eq_entry *out) { return take(q, 1, end, out); }

uint64_t cs_eq_size(const cs_eq *q) { return q->size; }

int cs_eq_peek(const cs_eq *q, cs_eq_entry *out)
{
	if (q->size == 0)
		return -1;
	if (q->head < q->b[0].n) {
		*out = q->b[0].v[q->head];
		return 0;
	}
	/* the least time of the lowest bucket, its first entry among equals */
	const bucket *b = &q->b[__builtin_ctzll(q->nonempty) + 1];
	uint64_t best = 0;
	for (uint64_t i = 1; i < b->n; i++)
		if (b->v[i].time < b->v[best].time)
			best = i;
	*out = b->v[best];
	return 0;
}

const cs_eq_entry *cs_eq_sorted_next(const cs_eq *q, uint64_t *n)
{
	*n = q->b[0].n - q->head;
	return *n ? &q->b[0].v[q->head] : NULL;
}

uint64_t cs_eq_drop_last(cs_eq *q, int (*drop)(void *ctx, uint32_t index), void *ctx)
{
	/* the entries at `last` lead bucket 0 (equal times share a bucket) */
	bucket *b = &q->b[0];
	uint64_t keep = q->head, i = q->head;
	for (; i < b->n && b->v[i].time == q->last; i++)
		if (!drop(ctx, b->v[i].index))
			b->v[keep++] = b->v[i];
	uint64_t gone = i - keep;
	if (gone == 0)
		return 0;
	/* the kept entries close up to the ones after them */
	memmove(&b->v[q->head + gone], &b->v[q->head], (size_t)(keep - q->head) * sizeof *b->v);
	q->head += gone;
	q->size -= gone;
	if (q->head == b->n) {
		b->n = q->head = 0;
		q->bound = just_after(q->last);
	}
	return gone;
}

int cs_eq_has_at(const cs_eq *q, int64_t time)
{
	if (q->head < q->b[0].n)
		return q->b[0].v[q->head].time == time;
	if (q->size == 0 || time <= q->last)
		return 0;
	cs_eq_entry e;
	return cs_eq_peek(q, &e) == 0 && e.time == time;
}
