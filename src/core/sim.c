/*
 * sim.c - the discrete-event engine: a queue, a payload table, a run loop.
 *
 * The queue (eq.c) holds small {time, index} keys; the callback, context
 * and argument of each pending event live in a payload table indexed by the
 * key's index. Freed slots go on a free stack and are reused, so a long run
 * with a steady number of pending events stops allocating once warm.
 *
 * Zero-delay events (scheduled at exactly the current time, the common case
 * of "this finished, start the next thing") skip the queue: they go to a FIFO
 * ring, the lane. Ordering stays exactly (time, insertion order): an event in
 * the queue whose time equals `now` was necessarily scheduled while the clock
 * was still earlier, i.e. before anything in the lane, so the loop drains
 * queue entries at `now` first, then the lane, and only then lets the clock
 * advance (when the lane is empty).
 *
 * Merges (cs_sim_at_merge): an item joins the pending event of its
 * (time, callback, context, key) when that is one of the last few its key
 * scheduled in the queue (its joinable merges, the newest first), the
 * event's batch holding the items after the first. Any other event of the
 * four, in the lane or no longer joinable, is gathered in by the first of
 * them to fire: those in the queue lead its bucket 0 and the rest are the
 * lane, so finding them costs one comparison when there are none. Either
 * way the items fire in the order they were scheduled, as one event.
 */
#include "core/sim.h"
#include "core/sim_lane.h"
#include "core/eq.h"
#include "core/invariant.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SIM_MIN_CAP 64

typedef struct sim_payload {
	union {
		cs_event_fn event;
		cs_merge_fn merge;
	} fn;
	void *ctx;
	uint64_t arg;   /* a plain event's argument, a merge's first item */
	uint32_t batch; /* a merge of several items: its batch + 1, else 0 */
	uint8_t key;    /* a merge: its key + 1; 0 for a plain event */
} sim_payload;

/* The items of a merge after it took a second: items[0, n). A batch that
 * fires goes back on the free list and keeps its array for the next. */
typedef struct sim_batch {
	uint64_t *items;
	uint32_t n, cap;
	uint32_t next_free;
} sim_batch;

/* A merge in the queue that items due with it may join: a key keeps its
 * last few. */
#define SIM_JOINABLE 4
#define SIM_NO_TIME ((cs_time)-1)
typedef struct sim_joinable {
	cs_time t; /* SIM_NO_TIME: none */
	cs_merge_fn fn;
	void *ctx;
	uint32_t index; /* its payload */
	uint32_t batch; /* its payload's batch + 1, kept here so that an
			      * item joins without reading the payload */
} sim_joinable;

struct cs_sim {
	cs_time now;
	uint64_t fired;
	bool stop;
	bool lane_on;

	cs_eq *eq;

	/* Payloads of the events in eq, indexed by entry index. */
	sim_payload *slots;
	uint32_t n_slots; /* slots ever handed out (high-water mark) */
	uint32_t cap_slots;
	uint32_t *free_idx; /* stack of released slot indices */
	uint32_t n_free;

	/* The entry that pops next as the last pop left it, when `hint` (no
	 * push since): what cs_sim_next_item answers from. */
	cs_eq_entry next;
	bool hint;

	/* The lane: a ring of zero-delay payloads, capacity a power of two. */
	sim_payload *lane;
	uint64_t lane_head;
	uint64_t lane_len;
	uint64_t lane_cap;

	/* Merges: the last few each key put in the queue, the batches, and
	 * room to hand a callback every item pending at once (reserved as
	 * items are scheduled, so firing never allocates). */
	sim_joinable joinable[CS_SIM_MERGE_KEYS][SIM_JOINABLE];
	sim_batch *batches;
	uint32_t n_batches, batch_free;
	uint64_t merge_items; /* items scheduled and not yet handed over */
	uint64_t *scratch;
	uint64_t cap_scratch;
	const uint64_t *reading; /* the scratch a callback reads now, else NULL */
};
_Static_assert(offsetof(struct cs_sim, now) == 0, "cs_sim_now reads the clock as the first member");

cs_sim *cs_sim_new(void)
{
	cs_sim *sim = calloc(1, sizeof(*sim));
	if (!sim)
		return NULL;
	sim->eq = cs_eq_new();
	if (!sim->eq) {
		free(sim);
		return NULL;
	}
	sim->lane_on = true;
	sim->batch_free = UINT32_MAX;
	for (int k = 0; k < CS_SIM_MERGE_KEYS; k++)
		for (int i = 0; i < SIM_JOINABLE; i++)
			sim->joinable[k][i].t = SIM_NO_TIME;
	return sim;
}

void cs_sim_free(cs_sim *sim)
{
	if (!sim)
		return;
	cs_eq_free(sim->eq);
	free(sim->slots);
	free(sim->free_idx);
	free(sim->lane);
	for (uint32_t i = 0; i < sim->n_batches; i++)
		free(sim->batches[i].items);
	free(sim->batches);
	free(sim->scratch);
	free(sim);
}

void cs__sim_set_lane(cs_sim *sim, bool on)
{
	/* Only while the lane is empty, so no event changes its path midway. */
	CS_ASSERT(sim->lane_len == 0);
	sim->lane_on = on;
}

static int slot_grow(cs_sim *sim)
{
	uint64_t cap = sim->cap_slots ? (uint64_t)sim->cap_slots * 2 : SIM_MIN_CAP;
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	if (cap <= sim->cap_slots)
		return -1;
	sim_payload *s = realloc(sim->slots, (size_t)cap * sizeof(*s));
	if (!s)
		return -1;
	sim->slots = s;
	uint32_t *f = realloc(sim->free_idx, (size_t)cap * sizeof(*f));
	if (!f)
		return -1;
	sim->free_idx = f;
	sim->cap_slots = (uint32_t)cap;
	return 0;
}

static int slot_alloc(cs_sim *sim, uint32_t *out)
{
	if (sim->n_free > 0) {
		*out = sim->free_idx[--sim->n_free];
		return 0;
	}
	if (sim->n_slots == sim->cap_slots && slot_grow(sim) != 0)
		return -1;
	*out = sim->n_slots++;
	return 0;
}

static int lane_grow(cs_sim *sim)
{
	uint64_t cap = sim->lane_cap ? sim->lane_cap * 2 : SIM_MIN_CAP;
	if (cap > SIZE_MAX / sizeof(sim_payload))
		return -1;
	sim_payload *r = malloc((size_t)cap * sizeof(*r));
	if (!r)
		return -1;
	/* Unwrap the old ring into the front of the new one. */
	for (uint64_t i = 0; i < sim->lane_len; i++)
		r[i] = sim->lane[(sim->lane_head + i) & (sim->lane_cap - 1)];
	free(sim->lane);
	sim->lane = r;
	sim->lane_head = 0;
	sim->lane_cap = cap;
	return 0;
}

/* Room for an event at `at`, for the caller to fill in (field by field:
 * a payload built aside and copied costs a stalled store forwarding on
 * the hottest path); NULL when out of memory. *index names it when it
 * went to the queue at a later time (it cannot pop before the caller's
 * next call), else it is UINT32_MAX. */
static sim_payload *sim_push(cs_sim *sim, cs_time at, uint32_t *index)
{
	CS_ASSERT(at >= sim->now && "event scheduled in the past");
	*index = UINT32_MAX;
	if (at == sim->now && sim->lane_on) {
		if (sim->lane_len == sim->lane_cap && lane_grow(sim) != 0)
			return NULL;
		return &sim->lane[(sim->lane_head + sim->lane_len++) & (sim->lane_cap - 1)];
	}
	uint32_t idx;
	sim->hint = false;
	if (slot_alloc(sim, &idx) != 0)
		return NULL;
	if (cs_eq_push(sim->eq, at, idx) != 0) {
		sim->free_idx[sim->n_free++] = idx;
		return NULL;
	}
	if (at > sim->now)
		*index = idx;
	return &sim->slots[idx];
}

int cs_sim_at(cs_sim *sim, cs_time at, cs_event_fn fn, void *ctx, uint64_t arg)
{
	CS_ASSERT(fn != NULL);
	uint32_t idx;
	sim_payload *p = sim_push(sim, at, &idx);
	if (!p)
		return -1;
	p->fn.event = fn;
	p->ctx = ctx;
	p->arg = arg;
	p->batch = 0;
	p->key = 0;
	return 0;
}

/* ---- merges -------------------------------------------------------------- */

/* Room in the scratch for every item not yet handed over. The array a
 * callback reads stays until it returns; the scratch's contents need not
 * survive a growth. */
static int scratch_reserve(cs_sim *sim)
{
	if (sim->merge_items <= sim->cap_scratch)
		return 0;
	uint64_t cap = sim->cap_scratch ? 2 * sim->cap_scratch : SIM_MIN_CAP;
	if (cap > SIZE_MAX / sizeof(uint64_t))
		return -1;
	uint64_t *s = malloc((size_t)cap * sizeof *s);
	if (!s)
		return -1;
	if (sim->scratch != sim->reading)
		free(sim->scratch);
	sim->scratch = s;
	sim->cap_scratch = cap;
	return 0;
}

/* A batch, empty, with room for two items: its index, or UINT32_MAX. */
static uint32_t batch_new(cs_sim *sim)
{
	if (sim->batch_free == UINT32_MAX) {
		uint32_t n = sim->n_batches ? 2 * sim->n_batches : SIM_MIN_CAP;
		if (n <= sim->n_batches)
			return UINT32_MAX;
		sim_batch *nb = realloc(sim->batches, (size_t)n * sizeof *nb);
		if (!nb)
			return UINT32_MAX;
		for (uint32_t i = sim->n_batches; i < n; i++)
			nb[i] = (sim_batch){ .next_free = i + 1 < n ? i + 1 : UINT32_MAX };
		sim->batches = nb;
		sim->batch_free = sim->n_batches;
		sim->n_batches = n;
	}
	uint32_t id = sim->batch_free;
	sim_batch *b = &sim->batches[id];
	if (b->cap < 2) {
		uint64_t *items = malloc(8 * sizeof *items);
		if (!items)
			return UINT32_MAX;
		b->items = items;
		b->cap = 8;
	}
	sim->batch_free = b->next_free;
	b->n = 0;
	return id;
}

static void batch_release(cs_sim *sim, uint32_t id)
{
	sim->batches[id].next_free = sim->batch_free;
	sim->batch_free = id;
}

/* Item joins the pending merge of way w. 0, or -1 when out of memory
 * (the merge unchanged). */
static int merge_join(cs_sim *sim, sim_joinable *w, uint64_t item)
{
	if (!w->batch) {
		uint32_t id = batch_new(sim);
		if (id == UINT32_MAX)
			return -1;
		sim_payload *p = &sim->slots[w->index];
		sim->batches[id].items[0] = p->arg;
		sim->batches[id].n = 1;
		p->batch = w->batch = id + 1;
	}
	sim_batch *b = &sim->batches[w->batch - 1];
	if (b->n == b->cap) {
		uint64_t *items = b->cap <= UINT32_MAX / 2
					  ? realloc(b->items, 2 * (size_t)b->cap * sizeof *items)
					  : NULL;
		if (!items)
			return -1;
		b->items = items;
		b->cap *= 2;
	}
	b->items[b->n++] = item;
	return 0;
}

/* cs_sim_at_merge but for the common join: item joins way w (when not
 * NULL) or is a new event; a batch opens or grows, the scratch grows. */
static __attribute__((noinline)) int merge_slow(cs_sim *sim, cs_time at, cs_merge_fn fn, void *ctx,
						unsigned key, uint64_t item, sim_joinable *w)
{
	sim->merge_items++;
	if (scratch_reserve(sim) != 0) {
		sim->merge_items--;
		return -1;
	}
	if (w) {
		if (merge_join(sim, w, item) == 0)
			return 0;
		sim->merge_items--;
		return -1;
	}
	uint32_t idx;
	sim_payload *p = sim_push(sim, at, &idx);
	if (!p) {
		sim->merge_items--;
		return -1;
	}
	p->fn.merge = fn;
	p->ctx = ctx;
	p->arg = item;
	p->batch = 0;
	p->key = (uint8_t)(key + 1);
	if (idx != UINT32_MAX) {
		/* the newest first (the next items most likely join it), the
		 * oldest out */
		sim_joinable *joinable = sim->joinable[key];
		memmove(&joinable[1], &joinable[0], (SIM_JOINABLE - 1) * sizeof *joinable);
		joinable[0] = (sim_joinable){ .t = at, .fn = fn, .ctx = ctx, .index = idx, .batch = 0 };
	}
	return 0;
}

int cs_sim_at_merge(cs_sim *sim, cs_time at, cs_merge_fn fn, void *ctx, unsigned key, uint64_t item)
{
	CS_ASSERT(key < CS_SIM_MERGE_KEYS);
	sim_joinable *w = sim->joinable[key];
	for (int i = 0; i < SIM_JOINABLE; i++)
		if (w[i].t == at && w[i].fn == fn && w[i].ctx == ctx) {
			/* most items join a batch with room, the scratch with room */
			if (w[i].batch && sim->merge_items < sim->cap_scratch) {
				sim_batch *b = &sim->batches[w[i].batch - 1];
				if (b->n < b->cap) {
					b->items[b->n++] = item;
					sim->merge_items++;
					return 0;
				}
			}
			return merge_slow(sim, at, fn, ctx, key, item, &w[i]);
		}
	return merge_slow(sim, at, fn, ctx, key, item, NULL);
}

/* The items of merge p, appended to the scratch at *n; its batch freed. */
static void merge_gather(cs_sim *sim, const sim_payload *p, uint64_t *n)
{
	if (!p->batch) {
		sim->scratch[(*n)++] = p->arg;
		return;
	}
	const sim_batch *b = &sim->batches[p->batch - 1];
	for (uint32_t i = 0; i < b->n; i++)
		sim->scratch[(*n)++] = b->items[i];
	batch_release(sim, p->batch - 1);
}

typedef struct gatherer {
	cs_sim *sim;
	const sim_payload *as;
	uint64_t n;
} gatherer;

static bool merges_with(const sim_payload *p, const sim_payload *as)
{
	return p->key == as->key && p->fn.merge == as->fn.merge && p->ctx == as->ctx;
}

static int gather_queued(void *ctx, uint32_t index)
{
	gatherer *t = ctx;
	const sim_payload *p = &t->sim->slots[index];
	if (!merges_with(p, t->as))
		return 0;
	merge_gather(t->sim, p, &t->n);
	t->sim->free_idx[t->sim->n_free++] = index;
	return 1;
}

/* Merge p fires: its key's merges at now are no longer joinable, the
 * other merges of its four due now are gathered in, and its callback gets
 * all their items at once. */
static void merge_fire(cs_sim *sim, const sim_payload *p)
{
	sim_joinable *w = sim->joinable[p->key - 1];
	for (int i = 0; i < SIM_JOINABLE; i++)
		if (w[i].t == sim->now)
			w[i].t = SIM_NO_TIME;
	const uint64_t *items;
	uint64_t n;
	uint32_t own = p->batch;
	if (sim->lane_len == 0 && !cs_eq_has_at(sim->eq, sim->now)) {
		/* nothing else is due now: the common case */
		items = own ? sim->batches[own - 1].items : &p->arg;
		n = own ? sim->batches[own - 1].n : 1;
	} else {
		gatherer t = { sim, p, 0 };
		merge_gather(sim, p, &t.n);
		own = 0;
		/* the queue's events due now fire before the lane's (sim_next) */
		uint64_t took = cs_eq_drop_last(sim->eq, gather_queued, &t);
		if (sim->lane_len > 0) {
			uint64_t m = sim->lane_cap - 1, keep = 0;
			for (uint64_t i = 0; i < sim->lane_len; i++) {
				const sim_payload *q = &sim->lane[(sim->lane_head + i) & m];
				if (merges_with(q, p))
					merge_gather(sim, q, &t.n);
				else
					sim->lane[(sim->lane_head + keep++) & m] = *q;
			}
			took += sim->lane_len - keep;
			sim->lane_len = keep;
		}
		if (took > 0)
			sim->hint = false;
		items = sim->reading = sim->scratch;
		n = t.n;
	}
	sim->merge_items -= n;
	p->fn.merge(sim, p->ctx, p->key - 1u, items, (uint32_t)n);
	if (sim->reading) {
		/* the scratch grew while the callback read it */
		if (sim->reading != sim->scratch)
			free((void *)sim->reading);
		sim->reading = NULL;
	}
	if (own)
		batch_release(sim, own - 1);
}

int cs_sim_next_item(const cs_sim *sim, cs_merge_fn fn, cs_time *at, unsigned *key, uint64_t *item)
{
	if (sim->lane_len > 0)
		return 0;
	cs_eq_entry next = sim->next;
	if (!sim->hint) {
		uint64_t n;
		const cs_eq_entry *e = cs_eq_sorted_next(sim->eq, &n);
		if (!n)
			return 0;
		next = e[0];
	}
	const sim_payload *p = &sim->slots[next.index];
	if (!p->key || p->fn.merge != fn)
		return 0;
	*at = next.time;
	*key = p->key - 1u;
	*item = p->arg;
	return 1;
}

/* Take the next event's payload, if it is before `end`, and advance the
 * clock; false when none. The lane's events are at `now`, which is before
 * `end` once one event before it has fired. */
static bool sim_next(cs_sim *sim, bool bounded, cs_time end, sim_payload *out)
{
	cs_eq_entry e;
	if (sim->lane_len > 0) {
		/* Heap entries at `now` predate the whole lane. */
		if (!cs_eq_has_at(sim->eq, sim->now)) {
			*out = sim->lane[sim->lane_head];
			sim->lane_head = (sim->lane_head + 1) & (sim->lane_cap - 1);
			sim->lane_len--;
			return true;
		}
	}
	if ((bounded ? cs_eq_pop_before(sim->eq, end, &e) : cs_eq_pop(sim->eq, &e)) != 0)
		return false;
	sim->now = e.time;
	*out = sim->slots[e.index];
	sim->free_idx[sim->n_free++] = e.index;
	/* the next events' payloads were written when they were scheduled,
	 * long ago in a large run: ask for them while this one runs (the
	 * one after next, for a callback reads the next one's as a hint) */
	uint64_t n;
	const cs_eq_entry *next = cs_eq_sorted_next(sim->eq, &n);
	sim->hint = n > 0;
	if (n > 0) {
		sim->next = next[0];
		__builtin_prefetch(&sim->slots[next[0].index]);
		if (n > 1)
			__builtin_prefetch(&sim->slots[next[1].index]);
	}
	return true;
}

static uint64_t sim_loop(cs_sim *sim, uint64_t limit, bool bounded, cs_time end)
{
	uint64_t n = 0;
	sim_payload p;
	sim->stop = false;
	while ((limit == 0 || n < limit) && sim_next(sim, bounded, end, &p)) {
		n++;
		sim->fired++;
		if (p.key)
			merge_fire(sim, &p);
		else
			p.fn.event(sim, p.ctx, p.arg);
		if (sim->stop)
			break;
	}
	sim->stop = false;
	return n;
}

uint64_t cs_sim_run(cs_sim *sim, uint64_t limit) { return sim_loop(sim, limit, false, 0); }

uint64_t cs_sim_run_before(cs_sim *sim, cs_time end) { return sim_loop(sim, 0, true, end); }

cs_time cs_sim_next_time(const cs_sim *sim)
{
	if (sim->lane_len > 0)
		return sim->now;
	cs_eq_entry e;
	return cs_eq_peek(sim->eq, &e) == 0 ? e.time : CS_TIME_MAX;
}

void cs_sim_stop(cs_sim *sim) { sim->stop = true; }

uint64_t cs_sim_events(const cs_sim *sim) { return sim->fired; }

uint64_t cs_sim_pending(const cs_sim *sim) { return cs_eq_size(sim->eq) + sim->lane_len; }
