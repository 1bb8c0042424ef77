/*
 * test_compute.c - roofline times of ops on one GPU.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/compute.h"
#include "model_fixtures.h"

static cs_layer_op gemm(int64_t m, int64_t n, int64_t k, int64_t batch)
{
	cs_layer_op op;
	memset(&op, 0, sizeof(op));
	op.name = "gemm";
	op.cls = CS_OPC_GEMM;
	op.m = m;
	op.n = n;
	op.k = k;
	op.batch = batch;
	op.flops = 2.0 * (double)m * (double)n * (double)k * (double)batch;
	op.bytes = 2.0 * (double)batch * ((double)m * (double)k + (double)k * (double)n + (double)m * (double)n);
	return op;
}

/* The flat model's time of `op` (no kernel profile). */
static int64_t flat_ns(const cs_gpu_spec *g, cs_precision prec, const cs_layer_op *op)
{
	cs_compute c = { .gpu = g, .prec = prec, .prof = NULL };
	return cs_compute_op_ns(&c, op);
}

static double ns_per_flop(const cs_gpu_spec *g, const cs_layer_op *op)
{
	return (double)flat_ns(g, CS_PREC_BF16, op) / op->flops;
}

/* Tile grids of 128x256 tiles: a full wave of 132 against one tile more. */
static const struct { int64_t full_m, full_n, over_m, over_n; } wave_cases[] = {
	{ 11 * 128, 12 * 256, 7 * 128, 19 * 256 },      /* 132 vs 133 tiles */
	{ 12 * 128, 11 * 256, 133 * 128, 1 * 256 },
};

START_TEST(test_gemm_one_tile_past_a_wave_costs_twice_per_flop)
{
	cs_gpu_spec g = fx_h100();
	cs_layer_op full = gemm(wave_cases[_i].full_m, wave_cases[_i].full_n, 32768, 1);
	cs_layer_op over = gemm(wave_cases[_i].over_m, wave_cases[_i].over_n, 32768, 1);
	ck_assert(fabs(cs_compute_wave_efficiency(&g, full.m, full.n, 1) - 1.0) < 1e-12);
	ck_assert(fabs(cs_compute_wave_efficiency(&g, over.m, over.n, 1) - 133.0 / 264.0) < 1e-12);
	/* the full wave runs at the measured best (MAMF), the one past it at the
	 * full-wave fraction 0.80 / wave_eff(8192^3) times 133/264 */
	double f = g.gemm_efficiency / cs_compute_wave_efficiency(&g, 8192, 8192, 1);
	double want = g.gemm_efficiency / (f * 133.0 / 264.0);
	double r = ns_per_flop(&g, &over) / ns_per_flop(&g, &full);
	ck_assert_msg(fabs(r - want) < 1e-3 * want, "ratio %g, want %g", r, want);
}
END_TEST

START_TEST(test_gemm_8192_cubed_lands_on_mamf)
{
	cs_gpu_spec g = fx_h100();
	cs_layer_op op = gemm(8192, 8192, 8192, 1);
	double tflops = op.flops / ((double)flat_ns(&g, CS_PREC_BF16, &op) * 1e-9) / 1e12;
	ck_assert_msg(fabs(tflops - 792.0) / 792.0 < 0.02, "%g TFLOP/s", tflops);
	/* fp8 doubles the peak: for a linear layer's GEMM under Transformer
	 * Engine's recipe, for every GEMM under fp8-all; another GEMM (the LM
	 * head, materialised attention) stays bf16 under the recipe */
	double t16 = (double)flat_ns(&g, CS_PREC_BF16, &op);
	ck_assert_int_eq(flat_ns(&g, CS_PREC_FP8, &op), (int64_t)t16);
	double t8 = (double)flat_ns(&g, CS_PREC_FP8_ALL, &op);
	ck_assert(fabs(t16 / t8 - 1979.0 / 989.0) < 0.01);
	op.linear = true;
	ck_assert_int_eq(flat_ns(&g, CS_PREC_FP8, &op), (int64_t)t8);
}
END_TEST

/* A shape that fills its waves better than 8192^3 does still runs at the
 * best measured throughput, no faster. */
START_TEST(test_no_gemm_beats_mamf)
{
	cs_gpu_spec g = fx_h100();
	cs_layer_op op = gemm(11 * 128, 12 * 256, 32768, 1);  /* exactly one wave of 132 */
	double tflops = op.flops / ((double)flat_ns(&g, CS_PREC_BF16, &op) * 1e-9) / 1e12;
	ck_assert_msg(fabs(tflops - 0.80 * 989.0) < 0.5, "%g TFLOP/s", tflops);
}
END_TEST

/* A thin GEMM (decode-like) is bandwidth bound. */
START_TEST(test_skinny_gemm_is_bandwidth_bound)
{
	cs_gpu_spec g = fx_h100();
	cs_layer_op op = gemm(16, 8192, 8192, 1);
	double want = op.bytes / (3.35e12 * 0.90) * 1e9;
	ck_assert(fabs((double)flat_ns(&g, CS_PREC_BF16, &op) - want) <= 1.0);
}
END_TEST

static const double scale_cases[] = { 1.0, 2.0, 10.0 };

START_TEST(test_membound_scales_with_bytes_not_flops)
{
	cs_gpu_spec g = fx_h100();
	cs_layer_op op;
	memset(&op, 0, sizeof(op));
	op.cls = CS_OPC_MEMBOUND;
	op.bytes = 1e9 * scale_cases[_i];
	op.flops = 1e9;
	int64_t t = flat_ns(&g, CS_PREC_BF16, &op);
	ck_assert(fabs((double)t - op.bytes / (3.35e12 * 0.90) * 1e9) <= 1.0);
	op.flops = 1e12;
	ck_assert_int_eq(flat_ns(&g, CS_PREC_BF16, &op), t);
}
END_TEST

START_TEST(test_flash_attention_at_attn_efficiency)
{
	cs_gpu_spec g = fx_h100();
	cs_layer_op op;
	memset(&op, 0, sizeof(op));
	op.cls = CS_OPC_ATTN;
	op.flops = 1e12;
	op.bytes = 1e6;
	double want = 1e12 / (989e12 * 0.60) * 1e9;
	ck_assert(fabs((double)flat_ns(&g, CS_PREC_BF16, &op) - want) <= 1.0);
}
END_TEST

START_TEST(test_any_work_takes_at_least_one_ns)
{
	cs_gpu_spec g = fx_h100();
	cs_layer_op op;
	memset(&op, 0, sizeof(op));
	op.cls = CS_OPC_MEMBOUND;
	ck_assert_int_eq(flat_ns(&g, CS_PREC_BF16, &op), 0);
	op.bytes = 1.0;
	ck_assert_int_eq(flat_ns(&g, CS_PREC_BF16, &op), 1);
	cs_layer_op tiny = gemm(1, 1, 1, 1);
	ck_assert_int_ge(flat_ns(&g, CS_PREC_BF16, &tiny), 1);
	op.cls = CS_OPC_COMM;
	op.comm_bytes = 1e9;
	ck_assert_int_eq(flat_ns(&g, CS_PREC_BF16, &op), 0);
}
END_TEST

/* ---- with the measured kernel profile ------------------------------------ */

static cs_gpu_spec fx_h200(void)
{
	cs_gpu_spec g = fx_h100();
	g.hbm_bandwidth = 4.8e12;
	return g;
}

static int64_t prof_ns(const cs_kprof *p, cs_precision prec, const cs_layer_op *op)
{
	cs_gpu_spec g = fx_h200();
	cs_compute c = { .gpu = &g, .prec = prec, .prof = p, .attn = CS_ATTN_CUDNN };
	return cs_compute_op_ns(&c, op);
}

static cs_kprof *h200(void)
{
	cs_kprof *p = NULL;
	cs_diag d;
	ck_assert_int_eq(cs_kprof_load("h200-sxm", &p, &d), CS_OK);
	return p;
}

/* Measured points of kernels.json come back as the op's time: a GEMM of the
 * NN grid, a cuDNN attention forward (at the sustained clock, x 459/504.1),
 * a copy of 256 MiB. */
START_TEST(test_profile_times_ops_at_measured_points)
{
	cs_kprof *p = h200();
	cs_layer_op op = gemm(8192, 4096, 4096, 1);
	op.layout = CS_GEMM_NN;
	double want = op.flops / 741.0e12 * 1e9;  /* 0.371 ms in the table */
	ck_assert_msg(fabs((double)prof_ns(p, CS_PREC_BF16, &op) - want) <= 1.0, "%lld vs %g",
		      (long long)prof_ns(p, CS_PREC_BF16, &op), want);

	cs_layer_op a;
	memset(&a, 0, sizeof a);
	a.cls = CS_OPC_ATTN;
	a.flops = 2.0 * 2 * 16 * 8192.0 * 8192.0 * 128;  /* causal forward, batch 2, 16 heads */
	a.attn_bh = 32;
	a.attn_seq = 8192;
	a.head_dim = 128;
	want = a.flops / (614.8e12 * 459.0 / 504.1) * 1e9;
	ck_assert(fabs((double)prof_ns(p, CS_PREC_BF16, &a) - want) < 2e-4 * want);

	cs_layer_op m;
	memset(&m, 0, sizeof m);
	m.cls = CS_OPC_MEMBOUND;
	m.mem = CS_MEM_COPY;
	m.bytes = 268435456;
	want = m.bytes / 4062.0e9 * 1e9;
	ck_assert(fabs((double)prof_ns(p, CS_PREC_BF16, &m) - want) <= 1.0);
	cs_kprof_free(p);
}
END_TEST

/* Below the table's fewest rows (1,024) a GEMM takes the time of 1,024 rows
 * per wave of 128 x 256 output tiles: 512 x 9216 is 4 x 36 = 144 tiles, two
 * waves of the 132 SMs against three at 1,024 rows, so 2/3 of the time; at
 * n = 2560 both fill one wave and take the same time. */
START_TEST(test_gemm_below_the_table_takes_its_waves)
{
	cs_kprof *p = h200();
	static const struct { double n, ratio; } cases[] = { {9216, 2.0 / 3.0}, {2560, 1.0} };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cs_layer_op small = gemm(512, (int64_t)cases[i].n, 12288, 1);
		cs_layer_op full = gemm(1024, (int64_t)cases[i].n, 12288, 1);
		double want = (double)prof_ns(p, CS_PREC_BF16, &full) * cases[i].ratio;
		double got = (double)prof_ns(p, CS_PREC_BF16, &small);
		ck_assert_msg(fabs(got - want) <= 1.0, "n %g: %g ns, want %g", cases[i].n, got, want);
	}
	cs_kprof_free(p);
}
END_TEST

/* No op beats its roofline: FLOPs at the dense peak, bytes at the HBM
 * datasheet bandwidth; nor the shortest measured kernel. Random shapes,
 * classes and kinds. */
START_TEST(test_profile_never_beats_the_roofline)
{
	cs_kprof *p = h200();
	cs_gpu_spec g = fx_h200();
	unsigned seed = 12345;
	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		int64_t m = 1 + (int64_t)(seed >> 8) % 40000;
		seed = seed * 1103515245u + 12345u;
		int64_t n = 1 + (int64_t)(seed >> 8) % 40000;
		seed = seed * 1103515245u + 12345u;
		int64_t k = 1 + (int64_t)(seed >> 8) % 40000;
		cs_layer_op op = gemm(m, n, k, 1 + i % 3);
		op.layout = (uint8_t)(i % CS_GEMM_LAYOUTS);
		if (i % 4 == 1) {
			op.cls = CS_OPC_ATTN;
			op.attn_bh = (double)(1 + m % 64);
			op.attn_seq = (double)(256 + n);
			op.head_dim = i % 8 ? 128 : 64;
			op.attn_bwd = i % 2;
		} else if (i % 4 == 2) {
			op.cls = CS_OPC_MEMBOUND;
			op.mem = (uint8_t)(i % CS_MEM_KINDS);
			op.flops = 0;
		}
		cs_precision prec = i % 5 == 0 ? CS_PREC_FP8 : CS_PREC_BF16;
		double t = (double)prof_ns(p, prec, &op) * 1e-9;
		double peak = op.cls == CS_OPC_GEMM ? cs_compute_peak(&g, prec) : 989e12;
		ck_assert_msg(t >= op.flops / peak * (1 - 1e-9), "op %d beats the FLOP roof", i);
		ck_assert_msg(t >= op.bytes / 4.8e12 * (1 - 1e-9), "op %d beats the HBM roof", i);
		ck_assert(t >= cs_kprof_min_kernel_ns(p) * 1e-9 * (1 - 1e-9));
	}
	cs_kprof_free(p);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *compute_suite(void)
{
	Suite *s = suite_create("compute");
	TCase *tc = tcase_create("gemm");
	tcase_add_loop_test(tc, test_gemm_one_tile_past_a_wave_costs_twice_per_flop, 0, N(wave_cases));
	tcase_add_test(tc, test_gemm_8192_cubed_lands_on_mamf);
	tcase_add_test(tc, test_no_gemm_beats_mamf);
	tcase_add_test(tc, test_skinny_gemm_is_bandwidth_bound);
	suite_add_tcase(s, tc);
	tc = tcase_create("bandwidth_bound");
	tcase_add_loop_test(tc, test_membound_scales_with_bytes_not_flops, 0, N(scale_cases));
	suite_add_tcase(s, tc);
	tc = tcase_create("attention");
	tcase_add_test(tc, test_flash_attention_at_attn_efficiency);
	suite_add_tcase(s, tc);
	tc = tcase_create("profile");
	tcase_add_test(tc, test_profile_times_ops_at_measured_points);
	tcase_add_test(tc, test_gemm_below_the_table_takes_its_waves);
	tcase_add_test(tc, test_profile_never_beats_the_roofline);
	suite_add_tcase(s, tc);
	tc = tcase_create("resolution");
	tcase_add_test(tc, test_any_work_takes_at_least_one_ns);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(compute_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
