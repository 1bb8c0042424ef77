/*
 * pipesim.h - run a pipeline schedule on the event engine, compute only.
 *
 * Each stage executes its generated op order one op at a time; an op starts
 * when its stage is free and its cross-stage dependency has ended
 * (F(j, k) on F(j, k-1), B/BW(j, k) on B/BW(j, k+1)); communication takes no
 * time. Op times are per op, i.e. per chunk: for a schedule with v chunks,
 * a chunk op covers 1/v of the stage's layers, so callers that think in
 * whole-stage times divide by v (the command line does).
 *
 * Reported:
 *   makespan         end of the last op (the step starts at 0);
 *   bubble_fraction  1 - busy / (p * makespan), busy summed over stages;
 *   peak_in_flight   per stage, the most micro-batches whose activations
 *                    are live at once, in micro-batch units: a chunk
 *                    activation counts 1/v. Live from the start of F to the
 *                    end of BW, or, with the B/W split, to the end of W
 *                    (W still reads the layer inputs F saved; Qi et al.
 *                    2024, §2, free part of an activation at B and the rest
 *                    at W, so counting it whole until W is an upper bound).
 *                    At equal times an ending op frees before a starting op
 *                    allocates.
 *
 * Ownership: cs_pipe_run fills a caller-owned cs_pipe_result whose arrays
 * it allocates; cs_pipe_result_release frees them (and is safe on a zeroed
 * or already released result).
 */
#ifndef CS_PROGRAM_PIPESIM_H
#define CS_PROGRAM_PIPESIM_H

#include <stdint.h>

#include "clustersim/clustersim.h"
#include "config/scenario.h"
#include "core/sim.h"
#include "program/schedule.h"

typedef struct cs_pipe_times {
	cs_time f, b, w; /* per op; BW takes b + w; each >= 0 */
} cs_pipe_times;

typedef struct cs_pipe_span {
	cs_time start, end;
	int64_t stage;
	cs_sched_op op;
} cs_pipe_span;

typedef struct cs_pipe_result {
	cs_schedule sched;
	int64_t stages, micro_batches, chunks;
	cs_time makespan;
	cs_time busy; /* summed over stages */
	double bubble_fraction;
	double *peak_in_flight; /* [stages], micro-batch units */
	cs_pipe_span *spans;    /* [n_spans], every op in start order */
	int64_t n_spans;
	uint64_t events;
} cs_pipe_result;

/* CS_OK; CS_ERR_INPUT for a bad schedule combination or negative times;
 * CS_ERR_SIM when the stages deadlock; CS_ERR_NOMEM. Messages in *diag. */
cs_status cs_pipe_run(cs_schedule sched, int64_t p, int64_t m, int64_t v, const cs_pipe_times *times,
		      cs_pipe_result *out, cs_diag *diag);
void cs_pipe_result_release(cs_pipe_result *res);

#endif
