/*
 * test_flow.c - the flow fidelity: flows sharing links max-min fairly,
 * driven from the event engine exactly as the runner drives it (one pending
 * event at cs_net_next_completion, a generation counter for stale events).
 * Expected times are hand computations in ns, stated per case.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/flow.h"
#include "core/sim.h"
#include "hw/topo.h"

/* H100-like servers: 8 GPUs per node and NVLink domain, 8 NICs of 50 GB/s
 * (5 us, 2.5 us per NIC link), PCIe 63 GB/s (1 us, 0.5 us per link), NVLink
 * 450 GB/s (2 us, 1 us per link), 500 ns per switch tier. */
static cs_cluster_spec cluster(int64_t nodes, int64_t leaf_gpus, int64_t pod_gpus, double leaf_over,
			       double pod_over)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof(c));
	c.nodes = nodes;
	c.gpus_per_node = 8;
	c.scale_up_domain = 8;
	c.nics_per_node = 8;
	c.scale_up = (cs_link_spec){450e9, 2000};
	c.scale_out = (cs_link_spec){50e9, 5000};
	c.pcie = (cs_link_spec){63e9, 1000};
	c.leaf_gpus = leaf_gpus;
	c.pod_gpus = pod_gpus;
	c.leaf_oversubscription = leaf_over;
	c.pod_oversubscription = pod_over;
	c.switch_latency_ns = 500;
	return c;
}

/* ---- the runner's pattern on the engine ------------------------------- */

#define MAXJOBS 256

typedef struct job {
	cs_time at;
	int64_t first, stride, n; /* members: an arithmetic progression */
	cs_coll_op op;
	double bytes;
	cs_coll_algo algo;
} job;

typedef struct rig {
	cs_cluster_spec c;
	cs_topo *topo;
	cs_net *net;
	cs_sim *sim;
	uint64_t gen;
	const job *jobs;
	int njobs, ndone;
	cs_time done[MAXJOBS];
	int order[MAXJOBS];
	int64_t max_flows;
	bool planned;   /* start each job from its plan (cs_net_plan) */
} rig;

static void rig_init(rig *r, cs_cluster_spec c)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	r->topo = cs_topo_new(&r->c);
	ck_assert_ptr_nonnull(r->topo);
	r->net = cs_net_new(r->topo, &r->c);
	ck_assert_ptr_nonnull(r->net);
	r->sim = cs_sim_new();
	ck_assert_ptr_nonnull(r->sim);
}

static void rig_free(rig *r)
{
	cs_sim_free(r->sim);
	cs_net_free(r->net);
	cs_topo_free(r->topo);
}

static void on_net(cs_sim *sim, void *ctx, uint64_t arg);

static void reschedule(rig *r)
{
	r->gen++;
	cs_time t = cs_net_next_completion(r->net);
	if (t != CS_TIME_MAX)
		ck_assert_int_eq(cs_sim_at(r->sim, t, on_net, r, r->gen), 0);
}

static void on_net(cs_sim *sim, void *ctx, uint64_t arg)
{
	rig *r = ctx;
	if (arg != r->gen)
		return; /* stale */
	uint64_t tags[4]; /* small on purpose: completions may wait a turn */
	int k = cs_net_advance(r->net, cs_sim_now(sim), tags, 4);
	ck_assert_int_ge(k, 0);
	for (int i = 0; i < k; i++) {
		ck_assert_uint_lt(tags[i], (uint64_t)r->njobs);
		ck_assert_int_eq(r->done[tags[i]], -1);
		r->done[tags[i]] = cs_sim_now(sim);
		r->order[r->ndone++] = (int)tags[i];
	}
	reschedule(r);
}

static void on_start(cs_sim *sim, void *ctx, uint64_t arg)
{
	rig *r = ctx;
	const job *j = &r->jobs[arg];
	int64_t *m = malloc((size_t)j->n * sizeof(*m));
	ck_assert_ptr_nonnull(m);
	for (int64_t i = 0; i < j->n; i++)
		m[i] = j->first + i * j->stride;
	int64_t id;
	if (r->planned) {
		int32_t plan = cs_net_plan(r->net, m, j->n, j->op, j->bytes, j->algo);
		ck_assert_int_ge(plan, 0);
		/* asked again, the same plan */
		ck_assert_int_eq(cs_net_plan(r->net, m, j->n, j->op, j->bytes, j->algo), plan);
		id = cs_net_start_plan(r->net, cs_sim_now(sim), plan, CS_NET_ROUTE_LATENCY, arg);
	} else {
		id = cs_net_start(r->net, cs_sim_now(sim), m, j->n, j->op, j->bytes, j->algo,
				  CS_NET_ROUTE_LATENCY, arg);
	}
	free(m);
	ck_assert_int_ge(id, 0);
	if (cs_net_active_flows(r->net) > r->max_flows)
		r->max_flows = cs_net_active_flows(r->net);
	reschedule(r);
}

/* Run the jobs to the end; every one must complete. */
static void rig_run(rig *r, const job *jobs, int njobs)
{
	ck_assert_int_le(njobs, MAXJOBS);
	r->jobs = jobs;
	r->njobs = njobs;
	for (int i = 0; i < njobs; i++) {
		r->done[i] = -1;
		ck_assert_int_eq(cs_sim_at(r->sim, jobs[i].at, on_start, r, (uint64_t)i), 0);
	}
	cs_sim_run(r->sim, 0);
	ck_assert_int_eq(r->ndone, njobs);
	ck_assert_int_eq(cs_net_active_flows(r->net), 0);
	ck_assert_int_eq(cs_net_active_colls(r->net), 0);
	ck_assert_int_eq(cs_net_next_completion(r->net), CS_TIME_MAX);
}

static job p2p(cs_time at, int64_t src, int64_t dst, double bytes)
{
	return (job){at, src, dst - src, 2, CS_COLL_SEND_RECV, bytes, CS_ALGO_RING};
}

/* ---- one flow ----------------------------------------------------------- */

static const struct one_case {
	int64_t src, dst;
	double bytes;
	cs_time want; /* latency + bytes / bottleneck */
} one_cases[] = {
	/* pcie 500 + nic 2500 + nic 2500 + pcie 500; 1 GB at 50 GB/s = 20 ms */
	{0, 8, 1e9, 6000 + 20000000},
	{0, 8, 5e8, 6000 + 10000000},
	{3, 11, 123456789, 6000 + 2469136}, /* 2,469,135.78 ns rounded up */
	/* NVLink: 1000 + 1000; 450 MB at 450 GB/s = 1 ms */
	{0, 1, 450e6, 2000 + 1000000},
	/* another scalable unit: + leaf up and leaf down, 500 each */
	{0, 72, 1e9, 7000 + 20000000},
};

START_TEST(test_one_flow_is_latency_plus_bytes_over_nic)
{
	const struct one_case *k = &one_cases[_i];
	rig r;
	rig_init(&r, cluster(16, 64, 0, 1, 1));
	job j = p2p(0, k->src, k->dst, k->bytes);
	rig_run(&r, &j, 1);
	ck_assert_int_eq(r.done[0], k->want);
	rig_free(&r);
}
END_TEST

START_TEST(test_shared_nic_halves_rate_disjoint_nics_do_not)
{
	rig r;
	rig_init(&r, cluster(4, 64, 0, 1, 1));
	/* GPU 0 sends to nodes 1 and 2 over its one NIC: 25 GB/s each */
	job shared[2] = {p2p(0, 0, 8, 1e9), p2p(0, 0, 16, 1e9)};
	rig_run(&r, shared, 2);
	ck_assert_int_eq(r.done[0], 6000 + 40000000);
	ck_assert_int_eq(r.done[1], 6000 + 40000000);
	rig_free(&r);

	rig_init(&r, cluster(4, 64, 0, 1, 1));
	job apart[2] = {p2p(0, 0, 8, 1e9), p2p(0, 1, 9, 1e9)};
	rig_run(&r, apart, 2);
	ck_assert_int_eq(r.done[0], 6000 + 20000000);
	ck_assert_int_eq(r.done[1], 6000 + 20000000);
	rig_free(&r);
}
END_TEST

/* A drains alone from 6,000 ns; B starts at 10 ms and drains from
 * 10,006,000 ns, when A has 0.5 GB left: both at 25 GB/s, A ends 20 ms
 * later (30,006,000); B then has 0.5 GB left at 50 GB/s: 10 ms more. */
START_TEST(test_late_flow_slows_the_first_piecewise)
{
	rig r;
	rig_init(&r, cluster(4, 64, 0, 1, 1));
	job j[2] = {p2p(0, 0, 8, 1e9), p2p(10000000, 0, 16, 1e9)};
	rig_run(&r, j, 2);
	ck_assert_int_eq(r.done[0], 30006000);
	ck_assert_int_eq(r.done[1], 40006000);
	ck_assert_int_eq(r.order[0], 0);
	rig_free(&r);
}
END_TEST

/* Half of a NIC's bandwidth taken away doubles a lone flow's drain time. */
START_TEST(test_scaled_link_slows_its_flows)
{
	rig r;
	rig_init(&r, cluster(2, 64, 0, 1, 1));
	int32_t links[CS_NET_MAX_ROUTE];
	int k = cs_topo_route(r.topo, 0, 8, links, CS_NET_MAX_ROUTE);
	ck_assert_int_eq(k, 4);
	ck_assert_int_eq(cs_topo_link_kind(r.topo, links[1]), CS_LINK_NIC_UP);
	ck_assert_int_eq(cs_net_scale_link(r.net, 0, links[1], 0.5), 0);
	ck_assert_double_eq(cs_net_link_capacity(r.net, links[1]), 25e9);
	ck_assert_int_eq(cs_net_scale_link(r.net, 0, links[1], 1.5), -1);
	job j = p2p(0, 0, 8, 1e9);
	rig_run(&r, &j, 1);
	ck_assert_int_eq(r.done[0], 6000 + 40000000);
	rig_free(&r);
}
END_TEST

/* ---- fabric ------------------------------------------------------------ */

/* 16 nodes, two pods of 64 GPUs; every GPU of pod 0 sends 1 GB to its peer
 * in pod 1. Pod uplink = 64 NICs x 50 GB/s / oversubscription, shared by 64
 * flows: 1:4 gives 12.5 GB/s each (80 ms), 1:1 the NIC's 50 GB/s (20 ms).
 * Latency 8,000 ns: 2 x (pcie 500 + nic 2500) + 4 switch tiers x 500. */
static const struct pod_case {
	double over, rate;
	cs_time want;
} pod_cases[] = {
	{4, 12.5e9, 8000 + 80000000},
	{1, 50e9, 8000 + 20000000},
};

START_TEST(test_pod_uplink_caps_crossing_flows)
{
	const struct pod_case *k = &pod_cases[_i];
	job j[64];
	for (int i = 0; i < 64; i++)
		j[i] = p2p(0, i, i + 64, 1e9);

	/* the rates, read mid-run */
	cs_cluster_spec c = cluster(16, 64, 64, 1, k->over);
	cs_topo *t = cs_topo_new(&c);
	cs_net *n = cs_net_new(t, &c);
	for (int i = 0; i < 64; i++) {
		int64_t m[2] = {i, i + 64};
		ck_assert_int_ge(cs_net_start(n, 0, m, 2, CS_COLL_SEND_RECV, 1e9, CS_ALGO_RING,
					      CS_NET_ROUTE_LATENCY, (uint64_t)i), 0);
	}
	ck_assert_int_eq(cs_net_active_flows(n), 64);
	ck_assert_int_eq(cs_net_advance(n, 10000, NULL, 0), 0);
	cs_net_flow f[64];
	ck_assert_int_eq(cs_net_flows(n, f, 64), 64);
	for (int i = 0; i < 64; i++) {
		ck_assert(f[i].draining);
		ck_assert_double_eq_tol(f[i].rate, k->rate, 1e-3);
	}
	cs_net_free(n);
	cs_topo_free(t);

	rig r;
	rig_init(&r, c);
	rig_run(&r, j, 64);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(r.done[i], k->want);
	rig_free(&r);
}
END_TEST

/* All-to-all of S = 64 MiB per rank over 128 GPUs in two pods of 64.
 * Each GPU sends 120/128 S through its NIC (the rest stays in the node):
 * 1.2583 ms at 50 GB/s. Half of what each sends leaves the pod: 32 S in all
 * through 64 x 50 GB/s / 7 = 457 GB/s, 4.6976 ms. The flow model lands on
 * the binding bound (plus latency, within 2 %). */
static double a2a_ms(double over)
{
	rig r;
	rig_init(&r, cluster(16, 64, 64, 1, over));
	job j = {0, 0, 1, 128, CS_COLL_ALL_TO_ALL, 64.0 * 1048576, CS_ALGO_AUTO};
	rig_run(&r, &j, 1);
	ck_assert_int_eq(r.max_flows, 128 * 127);
	double ms = (double)r.done[0] * 1e-6;
	rig_free(&r);
	return ms;
}

START_TEST(test_cross_pod_all_to_all_bound_by_oversubscription)
{
	double s = 64.0 * 1048576;
	double nic_ms = 120.0 / 128 * s / 50e9 * 1e3;
	double pod_ms = 32 * s / (64 * 50e9 / 7) * 1e3;
	double t1 = a2a_ms(1), t7 = a2a_ms(7);
	ck_assert_double_ge(t1, nic_ms);
	ck_assert_double_le(t1, nic_ms * 1.02);
	ck_assert_double_ge(t7, pod_ms);
	ck_assert_double_le(t7, pod_ms * 1.02);
	ck_assert_double_ge(t7 / t1, 3.6);
}
END_TEST

/* Two nodes, a ring all-reduce over all 16 GPUs: 8 channels, one per NIC,
 * each carrying 2(n-1)/n S / 8; with PXN each crossing stays on its rail, so
 * a 1:8 leaf tier (50 GB/s of uplink per leaf) changes nothing. 1 GB:
 * 1.875 GB / 400 GB/s = 4,687,500 ns, plus 30 steps x 8,000 ns (NVLink 2,000
 * + pcie, nic, nic, pcie 6,000). */
START_TEST(test_rail_aligned_ring_uses_every_nic_off_the_leaf_uplinks)
{
	for (int over = 1; over <= 8; over *= 8) {
		rig r;
		rig_init(&r, cluster(2, 16, 0, over, 1));
		job j = {0, 0, 1, 16, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING};
		rig_run(&r, &j, 1);
		ck_assert_int_eq(r.max_flows, 8); /* a flow per channel, over all its edges */
		ck_assert_int_eq(r.done[0], 240000 + 4687500);
		rig_free(&r);
	}
}
END_TEST

/* ---- collectives ------------------------------------------------------- */

static const struct ring_case {
	cs_coll_op op;
	int64_t n;
	double bytes;
} ring_cases[] = {
	{CS_COLL_ALL_REDUCE, 8, 1e9},
	{CS_COLL_ALL_REDUCE, 8, 13.5e9}, /* the seed's 7B gradients */
	{CS_COLL_ALL_REDUCE, 4, 1e9},
	{CS_COLL_ALL_REDUCE, 2, 256e6},
	{CS_COLL_REDUCE_SCATTER, 8, 1e9},
	{CS_COLL_ALL_GATHER, 8, 1e9},
};

/* One NVLink domain: one ring, each edge one GPU's NVLink out and the next
 * one's in, 2 us per step: exactly the alpha-beta ring (to the ns). */
START_TEST(test_nvlink_ring_matches_alpha_beta)
{
	const struct ring_case *k = &ring_cases[_i];
	rig r;
	rig_init(&r, cluster(1, 64, 0, 1, 1));
	job j = {0, 0, 1, k->n, k->op, k->bytes, CS_ALGO_RING};
	rig_run(&r, &j, 1);
	double want = cs_coll_ring_alpha_beta_s(k->op, k->bytes, k->n, 2e-6, 450e9) * 1e9;
	ck_assert_double_eq_tol((double)r.done[0], want, 1.0);
	ck_assert_int_eq(r.max_flows, 1); /* one channel: one flow over its n edges */
	rig_free(&r);
}
END_TEST

/* A ring of 8 chips on a 1-D torus: every edge one ICI link (the wrap-around
 * one closing it), so the alpha-beta ring at one hop per step; on a mesh
 * the closing edge runs back over 7 links of the other direction, at the
 * same rate but 7 hops of latency per step. */
START_TEST(test_torus_ring_matches_alpha_beta)
{
	bool wrap = _i == 1;
	cs_cluster_spec c;
	memset(&c, 0, sizeof c);
	c.nodes = 2;
	c.gpus_per_node = 4;
	c.scale_up_domain = 4;
	c.nics_per_node = 1;
	c.scale_out = (cs_link_spec){10e9, 10000};
	c.topology = CS_TOPO_TORUS;
	c.torus_dims = 1;
	c.torus_dim[0] = 8;
	c.torus_wrap = wrap;
	c.ici = (cs_link_spec){50e9, 1000};
	rig r;
	rig_init(&r, c);
	job j = {0, 0, 1, 8, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING};
	rig_run(&r, &j, 1);
	double hop_s = wrap ? 1e-6 : 7e-6;
	double want = cs_coll_ring_alpha_beta_s(CS_COLL_ALL_REDUCE, 1e9, 8, hop_s, 50e9) * 1e9;
	ck_assert_double_eq_tol((double)r.done[0], want, 1.0);
	rig_free(&r);
}
END_TEST

/* A ring moves in lockstep at its slowest edge's pace, so traffic beside a
 * fast edge gets what the ring leaves. Ring: all-reduce of 1 GB over GPUs
 * 0..7 of one NVLink domain, GPU 0's NVLink out kept at 0.2 (90 GB/s).
 * Beside it a send of 1 GB from GPU 2 to 3, on the ring edge 2 -> 3's links.
 * The send drains alone at 450 GB/s from 2,000 ns (its route's latency) to
 * the ring's 14 x 2,000 = 28,000 ns, 11.7 MB; then the ring runs at 90 GB/s
 * everywhere and the send gets the other 360 GB/s: 988.3 MB in 2,745,278 ns
 * (rounded up), ending at 2,773,278. The ring's edges carry 2 x 7/8 GB at
 * 90 GB/s: 19,444,445 ns after its latency, ending at 19,472,445. */
START_TEST(test_ring_moves_at_its_slowest_edge)
{
	rig r;
	rig_init(&r, cluster(1, 64, 0, 1, 1));
	int32_t slow = cs_topo_gpu_link(r.topo, 0, CS_LINK_NVL_UP);
	ck_assert_int_ge(slow, 0);
	ck_assert_int_eq(cs_net_scale_link(r.net, 0, slow, 0.2), 0);
	job j[2] = {
		{0, 0, 1, 8, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING},
		p2p(0, 2, 3, 1e9),
	};
	rig_run(&r, j, 2);
	ck_assert_int_eq(r.done[1], 28000 + 2745278);
	ck_assert_int_eq(r.done[0], 28000 + 19444445);
	rig_free(&r);
}
END_TEST

/* The net keeps a repeated collective's plan: the second of two identical
 * all-reduces over 16 GPUs on 2 nodes (8 channels, PXN hops), started
 * after the first has ended, takes exactly as long; a third with other
 * bytes is planned afresh, at its own time. */
START_TEST(test_a_repeated_collective_takes_the_same_time)
{
	rig r;
	rig_init(&r, cluster(2, 16, 0, 1, 1));
	job j[3] = {
		{0, 0, 1, 16, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING},
		{100000000, 0, 1, 16, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING},
		{200000000, 0, 1, 16, CS_COLL_ALL_REDUCE, 2e9, CS_ALGO_RING},
	};
	rig_run(&r, j, 3);
	ck_assert_int_eq(r.done[0], 240000 + 4687500);
	ck_assert_int_eq(r.done[1] - 100000000, r.done[0]);
	ck_assert_int_eq(r.done[2] - 200000000, 240000 + 2 * 4687500);
	rig_free(&r);
}
END_TEST

START_TEST(test_two_all_reduces_on_same_gpus_take_twice)
{
	rig r;
	rig_init(&r, cluster(1, 64, 0, 1, 1));
	job one = {0, 0, 1, 8, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING};
	rig_run(&r, &one, 1);
	cs_time t1 = r.done[0];
	rig_free(&r);

	rig_init(&r, cluster(1, 64, 0, 1, 1));
	job two[2] = {one, one};
	rig_run(&r, two, 2);
	ck_assert_int_eq(r.done[0], r.done[1]);
	/* 28,000 ns latency + 2 x 3,888,889 */
	ck_assert_int_eq(r.done[0], 28000 + 7777778);
	double ratio = (double)r.done[0] / (double)t1;
	ck_assert_double_ge(ratio, 1.99);
	ck_assert_double_le(ratio, 2.0);
	rig_free(&r);
}
END_TEST

/* Double binary tree over 4 nodes, one GPU each (GPUs 0, 8, 16, 24): every
 * NIC carries 4 flows of S/2 each way (an interior node: parent and two
 * children in one tree, parent in the other), so all drain at 12.5 GB/s:
 * 2 S / 50 GB/s, behind 2 x depth 2 x 6,000 ns. */
START_TEST(test_tree_all_reduce_volume_per_edge)
{
	rig r;
	rig_init(&r, cluster(4, 64, 0, 1, 1));
	job j = {0, 0, 8, 4, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_TREE};
	rig_run(&r, &j, 1);
	ck_assert_int_eq(r.max_flows, 2 * 2 * 3);
	ck_assert_int_eq(r.done[0], 24000 + 40000000);
	rig_free(&r);
}
END_TEST

START_TEST(test_trivial_collectives_complete_at_start)
{
	rig r;
	rig_init(&r, cluster(2, 64, 0, 1, 1));
	job j[3] = {
		{500, 3, 1, 1, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING},
		{700, 0, 1, 8, CS_COLL_ALL_GATHER, 0, CS_ALGO_RING},
		{900, 0, 8, 2, CS_COLL_ALL_TO_ALL, 2e9, CS_ALGO_RING}, /* 1 GB each way */
	};
	rig_run(&r, j, 3);
	ck_assert_int_eq(r.done[0], 500);
	ck_assert_int_eq(r.done[1], 700);
	ck_assert_int_eq(r.done[2], 900 + 6000 + 20000000);
	rig_free(&r);

	cs_cluster_spec c = cluster(2, 64, 0, 1, 1);
	cs_topo *t = cs_topo_new(&c);
	cs_net *n = cs_net_new(t, &c);
	int64_t bad[2] = {0, 16};
	ck_assert_int_eq(cs_net_start(n, 0, bad, 2, CS_COLL_SEND_RECV, 1, CS_ALGO_RING,
				      CS_NET_ROUTE_LATENCY, 0), -1);
	ck_assert_int_eq(cs_net_advance(n, 100, NULL, 0), 0);
	ck_assert_int_eq(cs_net_advance(n, 99, NULL, 0), -1);
	ck_assert_int_eq(cs_net_start(n, 50, bad, 1, CS_COLL_SEND_RECV, 1, CS_ALGO_RING,
				      CS_NET_ROUTE_LATENCY, 0), -1);
	cs_net_free(n);
	cs_topo_free(t);
}
END_TEST

/* ---- max-min fairness ---------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The textbook certificate: rates fit every link, and every flow crosses a
 * saturated link on which no flow is faster. */
static void check_maxmin(const cs_net *n, const cs_topo *t, int seed)
{
	enum { CAP = 512 };
	static const double eps = 1e-9;
	cs_net_flow f[CAP];
	int64_t nf = cs_net_flows(n, f, CAP);
	ck_assert_int_le(nf, CAP);
	int32_t nl = cs_topo_nlinks(t);
	double *load = calloc((size_t)nl, sizeof(*load));
	double *fastest = calloc((size_t)nl, sizeof(*fastest));
	for (int64_t i = 0; i < nf; i++) {
		if (!f[i].draining)
			continue;
		for (int k = 0; k < f[i].nlinks; k++) {
			load[f[i].links[k]] += f[i].rate * f[i].weights[k];
			if (f[i].rate > fastest[f[i].links[k]])
				fastest[f[i].links[k]] = f[i].rate;
		}
	}
	for (int32_t l = 0; l < nl; l++)
		ck_assert_double_le(load[l], cs_net_link_capacity(n, l) * (1 + eps));
	for (int64_t i = 0; i < nf; i++) {
		if (!f[i].draining || f[i].nlinks == 0)
			continue;
		int bottleneck = 0;
		for (int k = 0; k < f[i].nlinks; k++) {
			int32_t l = f[i].links[k];
			if (load[l] >= cs_net_link_capacity(n, l) * (1 - eps) &&
			    f[i].rate >= fastest[l] * (1 - eps))
				bottleneck = 1;
		}
		ck_assert_msg(bottleneck, "seed %d: flow %ld has no bottleneck link", seed, (long)i);
	}
	free(load);
	free(fastest);
}

static void random_instance(int seed)
{
	uint64_t s = 0x9e3779b97f4a7c15u + (uint64_t)seed;
	/* 4 nodes of 2 GPUs, 2 NICs each, 2 per leaf unit, 2 pods; no latency */
	cs_cluster_spec c = cluster(4, 4, 4, 1 + (double)(rnd(&s) % 3), 1 + (double)(rnd(&s) % 4));
	c.gpus_per_node = 2;
	c.scale_up_domain = 2;
	c.nics_per_node = 2;
	c.scale_up = (cs_link_spec){(double)(100 + rnd(&s) % 400) * 1e9, 0};
	c.scale_out = (cs_link_spec){(double)(10 + rnd(&s) % 90) * 1e9, 0};
	c.pcie = (cs_link_spec){(double)(20 + rnd(&s) % 80) * 1e9, 0};
	c.switch_latency_ns = 0;
	cs_topo *t = cs_topo_new(&c);
	cs_net *n = cs_net_new(t, &c);
	int nc = 1 + (int)(rnd(&s) % 12);
	for (int i = 0; i < nc; i++) {
		int64_t m[8];
		int64_t k = rnd(&s) % 3 == 0 ? 2 + (int64_t)(rnd(&s) % 7) : 2;
		for (int64_t j = 0; j < k; j++)
			m[j] = (int64_t)(rnd(&s) % 8);
		if (m[0] == m[1])
			m[1] = (m[0] + 1) % 8;
		cs_coll_op op = k == 2 ? CS_COLL_SEND_RECV : (cs_coll_op)(rnd(&s) % 4);
		double bytes = (double)(1 + rnd(&s) % 1000) * 1e6;
		ck_assert_int_ge(cs_net_start(n, 0, m, k, op, bytes, CS_ALGO_RING, CS_NET_ROUTE_LATENCY, (uint64_t)i), 0);
	}
	/* check after the start and after each of the next few changes */
	for (int step = 0; step < 6; step++) {
		check_maxmin(n, t, seed);
		cs_time next = cs_net_next_completion(n);
		if (next == CS_TIME_MAX)
			break;
		uint64_t tags[16];
		ck_assert_int_ge(cs_net_advance(n, next, tags, 16), 0);
	}
	cs_net_free(n);
	cs_topo_free(t);
}

/* 200 random instances in one test (one process: cheap under sanitizers). */
START_TEST(test_random_instances_have_maxmin_certificate)
{
	for (int seed = 0; seed < 200; seed++)
		random_instance(seed);
}
END_TEST

/* Collectives starting while others drain, on 16 nodes: the net refills
 * only the component a change reaches, and after every change, to the
 * last, the whole net's rates still carry the max-min certificate. */
START_TEST(test_staggered_starts_keep_the_certificate_to_the_end)
{
	for (int seed = 0; seed < 40; seed++) {
		uint64_t s = 0x51ed270b27u + (uint64_t)seed;
		cs_cluster_spec c = cluster(16, 16, 32, 1 + (double)(rnd(&s) % 3), 1 + (double)(rnd(&s) % 4));
		cs_topo *t = cs_topo_new(&c);
		cs_net *n = cs_net_new(t, &c);
		cs_time at = 0;
		int started = 0, nc = 4 + (int)(rnd(&s) % 20);
		for (int guard = 0; guard < 100000; guard++) {
			cs_time next = cs_net_next_completion(n);
			if (started < nc && at <= next) {
				int64_t m[16], k = 2 + (int64_t)(rnd(&s) % 15);
				for (int64_t j = 0; j < k; j++)
					m[j] = (int64_t)(rnd(&s) % 128);
				if (m[0] == m[1])
					m[1] = (m[0] + 1) % 128;
				cs_coll_op op = k == 2 ? CS_COLL_SEND_RECV : (cs_coll_op)(rnd(&s) % 4);
				double bytes = (double)(1 + rnd(&s) % 200) * 1e6;
				ck_assert_int_ge(cs_net_start(n, at, m, k, op, bytes, CS_ALGO_RING,
							      CS_NET_ROUTE_LATENCY, (uint64_t)started), 0);
				started++;
				at += (cs_time)(rnd(&s) % 3000000);
			} else if (next != CS_TIME_MAX) {
				uint64_t tags[64];
				ck_assert_int_ge(cs_net_advance(n, next, tags, 64), 0);
			} else {
				break;
			}
			check_maxmin(n, t, seed);
		}
		ck_assert_int_eq(started, nc);
		ck_assert_int_eq(cs_net_active_flows(n), 0);
		cs_net_free(n);
		cs_topo_free(t);
	}
}
END_TEST

/* ---- determinism ------------------------------------------------------- */

static const job mixed[] = {
	{0, 0, 1, 16, CS_COLL_ALL_REDUCE, 300e6, CS_ALGO_RING},
	{1000, 0, 8, 4, CS_COLL_ALL_REDUCE, 100e6, CS_ALGO_TREE},
	{2500, 0, 1, 8, CS_COLL_ALL_GATHER, 64e6, CS_ALGO_RING},
	{2500, 7, 8, 2, CS_COLL_SEND_RECV, 12345678, CS_ALGO_RING},
	{40000, 8, 1, 24, CS_COLL_ALL_TO_ALL, 48e6, CS_ALGO_RING},
	{40000, 0, 1, 32, CS_COLL_REDUCE_SCATTER, 200e6, CS_ALGO_RING},
	{900000, 3, 8, 4, CS_COLL_BROADCAST, 10e6, CS_ALGO_RING},
};

/* Run `mixed` on two identical nets, the second from plans if asked,
 * and check both end every job at the same time, in the same order. */
static int run_mixed_twice(rig *a, rig *b, bool planned)
{
	int nj = (int)(sizeof(mixed) / sizeof(mixed[0]));
	rig_init(a, cluster(4, 16, 16, 2, 3));
	rig_run(a, mixed, nj);
	rig_init(b, cluster(4, 16, 16, 2, 3));
	b->planned = planned;
	rig_run(b, mixed, nj);
	for (int i = 0; i < nj; i++) {
		ck_assert_int_eq(a->done[i], b->done[i]);
		ck_assert_int_eq(a->order[i], b->order[i]);
	}
	return nj;
}

START_TEST(test_same_sequence_same_times)
{
	rig a, b;
	int nj = run_mixed_twice(&a, &b, false);
	for (int i = 0; i < nj; i++)
		ck_assert_int_gt(a.done[i], mixed[i].at);
	rig_free(&a);
	rig_free(&b);
}
END_TEST

/* A collective started from its kept plan runs as one started from its
 * arguments; a plan the net does not hold is refused. */
START_TEST(test_planned_starts_take_the_same_times)
{
	rig a, b;
	int nj = run_mixed_twice(&a, &b, true);
	ck_assert_int_eq(cs_net_start_plan(b.net, cs_net_now(b.net), -1, CS_NET_ROUTE_LATENCY, 0), -1);
	ck_assert_int_eq(cs_net_start_plan(b.net, cs_net_now(b.net), nj, CS_NET_ROUTE_LATENCY, 0), -1);
	rig_free(&a);
	rig_free(&b);
}
END_TEST

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *flow_suite(void)
{
	Suite *s = suite_create("flow");
	TCase *tc = tcase_create("point_to_point");
	tcase_add_loop_test(tc, test_one_flow_is_latency_plus_bytes_over_nic, 0, LEN(one_cases));
	tcase_add_test(tc, test_shared_nic_halves_rate_disjoint_nics_do_not);
	tcase_add_test(tc, test_late_flow_slows_the_first_piecewise);
	tcase_add_test(tc, test_scaled_link_slows_its_flows);
	suite_add_tcase(s, tc);
	tc = tcase_create("fabric");
	tcase_add_loop_test(tc, test_pod_uplink_caps_crossing_flows, 0, LEN(pod_cases));
	tcase_add_test(tc, test_cross_pod_all_to_all_bound_by_oversubscription);
	tcase_add_test(tc, test_rail_aligned_ring_uses_every_nic_off_the_leaf_uplinks);
	suite_add_tcase(s, tc);
	tc = tcase_create("collectives");
	tcase_add_loop_test(tc, test_nvlink_ring_matches_alpha_beta, 0, LEN(ring_cases));
	tcase_add_loop_test(tc, test_torus_ring_matches_alpha_beta, 0, 2);
	tcase_add_test(tc, test_two_all_reduces_on_same_gpus_take_twice);
	tcase_add_test(tc, test_ring_moves_at_its_slowest_edge);
	tcase_add_test(tc, test_a_repeated_collective_takes_the_same_time);
	tcase_add_test(tc, test_tree_all_reduce_volume_per_edge);
	tcase_add_test(tc, test_trivial_collectives_complete_at_start);
	suite_add_tcase(s, tc);
	tc = tcase_create("maxmin");
	tcase_add_test(tc, test_random_instances_have_maxmin_certificate);
	tcase_add_test(tc, test_staggered_starts_keep_the_certificate_to_the_end);
	suite_add_tcase(s, tc);
	tc = tcase_create("determinism");
	tcase_add_test(tc, test_same_sequence_same_times);
	tcase_add_test(tc, test_planned_starts_take_the_same_times);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(flow_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
