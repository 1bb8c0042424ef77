/*
 * test_goodput.c - sampled training runs under failures, checkpoints and
 * restarts: the closed form of the lost time, the Young/Daly interval, the
 * wall clock's accounting, determinism over threads, and the Llama 3
 * preset.
 */
#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "fault/reliability.h"
#include "study/goodput.h"

#define HOUR_NS 3600e9

/* One failure class (software: no spare) at mean gap m_h hours, a
 * checkpoint stall of delta_s every tau_h hours of training, restart r_s. */
static cs_rel_job simple_job(double m_h, double tau_h, double delta_s, double r_s)
{
	cs_rel_job j;
	memset(&j, 0, sizeof j);
	j.fail_per_ns[CS_FAIL_SOFTWARE] = 1.0 / (m_h * HOUR_NS);
	j.dist = CS_FAIL_EXPONENTIAL;
	j.shape = 1;
	j.lost_step_ns[0] = 10000000000;   /* 10 s */
	j.lost_tokens_per_step[0] = 1e6;
	j.interval_ns = (int64_t)llround(tau_h * HOUR_NS);
	j.stall_ns = (int64_t)llround(delta_s * 1e9);
	j.restart_ns = (int64_t)llround(r_s * 1e9);
	return j;
}

typedef struct stats {
	double mean, half;   /* the mean and its 99 % half-width */
} stats;

/* The lost fraction (1 - kept / horizon) over n runs of `days`. */
static stats lost_fraction(const cs_rel_job *j, double days, int n, unsigned long seed)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, seed);
	double s = 0, sq = 0, rate = j->lost_tokens_per_step[0] / (double)j->lost_step_ns[0];
	for (int i = 0; i < n; i++) {
		cs_rel_run r;
		cs_rel_sample(j, (int64_t)llround(days * 86400e9), rng, &r, NULL, NULL);
		double lost = 1.0 - r.tokens / ((double)r.horizon_ns * rate);
		s += lost;
		sq += lost * lost;
	}
	gsl_rng_free(rng);
	double m = s / n, var = (sq - n * m * m) / (n - 1);
	return (stats){ m, 2.576 * sqrt(var / n) };
}

/* Exponential failures, periodic checkpoints: the lost fraction is
 * delta/tau + tau/(2M) + R/M to first order; with delta/tau and tau/M at
 * 1e-3 the higher orders (about 1e-6) are inside the sampling interval. */
START_TEST(lost_time_matches_the_first_order_closed_form)
{
	double m = 1000, tau = 1, delta = 3.6, r = 360;
	cs_rel_job j = simple_job(m, tau, delta, r);
	stats s = lost_fraction(&j, 1000, 1500, 7);
	double closed = delta / (tau * 3600) + tau / (2 * m) + r / (m * 3600);
	ck_assert_msg(fabs(s.mean - closed) <= s.half, "lost %.6g +- %.2g, closed form %.6g", s.mean,
		      s.half, closed);
	ck_assert_double_lt(s.half, 0.1 * closed);  /* the test can tell */
}
END_TEST

/* Sweeping the interval around Young/Daly's sqrt(2 delta M): the least lost
 * time is at the optimum, and the lost time there is the closed form's
 * minimum, 2 sqrt(delta / 2M) + R/M. */
START_TEST(young_daly_interval_minimises_lost_time)
{
	double m = 100, delta = 60, r = 60;
	double opt_h = sqrt(2 * delta * m * 3600) / 3600;
	static const double f[] = { 0.25, 0.5, 1, 2, 4 };
	stats s[5];
	for (int i = 0; i < 5; i++) {
		cs_rel_job j = simple_job(m, opt_h * f[i], delta, r);
		s[i] = lost_fraction(&j, 200, 300, 11);
	}
	for (int i = 0; i < 5; i++)
		if (i != 2)
			ck_assert_msg(s[2].mean + s[2].half < s[i].mean - s[i].half,
				      "x%.2f: %.5f, optimum %.5f", f[i], s[i].mean, s[2].mean);
	double least = 2 * sqrt(delta / (2 * m * 3600)) + r / (m * 3600);
	ck_assert_msg(fabs(s[2].mean - least) < 0.05 * least, "%.5f against %.5f", s[2].mean, least);
}
END_TEST

/* The wall clock splits exactly into kept training and the five losses,
 * whatever happens: failures of every class, planned stops, async
 * checkpoints, spares running out, elastic running. */
START_TEST(wall_clock_is_kept_training_plus_losses)
{
	cs_rel_job j;
	memset(&j, 0, sizeof j);
	for (int c = 0; c < CS_FAIL_CLASSES; c++) {
		j.fail_per_ns[c] = (0.05 + 0.03 * c) / HOUR_NS;
		j.needs_spare[c] = c < CS_FAIL_NETWORK;
	}
	j.planned_per_ns = 0.5 / (24 * HOUR_NS);
	j.dist = _i % 2 ? CS_FAIL_WEIBULL : CS_FAIL_EXPONENTIAL;
	j.shape = 0.7;
	j.max_lost = _i >= 2 ? 3 : 0;
	for (int k = 0; k <= 3; k++) {
		j.lost_step_ns[k] = 5000000000 + 100000000 * k;
		j.lost_tokens_per_step[k] = 4e6 * (16 - k) / 16;
	}
	j.interval_ns = (int64_t)(0.5 * HOUR_NS);
	j.stall_ns = 20000000000;
	j.write_ns = _i == 3 ? 120000000000 : 0;
	j.restart_ns = 600000000000;
	j.repair_ns = (int64_t)(6 * HOUR_NS);
	j.spares = 1;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 3 + (unsigned long)_i);
	double rate = j.lost_tokens_per_step[0] / (double)j.lost_step_ns[0];
	int64_t waited = 0, degraded = 0;
	for (int n = 0; n < 50; n++) {
		cs_rel_run r;
		cs_rel_sample(&j, (int64_t)(60 * 24 * HOUR_NS), rng, &r, NULL, NULL);
		double sum = r.tokens / rate;
		for (int k = 0; k < CS_LOSS_KINDS; k++) {
			ck_assert_int_ge(r.lost_ns[k], 0);
			sum += (double)r.lost_ns[k];
		}
		ck_assert_msg(fabs(sum - (double)r.horizon_ns) < 1e-6 * (double)r.horizon_ns,
			      "parts %.6g ns, horizon %lld ns", sum, (long long)r.horizon_ns);
		waited += r.lost_ns[CS_LOSS_WAIT];
		degraded += r.lost_ns[CS_LOSS_DEGRADED];
	}
	gsl_rng_free(rng);
	/* one spare for five failing classes: without elastic running the job
	 * waits for repairs; with it, it runs smaller instead */
	if (_i < 2)
		ck_assert(waited > 0 && degraded == 0);
	else
		ck_assert(degraded > 0);
}
END_TEST

/* The spans of a run follow one another: time never goes back. */
static void in_order(void *ctx, cs_rel_state st, int64_t t0, int64_t t1, int cls)
{
	int64_t *last = ctx;
	(void)st;
	(void)cls;
	ck_assert_int_ge(t0, *last);
	ck_assert_int_ge(t1, t0);
	*last = t1;
}

/* Failures during planned stops' checkpoints (half an hour every hour,
 * failures every hour): each cancels the checkpoint and restarts from the
 * last durable one, and the wall clock still splits into kept training and
 * losses none of which is negative (a failure left pending behind the stop
 * once sent the clock back: a restart of -168035 %). Small Weibull shapes
 * crowd the failures further. */
START_TEST(failures_during_a_planned_stop_do_not_turn_back_the_clock)
{
	cs_rel_job j = simple_job(1, 0, 0, 600);
	j.planned_per_ns = 1.0 / HOUR_NS;
	j.stall_ns = (int64_t)(0.5 * HOUR_NS);
	j.dist = _i ? CS_FAIL_WEIBULL : CS_FAIL_EXPONENTIAL;
	j.shape = _i == 1 ? CS_REL_MIN_SHAPE : _i == 2 ? 0.3 : 1;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 11);
	double rate = j.lost_tokens_per_step[0] / (double)j.lost_step_ns[0];
	int64_t planned = 0;
	for (int n = 0; n < 20; n++) {
		cs_rel_run r;
		int64_t last = 0;
		cs_rel_sample(&j, (int64_t)(10 * 24 * HOUR_NS), rng, &r, in_order, &last);
		double sum = r.tokens / rate;
		ck_assert(r.tokens >= 0);
		for (int k = 0; k < CS_LOSS_KINDS; k++) {
			ck_assert_int_ge(r.lost_ns[k], 0);
			sum += (double)r.lost_ns[k];
		}
		ck_assert_msg(fabs(sum - (double)r.horizon_ns) < 1e-6 * (double)r.horizon_ns,
			      "parts %.6g ns, horizon %lld ns", sum, (long long)r.horizon_ns);
		planned += r.planned;
	}
	gsl_rng_free(rng);
	ck_assert_int_gt(planned, 0);
}
END_TEST

/* A class's long-run failure count depends on its mean gap, not the shape
 * of the gaps (renewal theorem): Weibull k = 0.7 and exponential agree. */
START_TEST(weibull_keeps_the_mean_rate)
{
	cs_rel_job j = simple_job(10, 0, 0, 0);
	j.interval_ns = 0;
	double count[2];
	for (int w = 0; w < 2; w++) {
		j.dist = w ? CS_FAIL_WEIBULL : CS_FAIL_EXPONENTIAL;
		j.shape = 0.7;
		gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(rng, 5);
		double n = 0;
		for (int i = 0; i < 200; i++) {
			cs_rel_run r;
			cs_rel_sample(&j, (int64_t)(1000 * HOUR_NS), rng, &r, NULL, NULL);
			n += (double)r.failures[CS_FAIL_SOFTWARE];
		}
		gsl_rng_free(rng);
		count[w] = n / 200;
	}
	/* 1000 h / 10 h per failure, less the restarts' time (none here) */
	ck_assert_double_eq_tol(count[0], 100, 2.5);
	ck_assert_double_eq_tol(count[1], 100, 4);
}
END_TEST

/* On identical, ideal machines unless a later override names a fleet. */
static cs_scenario *load(const char *path, const char *const *sets, size_t n)
{
	const char *all[8] = { "fleet.preset=ideal" };
	cs_scenario *sc = NULL;
	cs_diag d = { { 0 } };
	ck_assert_uint_lt(n, 8);
	for (size_t i = 0; i < n; i++)
		all[i + 1] = sets[i];
	ck_assert_msg(cs_scenario_load(path, all, n + 1, &sc, &d) == CS_OK, "%s", d.msg);
	return sc;
}

#define GOODPUT_SC CS_SOURCE_ROOT "/scenarios/llama3-405b-16k-goodput.yaml"

/* Run i draws from its own generator: the report is the same on 1 or 3
 * threads, byte for byte. */
START_TEST(report_does_not_depend_on_threads)
{
	cs_scenario *sc = load(GOODPUT_SC, NULL, 0);
	cs_goodput_report a, b;
	cs_diag d = { { 0 } };
	cs_goodput_opts o = { .days = 10, .runs = 300, .token_budget = 1e12, .jobs = 1 };
	ck_assert_msg(cs_study_goodput(sc, &o, &a, &d) == CS_OK, "%s", d.msg);
	o.jobs = 3;
	ck_assert_msg(cs_study_goodput(sc, &o, &b, &d) == CS_OK, "%s", d.msg);
	ck_assert(memcmp(&a, &b, sizeof a) == 0);
	cs_scenario_free(sc);
}
END_TEST

/* The Llama 3 preset gives back the paper's 466 interruptions in 54 days
 * (8.63 a day), and with the scenario's assumptions an effective training
 * time over 90 %, as published. */
START_TEST(llama3_preset_reproduces_the_interruption_log)
{
	cs_scenario *sc = load(GOODPUT_SC, NULL, 0);
	cs_goodput_report g;
	cs_diag d = { { 0 } };
	cs_goodput_opts o = { .days = 54, .runs = 1000, .jobs = 2 };
	ck_assert_msg(cs_study_goodput(sc, &o, &g, &d) == CS_OK, "%s", d.msg);
	double expected = 0;
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		expected += g.fail_per_day[c];
	ck_assert_double_eq_tol(expected, 466.0 / 54.0, 1e-9);
	ck_assert_double_eq_tol(g.fail_per_day[CS_FAIL_GPU] + g.fail_per_day[CS_FAIL_HBM],
				(196.0 + 72.0) / 54.0, 1e-9);
	ck_assert_msg(g.interruptions_per_day.lo < 466.0 / 54.0 &&
		      466.0 / 54.0 < g.interruptions_per_day.hi + 0.05, "%.3f a day",
		      g.interruptions_per_day.mean);
	ck_assert_msg(g.ett.mean > 0.90 && g.ett.mean < 0.95, "%.4f", g.ett.mean);
	cs_scenario_free(sc);
}
END_TEST

/* The step is folded only where the scenario's checks allow it: with
 * documents drawn per micro-batch it is the unfolded run's step, and
 * without, the folded step equals the full one; on a production fleet
 * (per-GPU effects: not folded) it is the fleet's expected step. */
START_TEST(step_is_the_runs_step)
{
	static const char *const docs[] = { "training.documents.mean=512", "training.seq_len=2048",
					    "fleet.preset=production" };
	cs_scenario *sc = load(CS_SOURCE_ROOT "/scenarios/ddp-gpt-small.yaml", docs + _i, 1);
	cs_result *res = NULL;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_simulate(sc, NULL, &res, &d), CS_OK);
	cs_goodput_report g;
	cs_goodput_opts o = { .days = 1, .runs = 10, .jobs = 1 };
	ck_assert_msg(cs_study_goodput(sc, &o, &g, &d) == CS_OK, "%s", d.msg);
	ck_assert_double_eq(g.step_s, cs_result_metrics(res)->step_time_s);
	cs_result_free(res);
	cs_scenario_free(sc);
}
END_TEST

/* Refusals at the key's location: an interval shorter than a step, a
 * checkpoint larger than the storage, elastic running of one replica. */
static const struct { const char *set, *want; } refusals[] = {
	{ "reliability.checkpoint.interval=1s", "--set 'reliability.checkpoint.interval=1s': a "
	  "checkpoint every 1 s is shorter than a step" },
	{ "reliability.checkpoint.storage_capacity=1TB", "--set 'reliability.checkpoint."
	  "storage_capacity=1TB': a checkpoint of 5682 GB does not fit the storage's 1000 GB" },
	{ "reliability.checkpoint.async=true", NULL },
};

START_TEST(bad_reliability_is_refused_at_its_key)
{
	const char *sets[] = { refusals[_i].set };
	cs_scenario *sc = load(GOODPUT_SC, sets, 1);
	cs_goodput_report g;
	cs_diag d = { { 0 } };
	cs_goodput_opts o = { .days = 1, .runs = 10, .jobs = 1 };
	cs_status st = cs_study_goodput(sc, &o, &g, &d);
	if (refusals[_i].want) {
		ck_assert_int_eq(st, CS_ERR_INPUT);
		ck_assert_msg(strstr(d.msg, refusals[_i].want) == d.msg, "%s", d.msg);
	} else {
		/* async: the job stalls only for the snapshot to host memory */
		ck_assert_msg(st == CS_OK, "%s", d.msg);
		ck_assert_double_lt(g.stall_s, 1.0);
		ck_assert_double_gt(g.write_s, 2.0);
	}
	cs_scenario_free(sc);
}
END_TEST

/* Figures that cannot be are never reported: without failures nor
 * checkpoints every run keeps all its training (exactly 1, not
 * 1.0000000000000002), the MTBF and the Young/Daly interval are infinite
 * (the JSON's null, a sweep's empty cell), and at a checkpoint that takes
 * longer than the interval the first-order loss is all, not -1789 %. */
START_TEST(impossible_figures_are_not_reported)
{
	static const char *const none[] = { "reliability.checkpoint.interval=0s" };
	cs_scenario *sc = load(CS_SOURCE_ROOT "/scenarios/ddp-gpt-small.yaml", none, 1);
	cs_goodput_report g;
	cs_diag d = { { 0 } };
	cs_goodput_opts o = { .days = 3, .runs = 30, .jobs = 1 };
	ck_assert_msg(cs_study_goodput(sc, &o, &g, &d) == CS_OK, "%s", d.msg);
	ck_assert_double_eq(g.ett.mean, 1.0);
	ck_assert_double_eq(g.ett.hi, 1.0);
	ck_assert(isinf(g.mtbf_h) && isinf(g.young_daly_s));
	const char *names[16];
	double vals[16];
	int n = cs_goodput_columns(&g, names, vals, 16);
	ck_assert_str_eq(names[n - 1], "young_daly_interval_s");
	ck_assert(isinf(vals[n - 1]));
	cs_scenario_free(sc);
	static const char *const absurd[] = { "reliability.software_rate=10", "reliability.planned_per_day=100",
					      "reliability.checkpoint.size=100TB",
					      "reliability.checkpoint.interval=1h" };
	sc = load(CS_SOURCE_ROOT "/scenarios/ddp-gpt-small.yaml", absurd, 4);
	o.runs = 20;
	ck_assert_msg(cs_study_goodput(sc, &o, &g, &d) == CS_OK, "%s", d.msg);
	ck_assert_double_eq(g.first_order_lost, 1.0);
	for (int k = 0; k < CS_LOSS_KINDS; k++)
		ck_assert(g.lost[k].lo >= 0 && g.lost[k].hi <= 1);
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		ck_assert(g.per_day[c].lo >= 0);
	ck_assert(g.ett.lo >= 0);
	cs_scenario_free(sc);
}
END_TEST

/* What the library is handed past the scenario's checks is refused at its
 * key: a Weibull shape below CS_REL_MIN_SHAPE (tgamma overflows), and
 * runs whose events would take hours. */
START_TEST(unsampleable_jobs_are_refused_at_their_key)
{
	static const char *const sets[] = { "reliability.preset=llama3", "reliability.checkpoint.interval=1s" };
	cs_scenario *sc = load(CS_SOURCE_ROOT "/scenarios/ddp-gpt-small.yaml", sets, _i ? 2 : 1);
	cs_goodput_report g;
	cs_diag d = { { 0 } };
	cs_goodput_opts o = { .days = _i ? 36500 : 1, .runs = 1000, .jobs = 1 };
	if (!_i) {
		sc->reliability.distribution = CS_FAIL_WEIBULL;
		sc->reliability.weibull_shape = 0.005;
	}
	ck_assert_int_eq(cs_study_goodput(sc, &o, &g, &d), CS_ERR_INPUT);
	const char *want = _i ? "--set 'reliability.checkpoint.interval=1s': 1000 runs of 36500 days at 8.64e+04 "
				"events a day"
			      : ": a Weibull shape of 0.005 is below the least sampled, 0.1";
	ck_assert_msg(strstr(d.msg, want) != NULL, "%s", d.msg);
	cs_scenario_free(sc);
}
END_TEST

static Suite *goodput_suite(void)
{
	Suite *s = suite_create("goodput");
	TCase *tc = tcase_create("closed_form");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, lost_time_matches_the_first_order_closed_form);
	tcase_add_test(tc, young_daly_interval_minimises_lost_time);
	tcase_add_loop_test(tc, wall_clock_is_kept_training_plus_losses, 0, 4);
	tcase_add_test(tc, weibull_keeps_the_mean_rate);
	tcase_add_loop_test(tc, failures_during_a_planned_stop_do_not_turn_back_the_clock, 0, 3);
	suite_add_tcase(s, tc);
	tc = tcase_create("study");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, report_does_not_depend_on_threads);
	tcase_add_test(tc, llama3_preset_reproduces_the_interruption_log);
	tcase_add_loop_test(tc, step_is_the_runs_step, 0, 3);
	tcase_add_test(tc, impossible_figures_are_not_reported);
	tcase_add_loop_test(tc, unsampleable_jobs_are_refused_at_their_key, 0, 2);
	tcase_add_loop_test(tc, bad_reliability_is_refused_at_its_key, 0,
			    sizeof refusals / sizeof refusals[0]);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(goodput_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
