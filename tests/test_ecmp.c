/*
 * test_ecmp.c - ECMP in the flow fidelity: a fat tree's single uplinks,
 * each connection's queue pairs hashed onto one path, the collisions that
 * follow against their closed forms, the hash's spread against the
 * expected maximum load of balls in bins, determinism per seed, and ideal
 * routing as it was, bit for bit.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/flow.h"
#include "hw/topo.h"

/* Servers of one GPU and one NIC of 50 GB/s (5 us: 2.5 us per NIC link),
 * PCIe 63 GB/s (0.5 us per link), 500 ns per switch tier; leaves of
 * `leaf_gpus` NICs, so with ECMP leaf_gpus / leaf_over uplinks of 50 GB/s
 * each. A route between leaves: 500 + 2500 + 500 + 500 + 2500 + 500 ns. */
static cs_cluster_spec cluster(int64_t nodes, int gpn, int64_t leaf_gpus, double leaf_over,
			       cs_routing routing)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof(c));
	c.nodes = nodes;
	c.gpus_per_node = gpn;
	c.scale_up_domain = gpn;
	c.nics_per_node = gpn;
	c.scale_up = (cs_link_spec){450e9, 2000};
	c.scale_out = (cs_link_spec){50e9, 5000};
	c.scale_out_kind = CS_NET_ROCE;
	c.pcie = (cs_link_spec){63e9, 1000};
	c.leaf_gpus = leaf_gpus;
	c.leaf_oversubscription = leaf_over;
	c.pod_oversubscription = 1;
	c.switch_latency_ns = 500;
	c.routing = routing;
	return c;
}

#define LAT_LEAVES 7000
#define GB_AT_NIC 20000000 /* 1 GB at 50 GB/s, ns */

/* Run everything started on the net to its end; done[tag] is when each
 * collective completed. */
static void drain(cs_net *n, cs_time *done, int ntags)
{
	for (int i = 0; i < ntags; i++)
		done[i] = -1;
	for (;;) {
		cs_time t = cs_net_next_completion(n);
		if (t == CS_TIME_MAX)
			break;
		uint64_t tags[16];
		int k = cs_net_advance(n, t, tags, 16);
		ck_assert_int_ge(k, 0);
		for (int i = 0; i < k; i++) {
			ck_assert_uint_lt(tags[i], (uint64_t)ntags);
			done[tags[i]] = t;
		}
	}
	ck_assert_int_eq(cs_net_active_colls(n), 0);
	for (int i = 0; i < ntags; i++)
		ck_assert_int_ge(done[i], 0);
}

static void send(cs_net *n, int64_t src, int64_t dst, double bytes, uint64_t tag)
{
	int64_t m[2] = {src, dst};
	ck_assert_int_ge(cs_net_start(n, cs_net_now(n), m, 2, CS_COLL_SEND_RECV, bytes, CS_ALGO_RING,
				      CS_NET_ROUTE_LATENCY, tag), 0);
}

/* The single uplink a flow's QP crosses, and how many of its QPs do (its
 * weight there); the flows in the net's stable order. */
static int32_t uplink_of(const cs_topo *t, const cs_net_flow *f, int32_t *weight)
{
	int32_t up = -1;
	for (int k = 0; k < f->nlinks; k++)
		if (cs_topo_link_kind(t, f->links[k]) == CS_LINK_UPLINK) {
			ck_assert_int_eq(up, -1); /* one QP: one uplink */
			up = f->links[k];
			*weight = f->weights[k];
		}
	return up;
}

/* The id of the first leaf's uplink 0: uplink j of leaf 0 is first + j. */
static int32_t first_uplink(const cs_topo *t)
{
	for (int32_t l = 0; l < cs_topo_nlinks(t); l++)
		if (cs_topo_link_kind(t, l) == CS_LINK_UPLINK)
			return l;
	return -1;
}

/* ---- the topology ----------------------------------------------------- */

/* 16 servers, leaves of 8 NICs: 2 leaves. With ECMP (or auto on RoCE) each
 * leaf has 8 uplinks and 8 downlinks of 50 GB/s (400 GB/s / 8), after every
 * link of before; at 1:3, floor(8 / 3) = 2 uplinks of 400 / 3 / 2 GB/s.
 * The pod's 16 uplinks to the core follow them (a route within the pod
 * never takes them). A route between leaves has one path per uplink, the same count of links
 * as the aggregate's, uplink j of the first leaf and downlink j of the
 * other (one spine); inside a leaf, one path. On InfiniBand auto is
 * adaptive: no single uplinks, and the ids as before. */
START_TEST(test_single_uplinks_replace_the_aggregate_on_ecmp_paths)
{
	cs_cluster_spec ib = cluster(16, 1, 8, 1, CS_ROUTING_AUTO);
	ib.scale_out_kind = CS_NET_IB;
	cs_topo *ideal = cs_topo_new(&ib);
	ck_assert(!cs_cluster_ecmp(&ib));
	int32_t nl = cs_topo_nlinks(ideal);
	ck_assert_int_eq(nl, 6 * 16 + 2 * 2 + 2);
	ck_assert_int_eq(cs_topo_paths(ideal, 0, 8), 1);

	for (int r = 0; r < 2; r++) {
		cs_cluster_spec c = cluster(16, 1, 8, 1, r ? CS_ROUTING_ECMP : CS_ROUTING_AUTO);
		c.scale_out_kind = r ? CS_NET_IB : CS_NET_ROCE;
		ck_assert(cs_cluster_ecmp(&c));
		cs_topo *t = cs_topo_new(&c);
		ck_assert_int_eq(cs_topo_nlinks(t), nl + 2 * 2 * 8 + 2 * 16);
		ck_assert_int_eq(cs_topo_paths(t, 0, 8), 8);
		ck_assert_int_eq(cs_topo_paths(t, 0, 7), 1);
		int32_t a[8], b[8];
		ck_assert_int_eq(cs_topo_route(t, 0, 8, a, 8), 6);
		ck_assert_int_eq(cs_topo_route(ideal, 0, 8, b, 8), 6);
		ck_assert_mem_eq(a, b, sizeof(int32_t) * 6);
		for (uint64_t p = 0; p < 20; p++) {
			ck_assert_int_eq(cs_topo_route_path(t, 0, 8, p, b, 8), 6);
			ck_assert_int_eq(cs_topo_link_kind(t, b[2]), CS_LINK_UPLINK);
			ck_assert_int_eq(cs_topo_link_kind(t, b[3]), CS_LINK_DOWNLINK);
			char name[32];
			char want[32];
			snprintf(want, sizeof want, "leaf-uplink[%d]", (int)(p % 8));
			ck_assert_str_eq(cs_topo_link_name(t, b[2], name, sizeof name), want);
			snprintf(want, sizeof want, "leaf-downlink[%d]", 8 + (int)(p % 8));
			ck_assert_str_eq(cs_topo_link_name(t, b[3], name, sizeof name), want);
			ck_assert_double_eq(cs_topo_link_bandwidth(t, b[2]), 50e9);
			ck_assert_int_eq(cs_topo_link_tier(t, b[2]), CS_TIER_LEAF);
			ck_assert_int_eq(cs_topo_link_tier(t, b[3]), CS_TIER_LEAF);
			ck_assert_int_eq(b[0], a[0]);
			ck_assert_int_eq(b[5], a[5]);
		}
		ck_assert_int_eq(cs_topo_route_path(t, 0, 7, 5, b, 8), 4);
		ck_assert_int_eq(cs_topo_route(t, 0, 7, a, 8), 4);
		ck_assert_mem_eq(a, b, sizeof(int32_t) * 4);
		cs_topo_free(t);
	}
	cs_cluster_spec o = cluster(16, 1, 8, 3, CS_ROUTING_ECMP);
	cs_topo *t = cs_topo_new(&o);
	ck_assert_int_eq(cs_topo_paths(t, 0, 8), 2);
	int32_t l[8];
	ck_assert_int_eq(cs_topo_route_path(t, 0, 8, 3, l, 8), 6);
	ck_assert_double_eq_tol(cs_topo_link_bandwidth(t, l[2]), 400e9 / 3 / 2, 1e-3);
	ck_assert_int_eq(cs_topo_link_tier(t, l[0]), -1); /* PCIe */
	cs_topo_free(t);
	cs_topo_free(ideal);
}
END_TEST

/* Two pods of two leaves (32 servers, leaves of 8, pods of 16): a route
 * across pods climbs both tiers, k x kp x k paths (8 x 16 x 8), and has
 * the 8 links of the aggregates' route: uplink, pod uplink, pod downlink
 * (the same core), downlink (the other pod's spine, a choice of its own). */
START_TEST(test_a_route_across_pods_hashes_both_tiers)
{
	cs_cluster_spec c = cluster(32, 1, 8, 1, CS_ROUTING_ECMP);
	c.pod_gpus = 16;
	cs_topo *t = cs_topo_new(&c);
	ck_assert_int_eq(cs_topo_paths(t, 0, 16), 8 * 16 * 8);
	ck_assert_int_eq(cs_topo_paths(t, 0, 8), 8);
	static const cs_link_kind want[8] = {
		CS_LINK_PCIE_UP, CS_LINK_NIC_UP, CS_LINK_UPLINK, CS_LINK_POD_UPLINK,
		CS_LINK_POD_DOWNLINK, CS_LINK_DOWNLINK, CS_LINK_NIC_DOWN, CS_LINK_PCIE_DOWN,
	};
	int32_t l[8];
	uint64_t path = 3 + 8 * (5 + 16 * 6);   /* uplink 3, core 5, spine 6 */
	ck_assert_int_eq(cs_topo_route_path(t, 0, 16, path, l, 8), 8);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(cs_topo_link_kind(t, l[i]), want[i]);
	char name[32];
	ck_assert_str_eq(cs_topo_link_name(t, l[2], name, sizeof name), "leaf-uplink[3]");
	ck_assert_str_eq(cs_topo_link_name(t, l[3], name, sizeof name), "pod-uplink[5]");
	ck_assert_str_eq(cs_topo_link_name(t, l[4], name, sizeof name), "pod-downlink[21]");
	ck_assert_str_eq(cs_topo_link_name(t, l[5], name, sizeof name), "leaf-downlink[22]");
	ck_assert_double_eq(cs_topo_link_bandwidth(t, l[3]), 50e9); /* 16 x 50 GB/s / 16 */
	ck_assert_int_eq(cs_topo_link_tier(t, l[3]), CS_TIER_POD);
	cs_topo_free(t);
}
END_TEST

/* ---- collisions --------------------------------------------------------- */

/* Two 1 GB sends from leaf 0 to leaf 1 on disjoint NICs: hashed onto the
 * same uplink (and so the same spine's downlink) each gets 25 GB/s and
 * ends at 7 us + 40 ms, twice the 20 ms of distinct uplinks. Seeds 1..64
 * give both cases, each time exactly. */
START_TEST(test_a_collision_doubles_a_flows_time)
{
	cs_cluster_spec c = cluster(16, 1, 8, 1, CS_ROUTING_ECMP);
	cs_topo *t = cs_topo_new(&c);
	int same = 0, apart = 0;
	for (uint64_t seed = 1; seed <= 64; seed++) {
		cs_net *n = cs_net_new(t, &c);
		ck_assert_int_eq(cs_net_route_ecmp(n, 1, seed), 0);
		send(n, 0, 8, 1e9, 0);
		send(n, 1, 9, 1e9, 1);
		cs_net_flow f[2];
		ck_assert_int_eq(cs_net_flows(n, f, 2), 2);
		int32_t w0 = 0, w1 = 0;
		int32_t u0 = uplink_of(t, &f[0], &w0), u1 = uplink_of(t, &f[1], &w1);
		ck_assert(u0 >= 0 && u1 >= 0 && w0 == 1 && w1 == 1);
		cs_time done[2];
		drain(n, done, 2);
		cs_time want = LAT_LEAVES + (u0 == u1 ? 2 : 1) * GB_AT_NIC;
		ck_assert_int_eq(done[0], want);
		ck_assert_int_eq(done[1], want);
		same += u0 == u1;
		apart += u0 != u1;
		cs_net_free(n);
	}
	ck_assert_int_gt(same, 0);
	ck_assert_int_gt(apart, 0);
	cs_topo_free(t);
}
END_TEST

/* E[max load] of n balls thrown uniformly into k bins, exactly:
 * P(max <= m) = n! / k^n [x^n] (sum_{i<=m} x^i / i!)^k. */
static double expected_max_load(int n, int k)
{
	double e = 0, below = 0; /* P(max <= m - 1) */
	for (int m = 1; m <= n; m++) {
		double poly[64] = {1}; /* the power, truncated at x^n */
		for (int b = 0; b < k; b++) {
			double next[64] = {0};
			for (int i = 0; i <= n; i++) {
				double fact = 1;
				for (int j = 0; j <= m && i + j <= n; j++) {
					if (j > 0)
						fact *= j;
					next[i + j] += poly[i] / fact;
				}
			}
			memcpy(poly, next, sizeof poly);
		}
		double p = poly[n];
		for (int i = 2; i <= n; i++)
			p *= i;
		p /= pow(k, n);
		e += m * (p - below);
		below = p;
	}
	return e;
}

/* 8 sends 1 GB from the 8 NICs of leaf 0 to the 8 of leaf 1, over 8
 * uplinks: the flows that share uplink j share spine j's downlink too, so
 * each ends at 7 us + m_j x 20 ms, m_j its uplink's load, exactly, for
 * every seed. Over 2,000 seeds the mean of the largest load is within 4
 * standard errors of E[max load] of 8 balls in 8 bins (2.597),
 * the hash spreading as uniformly as ideal ECMP's. */
START_TEST(test_n_flows_on_k_uplinks_take_their_uplinks_load)
{
	enum { N = 8, SEEDS = 2000 };
	cs_cluster_spec c = cluster(16, 1, 8, 1, CS_ROUTING_ECMP);
	cs_topo *t = cs_topo_new(&c);
	int32_t first = first_uplink(t);
	double sum = 0, sum2 = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		cs_net *n = cs_net_new(t, &c);
		ck_assert_int_eq(cs_net_route_ecmp(n, 1, seed), 0);
		for (int i = 0; i < N; i++)
			send(n, i, 8 + i, 1e9, (uint64_t)i);
		cs_net_flow f[N];
		ck_assert_int_eq(cs_net_flows(n, f, N), N);
		int load[8] = {0}, up[N], max = 0;
		for (int i = 0; i < N; i++) {
			int32_t w = 0;
			int32_t u = uplink_of(t, &f[i], &w) - first;
			ck_assert(u >= 0 && u < 8); /* leaf 0's */
			ck_assert_uint_eq(f[i].tag, (uint64_t)i);
			up[i] = u;
			load[u]++;
		}
		for (int j = 0; j < 8; j++)
			max = load[j] > max ? load[j] : max;
		cs_time done[N];
		drain(n, done, N);
		for (int i = 0; i < N; i++)
			ck_assert_int_eq(done[i], LAT_LEAVES + (cs_time)load[up[i]] * GB_AT_NIC);
		sum += max;
		sum2 += (double)max * max;
		cs_net_free(n);
	}
	double mean = sum / SEEDS, sd = sqrt(sum2 / SEEDS - mean * mean);
	double want = expected_max_load(N, 8);
	ck_assert_double_eq_tol(want, 2.5972, 1e-4);
	ck_assert_msg(fabs(mean - want) < 4 * sd / sqrt(SEEDS), "mean max load %.4f, expected %.4f",
		      mean, want);
	cs_topo_free(t);
}
END_TEST

/* Queue pairs: a send of 1 GB with q QPs is counted in QPs (bytes 1/q,
 * every link it crosses whole weighs q, its uplinks the QPs on each), and
 * alone it ends at 7 us + 20 ms, whatever its QPs share. Two such sends
 * from leaf 0 to leaf 1 move at 50 GB/s x q / max(q, L), L the most QPs of
 * the two on one uplink: the collision costs L/q where one QP each pays
 * 2x. At q = 16 (Llama 3's flows per GPU pair) the mean slowdown over 64
 * seeds is under 1.1, against the 1 + 1/8 that one QP pays on average
 * (a collision with probability 1/8). */
START_TEST(test_queue_pairs_spread_a_connection)
{
	cs_cluster_spec c = cluster(16, 1, 8, 1, CS_ROUTING_ECMP);
	cs_topo *t = cs_topo_new(&c);
	int32_t first = first_uplink(t);
	static const int qps[] = {2, 4, 16};
	for (size_t qi = 0; qi < sizeof qps / sizeof qps[0]; qi++) {
		int q = qps[qi];
		double slow = 0;
		for (uint64_t seed = 1; seed <= 64; seed++) {
			cs_net *n = cs_net_new(t, &c);
			ck_assert_int_eq(cs_net_route_ecmp(n, q, seed), 0);
			send(n, 0, 8, 1e9, 0);
			cs_net_flow f;
			ck_assert_int_eq(cs_net_flows(n, &f, 1), 1);
			ck_assert_double_eq(f.remaining, 1e9 / q);
			int on = 0;
			for (int k = 0; k < f.nlinks; k++) {
				cs_link_kind kind = cs_topo_link_kind(t, f.links[k]);
				if (kind == CS_LINK_UPLINK)
					on += f.weights[k];
				else if (kind == CS_LINK_NIC_UP || kind == CS_LINK_PCIE_DOWN)
					ck_assert_int_eq(f.weights[k], q);
			}
			ck_assert_int_eq(on, q);
			cs_time alone;
			drain(n, &alone, 1);
			ck_assert_int_eq(alone, LAT_LEAVES + GB_AT_NIC);

			send(n, 0, 8, 1e9, 0);
			send(n, 1, 9, 1e9, 1);
			cs_net_flow g[2];
			ck_assert_int_eq(cs_net_flows(n, g, 2), 2);
			int load[8] = {0}, L = 0;
			for (int i = 0; i < 2; i++)
				for (int k = 0; k < g[i].nlinks; k++)
					if (cs_topo_link_kind(t, g[i].links[k]) == CS_LINK_UPLINK)
						load[g[i].links[k] - first] += g[i].weights[k];
			for (int j = 0; j < 8; j++)
				L = load[j] > L ? load[j] : L;
			cs_time t0 = cs_net_now(n), done[2];
			drain(n, done, 2);
			double want = LAT_LEAVES + (double)GB_AT_NIC * (L > q ? L : q) / q;
			ck_assert_double_eq_tol((double)(done[0] - t0), want, 1.0);
			ck_assert_double_eq_tol((double)(done[1] - t0), want, 1.0);
			slow += (double)(L > q ? L : q) / q;
			cs_net_free(n);
		}
		if (q == 16)
			ck_assert_double_lt(slow / 64, 1.1);
	}
	cs_topo_free(t);
}
END_TEST

/* ---- determinism and ideal routing ---------------------------------------- */

/* A mixed load across leaves: a ring all-reduce over 64 GPUs on 8 servers
 * of 8 (leaves of 4 servers, 4 uplinks each: its channels leave their
 * leaves), an all-to-all over 16 GPUs of both leaves, and sends. */
static void mixed(cs_net *n, cs_time *done)
{
	int64_t ring[64], a2a[16];
	for (int i = 0; i < 64; i++)
		ring[i] = i;
	for (int i = 0; i < 16; i++)
		a2a[i] = i * 4;
	ck_assert_int_ge(cs_net_start(n, 0, ring, 64, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING,
				      CS_NET_ROUTE_LATENCY, 0), 0);
	ck_assert_int_ge(cs_net_start(n, 0, a2a, 16, CS_COLL_ALL_TO_ALL, 256e6, CS_ALGO_RING,
				      CS_NET_ROUTE_LATENCY, 1), 0);
	send(n, 1, 33, 5e8, 2);
	send(n, 2, 42, 5e8, 3);
	ck_assert_int_ge(cs_net_start(n, 0, ring + 32, 32, CS_COLL_ALL_REDUCE, 2e8, CS_ALGO_TREE,
				      CS_NET_ROUTE_LATENCY, 4), 0);
	drain(n, done, 5);
}

/* The same seed gives the same times; over seeds 1..8 the times differ
 * (the paths do). */
START_TEST(test_the_same_seed_gives_the_same_times)
{
	cs_cluster_spec c = cluster(8, 8, 32, 1, CS_ROUTING_ECMP);
	cs_topo *t = cs_topo_new(&c);
	cs_time seed1[5], first[5], again[5];
	int differ = 0;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		for (int k = 0; k < 2; k++) {
			cs_net *n = cs_net_new(t, &c);
			ck_assert_int_eq(cs_net_route_ecmp(n, 4, seed), 0);
			mixed(n, k ? again : first);
			cs_net_free(n);
		}
		ck_assert_mem_eq(first, again, sizeof first);
		if (seed == 1)
			memcpy(seed1, first, sizeof first);
		else
			differ += memcmp(seed1, first, sizeof first) != 0;
	}
	ck_assert_int_gt(differ, 0);
	cs_net *n = cs_net_new(t, &c);
	ck_assert_int_eq(cs_net_route_ecmp(n, 0, 1), -1);
	send(n, 0, 8, 1e6, 0);
	ck_assert_int_eq(cs_net_route_ecmp(n, 4, 1), -1); /* after a start */
	cs_net_free(n);
	cs_topo_free(t);
}
END_TEST

/* Ideal routing as before, bit for bit: the mixed load on the topology of
 * adaptive routing, and on the ECMP topology with the net left ideal (the
 * runner's idle net), the same times; with ECMP (seed 7) others, and a
 * load that climbs no tier (inside one leaf) the same. */
START_TEST(test_ideal_routing_gives_the_times_of_before)
{
	cs_cluster_spec ca = cluster(8, 8, 32, 1, CS_ROUTING_ADAPTIVE);
	cs_cluster_spec ce = cluster(8, 8, 32, 1, CS_ROUTING_ECMP);
	cs_topo *ta = cs_topo_new(&ca), *te = cs_topo_new(&ce);
	cs_net *na = cs_net_new(ta, &ca), *ni = cs_net_new(te, &ce), *ne = cs_net_new(te, &ce);
	ck_assert_int_eq(cs_net_route_ecmp(ne, 1, 7), 0);
	cs_time a[5], i[5], e[5];
	mixed(na, a);
	mixed(ni, i);
	mixed(ne, e);
	ck_assert_mem_eq(a, i, sizeof a);
	ck_assert(memcmp(a, e, sizeof a) != 0); /* ECMP's collisions move them */
	cs_net_free(na);
	cs_net_free(ni);
	cs_net_free(ne);

	/* inside leaf 0 (servers 0..3): NVLink and one leaf's NICs */
	int64_t m[32];
	for (int k = 0; k < 32; k++)
		m[k] = k;
	cs_time in[2][2];
	for (int r = 0; r < 2; r++) {
		cs_net *n = cs_net_new(r ? te : ta, r ? &ce : &ca);
		if (r)
			ck_assert_int_eq(cs_net_route_ecmp(n, 16, 3), 0);
		ck_assert_int_ge(cs_net_start(n, 0, m, 32, CS_COLL_ALL_REDUCE, 1e9, CS_ALGO_RING,
					      CS_NET_ROUTE_LATENCY, 0), 0);
		send(n, 0, 24, 3e8, 1);
		drain(n, in[r], 2);
		cs_net_free(n);
	}
	ck_assert_mem_eq(in[0], in[1], sizeof in[0]);
	cs_topo_free(ta);
	cs_topo_free(te);
}
END_TEST

static Suite *ecmp_suite(void)
{
	Suite *s = suite_create("ecmp");
	TCase *tc = tcase_create("topology");
	tcase_add_test(tc, test_single_uplinks_replace_the_aggregate_on_ecmp_paths);
	tcase_add_test(tc, test_a_route_across_pods_hashes_both_tiers);
	suite_add_tcase(s, tc);
	tc = tcase_create("collisions");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_a_collision_doubles_a_flows_time);
	tcase_add_test(tc, test_n_flows_on_k_uplinks_take_their_uplinks_load);
	tcase_add_test(tc, test_queue_pairs_spread_a_connection);
	suite_add_tcase(s, tc);
	tc = tcase_create("routing");
	tcase_add_test(tc, test_the_same_seed_gives_the_same_times);
	tcase_add_test(tc, test_ideal_routing_gives_the_times_of_before);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ecmp_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
