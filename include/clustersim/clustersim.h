/*
 * clustersim.h - public API of libclustersim.
 *
 * Four verbs: load a scenario, run it, read the result, free both.
 *
 *   cs_scenario *sc = NULL;
 *   cs_diag diag;
 *   if (cs_scenario_load("llama.yaml", NULL, 0, &sc, &diag) != CS_OK) {
 *           fprintf(stderr, "%s\n", diag.msg);
 *           return 2;
 *   }
 *   cs_result *res = NULL;
 *   if (cs_simulate(sc, NULL, &res, &diag) == CS_OK)
 *           printf("%f\n", cs_result_metrics(res)->step_time_s);
 *   cs_result_free(res);
 *   cs_scenario_free(sc);
 *
 * Ownership: cs_scenario_load allocates *out, which the caller frees with
 * cs_scenario_free. cs_simulate allocates *out, which the caller frees with
 * cs_result_free; the result does not point into the scenario. Pointers
 * returned by cs_result_* getters stay valid until cs_result_free.
 * No function keeps global state: separate scenarios and results may be used
 * from separate threads.
 */
#ifndef CLUSTERSIM_H
#define CLUSTERSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CS_VERSION "0.1.0"

/* Status codes; they double as the command line's exit status. */
typedef enum cs_status {
	CS_OK = 0,
	CS_ERR_SIM = 1,   /* the simulation failed (deadlock, limit reached) */
	CS_ERR_INPUT = 2, /* bad input: file, YAML, value, plan */
	CS_ERR_NOMEM = 3
} cs_status;

/* A diagnostic: "file:line:col: message", lowercase, subject quoted. */
typedef struct cs_diag {
	char msg[1024];
} cs_diag;

typedef struct cs_scenario cs_scenario;
typedef struct cs_result cs_result;

/* Communication kinds, for exposed-communication figures. */
typedef enum cs_comm_kind {
	CS_COMM_TP,
	CS_COMM_DP,
	CS_COMM_PP,
	CS_COMM_CP,
	CS_COMM_EP,
	CS_COMM_KINDS
} cs_comm_kind;

/* Compute time by class: GEMMs, attention, memory-bound kernels, the
 * optimizer, and the GPU idling while the host launches kernels. */
typedef enum cs_compute_kind {
	CS_COMPUTE_GEMM,
	CS_COMPUTE_ATTN,
	CS_COMPUTE_MEMBOUND,
	CS_COMPUTE_OPTIM,
	CS_COMPUTE_HOST,
	CS_COMPUTE_KINDS
} cs_compute_kind;

/* Memory per GPU by category, bytes (the largest over ranks). */
typedef struct cs_memory {
	double weights, grads, optimizer, activations, total;
	double capacity;
	int fits;
} cs_memory;

/* One hop of the critical path: the step's delay moved from rank `from` to
 * rank `to` through a transfer. */
typedef struct cs_path_step {
	int64_t from, to;
	int kind;     /* cs_comm_kind */
	char via[24]; /* "all_gather", "send_recv", ... */
	int tier;     /* the highest fabric tier crossed: 0 NVLink (one domain),
	                          * 1 the NICs (one leaf), 2 the leaves' uplinks (one pod),
	                          * 3 the pods' uplinks */
	double at_s;  /* when the transfer ended */
} cs_path_step;

/* The chain of ops, waits and transfers, across ranks, that ends last. */
typedef struct cs_critical_path {
	int valid;
	double compute_s;
	double comm_s[CS_COMM_KINDS];
	int64_t hops; /* rank changes along the path */
	int64_t end_rank;
	int64_t longest_rank; /* the rank the path computed on longest in one stretch */
	double longest_s;
	int nlast;
	cs_path_step last[8]; /* the last hops, oldest first */
} cs_critical_path;

/* The fleet's effects in a result: each one's flag says it ran. */
typedef struct cs_fleet_effects {
	int spread, slow_machines, diurnal, gc;
	int folded;          /* per-GPU effects left out: the run folds */
	double spread_sigma; /* of log(compute factor) */
	int64_t machines;    /* in the job */
	int64_t slow;        /* slow machines in the fleet simulated */
	double slow_factor;
	double p_none;         /* probability that no machine is slow; the step is
	                              * p_none x (the step without) + the rest x (with) */
	double diurnal_factor; /* mean compute time factor over a day */
	double gc_cost_s;      /* expected garbage-collection cost per step */
	double gc_pause_s;
	int64_t gc_interval;
	int gc_sync;
} cs_fleet_effects;

/* How the reported step ran: folded (some ranks simulated, the others
 * their exact copies) or rank by rank, and why (simulate.fold). */
typedef struct cs_route {
	int folded;
	int64_t simulated_ranks; /* of the GPUs */
	char why[96];            /* "" when folded, or forced to every rank */
} cs_route;

typedef struct cs_metrics {
	double step_time_s; /* mean over simulated steps */
	double step_time_p50_s, step_time_p99_s, step_time_max_s;
	double baseline_step_time_s; /* without perturbations (== step_time_s without any) */
	double slowdown;             /* step_time_s / baseline_step_time_s */
	double tokens_per_s;
	/* Model FLOPs count causal attention as the s^2/2 it computes; the
	 * _megatron figures count the full s^2, as Megatron-LM's formula (and
	 * its published figures) do, and so can pass 100 % at long context. */
	double tflops_per_gpu; /* model FLOPs per second per GPU, 1e12 */
	double mfu;            /* fraction of peak, model FLOPs */
	double tflops_per_gpu_megatron;
	double mfu_megatron;
	double hfu;                                     /* fraction of peak, Megatron-LM's hardware FLOPs
	                              * (with the recomputed forward) */
	double tflops_per_gpu_hardware;                 /* the same hardware FLOPs per second per GPU, 1e12 */
	double compute_s;                               /* busy compute time of the critical rank */
	double compute_kind_s[CS_COMPUTE_KINDS];        /* compute_s by class */
	int64_t compute_kind_kernels[CS_COMPUTE_KINDS]; /* kernels launched per step by
	                              * class (0 for CS_COMPUTE_HOST) */
	char profile[64];                               /* kernel profile that timed compute, "" for the flat
	                              * efficiencies */
	int profile_derived;                            /* the profile was derived from another GPU's */
	double gemm_clock; /* the critical rank's GEMMs' speed over their speed at
	                              * the power cap (clock model); 0 without the model */
	double exposed_comm_s[CS_COMM_KINDS];
	double bubble_s;
	double bubble_fraction;
	double idle_min_s, idle_mean_s, idle_max_s;
	double model_flops;          /* per step, whole job, causal attention as computed */
	double model_flops_megatron; /* the same by Megatron-LM's count (full s^2) */
	int64_t gpus;
	int64_t events; /* simulated events */
	double sim_wall_s;
	cs_memory memory;             /* the seed's accounting (formula) */
	double activation_peak_bytes; /* measured from the schedule, largest over ranks */
	int64_t critical_rank;        /* the rank whose last op ends the step */
	int64_t steps;
	int64_t micro_batches;               /* per data-parallel replica per step */
	char coll_choice[CS_COMM_KINDS][32]; /* algorithm/protocol last used, "" when none */
	cs_critical_path path;               /* of the reported step */
	int64_t straggler_rank;              /* the slowest-computing rank, -1 without perturbations */
	double straggler_factor;
	cs_fleet_effects fleet;
	cs_route route;
	double peak_scale; /* the peak MFU and HFU are against, over the GPU's: the fastest
	                    * GPU's, past 1 when a compute factor below 1 made one faster */
} cs_metrics;

enum { CS_PROGRESS_NONE, CS_PROGRESS_TERMINAL, CS_PROGRESS_LINES };

/* Options of one simulation run; NULL means defaults. */
typedef struct cs_run_opts {
	int progress;               /* print progress on stderr: CS_PROGRESS_TERMINAL
	                        * rewrites one line, CS_PROGRESS_LINES prints a
	                        * line every 10 s (for a file or a pipe) */
	const int64_t *trace_ranks; /* ranks whose spans a trace gets (the command line's
	                            * --trace); none: the first rank of each pipeline stage */
	size_t n_trace_ranks;
	int critical_path; /* 1: always trace the critical path; -1: never (a
	                            * perturbed run then takes the time of a plain one);
	                            * 0: by default, for perturbed runs and up to 4,096
	                            * ranks, as it costs time */
} cs_run_opts;

/* Load and validate a scenario file ("-": standard input), then apply
 * `n_overrides` strings of the form "key.path=value" (overrides may be NULL
 * when n_overrides is 0), and check that the kernel profile and the
 * calibration file it names load. On error returns CS_ERR_INPUT (or CS_ERR_NOMEM)
 * and fills *diag (NULL: no message); *out is then NULL. The caller frees
 * the scenario with cs_scenario_free (NULL is fine). */
cs_status cs_scenario_load(const char *path, const char *const *overrides, size_t n_overrides,
			   cs_scenario **out, cs_diag *diag);
void cs_scenario_free(cs_scenario *sc);

/* Run the scenario's training steps: CS_OK with a result in *out that the
 * caller frees with cs_result_free (NULL is fine), or an error status with
 * *out NULL and a message in *diag (NULL: no message). opts may be NULL
 * (defaults); sc and out may not (CS_ERR_INPUT). */
cs_status cs_simulate(const cs_scenario *sc, const cs_run_opts *opts, cs_result **out, cs_diag *diag);
/* The run's metrics, owned by res (which may not be NULL). */
const cs_metrics *cs_result_metrics(const cs_result *res);
void cs_result_free(cs_result *res);

/* "tp", "dp", "pp", "cp", "ep"; "?" out of range. Static strings. */
const char *cs_comm_kind_name(cs_comm_kind kind);
/* "gemm", "attention", "memory_bound", "optimizer", "host_idle"; "?" out
 * of range. Static strings. */
const char *cs_compute_kind_name(cs_compute_kind kind);

#ifdef __cplusplus
}
#endif
#endif
