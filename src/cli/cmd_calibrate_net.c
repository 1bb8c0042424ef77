/*
 * cmd_calibrate_net.c - `clustersim calibrate --nccl-tests FILE SCENARIO`:
 * read nccl-tests output (ingest/nccltests.c), place its group on the
 * scenario's cluster, fit the tuner's bandwidth and latency factors to its
 * times (study/net_fit.c), print the residual of every size before and
 * after, and write the factors into the calibration file with whatever the
 * scenario's calibration already held. Everything allocated here is freed
 * here.
 */
#include "cli/calibrate_int.h"

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

/* The rows, before and after the fit; returns the root mean square of
 * ln(model / measured) before it. */
static double print_rows(const cs_nccltests *t, const double *bytes, const double *ns,
			 cs_coll *before, cs_coll *after, cs_coll_op op, const cs_group_shape *g)
{
	double sq = 0;
	printf("\n%12s %12s %12s %9s %12s %9s  %s\n", "size(B)", "measured us", "model us", "error",
	       "fitted us", "error", "algorithm/protocol");
	for (size_t i = 0; i < t->nrows; i++) {
		cs_coll_choice ch;
		double b = 1e-3 * (double)cs_coll_time(before, op, g, bytes[i], NULL);
		double a = 1e-3 * (double)cs_coll_time(after, op, g, bytes[i], &ch);
		double m = 1e-3 * ns[i];
		sq += log(b / m) * log(b / m);
		printf("%12.0f %12.2f %12.2f %+8.1f%% %12.2f %+8.1f%%  %s/%s\n", bytes[i], m, b,
		       100 * (b - m) / m, a, 100 * (a - m) / m, cs_coll_choice_name(op, &ch),
		       cs_coll_proto_name(ch.proto));
	}
	return t->nrows ? sqrt(sq / (double)t->nrows) : 0.0;
}

static void print_factor(const char *key, double f, bool fitted)
{
	if (fitted)
		printf("%-20s %.4g\n", key, f);
	else
		printf("%-20s %.4g, kept: these times do not depend on it\n", key, f);
}

int cs__calibrate_nccl(const char *file, const cs_scenario_args *sa, int forced_op,
		       const char *out)
{
	cs_diag diag = { { 0 } };
	cs_scenario *sc = NULL;
	cs_nccltests t;
	cs_calib cal;
	cs_coll_spec spec;
	cs_coll_op op;
	cs_group_shape g;
	cs_coll *before = NULL, *after = NULL;
	double *bytes = NULL, *ns = NULL;
	int rc = 2;
	memset(&t, 0, sizeof t);
	if (cs_scenario_load(sa->file, sa->sets, sa->nsets, &sc, &diag) != CS_OK ||
	    cs_nccltests_load(file, &t, &diag) != CS_OK ||
	    cs_nccltests_op(&t, file, forced_op, &op, &diag) != CS_OK ||
	    cs_hw_load_calibration(sc, &cal, &diag) != CS_OK ||
	    cs_hw_coll_spec(sc, &spec, &diag) != CS_OK) {
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		goto done;
	}
	if (cs_nccltests_group(&t, file, &sc->cluster, &g, &diag) != CS_OK) {
		fprintf(stderr, "clustersim calibrate: %s\n", CS_CLEAN(diag));
		goto done;
	}
	bytes = malloc(t.nrows * sizeof *bytes);
	ns = malloc(t.nrows * sizeof *ns);
	if (!bytes || !ns) {
		fprintf(stderr, "clustersim calibrate: out of memory\n");
		goto done;
	}
	for (size_t i = 0; i < t.nrows; i++) {
		const cs_nccl_row *r = &t.rows[i];
		bytes[i] = r->bytes;
		ns[i] = 1e3 * (isnan(r->time_us[0]) ? r->time_us[1] : r->time_us[0]);
	}
	cs_net_fit fit;
	if (cs_net_fit_times(&sc->cluster, &spec, op, &g, bytes, ns, t.nrows, &fit, &diag) !=
	    CS_OK) {
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
	printf("calibration  %s: %s from %s\n", out, sc->name, file);
	printf("measured     %s on %lld ranks, %lld host%s (%lld per host)%s%s, %zu sizes\n",
	       cs_coll_op_name(op), (long long)t.nranks, (long long)t.nhosts,
	       t.nhosts == 1 ? "" : "s", (long long)t.ranks_per_host, t.gpu[0] ? ", " : "", t.gpu,
	       t.nrows);
	double rms_before = print_rows(&t, bytes, ns, before, after, op, &g);
	printf("\n");
	print_factor(cs_calib_net_key(bw), fit.bandwidth, fit.bandwidth_fit);
	print_factor(cs_calib_net_key(CS_CALIB_LATENCY), fit.latency, fit.latency_fit);
	printf("%-20s %.2f %% before, %.2f %% after (root mean square of ln(model / measured))\n",
	       "rms error", 100 * rms_before, 100 * fit.rms);
	rc = 0;
done:
	cs_coll_free(before);
	cs_coll_free(after);
	free(bytes);
	free(ns);
	cs_nccltests_free(&t);
	cs_scenario_free(sc);
	return rc;
}
