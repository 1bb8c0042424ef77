/*
 * torus.c - collectives on a torus of direct links (TPU pods): their
 * schedules and their alpha-beta cost.
 *
 * A group on a torus is a grid: k_d members along dimension d, every
 * combination of the coordinates (cs_torus_extent). Along one dimension the
 * members form a ring over wrap-around links, or a line on a mesh.
 *
 * Rings. A ring over k members along a dimension runs both ways at once
 * when it closes over wrap-around links: half the data goes round one way,
 * half the other, each on its own direction of every link, so a ring moves
 * 2*beta per member. On a line the ring's closing step travels back over
 * the line: one way only, beta, and k-1 hops for that step.
 *
 * The torus algorithm (after the multi-dimensional all-reduce of TPU pods;
 * Jouppi et al., ISCA 2023; Kumar et al., "Exploring the limits of
 * concurrency in ML training on Google TPUs", 2021): the buffer is cut in
 * m parts for the m dimensions the group spans; part p reduce-scatters along
 * its dimensions in the order p, p+1, ..., then all-gathers back in reverse.
 * In each phase every part uses a different dimension, so all 2m links of a
 * chip carry data. On equal rings of k with k^m = N members:
 *   all-reduce = 2 m (k-1) alpha + S (1 - 1/N) / (m beta),
 * against 2 (N-1) alpha + S (1 - 1/N) / beta for one ring through all.
 *
 * Across pods (the data-centre network, scale_out): reduce-scatter inside
 * each pod, then each chip exchanges its shard with its peers in the other
 * pods over its share of its host's NICs, then all-gather inside the pod.
 */
#include <stdlib.h>

#include "coll/coll_model.h"
#include "coll/schedule.h"

/* ---- schedules ------------------------------------------------------------ */

typedef struct piece {
	int64_t off, len;
} piece;

typedef struct grid {
	int m;                        /* dimensions with more than one member */
	int64_t k[CS_TORUS_MAX_DIMS]; /* members along each of them */
	int64_t span[CS_TORUS_MAX_DIMS];
	int64_t n;
} grid;

static int64_t pos_of(const grid *g, int64_t r, int d) { return r / g->span[d] % g->k[d]; }

/* The rank at position `to` along d, the other coordinates those of r. */
static int64_t moved(const grid *g, int64_t r, int d, int64_t to)
{
	return r + (to - pos_of(g, r, d)) * g->span[d];
}

/* A transfer of a non-empty range. */
static int push(cs_coll_sched *s, int32_t step, int64_t src, int64_t dst, int64_t off, int64_t len,
		int reduce)
{
	return len > 0 ? cs__coll_sched_push(s, step, src, dst, off, len, reduce) : 0;
}

/* Chunk c of k over piece p's first (half 0) or second half. */
static piece half_chunk(piece p, int half, int64_t k, int64_t c)
{
	int64_t ho, hl, co, cl;
	cs_coll_chunk(p.len, 2, half, &ho, &hl);
	cs_coll_chunk(hl, k, c, &co, &cl);
	return (piece){ p.off + ho + co, cl };
}

/* One ring phase along dimension d over every rank's pieces of one level:
 * reduce-scatter (rs) or all-gather, both directions at once. */
static int ring_phase(cs_coll_sched *s, const grid *g, int d, const piece *lv, int64_t np, int32_t base,
		      int rs)
{
	int64_t K = g->k[d];
	for (int64_t r = 0; r < g->n; r++) {
		int64_t pos = pos_of(g, r, d), q = K - 1 - pos;
		int64_t up = moved(g, r, d, (pos + 1) % K), down = moved(g, r, d, (pos + K - 1) % K);
		for (int64_t i = 0; i < np; i++) {
			for (int64_t t = 0; t + 1 < K; t++) {
				int64_t ca = rs ? (pos - t + K) % K : (pos + 1 - t + K) % K;
				int64_t cb = rs ? (q - t + K) % K : (q + 1 - t + K) % K;
				piece a = half_chunk(lv[r * np + i], 0, K, ca);
				piece b = half_chunk(lv[r * np + i], 1, K, cb);
				if (push(s, base + (int32_t)t, r, up, a.off, a.len, rs) ||
				    push(s, base + (int32_t)t, r, down, b.off, b.len, rs))
					return -1;
			}
		}
	}
	return 0;
}

int cs_coll_torus_schedule(cs_coll_op op, int ndims, const int64_t *k, int concurrent, int64_t count,
			   cs_coll_sched *s, int64_t *owner)
{
	if (op != CS_COLL_ALL_REDUCE && op != CS_COLL_REDUCE_SCATTER && op != CS_COLL_ALL_GATHER)
		return -1;
	grid g = { 0 };
	int64_t span = 1;
	for (int d = 0; d < ndims && d < CS_TORUS_MAX_DIMS; d++) {
		if (k[d] > 1) {
			g.k[g.m] = k[d];
			g.span[g.m++] = span;
		}
		span *= k[d] > 0 ? k[d] : 1;
	}
	g.n = span;
	int parts = concurrent && g.m > 1 ? g.m : 1;
	if (owner)
		for (int64_t e = 0; e < count; e++)
			owner[e] = 0;
	if (g.m == 0)
		return 0;
	/* the phase lengths: every part's phase j ends before any part's j+1 */
	int32_t len[CS_TORUS_MAX_DIMS] = { 0 };
	for (int p = 0; p < parts; p++)
		for (int j = 0; j < g.m; j++)
			if (g.k[(p + j) % g.m] - 1 > len[j])
				len[j] = (int32_t)(g.k[(p + j) % g.m] - 1);
	int rc = 0;
	for (int p = 0; p < parts && rc == 0; p++) {
		/* levels[j]: each rank's 2^j pieces before phase j */
		piece *lv[CS_TORUS_MAX_DIMS + 1] = { 0 };
		int64_t poff, plen;
		cs_coll_chunk(count, parts, p, &poff, &plen);
		for (int j = 0; j <= g.m && rc == 0; j++) {
			int64_t np = (int64_t)1 << j;
			lv[j] = malloc((size_t)(g.n * np) * sizeof(piece));
			if (lv[j] == NULL) {
				rc = -1;
				break;
			}
			for (int64_t r = 0; r < g.n; r++) {
				if (j == 0) {
					lv[0][r] = (piece){ poff, plen };
					continue;
				}
				int d = (p + j - 1) % g.m;
				int64_t K = g.k[d], pos = pos_of(&g, r, d), q = K - 1 - pos;
				for (int64_t i = 0; i < np / 2; i++) {
					piece up = lv[j - 1][r * (np / 2) + i];
					lv[j][r * np + 2 * i] = half_chunk(up, 0, K, (pos + 1) % K);
					lv[j][r * np + 2 * i + 1] = half_chunk(up, 1, K, (q + 1) % K);
				}
			}
		}
		int32_t base = 0;
		if (op != CS_COLL_ALL_GATHER)
			for (int j = 0; j < g.m && rc == 0; j++) {
				rc = ring_phase(s, &g, (p + j) % g.m, lv[j], (int64_t)1 << j, base, 1);
				base += len[j];
			}
		if (op == CS_COLL_ALL_GATHER)
			base = 0;
		for (int j = g.m - 1; j >= 0 && rc == 0 && op != CS_COLL_REDUCE_SCATTER; j--) {
			rc = ring_phase(s, &g, (p + j) % g.m, lv[j], (int64_t)1 << j, base, 0);
			base += len[j];
		}
		if (owner && rc == 0) {
			int64_t np = (int64_t)1 << g.m;
			for (int64_t r = 0; r < g.n; r++)
				for (int64_t i = 0; i < np; i++)
					for (int64_t e = 0; e < lv[g.m][r * np + i].len; e++)
						owner[lv[g.m][r * np + i].off + e] = r;
		}
		for (int j = 0; j <= g.m; j++)
			free(lv[j]);
	}
	return rc;
}

/* ---- cost ------------------------------------------------------------------ */

/* time = lat (ns) + bytes * nspb (ns per byte) */
typedef struct cost {
	double lat, nspb;
} cost;

static cost plus(cost a, cost b) { return (cost){ a.lat + b.lat, a.nspb + b.nspb }; }

typedef struct tenv {
	int m;                         /* dimensions the group spans in a pod */
	double k[CS_TORUS_MAX_DIMS];   /* members along each */
	double bw[CS_TORUS_MAX_DIMS];  /* B/ns of a ring along it: 2 beta, or beta on a line */
	double lat[CS_TORUS_MAX_DIMS]; /* ns per ring step along it */
	int all_rings;
	double beta, hop;       /* one link: B/ns per direction, ns per hop */
	double nin, pods;       /* members per pod, pods */
	double dcn_bw, dcn_lat; /* one chip's share of the DCN: B/ns; ns per message */
	double diameter;        /* hops across the pod */
} tenv;

static double calibrated(double f) { return f > 0 ? f : 1.0; }

static void make_tenv(const cs_cluster_spec *c, const cs_coll_spec *spec, const cs_group_shape *g, tenv *e)
{
	double lat_scale = calibrated(spec ? spec->latency : 0);
	e->beta = c->ici.bandwidth / 1e9 * calibrated(spec ? spec->scale_up_bw : 0);
	e->hop = (double)c->ici.latency_ns * lat_scale;
	e->pods = g->npods > 0 ? (double)g->npods : 1;
	e->nin = (double)g->nranks / e->pods;
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	int nics = c->nics_per_node > 0 ? c->nics_per_node : gpn;
	e->dcn_bw = c->scale_out.bandwidth * nics / gpn / 1e9 * calibrated(spec ? spec->scale_out_bw : 0);
	e->dcn_lat = (double)c->scale_out.latency_ns * lat_scale;
	e->diameter = 0;
	for (int d = 0; d < c->torus_dims; d++)
		e->diameter += (double)(c->torus_wrap ? c->torus_dim[d] / 2 : c->torus_dim[d] - 1);
	e->m = 0;
	e->all_rings = 1;
	if (g->torus.dims <= 0)
		return;
	for (int d = 0; d < g->torus.dims; d++) {
		double k = g->torus.ext[d], h = g->torus.hop[d];
		if (k < 2)
			continue;
		bool ring = g->torus.ring[d];
		e->k[e->m] = k;
		e->bw[e->m] = ring ? 2 * e->beta : e->beta;
		e->lat[e->m] = e->hop * (ring ? h : (k - 1) * h);
		e->all_rings &= ring;
		e->m++;
	}
}

/* Reduce-scatter (or all-gather) inside a pod, S bytes the full buffer:
 * one ring through every member. */
static cost pod_ring(const tenv *e)
{
	double n = e->nin;
	if (n < 2)
		return (cost){ 0, 0 };
	if (e->m == 1)
		return (cost){ (n - 1) * e->lat[0], (n - 1) / n / e->bw[0] };
	/* a grid the group does not fill, or one ring snaking through it */
	double bw = e->m > 1 && e->all_rings ? 2 * e->beta : e->beta;
	double step = e->m > 1 ? e->lat[0] : e->hop * e->diameter;
	for (int d = 1; d < e->m; d++)
		step = e->lat[d] > step ? e->lat[d] : step;
	return (cost){ (n - 1) * step, (n - 1) / n / bw };
}

/* ... the torus algorithm: part p takes dimensions p, p+1, ... in turn. */
static cost pod_torus(const tenv *e)
{
	cost c = { 0, 0 };
	for (int j = 0; j < e->m; j++) {
		double lat = 0, nspb = 0;
		for (int p = 0; p < e->m; p++) {
			double left = 1.0 / e->m; /* of the buffer, for part p before phase j */
			for (int i = 0; i < j; i++)
				left /= e->k[(p + i) % e->m];
			int d = (p + j) % e->m;
			double t = left * (e->k[d] - 1) / e->k[d] / e->bw[d];
			nspb = t > nspb ? t : nspb;
			double l = (e->k[d] - 1) * e->lat[d];
			lat = l > lat ? l : lat;
		}
		c = plus(c, (cost){ lat, nspb });
	}
	return c;
}

/* Across the pods: each chip with its peers, in a ring over the DCN. */
static cost dcn_ring(const tenv *e, double steps_per_peer)
{
	double p = e->pods;
	if (p < 2)
		return (cost){ 0, 0 };
	return (cost){ steps_per_peer * (p - 1) * e->dcn_lat, steps_per_peer * (p - 1) / p / e->dcn_bw };
}

/* Scale the per-byte part: the DCN phase moves the pod's shard, S / nin. */
static cost shard(cost c, double nin) { return (cost){ c.lat, c.nspb / nin }; }

static cost op_cost(const tenv *e, cs_coll_op op, cost in)
{
	switch (op) {
	case CS_COLL_ALL_REDUCE: return plus(plus(in, in), shard(dcn_ring(e, 2), e->nin));
	case CS_COLL_REDUCE_SCATTER:
	case CS_COLL_ALL_GATHER: return plus(in, shard(dcn_ring(e, 1), e->nin));
	default: return in;
	}
}

/* All-to-all inside a pod: the busiest link of each dimension under
 * dimension-order routing carries S k / 8 (ring) or S k / 4 (line). */
static cost pod_all_to_all(const tenv *e)
{
	double nspb = 0;
	for (int d = 0; d < e->m; d++) {
		bool ring = e->bw[d] > e->beta;
		double t = e->k[d] / (ring ? 8.0 : 4.0) / e->beta;
		nspb = t > nspb ? t : nspb;
	}
	if (e->m == 0 && e->nin > 1) /* no grid: as over a line through all */
		nspb = e->nin / 4.0 / e->beta;
	return (cost){ e->hop * e->diameter, nspb };
}

static int put(cs__coll_cand *out, int k, cs_coll_algo a, cost c)
{
	if (!(c.nspb > 0))
		return k;
	out[k] = (cs__coll_cand){ a, CS_PROTO_SIMPLE, 1, c.lat, 1.0 / c.nspb };
	return k + 1;
}

int cs__coll_torus_candidates(const cs_cluster_spec *c, const cs_coll_spec *spec, cs_coll_op op,
			      const cs_group_shape *g, cs__coll_cand *out)
{
	tenv e;
	make_tenv(c, spec, g, &e);
	if (g->nranks < 2)
		return 0;
	int k = 0;
	switch (op) {
	case CS_COLL_ALL_REDUCE:
	case CS_COLL_REDUCE_SCATTER:
	case CS_COLL_ALL_GATHER:
		k = put(out, k, CS_ALGO_RING, op_cost(&e, op, pod_ring(&e)));
		if (e.m > 1)
			k = put(out, k, CS_ALGO_TORUS, op_cost(&e, op, pod_torus(&e)));
		break;
	case CS_COLL_BROADCAST:
	case CS_COLL_REDUCE: {
		/* a pipelined chain through the pod, then over the DCN */
		cost in = pod_ring(&e);
		in.nspb = e.nin > 1 ? in.nspb * e.nin / (e.nin - 1) : 0;
		cost out_c = e.pods > 1 ? (cost){ e.dcn_lat, 1 / e.dcn_bw } : (cost){ 0, 0 };
		k = put(out, k, CS_ALGO_RING, plus(in, out_c));
		break;
	}
	case CS_COLL_SEND_RECV:
		k = put(out, k, CS_ALGO_RING,
			e.pods > 1 ? (cost){ e.dcn_lat, 1 / e.dcn_bw }
				   : (cost){ e.hop * e.diameter, 1 / e.beta });
		break;
	case CS_COLL_ALL_TO_ALL:
	case CS_COLL_GATHER:
	case CS_COLL_SCATTER: {
		cost in = pod_all_to_all(&e);
		if (op != CS_COLL_ALL_TO_ALL) /* the root's links: 2 per dimension */
			in.nspb = (e.nin - 1) / e.nin / (2.0 * (e.m > 0 ? e.m : 1) * e.beta);
		if (e.pods > 1) {
			double t = (e.pods - 1) / e.pods / e.dcn_bw;
			in.nspb = t > in.nspb ? t : in.nspb;
			in.lat += e.dcn_lat;
		}
		k = put(out, k, CS_ALGO_RING, in);
		break;
	}
	default: break;
	}
	return k;
}
