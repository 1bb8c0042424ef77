/*
 * bench_scale.c - time one simulated training step of a scenario (by
 * default the Llama 3 405B replay on 16,384 GPUs) and report wall time,
 * peak resident memory, simulated events and events per second.
 *
 *   ninja -C build-release tools/bench_scale
 *   ./build-release/tools/bench_scale [SCENARIO.yaml] [--set KEY=VALUE]... [--parts N]
 *                                     [--critical-path | --no-critical-path]
 *
 * Threads are a scenario key (--set simulate.threads=N); --parts caps the
 * parts a run splits into (1: whole), which changes the cost and not the
 * result. The critical path is traced as `clustersim run` traces it by
 * default (perturbed runs and runs of at most 4,096 GPUs) unless asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clustersim/clustersim.h"
#include "config/scenario.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *path = "scenarios/llama3-405b-16k.yaml";
	const char *sets[64];
	size_t nsets = 0;
	long parts = 0;
	cs_run_opts opts = { 0 };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && nsets < 64)
			sets[nsets++] = argv[++i];
		else if (strcmp(argv[i], "--parts") == 0 && i + 1 < argc)
			parts = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--critical-path") == 0)
			opts.critical_path = 1;
		else if (strcmp(argv[i], "--no-critical-path") == 0)
			opts.critical_path = -1;
		else
			path = argv[i];
	}
	cs_diag diag = { { 0 } };
	cs_scenario *sc = NULL;
	double t0 = now();
	if (cs_scenario_load(path, sets, nsets, &sc, &diag) != CS_OK) {
		fprintf(stderr, "%s\n", diag.msg);
		return 2;
	}
	sc->sim.parts = parts;
	double t1 = now();
	cs_result *res = NULL;
	if (cs_simulate(sc, &opts, &res, &diag) != CS_OK) {
		fprintf(stderr, "%s\n", diag.msg);
		cs_scenario_free(sc);
		return 1;
	}
	double t2 = now();
	const cs_metrics *m = cs_result_metrics(res);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("scenario        %s\n", path);
	printf("gpus            %lld\n", (long long)m->gpus);
	if (sc->sim.threads > 0)
		printf("threads         %lld\n", (long long)sc->sim.threads);
	else
		printf("threads         auto\n");
	if (m->route.folded)
		printf("route           folded: %lld of %lld ranks simulated\n",
		       (long long)m->route.simulated_ranks, (long long)m->gpus);
	else
		printf("route           every rank: %s\n", m->route.why);
	if (parts > 0)
		printf("parts at most   %ld\n", parts);
	if (opts.critical_path)
		printf("critical path   %s\n", opts.critical_path > 0 ? "traced" : "not traced");
	printf("load            %.3f s\n", t1 - t0);
	printf("simulate        %.3f s (wall)\n", t2 - t1);
	printf("peak RSS        %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
	printf("events          %lld\n", (long long)m->events);
	printf("events/s        %.2f M\n", (double)m->events / (t2 - t1) / 1e6);
	printf("step time       %.4f s simulated, MFU %.1f %%\n", m->step_time_s, 100 * m->mfu);
	cs_result_free(res);
	cs_scenario_free(sc);
	return 0;
}
