/*
 * coll_model.c - latency and bandwidth of each (algorithm, protocol) pair,
 * after NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc, v2.30 latency
 * constants as in docs/references.md, Collectives and NCCL).
 *
 * Units inside: microseconds and GB/s, as NCCL writes them; converted to ns
 * and B/ns (= GB/s) at the end.
 *
 * Bandwidth sources:
 *  - scale-up: NCCL's per-link NVLink channel speed (20.0 GB/s Ampere,
 *    20.6 Hopper, 40.1 Blackwell; src/graph/topo.h) times the number of
 *    links, the links being the per-GPU NVLink bandwidth over the per-link
 *    line rate (25 GB/s NVLink 3/4, 50 GB/s NVLink 5): 18 x 20.6 = 370.8 GB/s
 *    on H100.
 *  - scale-out: each rank uses its own NIC(s) (rail-optimised): a node's
 *    share is (ranks per node x NICs per GPU) NICs at 0.96 of the line rate
 *    (NCCL's inter-node search speeds: 48 of NDR's 50 GB/s, 24 of HDR's 25),
 *    capped by PCIe.
 *  - oversubscribed tiers: a ring or tree ordered by node crosses each leaf
 *    or pod boundary once per direction per channel, so its demand on an
 *    uplink is the node's NIC share; the group is assumed alone on the
 *    fabric and that demand is compared with the uplink capacity. All-to-all
 *    sends the fraction of its bytes leaving a pod through the pod uplinks,
 *    shared by the group's members in that pod.
 * NCCL's "node" is a scale-up domain here, whatever the servers within it:
 * with a multi-node NVLink domain (an NVL72 rack of 18 trays) NCCL's MNNVL
 * finds the clique (ncclMnnvlCheck, src/mnnvl.cc: the ranks of one fabric
 * cluster UUID and clique id), builds one topology over the clique's ranks
 * (ncclTopoGetSystem, src/graph/topo.cc), and counts nNodes by the rings'
 * first ranks (initTransportsRank, src/init.cc): one node per domain, its
 * ranks the local ones, so ring, tree and NVLS run within the domain and
 * ring, tree and NVLS-tree across domains (ncclTopoTuneModel, tuning.cc:
 * NVLS-tree off for nNodes == 1). Here the group's ndomains is that nNodes
 * and the domain's NICs (one a GPU on NVL72) are its network share.
 * NCCL's hardware latencies (hw_lat) are of links of the default latencies
 * (cluster.scale_up.latency 2 us, cluster.scale_out.latency 5 us): a link
 * slower or faster by d adds d to each step over it (at least 0 a step).
 * A calibration (hw/calib.h, fitted to nccl-tests output by study/net_fit.c)
 * scales the NVLink bus bandwidth, the NIC rate and every latency.
 */
#include <math.h>

#include "coll/coll.h"
#include "coll/coll_model.h"
#include "coll/schedule.h"

enum { HW_NVL, HW_NET };
enum { A_TREE, A_RING, A_NVLS, A_NVLS_TREE, A_N };
enum { P_LL, P_LL128, P_SIMPLE, P_N };

static const double base_lat[A_N][P_N] = {
	{ 6.8, 14.0, 8.4 },
	{ 6.6, 14.0, 8.4 },
	{ 0, 0, 0 },
	{ 0, 0, 0 },
};
static const double hw_lat[2][A_N][P_N] = {
	{ { 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 }, { 0, 0, 25.0 }, { 0, 0, 25.0 } },
	{ { 5.0, 8.5, 14.0 }, { 2.7, 4.0, 14.0 }, { 0, 0, 18.0 }, { 0, 0, 14.0 } },
};
/* The link latencies, ns, that hw_lat's figures are of: the scenario's
 * defaults of cluster.scale_up.latency and cluster.scale_out.latency. */
static const double hw_lat_link_ns[2] = { 2000, 5000 };

/* Per-architecture caps, GB/s, indexed by [arch][1 node, 2 nodes, more]. */
enum { ARCH_AMPERE, ARCH_HOPPER, ARCH_N };
static const double ll_max_bw[ARCH_N][3] = { { 87.7, 22.5, 19.0 }, { 141.0, 45.0, 35.0 } };
static const double ch_ring_ll128[ARCH_N] = { 20.0, 36.7 };
static const double ch_tree[ARCH_N][3] = { { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 } };
static const double ch_tree_ll128[ARCH_N][3] = { { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 29.0 } };

/* Tree bandwidth correction per size class, 64 B (index 0) to 256 MB. */
/* clang-format off */
static const double tree_correction[P_N][23] = {
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};
/* clang-format on */

static const double nvls_efficiency = 0.85;
static const double nvls_ratio = 5.0 / 6.0;
static const double net_efficiency = 0.96;

/* What every algorithm needs about the group on this cluster. */
typedef struct env {
	int arch, idx2;      /* cap tables: architecture, node-count column */
	int64_t n, nn, ppd;  /* ranks, NCCL nodes (scale-up domains), ranks per domain */
	double intra;        /* GB/s, NVLink bus bandwidth of one GPU */
	double nic;          /* GB/s, one NIC's achievable rate */
	double nic_per_rank; /* GB/s, NIC bandwidth of one rank */
	double inter;        /* GB/s, a domain's NIC share, tier-capped */
	double extra_us;     /* switch latency beyond the first leaf */
	double lat_scale;    /* the calibration's factor on every latency */
	double link_us[2];   /* the links' latency beyond hw_lat_link_ns (may be < 0) */
	int channels, default_channels;
	int nvls;
} env;

/* A calibration factor: 0 (none given) is 1. */
static double calibrated(double f) { return f > 0 ? f : 1.0; }

double cs_coll_nvlink_channel_bw(const cs_cluster_spec *c)
{
	return c->gpu.arch >= 100 ? 40.1 : c->gpu.arch >= 90 ? 20.6 : 20.0;
}

/* NVLinks per GPU: its NVLink bandwidth over the per-link line rate. */
static double nvlinks(const cs_cluster_spec *c)
{
	double line = c->gpu.arch >= 100 ? 50e9 : 25e9;
	double links = round(c->scale_up.bandwidth / line);
	if (links < 1) /* less than one link's rate: that fraction of a link */
		links = c->scale_up.bandwidth / line;
	return links;
}

double cs_coll_nvlink_bw(const cs_cluster_spec *c, const cs_coll_spec *spec)
{
	return nvlinks(c) * cs_coll_nvlink_channel_bw(c) * calibrated(spec ? spec->scale_up_bw : 0);
}

static void make_env(const cs_cluster_spec *c, const cs_coll_spec *spec, const cs_group_shape *g, env *e)
{
	int arch = c->gpu.arch;
	e->arch = arch >= 90 ? ARCH_HOPPER : ARCH_AMPERE;
	e->n = g->nranks;
	e->nn = g->ndomains > 0 ? g->ndomains : 1;
	e->ppd = (e->n + e->nn - 1) / e->nn;
	e->idx2 = e->nn <= 2 ? (int)e->nn - 1 : 2;
	e->nvls = c->gpu.nvls;

	double links = nvlinks(c);
	e->intra = cs_coll_nvlink_bw(c, spec);
	e->lat_scale = calibrated(spec ? spec->latency : 0);
	e->link_us[HW_NVL] = ((double)c->scale_up.latency_ns - hw_lat_link_ns[HW_NVL]) / 1e3;
	e->link_us[HW_NET] = ((double)c->scale_out.latency_ns - hw_lat_link_ns[HW_NET]) / 1e3;

	double nic = c->scale_out.bandwidth;
	if (c->pcie.bandwidth > 0 && c->pcie.bandwidth < nic)
		nic = c->pcie.bandwidth;
	e->nic = nic * net_efficiency / 1e9 * calibrated(spec ? spec->scale_out_bw : 0);
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	double nics_per_gpu = (c->nics_per_node > 0 ? c->nics_per_node : gpn) / (double)gpn;
	double nics_used = (double)e->ppd * nics_per_gpu;
	if (nics_used < 1)
		nics_used = 1;
	e->nic_per_rank = nics_used * e->nic / (double)e->ppd;
	e->inter = nics_used * e->nic;

	/* uplink capacity of the crossed tiers against a ring's per-node demand */
	double line_nic = c->scale_out.bandwidth / 1e9;
	if (g->tier >= CS_TIER_LEAF && c->leaf_gpus > 0) {
		double cap = (double)c->leaf_gpus / gpn * line_nic /
			     (c->leaf_oversubscription >= 1 ? c->leaf_oversubscription : 1);
		if (e->inter > cap)
			e->inter = cap;
	}
	if (g->tier >= CS_TIER_POD && c->pod_gpus > 0) {
		double cap = (double)c->pod_gpus / gpn * (gpn * nics_per_gpu) * line_nic /
			     (c->pod_oversubscription >= 1 ? c->pod_oversubscription : 1);
		if (e->inter > cap)
			e->inter = cap;
	}
	/* up and down through each switch tier above the leaf */
	e->extra_us = g->tier >= CS_TIER_LEAF
			      ? 2.0 * (g->tier - CS_TIER_NIC) * (double)c->switch_latency_ns / 1e3
			      : 0;

	int ch = e->nn == 1 ? (int)links : (int)(2 * nics_used + 0.5);
	if (ch < 1)
		ch = 1;
	if (ch > 32)
		ch = 32;
	e->default_channels = ch;
	e->channels = spec && spec->channels > 0 ? spec->channels : ch;
}

/* Bandwidth scaled to the channels in use, as NCCL does for a forced count. */
static double channel_scale(const env *e) { return (double)e->channels / (double)e->default_channels; }

/* NCCL's latency of a step of algorithm a, protocol p over hardware hw,
 * us, on the scenario's links. */
static double hwl(const env *e, int hw, int a, int p) { return fmax(0.0, hw_lat[hw][a][p] + e->link_us[hw]); }

static int add(cs__coll_cand *out, int k, cs_coll_algo a, cs_coll_proto p, const env *e, double lat_us,
	       double algbw)
{
	if (algbw <= 0)
		return k;
	out[k] = (cs__coll_cand){ a, p, e->channels, lat_us * e->lat_scale * 1e3, algbw };
	return k + 1;
}

static const cs_coll_proto protos[P_N] = { CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE };

static int ring(const env *e, cs_coll_op op, cs__coll_cand *out, int k, int cls)
{
	bool chain = op == CS_COLL_BROADCAST || op == CS_COLL_REDUCE; /* a pipelined chain */
	int64_t nsteps = chain ? e->n : cs_coll_ring_steps(op, e->n);
	int64_t ninter = op == CS_COLL_ALL_REDUCE ? 2 * (e->nn - 1) : e->nn - 1;
	double raw = e->nn == 1 ? e->intra : e->ppd > 1 ? fmin(e->intra, e->inter) : e->inter;
	raw *= channel_scale(e);
	for (int p = 0; p < P_N; p++) {
		double bus = raw;
		if (p == P_LL)
			bus = fmin(bus * 0.5, ll_max_bw[e->arch][e->idx2]);
		if (p == P_LL128)
			bus = fmin(bus * (e->ppd < 2 && e->nn > 1 ? 0.7 : 0.92),
				   e->channels * ch_ring_ll128[e->arch]);
		double intra_lat = hwl(e, HW_NVL, A_RING, p);
		double inter_lat = hwl(e, HW_NET, A_RING, p) + e->extra_us;
		double lat = base_lat[A_RING][p];
		if (chain) {
			lat += e->nn > 1 ? inter_lat : intra_lat;
		} else {
			if (e->nn > 1)
				intra_lat = fmax(intra_lat, p == P_SIMPLE ? 3.0 : 1.0);
			lat += (double)(nsteps - ninter) * intra_lat + (double)ninter * inter_lat;
		}
		/* the ring's plateau: large multi-node all-reduces pay more per step */
		if (p == P_SIMPLE && e->nn > 1 && op == CS_COLL_ALL_REDUCE &&
		    ldexp(1.0, cls) / (double)(e->channels * e->n) >= 64)
			lat *= 1.4;
		k = add(out, k, CS_ALGO_RING, protos[p], e, lat, bus * (double)e->n / (double)nsteps);
	}
	return k;
}

static int tree(const env *e, cs__coll_cand *out, int k, int cls)
{
	double raw = e->nn == 1 ? e->intra : e->ppd > 1 ? fmin(e->intra, e->inter) : e->inter;
	raw *= channel_scale(e);
	int ci = cls - 6;
	if (ci < 0)
		ci = 0;
	int log2nn = 0;
	for (int64_t v = e->nn; v > 1; v >>= 1)
		log2nn++;
	for (int p = 0; p < P_N; p++) {
		double bus = fmin(raw * 0.92, e->channels * ch_tree[e->arch][e->idx2]);
		if (p == P_LL)
			bus = fmin(bus / 3.8, ll_max_bw[e->arch][e->idx2]);
		if (p == P_LL128)
			bus = fmin(bus * (e->nn == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
				   e->channels * ch_tree_ll128[e->arch][e->idx2]);
		if (ci < 23)
			bus *= tree_correction[p][ci];
		double lat = base_lat[A_TREE][p] + 2 * ((double)(e->ppd - 1) * hwl(e, HW_NVL, A_TREE, p) +
							log2nn * (hwl(e, HW_NET, A_TREE, p) + e->extra_us));
		k = add(out, k, CS_ALGO_TREE, protos[p], e, lat, bus * 0.5);
	}
	return k;
}

static int nvls(const env *e, cs__coll_cand *out, int k)
{
	if (!e->nvls || e->n < 2)
		return k;
	if (e->nn == 1) {
		double bus = e->intra * channel_scale(e) * nvls_efficiency;
		return add(out, k, CS_ALGO_NVLS, CS_PROTO_SIMPLE, e, hwl(e, HW_NVL, A_NVLS, P_SIMPLE),
			   bus * nvls_ratio);
	}
	int log2nn = 0;
	for (int64_t v = e->nn; v > 1; v >>= 1)
		log2nn++;
	double bw = fmin(e->intra, e->nn <= 2 ? e->inter : e->inter / 2) * channel_scale(e);
	double lat = hwl(e, HW_NVL, A_NVLS_TREE, P_SIMPLE) +
		     2 * log2nn * (hwl(e, HW_NET, A_NVLS_TREE, P_SIMPLE) + e->extra_us);
	return add(out, k, CS_ALGO_NVLS_TREE, CS_PROTO_SIMPLE, e, lat, bw * nvls_efficiency * nvls_ratio);
}

/* All-to-all and send/recv: point-to-point transfers, all peers at once. */
static int p2p(const env *e, const cs_cluster_spec *c, cs_coll_op op, const cs_group_shape *g,
	       cs__coll_cand *out, int k)
{
	double t_per_byte;
	if (op == CS_COLL_SEND_RECV) {
		t_per_byte = e->nn == 1 ? 1 / e->intra : 1 / e->nic_per_rank;
	} else {
		double n = (double)e->n;
		double out_frac = (n - (double)e->ppd) / n;
		double rate = e->nic_per_rank;
		if (g->npods > 1 && c->pod_gpus > 0) {
			/* pod uplinks shared by the group's members in the pod */
			double members = n / (double)g->npods;
			double leave = 1.0 - members / n;
			double cap = (double)c->pod_gpus * ((double)c->nics_per_node / c->gpus_per_node) *
				     c->scale_out.bandwidth / 1e9 /
				     (c->pod_oversubscription >= 1 ? c->pod_oversubscription : 1);
			if (leave > 0 && rate * members * leave > cap)
				rate = cap / (members * leave);
		}
		t_per_byte = fmax(((double)e->ppd - 1) / n / e->intra, out_frac / rate);
	}
	double bw = 1 / t_per_byte * channel_scale(e);
	int hw = e->nn > 1 ? HW_NET : HW_NVL;
	double extra = e->nn > 1 ? e->extra_us : 0;
	k = add(out, k, CS_ALGO_RING, CS_PROTO_LL, e,
		base_lat[A_RING][P_LL] + hwl(e, hw, A_RING, P_LL) + extra, bw * 0.5);
	k = add(out, k, CS_ALGO_RING, CS_PROTO_SIMPLE, e,
		base_lat[A_RING][P_SIMPLE] + hwl(e, hw, A_RING, P_SIMPLE) + extra, bw);
	return k;
}

int cs__coll_candidates(const cs_cluster_spec *c, const cs_coll_spec *spec, cs_coll_op op,
			const cs_group_shape *g, int cls, cs__coll_cand *out)
{
	if (c->topology == CS_TOPO_TORUS)
		return cs__coll_torus_candidates(c, spec, op, g, out);
	env e;
	make_env(c, spec, g, &e);
	if (e.n < 2)
		return 0;
	int k = 0;
	switch (op) {
	case CS_COLL_ALL_REDUCE:
		k = ring(&e, op, out, k, cls);
		k = tree(&e, out, k, cls);
		k = nvls(&e, out, k);
		break;
	case CS_COLL_REDUCE_SCATTER:
	case CS_COLL_ALL_GATHER:
	case CS_COLL_BROADCAST:
	case CS_COLL_REDUCE: k = ring(&e, op, out, k, cls); break;
	case CS_COLL_ALL_TO_ALL:
	case CS_COLL_SEND_RECV:
	case CS_COLL_GATHER:
	case CS_COLL_SCATTER:
		/* gather and scatter: the root's links carry what each rank's do
		 * in an all-to-all of the same size, (n-1)/n of it */
		k = p2p(&e, c, op, g, out, k);
		break;
	default: break;
	}
	return k;
}
