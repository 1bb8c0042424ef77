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
 * A callback may take out the other events due now that it merges with
 * (cs_sim_take_now): those in the queue lead its bucket 0, and the rest
 * are the lane, so finding them costs nothing when there are none.
 */
#include "core/sim.h"
#include "core/sim_lane.h"
#include "core/eq.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>

#define SIM_MIN_CAP 64

typedef struct sim_payload {
	cs_event_fn fn;
	void *ctx;
	uint64_t arg;
} sim_payload;

struct cs_sim {
	cs_time now;
	uint64_t fired;
	bool stop;
	bool lane_on;

	cs_eq *eq;

	/* Payloads of the events in eq, indexed by entry index. */
	sim_payload *slots;
	uint32_t n_slots;    /* slots ever handed out (high-water mark) */
	uint32_t cap_slots;
	uint32_t *free_idx;  /* stack of released slot indices */
	uint32_t n_free;

	/* The entry that pops next as the last pop left it, when `hint` (no
	 * push since): what cs_sim_next_arg answers from. */
	cs_eq_entry next;
	bool hint;

	/* The lane: a ring of zero-delay payloads, capacity a power of two. */
	sim_payload *lane;
	uint64_t lane_head;
	uint64_t lane_len;
	uint64_t lane_cap;
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
	free(sim);
}

void cs__sim_set_lane(cs_sim *sim, bool on)
{
	/* Only while the lane is empty, so no event changes its path midway. */
	assert(sim->lane_len == 0);
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

int cs_sim_at_ref(cs_sim *sim, cs_time at, cs_event_fn fn, void *ctx, uint64_t arg, cs_sim_ref *ref)
{
	assert(fn != NULL);
	assert(at >= sim->now && "event scheduled in the past");
	sim_payload p = { .fn = fn, .ctx = ctx, .arg = arg };
	*ref = CS_SIM_NO_REF;
	if (at == sim->now && sim->lane_on) {
		if (sim->lane_len == sim->lane_cap && lane_grow(sim) != 0)
			return -1;
		sim->lane[(sim->lane_head + sim->lane_len) & (sim->lane_cap - 1)] = p;
		sim->lane_len++;
		return 0;
	}
	uint32_t idx;
	sim->hint = false;
	if (slot_alloc(sim, &idx) != 0)
		return -1;
	if (cs_eq_push(sim->eq, at, idx) != 0) {
		sim->free_idx[sim->n_free++] = idx;
		return -1;
	}
	sim->slots[idx] = p;
	/* at `now` without the lane, it may pop before the caller's next
	 * call: it cannot be named */
	if (at > sim->now)
		*ref = idx;
	return 0;
}

int cs_sim_at(cs_sim *sim, cs_time at, cs_event_fn fn, void *ctx, uint64_t arg)
{
	cs_sim_ref ref;
	return cs_sim_at_ref(sim, at, fn, ctx, arg, &ref);
}

void cs_sim_set_arg(cs_sim *sim, cs_sim_ref ref, uint64_t arg)
{
	assert(ref < sim->n_slots);
	sim->slots[ref].arg = arg;
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
	const cs_eq_entry *next = cs_eq_at_hand(sim->eq, &n);
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
		p.fn(sim, p.ctx, p.arg);
		if (sim->stop)
			break;
	}
	sim->stop = false;
	return n;
}

uint64_t cs_sim_run(cs_sim *sim, uint64_t limit)
{
	return sim_loop(sim, limit, false, 0);
}

uint64_t cs_sim_run_before(cs_sim *sim, cs_time end)
{
	return sim_loop(sim, 0, true, end);
}

cs_time cs_sim_next_time(const cs_sim *sim)
{
	if (sim->lane_len > 0)
		return sim->now;
	cs_eq_entry e;
	return cs_eq_peek(sim->eq, &e) == 0 ? e.time : CS_TIME_MAX;
}

int cs_sim_next_arg(const cs_sim *sim, cs_event_fn fn, cs_time *at, uint64_t *arg)
{
	if (sim->lane_len > 0)
		return 0;
	cs_eq_entry next = sim->next;
	if (!sim->hint) {
		uint64_t n;
		const cs_eq_entry *e = cs_eq_at_hand(sim->eq, &n);
		if (!n)
			return 0;
		next = e[0];
	}
	if (sim->slots[next.index].fn != fn)
		return 0;
	*at = next.time;
	*arg = sim->slots[next.index].arg;
	return 1;
}

typedef struct taker {
	cs_sim *sim;
	cs_event_fn fn;
	uint64_t key, mask;
	void (*take)(void *, uint64_t);
	void *tctx;
} taker;

static bool takes(const taker *t, const sim_payload *p)
{
	if (p->fn != t->fn || (p->arg & t->mask) != t->key)
		return false;
	t->take(t->tctx, p->arg);
	return true;
}

static int take_queued(void *ctx, uint32_t index)
{
	taker *t = ctx;
	if (!takes(t, &t->sim->slots[index]))
		return 0;
	t->sim->free_idx[t->sim->n_free++] = index;
	return 1;
}

uint64_t cs_sim_take_now(cs_sim *sim, cs_event_fn fn, uint64_t key, uint64_t mask,
			 void (*take)(void *tctx, uint64_t arg), void *tctx)
{
	if (sim->lane_len == 0 && !cs_eq_has_at(sim->eq, sim->now))
		return 0;   /* nothing else is due now: the common case */
	taker t = { sim, fn, key, mask, take, tctx };
	/* the queue's events due now fire before the lane's (sim_next) */
	uint64_t n = cs_eq_drop_last(sim->eq, take_queued, &t);
	if (sim->lane_len > 0) {
		uint64_t m = sim->lane_cap - 1, keep = 0;
		for (uint64_t i = 0; i < sim->lane_len; i++) {
			sim_payload p = sim->lane[(sim->lane_head + i) & m];
			if (!takes(&t, &p))
				sim->lane[(sim->lane_head + keep++) & m] = p;
		}
		n += sim->lane_len - keep;
		sim->lane_len = keep;
	}
	if (n > 0)
		sim->hint = false;
	return n;
}

void cs_sim_stop(cs_sim *sim)
{
	sim->stop = true;
}

uint64_t cs_sim_events(const cs_sim *sim)
{
	return sim->fired;
}

uint64_t cs_sim_pending(const cs_sim *sim)
{
	return cs_eq_size(sim->eq) + sim->lane_len;
}
