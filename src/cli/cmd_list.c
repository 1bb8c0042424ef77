/*
 * cmd_list.c - `clustersim list gpus|models|scenarios`: the presets a
 * scenario can name, with their key figures, and the scenarios shipped
 * (the working directory's scenarios/, else the installed ones).
 */
#include "cli/commands.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "clustersim/clustersim.h"
#include "config/config.h"
#include "config/scenario.h"
#include "model/model.h"

#ifndef CS_SCENARIO_DIR
#define CS_SCENARIO_DIR "/usr/local/share/clustersim/scenarios"
#endif

static const char list_help[] =
"usage: clustersim list gpus|models|scenarios [DIR]\n"
"\n"
"  gpus       the GPU presets (cluster.gpu): peak, memory, SMs, and the\n"
"             standard server each implies (GPUs per node, NVLink, NICs)\n"
"  models     the model presets (model): shape and parameters\n"
"  scenarios  the scenarios in DIR (default: ./scenarios when it exists,\n"
"             else the installed ones): GPUs, model and parallel plan\n"
"\n"
"examples:\n"
"  clustersim list gpus\n"
"  clustersim list models\n"
"  clustersim list scenarios\n"
"\n"
"exit status: 0 success, 2 bad input\n";

static void list_gpus(void)
{
	printf("%-16s %9s %8s %8s %5s %9s %9s %9s  %s\n", "gpu", "bf16 TF/s", "HBM GB", "HBM TB/s",
	       "SMs", "GPUs/node", "NVLink", "NIC", "kernel profile");
	for (size_t i = 0; cs_preset_gpu_name(i); i++) {
		const cs_gpu_spec *g = cs_preset_gpu(cs_preset_gpu_name(i));
		cs_cluster_spec c;
		memset(&c, 0, sizeof c);
		cs_preset_server_defaults(g, &c);
		char nvl[32], nic[32];
		snprintf(nvl, sizeof nvl, "%.0f GB/s", c.scale_up.bandwidth / 1e9);
		snprintf(nic, sizeof nic, "%.0f Gb/s", c.scale_out.bandwidth * 8 / 1e9);
		printf("%-16s %9.0f %8.0f %8.2f %5d %9d %9s %9s  %s\n", g->name, g->peak_bf16 / 1e12,
		       g->hbm_bytes / 1e9, g->hbm_bandwidth / 1e12, g->sms, c.gpus_per_node, nvl, nic,
		       g->profile[0] ? g->profile : "none");
	}
}

static void list_models(void)
{
	printf("%-18s %6s %6s %7s %9s %7s %7s %8s %8s\n", "model", "arch", "layers", "hidden",
	       "heads/kv", "ffn", "vocab", "experts", "params");
	for (size_t i = 0; cs_preset_model_name(i); i++) {
		const cs_model_spec *m = cs_preset_model(cs_preset_model_name(i));
		cs_param_counts pc = cs_model_params(m);
		char heads[32], experts[32];
		snprintf(heads, sizeof heads, "%lld/%lld", (long long)m->heads, (long long)m->kv_heads);
		snprintf(experts, sizeof experts, m->experts ? "%lld" : "-", (long long)m->experts);
		printf("%-18s %6s %6lld %7lld %9s %7lld %7lld %8s %7.1fB\n", m->name,
		       m->arch == CS_ARCH_LLAMA ? "llama" : "gpt", (long long)m->layers,
		       (long long)m->hidden, heads, (long long)m->ffn, (long long)m->vocab, experts,
		       (double)pc.total / 1e9);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_scenarios(const char *dir_arg)
{
	const char *dir = dir_arg;
	DIR *d = NULL;
	if (!dir) {
		d = opendir("scenarios");
		dir = d ? "scenarios" : CS_SCENARIO_DIR;
	}
	if (!d)
		d = opendir(dir);
	if (!d) {
		fprintf(stderr, "clustersim list: cannot open the scenario directory '%s'\n", dir);
		return 2;
	}
	char *names[512];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 512) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0 && (names[n] = strdup(e->d_name)))
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	printf("%-34s %7s  %-20s %s\n", "scenario", "GPUs", "model", "tp x pp x cp x dp (ep)");
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		cs_scenario *sc = NULL;
		cs_diag diag = { { 0 } };
		if (cs_scenario_load(path, NULL, 0, &sc, &diag) != CS_OK) {
			fprintf(stderr, "%s\n", CS_CLEAN(diag));
			rc = 2;
		} else {
			const cs_parallel_spec *p = &sc->parallel;
			char plan[96];
			snprintf(plan, sizeof plan, "%lld x %lld x %lld x %lld (%lld)", (long long)p->tp,
				 (long long)p->pp, (long long)p->cp, (long long)p->dp, (long long)p->ep);
			printf("%-34s %7lld  %-20s %s\n", sc->name, (long long)cs_scenario_gpus(sc),
			       sc->model.name[0] ? sc->model.name : "(custom)", plan);
			cs_scenario_free(sc);
		}
		free(names[i]);
	}
	return rc;
}

int cs_cmd_list(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(list_help, stdout);
		return 0;
	}
	const char *what = argc >= 2 ? argv[1] : NULL;
	if (!what) {
		fprintf(stderr, "clustersim list: say what to list: gpus, models or scenarios\n"
			"(see 'clustersim list --help')\n");
		return 2;
	}
	if (strcmp(what, "scenarios") == 0 && argc <= 3)
		return list_scenarios(argc == 3 ? argv[2] : NULL);
	if (argc > 2) {
		fprintf(stderr, "clustersim list: unexpected argument '%s'\n", argv[2]);
		return 2;
	}
	if (strcmp(what, "gpus") == 0) {
		list_gpus();
		return 0;
	}
	if (strcmp(what, "models") == 0) {
		list_models();
		return 0;
	}
	static const char *const kinds[] = { "gpus", "models", "scenarios" };
	const char *near = cs_suggest(what, kinds, 3);
	fprintf(stderr, "clustersim list: unknown list '%s'%s%s%s (gpus, models or scenarios)\n",
		what, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	return 2;
}
