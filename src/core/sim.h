/*
 * sim.h - the discrete-event engine.
 *
 * A cs_sim owns an event queue keyed by integer simulated time (nanoseconds)
 * and a run loop that pops the earliest event and calls its callback. Events
 * with equal times fire in the order they were scheduled (a sequence number
 * breaks ties), so a run is deterministic. The engine knows nothing of what
 * it schedules: a callback, a context pointer and a 64-bit argument.
 *
 * Ownership: cs_sim_new allocates; cs_sim_free releases the engine and its
 * pending events (it never touches the contexts, which belong to the caller).
 */
#ifndef CS_CORE_SIM_H
#define CS_CORE_SIM_H

#include <stdbool.h>
#include <stdint.h>

typedef int64_t cs_time; /* simulated nanoseconds */
#define CS_TIME_MAX INT64_MAX

/* No simulated time goes beyond 2^61 ns (73 years): durations saturate
 * here, so a sum of a few never overflows, and a run whose events pass it
 * fails with a message instead of wrapping around. */
#define CS_TIME_HORIZON ((cs_time)1 << 61)

/* ns as a duration: rounded, 0 for what is not positive (NaN included),
 * CS_TIME_HORIZON for what reaches it (infinity included). */
static inline cs_time cs_time_of(double ns)
{
	if (!(ns > 0.0))
		return 0;
	return ns >= (double)CS_TIME_HORIZON ? CS_TIME_HORIZON : (cs_time)(ns + 0.5);
}

/* a + b for durations in [0, CS_TIME_HORIZON], saturating there. */
static inline cs_time cs_time_add(cs_time a, cs_time b)
{
	cs_time s = a + b; /* at most 2^62: no overflow */
	return s > CS_TIME_HORIZON ? CS_TIME_HORIZON : s;
}

typedef struct cs_sim cs_sim;
typedef void (*cs_event_fn)(cs_sim *sim, void *ctx, uint64_t arg);

/* NULL when out of memory. */
cs_sim *cs_sim_new(void);
void cs_sim_free(cs_sim *sim);

/* Schedule fn(sim, ctx, arg) at absolute time `at` (>= cs_sim_now).
 * Returns 0, or -1 when out of memory. */
int cs_sim_at(cs_sim *sim, cs_time at, cs_event_fn fn, void *ctx, uint64_t arg);

/* Merging: what is due together fires together. An item scheduled for
 * (at, fn, ctx, key) while an event of those four is pending joins that
 * event; when it fires, fn receives all its items, in the order they were
 * scheduled, at the place of the first, with their key. From a callback, an item due now
 * is a new event (the one that fires cannot take more). An event that
 * carries several items counts as one fired. key is below
 * CS_SIM_MERGE_KEYS (a runner's streams, say). Returns 0, or -1 when out
 * of memory. The items passed to fn are the engine's, valid until fn
 * returns. */
#define CS_SIM_MERGE_KEYS 8
typedef void (*cs_merge_fn)(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n);
int cs_sim_at_merge(cs_sim *sim, cs_time at, cs_merge_fn fn, void *ctx, unsigned key, uint64_t item);

/* Run until the queue is empty, cs_sim_stop is called, or `limit` events
 * have fired (0: no limit). Returns the number of events fired by this call. */
uint64_t cs_sim_run(cs_sim *sim, uint64_t limit);
void cs_sim_stop(cs_sim *sim);
/* Run the events before `end` (or until cs_sim_stop): a conservative
 * parallel run advances each part's engine to the end of a window this
 * way. Events may then still be scheduled from `end` on. Returns the number
 * fired. */
uint64_t cs_sim_run_before(cs_sim *sim, cs_time end);
/* The time of the earliest pending event, CS_TIME_MAX when none. */
cs_time cs_sim_next_time(const cs_sim *sim);
/* The event that fires next, when the engine has it sorted already and is fn's merge: 1,
 * and its time, key and first item; else 0. A hint, for a callback to ask
 * ahead of it the memory its next event will touch. */
int cs_sim_next_item(const cs_sim *sim, cs_merge_fn fn, cs_time *at, unsigned *key, uint64_t *item);

/* The engine's clock, read inline (a runner asks for it at nearly every
 * op): it is the first member of the otherwise private struct, and a
 * pointer to a struct points to its first member (C17 6.7.2.1). */
static inline cs_time cs_sim_now(const cs_sim *sim) { return *(const cs_time *)(const void *)sim; }
uint64_t cs_sim_events(const cs_sim *sim); /* fired since creation */
uint64_t cs_sim_pending(const cs_sim *sim);

#endif
