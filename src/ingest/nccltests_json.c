/*
 * nccltests_json.c - nccl-tests' -J JSON (its src/util.cu writer): one
 * document, read whole with jansson, as one test of the set: its devices,
 * its configuration and its result rows (nccltests.h).
 */
#include "ingest/nccltests.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ingest/nccltests_int.h"

static cs_status jfail(cs_diag *diag, const char *file, const char *key, const char *what)
{
	snprintf(diag->msg, sizeof diag->msg, "%.300s: %.200s: %s", file, key, what);
	return CS_ERR_INPUT;
}

/* A count of config (nthreads, ngpus): 1 when absent. */
static cs_status jcount(const json_t *cfg, const char *key, const char *file, int64_t *out, cs_diag *diag)
{
	const json_t *v = json_object_get(cfg, key);
	*out = 1;
	if (!v)
		return CS_OK;
	double d = json_number_value(v);
	if (!json_is_number(v) || !(d >= 1 && d <= 65536) || d != floor(d)) {
		char k[64];
		snprintf(k, sizeof k, "config.%s", key);
		return jfail(diag, file, k, "expected a whole number from 1 to 65536");
	}
	*out = (int64_t)d;
	return CS_OK;
}

/* One of a result's out_of_place and in_place: its time (or cpu_time) and
 * bus_bw; NAN where null or absent. */
static cs_status jplace(const json_t *r, size_t i, int k, const char *file, cs_nccl_row *row, cs_diag *diag)
{
	static const char *const keys[2] = { "out_of_place", "in_place" };
	row->time_us[k] = row->busbw[k] = NAN;
	const json_t *p = json_object_get(r, keys[k]);
	if (!p || json_is_null(p))
		return CS_OK;
	char where[96];
	snprintf(where, sizeof where, "results[%zu].%s", i, keys[k]);
	if (!json_is_object(p))
		return jfail(diag, file, where, "expected an object with 'time', 'alg_bw' and 'bus_bw'");
	const json_t *t = json_object_get(p, "time");
	if (!t)
		t = json_object_get(p, "cpu_time");
	if (json_is_string(t) && strcmp(json_string_value(t), "nan") == 0)
		return CS_OK; /* nccl-tests writes a NaN as "nan" */
	if (!json_is_number(t) || !(json_number_value(t) > 0) || !isfinite(json_number_value(t))) {
		snprintf(where + strlen(where), sizeof where - strlen(where), ".time");
		return jfail(diag, file, where, "expected a positive number of microseconds");
	}
	row->time_us[k] = json_number_value(t);
	const json_t *b = json_object_get(p, "bus_bw");
	if (json_is_number(b) && isfinite(json_number_value(b)))
		row->busbw[k] = json_number_value(b);
	return CS_OK;
}

/* The test's name from args[0] (a path to all_reduce_perf or _mpi). */
static void jtest(const json_t *root, cs_nccltests *t)
{
	const json_t *args = json_object_get(root, "args");
	const char *a = json_string_value(json_array_get(args, 0));
	if (!a)
		return;
	const char *base = strrchr(a, '/');
	snprintf(t->test, sizeof t->test, "%s", base ? base + 1 : a);
}

static cs_status jdevices(const json_t *cfg, const char *file, cs_nccltests *t, cs_diag *diag)
{
	int64_t threads, gpus;
	cs_status st = jcount(cfg, "nthreads", file, &threads, diag);
	if (st == CS_OK)
		st = jcount(cfg, "ngpus", file, &gpus, diag);
	if (st != CS_OK)
		return st;
	const json_t *devs = json_object_get(cfg, "devices");
	size_t n = json_array_size(devs);
	if (n == 0)
		return jfail(diag, file, "config.devices",
			     "no devices: the group's size and hosts are "
			     "unknown (keep the file nccl-tests wrote)");
	cs__nccl_hosts hosts = { 0 };
	int64_t per = threads * gpus; /* the ranks of one process */
	cs_status st2 = CS_OK;
	for (size_t i = 0; i < n && st2 == CS_OK; i++) {
		const json_t *d = json_array_get(devs, i);
		const char *name = json_string_value(json_object_get(d, "hostname"));
		char where[64];
		if (!name) {
			snprintf(where, sizeof where, "config.devices[%zu].hostname", i);
			st2 = jfail(diag, file, where, "expected the host's name");
			break;
		}
		if (t->nranks + per > CS_NCCL_MAX_RANKS) {
			char what[160];
			snprintf(where, sizeof where, "config.devices[%zu]", i);
			snprintf(what, sizeof what,
				 "more than %lld ranks (%lld threads of %lld GPUs a process): not a test "
				 "nccl-tests ran",
				 (long long)CS_NCCL_MAX_RANKS, (long long)threads, (long long)gpus);
			st2 = jfail(diag, file, where, what);
			break;
		}
		if (i == 0) {
			const char *info = json_string_value(json_object_get(d, "device_info"));
			snprintf(t->gpu, sizeof t->gpu, "%s", info ? info : "");
		}
		st2 = cs__nccl_hosts_add(&hosts, name, strlen(name), per, t, diag);
	}
	cs__nccl_hosts_end(&hosts, t);
	return st2;
}

static cs_status jrows(const json_t *res, const char *file, cs_nccltests *t, cs_diag *diag)
{
	size_t n = json_array_size(res);
	t->rows = n ? calloc(n, sizeof *t->rows) : NULL;
	if (n && !t->rows) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(res, i);
		char where[64];
		snprintf(where, sizeof where, "results[%zu]", i);
		if (!json_is_object(r))
			return jfail(diag, file, where,
				     "expected an object (size, count, type, redop, "
				     "root, out_of_place, in_place)");
		const json_t *size = json_object_get(r, "size");
		double b = json_number_value(size);
		if (!json_is_number(size) || !(b >= 0 && b < 1e18) || b != floor(b)) {
			snprintf(where + strlen(where), sizeof where - strlen(where), ".size");
			return jfail(diag, file, where, "expected a whole number of bytes");
		}
		cs_nccl_row row = { .bytes = b, .line = 1 };
		cs_status st = CS_OK;
		for (int k = 0; k < 2 && st == CS_OK; k++)
			st = jplace(r, i, k, file, &row, diag);
		if (st != CS_OK)
			return st;
		if (isnan(row.time_us[0]) && isnan(row.time_us[1]))
			return jfail(diag, file, where, "no time in either 'out_of_place' or 'in_place'");
		if (i == 0) {
			const char *op = json_string_value(json_object_get(r, "redop"));
			snprintf(t->redop, sizeof t->redop, "%s", op ? op : "");
			const json_t *root = json_object_get(r, "root"); /* "%6i" as a string */
			const char *rs = json_string_value(root);
			double v = rs ? strtod(rs, NULL) : json_number_value(root);
			if ((rs || json_is_number(root)) && v >= -1 && v < 1e9)
				t->root = (int64_t)v;
		}
		if (b > 0)
			t->rows[t->nrows++] = row;
	}
	if (t->nrows == 0)
		return jfail(diag, file, "results", "no result rows of a nonzero size");
	return CS_OK;
}

cs_status cs__nccltests_parse_json(const char *buf, size_t len, const char *file, cs_nccltests_set *set,
				   cs_diag *diag)
{
	json_error_t err;
	json_t *root = json_loadb(buf, len, 0, &err);
	if (!root) {
		if (json_error_code(&err) == json_error_out_of_memory) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			return CS_ERR_NOMEM;
		}
		return cs__nccltests_fail(diag, file, err.line > 0 ? err.line : 1,
					  err.column > 0 ? err.column : 1, "not nccl-tests output: bad JSON");
	}
	cs_nccltests t = { .root = -1, .line = 1 };
	const json_t *res = json_object_get(root, "results"), *cfg = json_object_get(root, "config");
	cs_status st;
	if (!json_is_array(res) || !json_is_object(cfg))
		st = cs__nccltests_fail(
			diag, file, 1, 1,
			"not nccl-tests output: no column header ('# size count "
			"type ... time algbw busbw') and no 'config' and 'results' of nccl-tests' -J "
			"JSON");
	else
		st = jdevices(cfg, file, &t, diag);
	if (st == CS_OK)
		st = jrows(res, file, &t, diag);
	if (st == CS_OK) {
		jtest(root, &t);
		st = cs__nccltests_push(set, &t, diag);
	}
	cs_nccltests_free(&t);
	json_decref(root);
	return st;
}
