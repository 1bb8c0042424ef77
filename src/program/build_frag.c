/*
 * build_frag.c - a pass of a block as the runner sees it: the model's op
 * list turned into compute segments (consecutive kernels merged, each timed
 * by the compute model) and the collectives between them, and the emission
 * of such a fragment onto a program with its dependencies.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/coll_op.h"
#include "core/sim.h"
#include "model/compute.h"
#include "program/build_int.h"

/* ---- fragments: a pass of a block as compute segments and collectives -- */

static int frag_push(cs_frag *f, const cs_frag_item *it)
{
	if (f->n == f->cap) {
		int ncap = f->cap ? f->cap * 2 : 16;
		cs_frag_item *ni = realloc(f->items, (size_t)ncap * sizeof(*ni));
		if (!ni)
			return -1;
		f->items = ni;
		f->cap = ncap;
	}
	f->items[f->n++] = *it;
	return 0;
}

static cs_group_kind comm_group(int comm_kind)
{
	switch (comm_kind) {
	case CS_COMM_CP: return CS_GROUP_CP;
	case CS_COMM_EP: return CS_GROUP_EP;
	default: return CS_GROUP_TP;
	}
}

static cs_stream comm_stream(int comm_kind)
{
	switch (comm_kind) {
	case CS_COMM_CP: return CS_STREAM_CP;
	case CS_COMM_EP: return CS_STREAM_EP;
	default: return CS_STREAM_TP;
	}
}

/* DeepEP's kernels move an MoE layer's tokens (coll/dispatch.c): timed
 * here for the expert-parallel group's span, on the SMs they hold
 * (DeepSeek-V3 section 3.2.2: 20 of the H800's 132). */
enum { DEEPEP_SMS = 20 };

static void deepep(const cs_builder *b, const cs_layer_op *op, cs_frag_item *c)
{
	const cs_scenario *sc = b->sc;
	int64_t per, domains;
	cs_parallel_ep_span(&sc->parallel, &sc->cluster, &per, &domains);
	c->ub = 1;
	c->sms = DEEPEP_SMS;
	c->ns = cs_coll_dispatch_ns(&sc->cluster, &sc->coll, op->comm_bytes, sc->model.top_k,
				    sc->parallel.moe_node_limit, per, domains);
}

/* Convert a model op list into a fragment: merge consecutive compute ops;
 * drop collectives whose group has one member. */
/* The segment *cur gains `kernels` kernels lasting `ns` after its first
 * `before` ns: the host lead they need, and the kernels now issued. */
static void add_need(const cs_builder *b, cs_frag_item *cur, double *issued, int64_t before, double kernels,
		     int64_t ns, bool first)
{
	int64_t need = cs__host_need(b->launch_ns, *issued, before, kernels, ns);
	if (first || need > cur->need)
		cur->need = need;
	*issued += kernels;
}

static int frag_from_ops(cs_frag *f, const cs_builder *b, const cs_layer_op *ops, int n)
{
	cs_frag_item cur = { 0 };
	int have = 0;
	double issued = 0.0; /* kernels of the segment issued before the op */
	for (int i = 0; i < n; i++) {
		const cs_layer_op *op = &ops[i];
		if (op->host_sync && b->launch_ns > 0.0) {
			cs_frag_item y = { .is_sync = 1 };
			if ((have && frag_push(f, &cur)) || frag_push(f, &y))
				return -1;
			have = 0;
		}
		if (op->cls == CS_OPC_COMM) {
			int64_t deg = op->expert_tp                 ? b->ctx.etp
				      : op->comm_kind == CS_COMM_CP ? b->sc->parallel.cp
				      : op->comm_kind == CS_COMM_EP ? b->sc->parallel.ep
								    : b->sc->parallel.tp;
			if (deg <= 1)
				continue;
			cs_frag_item c = { .is_comm = 1,
					   .comm = (uint8_t)op->comm_kind,
					   .group = (uint8_t)(op->expert_tp ? CS_GROUP_ETP
									    : comm_group(op->comm_kind)),
					   .coll = (uint8_t)op->coll,
					   .bytes = op->comm_bytes };
			int ub = cs__ub_comm(b, ops, n, i, &c);
			if (ub == 1) /* folded into the GEMM beside it */
				continue;
			if (op->comm_kind == CS_COMM_EP && !op->expert_tp &&
			    b->sc->parallel.moe_dispatcher == CS_MOE_DEEPEP)
				deepep(b, op, &c);
			if (have && frag_push(f, &cur))
				return -1;
			have = 0;
			if (frag_push(f, &c))
				return -1;
			continue;
		}
		if (!have) {
			memset(&cur, 0, sizeof(cur));
			have = 1;
			issued = 0.0;
		}
		int64_t before = cur.ns;
		int32_t kbefore = cur.kernels;
		if (cs__ub_gemm(b, ops, n, i, &cur)) { /* its chunks' host lead as well */
			add_need(b, &cur, &issued, before, (double)(cur.kernels - kbefore), cur.ns - before,
				 kbefore == 0);
			continue;
		}
		int64_t ns = cs__time_op(b, op, cur.class_ns, cur.class_kernels, &cur.spare);
		cs_compute_kind kind = cs_compute_op_class(op);
		double k = (op->kernels > 0 ? op->kernels : 1) *
			   (b->calib.has_kernels[kind] ? b->calib.kernels[kind] : 1.0);
		add_need(b, &cur, &issued, before, k, ns, kbefore == 0);
		cur.ns = cs_time_add(cur.ns, ns);
		cur.kernels += op->kernels > 0 ? op->kernels : 1;
		cur.flops += op->flops;
	}
	if (have && frag_push(f, &cur))
		return -1;
	return 0;
}

typedef int (*ops_fn)(const cs_model_spec *, const cs_layer_ctx *, cs_pass, cs_layer_op *, int);

static int make_frag(cs_frag *f, cs_builder *b, int which, int moe, cs_pass pass)
{
	cs_layer_op ops[256];
	int n;
	if (which == CS_FRAG_BLOCK)
		n = cs_model_block_ops(&b->sc->model, &b->ctx, moe, pass, ops, 256);
	else if (which == CS_FRAG_EMBED)
		n = cs_model_embed_ops(&b->sc->model, &b->ctx, pass, ops, 256);
	else
		n = cs_model_head_ops(&b->sc->model, &b->ctx, pass, ops, 256);
	if (n < 0 || n > 256)
		return -1;
	return frag_from_ops(f, b, ops, n);
}

int cs__make_frags(cs_builder *b)
{
	for (int w = 0; w < CS_FRAG_KINDS; w++)
		for (int moe = 0; moe < 2; moe++)
			for (int pass = 0; pass < 4; pass++) {
				if (w != CS_FRAG_BLOCK && moe)
					continue;
				if (make_frag(&b->frag[w][moe][pass], b, w, moe, (cs_pass)pass))
					return -1;
			}
	/* each layer's recompute pass as the policy gives it */
	cs_recompute own = b->ctx.recompute;
	int bad = 0;
	for (int moe = 0; moe < 2 && !bad; moe++)
		for (int rc = 0; rc < 3 && !bad; rc++) {
			b->ctx.recompute = (cs_recompute)rc;
			bad = make_frag(&b->rc_frag[moe][rc], b, CS_FRAG_BLOCK, moe, CS_PASS_RECOMPUTE);
		}
	b->ctx.recompute = own;
	return bad ? -1 : 0;
}

void cs__free_frags(cs_builder *b)
{
	for (int w = 0; w < CS_FRAG_KINDS; w++)
		for (int moe = 0; moe < 2; moe++)
			for (int pass = 0; pass < 4; pass++)
				free(b->frag[w][moe][pass].items);
	for (int moe = 0; moe < 2; moe++)
		for (int rc = 0; rc < 3; rc++)
			free(b->rc_frag[moe][rc].items);
}

/* ---- emission --------------------------------------------------------- */

/* Emit one fragment on the current template. Extra dependencies in
 * b->pending apply to its first compute segment. */
int cs__emit_frag(cs_builder *b, const cs_frag *f, cs_phase phase, int layer, int micro)
{
	return cs__emit_frag_range(b, f, 0, f->n, phase, layer, micro);
}

int cs__frag_cut(const cs_frag *f, int from)
{
	for (int i = from; i < f->n; i++) {
		const cs_frag_item *it = &f->items[i];
		if (it->is_comm && it->comm == CS_COMM_EP && it->coll == CS_COLL_ALL_TO_ALL) {
			while (i < f->n && f->items[i].is_comm)
				i++;
			return i;
		}
	}
	return f->n;
}

int cs__emit_frag_range(cs_builder *b, const cs_frag *f, int from, int to, cs_phase phase, int layer,
			int micro)
{
	cs_program *p = b->prog;
	int32_t deferred = 0; /* a collective whose result the segment after next consumes */
	cs_stream deferred_stream = CS_STREAM_TP;
	for (int i = from; i < to; i++) {
		const cs_frag_item *it = &f->items[i];
		if (it->is_sync) {
			cs__host_sync(b);
			continue;
		}
		if (it->is_comm) {
			cs_stream s = comm_stream(it->comm);
			cs_op op = { .kind = CS_OP_COLL,
				     .group = it->group,
				     .coll = it->coll,
				     .comm = it->comm,
				     .bytes = it->bytes,
				     .ns = it->ub ? it->ns : 0,
				     .ub = it->ub,
				     .sms = it->sms,
				     .phase = CS_PHASE_COMM,
				     .vstage = (int16_t)b->vstage,
				     .layer = (int16_t)layer,
				     .micro = micro };
			cs_dep d = { .counter = CS_STREAM_COMPUTE, .value = p->nops[CS_STREAM_COMPUTE] };
			int32_t mark = cs_program_add(p, s, &op, &d, 1);
			if (mark < 0)
				return -1;
			int overlap = it->ub ? it->ub_overlap
					     : it->coll == CS_COLL_SEND_RECV ||
						       (it->comm == CS_COMM_TP && b->sc->parallel.tp_overlap);
			if (overlap) {
				/* the next segment runs alongside; the one after waits */
				if (deferred)
					cs__pending(b, deferred_stream, deferred);
				deferred = mark;
				deferred_stream = s;
			} else {
				cs__pending(b, s, mark);
			}
			continue;
		}
		cs_op op = { .kind = CS_OP_COMPUTE,
			     .ns = it->ns,
			     .attn_ns = it->class_ns[CS_COMPUTE_ATTN],
			     .phase = (uint8_t)phase,
			     .vstage = (int16_t)b->vstage,
			     .layer = (int16_t)layer,
			     .micro = micro };
		if (b->mem_alloc != 0) {
			op.mem = b->mem_alloc;
			b->mem_alloc = 0;
		}
		if (cs__add_segment(b, &op, it->class_ns, it->class_kernels, it->kernels, it->spare,
				    it->need) < 0)
			return -1;
		b->flops += it->flops;
		if (deferred) {
			cs__pending(b, deferred_stream, deferred);
			deferred = 0;
		}
	}
	if (deferred)
		cs__pending(b, deferred_stream, deferred);
	return 0;
}

int64_t cs__time_op(const cs_builder *b, const cs_layer_op *op, int64_t *class_ns, int64_t *class_kernels,
		    double *spare)
{
	int64_t ns = cs_compute_op_ns(&b->cm, op);
	*spare += (double)ns * cs_compute_op_spare_w(&b->cm, op);
	cs_compute_kind k = cs_compute_op_class(op);
	class_ns[k] = cs_time_add(class_ns[k], ns);
	class_kernels[k] += op->kernels > 0 ? op->kernels : 1;
	return ns;
}

/*
 * The host issues a template's kernels in order, `launch_ns` each, starting
 * with the GPU at the template's start. A segment lasting D on the GPU
 * cannot end before any of its kernels is issued plus the GPU time from
 * that kernel to the segment's end: with the host issuing the segment's
 * first kernel at h, it ends no sooner than h + need + D, where need =
 * max_j (L K_j - D_j), K_j the kernels issued up to kernel j, D_j the GPU
 * time before it (each op's kernels equal shares of its time; the
 * fragment computes it, one op's is its first or last kernel's). So the GPU
 * idles when the host falls behind, at the start of a template, after a
 * host synchronisation (build_edges.c) or inside a segment where short
 * kernels follow long ones, and only then
 * (cross-stream waits are not counted, which can only overstate the idle).
 * A calibration adds the kernels its framework launches beyond the model's
 * (per class, rounded per segment) and a gap on the GPU after each kernel.
 */
int64_t cs__host_need(double launch_ns, double issued, int64_t before, double kernels, int64_t ns)
{
	double L = launch_ns, d = (double)before;
	double first = L * (issued + 1.0) - d;
	double last =
		L * (issued + kernels) - (d + (kernels > 1.0 ? (double)ns * (1.0 - 1.0 / kernels) : 0.0));
	return (int64_t)ceil(fmax(first, last));
}

int cs__add_kernel(cs_builder *b, const cs_layer_op *op, cs_phase phase, int vstage, int layer, int micro)
{
	int64_t class_ns[CS_COMPUTE_KINDS] = { 0 }, class_kernels[CS_COMPUTE_KINDS] = { 0 };
	double spare = 0.0;
	cs_op o = { .kind = CS_OP_COMPUTE,
		    .ns = cs__time_op(b, op, class_ns, class_kernels, &spare),
		    .phase = (uint8_t)phase,
		    .vstage = (int16_t)vstage,
		    .layer = (int16_t)layer,
		    .micro = micro };
	return cs__add_compute(b, &o, class_ns, class_kernels, op->kernels > 0 ? op->kernels : 1, spare) < 0
		       ? -1
		       : 0;
}

int32_t cs__add_compute(cs_builder *b, cs_op *op, const int64_t *class_ns, const int64_t *class_kernels,
			int32_t kernels, double spare)
{
	return cs__add_segment(b, op, class_ns, class_kernels, kernels, spare, -1);
}

int32_t cs__add_segment(cs_builder *b, cs_op *op, const int64_t *class_ns, const int64_t *class_kernels,
			int32_t kernels, double spare, int64_t need)
{
	int64_t idle = 0, scaled[CS_COMPUTE_KINDS];
	bool rescale = false;
	for (int c = 0; c < CS_COMPUTE_HOST; c++)
		rescale |= b->calib.has_kernels[c];
	if (rescale) {
		kernels = 0;
		for (int c = 0; c < CS_COMPUTE_HOST; c++) {
			scaled[c] = llround((double)class_kernels[c] * b->calib.kernels[c]);
			kernels += (int32_t)scaled[c];
		}
		class_kernels = scaled;
	}
	if (b->gap_ns > 0.0 && kernels > 0)
		idle = cs_time_of((double)kernels * b->gap_ns); /* the GPU's own gaps */
	if (b->launch_ns > 0.0 && kernels > 0) {
		if (need < 0) /* one op */
			need = cs__host_need(b->launch_ns, 0.0, 0, (double)kernels, op->ns);
		int64_t host_end = cs_time_add(b->host_cpu + need, op->ns);
		b->host_cpu += (int64_t)((double)kernels * b->launch_ns + 0.5);
		int64_t end = cs_time_add(b->host_gpu, cs_time_add(op->ns, idle));
		if (host_end > end) {
			idle += host_end - end;
			end = host_end;
		}
		b->host_gpu = end;
	}
	op->ns = cs_time_add(op->ns, idle);
	if (b->cm.clock) { /* the host's idle leaves the idle GPU's share */
		spare += (double)idle * (b->cm.clock->cap_w - b->cm.clock->idle_w);
		op->gemm_ns = class_ns[CS_COMPUTE_GEMM];
		op->spare = spare;
		b->prog->spare += spare;
	}
	int32_t mark = cs_program_add(b->prog, CS_STREAM_COMPUTE, op, b->pending, b->npending);
	if (mark < 0)
		return -1;
	b->npending = 0;
	for (int c = 0; c < CS_COMPUTE_HOST; c++) {
		b->prog->class_ns[c] = cs_time_add(b->prog->class_ns[c], class_ns[c]);
		b->prog->class_kernels[c] += class_kernels[c];
	}
	b->prog->class_ns[CS_COMPUTE_HOST] = cs_time_add(b->prog->class_ns[CS_COMPUTE_HOST], idle);
	return mark;
}

void cs__pending(cs_builder *b, int counter, int32_t value)
{
	for (int i = 0; i < b->npending; i++)
		if (b->pending[i].counter == (uint8_t)counter) {
			if (b->pending[i].value < value)
				b->pending[i].value = value;
			return;
		}
	if (b->npending < CS_MAX_PENDING)
		b->pending[b->npending++] = (cs_dep){ .counter = (uint8_t)counter, .value = value };
}
