/*
 * test_edges.c - the step's edges (training.step_edges, training.grad_clip):
 * the kernels' bytes and counts against their closed forms, the groups
 * their collectives use, the ops each framework adds to the programs, the
 * GPU's idle after each host synchronisation (the MoE layer's wait for its
 * counts among them), and the host's lead a
 * segment of kernels needs.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"
#include "config/scenario.h"
#include "hw/kprof.h"
#include "model/model.h"
#include "program/build.h"
#include "program/build_int.h"
#include "program/mesh.h"
#include "program/program.h"
#include "scenario_text.h"
#include "tmp_dir.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- kernels ------------------------------------------------------------ */

START_TEST(edge_kernels_bytes_and_counts)
{
	const int64_t P = 1000000000; /* 47 full launches of 320 x 65,536 elements */
	int chunks = 1 + 47;
	cs_layer_op n = cs_model_grad_norm_op(P, CS_PREC_BF16, CS_FW_MEGATRON);
	ck_assert_double_eq(n.bytes, 2.0 * (double)P);
	ck_assert_int_eq(n.kernels, chunks + 2);
	ck_assert_int_eq(n.cls, CS_OPC_MEMBOUND);
	cs_layer_op s = cs_model_grad_scale_op(P, CS_PREC_BF16, CS_FW_MEGATRON);
	ck_assert_double_eq(s.bytes, 4.0 * (double)P);
	ck_assert_int_eq(s.kernels, chunks);
	/* eager PyTorch: fp32 gradients whatever grad_dtype says; the
	 * coefficient computed by three more kernels */
	n = cs_model_grad_norm_op(P, CS_PREC_BF16, CS_FW_PYTORCH);
	ck_assert_double_eq(n.bytes, 4.0 * (double)P);
	s = cs_model_grad_scale_op(P, CS_PREC_BF16, CS_FW_PYTORCH);
	ck_assert_double_eq(s.bytes, 8.0 * (double)P);
	ck_assert_int_eq(s.kernels, chunks + 3);
	s = cs_model_grad_scale_op(P, CS_PREC_FP32, CS_FW_FSDP);
	ck_assert_double_eq(s.bytes, 8.0 * (double)P);
	cs_layer_op z = cs_model_grad_zero_op(P, CS_PREC_FP32);
	ck_assert_double_eq(z.bytes, 4.0 * (double)P);
	ck_assert_int_eq(z.kernels, 1);
}
END_TEST

/* ---- groups ------------------------------------------------------------- */

START_TEST(model_parallel_and_world_groups)
{
	cs_parallel_spec p = { .tp = 2, .cp = 1, .ep = 1, .pp = 4, .dp = 2 };
	for (int a = 0; a < CS_AXIS_COUNT; a++)
		p.order[a] = a;
	cs_mesh m;
	cs_mesh_init(&m, &p);
	ck_assert_int_eq(m.world, 16);
	for (int64_t r = 0; r < m.world; r++) {
		cs_group g = cs_mesh_group(&m, CS_GROUP_MP, r, 8);
		ck_assert_int_eq(cs_group_size(&g), 8);
		int seen[8] = { 0 };
		for (int64_t i = 0; i < 8; i++) {
			int64_t x = cs_group_member(&g, i);
			/* same replica, every (tp, pp) once */
			ck_assert_int_eq(cs_mesh_coord(&m, x, CS_AXIS_DP), cs_mesh_coord(&m, r, CS_AXIS_DP));
			seen[cs_mesh_coord(&m, x, CS_AXIS_TP) + 2 * cs_mesh_coord(&m, x, CS_AXIS_PP)]++;
		}
		for (int i = 0; i < 8; i++)
			ck_assert_int_eq(seen[i], 1);
		ck_assert_int_eq(cs_mesh_group_index(&m, CS_GROUP_MP, r, 8), cs_mesh_coord(&m, r, CS_AXIS_DP));
		cs_group w = cs_mesh_group(&m, CS_GROUP_WORLD, r, 8);
		ck_assert_int_eq(cs_group_size(&w), 16);
		for (int64_t i = 0; i < 16; i++)
			ck_assert_int_eq(cs_group_member(&w, i), i);
		ck_assert_int_eq(cs_mesh_group_index(&m, CS_GROUP_WORLD, r, 8), 0);
	}
	ck_assert_int_eq(cs_mesh_group_count(&m, CS_GROUP_MP, 8), 2);
	ck_assert_int_eq(cs_mesh_group_count(&m, CS_GROUP_WORLD, 8), 1);
	ck_assert_str_eq(cs_group_kind_name(CS_GROUP_MP), "mp");
	ck_assert_str_eq(cs_group_kind_name(CS_GROUP_WORLD), "world");
}
END_TEST

/* ---- programs ----------------------------------------------------------- */

/* tp 2 x pp 2 x dp 4, 4 micro-batches per replica */
#define GRID \
	"cluster: {gpu: h100-sxm-80g, nodes: 2, gpus_per_node: 8}\n" \
	"model: {preset: llama3-8b}\n" \
	"training: {seq_len: 1024, micro_batch: 1, global_batch: 16}\n" \
	"parallelism: {tp: 2, pp: 2, dp: 4}\n"
enum { MICRO = 4 };

typedef struct counts {
	int32_t compute;
	int32_t dp_ops;          /* on the gradient stream */
	int32_t loss_ar;         /* 8-byte all-reduces over the DP group */
	int32_t stat_ar[CS_GROUP_KINDS]; /* 4-byte all-reduces, by group */
	int32_t buckets;         /* gradient reductions */
} counts;

static counts count_ops(const cs_program *p)
{
	counts c = { .compute = p->nops[CS_STREAM_COMPUTE], .dp_ops = p->nops[CS_STREAM_DP] };
	for (int32_t i = 0; i < p->nops[CS_STREAM_DP]; i++) {
		const cs_op *o = &p->ops[CS_STREAM_DP][i];
		if (o->bytes == 8.0 && o->group == CS_GROUP_DP && o->coll == CS_COLL_ALL_REDUCE)
			c.loss_ar++;
		else if (o->bytes == 4.0 && o->coll == CS_COLL_ALL_REDUCE)
			c.stat_ar[o->group]++;
		else
			c.buckets++;
	}
	return c;
}

static void build_counts(const char *sets_extra[], size_t nextra, counts out[2])
{
	const char *sets[8];
	for (size_t i = 0; i < nextra; i++)
		sets[i] = sets_extra[i];
	cs_scenario *sc = cs_test_load(GRID, sets, nextra);
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program *progs = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_plan_build_new(sc, &mesh, NULL, &progs, &diag) == CS_OK, "%s", diag.msg);
	for (int s = 0; s < 2; s++)
		out[s] = count_ops(&progs[s]);
	cs_plan_programs_free(progs, 2);
	cs_scenario_free(sc);
}

static const struct {
	const char *framework, *sharding, *clip;
	int zero, loss, bucket_checks;   /* Megatron's: per step, per micro-batch, per bucket */
	cs_group_kind stat[3];           /* the norm's all-reduces */
	int nstat, fixed;                /* and the kernels the norm and the clip add */
} prog_cases[] = {
	{ "megatron", "none", "true", 1, 1, 1, { CS_GROUP_MP }, 1, 2 },
	{ "megatron", "zero1", "true", 1, 1, 1, { CS_GROUP_WORLD }, 1, 2 },
	{ "megatron", "zero1", "false", 1, 1, 1, { 0 }, 0, 0 },
	{ "pytorch", "none", "true", 0, 0, 0, { CS_GROUP_TP, CS_GROUP_PP }, 2, 2 },
	{ "fsdp", "zero3", "true", 0, 0, 0, { CS_GROUP_DP, CS_GROUP_TP, CS_GROUP_PP }, 3, 2 },
};

START_TEST(edges_add_each_frameworks_ops)
{
	char fw[64], sh[80], clip[64];
	snprintf(fw, sizeof fw, "training.framework=%s", prog_cases[_i].framework);
	snprintf(sh, sizeof sh, "parallelism.data_parallel.sharding=%s", prog_cases[_i].sharding);
	snprintf(clip, sizeof clip, "training.grad_clip=%s", prog_cases[_i].clip);
	const char *on[] = { fw, sh, clip }, *off[] = { fw, sh, clip, "training.step_edges=false" };
	counts a[2], b[2];
	build_counts(on, N(on), a);
	build_counts(off, N(off), b);
	for (int s = 0; s < 2; s++) {
		int last = s == 1;
		/* without the edges: none of their collectives */
		ck_assert_int_eq(b[s].loss_ar, 0);
		for (int g = 0; g < CS_GROUP_KINDS; g++)
			ck_assert_int_eq(b[s].stat_ar[g], 0);
		ck_assert_int_eq(a[s].buckets, b[s].buckets);
		/* the loss's all-reduce per micro-batch, on the last stage only */
		ck_assert_int_eq(a[s].loss_ar, last ? MICRO * prog_cases[_i].loss : 0);
		for (int i = 0; i < prog_cases[_i].nstat; i++)
			ck_assert_int_eq(a[s].stat_ar[prog_cases[_i].stat[i]], 1);
		int stats = 0;
		for (int g = 0; g < CS_GROUP_KINDS; g++)
			stats += a[s].stat_ar[g];
		ck_assert_int_eq(stats, prog_cases[_i].nstat);
		ck_assert_int_eq(a[s].dp_ops, b[s].dp_ops + a[s].loss_ar + stats);
		/* compute: the zeroing; two checks (a kernel each) per loss; a
		 * norm and two checks per bucket; the norm and the clip */
		int32_t want = prog_cases[_i].zero + (last ? 2 * MICRO * prog_cases[_i].loss : 0) +
			       3 * prog_cases[_i].bucket_checks * b[s].buckets + prog_cases[_i].fixed;
		ck_assert_int_eq(a[s].compute - b[s].compute, want);
	}
}
END_TEST

/* The host idle of a one-stage scenario's program with `set`, timed by `prof`. */
static int64_t host_idle(const char *text, const char *set, const cs_kprof *prof)
{
	cs_diag diag = { { 0 } };
	cs_scenario *sc = cs_test_load(text, &set, 1);
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program prog;
	cs_program_init(&prog);
	ck_assert_msg(cs_plan_build(sc, &mesh, prof, &prog, &diag) == CS_OK, "%s", diag.msg);
	int64_t idle = prog.class_ns[CS_COMPUTE_HOST];
	cs_program_free(&prog);
	cs_scenario_free(sc);
	return idle;
}

/* One GPU under Megatron: each micro-batch's loss is checked twice and the
 * gradient norm read once, each a synchronisation after which the next
 * kernel reaches the GPU a launch after the host resumes: (2m + 1) x (sync
 * + launch) of host idle, the GPU being ahead of the host everywhere else. */
START_TEST(host_syncs_idle_the_gpu_by_closed_form)
{
	static const char *text =
		"cluster: {gpu: h200-sxm-141g, nodes: 1, gpus_per_node: 1}\n"
		"model: {preset: llama3-8b}\n"
		"training: {seq_len: 4096, micro_batch: 1, global_batch: 4}\n";
	cs_kprof *prof = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kprof_load("h200-sxm", &prof, &diag), CS_OK);
	int64_t off = host_idle(text, "training.step_edges=false", prof);
	int64_t on = host_idle(text, "training.step_edges=true", prof);
	int64_t sync = (int64_t)(cs_kprof_sync_ns(prof) + 0.5), launch = (int64_t)(cs_kprof_eager_launch_ns(prof) + 0.5);
	ck_assert_int_eq(sync, 10310);
	ck_assert_int_eq(launch, 12530);
	ck_assert_int_eq(on - off, (2 * 4 + 1) * (sync + launch));
	cs_kprof_free(prof);
}
END_TEST

/* Mixtral's MoE layer on one GPU, two layers, four micro-batches, the
 * permutations fused: dropless, the host reads the tokens per expert
 * before the grouped GEMMs (Megatron-Core's before_finish), once a layer's
 * forward, and the first expert GEMM reaches the GPU a launch after the
 * host resumes: 2 x 4 x (sync + launch) more host idle than padded to
 * capacity, where nothing waits (the GEMMs after it are long enough for
 * the host to regain its lead at once). */
START_TEST(moe_host_waits_idle_the_gpu_by_closed_form)
{
	static const char *text =
		"cluster: {gpu: h200-sxm-141g, nodes: 1, gpus_per_node: 1}\n"
		"model: {preset: mixtral-8x7b, layers: 2}\n"
		"training: {seq_len: 4096, micro_batch: 1, global_batch: 4}\n"
		"parallelism: {moe_permute_fusion: true, moe_router_fusion: true, moe_capacity_factor: 1}\n";
	cs_kprof *prof = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kprof_load("h200-sxm", &prof, &diag), CS_OK);
	int64_t dropless = host_idle(text, "parallelism.moe_pad_to_capacity=false", prof);
	int64_t padded = host_idle(text, "parallelism.moe_pad_to_capacity=true", prof);
	int64_t sync = (int64_t)(cs_kprof_sync_ns(prof) + 0.5), launch = (int64_t)(cs_kprof_eager_launch_ns(prof) + 0.5);
	ck_assert_int_eq(dropless - padded, 2 * 4 * (sync + launch));
	cs_kprof_free(prof);
}
END_TEST

/* A segment of a 100 us kernel then ten of 1 us, 12.5 us per launch: the
 * GPU runs the first from 12.5 us to 112.5, the next nine back to back to
 * 121.5, and waits for the last, issued at 137.5: the segment ends at
 * 138.5 us, 28.5 after its 110 us of work. (Its last launch plus its mean
 * kernel gives 147.5, its first launch plus its work 122.5.) */
START_TEST(host_lead_inside_a_segment)
{
	const double L = 12500;
	int64_t need = cs__host_need(L, 0.0, 0, 1.0, 100000), before = 100000;
	ck_assert_int_eq(need, 12500);
	for (int j = 1; j <= 10; j++) {
		int64_t n = cs__host_need(L, (double)j, before, 1.0, 1000);
		need = n > need ? n : need;
		before += 1000;
	}
	ck_assert_int_eq(need, 28500);
	/* one op of several kernels: its last kernel's launch, less the GPU
	 * time of the kernels before it */
	ck_assert_int_eq(cs__host_need(L, 0.0, 0, 10.0, 50000), 125000 - 45000);
	cs_program p;
	cs_program_init(&p);
	cs_builder b;
	memset(&b, 0, sizeof b);
	b.prog = &p;
	b.launch_ns = L;
	int64_t cls[CS_COMPUTE_KINDS] = { 0 }, kern[CS_COMPUTE_KINDS] = { 0 };
	cls[CS_COMPUTE_MEMBOUND] = 110000;
	kern[CS_COMPUTE_MEMBOUND] = 11;
	cs_op op = { .kind = CS_OP_COMPUTE, .ns = 110000 };
	ck_assert_int_eq(cs__add_segment(&b, &op, cls, kern, 11, 0.0, need), 1);
	ck_assert_int_eq(p.ops[CS_STREAM_COMPUTE][0].ns, 138500);
	ck_assert_int_eq(p.class_ns[CS_COMPUTE_HOST], 28500);
	cs_program_free(&p);
}
END_TEST

START_TEST(bad_switch_is_refused_where_written)
{
	char path[4096];
	cs_test_tmp(path, sizeof path, "cs-test");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("cluster: {gpu: h100-sxm-80g, nodes: 1}\nmodel: {preset: llama3-8b}\n"
	      "training: {grad_clip: sometimes}\n", f);
	fclose(f);
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_scenario_load(path, NULL, 0, &sc, &diag), CS_ERR_INPUT);
	unlink(path);
	char want[4200];
	snprintf(want, sizeof want, "%s:3:23: expected true or false for 'training.grad_clip', got 'sometimes'",
		 path);
	ck_assert_str_eq(diag.msg, want);
}
END_TEST

static Suite *edges_suite(void)
{
	Suite *s = suite_create("edges");
	TCase *tc = tcase_create("edges");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, edge_kernels_bytes_and_counts);
	tcase_add_test(tc, model_parallel_and_world_groups);
	tcase_add_loop_test(tc, edges_add_each_frameworks_ops, 0, N(prog_cases));
	tcase_add_test(tc, host_syncs_idle_the_gpu_by_closed_form);
	tcase_add_test(tc, moe_host_waits_idle_the_gpu_by_closed_form);
	tcase_add_test(tc, host_lead_inside_a_segment);
	tcase_add_test(tc, bad_switch_is_refused_where_written);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(edges_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
