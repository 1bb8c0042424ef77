/*
 * test_run.c - the mesh, the program builder and the runner: DDP bucket
 * semantics against closed forms, exposure accounting, determinism and
 * folding.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/config.h"
#include "config/scenario.h"
#include "hw/files.h"
#include "hw/topo.h"
#include "model/compute.h"
#include "program/build.h"
#include "program/mesh.h"
#include "program/program.h"
#include "run/runner.h"
#include "scenario_text.h"

/* A 7B-like model small enough to simulate quickly but with many buckets;
 * the reducer alone, without the step's edges (tests/test_edges.c). */
#define DDP_BASE \
	"cluster: {gpu: h100-sxm-80g, nodes: %d, gpus_per_node: %d}\n" \
	"model: {preset: llama2-7b}\n" \
	"training: {seq_len: 2048, micro_batch: 1, global_batch: %d, step_edges: false}\n" \
	"parallelism:\n" \
	"  data_parallel: {overlap: %s}\n"

static cs_scenario *load_text(const char *text)
{
	return cs_test_load(text, NULL, 0);
}

static cs_scenario *ddp(int nodes, int gpn, const char *overlap)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), DDP_BASE, nodes, gpn, nodes * gpn, overlap);
	return load_text(buf);
}

static cs_metrics simulate(const cs_scenario *sc)
{
	return cs_test_simulate(sc);
}

/* The stage-0 template of a scenario, and the duration of each DP-stream op. */
typedef struct built {
	cs_program prog;
	int64_t dp_ns[4096];
	int n_dp;
} built;

static void build(const cs_scenario *sc, built *b)
{
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	ck_assert_int_eq(sc->parallel.pp, 1);
	cs_program_init(&b->prog);
	cs_diag diag = { { 0 } };
	cs_kprof *prof = NULL;
	ck_assert_int_eq(cs_hw_load_profile(sc, &prof, &diag), CS_OK);
	ck_assert_int_eq(cs_plan_build(sc, &mesh, prof, &b->prog, &diag), CS_OK);
	cs_kprof_free(prof);
	cs_topo *topo = cs_topo_new(&sc->cluster);
	cs_coll *coll = cs_coll_new(&sc->cluster, &sc->coll);
	cs_group g = cs_mesh_group(&mesh, CS_GROUP_DP, 0, sc->cluster.gpus_per_node);
	cs_group_shape shape = cs_topo_group(topo, g.base, g.stride[0] ? g.stride[0] : 1, cs_group_size(&g));
	b->n_dp = b->prog.nops[CS_STREAM_DP];
	ck_assert_int_le(b->n_dp, 4096);
	for (int i = 0; i < b->n_dp; i++) {
		const cs_op *op = &b->prog.ops[CS_STREAM_DP][i];
		b->dp_ns[i] = cs_coll_time(coll, (cs_coll_op)op->coll, &shape, op->bytes, NULL);
	}
	cs_coll_free(coll);
	cs_topo_free(topo);
}

/* ---- mesh -------------------------------------------------------------- */

START_TEST(mesh_coordinates_follow_the_order)
{
	cs_parallel_spec p = { .tp = 8, .cp = 2, .ep = 1, .pp = 4, .dp = 3,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	cs_mesh m;
	cs_mesh_init(&m, &p);
	ck_assert_int_eq(m.world, 8 * 2 * 4 * 3);
	for (int64_t r = 0; r < m.world; r++) {
		int64_t back = cs_mesh_coord(&m, r, CS_AXIS_TP) + 8 * (cs_mesh_coord(&m, r, CS_AXIS_CP) +
			2 * (cs_mesh_coord(&m, r, CS_AXIS_PP) + 4 * cs_mesh_coord(&m, r, CS_AXIS_DP)));
		ck_assert_int_eq(back, r);
	}
	ck_assert_int_eq(m.stride[CS_AXIS_PP], 16);
	ck_assert_int_eq(cs_mesh_pp_peer(&m, 16 * 2 + 5, 3), 16 * 3 + 5);
}
END_TEST

static void check_partition(const cs_mesh *mp)
{
	static const cs_group_kind kinds[] = { CS_GROUP_TP,	  CS_GROUP_CP,	     CS_GROUP_EP,  CS_GROUP_PP,
					       CS_GROUP_DP,	  CS_GROUP_DP_INTRA, CS_GROUP_DP_INTER, CS_GROUP_EDP,
					       CS_GROUP_ETP };
	const cs_mesh m = *mp;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int64_t count = cs_mesh_group_count(&m, kinds[k], 8);
		int seen[64] = { 0 };
		for (int64_t r = 0; r < m.world; r++) {
			cs_group g = cs_mesh_group(&m, kinds[k], r, 8);
			int64_t idx = cs_mesh_group_index(&m, kinds[k], r, 8);
			ck_assert_int_lt(idx, count);
			int found = 0;
			for (int64_t i = 0; i < cs_group_size(&g); i++) {
				int64_t mem = cs_group_member(&g, i);
				found |= mem == r;
				/* every member agrees on the group */
				ck_assert_int_eq(cs_mesh_group_index(&m, kinds[k], mem, 8), idx);
			}
			ck_assert_msg(found, "rank %lld not in its own %s group", (long long)r,
				      cs_group_kind_name(kinds[k]));
			seen[idx]++;
		}
		cs_group g0 = cs_mesh_group(&m, kinds[k], 0, 8);
		for (int64_t i = 0; i < count; i++)
			ck_assert_int_eq(seen[i], cs_group_size(&g0));
	}
}

START_TEST(mesh_groups_partition_the_ranks)
{
	cs_parallel_spec p = { .tp = 2, .cp = 2, .ep = 2, .pp = 2, .dp = 4,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	cs_mesh m;
	cs_mesh_init(&m, &p);
	check_partition(&m);
	/* folded: expert TP 1, EP over tp, cp and half of dp */
	cs_parallel_spec f = p;
	f.etp = 1;
	f.ep = 8;
	cs_mesh mf;
	cs_mesh_init(&mf, &f);
	check_partition(&mf);
	/* the gradient group spans dp and cp: 8 ranks */
	cs_group g = cs_mesh_group(&m, CS_GROUP_DP, 0, 8);
	ck_assert_int_eq(cs_group_size(&g), 8);
}
END_TEST

/* A group's members by hand: the group of `kind` holding `rank`. */
typedef struct member_case {
	cs_group_kind kind;
	int64_t rank, n, members[8];
} member_case;

static void check_members(const cs_mesh *m, const member_case *cases, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		cs_group g = cs_mesh_group(m, cases[c].kind, cases[c].rank, 8);
		ck_assert_int_eq(cs_group_size(&g), cases[c].n);
		for (int64_t i = 0; i < cases[c].n; i++)
			ck_assert_int_eq(cs_group_member(&g, i), cases[c].members[i]);
	}
}

/* Expert parallelism 2 inside dp 4, cp 2: a rank's experts are also held
 * by the ranks of its cp group and its dp / ep replicas, four in all. */
START_TEST(mesh_expert_data_parallel_group_by_hand)
{
	cs_parallel_spec p = { .tp = 2, .cp = 2, .ep = 2, .pp = 2, .dp = 4,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	cs_mesh m;
	cs_mesh_init(&m, &p);
	ck_assert_int_eq(m.world, 32); /* strides: tp 1, cp 2, ep 4, pp 8, dp / ep 16 */
	static const member_case cases[] = {
		{ CS_GROUP_EP, 0, 2, { 0, 4 } },
		{ CS_GROUP_EDP, 0, 4, { 0, 2, 16, 18 } },
		{ CS_GROUP_EDP, 13, 4, { 13, 15, 29, 31 } },
		{ CS_GROUP_DP, 0, 8, { 0, 2, 4, 6, 16, 18, 20, 22 } },
	};
	check_members(&m, cases, sizeof cases / sizeof cases[0]);
	ck_assert_int_eq(cs_mesh_group_count(&m, CS_GROUP_EDP, 8), 8);
	ck_assert_str_eq(cs_group_kind_name(CS_GROUP_EDP), "edp");
}
END_TEST

/* Megatron-Core's folded expert mesh on tp 4, cp 2, dp 4 (pp 2 between):
 * expert TP 2 innermost, EP 8 over the other two TP ranks, both CP ranks
 * and two DP ranks, expert DP the remaining two. */
START_TEST(mesh_folded_expert_groups_by_hand)
{
	cs_parallel_spec p = { .tp = 4, .cp = 2, .ep = 8, .etp = 2, .pp = 2, .dp = 4,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	ck_assert_int_eq(cs_parallel_ep_dp(&p), 2);
	ck_assert_int_eq(cs_parallel_edp(&p), 2);
	cs_mesh m;
	cs_mesh_init(&m, &p);
	/* strides: tp 1, cp 4, ep 8, pp 16, dp / ep_dp 32 */
	ck_assert_int_eq(m.world, 64);
	ck_assert_int_eq(m.stride[CS_AXIS_PP], 16);
	static const member_case cases[] = {
		{ CS_GROUP_ETP, 0, 2, { 0, 1 } },
		{ CS_GROUP_ETP, 7, 2, { 6, 7 } },
		{ CS_GROUP_EP, 0, 8, { 0, 2, 4, 6, 8, 10, 12, 14 } },
		{ CS_GROUP_EP, 49, 8, { 49, 51, 53, 55, 57, 59, 61, 63 } },
		{ CS_GROUP_EDP, 5, 2, { 5, 37 } },
		{ CS_GROUP_TP, 5, 4, { 4, 5, 6, 7 } },
		{ CS_GROUP_DP, 0, 8, { 0, 4, 8, 12, 32, 36, 40, 44 } },
	};
	check_members(&m, cases, sizeof cases / sizeof cases[0]);
	ck_assert_int_eq(cs_mesh_group_count(&m, CS_GROUP_EP, 8), 8);
	ck_assert_int_eq(cs_mesh_group_count(&m, CS_GROUP_ETP, 8), 32);
	ck_assert_int_eq(cs_mesh_group_count(&m, CS_GROUP_EDP, 8), 32);
	ck_assert_str_eq(cs_group_kind_name(CS_GROUP_ETP), "etp");
	/* unfolded, expert TP is the TP group */
	p.etp = 0;
	p.ep = 2;
	cs_mesh_init(&m, &p);
	cs_group g = cs_mesh_group(&m, CS_GROUP_ETP, 5, 8);
	ck_assert_int_eq(cs_group_size(&g), 4);
	ck_assert_int_eq(cs_group_member(&g, 0), 4);
}
END_TEST

/* ---- DDP against closed forms ------------------------------------------- */

START_TEST(ddp_without_overlap_is_compute_plus_buckets)
{
	cs_scenario *sc = ddp(2, 8, "false");
	built b;
	build(sc, &b);
	int64_t sum = b.prog.compute_ns;
	ck_assert_int_gt(b.n_dp, 10);
	for (int i = 0; i < b.n_dp; i++)
		sum += b.dp_ns[i];
	cs_metrics m = simulate(sc);
	/* integer nanoseconds: equal to the nanosecond */
	ck_assert_int_eq((int64_t)llround(m.step_time_s * 1e9), sum);
	cs_program_free(&b.prog);
	cs_scenario_free(sc);
}
END_TEST

START_TEST(ddp_overlap_hides_all_but_the_tail)
{
	cs_scenario *on = ddp(2, 8, "true"), *off = ddp(2, 8, "false");
	built b;
	build(on, &b);
	cs_metrics mon = simulate(on), moff = simulate(off);
	double last = 1e-9 * (double)b.dp_ns[b.n_dp - 1];
	ck_assert_double_lt(mon.exposed_comm_s[CS_COMM_DP], moff.exposed_comm_s[CS_COMM_DP]);
	ck_assert_double_ge(mon.exposed_comm_s[CS_COMM_DP], last - 1e-9);
	ck_assert_double_lt(mon.step_time_s, moff.step_time_s);
	/* exposure without overlap is every bucket */
	double all = 0;
	for (int i = 0; i < b.n_dp; i++)
		all += 1e-9 * (double)b.dp_ns[i];
	ck_assert_double_eq_tol(moff.exposed_comm_s[CS_COMM_DP], all, 1e-9);
	cs_program_free(&b.prog);
	cs_scenario_free(on);
	cs_scenario_free(off);
}
END_TEST

START_TEST(ddp_buckets_follow_the_reducer)
{
	/* the first bucket closes at 1 MiB: here after the final norm and the
	 * LM head, the last parameters registered; the others reach 25 MiB
	 * but the last */
	cs_scenario *sc = ddp(1, 8, "true");
	built b;
	build(sc, &b);
	const cs_op *ops = b.prog.ops[CS_STREAM_DP];
	double mib = 1024.0 * 1024.0, total = 0;
	ck_assert_double_eq(ops[0].bytes, (4096.0 + 32000.0 * 4096.0) * 2.0);
	for (int i = 0; i < b.n_dp; i++) {
		ck_assert_int_eq(ops[i].coll, CS_COLL_ALL_REDUCE);
		if (i > 0 && i < b.n_dp - 1)
			ck_assert_double_ge(ops[i].bytes, 25 * mib);
		total += ops[i].bytes;
	}
	/* every gradient once, in bf16: 2 bytes per parameter (6.74B) */
	ck_assert_double_eq_tol(total / 2.0 / 1e9, 6.738, 0.001);
	cs_program_free(&b.prog);
	cs_scenario_free(sc);
}
END_TEST

START_TEST(one_gpu_has_no_communication)
{
	cs_scenario *sc = load_text("cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 1}\n"
				    "model: {preset: llama2-7b}\n"
				    "training: {seq_len: 1024, micro_batch: 1, global_batch: 2}\n");
	cs_metrics m = simulate(sc);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		ck_assert_double_eq(m.exposed_comm_s[k], 0);
	ck_assert_double_eq_tol(m.step_time_s, m.compute_s, 1e-12);
	ck_assert_double_eq(m.bubble_s, 0);
	cs_scenario_free(sc);
}
END_TEST

/* The public API takes NULL where its header says it may. */
START_TEST(null_diag_and_null_arguments)
{
	cs_scenario *sc = ddp(2, 8, "true");
	cs_result *res = NULL;
	ck_assert_int_eq(cs_simulate(sc, NULL, &res, NULL), CS_OK);
	ck_assert_ptr_nonnull(res);
	cs_result_free(res);
	ck_assert_int_eq(cs_simulate(NULL, NULL, &res, NULL), CS_ERR_INPUT);
	ck_assert_ptr_null(res);
	ck_assert_int_eq(cs_simulate(sc, NULL, NULL, NULL), CS_ERR_INPUT);
	cs_scenario *none = NULL;
	ck_assert_int_eq(cs_scenario_load("/nonexistent.yaml", NULL, 0, &none, NULL), CS_ERR_INPUT);
	ck_assert_ptr_null(none);
	cs_result_free(NULL);
	cs_scenario_free(NULL);
	cs_scenario_free(sc);
}
END_TEST

START_TEST(mfu_is_model_flops_over_peak_time)
{
	cs_scenario *sc = ddp(2, 8, "true");
	cs_metrics m = simulate(sc);
	double peak = cs_compute_peak(&sc->cluster.gpu, sc->training.precision);
	/* the headline counts causal attention as computed; Megatron-LM's count
	 * the full square */
	double causal = cs_model_causal_flops_per_step(&sc->model, sc->training.seq_len,
						       sc->training.global_batch);
	double full = cs_model_flops_per_step(&sc->model, sc->training.seq_len, sc->training.global_batch);
	ck_assert(causal < full);
	ck_assert_double_eq_tol(m.model_flops, causal, 1e-6 * causal);
	ck_assert_double_eq_tol(m.model_flops_megatron, full, 1e-6 * full);
	ck_assert_double_eq_tol(m.mfu, m.model_flops / (m.step_time_s * 16 * peak), 1e-12);
	ck_assert_double_eq_tol(m.tflops_per_gpu * 1e12, m.model_flops / m.step_time_s / 16, 1e-3);
	ck_assert_double_eq_tol(m.mfu_megatron, full / (m.step_time_s * 16 * peak), 1e-12);
	ck_assert_double_eq_tol(m.tflops_per_gpu_megatron * 1e12, full / m.step_time_s / 16, 1e-3);
	ck_assert_double_eq_tol(m.tokens_per_s, 16.0 * 2048 / m.step_time_s, 1e-6);
	cs_scenario_free(sc);
}
END_TEST

/* Compute by class sums to the compute time; a model of tiny kernels under
 * eager PyTorch is launch bound (12.5 us of host per kernel), and CUDA
 * graphs (0.84 us) take most of that idle away; a large model's kernels
 * hide their launches. */
/* GEMMs as the table times them: under the power-cap clock the eager run's
 * host idle would speed up its GEMMs, which is the clock's test, not this. */
#define TINY \
	"cluster: {gpu: {preset: h200-sxm-141g, clock: table}, nodes: 1, gpus_per_node: 1}\n" \
	"model: {arch: llama, layers: 4, hidden: 256, heads: 4, kv_heads: 4, ffn: 512, vocab: 1024}\n" \
	"training: {seq_len: 128, micro_batch: 1, global_batch: 2, framework: pytorch, " \
	"cuda_graphs: %s}\n"

static double kinds_sum(const cs_metrics *m)
{
	double s = 0;
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		s += m->compute_kind_s[k];
	return s;
}

START_TEST(compute_by_class_and_launch_bound_kernels)
{
	char buf[512];
	snprintf(buf, sizeof buf, TINY, "false");
	cs_scenario *sc = load_text(buf);
	cs_metrics eager = simulate(sc);
	cs_scenario_free(sc);
	snprintf(buf, sizeof buf, TINY, "true");
	sc = load_text(buf);
	cs_metrics graphs = simulate(sc);
	cs_scenario_free(sc);
	ck_assert_str_eq(eager.profile, "h200-sxm");
	ck_assert_int_eq(eager.profile_derived, 0);
	ck_assert_double_eq_tol(kinds_sum(&eager), eager.compute_s, 1e-9 * eager.compute_s);
	ck_assert(eager.compute_kind_s[CS_COMPUTE_HOST] > 0.5 * eager.compute_s);
	ck_assert(graphs.compute_kind_s[CS_COMPUTE_HOST] < 0.2 * eager.compute_kind_s[CS_COMPUTE_HOST]);
	ck_assert_double_eq_tol(graphs.compute_kind_s[CS_COMPUTE_GEMM], eager.compute_kind_s[CS_COMPUTE_GEMM],
				1e-12);

	sc = ddp(1, 8, "true");
	cs_metrics big = simulate(sc);
	cs_scenario_free(sc);
	ck_assert_str_eq(big.profile, "h100-sxm");
	ck_assert_int_eq(big.profile_derived, 1);
	ck_assert_double_eq_tol(kinds_sum(&big), big.compute_s, 1e-9 * big.compute_s);
	ck_assert(big.compute_kind_s[CS_COMPUTE_HOST] < 1e-3 * big.compute_s);
	ck_assert(big.compute_kind_s[CS_COMPUTE_GEMM] > 0.5 * big.compute_s);
}
END_TEST

/* A collective alone on the fabric takes the tuner's time in both
 * fidelities, over one node or several, ring or tree: DDP without overlap
 * all-reduces 1 GiB buckets one after the other, so each is alone. Before
 * the flow network timed a collective by itself, a ring over two nodes ran
 * there 6x too fast (its channels spread over the nodes' eight NICs, the
 * scaling assumed one). The flow network waits the tuner's latency and
 * drains in its bandwidth time (each bucket within 2 ns; test_flow_agree.c
 * has the table), so the exposures agree to 1e-6. */
static const struct { int nodes; const char *algo; } agree_cases[] = {
	{ 1, "ring" }, { 2, "ring" }, { 4, "ring" }, { 1, "tree" }, { 2, "tree" }, { 4, "tree" },
};

START_TEST(flow_and_analytic_agree_for_a_collective_alone)
{
	int n = agree_cases[_i].nodes;
	double dp[2];
	for (int f = 0; f < 2; f++) {
		char buf[1024];
		snprintf(buf, sizeof buf,
			 "cluster: {gpu: h100-sxm-80g, nodes: %d, gpus_per_node: 8}\n"
			 "model: {preset: llama2-7b}\n"
			 "training: {seq_len: 1024, micro_batch: 1, global_batch: %d}\n"
			 "parallelism: {data_parallel: {overlap: false, bucket: 1 GiB}}\n"
			 "collectives: {algorithm: %s, fidelity: %s}\n",
			 n, 8 * n, agree_cases[_i].algo, f ? "flow" : "analytic");
		cs_scenario *sc = load_text(buf);
		cs_metrics m = simulate(sc);
		dp[f] = m.exposed_comm_s[CS_COMM_DP];
		cs_scenario_free(sc);
	}
	ck_assert(dp[0] > 0);
	ck_assert_msg(fabs(dp[1] - dp[0]) < 1e-6 * dp[0], "%d nodes %s: flow %.9f s, analytic %.9f s", n,
		      agree_cases[_i].algo, dp[1], dp[0]);
}
END_TEST

/* ---- contention --------------------------------------------------------- */

/* Two H100s in one data-parallel group run a hand-made template: one
 * compute op of 1 ms and the collectives of `colls` on their streams (all
 * at t = 0, or after the compute op with `after`). Returns rank 0's
 * compute end and each collective's duration and channels. */
typedef struct contended {
	cs_time end;
	cs_time coll_ns[2];
	int channels[2];
	float rate_of[3];  /* none, the first, both held */
} contended;

/* Two H100s of one node, their kernel profile, topology, tuner and an
 * empty program; rig_close frees them all. */
typedef struct rig {
	cs_scenario *sc;
	cs_mesh mesh;
	cs_kprof *prof;
	cs_topo *topo;
	cs_coll *coll;
	cs_program prog;
} rig;

static void rig_open(rig *g, double contention)
{
	char buf[512];
	snprintf(buf, sizeof buf, "cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 2}\n"
		 "model: {preset: llama2-7b}\n"
		 "training: {seq_len: 1024, micro_batch: 1, global_batch: 2}\n"
		 "collectives: {contention: %g}\n", contention);
	g->sc = load_text(buf);
	cs_mesh_init(&g->mesh, &g->sc->parallel);
	cs_diag diag;
	g->prof = NULL;
	ck_assert_int_eq(cs_hw_load_profile(g->sc, &g->prof, &diag), CS_OK);
	g->topo = cs_topo_new(&g->sc->cluster);
	g->coll = cs_coll_new(&g->sc->cluster, &g->sc->coll);
	cs_program_init(&g->prog);
}

static void rig_close(rig *g)
{
	cs_program_free(&g->prog);
	cs_coll_free(g->coll);
	cs_topo_free(g->topo);
	cs_kprof_free(g->prof);
	cs_scenario_free(g->sc);
}

static contended contend_run(double contention, const double *bytes, int ncolls, int after)
{
	rig g;
	rig_open(&g, contention);
	cs_op work = { .kind = CS_OP_COMPUTE, .ns = 1000000, .layer = -1, .micro = -1 };
	ck_assert_int_eq(cs_program_add(&g.prog, CS_STREAM_COMPUTE, &work, NULL, 0), 1);
	contended c = { 0 };
	cs_group_shape shape = cs_topo_group(g.topo, 0, 1, 2);
	static const cs_stream streams[2] = { CS_STREAM_DP, CS_STREAM_DP_AG };
	static const cs_coll_op ops[2] = { CS_COLL_ALL_REDUCE, CS_COLL_ALL_GATHER };
	for (int i = 0; i < ncolls; i++) {
		cs_op op = { .kind = CS_OP_COLL, .group = CS_GROUP_DP, .coll = (uint8_t)ops[i],
			     .comm = CS_COMM_DP, .bytes = bytes[i], .phase = CS_PHASE_COMM, .layer = -1,
			     .micro = -1 };
		cs_dep dep = { .counter = CS_STREAM_COMPUTE, .value = 1 };
		ck_assert_int_eq(cs_program_add(&g.prog, streams[i], &op, &dep, after), 1);
		cs_coll_choice ch;
		c.coll_ns[i] = cs_coll_time(g.coll, ops[i], &shape, bytes[i], &ch);
		c.channels[i] = ch.channels;
	}
	cs_run_env env = { .sc = g.sc, .mesh = &g.mesh, .progs = &g.prog, .topo = g.topo,
			   .coll = g.coll, .first_rank = 0, .nranks = 2, .prof = g.prof };
	cs_diag diag;
	cs_runner *r = cs_runner_new(&env);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(cs_runner_run(r, &diag), CS_OK);
	c.end = cs_runner_stats(r, 0)->busy;
	ck_assert_int_eq(cs_runner_stats(r, 1)->busy, c.end);
	int k[3] = { 0, c.channels[0], c.channels[0] + c.channels[1] };
	for (int j = 0; j < 3; j++) {
		double slow = 1.0 - cs_kprof_contention(g.prof, k[j] / 132.0);
		c.rate_of[j] = (float)(1.0 - contention * slow);
	}
	cs_runner_free(r);
	rig_close(&g);
	return c;
}

/* A 1 ms compute op overlapped by a collective for a fraction of its length
 * does c x rate of its work in the collective's c, the rest at full speed:
 * it ends at c + (1 ms - c x rate), the rate the measured one for the
 * collective's channels (one CTA each) over the 132 SMs. */
START_TEST(contention_slows_only_the_overlapped_part)
{
	double bytes[1] = { 64e6 };
	contended c = contend_run(1.0, bytes, 1, 0);
	ck_assert_int_gt(c.channels[0], 0);
	ck_assert_int_lt(c.coll_ns[0], 1000000);
	ck_assert(c.rate_of[1] < 1.0f);
	double r = c.rate_of[1];
	double want = (double)c.coll_ns[0] + (1e6 - (double)c.coll_ns[0] * r);
	ck_assert_msg(fabs((double)c.end - want) <= 2.0, "end %lld, want %.1f (collective %lld ns, "
		      "%d channels, rate %.4f)", (long long)c.end, want, (long long)c.coll_ns[0],
		      c.channels[0], r);
	ck_assert(c.end > 1000000);
	/* the scale: 0 is no contention, to the nanosecond */
	ck_assert_int_eq(contend_run(0.0, bytes, 1, 0).end, 1000000);
}
END_TEST

/* No overlap, no change: the collective runs after the compute op. */
START_TEST(contention_needs_overlap)
{
	double bytes[2] = { 64e6, 32e6 };
	ck_assert_int_eq(contend_run(1.0, bytes, 2, 1).end, 1000000);
}
END_TEST

/* Two collectives at once hold the sum of their channels: the rate of both
 * until the shorter ends, then the longer's alone. */
START_TEST(contention_adds_the_channels_of_overlapping_collectives)
{
	double bytes[2] = { 64e6, 16e6 };
	contended c = contend_run(1.0, bytes, 2, 0);
	cs_time a = c.coll_ns[0] < c.coll_ns[1] ? c.coll_ns[0] : c.coll_ns[1];
	cs_time b = c.coll_ns[0] < c.coll_ns[1] ? c.coll_ns[1] : c.coll_ns[0];
	/* the rate with only the longer one held */
	int only = c.coll_ns[0] < c.coll_ns[1] ? c.channels[1] : c.channels[0];
	cs_kprof *prof = NULL;
	cs_diag d;
	ck_assert_int_eq(cs_kprof_load("h100-sxm", &prof, &d), CS_OK);
	double r2 = cs_kprof_contention(prof, only / 132.0);
	cs_kprof_free(prof);
	double both = c.rate_of[2];
	ck_assert(both < r2);
	double done = (double)a * both + (double)(b - a) * r2;
	double want = (double)b + (1e6 - done);
	ck_assert_msg(fabs((double)c.end - want) <= 3.0, "end %lld, want %.1f", (long long)c.end, want);
}
END_TEST

/* NCCL's kernel runs from the moment a member's stream reaches the
 * collective, spinning on its SMs until the others arrive. Rank 1 runs at
 * 1.5x, so rank 0 reaches the all-reduce (after a 1 ms op) 0.5 ms before
 * the collective can start; its next 1 ms op runs beside the waiting kernel
 * at the held channels' rate from the start, then at full speed once the
 * collective of c ns is done: it ends at 1.5 ms + c + (1 ms - r (0.5 ms + c)). */
START_TEST(contention_holds_from_each_members_arrival)
{
	rig g;
	rig_open(&g, 1.0);
	cs_op work = { .kind = CS_OP_COMPUTE, .ns = 1000000, .layer = -1, .micro = -1 };
	ck_assert_int_eq(cs_program_add(&g.prog, CS_STREAM_COMPUTE, &work, NULL, 0), 1);
	ck_assert_int_eq(cs_program_add(&g.prog, CS_STREAM_COMPUTE, &work, NULL, 0), 2);
	cs_op ar = { .kind = CS_OP_COLL, .group = CS_GROUP_DP, .coll = CS_COLL_ALL_REDUCE,
		     .comm = CS_COMM_DP, .bytes = 64e6, .phase = CS_PHASE_COMM, .layer = -1, .micro = -1 };
	cs_dep dep = { .counter = CS_STREAM_COMPUTE, .value = 1 };
	ck_assert_int_eq(cs_program_add(&g.prog, CS_STREAM_DP, &ar, &dep, 1), 1);
	cs_group_shape shape = cs_topo_group(g.topo, 0, 1, 2);
	cs_coll_choice ch;
	cs_time c = cs_coll_time(g.coll, CS_COLL_ALL_REDUCE, &shape, ar.bytes, &ch);
	ck_assert_int_gt(ch.channels, 0);
	double r = (float)cs_kprof_contention(g.prof, ch.channels / 132.0); /* the rate at scale 1 */
	ck_assert(r < 1.0);
	static const float factor[2] = { 1.0f, 1.5f };
	cs_run_env env = { .sc = g.sc, .mesh = &g.mesh, .progs = &g.prog, .topo = g.topo,
			   .coll = g.coll, .first_rank = 0, .nranks = 2, .prof = g.prof,
			   .compute_factor = factor };
	cs_diag diag;
	cs_runner *run = cs_runner_new(&env);
	ck_assert_ptr_nonnull(run);
	ck_assert_int_eq(cs_runner_run(run, &diag), CS_OK);
	double overlap = 0.5e6 + (double)c;
	ck_assert((double)c < 1e6 && r * overlap < 1e6);
	double want = 1.5e6 + (double)c + (1e6 - r * overlap);
	cs_time busy = cs_runner_stats(run, 0)->busy;
	ck_assert_msg(fabs((double)busy - want) <= 3.0, "busy %lld, want %.1f (collective %lld ns, rate %.4f)",
		      (long long)busy, want, (long long)c, r);
	cs_runner_free(run);
	rig_close(&g);
}
END_TEST

/* A run that stops with ops left says where: the first rank and stream
 * that waits, its op, and on what. Here every rank's compute op waits on a
 * gradient all-reduce no program has (a dependency), and then rank 1's
 * program lacks the all-reduce rank 0 waits in (its group's members). */
START_TEST(a_deadlocked_run_says_where_it_waits)
{
	rig g;
	rig_open(&g, 0.0);
	cs_op work = { .kind = CS_OP_COMPUTE, .ns = 1000, .layer = -1, .micro = 3 };
	cs_dep dep = { .counter = CS_STREAM_DP, .value = 1 };
	ck_assert_int_eq(cs_program_add(&g.prog, CS_STREAM_COMPUTE, &work, &dep, 1), 1);
	cs_run_env env = { .sc = g.sc, .mesh = &g.mesh, .progs = &g.prog, .topo = g.topo,
			   .coll = g.coll, .first_rank = 0, .nranks = 2 };
	cs_diag diag = { { 0 } };
	cs_runner *run = cs_runner_new(&env);
	ck_assert_ptr_nonnull(run);
	ck_assert_int_eq(cs_runner_run(run, &diag), CS_ERR_SIM);
	ck_assert_str_eq(diag.msg, "simulation deadlocked: rank 0 stream 'compute' stopped at op 0 of 1 "
				   "(micro-batch 3, waiting on a dependency)");
	cs_runner_free(run);
	rig_close(&g);

	rig_open(&g, 0.0);
	cs_op ar = { .kind = CS_OP_COLL, .group = CS_GROUP_DP, .coll = CS_COLL_ALL_REDUCE,
		     .comm = CS_COMM_DP, .bytes = 1e6, .phase = CS_PHASE_COMM, .layer = -1, .micro = 0 };
	ck_assert_int_eq(cs_program_add(&g.prog, CS_STREAM_COMPUTE, &work, NULL, 0), 1);
	ck_assert_int_eq(cs_program_add(&g.prog, CS_STREAM_DP, &ar, NULL, 0), 1);
	cs_program progs[2] = { g.prog };
	cs_program_init(&progs[1]);
	ck_assert_int_eq(cs_program_add(&progs[1], CS_STREAM_COMPUTE, &work, NULL, 0), 1);
	static const uint16_t tmpl_of[2] = { 0, 1 };
	env = (cs_run_env){ .sc = g.sc, .mesh = &g.mesh, .progs = progs, .tmpl_of = tmpl_of, .ntmpl = 2,
			    .topo = g.topo, .coll = g.coll, .first_rank = 0, .nranks = 2 };
	run = cs_runner_new(&env);
	ck_assert_ptr_nonnull(run);
	ck_assert_int_eq(cs_runner_run(run, &diag), CS_ERR_SIM);
	ck_assert_str_eq(diag.msg, "simulation deadlocked: rank 0 stream 'dp' stopped at op 0 of 1 "
				   "(micro-batch 0, waiting for its group's other members)");
	cs_runner_free(run);
	cs_program_free(&progs[1]);
	rig_close(&g);
}
END_TEST

/* ---- document masks ----------------------------------------------------- */

#define ONE_H200 \
	"cluster: {gpu: h200-sxm-141g, nodes: 1, gpus_per_node: 1}\n" \
	"model: {arch: llama, layers: 4, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 32000}\n" \
	"training: {seq_len: 8192, micro_batch: 1, global_batch: 2}\n"

/* Sequences of N equal documents: every micro-batch's causal attention does
 * 1/N of the unmasked work and takes floor + (1 - floor)/N of its time, the
 * floor the profile's (FlexAttention measured with 1 to 16 documents); the
 * rest of the step is unchanged. */
START_TEST(document_mask_scales_attention_by_the_closed_form)
{
	/* GEMMs as the table times them: the power-cap clock would hand the
	 * attention time saved to the GEMMs' clock, the clock's own test */
	const char *table[] = { "cluster.gpu.clock=table" };
	cs_scenario *sc = cs_test_load(ONE_H200, table, 1);
	cs_metrics one = simulate(sc);
	cs_scenario_free(sc);
	const char *set[] = { "training.documents.mean=1024", "training.documents.distribution=fixed",
			      "cluster.gpu.clock=table" };
	sc = cs_test_load(ONE_H200, set, 3);
	cs_metrics eight = simulate(sc);
	cs_kprof *prof = NULL;
	cs_diag d;
	ck_assert_int_eq(cs_hw_load_profile(sc, &prof, &d), CS_OK);
	double floor_share = cs_kprof_document_floor(prof);
	cs_kprof_free(prof);
	cs_scenario_free(sc);
	ck_assert(floor_share > 0.05 && floor_share < 0.2);
	double g = floor_share + (1.0 - floor_share) / 8.0;
	double attn = one.compute_kind_s[CS_COMPUTE_ATTN];
	double want = one.step_time_s - attn * (1.0 - g);
	/* one rounding per attention-carrying op */
	ck_assert_msg(fabs(eight.step_time_s - want) < 200e-9, "step %.9f, want %.9f", eight.step_time_s,
		      want);
}
END_TEST

/* Drawn lengths: the same seed gives the same steps, each step packs new
 * documents, and a micro-batch of shorter documents is never slower. */
START_TEST(document_draws_follow_the_seed_and_the_step)
{
	const char *a[] = { "training.documents.mean=2048", "simulate.steps=4" };
	const char *b[] = { "training.documents.mean=2048", "simulate.steps=4", "simulate.seed=5" };
	cs_scenario *sc = cs_test_load(ONE_H200, a, 2);
	cs_metrics m1 = simulate(sc), m2 = simulate(sc);
	cs_scenario_free(sc);
	sc = cs_test_load(ONE_H200, b, 3);
	cs_metrics m3 = simulate(sc);
	cs_scenario_free(sc);
	sc = load_text(ONE_H200);
	cs_metrics whole = simulate(sc);
	cs_scenario_free(sc);
	ck_assert(m1.step_time_s == m2.step_time_s && m1.step_time_max_s == m2.step_time_max_s);
	ck_assert(m1.step_time_s != m3.step_time_s);
	ck_assert(m1.step_time_p50_s < m1.step_time_max_s);
	ck_assert(m1.step_time_max_s < whole.step_time_s);
	ck_assert_int_eq(m1.steps, 4);
}
END_TEST

/* ---- whole runs ----------------------------------------------------------- */

#define THREE_D \
	"cluster: {gpu: h100-sxm-80g, nodes: 8, gpus_per_node: 8}\n" \
	"model: {arch: llama, layers: 16, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256}\n" \
	"training: {seq_len: 4096, micro_batch: 1, global_batch: 32}\n" \
	"parallelism: {tp: 4, pp: 4, dp: 4, sequence_parallel: true, " \
	"pipeline: {schedule: %s, virtual_stages: %d}, data_parallel: {sharding: %s}}\n" \
	"simulate: {fold: %s}\n"

static cs_scenario *three_d(const char *sched, int v, const char *shard, const char *fold)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), THREE_D, sched, v, shard, fold);
	return load_text(buf);
}

START_TEST(same_scenario_same_result_bit_for_bit)
{
	cs_scenario *a = three_d("1f1b", 1, "zero1", "false");
	cs_metrics x = simulate(a), y = simulate(a);
	ck_assert(x.step_time_s == y.step_time_s);
	ck_assert(x.events == y.events);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		ck_assert(x.exposed_comm_s[k] == y.exposed_comm_s[k]);
	cs_scenario_free(a);
}
END_TEST

static const struct {
	const char *sched;
	int v;
	const char *shard;
} fold_cases[] = {
	{ "1f1b", 1, "none" }, { "gpipe", 1, "zero1" }, { "interleaved", 2, "zero2" },
	{ "zb-h1", 1, "zero3" }, { "zb-v", 2, "shard-grad-op" },
};

/* Expert parallelism with its own gradient group folds exactly too: the
 * experts' buckets over (dp / ep) x cp ranks, the dense ones over dp x cp,
 * each sharding of the optimizer. */
START_TEST(expert_data_parallel_folds_exactly)
{
	static const char *const shards[] = { "none", "zero1", "zero2" };
	char text[1024];
	snprintf(text, sizeof text,
		 "cluster: {gpu: h100-sxm-80g, nodes: 4, gpus_per_node: 8}\n"
		 "model: {preset: deepseek-v3-like, layers: 4, dense_layers: 1, experts: 16}\n"
		 "training: {seq_len: 1024, micro_batch: 1, global_batch: 32}\n"
		 "parallelism: {pp: 2, ep: 4, cp: 2, data_parallel: {sharding: %s}}\n"
		 "fleet: ideal\nsimulate: {fold: %%s}\n",
		 shards[_i]);
	char full[1100], fold[1100];
	snprintf(full, sizeof full, text, "false");
	snprintf(fold, sizeof fold, text, "true");
	cs_scenario *a = load_text(full), *b = load_text(fold);
	cs_metrics ma = simulate(a), mb = simulate(b);
	ck_assert_msg(ma.step_time_s == mb.step_time_s, "%s: full %.9f folded %.9f", shards[_i], ma.step_time_s,
		      mb.step_time_s);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		ck_assert(ma.exposed_comm_s[k] == mb.exposed_comm_s[k]);
	cs_scenario_free(a);
	cs_scenario_free(b);
}
END_TEST

START_TEST(folded_run_equals_full_run)
{
	cs_scenario *full = three_d(fold_cases[_i].sched, fold_cases[_i].v, fold_cases[_i].shard, "false");
	cs_scenario *fold = three_d(fold_cases[_i].sched, fold_cases[_i].v, fold_cases[_i].shard, "true");
	cs_metrics a = simulate(full), b = simulate(fold);
	ck_assert_msg(a.step_time_s == b.step_time_s, "%s: full %.9f folded %.9f",
		      fold_cases[_i].sched, a.step_time_s, b.step_time_s);
	ck_assert(a.compute_s == b.compute_s);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		ck_assert(a.exposed_comm_s[k] == b.exposed_comm_s[k]);
	ck_assert_int_lt(b.events, a.events);
	cs_scenario_free(full);
	cs_scenario_free(fold);
}
END_TEST

START_TEST(pipeline_bubble_shrinks_with_interleaving)
{
	cs_scenario *plain = three_d("1f1b", 1, "zero1", "true");
	cs_scenario *inter = three_d("interleaved", 2, "zero1", "true");
	cs_metrics a = simulate(plain), b = simulate(inter);
	ck_assert_double_gt(a.bubble_fraction, 0.05);
	ck_assert_double_lt(b.bubble_fraction, a.bubble_fraction);
	ck_assert_double_lt(b.step_time_s, a.step_time_s);
	cs_scenario_free(plain);
	cs_scenario_free(inter);
}
END_TEST

/* Random plans on small clusters: every one runs to completion, and folding
 * the symmetric ranks changes nothing. */
static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static int64_t pick_divisor(uint64_t *x, int64_t n, int64_t most)
{
	int64_t d[64], k = 0;
	for (int64_t i = 1; i <= n && i <= most; i++)
		if (n % i == 0)
			d[k++] = i;
	return d[lcg(x) % (uint64_t)k];
}

START_TEST(random_plans_run_and_fold_exactly)
{
	static const char *const scheds[] = { "gpipe", "1f1b", "interleaved", "zb-h1", "zb-v" };
	static const char *const shards[] = { "none", "zero1", "zero2", "zero3", "shard-grad-op", "hybrid" };
	static const char *const rcs[] = { "none", "selective", "full" };
	uint64_t x = 0x5eed + (uint64_t)_i;
	int64_t gpn = 1 << (lcg(&x) % 4), nodes = 1 << (lcg(&x) % 3), g = gpn * nodes;
	int64_t tp = pick_divisor(&x, g, 8), pp = pick_divisor(&x, g / tp, 4);
	int64_t cp = pick_divisor(&x, g / tp / pp, 2), dp = g / tp / pp / cp;
	const char *sched = pp > 1 ? scheds[lcg(&x) % 5] : "1f1b";
	int64_t v = !strcmp(sched, "interleaved") ? 2 : !strcmp(sched, "zb-v") ? 2 : 1;
	int64_t m = !strcmp(sched, "interleaved") ? pp * (1 + (int64_t)(lcg(&x) % 2)) : 1 + (int64_t)(lcg(&x) % 6);
	char text[2048];
	snprintf(text, sizeof(text),
		 "cluster: {gpu: h100-sxm-80g, nodes: %lld, gpus_per_node: %lld}\n"
		 "model: {arch: %s, layers: 8, hidden: 1024, heads: 16, kv_heads: %d, ffn: 4096, vocab: 32000}\n"
		 "training: {seq_len: 1024, micro_batch: 1, global_batch: %lld}\n"
		 "parallelism: {tp: %lld, pp: %lld, cp: %lld, dp: %lld, sequence_parallel: %s,\n"
		 "  pipeline: {schedule: %s%s}, recompute: %s,\n"
		 "  data_parallel: {sharding: %s, overlap: %s}}\n"
		 "simulate: {fold: %%s}\n",
		 (long long)nodes, (long long)gpn, lcg(&x) % 2 ? "llama" : "gpt", lcg(&x) % 2 ? 16 : 4,
		 (long long)(m * dp), (long long)tp, (long long)pp, (long long)cp, (long long)dp,
		 tp > 1 && lcg(&x) % 2 ? "true" : "false", sched, v > 1 ? ", virtual_stages: 2" : "",
		 rcs[lcg(&x) % 3], shards[lcg(&x) % 6], lcg(&x) % 2 ? "true" : "false");
	char full[2100], fold[2100];
	snprintf(full, sizeof(full), text, "false");
	snprintf(fold, sizeof(fold), text, "true");
	cs_scenario *a = load_text(full), *b = load_text(fold);
	cs_metrics ma = simulate(a), mb = simulate(b);
	ck_assert_msg(ma.step_time_s > 0, "%s", full);
	ck_assert_msg(ma.step_time_s == mb.step_time_s, "folded %.9f, full %.9f:\n%s", mb.step_time_s,
		      ma.step_time_s, full);
	cs_scenario_free(a);
	cs_scenario_free(b);
}
END_TEST

/* n random perturbations of g GPUs as a `stragglers:` list's entries: a
 * slow GPU, two slow ranks, or a degraded NVLink or NIC port. */
static void random_stragglers(uint64_t *x, int64_t g, int n, char *pert, size_t cap)
{
	pert[0] = 0;
	for (int k = 0; k < n; k++) {
		char one[128];
		int64_t gpu = (int64_t)(lcg(x) % (uint64_t)g);
		switch (lcg(x) % 3) {
		case 0:
			snprintf(one, sizeof one, "  - {gpu: %lld, compute: 1.%02d}\n", (long long)gpu,
				 10 + (int)(lcg(x) % 40));
			break;
		case 1:
			snprintf(one, sizeof one, "  - {ranks: [%lld, %lld], compute: 1.2}\n",
				 (long long)gpu, (long long)(gpu + (gpu + 1 < g)));
			break;
		default:
			snprintf(one, sizeof one, "  - {link: %s, gpu: %lld, bandwidth: 0.5, latency: 5 us}\n",
				 lcg(x) % 2 ? "nic" : "nvlink", (long long)gpu);
		}
		strncat(pert, one, cap - strlen(pert) - 1);
	}
}

/* Folding with perturbations: the replicas a straggler or a degraded port
 * touches are simulated whole, the rest folded, and the run equals the
 * full run exactly, step, exposure and idle statistics alike. */
START_TEST(random_perturbations_fold_exactly)
{
	static const char *const scheds[] = { "gpipe", "1f1b", "interleaved", "zb-h1" };
	static const char *const shards[] = { "none", "zero1", "zero3", "hybrid" };
	uint64_t x = 0xfa11 + (uint64_t)_i;
	int64_t gpn = 2 << (lcg(&x) % 3), nodes = 2 << (lcg(&x) % 2), g = gpn * nodes;
	int64_t tp = pick_divisor(&x, gpn, 4), pp = pick_divisor(&x, g / tp, 4);
	int64_t dp = g / tp / pp;
	const char *sched = pp > 1 ? scheds[lcg(&x) % 4] : "1f1b";
	int64_t v = !strcmp(sched, "interleaved") ? 2 : 1;
	int64_t m = !strcmp(sched, "interleaved") ? pp : 1 + (int64_t)(lcg(&x) % 4);
	char pert[512];
	random_stragglers(&x, g, 1 + (int)(lcg(&x) % 3), pert, sizeof pert);
	char text[2048];
	snprintf(text, sizeof(text),
		 "cluster: {gpu: h100-sxm-80g, nodes: %lld, gpus_per_node: %lld}\n"
		 "model: {arch: llama, layers: 8, hidden: 1024, heads: 16, kv_heads: 4, ffn: 4096, vocab: 32000}\n"
		 "training: {seq_len: 1024, micro_batch: 1, global_batch: %lld}\n"
		 "parallelism: {tp: %lld, pp: %lld, dp: %lld,\n"
		 "  pipeline: {schedule: %s%s}, data_parallel: {sharding: %s}}\n"
		 "stragglers:\n%s"
		 "simulate: {fold: %%s}\n",
		 (long long)nodes, (long long)gpn, (long long)(m * dp), (long long)tp, (long long)pp,
		 (long long)dp, sched, v > 1 ? ", virtual_stages: 2" : "", shards[lcg(&x) % 4], pert);
	char full[2100], fold[2100];
	snprintf(full, sizeof(full), text, "false");
	snprintf(fold, sizeof(fold), text, "true");
	cs_scenario *a = load_text(full), *b = load_text(fold);
	cs_metrics ma = simulate(a), mb = simulate(b);
	ck_assert_msg(ma.step_time_s > 0, "%s", full);
	ck_assert_msg(ma.step_time_s == mb.step_time_s, "folded %.9f, full %.9f:\n%s", mb.step_time_s,
		      ma.step_time_s, full);
	ck_assert(ma.baseline_step_time_s == mb.baseline_step_time_s);
	ck_assert(ma.compute_s == mb.compute_s);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		ck_assert_msg(ma.exposed_comm_s[k] == mb.exposed_comm_s[k], "%s", full);
	ck_assert_msg(ma.idle_mean_s == mb.idle_mean_s && ma.idle_min_s == mb.idle_min_s &&
		      ma.idle_max_s == mb.idle_max_s, "idle %.9f/%.9f/%.9f folded %.9f/%.9f/%.9f:\n%s",
		      ma.idle_min_s, ma.idle_mean_s, ma.idle_max_s, mb.idle_min_s, mb.idle_mean_s,
		      mb.idle_max_s, full);
	ck_assert_int_eq(ma.critical_rank, mb.critical_rank);
	ck_assert_int_le(mb.events, ma.events);
	/* the baseline beside the perturbed steps is folded, and still the
	 * full unperturbed run's step */
	a->n_perturbations = 0;
	cs_metrics plain = simulate(a);
	ck_assert_msg(plain.step_time_s == ma.baseline_step_time_s, "baseline %.9f, unperturbed %.9f:\n%s",
		      ma.baseline_step_time_s, plain.step_time_s, full);
	cs_scenario_free(a);
	cs_scenario_free(b);
}
END_TEST

/* Every figure a run reports but its cost (events, wall time). */
static void expect_same_run(const cs_metrics *a, const cs_metrics *b, const char *what, const char *text)
{
	ck_assert_msg(a->step_time_s == b->step_time_s, "%s: step %.9f, %.9f:\n%s", what, a->step_time_s,
		      b->step_time_s, text);
	ck_assert_msg(a->step_time_max_s == b->step_time_max_s && a->baseline_step_time_s ==
		      b->baseline_step_time_s, "%s:\n%s", what, text);
	ck_assert_msg(a->compute_s == b->compute_s && a->bubble_s == b->bubble_s, "%s:\n%s", what, text);
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		ck_assert_msg(a->compute_kind_s[k] == b->compute_kind_s[k], "%s:\n%s", what, text);
	for (int k = 0; k < CS_COMM_KINDS; k++) {
		ck_assert_msg(a->exposed_comm_s[k] == b->exposed_comm_s[k], "%s:\n%s", what, text);
		ck_assert_msg(!strcmp(a->coll_choice[k], b->coll_choice[k]), "%s: %s, %s:\n%s", what,
			      a->coll_choice[k], b->coll_choice[k], text);
		ck_assert_msg(a->path.comm_s[k] == b->path.comm_s[k], "%s:\n%s", what, text);
	}
	ck_assert_msg(a->idle_min_s == b->idle_min_s && a->idle_mean_s == b->idle_mean_s &&
		      a->idle_max_s == b->idle_max_s, "%s:\n%s", what, text);
	ck_assert_msg(a->activation_peak_bytes == b->activation_peak_bytes, "%s:\n%s", what, text);
	ck_assert_msg(a->critical_rank == b->critical_rank, "%s:\n%s", what, text);
	ck_assert_msg(a->path.valid == b->path.valid && a->path.compute_s == b->path.compute_s &&
		      a->path.hops == b->path.hops && a->path.end_rank == b->path.end_rank &&
		      a->path.longest_rank == b->path.longest_rank && a->path.longest_s == b->path.longest_s,
		      "%s: critical path:\n%s", what, text);
}

/* Replicas placed otherwise in the fabric differ: here pods of 24 GPUs
 * over replicas of 16, so replicas 1 and 4 send their pipeline messages
 * across a pod's oversubscribed edge. A folded run simulates one replica
 * of each placement and equals the full run, whose replicas do differ. */
START_TEST(replicas_across_a_pod_edge_fold_exactly)
{
	static const char *const text =
		"cluster: {gpu: h100-sxm-80g, nodes: 12, gpus_per_node: 8,\n"
		"  fabric: {leaf_gpus: 8, pod_gpus: 24, pod_oversubscription: 7}}\n"
		"model: {arch: llama, layers: 8, hidden: 1024, heads: 16, kv_heads: 4, ffn: 4096, vocab: 32000}\n"
		"training: {seq_len: 1024, micro_batch: 1, global_batch: 24}\n"
		"parallelism: {tp: 8, pp: 2, dp: 6, pipeline: {schedule: 1f1b}}\n"
		"simulate: {fold: %s}\n";
	char full[1024], fold[1024];
	snprintf(full, sizeof full, text, "false");
	snprintf(fold, sizeof fold, text, "true");
	cs_scenario *a = load_text(full), *b = load_text(fold);
	cs_metrics ma = simulate(a), mb = simulate(b);
	ck_assert_int_eq(ma.route.simulated_ranks, 96);
	ck_assert(!ma.route.folded);
	ck_assert_int_eq(mb.route.simulated_ranks, 32); /* replicas 0 and 1, whole */
	ck_assert(mb.route.folded);
	ck_assert(ma.step_time_s == mb.step_time_s && ma.compute_s == mb.compute_s);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		ck_assert(ma.exposed_comm_s[k] == mb.exposed_comm_s[k]);
	ck_assert(ma.idle_min_s == mb.idle_min_s && ma.idle_mean_s == mb.idle_mean_s &&
		  ma.idle_max_s == mb.idle_max_s);
	ck_assert(ma.idle_min_s < ma.idle_max_s); /* the replicas across the edge end later */
	ck_assert_int_eq(ma.critical_rank, mb.critical_rank);
	cs_scenario_free(a);
	cs_scenario_free(b);
}
END_TEST

/* A run split into parts (data-parallel replicas, each part with its own
 * engine, synchronised in windows) reports exactly what the whole run
 * does, and the same on one thread as on three: random plans, stragglers,
 * degraded ports and varied GPUs, every figure bit for bit. */
START_TEST(random_plans_split_exactly)
{
	static const char *const scheds[] = { "gpipe", "1f1b", "interleaved", "zb-h1" };
	static const char *const shards[] = { "none", "zero1", "zero3", "hybrid", "shard-grad-op" };
	uint64_t x = 0x5917 + (uint64_t)_i;
	int64_t gpn = 2 << (lcg(&x) % 3), nodes = 2 << (lcg(&x) % 2), g = gpn * nodes;
	/* at least two replicas: g / tp is even */
	int64_t tp = pick_divisor(&x, gpn, 4), pp = pick_divisor(&x, g / tp / 2, 4);
	int64_t cp = pick_divisor(&x, g / tp / pp / 2, 2), dp = g / tp / pp / cp;
	const char *sched = pp > 1 ? scheds[lcg(&x) % 4] : "1f1b";
	int64_t v = !strcmp(sched, "interleaved") ? 2 : 1;
	int64_t m = !strcmp(sched, "interleaved") ? pp : 1 + (int64_t)(lcg(&x) % 4);
	char pert[512];
	int npert = (int)(lcg(&x) % 3);
	random_stragglers(&x, g, npert, pert, sizeof pert);
	char text[2048];
	snprintf(text, sizeof(text),
		 "cluster: {gpu: h100-sxm-80g, nodes: %lld, gpus_per_node: %lld, gpu_variation: %s}\n"
		 "model: {arch: llama, layers: 8, hidden: 1024, heads: 16, kv_heads: 4, ffn: 4096, vocab: 32000}\n"
		 "training: {seq_len: 2048, micro_batch: 1, global_batch: %lld}\n"
		 "parallelism: {tp: %lld, pp: %lld, cp: %lld, dp: %lld, sequence_parallel: %s,\n"
		 "  pipeline: {schedule: %s%s}, data_parallel: {sharding: %s, overlap: %s}}\n"
		 "%s%s"
		 "simulate: {threads: %%d}\n",
		 (long long)nodes, (long long)gpn, lcg(&x) % 3 ? "0" : "0.03", (long long)(m * dp),
		 (long long)tp, (long long)pp, (long long)cp, (long long)dp,
		 tp > 1 && lcg(&x) % 2 ? "true" : "false", sched, v > 1 ? ", virtual_stages: 2" : "",
		 shards[lcg(&x) % 5], lcg(&x) % 4 ? "true" : "false", npert ? "stragglers:\n" : "", pert);
	cs_metrics runs[3];
	for (int i = 0; i < 3; i++) {
		char t[2100];
		snprintf(t, sizeof(t), text, i == 2 ? 3 : 1);
		cs_scenario *sc = load_text(t);
		/* whole, or a part per replica (a run this small stays whole
		 * when the runner chooses) */
		sc->sim.parts = i == 0 ? 1 : dp;
		runs[i] = simulate(sc);
		cs_scenario_free(sc);
	}
	ck_assert_msg(runs[0].step_time_s > 0, "%s", text);
	expect_same_run(&runs[0], &runs[1], "whole and split", text);
	expect_same_run(&runs[1], &runs[2], "one thread and three", text);
	ck_assert_int_eq(runs[1].events, runs[2].events);
	/* each part batches its own same-time completions: a split run counts
	 * more engine events, which shows that it was split */
	ck_assert_msg(runs[1].events > runs[0].events, "not split: %s", text);
}
END_TEST

/* Left to the runner, a run splits into parts of at least 2,048 ranks:
 * one of 2,048 GPUs stays whole, one of 4,096 splits (a split run counts
 * more engine events), and either reports what the whole run does. */
START_TEST(small_runs_stay_whole_when_the_runner_chooses)
{
	static const int64_t nodes[] = { 256, 512 };
	for (int i = 0; i < 2; i++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "cluster: {gpu: h100-sxm-80g, nodes: %lld, gpus_per_node: 8}\n"
			 "model: {arch: llama, layers: 2, hidden: 1024, heads: 16, ffn: 4096, vocab: 32000}\n"
			 "training: {seq_len: 1024, micro_batch: 1, global_batch: %lld}\n"
			 "parallelism: {tp: 8, dp: %lld}\n",
			 (long long)nodes[i], (long long)nodes[i], (long long)nodes[i]);
		cs_metrics m[2];
		for (int whole = 0; whole < 2; whole++) {
			cs_scenario *sc = load_text(text);
			sc->sim.parts = whole ? 1 : 0;
			m[whole] = simulate(sc);
			cs_scenario_free(sc);
		}
		expect_same_run(&m[1], &m[0], "whole and the runner's choice", text);
		if (i == 0)
			ck_assert_int_eq(m[0].events, m[1].events);
		else
			ck_assert_int_gt(m[0].events, m[1].events);
	}
}
END_TEST

/* On a torus hybrid sharding shards inside a pod and replicates across pods
 * (PaLM's layout): two 4x4 pods with TP 4 shard the weights four ways, as
 * ZeRO-3 does in one pod alone. */
START_TEST(hybrid_sharding_on_a_torus_shards_within_a_pod)
{
	cs_scenario *two = load_text("cluster: {gpu: tpu-v4, nodes: 8, gpus_per_node: 4, "
				     "topology: torus,\n  torus: {shape: 4x4}, scale_out: "
				     "{nics_per_node: 1, bandwidth: 6.6 GB/s}}\n"
				     "model: {arch: llama, layers: 4, hidden: 1024, heads: 16, "
				     "ffn: 4096, vocab: 32000}\n"
				     "training: {seq_len: 1024, micro_batch: 1, global_batch: 8}\n"
				     "parallelism: {tp: 4, dp: 8, data_parallel: {sharding: hybrid}}\n");
	cs_scenario *one = load_text("cluster: {gpu: tpu-v4, nodes: 4, gpus_per_node: 4, "
				     "topology: torus,\n  torus: {shape: 4x4}, scale_out: "
				     "{nics_per_node: 1, bandwidth: 6.6 GB/s}}\n"
				     "model: {arch: llama, layers: 4, hidden: 1024, heads: 16, "
				     "ffn: 4096, vocab: 32000}\n"
				     "training: {seq_len: 1024, micro_batch: 1, global_batch: 4}\n"
				     "parallelism: {tp: 4, dp: 4, data_parallel: {sharding: zero3}}\n");
	ck_assert_int_eq(cs_cluster_shard_unit(&two->cluster), 16);
	cs_mesh m;
	cs_mesh_init(&m, &two->parallel);
	cs_group g = cs_mesh_group(&m, CS_GROUP_DP_INTRA, 0, cs_cluster_shard_unit(&two->cluster));
	ck_assert_int_eq(cs_group_size(&g), 4);
	for (int64_t i = 0; i < cs_group_size(&g); i++)
		ck_assert_int_lt(cs_group_member(&g, i), 16); /* all in the first pod */
	cs_metrics a = simulate(two), b = simulate(one);
	ck_assert(a.memory.weights == b.memory.weights);
	ck_assert(a.memory.optimizer == b.memory.optimizer);
	ck_assert_double_gt(a.step_time_s, 0);
	cs_scenario_free(two);
	cs_scenario_free(one);
}
END_TEST

static Suite *run_suite(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_create("mesh");
	tcase_add_test(tc, mesh_coordinates_follow_the_order);
	tcase_add_test(tc, mesh_groups_partition_the_ranks);
	tcase_add_test(tc, mesh_expert_data_parallel_group_by_hand);
	tcase_add_test(tc, mesh_folded_expert_groups_by_hand);
	tcase_add_loop_test(tc, expert_data_parallel_folds_exactly, 0, 3);
	suite_add_tcase(s, tc);
	tc = tcase_create("ddp");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ddp_without_overlap_is_compute_plus_buckets);
	tcase_add_test(tc, ddp_overlap_hides_all_but_the_tail);
	tcase_add_test(tc, ddp_buckets_follow_the_reducer);
	tcase_add_test(tc, one_gpu_has_no_communication);
	tcase_add_test(tc, mfu_is_model_flops_over_peak_time);
	tcase_add_test(tc, null_diag_and_null_arguments);
	tcase_add_test(tc, compute_by_class_and_launch_bound_kernels);
	tcase_add_test(tc, document_mask_scales_attention_by_the_closed_form);
	tcase_add_test(tc, document_draws_follow_the_seed_and_the_step);
	tcase_add_test(tc, contention_slows_only_the_overlapped_part);
	tcase_add_test(tc, contention_needs_overlap);
	tcase_add_test(tc, contention_adds_the_channels_of_overlapping_collectives);
	tcase_add_test(tc, contention_holds_from_each_members_arrival);
	tcase_add_test(tc, a_deadlocked_run_says_where_it_waits);
	tcase_add_loop_test(tc, flow_and_analytic_agree_for_a_collective_alone, 0,
			    (int)(sizeof agree_cases / sizeof agree_cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("runs");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, same_scenario_same_result_bit_for_bit);
	tcase_add_loop_test(tc, folded_run_equals_full_run, 0, sizeof(fold_cases) / sizeof(fold_cases[0]));
	tcase_add_test(tc, pipeline_bubble_shrinks_with_interleaving);
	tcase_add_loop_test(tc, random_plans_run_and_fold_exactly, 0, 40);
	tcase_add_loop_test(tc, random_perturbations_fold_exactly, 0, 40);
	tcase_add_test(tc, replicas_across_a_pod_edge_fold_exactly);
	tcase_add_loop_test(tc, random_plans_split_exactly, 0, 40);
	tcase_add_test(tc, small_runs_stay_whole_when_the_runner_chooses);
	tcase_add_test(tc, hybrid_sharding_on_a_torus_shards_within_a_pod);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(run_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
