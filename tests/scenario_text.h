/*
 * scenario_text.h - load a scenario written inline in a test.
 */
#ifndef CS_TESTS_SCENARIO_TEXT_H
#define CS_TESTS_SCENARIO_TEXT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clustersim/clustersim.h"

/* Write `text` to a temporary file and load it with `nsets` overrides; the
 * test fails on a load error. The caller frees the scenario. The closed
 * forms the tests check are those of identical, ideal machines: the fleet
 * preset is 'ideal' unless a later override says otherwise (the
 * fleet's own tests set 'fleet.preset=production'). */
static inline cs_scenario *cs_test_load(const char *text, const char *const *sets, size_t nsets)
{
	const char *all[32];
	ck_assert_uint_lt(nsets, 31);
	all[0] = "fleet.preset=ideal";
	for (size_t i = 0; i < nsets; i++)
		all[i + 1] = sets[i];
	sets = all;
	nsets++;
	char path[] = "/tmp/cs-test-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	cs_scenario *sc = NULL;
	cs_diag diag = { { 0 } };
	cs_status st = cs_scenario_load(path, sets, nsets, &sc, &diag);
	unlink(path);
	ck_assert_msg(st == CS_OK, "load failed: %s", diag.msg);
	return sc;
}

/* Simulate and return the metrics; the test fails on a simulation error. */
static inline cs_metrics cs_test_simulate(const cs_scenario *sc)
{
	cs_result *res = NULL;
	cs_diag diag = { { 0 } };
	cs_status st = cs_simulate(sc, NULL, &res, &diag);
	ck_assert_msg(st == CS_OK, "simulate failed: %s", diag.msg);
	cs_metrics m = *cs_result_metrics(res);
	cs_result_free(res);
	return m;
}

#endif
