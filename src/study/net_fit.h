/*
 * net_fit.h - fit the tuner's link bandwidth and latency factors (the
 * 'network' of a calibration file, hw/calib.h) to measured times of one
 * collective on one group: nccl-tests output (ingest/nccltests.h). A study
 * of the tuner (coll/coll.h) against measurements, as compare.h is one of
 * the simulation against a trace.
 */
#ifndef CS_STUDY_NET_FIT_H
#define CS_STUDY_NET_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "clustersim/clustersim.h"
#include "coll/coll.h"

typedef struct cs_net_fit {
	double bandwidth;                /* the factor on the group's link: NVLink within one
	                     * scale-up domain, the NIC across domains */
	bool nic;                        /* which link: false NVLink, true NIC */
	double latency;                  /* the factor on every latency */
	bool bandwidth_fit, latency_fit; /* false: the times do not depend on it;
	                                  * the factor is left as given */
	double rms;                      /* root mean square of ln(model / measured), fitted */
	double rms_before;               /* the same at the starting factors */
} cs_net_fit;

/* One measured collective: op on the group *g, time_ns[i] for bytes[i]. */
typedef struct cs_net_series {
	cs_coll_op op;
	const cs_group_shape *g;
	const double *bytes, *time_ns;
	size_t n;
} cs_net_series;

/* Fit the factor on the bandwidth of the link that carries `op` on the
 * group *g, and the factor on the latencies, starting from spec's (which
 * keeps the other link's factor), to the measured times time_ns[i] of
 * bytes[i], i < n: least squares in ln(time) over both factors (GSL's
 * Nelder-Mead simplex from the best of a grid over 1/16 to 16). A factor
 * is kept as given, and its _fit flag false, when halving or doubling it
 * moves no size's time by 5 % (large sizes alone do not determine the
 * latency), or when the fit ends where it no longer matters (the NIC of a
 * group that NVLink limits: then the NVLink factor is fitted). CS_OK, or
 * CS_ERR_INPUT with a message when n is 0 or the group has one rank;
 * CS_ERR_NOMEM. */
cs_status cs_net_fit_times(const cs_cluster_spec *c, const cs_coll_spec *spec, cs_coll_op op,
			   const cs_group_shape *g, const double *bytes, const double *time_ns, size_t n,
			   cs_net_fit *out, cs_diag *diag);

/* The same fit to several measured collectives s[0..ns) at once (several
 * tests of one nccl-tests file): one pair of factors for all of them, the
 * NIC's bandwidth when some group spans scale-up domains. CS_ERR_INPUT when
 * no series has a size or one has a group of one rank. */
cs_status cs_net_fit_series(const cs_cluster_spec *c, const cs_coll_spec *spec, const cs_net_series *s,
			    size_t ns, cs_net_fit *out, cs_diag *diag);

/* spec with the fit's factors in place. */
cs_coll_spec cs_net_fit_apply(const cs_coll_spec *spec, const cs_net_fit *fit);

#endif
