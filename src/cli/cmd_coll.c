/*
 * cmd_coll.c - `clustersim coll`: predicted nccl-tests output for one
 * collective over a range of sizes, on a scenario's cluster or on a preset
 * server, invoked as nccl-tests is (the test's name, its short and long
 * options) and written as it writes (report/nccl_out.c), with -J its JSON.
 */
#include "cli/commands.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "cli/nccl_style.h"
#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/config.h"
#include "hw/files.h"
#include "config/scenario.h"
#include "hw/topo.h"
#include "report/nccl_out.h"
#include "report/out.h"

static const char usage[] =
	"usage: clustersim coll [TEST] [SCENARIO.yaml] [nccl-tests' options]\n"
	"                       [--collective OP] [--gpus N] [--algo ALGO] [--proto PROTO]\n"
	"                       [--gpu PRESET --nodes N --gpus-per-node G]\n"
	"                       [--set KEY=VALUE] [--format text|json] [--plot FILE.svg]\n"
	"\n"
	"Predicts nccl-tests' output for one collective on GPUs 0..N-1, as\n"
	"nccl-tests 2.19 prints it: its version line, the test and its parameters,\n"
	"the ranks, one row per size from -b to -e multiplying by -f\n"
	"(out-of-place and in-place alike; 7-character times), the algorithm and\n"
	"protocol NCCL's tuner picks as two more columns, and the '# Out of bounds\n"
	"values' and '# Avg bus bandwidth' footer. Scripts that read nccl-tests\n"
	"output read this, and 'clustersim calibrate --nccl-tests' reads it back.\n"
	"\n"
	"TEST is the nccl-tests binary, as nccl-tests is run: all_reduce_perf\n"
	"(the default), reduce_scatter_perf, all_gather_perf, alltoall_perf,\n"
	"broadcast_perf, sendrecv_perf, reduce_perf, gather_perf or scatter_perf,\n"
	"with or without a directory and the _mpi suffix.\n"
	"\n"
	"nccl-tests' options, short and long, with their meanings:\n"
	"  -b, --minbytes SIZE   smallest size (default 8); a bare K, M, G or T is\n"
	"                        binary as in nccl-tests (8K = 8192), or 8KB, 1MiB\n"
	"  -e, --maxbytes SIZE   largest size (default 128M)\n"
	"  -f, --stepfactor F    size multiplier between rows, > 1 (default 2)\n"
	"  -i, --stepbytes SIZE  size increment between rows, instead of -f\n"
	"  -t, --nthreads N      threads per process (default 1)\n"
	"  -g, --ngpus N         GPUs per thread (default 1); without --gpus the\n"
	"                        ranks are -t x -g, one process; with neither,\n"
	"                        every GPU of the cluster, one process per GPU\n"
	"  -o, --op OP           the reduction: sum (default), prod, max, min, avg,\n"
	"                        mulsum, or all (each in turn)\n"
	"  -d, --datatype TYPE   float (default), half, bfloat16, double, int8,\n"
	"                        uint8, int32, uint32, int64, uint64, f8e4m3,\n"
	"                        f8e5m2, or all (each in turn)\n"
	"  -r, --root R          root of broadcast, reduce, gather, scatter\n"
	"                        (default 0; -1 or all: each rank in turn)\n"
	"  -N, --run_cycles N    print the rows N times (default 1)\n"
	"  -C, --report_cputime 0|1  name the time columns 'cputime'\n"
	"  -J, --output_file FILE.json  also write nccl-tests' JSON to FILE\n"
	"  -n, --iters, -w, --warmup_iters, -m, --agg_iters, -c, --check,\n"
	"  -G, --cudagraph, -u, --unalign, -z, --blocking, -p, --parallel_init N\n"
	"                        accepted and echoed in the header; they change no\n"
	"                        time (nothing is measured; #wrong is N/A)\n"
	"  -a, -R, -T, -y, -x, -D, -V, -M, -S, -I, -K (and their long names) N\n"
	"                        accepted, no effect\n"
	"\n";

/* The rest of the help (one literal would pass C's 4095 characters). */
static const char usage_own[] =
	"clustersim's own:\n"
	"  --collective OP       the collective, instead of TEST: all_reduce,\n"
	"                        reduce_scatter, all_gather, all_to_all (alltoall),\n"
	"                        broadcast, reduce, gather, scatter or send_recv\n"
	"  --gpus N              the ranks, as mpirun -np N x -t x -g\n"
	"  --min, --max, --factor, --dtype, --redop, --warmup-iters\n"
	"                        -b, -e, -f, -d, -o and -w\n"
	"  --algo ALGO           ring, tree, nvls, nvls_tree, hierarchical, torus (a\n"
	"                        scenario with a torus) or auto; where it does not\n"
	"                        apply, a warning names what is used instead\n"
	"  --proto PROTO         ll, ll128, simple or auto\n"
	"  --gpu PRESET          without a scenario: the GPU's standard 8-GPU server\n"
	"                        (default h100-sxm-80g)\n"
	"  --nodes N             without a scenario: nodes (default 1)\n"
	"  --gpus-per-node G     without a scenario: GPUs per node (default 8)\n"
	"  --set KEY=VALUE       with a scenario: override one of its scalars, such\n"
	"                        as cluster.gpu.calibration (repeatable)\n"
	"  --format text|json    output format (default text; json: one object a row)\n"
	"  --plot FILE.svg       also chart the bus bandwidth against the size (log\n"
	"                        scale), one line per algorithm and protocol shown\n"
	"\n"
	"examples:\n"
	"  clustersim coll -b 8 -e 8G -f 2\n"
	"  clustersim coll all_reduce_perf --gpu a100-sxm-80g --nodes 4 -b 1G -e 1G --algo ring\n"
	"  clustersim coll all_gather_perf scenarios/3d-llama3-70b-64gpu.yaml --gpus 16 --format json\n"
	"  clustersim coll reduce_scatter_perf -g 8 -b 1M -e 1G -f 4 -o avg -d bfloat16 -n 50 -w 5\n"
	"\n"
	"exit status: 0 success, 2 bad input\n";

#define CS_COLL_MAX_BYTES 1125899906842624.0 /* 1 PiB per rank: far beyond any GPU */
#define CS_COLL_MAX_GPN 1024                 /* GPUs per node, as cluster.gpus_per_node */
#define CS_COLL_MAX_ROWS 10000

enum {
	O_COLLECTIVE = 1,
	O_MIN,
	O_MAX,
	O_FACTOR,
	O_STEPBYTES,
	O_ALGO,
	O_PROTO,
	O_GPUS,
	O_NTHREADS,
	O_NGPUS,
	O_GPU,
	O_NODES,
	O_GPN,
	O_FORMAT,
	O_SET,
	O_DTYPE,
	O_REDOP,
	O_ROOT,
	O_ITERS,
	O_WARMUP,
	O_CHECK,
	O_AGG,
	O_GRAPH,
	O_UNALIGN,
	O_BLOCKING,
	O_PARALLEL,
	O_CYCLES,
	O_CPUTIME,
	O_JSON,
	O_PLOT,
	O_NOEFFECT,
	O_HELP
};

static const cs_opt coll_opts[] = {
	{ "collective", 1, O_COLLECTIVE },
	{ "minbytes", 1, O_MIN },
	{ "min", 1, O_MIN },
	{ "maxbytes", 1, O_MAX },
	{ "max", 1, O_MAX },
	{ "stepfactor", 1, O_FACTOR },
	{ "factor", 1, O_FACTOR },
	{ "stepbytes", 1, O_STEPBYTES },
	{ "algo", 1, O_ALGO },
	{ "proto", 1, O_PROTO },
	{ "gpus", 1, O_GPUS },
	{ "nthreads", 1, O_NTHREADS },
	{ "ngpus", 1, O_NGPUS },
	{ "gpu", 1, O_GPU },
	{ "nodes", 1, O_NODES },
	{ "gpus-per-node", 1, O_GPN },
	{ "format", 1, O_FORMAT },
	{ "set", 1, O_SET },
	{ "datatype", 1, O_DTYPE },
	{ "dtype", 1, O_DTYPE },
	{ "op", 1, O_REDOP },
	{ "redop", 1, O_REDOP },
	{ "root", 1, O_ROOT },
	{ "iters", 1, O_ITERS },
	{ "warmup_iters", 1, O_WARMUP },
	{ "warmup-iters", 1, O_WARMUP },
	{ "check", 1, O_CHECK },
	{ "agg_iters", 1, O_AGG },
	{ "cudagraph", 1, O_GRAPH },
	{ "unalign", 1, O_UNALIGN },
	{ "blocking", 1, O_BLOCKING },
	{ "parallel_init", 1, O_PARALLEL },
	{ "run_cycles", 1, O_CYCLES },
	{ "report_cputime", 1, O_CPUTIME },
	{ "output_file", 1, O_JSON },
	{ "plot", 1, O_PLOT },
	{ "average", 1, O_NOEFFECT },
	{ "local_register", 1, O_NOEFFECT },
	{ "timeout", 1, O_NOEFFECT },
	{ "stream_null", 1, O_NOEFFECT },
	{ "cta_policy", 1, O_NOEFFECT },
	{ "device_implementation", 1, O_NOEFFECT },
	{ "device_cta_count", 1, O_NOEFFECT },
	{ "memory", 1, O_NOEFFECT },
	{ "report_timestamps", 1, O_NOEFFECT },
	{ "per_iter_timing", 1, O_NOEFFECT },
	{ "per_iter_skip", 1, O_NOEFFECT },
	{ "help", 0, O_HELP },
	{ 0, 0, 0 },
};

/* The whole-number options: their least and greatest values. */
static const struct {
	int id;
	int64_t lo, hi;
} ranges[] = {
	{ O_NTHREADS, 1, 1024 },       { O_NGPUS, 1, 1024 },        { O_ITERS, 0, INT32_MAX },
	{ O_WARMUP, 0, INT32_MAX },    { O_CHECK, 0, INT32_MAX },   { O_AGG, 1, INT32_MAX },
	{ O_GRAPH, 0, INT32_MAX },     { O_UNALIGN, 0, INT32_MAX }, { O_BLOCKING, 0, 3 },
	{ O_PARALLEL, 0, 1 },          { O_CYCLES, 1, 1000 },       { O_CPUTIME, 0, 1 },
	{ O_NOEFFECT, -1, INT32_MAX },
};

static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "clustersim coll: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return CS_ERR_INPUT;
}

static int pick(const char *what, const char *value, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (cs_name_eq(value, names[i])) {
			*out = i;
			return 0;
		}
	const char *near = cs_suggest(value, names, (size_t)n);
	if (near)
		fprintf(stderr, "clustersim coll: unknown %s '%s'; did you mean '%s'?\n", what, value, near);
	else
		fprintf(stderr, "clustersim coll: unknown %s '%s'\n", what, value);
	return -1;
}

/* A count of GPUs or nodes, from 1 to `max` (what a scenario accepts). */
static int parse_count(const char *opt, const char *s, int64_t max, int64_t *out)
{
	if (cs_args_parse_int(s, 1, max, out)) {
		fprintf(stderr, "clustersim coll: '%s' needs a whole number from 1 to %lld, got '%s'\n", opt,
			(long long)max, s);
		return -1;
	}
	return 0;
}

/* Out of memory: said, and a run that cannot finish (exit 1). */
static int nomem(void)
{
	fprintf(stderr, "clustersim coll: out of memory\n");
	return 1;
}

typedef struct args {
	const char *scenario, *gpu, *json_file, *plot, *test; /* test: the TEST argument */
	const char *sets[CS_ARGS_MAX_SETS];
	size_t nsets;
	int op, algo, proto, json, dtype, redop;
	bool op_given, all_dtypes, all_redops, factor_given;
	double min, max, factor, stepbytes;
	int64_t gpus, nodes, gpn, nthreads, ngpus, root;
	int64_t iters, warmup, check, agg, graph, unalign, blocking, parallel, cycles, cputime;
} args;

/* cs_coll_op's order, then nccl-tests' spellings of two. */
static const char *const ops[] = { "all_reduce", "reduce_scatter", "all_gather", "all_to_all",
				   "broadcast",  "send_recv",      "reduce",     "gather",
				   "scatter",    "alltoall",       "sendrecv" };

/* TEST or SCENARIO. */
static int positional(args *a, const char *v)
{
	int t = cs__nccl_test(v);
	if (t == -2)
		return bad("'%s' is an nccl-tests test clustersim has no model for (all_reduce_perf, "
			   "reduce_scatter_perf, all_gather_perf, alltoall_perf, broadcast_perf, "
			   "sendrecv_perf, reduce_perf, gather_perf, scatter_perf)%s",
			   v, "");
	if (t >= 0) {
		if (a->op_given)
			return bad("'%s': the collective is already chosen%s", v, "");
		a->op = t;
		a->op_given = true;
		a->test = v;
		return 0;
	}
	if (a->scenario)
		return bad("unexpected argument '%s' (scenario already '%s')", v, a->scenario);
	a->scenario = v;
	return 0;
}

/* -o: nccl-tests' reduction, or all of them. */
static int parse_redop(args *a, const char *v)
{
	if (cs_name_eq(v, "all")) {
		a->all_redops = true;
		return 0;
	}
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (cs_name_eq(v, ops[i]))
			return bad("'--op %s': '--op' is the reduction, as in nccl-tests (sum, prod, max, "
				   "min, avg, mulsum or all); name the collective as nccl-tests does "
				   "('clustersim coll %s_perf') or with '--collective'",
				   v,
				   i == 3 || i == 9    ? "alltoall"
				   : i == 5 || i == 10 ? "sendrecv"
						       : v);
	const char *names[8];
	int n = cs_nccl_redops();
	for (int i = 0; i < n; i++)
		names[i] = cs_nccl_redop_name(i);
	return pick("reduction", v, names, n, &a->redop) ? CS_ERR_INPUT : 0;
}

static int parse_int_opt(int id, const char *name, const char *v, int64_t *out)
{
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
		if (ranges[i].id == id) {
			if (cs_args_parse_int(v, ranges[i].lo, ranges[i].hi, out) == 0)
				return 0;
			char msg[160];
			snprintf(msg, sizeof msg,
				 "'--%s' needs a whole number from %lld to %lld, got '%%s'%%s", name,
				 (long long)ranges[i].lo, (long long)ranges[i].hi);
			if (id == O_CYCLES && strcmp(v, "0") == 0)
				return bad("'--run_cycles 0' runs for ever in nccl-tests; give a number of "
					   "cycles%s%s",
					   "", "");
			return bad(msg, v, "");
		}
	return 0;
}

static int take(args *a, int id, const char *v)
{
	char msg[256];
	int rc = 0;
	switch (id) {
	case O_COLLECTIVE:
		if (a->op_given)
			return bad("'--collective %s': the collective is already chosen%s", v, "");
		rc = pick("collective", v, ops, 11, &a->op);
		if (a->op == 9)
			a->op = CS_COLL_ALL_TO_ALL;
		else if (a->op == 10)
			a->op = CS_COLL_SEND_RECV;
		a->op_given = true;
		break;
	case O_DTYPE: {
		const char *dnames[32];
		int ndtypes = cs_nccl_dtypes();
		for (int i = 0; i < ndtypes; i++)
			dnames[i] = cs_nccl_dtype_name(i);
		if (cs_name_eq(v, "all"))
			a->all_dtypes = true;
		else
			rc = pick("data type", v, dnames, ndtypes, &a->dtype);
		break;
	}
	case O_REDOP: return parse_redop(a, v);
	case O_ROOT:
		if (cs_name_eq(v, "all"))
			a->root = -1;
		else if (cs_args_parse_int(v, -1, INT32_MAX, &a->root))
			return bad("'--root' needs a rank, -1 or all, got '%s'%s", v, "");
		break;
	case O_ALGO: {
		const char *algos[CS_ALGO_COUNT];
		for (int i = 0; i < CS_ALGO_COUNT; i++)
			algos[i] = cs_coll_algo_name((cs_coll_algo)i);
		rc = pick("algorithm", v, algos, CS_ALGO_COUNT, &a->algo);
		break;
	}
	case O_PROTO: {
		const char *protos[CS_PROTO_COUNT];
		for (int i = 0; i < CS_PROTO_COUNT; i++)
			protos[i] = cs_coll_proto_name((cs_coll_proto)i);
		rc = pick("protocol", v, protos, CS_PROTO_COUNT, &a->proto);
		break;
	}
	case O_FORMAT: {
		static const char *const formats[] = { "text", "json" };
		rc = pick("format", v, formats, 2, &a->json);
		break;
	}
	case O_MIN:
	case O_MAX:
	case O_STEPBYTES: {
		double *dst = id == O_MIN ? &a->min : id == O_MAX ? &a->max : &a->stepbytes;
		if (cs__nccl_size(v, dst, msg, sizeof(msg)))
			return bad("'--%s': %s",
				   id == O_MIN   ? "minbytes"
				   : id == O_MAX ? "maxbytes"
						 : "stepbytes",
				   msg);
		if (id == O_STEPBYTES && !(a->stepbytes >= 1))
			return bad("'--stepbytes' must be at least 1 byte, got '%s'%s", v, "");
		break;
	}
	case O_FACTOR: {
		char *end;
		a->factor = strtod(v, &end);
		if (*end || end == v || !(a->factor > 1) || a->factor > 1e6)
			return bad("'--stepfactor' needs a number > 1, got '%s'%s", v, "");
		a->factor_given = true;
		break;
	}
	case O_GPUS: rc = parse_count("--gpus", v, CS_CONFIG_MAX_GPUS, &a->gpus); break;
	case O_NODES: rc = parse_count("--nodes", v, CS_CONFIG_MAX_GPUS, &a->nodes); break;
	case O_GPN: rc = parse_count("--gpus-per-node", v, CS_COLL_MAX_GPN, &a->gpn); break;
	case O_GPU: a->gpu = v; break;
	case O_JSON:
		if (!v[0] || strcmp(v, "-") == 0)
			return bad("'--output_file' needs a file name (got '%s')%s", v, "");
		a->json_file = v;
		break;
	case O_PLOT:
		if (!v[0])
			return bad("'--plot' needs a file name (got '%s')%s", v, "");
		a->plot = v;
		break;
	case O_SET:
		if (a->nsets == CS_ARGS_MAX_SETS)
			return bad("more than %s '--set' options%s", "256", "");
		a->sets[a->nsets++] = v;
		break;
	default: {
		int64_t x, *dst = id == O_NTHREADS   ? &a->nthreads
				  : id == O_NGPUS    ? &a->ngpus
				  : id == O_ITERS    ? &a->iters
				  : id == O_WARMUP   ? &a->warmup
				  : id == O_CHECK    ? &a->check
				  : id == O_AGG      ? &a->agg
				  : id == O_GRAPH    ? &a->graph
				  : id == O_UNALIGN  ? &a->unalign
				  : id == O_BLOCKING ? &a->blocking
				  : id == O_PARALLEL ? &a->parallel
				  : id == O_CYCLES   ? &a->cycles
				  : id == O_CPUTIME  ? &a->cputime
						     : &x;
		const char *name = "option";
		for (const cs_opt *o = coll_opts; o->name; o++)
			if (o->id == id) {
				name = o->name;
				break;
			}
		return parse_int_opt(id, name, v, dst);
	}
	}
	return rc ? CS_ERR_INPUT : 0;
}

static int parse(int argc, char **argv, args *a)
{
	cs_args ca;
	const char *v;
	int id;
	cs_args_init(&ca, "coll", argc, argv);
	while ((id = cs_args_next(&ca, coll_opts, &v)) != CS_ARGS_END) {
		int rc = 0;
		if (id == CS_ARGS_ERROR)
			return CS_ERR_INPUT;
		if (id == O_HELP) {
			fputs(usage, stdout);
			fputs(usage_own, stdout);
			return 1;
		}
		rc = id == CS_ARGS_POSITIONAL ? positional(a, v) : take(a, id, v);
		if (rc)
			return CS_ERR_INPUT;
	}
	if (a->stepbytes > 0 && !a->factor_given)
		a->factor = 0; /* -i alone: step by bytes, as nccl-tests does when -f is not > 1 */
	if (a->min > a->max)
		return bad("'--minbytes' is larger than '--maxbytes'%s%s", "", "");
	if (a->max > CS_COLL_MAX_BYTES) {
		char got[48];
		snprintf(got, sizeof got, "%.4g", a->max);
		return bad("'--maxbytes' must be at most 1 PiB (1125899906842624 bytes), got %s bytes%s", got,
			   "");
	}
	if (a->min < 1)
		return bad("'--minbytes' must be at least 1 byte%s%s", "", "");
	double steps = a->factor > 1 ? log(a->max / a->min) / log(a->factor) + 1
				     : (a->max - a->min) / a->stepbytes + 1;
	double per_size = (a->all_dtypes ? cs_nccl_dtypes() : 1) * (a->all_redops ? cs_nccl_redops() : 1) *
			  (double)(a->cycles ? a->cycles : 1);
	if (steps * per_size > CS_COLL_MAX_ROWS)
		return bad("more than 10000 rows from '--minbytes' to '--maxbytes' by the step (with "
			   "each data type, reduction and cycle); raise the step or narrow the range%s%s",
			   "", "");
	if (a->nsets && !a->scenario)
		return bad("'--set' needs a scenario to override%s%s", "", "");
	return 0;
}

/* The cluster from the scenario file or from a preset server. */
static int make_cluster(const args *a, cs_scenario *sc)
{
	if (a->scenario) {
		if (a->gpu || a->nodes || a->gpn)
			return bad("'--gpu', '--nodes' and '--gpus-per-node' do not apply with a "
				   "scenario ('%s')%s",
				   a->scenario, "");
		cs_scenario *loaded = NULL;
		cs_diag diag;
		cs_status st = cs_scenario_load(a->scenario, a->sets, a->nsets, &loaded, &diag);
		if (st != CS_OK) {
			fprintf(stderr, "%s\n", CS_CLEAN(diag));
			return st;
		}
		*sc = *loaded;
		cs_scenario_free(loaded);
		return 0;
	}
	cs_config_defaults(sc);
	const char *name = a->gpu ? a->gpu : "h100-sxm-80g";
	const cs_gpu_spec *gpu = cs_preset_gpu(name);
	if (gpu == NULL) {
		const char *names[64];
		size_t n = 0;
		while (n < 64 && (names[n] = cs_preset_gpu_name(n)) != NULL)
			n++;
		const char *near = cs_suggest(name, names, n);
		if (near)
			return bad("unknown GPU preset '%s'; did you mean '%s'?", name, near);
		return bad("unknown GPU preset '%s'%s", name, "");
	}
	sc->cluster.gpu = *gpu;
	cs_preset_server_defaults(gpu, &sc->cluster);
	sc->cluster.nodes = a->nodes ? a->nodes : 1;
	int64_t gpn = a->gpn ? a->gpn : sc->cluster.gpus_per_node;
	if (sc->cluster.nodes > CS_CONFIG_MAX_GPUS / (gpn > 0 ? gpn : 1)) {
		char what[96], limit[32];
		snprintf(what, sizeof what, "%lld nodes of %lld GPUs", (long long)sc->cluster.nodes,
			 (long long)gpn);
		snprintf(limit, sizeof limit, "%d", CS_CONFIG_MAX_GPUS);
		return bad("%s is more than the limit of %s GPUs", what, limit);
	}
	if (a->gpn) {
		sc->cluster.gpus_per_node = (int)a->gpn;
		sc->cluster.scale_up_domain = (int)a->gpn;
		sc->cluster.nics_per_node = (int)a->gpn;
	}
	return 0;
}

/* The ranks and their processes: --gpus, else -t x -g (one process), else
 * every GPU (one process each, as mpirun -np N ... -g 1 runs them). 0, or
 * 2 after saying why they cannot be. */
static int ranks(args *a, int64_t gpus, int gpn, int64_t *n)
{
	char x[64], y[64];
	if (a->gpus > gpus) {
		snprintf(x, sizeof x, "%lld", (long long)gpus);
		return bad("'--gpus' exceeds the cluster's %s GPUs%s", x, "");
	}
	int64_t t = a->nthreads ? a->nthreads : 1, g = a->ngpus ? a->ngpus : 1;
	*n = a->gpus ? a->gpus : a->nthreads || a->ngpus ? t * g : gpus;
	if (t * g > gpn) {
		snprintf(x, sizeof x, "%lld", (long long)(t * g));
		snprintf(y, sizeof y, "%d", gpn);
		return bad("a process's -t x -g = %s GPUs are more than a node has (%s)", x, y);
	}
	if (*n > gpus) {
		snprintf(x, sizeof x, "%lld", (long long)*n);
		snprintf(y, sizeof y, "%lld", (long long)gpus);
		return bad("-t x -g = %s ranks are more than the cluster's %s GPUs", x, y);
	}
	if (*n % (t * g) != 0) {
		snprintf(x, sizeof x, "%lld", (long long)*n);
		snprintf(y, sizeof y, "%lld", (long long)(t * g));
		return bad("'--gpus %s' is not a whole number of processes of -t x -g = %s GPUs", x, y);
	}
	if (a->root >= *n) {
		snprintf(x, sizeof x, "%lld", (long long)a->root);
		snprintf(y, sizeof y, "%lld", (long long)*n);
		return bad("'--root %s' is not one of the %s ranks", x, y);
	}
	a->nthreads = t;
	a->ngpus = g;
	return 0;
}

/* nccl-tests' -J FILE (its JSON) or --plot FILE (the chart). */
typedef struct output {
	const cs_nccl_run *run;
	cs_coll *coll;
	cs_coll_algo asked;
} output;

static int write_json(FILE *f, const void *ctx)
{
	const output *o = ctx;
	char now[64];
	time_t t = time(NULL);
	struct tm tm;
	strftime(now, sizeof now, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	return cs_nccl_write_json(f, o->run, o->coll, now);
}

static int write_svg(FILE *f, const void *ctx)
{
	const output *o = ctx;
	return cs_nccl_write_svg(f, o->run, o->coll, o->asked);
}

int cs_cmd_coll(int argc, char **argv)
{
	args a = { 0 };
	a.min = 8;
	a.max = 128.0 * 1024 * 1024;
	a.factor = 2;
	a.warmup = 1; /* nccl-tests' defaults, echoed */
	a.iters = 20;
	a.agg = 1;
	int targc;
	char **targv = cs__nccl_translate(argc, argv, &targc);
	if (!targv)
		return nomem();
	int rc = parse(targc, targv, &a);
	free(targv);
	if (rc)
		return rc == 1 ? 0 : rc;
	cs_diag diag = { { 0 } };
	const char *outs[] = { a.json_file, a.plot };
	if (cs_cli_check_outputs("coll", outs, 2, (const char *const *)&a.scenario, 1, NULL) != 0)
		return CS_ERR_INPUT;
	cs_scenario *sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		return nomem();
	rc = make_cluster(&a, sc);
	if (rc) {
		free(sc);
		return rc == CS_ERR_INPUT ? 2 : 1;
	}
	cs_coll_spec spec;
	if (cs_hw_coll_spec(sc, &spec, &diag) != CS_OK) { /* the calibration's network */
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		free(sc);
		return 2;
	}
	cs_topo *topo = cs_topo_new(&sc->cluster);
	if (a.algo)
		spec.algorithm = (cs_coll_algo)a.algo;
	if (a.proto)
		spec.protocol = (cs_coll_proto)a.proto;
	cs_coll *coll = cs_coll_new(&sc->cluster, &spec);
	if (topo == NULL || coll == NULL) {
		cs_topo_free(topo);
		cs_coll_free(coll);
		free(sc);
		return nomem();
	}
	int64_t n;
	rc = ranks(&a, cs_topo_gpus(topo), sc->cluster.gpus_per_node, &n);
	if (rc)
		goto out;
	cs_group_shape g = cs_topo_group(topo, 0, 1, n);
	cs_coll_op op = (cs_coll_op)a.op;
	bool p2p = op == CS_COLL_ALL_TO_ALL || op == CS_COLL_SEND_RECV || op == CS_COLL_GATHER ||
		   op == CS_COLL_SCATTER;
	cs_nccl_run run = { .c = &sc->cluster,
			    .op = op,
			    .g = &g,
			    .n = n,
			    .min = a.min,
			    .max = a.max,
			    .factor = a.factor,
			    .stepbytes = a.stepbytes,
			    .dtype = a.dtype,
			    .redop = a.redop,
			    .all_dtypes = a.all_dtypes,
			    .all_redops = a.all_redops,
			    .root = a.root,
			    .nthreads = a.nthreads,
			    .ngpus = a.ngpus,
			    .warmup = a.warmup,
			    .iters = a.iters,
			    .agg = a.agg,
			    .check = a.check,
			    .graph = a.graph,
			    .unalign = a.unalign,
			    .blocking = a.blocking,
			    .cycles = a.cycles,
			    .parallel_init = a.parallel,
			    .cputime = a.cputime };
	if (cs_nccl_rows(&run) == 0) {
		int word = cs_nccl_dtype_bytes(a.dtype);
		bool per_rank = cs_nccl_per_rank(op);
		char ranks_of[48] = "";
		if (per_rank)
			snprintf(ranks_of, sizeof ranks_of, " on %lld ranks", (long long)n);
		fprintf(stderr,
			"clustersim coll: no size from '--minbytes' %.0f to '--maxbytes' %.0f holds one "
			"%s%s: "
			"%s%s needs at least %.0f bytes; raise '--maxbytes'\n",
			a.min, a.max, cs_nccl_dtype_name(a.dtype), per_rank ? " per rank" : "",
			cs_coll_op_name(op), ranks_of, (double)word * (per_rank ? (double)n : 1.0));
		rc = 2;
		goto out;
	}
	/* the JSON's args: the test, then the options (the TEST argument is args[0]) */
	char **opts = malloc((size_t)argc * sizeof *opts);
	if (!opts) {
		rc = nomem();
		goto out;
	}
	for (int i = 1; i < argc; i++)
		if (argv[i] != a.test)
			opts[run.argc++] = argv[i];
	run.argv = opts;
	output o = { &run, coll, p2p ? CS_ALGO_AUTO : (cs_coll_algo)a.algo };
	rc = a.json_file ? cs_cli_write("coll", a.json_file, write_json, &o) : 0;
	if (!rc && a.plot)
		rc = cs_cli_write("coll", a.plot, write_svg, &o);
	free(opts);
	if (rc)
		goto out;
	bool substituted = cs_nccl_write(stdout, a.json, &run, coll, o.asked);
	if (a.algo && p2p)
		fprintf(stderr, "clustersim coll: warning: '--algo' does not apply to %s (point to point)\n",
			cs_coll_op_name(op));
	else if (substituted)
		fprintf(stderr,
			"clustersim coll: warning: %s is not available for %s on this group at some "
			"sizes; those rows show what NCCL uses instead (the algorithm column)\n",
			cs_coll_algo_name((cs_coll_algo)a.algo), cs_coll_op_name(op));
	rc = 0;
out:
	cs_coll_free(coll);
	cs_topo_free(topo);
	free(sc);
	return rc;
}
