/*
 * model_ends.c - the ops before the first block (embedding, learned
 * positions) and after the last (final norm, LM head, loss).
 *
 * Both are vocab-parallel under TP (Megatron): each rank holds V/tp rows of
 * the embedding, so the embedding output is a partial sum (all-reduce, or a
 * reduce-scatter with sequence parallelism); the LM head is column-parallel
 * over the vocabulary and the cross-entropy reduces its max, target logit
 * and sum of exponentials over the TP group (three small all-reduces of one
 * fp32 per token). The loss reads the 16-bit logits and writes fp32
 * softmax values.
 */
#include "model/model_ops.h"

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"

int cs_model_embed_ops(const cs_model_spec *m, const cs_layer_ctx *c, cs_pass pass,
                       cs_layer_op *out, int cap)
{
	cs__oplist l = { out, out ? cap : 0, 0 };
	cs__dims d;
	cs__dims_init(&d, m, c);
	bool tp_on = c->tp > 1, sp = tp_on && c->sequence_parallel;
	double act = d.tokens * d.h * d.ab;

	switch (pass) {
	case CS_PASS_FWD:
		cs__membound(&l, "embed", 2.0 * act);
		if (tp_on)
			cs__comm(&l, sp ? "tp_rs_embed" : "tp_ar_embed", CS_COMM_TP,
				 sp ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE, act);
		if (m->arch == CS_ARCH_GPT)
			cs__membound(&l, "pos_embed", 3.0 * d.norm_tokens * d.h * d.ab);
		break;
	case CS_PASS_BWD_INPUT:
		if (sp)
			cs__comm(&l, "sp_ag_embed_bwd", CS_COMM_TP, CS_COLL_ALL_GATHER, act);
		break;
	case CS_PASS_BWD_WEIGHT:
		/* scatter-add of the output gradient into the table rows */
		cs__membound(&l, "embed_wgrad", 3.0 * act);
		break;
	case CS_PASS_RECOMPUTE:
		break;
	}
	return l.n;
}

int cs_model_head_ops(const cs_model_spec *m, const cs_layer_ctx *c, cs_pass pass,
                      cs_layer_op *out, int cap)
{
	cs__oplist l = { out, out ? cap : 0, 0 };
	cs__dims d;
	cs__dims_init(&d, m, c);
	bool tp_on = c->tp > 1, sp = tp_on && c->sequence_parallel;
	double act = d.tokens * d.h * d.ab;
	double v = (double)m->vocab / d.tp;
	double logits = d.tokens * v;

	switch (pass) {
	case CS_PASS_FWD:
		cs__membound(&l, "final_norm", 2.0 * d.norm_tokens * d.h * d.ab);
		if (sp)
			cs__comm(&l, "sp_ag_head", CS_COMM_TP, CS_COLL_ALL_GATHER, act);
		cs__gemm(&l, "lm_head", d.tokens, v, d.h, 1, d.ab, d.wb);
		cs__membound(&l, "loss", logits * (d.ab + 4.0));
		if (tp_on) {
			double f = d.tokens * 4.0;
			cs__comm(&l, "tp_ar_loss_max", CS_COMM_TP, CS_COLL_ALL_REDUCE, f);
			cs__comm(&l, "tp_ar_loss_logit", CS_COMM_TP, CS_COLL_ALL_REDUCE, f);
			cs__comm(&l, "tp_ar_loss_sum", CS_COMM_TP, CS_COLL_ALL_REDUCE, f);
		}
		break;
	case CS_PASS_BWD_INPUT:
		cs__membound(&l, "loss_bwd", logits * (4.0 + d.ab));
		cs__gemm(&l, "lm_head_dgrad", d.tokens, d.h, v, 1, d.ab, d.wb);
		if (tp_on)
			cs__comm(&l, sp ? "tp_rs_head_bwd" : "tp_ar_head_bwd", CS_COMM_TP,
				 sp ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE, act);
		cs__membound(&l, "final_norm_bwd", 3.0 * d.norm_tokens * d.h * d.ab);
		break;
	case CS_PASS_BWD_WEIGHT:
		cs__gemm(&l, "lm_head_wgrad", d.h, v, d.tokens, 1, d.ab, d.ab);
		if (c->grad_accum_bytes > 0.0)
			cs__membound(&l, "grad_accum", d.h * v * c->grad_accum_bytes);
		break;
	case CS_PASS_RECOMPUTE:
		break;
	}
	return l.n;
}
