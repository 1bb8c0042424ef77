/*
 * test_topo.c - topology: group shapes, routes, link ids.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "hw/topo.h"

/* 16,384 H100s: 8 per node and per NVLink domain, 32-node SUs, 3,072-GPU pods. */
static cs_cluster_spec llama_cluster(void)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof(c));
	c.nodes = 2048;
	c.gpus_per_node = 8;
	c.scale_up_domain = 8;
	c.scale_up = (cs_link_spec){450e9, 2000};
	c.scale_out = (cs_link_spec){50e9, 5000};
	c.nics_per_node = 8;
	c.pcie = (cs_link_spec){63e9, 1000};
	c.leaf_gpus = 256;
	c.leaf_oversubscription = 1;
	c.pod_gpus = 3072;
	c.pod_oversubscription = 7;
	c.switch_latency_ns = 600;
	return c;
}

static const struct shape_case {
	const char *what;
	int64_t first, stride, n;
	cs_group_shape want;
} shape_cases[] = {
	{"tp group in a node", 8, 1, 8, {8, 1, 8, 1, 8, 1, 0, {0}}},
	{"two gpus in a node", 2, 3, 2, {2, 1, 2, 1, 2, 1, 0, {0}}},
	{"dp across nodes on one rail", 0, 8, 32, {32, 32, 1, 32, 1, 1, 1, {0}}},
	{"dp on one rail spanning SUs", 0, 8, 128, {128, 128, 1, 128, 4, 1, 2, {0}}},
	{"whole cluster", 0, 1, 16384, {16384, 2048, 8, 2048, 512, 6, 3, {0}}},
	{"stride 4 halves nodes", 0, 4, 8, {8, 4, 2, 4, 2, 1, 1, {0}}},
	{"dp across pods", 0, 1024, 16, {16, 16, 1, 16, 16, 6, 3, {0}}},
	{"single rank", 77, 5, 1, {1, 1, 1, 1, 1, 1, 0, {0}}},
};

START_TEST(test_group_shape_counts_distinct_units)
{
	const struct shape_case *k = &shape_cases[_i];
	cs_cluster_spec c = llama_cluster();
	cs_topo *t = cs_topo_new(&c);
	ck_assert_ptr_nonnull(t);
	cs_group_shape s = cs_topo_group(t, k->first, k->stride, k->n);
	ck_assert_msg(s.nranks == k->want.nranks && s.nnodes == k->want.nnodes &&
		      s.ranks_per_node == k->want.ranks_per_node &&
		      s.ndomains == k->want.ndomains && s.nleaves == k->want.nleaves &&
		      s.npods == k->want.npods && s.tier == k->want.tier,
		      "%s: got n=%ld nodes=%ld rpn=%ld dom=%ld leaves=%ld pods=%ld tier=%d",
		      k->what, (long)s.nranks, (long)s.nnodes, (long)s.ranks_per_node,
		      (long)s.ndomains, (long)s.nleaves, (long)s.npods, s.tier);
	cs_topo_free(t);
}
END_TEST

START_TEST(test_nvl72_domain_spans_nodes)
{
	cs_cluster_spec c = llama_cluster();
	c.nodes = 36;
	c.gpus_per_node = 4;
	c.scale_up_domain = 72;
	c.nics_per_node = 4;
	cs_topo *t = cs_topo_new(&c);
	cs_group_shape s = cs_topo_group(t, 0, 1, 72);
	ck_assert_int_eq(s.nnodes, 18);
	ck_assert_int_eq(s.ndomains, 1);
	ck_assert_int_eq(s.tier, 0);
	int32_t l[8];
	ck_assert_int_eq(cs_topo_route(t, 0, 71, l, 8), 2);
	ck_assert_int_eq(cs_topo_link_kind(t, l[0]), CS_LINK_NVL_UP);
	cs_topo_free(t);
}
END_TEST

/* A GPU's own ports are the ones its routes leave and enter by, also when
 * its NVLink domain spans two 8-GPU nodes (a NIC fault under the flow
 * fidelity is applied to these). */
START_TEST(test_gpu_links_are_the_routes_ends)
{
	cs_cluster_spec c = llama_cluster();
	c.scale_up_domain = 16;
	cs_topo *t = cs_topo_new(&c);
	int32_t l[8];
	for (int64_t g = 0; g < 16; g++) {
		int64_t far = g + 16, near = g ^ 1;
		int n = cs_topo_route(t, g, far, l, 8);
		ck_assert_int_ge(n, 4);
		ck_assert_int_eq(l[0], cs_topo_gpu_link(t, g, CS_LINK_PCIE_UP));
		ck_assert_int_eq(l[1], cs_topo_gpu_link(t, g, CS_LINK_NIC_UP));
		n = cs_topo_route(t, far, g, l, 8);
		ck_assert_int_eq(l[n - 2], cs_topo_gpu_link(t, g, CS_LINK_NIC_DOWN));
		ck_assert_int_eq(l[n - 1], cs_topo_gpu_link(t, g, CS_LINK_PCIE_DOWN));
		ck_assert_int_eq(cs_topo_route(t, g, near, l, 8), 2);
		ck_assert_int_eq(l[0], cs_topo_gpu_link(t, g, CS_LINK_NVL_UP));
		ck_assert_int_eq(l[1], cs_topo_gpu_link(t, near, CS_LINK_NVL_DOWN));
	}
	ck_assert_int_eq(cs_topo_gpu_link(t, 0, CS_LINK_LEAF_UP), -1);
	ck_assert_int_eq(cs_topo_gpu_link(t, -1, CS_LINK_NIC_UP), -1);
	cs_topo_free(t);
}
END_TEST

static const struct route_case {
	const char *what;
	int64_t src, dst;
	int len;
	cs_link_kind kinds[8];
} route_cases[] = {
	{"same gpu", 5, 5, 0, {0}},
	{"same node", 0, 7, 2, {CS_LINK_NVL_UP, CS_LINK_NVL_DOWN}},
	{"same rail same su", 0, 8, 4,
	 {CS_LINK_PCIE_UP, CS_LINK_NIC_UP, CS_LINK_NIC_DOWN, CS_LINK_PCIE_DOWN}},
	{"other rail same pod", 0, 9, 6,
	 {CS_LINK_PCIE_UP, CS_LINK_NIC_UP, CS_LINK_LEAF_UP, CS_LINK_LEAF_DOWN, CS_LINK_NIC_DOWN,
	  CS_LINK_PCIE_DOWN}},
	{"other pod", 0, 3072, 8,
	 {CS_LINK_PCIE_UP, CS_LINK_NIC_UP, CS_LINK_LEAF_UP, CS_LINK_POD_UP, CS_LINK_POD_DOWN,
	  CS_LINK_LEAF_DOWN, CS_LINK_NIC_DOWN, CS_LINK_PCIE_DOWN}},
};

START_TEST(test_route_crosses_expected_tiers)
{
	const struct route_case *k = &route_cases[_i];
	cs_cluster_spec c = llama_cluster();
	cs_topo *t = cs_topo_new(&c);
	int32_t l[8];
	int n = cs_topo_route(t, k->src, k->dst, l, 8);
	ck_assert_msg(n == k->len, "%s: %d links", k->what, n);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(cs_topo_link_kind(t, l[i]) == k->kinds[i], "%s: hop %d", k->what, i);
		ck_assert(l[i] >= 0 && l[i] < cs_topo_nlinks(t));
	}
	cs_topo_free(t);
}
END_TEST

START_TEST(test_link_bandwidth_and_names)
{
	cs_cluster_spec c = llama_cluster();
	cs_topo *t = cs_topo_new(&c);
	int32_t l[8];
	ck_assert_int_eq(cs_topo_route(t, 0, 3072, l, 8), 8);
	ck_assert_double_eq_tol(cs_topo_link_bandwidth(t, l[0]), 63e9, 1);
	ck_assert_double_eq_tol(cs_topo_link_bandwidth(t, l[1]), 50e9, 1);
	/* a leaf serves 32 NICs at 1:1 */
	ck_assert_double_eq_tol(cs_topo_link_bandwidth(t, l[2]), 32 * 50e9, 1);
	/* a pod's 3,072 NICs leave at 1:7 */
	ck_assert_double_eq_tol(cs_topo_link_bandwidth(t, l[3]), 3072 * 50e9 / 7, 1);
	ck_assert_int_eq(cs_topo_link_latency(t, l[2]), 600);
	char buf[64];
	ck_assert_str_eq(cs_topo_link_name(t, l[1], buf, sizeof(buf)), "nic-up[0]");
	ck_assert_str_eq(cs_topo_link_name(t, l[4], buf, sizeof(buf)), "pod-down[1]");
	ck_assert_double_eq(cs_topo_link_bandwidth(t, cs_topo_nlinks(t)), 0);
	ck_assert_int_eq(cs_topo_route(t, -1, 3, l, 8), -1);
	/* O(1) memory: links of 16,384 GPUs need no table */
	ck_assert_int_eq(cs_topo_nlinks(t), 2 * 16384 + 4 * 16384 + 2 * 512 + 2 * 6);
	cs_topo_free(t);
}
END_TEST


/* ---- torus ------------------------------------------------------------ */

/* Two 4x4x4 pods of TPU-like chips, four per host, one DCN NIC per host. */
static cs_cluster_spec torus_cluster(bool wrap)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof(c));
	c.nodes = 32;
	c.gpus_per_node = 4;
	c.scale_up_domain = 4;
	c.nics_per_node = 1;
	c.scale_out = (cs_link_spec){6.6e9, 10000};
	c.topology = CS_TOPO_TORUS;
	c.torus_dims = 3;
	c.torus_dim[0] = c.torus_dim[1] = c.torus_dim[2] = 4;
	c.torus_wrap = wrap;
	c.ici = (cs_link_spec){46.875e9, 1000};
	return c;
}

static const struct torus_shape_case {
	const char *what;
	int64_t base, n[3], stride[3];
	int dims, ext[3], hop[3], ring[3];
	int64_t pods;
	cs_tier tier;
} torus_shape_cases[] = {
	{"a ring along x", 0, {4, 1, 1}, {1, 0, 0}, 3, {4, 1, 1}, {1, 0, 0}, {1, 0, 0}, 1, CS_TIER_NVLINK},
	{"a y-z plane", 0, {16, 1, 1}, {4, 0, 0}, 3, {1, 4, 4}, {0, 1, 1}, {0, 1, 1}, 1, CS_TIER_NVLINK},
	{"every other chip closes the ring", 1, {2, 1, 1}, {2, 0, 0}, 3, {2, 1, 1}, {2, 0, 0}, {1, 0, 0}, 1, CS_TIER_NVLINK},
	{"two neighbours are a line", 0, {2, 1, 1}, {1, 0, 0}, 3, {2, 1, 1}, {1, 0, 0}, {0, 0, 0}, 1, CS_TIER_NVLINK},
	{"the plane in both pods", 0, {16, 2, 1}, {4, 64, 0}, 3, {1, 4, 4}, {0, 1, 1}, {0, 1, 1}, 2, CS_TIER_NIC},
	{"a whole pod from nested axes", 0, {4, 4, 4}, {1, 4, 16}, 3, {4, 4, 4}, {1, 1, 1}, {1, 1, 1}, 1, CS_TIER_NVLINK},
	{"no grid", 0, {3, 1, 1}, {5, 0, 0}, -1, {0}, {0}, {0}, 1, CS_TIER_NVLINK},
};

START_TEST(test_torus_group_is_a_grid)
{
	const struct torus_shape_case *k = &torus_shape_cases[_i];
	cs_cluster_spec c = torus_cluster(true);
	cs_topo *t = cs_topo_new(&c);
	ck_assert(cs_topo_is_torus(t));
	cs_group_shape s = cs_topo_torus_group(t, k->base, k->n, k->stride);
	ck_assert_int_eq(s.nranks, k->n[0] * k->n[1] * k->n[2]);
	ck_assert_msg(s.torus.dims == k->dims, "%s: dims %d", k->what, s.torus.dims);
	ck_assert_int_eq(s.npods, k->pods);
	ck_assert_int_eq(s.tier, k->tier);
	for (int d = 0; d < 3 && k->dims > 0; d++)
		ck_assert_msg(s.torus.ext[d] == k->ext[d] && s.torus.hop[d] == k->hop[d] &&
			      s.torus.ring[d] == k->ring[d], "%s: dim %d: ext %d hop %d ring %d",
			      k->what, d, s.torus.ext[d], s.torus.hop[d], s.torus.ring[d]);
	/* a single progression gives the same shape through cs_topo_group */
	if (k->n[1] == 1 && k->n[2] == 1) {
		cs_group_shape one = cs_topo_group(t, k->base, k->stride[0], k->n[0]);
		ck_assert(cs__torus_same(&one.torus, &s.torus));
	}
	cs_topo_free(t);
}
END_TEST

static const struct torus_route_case {
	const char *what;
	bool wrap;
	int64_t src, dst;
	const char *names[8];
} torus_route_cases[] = {
	{"one hop up x", true, 0, 1, {"ici[0].x+"}},
	{"round the back", true, 0, 3, {"ici[0].x-"}},
	{"a tie goes up", true, 0, 2, {"ici[0].x+", "ici[1].x+"}},
	{"x, then y, then z", true, 0, 21, {"ici[0].x+", "ici[1].y+", "ici[5].z+"}},
	{"a mesh has no way round", false, 0, 3, {"ici[0].x+", "ici[1].x+", "ici[2].x+"}},
	{"down z on a mesh", false, 48, 16, {"ici[48].z-", "ici[32].z-"}},
	{"to the other pod over the DCN", true, 5, 69, {"nic-up[1]", "nic-down[17]"}},
};

START_TEST(test_torus_routes_go_dimension_by_dimension)
{
	const struct torus_route_case *k = &torus_route_cases[_i];
	cs_cluster_spec c = torus_cluster(k->wrap);
	cs_topo *t = cs_topo_new(&c);
	int32_t l[CS_MAX_ROUTE_LINKS];
	int n = cs_topo_route(t, k->src, k->dst, l, CS_MAX_ROUTE_LINKS);
	int want = 0;
	while (want < 8 && k->names[want])
		want++;
	ck_assert_msg(n == want, "%s: %d links", k->what, n);
	char buf[64];
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(cs_topo_link_name(t, l[i], buf, sizeof buf), k->names[i]);
	ck_assert_int_le(n, cs_topo_max_route(t));
	cs_topo_free(t);
}
END_TEST

START_TEST(test_torus_links_and_bandwidth)
{
	cs_cluster_spec c = torus_cluster(true);
	cs_topo *t = cs_topo_new(&c);
	/* six links per chip and one NIC each way per host; no switch, no NVLink */
	ck_assert_int_eq(cs_topo_nlinks(t), 128 * 6 + 2 * 32);
	ck_assert_int_eq(cs_topo_gpu_link(t, 0, CS_LINK_NVL_UP), -1);
	ck_assert_int_eq(cs_topo_gpu_link(t, 0, CS_LINK_PCIE_UP), -1);
	int32_t l[4];
	ck_assert_int_eq(cs_topo_route(t, 0, 1, l, 4), 1);
	ck_assert_int_eq(cs_topo_link_kind(t, l[0]), CS_LINK_ICI);
	ck_assert_double_eq(cs_topo_link_bandwidth(t, l[0]), 46.875e9);
	ck_assert_int_eq(cs_topo_link_latency(t, l[0]), 1000);
	ck_assert_int_eq(cs_topo_route(t, 0, 64, l, 4), 2);
	ck_assert_int_eq(l[0], cs_topo_gpu_link(t, 3, CS_LINK_NIC_UP));
	ck_assert_double_eq(cs_topo_link_bandwidth(t, l[0]), 6.6e9);
	/* 2+2+2 hops across a 4x4x4 torus and one DCN hop */
	ck_assert_int_eq(cs_topo_max_route(t), 8);
	cs_topo_free(t);
}
END_TEST

static Suite *topo_suite(void)
{
	Suite *s = suite_create("topo");
	TCase *tc = tcase_create("group_shape");
	tcase_add_loop_test(tc, test_group_shape_counts_distinct_units, 0,
			    (int)(sizeof(shape_cases) / sizeof(shape_cases[0])));
	tcase_add_test(tc, test_nvl72_domain_spans_nodes);
	tcase_add_test(tc, test_gpu_links_are_the_routes_ends);
	suite_add_tcase(s, tc);
	tc = tcase_create("route");
	tcase_add_loop_test(tc, test_route_crosses_expected_tiers, 0,
			    (int)(sizeof(route_cases) / sizeof(route_cases[0])));
	tcase_add_test(tc, test_link_bandwidth_and_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("torus");
	tcase_add_loop_test(tc, test_torus_group_is_a_grid, 0,
			    (int)(sizeof(torus_shape_cases) / sizeof(torus_shape_cases[0])));
	tcase_add_loop_test(tc, test_torus_routes_go_dimension_by_dimension, 0,
			    (int)(sizeof(torus_route_cases) / sizeof(torus_route_cases[0])));
	tcase_add_test(tc, test_torus_links_and_bandwidth);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(topo_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
