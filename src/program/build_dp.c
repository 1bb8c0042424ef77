/*
 * build_dp.c - data-parallel traffic of a stage's program.
 *
 * DDP (PyTorch's reducer): gradients in buckets of `bucket` bytes (the first
 * `first_bucket`), filled in reverse parameter order; a bucket's all-reduce
 * launches on the DP stream once its gradients are ready and every earlier
 * bucket has launched; the optimizer waits for all of them. With `overlap:
 * false` every bucket waits for the end of backward.
 *
 * ZeRO-1/2 (Megatron's distributed optimizer) and FSDP SHARD_GRAD_OP: the
 * same buckets reduce-scattered; the optimizer updates this rank's shard;
 * parameters are all-gathered per bucket, either at the start of the step
 * ahead of their first forward use (overlap_param_gather, the steady state of
 * overlapping them with the next step's forward) or after the optimizer.
 *
 * ZeRO-3 / FSDP FULL_SHARD: one FSDP unit per block; the unit's parameters
 * are all-gathered before every forward and backward use, at most
 * max_inflight_gathers ahead of the compute (limit_all_gathers), and its
 * gradients reduce-scattered after each backward. HYBRID_SHARD does this
 * inside the node and all-reduces the gradient shard across nodes.
 * Backward prefetch PRE issues the next gather before the current block's
 * gradient compute, POST after it, NONE after its reduce-scatter too.
 *
 * With expert parallelism (ep > 1) the routed experts' weights are held by
 * (dp / ep) x cp ranks only: Megatron-Core's DDP keeps them in buffers of
 * their own (params with allreduce = False), bucketed apart and reduced,
 * sharded and gathered over the expert-data-parallel group (CS_GROUP_EDP);
 * the dense weights, shared experts and router over the whole DP group.
 * Fully sharded units (ZeRO-3, FSDP) keep every weight in one unit.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_op.h"
#include "model/compute.h"
#include "program/build_int.h"
#include "program/shard.h"

#define MAX_TENSORS 16
#define MAX_INFLIGHT 64

/* Weights by the group that reduces them: dense over DP, routed experts
 * over the expert-data-parallel group. */
enum { DENSE, EXPERT, KINDS };

typedef struct late_bucket {
	double bytes;
	int kind;
} late_bucket;

struct cs_dp_state {
	int active;       /* a DP group of more than one rank */
	int active_edp;   /* experts split by ep > 1 and reduced over more than one rank */
	int split;        /* ep > 1: routed experts' weights apart from the dense ones */
	double edp_ranks; /* (dp / ep) x cp */
	cs_sharding mode;
	double grad_bytes; /* per parameter */
	double param_bytes;
	/* buckets being filled, by kind */
	double bucket[KINDS]; /* bytes */
	double cap[KINDS];
	/* buckets postponed to the end of backward (overlap off) */
	late_bucket *late;
	int nlate, latecap;
	/* parameters gathered at the step's start: DP_AG mark per layer */
	int32_t *ag_mark; /* [layers + 2]: index layer + 2 (embed 1, head 0) */
	uint8_t *used;
	/* FSDP: compute marks at the end of recent uses, newest last */
	int32_t use_end[MAX_INFLIGHT];
	int nuse;
	int32_t last_rs;            /* DP mark of the latest reduce-scatter */
	double stage_params;        /* local parameters of this stage */
	double stage_expert;        /* of them, the routed experts' (0 unless split) */
	double stage_linear;        /* of them, the blocks' linear weights */
	double stage_gather[KINDS]; /* bytes of this stage's parameters as all-gathered */
};

/* ---- parameters ------------------------------------------------------- */

/* Latent attention's tensors after the `n` of t (Megatron-Core's
 * MLASelfAttention, in reverse registration order): the output projection
 * and the up projections split by heads (nq of them here), the down
 * projections and the latents' norms whole on every TP rank. */
static int mla_tensors(const cs_model_spec *m, double nq, double *t, int n, unsigned lin, unsigned *linear)
{
	double h = (double)m->hidden, ql = (double)m->q_lora_rank, kvl = (double)m->kv_lora_rank;
	double qk = (double)cs_model_qk_head_dim(m), v = (double)cs_model_v_head_dim(m);
	double nope = (double)cs_model_head_dim(m), rope = (double)cs_model_rope_head_dim(m);
	lin |= 1u << n;
	t[n++] = h * nq * v; /* out projection: rows */
	lin |= 3u << n;
	t[n++] = kvl * nq * (nope + v); /* key/value up projection: columns */
	t[n++] = h * (kvl + rope);      /* key/value down projection with the rotary key */
	t[n++] = kvl;                   /* its latent's norm */
	if (ql > 0) {
		lin |= 3u << n;
		t[n++] = ql * nq * qk; /* query up projection: columns */
		t[n++] = h * ql;       /* query down projection */
		t[n++] = ql;           /* its latent's norm */
	} else {
		lin |= 1u << n;
		t[n++] = h * nq * qk; /* query projection: columns */
	}
	if (linear)
		*linear = lin;
	return n;
}

/* Local parameter tensors of a layer, in reverse registration order (the
 * order DDP fills buckets), as parameter counts; bit i of *linear set when
 * t[i] is a block's linear weight (an fp8 GEMM's, under the fp8 recipe), of
 * *expert when it is the routed experts' and reduced over their group. */
static int layer_tensors(const cs_builder *b, int64_t layer, double *t, unsigned *linear, unsigned *expert)
{
	const cs_model_spec *m = &b->sc->model;
	double tp = (double)b->sc->parallel.tp, ep = (double)b->sc->parallel.ep;
	double h = (double)m->hidden;
	int n = 0;
	if (linear)
		*linear = 0;
	if (expert)
		*expert = 0;
	if (layer == CS_DP_EMBED) {
		t[n++] = (double)m->vocab * h / tp;
		if (m->arch == CS_ARCH_GPT)
			t[n++] = (double)m->max_positions * h;
		return n;
	}
	if (layer == CS_DP_HEAD) {
		t[n++] = h;
		if (!m->tied_embeddings)
			t[n++] = (double)m->vocab * h / tp;
		return n;
	}
	int gated = m->arch == CS_ARCH_LLAMA;
	/* rank 0's shard of each weight, as Megatron cuts it (program/shard.h) */
	int64_t q0, nq, kv0, nkv, f0, nf;
	int64_t dh = cs_model_head_dim(m);
	cs_shard_heads(m->heads, m->kv_heads, b->sc->parallel.tp, 0, &q0, &nq, &kv0, &nkv);
	cs_shard_range(m->ffn, b->sc->parallel.tp, 0, &f0, &nf);
	t[n++] = 2.0 * h * (gated ? 1 : 2); /* norms */
	unsigned lin = 0;
	if (cs_model_layer_is_moe(m, layer)) {
		/* the routed experts split over the expert-TP group, the shared
		 * ones over TP (the same group unless folded) */
		double etp = (double)cs_parallel_etp(&b->sc->parallel);
		double per = (gated ? 3.0 : 2.0) * h * (double)m->expert_ffn / etp;
		double local = (double)m->experts / ep, shared = (double)m->shared_experts * etp / tp;
		if (b->dp && b->dp->split) { /* Megatron-Core's expert buffers */
			if (expert)
				*expert = 1u << n;
			lin |= 1u << n;
			t[n++] = per * local;
			if (m->shared_experts > 0) {
				lin |= 1u << n;
				t[n++] = per * shared;
			}
		} else {
			lin |= 1u << n;
			t[n++] = per * (local + shared);
		}
		t[n++] = h * (double)m->experts; /* router */
	} else {
		lin |= 3u << n;
		t[n++] = h * (double)nf;                   /* down: rows */
		t[n++] = h * (double)nf * (gated ? 2 : 1); /* up (and gate): columns */
	}
	if (cs_model_mla(m))
		return mla_tensors(m, (double)nq, t, n, lin, linear);
	lin |= 3u << n;
	t[n++] = h * (double)(nq * dh);             /* out projection: rows */
	t[n++] = h * (double)((nq + 2 * nkv) * dh); /* q, k, v: columns */
	if (linear)
		*linear = lin;
	return n;
}

/* A unit's parameters, all and linear, by kind. */
typedef struct unit_sums {
	double all[KINDS], linear[KINDS];
} unit_sums;

static unit_sums unit_params(const cs_builder *b, int64_t layer)
{
	double t[MAX_TENSORS];
	unsigned lin, exp;
	int n = layer_tensors(b, layer, t, &lin, &exp);
	unit_sums u = { { 0 }, { 0 } };
	for (int i = 0; i < n; i++) {
		int k = exp >> i & 1u ? EXPERT : DENSE;
		u.all[k] += t[i];
		if (lin >> i & 1u)
			u.linear[k] += t[i];
	}
	return u;
}

static double tensors_sum(const cs_builder *b, int64_t layer, int kind)
{
	unit_sums u = unit_params(b, layer);
	return kind < KINDS ? u.all[kind] : u.all[DENSE] + u.all[EXPERT];
}

static double linear_sum(const cs_builder *b, int64_t layer, int kind)
{
	unit_sums u = unit_params(b, layer);
	return kind < KINDS ? u.linear[kind] : u.linear[DENSE] + u.linear[EXPERT];
}

/* Bytes of a unit's parameters of `kind` (KINDS: all) as all-gathered:
 * 16-bit, or a quantized element (with its scales) for a block's linear
 * weights kept quantized (training.fp8.params; NeMo's distributed
 * optimizer gathers their uint8 shards); the norms, the MoE router, the embedding and the LM head stay
 * 16-bit. */
static double gather_bytes(const cs_builder *b, int64_t layer, int kind)
{
	if (kind == KINDS)
		return gather_bytes(b, layer, DENSE) + gather_bytes(b, layer, EXPERT);
	unit_sums u = unit_params(b, layer);
	cs_precision p = b->sc->training.precision;
	if (!cs_prec_is_recipe(p) || !b->sc->training.fp8.params)
		return u.all[kind] * b->dp->param_bytes;
	return u.linear[kind] * cs_model_dtype_bytes(p) + (u.all[kind] - u.linear[kind]) * b->dp->param_bytes;
}

/* `f` of `kind` summed over this stage's units. */
static double stage_sum(const cs_builder *b, double (*f)(const cs_builder *, int64_t, int), int kind)
{
	double s = 0;
	for (int64_t k = 0; k < b->lay.vstages; k++) {
		if (!cs__runs_here(b, k))
			continue;
		for (int64_t l = b->lay.first_layer[k]; l < b->lay.first_layer[k] + b->lay.nlayers[k]; l++)
			s += f(b, l, kind);
		if (k == 0)
			s += f(b, CS_DP_EMBED, kind);
		if (k == b->lay.vstages - 1)
			s += f(b, CS_DP_HEAD, kind);
	}
	return s;
}

/* The unit at position pos of a virtual stage holding layers first ..
 * first + n - 1: the embedding before them, the head after. */
static int64_t unit_at(int64_t first, int64_t n, int64_t pos)
{
	return pos < 0 ? CS_DP_EMBED : pos == n ? CS_DP_HEAD : first + pos;
}

/* ---- emission helpers ------------------------------------------------- */

static int32_t add_coll(cs_builder *b, cs_stream s, cs_group_kind g, cs_coll_op op, double bytes,
			const cs_dep *deps, int ndeps, int64_t layer)
{
	cs_op o = { .kind = CS_OP_COLL,
		    .group = (uint8_t)g,
		    .coll = (uint8_t)op,
		    .comm = CS_COMM_DP,
		    .bytes = bytes,
		    .phase = CS_PHASE_COMM,
		    .vstage = (int16_t)b->vstage,
		    .layer = (int16_t)layer,
		    .micro = -1 };
	return cs_program_add(b->prog, s, &o, deps, ndeps);
}

static int32_t compute_mark(const cs_builder *b) { return b->prog->nops[CS_STREAM_COMPUTE]; }

static cs_group_kind grad_group(const cs_dp_state *d)
{
	return d->mode == CS_SHARD_HYBRID ? CS_GROUP_DP_INTRA : CS_GROUP_DP;
}

/* The group a bucket of `kind` is reduced, sharded and gathered over. */
static cs_group_kind bucket_group(int kind) { return kind == EXPERT ? CS_GROUP_EDP : CS_GROUP_DP; }

/* Launch the bucket of `kind` now, or keep it for the end of backward. */
static int flush_bucket(cs_builder *b, int kind)
{
	cs_dp_state *d = b->dp;
	if (d->bucket[kind] <= 0)
		return 0;
	double bytes = d->bucket[kind];
	d->bucket[kind] = 0;
	d->cap[kind] = b->sc->parallel.bucket_bytes;
	if (!b->sc->parallel.overlap_grad_reduce) {
		if (d->nlate == d->latecap) {
			int nc = d->latecap ? d->latecap * 2 : 32;
			late_bucket *nl = realloc(d->late, (size_t)nc * sizeof(*nl));
			if (!nl)
				return -1;
			d->late = nl;
			d->latecap = nc;
		}
		d->late[d->nlate++] = (late_bucket){ bytes, kind };
		return 0;
	}
	if (cs__edges_bucket(b, bytes))
		return -1;
	cs_dep dep = { .counter = CS_STREAM_COMPUTE, .value = compute_mark(b) };
	cs_coll_op op = d->mode == CS_SHARD_NONE ? CS_COLL_ALL_REDUCE : CS_COLL_REDUCE_SCATTER;
	return add_coll(b, CS_STREAM_DP, bucket_group(kind), op, bytes, &dep, 1, -1) < 0 ? -1 : 0;
}

/* ---- hooks ------------------------------------------------------------ */

int cs__dp_init(cs_builder *b)
{
	cs_dp_state *d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	b->dp = d;
	const cs_scenario *sc = b->sc;
	d->mode = sc->parallel.sharding;
	d->active = sc->parallel.dp * sc->parallel.cp > 1;
	d->split = sc->parallel.ep > 1 && sc->model.experts > 0;
	d->edp_ranks = (double)cs_parallel_edp(&sc->parallel);
	d->active_edp = d->split && d->edp_ranks > 1;
	d->grad_bytes = cs_model_dtype_bytes(sc->training.grad_dtype);
	d->param_bytes = cs_model_dtype_bytes(
		cs_prec_is_low(sc->training.precision) ? CS_PREC_BF16 : sc->training.precision);
	d->ag_mark = calloc((size_t)sc->model.layers + 2, sizeof(int32_t));
	d->used = calloc((size_t)sc->model.layers + 2, 1);
	return d->ag_mark && d->used ? 0 : -1;
}

void cs__dp_free(cs_builder *b)
{
	if (!b->dp)
		return;
	free(b->dp->late);
	free(b->dp->ag_mark);
	free(b->dp->used);
	free(b->dp);
	b->dp = NULL;
}

static int gathers_at_start(const cs_builder *b)
{
	cs_sharding m = b->dp->mode;
	return b->dp->active && (m == CS_SHARD_GRAD_OP || ((m == CS_SHARD_ZERO1 || m == CS_SHARD_ZERO2) &&
							   b->sc->parallel.overlap_param_gather));
}

static int fsdp_full(const cs_dp_state *d)
{
	return d->active && (d->mode == CS_SHARD_ZERO3 || d->mode == CS_SHARD_HYBRID);
}

int cs__dp_stage_begin(cs_builder *b)
{
	cs_dp_state *d = b->dp;
	d->bucket[DENSE] = d->bucket[EXPERT] = 0;
	d->cap[DENSE] = b->sc->parallel.first_bucket_bytes > 0 && d->mode == CS_SHARD_NONE
				? b->sc->parallel.first_bucket_bytes
				: b->sc->parallel.bucket_bytes;
	d->cap[EXPERT] = b->sc->parallel.bucket_bytes;
	d->nlate = 0;
	d->nuse = 0;
	d->last_rs = 0;
	d->stage_params = stage_sum(b, tensors_sum, KINDS);
	d->stage_expert = stage_sum(b, tensors_sum, EXPERT);
	d->stage_linear = stage_sum(b, linear_sum, KINDS);
	d->stage_gather[DENSE] = stage_sum(b, gather_bytes, DENSE);
	d->stage_gather[EXPERT] = stage_sum(b, gather_bytes, EXPERT);
	memset(d->used, 0, (size_t)b->sc->model.layers + 2);
	if (!gathers_at_start(b))
		return 0;
	/* parameter all-gathers in forward order, packed like the buckets; a
	 * virtual stage's units are the embedding (first), its layers, the head
	 * (last), at positions -1, 0 .. n-1, n */
	double bucket[KINDS] = { 0, 0 };
	for (int64_t k = 0; k < b->lay.vstages; k++) {
		if (!cs__runs_here(b, k))
			continue;
		int64_t first = b->lay.first_layer[k], n = b->lay.nlayers[k];
		int64_t lo = k == 0 ? -1 : 0, hi = n + (k == b->lay.vstages - 1), pend = lo;
		for (int64_t pos = lo; pos < hi; pos++) {
			bucket[DENSE] += gather_bytes(b, unit_at(first, n, pos), DENSE);
			bucket[EXPERT] += gather_bytes(b, unit_at(first, n, pos), EXPERT);
			if (bucket[DENSE] + bucket[EXPERT] < b->sc->parallel.bucket_bytes && pos < hi - 1)
				continue;
			/* the experts' share, gathered over their own group, after */
			int32_t mk = 0;
			for (int kind = DENSE; kind < KINDS; kind++) {
				if (kind == EXPERT && !(d->active_edp && bucket[EXPERT] > 0))
					continue;
				mk = add_coll(b, CS_STREAM_DP_AG, bucket_group(kind), CS_COLL_ALL_GATHER,
					      bucket[kind], NULL, 0, unit_at(first, n, pend));
				if (mk < 0)
					return -1;
			}
			for (int64_t x = pend; x <= pos; x++)
				d->ag_mark[unit_at(first, n, x) + 2] = mk;
			bucket[DENSE] = bucket[EXPERT] = 0;
			pend = pos + 1;
		}
	}
	return 0;
}

/* FSDP (PyTorch's, training.framework: fsdp) copies a gathered unit out of
 * the all-gather buffer into its parameters on the compute stream: each
 * 16-bit element read and written once. */
static int copy_out(cs_builder *b, int64_t layer)
{
	if (b->sc->training.framework != CS_FW_FSDP)
		return 0;
	cs_layer_op op = { .name = "fsdp_copy_out",
			   .cls = CS_OPC_MEMBOUND,
			   .mem = CS_MEM_COPY,
			   .bytes = 2.0 * gather_bytes(b, layer, KINDS),
			   .kernels = 1 };
	return cs__add_kernel(b, &op, CS_PHASE_FWD, (int)b->vstage, (int)layer, -1);
}

int cs__dp_before_use(cs_builder *b, int64_t layer, int64_t micro, int fwd)
{
	cs_dp_state *d = b->dp;
	(void)micro;
	if (gathers_at_start(b)) {
		if (fwd && !d->used[layer + 2]) {
			d->used[layer + 2] = 1;
			cs__pending(b, CS_STREAM_DP_AG, d->ag_mark[layer + 2]);
			if (b->dp->mode == CS_SHARD_GRAD_OP)
				return copy_out(b, layer);
		}
		return 0;
	}
	if (!fsdp_full(d))
		return 0;
	/* gather this unit; it may start once the use `ahead` back has ended */
	int ahead = (int)b->sc->parallel.max_inflight_gathers;
	if (ahead < 1)
		ahead = 1;
	if (!fwd && b->sc->parallel.backward_prefetch != CS_PREFETCH_PRE)
		ahead = 1;
	cs_dep deps[2];
	int nd = 0;
	if (d->nuse >= ahead)
		deps[nd++] = (cs_dep){ .counter = CS_STREAM_COMPUTE, .value = d->use_end[d->nuse - ahead] };
	else if (!fwd || ahead == 1)
		deps[nd++] = (cs_dep){ .counter = CS_STREAM_COMPUTE, .value = compute_mark(b) };
	if (!fwd && b->sc->parallel.backward_prefetch == CS_PREFETCH_NONE && d->last_rs > 0)
		deps[nd++] = (cs_dep){ .counter = CS_STREAM_DP, .value = d->last_rs };
	int32_t mk = add_coll(b, CS_STREAM_DP_AG, grad_group(d), CS_COLL_ALL_GATHER,
			      gather_bytes(b, layer, KINDS), deps, nd, layer);
	if (mk < 0)
		return -1;
	cs__pending(b, CS_STREAM_DP_AG, mk);
	return copy_out(b, layer);
}

int cs__dp_after_use(cs_builder *b, int64_t layer, int64_t micro, int fwd)
{
	cs_dp_state *d = b->dp;
	(void)micro;
	if (!fsdp_full(d))
		return 0;
	if (d->nuse == MAX_INFLIGHT) {
		memmove(d->use_end, d->use_end + 1, sizeof(int32_t) * (MAX_INFLIGHT - 1));
		d->nuse--;
	}
	d->use_end[d->nuse++] = compute_mark(b);
	if (fwd)
		return 0;
	/* FSDP reduce-scatters each unit's gradients after every backward */
	cs_dep dep = { .counter = CS_STREAM_COMPUTE, .value = compute_mark(b) };
	int32_t mk = add_coll(b, CS_STREAM_DP, grad_group(d), CS_COLL_REDUCE_SCATTER,
			      tensors_sum(b, layer, KINDS) * d->grad_bytes, &dep, 1, layer);
	if (mk < 0)
		return -1;
	d->last_rs = mk;
	return 0;
}

int cs__dp_grads_ready(cs_builder *b, int64_t layer)
{
	cs_dp_state *d = b->dp;
	if (!d->active)
		return 0;
	if (fsdp_full(d)) {
		if (d->mode == CS_SHARD_HYBRID) {
			cs_group g = cs_mesh_group(b->mesh, CS_GROUP_DP_INTRA, 0,
						   cs_cluster_shard_unit(&b->sc->cluster));
			double shard =
				tensors_sum(b, layer, KINDS) * d->grad_bytes / (double)cs_group_size(&g);
			cs_dep dep = { .counter = CS_STREAM_COMPUTE, .value = compute_mark(b) };
			if (add_coll(b, CS_STREAM_DP, CS_GROUP_DP_INTER, CS_COLL_ALL_REDUCE, shard, &dep, 1,
				     layer) < 0)
				return -1;
		}
		return 0;
	}
	double t[MAX_TENSORS];
	unsigned exp;
	int n = layer_tensors(b, layer, t, NULL, &exp);
	for (int i = 0; i < n; i++) {
		int k = exp >> i & 1u ? EXPERT : DENSE;
		if (k == EXPERT && !d->active_edp)
			continue; /* held by no other rank */
		d->bucket[k] += t[i] * d->grad_bytes;
		if (d->bucket[k] >= d->cap[k] && flush_bucket(b, k))
			return -1;
	}
	return 0;
}

/* Ranks over which the optimizer's state and update are sharded: the
 * dense weights' (the experts' are sharded over their own group). */
static double optimizer_shard(const cs_builder *b)
{
	const cs_dp_state *d = b->dp;
	if (!d->active || d->mode == CS_SHARD_NONE)
		return 1.0;
	if (d->mode == CS_SHARD_HYBRID) {
		cs_group g =
			cs_mesh_group(b->mesh, CS_GROUP_DP_INTRA, 0, cs_cluster_shard_unit(&b->sc->cluster));
		return (double)cs_group_size(&g);
	}
	return (double)(b->sc->parallel.dp * b->sc->parallel.cp);
}

int64_t cs__dp_optimizer_params(const cs_builder *b)
{
	const cs_dp_state *d = b->dp;
	if (!d->split || fsdp_full(d))
		return (int64_t)(d->stage_params / optimizer_shard(b) + 0.5);
	double experts = d->mode == CS_SHARD_NONE ? 1.0 : d->edp_ranks;
	return (int64_t)((d->stage_params - d->stage_expert) / optimizer_shard(b) +
			 d->stage_expert / experts + 0.5);
}

int64_t cs__dp_grad_buffer_params(const cs_builder *b)
{
	double shard = fsdp_full(b->dp) ? optimizer_shard(b) : 1.0;
	return (int64_t)(b->dp->stage_params / shard + 0.5);
}

int cs__dp_stage_end(cs_builder *b)
{
	cs_dp_state *d = b->dp;
	if (d->active && !fsdp_full(d) && (flush_bucket(b, DENSE) || flush_bucket(b, EXPERT)))
		return -1;
	cs_coll_op op = d->mode == CS_SHARD_NONE ? CS_COLL_ALL_REDUCE : CS_COLL_REDUCE_SCATTER;
	for (int i = 0; i < d->nlate; i++) {
		if (cs__edges_bucket(b, d->late[i].bytes))
			return -1;
		cs_dep dep = { .counter = CS_STREAM_COMPUTE, .value = compute_mark(b) };
		if (add_coll(b, CS_STREAM_DP, bucket_group(d->late[i].kind), op, d->late[i].bytes, &dep, 1,
			     -1) < 0)
			return -1;
	}
	/* the optimizer waits for every gradient collective, and for the
	 * gradient norm and clipping where the step has them */
	int64_t local = cs__dp_optimizer_params(b);
	cs__pending(b, CS_STREAM_DP, b->prog->nops[CS_STREAM_DP]);
	if (cs__edges_update(b, local))
		return -1;
	cs_layer_op opt = cs_model_optimizer_op(local, b->sc->training.optimizer, b->sc->training.grad_dtype,
						b->sc->training.optimizer_dtype, b->sc->training.framework);
	if (cs__add_kernel(b, &opt, CS_PHASE_OPTIM, -1, -1, -1))
		return -1;
	if (d->stage_params > 0 && cs__fp8_param_update(b, (double)local * d->stage_linear / d->stage_params))
		return -1;
	/* ZeRO-1/2 without overlap: gather the updated parameters now */
	if (d->active && (d->mode == CS_SHARD_ZERO1 || d->mode == CS_SHARD_ZERO2) && !gathers_at_start(b)) {
		cs_dep dep = { .counter = CS_STREAM_COMPUTE, .value = compute_mark(b) };
		double cap = b->sc->parallel.bucket_bytes;
		for (int kind = DENSE; kind < KINDS; kind++) {
			double bytes = kind == EXPERT && !d->active_edp ? 0.0 : d->stage_gather[kind];
			while (bytes > 0) {
				double chunk = bytes > cap ? cap : bytes;
				if (add_coll(b, CS_STREAM_DP_AG, bucket_group(kind), CS_COLL_ALL_GATHER,
					     chunk, &dep, 1, -1) < 0)
					return -1;
				bytes -= chunk;
			}
		}
	}
	return 0;
}
