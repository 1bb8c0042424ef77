/*
 * runner.h - executes every rank's program on the event engine.
 *
 * Each rank runs the template of its pipeline stage. An op starts when its
 * stream is free and its dependencies hold. A collective starts when every
 * member of its group instance has reached it on that stream (the
 * rendezvous that carries a straggler's delay to its peers) and lasts what
 * the collectives model says; a pipeline send lands in the peer's mailbox.
 *
 * Ownership: cs_runner_new copies nothing it is given; the scenario, mesh,
 * programs, tuner and topology must outlive the runner. cs_runner_free
 * releases only what the runner allocated.
 */
#ifndef CS_RUN_RUNNER_H
#define CS_RUN_RUNNER_H

#include <stdint.h>

#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/scenario.h"
#include "core/sim.h"
#include "fault/fault.h"
#include "hw/kprof.h"
#include "hw/topo.h"
#include "program/mesh.h"
#include "program/program.h"
#include "run/path.h"

typedef struct cs_runner cs_runner;

/* Called when an op of a traced rank ends: it ran on `stream` from `start`
 * (the rank reached it) to `end`; for a collective `xfer` is its transfer
 * time (the rest was waiting for the group) and `choice` the algorithm. */
typedef void (*cs_span_fn)(void *ctx, int64_t rank, int stream, cs_time start, cs_time end, const cs_op *op,
			   cs_time xfer, const cs_coll_choice *choice);

typedef struct cs_run_env {
	const cs_scenario *sc;
	const cs_mesh *mesh;
	const cs_program *progs; /* one per pipeline stage, indexed by pp coordinate */
	const uint16_t *tmpl_of; /* or, when not NULL, per rank the index of its program
	                            * among ntmpl (imported traces); no folding then */
	int64_t ntmpl;
	const cs_topo *topo;
	cs_coll *coll;
	const float *compute_factor; /* per rank, NULL for all 1 */
	int64_t first_rank, nranks;  /* the ranks simulated (all, or one folded class) */
	int progress;                /* CS_PROGRESS_* on stderr */
	const uint8_t *traced;       /* per rank, nonzero to report its ops; NULL for none */
	cs_span_fn on_span;
	void *span_ctx;
	int critical_path;           /* carry critical-path summaries */
	const cs_link_faults *links; /* degraded links and tiers, NULL for none */
	const cs_kprof *prof;        /* the GPU's kernel profile (contention), NULL for none */
	const float *doc_factor;     /* [dp replica x micro-batches + micro]: the attention time
	                               * of that micro-batch under its document mask over the
	                               * unmasked one; NULL for one document per sequence */
	int64_t doc_micro;           /* micro-batches per replica (the table's stride) */
	const cs_kprof_clock *clock; /* GEMM clocks under the power cap, NULL: as the table */
	int fold;                    /* simulate one rank per class of identical ranks
	                               * (simulate.fold; programs by stage only) */
} cs_run_env;

/* What one rank did during the step. */
typedef struct cs_rank_stats {
	cs_time end;                    /* its last op completed */
	cs_time busy;                   /* compute stream busy */
	cs_time exposed[CS_COMM_KINDS]; /* compute idle while a transfer of that kind was in flight */
	double mem_peak;                /* activation bytes, from the schedule */
	cs_time gemm;                   /* GEMM time on the compute stream (clock model) */
	cs_time gemm_cap;               /* the same GEMMs at the power cap's clock */
} cs_rank_stats;

cs_runner *cs_runner_new(const cs_run_env *env);
void cs_runner_free(cs_runner *r);

/* Run to completion. CS_ERR_SIM with a message when some rank cannot finish
 * (a dependency that never holds). */
cs_status cs_runner_run(cs_runner *r, cs_diag *diag);

/* A simulated rank's statistics; NULL for a rank folded away. */
const cs_rank_stats *cs_runner_stats(const cs_runner *r, int64_t rank);
/* Folded runs: the simulated rank a folded-away rank is a copy of (the
 * rank itself when simulated). */
int64_t cs_runner_representative(const cs_runner *r, int64_t rank);
/* The ranks the run simulates: every rank unless it folded (a folded run
 * whose perturbations reach every replica runs every rank). */
int64_t cs_runner_simulated_ranks(const cs_runner *r);
cs_time cs_runner_makespan(const cs_runner *r);
uint64_t cs_runner_events(const cs_runner *r);
/* The algorithm/protocol last chosen for a collective of each comm kind. */
const cs_coll_choice *cs_runner_last_choice(const cs_runner *r, cs_comm_kind kind);

/* The critical path of the step (the path ending at the last op); -1 when
 * the runner was not asked to carry paths. */
int cs_runner_critical_path(const cs_runner *r, cs_path *out);

#endif
