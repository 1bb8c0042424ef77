/*
 * test_memory.c - the seed's memory accounting: bytes per parameter, ZeRO,
 * Korthikanti activations, pipeline in-flight micro-batches, exercise 1,
 * and the report `clustersim memory` prints (its options and messages are
 * tests/cli/commands.sh's).
 *
 * Units: GiB = 2^30 B for the per-layer activation table (as the seed's
 * memory_calc prints it), GB = 1e9 B for state and exercise 1 (as its text
 * computes them).
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "model/memory.h"
#include "model/model.h"
#include "report/memory_out.h"
#include "model_fixtures.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define GB 1e9

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- bytes per parameter ------------------------------------------------- */

static const struct {
	cs_precision g;
	cs_optimizer opt;
	double total;
} bpp_cases[] = {
	{ CS_PREC_BF16, CS_OPT_ADAM, 16.0 },
	{ CS_PREC_FP32, CS_OPT_ADAM, 18.0 },
	{ CS_PREC_BF16, CS_OPT_SGD, 8.0 },
	{ CS_PREC_BF16, CS_OPT_SGD_MOMENTUM, 12.0 },
	{ CS_PREC_BF16, CS_OPT_ADAM_8BIT, 10.0 },
	{ CS_PREC_BF16, CS_OPT_LAMB, 16.0 },
	{ CS_PREC_BF16, CS_OPT_ADAFACTOR, 8.0 },
};

START_TEST(test_bytes_per_param_by_dtype_and_optimizer)
{
	double w, g, ma, mo;
	double t = cs_mem_bytes_per_param(CS_PREC_BF16, bpp_cases[_i].g, bpp_cases[_i].opt, CS_STATE_FP32,
					  &w, &g, &ma, &mo);
	ck_assert(t == bpp_cases[_i].total);
	ck_assert(w + g + ma + mo == t);
	ck_assert(w == 2.0 && ma == 4.0);
	ck_assert(cs_mem_bytes_per_param(CS_PREC_BF16, bpp_cases[_i].g, bpp_cases[_i].opt,
					 CS_STATE_FP32, NULL, NULL, NULL, NULL) == t);
}
END_TEST

/* ---- activations: the seed's table (GiB per layer, micro-batch 1) -------- */

static const struct {
	int64_t s, h, a;
	double none, flash, full;   /* GiB, as printed (three digits) */
	double tol_none, tol_flash, tol_full;
} act_cases[] = {
	{ 4096, 4096, 32, 3.03, 0.53, 0.031, 0.005, 0.005, 0.0005 },     /* Llama-2-7B */
	{ 8192, 8192, 64, 22.1, 2.13, 0.125, 0.05, 0.005, 0.0005 },      /* Llama-3-70B */
	{ 8192, 16384, 128, 44.3, 4.25, 0.25, 0.05, 0.005, 0.005 },      /* Llama-3-405B */
};

START_TEST(test_activation_table_of_the_seed)
{
	int64_t s = act_cases[_i].s, h = act_cases[_i].h, a = act_cases[_i].a;
	double none = cs_mem_activation_bytes_per_layer(s, 1, h, a, 1, false, CS_RECOMPUTE_NONE, false);
	double flash = cs_mem_activation_bytes_per_layer(s, 1, h, a, 1, false, CS_RECOMPUTE_NONE, true);
	double sel = cs_mem_activation_bytes_per_layer(s, 1, h, a, 1, false, CS_RECOMPUTE_SELECTIVE, false);
	double full = cs_mem_activation_bytes_per_layer(s, 1, h, a, 1, false, CS_RECOMPUTE_FULL, false);
	ck_assert_msg(fabs(none / GIB - act_cases[_i].none) < act_cases[_i].tol_none, "%g", none / GIB);
	ck_assert_msg(fabs(flash / GIB - act_cases[_i].flash) < act_cases[_i].tol_flash, "%g", flash / GIB);
	ck_assert(sel == flash);
	ck_assert_msg(fabs(full / GIB - act_cases[_i].full) < act_cases[_i].tol_full, "%g", full / GIB);
}
END_TEST

static const int64_t tp_degrees[] = { 1, 2, 4, 8 };

/* Korthikanti's closed forms for each TP / SP / recompute variant. */
/* The parallel block stores one norm input (2 sbh bytes in 16 bits) fewer
 * per layer: sharded by tp where the formula shards the norm region
 * (sequence parallelism, or tp 1), whole otherwise, nothing when the layer
 * keeps only its input (full recomputation). */
START_TEST(test_parallel_block_saves_one_norm_input)
{
	double sbh = 8192.0 * 2 * 8192;
	ck_assert(cs_mem_parallel_block_saving(8192, 2, 8192, 1, false, CS_RECOMPUTE_NONE) == 2 * sbh);
	ck_assert(cs_mem_parallel_block_saving(8192, 2, 8192, 8, true, CS_RECOMPUTE_NONE) == 2 * sbh / 8);
	ck_assert(cs_mem_parallel_block_saving(8192, 2, 8192, 8, false, CS_RECOMPUTE_SELECTIVE) == 2 * sbh);
	ck_assert(cs_mem_parallel_block_saving(8192, 2, 8192, 8, true, CS_RECOMPUTE_FULL) == 0);
}
END_TEST

START_TEST(test_activation_variants_closed_forms)
{
	double s = 8192, b = 2, h = 8192, a = 64, t = (double)tp_degrees[_i];
	double sbh = s * b * h;
	int64_t tp = tp_degrees[_i];
	struct { bool sp; cs_recompute rc; bool flash; double want; } v[] = {
		{ false, CS_RECOMPUTE_NONE, false, sbh * (10 + 24 / t + 5 * a * s / (h * t)) },
		{ true, CS_RECOMPUTE_NONE, false, sbh * (34 / t + 5 * a * s / (h * t)) },
		{ true, CS_RECOMPUTE_SELECTIVE, false, sbh * 34 / t },
		{ true, CS_RECOMPUTE_NONE, true, sbh * 34 / t },
		{ false, CS_RECOMPUTE_SELECTIVE, false, sbh * (10 + 24 / t) },
		{ false, CS_RECOMPUTE_FULL, false, 2 * sbh },
		{ true, CS_RECOMPUTE_FULL, true, 2 * sbh },
	};
	for (int i = 0; i < N(v); i++) {
		double got = cs_mem_activation_bytes_per_layer(8192, 2, 8192, 64, tp, v[i].sp, v[i].rc, v[i].flash);
		if (tp == 1 && !v[i].sp && v[i].rc != CS_RECOMPUTE_FULL)
			continue;   /* covered by the sp rows: t = 1 shards nothing */
		ck_assert_msg(fabs(got - v[i].want) / v[i].want < 1e-12, "variant %d tp %ld", i, (long)tp);
	}
}
END_TEST

/* ---- state: 16 P and the ZeRO stages ------------------------------------- */

START_TEST(test_state_16p_in_decimal_units)
{
	cs_model_spec m7 = fx_llama2_7b(), m70 = fx_llama3_70b(), m405 = fx_llama3_405b();
	double b = cs_mem_bytes_per_param(CS_PREC_BF16, CS_PREC_BF16, CS_OPT_ADAM, CS_STATE_FP32, NULL, NULL,
					  NULL, NULL);
	ck_assert_int_eq((int)lround(b * (double)cs_model_params(&m7).total / GB), 108);
	ck_assert(fabs(b * (double)cs_model_params(&m70).total / 1e12 - 1.13) < 0.005);
	ck_assert(fabs(b * (double)cs_model_params(&m405).total / 1e12 - 6.5) < 0.05);
}
END_TEST


/* Seed §2.5: 7B on 8 GPUs, per-GPU state in units of P. */
static const struct { cs_sharding sh; double w, g, o; } zero_cases[] = {
	{ CS_SHARD_NONE, 2, 2, 12 },
	{ CS_SHARD_ZERO1, 2, 2, 12.0 / 8 },
	{ CS_SHARD_ZERO2, 2, 2.0 / 8, 12.0 / 8 },
	{ CS_SHARD_ZERO3, 2.0 / 8, 2.0 / 8, 12.0 / 8 },
	{ CS_SHARD_GRAD_OP, 2, 2.0 / 8, 12.0 / 8 },
	{ CS_SHARD_HYBRID, 2.0 / 8, 2.0 / 8, 12.0 / 8 },  /* one node: the whole group */
};

START_TEST(test_zero_stages_shard_state)
{
	cs_model_spec m = fx_llama2_7b();
	cs_training_spec t = fx_train(4096, 1);
	cs_parallel_spec p = fx_plan(1, 1, 8, zero_cases[_i].sh);
	cs_gpu_spec g = fx_h100();
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	double P = (double)cs_model_params(&m).total;
	ck_assert(fabs(r.weights - zero_cases[_i].w * P) < 1.0);
	ck_assert(fabs(r.grads - zero_cases[_i].g * P) < 1.0);
	ck_assert(fabs(r.optimizer - zero_cases[_i].o * P) < 1.0);
	ck_assert(r.state_bytes_per_param == 16.0);
	ck_assert_int_eq(r.params, (int64_t)P);
}
END_TEST

START_TEST(test_zero_worked_numbers)
{
	cs_model_spec m = fx_llama2_7b();
	cs_training_spec t = fx_train(4096, 1);
	cs_gpu_spec g = fx_h100();
	cs_parallel_spec p = fx_plan(1, 1, 8, CS_SHARD_ZERO1);
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert_int_eq((int)lround((r.weights + r.grads + r.optimizer) / GB), 37);
	p.sharding = CS_SHARD_ZERO3;
	r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(fabs((r.weights + r.grads + r.optimizer) / GB - 13.5) < 0.05);
	/* HYBRID shards within a node only: 64-way dp, 8 per node */
	p.dp = 64;
	p.sharding = CS_SHARD_HYBRID;
	r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(fabs(r.weights + r.grads + r.optimizer - 2.0 * (double)cs_model_params(&m).total) < 1.0);
}
END_TEST

static const int64_t dopt_cases[] = { 1, 8, 64 };

/* Megatron's distributed optimizer with fp32 gradients: 6 + 12/d B/param. */
START_TEST(test_distributed_optimizer_6_plus_12_over_d)
{
	cs_model_spec m = fx_llama3_8b();
	cs_training_spec t = fx_train(8192, 1);
	t.grad_dtype = CS_PREC_FP32;
	cs_parallel_spec p = fx_plan(1, 1, dopt_cases[_i], CS_SHARD_ZERO1);
	cs_gpu_spec g = fx_h100();
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	double P = (double)cs_model_params(&m).total, d = (double)dopt_cases[_i];
	ck_assert(fabs((r.weights + r.grads + r.optimizer) / P - (6.0 + 12.0 / d)) < 1e-9);
}
END_TEST

/* ---- pipeline in-flight micro-batches, CP, exercise 1 -------------------- */

static const struct {
	cs_schedule sched;
	int64_t pp, v, m;
	double stages;   /* stage-activations the first stage holds */
} flight_cases[] = {
	{ CS_SCHED_1F1B, 4, 1, 8, 4 },
	{ CS_SCHED_1F1B, 4, 1, 2, 2 },
	{ CS_SCHED_GPIPE, 4, 1, 8, 8 },
	{ CS_SCHED_INTERLEAVED, 4, 2, 8, 5.5 },  /* (3*2 + 1*4 + 1) chunks / 2 */
	{ CS_SCHED_INTERLEAVED, 4, 1, 8, 4 },
	{ CS_SCHED_ZB_H1, 4, 1, 8, 4 },
	{ CS_SCHED_1F1B, 1, 1, 8, 1 },
};

START_TEST(test_pipeline_in_flight_activations)
{
	cs_model_spec m = fx_llama2_7b();
	cs_training_spec t = fx_train(4096, 1);
	cs_parallel_spec p = fx_plan(1, flight_cases[_i].pp, 2, CS_SHARD_NONE);
	p.schedule = flight_cases[_i].sched;
	p.virtual_stages = flight_cases[_i].v;
	t.global_batch = flight_cases[_i].m * 2;
	cs_gpu_spec g = fx_h100();
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	/* Llama-2-7B, flash, no dropout: norms 4, GEMM inputs 4, Q K V O 8, and the
	 * gated MLP's 4f + 2f (f = 11008/4096) sbh bytes per layer */
	double per_layer = 4096.0 * 4096 * (16.0 + 6.0 * 11008 / 4096);
	double want = per_layer * 32.0 / (double)flight_cases[_i].pp * flight_cases[_i].stages;
	ck_assert_msg(fabs(r.activations - want) / want < 1e-12, "%g vs %g", r.activations, want);
}
END_TEST

START_TEST(test_context_parallel_divides_activations)
{
	cs_model_spec m = fx_llama3_405b();
	cs_training_spec t = fx_train(131072, 1);
	cs_parallel_spec p = fx_plan(8, 16, 8, CS_SHARD_ZERO2);
	p.sequence_parallel = true;
	cs_gpu_spec g = fx_h100();
	cs_mem_breakdown one = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	p.cp = 16;
	cs_mem_breakdown sixteen = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(fabs(sixteen.activation_bytes_per_layer * 16.0 - one.activation_bytes_per_layer) < 1.0);
	ck_assert(fabs(sixteen.activations * 16.0 - one.activations) < 16.0);
}
END_TEST

/* Exercise 1: Llama-3-8B, ZeRO-2 on 8 GPUs, s = 8192, b = 2, flash:
 * state 2P + 14P/8 = 30 GB, activations 34 sbh L = 73 GB (decimal GB, as
 * the seed computes it: 73.0e9 B = 68.0 GiB), 103 GB: does not fit an 80 GB
 * H100 (81,559 MiB, 85.5e9 B, as its driver counts it); micro-batch 1 gives
 * 66.6 GB, which fits. */
START_TEST(test_exercise_1_llama3_8b_zero2)
{
	cs_model_spec m = fx_llama3_8b();
	cs_training_spec t = fx_train(8192, 2);
	cs_parallel_spec p = fx_plan(1, 1, 8, CS_SHARD_ZERO2);
	cs_gpu_spec g = fx_h100();
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	double state = r.weights + r.grads + r.optimizer;
	ck_assert_int_eq((int)lround(state / GB), 30);
	ck_assert_int_eq((int)lround(r.activations / GB), 73);
	ck_assert_int_eq((int)lround(r.activations / GIB), 68);
	ck_assert_int_eq((int)lround(r.total / GB), 103);
	ck_assert(!r.fits);
	ck_assert(r.capacity == 81559 * 1048576.0);
	t.micro_batch = 1;
	r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(fabs(r.total / GB - 66.6) < 0.1);
	ck_assert(r.fits);
}
END_TEST

/* The routed experts divide by ep, the shared expert and the dense weights
 * do not; under the distributed optimizer the dense state shards over the
 * whole DP group (dp counts the expert-parallel ranks) and the experts'
 * over the (dp / ep) x cp ranks that hold the same experts. */
START_TEST(test_experts_divide_across_ep)
{
	cs_model_spec m = fx_moe();
	cs_training_spec t = fx_train(4096, 1);
	cs_parallel_spec p = fx_plan(1, 1, 16, CS_SHARD_NONE);
	cs_gpu_spec g = fx_h100();
	cs_param_counts pc = cs_model_params(&m);
	p.ep = 8;
	double routed = (double)pc.experts * 16.0 / 17.0, dense = (double)pc.total - routed;
	ck_assert_double_eq_tol(routed, 12.0 * 16 * 3 * 2048 * 1408, 1e-3);
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(fabs(r.weights - 2.0 * (dense + routed / 8.0)) < 1.0);
	p.sharding = CS_SHARD_ZERO1;
	p.cp = 2;
	r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(fabs(r.optimizer - 12.0 * (dense / (16 * 2) + routed / 8.0 / (2 * 2))) < 1.0);
}
END_TEST

static const struct { cs_model_spec (*make)(void); double bytes; } kv_cases[] = {
	{ fx_llama2_7b, 2.0 * 32 * 32 * 128 * 2 },
	{ fx_llama3_70b, 2.0 * 80 * 8 * 128 * 2 },
	{ fx_llama3_405b, 2.0 * 126 * 8 * 128 * 2 },
	/* latent attention caches the key/value latent and the shared rotary key */
	{ fx_deepseek_v3, 61.0 * (512 + 64) * 2 },
};

START_TEST(test_kv_cache_bytes_per_token)
{
	cs_model_spec m = kv_cases[_i].make();
	ck_assert(cs_mem_kv_cache_bytes_per_token(&m, CS_PREC_BF16) == kv_cases[_i].bytes);
	ck_assert(cs_mem_kv_cache_bytes_per_token(&m, CS_PREC_FP8) == kv_cases[_i].bytes / 2.0);
}
END_TEST

/* ---- the report (report/memory_out.h) ------------------------------------ */

static char *slurp(FILE *f)
{
	long n = ftell(f);
	char *buf = calloc(1, (size_t)n + 1);
	rewind(f);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	return buf;
}

/* Exercise 1's plan as `clustersim memory --model llama3-8b --seq-len 8192
 * --dp 8 --zero 2` sets it on the defaults (GPU h100-sxm-80g), with
 * micro-batch `mb`, written as JSON or text. */
static char *exercise_1_report(int64_t mb, bool json)
{
	cs_scenario *sc = calloc(1, sizeof *sc);
	ck_assert_ptr_nonnull(sc);
	ck_assert_int_eq(cs_config_defaults(sc), CS_OK);
	sc->cluster.gpu = *cs_preset_gpu("h100-sxm-80g");
	sc->model = *cs_preset_model("llama3-8b");
	sc->training.seq_len = 8192;
	sc->training.micro_batch = mb;
	sc->parallel.dp = 8;
	sc->parallel.sharding = CS_SHARD_ZERO2;
	sc->parallel.flash_attention = true;
	cs_mem_breakdown r = cs_mem_per_gpu(&sc->model, &sc->training, &sc->parallel,
					    &sc->cluster.gpu, cs_cluster_shard_unit(&sc->cluster));
	FILE *f = tmpfile();
	ck_assert_ptr_nonnull(f);
	if (json)
		cs_mem_write_json(f, sc, &r);
	else
		cs_mem_write_text(f, sc, &r);
	char *out = slurp(f);
	fclose(f);
	free(sc);
	return out;
}

START_TEST(test_report_exercise_1_json)
{
	char *out = exercise_1_report(2, true);
	ck_assert_ptr_nonnull(strstr(out, "\"fits\": false"));
	ck_assert_ptr_nonnull(strstr(out, "\"params\": 8030261248"));
	ck_assert_ptr_nonnull(strstr(out, "\"per_gpu_bytes\""));
	const char *tot = strstr(strstr(out, "\"per_gpu_bytes\""), "\"total\": ");
	ck_assert_ptr_nonnull(tot);
	ck_assert_int_eq((int)lround(strtod(tot + 9, NULL) / GB), 103);
	free(out);
}
END_TEST

START_TEST(test_report_text_has_units_and_verdict)
{
	char *out = exercise_1_report(1, false);
	ck_assert_ptr_nonnull(strstr(out, "GB (1e9 B)"));
	ck_assert_ptr_nonnull(strstr(out, "GiB (2^30 B)"));
	ck_assert_ptr_nonnull(strstr(out, "verdict: fits"));
	free(out);
}
END_TEST

static Suite *memory_suite(void)
{
	Suite *s = suite_create("memory");
	TCase *tc = tcase_create("bytes_per_param");
	tcase_add_loop_test(tc, test_bytes_per_param_by_dtype_and_optimizer, 0, N(bpp_cases));
	tcase_add_test(tc, test_state_16p_in_decimal_units);
	suite_add_tcase(s, tc);
	tc = tcase_create("activations");
	tcase_add_loop_test(tc, test_activation_table_of_the_seed, 0, N(act_cases));
	tcase_add_loop_test(tc, test_activation_variants_closed_forms, 0, N(tp_degrees));
	tcase_add_test(tc, test_parallel_block_saves_one_norm_input);
	suite_add_tcase(s, tc);
	tc = tcase_create("sharding");
	tcase_add_loop_test(tc, test_zero_stages_shard_state, 0, N(zero_cases));
	tcase_add_test(tc, test_zero_worked_numbers);
	tcase_add_loop_test(tc, test_distributed_optimizer_6_plus_12_over_d, 0, N(dopt_cases));
	tcase_add_test(tc, test_experts_divide_across_ep);
	suite_add_tcase(s, tc);
	tc = tcase_create("per_gpu");
	tcase_add_loop_test(tc, test_pipeline_in_flight_activations, 0, N(flight_cases));
	tcase_add_test(tc, test_context_parallel_divides_activations);
	tcase_add_test(tc, test_exercise_1_llama3_8b_zero2);
	suite_add_tcase(s, tc);
	tc = tcase_create("kv_cache");
	tcase_add_loop_test(tc, test_kv_cache_bytes_per_token, 0, N(kv_cases));
	suite_add_tcase(s, tc);
	tc = tcase_create("report");
	tcase_add_test(tc, test_report_exercise_1_json);
	tcase_add_test(tc, test_report_text_has_units_and_verdict);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(memory_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
