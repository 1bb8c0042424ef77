/*
 * build_ubuf.c - tensor-parallel overlap as Transformer Engine's
 * userbuffers run it (parallelism.tp_overlap with tp_overlap_model
 * userbuffers; docs/compute-model.md, "Userbuffers").
 *
 * Each TP GEMM of a block has a method, after TE's initialize_ub
 * (transformer_engine/pytorch/module/base.py) and the layer configs NeMo
 * names (docs/references.md):
 *  - ring_exchange: the all-gather before a GEMM, or the reduce-scatter
 *    after it, as tp chunks of M/tp rows, each GEMM chunk computed while the
 *    next chunk crosses NVLink by copy engine: c + (tp - 1) max(c, x), and
 *    after a reduce-scatter the sum of the tp received chunks; aggregated
 *    (an all-gather), one chunk's hop to the pair's other rank, then tp/2
 *    steps of two chunks;
 *  - pipeline: the GEMM in num_splits chunks along M, each chunk's
 *    reduce-scatter by a userbuffers kernel on num_sm SMs beside the next
 *    chunk; the last chunk's, on 32 SMs (TE's UB_MAX_SM), exposed;
 *  - bulk: the reduce-scatter of a dgrad output as a userbuffers kernel on
 *    num_sm SMs beside the compute that follows.
 * A GEMM given an SM margin runs on SMs - num_sm throughout, at the measured
 * rate of a GEMM loop beside a kernel holding that many SMs without
 * traffic; a GEMM sharing its SMs with a userbuffers kernel runs at the
 * profile's contention rate (a holder that also copies memory).
 */
#include <math.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/coll_op.h"
#include "core/sim.h"
#include "hw/kprof.h"
#include "model/compute.h"
#include "program/build_int.h"

enum { M_BULK, M_PIPELINE, M_RING };

/* The layers of TE's table; qkv_dgrad and fc1_dgrad (the bulk all-gather
 * of a wgrad input beside the dgrad GEMM) are listed but not modelled:
 * the block's op list has no such all-gather. */
enum {
	QKV_FPROP,
	PROJ_FPROP,
	FC1_FPROP,
	FC2_FPROP,
	PROJ_DGRAD,
	FC2_DGRAD,
	QKV_WGRAD,
	FC1_WGRAD,
	QKV_DGRAD,
	FC1_DGRAD,
	LAYERS
};

typedef struct ub_cfg {
	uint8_t method, num_sm, num_splits, margin;
	uint8_t aggregate; /* ring exchange of an all-gather: two chunks a step */
} ub_cfg;

/* clang-format off */
#define RING(sm, mg) { M_RING, sm, 0, mg, 0 }
#define RING2(sm, mg) { M_RING, sm, 0, mg, 1 }
#define PIPE(sm, mg) { M_PIPELINE, sm, 4, mg, 0 }
#define BULK(sm) { M_BULK, sm, 0, 0, 0 }
/* clang-format on */

/* Indexed by cs_ub_config, then by layer. */
static const ub_cfg configs[CS_UB_CONFIGS][LAYERS] = {
	/* TE 1.10/1.11 without a config: ring_exchange on 1 SM (copy engine),
	 * pipeline 16 SMs in 4 splits, bulk 16 SMs, no margin */
	[CS_UB_TE_DEFAULT] = { RING(1, 0), PIPE(16, 0), RING(1, 0), PIPE(16, 0), RING(1, 0), RING(1, 0),
			       BULK(16), BULK(16), BULK(16), BULK(16) },
	/* NeMo userbuffers_bf16_h100_h12288_tp4_mbs1_seqlen2048 (GPT-3 175B) */
	[CS_UB_NEMO_H12288_TP4] = { RING(1, 0), PIPE(24, 1), RING(1, 0), RING(1, 1), RING(1, 0), RING(1, 0),
				    BULK(4), BULK(4), BULK(4), BULK(2) },
	/* NeMo userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192 (Llama 3 70B) */
	[CS_UB_NEMO_H8192_TP4] = { RING(1, 0), PIPE(24, 1), RING(1, 0), PIPE(16, 1), RING(1, 0), RING(1, 0),
				   BULK(24), BULK(4), BULK(4), BULK(2) },
	/* NeMo userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192 (Llama 3.1
	 * 405B; its ring exchanges aggregate two chunks a step) */
	[CS_UB_NEMO_H16384_TP8_CP2] = { RING2(1, 0), PIPE(24, 1), RING2(1, 0), PIPE(8, 1), RING2(1, 0),
					RING2(1, 0), BULK(24), BULK(2), BULK(2), BULK(2) },
	/* dgxc-benchmarking v24.11.1 nemo_megatron/gpt3_175b_hydra.yaml
	 * (fc2_dgrad aggregated) */
	[CS_UB_DGXC_GPT3_175B] = { RING(1, 0), PIPE(24, 1), RING(1, 0), PIPE(20, 1), RING(1, 0), RING2(1, 0),
				   BULK(8), BULK(4), BULK(4), BULK(2) },
};

/* TE's UB_MAX_SM: the SMs of a pipeline's last reduce-scatter chunk. */
#define UB_MAX_SM 32

/* The block's TP comm points as the model names them, the layer each is,
 * and the GEMM it feeds or follows (NULL: bulk, beside what follows). */
static const struct point {
	const char *comm, *gemm;
	int layer;
} points[] = {
	{ "sp_ag_attn", "qkv", QKV_FPROP },
	{ "tp_rs_attn", "out_proj", PROJ_FPROP },
	{ "sp_ag_mlp", "mlp_up", FC1_FPROP },
	{ "tp_rs_mlp", "mlp_down", FC2_FPROP },
	{ "sp_ag_mlp_bwd", "mlp_down_dgrad", FC2_DGRAD },
	{ "tp_rs_mlp_bwd", NULL, FC1_WGRAD },
	{ "sp_ag_attn_bwd", "out_proj_dgrad", PROJ_DGRAD },
	{ "tp_rs_attn_bwd", NULL, QKV_WGRAD },
};

enum { P_NONE, P_RING_AG, P_RING_RS, P_PIPE_RS, P_BULK };

static bool enabled(const cs_builder *b)
{
	const cs_parallel_spec *p = &b->sc->parallel;
	return p->tp_overlap && p->tp_overlap_model == CS_TPO_USERBUFFERS && p->tp > 1 &&
	       p->sequence_parallel;
}

static const ub_cfg *cfg_of(const cs_builder *b, int layer)
{
	int c = (int)b->sc->parallel.tp_overlap_config;
	return &configs[c >= 0 && c < CS_UB_CONFIGS ? c : CS_UB_TE_DEFAULT][layer];
}

static bool named(const cs_layer_op *op, const char *name) { return op->name && strcmp(op->name, name) == 0; }

/* What userbuffers make of ops[i], a TP collective; *layer its layer. An
 * all-gather is folded into the next GEMM (memory-bound kernels may come
 * between), a ring or pipeline reduce-scatter into the GEMM just before. */
static int classify(const cs_builder *b, const cs_layer_op *ops, int n, int i, int *layer)
{
	const cs_layer_op *op = &ops[i];
	if (!enabled(b) || op->cls != CS_OPC_COMM || op->comm_kind != CS_COMM_TP)
		return P_NONE;
	const struct point *pt = NULL;
	for (size_t k = 0; k < sizeof points / sizeof points[0]; k++)
		if (named(op, points[k].comm))
			pt = &points[k];
	if (!pt)
		return P_NONE;
	*layer = pt->layer;
	const ub_cfg *c = cfg_of(b, pt->layer);
	if (c->method == M_BULK || !pt->gemm)
		return op->coll == CS_COLL_REDUCE_SCATTER ? P_BULK : P_NONE;
	if (op->coll == CS_COLL_ALL_GATHER) {
		int j = i + 1;
		while (j < n && ops[j].cls == CS_OPC_MEMBOUND)
			j++;
		return j < n && ops[j].cls == CS_OPC_GEMM && named(&ops[j], pt->gemm) ? P_RING_AG : P_NONE;
	}
	if (op->coll != CS_COLL_REDUCE_SCATTER || i == 0 || ops[i - 1].cls != CS_OPC_GEMM ||
	    !named(&ops[i - 1], pt->gemm))
		return P_NONE;
	return c->method == M_RING ? P_RING_RS : P_PIPE_RS;
}

/* ---- rates and times ---------------------------------------------------- */

double cs__ub_margin_rate(double sm_fraction)
{
	/* sm-hog.json, a GEMM loop beside a resident kernel that holds k of
	 * 132 SMs and sleeps: 584.9 (k = 16) and 541.2 (k = 32) TF/s of 695.7
	 * alone; linear between, held beyond */
	static const double x[] = { 0.0, 16.0 / 132.0, 32.0 / 132.0 };
	static const double y[] = { 1.0, 584.9 / 695.7, 541.2 / 695.7 };
	if (!(sm_fraction > 0.0))
		return 1.0;
	for (int i = 1; i < 3; i++)
		if (sm_fraction <= x[i])
			return y[i - 1] + (y[i] - y[i - 1]) * (sm_fraction - x[i - 1]) / (x[i] - x[i - 1]);
	return y[2];
}

int64_t cs__ub_ring_ns(int64_t c, int64_t x, int steps)
{
	int64_t step = c > x ? c : x;
	return cs_time_add(c, (int64_t)(steps - 1) * step);
}

int64_t cs__ub_pipeline_ns(int64_t c, int64_t r, int splits, double rho)
{
	double t = (double)c, busy = t + (double)r; /* chunk 0 alone, then its RS */
	for (int i = 1; i < splits; i++) {
		double avail = busy - t, w = (double)c;
		t += w <= avail * rho ? w / rho : avail + (w - avail * rho);
		if (i < splits - 1)
			busy = (t > busy ? t : busy) + (double)r;
	}
	if (splits > 1 && busy > t)
		t = busy;
	return (int64_t)llround(t);
}

static double sms_of(const cs_builder *b)
{
	return b->sc->cluster.gpu.sms > 0 ? (double)b->sc->cluster.gpu.sms : 132.0;
}

/* Compute's rate beside a userbuffers kernel on k SMs: the profile's
 * contention curve scaled by collectives.contention, as the runner's. */
static double coresident_rate(const cs_builder *b, int k)
{
	return cs_kprof_contention_scaled(b->prof, (double)k / sms_of(b), b->sc->coll.contention);
}

/* B/ns a userbuffers transfer moves over NVLink: a kernel on `sms` SMs at
 * NCCL's per-channel speed each (one channel is one SM), a copy engine
 * (sms 0) at the GPU's NVLink bandwidth, neither beyond that. */
static double nvlink_bw(const cs_builder *b, int sms)
{
	cs_coll_spec spec = b->sc->coll;
	spec.scale_up_bw = b->calib.net[CS_CALIB_SCALE_UP_BW];
	double bus = cs_coll_nvlink_bw(&b->sc->cluster, &spec);
	double k = sms > 0 ? cs_coll_nvlink_channel_bw(&b->sc->cluster) * sms : bus;
	return k < bus ? k : bus;
}

static int64_t latency(const cs_builder *b)
{
	int64_t l = b->sc->cluster.scale_up.latency_ns;
	return l > 0 ? l : 0;
}

/* A reduce-scatter of `bytes` (the input per rank) by a kernel on `sms`. */
static int64_t rs_ns(const cs_builder *b, double bytes, int sms)
{
	double tp = (double)b->sc->parallel.tp;
	return cs_time_add(latency(b), (int64_t)llround(bytes * (tp - 1.0) / tp / nvlink_bw(b, sms)));
}

/* The bytes a userbuffers reduce-scatter moves: a pipelined one in fp8
 * buffers under the fp8 recipe (TE's initialize_ub gives fp8_buf to the
 * pipeline method's layers a config marks; the GEMM writes fp8 partial
 * sums, one byte per element of the 16-bit output). */
static double rs_bytes(const cs_builder *b, const cs_layer_op *op, int kind)
{
	const cs_scenario *sc = b->sc;
	bool fp8 = kind == P_PIPE_RS && sc->parallel.tp_overlap_fp8_buf &&
		   sc->training.precision == CS_PREC_FP8 && sc->training.fp8.comm;
	return fp8 ? op->comm_bytes / 2.0 : op->comm_bytes;
}

/* One chunk's hop to the next rank by copy engine. */
static int64_t hop_ns(const cs_builder *b, double bytes)
{
	return cs_time_add(latency(b), (int64_t)llround(bytes / nvlink_bw(b, 0)));
}

/* op's GEMM as `chunks` chunks along M: one chunk's op. */
static cs_layer_op chunk_op(const cs_layer_op *op, int chunks)
{
	cs_layer_op c = *op;
	double m = (double)op->m, n = (double)op->n, k = (double)op->k;
	double mc = ceil(m / chunks);
	c.m = (int64_t)mc;
	c.flops = op->flops * mc / m;
	c.bytes = op->bytes * (mc * k + k * n + mc * n) / (m * k + k * n + m * n);
	return c;
}

/* Add `ns` of op's class (kernels launched: `kernels`) to the segment. */
static void add_time(const cs_builder *b, cs_frag_item *cur, const cs_layer_op *op, int64_t ns, int kernels)
{
	cs_compute_kind k = cs_compute_op_class(op);
	cur->ns = cs_time_add(cur->ns, ns);
	cur->class_ns[k] = cs_time_add(cur->class_ns[k], ns);
	cur->class_kernels[k] += kernels;
	cur->kernels += kernels;
	cur->spare += (double)ns * cs_compute_op_spare_w(&b->cm, op);
}

/* ---- the builder's hooks ------------------------------------------------ */

int cs__ub_comm(const cs_builder *b, const cs_layer_op *ops, int n, int i, cs_frag_item *item)
{
	int layer = 0, kind = classify(b, ops, n, i, &layer);
	const cs_layer_op *op = &ops[i];
	if (kind == P_NONE)
		return 0;
	if (kind == P_RING_AG || kind == P_RING_RS)
		return 1;
	const ub_cfg *c = cfg_of(b, layer);
	*item = (cs_frag_item){ .is_comm = 1,
				.comm = (uint8_t)op->comm_kind,
				.group = CS_GROUP_TP,
				.coll = (uint8_t)op->coll,
				.bytes = op->comm_bytes,
				.ub = 1 };
	if (kind == P_BULK) { /* beside the compute that follows, on its SMs */
		item->ns = rs_ns(b, op->comm_bytes, c->num_sm);
		item->sms = c->num_sm;
		item->ub_overlap = 1;
	} else { /* the pipeline's last chunk, exposed */
		int splits = c->num_splits > 0 ? c->num_splits : 1;
		item->bytes = rs_bytes(b, op, kind) / splits;
		item->ns = rs_ns(b, item->bytes, UB_MAX_SM);
		item->sms = UB_MAX_SM;
	}
	return 2;
}

bool cs__ub_gemm(const cs_builder *b, const cs_layer_op *ops, int n, int j, cs_frag_item *cur)
{
	const cs_layer_op *g = &ops[j];
	int layer = 0, kind = P_NONE, at = j - 1;
	if (g->cls != CS_OPC_GEMM || !enabled(b))
		return false;
	while (at >= 0 && ops[at].cls == CS_OPC_MEMBOUND)
		at--;
	if (at >= 0 && ops[at].cls == CS_OPC_COMM && classify(b, ops, n, at, &layer) == P_RING_AG)
		kind = P_RING_AG;
	else if (j + 1 < n && ops[j + 1].cls == CS_OPC_COMM)
		kind = classify(b, ops, n, j + 1, &layer);
	if (kind != P_RING_AG && kind != P_RING_RS && kind != P_PIPE_RS)
		return false;
	const ub_cfg *c = cfg_of(b, layer);
	const cs_layer_op *comm = kind == P_RING_AG ? &ops[at] : &ops[j + 1];
	double margin = c->margin ? cs__ub_margin_rate((double)c->num_sm / sms_of(b)) : 1.0;
	int tp = (int)b->sc->parallel.tp;
	bool pairs = kind == P_RING_AG && c->aggregate && tp % 2 == 0;
	int chunks = kind == P_PIPE_RS ? (c->num_splits > 0 ? c->num_splits : 1) : pairs ? tp / 2 : tp;
	cs_layer_op ch = chunk_op(g, chunks);
	int64_t cn = (int64_t)llround((double)cs_compute_op_ns(&b->cm, &ch) / margin);
	int64_t ns;
	if (kind == P_PIPE_RS) {
		int64_t r = rs_ns(b, rs_bytes(b, comm, kind) / chunks, c->num_sm);
		ns = cs__ub_pipeline_ns(cn, r, chunks, c->margin ? 1.0 : coresident_rate(b, c->num_sm));
	} else if (pairs) { /* the pair's exchange, then steps of two chunks */
		ns = cs_time_add(hop_ns(b, comm->comm_bytes / tp),
				 cs__ub_ring_ns(cn, hop_ns(b, comm->comm_bytes / chunks), chunks));
	} else {
		ns = cs__ub_ring_ns(cn, hop_ns(b, comm->comm_bytes / tp), tp);
	}
	add_time(b, cur, g, ns, chunks);
	cur->flops += g->flops;
	if (kind == P_RING_RS) { /* the tp chunks received, summed: read tp, write one */
		cs_layer_op sum = { .name = "ub_reduce",
				    .cls = CS_OPC_MEMBOUND,
				    .mem = CS_MEM_ADD,
				    .bytes = comm->comm_bytes / tp * (tp + 1),
				    .kernels = 1 };
		add_time(b, cur, &sum, cs_compute_op_ns(&b->cm, &sum), 1);
	}
	return true;
}
