/*
 * topo.h - the physical topology of a cluster: scale-up domains, NICs, PCIe
 * and a multi-tier fat tree (leaf, spine within a pod, core between pods).
 *
 * Ranks are GPU ids; GPU g sits on node g / gpus_per_node and in scale-up
 * domain g / scale_up_domain. With rail optimisation NIC r of a node serves
 * its local GPUs r * (gpus_per_node / nics_per_node) ... and connects to the
 * rail-r leaf of its scalable unit; a scalable unit is leaf_gpus GPUs. Links
 * are not stored: their ids are derived arithmetically, so the memory of a
 * topology does not grow with the number of GPUs.
 *
 * A torus (cluster.topology: torus) has no switches: each pod is a grid of
 * chips, chip c at coordinates (c mod A, c / A mod B, ...) inside its pod,
 * joined to its neighbours along each dimension by one link per direction
 * (with wrap-around links on a torus, none on a mesh); routes go dimension
 * by dimension, the shorter way round. Pods meet over the data-centre
 * network: the hosts' NICs (NIC_UP, NIC_DOWN), as scale_out describes them.
 * ICI stands in the scale-up tier (CS_TIER_NVLINK) and the DCN in the NIC
 * tier of cs_tier.
 *
 * A fat tree whose routing is ECMP (cs_cluster_ecmp) also has each leaf's
 * and each pod's uplinks one by one: a leaf's k = floor(NICs below /
 * oversubscription) uplinks (at least 1), uplink j to spine j, and the
 * same spine's downlink j back to every leaf of the pod; a pod's uplinks
 * to the core likewise. Each carries 1/k of the aggregate, so the tier's
 * capacity is the aggregate's. cs_topo_route keeps the aggregates (the
 * ideal spread of adaptive routing); cs_topo_route_path picks one uplink
 * of each tier it climbs.
 */
#ifndef CS_HW_TOPO_H
#define CS_HW_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/scenario.h"

typedef struct cs_topo cs_topo;

/* Link kinds, each with its own per-direction bandwidth and latency. */
typedef enum cs_link_kind {
	CS_LINK_NVL_UP,    /* GPU -> NVSwitch (or scale-up fabric) */
	CS_LINK_NVL_DOWN,  /* NVSwitch -> GPU */
	CS_LINK_PCIE_UP,   /* GPU -> NIC */
	CS_LINK_PCIE_DOWN, /* NIC -> GPU */
	CS_LINK_NIC_UP,    /* NIC -> leaf */
	CS_LINK_NIC_DOWN,  /* leaf -> NIC */
	CS_LINK_LEAF_UP,   /* leaf -> spines, all uplinks of one leaf together */
	CS_LINK_LEAF_DOWN,
	CS_LINK_POD_UP, /* pod -> core, all uplinks of one pod together */
	CS_LINK_POD_DOWN,
	CS_LINK_ICI,        /* torus: one chip's link along one dimension, one direction */
	CS_LINK_UPLINK,     /* ECMP: leaf -> spine j, one of a leaf's uplinks */
	CS_LINK_DOWNLINK,   /* ECMP: spine j -> leaf */
	CS_LINK_POD_UPLINK, /* ECMP: pod -> core, one of a pod's uplinks */
	CS_LINK_POD_DOWNLINK,
	CS_LINK_KINDS
} cs_link_kind;

/* Build a topology; the caller frees it with cs_topo_free. The topology
 * copies what it needs and does not keep `c`. NULL on out-of-memory or an
 * empty cluster. */
cs_topo *cs_topo_new(const cs_cluster_spec *c);
void cs_topo_free(cs_topo *t);

int64_t cs_topo_gpus(const cs_topo *t);
/* Number of link ids: every id in [0, n) is valid. */
int32_t cs_topo_nlinks(const cs_topo *t);

/* A process group as an arithmetic progression of ranks:
 * first, first+stride, ..., first+(n-1)*stride. */
/* A group's extent on a torus (dims > 0): per dimension, the members'
 * distinct coordinates (ext, 1 where the group does not extend), the hops
 * between neighbouring members (hop) and whether they close a ring over
 * wrap-around links (ring); the members are every combination of those
 * coordinates in each pod they span. dims = 0 on a fat tree; on a torus, a
 * group that is no such grid has dims = -1. */
typedef struct cs_torus_extent {
	int dims;
	int32_t ext[CS_TORUS_MAX_DIMS];
	int32_t hop[CS_TORUS_MAX_DIMS];
	uint8_t ring[CS_TORUS_MAX_DIMS];
} cs_torus_extent;

/* Whether two extents are the same. */
static inline bool cs__torus_same(const cs_torus_extent *a, const cs_torus_extent *b)
{
	if (a->dims != b->dims)
		return false;
	for (int d = 0; d < CS_TORUS_MAX_DIMS; d++)
		if (a->ext[d] != b->ext[d] || a->hop[d] != b->hop[d] || a->ring[d] != b->ring[d])
			return false;
	return true;
}

typedef struct cs_group_shape {
	int64_t nranks;
	int64_t nnodes;         /* distinct nodes */
	int64_t ranks_per_node; /* max members on one node */
	int64_t ndomains;       /* distinct scale-up (NVLink) domains */
	int64_t nleaves, npods; /* distinct leaf switches / pods spanned */
	cs_tier tier;           /* the highest crossed: NVLink (one domain), the NICs (one
	                          * leaf), the leaves' uplinks (one pod), the pods' uplinks */
	cs_torus_extent torus;
} cs_group_shape;

cs_group_shape cs_topo_group(const cs_topo *t, int64_t first, int64_t stride, int64_t n);

/* The shape of a group of up to three nested progressions, members
 * base + i0*stride[0] + i1*stride[1] + i2*stride[2] (i_k < n[k]), on a
 * torus; on a fat tree it is cs_topo_group of the innermost progression
 * and the caller combines the outer ones. */
bool cs_topo_is_torus(const cs_topo *t);
cs_group_shape cs_topo_torus_group(const cs_topo *t, int64_t base, const int64_t n[3],
				   const int64_t stride[3]);

/* Most links a route crosses on this topology. */
int cs_topo_max_route(const cs_topo *t);

/* The links crossed from src_gpu to dst_gpu, in order, into links[0..cap).
 * Returns the number of links of the route (which may exceed cap: only the
 * first cap are written), 0 for src == dst, -1 for a GPU out of range. */
int cs_topo_route(const cs_topo *t, int64_t src_gpu, int64_t dst_gpu, int32_t *links, int cap);

/* How many equal-cost paths lead from src_gpu to dst_gpu over the single
 * uplinks of an ECMP fat tree: the leaf's uplinks k when the route climbs
 * to the spines, k x the pod's uplinks x k when it crosses pods (the spine
 * it comes down from in the other pod is a choice of its own); 1 when it
 * climbs no tier, on a topology without single uplinks, and for a bad GPU. */
int64_t cs_topo_paths(const cs_topo *t, int64_t src_gpu, int64_t dst_gpu);

/* cs_topo_route over single uplinks: path number `path` (any value, taken
 * modulo cs_topo_paths: the leaf's uplink path mod k, then the pod's, then
 * the other pod's spine) instead of each tier's aggregate. The same count
 * of links as cs_topo_route; cs_topo_route itself where there is one path. */
int cs_topo_route_path(const cs_topo *t, int64_t src_gpu, int64_t dst_gpu, uint64_t path, int32_t *links,
		       int cap);

/* The fabric tier a link belongs to (cs_tier: NVLink ports, NIC ports, the
 * leaves' uplinks and downlinks, the pods'), -1 for PCIe, ICI and a bad id. */
int cs_topo_link_tier(const cs_topo *t, int32_t link);

/* The link of kind k that belongs to `gpu`: its NVLink port (NVL_UP,
 * NVL_DOWN), or its NIC's PCIe and network ports (PCIE_*, NIC_*); -1 for a
 * switch tier's kind or a GPU out of range. */
int32_t cs_topo_gpu_link(const cs_topo *t, int64_t gpu, cs_link_kind k);

/* Bandwidth (B/s, per direction) and latency of a link; 0 for a bad id. */
double cs_topo_link_bandwidth(const cs_topo *t, int32_t link);
int64_t cs_topo_link_latency(const cs_topo *t, int32_t link);
cs_link_kind cs_topo_link_kind(const cs_topo *t, int32_t link);

/* A readable name such as "nic-up[12]" or "pod-up[1]", written into buf. */
const char *cs_topo_link_name(const cs_topo *t, int32_t link, char *buf, size_t len);

#endif
