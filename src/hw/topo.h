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
 */
#ifndef CS_HW_TOPO_H
#define CS_HW_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "config/scenario.h"

typedef struct cs_topo cs_topo;

/* Link kinds, each with its own per-direction bandwidth and latency. */
typedef enum cs_link_kind {
	CS_LINK_NVL_UP,   /* GPU -> NVSwitch (or scale-up fabric) */
	CS_LINK_NVL_DOWN, /* NVSwitch -> GPU */
	CS_LINK_PCIE_UP,  /* GPU -> NIC */
	CS_LINK_PCIE_DOWN,/* NIC -> GPU */
	CS_LINK_NIC_UP,   /* NIC -> leaf */
	CS_LINK_NIC_DOWN, /* leaf -> NIC */
	CS_LINK_LEAF_UP,  /* leaf -> spines, all uplinks of one leaf together */
	CS_LINK_LEAF_DOWN,
	CS_LINK_POD_UP,   /* pod -> core, all uplinks of one pod together */
	CS_LINK_POD_DOWN,
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
typedef struct cs_group_shape {
	int64_t nranks;
	int64_t nnodes;          /* distinct nodes */
	int64_t ranks_per_node;  /* max members on one node */
	int64_t ndomains;        /* distinct scale-up (NVLink) domains */
	int64_t nleaves, npods;  /* distinct leaf switches / pods spanned */
	cs_tier tier;            /* the highest crossed: NVLink (one domain), the NICs (one
	                          * leaf), the leaves' uplinks (one pod), the pods' uplinks */
} cs_group_shape;

cs_group_shape cs_topo_group(const cs_topo *t, int64_t first, int64_t stride, int64_t n);

/* The links crossed from src_gpu to dst_gpu, in order, into links[0..cap).
 * Returns the number of links of the route (which may exceed cap: only the
 * first cap are written), 0 for src == dst, -1 for a GPU out of range. */
int cs_topo_route(const cs_topo *t, int64_t src_gpu, int64_t dst_gpu, int32_t *links, int cap);

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
