/*
 * test_config.c - the scenario loader: units, presets, YAML, validation,
 * overrides, stragglers and the key table against docs/scenarios.md.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"
#include "config/config.h"
#include "config/config_int.h"
#include "config/yaml_node.h"
#include "tmp_dir.h"

#define BASE "cluster:\n  gpu: h100-sxm-80g\n  nodes: 2\nmodel: {preset: llama2-7b}\n"
#define MOE                                                                                       \
	"cluster: {gpu: h100-sxm-80g, nodes: 2}\nmodel: {preset: llama2-7b, experts: 8, top_k: 2, " \
	"expert_ffn: 1024}\n"

/* Write text to a fresh temporary .yaml file; the caller unlinks and frees. */
static char *temp_yaml(const char *text)
{
	char buf[4096];
	char *path = strdup(cs_test_tmp(buf, sizeof buf, "cs-config"));
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static cs_status load_text(const char *text, const char *const *sets, size_t n,
                           cs_scenario **sc, cs_diag *diag)
{
	char *path = temp_yaml(text);
	cs_status st = cs_scenario_load(path, sets, n, sc, diag);

	unlink(path);
	free(path);
	return st;
}

/* ---- other tools' spellings ------------------------------------------------ */

/* Values in any case, and other tools' names for them, read as ours. */
static const struct {
	const char *set;
	int field; /* 0 schedule, 1 sharding, 2 precision */
	int want;
} value_cases[] = {
	{ "parallelism.pipeline.schedule=1F1B", 0, CS_SCHED_1F1B },
	{ "parallelism.pipeline.schedule=GPipe", 0, CS_SCHED_GPIPE },
	{ "parallelism.pipeline.schedule=ZBVZeroBubble", 0, CS_SCHED_ZB_V },
	{ "parallelism.pipeline.schedule=ScheduleZBVZeroBubble", 0, CS_SCHED_ZB_V },
	{ "parallelism.data_parallel.sharding=FULL_SHARD", 1, CS_SHARD_ZERO3 },
	{ "parallelism.data_parallel.sharding=SHARD_GRAD_OP", 1, CS_SHARD_GRAD_OP },
	{ "parallelism.data_parallel.sharding=HYBRID_SHARD", 1, CS_SHARD_HYBRID },
	{ "parallelism.data_parallel.sharding=NO_SHARD", 1, CS_SHARD_NONE },
	{ "training.precision=bfloat16", 2, CS_PREC_BF16 },
	{ "training.precision=FP8", 2, CS_PREC_FP8 },
};

START_TEST(other_spellings_of_values_read_as_ours)
{
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	const char *sets[] = { value_cases[_i].set };
	ck_assert_msg(load_text(BASE, sets, 1, &sc, &diag) == CS_OK, "%s: %s", sets[0], diag.msg);
	int got = value_cases[_i].field == 0   ? (int)sc->parallel.schedule
		  : value_cases[_i].field == 1 ? (int)sc->parallel.sharding
					       : (int)sc->training.precision;
	ck_assert_int_eq(got, value_cases[_i].want);
	cs_scenario_free(sc);
}
END_TEST

/* Transformer Engine's recipe classes name our precisions (on a GPU that
 * runs them). */
START_TEST(te_recipe_names_read_as_precisions)
{
	static const struct {
		const char *set;
		cs_precision want;
	} cases[] = { { "training.precision=MXFP8BlockScaling", CS_PREC_MXFP8 },
		      { "training.precision=NVFP4BlockScaling", CS_PREC_NVFP4 },
		      { "training.precision=DelayedScaling", CS_PREC_FP8 },
		      { "training.precision=Float8CurrentScaling", CS_PREC_FP8_CURRENT } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cs_scenario *sc = NULL;
		cs_diag diag = { { 0 } };
		const char *sets[] = { "cluster.gpu=b200", cases[i].set };
		ck_assert_msg(load_text(BASE, sets, 2, &sc, &diag) == CS_OK, "%s: %s", sets[1], diag.msg);
		ck_assert_int_eq(sc->training.precision, cases[i].want);
		cs_scenario_free(sc);
	}
}
END_TEST

/* Megatron-LM's and torchtitan's flag names are suggested as ours, in the
 * file and on the command line; every alias names a real key. */
START_TEST(other_tools_key_names_are_suggested)
{
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	const char *sets[] = { "tensor_model_parallel_size=4" };
	ck_assert_int_eq(load_text(BASE, sets, 1, &sc, &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "--set 'tensor_model_parallel_size=4': unknown key "
				   "'tensor_model_parallel_size' (did you mean 'parallelism.tp'?)");
	ck_assert_int_eq(load_text(BASE "parallelism: {pipeline_parallel_degree: 2}\n", NULL, 0, &sc, &diag),
			 CS_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(diag.msg, ":5:15: unknown key 'pipeline_parallel_degree' in "
					       "'parallelism' (did you mean 'parallelism.pp'?)"));
	static const char *const names[] = { "tensor_model_parallel_size", "num_query_groups",
					     "pipeline_parallel_schedule", "seq_length", "num_experts" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		ck_assert_ptr_nonnull(cs_config_key_find(cs__config_key_alias(names[i])));
	ck_assert_ptr_null(cs__config_key_alias("bandwith"));
}
END_TEST

/* ---- units ---------------------------------------------------------------- */

static const struct {
	cs_config_kind kind;
	const char *text;
	double want;        /* base units (ns for times) */
	const char *error;  /* substring, or NULL for success */
} unit_cases[] = {
	{CS_KIND_SIZE, "25 MiB", 25.0 * 1048576, NULL},
	{CS_KIND_SIZE, "80GB", 80e9, NULL},
	{CS_KIND_SIZE, "1.5 KiB", 1536, NULL},
	{CS_KIND_SIZE, "2 TiB", 2.0 * 1099511627776.0, NULL},
	{CS_KIND_SIZE, "8B", 8, NULL},
	{CS_KIND_SIZE, "80", 0, "needs a unit"},
	{CS_KIND_SIZE, "80 XB", 0, "unknown size unit 'XB'"},
	{CS_KIND_SIZE, "-1 GB", 0, "negative size"},
	{CS_KIND_SIZE, "nan GB", 0, "expected a size"},
	{CS_KIND_SIZE, "inf GB", 0, "expected a size"},
	{CS_KIND_SIZE, "GB", 0, "expected a size"},
	{CS_KIND_BANDWIDTH, "400 Gb/s", 50e9, NULL},
	{CS_KIND_BANDWIDTH, "450 GB/s", 450e9, NULL},
	{CS_KIND_BANDWIDTH, "3.35 TB/s", 3.35e12, NULL},
	{CS_KIND_BANDWIDTH, "100 Mb/s", 12.5e6, NULL},
	{CS_KIND_BANDWIDTH, "1 GiB/s", 1073741824.0, NULL},
	{CS_KIND_BANDWIDTH, "400 gb/s", 0, "accepted: B/s"},
	{CS_KIND_TIME, "2 us", 2000, NULL},
	{CS_KIND_TIME, "2 \xc2\xb5s", 2000, NULL},
	{CS_KIND_TIME, "1.5ms", 1.5e6, NULL},
	{CS_KIND_TIME, "3 s", 3e9, NULL},
	{CS_KIND_TIME, "0.6 ns", 1, NULL},
	{CS_KIND_TIME, "1e3 ns", 1000, NULL},
	{CS_KIND_TIME, "0.2 ns", 0, "rounds to 0 ns"},
	{CS_KIND_TIME, "0 us", 0, NULL},
	{CS_KIND_TIME, "5 min", 300e9, NULL},
	{CS_KIND_TIME, "1.5 h", 5400e9, NULL},
	{CS_KIND_TIME, "54 d", 54 * 86400e9, NULL},
	{CS_KIND_TIME, "5 weeks", 0, "unknown time unit"},
	{CS_KIND_TIME, "1e300 s", 0, "too large"},
	{CS_KIND_FLOPS, "989 TFLOPS", 989e12, NULL},
	{CS_KIND_FLOPS, "2.25 PFLOPS", 2.25e15, NULL},
	{CS_KIND_FLOPS, "312 TFLOP/s", 312e12, NULL},
	{CS_KIND_FLOPS, "989 TF", 0, "accepted: FLOPS"},
};

START_TEST(units_convert_to_base_units)
{
	char msg[512] = "";
	double v = -1;
	int64_t ns = -1;
	cs_status st;

	switch (unit_cases[_i].kind) {
	case CS_KIND_SIZE: st = cs_parse_size(unit_cases[_i].text, &v, msg, sizeof msg); break;
	case CS_KIND_BANDWIDTH: st = cs_parse_bandwidth(unit_cases[_i].text, &v, msg, sizeof msg); break;
	case CS_KIND_FLOPS: st = cs_parse_flops(unit_cases[_i].text, &v, msg, sizeof msg); break;
	default:
		st = cs_parse_time(unit_cases[_i].text, &ns, msg, sizeof msg);
		v = (double)ns;
		break;
	}
	if (unit_cases[_i].error) {
		ck_assert_int_eq(st, CS_ERR_INPUT);
		ck_assert_msg(strstr(msg, unit_cases[_i].error), "'%s': got '%s'", unit_cases[_i].text, msg);
	} else {
		ck_assert_msg(st == CS_OK, "'%s': %s", unit_cases[_i].text, msg);
		ck_assert_double_eq_tol(v, unit_cases[_i].want, 1e-9 * fabs(unit_cases[_i].want) + 1e-12);
	}
}
END_TEST

/* ---- suggestions ---------------------------------------------------------- */

START_TEST(suggest_finds_near_misses_only)
{
	static const char *const words[] = {"bandwidth", "latency", "kind", "nics_per_node"};
	static const struct { const char *word, *want; } cases[] = {
		{"bandwith", "bandwidth"}, {"latancy", "latency"}, {"Kind", "kind"},
		{"nics_per_nod", "nics_per_node"}, {"speed", NULL}, {"x", NULL}, {"", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = cs_suggest(cases[i].word, words, 4);
		if (cases[i].want)
			ck_assert_msg(got && strcmp(got, cases[i].want) == 0, "'%s' -> %s", cases[i].word,
			              got ? got : "NULL");
		else
			ck_assert_msg(got == NULL, "'%s' -> %s", cases[i].word, got);
	}
}
END_TEST

/* ---- presets -------------------------------------------------------------- */

#define MIB 1048576.0

/* HBM: the totals NVIDIA's driver reports (nvidia-smi, NVML), in MiB */
START_TEST(presets_hold_reference_figures)
{
	/* NVL72 racks (docs/references.md): bf16 from the rack figures over 72
	 * GPUs; the GB200's HBM as nvidia-smi reports it, the GB300's the stated
	 * assumption; trays of 4 GPUs and 4 NICs in one NVLink domain of 72 */
	static const struct { const char *name; double bf16, hbm, eff; int sms, arch, nvls; double nvlink, nic;
			      int gpn, domain; } cases[] = {
		{"a100-sxm-80g", 312e12, 81920 * MIB, 0.869, 108, 80, 0, 300e9, 25e9, 8, 8},
		{"h100-sxm-80g", 989e12, 81559 * MIB, 0.80, 132, 90, 1, 450e9, 50e9, 8, 8},
		{"h200-sxm-141g", 989e12, 143771 * MIB, 0.80, 132, 90, 1, 450e9, 50e9, 8, 8},
		/* H800: the H100 die with NVLink cut to 400 GB/s bidirectional */
		{"h800-sxm-80g", 989e12, 81559 * MIB, 0.80, 132, 90, 1, 200e9, 50e9, 8, 8},
		{"b200", 2250e12, 183359 * MIB, 0.776, 148, 100, 1, 900e9, 100e9, 8, 8},
		{"gb200-nvl72", 2500e12, 189471 * MIB, 0.776, 148, 100, 1, 900e9, 50e9, 4, 72},
		{"gb300-nvl72", 2500e12, 284206 * MIB, 0.776, 160, 103, 1, 900e9, 100e9, 4, 72},
	};
	size_t count = 0;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const cs_gpu_spec *g = cs_preset_gpu(cases[i].name);
		cs_cluster_spec c;
		ck_assert_ptr_nonnull(g);
		ck_assert_double_eq(g->peak_bf16, cases[i].bf16);
		ck_assert_double_eq(g->hbm_bytes, cases[i].hbm);
		ck_assert_double_eq(g->gemm_efficiency, cases[i].eff);
		ck_assert_int_eq(g->sms, cases[i].sms);
		ck_assert_int_eq(g->arch, cases[i].arch);
		ck_assert_int_eq(g->nvls, cases[i].nvls);
		memset(&c, 0, sizeof c);
		cs_preset_server_defaults(g, &c);
		ck_assert_double_eq(c.scale_up.bandwidth, cases[i].nvlink);
		ck_assert_double_eq(c.scale_out.bandwidth, cases[i].nic);
		ck_assert_int_eq(c.gpus_per_node, cases[i].gpn);
		ck_assert_int_eq(c.nics_per_node, cases[i].gpn);
		ck_assert_int_eq(c.scale_up_domain, cases[i].domain);
		ck_assert_int_eq(c.scale_up.latency_ns, 2000);
		ck_assert_int_eq(c.scale_out.latency_ns, 5000);
	}
	/* the racks' fp8 and fp4 (dense, rack figures / 72), HBM bandwidth, profile
	 * and the NICs' PCIe: Gen5 x16 on GB200, ConnectX-8's Gen6 x16 on GB300 */
	const cs_gpu_spec *gb2 = cs_preset_gpu("gb200-nvl72"), *gb3 = cs_preset_gpu("gb300-nvl72");
	ck_assert(gb2->peak_fp8 == 5000e12 && gb3->peak_fp8 == 5000e12);
	ck_assert(gb2->peak_fp4 == 10000e12 && gb3->peak_fp4 == 15000e12);
	ck_assert(gb2->hbm_bandwidth == 8e12 && gb3->hbm_bandwidth == 8e12);
	ck_assert_str_eq(gb2->profile, "gb200");
	ck_assert_str_eq(gb3->profile, "gb200");
	cs_cluster_spec r2 = {0}, r3 = {0};
	cs_preset_server_defaults(gb2, &r2);
	cs_preset_server_defaults(gb3, &r3);
	ck_assert(r2.pcie.bandwidth == 63e9 && r3.pcie.bandwidth == 126e9);
	/* TPU v4: six ICI links; 24 TB/s of bisection over the 512 links a cut
	 * through a 16x16x16 pod crosses */
	const cs_gpu_spec *tpu = cs_preset_gpu("tpu-v4");
	ck_assert_ptr_nonnull(tpu);
	ck_assert_double_eq(tpu->peak_bf16, 275e12);
	ck_assert_double_eq(tpu->peak_fp8, 0);
	ck_assert_double_eq(tpu->hbm_bytes, 32.0 * 1024 * 1024 * 1024);
	ck_assert_double_eq(tpu->hbm_bandwidth, 1.2e12);
	ck_assert_int_eq(tpu->ici_links, 6);
	ck_assert_double_eq_tol(tpu->ici_bandwidth * 512, 24e12, 1);
	while (cs_preset_gpu_name(count))
		count++;
	ck_assert_uint_eq(count, 8);
	ck_assert_ptr_null(cs_preset_gpu("h100"));
}
END_TEST

START_TEST(presets_hold_model_shapes)
{
	static const struct { const char *name; int64_t l, h, a, kv, ffn, v, experts; } cases[] = {
		{"llama2-7b", 32, 4096, 32, 32, 11008, 32000, 0},
		{"llama3-8b", 32, 4096, 32, 8, 14336, 128256, 0},
		{"llama3-70b", 80, 8192, 64, 8, 28672, 128256, 0},
		{"llama3-405b", 126, 16384, 128, 8, 53248, 128256, 0},
		{"gpt3-175b", 96, 12288, 96, 96, 49152, 50257, 0},
		{"megatron-1t", 128, 25600, 160, 160, 102400, 51200, 0},
		{"mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 8},
		{"qwen3-30b-a3b", 48, 2048, 32, 4, 6144, 151936, 128},
		{"qwen3-235b-a22b", 94, 4096, 64, 4, 12288, 151936, 128},
		{"deepseek-v3-like", 61, 7168, 128, 128, 18432, 129280, 256},
		{"deepseek-v3", 61, 7168, 128, 128, 18432, 129280, 256},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const cs_model_spec *m = cs_preset_model(cases[i].name);
		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(m->layers, cases[i].l);
		ck_assert_int_eq(m->hidden, cases[i].h);
		ck_assert_int_eq(m->heads, cases[i].a);
		ck_assert_int_eq(m->kv_heads, cases[i].kv);
		ck_assert_int_eq(m->ffn, cases[i].ffn);
		ck_assert_int_eq(m->vocab, cases[i].v);
		ck_assert_int_eq(m->experts, cases[i].experts);
		ck_assert_str_eq(cs_preset_model_name(i), cases[i].name);
	}
	ck_assert_ptr_null(cs_preset_model_name(sizeof cases / sizeof cases[0]));
	const cs_model_spec *ds = cs_preset_model("deepseek-v3");
	ck_assert_int_eq(ds->q_lora_rank, 1536);
	ck_assert_int_eq(ds->kv_lora_rank, 512);
	ck_assert_int_eq(ds->head_dim, 128);
	ck_assert_int_eq(ds->rope_head_dim, 64);
	ck_assert_int_eq(ds->v_head_dim, 128);
	ck_assert_int_eq(ds->kv_lora_rank + ds->q_lora_rank, 2048);
	ck_assert_int_eq(cs_preset_model("deepseek-v3-like")->kv_lora_rank, 0);
}
END_TEST

/* ---- good scenarios ------------------------------------------------------- */

/* An NVL72 GPU's server is its rack's tray: 4 GPUs and 4 NICs, in one
 * NVLink domain of 72 (of the cluster's GPUs where they are fewer); what
 * the scenario gives wins, and an override of the GPU derives them again. */
START_TEST(nvl72_trays_share_the_rack_domain)
{
	static const struct { const char *yaml; int gpn, domain, nics; } cases[] = {
		{"cluster: {gpu: gb200-nvl72, nodes: 36}\nmodel: llama2-7b\n", 4, 72, 4},
		{"cluster: {gpu: gb200-nvl72, nodes: 16}\nmodel: llama2-7b\n", 4, 64, 4},
		{"cluster: {gpu: gb300-nvl72, nodes: 9, gpus_per_node: 8}\nmodel: llama2-7b\n", 8, 72, 8},
		{"cluster: {gpu: gb200-nvl72, nodes: 36, scale_up: {domain: 4}}\nmodel: llama2-7b\n", 4, 4, 4},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cs_scenario *sc = NULL;
		cs_diag diag;
		ck_assert_msg(load_text(cases[i].yaml, NULL, 0, &sc, &diag) == CS_OK, "%s", diag.msg);
		ck_assert_int_eq(sc->cluster.gpus_per_node, cases[i].gpn);
		ck_assert_int_eq(sc->cluster.scale_up_domain, cases[i].domain);
		ck_assert_int_eq(sc->cluster.nics_per_node, cases[i].nics);
		cs_scenario_free(sc);
	}
	cs_scenario *sc = NULL;
	cs_diag diag;
	const char *sets[] = { "cluster.gpu=b200" };
	ck_assert_msg(load_text(cases[0].yaml, sets, 1, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->cluster.gpus_per_node, 8);
	ck_assert_int_eq(sc->cluster.scale_up_domain, 8);
	ck_assert_double_eq(sc->cluster.scale_out.bandwidth, 100e9);
	ck_assert_int_eq(cs_config_apply_override(sc, "cluster.gpu=gb300-nvl72", &diag), CS_OK);
	ck_assert_msg(cs_config_validate(sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->cluster.gpus_per_node, 4);
	ck_assert_int_eq(sc->cluster.scale_up_domain, 72);
	ck_assert_double_eq(sc->cluster.scale_out.bandwidth, 100e9);
	ck_assert_double_eq(sc->cluster.pcie.bandwidth, 126e9);
	ck_assert_int_eq(cs_config_apply_override(sc, "cluster.gpu=h100-sxm-80g", &diag), CS_OK);
	ck_assert_msg(cs_config_validate(sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->cluster.gpus_per_node, 8);
	ck_assert_int_eq(sc->cluster.scale_up_domain, 8);
	cs_scenario_free(sc);
}
END_TEST

START_TEST(load_fills_values_and_derives_the_rest)
{
	cs_scenario *sc = NULL;
	cs_diag diag;
	cs_status st;

	st = load_text("cluster:\n  gpu: a100-sxm-80g\n  nodes: 4\n  scale_out: {bandwidth: 200 Gb/s}\n"
	               "model:\n  preset: llama3-8b\n  layers: 16\n"
	               "parallelism: {tp: 2, pp: 2}\ntraining: {micro_batch: 2, optimizer_dtype: bf16}\n",
	               NULL, 0, &sc, &diag);
	ck_assert_msg(st == CS_OK, "%s", diag.msg);
	ck_assert_str_eq(sc->cluster.gpu.name, "a100-sxm-80g");
	ck_assert_int_eq(sc->training.optimizer_dtype, CS_STATE_BF16);
	ck_assert_int_eq(sc->model.layers, 16);         /* inline wins over the preset */
	ck_assert_int_eq(sc->model.hidden, 4096);
	ck_assert_int_eq(sc->parallel.dp, 8);           /* 32 / (2 x 2) */
	ck_assert_int_eq(sc->training.global_batch, 16);/* dp x micro_batch */
	ck_assert_double_eq(sc->cluster.scale_out.bandwidth, 25e9);
	ck_assert_double_eq(sc->cluster.scale_up.bandwidth, 300e9); /* A100 server */
	ck_assert_int_eq(sc->cluster.scale_up_domain, 8);
	ck_assert_int_eq(sc->parallel.virtual_stages, 1);
	ck_assert_double_eq(sc->parallel.bucket_bytes, 25.0 * 1048576);
	ck_assert_int_eq(strncmp(sc->name, "cs-config-", 10), 0); /* from the file name */
	cs_scenario_free(sc);
}
END_TEST

/* simulate.fold and simulate.threads: auto by default, and what each value
 * reads as; a cluster too large to run one by one loads when it can fold. */
START_TEST(fold_and_threads_default_to_auto)
{
	static const struct { const char *text; int fold; int64_t threads; } cases[] = {
		{ "", CS_FOLD_AUTO, 0 },
		{ "simulate: {fold: auto, threads: auto}\n", CS_FOLD_AUTO, 0 },
		{ "simulate: {fold: false, threads: 3}\n", CS_FOLD_OFF, 3 },
		{ "simulate: {fold: True, threads: AUTO}\n", CS_FOLD_ON, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[512];
		snprintf(text, sizeof text, BASE "%s", cases[i].text);
		cs_scenario *sc = NULL;
		cs_diag diag;
		ck_assert_msg(load_text(text, NULL, 0, &sc, &diag) == CS_OK, "%s", diag.msg);
		ck_assert_int_eq(sc->sim.fold, cases[i].fold);
		ck_assert_int_eq(sc->sim.threads, cases[i].threads);
		cs_scenario_free(sc);
	}
	cs_scenario *sc = NULL;
	cs_diag diag;
	ck_assert_msg(load_text("cluster: {gpu: h100-sxm-80g, nodes: 250001}\nmodel: llama2-7b\n"
				"fleet: ideal\n",
				NULL, 0, &sc, &diag) == CS_OK,
		      "%s", diag.msg);
	const char *key = "x";
	ck_assert_ptr_null(cs_config_fold_blocker(sc, &key));
	ck_assert_ptr_null(key);
	sc->training.doc_mean = 512;
	ck_assert_str_eq(cs_config_fold_blocker(sc, &key), "data-parallel replicas draw different documents");
	ck_assert_str_eq(key, "training.documents.mean");
	cs_scenario_free(sc);
}
END_TEST

START_TEST(every_example_scenario_loads)
{
	static const char *const dirs[] = {CS_SOURCE_ROOT "/scenarios", CS_SOURCE_ROOT "/tests/data/good"};
	int loaded = 0;

	for (size_t d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;
		ck_assert_ptr_nonnull(dir);
		while ((e = readdir(dir))) {
			char path[1024];
			cs_scenario *sc = NULL;
			cs_diag diag;
			size_t len = strlen(e->d_name);
			if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
			ck_assert_msg(cs_scenario_load(path, NULL, 0, &sc, &diag) == CS_OK, "%s", diag.msg);
			ck_assert_int_gt(cs_scenario_gpus(sc), 0);
			cs_scenario_free(sc);
			loaded++;
		}
		closedir(dir);
	}
	ck_assert_int_ge(loaded, 3);
}
END_TEST

START_TEST(example_ddp_llama2_matches_its_description)
{
	cs_scenario *sc = NULL;
	cs_diag diag;

	ck_assert_msg(cs_scenario_load(CS_SOURCE_ROOT "/scenarios/ddp-llama2-7b-2node.yaml", NULL, 0,
	                               &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(cs_scenario_gpus(sc), 16);
	ck_assert_int_eq(sc->parallel.dp, 16);
	ck_assert_int_eq(sc->parallel.sharding, CS_SHARD_NONE);
	ck_assert_int_eq(sc->training.seq_len, 4096);
	ck_assert_int_eq(cs_scenario_micro_batches(sc), 1);
	ck_assert_str_eq(sc->model.name, "llama2-7b");
	cs_scenario_free(sc);
}
END_TEST

/* ---- bad scenarios -------------------------------------------------------- */

static const struct {
	const char *yaml;
	const char *error; /* substring, with line:col */
} bad_cases[] = {
	{"cluster: [\n", ":2:1: yaml: "},
	{"a: b\n c: d\n", ":2:3: yaml: mapping values are not allowed"},
	{"", ":1:1: empty scenario"},
	{"# only a comment\n", ":1:1: empty scenario"},
	{"- 1\n- 2\n", ":1:1: the top level must be a mapping, not a list"},
	{"hello\n", ":1:1: the top level must be a mapping, not a scalar"},
	{BASE "clustr: {}\n", ":5:1: unknown key 'clustr' (did you mean 'cluster'?)"},
	{BASE "simulate: {fold: true}\ncollectives: {fidelity: flow}\n",
	 ":5:18: 'simulate.fold' cannot be combined with 'collectives.fidelity: flow'"},
	{BASE "frobnicate: 1\n", ":5:1: unknown key 'frobnicate'"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 2, fabric: {routing: ecmpp}}\nmodel: llama2-7b\n",
	 ":1:58: unknown value 'ecmpp' for 'cluster.fabric.routing' (did you mean 'ecmp'?)"},
	{BASE "collectives: {qps_per_connection: 0}\n",
	 ":5:35: 'collectives.qps_per_connection' must be at least 1, got '0'"},
	{BASE "collectives: {qps_per_connection: 129}\n",
	 ":5:35: 'collectives.qps_per_connection' must be at most 128, got '129'"},
	{BASE "fleet: realistic\n", ":5:8: unknown value 'realistic' for 'fleet.preset' (expected production | ideal)"},
	{BASE "fleet: [ideal]\n", ":5:8: 'fleet' must be a preset (production | ideal) or a mapping, not a list"},
	{BASE "fleet: {spred: 0.02}\n", ":5:9: unknown key 'spred' in 'fleet' (did you mean 'spread'?)"},
	{BASE "fleet: {slow_factor: 0.9}\n", ":5:22: 'fleet.slow_factor' must be at least 1, got '0.9'"},
	{BASE "reliability: {distribution: weibull, weibull_shape: 0.005}\n",
	 ":5:53: 'reliability.weibull_shape' must be at least 0.1, got '0.005'"},
	{BASE "fleet: {spread: 2}\n", ":5:17: 'fleet.spread' must be at most 1, got '2'"},
	{BASE "fleet: {gc_pause: 100}\n", ":5:19: 'fleet.gc_pause' needs a unit"},
	{BASE "fleet: {gc_interval: 0}\n", ":5:22: 'fleet.gc_interval' must be at least 1"},
	{BASE "fleet: {gc_sync: maybe}\n", ":5:18: expected true or false for 'fleet.gc_sync'"},
	{"cluster:\n  gpu: h100-sxm-80g\n  scale_out: {bandwith: 400 Gb/s}\nmodel: llama2-7b\n",
	 ":3:15: unknown key 'bandwith' in 'cluster.scale_out' (did you mean 'bandwidth'?)"},
	{"cluster: {gpu: h100-sxm-80gb}\nmodel: llama2-7b\n",
	 ":1:16: unknown preset 'h100-sxm-80gb' for 'cluster.gpu.preset' (did you mean 'h100-sxm-80g'?)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: lama3-8b}\n", "did you mean 'llama3-8b'?"},
	{"cluster: {gpu: h100}\nmodel: llama2-7b\n", "unknown preset 'h100' for 'cluster.gpu.preset' (did you mean 'h100-sxm-80g'?)"},
	{"cluster: {gpu: mi300x}\nmodel: llama2-7b\n", "unknown preset 'mi300x' for 'cluster.gpu.preset' (known: a100"},
	{"cluster: {gpu: tpu}\nmodel: llama2-7b\n", "unknown preset 'tpu' for 'cluster.gpu.preset' (did you mean 'tpu-v4'?)"},
	/* an NVL72 rack: its derived domain, and one given, must hold whole trays */
	{"cluster: {gpu: gb200-nvl72, nodes: 20}\nmodel: llama2-7b\n",
	 ":1:36: the 80 GPUs (20 nodes of 4) fill no whole 72-GPU NVLink domains of 'gb200-nvl72': use at "
	 "most 18 nodes or a multiple of them, or set 'cluster.scale_up.domain'"},
	{"cluster: {gpu: gb300-nvl72, nodes: 18, gpus_per_node: 5}\nmodel: llama2-7b\n",
	 ":1:55: 'cluster.gpus_per_node' (5) must divide the 72-GPU NVLink domain of 'gb300-nvl72', or set "
	 "'cluster.scale_up.domain'"},
	{"cluster: {gpu: gb200-nvl72, nodes: 18, scale_up: {domain: 70}}\nmodel: llama2-7b\n",
	 ":1:59: 'cluster.scale_up.domain' (70) must divide gpus_per_node (4) or be a multiple of it "
	 "dividing the 72 GPUs"},
	{"cluster: {gpu: h100-sxm-80g, nodes: two}\nmodel: llama2-7b\n",
	 ":1:37: expected an integer for 'cluster.nodes', got 'two'"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 2.5}\nmodel: llama2-7b\n", "expected an integer"},
	{"cluster: {gpu: h100-sxm-80g, nodes: {a: 1}}\nmodel: llama2-7b\n",
	 ":1:37: 'cluster.nodes' expects a int, not a mapping"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: llama2-7b\ntraining: [1, 2]\n",
	 ":3:11: 'training' must be a mapping, not a list"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: llama2-7b\nparallelism: {flash_attention: ture}\n",
	 ":3:32: expected true or false for 'parallelism.flash_attention', got 'ture'"},
	{"cluster: {gpu: {preset: h100-sxm-80g, hbm: 0 GB}}\nmodel: llama2-7b\n",
	 ":1:44: 'cluster.gpu.hbm' must be positive"},
	{"cluster: {gpu: {preset: h100-sxm-80g, hbm: -80 GB}}\nmodel: llama2-7b\n", "negative size"},
	{"cluster:\n  gpu: h100-sxm-80g\n  scale_out: {bandwidth: 0 Gb/s}\nmodel: llama2-7b\n",
	 "'cluster.scale_out.bandwidth' must be positive"},
	{"cluster:\n  gpu: h100-sxm-80g\n  scale_out:\n    kind: roce\n    bandwidth: 400\nmodel: llama2-7b\n",
	 ":5:16: 'cluster.scale_out.bandwidth' needs a unit (e.g. '400 Gb/s')"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 99999999999999999999}\nmodel: llama2-7b\n",
	 "'cluster.nodes' is out of range"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 1000000000000}\nmodel: llama2-7b\n",
	 "'cluster.nodes' must be at most 10000000"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 10000000, gpus_per_node: 8}\nmodel: llama2-7b\n",
	 ":1:37: the cluster has 80000000 GPUs, more than the limit of 10000000"},
	{BASE "parallelism: {tp: 2, pp: 2, dp: 2}\n",
	 ":5:33: tp x pp x dp x cp = 8 but the cluster has 16 GPUs"},
	{BASE "parallelism: {tp: 3}\n", "tp x pp x cp = 3 does not divide the 16 GPUs"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 6}\nmodel: llama2-7b\nparallelism: {tp: 3, pp: 2}\n",
	 ":3:19: 'parallelism.tp' (3) must divide the model's 32 heads"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 8}\nmodel: llama2-7b\nparallelism: {pp: 64}\n",
	 ":3:19: pp x virtual_stages = 64 exceeds the model's 32 layers"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 9}\nmodel: llama2-7b\nparallelism: {pp: 9, pipeline: "
	 "{schedule: interleaved, virtual_stages: 4, account_for_embedding: true, "
	 "account_for_loss: true}}\ntraining: {global_batch: 72}\n",
	 ":3:19: pp x virtual_stages = 36 exceeds the model's 32 layers plus the embedding and the "
	 "loss"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 17, gpus_per_node: 2}\nmodel: llama2-7b\n"
	 "parallelism: {pp: 34, pipeline: {account_for_embedding: true}}\n",
	 ":3:19: pp x virtual_stages = 34 exceeds the model's 32 layers plus the embedding"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 1}\nmodel: llama2-7b\nparallelism: {tp: 8}\n"
	 "training: {seq_len: 1024, global_batch: 1000000}\n",
	 ":4:41: 1000000 micro-batches per step (global_batch / (dp x micro_batch)) exceed the "
	 "limit of 100000"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 250001}\nmodel: llama2-7b\n",
	 ":1:37: simulating 2000008 ranks one by one exceeds the limit of 2000000 ranks, and they "
	 "cannot fold: the fleet's spread gives every GPU its own compute factor"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 250001}\nmodel: llama2-7b\nfleet: ideal\n"
	 "simulate: {fold: false}\n",
	 ":1:37: simulating 2000008 ranks one by one exceeds the limit of 2000000 ranks; fold "
	 "symmetric ranks with 'simulate.fold: auto' or 'true'"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 250001}\nmodel: llama2-7b\nfleet: ideal\n"
	 "collectives: {fidelity: flow}\n",
	 ":1:37: simulating 2000008 ranks one by one exceeds the limit of 2000000 ranks, and they "
	 "cannot fold: flow fidelity needs every rank's traffic"},
	{BASE "simulate: {fold: maybe}\n", ":5:18: unknown value 'maybe' for 'simulate.fold' (expected "
	 "auto | false | true)"},
	{BASE "simulate: {threads: many}\n", ":5:21: expected an integer or 'auto' for "
	 "'simulate.threads', got 'many'"},
	{BASE "simulate: {threads: 0}\n", ":5:21: 'simulate.threads' must be at least 1, got '0'"},
	{BASE "training: {global_batch: 20}\n",
	 ":5:26: 'training.global_batch' (20) must be divisible by dp x micro_batch = 16"},
	{BASE "cluster: {nodes: 3}\n", ":5:1: duplicate key 'cluster' (first given on line 1)"},
	{BASE "name: a\nname: b\n", ":6:1: duplicate key 'name'"},
	{"base: &b {gpu: h100-sxm-80g}\ncluster: *b\n", ":2:10: yaml aliases ('*name') are not supported"},
	{BASE "---\n" BASE, "only one yaml document per file"},
	{"cluster: {nodes: 2}\nmodel: llama2-7b\n", "'cluster.gpu' is required"},
	{"cluster: {gpu: h100-sxm-80g}\n", "'model' is required"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {layers: 2, hidden: 256, heads: 4, ffn: 1024}\n",
	 "'model.vocab' is required without 'model.preset'"},
	{"cluster: {gpu: {peak_bf16: 100 TFLOPS, hbm: 16 GB}}\nmodel: llama2-7b\n",
	 "'cluster.gpu.hbm_bandwidth' is required without a preset"},
	{BASE "parallelism:\n  pipeline: {schedule: interleved}\n",
	 ":6:24: unknown value 'interleved' for 'parallelism.pipeline.schedule' (did you mean 'interleaved'?)"},
	{BASE "parallelism: {pp: 2, pipeline: {schedule: interleaved, virtual_stages: 1}}\n",
	 "the interleaved schedule needs virtual_stages >= 2"},
	{BASE "parallelism: {pipeline: {virtual_stages: 2}}\n",
	 "applies to the interleaved and zb-v schedules only"},
	{BASE "parallelism: {order: tp-cp-pp-dp}\n", "must name tp, cp, ep, pp and dp once each"},
	{BASE "parallelism: {order: tp-tp-ep-pp-dp}\n", "must name tp, cp, ep, pp and dp once each"},
	{BASE "parallelism: {ep: 2}\n", "'parallelism.ep' (2) must divide the model's 0 experts"},
	{BASE "training: {precision: fp8}\ncluster2: 1\n", "unknown key 'cluster2'"},
	{"cluster: {gpu: a100-sxm-80g}\nmodel: llama2-7b\ntraining: {precision: fp8}\n",
	 "fp8 needs a GPU with an fp8 peak ('a100-sxm-80g' has none)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: llama2-7b\ntraining: {precision: mxfp8}\n",
	 ":3:23: 'training.precision' mxfp8 needs Blackwell's block-scaled tensor cores (sm_100 or "
	 "later; 'h100-sxm-80g' is sm_90)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: llama2-7b\ntraining: {precision: nvfp4}\n",
	 "'training.precision' nvfp4 needs Blackwell's block-scaled tensor cores"},
	{"cluster: {gpu: {preset: b200, peak_fp4: 0 TFLOPS}}\nmodel: llama2-7b\ntraining: {precision: nvfp4}\n",
	 "'training.precision' nvfp4 needs a GPU with an fp4 peak ('b200' has none)"},
	{BASE "parallelism: {moe_capacity_factor: 1.5}\n",
	 "'parallelism.moe_capacity_factor' needs a model with experts"},
	{BASE "parallelism: {moe_router_fusion: true}\n",
	 ":5:34: 'parallelism.moe_router_fusion' needs a model with experts"},
	{BASE "parallelism: {moe_permute_fusion: true}\n",
	 ":5:35: 'parallelism.moe_permute_fusion' needs a model with experts"},
	{BASE "parallelism: {moe_routing: zipf}\n", ":5:28: 'parallelism.moe_routing' needs a model with experts"},
	{MOE "parallelism: {moe_routing: zipf, expert_imbalance: 1.5}\n",
	 "'parallelism.expert_imbalance' with 'parallelism.moe_routing' zipf: the routing gives the busiest "
	 "rank's load; set one or the other"},
	{MOE "parallelism: {moe_routing: uniform, moe_routing_skew: 2}\n",
	 "'parallelism.moe_routing_skew' applies to 'parallelism.moe_routing: zipf' only"},
	{MOE "parallelism: {moe_routing: zipff}\n",
	 "unknown value 'zipff' for 'parallelism.moe_routing' (did you mean 'zipf'?)"},
	{MOE "parallelism: {moe_routing: zipf, moe_routing_skew: -1}\n", "'parallelism.moe_routing_skew'"},
	{BASE "parallelism: {moe_a2a_overlap: true}\n",
	 "'parallelism.moe_a2a_overlap' needs experts over 'parallelism.ep' > 1"},
	{MOE "parallelism: {moe_a2a_overlap: true}\n",
	 "'parallelism.moe_a2a_overlap' needs experts over 'parallelism.ep' > 1"},
	{MOE "parallelism: {ep: 2, pp: 2, moe_a2a_overlap: true}\n",
	 "'parallelism.moe_a2a_overlap' with 'parallelism.pp' > 1 needs the interleaved schedule"},
	{MOE "parallelism: {ep: 2, recompute: full, moe_a2a_overlap: true}\n",
	 "'parallelism.moe_a2a_overlap' with full recomputation"},
	{MOE "parallelism: {moe_permute_fusion: 1}\n",
	 "expected true or false for 'parallelism.moe_permute_fusion'"},
	{MOE "parallelism: {moe_pad_to_capacity: true}\n",
	 "'parallelism.moe_pad_to_capacity' needs 'parallelism.moe_capacity_factor'"},
	{MOE "parallelism: {moe_capacity_factor: 0.25}\n",
	 "'parallelism.moe_capacity_factor' (0.25) leaves an expert less than one of a token's 2 copies"},
	{MOE "parallelism: {ep: 2, moe_capacity_factor: 1.5, moe_dispatcher: deepep}\n",
	 "'parallelism.moe_capacity_factor' with the deepep dispatcher: DeepEP's dispatch is dropless"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: llama2-7b\ntraining: {compile: true}\n",
	 ":3:21: 'training.compile' applies to the pytorch and fsdp frameworks (Megatron-LM's kernels "
	 "are fused already)"},
	{"cluster: {gpu: b200}\nmodel: llama2-7b\ntraining: {grad_dtype: mxfp8}\n",
	 ":3:24: 'training.grad_dtype' mxfp8 is a GEMM recipe, not a gradient dtype (bf16, fp16 or fp32)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: gpt3-175b\ntraining: {seq_len: 4096}\n",
	 "'training.seq_len' (4096) exceeds the model's 2048 learned positions"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama2-7b, attention_window: 8192}\n"
	 "training: {seq_len: 4096}\n",
	 ":2:46: 'model.attention_window' (8192) is longer than the sequence ('training.seq_len' 4096)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama2-7b, attention_window: 1024}\n"
	 "parallelism: {cp: 8, context_parallel: {kind: ring}}\ntraining: {seq_len: 4096}\n",
	 ":2:46: 'model.attention_window' with ring context parallelism is not modelled"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama3-8b, positions: learned, max_positions: 2048}\n"
	 "training: {seq_len: 4096}\n",
	 "'training.seq_len' (4096) exceeds the model's 2048 learned positions"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 4}\nmodel: {preset: deepseek-v3-like, layers: 4}\n"
	 "parallelism: {ep: 32, moe_node_limit: 2}\n",
	 ":3:39: 'parallelism.moe_node_limit' needs 'parallelism.moe_dispatcher: deepep'"},
	/* the experts folded over tp x cp x dp (parallelism.etp) */
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama3-8b}\nparallelism: {etp: 1}\n",
	 ":3:20: 'parallelism.etp' needs a model with experts"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3-like, layers: 4}\n"
	 "parallelism: {tp: 4, etp: 3, sequence_parallel: true}\n",
	 ":3:27: 'parallelism.etp' (3) must divide tp (4)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama2-7b, experts: 8, top_k: 2, expert_ffn: 1026}\n"
	 "parallelism: {tp: 4, etp: 4, ep: 2, sequence_parallel: true}\n",
	 ":3:27: 'parallelism.etp' (4) must divide the experts' width (1026)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3-like, layers: 4}\n"
	 "parallelism: {tp: 4, etp: 1, ep: 2, sequence_parallel: true}\n",
	 ":3:34: 'parallelism.ep' (2) must be tp / etp x cp = 4 times a divisor of dp (2)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3-like, layers: 4}\nparallelism: {tp: 2, etp: 1, ep: 2}\n",
	 ":3:27: 'parallelism.etp' with tp 2 needs 'parallelism.sequence_parallel'"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3-like, layers: 4}\n"
	 "parallelism: {etp: 1, ep: 2, order: tp-ep-cp-pp-dp}\n",
	 ":3:37: 'parallelism.etp' needs the order to begin tp-cp-ep"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 4}\nmodel: {preset: llama3-8b}\nparallelism: {moe_dispatcher: deepep}\n",
	 ":3:31: 'parallelism.moe_dispatcher: deepep' needs a model with experts"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 4}\nmodel: {preset: deepseek-v3-like, layers: 4}\n"
	 "parallelism: {ep: 16, moe_dispatcher: deepep, moe_node_limit: 3}\n",
	 ":3:63: 'parallelism.moe_node_limit' (3) exceeds the 2 nodes an expert-parallel group of 16 spans"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 4}\nmodel: {preset: deepseek-v3-like, layers: 4}\n"
	 "parallelism: {ep: 16, moe_dispatcher: deepepp}\n",
	 ":3:39: unknown value 'deepepp' for 'parallelism.moe_dispatcher' (did you mean 'deepep'?)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama3-8b, q_lora_rank: 1536}\n",
	 ":2:41: 'model.q_lora_rank', 'rope_head_dim' and 'v_head_dim' are multi-head latent attention's: "
	 "they need 'model.kv_lora_rank' > 0"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3, kv_heads: 8}\n",
	 ":2:40: 'model.kv_heads' (8) with 'model.kv_lora_rank': latent attention rebuilds keys and values "
	 "for every one of the 128 heads"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3, parallel_block: true}\n",
	 ":2:46: 'model.parallel_block' with 'model.kv_lora_rank': latent attention is modelled in the "
	 "sequential block only"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3, arch: gpt}\n",
	 ":2:36: 'model.kv_lora_rank' needs 'model.arch: llama'"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3, positions: alibi}\n",
	 ":2:41: 'model.positions' must be rotary with 'model.kv_lora_rank'"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: deepseek-v3, kv_lora_rank: -1}\n",
	 ":2:44: 'model.kv_lora_rank' must be at least 0, got '-1'"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama3-8b, positions: alibl}\n",
	 ":2:39: unknown value 'alibl' for 'model.positions' (did you mean 'alibi'?)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama3-8b, activation: relu}\n",
	 ":2:40: 'model.activation' relu does not go with 'model.arch' llama (gpt: gelu or relu; "
	 "llama: swiglu)"},
	{BASE "cluster2:\n", "unknown key"},
	{BASE "name: " "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	 "'name' is too long (at most 63 characters)"},
	{BASE "simulate: {steps: 0}\n", "'simulate.steps' must be at least 1, got '0'"},
	{BASE "simulate: {steps: }\n", "missing value for 'simulate.steps'"},
	{BASE "collectives: {contention: -0.5}\n", "'collectives.contention' must be at least 0"},
	{BASE "training: {documents: {mean: 512}}\nsimulate: {fold: true}\n",
	 "'simulate.fold' cannot be combined with 'training.documents'"},
	{BASE "training: {documents: {distribution: zipf}}\n", "unknown"},
	{BASE "cluster_: 1\n", "did you mean 'cluster'?"},
	{"? [a, b]\n: 1\n", ":1:3: keys must be plain names, not a list"},
	{BASE "cluster.nodes: 4\n", "unknown key 'cluster.nodes'"},
	{BASE "training: {optimizer_dtype: fp16}\n",
	 ":5:29: unknown value 'fp16' for 'training.optimizer_dtype' (expected fp32 | bf16)"},
	{BASE "parallelism: {data_parallel: {bucket: 25}}\n",
	 "'parallelism.data_parallel.bucket' needs a unit (e.g. '25 MiB')"},
	{BASE "cluster: {scale_up: {latency: 0.1 ns}}\n", "duplicate key"},
	{"cluster: {gpu: h100-sxm-80g, scale_up: {latency: 0.1 ns}}\nmodel: llama2-7b\n",
	 "'cluster.scale_up.latency': time '0.1 ns' rounds to 0 ns"},
	{"cluster: {gpu: h100-sxm-80g, gpus_per_node: 8, scale_up: {domain: 3}}\nmodel: llama2-7b\n",
	 "'cluster.scale_up.domain' (3) must divide gpus_per_node (8)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama2-7b, kv_heads: 5}\n",
	 "'model.kv_heads' (5) must divide heads (32)"},
	{"cluster: {gpu: h100-sxm-80g}\nmodel: {preset: llama2-7b, top_k: 2}\n",
	 "need 'model.experts' > 0"},
#define TPU "cluster: {gpu: tpu-v4, nodes: 32, gpus_per_node: 4, topology: torus,\n"
	{TPU "  torus: {shape: 4x4x3}}\nmodel: llama2-7b\n",
	 ":2:18: the torus 4x4x3 holds 48 chips, which does not divide the cluster's 128"},
	{TPU "  torus: {shape: 4x4x}}\nmodel: llama2-7b\n",
	 ":2:18: 'cluster.torus.shape' \"4x4x\" ends with 'x'"},
	{TPU "  torus: {shape: 4x-4x8}}\nmodel: llama2-7b\n",
	 ":2:18: 'cluster.torus.shape' \"4x-4x8\" is not one to three positive sizes"},
	{TPU "  torus: {shape: 2x2x2x4}}\nmodel: llama2-7b\n",
	 "is not one to three positive sizes"},
	{TPU "  torus: {shape: 4x4x4, bandwidth: -5 GB/s}}\nmodel: llama2-7b\n",
	 ":2:36: 'cluster.torus.bandwidth': negative bandwidth '-5 GB/s'"},
	{"cluster: {gpu: tpu-v4, nodes: 32, gpus_per_node: 4, topology: torus}\nmodel: llama2-7b\n",
	 ":1:63: a torus needs 'cluster.torus.shape', such as \"16x16x12\""},
	{"cluster: {gpu: h100-sxm-80g, nodes: 16, topology: torus, torus: {shape: 8x16}}\n"
	 "model: llama2-7b\n",
	 "a torus needs 'cluster.torus.bandwidth', one link's bandwidth per direction "
	 "('h100-sxm-80g' has no chip-to-chip links)"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 16, torus: {shape: 8x16}}\nmodel: llama2-7b\n",
	 ":1:56: 'cluster.torus.shape' needs 'cluster.topology: torus'"},
	{TPU "  torus: {shape: 64x2}}\nmodel: llama2-7b\ncollectives: {fidelity: flow}\n",
	 ":2:18: the flow fidelity follows routes of at most 24 links; the torus 64x2 has routes "
	 "of 35"},
	{TPU "  topology: torus}\nmodel: llama2-7b\n", "duplicate key"},
	{TPU "  torus: {shape: 4x4x4}, fabric: {routing: ecmp}}\nmodel: llama2-7b\n",
	 ":2:44: 'cluster.fabric.routing: ecmp' needs a fat tree: a torus has no equal-cost "
	 "uplinks to hash onto"},
	{TPU "  torus: {shape: 4x4x4}}\nmodel: llama2-7b\ntraining: {precision: fp8}\n",
	 "fp8 needs a GPU with an fp8 peak ('tpu-v4' has none)"},
#undef TPU
	{BASE "parallelism: {tp: 4, tp_overlap: true}\n",
	 ":5:34: 'parallelism.tp_overlap' with userbuffers needs 'parallelism.sequence_parallel'"},
	{BASE "parallelism: {tp: 4, sequence_parallel: true, tp_overlap: true,\n"
	 "  tp_overlap_config: nemo-h100-h8192-tp4}\n",
	 ":6:22: unknown value 'nemo-h100-h8192-tp4' for 'parallelism.tp_overlap_config' (did you "
	 "mean 'nemo-h100-h8192-tp4-mbs1-seqlen8192'?)"},
	{BASE "training: {precision: fp8, fp8: {amax: reduce}}\n",
	 ":5:40: unknown value 'reduce' for 'training.fp8.amax' (did you mean 'reduced'?)"},
	{BASE "training: {fp8: {amax_history: 0}}\n",
	 ":5:32: 'training.fp8.amax_history' must be at least 1, got '0'"},
	{BASE "training: {fp8: {params: yes please}}\n", "'training.fp8.params'"},
	{BASE "parallelism: {tp: 4, tp_overlap: true, tp_overlap_model: ncl}\n",
	 ":5:58: unknown value 'ncl' for 'parallelism.tp_overlap_model' (did you mean 'nccl'?)"},
	/* strings are printed as they are: a NUL (which cut the name short), a
	 * control character (C0 or C1), or what is not UTF-8 cannot be one */
	{BASE "name: caf\xe9\n", ":5:10: yaml: incomplete UTF-8 octet sequence: not UTF-8 text"},
	{BASE "name: caf\xe9 x\n", ":5:10: yaml: invalid trailing UTF-8 octet: not UTF-8 text"},
	{BASE "name: \xc3\xa9\xe9x\n", ":5:8: yaml: invalid trailing UTF-8 octet"},
	{BASE "name: a\xff\n", ":5:8: yaml: invalid leading UTF-8 octet"},
	/* recomputation: each refinement with its granularity, layers a model
	 * chunk holds, modules the model has */
	{BASE "parallelism: {recompute_method: block}\n",
	 ":5:33: 'parallelism.recompute_method' needs 'parallelism.recompute: full' (got 'none')"},
	{BASE "parallelism: {recompute: selective, recompute_layers: 2}\n",
	 ":5:55: 'parallelism.recompute_layers' needs 'parallelism.recompute: full' (got 'selective')"},
	{BASE "parallelism: {recompute: full, recompute_modules: [mlp]}\n",
	 ":5:51: 'parallelism.recompute_modules' needs 'parallelism.recompute: selective' (got 'full')"},
	{BASE "parallelism: {recompute_every: 2}\n",
	 ":5:32: 'parallelism.recompute_every' needs 'parallelism.recompute: selective' (got 'none')"},
	{BASE "parallelism: {recompute: full, pp: 2, recompute_layers: 17}\n",
	 ":5:57: 'parallelism.recompute_layers' (17) exceeds the 16 layers of a pipeline stage's model chunk "
	 "(32 layers over pp x virtual_stages = 2)"},
	{BASE "parallelism: {recompute: selective, recompute_modules: [core_attn, mpl]}\n",
	 ":5:68: unknown value 'mpl' for 'parallelism.recompute_modules' (expected core_attn | mlp"},
	{BASE "parallelism: {recompute: selective, recompute_modules: [mla_up_proj]}\n",
	 ":5:56: 'mla_up_proj' in 'parallelism.recompute_modules' needs latent attention"},
	{BASE "parallelism: {recompute: selective, recompute_modules: [moe_act]}\n",
	 ":5:56: 'moe_act' in 'parallelism.recompute_modules' needs a model with MoE layers"},
	{BASE "parallelism: {recompute: selective, recompute_modules: [op, mlp]}\n",
	 ":5:56: 'op' (torchtitan's op policy) stands alone in 'parallelism.recompute_modules'"},
	{BASE "parallelism: {recompute: selective, recompute_modules: []}\n",
	 ":5:56: 'parallelism.recompute_modules' is empty: nothing would be recomputed"},
	{BASE "parallelism: {recompute: selective, recompute_modules: [mlp, mlp]}\n",
	 ":5:56: 'parallelism.recompute_modules' names 'mlp' twice"},
	{BASE "parallelism: {recompute: selective, recompute_modules: [{a: 1}]}\n",
	 ":5:57: the items of 'parallelism.recompute_modules' must be names, not a mapping"},
	{BASE "parallelism: {recompute: selective, recompute_modules: {a: 1}}\n",
	 ":5:56: 'parallelism.recompute_modules' expects a list of names, not a mapping"},
	{BASE "parallelism: {recompute: selective, recompute_every: 2, recompute_modules: [mlp]}\n",
	 ":5:54: 'parallelism.recompute_every' and 'parallelism.recompute_modules' are two policies"},
	{BASE "parallelism: {recompute: full, recompute_method: blok}\n",
	 ":5:50: unknown value 'blok' for 'parallelism.recompute_method' (did you mean 'block'?)"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 4}\nmodel: {preset: deepseek-v3-like, layers: 4}\n"
	 "parallelism: {ep: 32, recompute: selective, recompute_modules: [op]}\n",
	 ":3:64: 'op' in 'parallelism.recompute_modules' is modelled for sequential dense layers with "
	 "multi-head attention only (the model has experts)"},
	{BASE "training: {precision: fp8}\nparallelism: {recompute: selective, recompute_modules: [layernorm]}\n",
	 ":6:56: 'layernorm' in 'parallelism.recompute_modules' under the fp8 recipe: Megatron-LM refuses it"},
	{"cluster: {gpu: h100-sxm-80g, nodes: 4}\nmodel: {preset: deepseek-v3-like, layers: 4, shared_experts: 0}\n"
	 "parallelism: {ep: 32, recompute: selective, recompute_modules: [shared_experts]}\n",
	 ":3:64: 'shared_experts' in 'parallelism.recompute_modules' needs a model with shared experts"},
	{BASE "name: \"a\\u0000b\"\n", ":5:7: the value of 'name' holds a NUL character (\\0 or \\u0000)"},
	{BASE "name: \"a\\x01b\"\n",
	 ":5:7: the value of 'name' holds a control character (0x01) at byte 2: not printable in a report"},
	{BASE "name: \"a\\u0085\"\n", ":5:7: the value of 'name' holds a control character (0xc2) at byte 2"},
	{BASE "name: \"\\e[31mred\"\n", ":5:7: the value of 'name' holds a control character (0x1b) at byte 1"},
	{"cluster:\n  gpu: {preset: h100-sxm-80g, calibration: \"c\\tx.yaml\"}\n  nodes: 2\nmodel: llama2-7b\n",
	 ":2:44: the value of 'cluster.gpu.calibration' holds a control character (0x09) at byte 2"},
};

START_TEST(bad_scenarios_are_refused_with_location)
{
	cs_scenario *sc = (cs_scenario *)1;
	cs_diag diag = {""};
	cs_status st = load_text(bad_cases[_i].yaml, NULL, 0, &sc, &diag);

	ck_assert_msg(st == CS_ERR_INPUT, "case %d loaded", _i);
	ck_assert_ptr_null(sc);
	ck_assert_msg(strstr(diag.msg, bad_cases[_i].error), "case %d: want '%s', got '%s'", _i,
	              bad_cases[_i].error, diag.msg);
	char prefix[4096];
	cs_test_tmp(prefix, sizeof prefix, "cs-config");
	prefix[strlen(prefix) - 6] = 0; /* the XXXXXX */
	ck_assert_msg(strncmp(diag.msg, prefix, strlen(prefix)) == 0, "no file prefix: %s", diag.msg);
	ck_assert_ptr_null(strchr(diag.msg, '\n'));
}
END_TEST

/* The kernel profile a scenario names: a built-in, a file next to the
 * scenario, or none. A file that cannot be opened is refused at the key; a
 * malformed one at its own file:line:col; --set names the key. */
START_TEST(kernel_profile_is_resolved_and_checked)
{
	cs_scenario *sc = NULL;
	cs_diag diag;

	ck_assert_int_eq(load_text(BASE, NULL, 0, &sc, &diag), CS_OK);
	ck_assert_str_eq(sc->cluster.gpu.profile, "h100-sxm");
	cs_scenario_free(sc);
	ck_assert_int_eq(load_text("cluster:\n  gpu:\n    preset: h100-sxm-80g\n    profile: none\n"
				   "model: {preset: llama2-7b}\n", NULL, 0, &sc, &diag), CS_OK);
	cs_scenario_free(sc);

	ck_assert_int_eq(load_text("cluster:\n  gpu:\n    preset: h100-sxm-80g\n    profile: nope.yaml\n"
				   "model: {preset: llama2-7b}\n", NULL, 0, &sc, &diag), CS_ERR_INPUT);
	char missing[4200];
	snprintf(missing, sizeof missing, ":4:14: cannot open kernel profile '%s/nope.yaml': No such file",
		 cs_test_tmp_dir());
	ck_assert_msg(strstr(diag.msg, missing) != NULL, "%s", diag.msg);
	ck_assert_ptr_null(sc);

	const char *sets[] = { "cluster.gpu.profile=/no/such.yaml" };
	ck_assert_int_eq(load_text(BASE, sets, 1, &sc, &diag), CS_ERR_INPUT);
	const char *want = "--set 'cluster.gpu.profile=/no/such.yaml': cannot open";
	ck_assert_msg(strncmp(diag.msg, want, strlen(want)) == 0, "%s", diag.msg);

	char *prof = temp_yaml("name: bad\ngpu: x\nderived: false\nlaunch: {eager_op_us: -1, "
			       "graph_kernel_us: 1}\n");
	char text[512];
	snprintf(text, sizeof text, "cluster:\n  gpu:\n    preset: h100-sxm-80g\n    profile: %s\n"
		 "model: {preset: llama2-7b}\n", prof);
	ck_assert_int_eq(load_text(text, NULL, 0, &sc, &diag), CS_ERR_INPUT);
	ck_assert_msg(strncmp(diag.msg, prof, strlen(prof)) == 0 &&
		      strncmp(diag.msg + strlen(prof), ":4:", 3) == 0, "%s", diag.msg);
	unlink(prof);
	free(prof);
}
END_TEST

/* libyaml's errors as every YAML reader words them: a syntax error is bad
 * input at its place, running out of memory is out of memory. */
START_TEST(yaml_errors_keep_their_status)
{
	yaml_parser_t yp;
	cs_diag diag;

	memset(&yp, 0, sizeof yp);
	yp.error = YAML_SCANNER_ERROR;
	yp.problem = "found character that cannot start any token";
	yp.problem_mark.line = 2;
	yp.problem_mark.column = 4;
	ck_assert_int_eq(cs__yaml_error(&yp, "a.yaml", &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "a.yaml:3:5: yaml: found character that cannot start any token");
	yp.context = "while scanning a plain scalar";
	yp.context_mark.line = 1;
	ck_assert_int_eq(cs__yaml_error(&yp, "a.yaml", &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "a.yaml:3:5: yaml: found character that cannot start any token "
	                           "(while scanning a plain scalar, line 2)");
	memset(&yp, 0, sizeof yp);
	yp.error = YAML_MEMORY_ERROR;
	ck_assert_int_eq(cs__yaml_error(&yp, "a.yaml", &diag), CS_ERR_NOMEM);
	ck_assert_str_eq(diag.msg, "out of memory parsing 'a.yaml'");
}
END_TEST

START_TEST(file_problems_are_refused)
{
	cs_scenario *sc = NULL;
	cs_diag diag;
	char *path;
	FILE *f;

	ck_assert_int_eq(cs_scenario_load("no/such/x.yaml", NULL, 0, &sc, &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "cannot open 'no/such/x.yaml': No such file or directory");
	ck_assert_int_eq(cs_scenario_load("/tmp", NULL, 0, &sc, &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "cannot read '/tmp': not a regular file");

	path = temp_yaml("name: big\n");
	f = fopen(path, "r+");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, CS_CONFIG_MAX_FILE, SEEK_SET), 0);
	fputc('\n', f);
	fclose(f);
	ck_assert_int_eq(cs_scenario_load(path, NULL, 0, &sc, &diag), CS_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(diag.msg, "is larger than the limit of 16 MiB"));
	ck_assert_ptr_null(sc);
	unlink(path);
	free(path);
}
END_TEST

/* ---- overrides ------------------------------------------------------------ */

static const struct {
	const char *set;
	const char *error;
} bad_sets[] = {
	{"training.micro_batch=x", "--set 'training.micro_batch=x': expected an integer for 'training.micro_batch'"},
	{"training.micro_bach=2", "--set 'training.micro_bach=2': unknown key 'training.micro_bach' (did you mean 'training.micro_batch'?)"},
	{"cluster.scale_out.bandwidth=400", "'cluster.scale_out.bandwidth' needs a unit (e.g. '400 Gb/s')"},
	{"cluster.nodes", "--set 'cluster.nodes': expected key.path=value"},
	{"cluster.nodes=", "missing value for 'cluster.nodes'"},
	{"cluster.gpu=h100", "unknown preset 'h100' for 'cluster.gpu.preset' (did you mean"},
	{"stragglers=[]", "'stragglers' can only be given in the scenario file"},
	{"cluster.scale_out=1", "'cluster.scale_out' is a section"},
	{"parallelism.dp=3", "--set 'parallelism.dp=3': tp x pp x dp x cp = 3 but the cluster has 16 GPUs"},
	{"cluster.nodes=0", "'cluster.nodes' must be at least 1"},
	/* not echoed: the argument is not text a terminal shows as it is */
	{"name=caf\xe9", "--set 'name=...' is not valid UTF-8 at byte 9 (0xe9)"},
	{"name=caf\xc3\xa9\xc3", "--set 'name=...' is not valid UTF-8 at byte 11 (0xc3)"},
	{"name=\xc0\xaf", "--set 'name=...' is not valid UTF-8 at byte 6 (0xc0)"},
	{"name=\xed\xa0\x80", "--set 'name=...' is not valid UTF-8 at byte 6 (0xed)"},
	{"name=\xf4\x90\x80\x80", "--set 'name=...' is not valid UTF-8 at byte 6 (0xf4)"},
	{"name=a\x1b[2Jb", "--set 'name=...' holds a control character (0x1b) at byte 7"},
	{"name=a\x7f", "--set 'name=...' holds a control character (0x7f) at byte 7"},
	{"na\xe9me=a", "--set's argument is not valid UTF-8 at byte 3 (0xe9)"},
	{"name\x01", "--set's argument holds a control character (0x01) at byte 5"},
};

/* Names in any script load as they are: two, three and four bytes. */
START_TEST(utf8_names_load)
{
	cs_scenario *sc = NULL;
	cs_diag diag = {""};
	const char *sets[] = {"name=caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"};

	ck_assert_msg(load_text(BASE, sets, 1, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_str_eq(sc->name, "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
	cs_scenario_free(sc);
}
END_TEST

START_TEST(overrides_use_the_file_checks)
{
	cs_scenario *sc = (cs_scenario *)1;
	cs_diag diag = {""};
	const char *sets[] = {bad_sets[_i].set};

	ck_assert_int_eq(load_text(BASE, sets, 1, &sc, &diag), CS_ERR_INPUT);
	ck_assert_ptr_null(sc);
	ck_assert_msg(strstr(diag.msg, bad_sets[_i].error), "want '%s', got '%s'", bad_sets[_i].error,
	              diag.msg);
}
END_TEST

START_TEST(overrides_apply_in_order_and_reapply_presets)
{
	const char *sets[] = {"cluster.nodes=4", "model.preset=llama3-70b", "model.layers=40",
	                      "cluster.gpu=b200", "parallelism.tp=8",
	                      "parallelism.data_parallel.bucket = 50 MiB"};
	cs_scenario *sc = NULL;
	cs_diag diag;

	ck_assert_msg(load_text("cluster: {gpu: {preset: h100-sxm-80g, sms: 100}}\n"
	                        "model: {preset: llama2-7b, layers: 16}\n", sets, 6, &sc, &diag) == CS_OK,
	              "%s", diag.msg);
	ck_assert_int_eq(sc->cluster.nodes, 4);
	ck_assert_str_eq(sc->model.name, "llama3-70b");
	ck_assert_int_eq(sc->model.layers, 40);
	ck_assert_int_eq(sc->model.hidden, 8192);
	ck_assert_str_eq(sc->cluster.gpu.name, "b200");
	ck_assert_int_eq(sc->cluster.gpu.sms, 148);          /* the preset replaced the inline gpu */
	ck_assert_double_eq(sc->cluster.scale_up.bandwidth, 900e9); /* B200 server */
	ck_assert_int_eq(sc->parallel.dp, 4);
	ck_assert_double_eq(sc->parallel.bucket_bytes, 50.0 * 1048576);
	cs_scenario_free(sc);
}
END_TEST

/* The scenario keeps one record of where each value came from, so a check
 * made after a later override (a sweep's point, a searched plan) still
 * names the file's line or the --set assignment. */
START_TEST(checks_after_an_override_keep_the_location)
{
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	const char *sets[] = { "cluster.nodes=2" };
	ck_assert_int_eq(load_text(BASE "parallelism: {tp: 2}\n", sets, 1, &sc, &diag), CS_OK);
	ck_assert_int_eq(cs_config_apply_override(sc, "parallelism.dp=3", &diag), CS_OK);
	ck_assert_int_eq(cs_config_validate(sc, &diag), CS_ERR_INPUT);
	ck_assert_msg(strncmp(diag.msg, "--set 'parallelism.dp=3': ", 26) == 0, "%s", diag.msg);
	cs_scenario_free(sc);

	/* a value from the file, checked after an override that breaks it */
	ck_assert_int_eq(load_text(BASE "training: {global_batch: 16}\n", NULL, 0, &sc, &diag), CS_OK);
	ck_assert_int_eq(cs_config_apply_override(sc, "cluster.nodes=3", &diag), CS_OK);
	ck_assert_int_eq(cs_config_validate(sc, &diag), CS_ERR_INPUT);
	ck_assert_msg(strstr(diag.msg, ":5:"), "%s", diag.msg);
	cs_scenario_free(sc);
}
END_TEST

START_TEST(fp8_recipe_keys_default_to_what_te_runs)
{
	cs_scenario *sc = NULL;
	cs_diag diag;

	ck_assert_msg(load_text(BASE "training: {precision: fp8}\n", NULL, 0, &sc, &diag) == CS_OK, "%s",
		      diag.msg);
	ck_assert_int_eq(sc->training.fp8.amax, CS_AMAX_REDUCED); /* TE's reduce_amax */
	ck_assert_int_eq(sc->training.fp8.amax_history, 1024);   /* TE 1.x's amax_history_len */
	ck_assert(!sc->training.fp8.params);
	ck_assert(sc->training.fp8.weight_cache);
	ck_assert(sc->training.fp8.comm);
	ck_assert(!sc->parallel.tp_overlap_fp8_buf);
	cs_scenario_free(sc);
	ck_assert_msg(load_text(BASE "training:\n  precision: fp8\n  fp8: {amax: local, amax_history: 16, "
				"params: true, weight_cache: false, comm: false}\n"
				"parallelism: {tp_overlap_fp8_buf: true}\n", NULL, 0, &sc, &diag) == CS_OK,
		      "%s", diag.msg);
	ck_assert_int_eq(sc->training.fp8.amax, CS_AMAX_LOCAL);
	ck_assert_int_eq(sc->training.fp8.amax_history, 16);
	ck_assert(sc->training.fp8.params);
	ck_assert(!sc->training.fp8.weight_cache);
	ck_assert(!sc->training.fp8.comm);
	ck_assert(sc->parallel.tp_overlap_fp8_buf);
	ck_assert_int_eq(cs_config_apply_override(sc, "training.fp8.amax=off", &diag), CS_OK);
	ck_assert_int_eq(sc->training.fp8.amax, CS_AMAX_OFF);
	cs_scenario_free(sc);
}
END_TEST

START_TEST(override_after_validation_rederives)
{
	cs_scenario *sc = NULL;
	cs_diag diag;

	ck_assert_msg(load_text(BASE, NULL, 0, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->parallel.dp, 16);
	ck_assert_int_eq(sc->training.global_batch, 16);
	ck_assert_int_eq(sc->training.optimizer_dtype, CS_STATE_FP32);   /* the default */
	ck_assert_int_eq(cs_config_apply_override(sc, "parallelism.tp=4", &diag), CS_OK);
	ck_assert_int_eq(cs_config_apply_override(sc, "cluster.gpu=a100-sxm-80g", &diag), CS_OK);
	ck_assert_msg(cs_config_validate(sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->parallel.dp, 4);
	ck_assert_int_eq(sc->training.global_batch, 4);
	ck_assert_double_eq(sc->cluster.scale_up.bandwidth, 300e9);
	/* an explicit value stays explicit */
	ck_assert_int_eq(cs_config_apply_override(sc, "parallelism.dp=4", &diag), CS_OK);
	ck_assert_int_eq(cs_config_apply_override(sc, "cluster.nodes=4", &diag), CS_OK);
	ck_assert_int_eq(cs_config_validate(sc, &diag), CS_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(diag.msg, "tp x pp x dp x cp = 16 but the cluster has 32 GPUs"));
	cs_scenario_free(sc);
}
END_TEST

START_TEST(defaults_then_validate_without_a_file)
{
	cs_scenario sc;
	cs_diag diag;

	ck_assert_int_eq(cs_config_defaults(&sc), CS_OK);
	ck_assert_int_eq(cs_config_validate(&sc, &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "scenario: 'cluster.gpu' is required: a preset such as "
	                 "'h100-sxm-80g', or a mapping with peak_bf16, hbm, hbm_bandwidth and sms");
	ck_assert_int_eq(cs_config_apply_override(&sc, "cluster.gpu=h200-sxm-141g", &diag), CS_OK);
	ck_assert_int_eq(cs_config_apply_override(&sc, "model=llama3-8b", &diag), CS_OK);
	ck_assert_msg(cs_config_validate(&sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(cs_scenario_gpus(&sc), 8);
	ck_assert_int_eq(sc.parallel.dp, 8);
	ck_assert_int_eq(sc.parallel.schedule, CS_SCHED_1F1B);
	ck_assert_int_eq(sc.parallel.max_inflight_gathers, 2);
	ck_assert_int_eq(sc.parallel.order[0], CS_AXIS_TP);
	ck_assert_int_eq(sc.parallel.order[4], CS_AXIS_DP);
	ck_assert_int_eq(sc.sim.seed, 1);
}
END_TEST

/* ---- stragglers ----------------------------------------------------------- */

START_TEST(stragglers_fill_perturbations)
{
	cs_scenario *sc = NULL;
	cs_diag diag;
	const cs_perturbation *p;

	ck_assert_msg(load_text(BASE "stragglers:\n"
		"  - {gpu: 12, compute: 1.25}\n"
		"  - {node: 1, compute: 2}\n"
		"  - {ranks: [0, 7], compute: 1.5, start_step: 2}\n"
		"  - {link: nic, gpu: 3, bandwidth: 0.5, latency: 10 us}\n"
		"  - {tier: pod, bandwidth: 0.25}\n"
		"  - {random: {fraction: 0.001, distribution: lognormal, sigma: 0.1}, seed: 7, per_step: true}\n"
		"  - {random: {fraction: 1, distribution: uniform, low: 1, high: 1.5}}\n",
		NULL, 0, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->n_perturbations, 7);
	p = sc->perturbations;
	ck_assert_int_eq(p[0].target, CS_PERT_GPU);
	ck_assert_int_eq(p[0].first, 12);
	ck_assert_double_eq(p[0].compute, 1.25);
	ck_assert_int_eq(p[0].line, 6);
	ck_assert_int_eq(p[0].col, 5);
	ck_assert_int_eq(p[1].target, CS_PERT_NODE);
	ck_assert_int_eq(p[2].target, CS_PERT_RANKS);
	ck_assert_int_eq(p[2].last, 7);
	ck_assert_int_eq(p[2].start_step, 2);
	ck_assert_int_eq(p[3].target, CS_PERT_LINK);
	ck_assert_int_eq(p[3].tier, CS_TIER_NIC);
	ck_assert_double_eq(p[3].bandwidth, 0.5);
	ck_assert_int_eq(p[3].extra_latency_ns, 10000);
	ck_assert_int_eq(p[4].target, CS_PERT_TIER);
	ck_assert_int_eq(p[4].tier, CS_TIER_POD);
	ck_assert_int_eq(p[5].target, CS_PERT_RANDOM);
	ck_assert_int_eq(p[5].dist, CS_DIST_LOGNORMAL);
	ck_assert_double_eq(p[5].p1, 0.0);
	ck_assert_double_eq(p[5].p2, 0.1);
	ck_assert_int_eq(p[5].seed, 7);
	ck_assert(p[5].per_step);
	ck_assert_int_eq(p[6].dist, CS_DIST_UNIFORM);
	ck_assert_double_eq(p[6].p2, 1.5);
	cs_scenario_free(sc);
}
END_TEST

static const struct {
	const char *entry;
	const char *error;
} bad_stragglers[] = {
	{"  - {gpu: 16, compute: 1.2}\n", ":6:5: straggler gpu 16 is out of range (0 to 15)"},
	{"  - {node: 2, compute: 1.2}\n", "straggler node 2 is out of range (0 to 1)"},
	{"  - {ranks: [4, 99], compute: 1.2}\n", "straggler rank 99 is out of range"},
	{"  - {ranks: [4, 2], compute: 1.2}\n", "first <= last"},
	{"  - {gpu: 1, compute: 0}\n", ":6:23: straggler 'compute' must be at least 1 (a straggler is slower), got '0'"},
	{"  - {gpu: 1, compute: -2}\n", "must be at least 1"},
	{"  - {ranks: [0, 15], compute: 0.3}\n", ":6:31: straggler 'compute' must be at least 1 (a straggler is slower), got '0.3'"},
	{"  - {gpu: 1}\n", "needs 'compute'"},
	{"  - {gpu: 1, node: 1, compute: 2}\n", "exactly one target"},
	{"  - {compute: 2}\n", "exactly one target"},
	{"  - {gpu: 1, compute: 2, speed: 3}\n", ":6:26: unknown straggler key 'speed' (did you mean 'seed'?)"},
	{"  - {gpu: 1, compyte: 2}\n", "(did you mean 'compute'?)"},
	{"  - {link: nic, gpu: 1, bandwidth: 1.5}\n", "straggler 'bandwidth' must be in (0, 1]"},
	{"  - {link: nic, gpu: 1, bandwidth: 0}\n", "must be in (0, 1]"},
	{"  - {link: pcie, gpu: 1, bandwidth: 0.5}\n", "unknown link 'pcie'"},
	{"  - {tier: spine, bandwidth: 0.5}\n", "unknown tier 'spine'"},
	{"  - {gpu: 1, bandwidth: 0.5}\n", "need 'link' (nic or nvlink) or 'tier'"},
	{"  - {random: {fraction: 0, distribution: normal, stddev: 1}}\n", "'fraction' must be in (0, 1]"},
	{"  - {random: {fraction: 1.5, distribution: normal, stddev: 1}}\n", "must be in (0, 1]"},
	{"  - {random: {fraction: 0.1, distribution: lognormol, sigma: 1}}\n",
	 ":6:44: unknown distribution 'lognormol' (did you mean 'lognormal'?)"},
	{"  - {random: {fraction: 0.1, distribution: normal}}\n", "the 'normal' distribution needs 'stddev'"},
	{"  - {random: {fraction: 0.1, distribution: normal, sigma: 1}}\n",
	 "unknown key 'sigma' for the 'normal' distribution (expected fraction, mean, stddev)"},
	{"  - {random: {fraction: 0.1, distribution: uniform, low: 2, high: 1}}\n", "0 < low < high"},
	{"  - {random: {fraction: 0.1, distribution: gamma, shape: 2, scale: -1}}\n", "'scale' must be positive"},
	{"  - {random: {distribution: exponential, mean: 1}}\n", "needs a 'fraction'"},
	{"  - {random: {fraction: 0.1, distribution: exponential, mean: 1}, compute: 2}\n", "drop 'compute'"},
	{"  - {gpu: 1, compute: 2, per_step: true}\n", "'per_step' applies to random stragglers"},
	{"  - {link: nic, gpu: 1, latency: 5}\n", "straggler 'latency': '5' needs a unit"},
	{"  - 3\n", "each straggler must be a mapping"},
	{"  - {gpu: x, compute: 2}\n", "straggler 'gpu' expects an integer, got 'x'"},
};

START_TEST(bad_stragglers_are_refused_with_location)
{
	char yaml[1024];
	cs_scenario *sc = NULL;
	cs_diag diag = {""};

	snprintf(yaml, sizeof yaml, BASE "stragglers:\n%s", bad_stragglers[_i].entry);
	ck_assert_int_eq(load_text(yaml, NULL, 0, &sc, &diag), CS_ERR_INPUT);
	ck_assert_ptr_null(sc);
	ck_assert_msg(strstr(diag.msg, bad_stragglers[_i].error), "want '%s', got '%s'",
	              bad_stragglers[_i].error, diag.msg);
}
END_TEST

START_TEST(too_many_stragglers_names_the_limit)
{
	size_t cap = 64 * 40 + 256, used;
	char *yaml = malloc(cap);
	cs_scenario *sc = NULL;
	cs_diag diag;

	used = (size_t)snprintf(yaml, cap, BASE "stragglers:\n");
	for (int i = 0; i <= CS_MAX_PERTURBATIONS; i++)
		used += (size_t)snprintf(yaml + used, cap - used, "  - {gpu: 1, compute: 1.1}\n");
	ck_assert_int_eq(load_text(yaml, NULL, 0, &sc, &diag), CS_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(diag.msg, ":70:5: more than 64 stragglers (the limit is 64)"));
	free(yaml);
}
END_TEST

/* ---- the key table and its documentation ---------------------------------- */

START_TEST(key_table_is_consistent)
{
	size_t n = cs_config_key_count();

	ck_assert_uint_le(n, CS__MAX_KEYS);
	ck_assert_ptr_null(cs_config_key_at(n));
	for (size_t i = 0; i < n; i++) {
		const cs_config_key *k = cs_config_key_at(i);
		ck_assert_ptr_eq(cs_config_key_find(k->path), k);
		ck_assert_msg(k->desc && *k->desc && k->def && *k->def, "%s", k->path);
		ck_assert_msg(k->offset + k->size <= sizeof(cs_scenario), "%s", k->path);
		ck_assert_msg(k->kind != CS_KIND_ENUM || k->names, "%s", k->path);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(cs_config_key_at(j)->path, k->path);
	}
	ck_assert_ptr_eq(cs_config_key_find("cluster.gpu"), cs_config_key_find("cluster.gpu.preset"));
	ck_assert_ptr_eq(cs_config_key_find("model"), cs_config_key_find("model.preset"));
	ck_assert_ptr_null(cs_config_key_find("cluster"));
}
END_TEST

START_TEST(every_key_is_documented)
{
	FILE *f = fopen(CS_SOURCE_ROOT "/docs/scenarios.md", "rb");
	char *doc;
	long len;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	doc = calloc(1, (size_t)len + 1);
	ck_assert_uint_eq(fread(doc, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (size_t i = 0; i < cs_config_key_count(); i++) {
		char needle[160];
		snprintf(needle, sizeof needle, "`%s`", cs_config_key_at(i)->path);
		ck_assert_msg(strstr(doc, needle), "%s is not in docs/scenarios.md", needle);
	}
	ck_assert_ptr_nonnull(strstr(doc, "`stragglers`"));
	free(doc);
}
END_TEST

/* Recomputation's refinements as a YAML list, as a string of names, by
 * --set, with their defaults (the frameworks'). */
START_TEST(recompute_options_are_read)
{
	cs_scenario *sc = NULL;
	cs_diag diag = {""};

	ck_assert_msg(load_text(BASE, NULL, 0, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->parallel.recompute_method, CS_RECOMPUTE_UNIFORM);
	ck_assert_int_eq(sc->parallel.recompute_layers, 1);
	ck_assert_uint_eq(sc->parallel.recompute_modules, CS_RCM_CORE_ATTN);
	ck_assert_int_eq(sc->parallel.recompute_every, 0);
	cs_scenario_free(sc);

	ck_assert_msg(load_text(BASE "parallelism:\n  recompute: selective\n  recompute_modules: [core_attn, "
				     "layernorm, mlp]\n",
				NULL, 0, &sc, &diag) == CS_OK,
		      "%s", diag.msg);
	ck_assert_uint_eq(sc->parallel.recompute_modules, CS_RCM_CORE_ATTN | CS_RCM_LAYERNORM | CS_RCM_MLP);
	cs_scenario_free(sc);

	const char *sets[] = { "parallelism.recompute=selective", "parallelism.recompute_modules=op" };
	ck_assert_msg(load_text(BASE, sets, 2, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_uint_eq(sc->parallel.recompute_modules, CS_RCM_OP);
	cs_scenario_free(sc);

	const char *full[] = { "parallelism.recompute=full", "parallelism.recompute_method=block",
			       "parallelism.recompute_layers=32" };
	ck_assert_msg(load_text(BASE, full, 3, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->parallel.recompute_method, CS_RECOMPUTE_BLOCK);
	ck_assert_int_eq(sc->parallel.recompute_layers, 32);
	cs_scenario_free(sc);

	const char *every[] = { "parallelism.recompute=selective", "parallelism.recompute_every=3" };
	ck_assert_msg(load_text(BASE, every, 2, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(sc->parallel.recompute_every, 3);
	cs_scenario_free(sc);

	const char *str[] = { "parallelism.recompute=selective", "parallelism.recompute_modules=[mlp, Core-Attn]" };
	ck_assert_msg(load_text(BASE, str, 2, &sc, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_uint_eq(sc->parallel.recompute_modules, CS_RCM_CORE_ATTN | CS_RCM_MLP);
	cs_scenario_free(sc);
	ck_assert_msg(load_text("cluster: {gpu: h100-sxm-80g, nodes: 4}\nmodel: {preset: deepseek-v3-like, layers: "
				"4}\nparallelism: {ep: 32, recompute: selective, recompute_modules: [moe_layer]}\n",
				NULL, 0, &sc, &diag) == CS_OK,
		      "%s", diag.msg);
	ck_assert_uint_eq(sc->parallel.recompute_modules, CS_RCM_MOE);
	ck_assert_str_eq(cs_recompute_module_name(CS_RCM_MLA_UP), "mla_up_proj");
	ck_assert_str_eq(cs_recompute_module_name(3), "?");
	ck_assert_str_eq(cs_recompute_method_name(CS_RECOMPUTE_BLOCK), "block");
	cs_scenario_free(sc);

	/* Megatron-LM's names are answered with ours */
	ck_assert_int_eq(load_text(BASE "parallelism: {recompute_num_layers: 2}\n", NULL, 0, &sc, &diag),
			 CS_ERR_INPUT);
	ck_assert_msg(strstr(diag.msg, "did you mean 'parallelism.recompute_layers'?"), "%s", diag.msg);
	ck_assert_int_eq(load_text(BASE "parallelism: {selective_ac_option: 2}\n", NULL, 0, &sc, &diag),
			 CS_ERR_INPUT);
	ck_assert_msg(strstr(diag.msg, "did you mean 'parallelism.recompute_every'?"), "%s", diag.msg);
	ck_assert_int_eq(load_text(BASE "parallelism: {recompute_activations: true}\n", NULL, 0, &sc, &diag), CS_ERR_INPUT);
	ck_assert_msg(strstr(diag.msg, "did you mean 'parallelism.recompute'?"), "%s", diag.msg);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("fold");
	tcase_add_test(tc, fold_and_threads_default_to_auto);
	suite_add_tcase(s, tc);
	tc = tcase_create("units");
	tcase_add_loop_test(tc, units_convert_to_base_units, 0, sizeof unit_cases / sizeof unit_cases[0]);
	suite_add_tcase(s, tc);
	tc = tcase_create("suggest");
	tcase_add_test(tc, suggest_finds_near_misses_only);
	suite_add_tcase(s, tc);
	tc = tcase_create("presets");
	tcase_add_test(tc, presets_hold_reference_figures);
	tcase_add_test(tc, presets_hold_model_shapes);
	suite_add_tcase(s, tc);
	tc = tcase_create("load");
	tcase_add_test(tc, load_fills_values_and_derives_the_rest);
	tcase_add_test(tc, nvl72_trays_share_the_rack_domain);
	tcase_add_test(tc, every_example_scenario_loads);
	tcase_add_test(tc, example_ddp_llama2_matches_its_description);
	tcase_add_test(tc, defaults_then_validate_without_a_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_loop_test(tc, bad_scenarios_are_refused_with_location, 0,
	                    sizeof bad_cases / sizeof bad_cases[0]);
	tcase_add_test(tc, file_problems_are_refused);
	tcase_add_test(tc, yaml_errors_keep_their_status);
	tcase_add_test(tc, kernel_profile_is_resolved_and_checked);
	suite_add_tcase(s, tc);
	tc = tcase_create("overrides");
	tcase_add_loop_test(tc, overrides_use_the_file_checks, 0, sizeof bad_sets / sizeof bad_sets[0]);
	tcase_add_test(tc, utf8_names_load);
	tcase_add_test(tc, overrides_apply_in_order_and_reapply_presets);
	tcase_add_test(tc, override_after_validation_rederives);
	tcase_add_test(tc, fp8_recipe_keys_default_to_what_te_runs);
	tcase_add_test(tc, checks_after_an_override_keep_the_location);
	suite_add_tcase(s, tc);
	tc = tcase_create("stragglers");
	tcase_add_test(tc, stragglers_fill_perturbations);
	tcase_add_loop_test(tc, bad_stragglers_are_refused_with_location, 0,
	                    sizeof bad_stragglers / sizeof bad_stragglers[0]);
	tcase_add_test(tc, too_many_stragglers_names_the_limit);
	suite_add_tcase(s, tc);
	tc = tcase_create("keys");
	tcase_add_test(tc, te_recipe_names_read_as_precisions);
	tcase_add_loop_test(tc, other_spellings_of_values_read_as_ours, 0,
			    (int)(sizeof value_cases / sizeof value_cases[0]));
	tcase_add_test(tc, other_tools_key_names_are_suggested);
	tcase_add_test(tc, key_table_is_consistent);
	tcase_add_test(tc, every_key_is_documented);
	tcase_add_test(tc, recompute_options_are_read);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
