/*
 * program.h - what a rank runs: ops on streams, ordered, with dependencies.
 *
 * A program is a template shared by every rank of the same role (one per
 * pipeline stage): DP replicas and TP/CP/EP peers run the same template, so
 * memory grows with templates, not with ranks x ops.
 *
 * Each GPU has streams (compute, and one per communicator kind, as NCCL gives
 * each communicator its own stream). Ops on a stream run in order. An op also
 * waits for its dependencies, each "counter c has reached value v", where the
 * counters of a rank are the number of ops completed on each of its streams
 * and the number of point-to-point messages that have arrived on each of its
 * two pipeline mailboxes. Dependencies therefore need no per-op state at run
 * time: a rank carries a program counter and a completion count per stream.
 */
#ifndef CS_PROGRAM_PROGRAM_H
#define CS_PROGRAM_PROGRAM_H

#include <stdint.h>

#include "clustersim/clustersim.h"

typedef enum cs_stream {
	CS_STREAM_COMPUTE,
	CS_STREAM_TP,
	CS_STREAM_CP,
	CS_STREAM_EP,
	CS_STREAM_PP,
	CS_STREAM_DP,    /* gradient all-reduce / reduce-scatter */
	CS_STREAM_DP_AG, /* parameter all-gather */
	CS_STREAMS
} cs_stream;

/* Mailbox counters follow the stream counters. Messages sent "up the ring"
 * (to stage s+1 mod p) arrive in CS_MBOX_UP of the receiver, messages sent
 * down the ring in CS_MBOX_DOWN. */
enum { CS_MBOX_UP = CS_STREAMS, CS_MBOX_DOWN, CS_COUNTERS };

typedef enum cs_op_kind { CS_OP_COMPUTE, CS_OP_COLL, CS_OP_SEND } cs_op_kind;

/* What a compute op is doing, for traces and breakdowns. */
typedef enum cs_phase {
	CS_PHASE_FWD,
	CS_PHASE_BWD,
	CS_PHASE_BWD_W,
	CS_PHASE_RECOMPUTE,
	CS_PHASE_OPTIM,
	CS_PHASE_COMM
} cs_phase;

typedef struct cs_dep {
	int32_t value; /* satisfied when counter >= value */
	uint8_t counter;
} cs_dep;

typedef struct cs_op {
	int64_t ns;      /* COMPUTE: duration on a nominal GPU; COLL with ub: its time; SEND:
	                   * the receiving rank + 1 when the op names it, 0 for the
	                   * pipeline neighbour `to` points at (cs_op_peer) */
	int64_t attn_ns; /* COMPUTE: of it, fused attention (scaled by document masks) */
	int64_t gemm_ns; /* COMPUTE: of it, GEMMs as the table times them (clock model only) */
	double spare;    /* COMPUTE: W x ns the rest leaves under the power cap (clock model) */
	double bytes;    /* COLL: per rank as nccl-tests counts; SEND: message */
	double mem;      /* activation bytes allocated (> 0) at start or freed (< 0) at end */
	int32_t dep;     /* index of the first dependency in cs_program.deps */
	uint16_t ndeps;
	uint8_t kind;   /* cs_op_kind */
	uint8_t group;  /* COLL: cs_group_kind */
	uint8_t coll;   /* COLL: cs_coll_op */
	uint8_t comm;   /* COLL/SEND: cs_comm_kind, for exposure accounting */
	uint8_t phase;  /* cs_phase */
	int8_t to;      /* SEND: +1 up the ring, -1 down the ring (the receiver's mailbox) */
	uint8_t ub;     /* COLL: a userbuffers kernel lasting `ns`, not NCCL's */
	uint8_t sms;    /* COLL with ub: the SMs it takes from compute beside it */
	int16_t vstage; /* virtual pipeline stage (trace label) */
	int16_t layer;  /* first layer, -1 for none (trace label) */
	int32_t micro;  /* micro-batch, -1 for none (trace label) */
} cs_op;

typedef struct cs_program {
	cs_op *ops[CS_STREAMS];
	int32_t nops[CS_STREAMS], cap[CS_STREAMS];
	cs_dep *deps;
	int32_t ndeps, depcap;
	double model_flops;                      /* per rank per step, for reports */
	int64_t compute_ns;                      /* sum of compute op durations */
	int64_t class_ns[CS_COMPUTE_KINDS];      /* compute_ns by class */
	int64_t class_kernels[CS_COMPUTE_KINDS]; /* kernels launched by class (none for
	                                          * CS_COMPUTE_HOST) */
	double spare;                            /* W x ns its compute ops leave under the power cap */
	char profile[64];                        /* the kernel profile that timed it, "" for none */
	int profile_derived;
} cs_program;

/* The rank a send goes to when the op names it (an imported trace's
 * message to any rank), else -1: the pipeline neighbour `to` points at. A
 * program's sends all name their peer or none does. */
static inline int64_t cs_op_peer(const cs_op *op) { return op->ns - 1; }

/* Program storage; cs_program_free releases what cs_program_add allocated. */
void cs_program_init(cs_program *p);
void cs_program_free(cs_program *p);

/* Append `op` (its dep/ndeps fields are ignored) on `stream` with `ndeps`
 * dependencies. Returns the counter value that means "this op is done"
 * (its position + 1 on the stream), or -1 when out of memory. */
int32_t cs_program_add(cs_program *p, cs_stream stream, const cs_op *op, const cs_dep *deps, int ndeps);

static inline int32_t cs_program_done_mark(const cs_program *p, cs_stream s) { return p->nops[s]; }

const char *cs_stream_name(cs_stream s);

#endif
