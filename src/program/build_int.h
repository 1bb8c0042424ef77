/*
 * build_int.h - state shared by build.c (pipeline and blocks) and
 * build_dp.c (data-parallel traffic). Private to src/program.
 */
#ifndef CS_PROGRAM_BUILD_INT_H
#define CS_PROGRAM_BUILD_INT_H

#include "model/compute.h"
#include "model/model.h"
#include "program/build.h"
#include "program/schedule.h"

/* A pass of a block, as the runner sees it: compute segments and collectives. */
typedef struct cs_frag_item {
	int64_t ns;                        /* compute segment: duration; userbuffers collective: its time */
	int64_t class_ns[CS_COMPUTE_HOST]; /* compute segment: duration by class */
	int64_t class_kernels[CS_COMPUTE_HOST]; /* compute segment: kernels by class */
	double spare;                           /* compute segment: W x ns it leaves under the power cap */
	int32_t kernels;                        /* compute segment: kernels launched */
	int64_t need; /* compute segment: the host's lead it needs, ns (cs__add_segment) */
	double flops;
	double bytes; /* collective: bytes per rank */
	uint8_t is_comm;
	uint8_t is_sync;    /* the host waits here for the GPU's queue to drain */
	uint8_t comm;       /* cs_comm_kind */
	uint8_t group;      /* collective: its cs_group_kind */
	uint8_t coll;       /* cs_coll_op */
	uint8_t ub;         /* collective: a userbuffers kernel (ns, sms), not NCCL's */
	uint8_t sms;        /* userbuffers collective: SMs it takes from compute beside it */
	uint8_t ub_overlap; /* userbuffers collective: the next segment runs beside it */
} cs_frag_item;

typedef struct cs_frag {
	cs_frag_item *items;
	int n, cap;
} cs_frag;

enum { CS_FRAG_BLOCK, CS_FRAG_EMBED, CS_FRAG_HEAD, CS_FRAG_KINDS };

/* Pseudo-layers for the gradients of the embedding and of the LM head. */
enum { CS_DP_EMBED = -1, CS_DP_HEAD = -2 };

#define CS_MAX_PENDING 8

typedef struct cs_dp_state cs_dp_state;

typedef struct cs_builder {
	const cs_scenario *sc;
	const cs_mesh *mesh;
	cs_program *progs;
	cs_plan_layout lay;
	cs_layer_ctx ctx;
	cs_compute cm;                     /* times ops */
	cs_calib calib;                    /* the calibration cm points at (all 1 for none) */
	double gap_ns;                     /* the calibration's GPU idle per kernel */
	const cs_kprof *prof;              /* the caller's, or NULL */
	double launch_ns;                  /* host time per kernel launch */
	double sync_ns;                    /* host's return from a synchronisation */
	int64_t host_gpu, host_cpu;        /* the template's compute stream and its
	                                      * host's issue time, ns from its start */
	cs_frag frag[CS_FRAG_KINDS][2][4]; /* [what][moe][pass]; a block's recompute pass the
	                                      * largest any layer of the policy runs */
	cs_frag rc_frag[2][3];             /* a block's recompute pass, [moe][cs_recompute] */
	cs_sched_op **sched;               /* per stage */
	int64_t *nsched;
	int32_t *ord[2];   /* message positions, [fwd][micro * V + vstage] */
	int32_t *sent;     /* [stage * 2 + (up)]: messages each stage sends
	                                      * down (0) and up (1) the ring per step */
	int64_t *bwd_done; /* per vstage: [B or BW, W] micro-batches done */
	/* the template being built */
	int64_t stage;
	int vstage;
	cs_program *prog;
	cs_dep pending[CS_MAX_PENDING]; /* dependencies of the next compute segment */
	int npending;
	double mem_alloc; /* activation bytes the next compute segment allocates */
	double flops;
	cs_dp_state *dp;
} cs_builder;

/* Fragments of every block kind and pass, and of the embedding and head
 * (build_frag.c); 0 or -1 when out of memory. */
int cs__make_frags(cs_builder *b);
void cs__free_frags(cs_builder *b);
int cs__emit_frag(cs_builder *b, const cs_frag *f, cs_phase phase, int layer, int micro);
/* The block fragment of `layer` (dense or MoE) for `pass`. */
const cs_frag *cs__block_frag(const cs_builder *b, int64_t layer, cs_pass pass);
/* Items [from, to) of `f`, as cs__emit_frag emits them all. */
int cs__emit_frag_range(cs_builder *b, const cs_frag *f, int from, int to, cs_phase phase, int layer,
			int micro);
/* Where the part of `f` starting at `from` ends: after the next run of
 * collectives that holds an expert-parallel all-to-all, or at its end. */
int cs__frag_cut(const cs_frag *f, int from);

/* A forward chunk (micro-batch j, virtual stage k on stage s) in three
 * parts: its start (the message it waits for, the embedding), a layer's
 * items [from, to) (to < 0: all; its data-parallel hooks at the ends), its
 * end (the head and loss, the message it sends). The backward likewise, of
 * `kind` (cs_sched_kind), `last` from its start. Each returns 0 or -1 when
 * out of memory. */
int cs__fwd_begin(cs_builder *b, int64_t s, int64_t j, int64_t k);
int cs__fwd_layer(cs_builder *b, int64_t l, int64_t j, int from, int to);
int cs__fwd_end(cs_builder *b, int64_t s, int64_t j, int64_t k);
int cs__bwd_begin(cs_builder *b, int64_t s, int64_t j, int64_t k, int kind, int *last);
int cs__bwd_layer(cs_builder *b, int64_t k, int64_t l, int64_t j, int kind, int last, int from, int to);
int cs__bwd_end(cs_builder *b, int64_t s, int64_t j, int64_t k, int kind, int last);
/* A forward and a backward chunk of different micro-batches run together
 * layer by layer (build_pair.c). */
int cs__emit_pair(cs_builder *b, int64_t s, const cs_sched_op *f, const cs_sched_op *bw);
/* Megatron-Core's interleaved schedule under the all-to-all overlap runs one
 * more warm-up forward (schedules.py: num_warmup_microbatches + 1), so each
 * steady forward is independent of the backward it pairs with: a stage's
 * order of n ops with each steady backward swapped with the forward after
 * it. */
void cs__pair_warmup(cs_sched_op *ops, int64_t n);
/* Time `op` into `class_ns`, count its kernels (0 counts as 1) into
 * `class_kernels` (both indexed by cs_compute_kind) and add the W x ns it
 * leaves under the power cap to *spare; return ns. */
int64_t cs__time_op(const cs_builder *b, const cs_layer_op *op, int64_t *class_ns, int64_t *class_kernels,
		    double *spare);
/* Append a compute op of `ns` (by class in `class_ns`, its kernels by class in
 * `class_kernels`; CS_COMPUTE_HOST entries of both not read; `spare` W x ns
 * under the power cap) that launches `kernels` kernels, adding the time the
 * GPU waits for the host to launch them; returns cs_program_add's mark. */
int32_t cs__add_compute(cs_builder *b, cs_op *op, const int64_t *class_ns, const int64_t *class_kernels,
			int32_t kernels, double spare);
/* One op of the model's kind (an optimizer update, FSDP's copy-out, the
 * step's edges) as a compute segment of its own, timed by the profile;
 * 0, or -1 when out of memory. */
int cs__add_kernel(cs_builder *b, const cs_layer_op *op, cs_phase phase, int vstage, int layer, int micro);
/* Userbuffers (build_ubuf.c). cs__ub_comm: what becomes of ops[i], a
 * collective: 0 NCCL's as before, 1 folded into a GEMM next to it, 2 the
 * userbuffers collective written to *item. cs__ub_gemm: when ops[j] is a
 * GEMM overlapped with a collective next to it, add its chunked time to
 * the segment *cur and return true. */
int cs__ub_comm(const cs_builder *b, const cs_layer_op *ops, int n, int i, cs_frag_item *item);
bool cs__ub_gemm(const cs_builder *b, const cs_layer_op *ops, int n, int j, cs_frag_item *cur);
/* The closed forms they use, ns: a ring exchange of `steps` GEMM chunks of
 * c with hops of x, c + (steps - 1) max(c, x); a pipeline of `splits`
 * chunks of c, each chunk's reduce-scatter of r beside the next chunk,
 * which runs at `rho` while one does (1: on a margin of its own SMs),
 * until all but the last reduce-scatter are done; a GEMM's rate on the SMs
 * left when `sm_fraction` of them are held without traffic (measured). */
int64_t cs__ub_ring_ns(int64_t c, int64_t x, int steps);
int64_t cs__ub_pipeline_ns(int64_t c, int64_t r, int splits, double rho);
double cs__ub_margin_rate(double sm_fraction);
/* The same for a segment of several ops whose host lead `need` (ns: the
 * most, over its kernels, of the launches up to a kernel less the GPU time
 * before it) the fragment computed; -1 for one op. */
int32_t cs__add_segment(cs_builder *b, cs_op *op, const int64_t *class_ns, const int64_t *class_kernels,
			int32_t kernels, double spare, int64_t need);
/* The host lead, ns, an op of `kernels` kernels lasting `ns` needs when it
 * follows `issued` kernels lasting `before` in its segment, `launch_ns`
 * per launch: its first or its last kernel's launches less the GPU time
 * before that kernel (its kernels equal shares of `ns`). */
int64_t cs__host_need(double launch_ns, double issued, int64_t before, double kernels, int64_t ns);
/* The host waits for the GPU's queue to drain (a synchronisation or a
 * device-to-host read): it resumes `sync_ns` after the compute stream's
 * last kernel (nothing without a host model). */
void cs__host_sync(cs_builder *b);
/* Whether virtual stage `k` runs on the stage being built. */
static inline bool cs__runs_here(const cs_builder *b, int64_t k)
{
	int64_t st, ch;
	cs_sched_stage_of(b->sc->parallel.schedule, b->lay.stages, b->lay.chunks, k, &st, &ch);
	return st == b->stage;
}
/* Make the next compute segment wait until `counter` reaches `value`. */
void cs__pending(cs_builder *b, int counter, int32_t value);

/* Data-parallel hooks (build_dp.c), each 0 or -1 when out of memory. */
int cs__dp_init(cs_builder *b);
void cs__dp_free(cs_builder *b);
int cs__dp_stage_begin(cs_builder *b);
/* Before / after a block runs for micro-batch `micro` (fwd: forward, else backward). */
int cs__dp_before_use(cs_builder *b, int64_t layer, int64_t micro, int fwd);
int cs__dp_after_use(cs_builder *b, int64_t layer, int64_t micro, int fwd);
/* The gradients of `layer` (or CS_DP_EMBED / CS_DP_HEAD) are final for the step. */
int cs__dp_grads_ready(cs_builder *b, int64_t layer);
int cs__dp_stage_end(cs_builder *b);
/* Local parameters of the stage the optimizer updates (its shard), and
 * whose gradients the stage's buffer holds through the backward. */
int64_t cs__dp_optimizer_params(const cs_builder *b);
int64_t cs__dp_grad_buffer_params(const cs_builder *b);

/* The step's edges (build_edges.c), each 0 or -1 when out of memory: at the
 * step's start, after the loss of micro-batch `micro` (the last virtual
 * stage's forward), and before the update of `params` local parameters
 * (the next compute segment's pending dependencies still unconsumed). */
int cs__edges_begin(cs_builder *b);
int cs__edges_loss(cs_builder *b, int64_t micro);
int cs__edges_update(cs_builder *b, int64_t params);
/* Before the reduction of a gradient bucket of `bytes`. */
int cs__edges_bucket(cs_builder *b, double bytes);
/* An all-reduce of `bytes` on `g`, stream `s`, after the compute stream's
 * ops so far; its mark, 0 when the group has one member, -1 when out of
 * memory. */
int32_t cs__all_reduce(cs_builder *b, cs_stream s, cs_group_kind g, cs_comm_kind comm, double bytes,
		       int micro);

/* Transformer Engine's fp8 bookkeeping (build_fp8.c), each 0 or -1 when
 * out of memory: after virtual stage b->vstage's blocks ran forward (fwd)
 * or backward for micro-batch `micro`, delayed scaling's amax reduction
 * and update; after the optimizer updated `shard` local parameters that
 * are fp8 weights, their cast and amax reduction. */
int cs__fp8_amax(cs_builder *b, int64_t micro, int fwd);
int cs__fp8_param_update(cs_builder *b, double shard);
/* The fp8 tensors whose amaxes layers first .. first + n - 1 keep, forward
 * (fwd) or backward; *modules (unless NULL) the modules holding them. */
double cs__fp8_amax_tensors(const cs_builder *b, int64_t first, int64_t n, int fwd, double *modules);

#endif
