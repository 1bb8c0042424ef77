/*
 * nccl_out.c - nccl-tests' output for the tuner's times (nccl_out.h).
 */
#include "report/nccl_out.h"

#include <math.h>

#include "ingest/nccltests.h"

/* nccl-tests' data types and their sizes. */
static const struct {
	const char *name;
	int bytes;
} dtypes[] = {
	{ "float", 4 }, { "half", 2 }, { "bfloat16", 2 }, { "double", 8 }, { "int8", 1 },
	{ "uint8", 1 }, { "int32", 4 }, { "uint32", 4 }, { "int64", 8 }, { "uint64", 8 },
	{ "f8e4m3", 1 }, { "f8e5m2", 1 },
};

int cs_nccl_dtypes(void)
{
	return (int)(sizeof dtypes / sizeof dtypes[0]);
}

const char *cs_nccl_dtype_name(int i)
{
	return dtypes[i].name;
}

int cs_nccl_dtype_bytes(int i)
{
	return dtypes[i].bytes;
}

/* nccl-tests' count column (elements per rank for the ops whose size is
 * the whole buffer over the ranks) and the bytes it then moves. */
void cs_nccl_count(cs_coll_op op, double size, int word, int64_t n, double *count, double *bytes)
{
	bool per_rank = op == CS_COLL_REDUCE_SCATTER || op == CS_COLL_ALL_GATHER ||
			op == CS_COLL_ALL_TO_ALL || op == CS_COLL_GATHER || op == CS_COLL_SCATTER;
	double div = per_rank ? (double)n : 1.0;
	*count = floor(size / word / div);
	*bytes = *count * word * div;
}

bool cs_nccl_reduces(cs_coll_op op)
{
	return op == CS_COLL_ALL_REDUCE || op == CS_COLL_REDUCE_SCATTER || op == CS_COLL_REDUCE;
}

bool cs_nccl_rooted(cs_coll_op op)
{
	return op == CS_COLL_BROADCAST || op == CS_COLL_REDUCE || op == CS_COLL_GATHER ||
	       op == CS_COLL_SCATTER;
}

/* nccl-tests' header block: the test, its parameters, the ranks. */
static void header(FILE *f, const cs_nccl_run *r)
{
	const cs_cluster_spec *c = r->c;
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	fprintf(f, "# predicted by clustersim from NCCL's tuning model; nothing was measured\n"
		   "# Collective test starting: %s\n"
		   "# nThread 1 nGpus %lld minBytes %.0f maxBytes %.0f step: %g(factor) warmup iters: 0 "
		   "iters: 1 agg iters: 1 validation: 0 graph: 0\n#\n# Using devices\n",
		cs_nccltests_name(r->op), (long long)r->n, r->min, r->max, r->factor);
	for (int64_t i = 0; i < r->n; i++)
		fprintf(f, "#  Rank %3lld Group  0 Pid %6lld on %10s%lld device %2lld [0x%02llx] %s\n",
			(long long)i, (long long)(i / gpn + 1), "node-", (long long)(i / gpn),
			(long long)(i % gpn), (long long)(i % gpn), c->gpu.name);
	fprintf(f, "#\n#%74s%35s\n", "out-of-place", "in-place");
	fprintf(f, "#%11s %13s %9s %7s %7s %8s %7s %7s %6s %8s %7s %7s %6s  %-10s %s\n", "size", "count",
		"type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
		"#wrong", "algorithm", "protocol");
	fprintf(f, "#%11s %13s %9s %7s %7s %8s %7s %7s %6s %8s %7s %7s\n", "(B)", "(elements)", "", "",
		"", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)");
}

bool cs_nccl_write(FILE *f, bool json, const cs_nccl_run *r, cs_coll *coll, cs_coll_algo asked)
{
	cs_coll_op op = r->op;
	double factor = cs_coll_bus_factor(op, r->n), bus_sum = 0;
	int word = cs_nccl_dtype_bytes(r->dtype), rows = 0;
	const char *redop = cs_nccl_reduces(op) ? r->redop : "none";
	const char *type = cs_nccl_dtype_name(r->dtype);
	int root = cs_nccl_rooted(op) ? 0 : -1;
	bool other = false;
	if (json)
		fprintf(f, "[");
	else
		header(f, r);
	for (double size = r->min; size <= r->max * (1 + 1e-12); size *= r->factor) {
		double count, bytes;
		cs_nccl_count(op, size, word, r->n, &count, &bytes);
		if (!(bytes > 0))
			continue;
		cs_coll_choice ch;
		int64_t ns = cs_coll_time(coll, op, r->g, bytes, &ch);
		double us = (double)ns / 1e3;
		double algbw = ns > 0 ? bytes / (double)ns : 0; /* GB/s */
		const char *an = cs_coll_choice_name(op, &ch), *pn = cs_coll_proto_name(ch.proto);
		other |= asked != CS_ALGO_AUTO && ch.algo != asked;
		double busbw = algbw * factor;
		bus_sum += busbw;
		if (json)
			fprintf(f, "%s\n  {\"bytes\": %.0f, \"count\": %.0f, \"type\": \"%s\", "
				   "\"redop\": \"%s\", \"root\": %d, \"time_us\": %.3f, "
				   "\"algbw_gbs\": %.3f, \"busbw_gbs\": %.3f, "
				   "\"algorithm\": \"%s\", \"protocol\": \"%s\"}",
				rows ? "," : "", bytes, count, type, redop, root, us, algbw, busbw, an, pn);
		else
			fprintf(f, "%12.0f %13.0f %9s %7s %7d %8.2f %7.2f %7.2f %6s "
				   "%8.2f %7.2f %7.2f %6s  %-10s %s\n",
				bytes, count, type, redop, root, us, algbw, busbw, "N/A", us, algbw, busbw,
				"N/A", an, pn);
		rows++;
	}
	if (json)
		fprintf(f, "\n]\n");
	else
		fprintf(f, "# Avg bus bandwidth    : %g\n#\n# Collective test concluded: %s\n#\n",
			rows ? bus_sum / rows : 0.0, cs_nccltests_name(op));
	return other;
}
