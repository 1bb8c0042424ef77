/*
 * test_planner.c - the plan search: the seed's heuristic against its rule
 * and closed-form memory, the enumeration counts of a small cluster, the
 * simulation cap, resizing, determinism across threads, the best plan
 * against the heuristic's choice, and what `clustersim plan` writes (its
 * options and messages are tests/cli/commands.sh's).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "config/config.h"
#include "model/compute.h"
#include "model/model.h"
#include "report/plan_out.h"
#include "study/planner.h"
#include "study/search.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A scenario from overrides on the defaults; the caller frees it. */
static cs_scenario *make(const char *const *sets)
{
	cs_scenario *sc = malloc(sizeof *sc);
	cs_diag diag;

	ck_assert_ptr_nonnull(sc);
	ck_assert_int_eq(cs_config_defaults(sc), CS_OK);
	for (; *sets; sets++)
		ck_assert_msg(cs_config_apply_override(sc, *sets, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_msg(cs_config_validate(sc, &diag) == CS_OK, "%s", diag.msg);
	return sc;
}

/* GPT-3 XL sized (about 1.3B parameters) on one 8-GPU A100 server. */
static const char *const gpt13[] = {
	"cluster.gpu=a100-sxm-80g", "cluster.nodes=1", "model.arch=gpt", "model.layers=24",
	"model.hidden=2048", "model.heads=16", "model.ffn=8192", "model.vocab=50257",
	"model.max_positions=2048", "model.tied_embeddings=true", "training.seq_len=2048",
	"training.micro_batch=4", "training.global_batch=64", NULL,
};

/* Llama 2 7B on two 8-GPU H100 servers, 16 sequences of 4096 per step. */
static const char *const llama7b[] = {
	"cluster.gpu=h100-sxm-80g", "cluster.nodes=2", "model.preset=llama2-7b",
	"training.seq_len=4096", "training.global_batch=16", NULL,
};

static cs_plan_search *search(const cs_scenario *sc, int64_t gpus, int jobs, int64_t cap)
{
	cs_plan_opts o = {.gpus = gpus, .jobs = jobs, .max_sims = cap};
	cs_plan_search *s = NULL;
	cs_diag diag;
	ck_assert_msg(cs_study_plans(sc, &o, NULL, &s, &diag) == CS_OK, "%s", diag.msg);
	return s;
}

/* ---- the seed's heuristic ------------------------------------------------ */

START_TEST(test_heuristic_memory_is_the_seeds_formula)
{
	/* Llama 2 7B, tp 1 pp 1 dp 16, ZeRO-1, selective, b 1: 2P + 2P + 12P/16
	 * of state, and 34 s h bytes per layer for each of the 32 layers. */
	cs_scenario *sc = make(llama7b);
	cs_plan p;
	bool fits;
	cs_plan_heuristic(sc, &p, &fits);
	double P = (double)cs_model_params(&sc->model).total;
	double want = 2 * P + 2 * P + 12 * P / 16 + 34.0 * 4096 * 4096 * 32;
	ck_assert(fits);
	ck_assert_int_eq(p.tp, 1);
	ck_assert_int_eq(p.pp, 1);
	ck_assert_int_eq(p.dp, 16);
	ck_assert_int_eq(p.sharding, CS_SHARD_ZERO1);
	ck_assert_int_eq(p.recompute, CS_RECOMPUTE_SELECTIVE);
	ck_assert_int_eq(p.micro_batch, 1);
	ck_assert_double_eq_tol(p.mem_bytes, want, 1.0);
	free(sc);
}
END_TEST

static const struct {
	const char *hbm, *model;
	int64_t nodes, tp, pp;
	bool fits;
} seed_cases[] = {
	/* 7B state+activations ~50 GB: fits 85 % of 80 GB at tp 1 */
	{ "80 GB", "llama2-7b", 2, 1, 1, true },
	/* at 40 GB, tp x pp = 2 fits and tp 2 is preferred over pp 2 */
	{ "40 GB", "llama2-7b", 2, 2, 1, true },
	/* at 24 GB, tp x pp = 4: tp 4 */
	{ "24 GB", "llama2-7b", 2, 4, 1, true },
	/* nothing fits: the smallest tp x pp, flagged */
	{ "80 GB", "llama3-405b", 2, 1, 1, false },
};

START_TEST(test_heuristic_smallest_tp_pp_then_larger_tp)
{
	char hbm[64], model[64], nodes[64];
	snprintf(hbm, sizeof hbm, "cluster.gpu.hbm=%s", seed_cases[_i].hbm);
	snprintf(model, sizeof model, "model.preset=%s", seed_cases[_i].model);
	snprintf(nodes, sizeof nodes, "cluster.nodes=%lld", (long long)seed_cases[_i].nodes);
	const char *const sets[] = {"cluster.gpu=h100-sxm-80g", hbm, nodes, model,
				    "training.seq_len=4096", "training.global_batch=16", NULL};
	cs_scenario *sc = make(sets);
	cs_plan p;
	bool fits;
	cs_plan_heuristic(sc, &p, &fits);
	ck_assert_int_eq(p.tp, seed_cases[_i].tp);
	ck_assert_int_eq(p.pp, seed_cases[_i].pp);
	ck_assert_int_eq(p.dp, 16 / (p.tp * p.pp));
	ck_assert_int_eq(fits, seed_cases[_i].fits);
	ck_assert_int_eq(p.mem_bytes <= 0.85 * sc->cluster.gpu.hbm_bytes, fits);
	free(sc);
}
END_TEST

/* ---- enumeration and pruning --------------------------------------------- */

START_TEST(test_counts_of_a_small_cluster)
{
	/* 16 heads, domain 8, 8 GPUs: (tp, pp) = (1,1..8), (2,1..4), (4,1..2),
	 * (8,1); pp > 1 takes v 1, 2, 4; micro-batch 1, 2, 4; four shardings
	 * unless dp = 1; three recomputes: 117 plans with pp 1, 405 with pp > 1.
	 * Invalid: pp 8 x v 4 = 32 > 24 layers (3 micro-batches x 3 recomputes). */
	cs_scenario *sc = make(gpt13);
	cs_plan_search *s = search(sc, 0, 2, 20);
	ck_assert_int_eq(s->considered, 522);
	ck_assert_int_eq(s->pruned_memory, 0);
	ck_assert_int_eq(s->pruned_invalid, 9);
	ck_assert_int_eq(s->survived, 513);
	ck_assert_int_eq(s->simulated, 20);
	ck_assert_int_eq(s->skipped, 493);
	ck_assert_int_eq(s->failed, 0);
	ck_assert_int_eq(s->nplans, 20);
	for (int64_t i = 0; i < s->nplans; i++) {
		const cs_plan *p = &s->plans[i];
		ck_assert_int_eq(p->tp * p->pp * p->dp * p->cp, 8);
		ck_assert(p->mem_bytes <= s->budget_bytes);
		ck_assert(p->simulated);
		if (i > 0)
			ck_assert(s->plans[i - 1].step_time_s <= p->step_time_s);
	}
	cs_plan_search_free(s);
	free(sc);
}
END_TEST

START_TEST(test_memory_budget_prunes_at_the_headroom)
{
	/* At 24 GB x 0.5 = 12 GB: Llama 2 7B's 16 B/param state does not fit
	 * unsharded, so every plan kept has its formula memory under 12 GB. */
	const char *const sets[] = {"cluster.gpu=h100-sxm-80g", "cluster.gpu.hbm=24 GB",
				    "cluster.nodes=2", "model.preset=llama2-7b",
				    "training.seq_len=4096", "training.global_batch=16", NULL};
	cs_scenario *sc = make(sets);
	cs_plan_opts o = {.jobs = 2, .headroom = 0.5, .max_sims = 5};
	cs_plan_search *s = NULL;
	cs_diag diag;
	ck_assert_int_eq(cs_study_plans(sc, &o, NULL, &s, &diag), CS_OK);
	ck_assert_double_eq(s->budget_bytes, 12e9);
	ck_assert(s->pruned_memory > 0);
	ck_assert_int_eq(s->considered, s->pruned_memory + s->pruned_invalid + s->survived);
	ck_assert_int_ge(s->nplans, 1);
	for (int64_t i = 0; i < s->nplans; i++)
		ck_assert(s->plans[i].mem_bytes <= 12e9);
	cs_plan_search_free(s);
	free(sc);
}
END_TEST

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

START_TEST(test_cap_simulates_the_best_estimates_and_the_heuristic)
{
	cs_scenario *sc = make(gpt13);
	/* 2 GPUs: (tp,pp) = (1,1) 36 plans, (1,2) 27, (2,1) 9 */
	cs_plan_search *all = search(sc, 2, 2, 0), *s = search(sc, 2, 2, 10);
	ck_assert_int_eq(all->considered, 72);
	ck_assert_int_eq(s->survived, all->survived);
	ck_assert_int_eq(s->simulated, 10);
	ck_assert_int_eq(s->skipped, s->survived - 10);
	ck_assert_int_eq(s->nplans, 10);
	ck_assert(s->heuristic_rank >= 1 && s->heuristic_rank <= 10);
	/* every simulated plan but the heuristic's has one of the 9 smallest
	 * estimates of all survivors */
	double *est = malloc((size_t)all->nplans * sizeof *est);
	for (int64_t i = 0; i < all->nplans; i++)
		est[i] = all->plans[i].estimate_s;
	qsort(est, (size_t)all->nplans, sizeof *est, cmp_double);
	int beyond = 0;
	for (int64_t i = 0; i < s->nplans; i++)
		beyond += s->plans[i].estimate_s > est[8];
	ck_assert_int_le(beyond, 1);
	ck_assert(s->heuristic.estimate_s > est[8] || beyond == 0);
	free(est);
	cs_plan_search_free(all);
	cs_plan_search_free(s);
	free(sc);
}
END_TEST

/* ---- resizing ------------------------------------------------------------ */

static const struct {
	int64_t gpus;
	cs_status st;
	int64_t nodes, per, domain;
} resize_cases[] = {
	{ 16, CS_OK, 2, 8, 8 },
	{ 64, CS_OK, 8, 8, 8 },
	{ 4, CS_OK, 1, 4, 4 },
	{ 1, CS_OK, 1, 1, 1 },
	{ 12, CS_ERR_INPUT, 0, 0, 0 },
	{ 0, CS_ERR_INPUT, 0, 0, 0 },
};

START_TEST(test_resize_whole_nodes_or_part_of_one)
{
	cs_scenario *sc = make(llama7b);
	cs_diag diag = {{0}};
	ck_assert_int_eq(cs_plan_resize(sc, resize_cases[_i].gpus, &diag), resize_cases[_i].st);
	if (resize_cases[_i].st == CS_OK) {
		ck_assert_int_eq(sc->cluster.nodes, resize_cases[_i].nodes);
		ck_assert_int_eq(sc->cluster.gpus_per_node, resize_cases[_i].per);
		ck_assert_int_eq(sc->cluster.scale_up_domain, resize_cases[_i].domain);
	} else {
		ck_assert_ptr_nonnull(strstr(diag.msg, "'--gpus'"));
	}
	free(sc);
}
END_TEST

/* An MoE model: every power of two dividing dp and the experts is an
 * expert-parallel degree to try inside dp (4 GPUs, 8 experts: ep 1, 2 and
 * 4 where dp allows), and with tp > 1 the experts folded over tp / etp x
 * cp x a power of two of dp (Megatron-Core's expert mesh), and only
 * those. */
static const char *const moe4[] = {
	"cluster.gpu=h100-sxm-80g", "cluster.nodes=1", "cluster.gpus_per_node=4",
	"model.preset=deepseek-v3-like", "model.layers=4", "model.hidden=1024", "model.heads=16",
	"model.kv_heads=16", "model.ffn=4096", "model.expert_ffn=512", "model.experts=8",
	"model.dense_layers=1", "model.vocab=32000", "training.seq_len=1024", "training.global_batch=16",
	NULL,
};

START_TEST(test_moe_models_search_expert_parallelism)
{
	cs_scenario *sc = make(moe4);
	cs_plan_search *s = search(sc, 0, 2, 0);
	int64_t by_ep[5] = { 0 }, folded = 0, folded_tp4 = 0;
	for (int64_t i = 0; i < s->nplans; i++) {
		const cs_plan *p = &s->plans[i];
		ck_assert(p->ep == 1 || p->ep == 2 || p->ep == 4);
		by_ep[p->ep]++;
		if (p->etp == 0) {
			ck_assert_int_eq(p->dp % p->ep, 0);
			continue;
		}
		int64_t in = p->tp / p->etp * p->cp;
		ck_assert_int_gt(in, 1);
		ck_assert_int_eq(p->tp % p->etp, 0);
		ck_assert_int_eq(p->ep % in, 0);
		ck_assert_int_eq(p->dp % (p->ep / in), 0);
		folded++;
		folded_tp4 += p->tp == 4 && p->dp == 1 && p->ep == 4 && p->etp == 1;
	}
	ck_assert_int_gt(by_ep[1], 0);
	ck_assert_int_gt(by_ep[2], 0);
	ck_assert_int_gt(by_ep[4], 0);
	ck_assert_int_gt(folded, 0);
	ck_assert_int_gt(folded_tp4, 0); /* ep over all four TP ranks of one replica */
	cs_plan_search_free(s);
	free(sc);
}
END_TEST

/* The estimate's expert term: four all-to-alls a MoE layer per
 * micro-batch (3 MoE layers, 4 micro-batches), each token's 8 copies
 * leaving for the other 3 ranks' experts over NVLink (one domain of 4);
 * the gradients' sync hides under the backward either way. */
START_TEST(test_estimate_counts_the_expert_all_to_alls)
{
	cs_scenario *sc = make(moe4);
	cs_plan p = { .tp = 1, .pp = 1, .dp = 4, .cp = 1, .ep = 1, .vstages = 1, .micro_batch = 1,
		      .sharding = CS_SHARD_ZERO1 };
	double e1 = cs_plan_estimate(sc, &p);
	p.ep = 4;
	double e4 = cs_plan_estimate(sc, &p);
	double copies = 1024.0 * 1024 * 2 * 8;
	double a2a = 3.0 / 4 / sc->cluster.scale_up.bandwidth * copies;
	ck_assert_double_eq_tol(e4 - e1, 4.0 * a2a * 3 * 4, 1e-9 * e1);
	free(sc);
}
END_TEST

/* Folded, EP's ranks lie etp apart: ep 4 with etp 1 over tp 2 x dp 2 is
 * one domain of 4, each rank's T / 2 tokens' 8 copies leaving for the
 * other 3 (8 micro-batches a replica); the experts' gradients have no
 * expert-DP group left to reduce over. */
START_TEST(test_estimate_folded_expert_all_to_alls)
{
	cs_scenario *sc = make(moe4);
	cs_plan p = { .tp = 2, .pp = 1, .dp = 2, .cp = 1, .ep = 1, .vstages = 1, .micro_batch = 1,
		      .sharding = CS_SHARD_ZERO1, .sequence_parallel = true };
	double e1 = cs_plan_estimate(sc, &p);
	p.ep = 4;
	p.etp = 1;
	double e4 = cs_plan_estimate(sc, &p);
	double copies = 1024.0 * 1024 * 2 / 2 * 8;
	double a2a = 3.0 / 4 / sc->cluster.scale_up.bandwidth * copies;
	ck_assert_double_eq_tol(e4 - e1, 4.0 * a2a * 3 * 8, 1e-9 * e1);
	free(sc);
}
END_TEST

/* ---- the estimate -------------------------------------------------------- */

START_TEST(test_estimate_closed_forms)
{
	/* One GPU: compute alone, hardware FLOPs at peak x GEMM efficiency. */
	const char *const one[] = {"cluster.gpu=h100-sxm-80g", "cluster.nodes=1",
				   "cluster.gpus_per_node=1", "model.preset=llama2-7b",
				   "training.seq_len=4096", "training.global_batch=8", NULL};
	cs_scenario *sc = make(one);
	cs_plan p = {.tp = 1, .pp = 1, .dp = 1, .cp = 1, .ep = 1, .vstages = 1, .micro_batch = 1,
		     .recompute = CS_RECOMPUTE_FULL};
	double compute = cs_model_hw_flops_per_step(&sc->model, 4096, 8, CS_RECOMPUTE_FULL) /
			 (989e12 * 0.80);
	ck_assert_double_eq_tol(cs_plan_estimate(sc, &p), compute, compute * 1e-12);
	free(sc);

	/* Two GPUs in a pipeline, 8 micro-batches: bubble (p-1)/(v m) of the
	 * compute, halved by two virtual stages, plus the sends. */
	const char *const two[] = {"cluster.gpu=h100-sxm-80g", "cluster.nodes=1",
				   "cluster.gpus_per_node=2", "model.preset=llama2-7b",
				   "training.seq_len=4096", "training.global_batch=8", NULL};
	sc = make(two);
	cs_plan q = {.tp = 1, .pp = 2, .dp = 1, .cp = 1, .ep = 1, .vstages = 1, .micro_batch = 1};
	double c2 = cs_model_hw_flops_per_step(&sc->model, 4096, 8, CS_RECOMPUTE_NONE) /
		    (2 * 989e12 * 0.80);
	/* one send forward and one back per micro-batch per chunk: 2 x (s h) x 2 B */
	double send = 2.0 * 4096 * 4096 * 2 / (sc->cluster.scale_out.bandwidth *
					      sc->cluster.nics_per_node / sc->cluster.gpus_per_node);
	double e1 = cs_plan_estimate(sc, &q);
	q.vstages = 2;
	double e2 = cs_plan_estimate(sc, &q);
	ck_assert_double_eq_tol(e1, c2 * (1 + 1.0 / 8) + 8 * send, c2 * 1e-12);
	ck_assert_double_eq_tol(e2, c2 * (1 + 1.0 / 16) + 16 * send, c2 * 1e-12);
	ck_assert(e2 < e1);
	free(sc);
}
END_TEST

/* The scenario's refinements of its granularity go with the plans of that
 * granularity (a block of 4 layers under full recomputation), the others
 * take the frameworks' defaults; the estimate counts the block's layers
 * alone: block 4 of a 16-layer stage recomputes a quarter of the forward
 * full recomputation does. */
START_TEST(test_plans_keep_the_scenarios_recompute_options)
{
	const char *const sets[] = { "cluster.gpu=h100-sxm-80g", "cluster.nodes=2", "model.preset=llama2-7b",
				     "training.seq_len=4096", "training.global_batch=16", "parallelism.pp=2",
				     "parallelism.recompute=full", "parallelism.recompute_method=block",
				     "parallelism.recompute_layers=4", NULL };
	cs_scenario *sc = make(sets);
	cs_scenario *out = malloc(sizeof *out);
	ck_assert_ptr_nonnull(out);
	cs_plan p = { .tp = 1, .pp = 2, .dp = 8, .cp = 1, .ep = 1, .vstages = 1, .micro_batch = 1,
		      .recompute = CS_RECOMPUTE_FULL };
	cs__plan_fill(sc, &p, out);
	ck_assert_int_eq(out->parallel.recompute_method, CS_RECOMPUTE_BLOCK);
	ck_assert_int_eq(out->parallel.recompute_layers, 4);
	double block = cs_plan_estimate(out, &p);
	cs_diag diag;
	ck_assert_msg(cs_config_validate(out, &diag) == CS_OK, "%s", diag.msg);
	p.recompute = CS_RECOMPUTE_SELECTIVE;
	cs__plan_fill(sc, &p, out);
	ck_assert_int_eq(out->parallel.recompute_method, CS_RECOMPUTE_UNIFORM);
	ck_assert_int_eq(out->parallel.recompute_layers, 1);
	ck_assert_msg(cs_config_validate(out, &diag) == CS_OK, "%s", diag.msg);
	/* against uniform full and none: compute = hardware FLOPs at peak */
	p.recompute = CS_RECOMPUTE_NONE;
	cs__plan_fill(sc, &p, out);
	double none = cs_plan_estimate(out, &p);
	p.recompute = CS_RECOMPUTE_FULL;
	sc->parallel.recompute_method = CS_RECOMPUTE_UNIFORM;
	sc->parallel.recompute_layers = 1;
	cs__plan_fill(sc, &p, out);
	double full = cs_plan_estimate(out, &p);
	ck_assert_double_eq_tol(block - none, (full - none) / 4, (full - none) * 1e-9);
	free(out);
	free(sc);
}
END_TEST

/* ---- ranking against the heuristic --------------------------------------- */

static const struct {
	const char *const *sets;
	int64_t gpus;
} vs_cases[] = {
	{ llama7b, 0 },    /* 16 GPUs */
	{ gpt13, 0 },      /* 8 GPUs */
	{ llama7b, 4 },    /* shrunk to half a server */
};

START_TEST(test_best_is_never_slower_than_the_heuristic)
{
	cs_scenario *sc = make(vs_cases[_i].sets);
	cs_plan_search *s = search(sc, vs_cases[_i].gpus, 4, 0);
	ck_assert(s->heuristic_valid);
	ck_assert(s->heuristic.simulated);
	ck_assert_int_ge(s->heuristic_rank, 1);
	ck_assert_int_ge(s->nplans, 1);
	ck_assert(s->plans[0].step_time_s <= s->heuristic.step_time_s);
	/* the heuristic's plan is in the search space: its twin has its time */
	bool twin = false;
	for (int64_t i = 0; i < s->nplans; i++) {
		const cs_plan *p = &s->plans[i], *h = &s->heuristic;
		if (p->tp == h->tp && p->pp == h->pp && p->dp == h->dp && p->cp == h->cp &&
		    p->vstages == h->vstages && p->micro_batch == h->micro_batch &&
		    p->sharding == h->sharding && p->recompute == h->recompute) {
			twin = true;
			ck_assert_double_eq(p->step_time_s, h->step_time_s);
			ck_assert_int_eq(i + 1, s->heuristic_rank);
		}
	}
	ck_assert(twin);
	cs_plan_search_free(s);
	free(sc);
}
END_TEST

START_TEST(test_heuristic_over_the_budget_is_not_ranked)
{
	/* at 40 % of 80 GB the seed's choice (50 GB by the formula) is over */
	cs_scenario *sc = make(llama7b);
	cs_plan_opts o = {.jobs = 2, .headroom = 0.4, .max_sims = 5};
	cs_plan_search *s = NULL;
	cs_diag diag;
	ck_assert_int_eq(cs_study_plans(sc, &o, NULL, &s, &diag), CS_OK);
	ck_assert(s->heuristic_valid);
	ck_assert(s->heuristic.simulated);
	ck_assert(s->heuristic.mem_bytes > s->budget_bytes);
	ck_assert_int_eq(s->heuristic_rank, 0);
	ck_assert_ptr_nonnull(strstr(s->heuristic_note, "over the memory budget"));
	cs_plan_search_free(s);
	free(sc);
}
END_TEST

START_TEST(test_threads_do_not_change_the_ranking)
{
	cs_scenario *sc = make(gpt13);
	cs_plan_search *a = search(sc, 2, 1, 0), *b = search(sc, 2, 3, 0);
	ck_assert_int_eq(a->nplans, b->nplans);
	for (int64_t i = 0; i < a->nplans; i++) {
		ck_assert_int_eq(a->plans[i].index, b->plans[i].index);
		ck_assert_double_eq(a->plans[i].step_time_s, b->plans[i].step_time_s);
	}
	ck_assert_int_eq(a->heuristic_rank, b->heuristic_rank);
	cs_plan_search_free(a);
	cs_plan_search_free(b);
	free(sc);
}
END_TEST

/* ---- what `clustersim plan` writes (report/plan_out.h) -------------------- */

enum { W_TEXT, W_JSON, W_CSV };

#define GPT_YAML CS_SOURCE_ROOT "/scenarios/ddp-gpt-small.yaml"

/* The plans of ddp-gpt-small.yaml for `gpus` GPUs, searched as `clustersim
 * plan` searches them and written in `format`, the first `top` of them. */
static char *written(int format, int64_t gpus, int jobs, int64_t top, int64_t cap)
{
	cs_scenario *sc = NULL;
	cs_diag diag;
	ck_assert_msg(cs_scenario_load(GPT_YAML, NULL, 0, &sc, &diag) == CS_OK, "%s", diag.msg);
	cs_plan_search *s = search(sc, gpus, jobs, cap);
	ck_assert_msg(cs_plan_resize(sc, gpus, &diag) == CS_OK, "%s", diag.msg);
	FILE *f = tmpfile();
	ck_assert_ptr_nonnull(f);
	if (format == W_JSON)
		ck_assert_int_eq(cs_plan_write_json(f, sc, s, top), 0);
	else if (format == W_CSV)
		cs_plan_write_csv(f, s);
	else
		cs_plan_write_text(f, sc, s, top);
	long n = ftell(f);
	char *buf = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	rewind(f);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	cs_plan_search_free(s);
	cs_scenario_free(sc);
	return buf;
}

START_TEST(test_csv_has_one_row_per_simulated_plan)
{
	char *out = written(W_CSV, 4, 2, 10, 1000);
	ck_assert_ptr_nonnull(strstr(out, "rank,tp,cp,pp,virtual_stages,dp,"));
	int lines = 0;
	for (const char *c = out; *c; c++)
		lines += *c == '\n';
	/* 4 GPUs: (tp,pp) = (1,1) (1,2) (1,4) (2,1) (2,2) (4,1); see
	 * test_counts_of_a_small_cluster for the rule: 36+108+27+36+27+9 = 243,
	 * none invalid (pp 4 x v 4 = 16 <= 24 layers). */
	ck_assert_int_eq(lines, 1 + 243);
	free(out);
}
END_TEST

START_TEST(test_json_has_plans_and_search)
{
	char *out = written(W_JSON, 2, 2, 3, 0);
	ck_assert_ptr_nonnull(strstr(out, "\"plans\": ["));
	ck_assert_ptr_nonnull(strstr(out, "\"rank\": 3"));
	ck_assert_ptr_null(strstr(out, "\"rank\": 4"));
	ck_assert_ptr_nonnull(strstr(out, "\"search\": {"));
	ck_assert_ptr_nonnull(strstr(out, "\"heuristic_rank\": "));
	ck_assert_ptr_nonnull(strstr(out, "\"considered\": "));
	free(out);
}
END_TEST

START_TEST(test_text_table_and_heuristic_line)
{
	char *out = written(W_TEXT, 2, 2, 2, 0);
	ck_assert_ptr_nonnull(strstr(out, "searched "));
	ck_assert_ptr_nonnull(strstr(out, " rank    step s"));
	ck_assert_ptr_nonnull(strstr(out, "heuristic choice (smallest tp x pp"));
	ck_assert_ptr_nonnull(strstr(out, "simulated"));
	free(out);
}
END_TEST

static Suite *planner_suite(void)
{
	Suite *s = suite_create("planner");
	TCase *tc = tcase_create("heuristic");
	tcase_add_test(tc, test_heuristic_memory_is_the_seeds_formula);
	tcase_add_loop_test(tc, test_heuristic_smallest_tp_pp_then_larger_tp, 0, N(seed_cases));
	suite_add_tcase(s, tc);
	tc = tcase_create("enumeration");
	tcase_add_test(tc, test_counts_of_a_small_cluster);
	tcase_add_test(tc, test_memory_budget_prunes_at_the_headroom);
	tcase_add_test(tc, test_cap_simulates_the_best_estimates_and_the_heuristic);
	suite_add_tcase(s, tc);
	tc = tcase_create("resize");
	tcase_add_loop_test(tc, test_resize_whole_nodes_or_part_of_one, 0, N(resize_cases));
	suite_add_tcase(s, tc);
	tc = tcase_create("estimate");
	tcase_add_test(tc, test_estimate_closed_forms);
	tcase_add_test(tc, test_plans_keep_the_scenarios_recompute_options);
	tcase_add_test(tc, test_estimate_counts_the_expert_all_to_alls);
	tcase_add_test(tc, test_estimate_folded_expert_all_to_alls);
	tcase_add_test(tc, test_moe_models_search_expert_parallelism);
	suite_add_tcase(s, tc);
	tc = tcase_create("ranking");
	tcase_add_loop_test(tc, test_best_is_never_slower_than_the_heuristic, 0, N(vs_cases));
	tcase_add_test(tc, test_heuristic_over_the_budget_is_not_ranked);
	tcase_add_test(tc, test_threads_do_not_change_the_ranking);
	suite_add_tcase(s, tc);
	tc = tcase_create("written");
	tcase_add_test(tc, test_csv_has_one_row_per_simulated_plan);
	tcase_add_test(tc, test_json_has_plans_and_search);
	tcase_add_test(tc, test_text_table_and_heuristic_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(planner_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
