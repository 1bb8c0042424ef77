/*
 * schedule.h - pipeline schedules: the order of ops on each pipeline stage.
 *
 * A pipeline of p stages trains m micro-batches per step. Each stage holds
 * v model chunks (v = 1 except interleaved 1F1B and ZB-V); the p*v chunks
 * form the model's "virtual stages" 0..p*v-1 in forward order. On each
 * stage the generator emits, in execution order, one forward op F per
 * (micro-batch, chunk) and either one full backward BW (schedules without
 * the backward split) or an input-gradient op B and a weight-gradient op W
 * (zero-bubble schedules).
 *
 * Dependencies every generated order honours (tests check them):
 *   F(j, k) after F(j, k-1);  B(j, k) after F(j, k) and B(j, k+1);
 *   W(j, k) after B(j, k)      (BW counts as B then W in one op).
 *
 * Schedules:
 *   GPipe        all forwards, then all backwards (Huang et al. 2019).
 *   1F1B         PipeDream-Flush: p-1-stage warm-up forwards, then one
 *                forward and one backward alternately, then the cool-down.
 *   interleaved  Megatron-LM's interleaved 1F1B (Narayanan et al. 2021),
 *                as forward_backward_pipelining_with_interleaving orders it:
 *                micro-batches in groups of p, all chunks of a group before
 *                the next group, backward chunks in reverse, warm-up
 *                (p-stage-1)*2 + (v-1)*p. Needs v >= 2 and m a multiple of
 *                p (Megatron refuses a last group smaller than p).
 *   ZB-H1, ZB-V  zero-bubble schedules (Qi et al. 2024); see schedule.c for
 *                how their orders are built and how they differ from the
 *                hand-crafted figures of the paper.
 *
 * No allocation is visible to the caller: out[] is the caller's.
 */
#ifndef CS_PROGRAM_SCHEDULE_H
#define CS_PROGRAM_SCHEDULE_H

#include <stdint.h>

#include "clustersim/clustersim.h"
#include "config/config.h" /* cs_sched_name */
#include "config/scenario.h"

typedef enum cs_sched_kind {
	CS_SCHED_F, /* forward */
	CS_SCHED_B, /* backward, input gradient only (zero-bubble split) */
	CS_SCHED_W, /* backward, weight gradient only (zero-bubble split) */
	CS_SCHED_BW /* full backward: input and weight gradients in one op */
} cs_sched_kind;

typedef struct cs_sched_op {
	uint8_t kind;   /* cs_sched_kind */
	uint16_t chunk; /* the stage's model chunk, 0..v-1 */
	int32_t micro;  /* micro-batch, 0..m-1 */
} cs_sched_op;

/* Op order of pipeline stage `stage` (0..p-1) for `sched` with p stages, m
 * micro-batches and v chunks per stage. Writes min(count, cap) ops to out
 * (out may be NULL when cap is 0) and returns the stage's total op count:
 * 2*m*v without the backward split, 3*m*v with it. Returns -1 with a
 * message in *diag for an impossible combination (v != 1 for GPipe, 1F1B
 * and ZB-H1; v < 2 or m not a multiple of p for interleaved; v != 2 for
 * ZB-V; non-positive p, m; stage out of range) or when out of memory. */
int64_t cs_sched_stage_ops(cs_schedule sched, int64_t p, int64_t m, int64_t v, int64_t stage,
			   cs_sched_op *out, int64_t cap, cs_diag *diag);

/* The global virtual stage (0..p*v-1, forward order) of chunk `chunk` of
 * stage `stage`: interleaved c*p + stage; ZB-V chunk 0 -> stage, chunk 1 ->
 * 2p-1-stage; all others: stage. */
int64_t cs_sched_virtual_stage(cs_schedule sched, int64_t p, int64_t v, int64_t stage, int64_t chunk);

/* The inverse: the (stage, chunk) that holds virtual stage vstage. */
void cs_sched_stage_of(cs_schedule sched, int64_t p, int64_t v, int64_t vstage, int64_t *stage,
		       int64_t *chunk);

/* Whether `sched` splits the backward into B and W ops. */
int cs_sched_split_backward(cs_schedule sched);

/* Model chunks per stage: the scenario's virtual stages for interleaved,
 * 2 for ZB-V, 1 for the rest. The one rule for the builder and the writers. */
int64_t cs_sched_chunks(cs_schedule sched, int64_t virtual_stages);

/* A schedule from its name (cs_sched_name's, '-' and '_' alike): 0, or -1
 * when unknown. */
int cs_sched_parse(const char *name, cs_schedule *out);

#endif
