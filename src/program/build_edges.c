/*
 * build_edges.c - the work of a training step around forward and backward
 * (training.step_edges, training.grad_clip).
 *
 * Megatron-LM (training.py train_step, core/distributed, core/optimizer,
 * pretrain_gpt.py loss_func):
 *  - the step starts by zeroing the gradient buffer (one fill kernel);
 *  - after each micro-batch's loss on the last stage: with context
 *    parallelism the loss is all-reduced over the CP group (the backward
 *    uses it); it is checked for NaN and for Inf, two host
 *    synchronisations (rerun_state_machine.validate_result evaluates
 *    torch.isnan / torch.isinf of a GPU tensor on the host); the reporting
 *    copy is all-reduced over the data-parallel group, which nothing waits
 *    for but the step's end;
 *  - before each gradient bucket's reduction, its norm is taken and checked
 *    the same way (check_grads), two more synchronisations;
 *  - fp16: the gradients are unscaled and checked for inf, the flag
 *    all-reduced and read on the host;
 *  - with clipping, the norm of the local gradients (multi_tensor_l2norm),
 *    its all-reduce over the model-parallel group (the whole world under
 *    the distributed optimizer), read on the host (.item()), then the scale
 *    (multi_tensor_scale; Megatron runs it when the norm exceeds the limit,
 *    counted here as always).
 * PyTorch and FSDP (torch.nn.utils.clip_grad_norm_, torchtitan): gradients
 * set to None rather than zeroed, the loss kept on the GPU, no host
 * synchronisation; the norm all-reduced over each sharded or model-parallel
 * group, the clipping coefficient computed and applied on the GPU.
 *
 * A synchronisation drains the GPU's queue: the host resumes `sync_ns`
 * after the GPU's last kernel, and the kernels it launches next reach the
 * GPU after their launch (cs__add_compute's host model).
 */
#include "coll/coll_op.h"
#include "program/build_int.h"

enum { LOSS_BYTES = 8, NORM_BYTES = 4 }; /* fp32 [loss, tokens]; one fp32 */

static int megatron(const cs_builder *b) { return b->sc->training.framework == CS_FW_MEGATRON; }

void cs__host_sync(cs_builder *b)
{
	if (b->launch_ns <= 0.0)
		return; /* no host model */
	if (b->host_cpu < b->host_gpu)
		b->host_cpu = b->host_gpu;
	b->host_cpu += (int64_t)(b->sync_ns + 0.5);
}

static int64_t group_size(const cs_builder *b, cs_group_kind g)
{
	int64_t rank = cs_mesh_pp_peer(b->mesh, 0, b->stage);
	cs_group grp = cs_mesh_group(b->mesh, g, rank, cs_cluster_shard_unit(&b->sc->cluster));
	return cs_group_size(&grp);
}

static int add_kernel(cs_builder *b, const cs_layer_op *op, cs_phase phase, int micro)
{
	return cs__add_kernel(b, op, phase, (int)b->vstage, -1, micro);
}

int32_t cs__all_reduce(cs_builder *b, cs_stream s, cs_group_kind g, cs_comm_kind comm, double bytes,
		       int micro)
{
	if (group_size(b, g) <= 1)
		return 0;
	cs_op o = { .kind = CS_OP_COLL,
		    .group = (uint8_t)g,
		    .coll = CS_COLL_ALL_REDUCE,
		    .comm = (uint8_t)comm,
		    .bytes = bytes,
		    .phase = CS_PHASE_COMM,
		    .vstage = (int16_t)b->vstage,
		    .layer = -1,
		    .micro = micro };
	cs_dep d = { .counter = CS_STREAM_COMPUTE, .value = b->prog->nops[CS_STREAM_COMPUTE] };
	return cs_program_add(b->prog, s, &o, &d, 1);
}

/* A NaN and an Inf check of a scalar on the host: a tiny kernel and a
 * synchronisation each. */
static int host_checks(cs_builder *b, cs_phase phase, int micro)
{
	cs_layer_op chk = { .name = "nan_check",
			    .cls = CS_OPC_MEMBOUND,
			    .mem = CS_MEM_ACT,
			    .bytes = 2.0 * NORM_BYTES,
			    .kernels = 1 };
	for (int i = 0; i < 2; i++) {
		if (add_kernel(b, &chk, phase, micro))
			return -1;
		cs__host_sync(b);
	}
	return 0;
}

int cs__edges_begin(cs_builder *b)
{
	if (!b->sc->training.step_edges || !megatron(b))
		return 0;
	cs_layer_op z = cs_model_grad_zero_op(cs__dp_grad_buffer_params(b), b->sc->training.grad_dtype);
	b->vstage = -1;
	return add_kernel(b, &z, CS_PHASE_OPTIM, -1);
}

int cs__edges_loss(cs_builder *b, int64_t micro)
{
	if (!b->sc->training.step_edges || !megatron(b))
		return 0;
	int32_t mk = cs__all_reduce(b, CS_STREAM_CP, CS_GROUP_CP, CS_COMM_CP, LOSS_BYTES, (int)micro);
	if (mk < 0)
		return -1;
	if (mk > 0)
		cs__pending(b, CS_STREAM_CP, mk);
	if (host_checks(b, CS_PHASE_FWD, (int)micro))
		return -1;
	return cs__all_reduce(b, CS_STREAM_DP, CS_GROUP_DP, CS_COMM_DP, LOSS_BYTES, (int)micro) < 0 ? -1 : 0;
}

int cs__edges_bucket(cs_builder *b, double bytes)
{
	if (!b->sc->training.step_edges || !megatron(b))
		return 0;
	cs_layer_op n = { .name = "bucket_norm",
			  .cls = CS_OPC_MEMBOUND,
			  .mem = CS_MEM_COPY,
			  .bytes = bytes,
			  .flops = 2.0 * bytes / cs_model_dtype_bytes(b->sc->training.grad_dtype),
			  .kernels = 2 };
	if (add_kernel(b, &n, CS_PHASE_BWD_W, -1))
		return -1;
	return host_checks(b, CS_PHASE_BWD_W, -1);
}

/* The group a gradient statistic (norm, inf flag) is summed over, under
 * Megatron: the model-parallel ranks, or every rank when the optimizer is
 * sharded (get_grad_stats_parallel_group). */
static cs_group_kind stats_group(const cs_builder *b)
{
	return b->sc->parallel.sharding == CS_SHARD_NONE ? CS_GROUP_MP : CS_GROUP_WORLD;
}

/* Sum a gradient statistic: Megatron's one all-reduce, read on the host;
 * PyTorch's over each group the gradients are split along. */
static int reduce_stat(cs_builder *b)
{
	if (megatron(b)) {
		int32_t mk = cs__all_reduce(b, CS_STREAM_DP, stats_group(b), CS_COMM_DP, NORM_BYTES, -1);
		if (mk < 0)
			return -1;
		if (mk > 0)
			cs__pending(b, CS_STREAM_DP, mk);
		cs__host_sync(b);
		return 0;
	}
	cs_sharding sh = b->sc->parallel.sharding;
	cs_group_kind groups[3] = { sh == CS_SHARD_HYBRID ? CS_GROUP_DP_INTRA : CS_GROUP_DP, CS_GROUP_TP,
				    CS_GROUP_PP };
	for (int i = sh == CS_SHARD_NONE ? 1 : 0; i < 3; i++) {
		int32_t mk = cs__all_reduce(b, CS_STREAM_DP, groups[i], CS_COMM_DP, NORM_BYTES, -1);
		if (mk < 0)
			return -1;
		if (mk > 0)
			cs__pending(b, CS_STREAM_DP, mk);
	}
	return 0;
}

int cs__edges_update(cs_builder *b, int64_t params)
{
	const cs_training_spec *t = &b->sc->training;
	if (!t->step_edges)
		return 0;
	b->vstage = -1;
	if (megatron(b) && t->precision == CS_PREC_FP16) {
		/* _amp_foreach_non_finite_check_and_unscale_: read and write */
		cs_layer_op u = cs_model_grad_scale_op(params, t->grad_dtype, t->framework);
		u.name = "grad_unscale";
		if (add_kernel(b, &u, CS_PHASE_OPTIM, -1) || reduce_stat(b))
			return -1;
	}
	if (!t->grad_clip)
		return 0;
	cs_layer_op n = cs_model_grad_norm_op(params, t->grad_dtype, t->framework);
	cs_layer_op s = cs_model_grad_scale_op(params, t->grad_dtype, t->framework);
	if (add_kernel(b, &n, CS_PHASE_OPTIM, -1) || reduce_stat(b))
		return -1;
	return add_kernel(b, &s, CS_PHASE_OPTIM, -1);
}
