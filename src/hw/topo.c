/*
 * topo.c - cluster topology with arithmetic link ids.
 *
 * Link ids are laid out kind by kind: one NVLink up and down per GPU, one
 * PCIe up and down and one NIC up and down per NIC, one aggregated uplink
 * and downlink per leaf switch and per pod; with ECMP routing then each
 * leaf's and each pod's single uplinks and downlinks, leaf by leaf (pod by
 * pod), after every kind of before, so the ids of those do not move.
 * Nothing is stored per GPU.
 *
 * Terms: a scalable unit (SU) is `leaf_gpus` consecutive GPUs whose NICs
 * connect to the SU's leaf switches, one leaf per rail (NIC index within a
 * node). A pod is `pod_gpus` consecutive GPUs under one spine layer; pods
 * meet at the core tier.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/topo.h"

struct cs_topo {
	int64_t gpus, nodes, gpn, domain;
	int64_t nics_per_node, nics;
	int64_t su_gpus, nsu, nleaves;
	int64_t pod_gpus, npods;
	int64_t kleaf, kpod; /* single uplinks per leaf and pod; 0 without */
	double bw[CS_LINK_KINDS];
	int64_t lat[CS_LINK_KINDS];
	int32_t base[CS_LINK_KINDS + 1]; /* first id of each kind */
	/* torus: nd > 0 */
	int nd, wrap;
	int64_t dim[CS_TORUS_MAX_DIMS], span[CS_TORUS_MAX_DIMS]; /* span: chips per step */
};

static const char *const link_kind_names[CS_LINK_KINDS] = {
	"nvlink-up", "nvlink-down", "pcie-up",       "pcie-down",  "nic-up",
	"nic-down",  "leaf-up",     "leaf-down",     "pod-up",     "pod-down",
	"ici",       "leaf-uplink", "leaf-downlink", "pod-uplink", "pod-downlink",
};

/* Single uplinks of a tier of `below` NICs at `over`: floor(below / over),
 * at least 1 (a fraction of an uplink is not a cable). */
static int64_t uplinks(double below, double over)
{
	double k = floor(below / over + 1e-9);
	return k < 1 ? 1 : (int64_t)k;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

cs_topo *cs_topo_new(const cs_cluster_spec *c)
{
	if (c == NULL || c->nodes < 1 || c->gpus_per_node < 1)
		return NULL;
	cs_topo *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->gpn = c->gpus_per_node;
	t->nodes = c->nodes;
	t->gpus = t->nodes * t->gpn;
	t->domain = c->scale_up_domain > 0 ? c->scale_up_domain : t->gpn;
	t->nics_per_node = c->nics_per_node > 0 ? c->nics_per_node : t->gpn;
	t->nics = t->nics_per_node * t->nodes;
	t->su_gpus = c->leaf_gpus > 0 ? c->leaf_gpus : t->gpus;
	if (t->su_gpus < t->gpn)
		t->su_gpus = t->gpn;
	t->nsu = ceil_div(t->gpus, t->su_gpus);
	t->nleaves = t->nsu * t->nics_per_node;
	t->pod_gpus = c->pod_gpus > 0 ? c->pod_gpus : t->gpus;
	t->npods = ceil_div(t->gpus, t->pod_gpus);

	double nic = c->scale_out.bandwidth;
	double leaf_over = c->leaf_oversubscription >= 1 ? c->leaf_oversubscription : 1;
	double pod_over = c->pod_oversubscription >= 1 ? c->pod_oversubscription : 1;
	double nics_per_leaf = (double)t->su_gpus / (double)t->gpn;
	double nics_per_pod = (double)t->pod_gpus / (double)t->gpn * (double)t->nics_per_node;

	t->bw[CS_LINK_NVL_UP] = t->bw[CS_LINK_NVL_DOWN] = c->scale_up.bandwidth;
	t->bw[CS_LINK_PCIE_UP] = t->bw[CS_LINK_PCIE_DOWN] = c->pcie.bandwidth > 0 ? c->pcie.bandwidth : nic;
	t->bw[CS_LINK_NIC_UP] = t->bw[CS_LINK_NIC_DOWN] = nic;
	t->bw[CS_LINK_LEAF_UP] = t->bw[CS_LINK_LEAF_DOWN] = nics_per_leaf * nic / leaf_over;
	t->bw[CS_LINK_POD_UP] = t->bw[CS_LINK_POD_DOWN] = nics_per_pod * nic / pod_over;

	t->lat[CS_LINK_NVL_UP] = t->lat[CS_LINK_NVL_DOWN] = c->scale_up.latency_ns / 2;
	t->lat[CS_LINK_PCIE_UP] = t->lat[CS_LINK_PCIE_DOWN] = c->pcie.latency_ns / 2;
	t->lat[CS_LINK_NIC_UP] = t->lat[CS_LINK_NIC_DOWN] = c->scale_out.latency_ns / 2;
	t->lat[CS_LINK_LEAF_UP] = t->lat[CS_LINK_LEAF_DOWN] = c->switch_latency_ns;
	t->lat[CS_LINK_POD_UP] = t->lat[CS_LINK_POD_DOWN] = c->switch_latency_ns;

	if (cs_cluster_ecmp(c)) {
		t->kleaf = uplinks(nics_per_leaf, leaf_over);
		t->kpod = uplinks(nics_per_pod, pod_over);
		t->bw[CS_LINK_UPLINK] = t->bw[CS_LINK_DOWNLINK] = t->bw[CS_LINK_LEAF_UP] / (double)t->kleaf;
		t->bw[CS_LINK_POD_UPLINK] = t->bw[CS_LINK_POD_DOWNLINK] =
			t->bw[CS_LINK_POD_UP] / (double)t->kpod;
		t->lat[CS_LINK_UPLINK] = t->lat[CS_LINK_DOWNLINK] = c->switch_latency_ns;
		t->lat[CS_LINK_POD_UPLINK] = t->lat[CS_LINK_POD_DOWNLINK] = c->switch_latency_ns;
	}
	int64_t count[CS_LINK_KINDS] = {
		t->gpus,
		t->gpus,
		t->nics,
		t->nics,
		t->nics,
		t->nics,
		t->nleaves,
		t->nleaves,
		t->npods,
		t->npods,
		0,
		t->nleaves * t->kleaf,
		t->nleaves * t->kleaf,
		t->npods * t->kpod,
		t->npods * t->kpod,
	};
	if (c->topology == CS_TOPO_TORUS && c->torus_dims > 0) {
		/* no switches, no NVLink, no PCIe hop: ICI links and the DCN NICs */
		t->nd = c->torus_dims;
		t->wrap = c->torus_wrap;
		int64_t chips = 1;
		for (int d = 0; d < t->nd; d++) {
			t->dim[d] = c->torus_dim[d];
			t->span[d] = chips;
			chips *= t->dim[d];
		}
		t->pod_gpus = chips;
		t->npods = ceil_div(t->gpus, chips);
		t->domain = chips;
		t->bw[CS_LINK_ICI] = c->ici.bandwidth;
		t->lat[CS_LINK_ICI] = c->ici.latency_ns;
		for (int k = 0; k < CS_LINK_KINDS; k++)
			if (k != CS_LINK_NIC_UP && k != CS_LINK_NIC_DOWN)
				count[k] = 0;
		count[CS_LINK_ICI] = t->gpus * t->nd * 2;
	}
	int64_t id = 0;
	for (int k = 0; k < CS_LINK_KINDS; k++) {
		t->base[k] = (int32_t)id;
		id += count[k];
	}
	if (id > INT32_MAX) {
		free(t);
		return NULL;
	}
	t->base[CS_LINK_KINDS] = (int32_t)id;
	return t;
}

void cs_topo_free(cs_topo *t) { free(t); }

int64_t cs_topo_gpus(const cs_topo *t) { return t->gpus; }

int32_t cs_topo_nlinks(const cs_topo *t) { return t->base[CS_LINK_KINDS]; }

static int64_t rail_of(const cs_topo *t, int64_t g) { return (g % t->gpn) * t->nics_per_node / t->gpn; }

static int64_t nic_of(const cs_topo *t, int64_t g) { return (g / t->gpn) * t->nics_per_node + rail_of(t, g); }

static int64_t leaf_of(const cs_topo *t, int64_t g)
{
	return (g / t->su_gpus) * t->nics_per_node + rail_of(t, g);
}

/* ---- torus -------------------------------------------------------------- */

bool cs_topo_is_torus(const cs_topo *t) { return t->nd > 0; }

int cs_topo_max_route(const cs_topo *t)
{
	if (t->nd == 0)
		return 8; /* PCIe, NIC, leaf, pod up and down */
	int n = 0;
	for (int d = 0; d < t->nd; d++)
		n += (int)(t->wrap ? t->dim[d] / 2 : t->dim[d] - 1);
	return n + 2; /* and a DCN hop (NIC up and down) of a ring that leaves the pod */
}

static int64_t coord(const cs_topo *t, int64_t g, int d) { return g % t->pod_gpus / t->span[d] % t->dim[d]; }

/* Dimension by dimension, the shorter way round (a tie goes up). */
static void put(int32_t *links, int cap, int *n, const cs_topo *t, cs_link_kind k, int64_t i);

static int torus_route(const cs_topo *t, int64_t src, int64_t dst, int32_t *links, int cap)
{
	int n = 0;
	if (src / t->pod_gpus != dst / t->pod_gpus) {
		put(links, cap, &n, t, CS_LINK_NIC_UP, nic_of(t, src));
		put(links, cap, &n, t, CS_LINK_NIC_DOWN, nic_of(t, dst));
		return n;
	}
	int64_t at = src;
	for (int d = 0; d < t->nd; d++) {
		int64_t D = t->dim[d], a = coord(t, at, d), b = coord(t, dst, d);
		int64_t up = (b - a + D) % D, steps = up;
		int dir = 0;
		if (t->wrap ? up > D - up : b < a) {
			dir = 1;
			steps = t->wrap ? D - up : a - b;
		}
		for (int64_t k = 0; k < steps; k++) {
			put(links, cap, &n, t, CS_LINK_ICI, (at * t->nd + d) * 2 + dir);
			int64_t c = coord(t, at, d), next = dir ? (c + D - 1) % D : (c + 1) % D;
			at += (next - c) * t->span[d];
		}
	}
	return n;
}

/* Count distinct values into a bitmap; returns 1 when v is new. */
static int seen(uint64_t *bits, int64_t v)
{
	uint64_t m = UINT64_C(1) << (v & 63);
	if (bits[v >> 6] & m)
		return 0;
	bits[v >> 6] |= m;
	return 1;
}

cs_group_shape cs_topo_torus_group(const cs_topo *t, int64_t base, const int64_t n[3],
				   const int64_t stride[3])
{
	cs_group_shape s = { 0 };
	int64_t total = n[0] * n[1] * n[2];
	if (t->nd == 0)
		return cs_topo_group(t, base, stride[0], n[0]);
	s.nranks = total;
	s.torus.dims = t->nd;
	if (total < 1)
		return s;
	int64_t dsum = 0;
	for (int d = 0; d < t->nd; d++)
		dsum += t->dim[d];
	size_t wn = (size_t)((dsum + 63) / 64 + t->nd) + (size_t)((t->npods + 63) / 64) +
		    (size_t)((t->nodes + 63) / 64) + 3;
	uint64_t *bits = calloc(wn, sizeof(*bits));
	if (bits == NULL) {
		s.torus.dims = -1;
		return s;
	}
	uint64_t *dimbits[CS_TORUS_MAX_DIMS], *podbits, *nodebits;
	size_t off = 0;
	for (int d = 0; d < t->nd; d++) {
		dimbits[d] = bits + off;
		off += (size_t)((t->dim[d] + 63) / 64);
	}
	podbits = bits + off;
	off += (size_t)((t->npods + 63) / 64);
	nodebits = bits + off;
	int64_t lo[CS_TORUS_MAX_DIMS], hi[CS_TORUS_MAX_DIMS];
	for (int d = 0; d < t->nd; d++) {
		lo[d] = INT64_MAX;
		hi[d] = -1;
	}
	for (int64_t i2 = 0; i2 < n[2]; i2++)
		for (int64_t i1 = 0; i1 < n[1]; i1++)
			for (int64_t i0 = 0; i0 < n[0]; i0++) {
				int64_t g = base + i0 * stride[0] + i1 * stride[1] + i2 * stride[2];
				if (g < 0 || g >= t->gpus)
					continue;
				for (int d = 0; d < t->nd; d++) {
					int64_t c = coord(t, g, d);
					s.torus.ext[d] += seen(dimbits[d], c);
					lo[d] = c < lo[d] ? c : lo[d];
					hi[d] = c > hi[d] ? c : hi[d];
				}
				s.npods += seen(podbits, g / t->pod_gpus);
				s.nnodes += seen(nodebits, g / t->gpn);
			}
	/* a grid: every combination of the coordinates, evenly spaced */
	int64_t grid = s.npods;
	for (int d = 0; d < t->nd; d++) {
		int64_t k = s.torus.ext[d];
		grid *= k;
		if (k < 2)
			continue;
		int64_t h = (hi[d] - lo[d]) / (k - 1);
		for (int64_t j = 0; j < k && h > 0; j++)
			if (!(dimbits[d][(lo[d] + j * h) >> 6] & (UINT64_C(1) << ((lo[d] + j * h) & 63))))
				h = 0;
		if (h == 0 || lo[d] + (k - 1) * h != hi[d]) {
			s.torus.dims = -1;
			continue;
		}
		s.torus.hop[d] = (int32_t)h;
		s.torus.ring[d] = t->wrap && k * h == t->dim[d];
	}
	if (grid != total)
		s.torus.dims = -1;
	free(bits);
	s.ndomains = s.npods;
	s.nleaves = s.npods;
	s.ranks_per_node = (total + s.nnodes - 1) / (s.nnodes > 0 ? s.nnodes : 1);
	s.tier = s.npods > 1 ? CS_TIER_NIC : CS_TIER_NVLINK;
	return s;
}

cs_group_shape cs_topo_group(const cs_topo *t, int64_t first, int64_t stride, int64_t n)
{
	cs_group_shape s = { 0 };
	if (n < 1)
		return s;
	if (t->nd > 0)
		return cs_topo_torus_group(t, first, (const int64_t[3]){ n, 1, 1 },
					   (const int64_t[3]){ stride, 0, 0 });
	if (stride < 1)
		stride = 1;
	s.nranks = n;
	int64_t node = -1, dom = -1, su = -1, pod = -1, on_node = 0;
	uint64_t rails = 0; /* rails seen in the current SU (first 64) */
	for (int64_t i = 0; i < n; i++) {
		int64_t g = first + i * stride;
		if (g / t->gpn != node) {
			node = g / t->gpn;
			s.nnodes++;
			on_node = 0;
		}
		if (++on_node > s.ranks_per_node)
			s.ranks_per_node = on_node;
		if (g / t->domain != dom) {
			dom = g / t->domain;
			s.ndomains++;
		}
		if (g / t->su_gpus != su) {
			su = g / t->su_gpus;
			rails = 0;
		}
		uint64_t bit = UINT64_C(1) << (rail_of(t, g) & 63);
		if (!(rails & bit)) {
			rails |= bit;
			s.nleaves++;
		}
		if (g / t->pod_gpus != pod) {
			pod = g / t->pod_gpus;
			s.npods++;
		}
	}
	int64_t last = first + (n - 1) * stride;
	if (s.ndomains == 1)
		s.tier = CS_TIER_NVLINK;
	else if (first / t->su_gpus == last / t->su_gpus)
		s.tier = CS_TIER_NIC;
	else if (s.npods == 1)
		s.tier = CS_TIER_LEAF;
	else
		s.tier = CS_TIER_POD;
	return s;
}

static void put(int32_t *links, int cap, int *n, const cs_topo *t, cs_link_kind k, int64_t i)
{
	if (*n < cap)
		links[*n] = t->base[k] + (int32_t)i;
	(*n)++;
}

int cs_topo_route(const cs_topo *t, int64_t src, int64_t dst, int32_t *links, int cap)
{
	if (src < 0 || dst < 0 || src >= t->gpus || dst >= t->gpus)
		return -1;
	int n = 0;
	if (src == dst)
		return 0;
	if (t->nd > 0)
		return torus_route(t, src, dst, links, cap);
	if (src / t->domain == dst / t->domain) {
		put(links, cap, &n, t, CS_LINK_NVL_UP, src);
		put(links, cap, &n, t, CS_LINK_NVL_DOWN, dst);
		return n;
	}
	int64_t sn = nic_of(t, src), dn = nic_of(t, dst);
	int64_t sl = leaf_of(t, src), dl = leaf_of(t, dst);
	int64_t sp = src / t->pod_gpus, dp = dst / t->pod_gpus;
	put(links, cap, &n, t, CS_LINK_PCIE_UP, sn);
	put(links, cap, &n, t, CS_LINK_NIC_UP, sn);
	if (sl != dl) {
		put(links, cap, &n, t, CS_LINK_LEAF_UP, sl);
		if (sp != dp) {
			put(links, cap, &n, t, CS_LINK_POD_UP, sp);
			put(links, cap, &n, t, CS_LINK_POD_DOWN, dp);
		}
		put(links, cap, &n, t, CS_LINK_LEAF_DOWN, dl);
	}
	put(links, cap, &n, t, CS_LINK_NIC_DOWN, dn);
	put(links, cap, &n, t, CS_LINK_PCIE_DOWN, dn);
	return n;
}

int64_t cs_topo_paths(const cs_topo *t, int64_t src, int64_t dst)
{
	if (t->kleaf == 0 || src < 0 || dst < 0 || src >= t->gpus || dst >= t->gpus ||
	    src / t->domain == dst / t->domain || leaf_of(t, src) == leaf_of(t, dst))
		return 1;
	return src / t->pod_gpus == dst / t->pod_gpus ? t->kleaf : t->kleaf * t->kpod * t->kleaf;
}

int cs_topo_route_path(const cs_topo *t, int64_t src, int64_t dst, uint64_t path, int32_t *links, int cap)
{
	if (cs_topo_paths(t, src, dst) == 1)
		return cs_topo_route(t, src, dst, links, cap);
	int n = 0;
	uint64_t kl = (uint64_t)t->kleaf, kp = (uint64_t)t->kpod;
	int64_t sn = nic_of(t, src), dn = nic_of(t, dst);
	int64_t sl = leaf_of(t, src), dl = leaf_of(t, dst);
	int64_t sp = src / t->pod_gpus, dp = dst / t->pod_gpus;
	int64_t up = (int64_t)(path % kl), down = up;
	put(links, cap, &n, t, CS_LINK_PCIE_UP, sn);
	put(links, cap, &n, t, CS_LINK_NIC_UP, sn);
	put(links, cap, &n, t, CS_LINK_UPLINK, sl * t->kleaf + up);
	if (sp != dp) {
		int64_t u = (int64_t)(path / kl % kp);
		down = (int64_t)(path / kl / kp % kl);
		put(links, cap, &n, t, CS_LINK_POD_UPLINK, sp * t->kpod + u);
		put(links, cap, &n, t, CS_LINK_POD_DOWNLINK, dp * t->kpod + u);
	}
	put(links, cap, &n, t, CS_LINK_DOWNLINK, dl * t->kleaf + down);
	put(links, cap, &n, t, CS_LINK_NIC_DOWN, dn);
	put(links, cap, &n, t, CS_LINK_PCIE_DOWN, dn);
	return n;
}

int cs_topo_link_tier(const cs_topo *t, int32_t link)
{
	switch (cs_topo_link_kind(t, link)) {
	case CS_LINK_NVL_UP:
	case CS_LINK_NVL_DOWN: return CS_TIER_NVLINK;
	case CS_LINK_NIC_UP:
	case CS_LINK_NIC_DOWN: return CS_TIER_NIC;
	case CS_LINK_LEAF_UP:
	case CS_LINK_LEAF_DOWN:
	case CS_LINK_UPLINK:
	case CS_LINK_DOWNLINK: return CS_TIER_LEAF;
	case CS_LINK_POD_UP:
	case CS_LINK_POD_DOWN:
	case CS_LINK_POD_UPLINK:
	case CS_LINK_POD_DOWNLINK: return CS_TIER_POD;
	default: return -1;
	}
}

int32_t cs_topo_gpu_link(const cs_topo *t, int64_t gpu, cs_link_kind k)
{
	if (gpu < 0 || gpu >= t->gpus || k < 0 || k >= CS_LINK_KINDS || t->base[k] == t->base[k + 1])
		return -1;
	switch (k) {
	case CS_LINK_NVL_UP:
	case CS_LINK_NVL_DOWN: return t->base[k] + (int32_t)gpu;
	case CS_LINK_PCIE_UP:
	case CS_LINK_PCIE_DOWN:
	case CS_LINK_NIC_UP:
	case CS_LINK_NIC_DOWN: return t->base[k] + (int32_t)nic_of(t, gpu);
	default: return -1;
	}
}

static int kind_of(const cs_topo *t, int32_t link)
{
	if (link < 0 || link >= t->base[CS_LINK_KINDS])
		return -1;
	int k = 0;
	while (link >= t->base[k + 1])
		k++;
	return k;
}

cs_link_kind cs_topo_link_kind(const cs_topo *t, int32_t link)
{
	int k = kind_of(t, link);
	return k < 0 ? CS_LINK_KINDS : (cs_link_kind)k;
}

double cs_topo_link_bandwidth(const cs_topo *t, int32_t link)
{
	int k = kind_of(t, link);
	return k < 0 ? 0 : t->bw[k];
}

int64_t cs_topo_link_latency(const cs_topo *t, int32_t link)
{
	int k = kind_of(t, link);
	return k < 0 ? 0 : t->lat[k];
}

const char *cs_topo_link_name(const cs_topo *t, int32_t link, char *buf, size_t len)
{
	int k = kind_of(t, link);
	if (k < 0) {
		snprintf(buf, len, "link %ld (invalid)", (long)link);
	} else if (k == CS_LINK_ICI) {
		int64_t i = link - t->base[k];
		snprintf(buf, len, "ici[%ld].%c%c", (long)(i / (2 * t->nd)), "xyz"[i / 2 % t->nd],
			 i % 2 ? '-' : '+');
	} else
		snprintf(buf, len, "%s[%ld]", link_kind_names[k], (long)(link - t->base[k]));
	return buf;
}
