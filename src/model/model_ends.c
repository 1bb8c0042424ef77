/*
 * model_ends.c - the ops before the first block (embedding, learned
 * positions) and after the last (final norm, LM head, loss).
 *
 * Both are vocab-parallel under TP (Megatron): each rank holds V/tp rows of
 * the embedding, so the embedding output is a partial sum (all-reduce, or a
 * reduce-scatter with sequence parallelism); the LM head is column-parallel
 * over the vocabulary and the cross-entropy reduces its max, target logit
 * and sum of exponentials over the TP group (three small all-reduces of one
 * fp32 per token). The loss is an fp32 softmax cross-entropy, timed as the
 * measured `cross_entropy` kind (forward and backward together, half charged
 * to each pass) over its convention of 8 bytes per logit. Eager PyTorch
 * casts around the norm and the head weight as in a block (model_kernels.c)
 * and zero-fills the dense fp32 embedding gradient before scattering into
 * it.
 */
#include "model/model_ops.h"

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"

int cs_model_embed_ops(const cs_model_spec *m, const cs_layer_ctx *c, cs_pass pass, cs_layer_op *out, int cap)
{
	cs__oplist l = { out, out ? cap : 0, 0 };
	cs__dims d;
	cs__dims_init(&d, m, c);
	bool tp_on = c->tp > 1, sp = tp_on && c->sequence_parallel;
	double act = d.tokens * d.h * d.ab;

	switch (pass) {
	case CS_PASS_FWD:
		/* gather the rows (in the residual stream's precision) */
		cs__mem(&l, "embed", CS_MEM_COPY, 2.0 * d.tokens * d.h * d.rb, 1);
		if (tp_on)
			cs__comm(&l, sp ? "tp_rs_embed" : "tp_ar_embed", CS_COMM_TP,
				 sp ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE, act);
		if (cs_model_positions(m) == CS_POS_LEARNED)
			cs__mem(&l, "pos_embed", CS_MEM_ADD, 3.0 * d.norm_tokens * d.h * d.rb, 1);
		if (m->embedding_norm)
			cs__norm(&l, m, &d, "embed_norm", d.norm_tokens * d.h, false);
		break;
	case CS_PASS_BWD_INPUT:
		if (m->embedding_norm)
			cs__norm(&l, m, &d, "embed_norm_bwd", d.norm_tokens * d.h, true);
		if (sp)
			cs__comm(&l, "sp_ag_embed_bwd", CS_COMM_TP, CS_COLL_ALL_GATHER, act);
		break;
	case CS_PASS_BWD_WEIGHT: {
		/* scatter-add of the output gradient into the table rows */
		double rows = (double)m->vocab / d.tp * d.h;
		if (d.fw == CS_FW_PYTORCH)
			cs__mem(&l, "embed_grad_zero", CS_MEM_COPY, 4.0 * rows, 1);
		cs__mem(&l, "embed_wgrad", CS_MEM_COPY, 3.0 * d.tokens * d.h * d.rb, 1);
		if (d.fw == CS_FW_PYTORCH)
			cs__eager_accum(&l, c, rows);
		break;
	}
	case CS_PASS_RECOMPUTE: break;
	}
	return l.n;
}

int cs_model_head_ops(const cs_model_spec *m, const cs_layer_ctx *c, cs_pass pass, cs_layer_op *out, int cap)
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
		cs__norm(&l, m, &d, "final_norm", d.norm_tokens * d.h, false);
		if (sp)
			cs__comm(&l, "sp_ag_head", CS_COMM_TP, CS_COLL_ALL_GATHER, act);
		cs__cast_act(&l, &d, "final_norm_cast", d.tokens * d.h, false);
		cs__cast_weight(&l, &d, "lm_head_weight_cast", d.h * v, false);
		cs__gemm(&l, "lm_head", d.tokens, v, d.h, 1, d.ab, d.wb, CS_GEMM_NT);
		cs__mem(&l, "loss", CS_MEM_CROSS_ENTROPY, 0.5 * 8.0 * logits, 4);
		if (tp_on) {
			double f = d.tokens * 4.0;
			cs__comm(&l, "tp_ar_loss_max", CS_COMM_TP, CS_COLL_ALL_REDUCE, f);
			cs__comm(&l, "tp_ar_loss_logit", CS_COMM_TP, CS_COLL_ALL_REDUCE, f);
			cs__comm(&l, "tp_ar_loss_sum", CS_COMM_TP, CS_COLL_ALL_REDUCE, f);
		}
		break;
	case CS_PASS_BWD_INPUT:
		cs__mem(&l, "loss_bwd", CS_MEM_CROSS_ENTROPY, 0.5 * 8.0 * logits, 5);
		cs__gemm(&l, "lm_head_dgrad", d.tokens, d.h, v, 1, d.ab, d.wb, CS_GEMM_NN);
		if (tp_on)
			cs__comm(&l, sp ? "tp_rs_head_bwd" : "tp_ar_head_bwd", CS_COMM_TP,
				 sp ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE, act);
		cs__cast_act(&l, &d, "final_norm_cast_bwd", d.tokens * d.h, true);
		/* the last block's residual gradient starts here: no add */
		cs__mem(&l, "final_norm_bwd", CS_MEM_NORM_BWD, 3.0 * d.norm_tokens * d.h * d.rb, 2);
		break;
	case CS_PASS_BWD_WEIGHT:
		cs__gemm(&l, "lm_head_wgrad", d.h, v, d.tokens, 1, d.ab, d.ab, CS_GEMM_TN);
		cs__cast_weight(&l, &d, "lm_head_grad_cast", d.h * v, true);
		if (d.fw == CS_FW_PYTORCH)
			cs__eager_accum(&l, c, d.h * v);
		else if (c->grad_accum_bytes > 0.0)
			cs__mem(&l, "grad_accum", CS_MEM_GRAD_ACCUM, d.h * v * c->grad_accum_bytes, 1);
		break;
	case CS_PASS_RECOMPUTE: break;
	}
	return l.n;
}
