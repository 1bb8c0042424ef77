/*
 * bench_eq.c - the hold model on the event queue and the engine.
 *
 * The classic benchmark of a pending-event set: fill it with N events, then
 * repeatedly take the earliest and schedule one in its place at
 * now + an exponential increment (seeded, so every run draws the same
 * times). N stays constant, so the figure is the cost of one pop plus one
 * push at queue size N.
 *
 * Columns:
 *   eq           the raw cs_eq (pop + push)
 *   sim          through cs_sim: run loop, payload slots, callback
 *   sim, no lane the same with the zero-delay lane turned off
 *   zero50 ...   half of the increments are 0 (an op that ends and starts
 *                the next at once), with and without the lane
 *
 * Usage: bench_eq [seconds-per-cell]   (default 0.5)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/eq.h"
#include "core/sim.h"
#include "core/sim_lane.h"

#define INC_TABLE (1u << 14)   /* a table of draws, so the clock sees the queue */
#define MEAN_NS 1000.0

typedef struct draws {
	int64_t inc[INC_TABLE];
	uint32_t pos;
} draws;

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Exponential increments with mean MEAN_NS; a share `zero` of them is 0. */
static void draws_init(draws *d, uint64_t seed, double zero)
{
	uint64_t s = seed;
	for (uint32_t i = 0; i < INC_TABLE; i++) {
		double u = ((double)(splitmix64(&s) >> 11) + 1.0) / 9007199254740992.0; /* (0, 1] */
		double z = (double)(splitmix64(&s) >> 11) / 9007199254740992.0;
		d->inc[i] = z < zero ? 0 : 1 + (int64_t)(-MEAN_NS * log(u));
	}
	d->pos = 0;
}

static inline int64_t draw(draws *d)
{
	int64_t v = d->inc[d->pos];
	d->pos = (d->pos + 1) & (INC_TABLE - 1);
	return v;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* -- raw queue -- */

static void eq_hold(cs_eq *q, draws *d, uint64_t iters)
{
	cs_eq_entry e;
	for (uint64_t i = 0; i < iters; i++) {
		cs_eq_pop(q, &e);
		if (cs_eq_push(q, e.time + draw(d), e.index) != 0)
			abort();
	}
}

static double bench_eq_cell(uint64_t n, double seconds)
{
	draws *d = malloc(sizeof(*d));
	cs_eq *q = cs_eq_new();
	if (!d || !q)
		abort();
	draws_init(d, 1, 0.0);
	for (uint64_t i = 0; i < n; i++)
		if (cs_eq_push(q, draw(d), (uint32_t)i) != 0)
			abort();
	eq_hold(q, d, n);  /* reach the steady state */
	uint64_t iters = 100000, total = 0;
	double t0 = now_s(), t = 0;
	while (t < seconds) {
		eq_hold(q, d, iters);
		total += iters;
		t = now_s() - t0;
		iters *= 2;
	}
	cs_eq_free(q);
	free(d);
	return (double)total / t;
}

/* -- through the engine -- */

static void hold_fn(cs_sim *sim, void *ctx, uint64_t arg)
{
	draws *d = ctx;
	if (cs_sim_at(sim, cs_sim_now(sim) + draw(d), hold_fn, d, arg) != 0)
		abort();
}

static double bench_sim_cell(uint64_t n, double seconds, bool lane, double zero)
{
	draws *d = malloc(sizeof(*d));
	cs_sim *sim = cs_sim_new();
	if (!d || !sim)
		abort();
	cs__sim_set_lane(sim, lane);
	draws_init(d, 1, zero);
	for (uint64_t i = 0; i < n; i++)
		if (cs_sim_at(sim, 1 + draw(d), hold_fn, d, i) != 0)
			abort();
	cs_sim_run(sim, n);
	uint64_t iters = 100000, total = 0;
	double t0 = now_s(), t = 0;
	while (t < seconds) {
		total += cs_sim_run(sim, iters);
		t = now_s() - t0;
		iters *= 2;
	}
	cs_sim_free(sim);
	free(d);
	return (double)total / t;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	if (!(seconds > 0)) {
		fprintf(stderr, "bench_eq: bad seconds '%s'\n", argv[1]);
		return 2;
	}
	static const uint64_t sizes[] = { 1000, 100000, 1000000 };
	printf("Hold model, exponential increments (mean %.0f ns); millions of events/s "
	       "(ns per event).\n\n", MEAN_NS);
	printf("| N | eq | sim | sim, no lane | zero50, lane | zero50, no lane |\n");
	printf("|---:|---:|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t n = sizes[k];
		double r[5];
		r[0] = bench_eq_cell(n, seconds);
		r[1] = bench_sim_cell(n, seconds, true, 0.0);
		r[2] = bench_sim_cell(n, seconds, false, 0.0);
		r[3] = bench_sim_cell(n, seconds, true, 0.5);
		r[4] = bench_sim_cell(n, seconds, false, 0.5);
		printf("| %.0e |", (double)n);
		for (int i = 0; i < 5; i++)
			printf(" %.1f (%.0f) |", r[i] / 1e6, 1e9 / r[i]);
		printf("\n");
		fflush(stdout);
	}
	return 0;
}
