/*
 * eq.h - the event queue: a monotone priority queue of {time, index}.
 *
 * Entries are small; the payload they index lives elsewhere (cs_sim keeps it).
 * Order: by time, then by the order of insertion, so equal times pop
 * first-in first-out. Monotone: a push may not be earlier than the last
 * time popped (as in any discrete-event simulation), which lets a radix
 * heap do a push in O(1) and a pop in O(log range) amortised, whatever the
 * number pending.
 *
 * Ownership: cs_eq_new allocates, cs_eq_free releases.
 */
#ifndef CS_CORE_EQ_H
#define CS_CORE_EQ_H

#include <stdint.h>

typedef struct cs_eq_entry {
	int64_t time; /* >= 0 */
	uint32_t index;
} cs_eq_entry;

typedef struct cs_eq cs_eq;

cs_eq *cs_eq_new(void);
void cs_eq_free(cs_eq *q);
/* Returns 0, or -1 when out of memory or `time` is before the last time
 * popped. */
int cs_eq_push(cs_eq *q, int64_t time, uint32_t index);
/* Returns 0 and fills *out with the least entry, or -1 when empty. */
int cs_eq_pop(cs_eq *q, cs_eq_entry *out);
/* Pops the least entry if its time is before `end`: 0, else 1 (the queue
 * unchanged, so later pushes from `end` on stay valid), or -1 when out of
 * memory. */
int cs_eq_pop_before(cs_eq *q, int64_t end, cs_eq_entry *out);
/* Like cs_eq_pop but leaves the entry in the queue. */
int cs_eq_peek(const cs_eq *q, cs_eq_entry *out);
uint64_t cs_eq_size(const cs_eq *q);
/* Whether the least entry is at `time`; cheap when `time` is the last time
 * popped. */
int cs_eq_has_at(const cs_eq *q, int64_t time);
/* The entries that pop next, in order, as far as they are already
 * sorted (no refill needed to find them): *n of them from the returned
 * pointer, NULL and 0 when none is. A hint, for prefetching what they index. The queue
 * owns them; any push or pop may move them. */
const cs_eq_entry *cs_eq_sorted_next(const cs_eq *q, uint64_t *n);
/* Remove the pending entries at the time popped last for which
 * drop(ctx, index) is true, asking in the order they would pop and keeping
 * the others in theirs; returns how many. They are sorted already: this costs
 * one comparison when there are none. drop may not push or pop. */
uint64_t cs_eq_drop_last(cs_eq *q, int (*drop)(void *ctx, uint32_t index), void *ctx);

#endif
