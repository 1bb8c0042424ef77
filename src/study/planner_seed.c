/*
 * planner_seed.c - the planner's pieces that are pure functions of a
 * scenario: resizing the cluster, writing a plan into a scenario, the seed's
 * heuristic (choose_parallelism) and the analytic estimate that orders the
 * survivors before simulation.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "config/config.h"
#include "model/compute.h"
#include "model/memory.h"
#include "model/model.h"
#include "study/planner.h"

static const char *const bound_names[] = { "compute", "tp", "dp", "pp", "cp", "ep", "bubble" };

const char *cs_plan_bound_name(int bound)
{
	return bound >= 0 && bound <= CS_PLAN_BOUND_BUBBLE ? bound_names[bound] : "?";
}
static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

cs_status cs_plan_resize(cs_scenario *sc, int64_t gpus, cs_diag *diag)
{
	cs_cluster_spec *c = &sc->cluster;
	int64_t per = c->gpus_per_node;

	if (gpus < 1 || gpus > CS_CONFIG_MAX_GPUS) {
		snprintf(diag->msg, sizeof diag->msg, "'--gpus' (%lld) must be between 1 and %d",
			 (long long)gpus, CS_CONFIG_MAX_GPUS);
		return CS_ERR_INPUT;
	}
	if (gpus % per == 0) {
		c->nodes = gpus / per;
	} else if (gpus < per && per % gpus == 0) {
		c->nodes = 1;
		c->gpus_per_node = (int)gpus;
		if (c->scale_up_domain > gpus)
			c->scale_up_domain = (int)gpus;
		if (c->nics_per_node > gpus)
			c->nics_per_node = (int)gpus;
	} else {
		snprintf(diag->msg, sizeof diag->msg,
			 "'--gpus' (%lld) must be a multiple of the %lld "
			 "GPUs per node, or divide it",
			 (long long)gpus, (long long)per);
		return CS_ERR_INPUT;
	}
	int64_t dom = c->scale_up_domain;
	per = c->gpus_per_node;
	if (per % dom != 0 && gpus % dom != 0) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'--gpus' (%lld) must be a multiple of the "
			 "scale-up domain of %lld GPUs",
			 (long long)gpus, (long long)dom);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

void cs__plan_fill(const cs_scenario *base, const cs_plan *p, cs_scenario *out)
{
	cs_parallel_spec *q;

	*out = *base;
	q = &out->parallel;
	q->tp = p->tp;
	q->pp = p->pp;
	q->dp = p->dp;
	q->cp = p->cp;
	q->ep = p->ep;
	q->etp = p->etp;
	q->sequence_parallel = p->sequence_parallel && p->tp > 1;
	q->virtual_stages = p->vstages;
	q->schedule = p->vstages > 1 ? CS_SCHED_INTERLEAVED : CS_SCHED_1F1B;
	q->sharding = p->sharding;
	if (p->recompute != base->parallel.recompute) {
		/* the refinements are the base's own granularity's: another
		 * granularity takes the frameworks' defaults */
		q->recompute_method = CS_RECOMPUTE_UNIFORM;
		q->recompute_layers = 1;
		q->recompute_modules = CS_RCM_CORE_ATTN;
		q->recompute_every = 0;
	}
	q->recompute = p->recompute;
	out->training.micro_batch = p->micro_batch;
	out->sim.fold = CS_FOLD_ON;
	out->sim.steps = 1;
	out->n_perturbations = 0;
}

cs_status cs_plan_apply(const cs_scenario *base, const cs_plan *p, cs_scenario *out, cs_diag *diag)
{
	cs__plan_fill(base, p, out);
	return cs_config_validate(out, diag);
}

/* ---- the seed's heuristic ----------------------------------------------- */

/* Prefer fitting plans, then fewer model-parallel ranks, then larger tp,
 * then less memory (the seed's _better). */
static bool seed_better(const cs_plan *a, bool afits, const cs_plan *b, bool bfits)
{
	if (afits != bfits)
		return afits;
	if (a->tp * a->pp != b->tp * b->pp)
		return a->tp * a->pp < b->tp * b->pp;
	if (a->tp != b->tp)
		return a->tp > b->tp;
	return a->mem_bytes < b->mem_bytes;
}

void cs_plan_heuristic(const cs_scenario *sc, cs_plan *best, bool *fits)
{
	const cs_model_spec *m = &sc->model;
	int64_t gpus = cs_scenario_gpus(sc), domain = sc->cluster.scale_up_domain;
	double budget = sc->cluster.gpu.hbm_bytes * CS_PLAN_SEED_HEADROOM;
	cs_training_spec t = sc->training;
	bool have = false, best_fits = false;

	/* The seed's formula holds pp micro-batches in flight, whatever the
	 * batch: an unknown micro-batch count gives exactly that. */
	t.global_batch = 0;
	t.micro_batch = 1;
	memset(best, 0, sizeof *best);
	for (int64_t tp = 1; tp <= domain; tp++) {
		if (domain % tp || m->heads % tp)
			continue;
		int64_t rest = gpus / tp; /* the seed's n_gpus // tp */
		for (int64_t pp = 1; pp <= rest; pp++) {
			if (rest % pp || m->layers % pp)
				continue;
			cs_plan c = { 0 };
			c.tp = tp;
			c.pp = pp;
			c.dp = gpus / (tp * pp);
			c.cp = 1;
			c.ep = gcd64(sc->parallel.ep, c.dp > 0 ? c.dp : 1);
			c.etp = 0; /* the experts split over TP, ep inside dp */
			c.vstages = 1;
			c.micro_batch = 1;
			c.sharding = CS_SHARD_ZERO1;
			c.recompute = CS_RECOMPUTE_SELECTIVE;
			c.sequence_parallel = true;
			cs_parallel_spec q = sc->parallel;
			q.tp = c.tp;
			q.pp = c.pp;
			q.dp = c.dp;
			q.cp = 1;
			q.ep = c.ep;
			q.etp = 0;
			q.sequence_parallel = true;
			q.schedule = CS_SCHED_1F1B;
			q.virtual_stages = 1;
			q.sharding = CS_SHARD_ZERO1;
			q.recompute = CS_RECOMPUTE_SELECTIVE;
			/* the paper's layer (34 sbh/t), as the seed's formula */
			double layer =
				cs_mem_activation_bytes_per_layer(t.seq_len, 1, m->hidden, m->heads, tp, true,
								  CS_RECOMPUTE_SELECTIVE, q.flash_attention);
			if (m->parallel_block)
				layer -= cs_mem_parallel_block_saving(t.seq_len, 1, m->hidden, tp, true,
								      CS_RECOMPUTE_SELECTIVE);
			c.mem_bytes = cs_mem_per_gpu_with(m, &t, &q, &sc->cluster.gpu,
							  cs_cluster_shard_unit(&sc->cluster), layer)
					      .total;
			bool f = c.mem_bytes <= budget;
			if (!have || seed_better(&c, f, best, best_fits)) {
				*best = c;
				best_fits = f;
				have = true;
			}
		}
	}
	best->sequence_parallel = best->tp > 1;
	*fits = have && best_fits;
}

/* ---- the analytic estimate ---------------------------------------------- */

/* The share of a stage's layers recomputed whole (their forward's TP
 * collectives run again). */
static double full_share(const cs_parallel_spec *p, int64_t layers)
{
	if (p->recompute == CS_RECOMPUTE_NONE)
		return 0.0;
	if (p->recompute == CS_RECOMPUTE_FULL && p->recompute_method == CS_RECOMPUTE_UNIFORM)
		return 1.0;
	cs_mem_recompute_split r = cs_mem_recompute_layers(p, cs_model_chunk_layers(p, layers));
	double all = (double)(r.layers[0] + r.layers[1] + r.layers[2]);
	return all > 0.0 ? (double)r.layers[CS_RECOMPUTE_FULL] / all : 0.0;
}

double cs_plan_estimate(const cs_scenario *sc, const cs_plan *p)
{
	const cs_model_spec *m = &sc->model;
	const cs_cluster_spec *cl = &sc->cluster;
	double gpus = (double)cs_scenario_gpus(sc);
	double s = (double)sc->training.seq_len, gb = (double)sc->training.global_batch;
	double tp = (double)p->tp, pp = (double)p->pp, dp = (double)p->dp, cp = (double)p->cp;
	double v = (double)p->vstages, mb = (double)p->micro_batch;
	double micro = gb / (dp * mb);
	double layers_here = (double)m->layers / pp;
	double peak = cs_compute_peak(&cl->gpu, sc->training.precision) * cl->gpu.gemm_efficiency;
	double up = cl->scale_up.bandwidth;
	double out = cl->scale_out.bandwidth * (double)cl->nics_per_node / (double)cl->gpus_per_node;
	double dom = (double)cl->scale_up_domain;
	double act = s / cp * mb * (double)m->hidden * 2.0; /* one micro-batch's (s, b, h), 16-bit */

	cs_parallel_spec rq = sc->parallel;
	rq.recompute = p->recompute;
	double hw = cs_model_hw_flops_per_step_p(m, sc->training.seq_len, sc->training.global_batch, &rq);
	double compute = hw / (gpus * peak);
	double bubble = compute * (pp - 1.0) / (v * micro);

	double tp_comm = 0.0;
	if (p->tp > 1) {
		/* two all-reduces forward, two backward (and two more when the
		 * whole forward is recomputed), ring volume 2 (t-1)/t */
		double n = 4.0 + 2.0 * full_share(&rq, m->layers);
		double bw = tp <= dom ? up : out;
		tp_comm = n * 2.0 * (tp - 1.0) / tp * act / bw * layers_here * micro;
	}
	double cp_comm = 0.0;
	if (p->cp > 1) {
		/* all-gather K and V forward, reduce-scatter their gradients backward */
		double kv = s * mb * (double)m->kv_heads * (double)cs_model_head_dim(m) * 2.0 * 2.0;
		double bw = tp * cp <= dom ? up : out;
		cp_comm = 2.0 * (cp - 1.0) / cp * kv / tp / bw * layers_here * micro;
	}
	double pp_comm = 0.0;
	if (p->pp > 1)
		pp_comm = 2.0 * act / tp / out * micro * v;
	double ep = (double)(p->ep > 0 ? p->ep : 1), ep_comm = 0.0;
	if (p->ep > 1 && m->experts > 0) {
		/* dispatch and combine, forward and backward, in every MoE layer:
		 * each of a token's top_k copies leaves for its expert's rank, over
		 * NVLink inside the domain and the NICs beyond it */
		double copies = act / tp * (double)m->top_k;
		/* unfolded, EP's ranks lie tp x cp apart; folded, etp apart, and
		 * what they receive is gathered over etp (and reduce-scattered
		 * back) inside the domain */
		double stride = p->etp > 0 ? (double)p->etp : tp * cp;
		double in_dom = fmin(ep, fmax(1.0, dom / stride));
		double t = fmax((in_dom - 1.0) / ep / up, (ep - in_dom) / ep / out) * copies;
		if (p->etp > 1)
			t += ((double)p->etp - 1.0) * copies / up;
		if (sc->parallel.moe_dispatcher == CS_MOE_DEEPEP) {
			int64_t per, domains;
			cs_parallel_spec q = sc->parallel;
			q.tp = p->tp;
			q.cp = p->cp;
			q.ep = p->ep;
			cs_parallel_ep_span(&q, cl, &per, &domains);
			t = (double)cs_coll_dispatch_ns(cl, &sc->coll, copies, m->top_k,
							sc->parallel.moe_node_limit, per, domains) /
			    1e9;
		}
		double moe_layers = (double)(m->layers - m->dense_layers) / pp;
		ep_comm = 4.0 * t * moe_layers * micro;
	}
	double dp_exposed = 0.0;
	if (p->dp * p->cp > 1) {
		double d = dp * cp;
		cs_param_counts pc = cs_model_params(m);
		/* the routed experts split by ep and reduced over the dp / ep x cp
		 * ranks that hold them, the rest over all dp x cp */
		double routed = (double)pc.routed, etp = p->etp > 0 ? (double)p->etp : tp;
		double de = p->etp > 0 ? d * tp / (etp * ep) : d / ep;
		double params = ((double)pc.total - routed) / (tp * pp);
		double gbytes = cs_model_dtype_bytes(sc->training.grad_dtype);
		double vol = 2.0 * (d - 1.0) / d * params * gbytes; /* all-reduce, or RS + AG */
		if (de > 1.0)
			vol += 2.0 * (de - 1.0) / de * routed / (etp * pp * ep) * gbytes;
		if (p->sharding == CS_SHARD_ZERO3)
			vol *= 1.5;
		/* hierarchical collectives cross the scale-out network once per
		 * node: each of the group's ranks in a node moves 1/local of it */
		double stride = tp * cp * pp, per = (double)cl->gpus_per_node;
		double local = stride < per ? per / stride : 1.0;
		double bw = gpus <= dom ? up : out * local;
		double hide = compute * 2.0 / 3.0; /* backward */
		dp_exposed = vol / bw > hide ? vol / bw - hide : 0.0;
	}
	return compute + bubble + tp_comm + cp_comm + pp_comm + ep_comm + dp_exposed;
}
