/*
 * cmd_coll.c - `clustersim coll`: predicted nccl-tests rows for one
 * collective over a range of sizes, on a scenario's cluster or on a preset
 * server.
 */
#include "cli/commands.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/nccl_style.h"
#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/config.h"
#include "hw/files.h"
#include "config/scenario.h"
#include "hw/topo.h"
#include "report/nccl_out.h"

static const char usage[] =
	"usage: clustersim coll [SCENARIO.yaml] [--op OP] [-b SIZE] [-e SIZE] [-f F]\n"
	"                       [-g N] [-d TYPE] [-o REDOP] [--algo ALGO] [--proto PROTO]\n"
	"                       [--gpu PRESET --nodes N --gpus-per-node G]\n"
	"                       [--set KEY=VALUE] [--format text|json]\n"
	"\n"
	"Predicts nccl-tests' output for one collective on GPUs 0..N-1, in its\n"
	"format: the header, one row per size from -b to -e multiplying by -f\n"
	"(out-of-place and in-place alike), the average bus bandwidth, and the\n"
	"algorithm and protocol NCCL's tuner picks as two more columns. Scripts\n"
	"that read nccl-tests output read this, and 'clustersim calibrate\n"
	"--nccl-tests' reads it back.\n"
	"\n"
	"  --op OP             all_reduce (default), reduce_scatter, all_gather,\n"
	"                      all_to_all (alltoall), broadcast, reduce, gather,\n"
	"                      scatter or send_recv (sendrecv)\n"
	"  -b, --min SIZE      bytes as nccl-tests counts them; a bare K, M, G or T\n"
	"                      is binary as in nccl-tests (8K = 8192), or 8KB, 1MiB\n"
	"                      (default 8)\n"
	"  -e, --max SIZE      the largest size (default 128M)\n"
	"  -f, --factor F      size multiplier between rows, > 1 (default 2)\n"
	"  -g, --gpus N        group size (default: every GPU of the cluster)\n"
	"  -d, --dtype TYPE    float (default), half, bfloat16, double, int8, uint8,\n"
	"                      int32, uint32, int64, uint64, f8e4m3, f8e5m2\n"
	"  -o, --redop OP      sum (default), prod, min, max, avg: the redop column\n"
	"  -n, -w, -c N        nccl-tests' iterations, warm-up and check: accepted,\n"
	"                      no effect (nothing is measured)\n"
	"  --algo ALGO         ring, tree, nvls, nvls_tree, hierarchical, torus (a\n"
	"                      scenario with a torus) or auto; where it does not\n"
	"                      apply, a warning names what is used instead\n"
	"  --proto PROTO       ll, ll128, simple or auto\n"
	"  --gpu PRESET        without a scenario: the GPU's standard 8-GPU server\n"
	"                      (default h100-sxm-80g)\n"
	"  --nodes N           without a scenario: nodes (default 1)\n"
	"  --gpus-per-node G   without a scenario: GPUs per node (default 8)\n"
	"  --set KEY=VALUE     with a scenario: override one of its scalars, such as\n"
	"                      cluster.gpu.calibration (repeatable)\n"
	"  --format text|json  output format (default text)\n"
	"\n"
	"examples:\n"
	"  clustersim coll -b 8 -e 8G -f 2\n"
	"  clustersim coll --gpu a100-sxm-80g --nodes 4 -b 1G -e 1G --algo ring\n"
	"  clustersim coll scenarios/3d-llama3-70b-64gpu.yaml --op all_gather -g 16 --format json\n"
	"\n"
	"exit status: 0 success, 2 bad input\n";

#define CS_COLL_MAX_BYTES 1125899906842624.0 /* 1 PiB per rank: far beyond any GPU */
#define CS_COLL_MAX_ROWS 10000

enum {
	O_OP = 1, O_MIN, O_MAX, O_FACTOR, O_ALGO, O_PROTO, O_GPUS, O_GPU, O_NODES, O_GPN, O_FORMAT,
	O_SET, O_DTYPE, O_REDOP, O_ITERS, O_WARMUP, O_CHECK, O_HELP
};

static const cs_opt coll_opts[] = {
	{ "op", 1, O_OP }, { "min", 1, O_MIN }, { "max", 1, O_MAX }, { "factor", 1, O_FACTOR },
	{ "algo", 1, O_ALGO }, { "proto", 1, O_PROTO }, { "gpus", 1, O_GPUS }, { "gpu", 1, O_GPU },
	{ "nodes", 1, O_NODES }, { "gpus-per-node", 1, O_GPN }, { "format", 1, O_FORMAT },
	{ "set", 1, O_SET }, { "dtype", 1, O_DTYPE }, { "redop", 1, O_REDOP },
	{ "iters", 1, O_ITERS }, { "warmup-iters", 1, O_WARMUP }, { "check", 1, O_CHECK },
	{ "help", 0, O_HELP }, { 0, 0, 0 },
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
		fprintf(stderr, "clustersim coll: unknown %s '%s'; did you mean '%s'?\n", what, value,
			near);
	else
		fprintf(stderr, "clustersim coll: unknown %s '%s'\n", what, value);
	return -1;
}

static int parse_count(const char *opt, const char *s, int64_t *out)
{
	if (cs_args_parse_int(s, 1, INT64_MAX, out)) {
		bad("'%s' needs a positive integer, got '%s'", opt, s);
		return -1;
	}
	return 0;
}

typedef struct args {
	const char *scenario, *gpu;
	const char *sets[CS_ARGS_MAX_SETS];
	size_t nsets;
	int op, algo, proto, json, dtype, redop;
	double min, max, factor;
	int64_t gpus, nodes, gpn;
} args;

static int parse(int argc, char **argv, args *a)
{
	/* cs_coll_op's order, then nccl-tests' spellings of two */
	static const char *const ops[] = {"all_reduce", "reduce_scatter", "all_gather",
					  "all_to_all", "broadcast", "send_recv", "reduce", "gather",
					  "scatter", "alltoall", "sendrecv"};
	static const char *const redops[] = {"sum", "prod", "min", "max", "avg"};
	const char *dnames[32];
	int ndtypes = cs_nccl_dtypes();
	for (int i = 0; i < ndtypes; i++)
		dnames[i] = cs_nccl_dtype_name(i);
	const char *algos[CS_ALGO_COUNT], *protos[CS_PROTO_COUNT];
	for (int i = 0; i < CS_ALGO_COUNT; i++)
		algos[i] = cs_coll_algo_name((cs_coll_algo)i);
	for (int i = 0; i < CS_PROTO_COUNT; i++)
		protos[i] = cs_coll_proto_name((cs_coll_proto)i);
	static const char *const formats[] = {"text", "json"};
	char msg[256];
	cs_args ca;
	const char *v;
	int id;
	cs_args_init(&ca, "coll", argc, argv);
	while ((id = cs_args_next(&ca, coll_opts, &v)) != CS_ARGS_END) {
		int rc = 0;
		switch (id) {
		case CS_ARGS_ERROR:
			return CS_ERR_INPUT;
		case O_HELP:
			fputs(usage, stdout);
			return 1;
		case CS_ARGS_POSITIONAL:
			if (a->scenario)
				return bad("unexpected argument '%s' (scenario already '%s')", v, a->scenario);
			a->scenario = v;
			break;
		case O_OP:
			rc = pick("operation", v, ops, 11, &a->op);
			if (a->op == 9)
				a->op = CS_COLL_ALL_TO_ALL;
			else if (a->op == 10)
				a->op = CS_COLL_SEND_RECV;
			break;
		case O_DTYPE: rc = pick("data type", v, dnames, ndtypes, &a->dtype); break;
		case O_REDOP: rc = pick("reduction", v, redops, 5, &a->redop); break;
		case O_ITERS:
		case O_WARMUP:
		case O_CHECK: {
			int64_t ignored;
			if (cs_args_parse_int(v, 0, INT64_MAX, &ignored))
				return bad("'%s' needs a whole number, got '%s'",
					   id == O_ITERS ? "-n" : id == O_WARMUP ? "-w" : "-c", v);
			break;
		}
		case O_ALGO: rc = pick("algorithm", v, algos, CS_ALGO_COUNT, &a->algo); break;
		case O_PROTO: rc = pick("protocol", v, protos, CS_PROTO_COUNT, &a->proto); break;
		case O_FORMAT: rc = pick("format", v, formats, 2, &a->json); break;
		case O_MIN:
		case O_MAX:
			if (cs__nccl_size(v, id == O_MIN ? &a->min : &a->max, msg, sizeof(msg)))
				return bad("'--%s': %s", coll_opts[id - 1].name, msg);
			break;
		case O_FACTOR: {
			char *end;
			a->factor = strtod(v, &end);
			if (*end || end == v || !(a->factor > 1) || a->factor > 1e6)
				return bad("'--factor' needs a number > 1, got '%s'%s", v, "");
			break;
		}
		case O_GPUS: rc = parse_count("--gpus", v, &a->gpus); break;
		case O_NODES: rc = parse_count("--nodes", v, &a->nodes); break;
		case O_GPN: rc = parse_count("--gpus-per-node", v, &a->gpn); break;
		case O_GPU: a->gpu = v; break;
		case O_SET:
			if (a->nsets == CS_ARGS_MAX_SETS)
				return bad("more than %s '--set' options%s", "256", "");
			a->sets[a->nsets++] = v;
			break;
		}
		if (rc)
			return CS_ERR_INPUT;
	}
	if (a->min > a->max)
		return bad("'--min' is larger than '--max'%s%s", "", "");
	if (a->max > CS_COLL_MAX_BYTES) {
		char got[48];
		snprintf(got, sizeof got, "%.4g", a->max);
		return bad("'--max' must be at most 1 PiB (1125899906842624 bytes), got %s bytes%s",
			   got, "");
	}
	if (log(a->max / a->min) / log(a->factor) + 1 > CS_COLL_MAX_ROWS)
		return bad("more than 10000 rows from '--min' to '--max' by '--factor'; raise the "
			   "factor or narrow the range%s%s", "", "");
	if (a->nsets && !a->scenario)
		return bad("'--set' needs a scenario to override%s%s", "", "");
	if (a->min < 1)
		return bad("'--min' must be at least 1 byte%s%s", "", "");
	return 0;
}

/* The cluster from the scenario file or from a preset server. */
static int make_cluster(const args *a, cs_scenario *sc)
{
	if (a->scenario) {
		if (a->gpu || a->nodes || a->gpn)
			return bad("'--gpu', '--nodes' and '--gpus-per-node' do not apply with a "
				   "scenario ('%s')%s", a->scenario, "");
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
	if (a->gpn > INT_MAX || sc->cluster.nodes > CS_CONFIG_MAX_GPUS / (gpn > 0 ? gpn : 1))
	{
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

int cs_cmd_coll(int argc, char **argv)
{
	args a = {0};
	a.min = 8;
	a.max = 128.0 * 1024 * 1024;
	a.factor = 2;
	int targc;
	char **targv = cs__nccl_translate(argc, argv, &targc);
	if (!targv)
		return CS_ERR_NOMEM;
	int rc = parse(targc, targv, &a);
	free(targv);
	if (rc)
		return rc == 1 ? 0 : rc;
	cs_scenario *sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		return CS_ERR_NOMEM;
	rc = make_cluster(&a, sc);
	if (rc) {
		free(sc);
		return rc;
	}
	cs_coll_spec spec;
	cs_diag diag;
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
		return CS_ERR_NOMEM;
	}
	int64_t gpus = cs_topo_gpus(topo);
	if (a.gpus > gpus) {
		char have[32];
		snprintf(have, sizeof(have), "%lld", (long long)gpus);
		rc = bad("'--gpus' exceeds the cluster's %s GPUs%s", have, "");
		goto out;
	}
	int64_t n = a.gpus ? a.gpus : gpus;
	cs_group_shape g = cs_topo_group(topo, 0, 1, n);
	cs_coll_op op = (cs_coll_op)a.op;
	static const char *const redops[] = {"sum", "prod", "min", "max", "avg"};
	bool p2p = op == CS_COLL_ALL_TO_ALL || op == CS_COLL_SEND_RECV || op == CS_COLL_GATHER ||
		   op == CS_COLL_SCATTER;
	cs_nccl_run run = { .c = &sc->cluster, .op = op, .g = &g, .n = n, .min = a.min, .max = a.max,
			    .factor = a.factor, .dtype = a.dtype, .redop = redops[a.redop] };
	bool substituted = cs_nccl_write(stdout, a.json, &run, coll,
					 p2p ? CS_ALGO_AUTO : (cs_coll_algo)a.algo);
	if (a.algo && p2p)
		fprintf(stderr, "clustersim coll: warning: '--algo' does not apply to %s (point to point)\n",
			cs_coll_op_name(op));
	else if (substituted)
		fprintf(stderr, "clustersim coll: warning: %s is not available for %s on this group at some "
			"sizes; those rows show what NCCL uses instead (the algorithm column)\n",
			cs_coll_algo_name((cs_coll_algo)a.algo), cs_coll_op_name(op));
	rc = 0;
out:
	cs_coll_free(coll);
	cs_topo_free(topo);
	free(sc);
	return rc;
}
