/*
 * sweep_run.c - run a sweep's points on the job pool (pool.h).
 *
 * Each job loads and simulates its own point's scenario (the library keeps
 * no global state) and stores the outcome in the point's own slot, so the
 * results do not depend on the number of threads.
 */
#include "study/sweep_int.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "study/goodput.h"
#include "study/pool.h"
#include "study/study.h"

/* This rank's pending points, ascending: the pool's jobs. */
typedef struct share {
	cs_sweep *sw;
	size_t *list;
	size_t n;
	bool one_thread; /* the points run side by side: each on one thread */
} share;

static void run_point(cs_sweep *sw, size_t p, bool one_thread)
{
	size_t len = 0;
	for (size_t k = 0; k < sw->nkeys; k++)
		len += strlen(sw->keys[k].key) + strlen(sw->keys[k].vals[cs_sweep_point_index(sw, p, k)]) + 2;
	char *buf = malloc(len ? len : 1);
	const char **all = malloc((sw->nsets + sw->nkeys + 1) * sizeof *all);
	cs_diag diag = { { 0 } };
	cs_scenario *sc = NULL;
	cs_result *res = NULL;
	cs_status st = CS_ERR_NOMEM;

	if (!buf || !all || cs_sweep_point_sets(sw, p, buf, len ? len : 1) != CS_OK) {
		snprintf(diag.msg, sizeof diag.msg, "out of memory");
		goto failed;
	}
	for (size_t i = 0; i < sw->nsets; i++)
		all[i] = sw->sets[i];
	for (size_t k = 0, off = 0; k < sw->nkeys; k++) {
		all[sw->nsets + k] = buf + off;
		off += strlen(buf + off) + 1;
	}
	st = cs_scenario_load(sw->path, all, sw->nsets + sw->nkeys, &sc, &diag);
	if (st == CS_OK && one_thread && sc->sim.threads == 0) /* auto: the pool holds the cores */
		sc->sim.threads = 1;
	if (st == CS_OK)
		st = cs_simulate(sc, NULL, &res, &diag);
	if (st != CS_OK)
		goto failed;
	const char *names[CS_SWEEP_MAX_COLUMNS];
	double vals[CS_SWEEP_MAX_COLUMNS];
	cs_study_columns(cs_result_metrics(res), names, vals, CS_SWEEP_MAX_COLUMNS);
	if (sw->goodput_days > 0) {
		cs_goodput_report g;
		cs_goodput_opts go = { .days = sw->goodput_days,
				       .runs = sw->goodput_runs,
				       .jobs = 1,
				       .step_s = cs_result_metrics(res)->step_time_s };
		if ((st = cs_study_goodput(sc, &go, &g, &diag)) != CS_OK)
			goto failed;
		cs_goodput_columns(&g, names + sw->nmetric, vals + sw->nmetric,
				   (int)(CS_SWEEP_MAX_COLUMNS - sw->nmetric));
	}
	cs__sweep_store(sw, p, CS_SWEEP_OK, vals, NULL);
	goto out;
failed:
	/* a message about one of this point's values names --vary, not --set */
	for (size_t k = 0; st != CS_OK && k < sw->nkeys && all; k++) {
		const char *a = all[sw->nsets + k];
		size_t n = strlen(a);
		if (!strncmp(diag.msg, "--set '", 7) && !strncmp(diag.msg + 7, a, n) &&
		    diag.msg[7 + n] == '\'') {
			char tmp[sizeof diag.msg];
			snprintf(tmp, sizeof tmp, "--vary %.1000s", diag.msg + 6);
			memcpy(diag.msg, tmp, sizeof tmp);
			break;
		}
	}
	if (!diag.msg[0])
		snprintf(diag.msg, sizeof diag.msg, "failed without a message");
	cs__sweep_store(sw, p, CS_SWEEP_FAILED, NULL, diag.msg);
out:
	cs_result_free(res);
	cs_scenario_free(sc);
	free(all);
	free(buf);
}

static bool run_job(void *ctx, size_t j)
{
	share *sh = ctx;
	run_point(sh->sw, sh->list[j], sh->one_thread);
	return cs_sweep_point_state(sh->sw, sh->list[j]) != CS_SWEEP_FAILED;
}

cs_status cs_sweep_run(cs_sweep *sw, const cs_sweep_run_opts *o)
{
	if (!sw->checked)
		return CS_ERR_INPUT;
	size_t rank = o->nranks > 0 && o->rank >= 0 ? (size_t)o->rank : 0;
	size_t nranks = o->nranks > 0 ? (size_t)o->nranks : 1;
	share sh = { .sw = sw,
		     .list = malloc((sw->npoints / nranks + 1) * sizeof *sh.list),
		     .one_thread = o->jobs > 1 };
	if (!sh.list)
		return CS_ERR_NOMEM;
	for (size_t p = rank; p < sw->npoints; p += nranks)
		if (sw->state[p] == CS_SWEEP_PENDING)
			sh.list[sh.n++] = p;
	cs_pool_opts po = {
		.jobs = o->jobs, .stop = o->stop, .progress = o->progress, .progress_ud = o->progress_ud
	};
	size_t done = cs_pool_run(sh.n, run_job, &sh, &po);
	free(sh.list);
	return done < sh.n ? CS_ERR_SIM : CS_OK;
}
