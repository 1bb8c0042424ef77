/*
 * test_fold.c - every shipped scenario folded and rank by rank: the same
 * report, figure for figure, and the same per-rank rows.
 */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "report/report.h"
#include "study/study.h"

/* Every shipped scenario both ways, folded where auto folds and rank by
 * rank: every figure of the JSON report (all but its cost: events, wall
 * time, the route) and every per-rank row alike, on identical machines
 * (the fleet's spread forbids folding) and without the critical path
 * (traced, it runs every rank). One step: a step's figures are what a
 * folded run must reproduce. */
static const char *const shipped[] = {
	"3d-llama3-70b-64gpu", "cp-ring-llama3-8b-128k", "ddp-gpt-small", "ddp-llama2-7b-2node",
	"deepseek-v3-2048gpu", "eos-gpt3-175b-fp8", "fsdp-llama3-8b-16gpu", "gb200-nvl72-llama3-70b",
	"h200-gpt-h5120-8l-s2048-mb4",
	"h200-gpt125m-s1024-mb8", "h200-llama8l-h4096-s8192", "hsdp-llama3-8b-32gpu", "llama3-405b-16k-cp16",
	"llama3-405b-16k-goodput", "llama3-405b-16k-jitter", "llama3-405b-16k-straggler", "llama3-405b-16k",
	"llama3-405b-8k", "megatron-1t-3072gpu", "moe-deepseek-ep", "moe-qwen3-235b-256gpu", "palm-540b-6144tpu", "zb-h1-gpt3-175b",
};

/* The JSON report without its cost, and the per-rank rows, of one way. */
static void run_way(const char *name, const char *fold, char **json, char **rows, int *folded)
{
	char path[512], set[64];
	snprintf(path, sizeof path, CS_SOURCE_ROOT "/scenarios/%s.yaml", name);
	snprintf(set, sizeof set, "simulate.fold=%s", fold);
	const char *sets[] = { "fleet.preset=ideal", "simulate.steps=1", set };
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_scenario_load(path, sets, 3, &sc, &diag) == CS_OK, "%s: %s", name, diag.msg);
	cs_run_opts opts = { .critical_path = -1 };
	cs__sim_request rq = { .opts = &opts, .want_rows = true };
	cs_result *res = NULL;
	ck_assert_msg(cs__simulate(sc, &rq, &res, &diag) == CS_OK, "%s: %s", name, diag.msg);
	const cs_metrics *m = cs_result_metrics(res);
	*folded = m->route.folded;
	cs_metrics bare = *m;
	bare.events = 0;
	bare.sim_wall_s = 0;
	memset(&bare.route, 0, sizeof bare.route);
	size_t len = 0;
	FILE *f = open_memstream(json, &len);
	cs_report_json(f, name, &bare, 2);
	fclose(f);
	int64_t n = 0;
	const cs_rank_row *r = cs__result_rows(res, &n);
	f = open_memstream(rows, &len);
	cs_report_ranks_csv(f, r, n);
	fclose(f);
	cs_result_free(res);
	cs_scenario_free(sc);
}

START_TEST(every_scenario_folds_exactly)
{
	char *full_json, *full_rows, *auto_json, *auto_rows;
	int full_folded, auto_folded;
	run_way(shipped[_i], "false", &full_json, &full_rows, &full_folded);
	run_way(shipped[_i], "auto", &auto_json, &auto_rows, &auto_folded);
	ck_assert(!full_folded);
	size_t at = 0;
	while (full_json[at] && full_json[at] == auto_json[at])
		at++;
	while (at > 0 && full_json[at - 1] != '\n')
		at--;
	ck_assert_msg(!full_json[at], "%s (folded %d): rank by rank\n%.300s\nauto\n%.300s", shipped[_i],
		      auto_folded, full_json + at, auto_json + at);
	ck_assert_msg(strcmp(full_rows, auto_rows) == 0, "%s: the per-rank rows differ", shipped[_i]);
	free(full_json);
	free(full_rows);
	free(auto_json);
	free(auto_rows);
}
END_TEST

/* The list above holds every scenario shipped at the top of scenarios/. */
START_TEST(every_scenario_is_run_both_ways)
{
	DIR *d = opendir(CS_SOURCE_ROOT "/scenarios");
	ck_assert_ptr_nonnull(d);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		bool listed = false;
		for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++)
			listed |= strlen(shipped[i]) == len - 5 && !strncmp(shipped[i], e->d_name, len - 5);
		ck_assert_msg(listed, "scenarios/%s is not run both ways (tests/test_plan.c)", e->d_name);
		n++;
	}
	closedir(d);
	ck_assert_uint_eq(n, sizeof shipped / sizeof shipped[0]);
}
END_TEST

static Suite *fold_suite(void)
{
	Suite *s = suite_create("fold");
	TCase *tc = tcase_create("scenarios");
	tcase_set_timeout(tc, 1200);
	tcase_add_test(tc, every_scenario_is_run_both_ways);
	tcase_add_loop_test(tc, every_scenario_folds_exactly, 0, sizeof shipped / sizeof shipped[0]);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fold_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
