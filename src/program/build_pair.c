/*
 * build_pair.c - a forward and a backward chunk of different micro-batches
 * run together, layer by layer, each one's expert-parallel all-to-alls
 * under the other's compute (parallelism.moe_a2a_overlap; Megatron-Core's
 * combined 1F1B, --overlap-moe-expert-parallel-comm:
 * models/common/model_chunk_schedule_plan.py,
 * TransformerLayerSchedulePlan.run).
 *
 * Megatron-Core pairs the forward's layer i with the backward's layer
 * n - 1 - i and orders a pair's work as
 *   comm:    combine_bwd          | dispatch_fwd, dispatch_bwd  | combine_fwd
 *   compute: attn_fwd, post_attn  | mlp_bwd, mlp_bwd_dw, mlp_fwd | post_attn_bwd, attn_bwd
 * Here each layer's pass is cut after each run of collectives holding an
 * all-to-all (cs__frag_cut) and the parts alternate, the backward's first:
 * a part's collectives are issued as soon as its compute is, and the other
 * chain's next part computes while they run. Each chain keeps its own
 * pending dependencies, so a part waits only for its own collectives and
 * messages. The backward's weight gradients follow its layer's last part
 * (Megatron-Core runs the experts' before the dispatch's backward); a dense
 * layer is one part, so its pair runs one after the other.
 */
#include <string.h>

#include "program/build_int.h"

typedef struct chain {
	cs_dep pending[CS_MAX_PENDING];
	int npending;
	int vstage;
	double mem_alloc;
} chain;

static void enter(cs_builder *b, const chain *c)
{
	memcpy(b->pending, c->pending, sizeof c->pending);
	b->npending = c->npending;
	b->vstage = c->vstage;
	b->mem_alloc = c->mem_alloc;
}

static void leave(const cs_builder *b, chain *c)
{
	memcpy(c->pending, b->pending, sizeof c->pending);
	c->npending = b->npending;
	c->vstage = b->vstage;
	c->mem_alloc = b->mem_alloc;
}

int cs__emit_pair(cs_builder *b, int64_t s, const cs_sched_op *x, const cs_sched_op *y)
{
	const cs_sched_op *f = x->kind == CS_SCHED_F ? x : y, *w = x->kind == CS_SCHED_F ? y : x;
	const cs_parallel_spec *p = &b->sc->parallel;
	int64_t kf = cs_sched_virtual_stage(p->schedule, b->lay.stages, b->lay.chunks, s, f->chunk);
	int64_t kb = cs_sched_virtual_stage(p->schedule, b->lay.stages, b->lay.chunks, s, w->chunk);
	chain cf, cb;
	leave(b, &cf);
	cb = cf; /* both wait for what was pending before them */
	cb.mem_alloc = 0.0;
	int last, rc = 0;
	enter(b, &cb);
	rc = cs__bwd_begin(b, s, w->micro, kb, w->kind, &last);
	leave(b, &cb);
	enter(b, &cf);
	rc = rc ? rc : cs__fwd_begin(b, s, f->micro, kf);
	leave(b, &cf);
	int64_t nf = b->lay.nlayers[kf], nb = b->lay.nlayers[kb];
	for (int64_t i = 0; !rc && (i < nf || i < nb); i++) {
		int64_t lf = b->lay.first_layer[kf] + i, lb = b->lay.first_layer[kb] + nb - 1 - i;
		const cs_frag *ff = i < nf ? cs__block_frag(b, lf, CS_PASS_FWD) : NULL;
		const cs_frag *fb = i < nb ? cs__block_frag(b, lb, CS_PASS_BWD_INPUT) : NULL;
		int at_f = 0, at_b = 0;
		while (!rc && (ff || fb)) {
			if (fb) {
				int to = cs__frag_cut(fb, at_b);
				enter(b, &cb);
				rc = cs__bwd_layer(b, kb, lb, w->micro, w->kind, last, at_b, to);
				leave(b, &cb);
				at_b = to;
				fb = to < fb->n ? fb : NULL;
			}
			if (ff && !rc) {
				int to = cs__frag_cut(ff, at_f);
				enter(b, &cf);
				rc = cs__fwd_layer(b, lf, f->micro, at_f, to);
				leave(b, &cf);
				at_f = to;
				ff = to < ff->n ? ff : NULL;
			}
		}
	}
	if (rc)
		return -1;
	enter(b, &cf);
	rc = cs__fwd_end(b, s, f->micro, kf);
	leave(b, &cf);
	enter(b, &cb);
	rc = rc ? rc : cs__bwd_end(b, s, w->micro, kb, w->kind, last);
	/* what follows the pair waits for both chains */
	for (int i = 0; i < cf.npending; i++)
		cs__pending(b, cf.pending[i].counter, cf.pending[i].value);
	return rc;
}

void cs__pair_warmup(cs_sched_op *ops, int64_t n)
{
	int64_t i = 0;
	while (i < n && ops[i].kind == CS_SCHED_F)
		i++;
	for (; i + 1 < n; i += 2) {
		if (ops[i].kind == CS_SCHED_F || ops[i + 1].kind != CS_SCHED_F)
			break;
		cs_sched_op t = ops[i];
		ops[i] = ops[i + 1];
		ops[i + 1] = t;
	}
}
