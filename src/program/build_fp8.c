/*
 * build_fp8.c - the work Transformer Engine's fp8 recipe does beside its
 * GEMMs and casts (training.precision fp8, training.fp8; the casts
 * themselves are the model's, model_block.c).
 *
 * Delayed scaling (TE 1.10 pytorch/fp8.py, module/base.py,
 * common/recipe/delayed_scaling.cu; Megatron-core 0.9
 * transformer_block.py, parallel_state.py):
 *  - every fp8 module of an autocast region appends its amaxes to one
 *    buffer: per GEMM 3 forward (input, weight, output) and 2 backward
 *    (output gradient, input gradient) tensors; a dense layer's modules
 *    are QKV, the attention (DotProductAttention, 3 GEMMs), the
 *    out-projection, MLP-up and MLP-down; MoE experts are one grouped
 *    module per direction with a GEMM per local expert;
 *  - Megatron opens one region per TransformerBlock forward: each virtual
 *    stage's blocks for each micro-batch. On leaving it (forward) and at
 *    the end of its first module's backward (backward), TE concatenates
 *    the buffer (torch.cat, one kernel), all-reduces it with MAX over the
 *    amax reduction group (reduce_amax; Megatron's
 *    tensor-and-data-parallel group with CP: the stage's ranks) as a
 *    blocking torch.distributed call, so the compute stream waits, and
 *    updates every history and scale in one kernel (kernel_bulk: each
 *    history read and rolled in place);
 * Weights kept in fp8 (NeMo 2.0 core/optim/distributed_adam.py,
 * _check_params_shard_dtypes): after its update the optimizer casts its
 * shard of them to fp8 (read 2 bytes, write 1), and once per step copies
 * the scales, inverts them and all-reduces the weights' amaxes with MAX
 * over the data-parallel group (four multi-tensor copies, a reciprocal).
 * Under the block-scaled recipes the cast is cs_quant_recipe's; NVFP4's
 * per-tensor scales are agreed on as fp8's are, MXFP8 has none. The amax
 * bookkeeping of delayed scaling is fp8's alone: MXFP8 and NVFP4 scale
 * from the tensor being cast.
 */
#include "coll/coll_op.h"
#include "program/build_int.h"

enum { AMAX_BYTES = 4 }; /* fp32 */

static bool fp8_recipe(const cs_builder *b) { return b->sc->training.precision == CS_PREC_FP8; }

/* GEMMs and modules with fp8 state in `layer`. */
static void layer_fp8(const cs_builder *b, int64_t layer, double *gemms, double *modules)
{
	const cs_model_spec *m = &b->sc->model;
	*gemms = 5.0; /* QKV, the attention's 3, the out-projection */
	*modules = 3.0;
	if (cs_model_mla(m)) {
		/* the query's down and up projections (or its one), the key/value
		 * latent's down and up: a module each, in place of QKV */
		double q = m->q_lora_rank > 0 ? 2.0 : 1.0;
		*gemms = q + 2.0 + 3.0 + 1.0;
		*modules = q + 2.0 + 2.0;
	}
	if (cs_model_layer_is_moe(m, layer)) {
		double ep = (double)(b->sc->parallel.ep > 0 ? b->sc->parallel.ep : 1);
		double local = (double)m->experts / ep;
		*gemms += 2.0 * (local < 1.0 ? 1.0 : local);
		*modules += 2.0;
		if (m->shared_experts > 0) {
			*gemms += 2.0;
			*modules += 2.0;
		}
	} else {
		*gemms += 2.0;
		*modules += 2.0;
	}
}

double cs__fp8_amax_tensors(const cs_builder *b, int64_t first, int64_t n, int fwd, double *modules)
{
	double t = 0, mods = 0;
	for (int64_t l = first; l < first + n; l++) {
		double g, md;
		layer_fp8(b, l, &g, &md);
		t += (fwd ? 3.0 : 2.0) * g;
		mods += md;
	}
	if (modules)
		*modules = mods;
	return t;
}

int cs__fp8_amax(cs_builder *b, int64_t micro, int fwd)
{
	const cs_fp8_spec *f = &b->sc->training.fp8;
	if (!fp8_recipe(b) || f->amax == CS_AMAX_OFF)
		return 0;
	int64_t k = b->vstage;
	double modules = 0;
	double tensors = cs__fp8_amax_tensors(b, b->lay.first_layer[k], b->lay.nlayers[k], fwd, &modules);
	if (!(tensors > 0.0))
		return 0;
	cs_phase phase = fwd ? CS_PHASE_FWD : CS_PHASE_BWD;
	cs_layer_op cat = { .name = "fp8_amax_cat",
			    .cls = CS_OPC_MEMBOUND,
			    .mem = CS_MEM_COPY,
			    .bytes = 2.0 * tensors * AMAX_BYTES,
			    .kernels = 1 };
	if (cs__add_kernel(b, &cat, phase, (int)k, -1, (int)micro))
		return -1;
	if (f->amax == CS_AMAX_REDUCED) {
		const cs_parallel_spec *p = &b->sc->parallel;
		cs_comm_kind comm = p->dp * p->cp > 1 ? CS_COMM_DP : CS_COMM_TP;
		int32_t mk = cs__all_reduce(b, CS_STREAM_TP, CS_GROUP_STAGE, comm, tensors * AMAX_BYTES,
					    (int)micro);
		if (mk < 0)
			return -1;
		if (mk > 0)
			cs__pending(b, CS_STREAM_TP, mk);
	}
	/* each history read and written back one entry along, the scales
	 * and their inverses written */
	cs_layer_op upd = { .name = "fp8_amax_update",
			    .cls = CS_OPC_MEMBOUND,
			    .mem = CS_MEM_COPY,
			    .bytes = tensors * AMAX_BYTES * (2.0 * (double)f->amax_history + 3.0),
			    .kernels = 1 };
	return cs__add_kernel(b, &upd, phase, (int)k, -1, (int)micro);
}

int cs__fp8_param_update(cs_builder *b, double shard)
{
	cs_precision prec = b->sc->training.precision;
	if (!cs_prec_is_recipe(prec) || !b->sc->training.fp8.params || !(shard > 0.0))
		return 0;
	cs_quant q = cs_quant_recipe(prec, b->sc->cluster.gpu.arch);
	cs_layer_op cast = { .name = "fp8_param_cast",
			     .cls = CS_OPC_MEMBOUND,
			     .mem = CS_MEM_COPY,
			     .bytes = q.param_cast * shard,
			     .kernels = 1 };
	if (cs__add_kernel(b, &cast, CS_PHASE_OPTIM, -1, -1, -1))
		return -1;
	/* MXFP8's scales are each block's own: nothing to agree on */
	if (prec == CS_PREC_MXFP8)
		return 0;
	/* one scale and one amax per weight tensor: 4 of a dense layer, a
	 * grouped module's per expert */
	double weights = 0;
	for (int64_t k = 0; k < b->lay.vstages; k++) {
		if (!cs__runs_here(b, k))
			continue;
		weights += cs__fp8_amax_tensors(b, b->lay.first_layer[k], b->lay.nlayers[k], 1, NULL) / 3.0 -
			   3.0 * (double)b->lay.nlayers[k]; /* less the attention's GEMMs */
	}
	cs_layer_op scales = { .name = "fp8_param_scales",
			       .cls = CS_OPC_MEMBOUND,
			       .mem = CS_MEM_COPY,
			       .bytes = 5.0 * 2.0 * weights * AMAX_BYTES,
			       .kernels = 5 };
	if (cs__add_kernel(b, &scales, CS_PHASE_OPTIM, -1, -1, -1))
		return -1;
	int32_t mk = cs__all_reduce(b, CS_STREAM_DP, CS_GROUP_DP, CS_COMM_DP, weights * AMAX_BYTES, -1);
	if (mk < 0)
		return -1;
	if (mk > 0)
		cs__pending(b, CS_STREAM_DP, mk);
	return 0;
}
