/*
 * validate.c - defaults, derived values and the checks between fields.
 *
 * Values left open hold a sentinel (0, or -1 for latencies) until
 * validation derives them and records that in cs_scenario.derived; an
 * override reopens them (cs__config_reopen) so they follow the new inputs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

cs_status cs_config_defaults(cs_scenario *sc)
{
	if (!sc)
		return CS_ERR_INPUT;
	memset(sc, 0, sizeof *sc);

	sc->cluster.gpu.gemm_efficiency = 0.8;
	sc->cluster.gpu.attn_efficiency = 0.6;
	sc->cluster.gpu.hbm_efficiency = 0.8;
	sc->cluster.gpu.arch = 90;
	sc->cluster.nodes = 1;
	sc->cluster.gpus_per_node = 8;
	sc->cluster.scale_up.latency_ns = -1;
	sc->cluster.scale_out.latency_ns = -1;
	sc->cluster.pcie.latency_ns = -1;
	sc->cluster.scale_out_kind = CS_NET_IB;
	sc->cluster.leaf_gpus = 256;
	sc->cluster.leaf_oversubscription = 1.0;
	sc->cluster.pod_gpus = 0;
	sc->cluster.pod_oversubscription = 1.0;
	sc->cluster.switch_latency_ns = 1000;
	sc->cluster.torus_wrap = true;
	sc->cluster.ici.latency_ns = 1000;

	sc->model.arch = CS_ARCH_LLAMA;

	sc->training.seq_len = 2048;
	sc->training.micro_batch = 1;
	sc->training.precision = CS_PREC_BF16;
	sc->training.grad_dtype = CS_PREC_BF16;
	sc->training.optimizer = CS_OPT_ADAM;
	sc->training.step_edges = true;
	sc->training.grad_clip = true;
	sc->training.fp8.amax = CS_AMAX_REDUCED;
	sc->training.fp8.amax_history = 1024;
	sc->training.fp8.weight_cache = true;
	sc->training.fp8.comm = true;

	sc->parallel.tp = sc->parallel.pp = sc->parallel.cp = sc->parallel.ep = 1;
	for (int a = 0; a < CS_AXIS_COUNT; a++)
		sc->parallel.order[a] = a; /* tp, cp, ep, pp, dp */
	sc->parallel.schedule = CS_SCHED_1F1B;
	sc->parallel.sharding = CS_SHARD_NONE;
	sc->parallel.bucket_bytes = 25.0 * 1024 * 1024;
	sc->parallel.first_bucket_bytes = 1.0 * 1024 * 1024;
	sc->parallel.overlap_grad_reduce = true;
	sc->parallel.overlap_param_gather = true;
	sc->parallel.backward_prefetch = CS_PREFETCH_PRE;
	sc->parallel.max_inflight_gathers = 2;
	sc->parallel.recompute = CS_RECOMPUTE_NONE;
	sc->parallel.recompute_method = CS_RECOMPUTE_UNIFORM;
	sc->parallel.recompute_layers = 1;
	sc->parallel.recompute_modules = CS_RCM_CORE_ATTN;
	sc->parallel.flash_attention = true;
	sc->parallel.cp_kind = CS_CP_ALLGATHER;
	sc->parallel.expert_imbalance = 1.0;
	sc->parallel.moe_routing_skew = 1.0;

	cs_reliability_spec *rl = &sc->reliability;
	for (int c = 0; c < CS_FAIL_CLASSES; c++)
		rl->rate[c] = -1;
	rl->planned_per_day = -1;
	rl->weibull_shape = 1;
	rl->node_write_bw = 25e9;
	rl->storage_bw = 2e12;
	rl->snapshot_bw = 25e9;
	rl->restart_ns = INT64_C(600000000000);
	rl->repair_ns = INT64_C(7200000000000);

	sc->coll.algorithm = CS_ALGO_AUTO;
	sc->coll.protocol = CS_PROTO_AUTO;
	sc->coll.fidelity = CS_FIDELITY_ANALYTIC;
	sc->coll.contention = 1.0;
	sc->coll.qps = 1;
	sc->training.doc_sigma = 1.0;

	sc->fleet.spread = sc->fleet.slow_machines = sc->fleet.slow_factor = -1;
	sc->fleet.diurnal = -1;
	sc->fleet.gc_pause_ns = sc->fleet.gc_interval = -1;
	sc->fleet.gc_sync = -1;

	sc->sim.steps = 1;
	sc->sim.threads = 0; /* auto */
	sc->sim.seed = 1;
	return CS_OK;
}

void cs__config_reopen(cs_scenario *sc)
{
	unsigned d = sc->derived;

	if (d & CS_DERIVED_DP)
		sc->parallel.dp = 0;
	if (d & CS_DERIVED_GLOBAL_BATCH)
		sc->training.global_batch = 0;
	if (d & CS_DERIVED_DOMAIN)
		sc->cluster.scale_up_domain = 0;
	if (d & CS_DERIVED_VSTAGES)
		sc->parallel.virtual_stages = 0;
	if (d & CS_DERIVED_SCALE_UP_BW)
		sc->cluster.scale_up.bandwidth = 0;
	if (d & CS_DERIVED_SCALE_UP_LAT)
		sc->cluster.scale_up.latency_ns = -1;
	if (d & CS_DERIVED_SCALE_OUT_BW)
		sc->cluster.scale_out.bandwidth = 0;
	if (d & CS_DERIVED_SCALE_OUT_LAT)
		sc->cluster.scale_out.latency_ns = -1;
	if (d & CS_DERIVED_NICS)
		sc->cluster.nics_per_node = 0;
	if (d & CS_DERIVED_PCIE_BW)
		sc->cluster.pcie.bandwidth = 0;
	if (d & CS_DERIVED_PCIE_LAT)
		sc->cluster.pcie.latency_ns = -1;
	if (d & CS_DERIVED_ICI_BW)
		sc->cluster.ici.bandwidth = 0;
	if (d & CS_DERIVED_KV_HEADS)
		sc->model.kv_heads = 0;
	if (d & CS_DERIVED_MAX_POS)
		sc->model.max_positions = 0;
	if (d & CS_DERIVED_EXPERT_FFN)
		sc->model.expert_ffn = 0;
	sc->derived = 0;
}

/* ---- deriving ------------------------------------------------------------ */

/* "16x16x12" into cluster.torus_dim[]; a torus needs a shape and a link
 * bandwidth, and its pods must tile the chips. */
static cs_status derive_torus(cs__checker *c)
{
	cs_cluster_spec *cl = &c->sc->cluster;
	static const char *const torus_keys[] = { "cluster.torus.shape", "cluster.torus.wrap",
						  "cluster.torus.bandwidth", "cluster.torus.latency" };
	cl->torus_dims = 0;
	if (cl->topology == CS_TOPO_TORUS && cl->routing == CS_ROUTING_ECMP)
		return cs__config_fail(
			c, "cluster.fabric.routing", "cluster.topology",
			"'cluster.fabric.routing: "
			"ecmp' needs a fat tree: a torus has no equal-cost uplinks to hash onto");
	if (cl->topology != CS_TOPO_TORUS) {
		for (size_t i = 0; i < sizeof torus_keys / sizeof *torus_keys; i++)
			if (cs__config_placed(c, torus_keys[i]))
				return cs__config_fail(c, torus_keys[i], NULL,
						       "'%s' needs 'cluster.topology: torus'", torus_keys[i]);
		return CS_OK;
	}
	const char *p = cl->torus_shape;
	if (*p == '\0')
		return cs__config_fail(c, "cluster.topology", NULL,
				       "a torus needs 'cluster.torus.shape', such "
				       "as \"16x16x12\"");
	double chips = 1;
	while (*p) {
		char *end;
		long long v = 0;
		if (*p >= '0' && *p <= '9')
			v = strtoll(p, &end, 10);
		else
			end = (char *)p;
		if (end == p || v < 1 || cl->torus_dims == CS_TORUS_MAX_DIMS || (*end != '\0' && *end != 'x'))
			return cs__config_fail(
				c, "cluster.torus.shape", NULL,
				"'cluster.torus.shape' \"%s\" is not "
				"one to three positive sizes joined by 'x', such as \"16x16x12\"",
				cl->torus_shape);
		cl->torus_dim[cl->torus_dims++] = v;
		chips *= (double)v;
		p = *end == 'x' ? end + 1 : end;
		if (*end == 'x' && *p == '\0')
			return cs__config_fail(c, "cluster.torus.shape", NULL,
					       "'cluster.torus.shape' \"%s\" ends "
					       "with 'x'",
					       cl->torus_shape);
	}
	double gpus = (double)cl->nodes * (double)cl->gpus_per_node;
	if (chips > gpus || (int64_t)gpus % (int64_t)chips != 0)
		return cs__config_fail(c, "cluster.torus.shape", "cluster.nodes",
				       "the torus %s holds %.0f chips, "
				       "which does not divide the cluster's %.0f (nodes x gpus_per_node)",
				       cl->torus_shape, chips, gpus);
	if (!(cl->ici.bandwidth > 0))
		return cs__config_fail(c, "cluster.topology", NULL,
				       "a torus needs 'cluster.torus.bandwidth', "
				       "one link's bandwidth per direction ('%s' has no chip-to-chip links)",
				       cl->gpu.name);
	if (cl->gpu.ici_links > 0 && 2 * cl->torus_dims > cl->gpu.ici_links)
		return cs__config_fail(c, "cluster.torus.shape", NULL,
				       "a %d-D torus needs %d links per chip; "
				       "'%s' has %d",
				       cl->torus_dims, 2 * cl->torus_dims, cl->gpu.name, cl->gpu.ici_links);
	int route = 2;
	for (int d = 0; d < cl->torus_dims; d++)
		route += (int)(cl->torus_wrap ? cl->torus_dim[d] / 2 : cl->torus_dim[d] - 1);
	if (c->sc->coll.fidelity == CS_FIDELITY_FLOW && route > CS_MAX_ROUTE_LINKS)
		return cs__config_fail(c, "cluster.torus.shape", "collectives.fidelity",
				       "the flow fidelity "
				       "follows routes of at most %d links; the %s %s has routes of %d (use "
				       "'collectives.fidelity: analytic')",
				       CS_MAX_ROUTE_LINKS, cl->torus_wrap ? "torus" : "mesh", cl->torus_shape,
				       route);
	if ((int64_t)chips % cl->gpus_per_node != 0)
		return cs__config_fail(c, "cluster.torus.shape", "cluster.gpus_per_node",
				       "the torus %s (%.0f "
				       "chips) must hold whole hosts of %d chips",
				       cl->torus_shape, chips, cl->gpus_per_node);
	return CS_OK;
}

static cs_status derive_hw(cs__checker *c)
{
	cs_scenario *sc = c->sc;
	cs_gpu_spec *g = &sc->cluster.gpu;
	cs_cluster_spec *cl = &sc->cluster, std = *cl;

	if (g->name[0] == '\0') {
		if (g->peak_bf16 == 0 && g->hbm_bytes == 0 && g->hbm_bandwidth == 0 && g->sms == 0)
			return cs__config_fail(c, "cluster.gpu.preset", NULL,
					       "'cluster.gpu' is required: a preset "
					       "such as 'h100-sxm-80g', or a mapping with peak_bf16, hbm, "
					       "hbm_bandwidth and sms");
		if (g->peak_bf16 == 0)
			return cs__config_fail(c, NULL, NULL,
					       "'cluster.gpu.peak_bf16' is required without a preset");
		if (g->hbm_bytes == 0)
			return cs__config_fail(c, NULL, NULL,
					       "'cluster.gpu.hbm' is required without a preset");
		if (g->hbm_bandwidth == 0)
			return cs__config_fail(c, NULL, NULL,
					       "'cluster.gpu.hbm_bandwidth' is required without a preset");
		if (g->sms == 0)
			return cs__config_fail(c, NULL, NULL,
					       "'cluster.gpu.sms' is required without a preset");
		snprintf(g->name, sizeof g->name, "custom");
	}
	cs_preset_server_defaults(g, &std);
#define FILL(cond, dst, src, bit)           \
	do {                                \
		if (cond) {                 \
			dst = src;          \
			sc->derived |= bit; \
		}                           \
	} while (0)
	FILL(cl->scale_up.bandwidth == 0, cl->scale_up.bandwidth, std.scale_up.bandwidth,
	     CS_DERIVED_SCALE_UP_BW);
	FILL(cl->scale_up.latency_ns < 0, cl->scale_up.latency_ns, std.scale_up.latency_ns,
	     CS_DERIVED_SCALE_UP_LAT);
	FILL(cl->scale_out.bandwidth == 0, cl->scale_out.bandwidth, std.scale_out.bandwidth,
	     CS_DERIVED_SCALE_OUT_BW);
	FILL(cl->scale_out.latency_ns < 0, cl->scale_out.latency_ns, std.scale_out.latency_ns,
	     CS_DERIVED_SCALE_OUT_LAT);
	FILL(cl->pcie.bandwidth == 0, cl->pcie.bandwidth, std.pcie.bandwidth, CS_DERIVED_PCIE_BW);
	FILL(cl->pcie.latency_ns < 0, cl->pcie.latency_ns, std.pcie.latency_ns, CS_DERIVED_PCIE_LAT);
	/* a rack-scale GPU's NVLink domain is the rack's, or the cluster's GPUs
	 * where they are fewer (its tray as the server: set_preset in set.c) */
	bool rack = std.scale_up_domain > std.gpus_per_node;
	int64_t gpus = cl->nodes * cl->gpus_per_node;
	int domain =
		rack ? (int)(gpus < std.scale_up_domain ? gpus : std.scale_up_domain) : cl->gpus_per_node;
	FILL(cl->scale_up_domain == 0, cl->scale_up_domain, domain, CS_DERIVED_DOMAIN);
	FILL(cl->nics_per_node == 0, cl->nics_per_node, cl->gpus_per_node, CS_DERIVED_NICS);
	FILL(cl->ici.bandwidth == 0 && cl->topology == CS_TOPO_TORUS, cl->ici.bandwidth, std.ici.bandwidth,
	     CS_DERIVED_ICI_BW);
	return derive_torus(c);
}

static cs_status derive_model(cs__checker *c)
{
	cs_scenario *sc = c->sc;
	cs_model_spec *m = &sc->model;
	static const char *const shape[] = { "layers", "hidden", "heads", "ffn", "vocab" };
	const int64_t vals[] = { m->layers, m->hidden, m->heads, m->ffn, m->vocab };

	if (m->name[0] == '\0') {
		bool any = false;
		for (size_t i = 0; i < 5; i++)
			any = any || vals[i] != 0;
		if (!any)
			return cs__config_fail(c, "model.preset", NULL,
					       "'model' is required: a preset such as "
					       "'llama3-8b', or layers, hidden, heads, ffn and vocab");
		for (size_t i = 0; i < 5; i++)
			if (vals[i] == 0)
				return cs__config_fail(c, NULL, NULL,
						       "'model.%s' is required without 'model.preset'",
						       shape[i]);
		snprintf(m->name, sizeof m->name, "custom");
	}
	FILL(m->kv_heads == 0, m->kv_heads, m->heads, CS_DERIVED_KV_HEADS);
	FILL(m->max_positions == 0, m->max_positions, sc->training.seq_len, CS_DERIVED_MAX_POS);
	FILL(m->expert_ffn == 0, m->expert_ffn, m->ffn, CS_DERIVED_EXPERT_FFN);
	return CS_OK;
}
#undef FILL

/* ---- checks -------------------------------------------------------------- */

static cs_status check_cluster(cs__checker *c)
{
	const cs_cluster_spec *cl = &c->sc->cluster;
	int64_t gpus = cl->nodes * cl->gpus_per_node, per = cl->gpus_per_node;
	int64_t dom = cl->scale_up_domain;

	if (gpus > CS_CONFIG_MAX_GPUS)
		return cs__config_fail(c, "cluster.nodes", "cluster.gpus_per_node",
				       "the cluster has %lld GPUs, "
				       "more than the limit of %d",
				       (long long)gpus, CS_CONFIG_MAX_GPUS);
	/* a rack's domain, derived: what does not fit it says so in its own terms */
	if ((c->sc->derived & CS_DERIVED_DOMAIN) && dom > per && dom % per != 0)
		return cs__config_fail(c, "cluster.gpus_per_node", NULL,
				       "'cluster.gpus_per_node' (%lld) must divide the %lld-GPU NVLink "
				       "domain of '%s', or set 'cluster.scale_up.domain'",
				       (long long)per, (long long)dom, cl->gpu.name);
	if ((c->sc->derived & CS_DERIVED_DOMAIN) && dom > per && gpus % dom != 0)
		return cs__config_fail(
			c, "cluster.nodes", NULL,
			"the %lld GPUs (%lld nodes of %lld) fill no whole %lld-GPU NVLink "
			"domains of '%s': use at most %lld nodes or a multiple of them, or set "
			"'cluster.scale_up.domain'",
			(long long)gpus, (long long)cl->nodes, (long long)per, (long long)dom, cl->gpu.name,
			(long long)(dom / per));
	if (per % dom != 0 && (dom % per != 0 || gpus % dom != 0))
		return cs__config_fail(
			c, "cluster.scale_up.domain", NULL,
			"'cluster.scale_up.domain' (%lld) must "
			"divide gpus_per_node (%lld) or be a multiple of it dividing the %lld GPUs",
			(long long)dom, (long long)per, (long long)gpus);
	if (cl->leaf_gpus % per != 0)
		return cs__config_fail(c, "cluster.fabric.leaf_gpus", NULL,
				       "'cluster.fabric.leaf_gpus' (%lld) "
				       "must be a multiple of gpus_per_node (%lld)",
				       (long long)cl->leaf_gpus, (long long)per);
	if (cl->pod_gpus % per != 0)
		return cs__config_fail(c, "cluster.fabric.pod_gpus", NULL,
				       "'cluster.fabric.pod_gpus' (%lld) "
				       "must be a multiple of gpus_per_node (%lld)",
				       (long long)cl->pod_gpus, (long long)per);
	return CS_OK;
}

static cs_status check_plan(cs__checker *c)
{
	cs_scenario *sc = c->sc;
	cs_parallel_spec *p = &sc->parallel;
	const cs_model_spec *m = &sc->model;
	int64_t gpus = cs_scenario_gpus(sc);
	double product;

	if (p->tp_overlap && p->tp_overlap_model == CS_TPO_USERBUFFERS && p->tp > 1 && !p->sequence_parallel)
		return cs__config_fail(
			c, "parallelism.tp_overlap", "parallelism.sequence_parallel",
			"'parallelism.tp_overlap' with userbuffers needs "
			"'parallelism.sequence_parallel' (Megatron requires it); "
			"'parallelism.tp_overlap_model: nccl' overlaps NCCL's all-reduce instead");
	if (p->dp == 0) {
		double mp = (double)p->tp * (double)p->pp * (double)p->cp; /* may pass int64 */
		if (mp > (double)gpus || gpus % (int64_t)mp != 0)
			return cs__config_fail(c, "parallelism.tp", "parallelism.pp",
					       "tp x pp x cp = %.0f does not "
					       "divide the %lld GPUs",
					       mp, (long long)gpus);
		p->dp = gpus / (int64_t)mp;
		sc->derived |= CS_DERIVED_DP;
	}
	product = (double)p->tp * (double)p->pp * (double)p->dp * (double)p->cp;
	if (product != (double)gpus)
		return cs__config_fail(c, "parallelism.dp", "parallelism.tp",
				       "tp x pp x dp x cp = %.0f but the "
				       "cluster has %lld GPUs",
				       product, (long long)gpus);
	if (cs_parallel_folded(p)) {
		cs_status rc = cs__config_check_expert_fold(c);
		if (rc != CS_OK)
			return rc;
	} else if (p->dp % p->ep != 0) {
		return cs__config_fail(c, "parallelism.ep", NULL,
				       "'parallelism.ep' (%lld) must divide dp (%lld)", (long long)p->ep,
				       (long long)p->dp);
	}
	if (p->ep > 1 && (m->experts == 0 || m->experts % p->ep != 0))
		return cs__config_fail(c, "parallelism.ep", NULL,
				       "'parallelism.ep' (%lld) must divide the "
				       "model's %lld experts",
				       (long long)p->ep, (long long)m->experts);
	if (p->moe_dispatcher == CS_MOE_DEEPEP && m->experts == 0)
		return cs__config_fail(c, "parallelism.moe_dispatcher", NULL,
				       "'parallelism.moe_dispatcher: deepep' needs a model with experts");
	if (p->moe_node_limit > 0 && p->moe_dispatcher != CS_MOE_DEEPEP)
		return cs__config_fail(
			c, "parallelism.moe_node_limit", NULL,
			"'parallelism.moe_node_limit' needs 'parallelism.moe_dispatcher: deepep' "
			"(an all-to-all sends every copy whatever node it lies on)");
	if (p->moe_capacity > 0 && m->experts == 0)
		return cs__config_fail(c, "parallelism.moe_capacity_factor", NULL,
				       "'parallelism.moe_capacity_factor' needs a model with experts");
	if (p->moe_capacity > 0 && p->moe_capacity < 1.0 / (double)(m->top_k > 0 ? m->top_k : 1))
		return cs__config_fail(c, "parallelism.moe_capacity_factor", "model.top_k",
				       "'parallelism.moe_capacity_factor' (%g) leaves an expert less than "
				       "one of a token's %lld copies in %lld",
				       p->moe_capacity, (long long)m->top_k, (long long)m->top_k);
	if (p->moe_capacity > 0 && p->moe_dispatcher == CS_MOE_DEEPEP)
		return cs__config_fail(c, "parallelism.moe_capacity_factor", "parallelism.moe_dispatcher",
				       "'parallelism.moe_capacity_factor' with the deepep dispatcher: "
				       "DeepEP's dispatch is dropless (Megatron-LM's flex dispatcher)");
	if (p->moe_routing != CS_ROUTE_BALANCED && m->experts == 0)
		return cs__config_fail(c, "parallelism.moe_routing", NULL,
				       "'parallelism.moe_routing' needs a model with experts");
	if (p->moe_routing != CS_ROUTE_BALANCED && p->expert_imbalance != 1.0)
		return cs__config_fail(
			c, "parallelism.expert_imbalance", "parallelism.moe_routing",
			"'parallelism.expert_imbalance' with 'parallelism.moe_routing' %s: the "
			"routing gives the busiest rank's load; set one or the other",
			p->moe_routing == CS_ROUTE_ZIPF ? "zipf" : "uniform");
	if (p->moe_routing != CS_ROUTE_ZIPF && p->moe_routing_skew != 1.0)
		return cs__config_fail(c, "parallelism.moe_routing_skew", "parallelism.moe_routing",
				       "'parallelism.moe_routing_skew' applies to 'parallelism.moe_routing: "
				       "zipf' only");
	if (p->moe_router_fusion && m->experts == 0)
		return cs__config_fail(c, "parallelism.moe_router_fusion", NULL,
				       "'parallelism.moe_router_fusion' needs a model with experts");
	if (p->moe_permute_fusion && m->experts == 0)
		return cs__config_fail(c, "parallelism.moe_permute_fusion", NULL,
				       "'parallelism.moe_permute_fusion' needs a model with experts");
	if (p->moe_a2a_overlap && (m->experts == 0 || p->ep <= 1))
		return cs__config_fail(
			c, "parallelism.moe_a2a_overlap", NULL,
			"'parallelism.moe_a2a_overlap' needs experts over 'parallelism.ep' > 1 "
			"(the all-to-alls it hides)");
	if (p->moe_a2a_overlap && p->pp > 1 && p->schedule != CS_SCHED_INTERLEAVED)
		return cs__config_fail(c, "parallelism.moe_a2a_overlap", "parallelism.pipeline.schedule",
				       "'parallelism.moe_a2a_overlap' with 'parallelism.pp' > 1 needs the "
				       "interleaved schedule (Megatron-Core pairs its chunks)");
	if (p->moe_a2a_overlap && p->recompute == CS_RECOMPUTE_FULL)
		return cs__config_fail(c, "parallelism.moe_a2a_overlap", "parallelism.recompute",
				       "'parallelism.moe_a2a_overlap' with full recomputation (Megatron-Core "
				       "refuses it)");
	if (p->moe_pad && !(p->moe_capacity > 0))
		return cs__config_fail(c, "parallelism.moe_pad_to_capacity", NULL,
				       "'parallelism.moe_pad_to_capacity' needs "
				       "'parallelism.moe_capacity_factor' (the capacity to pad to)");
	if (p->moe_node_limit > 0) {
		int64_t per, domains;
		cs_parallel_ep_span(p, &sc->cluster, &per, &domains);
		if (p->moe_node_limit > domains)
			return cs__config_fail(
				c, "parallelism.moe_node_limit", "parallelism.ep",
				"'parallelism.moe_node_limit' (%lld) exceeds the %lld nodes an "
				"expert-parallel group of %lld spans",
				(long long)p->moe_node_limit, (long long)domains, (long long)p->ep);
	}
	if (m->heads % p->tp != 0)
		return cs__config_fail(c, "parallelism.tp", NULL,
				       "'parallelism.tp' (%lld) must divide the "
				       "model's %lld heads",
				       (long long)p->tp, (long long)m->heads);
	if (m->kv_heads % p->tp != 0 && p->tp % m->kv_heads != 0)
		return cs__config_fail(c, "parallelism.tp", NULL,
				       "'parallelism.tp' (%lld) and the model's %lld "
				       "kv heads must divide one another",
				       (long long)p->tp, (long long)m->kv_heads);
	if (sc->training.seq_len % p->cp != 0)
		return cs__config_fail(c, "parallelism.cp", NULL,
				       "'parallelism.cp' (%lld) must divide seq_len "
				       "(%lld)",
				       (long long)p->cp, (long long)sc->training.seq_len);

	if (p->virtual_stages == 0) {
		bool two = p->schedule == CS_SCHED_INTERLEAVED || p->schedule == CS_SCHED_ZB_V;
		p->virtual_stages = two ? 2 : 1;
		sc->derived |= CS_DERIVED_VSTAGES;
	}
	if (p->schedule == CS_SCHED_INTERLEAVED && (p->virtual_stages < 2 || p->pp < 2))
		return cs__config_fail(
			c, "parallelism.pipeline.virtual_stages", "parallelism.pipeline.schedule",
			"the interleaved schedule needs virtual_stages >= 2 and pp > 1 (got %lld "
			"and %lld)",
			(long long)p->virtual_stages, (long long)p->pp);
	if (p->schedule == CS_SCHED_ZB_V && p->virtual_stages != 2)
		return cs__config_fail(c, "parallelism.pipeline.virtual_stages",
				       "parallelism.pipeline.schedule",
				       "the zb-v schedule uses exactly 2 virtual stages (got %lld)",
				       (long long)p->virtual_stages);
	if (p->schedule != CS_SCHED_INTERLEAVED && p->schedule != CS_SCHED_ZB_V && p->virtual_stages != 1)
		return cs__config_fail(c, "parallelism.pipeline.virtual_stages", NULL,
				       "'parallelism.pipeline."
				       "virtual_stages' applies to the interleaved and zb-v schedules only");
	static const char *const counted[] = { "", " plus the embedding", " plus the loss",
					       " plus the embedding and the loss" };
	int64_t units = m->layers + p->account_embedding + p->account_loss;
	if ((double)p->pp * (double)p->virtual_stages > (double)units)
		return cs__config_fail(c, "parallelism.pp", NULL,
				       "pp x virtual_stages = %lld exceeds the model's "
				       "%lld layers%s",
				       (long long)(p->pp * p->virtual_stages), (long long)m->layers,
				       counted[p->account_embedding + 2 * p->account_loss]);

	if (sc->training.global_batch == 0) {
		sc->training.global_batch = p->dp * sc->training.micro_batch;
		sc->derived |= CS_DERIVED_GLOBAL_BATCH;
	}
	if (sc->training.global_batch % (p->dp * sc->training.micro_batch) != 0)
		return cs__config_fail(c, "training.global_batch", "training.micro_batch",
				       "'training."
				       "global_batch' (%lld) must be divisible by dp x micro_batch = %lld",
				       (long long)sc->training.global_batch,
				       (long long)(p->dp * sc->training.micro_batch));
	if (cs_scenario_micro_batches(sc) > CS_CONFIG_MAX_MICRO_BATCHES)
		return cs__config_fail(c, "training.global_batch", "training.micro_batch",
				       "%lld micro-batches "
				       "per step (global_batch / (dp x micro_batch)) exceed the limit of %d",
				       (long long)cs_scenario_micro_batches(sc), CS_CONFIG_MAX_MICRO_BATCHES);
	if (p->schedule == CS_SCHED_INTERLEAVED && cs_scenario_micro_batches(sc) % p->pp != 0)
		return cs__config_fail(c, "training.global_batch", "parallelism.pipeline.schedule",
				       "the "
				       "interleaved schedule needs the micro-batches per step (%lld) to be a "
				       "multiple of pp (%lld)",
				       (long long)cs_scenario_micro_batches(sc), (long long)p->pp);
	return CS_OK;
}

static cs_status check_perturbations(cs__checker *c)
{
	const cs_scenario *sc = c->sc;
	const char *file = sc->path[0] ? sc->path : "scenario";

	for (int i = 0; i < sc->n_perturbations; i++) {
		const cs_perturbation *pt = &sc->perturbations[i];
		int64_t limit;
		const char *what;
		switch (pt->target) {
		case CS_PERT_GPU:
		case CS_PERT_LINK:
			limit = cs_scenario_gpus(sc);
			what = "gpu";
			break;
		case CS_PERT_RANKS:
			limit = cs_scenario_gpus(sc);
			what = "rank";
			break;
		case CS_PERT_NODE:
			limit = sc->cluster.nodes;
			what = "node";
			break;
		default: continue;
		}
		if (pt->first < 0 || pt->last >= limit || pt->first > pt->last) {
			if (c->diag)
				snprintf(c->diag->msg, sizeof c->diag->msg,
					 "%.400s:%d:%d: straggler %s %lld "
					 "is out of range (0 to %lld)",
					 file, pt->line, pt->col, what,
					 (long long)(pt->last >= limit ? pt->last : pt->first),
					 (long long)(limit - 1));
			return CS_ERR_INPUT;
		}
	}
	return CS_OK;
}

const char *cs_config_fold_blocker(const cs_scenario *sc, const char **key)
{
	const char *k = NULL, *why = NULL;
	cs_fleet_spec fl;
	cs_fleet_resolve(&sc->fleet, &fl);
	if (sc->training.doc_mean > 0) {
		k = "training.documents.mean";
		why = "data-parallel replicas draw different documents";
	} else if (sc->cluster.gpu_variation > 0) {
		k = "cluster.gpu_variation";
		why = "every GPU draws its own compute factor";
	} else if (sc->coll.fidelity == CS_FIDELITY_FLOW) {
		k = "collectives.fidelity";
		why = "flow fidelity needs every rank's traffic";
	} else if (fl.spread > 0) {
		k = "fleet.spread";
		why = "the fleet's spread gives every GPU its own compute factor";
	}
	if (key)
		*key = k;
	return why;
}

/* Folding simulates one rank per pipeline stage, and whole the replicas a
 * perturbation touches: nothing else may tell ranks of a stage apart. A
 * folded run leaves the fleet's per-GPU effects out; auto runs every rank
 * where they apply. */
static cs_status check_fold(cs__checker *c)
{
	int64_t gpus = cs_scenario_gpus(c->sc);
	const char *key = NULL, *why = cs_config_fold_blocker(c->sc, &key);
	if (c->sc->sim.fold == CS_FOLD_OFF && gpus > CS_CONFIG_MAX_RANKS)
		return cs__config_fail(c, "cluster.nodes", "simulate.fold",
				       "simulating %lld ranks one by one "
				       "exceeds the limit of %d ranks; fold symmetric ranks with "
				       "'simulate.fold: auto' or 'true'",
				       (long long)gpus, CS_CONFIG_MAX_RANKS);
	if (c->sc->sim.fold == CS_FOLD_AUTO && gpus > CS_CONFIG_MAX_RANKS && why)
		return cs__config_fail(c, "cluster.nodes", key,
				       "simulating %lld ranks one by one "
				       "exceeds the limit of %d ranks, and they cannot fold: %s",
				       (long long)gpus, CS_CONFIG_MAX_RANKS, why);
	if (c->sc->sim.fold != CS_FOLD_ON)
		return CS_OK;
	if (c->sc->training.doc_mean > 0)
		return cs__config_fail(
			c, "simulate.fold", "training.documents.mean",
			"'simulate.fold' cannot be "
			"combined with 'training.documents': data-parallel replicas draw different "
			"documents");
	if (c->sc->cluster.gpu_variation > 0)
		return cs__config_fail(
			c, "simulate.fold", "cluster.gpu_variation",
			"'simulate.fold' cannot be "
			"combined with 'cluster.gpu_variation': folding simulates one rank per "
			"pipeline stage and would fold the GPUs' differences away");
	if (c->sc->coll.fidelity == CS_FIDELITY_FLOW)
		return cs__config_fail(
			c, "simulate.fold", "collectives.fidelity",
			"'simulate.fold' cannot be "
			"combined with 'collectives.fidelity: flow': contention needs every rank's "
			"traffic");
	return CS_OK;
}

/* Recomputation as Megatron-LM (granularity, method, layers, modules) and
 * torchtitan (mode, the op or layer policy) configure it: each option only
 * with the granularity it refines, layers a model chunk holds, modules the
 * model has. */
static cs_status check_recompute(cs__checker *c)
{
	const cs_parallel_spec *p = &c->sc->parallel;
	const cs_model_spec *m = &c->sc->model;
	bool full = p->recompute == CS_RECOMPUTE_FULL, sel = p->recompute == CS_RECOMPUTE_SELECTIVE;
	if (!full && (p->recompute_method != CS_RECOMPUTE_UNIFORM || p->recompute_layers != 1))
		return cs__config_fail(
			c,
			p->recompute_method != CS_RECOMPUTE_UNIFORM ? "parallelism.recompute_method"
								    : "parallelism.recompute_layers",
			"parallelism.recompute", "'%s' needs 'parallelism.recompute: full' (got '%s')",
			p->recompute_method != CS_RECOMPUTE_UNIFORM ? "parallelism.recompute_method"
								    : "parallelism.recompute_layers",
			cs_recompute_name(p->recompute));
	if (!sel && (p->recompute_modules != CS_RCM_CORE_ATTN || p->recompute_every != 0))
		return cs__config_fail(c,
				       p->recompute_every != 0 ? "parallelism.recompute_every"
							       : "parallelism.recompute_modules",
				       "parallelism.recompute",
				       "'%s' needs 'parallelism.recompute: selective' (got '%s')",
				       p->recompute_every != 0 ? "parallelism.recompute_every"
							       : "parallelism.recompute_modules",
				       cs_recompute_name(p->recompute));
	int64_t chunks = p->pp * p->virtual_stages;
	int64_t per = (m->layers + chunks - 1) / chunks;
	if (full && p->recompute_layers > per)
		return cs__config_fail(
			c, "parallelism.recompute_layers", "parallelism.pp",
			"'parallelism.recompute_layers' (%lld) exceeds the %lld layers of a "
			"pipeline stage's model chunk (%lld layers over pp x virtual_stages = %lld)",
			(long long)p->recompute_layers, (long long)per, (long long)m->layers,
			(long long)chunks);
	if (!sel)
		return CS_OK;
	unsigned mods = p->recompute_modules;
	const char *mk = "parallelism.recompute_modules";
	if (p->recompute_every > 0 && cs__config_placed(c, mk))
		return cs__config_fail(
			c, "parallelism.recompute_every", mk,
			"'parallelism.recompute_every' and 'parallelism.recompute_modules' are two "
			"policies; give one");
	if (p->recompute_every > 0)
		return CS_OK;
	if (mods == 0)
		return cs__config_fail(
			c, mk, NULL,
			"'%s' is empty: nothing would be recomputed ('parallelism.recompute: none' "
			"says so)",
			mk);
	if ((mods & CS_RCM_OP) && mods != CS_RCM_OP)
		return cs__config_fail(
			c, mk, NULL,
			"'op' (torchtitan's op policy) stands alone in '%s', not beside Megatron's "
			"modules",
			mk);
	if ((mods & CS_RCM_OP) && (m->experts > 0 || m->kv_lora_rank > 0 || m->parallel_block))
		return cs__config_fail(c, mk, "model.experts",
				       "'op' in '%s' is modelled for sequential dense layers with multi-head "
				       "attention only (the model has %s)",
				       mk,
				       m->experts > 0        ? "experts"
				       : m->kv_lora_rank > 0 ? "latent attention"
							     : "a parallel block");
	if ((mods & (CS_RCM_LAYERNORM | CS_RCM_MOE_ACT)) && cs_prec_is_fp8(c->sc->training.precision))
		return cs__config_fail(
			c, mk, "training.precision",
			"'%s' in '%s' under the fp8 recipe: Megatron-LM refuses it with delayed "
			"scaling (the recipe modelled)",
			(mods & CS_RCM_LAYERNORM) ? "layernorm" : "moe_act", mk);
	if ((mods & CS_RCM_MLA_UP) && m->kv_lora_rank == 0)
		return cs__config_fail(
			c, mk, NULL, "'mla_up_proj' in '%s' needs latent attention (model.kv_lora_rank)", mk);
	unsigned moe_mods = CS_RCM_MOE_ACT | CS_RCM_MOE | CS_RCM_SHARED;
	unsigned first = mods & moe_mods;
	first &= ~first + 1u; /* the lowest such bit */
	if (first && (m->experts == 0 || m->dense_layers >= m->layers))
		return cs__config_fail(c, mk, NULL, "'%s' in '%s' needs a model with MoE layers",
				       cs_recompute_module_name(first), mk);
	if ((mods & CS_RCM_SHARED) && m->shared_experts == 0)
		return cs__config_fail(c, mk, NULL,
				       "'shared_experts' in '%s' needs a model with shared experts", mk);
	return CS_OK;
}

cs_status cs__config_check(cs_scenario *sc, cs_diag *diag)
{
	cs__checker c = { sc, diag };
	cs_status st;

	if ((st = derive_hw(&c)) != CS_OK || (st = derive_model(&c)) != CS_OK ||
	    (st = check_cluster(&c)) != CS_OK || (st = cs__config_check_model(&c)) != CS_OK ||
	    (st = check_plan(&c)) != CS_OK || (st = check_recompute(&c)) != CS_OK ||
	    (st = check_perturbations(&c)) != CS_OK || (st = check_fold(&c)) != CS_OK)
		return st;
	return CS_OK;
}

cs_status cs_config_validate(cs_scenario *sc, cs_diag *diag)
{
	if (!sc)
		return CS_ERR_INPUT;
	return cs__config_check(sc, diag);
}
