/*
 * test_fault.c - stragglers: monotonicity, the DP closed form, where in the
 * pipeline a straggler sits, seeds, multi-step statistics and the critical
 * path that carries the delay.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"
#include "fault/fault.h"
#include "report/report.h"
#include "study/study.h"
#include "scenario_text.h"

static cs_metrics run_text(const char *text)
{
	cs_scenario *sc = cs_test_load(text, NULL, 0);
	cs_metrics m = cs_test_simulate(sc);
	cs_scenario_free(sc);
	return m;
}

/* Pure data parallelism on 16 GPUs, gradients overlapped with backward. */
#define DP16 \
	"cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n" \
	"model: {preset: llama2-7b}\n" \
	"training: {seq_len: 2048, micro_batch: 1, global_batch: 32}\n"

/* TP 2 x PP 4 x DP 2 on 16 GPUs, 1F1B. */
#define PP16 \
	"cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n" \
	"model: {arch: llama, layers: 16, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 32000}\n" \
	"training: {seq_len: 2048, micro_batch: 1, global_batch: 16}\n" \
	"parallelism: {tp: 2, pp: 4, dp: 2, pipeline: {schedule: 1f1b}}\n"

/* TP 2 x PP 2 x DP 4 on 16 GPUs, fully sharded with sequence parallelism
 * and an interleaved pipeline: a group's collectives come back to back
 * (all-gathers of consecutive layers) with no kernel between them. */
#define FSDP16 \
	"cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n" \
	"model: {arch: llama, layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 32000}\n" \
	"training: {seq_len: 2048, micro_batch: 1, global_batch: 16, framework: fsdp}\n" \
	"parallelism: {tp: 2, pp: 2, dp: 4, sequence_parallel: true,\n" \
	"              pipeline: {schedule: interleaved, virtual_stages: 2},\n" \
	"              data_parallel: {sharding: zero3}}\n"

/* Pure data parallelism on 16 GPUs, fully sharded, two all-gathers in
 * flight: kernels that follow an all-gather of one group come two
 * collectives of that group apart. */
#define ZERO3_16 \
	"cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n" \
	"model: {arch: llama, layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 32000}\n" \
	"training: {seq_len: 2048, micro_batch: 1, global_batch: 32, framework: fsdp}\n" \
	"parallelism: {data_parallel: {sharding: zero3, backward_prefetch: pre, max_inflight_gathers: 2}}\n"

static cs_metrics with_straggler(const char *base, const char *entry)
{
	char text[2048];
	snprintf(text, sizeof(text), "%sstragglers:\n  - %s\n", base, entry);
	return run_text(text);
}

static const struct { const char *entry; } slower_cases[] = {
	{ "{gpu: 0, compute: 1.1}" }, { "{gpu: 7, compute: 1.5}" }, { "{gpu: 15, compute: 3.0}" },
	{ "{node: 1, compute: 1.2}" }, { "{ranks: [2, 5], compute: 2.0}" },
};

START_TEST(a_slower_gpu_never_makes_the_step_faster)
{
	static const char *const bases[] = { DP16, PP16 };
	for (int b = 0; b < 2; b++) {
		cs_metrics m = with_straggler(bases[b], slower_cases[_i].entry);
		ck_assert_double_ge(m.step_time_s, m.baseline_step_time_s);
		ck_assert_double_ge(m.slowdown, 1.0);
	}
}
END_TEST

START_TEST(twice_slower_gpu_in_dp_costs_its_compute)
{
	cs_metrics m = with_straggler(DP16, "{gpu: 5, compute: 2.0}");
	/* every replica waits for the straggler at the gradient all-reduces:
	 * the step grows by about the straggler's extra compute */
	double compute = m.baseline_step_time_s - m.exposed_comm_s[CS_COMM_DP];
	double want = m.baseline_step_time_s + compute;
	ck_assert_msg(fabs(m.step_time_s / want - 1.0) < 0.05, "step %.4f, expected about %.4f",
		      m.step_time_s, want);
	ck_assert_int_eq(m.straggler_rank, 5);
	/* the critical path computes on the straggler */
	ck_assert(m.path.valid);
	ck_assert_int_eq(m.path.longest_rank, 5);
}
END_TEST

START_TEST(pipeline_position_of_a_straggler_matters)
{
	/* ranks 0 (stage 0) and 14 (stage 3): stride of pp is tp = 2 */
	cs_metrics first = with_straggler(PP16, "{gpu: 0, compute: 1.5}");
	cs_metrics last = with_straggler(PP16, "{gpu: 6, compute: 1.5}");
	ck_assert_double_gt(first.slowdown, 1.0);
	ck_assert_double_gt(last.slowdown, 1.0);
	ck_assert_msg(fabs(first.slowdown - last.slowdown) > 1e-3, "stage 0 x%.5f, last stage x%.5f",
		      first.slowdown, last.slowdown);
}
END_TEST

#define JITTER(seed) \
	DP16 "stragglers:\n  - {random: {fraction: 0.5, distribution: lognormal, mu: 0, sigma: 0.2}, " \
	"seed: " #seed ", per_step: true}\nsimulate: {steps: 4}\n"

/* GPUs drawn faster than the profile (compute factors 0.2 to 0.25 on every
 * GPU: the step is some 4x shorter) would put MFU past 100 % against the
 * GPU's peak; it is against the fastest GPU's (the GPU's over the least
 * factor drawn), and is then about the unperturbed run's. */
START_TEST(faster_gpus_keep_mfu_below_the_fastest_peak)
{
	cs_metrics m = with_straggler(DP16, "{random: {fraction: 1, distribution: uniform, low: 0.2, high: 0.25}}");
	cs_metrics base = run_text(DP16);
	ck_assert(m.peak_scale > 4.0 && m.peak_scale <= 5.0);
	ck_assert_double_le(m.mfu, 1.0);
	/* the closed form: model FLOPs over step x GPUs x the scaled peak */
	ck_assert_double_eq_tol(m.mfu * m.peak_scale * m.step_time_s, base.mfu * base.step_time_s,
				1e-9 * base.mfu * base.step_time_s);
	ck_assert_double_eq(base.peak_scale, 1.0);
	ck_assert_double_le(m.mfu, base.mfu * 1.01);
}
END_TEST

START_TEST(same_seed_same_result_other_seed_differs)
{
	cs_metrics a = run_text(JITTER(7)), b = run_text(JITTER(7)), c = run_text(JITTER(8));
	ck_assert(a.step_time_s == b.step_time_s);
	ck_assert(a.step_time_p99_s == b.step_time_p99_s);
	ck_assert(a.step_time_s != c.step_time_s);
	/* per-step draws give a spread over the 4 steps */
	ck_assert_double_le(a.step_time_p50_s, a.step_time_max_s);
	ck_assert_double_lt(a.step_time_p50_s, a.step_time_max_s);
	ck_assert_int_eq(a.steps, 4);
}
END_TEST

START_TEST(critical_path_adds_up_to_the_step)
{
	static const char *const bases[] = {
		DP16, PP16, FSDP16, FSDP16 "stragglers:\n  - {gpu: 5, compute: 1.5}\n", ZERO3_16,
	};
	for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
		cs_metrics m = run_text(bases[b]);
		ck_assert(m.path.valid);
		double sum = m.path.compute_s;
		for (int k = 0; k < CS_COMM_KINDS; k++)
			sum += m.path.comm_s[k];
		ck_assert_double_eq_tol(sum, m.step_time_s, 1e-9);
	}
	/* a pipeline's path runs through every stage */
	cs_metrics m = run_text(PP16);
	ck_assert_int_ge(m.path.hops, 3);
	ck_assert_double_gt(m.path.comm_s[CS_COMM_PP], 0);
}
END_TEST

/* Asked not to, a perturbed run traces no critical path, and its step is
 * the same. */
START_TEST(critical_path_is_left_out_on_request)
{
	char text[2048];
	snprintf(text, sizeof(text), "%sstragglers:\n  - {gpu: 5, compute: 1.5}\n", PP16);
	cs_scenario *sc = cs_test_load(text, NULL, 0);
	cs_result *res = NULL;
	cs_diag diag = { { 0 } };
	cs_run_opts opts = { .critical_path = -1 };
	ck_assert_int_eq(cs_simulate(sc, &opts, &res, &diag), CS_OK);
	cs_metrics off = *cs_result_metrics(res);
	cs_result_free(res);
	cs_metrics on = cs_test_simulate(sc);
	cs_scenario_free(sc);
	ck_assert(on.path.valid);
	ck_assert(!off.path.valid);
	ck_assert_double_eq(off.step_time_s, on.step_time_s);
	ck_assert_double_eq(off.mfu, on.mfu);
}
END_TEST

#define DP16_NOOVERLAP(fid) \
	"cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n" \
	"model: {preset: llama2-7b}\n" \
	"training: {seq_len: 2048, micro_batch: 1, global_batch: 16}\n" \
	"parallelism: {data_parallel: {overlap: false}}\n" \
	"collectives: {fidelity: " fid "}\n"

static const struct { const char *base, *entry; int slower; } link_cases[] = {
	{ DP16_NOOVERLAP("analytic"), "{link: nic, gpu: 3, bandwidth: 0.25}", 1 },
	{ DP16_NOOVERLAP("flow"), "{link: nic, gpu: 3, bandwidth: 0.25}", 1 },
	{ DP16_NOOVERLAP("analytic"), "{link: nvlink, gpu: 9, bandwidth: 0.5}", 1 },
	{ DP16_NOOVERLAP("flow"), "{link: nvlink, gpu: 9, bandwidth: 0.5}", 1 },
	{ DP16_NOOVERLAP("analytic"), "{link: nic, gpu: 3, latency: 1 ms}", 1 },
	{ DP16_NOOVERLAP("analytic"), "{tier: nvlink, bandwidth: 0.5}", 1 },
	/* every NIC: the gradients cross the two nodes' NICs */
	{ DP16_NOOVERLAP("analytic"), "{tier: nic, bandwidth: 0.5}", 1 },
	{ DP16_NOOVERLAP("flow"), "{tier: nic, bandwidth: 0.5}", 1 },
	{ DP16_NOOVERLAP("analytic"), "{tier: nic, latency: 1 ms}", 1 },
	/* two nodes under one leaf: the leaves' uplinks carry nothing */
	{ DP16_NOOVERLAP("analytic"), "{tier: leaf, bandwidth: 0.5}", 0 },
	{ DP16_NOOVERLAP("flow"), "{tier: leaf, bandwidth: 0.5}", 0 },
};

START_TEST(degraded_links_slow_the_traffic_that_crosses_them)
{
	cs_metrics m = with_straggler(link_cases[_i].base, link_cases[_i].entry);
	if (link_cases[_i].slower)
		ck_assert_msg(m.slowdown > 1.01, "%s: x%.4f", link_cases[_i].entry, m.slowdown);
	else
		ck_assert_msg(m.slowdown == 1.0, "%s: x%.4f", link_cases[_i].entry, m.slowdown);
}
END_TEST

START_TEST(half_the_pod_uplinks_slows_a_cross_pod_all_reduce)
{
	/* 4 nodes in 2 pods of 16 GPUs at 1:1; DP across both pods */
	const char *base = "cluster: {gpu: h100-sxm-80g, nodes: 4, gpus_per_node: 8, "
			   "fabric: {pod_gpus: 16, leaf_gpus: 16}}\n"
			   "model: {preset: llama2-7b}\n"
			   "training: {seq_len: 2048, micro_batch: 1, global_batch: 32}\n"
			   "parallelism: {data_parallel: {overlap: false}}\n";
	cs_metrics m = with_straggler(base, "{tier: pod, bandwidth: 0.5}");
	ck_assert_double_gt(m.slowdown, 1.01);
	ck_assert_double_gt(m.exposed_comm_s[CS_COMM_DP], 0);
}
END_TEST

/* cluster.gpu_variation: each GPU's own persistent factor, lognormal with
 * median 1; its log has the stated sigma (checked over 100,000 GPUs to 3
 * standard errors), it does not change between steps, and the seed decides
 * it. */
START_TEST(gpu_variation_is_persistent_and_lognormal)
{
	const int64_t n = 100000;
	const double sigma = 0.02;
	float *f = malloc((size_t)n * sizeof *f), *g = malloc((size_t)n * sizeof *g);
	ck_assert(f && g);
	const char *set[] = { "cluster.gpu_variation=0.02" };
	cs_scenario *sc = cs_test_load(DP16, set, 1);
	ck_assert_double_eq(sc->cluster.gpu_variation, sigma);
	cs_fault *ft = NULL;
	cs_diag d;
	ck_assert_int_eq(cs_fault_new(sc, n, &ft, &d), CS_OK);
	ck_assert(cs_fault_any(ft));
	ck_assert_int_eq(cs_fault_draw(ft, 0, f), 1);
	double sum = 0, sq = 0;
	for (int64_t i = 0; i < n; i++) {
		double l = log((double)f[i]);
		sum += l;
		sq += l * l;
	}
	double mean = sum / (double)n, sd = sqrt(sq / (double)n - mean * mean);
	ck_assert_msg(fabs(mean) < 3 * sigma / sqrt((double)n), "mean of log %g", mean);
	ck_assert_msg(fabs(sd - sigma) < 3 * sigma / sqrt(2.0 * (double)n), "sd of log %g", sd);
	ck_assert_int_eq(cs_fault_draw(ft, 1, f), 0);   /* the same every step */
	cs_fault_free(ft);
	sc->sim.seed = 99;
	ck_assert_int_eq(cs_fault_new(sc, n, &ft, &d), CS_OK);
	cs_fault_draw(ft, 0, g);
	ck_assert(memcmp(f, g, (size_t)n * sizeof *f) != 0);
	cs_fault_free(ft);
	cs_scenario_free(sc);
	free(f);
	free(g);
}
END_TEST

/* In synchronous data parallelism every bucket waits for the slowest GPU:
 * varied GPUs slow the step against the identical ones (the baseline, which
 * is the run without variation). */
START_TEST(gpu_variation_slows_synchronous_training)
{
	cs_metrics same = run_text(DP16);
	const char *set[] = { "cluster.gpu_variation=0.05" };
	cs_scenario *sc = cs_test_load(DP16, set, 1);
	cs_metrics varied = cs_test_simulate(sc);
	cs_scenario_free(sc);
	ck_assert_double_eq(varied.baseline_step_time_s, same.step_time_s);
	ck_assert(varied.step_time_s > same.step_time_s);
	ck_assert(varied.slowdown > 1.0 && varied.slowdown < 1.5);
	ck_assert(varied.straggler_rank >= 0 && varied.straggler_factor > 1.0);
}
END_TEST

/* --per-rank rows are those of the reported step, the slowest of the steps
 * drawn, not of the last one: the latest end among them is that step's
 * time; and they are written one line a rank. */
START_TEST(per_rank_rows_are_the_reported_steps)
{
	cs_scenario *sc = cs_test_load(JITTER(7), NULL, 0);
	cs_result *res = NULL;
	cs_diag d;
	ck_assert_int_eq(cs__simulate(sc, &(cs__sim_request){ .want_rows = true }, &res, &d), CS_OK);
	const cs_metrics *m = cs_result_metrics(res);
	ck_assert(m->step_time_p50_s < m->step_time_max_s);
	int64_t n = 0;
	const cs_rank_row *rows = cs__result_rows(res, &n);
	ck_assert_int_eq(n, 16);
	double last = 0;
	for (int64_t i = 0; i < n; i++)
		if (rows[i].end_s > last)
			last = rows[i].end_s;
	ck_assert_msg(fabs(last - m->step_time_max_s) < 1e-9, "rows end at %.9f, the reported step at %.9f",
		      last, m->step_time_max_s);
	/* as `run --per-rank` writes them (report/report.h): a header and a line a rank */
	char *csv = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&csv, &len);
	ck_assert_ptr_nonnull(f);
	cs_report_ranks_csv(f, rows, n);
	fclose(f);
	ck_assert_msg(strncmp(csv, "rank,end_s,busy_s,idle_s,", 25) == 0, "%s", csv);
	ck_assert_ptr_nonnull(strstr(csv, ",activation_peak_bytes,compute_factor\n0,"));
	int lines = 0;
	for (const char *c = csv; *c; c++)
		lines += *c == '\n';
	ck_assert_int_eq(lines, 1 + 16);
	free(csv);
	cs_result_free(res);
	cs_scenario_free(sc);
}
END_TEST

static Suite *fault_suite(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("stragglers");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, a_slower_gpu_never_makes_the_step_faster, 0,
			    sizeof(slower_cases) / sizeof(slower_cases[0]));
	tcase_add_test(tc, twice_slower_gpu_in_dp_costs_its_compute);
	tcase_add_test(tc, pipeline_position_of_a_straggler_matters);
	tcase_add_test(tc, faster_gpus_keep_mfu_below_the_fastest_peak);
	tcase_add_test(tc, same_seed_same_result_other_seed_differs);
	tcase_add_test(tc, gpu_variation_is_persistent_and_lognormal);
	tcase_add_test(tc, per_rank_rows_are_the_reported_steps);
	tcase_add_test(tc, gpu_variation_slows_synchronous_training);
	suite_add_tcase(s, tc);
	tc = tcase_create("links");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, degraded_links_slow_the_traffic_that_crosses_them, 0,
			    sizeof(link_cases) / sizeof(link_cases[0]));
	tcase_add_test(tc, half_the_pod_uplinks_slows_a_cross_pod_all_reduce);
	suite_add_tcase(s, tc);
	tc = tcase_create("critical_path");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, critical_path_adds_up_to_the_step);
	tcase_add_test(tc, critical_path_is_left_out_on_request);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fault_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
