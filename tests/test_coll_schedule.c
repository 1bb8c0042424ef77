/*
 * test_coll_schedule.c - ring and tree schedules executed on real buffers.
 *
 * Every rank starts with small integers stored in floats, so sums are exact;
 * a schedule is correct when every rank ends with the elementwise sum (or,
 * for reduce-scatter, the owned chunk does).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "coll/schedule.h"

static float input(int64_t r, int64_t i)
{
	return (float)((r * 7 + i * 3) % 11);
}

static float **alloc_bufs(int64_t n, int64_t count)
{
	float **b = calloc((size_t)n, sizeof(*b));
	for (int64_t r = 0; r < n; r++)
		b[r] = calloc((size_t)(count ? count : 1), sizeof(float));
	return b;
}

static void free_bufs(float **b, int64_t n)
{
	for (int64_t r = 0; r < n; r++)
		free(b[r]);
	free(b);
}

/* Run the transfers step by step, each step reading a snapshot. */
static void execute(const cs_coll_sched *s, float **buf, int64_t n, int64_t count)
{
	float **snap = alloc_bufs(n, count);
	for (int32_t step = 0; step < s->nsteps; step++) {
		for (int64_t r = 0; r < n; r++)
			memcpy(snap[r], buf[r], (size_t)count * sizeof(float));
		for (size_t i = 0; i < s->n; i++) {
			const cs_coll_xfer *x = &s->x[i];
			if (x->step != step)
				continue;
			ck_assert(x->src >= 0 && x->src < n && x->dst >= 0 && x->dst < n);
			ck_assert(x->off >= 0 && x->off + x->len <= count);
			for (int64_t e = x->off; e < x->off + x->len; e++)
				buf[x->dst][e] = x->reduce ? buf[x->dst][e] + snap[x->src][e]
							   : snap[x->src][e];
		}
	}
	free_bufs(snap, n);
}

static float total(int64_t n, int64_t i)
{
	float t = 0;
	for (int64_t r = 0; r < n; r++)
		t += input(r, i);
	return t;
}

static const int64_t ranks[] = {2, 3, 4, 5, 8, 16};
static const int64_t counts[] = {1, 7, 16, 100, 257};
#define NR ((int)(sizeof(ranks) / sizeof(ranks[0])))
#define NC ((int)(sizeof(counts) / sizeof(counts[0])))

START_TEST(test_ring_all_reduce_sums_everywhere)
{
	int64_t n = ranks[_i / NC], count = counts[_i % NC];
	cs_coll_sched s = {0};
	ck_assert_int_eq(cs_coll_ring_schedule(CS_COLL_ALL_REDUCE, n, count, &s), 0);
	ck_assert_int_eq(s.nsteps, 2 * (n - 1));
	ck_assert_int_eq(s.nsteps, cs_coll_ring_steps(CS_COLL_ALL_REDUCE, n));
	float **b = alloc_bufs(n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			b[r][i] = input(r, i);
	execute(&s, b, n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			ck_assert_msg(b[r][i] == total(n, i), "n=%ld count=%ld rank %ld elem %ld",
				      (long)n, (long)count, (long)r, (long)i);
	/* bytes each rank sends: 2(N-1)/N * S when chunks are even */
	int64_t sent = 0;
	for (size_t i = 0; i < s.n; i++)
		if (s.x[i].src == 0)
			sent += s.x[i].len;
	if (count % n == 0)
		ck_assert_int_eq(sent, 2 * (n - 1) * count / n);
	ck_assert_double_eq_tol(cs_coll_ring_bytes_on_wire(CS_COLL_ALL_REDUCE, (double)count, n),
				2.0 * (double)(n - 1) / (double)n * (double)count, 1e-9);
	free_bufs(b, n);
	cs_coll_sched_free(&s);
}
END_TEST

START_TEST(test_ring_reduce_scatter_owns_reduced_chunk)
{
	int64_t n = ranks[_i / NC], count = counts[_i % NC];
	cs_coll_sched s = {0};
	ck_assert_int_eq(cs_coll_ring_schedule(CS_COLL_REDUCE_SCATTER, n, count, &s), 0);
	ck_assert_int_eq(s.nsteps, n - 1);
	float **b = alloc_bufs(n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			b[r][i] = input(r, i);
	execute(&s, b, n, count);
	int64_t covered = 0;
	for (int64_t r = 0; r < n; r++) {
		int64_t off, len;
		cs_coll_chunk(count, n, cs_coll_ring_owned_chunk(r, n), &off, &len);
		covered += len;
		for (int64_t i = off; i < off + len; i++)
			ck_assert_msg(b[r][i] == total(n, i), "n=%ld rank %ld elem %ld", (long)n,
				      (long)r, (long)i);
	}
	ck_assert_int_eq(covered, count);
	free_bufs(b, n);
	cs_coll_sched_free(&s);
}
END_TEST

START_TEST(test_ring_all_gather_copies_every_chunk)
{
	int64_t n = ranks[_i / NC], count = counts[_i % NC];
	cs_coll_sched s = {0};
	ck_assert_int_eq(cs_coll_ring_schedule(CS_COLL_ALL_GATHER, n, count, &s), 0);
	ck_assert_int_eq(s.nsteps, n - 1);
	float **b = alloc_bufs(n, count);
	for (int64_t r = 0; r < n; r++) {
		int64_t off, len;
		cs_coll_chunk(count, n, cs_coll_ring_owned_chunk(r, n), &off, &len);
		for (int64_t i = 0; i < count; i++)
			b[r][i] = -1;
		for (int64_t i = off; i < off + len; i++)
			b[r][i] = input(r, i);
	}
	execute(&s, b, n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++) {
			/* element i belongs to the rank owning its chunk */
			int64_t owner = -1;
			for (int64_t q = 0; q < n; q++) {
				int64_t off, len;
				cs_coll_chunk(count, n, cs_coll_ring_owned_chunk(q, n), &off, &len);
				if (i >= off && i < off + len)
					owner = q;
			}
			ck_assert(b[r][i] == input(owner, i));
		}
	free_bufs(b, n);
	cs_coll_sched_free(&s);
}
END_TEST

static const struct tree_case {
	int64_t nnodes, ppn;
} tree_cases[] = {
	{2, 1}, {3, 1}, {4, 1}, {5, 1}, {8, 1}, {16, 1},
	{2, 4}, {3, 2}, {5, 3}, {4, 8}, {1, 4}, {6, 2},
};
#define NT ((int)(sizeof(tree_cases) / sizeof(tree_cases[0])))

START_TEST(test_tree_all_reduce_sums_everywhere)
{
	const struct tree_case *k = &tree_cases[_i / NC];
	int64_t count = counts[_i % NC], n = k->nnodes * k->ppn;
	cs_coll_sched s = {0};
	ck_assert_int_eq(cs_coll_tree_schedule(k->nnodes, k->ppn, count, &s), 0);
	if (count >= 2)
		ck_assert_int_eq(s.nsteps, 2 * cs_coll_tree_depth(k->nnodes, k->ppn));
	float **b = alloc_bufs(n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			b[r][i] = input(r, i);
	execute(&s, b, n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			ck_assert_msg(b[r][i] == total(n, i), "nodes=%ld ppn=%ld count=%ld rank %ld",
				      (long)k->nnodes, (long)k->ppn, (long)count, (long)r);
	free_bufs(b, n);
	cs_coll_sched_free(&s);
}
END_TEST

/* In-order binary tree: each non-root's parent lists it as a child, and
 * the two trees are mirrors: a node's parents are mirror images. */
START_TEST(test_btree_parent_child_consistent)
{
	for (int64_t n = 1; n <= 40; n++) {
		int64_t roots = 0;
		for (int64_t i = 0; i < n; i++) {
			int64_t p, c0, c1, pp, pc0, pc1;
			cs_coll_btree(n, i, &p, &c0, &c1);
			if (p < 0) {
				roots++;
				continue;
			}
			ck_assert(p >= 0 && p < n);
			cs_coll_btree(n, p, &pp, &pc0, &pc1);
			ck_assert_msg(pc0 == i || pc1 == i, "n=%ld node %ld parent %ld", (long)n,
				      (long)i, (long)p);
		}
		ck_assert_int_eq(roots, 1);
	}
}
END_TEST


/* ---- torus ------------------------------------------------------------ */

static const struct torus_case {
	int ndims;
	int64_t k[3];
} torus_cases[] = {
	{1, {4, 1, 1}}, {1, {5, 1, 1}}, {2, {2, 3, 1}}, {2, {4, 4, 1}}, {3, {3, 1, 4}},
	{3, {2, 2, 2}}, {3, {4, 3, 2}}, {2, {1, 6, 1}},
};
#define NTO ((int)(sizeof(torus_cases) / sizeof(torus_cases[0])))

static int64_t grid_ranks(const struct torus_case *t)
{
	return t->k[0] * t->k[1] * t->k[2];
}

/* The phases' steps: the longest ring of each phase, both halves of the
 * reduce-scatter and the all-gather. */
static int32_t torus_steps(const struct torus_case *t, int concurrent, int phases_of_rs)
{
	int64_t k[3];
	int m = 0;
	for (int d = 0; d < 3; d++)
		if (t->k[d] > 1)
			k[m++] = t->k[d];
	int32_t steps = 0;
	for (int j = 0; j < m; j++) {
		int64_t longest = 0;
		for (int p = 0; p < (concurrent ? m : 1); p++)
			if (k[(p + j) % m] - 1 > longest)
				longest = k[(p + j) % m] - 1;
		steps += (int32_t)longest;
	}
	return steps * phases_of_rs;
}

/* _i: case x concurrent x count */
START_TEST(test_torus_all_reduce_sums_everywhere)
{
	const struct torus_case *t = &torus_cases[_i / (2 * NC)];
	int concurrent = _i / NC % 2;
	int64_t n = grid_ranks(t), count = counts[_i % NC];
	cs_coll_sched s = {0};
	ck_assert_int_eq(cs_coll_torus_schedule(CS_COLL_ALL_REDUCE, t->ndims, t->k, concurrent,
						count, &s, NULL), 0);
	ck_assert_int_le(s.nsteps, torus_steps(t, concurrent, 2));
	float **b = alloc_bufs(n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			b[r][i] = input(r, i);
	execute(&s, b, n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			ck_assert_msg(b[r][i] == total(n, i), "grid %ldx%ldx%ld concurrent %d rank %ld "
				      "elem %ld", (long)t->k[0], (long)t->k[1], (long)t->k[2],
				      concurrent, (long)r, (long)i);
	free_bufs(b, n);
	cs_coll_sched_free(&s);
}
END_TEST

START_TEST(test_torus_reduce_scatter_owns_every_element_once)
{
	const struct torus_case *t = &torus_cases[_i / (2 * NC)];
	int concurrent = _i / NC % 2;
	int64_t n = grid_ranks(t), count = counts[_i % NC];
	cs_coll_sched s = {0};
	int64_t *owner = malloc((size_t)count * sizeof(*owner));
	int64_t *owned = calloc((size_t)n, sizeof(*owned));
	ck_assert_int_eq(cs_coll_torus_schedule(CS_COLL_REDUCE_SCATTER, t->ndims, t->k, concurrent,
						count, &s, owner), 0);
	ck_assert_int_eq(s.nsteps, count >= 2 * n ? torus_steps(t, concurrent, 1) : s.nsteps);
	float **b = alloc_bufs(n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			b[r][i] = input(r, i);
	execute(&s, b, n, count);
	for (int64_t i = 0; i < count; i++) {
		ck_assert(owner[i] >= 0 && owner[i] < n);
		ck_assert_msg(b[owner[i]][i] == total(n, i), "elem %ld at rank %ld", (long)i,
			      (long)owner[i]);
		owned[owner[i]]++;
	}
	/* balanced: each rank holds its share, to the rounding of the halves */
	for (int64_t r = 0; count >= 64 * n && r < n; r++)
		ck_assert_int_le(owned[r] > count / n ? owned[r] - count / n : count / n - owned[r],
				 16);
	free(owned);
	free(owner);
	free_bufs(b, n);
	cs_coll_sched_free(&s);
}
END_TEST

START_TEST(test_torus_all_gather_copies_every_element)
{
	const struct torus_case *t = &torus_cases[_i / (2 * NC)];
	int concurrent = _i / NC % 2;
	int64_t n = grid_ranks(t), count = counts[_i % NC];
	cs_coll_sched rs = {0}, s = {0};
	int64_t *owner = malloc((size_t)count * sizeof(*owner));
	ck_assert_int_eq(cs_coll_torus_schedule(CS_COLL_REDUCE_SCATTER, t->ndims, t->k, concurrent,
						count, &rs, owner), 0);
	ck_assert_int_eq(cs_coll_torus_schedule(CS_COLL_ALL_GATHER, t->ndims, t->k, concurrent,
						count, &s, NULL), 0);
	float **b = alloc_bufs(n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			b[r][i] = owner[i] == r ? input(r, i) : -1;
	execute(&s, b, n, count);
	for (int64_t r = 0; r < n; r++)
		for (int64_t i = 0; i < count; i++)
			ck_assert(b[r][i] == input(owner[i], i));
	free(owner);
	free_bufs(b, n);
	cs_coll_sched_free(&rs);
	cs_coll_sched_free(&s);
}
END_TEST

START_TEST(test_torus_schedule_refuses_other_ops)
{
	cs_coll_sched s = {0};
	ck_assert_int_eq(cs_coll_torus_schedule(CS_COLL_ALL_TO_ALL, 1, (int64_t[]){4}, 0, 8, &s,
						NULL), -1);
	ck_assert_uint_eq(s.n, 0);
}
END_TEST

static Suite *schedule_suite(void)
{
	Suite *s = suite_create("coll_schedule");
	TCase *tc = tcase_create("ring");
	tcase_add_loop_test(tc, test_ring_all_reduce_sums_everywhere, 0, NR * NC);
	tcase_add_loop_test(tc, test_ring_reduce_scatter_owns_reduced_chunk, 0, NR * NC);
	tcase_add_loop_test(tc, test_ring_all_gather_copies_every_chunk, 0, NR * NC);
	suite_add_tcase(s, tc);
	tc = tcase_create("double_binary_tree");
	tcase_add_loop_test(tc, test_tree_all_reduce_sums_everywhere, 0, NT * NC);
	tcase_add_test(tc, test_btree_parent_child_consistent);
	suite_add_tcase(s, tc);
	tc = tcase_create("torus");
	tcase_add_loop_test(tc, test_torus_all_reduce_sums_everywhere, 0, NTO * 2 * NC);
	tcase_add_loop_test(tc, test_torus_reduce_scatter_owns_every_element_once, 0, NTO * 2 * NC);
	tcase_add_loop_test(tc, test_torus_all_gather_copies_every_element, 0, NTO * 2 * NC);
	tcase_add_test(tc, test_torus_schedule_refuses_other_ops);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(schedule_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
