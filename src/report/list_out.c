/*
 * list_out.c - the tables of `clustersim list` (list_out.h).
 */
#include "report/list_out.h"

#include <string.h>

#include "config/config.h"
#include "model/model.h"

void cs_list_write_gpus(FILE *f)
{
	fprintf(f, "%-16s %9s %8s %8s %5s %9s %6s %9s %9s  %s\n", "gpu", "bf16 TF/s", "HBM GB", "HBM TB/s",
		"SMs", "GPUs/node", "domain", "NVLink", "NIC", "kernel profile");
	for (size_t i = 0; cs_preset_gpu_name(i); i++) {
		const cs_gpu_spec *g = cs_preset_gpu(cs_preset_gpu_name(i));
		cs_cluster_spec c;
		memset(&c, 0, sizeof c);
		cs_preset_server_defaults(g, &c);
		char nvl[32], nic[32];
		snprintf(nvl, sizeof nvl, "%.0f GB/s", c.scale_up.bandwidth / 1e9);
		snprintf(nic, sizeof nic, "%.0f Gb/s", c.scale_out.bandwidth * 8 / 1e9);
		fprintf(f, "%-16s %9.0f %8.0f %8.2f %5d %9d %6d %9s %9s  %s\n", g->name, g->peak_bf16 / 1e12,
			g->hbm_bytes / 1e9, g->hbm_bandwidth / 1e12, g->sms, c.gpus_per_node,
			c.scale_up_domain, nvl, nic, g->profile[0] ? g->profile : "none");
	}
}

void cs_list_write_models(FILE *f)
{
	fprintf(f, "%-18s %6s %6s %7s %9s %7s %7s %8s %8s\n", "model", "arch", "layers", "hidden", "heads/kv",
		"ffn", "vocab", "experts", "params");
	for (size_t i = 0; cs_preset_model_name(i); i++) {
		const cs_model_spec *m = cs_preset_model(cs_preset_model_name(i));
		cs_param_counts pc = cs_model_params(m);
		char heads[32], experts[32];
		snprintf(heads, sizeof heads, "%lld/%lld", (long long)m->heads, (long long)m->kv_heads);
		snprintf(experts, sizeof experts, m->experts ? "%lld" : "-", (long long)m->experts);
		fprintf(f, "%-18s %6s %6lld %7lld %9s %7lld %7lld %8s %7.1fB\n", m->name,
			m->arch == CS_ARCH_LLAMA ? "llama" : "gpt", (long long)m->layers,
			(long long)m->hidden, heads, (long long)m->ffn, (long long)m->vocab, experts,
			(double)pc.total / 1e9);
	}
}

void cs_list_write_scenario_header(FILE *f)
{
	fprintf(f, "%-34s %7s  %-20s %-26s %s\n", "scenario", "GPUs", "model", "tp x pp x cp x dp (ep)",
		"file");
}

void cs_list_write_scenario(FILE *f, const cs_scenario *sc, const char *path)
{
	const cs_parallel_spec *p = &sc->parallel;
	char plan[96];
	snprintf(plan, sizeof plan, "%lld x %lld x %lld x %lld (%lld)", (long long)p->tp, (long long)p->pp,
		 (long long)p->cp, (long long)p->dp, (long long)p->ep);
	fprintf(f, "%-34s %7lld  %-20s %-26s %s\n", sc->name, (long long)cs_scenario_gpus(sc),
		sc->model.name[0] ? sc->model.name : "(custom)", plan, path);
}
