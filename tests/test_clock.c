/*
 * test_clock.c - GEMM clocks under the power cap (docs/compute-model.md):
 * one H200 runs hand-made templates, and each compute op's duration is
 * held against the closed form of the measured model.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/scenario.h"
#include "hw/files.h"
#include "hw/kprof.h"
#include "hw/topo.h"
#include "program/mesh.h"
#include "program/program.h"
#include "run/runner.h"
#include "scenario_text.h"
#include "tmp_dir.h"

#define ONE_GPU \
	"cluster: {gpu: h200-sxm-141g, nodes: 1, gpus_per_node: 1}\n" \
	"model: {preset: llama2-7b}\n" \
	"training: {seq_len: 1024, micro_batch: 1, global_batch: 1}\n"

/* A compute op: `gemm` ns of GEMMs as the table times them, then `other`
 * ns of work leaving `spare_w` under the cap. */
typedef struct seg {
	int64_t gemm, other;
	double spare_w;
} seg;

typedef struct timed {
	int n;
	cs_time start[4096], end[4096];
} timed;

static void on_span(void *ctx, int64_t rank, int stream, cs_time start, cs_time end, const cs_op *op,
		    cs_time xfer, const cs_coll_choice *choice)
{
	timed *t = ctx;
	(void)rank, (void)op, (void)xfer, (void)choice;
	if (stream == CS_STREAM_COMPUTE && t->n < 4096) {
		t->start[t->n] = start;
		t->end[t->n++] = end;
	}
}

/* Run `n` segments back to back on one H200, the clock model on (or off:
 * `clock` false); each op's start and end into *t. *k: the model. */
static void run_segs(const seg *s, int n, bool clock, timed *t, cs_kprof_clock *k)
{
	cs_scenario *sc = cs_test_load(ONE_GPU, NULL, 0);
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_diag diag;
	cs_kprof *prof = NULL;
	ck_assert_int_eq(cs_hw_load_profile(sc, &prof, &diag), CS_OK);
	ck_assert_ptr_nonnull(cs_kprof_clock_model(prof));
	*k = *cs_kprof_clock_model(prof);
	cs_topo *topo = cs_topo_new(&sc->cluster);
	cs_coll *coll = cs_coll_new(&sc->cluster, &sc->coll);
	cs_program prog;
	cs_program_init(&prog);
	for (int i = 0; i < n; i++) {
		cs_op op = { .kind = CS_OP_COMPUTE, .ns = s[i].gemm + s[i].other, .gemm_ns = s[i].gemm,
			     .spare = (double)s[i].other * s[i].spare_w, .layer = -1, .micro = -1 };
		ck_assert_int_eq(cs_program_add(&prog, CS_STREAM_COMPUTE, &op, NULL, 0), i + 1);
		prog.class_ns[CS_COMPUTE_GEMM] += s[i].gemm;
		prog.spare += op.spare;
	}
	uint8_t traced = 1;
	memset(t, 0, sizeof *t);
	cs_run_env env = { .sc = sc, .mesh = &mesh, .progs = &prog, .topo = topo, .coll = coll,
			   .first_rank = 0, .nranks = 1, .prof = prof, .traced = &traced,
			   .on_span = on_span, .span_ctx = t, .clock = clock ? k : NULL };
	cs_runner *r = cs_runner_new(&env);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(cs_runner_run(r, &diag), CS_OK);
	ck_assert_int_eq(t->n, n);
	cs_runner_free(r);
	cs_program_free(&prog);
	cs_coll_free(coll);
	cs_topo_free(topo);
	cs_kprof_free(prof);
	cs_scenario_free(sc);
}

static double dur(const timed *t, int i)
{
	return (double)(t->end[i] - t->start[i]);
}

/* r(H): a GEMM's speed over its speed at the cap, H the headroom per unit of
 * GEMM time. */
static double speedup(const cs_kprof_clock *k, double h)
{
	return 1.0 + (k->gemm_boost - 1.0) * (1.0 - exp(-h / k->headroom_w));
}

/* GEMMs back to back, as in the step before: at the cap, the table's time
 * times gemm_table (the table ran a little above the cap), every one. The
 * measured H200: 676-691 TF/s back to back (interference/sustained-gemm,
 * clock_mix "boost" rows' sustained column). */
START_TEST(gemm_chain_runs_at_the_cap)
{
	static seg s[100];
	for (int i = 0; i < 100; i++)
		s[i] = (seg){ .gemm = 5000000 };
	static timed t;
	cs_kprof_clock k;
	run_segs(s, 100, true, &t, &k);
	ck_assert(k.gemm_table > 1.0 && k.gemm_table < 1.1);
	for (int i = 0; i < 100; i++)
		ck_assert_msg(fabs(dur(&t, i) - 5e6 * k.gemm_table) <= 1.0, "op %d: %.0f ns, want %.0f",
			      i, dur(&t, i), 5e6 * k.gemm_table);
}
END_TEST

/* After a long idle stretch the controller's window holds no GEMM: the
 * next GEMM runs at full clock (gemm_boost, measured: the first GEMMs after
 * idle, 1.159-1.193 times the same shape at the cap); a chain after it
 * slows, never speeding up, to the cap within a few windows. */
START_TEST(gemm_after_idle_runs_at_full_clock_then_settles)
{
	static seg s[201];
	cs_kprof_clock k;
	static timed t;
	cs_kprof *prof = NULL;
	cs_diag d;
	ck_assert_int_eq(cs_kprof_load("h200-sxm", &prof, &d), CS_OK);
	k = *cs_kprof_clock_model(prof);
	cs_kprof_free(prof);
	s[0] = (seg){ .other = (int64_t)(20 * k.window_ns), .spare_w = k.cap_w - k.idle_w };
	for (int i = 1; i <= 200; i++)
		s[i] = (seg){ .gemm = 2000000 };
	run_segs(s, 201, true, &t, &k);
	double first = dur(&t, 1), at_cap = 2e6 * k.gemm_table;
	ck_assert_msg(fabs(first - at_cap / k.gemm_boost) <= 1e-5 * first, "first GEMM %.0f ns, want %.0f",
		      first, at_cap / k.gemm_boost);
	for (int i = 2; i <= 200; i++)
		ck_assert_msg(dur(&t, i) >= dur(&t, i - 1) - 1.0, "op %d faster than op %d", i, i - 1);
	ck_assert(dur(&t, 200) > at_cap * (1 - 2e-3) && dur(&t, 200) <= at_cap + 1.0);
	/* the measured step response: half way to the cap after 41 ms (after
	 * memory-bound work) to 72 ms (after idle); here after idle */
	double half = at_cap / (1.0 + (k.gemm_boost - 1.0) / 2.0);
	int i = 1;
	while (i <= 200 && dur(&t, i) < half)
		i++;
	double ms = 1e-6 * (double)(t.start[i] - t.start[1]);
	ck_assert_msg(ms > 40 && ms < 100, "half way after %.1f ms", ms);
}
END_TEST

/* GEMMs alternating with memory-bound work every millisecond, far inside
 * the window: the GEMMs settle at the power balance's fixed point,
 * r = R(w x M x r / (G x gemm_table)), M and G the two parts' table times
 * and w the power the memory-bound work leaves under the cap. */
START_TEST(steady_mix_meets_the_power_balance)
{
	static const double w_of[] = { 10.0, 43.0, 120.0 };
	for (size_t c = 0; c < sizeof w_of / sizeof w_of[0]; c++) {
		static seg s[1200];
		for (int i = 0; i < 1200; i += 2) {
			s[i] = (seg){ .gemm = 600000 };
			s[i + 1] = (seg){ .other = 400000, .spare_w = w_of[c] };
		}
		static timed t;
		cs_kprof_clock k;
		run_segs(s, 1200, true, &t, &k);
		double r = 1.0;
		for (int it = 0; it < 200; it++)
			r = speedup(&k, w_of[c] * 400000.0 * r / (600000.0 * k.gemm_table));
		double want = 600000.0 * k.gemm_table / r;
		ck_assert_msg(fabs(dur(&t, 1198) - want) <= 2e-3 * want, "w %.0f: GEMM %.0f ns, want %.0f "
			      "(r %.4f)", w_of[c], dur(&t, 1198), want, r);
		ck_assert_int_eq((long long)dur(&t, 1199), 400000);
	}
}
END_TEST

/* Without the model every op takes the table's time, to the nanosecond. */
START_TEST(no_model_no_change)
{
	static seg s[64];
	for (int i = 0; i < 64; i++)
		s[i] = (seg){ .gemm = i % 2 ? 0 : 700000 + i, .other = i % 3 ? 300000 : 0, .spare_w = 300 };
	static timed t;
	cs_kprof_clock k;
	run_segs(s, 64, false, &t, &k);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq((long long)dur(&t, i), (long long)(s[i].gemm + s[i].other));
}
END_TEST

/* The measured regimes the model was fitted on, from the profile's numbers:
 * GEMM duty cycles against fp32 accumulation (clock_duty.json) land within
 * 2 % of the measured GEMM throughput. */
START_TEST(duty_cycles_within_two_percent)
{
	/* [realized GEMM duty, measured GEMM speed over the cap] */
	static const double rows[][2] = { { 0.787, 1.0193 }, { 0.551, 1.079 }, { 0.452, 1.126 },
					  { 0.24, 1.1469 }, { 0.507, 1.0913 }, { 0.399, 1.1274 } };
	cs_kprof *prof = NULL;
	cs_diag d;
	ck_assert_int_eq(cs_kprof_load("h200-sxm", &prof, &d), CS_OK);
	const cs_kprof_clock *k = cs_kprof_clock_model(prof);
	ck_assert_ptr_nonnull(k);
	double w = k->cap_w - k->membound_w[CS_MEM_GRAD_ACCUM];
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		double duty = rows[i][0];
		double r = speedup(k, (1 - duty) / duty * w);
		ck_assert_msg(fabs(r - rows[i][1]) < 0.02 * rows[i][1], "duty %.3f: model %.4f, measured %.4f",
			      duty, r, rows[i][1]);
	}
	cs_kprof_free(prof);
	/* derived profiles carry no model: their kernels' power is not measured */
	ck_assert_int_eq(cs_kprof_load("h100-sxm", &prof, &d), CS_OK);
	ck_assert_ptr_null(cs_kprof_clock_model(prof));
	cs_kprof_free(prof);
}
END_TEST

/* clock: power on a profile without a model is refused where it is set. */
START_TEST(power_without_a_model_is_refused)
{
	char path[4096];
	cs_test_tmp(path, sizeof path, "cs-clock");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("cluster:\n  gpu: {preset: h100-sxm-80g, clock: power}\n"
	      "model: {preset: llama2-7b}\ntraining: {seq_len: 1024, micro_batch: 1, global_batch: 8}\n", f);
	fclose(f);
	cs_scenario *sc = NULL;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_scenario_load(path, NULL, 0, &sc, &d), CS_ERR_INPUT);
	unlink(path);
	ck_assert_msg(strstr(d.msg, ":2:") && strstr(d.msg, "'cluster.gpu.clock' is power") &&
		      strstr(d.msg, "'h100-sxm' has no clock model"), "%s", d.msg);
}
END_TEST

static Suite *clock_suite(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("regimes");
	tcase_add_test(tc, gemm_chain_runs_at_the_cap);
	tcase_add_test(tc, gemm_after_idle_runs_at_full_clock_then_settles);
	tcase_add_test(tc, steady_mix_meets_the_power_balance);
	tcase_add_test(tc, no_model_no_change);
	tcase_add_test(tc, duty_cycles_within_two_percent);
	tcase_add_test(tc, power_without_a_model_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(clock_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
