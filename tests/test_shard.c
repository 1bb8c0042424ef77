/*
 * test_shard.c - the tensor-parallel cuts of program/shard.h on real numbers:
 * column/row-sharded MLPs (GELU and SwiGLU) and head-sharded attention
 * (with and without grouped-query attention), computed shard by shard with
 * GSL's BLAS and summed as the all-reduce would, equal the unsharded block
 * (the seed's tensor_parallel_toy, as a test of the plan's own shards).
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "program/shard.h"

enum { N = 6, H = 16, F = 40 };

static gsl_matrix *random_matrix(gsl_rng *r, size_t rows, size_t cols)
{
	gsl_matrix *m = gsl_matrix_alloc(rows, cols);
	for (size_t i = 0; i < rows; i++)
		for (size_t j = 0; j < cols; j++)
			gsl_matrix_set(m, i, j, gsl_rng_uniform(r) * 2.0 - 1.0);
	return m;
}

static gsl_matrix *matmul(const gsl_matrix *a, const gsl_matrix *b)
{
	gsl_matrix *c = gsl_matrix_calloc(a->size1, b->size2);
	gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, a, b, 0.0, c);
	return c;
}

static double gelu(double x)
{
	return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

static double silu(double x)
{
	return x / (1.0 + exp(-x));
}

static void apply(gsl_matrix *m, double (*f)(double))
{
	for (size_t i = 0; i < m->size1; i++)
		for (size_t j = 0; j < m->size2; j++)
			gsl_matrix_set(m, i, j, f(gsl_matrix_get(m, i, j)));
}

static double max_diff(const gsl_matrix *a, const gsl_matrix *b)
{
	double d = 0;
	for (size_t i = 0; i < a->size1; i++)
		for (size_t j = 0; j < a->size2; j++)
			d = fmax(d, fabs(gsl_matrix_get(a, i, j) - gsl_matrix_get(b, i, j)));
	return d;
}

/* Y = act(X A) [* (X G)] B, whole or summed over tp shards of the ffn dim. */
static gsl_matrix *mlp(const gsl_matrix *x, const gsl_matrix *a, const gsl_matrix *g, const gsl_matrix *b,
		       int64_t tp)
{
	gsl_matrix *y = gsl_matrix_calloc(N, H);
	for (int64_t i = 0; i < tp; i++) {
		int64_t off, len;
		cs_shard_range(F, tp, i, &off, &len);
		gsl_matrix_const_view ai = gsl_matrix_const_submatrix(a, 0, (size_t)off, H, (size_t)len);
		gsl_matrix_const_view bi = gsl_matrix_const_submatrix(b, (size_t)off, 0, (size_t)len, H);
		gsl_matrix *hid = matmul(x, &ai.matrix);
		if (g) {
			gsl_matrix_const_view gi = gsl_matrix_const_submatrix(g, 0, (size_t)off, H, (size_t)len);
			gsl_matrix *gate = matmul(x, &gi.matrix);
			apply(hid, silu);
			gsl_matrix_mul_elements(hid, gate);
			gsl_matrix_free(gate);
		} else {
			apply(hid, gelu);
		}
		gsl_matrix *part = matmul(hid, &bi.matrix);
		gsl_matrix_add(y, part);   /* the all-reduce */
		gsl_matrix_free(part);
		gsl_matrix_free(hid);
	}
	return y;
}

static const int64_t degrees[] = { 1, 2, 4, 8 };

START_TEST(column_row_mlp_equals_unsharded)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_matrix *x = random_matrix(r, N, H), *a = random_matrix(r, H, F), *g = random_matrix(r, H, F);
	gsl_matrix *b = random_matrix(r, F, H);
	for (int gated = 0; gated < 2; gated++) {
		gsl_matrix *whole = mlp(x, a, gated ? g : NULL, b, 1);
		gsl_matrix *cut = mlp(x, a, gated ? g : NULL, b, degrees[_i]);
		ck_assert_msg(max_diff(whole, cut) < 1e-12, "%s tp %lld differs by %g",
			      gated ? "swiglu" : "gelu", (long long)degrees[_i], max_diff(whole, cut));
		gsl_matrix_free(whole);
		gsl_matrix_free(cut);
	}
	gsl_matrix_free(x);
	gsl_matrix_free(a);
	gsl_matrix_free(g);
	gsl_matrix_free(b);
	gsl_rng_free(r);
}
END_TEST

/* Attention without a mask over `heads` heads of size dh; K/V heads shared
 * by groups of heads/kv query heads. Rank i uses its heads' columns of Wq,
 * its K/V heads' columns of Wk, Wv and its heads' rows of Wo. */
static gsl_matrix *attention(const gsl_matrix *x, const gsl_matrix *wq, const gsl_matrix *wk, const gsl_matrix *wv,
			     const gsl_matrix *wo, int64_t heads, int64_t kv, int64_t tp)
{
	int64_t dh = H / heads, group = heads / kv;
	gsl_matrix *y = gsl_matrix_calloc(N, H);
	for (int64_t i = 0; i < tp; i++) {
		int64_t q0, nq, kv0, nkv;
		cs_shard_heads(heads, kv, tp, i, &q0, &nq, &kv0, &nkv);
		gsl_matrix_const_view wqi = gsl_matrix_const_submatrix(wq, 0, (size_t)(q0 * dh), H, (size_t)(nq * dh));
		gsl_matrix_const_view wki = gsl_matrix_const_submatrix(wk, 0, (size_t)(kv0 * dh), H, (size_t)(nkv * dh));
		gsl_matrix_const_view wvi = gsl_matrix_const_submatrix(wv, 0, (size_t)(kv0 * dh), H, (size_t)(nkv * dh));
		gsl_matrix_const_view woi = gsl_matrix_const_submatrix(wo, (size_t)(q0 * dh), 0, (size_t)(nq * dh), H);
		gsl_matrix *q = matmul(x, &wqi.matrix), *k = matmul(x, &wki.matrix), *v = matmul(x, &wvi.matrix);
		gsl_matrix *ctx = gsl_matrix_calloc(N, (size_t)(nq * dh));
		for (int64_t hq = 0; hq < nq; hq++) {
			int64_t hk = (q0 + hq) / group - kv0; /* this rank's column block of K/V */
			for (size_t t = 0; t < N; t++) {
				double sc[N], mx = -INFINITY, sum = 0;
				for (size_t u = 0; u < N; u++) {
					double dot = 0;
					for (int64_t d = 0; d < dh; d++)
						dot += gsl_matrix_get(q, t, (size_t)(hq * dh + d)) *
						       gsl_matrix_get(k, u, (size_t)(hk * dh + d));
					sc[u] = dot / sqrt((double)dh);
					mx = fmax(mx, sc[u]);
				}
				for (size_t u = 0; u < N; u++)
					sum += sc[u] = exp(sc[u] - mx);
				for (int64_t d = 0; d < dh; d++) {
					double acc = 0;
					for (size_t u = 0; u < N; u++)
						acc += sc[u] / sum * gsl_matrix_get(v, u, (size_t)(hk * dh + d));
					gsl_matrix_set(ctx, t, (size_t)(hq * dh + d), acc);
				}
			}
		}
		gsl_matrix *part = matmul(ctx, &woi.matrix);
		gsl_matrix_add(y, part);   /* the all-reduce after the row-parallel Wo */
		gsl_matrix_free(part);
		gsl_matrix_free(ctx);
		gsl_matrix_free(q);
		gsl_matrix_free(k);
		gsl_matrix_free(v);
	}
	return y;
}

static const struct { int64_t heads, kv, tp; } attn_cases[] = {
	{ 8, 8, 1 }, { 8, 8, 2 }, { 8, 8, 4 }, { 8, 8, 8 },   /* multi-head */
	{ 8, 4, 2 }, { 8, 4, 4 }, { 8, 2, 2 },                  /* GQA, kv heads split */
	{ 8, 2, 4 }, { 8, 2, 8 }, { 8, 1, 8 },                  /* GQA, kv heads replicated */
};

START_TEST(head_sharded_attention_equals_unsharded)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	int64_t heads = attn_cases[_i].heads, kv = attn_cases[_i].kv, dh = H / heads;
	gsl_matrix *x = random_matrix(r, N, H), *wq = random_matrix(r, H, H);
	gsl_matrix *wk = random_matrix(r, H, (size_t)(kv * dh)), *wv = random_matrix(r, H, (size_t)(kv * dh));
	gsl_matrix *wo = random_matrix(r, H, H);
	gsl_matrix *whole = attention(x, wq, wk, wv, wo, heads, kv, 1);
	gsl_matrix *cut = attention(x, wq, wk, wv, wo, heads, kv, attn_cases[_i].tp);
	ck_assert_msg(max_diff(whole, cut) < 1e-12, "heads %lld kv %lld tp %lld differs by %g",
		      (long long)heads, (long long)kv, (long long)attn_cases[_i].tp, max_diff(whole, cut));
	gsl_matrix_free(whole);
	gsl_matrix_free(cut);
	gsl_matrix_free(x);
	gsl_matrix_free(wq);
	gsl_matrix_free(wk);
	gsl_matrix_free(wv);
	gsl_matrix_free(wo);
	gsl_rng_free(r);
}
END_TEST

START_TEST(shards_cover_the_dimension_once)
{
	for (int64_t n = 1; n <= 40; n++)
		for (int64_t t = 1; t <= 8; t++) {
			int64_t next = 0;
			for (int64_t i = 0; i < t; i++) {
				int64_t off, len;
				cs_shard_range(n, t, i, &off, &len);
				ck_assert_int_eq(off, next);
				ck_assert_int_le(len, n / t + 1);
				next = off + len;
			}
			ck_assert_int_eq(next, n);
		}
}
END_TEST

static Suite *shard_suite(void)
{
	Suite *s = suite_create("shard");
	TCase *tc = tcase_create("mlp");
	tcase_add_loop_test(tc, column_row_mlp_equals_unsharded, 0, 4);
	suite_add_tcase(s, tc);
	tc = tcase_create("attention");
	tcase_add_loop_test(tc, head_sharded_attention_equals_unsharded, 0,
			    sizeof(attn_cases) / sizeof(attn_cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("ranges");
	tcase_add_test(tc, shards_cover_the_dimension_once);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(shard_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
