/*
 * test_coll.c - the collective cost model and tuner against closed forms
 * and the published measurements of docs/references.md (acceptance criteria,
 * tolerances stated per case).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "config/config.h"
#include "hw/topo.h"

enum { H100, A100, B200 };

static cs_cluster_spec cluster(int gpu, int64_t nodes)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof(c));
	c.nodes = nodes;
	c.gpus_per_node = 8;
	c.scale_up_domain = 8;
	c.nics_per_node = 8;
	c.leaf_gpus = 256;
	c.leaf_oversubscription = 1;
	c.pod_oversubscription = 1;
	c.switch_latency_ns = 0;
	if (gpu == H100) {
		c.gpu.arch = 90;
		c.gpu.nvls = 1;
		c.scale_up = (cs_link_spec){450e9, 2000};
		c.scale_out = (cs_link_spec){50e9, 5000};
		c.pcie = (cs_link_spec){63e9, 1000};
	} else if (gpu == B200) { /* 8 x 400 Gb/s out of each node, as AWS P6-B200 */
		c.gpu.arch = 100;
		c.gpu.nvls = 1;
		c.scale_up = (cs_link_spec){900e9, 2000};
		c.scale_out = (cs_link_spec){50e9, 5000};
		c.pcie = (cs_link_spec){63e9, 1000};
	} else {
		c.gpu.arch = 80;
		c.scale_up = (cs_link_spec){300e9, 2000};
		c.scale_out = (cs_link_spec){25e9, 5000};
		c.pcie = (cs_link_spec){31e9, 1000};
	}
	return c;
}

static double busbw(int gpu, int64_t nodes, cs_coll_op op, cs_group_shape g, double bytes,
		    cs_coll_algo a, cs_coll_choice *ch)
{
	cs_cluster_spec c = cluster(gpu, nodes);
	cs_coll_spec s = {.algorithm = a, .protocol = CS_PROTO_AUTO,
			  .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
	cs_coll *t = cs_coll_new(&c, &s);
	int64_t ns = cs_coll_time(t, op, &g, bytes, ch);
	cs_coll_free(t);
	return bytes / (double)ns * cs_coll_bus_factor(op, g.nranks); /* GB/s */
}

static const cs_group_shape node8 = {8, 1, 8, 1, 8, 1, 0, {0}};

/* ---- nccl-tests conventions ------------------------------------------- */

static const struct factor_case {
	cs_coll_op op;
	int64_t n;
	double want;
} factor_cases[] = {
	{CS_COLL_ALL_REDUCE, 8, 1.75},   {CS_COLL_ALL_REDUCE, 2, 1.0},
	{CS_COLL_REDUCE_SCATTER, 8, 0.875}, {CS_COLL_ALL_GATHER, 4, 0.75},
	{CS_COLL_ALL_TO_ALL, 16, 0.9375}, {CS_COLL_BROADCAST, 8, 1.0},
	{CS_COLL_SEND_RECV, 2, 1.0}, {CS_COLL_REDUCE, 8, 1.0}, {CS_COLL_GATHER, 8, 0.875},
	{CS_COLL_SCATTER, 4, 0.75},
};

START_TEST(test_bus_factor_matches_nccl_tests)
{
	const struct factor_case *k = &factor_cases[_i];
	ck_assert_double_eq_tol(cs_coll_bus_factor(k->op, k->n), k->want, 1e-12);
}
END_TEST

/* ---- the seed's alpha-beta ring --------------------------------------- */

static const struct ab_case {
	const char *what;
	cs_coll_op op;
	double bytes, alpha, beta, want_s, tol;
} ab_cases[] = {
	/* seed §2.3: 7B bf16 gradients, 8 ranks; within 5 % */
	{"7B on NVLink 450 GB/s", CS_COLL_ALL_REDUCE, 13.5e9, 2e-6, 450e9, 52e-3, 0.05},
	{"7B on one 400 Gb/s port", CS_COLL_ALL_REDUCE, 13.5e9, 5e-6, 50e9, 470e-3, 0.05},
	/* closed form: (N-1) alpha + (N-1)/N S / beta */
	{"reduce-scatter closed form", CS_COLL_REDUCE_SCATTER, 8e9, 1e-6, 100e9,
	 7 * 1e-6 + 7.0 / 8 * 8e9 / 100e9, 1e-12},
	{"all-gather closed form", CS_COLL_ALL_GATHER, 1e6, 1e-5, 1e9, 7 * 1e-5 + 7.0 / 8 * 1e-3,
	 1e-12},
};

START_TEST(test_alpha_beta_ring_matches_seed)
{
	const struct ab_case *k = &ab_cases[_i];
	double t = cs_coll_ring_alpha_beta_s(k->op, k->bytes, 8, k->alpha, k->beta);
	ck_assert_msg(fabs(t / k->want_s - 1) <= k->tol, "%s: %.6g s, want %.6g", k->what, t,
		      k->want_s);
}
END_TEST

/* ---- published validation points (docs/references.md), each within 10 % - */

START_TEST(test_h100_ring_all_reduce_370)
{
	cs_coll_choice ch;
	double bw = busbw(H100, 1, CS_COLL_ALL_REDUCE, node8, 1 << 30, CS_ALGO_RING, &ch);
	ck_assert_int_eq(ch.algo, CS_ALGO_RING);
	ck_assert_int_eq(ch.proto, CS_PROTO_SIMPLE);
	ck_assert_msg(fabs(bw / 370 - 1) <= 0.10, "busbw %.1f GB/s", bw);
}
END_TEST

START_TEST(test_h100_all_gather_370)
{
	double bw = busbw(H100, 1, CS_COLL_ALL_GATHER, node8, 1 << 30, CS_ALGO_AUTO, NULL);
	ck_assert_msg(fabs(bw / 370 - 1) <= 0.10, "busbw %.1f GB/s", bw);
}
END_TEST

START_TEST(test_h100_nvls_all_reduce_480)
{
	static const double sizes[] = {256e6, 1e9, 8e9};
	for (int i = 0; i < 3; i++) {
		cs_coll_choice ch;
		double bw = busbw(H100, 1, CS_COLL_ALL_REDUCE, node8, sizes[i], CS_ALGO_AUTO, &ch);
		ck_assert_int_eq(ch.algo, CS_ALGO_NVLS);
		ck_assert_msg(fabs(bw / 480 - 1) <= 0.10, "%.0f B: busbw %.1f GB/s", sizes[i], bw);
	}
}
END_TEST

START_TEST(test_ndr_nic_across_nodes_46_48)
{
	/* one rank per node: the ring runs at one NIC's rate */
	cs_group_shape g = {4, 4, 1, 4, 1, 1, 1, {0}};
	double bw = busbw(H100, 4, CS_COLL_ALL_REDUCE, g, 1 << 30, CS_ALGO_AUTO, NULL);
	ck_assert_msg(bw >= 46 * 0.9 && bw <= 48 * 1.1, "busbw %.1f GB/s", bw);
}
END_TEST

START_TEST(test_dgx_a100_multi_node_192)
{
	cs_group_shape g = {32, 4, 8, 4, 8, 1, 1, {0}};
	cs_coll_choice ch;
	double bw = busbw(A100, 4, CS_COLL_ALL_REDUCE, g, 1 << 30, CS_ALGO_AUTO, &ch);
	ck_assert_int_ne(ch.algo, CS_ALGO_NVLS);
	ck_assert_msg(fabs(bw / 192 - 1) <= 0.10, "busbw %.1f GB/s (%s)", bw,
		      cs_coll_algo_name(ch.algo));
}
END_TEST

/* Large all-reduces at scale: DGX H100 multi-node 380 GB/s (GTC24 S62129,
 * without SHARP) from 4 to 64 nodes at 16 GiB; 4 x 8 B200 with 8 x 400 Gb/s
 * out of each node 381.8 GB/s at 16 GiB (ml-engineering network/README). The
 * 16 MiB point of the latter (64.4 GB/s) is not met: docs/validation.md. */
START_TEST(test_multi_node_all_reduce_at_scale)
{
	static const struct {
		int gpu;
		int64_t nodes;
		double want;
	} k[] = {{H100, 4, 380}, {H100, 16, 380}, {H100, 64, 380}, {B200, 4, 381.8}};
	for (int i = 0; i < 4; i++) {
		cs_group_shape g = {8 * k[i].nodes, k[i].nodes, 8, k[i].nodes, 8, 1, 1, {0}};
		cs_coll_choice ch;
		double bw = busbw(k[i].gpu, k[i].nodes, CS_COLL_ALL_REDUCE, g, 16.0 * (1 << 30), CS_ALGO_AUTO, &ch);
		ck_assert_msg(fabs(bw / k[i].want - 1) <= 0.10, "%ld nodes: busbw %.1f GB/s (%s)",
			      (long)k[i].nodes, bw, cs_coll_algo_name(ch.algo));
		ck_assert_int_ne(ch.algo, CS_ALGO_NVLS_TREE);
	}
}
END_TEST

/* ---- small messages: tens of microseconds, tree/LL across nodes ------- */

static const struct small_case {
	const char *what;
	int64_t nodes;
	cs_group_shape g;
	cs_coll_algo algo;
	cs_coll_proto proto;
} small_cases[] = {
	{"8 GPUs", 1, {8, 1, 8, 1, 8, 1, 0, {0}}, CS_ALGO_AUTO, CS_PROTO_LL},
	{"16 nodes", 16, {128, 16, 8, 16, 8, 1, 1, {0}}, CS_ALGO_TREE, CS_PROTO_LL},
};

START_TEST(test_small_all_reduce_tens_of_us)
{
	const struct small_case *k = &small_cases[_i];
	cs_cluster_spec c = cluster(H100, k->nodes);
	cs_coll *t = cs_coll_new(&c, NULL);
	cs_coll_choice ch;
	int64_t ns = cs_coll_time(t, CS_COLL_ALL_REDUCE, &k->g, 8, &ch);
	ck_assert_msg(ns >= 10000 && ns < 100000, "%s: %ld ns", k->what, (long)ns);
	ck_assert_int_eq(ch.proto, k->proto);
	if (k->algo != CS_ALGO_AUTO)
		ck_assert_int_eq(ch.algo, k->algo);
	/* large messages move to Simple */
	cs_coll_time(t, CS_COLL_ALL_REDUCE, &k->g, 4e9, &ch);
	ck_assert_int_eq(ch.proto, CS_PROTO_SIMPLE);
	cs_coll_free(t);
}
END_TEST

/* ---- NCCL's ring formula, closed form --------------------------------- */

START_TEST(test_ring_simple_single_node_closed_form)
{
	cs_cluster_spec c = cluster(H100, 1);
	cs_coll_spec s = {.algorithm = CS_ALGO_RING, .protocol = CS_PROTO_SIMPLE,
			  .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
	cs_coll *t = cs_coll_new(&c, &s);
	double bytes = 1e8;
	/* base 8.4 us + 2(n-1) NVLink hops of 3.4 us; algBw = 18 x 20.6 x n / 2(n-1) */
	double want = (8.4 + 14 * 3.4) * 1e3 + bytes / (18 * 20.6 * 8.0 / 14.0);
	cs_coll_choice ch;
	int64_t ns = cs_coll_time(t, CS_COLL_ALL_REDUCE, &node8, bytes, &ch);
	ck_assert_int_eq(ns, llround(want));
	ck_assert_int_eq(ch.latency_ns, llround((8.4 + 14 * 3.4) * 1e3));
	ck_assert_int_eq(ch.channels, 18);
	cs_coll_free(t);
}
END_TEST

/* The links' latencies enter NCCL's per-step ones: d more than the
 * defaults (2 us NVLink, 5 us network) adds d to each step over that link,
 * down to 0 a step. */
START_TEST(test_link_latency_enters_the_steps)
{
	cs_coll_spec s = {.algorithm = CS_ALGO_RING, .protocol = CS_PROTO_SIMPLE,
			  .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
	static const struct {
		int64_t nvlink_ns;
		double step_us;
	} k[] = {{2000, 3.4}, {5000, 6.4}, {500, 1.9}, {0, 1.4}};
	for (int i = 0; i < 4; i++) {
		cs_cluster_spec c = cluster(H100, 1);
		c.scale_up.latency_ns = k[i].nvlink_ns;
		cs_coll *t = cs_coll_new(&c, &s);
		cs_coll_choice ch;
		cs_coll_time(t, CS_COLL_ALL_REDUCE, &node8, 1e8, &ch);
		ck_assert_int_eq(ch.latency_ns, llround((8.4 + 14 * k[i].step_us) * 1e3));
		cs_coll_free(t);
	}
	/* across two nodes: a ring LL all-reduce crosses the network 2(nn - 1)
	 * times, so 45 us more a message is 90 us more */
	const cs_group_shape two = {16, 2, 8, 2, 8, 1, 1, {0}};
	s.protocol = CS_PROTO_LL;
	int64_t lat[2];
	for (int i = 0; i < 2; i++) {
		cs_cluster_spec c = cluster(H100, 2);
		c.scale_out.latency_ns = i ? 50000 : 5000;
		cs_coll *t = cs_coll_new(&c, &s);
		cs_coll_choice ch;
		cs_coll_time(t, CS_COLL_ALL_REDUCE, &two, 8, &ch);
		ck_assert_int_eq(ch.proto, CS_PROTO_LL);
		lat[i] = ch.latency_ns;
		cs_coll_free(t);
	}
	ck_assert_int_eq(lat[1] - lat[0], 90000);
	/* the tuner's own choice: a small all-reduce takes longer on slower links */
	int64_t ns[2];
	for (int i = 0; i < 2; i++) {
		cs_cluster_spec c = cluster(H100, 2);
		c.scale_out.latency_ns = i ? 50000 : 5000;
		cs_coll *t = cs_coll_new(&c, NULL);
		ns[i] = cs_coll_time(t, CS_COLL_ALL_REDUCE, &two, 8, NULL);
		cs_coll_free(t);
	}
	ck_assert_msg(ns[1] > ns[0] + 40000, "%ld ns, then %ld ns", (long)ns[0], (long)ns[1]);
}
END_TEST

/* ---- the tuner -------------------------------------------------------- */

static const cs_group_shape tuner_shapes[] = {
	{8, 1, 8, 1, 8, 1, 0, {0}},
	{128, 16, 8, 16, 8, 1, 1, {0}},
	{16, 16, 1, 16, 1, 1, 1, {0}},
	{2, 1, 2, 1, 2, 1, 0, {0}},
};

START_TEST(test_tuner_picks_least_time)
{
	const cs_group_shape *g = &tuner_shapes[_i];
	cs_cluster_spec c = cluster(H100, 16);
	cs_coll *autot = cs_coll_new(&c, NULL);
	for (double bytes = 8; bytes <= 8e9; bytes *= 4) {
		int64_t best = cs_coll_time(autot, CS_COLL_ALL_REDUCE, g, bytes, NULL);
		for (int a = CS_ALGO_RING; a <= CS_ALGO_NVLS_TREE; a++)
			for (int p = CS_PROTO_LL; p <= CS_PROTO_SIMPLE; p++) {
				cs_coll_spec s = {.algorithm = (cs_coll_algo)a, .protocol = (cs_coll_proto)p,
						  .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
				cs_coll *f = cs_coll_new(&c, &s);
				int64_t t = cs_coll_time(f, CS_COLL_ALL_REDUCE, g, bytes, NULL);
				ck_assert_msg(best <= t, "%.0f B: auto %ld > %s/%s %ld", bytes,
					      (long)best, cs_coll_algo_name(a), cs_coll_proto_name(p),
					      (long)t);
				cs_coll_free(f);
			}
	}
	cs_coll_free(autot);
}
END_TEST

static const struct fallback_case {
	const char *what;
	int gpu;
	cs_coll_op op;
	cs_coll_algo force;
	cs_coll_proto proto;
	cs_coll_algo want_algo;
	cs_coll_proto want_proto;
} fallback_cases[] = {
	{"nvls on A100", A100, CS_COLL_ALL_REDUCE, CS_ALGO_NVLS, CS_PROTO_AUTO, CS_ALGO_AUTO,
	 CS_PROTO_AUTO},
	{"tree for all-gather", H100, CS_COLL_ALL_GATHER, CS_ALGO_TREE, CS_PROTO_AUTO, CS_ALGO_RING,
	 CS_PROTO_AUTO},
	{"nvls with LL", H100, CS_COLL_ALL_REDUCE, CS_ALGO_NVLS, CS_PROTO_LL, CS_ALGO_NVLS,
	 CS_PROTO_SIMPLE},
	{"tree LL128 honoured", H100, CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL128, CS_ALGO_TREE,
	 CS_PROTO_LL128},
	{"ring LL honoured", H100, CS_COLL_REDUCE_SCATTER, CS_ALGO_RING, CS_PROTO_LL, CS_ALGO_RING,
	 CS_PROTO_LL},
};

START_TEST(test_forced_choice_falls_back_as_nccl)
{
	const struct fallback_case *k = &fallback_cases[_i];
	cs_cluster_spec c = cluster(k->gpu, 1);
	cs_coll_spec s = {.algorithm = k->force, .protocol = k->proto,
			  .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
	cs_coll *t = cs_coll_new(&c, &s);
	cs_coll_choice ch;
	int64_t ns = cs_coll_time(t, k->op, &node8, 1 << 20, &ch);
	ck_assert_int_gt(ns, 0);
	if (k->want_algo == CS_ALGO_AUTO)
		ck_assert_msg(ch.algo != k->force, "%s: kept %s", k->what, cs_coll_algo_name(ch.algo));
	else
		ck_assert_msg(ch.algo == k->want_algo, "%s: %s", k->what, cs_coll_algo_name(ch.algo));
	if (k->want_proto != CS_PROTO_AUTO)
		ck_assert_msg(ch.proto == k->want_proto, "%s: %s", k->what,
			      cs_coll_proto_name(ch.proto));
	cs_coll_free(t);
}
END_TEST

START_TEST(test_single_rank_and_determinism)
{
	cs_cluster_spec c = cluster(H100, 2048);
	cs_coll *t = cs_coll_new(&c, NULL);
	cs_group_shape one = {1, 1, 1, 1, 1, 1, 0, {0}};
	ck_assert_int_eq(cs_coll_time(t, CS_COLL_ALL_REDUCE, &one, 1e9, NULL), 0);
	cs_group_shape dp = {128, 128, 1, 128, 4, 6, 3, {0}};
	int64_t first = cs_coll_time(t, CS_COLL_ALL_GATHER, &dp, 3.3e8, NULL);
	/* fill the cache with many other shapes, forcing it to grow */
	for (int64_t n = 2; n < 500; n++) {
		cs_group_shape g = {n, n, 1, n, 1, 1, 1, {0}};
		cs_coll_time(t, CS_COLL_REDUCE_SCATTER, &g, (double)n * 1000, NULL);
	}
	ck_assert_int_eq(cs_coll_time(t, CS_COLL_ALL_GATHER, &dp, 3.3e8, NULL), first);
	cs_coll *u = cs_coll_new(&c, NULL);
	ck_assert_int_eq(cs_coll_time(u, CS_COLL_ALL_GATHER, &dp, 3.3e8, NULL), first);
	cs_coll_free(u);
	cs_coll_free(t);
}
END_TEST

/* ---- fabric: oversubscription, hierarchical, send/recv ---------------- */

START_TEST(test_all_to_all_slowed_by_pod_oversubscription)
{
	cs_cluster_spec c = cluster(H100, 768);
	c.pod_gpus = 3072;
	cs_group_shape g = {768, 768, 1, 768, 12, 2, 3, {0}}; /* stride 8, two pods */
	cs_coll *full = cs_coll_new(&c, NULL);
	int64_t t1 = cs_coll_time(full, CS_COLL_ALL_TO_ALL, &g, 1e9, NULL);
	c.pod_oversubscription = 7;
	cs_coll *over = cs_coll_new(&c, NULL);
	int64_t t7 = cs_coll_time(over, CS_COLL_ALL_TO_ALL, &g, 1e9, NULL);
	/* half of each rank's bytes leave its pod: the uplink (3072 NICs / 7)
	 * carries 384 ranks x 0.5 -> ~1.14 NICs' worth each, so no slowdown;
	 * a full-pod group is slowed */
	ck_assert_int_eq(t1, t7);
	cs_group_shape big = {6144, 768, 8, 768, 192, 2, 3, {0}};
	int64_t b1 = cs_coll_time(full, CS_COLL_ALL_TO_ALL, &big, 1e9, NULL);
	int64_t b7 = cs_coll_time(over, CS_COLL_ALL_TO_ALL, &big, 1e9, NULL);
	ck_assert_msg(b7 > 3 * b1, "1:1 %ld ns, 1:7 %ld ns", (long)b1, (long)b7);
	cs_coll_free(full);
	cs_coll_free(over);
}
END_TEST

START_TEST(test_hierarchical_is_rs_ar_ag)
{
	cs_cluster_spec c = cluster(H100, 4);
	cs_coll_spec s = {.algorithm = CS_ALGO_HIER, .protocol = CS_PROTO_AUTO,
			  .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
	cs_coll *h = cs_coll_new(&c, &s);
	cs_coll *a = cs_coll_new(&c, NULL);
	cs_group_shape g = {32, 4, 8, 4, 8, 1, 1, {0}};
	cs_group_shape intra = {8, 1, 8, 1, 8, 1, 0, {0}}, inter = {4, 4, 1, 4, 1, 1, 1, {0}};
	double bytes = 1 << 28;
	cs_coll_choice ch;
	int64_t t = cs_coll_time(h, CS_COLL_ALL_REDUCE, &g, bytes, &ch);
	ck_assert_int_eq(ch.algo, CS_ALGO_HIER);
	int64_t want = cs_coll_time(a, CS_COLL_REDUCE_SCATTER, &intra, bytes, NULL) +
		       cs_coll_time(a, CS_COLL_ALL_REDUCE, &inter, bytes / 8, NULL) +
		       cs_coll_time(a, CS_COLL_ALL_GATHER, &intra, bytes, NULL);
	ck_assert_int_eq(t, want);
	cs_coll_free(h);
	cs_coll_free(a);
}
END_TEST

START_TEST(test_send_recv_at_link_rate)
{
	cs_group_shape across = {2, 2, 1, 2, 1, 1, 1, {0}};
	double bw = busbw(H100, 2, CS_COLL_SEND_RECV, across, 1 << 30, CS_ALGO_AUTO, NULL);
	ck_assert_msg(fabs(bw / 48 - 1) <= 0.02, "send/recv %.1f GB/s", bw);
}
END_TEST

/* nccl-tests' other collectives: reduce is broadcast's chain run the other
 * way; gather and scatter load the root's links as an all-to-all of the
 * same size loads every rank's. */
START_TEST(test_reduce_gather_scatter_follow_their_twins)
{
	cs_cluster_spec c = cluster(H100, 2);
	cs_coll_spec s = {.protocol = CS_PROTO_AUTO, .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
	cs_coll *t = cs_coll_new(&c, &s);
	cs_group_shape two = {16, 2, 8, 2, 8, 1, 1, {0}};
	for (double b = 1024; b <= 1e9; b *= 32) {
		cs_coll_choice ch;
		ck_assert_int_eq(cs_coll_time(t, CS_COLL_REDUCE, &two, b, &ch),
				 cs_coll_time(t, CS_COLL_BROADCAST, &two, b, NULL));
		int64_t a2a = cs_coll_time(t, CS_COLL_ALL_TO_ALL, &two, b, NULL);
		ck_assert_int_eq(cs_coll_time(t, CS_COLL_GATHER, &two, b, NULL), a2a);
		ck_assert_int_eq(cs_coll_time(t, CS_COLL_SCATTER, &two, b, &ch), a2a);
		ck_assert_str_eq(cs_coll_choice_name(CS_COLL_SCATTER, &ch), "pairwise");
	}
	ck_assert_str_eq(cs_coll_op_name(CS_COLL_GATHER), "gather");
	cs_coll_free(t);
}
END_TEST


/* ---- torus: alpha-beta closed forms ------------------------------------- */

#define BETA 50.0      /* B/ns: one ICI link, per direction */
#define HOP 1000.0     /* ns per hop */
#define DCN_BW 1.65    /* B/ns: one chip's quarter of its host's 6.6 GB/s NIC */
#define DCN_LAT 10000.0

/* chips of `dims` x pods pods, four per host */
static cs_cluster_spec torus_spec(int ndims, const int64_t *dims, int64_t pods, bool wrap)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof c);
	int64_t chips = 1;
	c.torus_dims = ndims;
	for (int d = 0; d < ndims; d++) {
		c.torus_dim[d] = dims[d];
		chips *= dims[d];
	}
	c.gpus_per_node = 4;
	c.nodes = chips * pods / 4;
	c.scale_up_domain = 4;
	c.nics_per_node = 1;
	c.scale_out = (cs_link_spec){DCN_BW * 4e9, (int64_t)DCN_LAT};
	c.topology = CS_TOPO_TORUS;
	c.torus_wrap = wrap;
	c.ici = (cs_link_spec){BETA * 1e9, (int64_t)HOP};
	c.gpu.arch = 90;
	return c;
}

/* The time of `op` over ranks first, first+stride, ... on that torus. */
static int64_t torus_time(const cs_cluster_spec *c, cs_coll_algo algo, cs_coll_op op,
			  int64_t first, int64_t stride, int64_t n, double bytes, cs_coll_choice *ch)
{
	cs_topo *t = cs_topo_new(c);
	cs_coll_spec spec = {.algorithm = algo};
	cs_coll *k = cs_coll_new(c, &spec);
	cs_group_shape g = cs_topo_group(t, first, stride, n);
	int64_t ns = cs_coll_time(k, op, &g, bytes, ch);
	cs_coll_free(k);
	cs_topo_free(t);
	return ns;
}

static const struct torus_cost_case {
	const char *what;
	int ndims;
	int64_t dims[3], pods;
	bool wrap;
	cs_coll_algo force;
	cs_coll_op op;
	int64_t n;
	cs_coll_algo want_algo;
	double lat_hops, bytes_per_beta; /* time = lat_hops HOP + S * bytes_per_beta / BETA */
	double dcn_lat, dcn_bytes;       /* + dcn_lat DCN_LAT + S * dcn_bytes / DCN_BW */
} torus_cost_cases[] = {
	/* one bidirectional ring of 8: 2(k-1) steps, 2(k-1)/k S over 2 beta */
	{"all-reduce on a ring of 8", 1, {8}, 1, true, CS_ALGO_AUTO, CS_COLL_ALL_REDUCE, 8,
	 CS_ALGO_RING, 14, 7.0 / 8, 0, 0},
	{"reduce-scatter on a ring of 8", 1, {8}, 1, true, CS_ALGO_AUTO, CS_COLL_REDUCE_SCATTER, 8,
	 CS_ALGO_RING, 7, 7.0 / 16, 0, 0},
	/* a line: one way round, its closing step back over 7 hops */
	{"all-reduce on a line of 8", 1, {8}, 1, false, CS_ALGO_AUTO, CS_COLL_ALL_REDUCE, 8,
	 CS_ALGO_RING, 14 * 7, 14.0 / 8, 0, 0},
	/* the torus algorithm on 4x4x4: 2 m (k-1) steps, S (1 - 1/N) / (m beta) */
	{"all-reduce on a 4x4x4 torus", 3, {4, 4, 4}, 1, true, CS_ALGO_AUTO, CS_COLL_ALL_REDUCE,
	 64, CS_ALGO_TORUS, 18, 63.0 / 64 / 3, 0, 0},
	{"all-gather on a 4x4x4 torus", 3, {4, 4, 4}, 1, true, CS_ALGO_AUTO, CS_COLL_ALL_GATHER,
	 64, CS_ALGO_TORUS, 9, 63.0 / 64 / 6, 0, 0},
	/* ... against one ring snaking through all 64 */
	{"one ring through a 4x4x4 torus", 3, {4, 4, 4}, 1, true, CS_ALGO_RING,
	 CS_COLL_ALL_REDUCE, 64, CS_ALGO_RING, 126, 63.0 / 64, 0, 0},
	/* 8x4 rings of unequal length, phase by phase the slower part: half the
	 * buffer round the 8s (7/8 of S/2 over 2 beta) while the other half goes
	 * round the 4s; then a quarter of S/2 round the 8s (7/8 of S/8) */
	{"all-reduce on an 8x4 torus", 2, {8, 4}, 1, true, CS_ALGO_AUTO, CS_COLL_ALL_REDUCE, 32,
	 CS_ALGO_TORUS, 2 * (7 + 7), 2 * (7.0 / 8 / 2 / 2 + 7.0 / 8 / 8 / 2), 0, 0},
	/* two pods: in-pod reduce-scatter, the shard across the DCN, all-gather */
	{"all-reduce over two 4x4x4 pods", 3, {4, 4, 4}, 2, true, CS_ALGO_AUTO,
	 CS_COLL_ALL_REDUCE, 128, CS_ALGO_TORUS, 18, 63.0 / 64 / 3, 2, 1.0 / 64},
	{"all-to-all on a ring of 8", 1, {8}, 1, true, CS_ALGO_AUTO, CS_COLL_ALL_TO_ALL, 8,
	 CS_ALGO_RING, 4, 1, 0, 0},
};

START_TEST(test_torus_costs_match_closed_forms)
{
	const struct torus_cost_case *k = &torus_cost_cases[_i];
	cs_cluster_spec c = torus_spec(k->ndims, k->dims, k->pods, k->wrap);
	double S = 1 << 30;
	cs_coll_choice ch;
	int64_t ns = torus_time(&c, k->force, k->op, 0, 1, k->n, S, &ch);
	double want = k->lat_hops * HOP + S * k->bytes_per_beta / BETA + k->dcn_lat * DCN_LAT +
		      S * k->dcn_bytes / DCN_BW;
	ck_assert_msg(fabs((double)ns - want) <= 1.0, "%s: %ld ns, want %.1f", k->what, (long)ns,
		      want);
	ck_assert_msg(ch.algo == k->want_algo, "%s: algo %d", k->what, ch.algo);
	ck_assert_int_eq(ch.proto, CS_PROTO_SIMPLE);
}
END_TEST

/* Cloud TPU v4: 1.1 PB/s of all-reduce bandwidth in a 4,096-chip pod. */
START_TEST(test_tpu_v4_pod_all_reduce_bandwidth)
{
	cs_cluster_spec c = torus_spec(3, (int64_t[]){16, 16, 16}, 1, true);
	c.ici.bandwidth = 24e12 / 512; /* the tpu-v4 preset's link */
	cs_coll_choice ch;
	double S = 4.0 * (1 << 30);
	torus_time(&c, CS_ALGO_AUTO, CS_COLL_ALL_REDUCE, 0, 1, 4096, S, &ch);
	ck_assert_int_eq(ch.algo, CS_ALGO_TORUS);
	double pod = ch.bus_bw * 4096;
	ck_assert_msg(fabs(pod / 1.1e15 - 1) < 0.1, "pod all-reduce %.3g B/s", pod);
}
END_TEST

/* ---- DeepEP's dispatch --------------------------------------------------- */

/* The nodes a token reaches: its 8 experts on the 4 nodes routing allows
 * (DeepSeek-V3), or on any of 8; the own node's share stays on NVLink. */
START_TEST(test_dispatch_remote_nodes_closed_form)
{
	ck_assert_double_eq_tol(cs_coll_dispatch_remote_nodes(8, 4, 8), 4.0 * (1 - pow(0.75, 8)) * 7 / 8, 1e-12);
	ck_assert_double_eq_tol(cs_coll_dispatch_remote_nodes(8, 0, 8), 8.0 * (1 - pow(7.0 / 8, 8)) * 7 / 8,
				1e-12);
	/* a limit past the span is no limit; one expert reaches one node */
	ck_assert_double_eq(cs_coll_dispatch_remote_nodes(8, 16, 8), cs_coll_dispatch_remote_nodes(8, 0, 8));
	ck_assert_double_eq_tol(cs_coll_dispatch_remote_nodes(1, 4, 8), 7.0 / 8, 1e-12);
	ck_assert_double_eq(cs_coll_dispatch_remote_nodes(8, 4, 1), 0.0);
}
END_TEST

/* DeepSeek-V3's dispatch on H800s: 4,096 tokens of 7,168 in fp8 to 8
 * experts over EP 64 (8 nodes of 8): the network leg carries one copy per
 * remote node reached at the NIC's 50 GB/s, the NVLink leg 7/8 of the 8
 * copies at NCCL's 8 x 20.6 GB/s; the slower, plus both latencies. One
 * node: the NVLink leg alone. */
START_TEST(test_dispatch_time_is_the_slower_leg)
{
	cs_cluster_spec c = cluster(H100, 8);
	c.scale_up.bandwidth = 200e9; /* H800: 8 NVLinks */
	double buffer = 4096.0 * 8 * 7168, token = 4096.0 * 7168;
	double ib = token * cs_coll_dispatch_remote_nodes(8, 4, 8) / 50e9;
	double nvl = buffer * 7 / 8 / (8 * 20.6e9);
	ck_assert(ib > nvl);
	ck_assert_int_eq(cs_coll_dispatch_ns(&c, NULL, buffer, 8, 4, 8, 8), 7000 + llround(ib * 1e9));
	ck_assert_int_eq(cs_coll_dispatch_ns(&c, NULL, buffer, 8, 0, 8, 1), 2000 + llround(nvl * 1e9));
	/* against NCCL's all-to-all, which sends over the NICs all 7 of the 8
	 * copies that leave the node, not 3.15: under half the time */
	cs_coll_spec s = { .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1 };
	cs_coll *t = cs_coll_new(&c, &s);
	cs_group_shape g = { .nranks = 64, .nnodes = 8, .ranks_per_node = 8, .ndomains = 8, .nleaves = 1,
			     .npods = 1, .tier = CS_TIER_NIC };
	ck_assert_int_lt(cs_coll_dispatch_ns(&c, NULL, buffer, 8, 4, 8, 8) * 2,
			 cs_coll_time(t, CS_COLL_ALL_TO_ALL, &g, buffer, NULL));
	cs_coll_free(t);
	ck_assert_int_eq(cs_coll_dispatch_ns(&c, NULL, 0, 8, 4, 8, 8), 0);
}
END_TEST

/* ---- NVL72: a 72-GPU NVLink domain over 18 trays, as NCCL's MNNVL ------ */

/* racks of GB200 NVL72 as their preset's server: trays of 4 GPUs, a NIC
 * each, one NVLink domain of 72 */
static cs_cluster_spec nvl72(int64_t racks)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof(c));
	const cs_gpu_spec *g = cs_preset_gpu("gb200-nvl72");
	ck_assert_ptr_nonnull(g);
	c.gpu = *g;
	cs_preset_server_defaults(g, &c);
	c.nodes = 18 * racks;
	c.leaf_gpus = 256;
	c.leaf_oversubscription = 1;
	c.pod_oversubscription = 1;
	return c;
}

/* The preset's rack and the topology: a route between trays of one rack is
 * NVLink up and down; between racks PCIe, NIC, NIC, PCIe; a group of two
 * racks spans 36 trays in 2 domains. */
START_TEST(test_nvl72_domain_spans_trays)
{
	cs_cluster_spec c = nvl72(2);
	ck_assert_int_eq(c.gpus_per_node, 4);
	ck_assert_int_eq(c.scale_up_domain, 72);
	ck_assert_int_eq(c.nics_per_node, 4);
	ck_assert_double_eq(c.scale_up.bandwidth, 900e9);
	ck_assert_double_eq(c.scale_out.bandwidth, 50e9);
	cs_topo *t = cs_topo_new(&c);
	ck_assert_ptr_nonnull(t);
	int32_t links[8];
	ck_assert_int_eq(cs_topo_route(t, 0, 71, links, 8), 2);
	ck_assert_int_eq(cs_topo_route(t, 0, 72, links, 8), 4);
	cs_group_shape one = cs_topo_group(t, 0, 1, 72), two = cs_topo_group(t, 0, 1, 144);
	ck_assert_int_eq(one.ndomains, 1);
	ck_assert_int_eq(one.nnodes, 18);
	ck_assert_int_eq(one.tier, CS_TIER_NVLINK);
	ck_assert_int_eq(two.ndomains, 2);
	ck_assert_int_eq(two.nnodes, 36);
	ck_assert_int_eq(two.tier, CS_TIER_NIC);
	cs_topo_free(t);
	cs_cluster_spec u;
	memset(&u, 0, sizeof(u));
	cs_preset_server_defaults(cs_preset_gpu("gb300-nvl72"), &u);
	ck_assert_double_eq(u.scale_out.bandwidth, 100e9);
	ck_assert_int_eq(u.scale_up_domain, 72);
}
END_TEST

static int64_t nvl72_time(int64_t racks, cs_coll_op op, cs_coll_algo a, double bytes, cs_coll_choice *ch)
{
	cs_cluster_spec c = nvl72(racks);
	cs_topo *t = cs_topo_new(&c);
	cs_group_shape g = cs_topo_group(t, 0, 1, 72 * racks);
	cs_topo_free(t);
	cs_coll_spec s = {.algorithm = a, .fidelity = CS_FIDELITY_ANALYTIC, .contention = 1};
	cs_coll *k = cs_coll_new(&c, &s);
	int64_t ns = cs_coll_time(k, op, &g, bytes, ch);
	cs_coll_free(k);
	return ns;
}

/* NCCL's MNNVL (init.cc: nNodes counted by the rings' first ranks over the
 * clique's fused topology, ncclTopoGetSystem in graph/topo.cc) sees one
 * rack as one node of 72 local ranks: 18 NVLink 5 links of 40.1 GB/s
 * (721.8 GB/s), and NVLS over the domain. Each case is 1 GiB, its time
 * latency + S / (721.8 x its bandwidth factor):
 *  - one rack, all-reduce: NVLS, 25 us (NVLS's NVLink latency), 0.85 x 5/6;
 *  - one rack, all-gather: a ring of 71 steps, Simple, 8.4 + 71 x 3.4 us,
 *    x 72/71;
 *  - two racks, all-reduce: two NCCL nodes, each rack's 72 NICs of 48 GB/s
 *    (3,456 GB/s) far above one GPU's NVLink, so NVLS-tree at the domain's
 *    NVLS rate, 25 us + 2 log2(2) x 14 us (its network step);
 *  - two racks, the ring forced: LL128, 14 us + 284 NVLink steps of 1.9 us
 *    + 2 network steps of 4 us, x 0.92 x 144/286 (its Simple pays 1.4 x its
 *    latency on a large multi-node all-reduce). */
static const struct nvl72_case {
	int64_t racks;
	cs_coll_op op;
	cs_coll_algo force, algo;
	cs_coll_proto proto;
	int channels;
	double lat_us, factor;
} nvl72_cases[] = {
	{1, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 18, 25, 0.85 * 5.0 / 6.0},
	{1, CS_COLL_ALL_GATHER, CS_ALGO_AUTO, CS_ALGO_RING, CS_PROTO_SIMPLE, 18, 8.4 + 71 * 3.4, 72.0 / 71.0},
	{2, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_ALGO_NVLS_TREE, CS_PROTO_SIMPLE, 32, 25 + 2 * 14,
	 0.85 * 5.0 / 6.0},
	{2, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_ALGO_RING, CS_PROTO_LL128, 32, 14 + 284 * 1.9 + 2 * 4.0,
	 0.92 * 144.0 / 286.0},
};

START_TEST(test_nvl72_closed_forms)
{
	const struct nvl72_case *k = &nvl72_cases[_i];
	double S = 1 << 30, bus = 18 * 40.1;
	cs_coll_choice ch;
	int64_t t = nvl72_time(k->racks, k->op, k->force, S, &ch);
	ck_assert_int_eq(ch.algo, k->algo);
	ck_assert_int_eq(ch.proto, k->proto);
	ck_assert_int_eq(ch.channels, k->channels);
	ck_assert_int_eq(t, llround(k->lat_us * 1e3 + S / (bus * k->factor)));
}
END_TEST

/* Across two racks the tuner's NVLS-tree beats the ring it would otherwise
 * run: the racks' NICs do not bind, the ring's 286 steps and halved rate do. */
START_TEST(test_nvl72_two_racks_pick_nvls_tree)
{
	cs_coll_choice ch;
	ck_assert_int_lt(nvl72_time(2, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, 1 << 30, &ch),
			 nvl72_time(2, CS_COLL_ALL_REDUCE, CS_ALGO_RING, 1 << 30, NULL));
	ck_assert_int_eq(ch.algo, CS_ALGO_NVLS_TREE);
}
END_TEST

static Suite *coll_suite(void)
{
	Suite *s = suite_create("coll");
	TCase *tc = tcase_create("conventions");
	tcase_add_loop_test(tc, test_bus_factor_matches_nccl_tests, 0,
			    (int)(sizeof(factor_cases) / sizeof(factor_cases[0])));
	tcase_add_loop_test(tc, test_alpha_beta_ring_matches_seed, 0,
			    (int)(sizeof(ab_cases) / sizeof(ab_cases[0])));
	tcase_add_test(tc, test_ring_simple_single_node_closed_form);
	tcase_add_test(tc, test_link_latency_enters_the_steps);
	tcase_add_test(tc, test_reduce_gather_scatter_follow_their_twins);
	suite_add_tcase(s, tc);
	tc = tcase_create("validation");
	tcase_add_test(tc, test_h100_ring_all_reduce_370);
	tcase_add_test(tc, test_h100_all_gather_370);
	tcase_add_test(tc, test_h100_nvls_all_reduce_480);
	tcase_add_test(tc, test_ndr_nic_across_nodes_46_48);
	tcase_add_test(tc, test_dgx_a100_multi_node_192);
	tcase_add_test(tc, test_multi_node_all_reduce_at_scale);
	tcase_add_loop_test(tc, test_small_all_reduce_tens_of_us, 0,
			    (int)(sizeof(small_cases) / sizeof(small_cases[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("tuner");
	tcase_add_loop_test(tc, test_tuner_picks_least_time, 0,
			    (int)(sizeof(tuner_shapes) / sizeof(tuner_shapes[0])));
	tcase_add_loop_test(tc, test_forced_choice_falls_back_as_nccl, 0,
			    (int)(sizeof(fallback_cases) / sizeof(fallback_cases[0])));
	tcase_add_test(tc, test_single_rank_and_determinism);
	suite_add_tcase(s, tc);
	tc = tcase_create("fabric");
	tcase_add_test(tc, test_all_to_all_slowed_by_pod_oversubscription);
	tcase_add_test(tc, test_hierarchical_is_rs_ar_ag);
	tcase_add_test(tc, test_send_recv_at_link_rate);
	tcase_add_test(tc, test_dispatch_remote_nodes_closed_form);
	tcase_add_test(tc, test_dispatch_time_is_the_slower_leg);
	suite_add_tcase(s, tc);
	tc = tcase_create("torus");
	tcase_add_loop_test(tc, test_torus_costs_match_closed_forms, 0,
			    (int)(sizeof torus_cost_cases / sizeof torus_cost_cases[0]));
	tcase_add_test(tc, test_tpu_v4_pod_all_reduce_bandwidth);
	suite_add_tcase(s, tc);
	tc = tcase_create("nvl72");
	tcase_add_test(tc, test_nvl72_domain_spans_trays);
	tcase_add_loop_test(tc, test_nvl72_closed_forms, 0, (int)(sizeof nvl72_cases / sizeof nvl72_cases[0]));
	tcase_add_test(tc, test_nvl72_two_racks_pick_nvls_tree);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(coll_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
