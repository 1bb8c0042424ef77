/*
 * cmd_calibrate_net.c - `clustersim calibrate --nccl-tests FILE SCENARIO`:
 * read nccl-tests output (ingest/nccltests.c), every test the file holds,
 * place each test's group on the scenario's cluster, fit the tuner's
 * bandwidth and latency factors to all their times at once
 * (study/net_fit.c), print the residual of every size and the rms of each
 * test before and after, and write the factors into the calibration file
 * with whatever the scenario's calibration already held. A device that is
 * not the scenario's GPU, or ranks per host that are not its GPUs per node,
 * are warned of, and implausible factors refused without --force; with
 * --plot, the measured bus bandwidths beside the model's before and after
 * (report/nccl_out.c). Everything allocated here is freed here.
 */
#include "cli/calibrate_int.h"
#include "cli/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "study/net_fit.h"
#include "config/config.h"
#include "config/scenario.h"
#include "hw/calib.h"
#include "hw/files.h"
#include "ingest/nccltests.h"
#include "report/nccl_out.h"

/* One test of the file with what the fit needs. */
typedef struct measured {
	const cs_nccltests *t;
	cs_coll_op op;
	cs_group_shape g;
	double *bytes, *ns;
} measured;

/* Root mean square of ln(model / measured) over the test's sizes. */
static double rms(const measured *m, cs_coll *co)
{
	double sum = 0;
	for (size_t i = 0; i < m->t->nrows; i++) {
		double t = (double)cs_coll_time(co, m->op, &m->g, m->bytes[i], NULL);
		double d = log((t > 0 ? t : 1) / m->ns[i]);
		sum += d * d;
	}
	return sqrt(sum / (double)m->t->nrows);
}

static void print_rows(const measured *m, cs_coll *before, cs_coll *after)
{
	printf("\n%12s %12s %12s %9s %12s %9s  %s\n", "size(B)", "measured us", "model us", "error",
	       "fitted us", "error", "algorithm/protocol");
	for (size_t i = 0; i < m->t->nrows; i++) {
		cs_coll_choice ch;
		double b = 1e-3 * (double)cs_coll_time(before, m->op, &m->g, m->bytes[i], NULL);
		double a = 1e-3 * (double)cs_coll_time(after, m->op, &m->g, m->bytes[i], &ch);
		double t = 1e-3 * m->ns[i];
		printf("%12.0f %12.2f %12.2f %+8.1f%% %12.2f %+8.1f%%  %s/%s\n", m->bytes[i], t, b,
		       100 * (b - t) / t, a, 100 * (a - t) / t, cs_coll_choice_name(m->op, &ch),
		       cs_coll_proto_name(ch.proto));
	}
}

static void print_factor(const char *key, double f, bool fitted)
{
	if (fitted)
		printf("%-20s %.4g\n", key, f);
	else
		printf("%-20s %.4g, kept: these times do not depend on it\n", key, f);
}

/* The warnings of a test that may not be the scenario's hardware. */
static void warn_mismatch(const char *file, const cs_nccltests *t, const cs_cluster_spec *c)
{
	if (cs_nccltests_same_gpu(t->gpu, c->gpu.name) == 0)
		fprintf(stderr,
			"clustersim calibrate: warning: %s:%d: the test ran on '%s', the "
			"scenario's GPU is '%s': the factors fit that GPU's network, not this one's\n",
			file, t->line, t->gpu, c->gpu.name);
	if (t->ranks_per_host != c->gpus_per_node)
		fprintf(stderr,
			"clustersim calibrate: warning: %s:%d: the test ran %lld rank%s per host, "
			"the scenario's nodes have %d GPUs: the factors fit the test's placement\n",
			file, t->line, (long long)t->ranks_per_host, t->ranks_per_host == 1 ? "" : "s",
			c->gpus_per_node);
}

/* No bus bandwidth a test measures exceeds the fastest link a GPU of the
 * scenario has (NVLink, its node's NICs, a torus' links) by this factor;
 * NVLink SHARP's all-reduce, the fastest nccl-tests reports, stays below 2. */
#define BUSBW_MAX_OVER_LINK 10.0

/* The fastest a GPU of the cluster sends, B/s. */
static double fastest_link(const cs_cluster_spec *c)
{
	double bw = c->scale_up.bandwidth;
	double nic =
		c->scale_out.bandwidth * c->nics_per_node / (c->gpus_per_node > 0 ? c->gpus_per_node : 1);
	double ici = c->gpu.ici_bandwidth * c->gpu.ici_links;
	bw = nic > bw ? nic : bw;
	bw = ici > bw ? ici : bw;
	return c->gpu.nvlink_bandwidth > bw ? c->gpu.nvlink_bandwidth : bw;
}

/* 0, or 2 after naming the row whose time is too short for any link of
 * the cluster: a time that cannot be, which would pull the fit far away. */
static int possible_rows(const char *file, const measured *m, const cs_cluster_spec *c)
{
	double link = fastest_link(c), factor = cs_coll_bus_factor(m->op, m->t->nranks);
	for (size_t i = 0; i < m->t->nrows; i++) {
		double busbw = m->bytes[i] / (m->ns[i] * 1e-9) * factor;
		if (link > 0 && busbw > BUSBW_MAX_OVER_LINK * link) {
			fprintf(stderr,
				"clustersim calibrate: %s:%d: %.0f bytes in %.4g us is a bus bandwidth of "
				"%.4g GB/s, more than %g times the cluster's fastest link (%.4g GB/s): a "
				"time "
				"that cannot be measured on it\n",
				file, m->t->rows[i].line, m->bytes[i], 1e-3 * m->ns[i], busbw * 1e-9,
				BUSBW_MAX_OVER_LINK, link * 1e-9);
			return 2;
		}
	}
	return 0;
}

/* No size of a test takes this many times longer than another size of it
 * allows: a collective's time (a latency plus its bytes over a bandwidth,
 * for every algorithm and protocol, NCCL taking the cheapest) neither falls
 * as its size grows nor grows faster than its size. */
#define SLOWER_MAX 10.0

/* Does row a take more than SLOWER_MAX times what row b allows it: b's
 * time for a size no larger than b's, b's time scaled by the sizes for a
 * larger one? */
static bool slower(const measured *m, size_t a, size_t b)
{
	double scale = m->bytes[a] > m->bytes[b] ? m->bytes[a] / m->bytes[b] : 1;
	return m->ns[a] > SLOWER_MAX * m->ns[b] * scale;
}

/* The rows that row c disagrees with, either way. */
static size_t disagreements(const measured *m, size_t c)
{
	size_t n = 0;
	for (size_t r = 0; r < m->t->nrows; r++)
		n += r != c && (slower(m, c, r) || slower(m, r, c));
	return n;
}

typedef struct sized {
	double bytes, ns;
	size_t i;
} sized;

/* By size, the slower first within a size (then by row: one order). */
static int by_size(const void *pa, const void *pb)
{
	const sized *a = pa, *b = pb;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? -1 : 1;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The row that takes the most times longer than another row allows it
 * (*slow, and that other row *fast), by one sort and two sweeps: the
 * quickest row of a size no smaller, the least time per byte of a smaller
 * size. The ratio, 0 with fewer than two rows; NAN out of memory. */
static double slowest_pair(const measured *m, size_t *slow, size_t *fast)
{
	size_t n = m->t->nrows;
	if (n < 2)
		return 0;
	sized *s = malloc(n * sizeof *s);
	size_t *after = malloc(n * sizeof *after);
	if (!s || !after) {
		free(s);
		free(after);
		return NAN;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = (sized){ m->bytes[i], m->ns[i], i };
	qsort(s, n, sizeof *s, by_size);
	/* after[p]: of the rows sorted after p, the one of the least time */
	after[n - 1] = n;
	for (size_t p = n - 1; p-- > 0;)
		after[p] = after[p + 1] < n && s[after[p + 1]].ns <= s[p + 1].ns ? after[p + 1] : p + 1;
	double worst = 0;
	size_t before = n; /* of the rows sorted before p, the one of the least time per byte */
	for (size_t p = 0; p < n; p++) {
		double allow = HUGE_VAL;
		size_t by = n;
		if (after[p] < n) {
			allow = s[after[p]].ns;
			by = after[p];
		}
		if (before < n && s[p].bytes * s[before].ns / s[before].bytes < allow) {
			allow = s[p].bytes * s[before].ns / s[before].bytes;
			by = before;
		}
		if (by < n && s[p].ns / allow > worst) {
			worst = s[p].ns / allow;
			*slow = s[p].i;
			*fast = s[by].i;
		}
		if (before == n || s[p].ns / s[p].bytes < s[before].ns / s[before].bytes)
			before = p;
	}
	free(s);
	free(after);
	return worst;
}

/* 0, or 2 after naming a row whose time disagrees with another size's by
 * more than SLOWER_MAX: of the two, the one that disagrees with more of
 * the test's rows (the slower where they tie), a time that cannot be
 * measured, which would drag the fit as far as it likes. */
static int consistent_rows(const char *file, const measured *m)
{
	size_t slow = 0, fast = 0;
	double worst = slowest_pair(m, &slow, &fast);
	if (isnan(worst)) {
		fprintf(stderr, "clustersim calibrate: out of memory\n");
		return 2;
	}
	if (worst <= SLOWER_MAX)
		return 0;
	size_t ns = disagreements(m, slow), nf = disagreements(m, fast);
	size_t bad = nf > ns ? fast : slow, other = nf > ns ? slow : fast;
	fprintf(stderr,
		"clustersim calibrate: %s:%d: %.0f bytes in %.4g us disagrees by more than %g times with "
		"%zu of the test's %zu other sizes (line %d: %.0f bytes in %.4g us): a collective's time "
		"neither falls as its size grows nor grows faster than its size; a time that cannot be "
		"measured (remove the row, or measure it again%s)\n",
		file, m->t->rows[bad].line, m->bytes[bad], 1e-3 * m->ns[bad], SLOWER_MAX, nf > ns ? nf : ns,
		m->t->nrows - 1, m->t->rows[other].line, m->bytes[other], 1e-3 * m->ns[other],
		bad == slow ? "; nccl-tests' warm-up, '-w', keeps NCCL's connection setup out of the times"
			    : "");
	return 2;
}

/* 0, or 2 after saying that '--op' names another collective than the
 * test's header ('# Collective test starting: ...'). */
static int op_agrees(const char *file, const cs_nccltests *t, int forced_op)
{
	cs_diag diag = { { 0 } };
	cs_coll_op named;
	if (forced_op < 0 || !t->test[0] || cs_nccltests_op(t, file, -1, &named, &diag) != CS_OK ||
	    (int)named == forced_op)
		return 0;
	fprintf(stderr,
		"clustersim calibrate: %s:%d: '--op %s' contradicts the test's header, which says "
		"'%s' (%s): drop '--op', which is for a test the output does not name\n",
		file, t->line, cs_coll_op_name((cs_coll_op)forced_op), t->test, cs_coll_op_name(named));
	return 2;
}

/* Each test's op, group and sizes, or 2 after printing the problem. */
static int place(const char *file, const cs_nccltests_set *set, const cs_scenario *sc, int forced_op,
		 measured *m)
{
	cs_diag diag = { { 0 } };
	for (size_t k = 0; k < set->n; k++) {
		const cs_nccltests *t = &set->tests[k];
		m[k].t = t;
		if (op_agrees(file, t, forced_op) != 0)
			return 2;
		if (cs_nccltests_op(t, file, forced_op, &m[k].op, &diag) != CS_OK) {
			fprintf(stderr, "%s\n", CS_CLEAN(diag));
			return 2;
		}
		if (cs_nccltests_group(t, file, &sc->cluster, &m[k].g, &diag) != CS_OK) {
			fprintf(stderr, "clustersim calibrate: %s\n", CS_CLEAN(diag));
			return 2;
		}
		warn_mismatch(file, t, &sc->cluster);
		m[k].bytes = malloc(t->nrows * sizeof *m[k].bytes);
		m[k].ns = malloc(t->nrows * sizeof *m[k].ns);
		if (!m[k].bytes || !m[k].ns) {
			fprintf(stderr, "clustersim calibrate: out of memory\n");
			return 2;
		}
		for (size_t i = 0; i < t->nrows; i++) {
			const cs_nccl_row *r = &t->rows[i];
			m[k].bytes[i] = r->bytes;
			m[k].ns[i] = 1e3 * (isnan(r->time_us[0]) ? r->time_us[1] : r->time_us[0]);
		}
		if (possible_rows(file, &m[k], &sc->cluster) != 0 || consistent_rows(file, &m[k]) != 0)
			return 2;
	}
	return 0;
}

static void print_fit(const char *file, const char *out, const cs_scenario *sc, const cs_nccltests_set *set,
		      const measured *m, cs_coll *before, cs_coll *after, const cs_net_fit *fit,
		      cs_calib_net bw)
{
	printf("calibration  %s: %s from %s\n", out, sc->name, file);
	for (size_t k = 0; k < set->n; k++) {
		const cs_nccltests *t = m[k].t;
		if (set->n > 1)
			printf("%s%s (line %d)\n", k ? "\n" : "", t->test[0] ? t->test : "test", t->line);
		printf("measured     %s on %lld ranks, %lld host%s (%lld per host)%s%s, %zu sizes\n",
		       cs_coll_op_name(m[k].op), (long long)t->nranks, (long long)t->nhosts,
		       t->nhosts == 1 ? "" : "s", (long long)t->ranks_per_host, t->gpu[0] ? ", " : "", t->gpu,
		       t->nrows);
		print_rows(&m[k], before, after);
		if (set->n > 1)
			printf("%-20s %.2f %% before, %.2f %% fitted\n", "rms error",
			       100 * rms(&m[k], before), 100 * rms(&m[k], after));
	}
	printf("\n");
	print_factor(cs_calib_net_key(bw), fit->bandwidth, fit->bandwidth_fit);
	print_factor(cs_calib_net_key(CS_CALIB_LATENCY), fit->latency, fit->latency_fit);
	printf("%-20s %.2f %% before, %.2f %% fitted (root mean square of ln(model / measured)%s)\n",
	       "rms error", 100 * fit->rms_before, 100 * fit->rms, set->n > 1 ? ", every test" : "");
}

/* A fitted factor out of this range says the test is not of this network
 * (another GPU, another transport, a shared GPU): no link is 5 times
 * faster or slower than its scenario says. */
#define PLAUSIBLE_LO 0.2
#define PLAUSIBLE_HI 5.0
/* An rms error left above this: the model does not describe the test. */
#define RMS_WARN 0.10

/* 0 when the fitted factors are plausible or `force` is given (then with a
 * warning), else 2 after saying which is not. */
static int plausible(const char *file, const cs_net_fit *fit, cs_calib_net bw, bool force)
{
	const char *key = NULL;
	double f = 0;
	if (fit->bandwidth_fit && !(fit->bandwidth >= PLAUSIBLE_LO && fit->bandwidth <= PLAUSIBLE_HI)) {
		key = cs_calib_net_key(bw);
		f = fit->bandwidth;
	} else if (fit->latency_fit && !(fit->latency >= PLAUSIBLE_LO && fit->latency <= PLAUSIBLE_HI)) {
		key = cs_calib_net_key(CS_CALIB_LATENCY);
		f = fit->latency;
	}
	if (!key)
		return 0;
	fprintf(stderr,
		"clustersim calibrate: %s%s: the fitted '%s' factor %.4g is outside %g to %g: "
		"the test cannot be of this scenario's network (another GPU, transport or placement?)%s\n",
		force ? "warning: " : "", file, key, f, PLAUSIBLE_LO, PLAUSIBLE_HI,
		force ? "; written as '--force' asks" : "; '--force' writes it all the same");
	return force ? 0 : 2;
}

typedef struct fit_plot {
	const char *title;
	const cs_nccl_fit_series *s;
	size_t n;
} fit_plot;

static int write_fit(FILE *f, const void *ctx)
{
	const fit_plot *p = ctx;
	return cs_nccl_write_fit_svg(f, p->title, p->s, p->n);
}

/* --plot FILE: the chart of the fit, written atomically; 0, or 1 after
 * printing the problem. */
static int write_plot(const char *path, const char *file, const cs_scenario *sc, const measured *m, size_t n,
		      cs_coll *before, cs_coll *after)
{
	cs_nccl_fit_series *s = calloc(n, sizeof *s);
	double **t = calloc(2 * n, sizeof *t);
	char(*label)[96] = calloc(n, sizeof *label);
	int rc = 1;
	if (!s || !t || !label)
		goto nomem;
	for (size_t k = 0; k < n; k++) {
		size_t rows = m[k].t->nrows;
		if (!(t[2 * k] = malloc(rows * sizeof **t)) || !(t[2 * k + 1] = malloc(rows * sizeof **t)))
			goto nomem;
		for (size_t i = 0; i < rows; i++) {
			t[2 * k][i] = (double)cs_coll_time(before, m[k].op, &m[k].g, m[k].bytes[i], NULL);
			t[2 * k + 1][i] = (double)cs_coll_time(after, m[k].op, &m[k].g, m[k].bytes[i], NULL);
		}
		int len = snprintf(label[k], sizeof label[k], "%s on %lld ranks", cs_coll_op_name(m[k].op),
				   (long long)m[k].t->nranks);
		if (n > 1) /* which test of the file */
			snprintf(label[k] + len, sizeof label[k] - (size_t)len, ", line %d", m[k].t->line);
		s[k] = (cs_nccl_fit_series){ .label = label[k],
					     .bus_factor = cs_coll_bus_factor(m[k].op, m[k].t->nranks),
					     .n = rows,
					     .bytes = m[k].bytes,
					     .measured_ns = m[k].ns,
					     .before_ns = t[2 * k],
					     .after_ns = t[2 * k + 1] };
	}
	const char *base = strrchr(file, '/');
	char title[256];
	snprintf(title, sizeof title, "%s: the network fitted to %s", sc->name, base ? base + 1 : file);
	rc = cs_cli_write("calibrate", path, write_fit, &(fit_plot){ title, s, n });
	goto done;
nomem:
	fprintf(stderr, "clustersim calibrate: out of memory\n");
done:
	for (size_t k = 0; t && k < 2 * n; k++)
		free(t[k]);
	free(t);
	free(s);
	free(label);
	return rc;
}

int cs__calibrate_nccl(const char *file, const cs_scenario_args *sa, int forced_op, const char *out,
		       const char *plot, bool force, int progress)
{
	cs_diag diag = { { 0 } };
	cs_scenario *sc = NULL;
	cs_nccltests_set set = { 0 };
	cs_calib cal;
	cs_coll_spec spec;
	cs_coll *before = NULL, *after = NULL;
	measured *m = NULL;
	cs_net_series *series = NULL;
	int rc = 2;
	if (cs_scenario_load(sa->file, sa->sets, sa->nsets, &sc, &diag) != CS_OK ||
	    cs_nccltests_load_set(file, &set, &diag) != CS_OK ||
	    cs_hw_load_calibration(sc, &cal, &diag) != CS_OK || cs_hw_coll_spec(sc, &spec, &diag) != CS_OK) {
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		goto done;
	}
	const char *outs[] = { out, plot };
	if (cs_cli_check_outputs("calibrate", outs, 2, NULL, 0, sc) != 0)
		goto done;
	m = calloc(set.n, sizeof *m);
	series = calloc(set.n, sizeof *series);
	if (!m || !series) {
		fprintf(stderr, "clustersim calibrate: out of memory\n");
		goto done;
	}
	if (place(file, &set, sc, forced_op, m) != 0)
		goto done;
	for (size_t k = 0; k < set.n; k++)
		series[k] = (cs_net_series){ .op = m[k].op,
					     .g = &m[k].g,
					     .bytes = m[k].bytes,
					     .time_ns = m[k].ns,
					     .n = m[k].t->nrows };
	cs_net_fit fit;
	if (cs_net_fit_series(&sc->cluster, &spec, series, set.n, &fit, &diag) != CS_OK) {
		fprintf(stderr, "clustersim calibrate: %s: %s\n", file, CS_CLEAN(diag));
		goto done;
	}
	cs_coll_spec fitted = cs_net_fit_apply(&spec, &fit);
	before = cs_coll_new(&sc->cluster, &spec);
	after = cs_coll_new(&sc->cluster, &fitted);
	if (!before || !after) {
		fprintf(stderr, "clustersim calibrate: out of memory\n");
		goto done;
	}
	cs_calib_net bw = fit.nic ? CS_CALIB_SCALE_OUT_BW : CS_CALIB_SCALE_UP_BW;
	if (plausible(file, &fit, bw, force) != 0)
		goto done;
	if (fit.rms > RMS_WARN)
		fprintf(stderr,
			"clustersim calibrate: warning: %s: the fit leaves %.1f %% rms error: the "
			"tuner does not describe these times well (each size's error is printed)\n",
			file, 100 * fit.rms);
	if (fit.bandwidth_fit) {
		cal.net[bw] = fit.bandwidth;
		cal.has_net[bw] = true;
	}
	if (fit.latency_fit) {
		cal.net[CS_CALIB_LATENCY] = fit.latency;
		cal.has_net[CS_CALIB_LATENCY] = true;
	}
	if ((rc = cs__calibrate_write(out, sc->name, file, &cal)) != 0)
		goto done;
	print_fit(file, out, sc, &set, m, before, after, &fit, bw);
	cs_cli_wrote(progress, out);
	if (plot && (rc = write_plot(plot, file, sc, m, set.n, before, after)) != 0)
		goto done;
	if (plot)
		cs_cli_wrote(progress, plot);
	rc = 0;
done:
	cs_coll_free(before);
	cs_coll_free(after);
	for (size_t k = 0; m && k < set.n; k++) {
		free(m[k].bytes);
		free(m[k].ns);
	}
	free(m);
	free(series);
	cs_nccltests_set_free(&set);
	cs_scenario_free(sc);
	return rc;
}
