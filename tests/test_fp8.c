/*
 * test_fp8.c - Transformer Engine's fp8 recipe as it runs (training.fp8,
 * src/program/build_fp8.c and the recipe's parts of the model): the stage
 * group the amaxes are reduced over, the amax tensors and the ops each
 * autocast region adds, the fp8 all-gathers of sequence parallelism, the
 * weights' casts and transposes, fp8 parameter all-gathers, and the bound
 * on an fp8 GEMM's gain.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"
#include "config/config.h"
#include "config/scenario.h"
#include "hw/kprof.h"
#include "model/compute.h"
#include "model/model.h"
#include "program/build.h"
#include "program/build_int.h"
#include "program/mesh.h"
#include "program/program.h"
#include "scenario_text.h"

/* ---- the stage group ------------------------------------------------------ */

/* Every rank of one pipeline stage: tp x cp x ep x dp members, one group
 * per stage, whatever the axis order (four axes of degree > 1 fold into
 * the runs the order leaves). */
START_TEST(stage_group_is_one_pipeline_stage)
{
	static const int orders[][CS_AXIS_COUNT] = {
		{ CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP },
		{ CS_AXIS_PP, CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_DP },
		{ CS_AXIS_TP, CS_AXIS_PP, CS_AXIS_CP, CS_AXIS_DP, CS_AXIS_EP },
	};
	for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
		cs_parallel_spec p = { .tp = 2, .cp = 2, .ep = 2, .pp = 3, .dp = 4 };
		memcpy(p.order, orders[o], sizeof p.order);
		cs_mesh m;
		cs_mesh_init(&m, &p);
		ck_assert_int_eq(m.world, 48);
		ck_assert_int_eq(cs_mesh_group_count(&m, CS_GROUP_STAGE, 8), 3);
		for (int64_t r = 0; r < m.world; r++) {
			cs_group g = cs_mesh_group(&m, CS_GROUP_STAGE, r, 8);
			ck_assert_int_eq(cs_group_size(&g), 16);
			int64_t idx = cs_mesh_group_index(&m, CS_GROUP_STAGE, r, 8);
			ck_assert_int_eq(idx, cs_mesh_coord(&m, r, CS_AXIS_PP));
			int found = 0;
			for (int64_t i = 0; i < 16; i++) {
				int64_t x = cs_group_member(&g, i);
				found |= x == r;
				ck_assert_int_eq(cs_mesh_coord(&m, x, CS_AXIS_PP), cs_mesh_coord(&m, r, CS_AXIS_PP));
				if (i > 0) /* ascending, so distinct */
					ck_assert_int_lt(cs_group_member(&g, i - 1), x);
			}
			ck_assert(found);
		}
	}
	ck_assert_str_eq(cs_group_kind_name(CS_GROUP_STAGE), "stage");
}
END_TEST

/* ---- amax bookkeeping ----------------------------------------------------- */

/* tp 2 x pp 2 x dp 2, interleaved over 2 chunks: 8 layers a chunk, 4
 * micro-batches a replica */
#define FP8GRID \
	"cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 8}\n" \
	"model: {preset: llama3-8b}\n" \
	"training: {seq_len: 1024, micro_batch: 1, global_batch: 8, precision: fp8}\n" \
	"parallelism: {tp: 2, pp: 2, dp: 2, sequence_parallel: true,\n" \
	"  pipeline: {schedule: interleaved, virtual_stages: 2}}\n"
enum { MICRO = 4, CHUNKS = 2, CHUNK_LAYERS = 8 };

/* Per GEMM 3 forward and 2 backward tensors; a dense layer's 7 GEMMs
 * (QKV, the attention's 3, out-projection, MLP up and down) in 5 modules;
 * an MoE layer's experts a GEMM each per direction, the shared ones 2. */
START_TEST(amax_tensors_by_closed_form)
{
	cs_scenario *sc = cs_test_load(FP8GRID, NULL, 0);
	cs_builder b;
	memset(&b, 0, sizeof b);
	b.sc = sc;
	double mods = 0;
	ck_assert_double_eq(cs__fp8_amax_tensors(&b, 0, 8, 1, &mods), 8 * 3 * 7);
	ck_assert_double_eq(mods, 8 * 5);
	ck_assert_double_eq(cs__fp8_amax_tensors(&b, 0, 8, 0, NULL), 8 * 2 * 7);
	cs_scenario_free(sc);
	static const char *moe =
		"cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 8}\n"
		"model: {preset: llama3-8b, experts: 16, top_k: 2, expert_ffn: 1024, shared_experts: 1}\n"
		"training: {precision: fp8}\nparallelism: {ep: 4}\n";
	sc = cs_test_load(moe, NULL, 0);
	b.sc = sc;
	/* 5 + 2 x 16/4 experts + 2 shared = 15 GEMMs; 3 + 2 + 2 modules */
	ck_assert_double_eq(cs__fp8_amax_tensors(&b, 0, 1, 1, &mods), 3 * 15);
	ck_assert_double_eq(mods, 7);
	cs_scenario_free(sc);
}
END_TEST

typedef struct amax_count {
	int32_t fwd, bwd;     /* stage-group all-reduces of the forward's and backward's size */
	int32_t waited;       /* of them, the compute stream waits for */
	int32_t compute;
} amax_count;

static amax_count count_amax(const cs_program *p)
{
	amax_count c = { .compute = p->nops[CS_STREAM_COMPUTE] };
	for (int32_t i = 0; i < p->nops[CS_STREAM_TP]; i++) {
		const cs_op *o = &p->ops[CS_STREAM_TP][i];
		if (o->kind != CS_OP_COLL || o->group != CS_GROUP_STAGE)
			continue;
		ck_assert_int_eq(o->coll, CS_COLL_ALL_REDUCE);
		ck_assert_int_eq(o->comm, CS_COMM_DP); /* it spans the replicas */
		if (o->bytes == CHUNK_LAYERS * 3 * 7 * 4.0)
			c.fwd++;
		else if (o->bytes == CHUNK_LAYERS * 2 * 7 * 4.0)
			c.bwd++;
		else
			ck_abort_msg("an amax all-reduce of %g bytes", o->bytes);
		for (int32_t j = 0; j < p->nops[CS_STREAM_COMPUTE]; j++) {
			const cs_op *x = &p->ops[CS_STREAM_COMPUTE][j];
			for (int d = 0; d < x->ndeps; d++)
				if (p->deps[x->dep + d].counter == CS_STREAM_TP && p->deps[x->dep + d].value == i + 1)
					c.waited++;
		}
	}
	return c;
}

static void build_amax(const char *set, amax_count out[2])
{
	const char *sets[] = { set };
	cs_scenario *sc = cs_test_load(FP8GRID, sets, set ? 1 : 0);
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program *progs = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_plan_build_new(sc, &mesh, NULL, &progs, &diag) == CS_OK, "%s", diag.msg);
	for (int s = 0; s < 2; s++)
		out[s] = count_amax(&progs[s]);
	cs_plan_programs_free(progs, 2);
	cs_scenario_free(sc);
}

/* Each chunk's forward and backward of each micro-batch: one all-reduce
 * over the stage, waited for, between two kernels (the concatenation and
 * the update); local keeps the kernels, off drops all three. */
START_TEST(amax_reductions_per_region)
{
	amax_count red[2], loc[2], off[2];
	build_amax(NULL, red);
	build_amax("training.fp8.amax=local", loc);
	build_amax("training.fp8.amax=off", off);
	for (int s = 0; s < 2; s++) {
		ck_assert_int_eq(red[s].fwd, MICRO * CHUNKS);
		ck_assert_int_eq(red[s].bwd, MICRO * CHUNKS);
		ck_assert_int_eq(red[s].waited, 2 * MICRO * CHUNKS);
		ck_assert_int_eq(loc[s].fwd + loc[s].bwd + off[s].fwd + off[s].bwd, 0);
		ck_assert_int_eq(loc[s].compute - off[s].compute, 2 * 2 * MICRO * CHUNKS);
		ck_assert_int_eq(red[s].compute, loc[s].compute);
	}
}
END_TEST

/* ---- the model's fp8 parts -------------------------------------------------- */

static const cs_layer_op *find(const cs_layer_op *ops, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (ops[i].name && strcmp(ops[i].name, name) == 0)
			return &ops[i];
	return NULL;
}

static int block_ops(const cs_layer_ctx *c, bool moe, cs_pass pass, cs_layer_op *ops)
{
	static cs_model_spec m;
	cs_scenario *sc = cs_test_load(FP8GRID, NULL, 0);
	m = sc->model;
	if (moe) {
		m.experts = 8;
		m.top_k = 2;
		m.expert_ffn = 1024;
	}
	cs_scenario_free(sc);
	return cs_model_block_ops(&m, c, moe, pass, ops, 256);
}

/* The gathers before fp8 GEMMs move one byte an element; the MoE layer's
 * (the router's input) and every reduce-scatter stay 16-bit. */
START_TEST(sequence_parallel_gathers_in_fp8)
{
	cs_layer_ctx c = { .seq_len = 4096, .micro_batch = 1, .tp = 4, .cp = 1, .ep = 1,
			   .sequence_parallel = true, .flash_attention = true, .precision = CS_PREC_FP8,
			   .framework = CS_FW_MEGATRON, .micro_batches = 8, .fp8_gather = true };
	const double full = 4096.0 * 4096; /* tokens x hidden */
	cs_layer_op ops[256];
	static const char *const fwd[] = { "sp_ag_attn", "sp_ag_mlp" }, *bwd[] = { "sp_ag_mlp_bwd", "sp_ag_attn_bwd" };
	for (int on = 0; on < 2; on++) {
		c.fp8_gather = on;
		int n = block_ops(&c, false, CS_PASS_FWD, ops);
		for (int i = 0; i < 2; i++)
			ck_assert_double_eq(find(ops, n, fwd[i])->comm_bytes, full * (on ? 1.0 : 2.0));
		ck_assert_double_eq(find(ops, n, "tp_rs_attn")->comm_bytes, full * 2.0);
		n = block_ops(&c, false, CS_PASS_BWD_INPUT, ops);
		for (int i = 0; i < 2; i++)
			ck_assert_double_eq(find(ops, n, bwd[i])->comm_bytes, full * (on ? 1.0 : 2.0));
		ck_assert_double_eq(find(ops, n, "tp_rs_mlp_bwd")->comm_bytes, full * 2.0);
	}
	int n = block_ops(&c, true, CS_PASS_FWD, ops);
	ck_assert_double_eq(find(ops, n, "sp_ag_attn")->comm_bytes, full);
	ck_assert_double_eq(find(ops, n, "sp_ag_mlp")->comm_bytes, full * 2.0);
	c.precision = CS_PREC_BF16; /* the switch is the recipe's only */
	n = block_ops(&c, false, CS_PASS_FWD, ops);
	ck_assert_double_eq(find(ops, n, "sp_ag_attn")->comm_bytes, full * 2.0);
}
END_TEST

/* A weight's fp8 copy with its transpose (read 2, write 2 bytes) once per
 * step, charged evenly over its micro-batches; kept in fp8, only its
 * transpose (read 1, write 1); without the cache, every micro-batch. */
START_TEST(weight_casts_once_per_step_or_each_micro_batch)
{
	cs_layer_ctx c = { .seq_len = 4096, .micro_batch = 1, .tp = 4, .cp = 1, .ep = 1,
			   .sequence_parallel = true, .flash_attention = true, .precision = CS_PREC_FP8,
			   .framework = CS_FW_MEGATRON, .micro_batches = 8 };
	/* llama3-8b at tp 4: QKV 4096 x 1536, out 1024 x 4096, up 4096 x 7168, down 3584 x 4096 */
	const double w = 4096.0 * 1536 + 1024.0 * 4096 + 4096.0 * 7168 + 3584.0 * 4096;
	cs_layer_op ops[256];
	int n = block_ops(&c, false, CS_PASS_BWD_WEIGHT, ops);
	ck_assert_double_eq_tol(find(ops, n, "fp8_weight_cast")->bytes, 4.0 * w / 8, 1e-3);
	ck_assert_ptr_null(find(ops, n, "fp8_weight_transpose"));
	c.fp8_params = true;
	n = block_ops(&c, false, CS_PASS_BWD_WEIGHT, ops);
	ck_assert_double_eq_tol(find(ops, n, "fp8_weight_transpose")->bytes, 2.0 * w / 8, 1e-3);
	ck_assert_ptr_null(find(ops, n, "fp8_weight_cast"));
	c.fp8_recast = true;
	n = block_ops(&c, false, CS_PASS_BWD_WEIGHT, ops);
	ck_assert_double_eq_tol(find(ops, n, "fp8_weight_transpose")->bytes, 2.0 * w, 1e-3);
}
END_TEST

/* ---- fp8 parameters -------------------------------------------------------- */

static double dp_bytes(const char *set, cs_stream s, cs_coll_op coll, int stage, int32_t *count)
{
	static const char *text =
		"cluster: {gpu: h100-sxm-80g, nodes: 1, gpus_per_node: 8}\n"
		"model: {preset: llama3-8b}\n"
		"training: {seq_len: 1024, micro_batch: 1, global_batch: 8, precision: fp8}\n"
		"parallelism: {tp: 2, pp: 2, dp: 2, data_parallel: {sharding: zero1}}\n";
	const char *sets[] = { set };
	cs_scenario *sc = cs_test_load(text, sets, 1);
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program *progs = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_plan_build_new(sc, &mesh, NULL, &progs, &diag) == CS_OK, "%s", diag.msg);
	double sum = 0;
	*count = 0;
	for (int32_t i = 0; i < progs[stage].nops[s]; i++) {
		const cs_op *o = &progs[stage].ops[s][i];
		if (o->kind == CS_OP_COLL && o->coll == coll && o->group == CS_GROUP_DP) {
			sum += o->bytes;
			(*count)++;
		}
	}
	cs_plan_programs_free(progs, 2);
	cs_scenario_free(sc);
	return sum;
}

/* The distributed optimizer's parameter all-gathers: one byte for each of
 * a stage's linear weights (16 layers of llama3-8b at tp 2: QKV 4096 x
 * 3072, out 2048 x 4096, up 4096 x 14336, down 7168 x 4096), 16-bit for
 * the rest; one more all-reduce on the gradient stream, the weights'
 * amaxes (4 a layer, fp32). */
START_TEST(fp8_params_halve_the_weights_gathers)
{
	const double lin = 16.0 * (4096.0 * 3072 + 2048.0 * 4096 + 4096.0 * 14336 + 7168.0 * 4096);
	for (int stage = 0; stage < 2; stage++) {
		int32_t n16, n8, r16, r8;
		double b16 = dp_bytes("training.fp8.params=false", CS_STREAM_DP_AG, CS_COLL_ALL_GATHER, stage, &n16);
		double b8 = dp_bytes("training.fp8.params=true", CS_STREAM_DP_AG, CS_COLL_ALL_GATHER, stage, &n8);
		ck_assert_int_gt(n16, 0);
		ck_assert_double_eq_tol(b16 - b8, lin, 1.0);
		double amax = dp_bytes("training.fp8.params=true", CS_STREAM_DP, CS_COLL_ALL_REDUCE, stage, &r8);
		double a16 = dp_bytes("training.fp8.params=false", CS_STREAM_DP, CS_COLL_ALL_REDUCE, stage, &r16);
		ck_assert_int_eq(r8, r16 + 1);
		ck_assert_double_eq(amax - a16, 16 * 4 * 4.0);
	}
}
END_TEST

/* ---- GEMMs ------------------------------------------------------------------ */

/* Where the fp8 table's ratio to the bf16 grid passes the peaks' (Nemotron-4
 * 340B's QKV at TP 8: 2.13), the fp8 GEMM takes half the bf16 one's time. */
START_TEST(fp8_gemm_gains_at_most_the_peaks_ratio)
{
	cs_kprof *p = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kprof_load("h100-sxm", &p, &diag), CS_OK);
	cs_scenario *sc = cs_test_load(FP8GRID, NULL, 0);
	const double m = 4096, n = 2688, k = 18432;
	double t8 = cs_kprof_gemm(p, CS_GEMM_FP8, CS_GEMM_NT, m, n, k);
	double t16 = cs_kprof_gemm(p, CS_GEMM_BF16, CS_GEMM_NT, m, n, k);
	ck_assert_msg(t8 / t16 > 2.05, "table ratio %.3f", t8 / t16);
	cs_layer_op g = { .name = "qkv", .cls = CS_OPC_GEMM, .m = 4096, .n = 2688, .k = 18432, .batch = 1,
			  .flops = 2.0 * m * n * k, .bytes = 2.0 * (m * k + k * n + m * n),
			  .layout = CS_GEMM_NT, .linear = true };
	cs_compute c8 = { .gpu = &sc->cluster.gpu, .prec = CS_PREC_FP8, .prof = p };
	cs_compute c16 = { .gpu = &sc->cluster.gpu, .prec = CS_PREC_BF16, .prof = p };
	double r = sc->cluster.gpu.peak_fp8 / sc->cluster.gpu.peak_bf16;
	ck_assert_double_eq_tol(r, 2.0, 2e-3); /* 1,979 / 989 TFLOPS */
	int64_t ns8 = cs_compute_op_ns(&c8, &g), ns16 = cs_compute_op_ns(&c16, &g);
	ck_assert_int_le(llabs(ns8 - llround((double)ns16 / r)), 1);
	/* below the bound the table stands: a 4096^3 GEMM (NN, the bf16
	 * grid's own layout) gains its 1.88 */
	g.m = g.n = g.k = 4096;
	g.layout = CS_GEMM_NN;
	g.flops = 2.0 * 4096.0 * 4096 * 4096;
	ns8 = cs_compute_op_ns(&c8, &g);
	ns16 = cs_compute_op_ns(&c16, &g);
	ck_assert_msg((double)ns16 / (double)ns8 > 1.8 && (double)ns16 / (double)ns8 < 1.95, "%.3f",
		      (double)ns16 / (double)ns8);
	cs_scenario_free(sc);
	cs_kprof_free(p);
}
END_TEST

/* Under the block-scaled recipes a sequence-parallel gather moves the
 * quantized tensor with its scales (MXFP8 33/32 bytes an element, NVFP4
 * 9/16); under per-tensor current scaling (NVFP4's, fp8-current's) after
 * the shards' amaxes are all-reduced (4 bytes). */
START_TEST(block_scaled_gathers_move_their_scales)
{
	static const struct {
		cs_precision prec;
		double bytes;
		int amax;
	} cases[] = { { CS_PREC_MXFP8, 33.0 / 32, 0 }, { CS_PREC_NVFP4, 9.0 / 16, 1 }, { CS_PREC_FP8_CURRENT, 1, 1 } };
	const double full = 4096.0 * 4096;
	cs_layer_op ops[256];
	for (size_t k = 0; k < 3; k++) {
		cs_layer_ctx c = { .seq_len = 4096, .micro_batch = 1, .tp = 4, .cp = 1, .ep = 1,
				   .sequence_parallel = true, .flash_attention = true,
				   .precision = cases[k].prec, .arch = 100, .framework = CS_FW_MEGATRON,
				   .micro_batches = 8, .fp8_gather = true };
		int n = block_ops(&c, false, CS_PASS_FWD, ops), amax = 0;
		ck_assert_double_eq(find(ops, n, "sp_ag_attn")->comm_bytes, full * cases[k].bytes);
		ck_assert_double_eq(find(ops, n, "sp_ag_mlp")->comm_bytes, full * cases[k].bytes);
		for (int i = 0; i < n; i++)
			if (strcmp(ops[i].name, "nvfp4_amax_ar") == 0) {
				ck_assert_int_eq(ops[i].coll, CS_COLL_ALL_REDUCE);
				ck_assert_double_eq(ops[i].comm_bytes, 4.0);
				ck_assert_str_eq(ops[i + 1].name, amax ? "sp_ag_mlp" : "sp_ag_attn");
				amax++;
			}
		ck_assert_int_eq(amax, 2 * cases[k].amax);
	}
}
END_TEST

/* On Blackwell an MXFP8 GEMM runs at the fp8 table's rate and an NVFP4 one
 * at the fp4 peak's multiple of it (B200: 9 / 4.5 PFLOP/s). */
START_TEST(blackwell_recipes_gemm_rates)
{
	cs_kprof *p = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kprof_load("b200", &p, &diag), CS_OK);
	const cs_gpu_spec *g = cs_preset_gpu("b200");
	ck_assert_ptr_nonnull(g);
	const double m = 8192, n = 8192, k = 8192;
	cs_layer_op op = { .name = "mlp_up", .cls = CS_OPC_GEMM, .m = 8192, .n = 8192, .k = 8192,
			   .batch = 1, .flops = 2.0 * m * n * k, .bytes = 2.0 * (m * k + k * n + m * n),
			   .layout = CS_GEMM_NT, .linear = true };
	int64_t ns[3];
	static const cs_precision precs[3] = { CS_PREC_FP8, CS_PREC_MXFP8, CS_PREC_NVFP4 };
	for (int i = 0; i < 3; i++) {
		cs_compute c = { .gpu = g, .prec = precs[i], .prof = p };
		ns[i] = cs_compute_op_ns(&c, &op);
	}
	ck_assert_int_eq(ns[1], ns[0]);
	ck_assert_int_le(llabs(ns[2] - llround((double)ns[0] * g->peak_fp8 / g->peak_fp4)), 1);
	/* attention and the rest stay 16-bit */
	op.linear = false;
	cs_compute c16 = { .gpu = g, .prec = CS_PREC_BF16, .prof = p };
	cs_compute c4 = { .gpu = g, .prec = CS_PREC_NVFP4, .prof = p };
	ck_assert_int_eq(cs_compute_op_ns(&c4, &op), cs_compute_op_ns(&c16, &op));
	cs_kprof_free(p);
}
END_TEST

static Suite *fp8_suite(void)
{
	Suite *s = suite_create("fp8");
	TCase *tc = tcase_create("fp8");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, stage_group_is_one_pipeline_stage);
	tcase_add_test(tc, amax_tensors_by_closed_form);
	tcase_add_test(tc, amax_reductions_per_region);
	tcase_add_test(tc, sequence_parallel_gathers_in_fp8);
	tcase_add_test(tc, weight_casts_once_per_step_or_each_micro_batch);
	tcase_add_test(tc, fp8_params_halve_the_weights_gathers);
	tcase_add_test(tc, fp8_gemm_gains_at_most_the_peaks_ratio);
	tcase_add_test(tc, block_scaled_gathers_move_their_scales);
	tcase_add_test(tc, blackwell_recipes_gemm_rates);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fp8_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
