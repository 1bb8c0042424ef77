/*
 * mesh.h - ranks as coordinates of the parallel mesh, and process groups.
 *
 * A rank's coordinates along the axes (tp, cp, ep, pp, dp) follow from the
 * rank number and the axis order (innermost first): nothing is stored per
 * rank. The data-parallel axis `dp` of the scenario spans the ep axis (its
 * inner factor, for expert parallelism) and the outer dp/ep replicas; the
 * mesh keeps them as two axes so that both groups stay regular.
 *
 * A process group is every rank that differs from a given rank only along
 * some of the axes; its members are base + i*stride[0] + j*stride[1] +
 * k*stride[2] (axes adjacent in the order merged into one run, so that
 * any group but the world leaves at most three).
 */
#ifndef CS_PROGRAM_MESH_H
#define CS_PROGRAM_MESH_H

#include <stdint.h>

#include "config/scenario.h"

typedef struct cs_mesh {
	int64_t world;
	int64_t deg[CS_AXIS_COUNT]; /* CS_AXIS_DP holds dp / ep */
	int64_t stride[CS_AXIS_COUNT];
	int64_t etp; /* folded experts (cs_parallel_folded): expert TP degree; else 0 */
} cs_mesh;

/* Kinds of process group. */
typedef enum cs_group_kind {
	CS_GROUP_TP,       /* tensor (and sequence) parallel */
	CS_GROUP_CP,       /* context parallel */
	CS_GROUP_EP,       /* expert parallel (inner part of data parallel or, folded,
	                    * the tp x cp x ep block but expert TP) */
	CS_GROUP_PP,       /* the pipeline: one rank per stage */
	CS_GROUP_DP,       /* gradient sync of dense weights: dp (with ep) x cp */
	CS_GROUP_DP_INTRA, /* hybrid sharding: the part of DP inside one node */
	CS_GROUP_DP_INTER, /* hybrid sharding: the same shard across nodes */
	CS_GROUP_MP,       /* model parallel: tp x pp (Megatron's model-parallel group) */
	CS_GROUP_WORLD,    /* every rank */
	CS_GROUP_STAGE,    /* one pipeline stage's ranks: tp x cp x dp (with ep), Megatron's
	                   * tensor-and-data-parallel group with CP (the fp8 amax reduction) */
	CS_GROUP_EDP,      /* gradient sync of expert weights: the ranks holding the same
	                   * experts, (dp / ep) x cp (Megatron's expert-data-parallel group);
	                   * folded, the dp axis */
	CS_GROUP_ETP,      /* expert tensor parallel: folded, the first etp ranks of the TP
	                    * group; else the TP group */
	CS_GROUP_KINDS
} cs_group_kind;

typedef struct cs_group {
	int64_t base; /* lowest member */
	int64_t n[3]; /* members along each of up to three axes (1 when unused) */
	int64_t stride[3];
} cs_group;

void cs_mesh_init(cs_mesh *m, const cs_parallel_spec *p);

static inline int64_t cs_mesh_coord(const cs_mesh *m, int64_t rank, cs_axis a)
{
	return (rank / m->stride[a]) % m->deg[a];
}

/* The group of `kind` containing `rank`. `gpus_per_node` is needed for the
 * hybrid-sharding split. */
cs_group cs_mesh_group(const cs_mesh *m, cs_group_kind kind, int64_t rank, int64_t gpus_per_node);
/* A dense index for the group instance, 0 .. cs_mesh_group_count - 1. */
int64_t cs_mesh_group_index(const cs_mesh *m, cs_group_kind kind, int64_t rank, int64_t gpus_per_node);
int64_t cs_mesh_group_count(const cs_mesh *m, cs_group_kind kind, int64_t gpus_per_node);

static inline int64_t cs_group_size(const cs_group *g) { return g->n[0] * g->n[1] * g->n[2]; }

static inline int64_t cs_group_member(const cs_group *g, int64_t i)
{
	return g->base + (i % g->n[0]) * g->stride[0] + (i / g->n[0] % g->n[1]) * g->stride[1] +
	       (i / (g->n[0] * g->n[1])) * g->stride[2];
}

/* The rank at pipeline stage `stage` in the same pipeline as `rank`. */
static inline int64_t cs_mesh_pp_peer(const cs_mesh *m, int64_t rank, int64_t stage)
{
	return rank + (stage - cs_mesh_coord(m, rank, CS_AXIS_PP)) * m->stride[CS_AXIS_PP];
}

const char *cs_group_kind_name(cs_group_kind kind);

/* Whether a tensor-parallel group spans more than one scale-up domain of
 * `domain` GPUs (allowed, but its collectives then cross the slow fabric). */
int cs_mesh_tp_crosses_domain(const cs_mesh *m, int64_t domain);

#endif
