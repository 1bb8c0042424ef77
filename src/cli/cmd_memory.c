/*
 * cmd_memory.c - `clustersim memory`: the per-GPU training-memory
 * breakdown of a model under a parallel plan, and whether it fits the GPU.
 *
 * Starts from a scenario file (cs_scenario_load) or from the defaults, then
 * applies the flags, and prints cs_mem_per_gpu's breakdown for the worst
 * rank (the first pipeline stage) with report/memory_out.h.
 */
#include "cli/commands.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "clustersim/clustersim.h"
#include "config/config.h"
#include "model/memory.h"
#include "model/model.h"
#include "report/memory_out.h"

static const char usage[] =
	"usage: clustersim memory [SCENARIO.yaml] [--model PRESET] [--gpu PRESET]\n"
	"                         [--seq-len S] [--micro-batch B] [--tp T] [--pp P]\n"
	"                         [--dp D] [--cp C] [--zero 0|1|2|3]\n"
	"                         [--recompute none|selective|full] [--recompute-method M]\n"
	"                         [--recompute-num-layers N] [--recompute-modules LIST]\n"
	"                         [--recompute-every K] [--sequence-parallel]\n"
	"                         [--flash | --no-flash] [--format text|json]\n"
	"\n"
	"Prints the training memory of one GPU (the first pipeline stage, which\n"
	"holds the most activations): weights, gradients, optimizer state and\n"
	"activations, against the GPU's capacity. Flags override the scenario file;\n"
	"without one, --model is required and the GPU defaults to h100-sxm-80g.\n"
	"The plan is checked as 'clustersim run' checks it (tp divides the heads,\n"
	"cp the sequence, the layers cover the stages, ...).\n"
	"\n"
	"  --model PRESET         llama2-7b, llama3-8b, llama3-70b, llama3-405b, ...\n"
	"  --gpu PRESET           a100-sxm-80g, h100-sxm-80g, h200-sxm-141g, b200, gb200-nvl72, ...\n"
	"  --seq-len S            tokens per sequence (default 2048)\n"
	"  --micro-batch B        sequences per micro-batch (default 1)\n"
	"  --tp T --pp P --dp D --cp C   parallel degrees (default 1)\n"
	"  --zero Z               0 (DDP), 1 (optimizer), 2 (+ gradients), 3 (+ weights)\n"
	"  --recompute MODE       none, selective or full (default none)\n"
	"  --recompute-method M   with full: uniform (chunks of N layers) or block (the\n"
	"                         first N layers of each model chunk)\n"
	"  --recompute-num-layers N   with full: the N of the method (default 1)\n"
	"  --recompute-modules LIST   with selective: Megatron-LM's modules, comma-separated\n"
	"                         (core_attn, mlp, moe_act, layernorm, moe, shared_experts,\n"
	"                         mla_up_proj), or op for torchtitan's op policy\n"
	"  --recompute-every K    with selective: every K-th block whole (torchtitan)\n"
	"  --sequence-parallel    shard norms and dropout along the sequence (with --tp)\n"
	"  --flash, --no-flash    FlashAttention on (default) or off\n"
	"  --format text|json     output format (default text)\n"
	"  --help                 this text\n"
	"\n"
	"example:\n"
	"  clustersim memory --model llama3-8b --seq-len 8192 --micro-batch 2 --dp 8 --zero 2\n";

enum {
	O_MODEL = 1,
	O_GPU,
	O_SEQ,
	O_MB,
	O_TP,
	O_PP,
	O_DP,
	O_CP,
	O_ZERO,
	O_RECOMPUTE,
	O_RC_METHOD,
	O_RC_LAYERS,
	O_RC_MODULES,
	O_RC_EVERY,
	O_SP,
	O_FLASH,
	O_NO_FLASH,
	O_FORMAT,
	O_HELP
};

static const cs_opt mem_opts[] = {
	{ "model", 1, O_MODEL },
	{ "gpu", 1, O_GPU },
	{ "seq-len", 1, O_SEQ },
	{ "micro-batch", 1, O_MB },
	{ "tp", 1, O_TP },
	{ "pp", 1, O_PP },
	{ "dp", 1, O_DP },
	{ "cp", 1, O_CP },
	{ "zero", 1, O_ZERO },
	{ "recompute", 1, O_RECOMPUTE },
	{ "recompute-method", 1, O_RC_METHOD },
	{ "recompute-num-layers", 1, O_RC_LAYERS },
	{ "recompute-modules", 1, O_RC_MODULES },
	{ "recompute-every", 1, O_RC_EVERY },
	{ "sequence-parallel", 0, O_SP },
	{ "flash", 0, O_FLASH },
	{ "no-flash", 0, O_NO_FLASH },
	{ "format", 1, O_FORMAT },
	{ "help", 0, O_HELP },
	{ 0, 0, 0 },
};

typedef struct mem_cmd {
	FILE *out, *err;
	cs_scenario *sc;
	bool have_model, json;
} mem_cmd;

static int bad(mem_cmd *c, const char *fmt, const char *a, const char *b)
{
	fprintf(c->err, "clustersim memory: ");
	fprintf(c->err, fmt, a, b);
	fprintf(c->err, "\n(see 'clustersim memory --help')\n");
	return CS_ERR_INPUT;
}

static int parse_int(mem_cmd *c, const char *name, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	if (cs_args_parse_int(s, lo, hi, out)) {
		fprintf(c->err,
			"clustersim memory: bad value '%s' for '--%s' "
			"(an integer from %lld to %lld)\n(see 'clustersim memory --help')\n",
			s, name, (long long)lo, (long long)hi);
		return CS_ERR_INPUT;
	}
	return 0;
}

static int preset(mem_cmd *c, const char *what, const char *val, bool gpu)
{
	const char *names[64];
	size_t n = 0;
	for (; n < 64; n++) {
		names[n] = gpu ? cs_preset_gpu_name(n) : cs_preset_model_name(n);
		if (!names[n])
			break;
	}
	if (gpu) {
		const cs_gpu_spec *g = cs_preset_gpu(val);
		if (g) {
			c->sc->cluster.gpu = *g;
			if (!c->sc->path[0]) { /* no scenario: the GPU's server (an NVL72 tray of 4) */
				cs_cluster_spec server = { 0 };
				cs_preset_server_defaults(g, &server);
				c->sc->cluster.gpus_per_node = server.gpus_per_node;
			}
			return 0;
		}
	} else {
		const cs_model_spec *m = cs_preset_model(val);
		if (m) {
			c->sc->model = *m;
			c->have_model = true;
			return 0;
		}
	}
	const char *near = cs_suggest(val, names, n);
	char hint[96] = "";
	if (near)
		snprintf(hint, sizeof(hint), "; did you mean '%s'?", near);
	fprintf(c->err, "clustersim memory: unknown %s preset '%s'%s\n", what, val, hint);
	fprintf(c->err, "(see 'clustersim memory --help')\n");
	return CS_ERR_INPUT;
}

/* The scenario file, or the defaults with the GPU preset h100-sxm-80g. */
static int load_base(mem_cmd *c, const char *path)
{
	if (path) {
		cs_diag diag;
		cs_scenario *sc = NULL;
		cs_status st = cs_scenario_load(path, NULL, 0, &sc, &diag);
		if (st != CS_OK) {
			fprintf(c->err, "%s\n", CS_CLEAN(diag));
			return st;
		}
		c->sc = sc;
		c->have_model = true;
		return 0;
	}
	c->sc = calloc(1, sizeof(*c->sc));
	if (!c->sc) {
		fprintf(c->err, "clustersim memory: out of memory\n");
		return CS_ERR_NOMEM;
	}
	cs_config_defaults(c->sc);
	c->sc->parallel.dp = 1;
	return preset(c, "gpu", "h100-sxm-80g", true);
}

/* Apply option `id` (cs_args' name for it in `name`) with its value. */
static int set_option(mem_cmd *c, int id, const char *name, const char *val)
{
	cs_training_spec *t = &c->sc->training;
	cs_parallel_spec *p = &c->sc->parallel;
	int64_t x;
	int rc;

	switch (id) {
	case O_MODEL: return preset(c, "model", val, false);
	case O_GPU: return preset(c, "gpu", val, true);
	case O_SEQ: return parse_int(c, name, val, 1, (int64_t)1 << 40, &t->seq_len);
	case O_MB: return parse_int(c, name, val, 1, (int64_t)1 << 30, &t->micro_batch);
	case O_TP: return parse_int(c, name, val, 1, 1 << 20, &p->tp);
	case O_PP: return parse_int(c, name, val, 1, 1 << 20, &p->pp);
	case O_DP: return parse_int(c, name, val, 1, 1 << 30, &p->dp);
	case O_CP: return parse_int(c, name, val, 1, 1 << 20, &p->cp);
	case O_ZERO: {
		if ((rc = parse_int(c, name, val, 0, 3, &x)) != 0)
			return rc;
		static const cs_sharding stages[] = { CS_SHARD_NONE, CS_SHARD_ZERO1, CS_SHARD_ZERO2,
						      CS_SHARD_ZERO3 };
		p->sharding = stages[x];
		return 0;
	}
	case O_RECOMPUTE:
		if (strcmp(val, "none") == 0)
			p->recompute = CS_RECOMPUTE_NONE;
		else if (strcmp(val, "selective") == 0)
			p->recompute = CS_RECOMPUTE_SELECTIVE;
		else if (strcmp(val, "full") == 0)
			p->recompute = CS_RECOMPUTE_FULL;
		else
			return bad(c, "bad value '%s' for '--%s' (none, selective or full)", val, name);
		return 0;
	case O_RC_METHOD:
	case O_RC_LAYERS:
	case O_RC_MODULES:
	case O_RC_EVERY: {
		/* the scenario key's own setter, its checks and messages */
		static const char *const keys[] = { "parallelism.recompute_method",
						    "parallelism.recompute_layers",
						    "parallelism.recompute_modules",
						    "parallelism.recompute_every" };
		char a[600];
		cs_diag diag = { { 0 } };
		snprintf(a, sizeof a, "%s=%.500s", keys[id - O_RC_METHOD], val);
		if (cs_config_apply_override(c->sc, a, &diag) != CS_OK)
			return bad(c, "'--%s': %s", name, CS_CLEAN(diag));
		return 0;
	}
	case O_SP: p->sequence_parallel = true; return 0;
	case O_FLASH: p->flash_attention = true; return 0;
	case O_NO_FLASH: p->flash_attention = false; return 0;
	case O_FORMAT:
		if (strcmp(val, "text") != 0 && strcmp(val, "json") != 0)
			return bad(c, "bad value '%s' for '--%s' (text or json)", val, name);
		c->json = strcmp(val, "json") == 0;
		return 0;
	default: return bad(c, "unknown option '--%s'%s", name, "");
	}
}

/* The scenario file (or the defaults), then the flags on top of it, in
 * their order; options are read by the shared parser (cli/args.h). */
static int parse(mem_cmd *c, int argc, char **argv, bool *help)
{
	cs_args a;
	cs_args_init(&a, "memory", argc, argv);
	a.err = c->err;
	struct {
		int id;
		const char *name, *val;
	} *set = calloc((size_t)argc + 1, sizeof *set);
	const char *path = NULL, *val;
	char found[4096];
	int id, n = 0, rc = 0;
	if (!set) {
		fprintf(c->err, "clustersim memory: out of memory\n");
		return CS_ERR_NOMEM;
	}
	while ((id = cs_args_next(&a, mem_opts, &val)) != CS_ARGS_END) {
		if (id == CS_ARGS_ERROR) {
			rc = CS_ERR_INPUT;
			break;
		}
		if (id == O_HELP) {
			*help = true;
			continue;
		}
		if (id == CS_ARGS_POSITIONAL) {
			if (path) {
				rc = bad(c, "unexpected argument '%s'%s", val,
					 " (one scenario file at most)");
				break;
			}
			if (!(path = cs_cli_scenario_find(&a, val, found, sizeof found))) {
				rc = CS_ERR_INPUT;
				break;
			}
			continue;
		}
		set[n].id = id;
		set[n].name = mem_opts[id - 1].name;
		set[n++].val = val;
	}
	if (rc == 0 && !*help) {
		rc = load_base(c, path);
		for (int i = 0; rc == 0 && i < n; i++)
			rc = set_option(c, set[i].id, set[i].name, set[i].val);
		if (rc == 0 && !c->have_model)
			rc = bad(c, "no model: give a scenario file or '--%s PRESET'%s", "model", "");
	}
	free(set);
	return rc;
}

/* The plan checked as `run` checks it: on a copy whose cluster holds
 * exactly its GPUs and whose batch fills every replica (neither changes
 * the memory per GPU). 0, or 2 after printing the problem. */
static int check_plan(mem_cmd *c)
{
	cs_scenario *v = malloc(sizeof *v);
	if (!v) {
		fprintf(c->err, "clustersim memory: out of memory\n");
		return CS_ERR_NOMEM;
	}
	*v = *c->sc;
	const cs_parallel_spec *p = &v->parallel;
	int64_t gpus = p->tp * p->pp * p->dp * p->cp, gpn = v->cluster.gpus_per_node;
	if (gpn < 1 || gpus % gpn != 0) {
		gpn = gpus;
		v->cluster.gpus_per_node = (int)gpn;
		v->cluster.scale_up_domain = (int)gpn;
		v->cluster.nics_per_node = (int)gpn;
	}
	v->cluster.nodes = gpus / gpn;
	v->cluster.leaf_gpus = v->cluster.pod_gpus = (int64_t)gpus; /* one switch tier */
	int64_t replica = p->dp * v->training.micro_batch;
	if (replica > 0 && v->training.global_batch % replica != 0)
		v->training.global_batch = replica * (p->pp > 1 ? p->pp : 1);
	cs_diag diag = { { 0 } };
	cs_status st = cs_config_validate(v, &diag);
	free(v);
	if (st != CS_OK) {
		fprintf(c->err, "clustersim memory: %s\n", CS_CLEAN(diag));
		return st == CS_ERR_NOMEM ? CS_ERR_NOMEM : CS_ERR_INPUT;
	}
	return 0;
}

int cs_cmd_memory(int argc, char **argv)
{
	mem_cmd c = { .out = stdout, .err = stderr };
	bool help = false;
	int rc = parse(&c, argc, argv, &help);
	if (help && rc == 0) {
		fputs(usage, stdout);
		cs_scenario_free(c.sc);
		return 0;
	}
	if (rc == 0)
		rc = check_plan(&c);
	if (rc == 0) {
		const cs_scenario *sc = c.sc;
		cs_mem_breakdown r = cs_mem_per_gpu(&sc->model, &sc->training, &sc->parallel,
						    &sc->cluster.gpu, cs_cluster_shard_unit(&sc->cluster));
		if (c.json)
			cs_mem_write_json(c.out, sc, &r);
		else
			cs_mem_write_text(c.out, sc, &r);
	}
	cs_scenario_free(c.sc);
	return rc;
}
