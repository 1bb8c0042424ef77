/*
 * coll_model.h - NCCL's per-(algorithm, protocol) cost model (internal).
 */
#ifndef CS_COLL_COLL_MODEL_H
#define CS_COLL_COLL_MODEL_H

#include "coll/coll.h"

#define CS__COLL_MAX_CANDS 16

/* One (algorithm, protocol) option: time = lat_ns + bytes / algbw (B/ns). */
typedef struct cs__coll_cand {
	cs_coll_algo algo;
	cs_coll_proto proto;
	int channels;
	double lat_ns;
	double algbw;
} cs__coll_cand;

/* The options for `op` on shape *g at size class `cls` (floor(log2 bytes)),
 * in a fixed order; returns how many were written into out[CS__COLL_MAX_CANDS]. */
int cs__coll_candidates(const cs_cluster_spec *c, const cs_coll_spec *spec, cs_coll_op op,
			const cs_group_shape *g, int cls, cs__coll_cand *out);

/* The same on a torus (torus.c): rings and the torus algorithm inside a
 * pod, the data-centre network between pods. */
int cs__coll_torus_candidates(const cs_cluster_spec *c, const cs_coll_spec *spec, cs_coll_op op,
			      const cs_group_shape *g, cs__coll_cand *out);

#endif
