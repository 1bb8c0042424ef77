/*
 * build.c - program templates from the scenario: pipeline schedule, blocks,
 * tensor/context/expert collectives and point-to-point sends.
 *
 * Data-parallel traffic (gradient buckets, parameter gathers) is emitted by
 * build_dp.c through the cs__dp_* hooks, called as gradients become ready.
 */
#include "program/build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_op.h"
#include "config/config.h"
#include "hw/calib.h"
#include "hw/files.h"
#include "model/compute.h"
#include "model/memory.h"
#include "model/model.h"
#include "model/routing.h"
#include "program/build_int.h"
#include "program/schedule.h"

/* ---- layout ----------------------------------------------------------- */

cs_status cs_plan_layout_init(cs_plan_layout *lay, const cs_scenario *sc, cs_diag *diag)
{
	const cs_parallel_spec *p = &sc->parallel;
	memset(lay, 0, sizeof(*lay));
	lay->stages = p->pp;
	lay->chunks = cs_sched_chunks(p->schedule, p->virtual_stages);
	lay->micro_batches = cs_scenario_micro_batches(sc);
	lay->vstages = lay->stages * lay->chunks;
	int64_t e = p->account_embedding, l = p->account_loss;
	int64_t L = sc->model.layers + e + l, V = lay->vstages;
	if (lay->micro_batches < 1) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "%s: 'training.global_batch' %lld leaves no micro-batch for each of %lld "
			 "data-parallel replicas",
			 sc->path, (long long)sc->training.global_batch, (long long)p->dp);
		return CS_ERR_INPUT;
	}
	if (lay->micro_batches > CS_BUILD_MAX_MICRO_BATCHES) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "%s: %lld micro-batches per step exceed the limit of %d", sc->path,
			 (long long)lay->micro_batches, CS_BUILD_MAX_MICRO_BATCHES);
		return CS_ERR_INPUT;
	}
	if (V > CS_PLAN_MAX_VSTAGES || V > L) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "%s: %lld virtual pipeline stages (pp %lld x %lld chunks) for %lld layers: "
			 "every virtual stage needs a layer",
			 sc->path, (long long)V, (long long)lay->stages, (long long)lay->chunks,
			 (long long)sc->model.layers);
		return CS_ERR_INPUT;
	}
	int64_t base = L / V, extra = L % V;
	for (int64_t k = 0; k < V; k++)
		lay->nlayers[k] = base;
	/* middle virtual stages first, outward */
	for (int64_t i = 0; extra > 0 && i < V; i++) {
		int64_t mid = (V - 1) / 2;
		int64_t k = (i % 2 == 0) ? mid - i / 2 : mid + 1 + i / 2;
		if (k < 0 || k >= V)
			continue;
		if ((k == 0 || k == V - 1) && extra <= V - 2 && V > 2)
			continue;
		lay->nlayers[k]++;
		extra--;
	}
	for (int64_t k = 0; extra > 0 && k < V; k++, extra--)
		lay->nlayers[k]++;
	/* the embedding and the loss take the place of a layer where counted */
	lay->nlayers[0] -= e;
	lay->nlayers[V - 1] -= l;
	int64_t first = 0;
	for (int64_t k = 0; k < V; k++) {
		lay->first_layer[k] = first;
		first += lay->nlayers[k];
	}
	return CS_OK;
}

/* Free the activations of the last compute op emitted. */
static void free_last(cs_builder *b, double bytes)
{
	cs_program *p = b->prog;
	if (p->nops[CS_STREAM_COMPUTE] > 0)
		p->ops[CS_STREAM_COMPUTE][p->nops[CS_STREAM_COMPUTE] - 1].mem -= bytes;
}

/* ---- pipeline messages ------------------------------------------------ */

/* Direction a message travels round the stage ring: +1 up, -1 down. */
static int msg_dir(const cs_plan_layout *lay, int64_t src, int64_t dst, int fwd)
{
	int64_t p = lay->stages;
	if (fwd)
		return dst == (src + 1) % p ? 1 : -1;
	return dst == (src - 1 + p) % p ? -1 : 1;
}

static int64_t holder(const cs_builder *b, int64_t vstage)
{
	int64_t st, ch;
	cs_sched_stage_of(b->sc->parallel.schedule, b->lay.stages, b->lay.chunks, vstage, &st, &ch);
	return st;
}

/* ord[fwd][micro * V + dst_vstage]: the message's position on its channel. */
static int number_messages(cs_builder *b)
{
	int64_t p = b->lay.stages, m = b->lay.micro_batches, V = b->lay.vstages;
	for (int d = 0; d < 2; d++) {
		b->ord[d] = malloc((size_t)(m * V) * sizeof(int32_t));
		if (!b->ord[d])
			return -1;
	}
	b->sent = calloc((size_t)(2 * p), sizeof(int32_t));
	if (!b->sent)
		return -1;
	for (int64_t s = 0; s < p; s++) {
		int32_t count[2] = { 0, 0 }; /* per direction: [0] down, [1] up */
		const cs_sched_op *ops = b->sched[s];
		for (int64_t i = 0; i < b->nsched[s]; i++) {
			int fwd = ops[i].kind == CS_SCHED_F;
			if (ops[i].kind == CS_SCHED_W)
				continue;
			int64_t k = cs_sched_virtual_stage(b->sc->parallel.schedule, p, b->lay.chunks, s,
							   ops[i].chunk);
			int64_t dk = fwd ? k + 1 : k - 1;
			if (dk < 0 || dk >= V || holder(b, dk) == s)
				continue;
			int dir = msg_dir(&b->lay, s, holder(b, dk), fwd);
			b->ord[fwd][(int64_t)ops[i].micro * V + dk] = count[dir > 0]++;
		}
		b->sent[2 * s] = count[0];
		b->sent[2 * s + 1] = count[1];
	}
	return 0;
}

static double act_msg_bytes(const cs_builder *b)
{
	const cs_scenario *sc = b->sc;
	double bytes = (double)sc->training.seq_len / (double)sc->parallel.cp *
		       (double)sc->training.micro_batch * (double)sc->model.hidden *
		       cs_model_dtype_bytes(cs_prec_is_low(sc->training.precision) ? CS_PREC_BF16
										   : sc->training.precision);
	if (sc->parallel.sequence_parallel)
		bytes /= (double)sc->parallel.tp;
	return bytes;
}

/* Wait for the message that carries micro-batch j into virtual stage k. */
static void await_message(cs_builder *b, int64_t s, int64_t j, int64_t k, int fwd)
{
	int64_t src_k = fwd ? k - 1 : k + 1;
	if (src_k < 0 || src_k >= b->lay.vstages)
		return;
	int64_t src = holder(b, src_k);
	if (src == s)
		return; /* same stage: stream order already holds */
	int dir = msg_dir(&b->lay, src, s, fwd);
	int32_t n = b->ord[fwd][j * b->lay.vstages + k] + 1;
	cs__pending(b, dir > 0 ? CS_MBOX_UP : CS_MBOX_DOWN, n);
}

static int send_message(cs_builder *b, int64_t s, int64_t j, int64_t k, int fwd)
{
	int64_t dk = fwd ? k + 1 : k - 1;
	if (dk < 0 || dk >= b->lay.vstages || holder(b, dk) == s)
		return 0;
	cs_op op = { .kind = CS_OP_SEND,
		     .comm = CS_COMM_PP,
		     .bytes = act_msg_bytes(b),
		     .to = (int8_t)msg_dir(&b->lay, s, holder(b, dk), fwd),
		     .phase = CS_PHASE_COMM,
		     .vstage = (int16_t)k,
		     .layer = -1,
		     .micro = (int32_t)j };
	cs_dep d = { .counter = CS_STREAM_COMPUTE, .value = b->prog->nops[CS_STREAM_COMPUTE] };
	return cs_program_add(b->prog, CS_STREAM_PP, &op, &d, 1) < 0 ? -1 : 0;
}

/* ---- one stage -------------------------------------------------------- */

static double act_bytes_per_layer(const cs_builder *b)
{
	const cs_scenario *sc = b->sc;
	return cs_mem_layer_activation_bytes(&sc->model, &sc->training, &sc->parallel);
}

const cs_frag *cs__block_frag(const cs_builder *b, int64_t layer, cs_pass pass)
{
	int moe = cs_model_layer_is_moe(&b->sc->model, layer);
	return &b->frag[CS_FRAG_BLOCK][moe][pass];
}

/* How layer i of virtual stage k is recomputed: the policy of the layer's
 * place in its model chunk and of its count over the rank's blocks (the
 * virtual stages this stage runs, in order). */
static cs_recompute layer_rc(const cs_builder *b, int64_t k, int64_t i)
{
	int64_t r = i;
	for (int64_t q = 0; q < k; q++)
		if (cs__runs_here(b, q))
			r += b->lay.nlayers[q];
	return cs_model_layer_recompute(&b->sc->parallel, i, r);
}

/* The recomputation before layer l's input gradient (layer i of virtual
 * stage k): its own forward again, or nothing, or, where uniform full
 * recomputation groups several layers into a chunk that keeps only its
 * input, the whole chunk's forward when the backward reaches its last
 * layer, and nothing at the others. */
static int emit_recompute(cs_builder *b, int64_t k, int64_t l, int64_t j)
{
	const cs_parallel_spec *p = &b->sc->parallel;
	int64_t first = b->lay.first_layer[k], i = l - first, n = b->lay.nlayers[k];
	cs_recompute rc = layer_rc(b, k, i);
	int64_t c = p->recompute_layers;
	if (rc != CS_RECOMPUTE_FULL || p->recompute_method != CS_RECOMPUTE_UNIFORM || c <= 1) {
		int moe = cs_model_layer_is_moe(&b->sc->model, l);
		return cs__emit_frag(b, &b->rc_frag[moe][rc], CS_PHASE_RECOMPUTE, (int)l, (int)j);
	}
	int64_t c0 = i / c * c, c1 = c0 + c < n ? c0 + c : n;
	if (i != c1 - 1)
		return 0;
	for (int64_t q = first + c0; q < first + c1; q++) {
		int moe = cs_model_layer_is_moe(&b->sc->model, q);
		if (cs__emit_frag(b, &b->rc_frag[moe][CS_RECOMPUTE_FULL], CS_PHASE_RECOMPUTE, (int)q, (int)j))
			return -1;
	}
	return 0;
}

/* The embedding or the LM head as an FSDP unit: gathered before, its
 * gradients reduced after (as the blocks). `first` is the forward or input
 * gradient fragment, `second` the weight gradient one; either may be NULL. */
static int emit_unit(cs_builder *b, int64_t unit, const cs_frag *first, const cs_frag *second, cs_phase phase,
		     int64_t j, int fwd)
{
	int input = fwd || first, weight = fwd || second;
	if (input && cs__dp_before_use(b, unit, j, fwd))
		return -1;
	if (first && cs__emit_frag(b, first, phase, -1, (int)j))
		return -1;
	if (second && cs__emit_frag(b, second, CS_PHASE_BWD_W, -1, (int)j))
		return -1;
	return weight ? cs__dp_after_use(b, unit, j, fwd) : 0;
}

/* ---- a forward and a backward, in three parts each ----------------- */

int cs__fwd_begin(cs_builder *b, int64_t s, int64_t j, int64_t k)
{
	await_message(b, s, j, k, 1);
	b->vstage = (int)k;
	b->mem_alloc = act_bytes_per_layer(b) * (double)b->lay.nlayers[k];
	return k == 0 ? emit_unit(b, CS_DP_EMBED, &b->frag[CS_FRAG_EMBED][0][CS_PASS_FWD], NULL, CS_PHASE_FWD,
				  j, 1)
		      : 0;
}

int cs__fwd_layer(cs_builder *b, int64_t l, int64_t j, int from, int to)
{
	const cs_frag *f = cs__block_frag(b, l, CS_PASS_FWD);
	if (to < 0)
		to = f->n;
	if (from == 0 && cs__dp_before_use(b, l, j, 1))
		return -1;
	if (cs__emit_frag_range(b, f, from, to, CS_PHASE_FWD, (int)l, (int)j))
		return -1;
	return to == f->n ? cs__dp_after_use(b, l, j, 1) : 0;
}

int cs__fwd_end(cs_builder *b, int64_t s, int64_t j, int64_t k)
{
	b->vstage = (int)k;
	if (cs__fp8_amax(b, j, 1))
		return -1;
	if (k == b->lay.vstages - 1 &&
	    (emit_unit(b, CS_DP_HEAD, &b->frag[CS_FRAG_HEAD][0][CS_PASS_FWD], NULL, CS_PHASE_FWD, j, 1) ||
	     cs__edges_loss(b, j)))
		return -1;
	return send_message(b, s, j, k, 1);
}

static int emit_forward(cs_builder *b, int64_t s, int64_t j, int64_t k)
{
	if (cs__fwd_begin(b, s, j, k))
		return -1;
	for (int64_t l = b->lay.first_layer[k]; l < b->lay.first_layer[k] + b->lay.nlayers[k]; l++)
		if (cs__fwd_layer(b, l, j, 0, -1))
			return -1;
	return cs__fwd_end(b, s, j, k);
}

/* kind: CS_SCHED_B (input gradients), CS_SCHED_W (weight gradients) or
 * CS_SCHED_BW (both, layer by layer). Returns 1 in *last when this is the
 * stage's last backward of its kind for virtual stage k. */
int cs__bwd_begin(cs_builder *b, int64_t s, int64_t j, int64_t k, int kind, int *last)
{
	int input = kind != CS_SCHED_W, weight = kind != CS_SCHED_B;
	*last = ++b->bwd_done[k * 2 + (kind == CS_SCHED_W)] == b->lay.micro_batches;
	if (input)
		await_message(b, s, j, k, 0);
	b->vstage = (int)k;
	if (k == b->lay.vstages - 1) {
		if (emit_unit(b, CS_DP_HEAD, input ? &b->frag[CS_FRAG_HEAD][0][CS_PASS_BWD_INPUT] : NULL,
			      weight ? &b->frag[CS_FRAG_HEAD][0][CS_PASS_BWD_WEIGHT] : NULL, CS_PHASE_BWD, j,
			      0))
			return -1;
		if (weight && *last && cs__dp_grads_ready(b, CS_DP_HEAD))
			return -1;
	}
	return 0;
}

int cs__bwd_layer(cs_builder *b, int64_t k, int64_t l, int64_t j, int kind, int last, int from, int to)
{
	int input = kind != CS_SCHED_W, weight = kind != CS_SCHED_B;
	const cs_frag *f = cs__block_frag(b, l, CS_PASS_BWD_INPUT);
	if (to < 0)
		to = f->n;
	if (input) {
		if (from == 0 && (cs__dp_before_use(b, l, j, 0) || emit_recompute(b, k, l, j)))
			return -1;
		if (cs__emit_frag_range(b, f, from, to, CS_PHASE_BWD, (int)l, (int)j))
			return -1;
	}
	if (weight && (!input || to == f->n)) {
		if (cs__emit_frag(b, cs__block_frag(b, l, CS_PASS_BWD_WEIGHT), CS_PHASE_BWD_W, (int)l,
				  (int)j))
			return -1;
		if (cs__dp_after_use(b, l, j, 0))
			return -1;
		if (last && cs__dp_grads_ready(b, l))
			return -1;
	}
	return 0;
}

int cs__bwd_end(cs_builder *b, int64_t s, int64_t j, int64_t k, int kind, int last)
{
	int input = kind != CS_SCHED_W, weight = kind != CS_SCHED_B;
	b->vstage = (int)k;
	if (input && cs__fp8_amax(b, j, 0))
		return -1;
	if (k == 0) {
		if (emit_unit(b, CS_DP_EMBED, input ? &b->frag[CS_FRAG_EMBED][0][CS_PASS_BWD_INPUT] : NULL,
			      weight ? &b->frag[CS_FRAG_EMBED][0][CS_PASS_BWD_WEIGHT] : NULL, CS_PHASE_BWD, j,
			      0))
			return -1;
		if (weight && last && cs__dp_grads_ready(b, CS_DP_EMBED))
			return -1;
	}
	/* activations live from the start of F until the end of the input
	 * gradient (the seed's convention) */
	if (input)
		free_last(b, act_bytes_per_layer(b) * (double)b->lay.nlayers[k]);
	if (input && send_message(b, s, j, k, 0))
		return -1;
	return 0;
}

static int emit_backward(cs_builder *b, int64_t s, int64_t j, int64_t k, int kind)
{
	int last;
	if (cs__bwd_begin(b, s, j, k, kind, &last))
		return -1;
	for (int64_t l = b->lay.first_layer[k] + b->lay.nlayers[k] - 1; l >= b->lay.first_layer[k]; l--)
		if (cs__bwd_layer(b, k, l, j, kind, last, 0, -1))
			return -1;
	return cs__bwd_end(b, s, j, k, kind, last);
}

/* Tied embeddings over a pipeline: the first and last stages swap their
 * copies' gradients (the two-rank all-reduce of Megatron's embedding group)
 * after the backward; the optimizer, the next compute segment, waits for the
 * other's. 0 or -1 when out of memory. */
static int embed_exchange(cs_builder *b)
{
	const cs_scenario *sc = b->sc;
	int64_t p = b->lay.stages, s = b->stage;
	if (!sc->model.tied_embeddings || p < 2 || (s != 0 && s != p - 1))
		return 0;
	/* the first stage sends down the ring (to the last), the last up (to
	 * the first); each message lands behind the step's others from the
	 * same neighbour: the last's down mailbox after the first stage's
	 * down messages, the first's up mailbox after the last's up ones */
	int first = s == 0;
	double bytes = (double)sc->model.vocab / (double)sc->parallel.tp * (double)sc->model.hidden *
		       cs_model_dtype_bytes(sc->training.grad_dtype);
	cs_op op = { .kind = CS_OP_SEND,
		     .comm = CS_COMM_PP,
		     .bytes = bytes,
		     .to = (int8_t)(first ? -1 : 1),
		     .phase = CS_PHASE_COMM,
		     .vstage = -1,
		     .layer = -1,
		     .micro = -1 };
	cs_dep d = { .counter = CS_STREAM_COMPUTE, .value = b->prog->nops[CS_STREAM_COMPUTE] };
	if (cs_program_add(b->prog, CS_STREAM_PP, &op, &d, 1) < 0)
		return -1;
	if (first)
		cs__pending(b, CS_MBOX_UP, b->sent[2 * (p - 1) + 1] + 1);
	else
		cs__pending(b, CS_MBOX_DOWN, b->sent[0] + 1);
	return 0;
}

/* Whether two consecutive ops of a stage run as one pair (Megatron-Core's
 * --overlap-moe-expert-parallel-comm): a forward and an input backward, in
 * either order, of different micro-batches, so neither waits for the
 * other. */
static bool pairs(const cs_builder *b, const cs_sched_op *x, const cs_sched_op *y)
{
	if (!b->sc->parallel.moe_a2a_overlap || x->micro == y->micro)
		return false;
	bool xf = x->kind == CS_SCHED_F, yf = y->kind == CS_SCHED_F;
	return xf != yf && (xf ? y : x)->kind != CS_SCHED_W;
}

static int build_stage(cs_builder *b, int64_t s)
{
	b->stage = s;
	b->prog = &b->progs[s];
	b->npending = 0;
	b->flops = 0;
	b->host_gpu = b->host_cpu = 0;
	if (b->prof) {
		snprintf(b->prog->profile, sizeof b->prog->profile, "%s", cs_kprof_name(b->prof));
		b->prog->profile_derived = cs_kprof_derived(b->prof);
	}
	memset(b->bwd_done, 0, sizeof(int64_t) * 2 * (size_t)b->lay.vstages);
	if (cs__dp_stage_begin(b) || cs__edges_begin(b))
		return -1;
	const cs_sched_op *ops = b->sched[s];
	for (int64_t i = 0; i < b->nsched[s]; i++) {
		if (i + 1 < b->nsched[s] && pairs(b, &ops[i], &ops[i + 1])) {
			if (cs__emit_pair(b, s, &ops[i], &ops[i + 1]))
				return -1;
			i++;
			continue;
		}
		int64_t k = cs_sched_virtual_stage(b->sc->parallel.schedule, b->lay.stages, b->lay.chunks, s,
						   ops[i].chunk);
		int rc = ops[i].kind == CS_SCHED_F ? emit_forward(b, s, ops[i].micro, k)
						   : emit_backward(b, s, ops[i].micro, k, ops[i].kind);
		if (rc)
			return -1;
	}
	if (embed_exchange(b) || cs__dp_stage_end(b))
		return -1;
	b->prog->model_flops = b->flops;
	return 0;
}

/* An upper bound of the ops the templates will hold, checked before any is
 * built, so an impossible scenario is refused rather than run out of memory. */
static int too_many_ops(const cs_builder *b, cs_diag *diag)
{
	int64_t per_layer = 0, ends = 0, maxl = 0;
	for (int moe = 0; moe < 2; moe++) {
		int64_t n = 0;
		for (int pass = 0; pass < 4; pass++)
			n += b->frag[CS_FRAG_BLOCK][moe][pass].n;
		per_layer = n > per_layer ? n : per_layer;
	}
	for (int w = CS_FRAG_EMBED; w <= CS_FRAG_HEAD; w++)
		for (int pass = 0; pass < 4; pass++)
			ends += b->frag[w][0][pass].n;
	for (int64_t k = 0; k < b->lay.vstages; k++)
		maxl = b->lay.nlayers[k] > maxl ? b->lay.nlayers[k] : maxl;
	/* the fp8 recipe's amax reduction: a kernel, a collective, a kernel */
	int64_t fp8 =
		b->sc->training.precision == CS_PREC_FP8 && b->sc->training.fp8.amax != CS_AMAX_OFF ? 3 : 0;
	double total = 0;
	for (int64_t s = 0; s < b->lay.stages; s++)
		total += (double)b->nsched[s] * (double)(maxl * (per_layer + 4) + ends + 6 + fp8);
	if (total <= CS_BUILD_MAX_OPS)
		return 0;
	char where[CS_PATH_MAX + 64];
	cs_config_locate(b->sc, "training.global_batch", where, sizeof where);
	snprintf(diag->msg, sizeof(diag->msg),
		 "%s: the programs would hold about %.3g ops (%lld micro-batches x %lld layers), "
		 "more than the limit of %d",
		 where, total, (long long)b->lay.micro_batches, (long long)b->sc->model.layers,
		 CS_BUILD_MAX_OPS);
	return 1;
}

cs_status cs_plan_build(const cs_scenario *sc, const cs_mesh *mesh, const cs_kprof *prof, cs_program *progs,
			cs_diag *diag)
{
	cs_builder *b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory");
		return CS_ERR_NOMEM;
	}
	/* the calibration: read here, kept in b->calib */
	cs_status cst = cs_hw_load_calibration(sc, &b->calib, diag);
	if (cst != CS_OK) {
		free(b);
		return cst;
	}
	b->gap_ns = b->calib.kernel_gap_us * 1e3;
	cs_status st = cs_plan_layout_init(&b->lay, sc, diag);
	if (st != CS_OK) {
		free(b);
		return st;
	}
	b->sc = sc;
	b->mesh = mesh;
	b->progs = progs;
	b->ctx = (cs_layer_ctx){
		.seq_len = sc->training.seq_len,
		.micro_batch = sc->training.micro_batch,
		.tp = sc->parallel.tp,
		.cp = sc->parallel.cp,
		.ep = sc->parallel.ep,
		.etp = cs_parallel_etp(&sc->parallel),
		.moe_folded = cs_parallel_folded(&sc->parallel),
		.sequence_parallel = sc->parallel.sequence_parallel,
		/* the block's recompute pass that bounds the ops: full where any
		 * layer is recomputed whole (emit_recompute picks each layer's) */
		.recompute =
			sc->parallel.recompute == CS_RECOMPUTE_SELECTIVE && sc->parallel.recompute_every > 0
				? CS_RECOMPUTE_FULL
				: sc->parallel.recompute,
		.recompute_modules = sc->parallel.recompute_modules,
		.flash_attention = sc->parallel.flash_attention,
		.cp_kind = sc->parallel.cp_kind,
		.precision = sc->training.precision,
		.expert_imbalance = cs_moe_imbalance(sc),
		.moe_capacity = sc->parallel.moe_capacity,
		.moe_pad = sc->parallel.moe_pad,
		.moe_router_fusion = sc->parallel.moe_router_fusion,
		.moe_permute_fusion = sc->parallel.moe_permute_fusion,
		.moe_deepep = sc->parallel.moe_dispatcher == CS_MOE_DEEPEP,
		.moe_fp8_dispatch = sc->parallel.moe_dispatcher == CS_MOE_DEEPEP &&
				    cs_prec_is_low(sc->training.precision),
		.dropout = sc->training.dropout,
		.grad_accum_bytes =
			sc->training.grad_accum == CS_GRAD_ACCUM_SEPARATE
				? cs_model_grad_accum_bytes(sc->training.precision, sc->training.grad_dtype)
				: 0.0,
		.framework = sc->training.framework,
		.compiled = sc->training.compile,
		.micro_batches = b->lay.micro_batches,
		.arch = sc->cluster.gpu.arch,
		.fp8_gather = sc->training.fp8.comm,
		.fp8_params = sc->training.fp8.params,
		.fp8_recast = !sc->training.fp8.weight_cache,
	};
	b->prof = prof;
	b->cm = (cs_compute){ .gpu = &sc->cluster.gpu,
			      .prec = sc->training.precision,
			      .prof = b->prof,
			      .attn = sc->training.attention_kernel == CS_ATTNK_FLASH2 ? CS_ATTN_FLASH2
										       : CS_ATTN_CUDNN };
	b->cm.calib = &b->calib;
	if (b->prof && sc->cluster.gpu.clock != CS_CLOCK_TABLE)
		b->cm.clock = cs_kprof_clock_model(b->prof);
	if (b->prof)
		b->launch_ns = sc->training.cuda_graphs ? cs_kprof_graph_launch_ns(b->prof)
							: cs_kprof_eager_launch_ns(b->prof);
	b->sync_ns = cs_kprof_sync_ns(b->prof);
	int64_t p = b->lay.stages;
	st = CS_ERR_NOMEM;
	b->sched = calloc((size_t)p, sizeof(*b->sched));
	b->nsched = calloc((size_t)p, sizeof(*b->nsched));
	b->bwd_done = calloc((size_t)(2 * b->lay.vstages), sizeof(int64_t));
	if (!b->sched || !b->nsched || !b->bwd_done || cs__make_frags(b))
		goto out;
	for (int64_t s = 0; s < p; s++) {
		int64_t n = cs_sched_stage_ops(sc->parallel.schedule, p, b->lay.micro_batches, b->lay.chunks,
					       s, NULL, 0, diag);
		if (n < 0) {
			st = CS_ERR_INPUT;
			goto out;
		}
		b->sched[s] = malloc((size_t)(n ? n : 1) * sizeof(cs_sched_op));
		if (!b->sched[s])
			goto out;
		b->nsched[s] = cs_sched_stage_ops(sc->parallel.schedule, p, b->lay.micro_batches,
						  b->lay.chunks, s, b->sched[s], n, diag);
		if (sc->parallel.moe_a2a_overlap && sc->parallel.schedule == CS_SCHED_INTERLEAVED)
			cs__pair_warmup(b->sched[s], b->nsched[s]);
	}
	if (too_many_ops(b, diag)) {
		st = CS_ERR_INPUT;
		goto out;
	}
	if (number_messages(b) || cs__dp_init(b))
		goto out;
	for (int64_t s = 0; s < p; s++)
		if (build_stage(b, s))
			goto out;
	st = CS_OK;
out:
	if (st == CS_ERR_NOMEM)
		snprintf(diag->msg, sizeof(diag->msg), "out of memory while building programs");
	cs__dp_free(b);
	cs__free_frags(b);
	for (int64_t s = 0; b->sched && s < p; s++)
		free(b->sched[s]);
	free(b->sched);
	free(b->nsched);
	free(b->bwd_done);
	free(b->ord[0]);
	free(b->ord[1]);
	free(b->sent);
	free(b);
	return st;
}

cs_status cs_plan_build_new(const cs_scenario *sc, const cs_mesh *mesh, const cs_kprof *prof,
			    cs_program **out, cs_diag *diag)
{
	int64_t n = sc->parallel.pp;
	*out = calloc((size_t)n, sizeof **out);
	if (!*out) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory");
		return CS_ERR_NOMEM;
	}
	for (int64_t i = 0; i < n; i++)
		cs_program_init(&(*out)[i]);
	return cs_plan_build(sc, mesh, prof, *out, diag);
}

void cs_plan_programs_free(cs_program *progs, int64_t n)
{
	for (int64_t i = 0; progs && i < n; i++)
		cs_program_free(&progs[i]);
	free(progs);
}
