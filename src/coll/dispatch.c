/*
 * dispatch.c - DeepEP's dispatch and combine of MoE tokens.
 *
 * DeepSeek-V3's kernels (arXiv 2412.19437, section 3.2.2; the DeepEP
 * library's normal kernels): a token goes over InfiniBand once to each
 * remote node that holds one of its experts, to the GPU of the same
 * in-node index, which forwards it over NVLink to the GPUs of its experts
 * there; the two legs run pipelined, so the slower sets the time. Combine
 * runs the same way back, reducing in the node before the network leg.
 * With node-limited routing a token's experts lie on at most `node_limit`
 * nodes (DeepSeek-V3: 4 of the 8 an EP group of 64 spans).
 *
 * Expected nodes a token reaches: its top_k experts fall on the M nodes
 * routing allows, each node as likely as the next, M (1 - (1 - 1/M)^k);
 * each reached node is the token's own with probability 1 / nodes, and
 * that copy stays on NVLink.
 */
#include <math.h>

#include "coll/coll.h"

#include "core/sim.h"

double cs_coll_dispatch_remote_nodes(int64_t top_k, int64_t node_limit, int64_t nodes)
{
	if (nodes <= 1 || top_k <= 0)
		return 0.0;
	double m = (double)(node_limit > 0 && node_limit < nodes ? node_limit : nodes);
	double reached = m * (1.0 - pow(1.0 - 1.0 / m, (double)top_k));
	return reached * (double)(nodes - 1) / (double)nodes;
}

int64_t cs_coll_dispatch_ns(const cs_cluster_spec *c, const cs_coll_spec *spec, double buffer, int64_t top_k,
			    int64_t node_limit, int64_t per_node, int64_t nodes)
{
	if (buffer <= 0 || per_node * nodes <= 1 || top_k <= 0)
		return 0;
	double token = buffer / (double)top_k; /* one copy of every token */
	double nvl = cs_coll_nvlink_bw(c, spec) * 1e9;
	/* every copy lands on its expert's GPU; 1 / per_node of them already there */
	double nvl_bytes = buffer * (double)(per_node - 1) / (double)per_node;
	double t = per_node > 1 ? nvl_bytes / nvl : 0.0;
	cs_time lat = c->scale_up.latency_ns;
	if (nodes > 1) {
		int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
		double nic = c->scale_out.bandwidth;
		if (c->pcie.bandwidth > 0 && c->pcie.bandwidth < nic)
			nic = c->pcie.bandwidth;
		double per_gpu = (c->nics_per_node > 0 ? c->nics_per_node : gpn) / (double)gpn;
		double rate = nic * (per_gpu < 1.0 ? per_gpu : 1.0) *
			      (spec && spec->scale_out_bw > 0 ? spec->scale_out_bw : 1.0);
		double ib = token * cs_coll_dispatch_remote_nodes(top_k, node_limit, nodes) / rate;
		t = fmax(t, ib);
		lat = cs_time_add(lat, c->scale_out.latency_ns);
	}
	return cs_time_add(lat, (int64_t)llround(t * 1e9));
}
