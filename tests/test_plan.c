/*
 * test_plan.c - the programs' traffic against the seed's closed forms, and
 * a golden run of a 3D-parallel scenario.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"
#include "coll/schedule.h"
#include "config/config.h"
#include "config/scenario.h"
#include "hw/kprof.h"
#include "model/model.h"
#include "program/build.h"
#include "program/build_int.h"
#include "program/mesh.h"
#include "program/program.h"
#include "report/report.h"
#include "report/trace.h"
#include "scenario_text.h"
#include "study/study.h"

#define load_text cs_test_load

/* The program of `sc` (the caller frees it). */
static void build_program(const cs_scenario *sc, cs_program *prog)
{
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program_init(prog);
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_plan_build(sc, &mesh, NULL, prog, &diag), CS_OK);
}

/* Bytes one rank sends per step for data parallelism, from its program. */
static double dp_bytes_on_wire(const cs_scenario *sc)
{
	cs_program prog;
	build_program(sc, &prog);
	double sum = 0;
	int64_t n = sc->parallel.dp;
	for (int s = CS_STREAM_DP; s <= CS_STREAM_DP_AG; s++)
		for (int i = 0; i < prog.nops[s]; i++)
			sum += cs_coll_ring_bytes_on_wire((cs_coll_op)prog.ops[s][i].coll, prog.ops[s][i].bytes, n);
	cs_program_free(&prog);
	return sum;
}

#define DP16 \
	"cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n" \
	"model: {preset: llama3-8b}\n" \
	"training: {seq_len: 1024, micro_batch: 1, global_batch: 16}\n"

static const struct { const char *sharding; double ratio; } traffic_cases[] = {
	{ "parallelism.data_parallel.sharding=zero1", 1.0 },
	{ "parallelism.data_parallel.sharding=zero2", 1.0 },
	{ "parallelism.data_parallel.sharding=shard-grad-op", 1.0 },
	{ "parallelism.data_parallel.sharding=zero3", 1.5 },
};

START_TEST(dp_traffic_against_ddp)
{
	cs_scenario *ddp = load_text(DP16, NULL, 0);
	const char *set[] = { traffic_cases[_i].sharding };
	cs_scenario *sh = load_text(DP16, set, 1);
	double base = dp_bytes_on_wire(ddp), got = dp_bytes_on_wire(sh);
	/* DDP: 2 (N-1)/N * 2P bytes, P the parameters (bf16 gradients) */
	double P = (double)cs_model_params(&ddp->model).total, N = 16;
	ck_assert_double_eq_tol(base / (2.0 * (N - 1) / N * 2.0 * P), 1.0, 1e-9);
	ck_assert_msg(fabs(got / base - traffic_cases[_i].ratio) < 1e-9, "%s: %.12f x DDP",
		      traffic_cases[_i].sharding, got / base);
	cs_scenario_free(ddp);
	cs_scenario_free(sh);
}
END_TEST

/* Latent attention's weights in the buckets: DDP moves every parameter
 * the model counts, with a query latent and without (the step's edges,
 * whose loss all-reduce adds 8 bytes, left out). */
START_TEST(dp_traffic_counts_latent_attention)
{
	const char *text = "cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n"
			   "model: {preset: deepseek-v3, layers: 2, experts: 0, top_k: 0, shared_experts: 0, dense_layers: 0}\n"
			   "training: {seq_len: 1024, micro_batch: 1, global_batch: 16, step_edges: false}\n";
	const char *sets[][1] = { { "model.q_lora_rank=1536" }, { "model.q_lora_rank=0" } };
	for (int i = 0; i < 2; i++) {
		cs_scenario *sc = load_text(text, sets[i], 1);
		double P = (double)cs_model_params(&sc->model).total, N = 16;
		double got = dp_bytes_on_wire(sc) / (2.0 * (N - 1) / N * 2.0);
		ck_assert_msg(fabs(got - P) < 1e-12 * P, "%s: %.0f parameters moved, %.0f counted", sets[i][0], got, P);
		cs_scenario_free(sc);
	}
}
END_TEST

/* Bytes of the DP streams' collectives over `group`, per step. */
static double dp_bytes_over(const cs_scenario *sc, cs_group_kind group, cs_coll_op coll)
{
	cs_program prog;
	build_program(sc, &prog);
	double sum = 0;
	for (int s = CS_STREAM_DP; s <= CS_STREAM_DP_AG; s++)
		for (int i = 0; i < prog.nops[s]; i++)
			if (prog.ops[s][i].group == group && prog.ops[s][i].coll == coll)
				sum += prog.ops[s][i].bytes;
	cs_program_free(&prog);
	return sum;
}

/* Expert parallelism 4 in dp 16: the routed experts' gradients (a quarter
 * of them here) reduce over the 4 ranks that hold them, everything else
 * (the shared expert, the router, attention) over all 16; under the
 * distributed optimizer they are gathered over the same groups. With ep 16
 * each expert lives on one rank and its gradients go nowhere. */
START_TEST(dp_traffic_splits_the_experts_over_their_group)
{
	const char *text = "cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n"
			   "model: {preset: deepseek-v3-like, layers: 4, dense_layers: 1, experts: 16}\n"
			   "training: {seq_len: 1024, micro_batch: 1, global_batch: 16, step_edges: false}\n";
	const char *sets[][2] = { { "parallelism.ep=4", "parallelism.data_parallel.sharding=none" },
				  { "parallelism.ep=4", "parallelism.data_parallel.sharding=zero1" },
				  { "parallelism.ep=16", "parallelism.data_parallel.sharding=zero1" } };
	for (int i = 0; i < 3; i++) {
		cs_scenario *sc = load_text(text, sets[i], 2);
		cs_param_counts pc = cs_model_params(&sc->model);
		double ep = (double)sc->parallel.ep;
		double routed = (double)pc.experts * 16.0 / 17.0, dense = (double)pc.total - routed;
		bool zero = sc->parallel.sharding != CS_SHARD_NONE;
		cs_coll_op red = zero ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE;
		double want_edp = ep < 16 ? 2.0 * routed / ep : 0.0;
		ck_assert_double_eq_tol(dp_bytes_over(sc, CS_GROUP_DP, red), 2.0 * dense, 1e-6 * dense);
		ck_assert_double_eq_tol(dp_bytes_over(sc, CS_GROUP_EDP, red), want_edp, 1e-6 * dense);
		if (zero) {
			ck_assert_double_eq_tol(dp_bytes_over(sc, CS_GROUP_DP, CS_COLL_ALL_GATHER), 2.0 * dense,
						1e-6 * dense);
			ck_assert_double_eq_tol(dp_bytes_over(sc, CS_GROUP_EDP, CS_COLL_ALL_GATHER), want_edp,
						1e-6 * dense);
		}
		cs_scenario_free(sc);
	}
}
END_TEST

static const struct { int64_t tp; bool sp; } tp_cases[] = {
	{ 2, false }, { 4, false }, { 8, false }, { 2, true }, { 4, true }, { 8, true },
};

START_TEST(tp_traffic_per_layer_per_micro_batch)
{
	cs_model_spec m = *cs_preset_model("llama3-70b");
	int64_t s = 4096, b = 2, h = m.hidden, t = tp_cases[_i].tp;
	cs_layer_ctx c = { .seq_len = s, .micro_batch = b, .tp = t, .cp = 1, .ep = 1,
			   .sequence_parallel = tp_cases[_i].sp, .flash_attention = true,
			   .precision = CS_PREC_BF16, .expert_imbalance = 1.0 };
	cs_layer_op ops[256];
	double sum = 0;
	for (int pass = CS_PASS_FWD; pass <= CS_PASS_BWD_INPUT; pass++) {
		int n = cs_model_block_ops(&m, &c, false, (cs_pass)pass, ops, 256);
		for (int i = 0; i < n; i++)
			if (ops[i].cls == CS_OPC_COMM && ops[i].comm_kind == CS_COMM_TP)
				sum += cs_coll_ring_bytes_on_wire((cs_coll_op)ops[i].coll, ops[i].comm_bytes, t);
	}
	/* the seed: 4 * 2 (t-1)/t * 2sbh */
	double want = 4.0 * 2.0 * (double)(t - 1) / (double)t * 2.0 * (double)(s * b * h);
	ck_assert_msg(fabs(sum / want - 1.0) < 1e-12, "tp %lld sp %d: %g vs %g", (long long)t,
		      tp_cases[_i].sp, sum, want);
}
END_TEST

/* ---- golden ------------------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Drop the one line that measures the machine, not the model. */
/* Drop the line holding `key` (the wall time, which differs run to run). */
static void drop_line(char *text, const char *key)
{
	char *p = strstr(text, key);
	ck_assert_ptr_nonnull(p);
	while (p > text && p[-1] != '\n')
		p--;
	char *e = strchr(p, '\n');
	memmove(p, e + 1, strlen(e + 1) + 1);
}

static void drop_wall(char *text)
{
	char *p = strstr(text, "\"sim_wall_s\"");
	ck_assert_ptr_nonnull(p);
	while (p > text && p[-1] != '\n')
		p--;
	char *e = strchr(p, '\n');
	memmove(p, e + 1, strlen(e + 1) + 1);
}

/* ---- layer layout over virtual stages ----------------------------------- */

#define LAYOUT \
	"cluster: {gpu: h100-sxm-80g, nodes: 16, gpus_per_node: 8}\n" \
	"model: {preset: llama3-8b, layers: %d}\n" \
	"training: {seq_len: 1024, micro_batch: 1, global_batch: %d}\n" \
	"parallelism: {tp: 8, pp: %d, pipeline: {schedule: %s, virtual_stages: %d, " \
	"account_for_embedding: %s, account_for_loss: %s}%s}\n"

static const struct {
	const char *name;
	int layers, pp, v, embed, loss;
	int want[8];  /* layers of the first four and the last four virtual stages */
} layout_cases[] = {
	/* Llama 3 405B: 126 layers on 16 x 8; the ends hold only embedding and head */
	{ "llama3-405b", 126, 16, 8, 1, 1, { 0, 1, 1, 1, 1, 1, 1, 0 } },
	/* without accounting the extra layers go to the middle stages */
	{ "uneven-ends-lighter", 30, 4, 2, 0, 0, { 3, 4, 4, 4, 4, 4, 4, 3 } },
	{ "embedding-only", 31, 4, 2, 1, 0, { 3, 4, 4, 4, 4, 4, 4, 4 } },
	{ "loss-only", 31, 4, 2, 0, 1, { 4, 4, 4, 4, 4, 4, 4, 3 } },
	{ "one-stage-both", 32, 4, 1, 1, 1, { 7, 9, 9, 7, 7, 9, 9, 7 } },
};

/* The backward's recompute passes, layer by layer, in the order the one
 * GPU's program runs them: 'r' a layer's recomputation, 'b' its input
 * gradient, for micro-batch 0 ("r3b3r2b2..."). */
static void recompute_order(const char *const *sets, size_t n, char *out, size_t cap)
{
	cs_scenario *sc = load_text("cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 1}\n"
				    "model: {arch: llama, layers: 4, hidden: 1024, heads: 16, kv_heads: 4, ffn: "
				    "4096, vocab: 32000}\n"
				    "training: {seq_len: 1024, micro_batch: 1, global_batch: 1}\n",
				    sets, n);
	cs_program prog;
	build_program(sc, &prog);
	size_t used = 0;
	int last_phase = -1, last_layer = -2;
	out[0] = '\0';
	for (int i = 0; i < prog.nops[CS_STREAM_COMPUTE]; i++) {
		const cs_op *o = &prog.ops[CS_STREAM_COMPUTE][i];
		if ((o->phase != CS_PHASE_RECOMPUTE && o->phase != CS_PHASE_BWD) || o->layer < 0 || o->micro != 0)
			continue;
		if (o->phase == last_phase && o->layer == last_layer)
			continue;
		last_phase = o->phase;
		last_layer = o->layer;
		used += (size_t)snprintf(out + used, cap - used, "%c%d", o->phase == CS_PHASE_RECOMPUTE ? 'r' : 'b',
					 (int)o->layer);
		ck_assert(used < cap);
	}
	cs_program_free(&prog);
	cs_scenario_free(sc);
}

/* Megatron-LM's uniform chunks of 2 recompute a chunk's two layers when the
 * backward reaches its last; block 1 only the first layer; torchtitan's
 * every 2nd block the 2nd and the 4th; full, one by one; none, nothing. */
START_TEST(recompute_passes_follow_the_policy)
{
	static const struct {
		const char *sets[3];
		const char *want;
	} cases[] = {
		{ { "parallelism.recompute=full" }, "r3b3r2b2r1b1r0b0" },
		{ { "parallelism.recompute=full", "parallelism.recompute_layers=2" }, "r2r3b3b2r0r1b1b0" },
		{ { "parallelism.recompute=full", "parallelism.recompute_layers=3" }, "r3b3r0r1r2b2b1b0" },
		{ { "parallelism.recompute=full", "parallelism.recompute_method=block",
		    "parallelism.recompute_layers=1" },
		  "b3b2b1r0b0" },
		{ { "parallelism.recompute=selective", "parallelism.recompute_every=2" }, "r3b3b2r1b1b0" },
		{ { "parallelism.recompute=selective", "parallelism.recompute_modules=layernorm,mlp" },
		  "r3b3r2b2r1b1r0b0" },
		{ { "parallelism.recompute=none" }, "b3b2b1b0" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = 0;
		while (n < 3 && cases[i].sets[n])
			n++;
		char got[256];
		recompute_order(cases[i].sets, n, got, sizeof got);
		ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: %s, want %s", i, got, cases[i].want);
	}
}
END_TEST

START_TEST(layout_counts_embedding_and_loss_as_layers)
{
	char text[1024];
	int v = layout_cases[_i].v;
	snprintf(text, sizeof text, LAYOUT, layout_cases[_i].layers, 16 * layout_cases[_i].pp,
		 layout_cases[_i].pp, v > 1 ? "interleaved" : "1f1b", v,
		 layout_cases[_i].embed ? "true" : "false", layout_cases[_i].loss ? "true" : "false", "");
	cs_scenario *sc = load_text(text, NULL, 0);
	cs_plan_layout lay;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_plan_layout_init(&lay, sc, &diag), CS_OK);
	int64_t V = lay.vstages, sum = 0;
	for (int64_t k = 0; k < V; k++) {
		ck_assert_int_eq(lay.first_layer[k], sum);
		sum += lay.nlayers[k];
	}
	ck_assert_int_eq(sum, layout_cases[_i].layers);
	for (int i = 0; i < 4 && i < V; i++) {
		ck_assert_msg(lay.nlayers[i] == layout_cases[_i].want[i], "%s: virtual stage %d holds "
			      "%lld layers, want %d", layout_cases[_i].name, i,
			      (long long)lay.nlayers[i], layout_cases[_i].want[i]);
		ck_assert_msg(lay.nlayers[V - 4 + i] == layout_cases[_i].want[4 + i], "%s: virtual "
			      "stage %lld holds %lld layers, want %d", layout_cases[_i].name,
			      (long long)(V - 4 + i), (long long)lay.nlayers[V - 4 + i],
			      layout_cases[_i].want[4 + i]);
	}
	cs_scenario_free(sc);
}
END_TEST

/* With the ends holding no layer, the embedding and the head are still
 * computed, gathered and reduced: a run of the Llama 3 layout in small moves
 * the same DP bytes as the plain split, and folds exactly. */
START_TEST(empty_end_stages_keep_embedding_and_head)
{
	char text[1024];
	snprintf(text, sizeof text, LAYOUT, 14, 16, 4, "interleaved", 4, "true", "true",
		 ", dp: 4, data_parallel: {sharding: shard-grad-op}");
	cs_scenario *sc = load_text(text, NULL, 0);
	cs_plan_layout lay;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_plan_layout_init(&lay, sc, &diag), CS_OK);
	ck_assert_int_eq(lay.nlayers[0], 0);
	ck_assert_int_eq(lay.nlayers[lay.vstages - 1], 0);

	/* every parameter of the model is gathered once per step, embedding and
	 * head included: summed over the stages, the DP all-gathers carry the
	 * whole model over tp */
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program progs[4];
	for (int s = 0; s < 4; s++)
		cs_program_init(&progs[s]);
	ck_assert_int_eq(cs_plan_build(sc, &mesh, NULL, progs, &diag), CS_OK);
	double gathered = 0;
	for (int s = 0; s < 4; s++) {
		for (int i = 0; i < progs[s].nops[CS_STREAM_DP_AG]; i++)
			gathered += progs[s].ops[CS_STREAM_DP_AG][i].bytes;
		cs_program_free(&progs[s]);
	}
	cs_param_counts pc = cs_model_params(&sc->model);
	double want = (double)pc.total * 2.0 / 8.0;
	ck_assert_msg(fabs(gathered - want) <= 1e-3 * want, "gathered %.6g bytes, want %.6g",
		      gathered, want);

	cs_metrics full = cs_test_simulate(sc);
	const char *fold[] = { "simulate.fold=true" };
	cs_scenario *sf = load_text(text, fold, 1);
	cs_metrics folded = cs_test_simulate(sf);
	ck_assert(full.step_time_s == folded.step_time_s);
	cs_scenario_free(sf);
	cs_scenario_free(sc);
}
END_TEST

/* Tied embeddings over a pipeline: the first and the last stage swap their
 * copies' gradients (V/tp x h in the gradient dtype) once per step, before
 * the optimizer, and no other stage sends anything extra; the step runs to
 * the end under 1F1B and the interleaved schedule, folded as full. */
START_TEST(tied_embeddings_swap_gradients_between_the_end_stages)
{
	static const char *const sched[][2] = { { "1f1b", "1" }, { "interleaved", "2" } };
	for (int c = 0; c < 2; c++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "cluster: {gpu: h100-sxm-80g, nodes: 8, gpus_per_node: 8}\n"
			 "model: {preset: gpt3-175b, layers: 16}\n"
			 "training: {seq_len: 2048, micro_batch: 1, global_batch: 32}\n"
			 "parallelism: {tp: 8, pp: 4, dp: 2, pipeline: {schedule: %s, virtual_stages: %s}}\n",
			 sched[c][0], sched[c][1]);
		const char *untie[] = { "model.tied_embeddings=false" };
		for (int tied = 0; tied < 2; tied++) {
			cs_scenario *sc = load_text(text, untie, tied ? 0 : 1);
			ck_assert(sc->model.tied_embeddings == (tied == 1));
			cs_mesh mesh;
			cs_mesh_init(&mesh, &sc->parallel);
			cs_program progs[4];
			cs_diag diag = { { 0 } };
			for (int s = 0; s < 4; s++)
				cs_program_init(&progs[s]);
			ck_assert_int_eq(cs_plan_build(sc, &mesh, NULL, progs, &diag), CS_OK);
			/* the gradient dtype's bytes: bf16 by default, 2 */
			ck_assert_int_eq(sc->training.grad_dtype, CS_PREC_BF16);
			double want = 50257.0 / 8.0 * 12288.0 * 2.0;
			for (int s = 0; s < 4; s++) {
				int swaps = 0;
				for (int i = 0; i < progs[s].nops[CS_STREAM_PP]; i++) {
					const cs_op *o = &progs[s].ops[CS_STREAM_PP][i];
					if (o->micro != -1)
						continue;
					swaps++;
					ck_assert(o->bytes == want);
					ck_assert_int_eq(o->to, s == 0 ? -1 : 1);
				}
				ck_assert_int_eq(swaps, tied && (s == 0 || s == 3) ? 1 : 0);
				cs_program_free(&progs[s]);
			}
			cs_metrics full = cs_test_simulate(sc);
			cs_scenario_free(sc);
			const char *fold[] = { "simulate.fold=true", "model.tied_embeddings=false" };
			sc = load_text(text, fold, tied ? 1 : 2);
			ck_assert(cs_test_simulate(sc).step_time_s == full.step_time_s);
			cs_scenario_free(sc);
		}
	}
}
END_TEST

/* A plan whose programs would not fit in memory is refused before any is
 * built, at the key that sets the micro-batches. */
START_TEST(too_many_ops_refused_at_global_batch)
{
	cs_scenario *sc = load_text(
		"cluster: {gpu: h100-sxm-80g, nodes: 16, gpus_per_node: 8}\n"
		"model: {preset: llama3-405b}\n"
		"training: {seq_len: 4096, global_batch: 100000, micro_batch: 1}\n"
		"parallelism: {tp: 8, pp: 16}\n", NULL, 0);
	cs_result *res = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_simulate(sc, NULL, &res, &diag), CS_ERR_INPUT);
	ck_assert_ptr_null(res);
	ck_assert_msg(strstr(diag.msg, ":3:41: the programs would hold about 4.38e+08 ops "
			  "(100000 micro-batches x 126 layers), more than the limit of 20000000"),
		      "%s", diag.msg);
	const char *set[] = { "training.global_batch=99984" };
	cs_scenario *so = load_text(
		"cluster: {gpu: h100-sxm-80g, nodes: 16, gpus_per_node: 8}\n"
		"model: {preset: llama3-405b}\n"
		"training: {seq_len: 4096, global_batch: 100000, micro_batch: 1}\n"
		"parallelism: {tp: 8, pp: 16}\n", set, 1);
	ck_assert_int_eq(cs_simulate(so, NULL, &res, &diag), CS_ERR_INPUT);
	const char *want = "--set 'training.global_batch=99984': the programs";
	ck_assert_msg(strncmp(diag.msg, want, strlen(want)) == 0, "%s", diag.msg);
	cs_scenario_free(so);
	cs_scenario_free(sc);
}
END_TEST

/* Golden runs: a scenario's JSON report against tests/golden/NAME.json
 * (tools/update-golden.sh rewrites them after an intended change). */
static const struct { const char *scenario, *golden; const char *set[4]; } golden_cases[] = {
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu", { NULL } },
	/* the same on identical, ideal machines: the figures from before the fleet */
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu-ideal", { "fleet=ideal" } },
	/* the flagship, folded: the paper's 8-chunk split, fp32 accumulation */
	{ "llama3-405b-16k", "llama3-405b-16k-folded", { "simulate.fold=true" } },
	/* the measured H200 step: GEMMs clocked by the power-cap model */
	{ "h200-llama8l-h4096-s8192", "h200-llama8l-h4096-s8192", { NULL } },
	/* the same with a sliding window of half the sequence */
	{ "h200-llama8l-h4096-s8192", "h200-llama8l-window4096", { "model.attention_window=4096" } },
	/* the 3D plan with PaLM's parallel block */
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu-parallel-block", { "model.parallel_block=true" } },
	/* ALiBi instead of RoPE; BLOOM's norm after the embedding */
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu-alibi", { "model.positions=alibi" } },
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu-embedding-norm", { "model.embedding_norm=true" } },
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu-adafactor", { "training.optimizer=adafactor" } },
	/* recomputation as the frameworks configure it: Megatron-LM's block
	 * method (10 of a stage's 20 layers), its modules, torchtitan's op policy */
	{ "3d-llama3-70b-64gpu",
	  "3d-llama3-70b-64gpu-recompute-block",
	  { "parallelism.recompute=full", "parallelism.recompute_method=block", "parallelism.recompute_layers=10" } },
	{ "3d-llama3-70b-64gpu",
	  "3d-llama3-70b-64gpu-recompute-modules",
	  { "parallelism.recompute=selective", "parallelism.recompute_modules=core_attn,layernorm,mlp" } },
	{ "fsdp-llama3-8b-16gpu",
	  "fsdp-llama3-8b-16gpu-recompute-op",
	  { "parallelism.recompute=selective", "parallelism.recompute_modules=op" } },
	/* Transformer Engine's fp8 recipe on the measured step: the fp8 table */
	{ "h200-llama8l-h4096-s8192", "h200-llama8l-fp8", { "training.precision=fp8" } },
	/* PaLM 540B on two TPU v4 pods, folded: torus collectives, the DCN */
	{ "palm-540b-6144tpu", "palm-540b-6144tpu-folded", { "simulate.fold=true" } },
	/* the MLPerf GPT-3 setup with Transformer Engine's fp8 recipe */
	{ "eos-gpt3-175b-fp8", "eos-gpt3-175b-fp8", { NULL } },
	/* Transformer Engine's fp8 recipe as the dgxc Llama 3.1 70B recipe runs
	 * it: fp8 weights and gathers, fp8 userbuffers, amax reductions */
	{ "validation/dgxc/dgxc-llama31-70b-fp8-64gpu", "dgxc-llama31-70b-fp8-64gpu-ideal", { "fleet=ideal" } },
	/* the 3D plan with DeepSeek-V2/V3's latent attention: the latents
	 * gathered under sequence parallelism instead of the hidden state */
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu-mla",
	  { "model.kv_heads=64", "model.kv_lora_rank=512", "model.q_lora_rank=1536" } },
	/* the experts folded over the tensor-parallel ranks (etp 1, ep 32 over tp 2 x 16 dp) */
	{ "moe-qwen3-235b-256gpu", "moe-qwen3-235b-256gpu", { NULL } },
	/* expert TP 2 inside tp 2: the dispatched tokens gathered over it */
	{ "moe-deepseek-ep", "moe-deepseek-ep-etp2",
	  { "parallelism.tp=2", "parallelism.sequence_parallel=true", "parallelism.ep=16", "parallelism.etp=2" } },
	/* DeepEP's dispatch and combine, a token's experts on at most 2 of the 4 nodes */
	{ "moe-deepseek-ep", "moe-deepseek-ep-deepep",
	  { "parallelism.moe_dispatcher=deepep", "parallelism.moe_node_limit=2" } },
	/* a forward and a backward of different micro-batches run together,
	 * each one's all-to-alls under the other's compute */
	{ "moe-deepseek-ep", "moe-deepseek-ep-a2a-overlap",
	  { "parallelism.pipeline.schedule=interleaved", "parallelism.pipeline.virtual_stages=2",
	    "parallelism.moe_a2a_overlap=true" } },
	/* the busiest expert rank drawn from a zipf routing (skew 0.8) */
	{ "moe-deepseek-ep", "moe-deepseek-ep-zipf",
	  { "parallelism.expert_imbalance=1", "parallelism.moe_routing=zipf", "parallelism.moe_routing_skew=0.8" } },
	/* padded to capacity, the MoE layer's kernels fused: no host wait */
	{ "moe-deepseek-ep", "moe-deepseek-ep-pad-fused",
	  { "parallelism.moe_capacity_factor=1.25", "parallelism.moe_pad_to_capacity=true",
	    "parallelism.moe_router_fusion=true", "parallelism.moe_permute_fusion=true" } },
	/* Blackwell's block-scaled recipes on NeMo's B200 Llama 3 8B */
	{ "validation/nemo/nemo2502-llama3-8b-fp8-b200-8gpu", "nemo-b200-llama3-8b-mxfp8",
	  { "training.precision=mxfp8", "fleet=ideal" } },
	{ "validation/nemo/nemo2502-llama3-8b-fp8-b200-8gpu", "nemo-b200-llama3-8b-nvfp4",
	  { "training.precision=nvfp4", "fleet=ideal" } },
	/* per-tensor current scaling, and torch.compile, on the measured H200 step */
	{ "h200-llama8l-h4096-s8192", "h200-llama8l-fp8-current", { "training.precision=fp8-current" } },
	{ "h200-llama8l-h4096-s8192", "h200-llama8l-compile", { "training.compile=true" } },
	/* flow fidelity with ECMP on leaves of 4 servers: queue pairs hashed onto uplinks */
	{ "3d-llama3-70b-64gpu", "3d-llama3-70b-64gpu-flow-ecmp",
	  { "collectives.fidelity=flow", "cluster.fabric.leaf_gpus=32", "cluster.fabric.routing=ecmp" } },
	/* one GB200 NVL72 rack: TP 8 across trays in the NVLink domain; then two
	 * racks, DP 9 across them (NVLS-tree, the racks as NCCL's MNNVL nodes) */
	{ "gb200-nvl72-llama3-70b", "gb200-nvl72-llama3-70b", { NULL } },
	{ "gb200-nvl72-llama3-70b", "gb200-nvl72-llama3-70b-2racks",
	  { "cluster.nodes=36", "training.global_batch=144", "parallelism.dp=9" } },
};

/* The MLPerf GPT-3 setup with Transformer Engine's recipe: the GEMMs gain
 * what the fp8 table gives at the block's linear shapes (GPT-3 175B, TP 4,
 * 2,048 tokens a micro-batch), not the 2x of the peaks, and the step less. */
static double eos_run(const char *prec, double *gemm_s)
{
	char path[512], set[64];
	snprintf(path, sizeof path, CS_SOURCE_ROOT "/scenarios/eos-gpt3-175b-fp8.yaml");
	snprintf(set, sizeof set, "training.precision=%s", prec);
	const char *sets[] = { set };
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_scenario_load(path, sets, 1, &sc, &diag), CS_OK);
	cs_result *res = NULL;
	ck_assert_int_eq(cs_simulate(sc, NULL, &res, &diag), CS_OK);
	const cs_metrics *m = cs_result_metrics(res);
	double step = m->step_time_s;
	*gemm_s = m->compute_kind_s[CS_COMPUTE_GEMM];
	cs_result_free(res);
	cs_scenario_free(sc);
	return step;
}

START_TEST(fp8_recipe_gains_what_the_fp8_table_gives)
{
	double g16, g8;
	double s16 = eos_run("bf16", &g16), s8 = eos_run("fp8", &g8);
	/* the table's own ratio over the block's four linear GEMMs, forward */
	cs_kprof *p = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kprof_load("h100-sxm", &p, &diag), CS_OK);
	static const double shapes[4][3] = {
		{ 2048, 3 * 12288 / 4, 12288 }, { 2048, 12288, 12288 / 4 },
		{ 2048, 4 * 12288 / 4, 12288 }, { 2048, 12288, 4 * 12288 / 4 },
	};
	double t16 = 0, t8 = 0;
	for (int i = 0; i < 4; i++) {
		double f = 2 * shapes[i][0] * shapes[i][1] * shapes[i][2];
		t16 += f / cs_kprof_gemm(p, CS_GEMM_BF16, CS_GEMM_NT, shapes[i][0], shapes[i][1],
					 shapes[i][2]);
		t8 += f / cs_kprof_gemm(p, CS_GEMM_FP8, CS_GEMM_NT, shapes[i][0], shapes[i][1],
					shapes[i][2]);
	}
	cs_kprof_free(p);
	double table = t16 / t8, run = g16 / g8;
	ck_assert_msg(fabs(run / table - 1) < 0.1, "GEMMs gain %.3f in the run, %.3f by the table",
		      run, table);
	ck_assert_msg(table < 1.95 && run < 1.95, "table %.3f run %.3f", table, run);
	/* attention, casts, norms and communication do not speed up */
	ck_assert_msg(s16 / s8 > 1.2 && s16 / s8 < run, "step gains %.3f", s16 / s8);
}
END_TEST

START_TEST(golden_run)
{
	char path[512], gold[512];
	snprintf(path, sizeof path, CS_SOURCE_ROOT "/scenarios/%s.yaml", golden_cases[_i].scenario);
	snprintf(gold, sizeof gold, CS_SOURCE_ROOT "/tests/golden/%s.json", golden_cases[_i].golden);
	int nset = 0;
	while (nset < 4 && golden_cases[_i].set[nset])
		nset++;
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_scenario_load(path, golden_cases[_i].set, nset, &sc, &diag), CS_OK);
	cs_result *res = NULL;
	ck_assert_int_eq(cs_simulate(sc, NULL, &res, &diag), CS_OK);
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);
	const char *name = strrchr(golden_cases[_i].scenario, '/'); /* the file's, as the CLI names it */
	cs_report_json(f, name ? name + 1 : golden_cases[_i].scenario, cs_result_metrics(res), 2);
	fclose(f);
	char *want = slurp(gold);
	drop_wall(got);
	drop_wall(want);
	ck_assert_msg(strcmp(got, want) == 0, "the run differs from %s (tools/update-golden.sh "
		      "rewrites it after an intended change):\n%s", gold, got);
	free(got);
	free(want);
	/* the same run through the text and CSV writers */
	static const char *const ext[] = { "txt", "csv" };
	for (int k = 0; k < 2 && _i == 0; k++) {
		snprintf(gold, sizeof gold, CS_SOURCE_ROOT "/tests/golden/%s.%s",
			 golden_cases[_i].golden, ext[k]);
		f = open_memstream(&got, &len);
		if (k == 0)
			cs_report_text(f, golden_cases[_i].scenario, cs_result_metrics(res), 0);
		else
			cs_report_csv(f, golden_cases[_i].scenario, cs_result_metrics(res));
		fclose(f);
		want = slurp(gold);
		if (k == 0) {
			drop_line(got, "events in");
			drop_line(want, "events in");
		}
		ck_assert_msg(strcmp(got, want) == 0, "the run differs from %s (tools/update-golden.sh "
			      "rewrites it after an intended change):\n%s", gold, got);
		free(got);
		free(want);
	}
	cs_result_free(res);
	cs_scenario_free(sc);
}
END_TEST

/* The Chrome trace writer, byte for byte, on the small DDP scenario (its
 * ranks' spans, names once per rank and stream). */
START_TEST(golden_trace)
{
	char out[] = "/tmp/cs-golden-trace-XXXXXX";
	int fd = mkstemp(out);
	ck_assert_int_ge(fd, 0);
	close(fd);
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_scenario_load(CS_SOURCE_ROOT "/scenarios/ddp-gpt-small.yaml", NULL, 0,
					  &sc, &diag), CS_OK);
	cs_trace *trace = cs_trace_new();
	cs_span_sink sink = { .on_span = cs_trace_span, .ctx = trace, .admit = cs_trace_admit };
	cs_result *res = NULL;
	ck_assert_msg(cs__simulate(sc, &(cs__sim_request){ .sink = &sink }, &res, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_msg(cs_trace_write_chrome(trace, out, &diag) == 0, "%s", diag.msg);
	cs_trace_free(trace);
	char *got = slurp(out), *want = slurp(CS_SOURCE_ROOT "/tests/golden/ddp-gpt-small.trace.json");
	unlink(out);
	ck_assert_msg(strcmp(got, want) == 0, "the trace differs from tests/golden/ddp-gpt-small."
		      "trace.json (tools/update-golden.sh rewrites it after an intended change)");
	free(got);
	free(want);
	cs_result_free(res);
	cs_scenario_free(sc);
}
END_TEST

/* Kernels launched per step by class, as the builder counts them (an op's
 * `kernels`, 0 counting as 1) for the critical rank: on the two measured
 * H200 steps, the GEMM and optimizer launches are those of the profiler
 * traces (tests/data/trace_*.json.gz: 198 and 134, 198 and 146), and so are
 * the attention kernels (96 and 64: with grouped K/V heads cuDNN's backward
 * adds a reduction of dK and one of dV). Twice the micro-batches launch twice the
 * GEMMs and attention kernels and the same optimizer kernels. */
static const struct {
	const char *scenario, *twice;
	int64_t kernels[CS_COMPUTE_KINDS];
} kernel_cases[] = {
	{ "h200-llama8l-h4096-s8192", "training.global_batch=4", { 198, 96, 906, 134, 0 } },
	{ "h200-gpt-h5120-8l-s2048-mb4", "training.global_batch=16", { 198, 64, 556, 146, 0 } },
};

START_TEST(kernels_launched_by_class)
{
	char path[512];
	snprintf(path, sizeof path, CS_SOURCE_ROOT "/scenarios/%s.yaml", kernel_cases[_i].scenario);
	int64_t got[2][CS_COMPUTE_KINDS];
	for (int twice = 0; twice < 2; twice++) {
		const char *set[] = { kernel_cases[_i].twice };
		cs_scenario *sc = NULL;
		cs_diag diag = { { 0 } };
		ck_assert_msg(cs_scenario_load(path, set, (size_t)twice, &sc, &diag) == CS_OK, "%s", diag.msg);
		cs_result *res = NULL;
		ck_assert_msg(cs_simulate(sc, NULL, &res, &diag) == CS_OK, "%s", diag.msg);
		memcpy(got[twice], cs_result_metrics(res)->compute_kind_kernels, sizeof got[twice]);
		cs_result_free(res);
		cs_scenario_free(sc);
	}
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		ck_assert_int_eq(got[0][k], kernel_cases[_i].kernels[k]);
	ck_assert_int_eq(got[1][CS_COMPUTE_GEMM], 2 * got[0][CS_COMPUTE_GEMM]);
	ck_assert_int_eq(got[1][CS_COMPUTE_ATTN], 2 * got[0][CS_COMPUTE_ATTN]);
	ck_assert_int_eq(got[1][CS_COMPUTE_OPTIM], got[0][CS_COMPUTE_OPTIM]);
	ck_assert_int_gt(got[1][CS_COMPUTE_MEMBOUND], got[0][CS_COMPUTE_MEMBOUND]);
	ck_assert_int_eq(got[1][CS_COMPUTE_HOST], 0);
}
END_TEST

/* Megatron-Core's all-to-all overlap (parallelism.moe_a2a_overlap): the
 * interleaved order gains one warm-up forward, after which every forward
 * is followed by a backward of another micro-batch and no dependency of the
 * schedule breaks; p = 4, m = 8, v = 2. */
START_TEST(a2a_overlap_warmup_pairs_independent_chunks)
{
	enum { P = 4, M = 8, V = 2, N = 2 * M * V };
	cs_diag diag = { { 0 } };
	for (int64_t s = 0; s < P; s++) {
		cs_sched_op ops[N], plain[N];
		ck_assert_int_eq(cs_sched_stage_ops(CS_SCHED_INTERLEAVED, P, M, V, s, plain, N, &diag), N);
		memcpy(ops, plain, sizeof ops);
		cs__pair_warmup(ops, N);
		int64_t warm = 0, warm0 = 0;
		while (warm < N && ops[warm].kind == CS_SCHED_F)
			warm++;
		while (warm0 < N && plain[warm0].kind == CS_SCHED_F)
			warm0++;
		/* the plain order's warm-up, (p - s - 1) x 2 + (v - 1) x p, then its first steady forward */
		ck_assert_int_eq(warm0, (P - s - 1) * 2 + (V - 1) * P + 1);
		ck_assert_int_eq(warm, warm0 + 1);
		int64_t f_done[M][V] = { { 0 } }, b_done[M][V] = { { 0 } };
		for (int64_t i = 0; i < N; i++) {
			int j = ops[i].micro, c = ops[i].chunk;
			if (ops[i].kind == CS_SCHED_F) {
				ck_assert(c == 0 || f_done[j][c - 1]);
				f_done[j][c] = 1;
				if (i + 1 < N && ops[i + 1].kind != CS_SCHED_F && i >= warm - 1)
					ck_assert_int_ne(ops[i + 1].micro, j);
			} else {
				ck_assert(f_done[j][c]);
				ck_assert(c == V - 1 || b_done[j][c + 1]);
				b_done[j][c] = 1;
			}
		}
	}
}
END_TEST

/* The same step with and without the overlap: the same compute segments
 * (count and busy time), the backward's parts now between a forward
 * layer's, and less all-to-all exposed. DeepSeek-V3-like, 4 layers (the
 * first dense) on pp 2 x v 2, ep 4 over dp 4. */
START_TEST(a2a_overlap_interleaves_a_forward_with_a_backward)
{
	const char *text = "cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 8}\n"
			   "model: {preset: deepseek-v3-like, layers: 4, dense_layers: 1, experts: 16}\n"
			   "training: {seq_len: 2048, micro_batch: 1, global_batch: 16}\n"
			   "parallelism: {pp: 2, ep: 4, pipeline: {schedule: interleaved, virtual_stages: 2}}\n"
			   "fleet: ideal\n";
	int32_t segs[2];
	int64_t busy[2];
	double exposed[2];
	bool split = false;
	for (int on = 0; on < 2; on++) {
		const char *set[] = { on ? "parallelism.moe_a2a_overlap=true" : "parallelism.moe_a2a_overlap=false" };
		cs_scenario *sc = load_text(text, set, 1);
		cs_mesh mesh;
		cs_mesh_init(&mesh, &sc->parallel);
		cs_program progs[2];
		for (int s = 0; s < 2; s++)
			cs_program_init(&progs[s]);
		cs_diag diag = { { 0 } };
		ck_assert_msg(cs_plan_build(sc, &mesh, NULL, progs, &diag) == CS_OK, "%s", diag.msg);
		segs[on] = progs[0].nops[CS_STREAM_COMPUTE];
		busy[on] = 0;
		for (int k = 0; k < CS_COMPUTE_HOST; k++)
			busy[on] += progs[0].class_ns[k];
		/* a forward layer's ops of one micro-batch, interrupted by a backward's */
		const cs_op *ops = progs[0].ops[CS_STREAM_COMPUTE];
		for (int32_t i = 0; i + 2 < progs[0].nops[CS_STREAM_COMPUTE]; i++)
			if (ops[i].phase == CS_PHASE_FWD && ops[i + 1].phase == CS_PHASE_BWD &&
			    ops[i + 2].phase == CS_PHASE_FWD && ops[i].micro == ops[i + 2].micro &&
			    ops[i].layer == ops[i + 2].layer && ops[i + 1].micro != ops[i].micro)
				split |= on == 1;
		for (int s = 0; s < 2; s++)
			cs_program_free(&progs[s]);
		cs_metrics m = cs_test_simulate(sc);
		exposed[on] = m.exposed_comm_s[CS_COMM_EP];
		cs_scenario_free(sc);
	}
	ck_assert_int_eq(segs[0], segs[1]);
	ck_assert_int_eq(busy[0], busy[1]);
	ck_assert(split);
	ck_assert_msg(exposed[1] < exposed[0], "exposed ep %g s with the overlap, %g without", exposed[1], exposed[0]);
}
END_TEST

/* The host launches a template's kernels back to back: a segment of n
 * kernels lasting D ends no sooner than its last launch plus that kernel's
 * D / n, so the GPU idles only while the host is behind, and the idle is
 * counted as host time. */
START_TEST(host_launch_idles_the_gpu_only_when_behind)
{
	static const struct { int64_t ns; int32_t kernels; int64_t want_idle; } segs[] = {
		{ 10000, 10, 1000 },  /* host 10 us for 10 x 1 us: the last ends at 11 us */
		{ 100000, 1, 0 },     /* issued at 11 us, as the GPU frees */
		{ 2000, 200, 98010 }, /* 200 launches (200 us) for 2 us of work: ends at
		                       * 211.01 us; the GPU would have ended at 113 us */
	};
	cs_program p;
	cs_program_init(&p);
	cs_builder b;
	memset(&b, 0, sizeof b);
	b.prog = &p;
	b.launch_ns = 1000;
	int64_t busy = 0, idle = 0;
	for (int i = 0; i < 3; i++) {
		int64_t cls[CS_COMPUTE_KINDS] = { 0 }, kern[CS_COMPUTE_KINDS] = { 0 };
		cls[CS_COMPUTE_GEMM] = segs[i].ns;
		kern[CS_COMPUTE_GEMM] = segs[i].kernels;
		cs_op op = { .kind = CS_OP_COMPUTE, .ns = segs[i].ns };
		ck_assert_int_eq(cs__add_compute(&b, &op, cls, kern, segs[i].kernels, 0.0), i + 1);
		ck_assert_int_eq(p.ops[CS_STREAM_COMPUTE][i].ns, segs[i].ns + segs[i].want_idle);
		busy += segs[i].ns;
		idle += segs[i].want_idle;
	}
	ck_assert_int_eq(p.class_ns[CS_COMPUTE_HOST], idle);
	ck_assert_int_eq(p.class_ns[CS_COMPUTE_GEMM], busy);
	ck_assert_int_eq(p.compute_ns, busy + idle);
	ck_assert_int_eq(p.class_kernels[CS_COMPUTE_GEMM], 10 + 1 + 200);
	ck_assert_int_eq(p.class_kernels[CS_COMPUTE_HOST], 0);
	/* without launch costs nothing changes */
	b.launch_ns = 0;
	int64_t cls[CS_COMPUTE_KINDS] = { 0 }, kern[CS_COMPUTE_KINDS] = { 0 };
	cs_op op = { .kind = CS_OP_COMPUTE, .ns = 5 };
	ck_assert_int_eq(cs__add_compute(&b, &op, cls, kern, 1000, 0.0), 4);
	ck_assert_int_eq(p.ops[CS_STREAM_COMPUTE][3].ns, 5);
	cs_program_free(&p);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("traffic");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, dp_traffic_counts_latent_attention);
	tcase_add_test(tc, dp_traffic_splits_the_experts_over_their_group);
	tcase_add_loop_test(tc, dp_traffic_against_ddp, 0, sizeof(traffic_cases) / sizeof(traffic_cases[0]));
	tcase_add_loop_test(tc, tp_traffic_per_layer_per_micro_batch, 0, sizeof(tp_cases) / sizeof(tp_cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("layout");
	tcase_add_loop_test(tc, layout_counts_embedding_and_loss_as_layers, 0,
			    sizeof(layout_cases) / sizeof(layout_cases[0]));
	tcase_add_test(tc, empty_end_stages_keep_embedding_and_head);
	tcase_add_test(tc, recompute_passes_follow_the_policy);
	tcase_add_test(tc, tied_embeddings_swap_gradients_between_the_end_stages);
	tcase_add_test(tc, too_many_ops_refused_at_global_batch);
	suite_add_tcase(s, tc);
	tc = tcase_create("host");
	tcase_add_test(tc, host_launch_idles_the_gpu_only_when_behind);
	tcase_add_test(tc, a2a_overlap_warmup_pairs_independent_chunks);
	tcase_add_test(tc, a2a_overlap_interleaves_a_forward_with_a_backward);
	tcase_add_loop_test(tc, kernels_launched_by_class, 0, sizeof(kernel_cases) / sizeof(kernel_cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("golden");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, golden_run, 0, sizeof(golden_cases) / sizeof(golden_cases[0]));
	tcase_add_test(tc, fp8_recipe_gains_what_the_fp8_table_gives);
	tcase_add_test(tc, golden_trace);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(plan_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
