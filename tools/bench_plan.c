/*
 * bench_plan.c - the plan search at scale: Llama 3 70B on 1,024 H100s
 * (128 eight-GPU servers, 400 Gb/s InfiniBand per GPU), 8K context, 2,048
 * sequences (16M tokens) per step, as in Llama 3's pre-training recipe.
 *
 * Prints the plans considered, pruned by memory and by validity, simulated
 * and skipped, the wall time of the search, the best plans and the seed
 * heuristic's rank. The scenario is built here from overrides on the
 * defaults, so the benchmark needs no file.
 *
 * Usage: bench_plan [jobs] [max-sims]   (default: the online CPUs, 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "study/planner.h"
#include "study/search.h"

static const char *const sets[] = {
	"cluster.gpu=h100-sxm-80g",
	"cluster.nodes=128",
	"cluster.gpus_per_node=8",
	"model.preset=llama3-70b",
	"training.seq_len=8192",
	"training.global_batch=2048",
	"training.micro_batch=1",
	NULL,
};

static void print_plan(const char *label, const cs_plan *p)
{
	printf("%-10s tp %lld%s cp %lld pp %lld v %lld dp %lld mb %lld %-13s %-9s  "
	       "%.4f s  MFU %.1f %%  %.1f GB  bound %s\n", label, (long long)p->tp,
	       p->tp_beyond_domain ? "*" : "", (long long)p->cp, (long long)p->pp,
	       (long long)p->vstages, (long long)p->dp, (long long)p->micro_batch,
	       cs_sharding_name(p->sharding), cs_recompute_name(p->recompute),
	       p->step_time_s, 100.0 * p->mfu, p->mem_bytes / 1e9, cs_plan_bound_name(p->bound));
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cs_plan_opts o = {0};
	cs_scenario *sc = malloc(sizeof *sc);
	cs_plan_search *s = NULL;
	cs_diag diag;

	o.jobs = argc > 1 ? atoi(argv[1]) : (cpus > 0 ? (int)cpus : 1);
	o.max_sims = argc > 2 ? atoll(argv[2]) : 0;
	if (!sc || cs_config_defaults(sc) != CS_OK)
		return 3;
	for (const char *const *k = sets; *k; k++)
		if (cs_config_apply_override(sc, *k, &diag) != CS_OK) {
			fprintf(stderr, "bench_plan: %s\n", diag.msg);
			return 2;
		}
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	if (cs_config_validate(sc, &diag) != CS_OK ||
	    cs_study_plans(sc, &o, NULL, &s, &diag) != CS_OK) {
		fprintf(stderr, "bench_plan: %s\n", diag.msg);
		free(sc);
		return 2;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
	printf("llama3-70b on %lld x h100-sxm-80g, seq 8192, global batch 2048\n",
	       (long long)s->gpus);
	printf("considered     %lld\n", (long long)s->considered);
	printf("pruned memory  %lld (budget %.1f GB)\n", (long long)s->pruned_memory,
	       s->budget_bytes / 1e9);
	printf("pruned invalid %lld\n", (long long)s->pruned_invalid);
	printf("simulated      %lld (cap %lld, %lld skipped, %lld failed)\n",
	       (long long)s->simulated, (long long)s->max_sims, (long long)s->skipped,
	       (long long)s->failed);
	printf("wall time      %.2f s on %d threads\n", s->wall_s, s->jobs);
	printf("cpu time       %.2f s (%.1f ms per simulated plan)\n", cpu,
	       s->simulated ? 1e3 * cpu / (double)s->simulated : 0.0);
	if (s->failed)
		printf("first failure  %s\n", s->first_failure);
	for (int64_t i = 0; i < s->nplans && i < 3; i++) {
		char label[16];
		snprintf(label, sizeof label, "best %lld", (long long)(i + 1));
		print_plan(label, &s->plans[i]);
	}
	if (s->heuristic_rank > 0) {
		print_plan("heuristic", &s->heuristic);
		printf("heuristic rank %lld of %lld\n", (long long)s->heuristic_rank,
		       (long long)s->nplans);
	} else {
		printf("heuristic      tp %lld pp %lld dp %lld: %s\n", (long long)s->heuristic.tp,
		       (long long)s->heuristic.pp, (long long)s->heuristic.dp, s->heuristic_note);
	}
	cs_plan_search_free(s);
	free(sc);
	return 0;
}
