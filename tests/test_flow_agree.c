/*
 * test_flow_agree.c - the two fidelities on a collective alone: the flow
 * network, driven by the runner, times a lone collective as the analytic
 * model (NCCL's tuner) does, at every node count and size, ring and tree;
 * and the latency a collective is started with replaces its routes'.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "coll/flow.h"
#include "config/scenario.h"
#include "core/sim.h"
#include "hw/topo.h"
#include "program/mesh.h"
#include "program/program.h"
#include "run/runner.h"
#include "scenario_text.h"

/* ---- the net: a given latency replaces the routes' --------------------- */

/* One NVLink domain of 8 GPUs, 450 GB/s, 2 us per hop (1 us per link). */
static cs_cluster_spec one_domain(void)
{
	cs_cluster_spec c;
	memset(&c, 0, sizeof(c));
	c.nodes = 1;
	c.gpus_per_node = 8;
	c.scale_up_domain = 8;
	c.nics_per_node = 8;
	c.scale_up = (cs_link_spec){450e9, 2000};
	c.scale_out = (cs_link_spec){50e9, 5000};
	c.pcie = (cs_link_spec){63e9, 1000};
	c.switch_latency_ns = 500;
	return c;
}

/* Start one collective at 0 and return when it completes. */
static cs_time run_one(cs_net *n, cs_coll_op op, double bytes, cs_time latency)
{
	int64_t m[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	cs_time t0 = cs_net_now(n);
	ck_assert_int_ge(cs_net_start(n, t0, m, 8, op, bytes, CS_ALGO_RING, latency, 7), 0);
	for (;;) {
		cs_time t = cs_net_next_completion(n);
		ck_assert_int_ne(t, CS_TIME_MAX);
		uint64_t tag = 0;
		int k = cs_net_advance(n, t, &tag, 1);
		ck_assert_int_ge(k, 0);
		if (k == 1) {
			ck_assert_uint_eq(tag, 7);
			return t - t0;
		}
	}
}

/* A ring all-reduce of 1 GB over the 8 GPUs: with its routes' latency the
 * alpha-beta ring, 14 steps x 2 us + 2 (7/8) 1 GB / 450 GB/s; started with
 * a latency of 123,456 ns it waits that instead of the 28 us, and drains
 * as before; a latency of 0 leaves the bandwidth term alone. A negative
 * latency other than CS_NET_ROUTE_LATENCY is refused. */
START_TEST(test_given_latency_replaces_the_routes)
{
	cs_cluster_spec c = one_domain();
	cs_topo *t = cs_topo_new(&c);
	cs_net *n = cs_net_new(t, &c);
	ck_assert_ptr_nonnull(n);
	double beta_ns = 2.0 * 7.0 / 8.0 * 1e9 / 450e9 * 1e9;
	cs_time own = run_one(n, CS_COLL_ALL_REDUCE, 1e9, CS_NET_ROUTE_LATENCY);
	ck_assert_double_eq_tol((double)own, 14 * 2000 + beta_ns, 1.0);
	cs_time given = run_one(n, CS_COLL_ALL_REDUCE, 1e9, 123456);
	ck_assert_double_eq_tol((double)given, 123456 + beta_ns, 1.0);
	cs_time none = run_one(n, CS_COLL_ALL_REDUCE, 1e9, 0);
	ck_assert_double_eq_tol((double)none, beta_ns, 1.0);
	int64_t m[2] = {0, 1};
	ck_assert_int_eq(cs_net_start(n, cs_net_now(n), m, 2, CS_COLL_SEND_RECV, 1e6, CS_ALGO_RING, -2, 0),
			 -1);
	ck_assert_int_eq(cs_net_active_colls(n), 0);
	cs_net_free(n);
	cs_topo_free(t);
}
END_TEST

/* ---- the runner: a lone collective in both fidelities ------------------ */

/* Within 2 ns: the flow net drains the bytes scaled from a 1 GiB
 * measurement on the idle net, each rounded to the nanosecond (every case
 * here is within 1 ns). */
#define AGREE_NS 2

static const struct agree_case {
	const char *algo;
	cs_coll_op op;
} agree_cases[] = {
	{ "ring", CS_COLL_ALL_REDUCE },
	{ "ring", CS_COLL_REDUCE_SCATTER },
	{ "ring", CS_COLL_ALL_GATHER },
	{ "tree", CS_COLL_ALL_REDUCE },
};
#define NCASES ((int)(sizeof agree_cases / sizeof agree_cases[0]))

/* 4 KiB (latency-bound at every node count), 4 MiB, 1 GiB (bandwidth-bound). */
static const double agree_sizes[] = { 4096.0, 4194304.0, 1073741824.0 };
#define NSIZES ((int)(sizeof agree_sizes / sizeof agree_sizes[0]))

/* 1, 2, 4, ..., 1024 nodes of 8 H100s */
#define NNODES 11

/* The lone collective's time on a runner over every rank of the scenario,
 * each rank's program that collective alone on its data-parallel stream. */
static cs_time lone(const cs_scenario *sc, const cs_mesh *mesh, const cs_topo *topo, cs_coll_op op,
		    double bytes, cs_coll_choice *choice)
{
	cs_coll *coll = cs_coll_new(&sc->cluster, &sc->coll);
	ck_assert_ptr_nonnull(coll);
	cs_program prog;
	cs_program_init(&prog);
	cs_op o = { .kind = CS_OP_COLL, .group = CS_GROUP_DP, .coll = (uint8_t)op, .comm = CS_COMM_DP,
		    .bytes = bytes, .phase = CS_PHASE_COMM, .layer = -1, .micro = -1 };
	ck_assert_int_eq(cs_program_add(&prog, CS_STREAM_DP, &o, NULL, 0), 1);
	cs_run_env env = { .sc = sc, .mesh = mesh, .progs = &prog, .topo = topo, .coll = coll,
			   .first_rank = 0, .nranks = mesh->world };
	cs_runner *r = cs_runner_new(&env);
	ck_assert_ptr_nonnull(r);
	cs_diag diag;
	ck_assert_int_eq(cs_runner_run(r, &diag), CS_OK);
	cs_time t = cs_runner_makespan(r);
	*choice = *cs_runner_last_choice(r, CS_COMM_DP);
	cs_runner_free(r);
	cs_program_free(&prog);
	cs_coll_free(coll);
	return t;
}

/* Every case at 2^_i nodes: the flow fidelity's time within AGREE_NS of
 * the analytic one, which is the tuner's for the group, with the same
 * algorithm and protocol. Before the flow net took the tuner's latency
 * (it charged each of the ring's 2(n-1) steps its slowest route), a 4 KiB
 * ring all-reduce took 7.8x the analytic time from 64 nodes on and 1 GiB
 * 2.8x at 128 nodes. */
START_TEST(test_lone_collective_takes_the_analytic_time)
{
	int nodes = 1 << _i;
	for (int a = 0; a < 2; a++) {
		const char *algo = a ? "tree" : "ring";
		char buf[512];
		snprintf(buf, sizeof buf,
			 "cluster: {gpu: h100-sxm-80g, nodes: %d, gpus_per_node: 8}\n"
			 "model: {preset: llama2-7b}\n"
			 "training: {seq_len: 1024, micro_batch: 1, global_batch: %d}\n"
			 "collectives: {algorithm: %s}\n",
			 nodes, 8 * nodes, algo);
		cs_scenario *sc = cs_test_load(buf, NULL, 0);
		cs_mesh mesh;
		cs_mesh_init(&mesh, &sc->parallel);
		ck_assert_int_eq(mesh.world, 8 * nodes);
		cs_topo *topo = cs_topo_new(&sc->cluster);
		ck_assert_ptr_nonnull(topo);
		cs_group_shape shape = cs_topo_group(topo, 0, 1, mesh.world);
		cs_coll *tuner = cs_coll_new(&sc->cluster, &sc->coll);
		for (int k = 0; k < NCASES; k++) {
			if (strcmp(agree_cases[k].algo, algo) != 0)
				continue;
			for (int z = 0; z < NSIZES; z++) {
				cs_coll_op op = agree_cases[k].op;
				double bytes = agree_sizes[z];
				cs_coll_choice want, an, fl;
				cs_time d = cs_coll_time(tuner, op, &shape, bytes, &want);
				sc->coll.fidelity = CS_FIDELITY_ANALYTIC;
				cs_time ta = lone(sc, &mesh, topo, op, bytes, &an);
				sc->coll.fidelity = CS_FIDELITY_FLOW;
				cs_time tf = lone(sc, &mesh, topo, op, bytes, &fl);
				ck_assert_int_eq(ta, d);
				ck_assert_int_eq(an.algo, want.algo);
				ck_assert_int_eq(fl.algo, want.algo);
				ck_assert_int_eq(fl.proto, want.proto);
				ck_assert_msg(llabs(tf - ta) <= AGREE_NS,
					      "%d nodes, %s op %d, %.0f B: flow %lld ns, analytic %lld ns",
					      nodes, algo, (int)op, bytes, (long long)tf, (long long)ta);
			}
		}
		cs_coll_free(tuner);
		cs_topo_free(topo);
		cs_scenario_free(sc);
	}
}
END_TEST

static Suite *flow_agree_suite(void)
{
	Suite *s = suite_create("flow_agree");
	TCase *tc = tcase_create("net");
	tcase_add_test(tc, test_given_latency_replaces_the_routes);
	suite_add_tcase(s, tc);
	tc = tcase_create("lone");
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, test_lone_collective_takes_the_analytic_time, 0, NNODES);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(flow_agree_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
