/*
 * test_core.c - the event engine: heap order, FIFO ties, the zero-delay
 * lane, run limits, stop, slot reuse, independence of instances, the
 * hint of the next event and events merged with what is due with them.
 *
 * The order every test checks is the contract of sim.h: events fire by
 * time, equal times in the order they were scheduled.
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core/eq.h"
#include "core/invariant.h"
#include "core/sim.h"
#include "core/sim_lane.h"

/* Check's ck_assert_* costs a write to a pipe even when it passes, so loops
 * over 10^5 events use these, which do nothing unless they fail. */
#define EXPECT(cond) do { \
	if (!(cond)) \
		ck_abort_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond); \
} while (0)
#define EXPECT_EQ(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) \
		ck_abort_msg("%s:%d: %s == %s (%lld != %lld)", __FILE__, __LINE__, #a, #b, a_, b_); \
} while (0)

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* -- (a) the heap against a qsort reference -- */

typedef struct ref_ev {
	int64_t time;
	uint32_t order;   /* insertion order */
} ref_ev;

static int ref_cmp(const void *a, const void *b)
{
	const ref_ev *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The least (time, order) of v[0, n), n > 0: what a pop must return. */
static uint32_t least_of(const ref_ev *v, uint32_t n)
{
	uint32_t best = 0;
	for (uint32_t i = 1; i < n; i++)
		if (ref_cmp(&v[i], &v[best]) < 0)
			best = i;
	return best;
}

/* Pop, expecting the least pending of the reference, which loses it;
 * has_at then says whether the next least is at the same time. Returns
 * the time popped. */
static int64_t pop_least(cs_eq *q, ref_ev *pending, uint32_t *n)
{
	uint32_t best = least_of(pending, *n);
	cs_eq_entry e;
	EXPECT_EQ(cs_eq_pop(q, &e), 0);
	EXPECT_EQ(e.time, pending[best].time);
	EXPECT_EQ(e.index, pending[best].order);
	pending[best] = pending[--*n];
	EXPECT_EQ(cs_eq_has_at(q, e.time), *n > 0 && pending[least_of(pending, *n)].time == e.time);
	return e.time;
}

static const struct {
	uint32_t n;
	int64_t range;   /* times drawn from [0, range): small ranges give many ties */
	uint64_t seed;
} random_rows[] = {
	{ 100000, 1000, 1 },
	{ 100000, 10, 2 },
	{ 100000, INT64_C(1) << 40, 3 },
	{ 100000, 1, 4 },
	{ 1, 5, 5 },
	{ 5, 3, 6 },
};

START_TEST(eq_pops_in_time_then_insertion_order)
{
	uint32_t n = random_rows[_i].n;
	uint64_t s = random_rows[_i].seed;
	ref_ev *ref = malloc(n * sizeof(*ref));
	ck_assert_ptr_nonnull(ref);
	cs_eq *q = cs_eq_new();
	ck_assert_ptr_nonnull(q);
	for (uint32_t i = 0; i < n; i++) {
		ref[i].time = (int64_t)(rng_next(&s) % (uint64_t)random_rows[_i].range);
		ref[i].order = i;
		EXPECT_EQ(cs_eq_push(q, ref[i].time, i), 0);
	}
	ck_assert_uint_eq(cs_eq_size(q), n);
	qsort(ref, n, sizeof(*ref), ref_cmp);
	for (uint32_t i = 0; i < n; i++) {
		cs_eq_entry e, top;
		EXPECT_EQ(cs_eq_peek(q, &top), 0);
		EXPECT_EQ(cs_eq_pop(q, &e), 0);
		EXPECT_EQ(top.index, e.index);
		EXPECT_EQ(e.time, ref[i].time);
		EXPECT_EQ(e.index, ref[i].order);
	}
	cs_eq_entry e;
	ck_assert_int_eq(cs_eq_pop(q, &e), -1);
	ck_assert_int_eq(cs_eq_peek(q, &e), -1);
	ck_assert_uint_eq(cs_eq_size(q), 0);
	cs_eq_free(q);
	free(ref);
}
END_TEST

/* Pushes interleaved with pops, each at or after the last time popped (a
 * simulation's pattern), checked against the pending set: each pop must
 * return the least pending (time, order). Ranges from 2 (mostly ties) to
 * 2^40 (entries moving through many buckets). */
START_TEST(eq_interleaved_push_pop_matches_reference)
{
	static const int64_t ranges[] = { 2, 50, 100000, INT64_C(1) << 40 };
	uint64_t s = 42 + (uint64_t)_i;
	enum { N = 4000 };
	ref_ev pending[N];
	uint32_t n_pending = 0, order = 0;
	int64_t last = 0;
	cs_eq *q = cs_eq_new();
	ck_assert_ptr_nonnull(q);
	for (int step = 0; step < 3 * N; step++) {
		bool push = n_pending == 0 || (n_pending < N && rng_next(&s) % 3 != 0);
		if (push) {
			ref_ev r = { last + (int64_t)(rng_next(&s) % (uint64_t)ranges[_i]), order++ };
			EXPECT_EQ(cs_eq_push(q, r.time, r.order), 0);
			pending[n_pending++] = r;
			continue;
		}
		last = pop_least(q, pending, &n_pending);
	}
	ck_assert_uint_eq(cs_eq_size(q), n_pending);
	cs_eq_free(q);
}
END_TEST

/* The hold model (pop the least, push one in its place) with few pending
 * entries spread thin: refills take small buckets, which are sorted into
 * a run, and many pushes land inside that run, among its times or equal to
 * one of them. Each pop, and each pop_before at a random end, must return
 * the least pending (time, order). */
static const struct {
	uint32_t pending;
	int64_t range;
} hold_rows[] = {
	{ 6, 3 }, { 20, 1000 }, { 33, 1000 }, { 20, INT64_C(1) << 30 }, { 64, 50 },
};

START_TEST(eq_sorted_runs_keep_time_then_insertion_order)
{
	uint64_t s = 7 + (uint64_t)_i;
	enum { CAP = 64 };
	ref_ev pending[CAP];
	uint32_t n = hold_rows[_i].pending, order = 0;
	int64_t range = hold_rows[_i].range, last = 0;
	cs_eq *q = cs_eq_new();
	ck_assert_ptr_nonnull(q);
	for (uint32_t i = 0; i < n; i++) {
		pending[i] = (ref_ev){ (int64_t)(rng_next(&s) % (uint64_t)range), order++ };
		EXPECT_EQ(cs_eq_push(q, pending[i].time, pending[i].order), 0);
	}
	for (int step = 0; step < 20000; step++) {
		uint32_t best = least_of(pending, n);
		cs_eq_entry e;
		int64_t end = last + (int64_t)(rng_next(&s) % (uint64_t)(2 * range));
		int rc = cs_eq_pop_before(q, end, &e);
		if (pending[best].time >= end) {
			EXPECT_EQ(rc, 1);
			EXPECT_EQ(cs_eq_pop(q, &e), 0);
		} else {
			EXPECT_EQ(rc, 0);
		}
		EXPECT_EQ(e.time, pending[best].time);
		EXPECT_EQ(e.index, pending[best].order);
		last = e.time;
		/* in place of it: at the time just popped, or a little or far later */
		uint64_t pick = rng_next(&s) % 4;
		int64_t at = pick == 0 ? last : last + (int64_t)(rng_next(&s) % (uint64_t)(pick == 3 ? range : 8));
		pending[best] = (ref_ev){ at, order++ };
		EXPECT_EQ(cs_eq_push(q, at, pending[best].order), 0);
	}
	ck_assert_uint_eq(cs_eq_size(q), n);
	cs_eq_free(q);
}
END_TEST

/* A sorted run over a wide range, then bursts of pushes inside it in any
 * order (a step's start: few events far ahead, then many near): long runs
 * are undone into buckets, and every pop is still the least pending
 * (time, order). */
START_TEST(eq_long_runs_keep_time_then_insertion_order)
{
	enum { CAP = 4096 };
	ref_ev *pending = malloc(CAP * sizeof *pending);
	ck_assert_ptr_nonnull(pending);
	uint64_t s = 11 + (uint64_t)_i;
	uint32_t n = 0, order = 0;
	int64_t last = 0;
	cs_eq *q = cs_eq_new();
	ck_assert_ptr_nonnull(q);
	for (int round = 0; round < 6; round++) {
		/* a few far ahead, one near: the next refill sorts the far ones */
		int64_t span = INT64_C(1) << (16 + 4 * _i + round);
		for (int i = 0; i < 6 && n < CAP; i++) {
			int64_t at = last + span / 2 + (int64_t)(rng_next(&s) % (uint64_t)(span / 2));
			pending[n++] = (ref_ev){ at, order++ };
			EXPECT_EQ(cs_eq_push(q, at, order - 1), 0);
		}
		for (int step = 0; step < 3000; step++) {
			bool push = n == 0 || (n < CAP && rng_next(&s) % 2 == 0);
			if (push) {
				uint64_t k = rng_next(&s) % 8;
				int64_t at = k == 0 ? last : last + (int64_t)(rng_next(&s) % (uint64_t)(k < 4 ? 50 : span));
				pending[n++] = (ref_ev){ at, order++ };
				EXPECT_EQ(cs_eq_push(q, at, order - 1), 0);
				continue;
			}
			last = pop_least(q, pending, &n);
		}
	}
	ck_assert_uint_eq(cs_eq_size(q), n);
	cs_eq_free(q);
	free(pending);
}
END_TEST

/* The queue is monotone: a push before the last time popped is refused and
 * leaves the queue as it was. */
START_TEST(eq_refuses_a_push_before_the_last_pop)
{
	cs_eq *q = cs_eq_new();
	cs_eq_entry e;
	EXPECT_EQ(cs_eq_push(q, 10, 1), 0);
	EXPECT_EQ(cs_eq_push(q, 20, 2), 0);
	EXPECT_EQ(cs_eq_pop(q, &e), 0);
	EXPECT_EQ(e.time, 10);
	EXPECT_EQ(cs_eq_push(q, 9, 3), -1);
	EXPECT_EQ(cs_eq_push(q, 10, 4), 0);
	EXPECT_EQ(cs_eq_size(q), 2);
	EXPECT_EQ(cs_eq_pop(q, &e), 0);
	EXPECT_EQ(e.index, 4);
	EXPECT_EQ(cs_eq_pop(q, &e), 0);
	EXPECT_EQ(e.index, 2);
	cs_eq_free(q);
}
END_TEST

/* The same random set through cs_sim, with and without the lane. */
typedef struct fire_log {
	int64_t *time;
	uint64_t *arg;
	uint64_t n, cap;
} fire_log;

static void log_fire(cs_sim *sim, void *ctx, uint64_t arg)
{
	fire_log *log = ctx;
	EXPECT(log->n < log->cap);
	log->time[log->n] = cs_sim_now(sim);
	log->arg[log->n] = arg;
	log->n++;
}

static void log_init(fire_log *log, uint64_t cap)
{
	log->time = malloc(cap * sizeof(*log->time));
	log->arg = malloc(cap * sizeof(*log->arg));
	ck_assert_ptr_nonnull(log->time);
	ck_assert_ptr_nonnull(log->arg);
	log->n = 0;
	log->cap = cap;
}

static void log_fini(fire_log *log)
{
	free(log->time);
	free(log->arg);
}

START_TEST(sim_fires_in_time_then_insertion_order)
{
	uint32_t n = random_rows[_i].n;
	for (int lane = 0; lane <= 1; lane++) {
		uint64_t s = random_rows[_i].seed;
		ref_ev *ref = malloc(n * sizeof(*ref));
		ck_assert_ptr_nonnull(ref);
		fire_log log;
		log_init(&log, n);
		cs_sim *sim = cs_sim_new();
		ck_assert_ptr_nonnull(sim);
		cs__sim_set_lane(sim, lane);
		for (uint32_t i = 0; i < n; i++) {
			ref[i].time = (int64_t)(rng_next(&s) % (uint64_t)random_rows[_i].range);
			ref[i].order = i;
			EXPECT_EQ(cs_sim_at(sim, ref[i].time, log_fire, &log, i), 0);
		}
		ck_assert_uint_eq(cs_sim_pending(sim), n);
		ck_assert_uint_eq(cs_sim_run(sim, 0), n);
		qsort(ref, n, sizeof(*ref), ref_cmp);
		for (uint32_t i = 0; i < n; i++) {
			EXPECT_EQ(log.time[i], ref[i].time);
			EXPECT_EQ(log.arg[i], ref[i].order);
		}
		ck_assert_uint_eq(cs_sim_pending(sim), 0);
		ck_assert_uint_eq(cs_sim_events(sim), n);
		cs_sim_free(sim);
		log_fini(&log);
		free(ref);
	}
}
END_TEST

/* -- (b) ties come out first-in first-out -- */

static const struct {
	cs_time at;      /* 0 is the current time: the lane's path */
	bool lane;
} tie_rows[] = {
	{ 0, true }, { 0, false }, { 7, true }, { 7, false }, { CS_TIME_MAX, true },
};

START_TEST(equal_times_fire_fifo)
{
	enum { N = 1000 };
	fire_log log;
	log_init(&log, N);
	cs_sim *sim = cs_sim_new();
	ck_assert_ptr_nonnull(sim);
	cs__sim_set_lane(sim, tie_rows[_i].lane);
	for (uint64_t i = 0; i < N; i++)
		EXPECT_EQ(cs_sim_at(sim, tie_rows[_i].at, log_fire, &log, i), 0);
	ck_assert_uint_eq(cs_sim_run(sim, 0), N);
	for (uint64_t i = 0; i < N; i++) {
		EXPECT_EQ(log.arg[i], i);
		EXPECT_EQ(log.time[i], tie_rows[_i].at);
	}
	ck_assert_int_eq(cs_sim_now(sim), tie_rows[_i].at);
	cs_sim_free(sim);
	log_fini(&log);
}
END_TEST

/* -- (c) two instances in one process -- */

START_TEST(two_instances_do_not_interfere)
{
	enum { N = 2000 };
	fire_log la, lb;
	log_init(&la, N);
	log_init(&lb, N);
	cs_sim *a = cs_sim_new(), *b = cs_sim_new();
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	/* a: times i, ascending; b: times N-i, descending; both at 0 too. */
	for (uint64_t i = 0; i < N; i++) {
		EXPECT_EQ(cs_sim_at(a, (cs_time)i, log_fire, &la, i), 0);
		EXPECT_EQ(cs_sim_at(b, (cs_time)(N - 1 - i), log_fire, &lb, i), 0);
	}
	/* Alternate short runs of each. */
	while (cs_sim_pending(a) || cs_sim_pending(b)) {
		cs_sim_run(a, 7);
		cs_sim_run(b, 3);
	}
	ck_assert_uint_eq(cs_sim_events(a), N);
	ck_assert_uint_eq(cs_sim_events(b), N);
	for (uint64_t i = 0; i < N; i++) {
		EXPECT_EQ(la.arg[i], i);
		EXPECT_EQ(la.time[i], (cs_time)i);
		EXPECT_EQ(lb.arg[i], N - 1 - i);
		EXPECT_EQ(lb.time[i], (cs_time)i);
	}
	ck_assert_int_eq(cs_sim_now(a), N - 1);
	ck_assert_int_eq(cs_sim_now(b), N - 1);
	cs_sim_free(a);
	cs_sim_free(b);
	log_fini(&la);
	log_fini(&lb);
}
END_TEST

/* -- (d) events scheduled from callbacks -- */

/* Each event is keyed by (time, seq), seq counting every cs_sim_at call of
 * the run; children are scheduled at now (often), shortly after, or later.
 * The fired sequence must be strictly increasing in (time, seq) and hold
 * every scheduled event: then no event can have overtaken a smaller one. */
typedef struct spawn_ctx {
	uint64_t rng;
	uint64_t seq;       /* cs_sim_at calls so far */
	uint64_t budget;    /* events still allowed to be scheduled */
	uint64_t zero_pct;  /* share of children at delay 0 */
	fire_log log;
} spawn_ctx;

static void spawn_at(cs_sim *sim, spawn_ctx *c, cs_time at);

static void spawn_fire(cs_sim *sim, void *ctx, uint64_t arg)
{
	spawn_ctx *c = ctx;
	log_fire(sim, &c->log, arg);
	uint64_t kids = rng_next(&c->rng) % 3;
	for (uint64_t k = 0; k < kids && c->budget > 0; k++) {
		uint64_t r = rng_next(&c->rng);
		cs_time d = (r % 100 < c->zero_pct) ? 0 : (cs_time)((r >> 8) % 5);
		spawn_at(sim, c, cs_sim_now(sim) + d);
	}
}

static void spawn_at(cs_sim *sim, spawn_ctx *c, cs_time at)
{
	c->budget--;
	EXPECT_EQ(cs_sim_at(sim, at, spawn_fire, c, c->seq++), 0);
}

static const struct {
	uint64_t zero_pct;
	uint64_t seed;
} spawn_rows[] = { { 50, 1 }, { 100, 2 }, { 0, 3 }, { 90, 4 } };

START_TEST(callbacks_scheduling_keep_order)
{
	enum { N = 50000, ROOTS = 200 };
	int64_t *times[2] = { 0 };
	uint64_t fired[2] = { 0 };
	for (int lane = 0; lane <= 1; lane++) {
		spawn_ctx c = { .rng = spawn_rows[_i].seed, .budget = N,
		                .zero_pct = spawn_rows[_i].zero_pct };
		log_init(&c.log, N);
		int64_t *when = malloc(N * sizeof(*when)); /* scheduled time by seq */
		ck_assert_ptr_nonnull(when);
		cs_sim *sim = cs_sim_new();
		ck_assert_ptr_nonnull(sim);
		cs__sim_set_lane(sim, lane);
		for (int r = 0; r < ROOTS; r++)
			spawn_at(sim, &c, (cs_time)(rng_next(&c.rng) % 20));
		uint64_t n = cs_sim_run(sim, 0);
		ck_assert_uint_eq(n, c.seq);
		ck_assert_uint_eq(cs_sim_pending(sim), 0);
		ck_assert_uint_gt(n, 10 * ROOTS);
		for (uint64_t i = 1; i < n; i++) {
			EXPECT(c.log.time[i - 1] <= c.log.time[i]);
			if (c.log.time[i - 1] == c.log.time[i])
				EXPECT(c.log.arg[i - 1] < c.log.arg[i]);
		}
		/* Every seq fired exactly once. */
		for (uint64_t i = 0; i < n; i++)
			when[i] = -1;
		for (uint64_t i = 0; i < n; i++) {
			EXPECT_EQ(when[c.log.arg[i]], -1);
			when[c.log.arg[i]] = c.log.time[i];
		}
		free(when);
		times[lane] = c.log.time;
		fired[lane] = n;
		free(c.log.arg);
		cs_sim_free(sim);
	}
	/* Lane or not, the same run. */
	ck_assert_uint_eq(fired[0], fired[1]);
	for (uint64_t i = 0; i < fired[0]; i++)
		EXPECT_EQ(times[0][i], times[1][i]);
	free(times[0]);
	free(times[1]);
}
END_TEST

/* Run in windows of random width (cs_sim_run_before), the same spawning
 * run fires the same events in the same order as in one cs_sim_run, and
 * cs_sim_next_time names each window's first event. */
START_TEST(windows_fire_as_one_run)
{
	enum { N = 50000, ROOTS = 200 };
	fire_log logs[2];
	for (int windowed = 0; windowed <= 1; windowed++) {
		spawn_ctx c = { .rng = spawn_rows[_i].seed, .budget = N,
		                .zero_pct = spawn_rows[_i].zero_pct };
		log_init(&c.log, N);
		cs_sim *sim = cs_sim_new();
		ck_assert_ptr_nonnull(sim);
		ck_assert_int_eq(cs_sim_next_time(sim), CS_TIME_MAX);
		for (int r = 0; r < ROOTS; r++)
			spawn_at(sim, &c, (cs_time)(rng_next(&c.rng) % 20));
		uint64_t wrng = 7, windows = 0;
		if (!windowed)
			cs_sim_run(sim, 0);
		for (cs_time t; windowed && (t = cs_sim_next_time(sim)) != CS_TIME_MAX; windows++) {
			cs_time end = t + 1 + (cs_time)(rng_next(&wrng) % 4);
			uint64_t before = c.log.n;
			ck_assert_uint_gt(cs_sim_run_before(sim, end), 0);
			EXPECT_EQ(c.log.time[before], t);
			EXPECT(c.log.time[c.log.n - 1] < end);
			EXPECT(cs_sim_next_time(sim) >= end);
		}
		ck_assert_uint_eq(c.log.n, c.seq);
		ck_assert(!windowed || windows >= 5);
		logs[windowed] = c.log;
		cs_sim_free(sim);
	}
	ck_assert_uint_eq(logs[0].n, logs[1].n);
	for (uint64_t i = 0; i < logs[0].n; i++) {
		EXPECT_EQ(logs[0].time[i], logs[1].time[i]);
		EXPECT_EQ(logs[0].arg[i], logs[1].arg[i]);
	}
	log_fini(&logs[0]);
	log_fini(&logs[1]);
}
END_TEST

/* After a window ends, an event may still be scheduled at its end, though
 * the next one pending is much later: the queue did not move on. */
START_TEST(a_window_leaves_its_end_open)
{
	fire_log log;
	log_init(&log, 4);
	cs_sim *sim = cs_sim_new();
	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(cs_sim_at(sim, 5, log_fire, &log, 1), 0);
	ck_assert_int_eq(cs_sim_at(sim, 1000, log_fire, &log, 3), 0);
	ck_assert_uint_eq(cs_sim_run_before(sim, 100), 1);
	ck_assert_int_eq(cs_sim_now(sim), 5);
	ck_assert_int_eq(cs_sim_next_time(sim), 1000);
	ck_assert_uint_eq(cs_sim_run_before(sim, 100), 0);
	ck_assert_int_eq(cs_sim_at(sim, 100, log_fire, &log, 2), 0);
	ck_assert_int_eq(cs_sim_next_time(sim), 100);
	ck_assert_uint_eq(cs_sim_run(sim, 0), 2);
	ck_assert_uint_eq(log.n, 3);
	for (uint64_t i = 0; i < 3; i++)
		ck_assert_uint_eq(log.arg[i], i + 1);
	ck_assert_int_eq(log.time[1], 100);
	cs_sim_free(sim);
	log_fini(&log);
}
END_TEST

/* A heap event at `now` was scheduled before a zero-delay event made at
 * `now`, so it fires first. */
static void order_first(cs_sim *sim, void *ctx, uint64_t arg)
{
	log_fire(sim, ctx, arg);
	if (arg == 1) {
		/* At t=10, two events from before wait at t=10 (args 2, 3). */
		ck_assert_int_eq(cs_sim_at(sim, 10, order_first, ctx, 4), 0);
		ck_assert_int_eq(cs_sim_at(sim, 11, order_first, ctx, 6), 0);
		ck_assert_int_eq(cs_sim_at(sim, 10, order_first, ctx, 5), 0);
	}
}

START_TEST(heap_events_at_now_precede_new_zero_delay_events)
{
	fire_log log;
	log_init(&log, 16);
	cs_sim *sim = cs_sim_new();
	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(cs_sim_at(sim, 10, order_first, &log, 1), 0);
	ck_assert_int_eq(cs_sim_at(sim, 10, order_first, &log, 2), 0);
	ck_assert_int_eq(cs_sim_at(sim, 10, order_first, &log, 3), 0);
	ck_assert_int_eq(cs_sim_at(sim, 0, order_first, &log, 0), 0);
	ck_assert_uint_eq(cs_sim_run(sim, 0), 7);
	static const uint64_t want[] = { 0, 1, 2, 3, 4, 5, 6 };
	static const int64_t want_t[] = { 0, 10, 10, 10, 10, 10, 11 };
	for (int i = 0; i < 7; i++) {
		ck_assert_uint_eq(log.arg[i], want[i]);
		ck_assert_int_eq(log.time[i], want_t[i]);
	}
	cs_sim_free(sim);
	log_fini(&log);
}
END_TEST

/* -- (e) run limit and stop -- */

typedef struct stop_ctx {
	uint64_t stop_at;   /* arg of the event that calls cs_sim_stop; 0: none */
	uint64_t calls;
} stop_ctx;

static void maybe_stop(cs_sim *sim, void *ctx, uint64_t arg)
{
	stop_ctx *c = ctx;
	c->calls++;
	if (arg == c->stop_at)
		cs_sim_stop(sim);
}

static const struct {
	uint64_t limit, stop_at;
	uint64_t want_fired;
	cs_time want_now;
} stop_rows[] = {
	/* ten events, arg i at time 100*i, i = 1..10 */
	{ 0, 0, 10, 1000 },
	{ 3, 0, 3, 300 },
	{ 0, 4, 4, 400 },
	{ 2, 4, 2, 200 },    /* the limit comes first */
	{ 6, 4, 4, 400 },    /* the stop comes first */
	{ 10, 0, 10, 1000 },
	{ 50, 0, 10, 1000 },
	{ 0, 10, 10, 1000 },
};

START_TEST(run_limit_and_stop)
{
	stop_ctx c = { .stop_at = stop_rows[_i].stop_at };
	cs_sim *sim = cs_sim_new();
	ck_assert_ptr_nonnull(sim);
	for (uint64_t i = 1; i <= 10; i++)
		ck_assert_int_eq(cs_sim_at(sim, (cs_time)(100 * i), maybe_stop, &c, i), 0);
	uint64_t n = cs_sim_run(sim, stop_rows[_i].limit);
	ck_assert_uint_eq(n, stop_rows[_i].want_fired);
	ck_assert_uint_eq(c.calls, n);
	ck_assert_int_eq(cs_sim_now(sim), stop_rows[_i].want_now);
	ck_assert_uint_eq(cs_sim_pending(sim), 10 - n);
	/* A later run carries on where this one left off. */
	c.stop_at = 0;
	ck_assert_uint_eq(cs_sim_run(sim, 0), 10 - n);
	ck_assert_uint_eq(cs_sim_events(sim), 10);
	ck_assert_int_eq(cs_sim_now(sim), 1000);
	/* An empty queue: nothing fires, the clock stays. */
	ck_assert_uint_eq(cs_sim_run(sim, 0), 0);
	ck_assert_int_eq(cs_sim_now(sim), 1000);
	cs_sim_free(sim);
}
END_TEST

#ifdef CS_CHECKED
START_TEST(scheduling_in_the_past_aborts)
{
	stop_ctx c = { 0 };
	cs_sim *sim = cs_sim_new();
	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(cs_sim_at(sim, 100, maybe_stop, &c, 1), 0);
	cs_sim_run(sim, 0);
	cs_sim_at(sim, 99, maybe_stop, &c, 2);
	ck_abort_msg("cs_sim_at accepted a time in the past");
}
END_TEST
#endif

/* CS_ASSERT checks in a checked build and aborts on the first false
 * invariant; a release build compiles it out, so the test is a checked
 * build's. */
#ifdef CS_CHECKED
START_TEST(a_false_invariant_aborts)
{
	int evaluated = 0;
	CS_ASSERT(++evaluated == 1);
	ck_assert_int_eq(evaluated, 1);
	CS_ASSERT(evaluated == 2);
	ck_abort_msg("CS_ASSERT let a false invariant pass");
}
END_TEST
#endif

/* -- (f) slot reuse under churn -- */

typedef struct churn_rec {
	uint64_t id;
	bool fired;
} churn_rec;

typedef struct churn_ctx {
	churn_rec *recs;
	uint64_t n_recs, used, rng;
	uint64_t fired;
	uint64_t max_pending;
} churn_ctx;

static uint64_t churn_magic(uint64_t id)
{
	return id * 0x9e3779b97f4a7c15ull ^ 0x5bd1e995u;
}

static void churn_fire(cs_sim *sim, void *ctx, uint64_t arg);

static void churn_spawn(cs_sim *sim, churn_ctx *c)
{
	if (c->used == c->n_recs)
		return;
	churn_rec *r = &c->recs[c->used];
	r->id = c->used++;
	uint64_t x = rng_next(&c->rng);
	cs_time d = (x & 3) == 0 ? 0 : (cs_time)(x % 1000);
	/* ctx is the record, arg a function of its id: a mixed-up slot shows. */
	EXPECT_EQ(cs_sim_at(sim, cs_sim_now(sim) + d, churn_fire, r, churn_magic(r->id)), 0);
}

static void churn_fire(cs_sim *sim, void *ctx, uint64_t arg)
{
	(void)sim;
	churn_rec *r = ctx;
	EXPECT(arg == churn_magic(r->id));
	EXPECT(!r->fired);
	r->fired = true;
}

START_TEST(slots_are_reused_and_payloads_stay_right)
{
	enum { N = 200000, PENDING = 1000 };
	churn_ctx c = { .n_recs = N, .rng = 99 };
	c.recs = calloc(N, sizeof(*c.recs));
	ck_assert_ptr_nonnull(c.recs);
	cs_sim *sim = cs_sim_new();
	ck_assert_ptr_nonnull(sim);
	for (int i = 0; i < PENDING; i++)
		churn_spawn(sim, &c);
	/* Fire one, schedule one or two or none: the pending set wanders. */
	while (cs_sim_pending(sim) > 0) {
		EXPECT_EQ(cs_sim_run(sim, 1), 1);
		uint64_t k = rng_next(&c.rng) % 3;
		for (uint64_t i = 0; i < k && cs_sim_pending(sim) < 2 * PENDING; i++)
			churn_spawn(sim, &c);
		if (cs_sim_pending(sim) > c.max_pending)
			c.max_pending = cs_sim_pending(sim);
	}
	ck_assert_uint_eq(c.used, N);
	ck_assert_uint_eq(cs_sim_events(sim), N);
	for (uint64_t i = 0; i < N; i++)
		EXPECT(c.recs[i].fired);
	ck_assert_uint_le(c.max_pending, 2 * PENDING);
	cs_sim_free(sim);
	free(c.recs);
}
END_TEST

/* The next event, as a callback may ask for it: whenever the engine says
 * it has it sorted already, it is the event that fires next, a merge of the
 * callback asked about, at that time, with that key and first item. */
typedef struct hint_ctx {
	uint64_t expect;   /* the first item the last answer promised fires next */
	cs_time expect_at; /* and when */
	unsigned expect_key;
	bool promised;
	int answered, kept;
	uint64_t rng;
} hint_ctx;

static void hint_mine(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n);
static void hint_merge_other(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n);
static void hint_plain(cs_sim *sim, void *ctx, uint64_t arg);

/* Schedule one more for item, now and then at the same time, on a plain
 * callback or on another merge. */
static void hint_spawn(cs_sim *sim, hint_ctx *h, cs_time now, uint64_t item)
{
	if (item >= 5000)
		return;
	uint64_t k = rng_next(&h->rng);
	cs_time at = now + (k % 4 == 0 ? 0 : (cs_time)(k % 1000));
	unsigned key = (unsigned)((k >> 12) % 3);
	if (k % 7 == 0)
		EXPECT_EQ(cs_sim_at(sim, at, hint_plain, h, item + 1000), 0);
	else
		EXPECT_EQ(cs_sim_at_merge(sim, at, k % 5 == 0 ? hint_merge_other : hint_mine, h, key, item + 1000), 0);
}

/* Ask last: what is scheduled after asking may come first. */
static void hint_ask(cs_sim *sim, hint_ctx *h)
{
	h->promised = cs_sim_next_item(sim, hint_mine, &h->expect_at, &h->expect_key, &h->expect) == 1;
	h->answered += h->promised;
}

static void hint_fired(cs_sim *sim, hint_ctx *h, const uint64_t *items, uint32_t n, bool mine, unsigned key)
{
	if (h->promised) {
		EXPECT(mine);
		EXPECT_EQ(items[0], h->expect);
		EXPECT_EQ(cs_sim_now(sim), h->expect_at);
		EXPECT_EQ(key, h->expect_key);
		h->kept++;
	}
	for (uint32_t i = 0; i < n; i++)
		hint_spawn(sim, h, cs_sim_now(sim), items[i]);
	hint_ask(sim, h);
}

static void hint_mine(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n)
{
	hint_fired(sim, ctx, items, n, true, key);
}

static void hint_merge_other(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n)
{
	hint_fired(sim, ctx, items, n, false, key);
}

static void hint_plain(cs_sim *sim, void *ctx, uint64_t arg)
{
	hint_fired(sim, ctx, &arg, 1, false, 0);
}

START_TEST(next_item_names_the_merge_that_fires_next)
{
	hint_ctx h = { .rng = 5 };
	cs_sim *sim = cs_sim_new();
	ck_assert_ptr_nonnull(sim);
	for (uint64_t i = 0; i < 1000; i++)
		hint_spawn(sim, &h, (cs_time)(rng_next(&h.rng) % 100000), i);
	cs_sim_run(sim, 0);
	/* a hint that is never given would pass the loop above */
	ck_assert_int_gt(h.answered, 1000);
	ck_assert_int_eq(h.kept, h.answered - h.promised);
	cs_sim_free(sim);
}
END_TEST

/* -- merging what is due together (cs_sim_at_merge) -- */

/* Items go to one of two merge callbacks, under one of four keys, or to a
 * plain callback. Every item handed over spawns one more: at the same time
 * (the lane), a little later (ties in the queue) or on a grid of far times,
 * more of them than the ways an engine keeps per key. A reference kept in
 * step, a list in (time, insertion) order, says what fires when: a merge
 * fires at the place of its first item and carries every item of its
 * (time, callback, key) scheduled before it fired, in that order. */
enum { MERGE_EVENTS = 20000, MERGE_PENDING = 4096 };

typedef struct merge_ref {
	cs_time t;
	uint64_t seq, item;
	int fn;              /* 0 plain, 1 or 2 a merge callback */
	unsigned key;
	bool gone;
} merge_ref;

typedef struct merge_ctx {
	cs_sim *sim;
	uint64_t rng, spawned, items, plain, callbacks, batches, seq;
	uint32_t widest;
	merge_ref ref[MERGE_PENDING];
	int nref;
	int match[MERGE_PENDING];
} merge_ctx;

static void merge_a(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n);
static void merge_b(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n);
static void merge_plain(cs_sim *sim, void *ctx, uint64_t arg);

static void merge_spawn(merge_ctx *m, cs_time now)
{
	if (m->spawned >= MERGE_EVENTS)
		return;
	uint64_t k = rng_next(&m->rng);
	unsigned key = (unsigned)(k & 3);
	uint64_t item = m->spawned++;
	uint64_t d = (k >> 8) % 8;
	/* few distinct times, for many ties: far ones on a grid of eight */
	cs_time at = d < 2 ? now : d < 4 ? now + (cs_time)d - 1 : (now / 1000 + 1 + (cs_time)((k >> 16) % 8)) * 1000;
	int fn = (k >> 40) % 5 == 0 ? 0 : (k >> 44) % 4 == 0 ? 2 : 1;
	if (fn == 0)
		EXPECT_EQ(cs_sim_at(m->sim, at, merge_plain, m, item), 0);
	else
		EXPECT_EQ(cs_sim_at_merge(m->sim, at, fn == 1 ? merge_a : merge_b, m, key, item), 0);
	EXPECT(m->nref < MERGE_PENDING);
	m->ref[m->nref++] = (merge_ref){ at, m->seq++, item, fn, key, false };
}

/* The reference's first pending entry by (time, seq). */
static int ref_first(const merge_ctx *m)
{
	int best = -1;
	for (int i = 0; i < m->nref; i++) {
		const merge_ref *e = &m->ref[i];
		if (best < 0 || e->t < m->ref[best].t || (e->t == m->ref[best].t && e->seq < m->ref[best].seq))
			best = i;
	}
	return best;
}

static void ref_compact(merge_ctx *m)
{
	int keep = 0;
	for (int i = 0; i < m->nref; i++)
		if (!m->ref[i].gone)
			m->ref[keep++] = m->ref[i];
	m->nref = keep;
}

static void merge_check(cs_sim *sim, merge_ctx *m, int fn, unsigned key, const uint64_t *items, uint32_t n)
{
	cs_time now = cs_sim_now(sim);
	int first = ref_first(m);
	EXPECT(first >= 0);
	EXPECT_EQ(m->ref[first].t, now);
	EXPECT_EQ(m->ref[first].fn, fn);
	EXPECT_EQ(m->ref[first].item, items[0]);
	/* every pending item of its (time, callback, key), by seq */
	uint32_t nm = 0;
	for (int i = 0; i < m->nref; i++) {
		const merge_ref *e = &m->ref[i];
		if (e->t == now && e->fn == fn && fn != 0 && e->key == key) {
			uint32_t j = nm++;
			while (j > 0 && m->ref[m->match[j - 1]].seq > e->seq) {
				m->match[j] = m->match[j - 1];
				j--;
			}
			m->match[j] = i;
		}
	}
	if (fn == 0)
		m->match[nm++] = first;
	EXPECT_EQ(nm, n);
	for (uint32_t j = 0; j < n; j++) {
		EXPECT_EQ(m->ref[m->match[j]].item, items[j]);
		m->ref[m->match[j]].gone = true;
	}
	ref_compact(m);
	m->callbacks++;
	if (fn == 0) {
		m->plain++;
	} else {
		m->items += n;
		m->batches += n > 1;
		if (n > m->widest)
			m->widest = n;
	}
	for (uint32_t j = 0; j < n; j++)
		merge_spawn(m, now);
}

static void merge_a(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n)
{
	merge_check(sim, ctx, 1, key, items, n);
}

static void merge_b(cs_sim *sim, void *ctx, unsigned key, const uint64_t *items, uint32_t n)
{
	merge_check(sim, ctx, 2, key, items, n);
}

static void merge_plain(cs_sim *sim, void *ctx, uint64_t arg)
{
	merge_check(sim, ctx, 0, 0, &arg, 1);
}

START_TEST(merged_items_fire_in_the_order_they_were_due)
{
	merge_ctx *m = calloc(1, sizeof *m);
	ck_assert_ptr_nonnull(m);
	m->sim = cs_sim_new();
	ck_assert_ptr_nonnull(m->sim);
	m->rng = (uint64_t)_i + 11;
	if (_i % 2)
		cs__sim_set_lane(m->sim, false);
	for (int i = 0; i < 256; i++)
		merge_spawn(m, 0);
	cs_sim_run(m->sim, 0);
	ck_assert_int_eq(m->nref, 0);
	ck_assert_uint_eq(m->spawned, MERGE_EVENTS);
	ck_assert_uint_eq(m->items + m->plain, MERGE_EVENTS);
	/* an event that carries several items counts as one fired */
	ck_assert_uint_eq(cs_sim_events(m->sim), m->callbacks);
	ck_assert_uint_lt(m->callbacks, MERGE_EVENTS);
	/* merging was exercised, and wider than a pair */
	ck_assert_uint_gt(m->batches, MERGE_EVENTS / 20);
	ck_assert_uint_gt(m->widest, 4);
	cs_sim_free(m->sim);
	free(m);
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("core");
	TCase *tc;

	tc = tcase_create("heap_order");
	tcase_add_loop_test(tc, eq_pops_in_time_then_insertion_order, 0,
	                    (int)(sizeof(random_rows) / sizeof(random_rows[0])));
	tcase_add_loop_test(tc, eq_interleaved_push_pop_matches_reference, 0, 4);
	tcase_add_loop_test(tc, eq_sorted_runs_keep_time_then_insertion_order, 0,
			    (int)(sizeof hold_rows / sizeof hold_rows[0]));
	tcase_add_loop_test(tc, eq_long_runs_keep_time_then_insertion_order, 0, 4);
	tcase_add_test(tc, eq_refuses_a_push_before_the_last_pop);
	tcase_add_loop_test(tc, sim_fires_in_time_then_insertion_order, 0,
	                    (int)(sizeof(random_rows) / sizeof(random_rows[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("fifo_ties");
	tcase_add_loop_test(tc, equal_times_fire_fifo, 0,
	                    (int)(sizeof(tie_rows) / sizeof(tie_rows[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("independent_instances");
	tcase_add_test(tc, two_instances_do_not_interfere);
	suite_add_tcase(s, tc);

	tc = tcase_create("next_event_hint");
	tcase_add_test(tc, next_item_names_the_merge_that_fires_next);
	suite_add_tcase(s, tc);

	tc = tcase_create("scheduling_from_callbacks");
	tcase_add_loop_test(tc, callbacks_scheduling_keep_order, 0,
	                    (int)(sizeof(spawn_rows) / sizeof(spawn_rows[0])));
	tcase_add_test(tc, heap_events_at_now_precede_new_zero_delay_events);
	suite_add_tcase(s, tc);

	tc = tcase_create("windows");
	tcase_add_loop_test(tc, windows_fire_as_one_run, 0,
	                    (int)(sizeof(spawn_rows) / sizeof(spawn_rows[0])));
	tcase_add_test(tc, a_window_leaves_its_end_open);
	suite_add_tcase(s, tc);

	tc = tcase_create("limit_and_stop");
	tcase_add_loop_test(tc, run_limit_and_stop, 0,
	                    (int)(sizeof(stop_rows) / sizeof(stop_rows[0])));
#ifdef CS_CHECKED
	tcase_add_test_raise_signal(tc, scheduling_in_the_past_aborts, SIGABRT);
#endif
#ifdef CS_CHECKED
	tcase_add_test_raise_signal(tc, a_false_invariant_aborts, SIGABRT);
#endif
	suite_add_tcase(s, tc);

	tc = tcase_create("merging");
	tcase_add_loop_test(tc, merged_items_fire_in_the_order_they_were_due, 0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("slot_reuse");
	tcase_add_test(tc, slots_are_reused_and_payloads_stay_right);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(core_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
