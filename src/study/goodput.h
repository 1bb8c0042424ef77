/*
 * goodput.h - how much of the wall clock becomes training over a run of
 * days: the scenario's step simulated, its reliability section turned into
 * a job (fault/reliability.h), and many sampled runs on the job pool.
 *
 *   cs_goodput_report g;
 *   if (cs_study_goodput(sc, &(cs_goodput_opts){ .days = 54, .runs = 1000 }, &g, &diag)
 *       != CS_OK) ... report diag.msg ...
 *
 * Run i draws from a generator seeded by (simulate.seed, i), so the report
 * does not depend on the number of threads. Nothing here keeps global state.
 */
#ifndef CS_STUDY_GOODPUT_H
#define CS_STUDY_GOODPUT_H

#include "clustersim/clustersim.h"
#include "fault/reliability.h"
#include "study/pool.h"

typedef struct cs_goodput_opts {
	double days;         /* each run's length */
	int64_t runs;        /* samples; <= 0: 1000 */
	double token_budget; /* for time-to-train; 0: none */
	int jobs;            /* threads; < 1: 1 */
	double step_s;       /* the scenario's step when the caller simulated it
	                         * already (a sweep's point); 0: simulate it */
	cs_pool_opts pool;   /* stop flag and progress (jobs ignored) */
} cs_goodput_opts;

/* A mean over runs with its 99 % confidence interval (normal, 2.576 sd of
 * the mean). */
typedef struct cs_goodput_ci {
	double mean, lo, hi;
} cs_goodput_ci;

typedef struct cs_goodput_report {
	int64_t runs;
	double days;
	cs_rel_job job; /* what each run samples */
	uint64_t seed;  /* simulate.seed: run i draws from (seed, i) */
	/* the job */
	double step_s, tokens_per_step;
	int64_t gpus, nodes, replicas;
	double fail_per_day[CS_FAIL_CLASSES + 1];             /* expected, from the rates (+ planned) */
	double mtbf_h;                                        /* between unexpected failures of the job */
	double checkpoint_bytes, stall_s, write_s, restart_s; /* restart with the load */
	double interval_s;                                    /* 0: no checkpoints */
	double young_daly_s;                                  /* sqrt(2 x stall x MTBF) */
	double first_order_lost; /* stall/interval + interval/(2 MTBF) + restart/MTBF */
	double elastic_step_s;   /* with one replica fewer (0 unless elastic) */
	/* the runs */
	cs_goodput_ci ett;                          /* kept training / wall clock */
	cs_goodput_ci per_day[CS_FAIL_CLASSES + 1]; /* interruptions per day by cause */
	cs_goodput_ci interruptions_per_day;
	cs_goodput_ci lost[CS_LOSS_KINDS]; /* fraction of the wall clock */
	cs_goodput_ci ttt_days;            /* for the token budget (0 without one) */
	double ttt_ideal_days;             /* without failures or checkpoints */
} cs_goodput_report;

cs_status cs_study_goodput(const cs_scenario *sc, const cs_goodput_opts *opts, cs_goodput_report *out,
			   cs_diag *diag);

/* The report's figures as named columns, in one fixed order (a sweep's
 * with --goodput): the effective training time with its interval, the
 * interruptions a day, the lost fraction by cause and the Young/Daly
 * interval. Returns the number of columns (at most cap are written). */
int cs_goodput_columns(const cs_goodput_report *g, const char **names, double *values, int cap);

/* Run number `which` of the report again, with its spans, for a timeline:
 * the same draws as in the report. CS_ERR_NOMEM without a generator. */
cs_status cs_study_goodput_sample(const cs_goodput_report *g, int64_t which, cs_rel_span_fn on_span,
				  void *ctx, cs_rel_run *out);

#endif
