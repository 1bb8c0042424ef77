/*
 * reliability.h - one sampled training run over days: failures by class,
 * checkpoints, restarts, spare nodes and elastic running.
 *
 * The job trains at the simulated step rate; each failure class fails as a
 * renewal process (exponential or Weibull gaps of mean 1 / (rate x units)),
 * planned maintenance as a Poisson process. A checkpoint every `interval`
 * of training time stalls the job (the write, or with async checkpoints the
 * snapshot to host memory, after which the write goes on in the background
 * and the checkpoint is durable when it ends). A failure loses the work
 * since the last durable checkpoint and costs a restart (the checkpoint
 * load included); planned maintenance checkpoints first and loses nothing.
 * A hardware failure takes a spare node, back from repair after
 * `repair`; without one the job waits for the first back, or, elastic, goes
 * on with one data-parallel replica fewer per missing node (at the degraded
 * plan's simulated step) and takes the nodes back at its next restart.
 *
 * Times are integer nanoseconds. The sample depends only on the job and the
 * generator's state; nothing here keeps global state.
 */
#ifndef CS_FAULT_RELIABILITY_H
#define CS_FAULT_RELIABILITY_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/scenario.h"

#define CS_REL_MAX_LOST 8 /* replicas an elastic job can go without */
/* The least Weibull shape sampled (reliability.weibull_shape's range
 * starts here): below about 0.006 the scale's Γ(1 + 1/k) overflows a
 * double (the gaps become NaN); at 0.01 it is 9.3e157 and most gaps of a
 * mean of hours are under the nanosecond they are rounded up to, so the
 * failures no longer keep their mean and a run never ends. At 0.1, a mean
 * of an hour has 22 % of its gaps under a nanosecond and keeps its mean. */
#define CS_REL_MIN_SHAPE 0.1

/* Where the wall clock goes besides kept training. */
typedef enum cs_rel_loss {
	CS_LOSS_CHECKPOINT, /* stalls for checkpoints (and a planned stop's) */
	CS_LOSS_RESTART,    /* detection to training again, checkpoint load included */
	CS_LOSS_REWORK,     /* training lost since the last durable checkpoint */
	CS_LOSS_WAIT,       /* waiting for a repaired node */
	CS_LOSS_DEGRADED,   /* throughput missing while running with fewer replicas */
	CS_LOSS_KINDS
} cs_rel_loss;

/* A run's states, for a timeline. */
typedef enum cs_rel_state {
	CS_GP_TRAIN,
	CS_GP_DEGRADED,
	CS_GP_CHECKPOINT,
	CS_GP_RESTART,
	CS_GP_WAIT,
	CS_GP_STATES
} cs_rel_state;

/* Everything a sample needs, prepared by the caller (study/goodput.c). */
typedef struct cs_rel_job {
	double fail_per_ns[CS_FAIL_CLASSES]; /* rate x units, per ns */
	bool needs_spare[CS_FAIL_CLASSES];
	double planned_per_ns;
	cs_fail_dist dist;
	double shape; /* Weibull k */
	int max_lost; /* elastic: 0 .. CS_REL_MAX_LOST */
	/* [k]: a step with k replicas fewer, [0] at full size */
	int64_t lost_step_ns[CS_REL_MAX_LOST + 1];
	double lost_tokens_per_step[CS_REL_MAX_LOST + 1];
	int64_t interval_ns; /* training time between checkpoints; 0 none */
	int64_t stall_ns;    /* the job's stall per checkpoint */
	int64_t write_ns;    /* async: from the snapshot to durable; 0 sync */
	int64_t restart_ns;  /* checkpoint load included */
	int64_t repair_ns;
	int64_t spares;
} cs_rel_job;

typedef struct cs_rel_run {
	int64_t horizon_ns;
	double tokens; /* kept at the end */
	int64_t lost_ns[CS_LOSS_KINDS];
	int64_t failures[CS_FAIL_CLASSES];
	int64_t planned;
} cs_rel_run;

/* Called for each stretch of one state, in time order; `cls` is the class
 * that caused a restart or wait (CS_FAIL_CLASSES for planned), else -1. */
typedef void (*cs_rel_span_fn)(void *ctx, cs_rel_state s, int64_t t0, int64_t t1, int cls);

/* One run of horizon_ns; on_span may be NULL. */
void cs_rel_sample(const cs_rel_job *job, int64_t horizon_ns, gsl_rng *rng, cs_rel_run *out,
		   cs_rel_span_fn on_span, void *span_ctx);

/* "gpu", "hbm", "host", "nic", "network", "software"; "planned" for
 * CS_FAIL_CLASSES. */
const char *cs_fail_class_name(int c);
/* "checkpoint", "restart", "rework", "wait", "degraded". */
const char *cs_rel_loss_name(cs_rel_loss k);

#endif
