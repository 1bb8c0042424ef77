/*
 * planner.h - search the parallel plans of a scenario's cluster, model and
 * training batch, and rank them by simulated step time.
 *
 * The search enumerates tp x pp x cp x virtual stages x micro-batch x
 * sharding x recompute (dp takes the remaining GPUs), drops the plans whose
 * cs_mem_per_gpu total exceeds the GPU's HBM times the headroom, drops the
 * plans cs_config_validate refuses, orders the survivors by an analytic
 * estimate of the step time (cs_plan_estimate); the study simulates at
 * most max_sims of them, folded, on `jobs` threads (study/search.h). It also ports the seed's
 * heuristic (choose_parallelism, cs_plan_heuristic), simulates its choice
 * the same way and ranks it among the simulated plans.
 *
 * Nothing here keeps global state; a search owns everything it returns.
 */
#ifndef CS_STUDY_PLANNER_H
#define CS_STUDY_PLANNER_H

#include <stdbool.h>
#include <stdint.h>

#include "clustersim/clustersim.h"
#include "config/scenario.h"

/* Default fraction of HBM a plan's formula memory may use: the rest is for
 * the CUDA context, NCCL buffers, workspaces and fragmentation. */
#define CS_PLAN_HEADROOM 0.90
/* The seed heuristic's own headroom (choose_parallelism's default). */
#define CS_PLAN_SEED_HEADROOM 0.85
/* Default cap on simulated plans per search. */
#define CS_PLAN_MAX_SIMS 2000
/* Context parallelism is searched from this sequence length on. */
#define CS_PLAN_CP_SEQ 32768
#define CS_PLAN_CP_MAX 16

/* What bounds a plan: the largest of compute, each exposed communication
 * kind (CS_PLAN_BOUND_COMM + cs_comm_kind) and the pipeline bubble. */
enum {
	CS_PLAN_BOUND_COMPUTE = 0,
	CS_PLAN_BOUND_COMM = 1,
	CS_PLAN_BOUND_BUBBLE = CS_PLAN_BOUND_COMM + CS_COMM_KINDS
};

/* One plan: the searched fields, its formula memory and estimate, and (once
 * simulated) its metrics. Plain data. */
typedef struct cs_plan {
	int64_t tp, pp, dp, cp, ep, vstages, micro_batch;
	int64_t etp; /* the experts folded over tp x cp x dp with this expert TP; 0 unfolded */
	cs_sharding sharding;
	cs_recompute recompute;
	bool sequence_parallel;
	bool tp_beyond_domain; /* tp exceeds the scale-up (NVLink) domain */
	double mem_bytes;      /* cs_mem_per_gpu total */
	double estimate_s;     /* cs_plan_estimate */
	int64_t index;         /* enumeration order, the last tie-breaker */
	/* filled by simulation */
	bool simulated; /* and succeeded */
	double step_time_s, mfu, tflops_per_gpu, tokens_per_s;
	double compute_s, bubble_s, exposed_s[CS_COMM_KINDS];
	int bound; /* CS_PLAN_BOUND_* */
} cs_plan;

typedef struct cs_plan_opts {
	int64_t gpus;     /* resize the cluster to this many GPUs; 0 keeps it */
	int jobs;         /* simulation threads; <= 0 means 1 */
	int64_t max_sims; /* 0 means CS_PLAN_MAX_SIMS */
	double headroom;  /* 0 means CS_PLAN_HEADROOM; else in (0, 1] */
} cs_plan_opts;

typedef struct cs_plan_search {
	cs_scenario *base; /* the scenario searched, resized to `gpus` (owned) */
	int64_t gpus;
	double headroom, budget_bytes; /* budget = headroom x HBM */
	int64_t max_sims;
	int jobs;
	int64_t considered;     /* plans enumerated (tp x pp x cp dividing the GPUs) */
	int64_t pruned_memory;  /* over the budget */
	int64_t pruned_invalid; /* refused by cs_config_validate */
	int64_t survived;       /* left after pruning */
	int64_t skipped;        /* survivors not simulated (estimate beyond the cap) */
	int64_t simulated;      /* simulations run (plans, not the heuristic's extra run) */
	int64_t failed;         /* simulations that returned an error */
	double wall_s;
	char first_invalid[256]; /* cs_config_validate's first refusal, "" if none */
	char first_failure[256]; /* a failed simulation's message, "" if none */
	cs_plan *plans;          /* the simulated plans that succeeded, best first
	                          * (after cs_plan_prepare: the plans to simulate) */
	int64_t nplans;
	/* the seed's heuristic */
	cs_plan heuristic;
	bool heuristic_fits;      /* at CS_PLAN_SEED_HEADROOM, by the seed's rule */
	bool heuristic_valid;     /* cs_config_validate accepts it */
	int64_t heuristic_rank;   /* 1-based among `plans`; 0 when invalid, over the
	                          * budget (then simulated for reference only) or
	                          * when its simulation failed */
	char heuristic_note[160]; /* why it is not ranked, "" when it is */
} cs_plan_search;

/* Resize sc's cluster to `gpus` GPUs: whole nodes when gpus is a multiple
 * of gpus_per_node, else one node of `gpus` when that divides
 * gpus_per_node. Validates the result. */
cs_status cs_plan_resize(cs_scenario *sc, int64_t gpus, cs_diag *diag);

/* Write plan p's fields into a copy of base (out), with sim.fold on, one
 * step and no perturbations, and validate it. */
cs_status cs_plan_apply(const cs_scenario *base, const cs_plan *p, cs_scenario *out, cs_diag *diag);

/* cs_plan_apply without the validation (the search's inner loop). */
void cs__plan_fill(const cs_scenario *base, const cs_plan *p, cs_scenario *out);

/* The seed's choose_parallelism: among tp dividing both the scale-up
 * domain and the heads, and pp dividing gpus / tp and the layers, the
 * fitting plan (selective recompute, sequence parallel, micro-batch 1,
 * ZeRO-1, formula memory with pp micro-batches in flight, at most
 * CS_PLAN_SEED_HEADROOM of HBM) of smallest tp x pp, then larger tp, then
 * less memory; without one that fits, the same order over all. *fits says
 * which. Fills p's plan fields and mem_bytes. */
void cs_plan_heuristic(const cs_scenario *sc, cs_plan *p, bool *fits);

/* Analytic step-time estimate of plan p on sc (seconds), used only to
 * choose which survivors to simulate: compute at the GEMM efficiency
 * (recompute included), plus the 1F1B/interleaved bubble (pp-1)/(v m) of
 * it, plus TP and CP collectives on the critical path, pipeline sends, and
 * the DP gradient traffic beyond what backward hides (over the scale-out
 * network at the NIC bandwidth times the group's ranks per node, as a
 * hierarchical collective moves it). */
double cs_plan_estimate(const cs_scenario *sc, const cs_plan *p);

/* The search up to the simulations, on a copy of base (which is not
 * modified): the heuristic's plan, and in plans[0 .. nplans) the survivors
 * to simulate, best estimate first. *out is allocated on CS_OK and freed
 * with cs_plan_search_free. study/search.c simulates them (cs_study_plans). */
cs_status cs_plan_prepare(const cs_scenario *base, const cs_plan_opts *opts, cs_plan_search **out,
			  cs_diag *diag);
/* Once every plan's `simulated` and metrics are filled: keep the plans
 * that succeeded, best step time first (then less memory, then enumeration
 * order), count the failures and rank the heuristic's plan among them. */
void cs_plan_rank(cs_plan_search *s);
void cs_plan_search_free(cs_plan_search *s);

/* "compute", "tp", "dp", "pp", "cp", "ep", "bubble". */
const char *cs_plan_bound_name(int bound);

#endif
