/*
 * test_ubuf.c - tensor-parallel overlap as Transformer Engine's userbuffers
 * run it (src/program/build_ubuf.c) against its closed forms: ring-exchange
 * and pipelined GEMMs, the SM-margin rate, the userbuffers collectives'
 * times and SMs, and the programs a block makes with them.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "coll/coll_op.h"
#include "hw/files.h"
#include "hw/kprof.h"
#include "hw/topo.h"
#include "model/compute.h"
#include "model/model.h"
#include "program/build.h"
#include "program/build_int.h"
#include "program/mesh.h"
#include "run/runner.h"
#include "scenario_text.h"

#define TP4 \
	"cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 8}\n" \
	"model: {preset: llama3-8b}\n" \
	"training: {seq_len: 4096, micro_batch: 1, global_batch: 2, framework: megatron}\n" \
	"parallelism: {tp: 4, dp: 2, sequence_parallel: true, tp_overlap: true}\n"

/* A builder with what the userbuffers hooks read: the scenario and the
 * compute model (no kernel profile: the analytic model times the GEMMs). */
static void builder_of(cs_builder *b, const cs_scenario *sc)
{
	memset(b, 0, sizeof *b);
	b->sc = sc;
	b->cm = (cs_compute){ .gpu = &sc->cluster.gpu, .prec = sc->training.precision };
}

static cs_layer_op gemm(const char *name, int64_t m, int64_t n, int64_t k)
{
	return (cs_layer_op){ .name = name, .cls = CS_OPC_GEMM, .m = m, .n = n, .k = k, .batch = 1,
			      .flops = 2.0 * m * n * k, .bytes = 2.0 * (m * k + k * n + m * n),
			      .linear = true };
}

static cs_layer_op comm(const char *name, int coll, double bytes)
{
	return (cs_layer_op){ .name = name, .cls = CS_OPC_COMM, .comm_kind = CS_COMM_TP,
			      .coll = coll, .comm_bytes = bytes };
}

static int64_t chunk_ns(const cs_builder *b, const cs_layer_op *g, int chunks)
{
	cs_layer_op c = *g;
	double m = (double)g->m, n = (double)g->n, k = (double)g->k, mc = m / chunks;
	c.m = g->m / chunks;
	c.flops = g->flops / chunks;
	c.bytes = g->bytes * (mc * k + k * n + mc * n) / (m * k + k * n + m * n);
	return cs_compute_op_ns(&b->cm, &c);
}

static double bus_bw(const cs_scenario *sc)
{
	return cs_coll_nvlink_bw(&sc->cluster, &sc->coll); /* B/ns */
}

static int64_t rs_ns(const cs_scenario *sc, double bytes, double bw)
{
	return sc->cluster.scale_up.latency_ns + llround(bytes * 3.0 / 4.0 / bw);
}

/* c + (steps - 1) max(c, x), whichever of the GEMM chunk and the hop is
 * longer; a pipeline on a margin (rho 1) is c + (n - 1) max(c, r); beside
 * its reduce-scatters (rho < 1) a chunk runs r at rho, then the rest. */
START_TEST(closed_forms)
{
	ck_assert_int_eq(cs__ub_ring_ns(100, 30, 4), 400);
	ck_assert_int_eq(cs__ub_ring_ns(100, 250, 4), 100 + 3 * 250);
	ck_assert_int_eq(cs__ub_ring_ns(100, 250, 1), 100);
	ck_assert_int_eq(cs__ub_pipeline_ns(100, 30, 4, 1.0), 400);
	ck_assert_int_eq(cs__ub_pipeline_ns(100, 250, 4, 1.0), 100 + 3 * 250);
	ck_assert_int_eq(cs__ub_pipeline_ns(100, 250, 1, 1.0), 100);
	/* rho 0.8, r 30 < c: each later chunk runs 30 beside a reduce-scatter
	 * (24 of its work) and 76 alone: 100 + 3 x 106 */
	ck_assert_int_eq(cs__ub_pipeline_ns(100, 30, 4, 0.8), 100 + 3 * 106);
	/* r 200 > c / rho: every later chunk runs wholly beside one, 125 each,
	 * and the reduce-scatters queue: the segment ends with the third */
	ck_assert_int_eq(cs__ub_pipeline_ns(100, 200, 4, 0.8), 100 + 3 * 200);
}
END_TEST

/* The margin rate is the measured holding-only figure at 16 and 32 of 132
 * SMs, linear from 1 below, held beyond. */
START_TEST(margin_rate_is_the_measured_curve)
{
	ck_assert_double_eq_tol(cs__ub_margin_rate(0.0), 1.0, 1e-12);
	ck_assert_double_eq_tol(cs__ub_margin_rate(16.0 / 132), 584.9 / 695.7, 1e-12);
	ck_assert_double_eq_tol(cs__ub_margin_rate(32.0 / 132), 541.2 / 695.7, 1e-12);
	ck_assert_double_eq_tol(cs__ub_margin_rate(8.0 / 132), (1.0 + 584.9 / 695.7) / 2, 1e-12);
	ck_assert_double_eq_tol(cs__ub_margin_rate(24.0 / 132), (584.9 + 541.2) / 2 / 695.7, 1e-12);
	ck_assert_double_eq_tol(cs__ub_margin_rate(0.5), 541.2 / 695.7, 1e-12);
}
END_TEST

/* TE's defaults: the all-gather before QKV folds into a ring exchange of
 * 4 chunks over NVLink by copy engine; the memory-bound kernels between
 * stay as they were. */
START_TEST(ring_exchange_all_gather)
{
	cs_scenario *sc = cs_test_load(TP4, NULL, 0);
	cs_builder b;
	builder_of(&b, sc);
	double bytes = 4096.0 * 4096 * 2;
	cs_layer_op ops[] = {
		comm("sp_ag_attn", CS_COLL_ALL_GATHER, bytes),
		{ .name = "attn_norm_cast", .cls = CS_OPC_MEMBOUND, .mem = CS_MEM_COPY, .bytes = 1e6 },
		gemm("qkv", 4096, 1536, 4096),
	};
	cs_frag_item it = { 0 }, cur = { 0 };
	ck_assert_int_eq(cs__ub_comm(&b, ops, 3, 0, &it), 1);
	ck_assert(!cs__ub_gemm(&b, ops, 3, 1, &cur));
	ck_assert(cs__ub_gemm(&b, ops, 3, 2, &cur));
	int64_t c = chunk_ns(&b, &ops[2], 4);
	int64_t x = sc->cluster.scale_up.latency_ns + llround(bytes / 4 / bus_bw(sc));
	ck_assert_int_eq(cur.ns, c + 3 * (c > x ? c : x));
	ck_assert_int_eq(cur.class_ns[CS_COMPUTE_GEMM], cur.ns);
	ck_assert_int_eq(cur.kernels, 4);
	ck_assert_double_eq(cur.flops, ops[2].flops);
	/* a different GEMM after the all-gather (an MoE router) keeps NCCL's */
	ops[2].name = "router";
	ck_assert_int_eq(cs__ub_comm(&b, ops, 3, 0, &it), 0);
	ck_assert(!cs__ub_gemm(&b, ops, 3, 2, &cur));
	cs_scenario_free(sc);
}
END_TEST

/* Llama 3.1 405B's NeMo config aggregates its ring exchanges: one chunk's
 * hop to the pair's other rank, then tp/2 steps of two chunks (2M/tp rows)
 * with hops of two chunks. */
START_TEST(aggregated_ring_exchange)
{
	const char *set[] = { "parallelism.tp_overlap_config=nemo-h100-h16384-tp8-cp2-mbs1-seqlen8192" };
	cs_scenario *sc = cs_test_load(TP4, set, 1);
	cs_builder b;
	builder_of(&b, sc);
	double bytes = 4096.0 * 4096 * 2;
	cs_layer_op ops[] = { comm("sp_ag_mlp", CS_COLL_ALL_GATHER, bytes), gemm("mlp_up", 4096, 7168, 4096) };
	cs_frag_item cur = { 0 };
	ck_assert(cs__ub_gemm(&b, ops, 2, 1, &cur));
	int64_t c = chunk_ns(&b, &ops[1], 2), lat = sc->cluster.scale_up.latency_ns;
	int64_t x1 = lat + llround(bytes / 4 / bus_bw(sc)), x2 = lat + llround(bytes / 2 / bus_bw(sc));
	ck_assert_int_eq(cur.ns, x1 + c + (c > x2 ? c : x2));
	ck_assert_int_eq(cur.kernels, 2);
	cs_scenario_free(sc);
}
END_TEST

/* Llama 3.1 405B's NeMo config: fc2_fprop pipelined in 4 splits on 8 SMs
 * with a margin. The GEMM runs on 124 SMs throughout; each split's
 * reduce-scatter moves at 8 x 20.6 GB/s; the last, on 32 SMs, is exposed.
 * Under the fp8 recipe with TE's fp8_buf the GEMM writes fp8 partial sums:
 * every split moves half the bytes; without fp8_buf, without the recipe's
 * fp8 communication or in bf16, 16 bits. */
START_TEST(pipeline_with_margin)
{
	static const char *const sets[][3] = {
		{ "training.precision=bf16", "parallelism.tp_overlap_fp8_buf=false", "training.fp8.comm=true" },
		{ "training.precision=fp8", "parallelism.tp_overlap_fp8_buf=true", "training.fp8.comm=true" },
		{ "training.precision=fp8", "parallelism.tp_overlap_fp8_buf=false", "training.fp8.comm=true" },
		{ "training.precision=fp8", "parallelism.tp_overlap_fp8_buf=true", "training.fp8.comm=false" },
		{ "training.precision=bf16", "parallelism.tp_overlap_fp8_buf=true", "training.fp8.comm=true" },
	};
	double bytes = 4096.0 * 4096 * 2;
	for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
		const char *set[] = { "parallelism.tp_overlap_config=nemo-h100-h16384-tp8-cp2-mbs1-seqlen8192",
				      sets[k][0], sets[k][1], sets[k][2] };
		cs_scenario *sc = cs_test_load(TP4, set, 4);
		cs_builder b;
		builder_of(&b, sc);
		double moved = k == 1 ? bytes / 2 : bytes;
		cs_layer_op ops[] = { gemm("mlp_down", 4096, 4096, 3584),
				      comm("tp_rs_mlp", CS_COLL_REDUCE_SCATTER, bytes) };
		cs_frag_item it = { 0 }, cur = { 0 };
		ck_assert(cs__ub_gemm(&b, ops, 2, 0, &cur));
		int64_t c = llround((double)chunk_ns(&b, &ops[0], 4) / cs__ub_margin_rate(8.0 / 132));
		int64_t r = rs_ns(sc, moved / 4, 8 * cs_coll_nvlink_channel_bw(&sc->cluster));
		ck_assert_int_eq(cur.ns, c + 3 * (c > r ? c : r));
		ck_assert_int_eq(cs__ub_comm(&b, ops, 2, 1, &it), 2);
		ck_assert(it.ub && it.is_comm && !it.ub_overlap);
		ck_assert_int_eq(it.sms, 32);
		ck_assert_double_eq(it.bytes, moved / 4);
		ck_assert_int_eq(it.ns, rs_ns(sc, moved / 4, bus_bw(sc))); /* 32 x 20.6 > NVLink's */
		cs_scenario_free(sc);
	}
}
END_TEST

/* GPT-3 175B's NeMo config: fc2_fprop as a ring exchange on a 1-SM margin:
 * the chunks, their hops, then the sum of the tp chunks received. */
START_TEST(ring_exchange_reduce_scatter)
{
	const char *set[] = { "parallelism.tp_overlap_config=nemo-h100-h12288-tp4-mbs1-seqlen2048" };
	cs_scenario *sc = cs_test_load(TP4, set, 1);
	cs_builder b;
	builder_of(&b, sc);
	double bytes = 4096.0 * 4096 * 2;
	cs_layer_op ops[] = { gemm("mlp_down", 4096, 4096, 3584),
			      comm("tp_rs_mlp", CS_COLL_REDUCE_SCATTER, bytes) };
	cs_frag_item it = { 0 }, cur = { 0 };
	ck_assert_int_eq(cs__ub_comm(&b, ops, 2, 1, &it), 1);
	ck_assert(cs__ub_gemm(&b, ops, 2, 0, &cur));
	int64_t c = llround((double)chunk_ns(&b, &ops[0], 4) / cs__ub_margin_rate(1.0 / 132));
	int64_t x = sc->cluster.scale_up.latency_ns + llround(bytes / 4 / bus_bw(sc));
	cs_layer_op sum = { .cls = CS_OPC_MEMBOUND, .mem = CS_MEM_ADD, .bytes = bytes / 4 * 5 };
	int64_t red = cs_compute_op_ns(&b.cm, &sum);
	ck_assert_int_eq(cur.ns, c + 3 * (c > x ? c : x) + red);
	ck_assert_int_eq(cur.class_ns[CS_COMPUTE_MEMBOUND], red);
	cs_scenario_free(sc);
}
END_TEST

/* Bulk: the reduce-scatter of a dgrad output on its own SMs (TE's default
 * 16, at 16 x 20.6 GB/s), beside what follows; the GEMM is left alone. */
START_TEST(bulk_reduce_scatter)
{
	cs_scenario *sc = cs_test_load(TP4, NULL, 0);
	cs_builder b;
	builder_of(&b, sc);
	double bytes = 4096.0 * 4096 * 2;
	cs_layer_op ops[] = { gemm("mlp_up_dgrad", 4096, 4096, 7168),
			      comm("tp_rs_mlp_bwd", CS_COLL_REDUCE_SCATTER, bytes) };
	cs_frag_item it = { 0 }, cur = { 0 };
	ck_assert(!cs__ub_gemm(&b, ops, 2, 0, &cur));
	ck_assert_int_eq(cs__ub_comm(&b, ops, 2, 1, &it), 2);
	ck_assert(it.ub && it.ub_overlap);
	ck_assert_int_eq(it.sms, 16);
	ck_assert_int_eq(it.ns, rs_ns(sc, bytes, 16 * cs_coll_nvlink_channel_bw(&sc->cluster)));
	cs_scenario_free(sc);
}
END_TEST

/* The switch: NCCL's overlap, or no overlap at all, leaves every
 * collective to NCCL. */
START_TEST(nccl_model_and_no_overlap_change_nothing)
{
	static const char *const sets[][1] = { { "parallelism.tp_overlap_model=nccl" },
					       { "parallelism.tp_overlap=false" } };
	for (int i = 0; i < 2; i++) {
		cs_scenario *sc = cs_test_load(TP4, sets[i], 1);
		cs_builder b;
		builder_of(&b, sc);
		cs_layer_op ops[] = { comm("sp_ag_attn", CS_COLL_ALL_GATHER, 1e6), gemm("qkv", 4096, 1536, 4096),
				      comm("tp_rs_attn", CS_COLL_REDUCE_SCATTER, 1e6) };
		cs_frag_item it = { 0 }, cur = { 0 };
		ck_assert_int_eq(cs__ub_comm(&b, ops, 3, 0, &it), 0);
		ck_assert_int_eq(cs__ub_comm(&b, ops, 3, 2, &it), 0);
		ck_assert(!cs__ub_gemm(&b, ops, 3, 1, &cur));
		cs_scenario_free(sc);
	}
}
END_TEST

/* TP ops on the TP stream and their SMs, of the whole program. */
static void tp_ops(const char *set, int32_t *n, int32_t *ub16, int32_t *ub32)
{
	const char *sets[] = { set };
	cs_scenario *sc = cs_test_load(TP4, sets, 1);
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program prog;
	cs_program_init(&prog);
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_plan_build(sc, &mesh, NULL, &prog, &diag), CS_OK);
	*n = prog.nops[CS_STREAM_TP];
	*ub16 = *ub32 = 0;
	for (int32_t i = 0; i < prog.nops[CS_STREAM_TP]; i++) {
		const cs_op *op = &prog.ops[CS_STREAM_TP][i];
		*ub16 += op->ub && op->sms == 16;
		*ub32 += op->ub && op->sms == 32;
	}
	cs_program_free(&prog);
	cs_scenario_free(sc);
}

/* Per block and micro-batch, NCCL's overlap has 4 TP collectives forward
 * and 4 backward; TE's defaults leave 2 pipelines' last chunks forward
 * and 2 bulk reduce-scatters backward, the all-gathers folded. */
START_TEST(programs_fold_the_all_gathers)
{
	int32_t n_nccl, a, c, n_ub, ub16, ub32;
	tp_ops("parallelism.tp_overlap_model=nccl", &n_nccl, &a, &c);
	ck_assert_int_eq(a + c, 0);
	tp_ops("parallelism.tp_overlap_model=userbuffers", &n_ub, &ub16, &ub32);
	int64_t blocks = 32 * 1; /* llama3-8b's layers x micro-batches per replica */
	ck_assert_int_eq(n_nccl - n_ub, blocks * 4);
	ck_assert_int_eq(ub32, blocks * 2);
	ck_assert_int_eq(ub16, blocks * 2);
}
END_TEST

/* A whole run: userbuffers differ from NCCL's overlap, deterministically. */
START_TEST(simulated_step_differs_and_repeats)
{
	const char *nccl[] = { "parallelism.tp_overlap_model=nccl" };
	cs_scenario *a = cs_test_load(TP4, nccl, 1), *b = cs_test_load(TP4, NULL, 0);
	cs_metrics ma = cs_test_simulate(a), mb = cs_test_simulate(b), mb2 = cs_test_simulate(b);
	ck_assert_double_ne(ma.step_time_s, mb.step_time_s);
	ck_assert_double_eq(mb.step_time_s, mb2.step_time_s);
	cs_scenario_free(a);
	cs_scenario_free(b);
}
END_TEST

/* The runner: two H100s run a 1 ms compute op and, from t = 0 on their TP
 * stream, a userbuffers collective of 0.3 ms on `sms` SMs. Returns rank
 * 0's compute end (busy) and last op's end, and the rate at `sms`. */
static void ub_run(int sms, cs_time *busy, cs_time *end, double *rate)
{
	cs_scenario *sc = cs_test_load("cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 2}\n"
				       "model: {preset: llama2-7b}\n"
				       "training: {seq_len: 1024, micro_batch: 1, global_batch: 1}\n"
				       "parallelism: {tp: 2, sequence_parallel: true}\n", NULL, 0);
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_diag diag;
	cs_kprof *prof = NULL;
	ck_assert_int_eq(cs_hw_load_profile(sc, &prof, &diag), CS_OK);
	cs_topo *topo = cs_topo_new(&sc->cluster);
	cs_coll *coll = cs_coll_new(&sc->cluster, &sc->coll);
	cs_program prog;
	cs_program_init(&prog);
	cs_op work = { .kind = CS_OP_COMPUTE, .ns = 1000000, .layer = -1, .micro = -1 };
	ck_assert_int_eq(cs_program_add(&prog, CS_STREAM_COMPUTE, &work, NULL, 0), 1);
	cs_op op = { .kind = CS_OP_COLL, .group = CS_GROUP_TP, .coll = CS_COLL_REDUCE_SCATTER,
		     .comm = CS_COMM_TP, .bytes = 64e6, .ns = 300000, .ub = 1, .sms = (uint8_t)sms,
		     .phase = CS_PHASE_COMM, .layer = -1, .micro = -1 };
	ck_assert_int_eq(cs_program_add(&prog, CS_STREAM_TP, &op, NULL, 0), 1);
	cs_run_env env = { .sc = sc, .mesh = &mesh, .progs = &prog, .topo = topo, .coll = coll,
			   .first_rank = 0, .nranks = 2, .prof = prof };
	cs_runner *r = cs_runner_new(&env);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(cs_runner_run(r, &diag), CS_OK);
	*busy = cs_runner_stats(r, 0)->busy;
	*end = cs_runner_stats(r, 0)->end;
	*rate = (float)cs_kprof_contention(prof, sms / 132.0);
	cs_runner_free(r);
	cs_program_free(&prog);
	cs_coll_free(coll);
	cs_topo_free(topo);
	cs_kprof_free(prof);
	cs_scenario_free(sc);
}

/* A userbuffers collective lasts the time the builder gave it and takes its
 * SMs from the compute beside it (the profile's rate while it runs); on a
 * margin (no SMs) it leaves compute alone. */
START_TEST(runner_times_userbuffers_ops_as_given)
{
	cs_time busy, end;
	double rate;
	ub_run(16, &busy, &end, &rate);
	ck_assert(rate < 1.0);
	double want = 300000 + (1e6 - 300000 * rate);
	ck_assert_msg(fabs((double)busy - want) <= 2.0, "busy %lld, want %.1f", (long long)busy, want);
	ub_run(0, &busy, &end, &rate);
	ck_assert_int_eq(busy, 1000000);
	ck_assert_int_eq(end, 1000000);
}
END_TEST

static Suite *ubuf_suite(void)
{
	Suite *s = suite_create("ubuf");
	TCase *tc = tcase_create("forms");
	tcase_add_test(tc, closed_forms);
	tcase_add_test(tc, margin_rate_is_the_measured_curve);
	suite_add_tcase(s, tc);
	tc = tcase_create("points");
	tcase_add_test(tc, ring_exchange_all_gather);
	tcase_add_test(tc, aggregated_ring_exchange);
	tcase_add_test(tc, pipeline_with_margin);
	tcase_add_test(tc, ring_exchange_reduce_scatter);
	tcase_add_test(tc, bulk_reduce_scatter);
	tcase_add_test(tc, nccl_model_and_no_overlap_change_nothing);
	suite_add_tcase(s, tc);
	tc = tcase_create("programs");
	tcase_add_test(tc, programs_fold_the_all_gathers);
	tcase_add_test(tc, simulated_step_differs_and_repeats);
	tcase_add_test(tc, runner_times_userbuffers_ops_as_given);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ubuf_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
