/*
 * test_megatron.c - `plan --format megatron`'s command lines against
 * Megatron-LM: every flag written is one its parser defines
 * (tests/data/megatron/flags.txt, read from megatron/training/arguments.py),
 * with a value where it takes one and one of its choices where it lists
 * them; the combination passes the rules of its validate_args and
 * TransformerConfig; the line reproduces the plan simulated (its degrees,
 * batch, precision, overlap, sharding and the layers of every virtual
 * stage); plans with the same line are merged.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "config/config.h"
#include "program/build.h"
#include "report/megatron_out.h"
#include "report/plan_out.h"
#include "study/planner.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define MAX_TOK 256

/* ---- Megatron-LM's options (tests/data/megatron/flags.txt) --------------- */

typedef struct mflag {
	char name[512];
	char arity[512]; /* "" no value, "VALUE", or choices joined with '|' */
} mflag;

static mflag *flags;
static int nflags;

static void load_flags(void)
{
	if (flags)
		return;
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/data/megatron/flags.txt", CS_SOURCE_ROOT);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open '%s'", path);
	char buf[512];
	int cap = 0;
	while (fgets(buf, sizeof buf, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		if (!buf[0])
			continue;
		if (nflags == cap) {
			cap = cap ? 2 * cap : 1024;
			flags = realloc(flags, (size_t)cap * sizeof *flags);
			ck_assert_ptr_nonnull(flags);
		}
		mflag *m = &flags[nflags++];
		char *sp = strchr(buf, ' ');
		snprintf(m->arity, sizeof m->arity, "%s", sp ? sp + 1 : "");
		if (sp)
			*sp = '\0';
		snprintf(m->name, sizeof m->name, "%s", buf);
	}
	fclose(f);
	ck_assert_int_gt(nflags, 500);
}

static const mflag *find_flag(const char *name)
{
	for (int i = 0; i < nflags; i++)
		if (strcmp(flags[i].name, name) == 0)
			return &flags[i];
	return NULL;
}

static bool in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);
	for (const char *p = choices; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && strncmp(p, v, n) == 0)
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

/* ---- a command line, as the shell splits it ----------------------------- */

typedef struct cmd {
	char tok[MAX_TOK][512];
	int n;
	int first;   /* the first token after pretrain_gpt.py */
} cmd;

static void split_line(const char *line, cmd *c)
{
	memset(c, 0, sizeof *c);
	const char *p = line;
	while (*p) {
		if (*p == ' ' || *p == '\n' || (*p == '\\' && p[1] == '\n')) {
			p += *p == '\\' ? 2 : 1;
			continue;
		}
		ck_assert_int_lt(c->n, MAX_TOK);
		size_t len = 0;
		char *t = c->tok[c->n++];
		while (*p && *p != ' ' && *p != '\n') {
			if (*p == '\'') {
				for (p++; *p && *p != '\''; p++)
					t[len++] = *p;
				ck_assert_msg(*p == '\'', "unclosed quote in: %s", line);
				p++;
				continue;
			}
			ck_assert_msg(*p != '\\' && *p != '"', "a character the shell reads: %s", line);
			t[len++] = *p++;
		}
		t[len] = '\0';
	}
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->tok[i], "pretrain_gpt.py") == 0)
			c->first = i + 1;
	ck_assert_msg(c->first > 0, "no pretrain_gpt.py in: %s", line);
}

static int at(const cmd *c, const char *flag)
{
	for (int i = c->first; i < c->n; i++)
		if (strcmp(c->tok[i], flag) == 0)
			return i;
	return -1;
}

static bool has(const cmd *c, const char *flag)
{
	return at(c, flag) >= 0;
}

static long long num(const cmd *c, const char *flag, long long dflt)
{
	int i = at(c, flag);
	return i < 0 || i + 1 >= c->n ? dflt : atoll(c->tok[i + 1]);
}

static const char *val(const cmd *c, const char *flag, const char *dflt)
{
	int i = at(c, flag);
	return i < 0 || i + 1 >= c->n ? dflt : c->tok[i + 1];
}

/* Every token after pretrain_gpt.py: a flag Megatron-LM defines, with a
 * value where it takes one, one of its choices where it lists them, and
 * none where it takes none; no flag twice. */
static void check_vocabulary(const cmd *c, const char *line)
{
	for (int i = c->first; i < c->n; i++) {
		const char *t = c->tok[i];
		ck_assert_msg(strncmp(t, "--", 2) == 0, "'%s' is not an option: %s", t, line);
		const mflag *m = find_flag(t);
		ck_assert_msg(m != NULL, "Megatron-LM has no option '%s': %s", t, line);
		for (int j = c->first; j < i; j++)
			ck_assert_msg(strcmp(c->tok[j], t) != 0, "'%s' given twice: %s", t, line);
		bool value = i + 1 < c->n && strncmp(c->tok[i + 1], "--", 2) != 0;
		if (!m->arity[0]) {
			ck_assert_msg(!value, "'%s' takes no value: %s", t, line);
			continue;
		}
		ck_assert_msg(value, "'%s' needs a value: %s", t, line);
		if (strcmp(m->arity, "VALUE") != 0)
			ck_assert_msg(in_choices(m->arity, c->tok[i + 1]), "'%s %s' is not one of %s: %s",
				      t, c->tok[i + 1], m->arity, line);
		i++;
		/* a list field of a config dataclass takes one value or more
		 * (argument_utils.py: nargs "+"); flags.txt does not say which */
		if (strcmp(t, "--recompute-modules") == 0)
			while (i + 1 < c->n && strncmp(c->tok[i + 1], "--", 2) != 0)
				i++;
	}
	/* before pretrain_gpt.py: environment, torchrun and its two counts */
	int k = 0;
	while (k < c->first && strchr(c->tok[k], '='))
		k++;
	ck_assert_str_eq(c->tok[k], "torchrun");
	ck_assert_str_eq(c->tok[k + 1], "--nnodes");
	ck_assert_str_eq(c->tok[k + 3], "--nproc-per-node");
	ck_assert_int_eq(k + 6, c->first);
}

static bool env_connections_1(const cmd *c)
{
	for (int k = 0; k < c->first && strchr(c->tok[k], '='); k++)
		if (strcmp(c->tok[k], "CUDA_DEVICE_MAX_CONNECTIONS=1") == 0)
			return true;
	return false;
}

/* ---- Megatron-LM's layer split, from the flags ---------------------------- */

/* Drop the commas and unroll "(x)*n" and "x*n" as
 * PipelineParallelLayerLayout.parse_str_to_list does, into out. */
static void unroll(const char *in, char *out, size_t n)
{
	char a[8192], b[8192];
	size_t k = 0;
	for (const char *p = in; *p && k + 1 < sizeof a; p++)
		if (*p != ',')   /* cosmetic */
			a[k++] = *p;
	a[k] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		size_t w = 0;
		for (const char *p = a; *p;) {
			const char *body = p, *end = p + 1;
			if (pass == 0 && *p == '(') {
				const char *close = strchr(p, ')');
				ck_assert_ptr_nonnull(close);
				body = p + 1;
				end = close + 1;
			}
			if (*end == '*' && (pass == 1 || *p == '(')) {
				int r = atoi(end + 1);
				size_t len = (size_t)(end - body) - (pass == 0);
				for (int i = 0; i < r; i++)
					for (size_t j = 0; j < len; j++)
						b[w++] = body[j];
				end++;
				while (*end >= '0' && *end <= '9')
					end++;
				p = end;
				continue;
			}
			b[w++] = *p++;
			ck_assert_uint_lt(w, sizeof b);
		}
		b[w] = '\0';
		memcpy(a, b, w + 1);
	}
	snprintf(out, n, "%s", a);
}

/* The decoder layers of each virtual stage as Megatron-LM builds them from
 * the command line; returns the virtual stages. */
static int64_t megatron_layers(const cmd *c, int64_t L, int64_t *cnt, const char *line)
{
	int64_t pp = num(c, "--pipeline-model-parallel-size", 1);
	int64_t v = num(c, "--num-virtual-stages-per-pipeline-rank", 1);
	int e = has(c, "--account-for-embedding-in-pipeline-split");
	int l = has(c, "--account-for-loss-in-pipeline-split");
	int64_t first = num(c, "--decoder-first-pipeline-num-layers", 0);
	int64_t last = num(c, "--decoder-last-pipeline-num-layers", 0);
	const char *layout = val(c, "--pipeline-model-parallel-layout", NULL);

	if (layout) {
		char u[8192];
		unroll(layout, u, sizeof u);
		ck_assert_msg(u[0] == 'E' && u[strlen(u) - 1] == 'L', "layout '%s' must open with E "
			      "and close with L: %s", layout, line);
		int64_t V = 0, t = 0;
		cnt[0] = 0;
		for (const char *p = u; *p; p++) {
			if (*p == '|') {
				cnt[++V] = 0;
				continue;
			}
			ck_assert_msg(*p == 't' || *p == 'E' || *p == 'L', "layout '%s': %c", layout, *p);
			if (*p == 't') {
				cnt[V]++;
				t++;
			}
			ck_assert_msg((*p != 'E' || p == u) && (*p != 'L' || !p[1]), "layout '%s'", layout);
		}
		V++;
		ck_assert_msg(V % pp == 0, "layout of %lld stages for pp %lld: %s", (long long)V,
			      (long long)pp, line);
		ck_assert_msg(t == L, "layout of %lld layers for %lld: %s", (long long)t,
			      (long long)L, line);
		return V;
	}
	int64_t V = pp * v;
	if (first || last) {
		/* transformer_config.py: uneven PP */
		int64_t mid = L, nmid = pp;
		if (first) {
			ck_assert_msg(first > 0 && first % v == 0, "first stage %lld: %s",
				      (long long)first, line);
			mid -= first;
			nmid--;
		}
		if (last) {
			ck_assert_msg(last > 0 && last % v == 0, "last stage %lld: %s", (long long)last, line);
			mid -= last;
			nmid--;
		}
		ck_assert_msg((mid != 0) == (nmid != 0), "middle layers without stages: %s", line);
		if (nmid)
			ck_assert_msg(mid % nmid == 0 && (mid / nmid) % v == 0, "middle layers %lld over "
				      "%lld stages: %s", (long long)mid, (long long)nmid, line);
		for (int64_t k = 0; k < V; k++) {
			int64_t r = k % pp;
			cnt[k] = r == 0 && first ? first / v : r == pp - 1 && last ? last / v
										     : mid / nmid / v;
		}
		return V;
	}
	/* arguments.py: divisible by pp, and each rank's by v (TransformerConfig) */
	int64_t units = L + e + l;
	ck_assert_msg(units % pp == 0, "%lld layers over pp %lld: %s", (long long)units,
		      (long long)pp, line);
	ck_assert_msg((units / pp) % v == 0, "%lld layers a rank over %lld chunks: %s",
		      (long long)(units / pp), (long long)v, line);
	for (int64_t k = 0; k < V; k++)
		cnt[k] = units / V;
	cnt[0] -= e;
	cnt[V - 1] -= l;
	return V;
}

/* ---- validate_args and TransformerConfig's rules -------------------------- */

static void check_rules(const cmd *c, const cs_scenario *sc, const char *line)
{
	int64_t pp = num(c, "--pipeline-model-parallel-size", 1);
	int64_t ep = num(c, "--expert-model-parallel-size", 1);
	int64_t tp = num(c, "--tensor-model-parallel-size", 1);
	int64_t cp = num(c, "--context-parallel-size", 1);
	bool fsdp2 = has(c, "--use-torch-fsdp2"), mfsdp = has(c, "--use-megatron-fsdp");
	bool distopt = has(c, "--use-distributed-optimizer");
	const char *ckpt = val(c, "--ckpt-format", "torch_dist");

	if (fsdp2) {
		ck_assert_msg(pp == 1, "--use-torch-fsdp2 with pipeline parallelism: %s", line);
		ck_assert_msg(ep == 1, "--use-torch-fsdp2 with expert parallelism: %s", line);
		ck_assert_msg(!distopt, "--use-torch-fsdp2 with the distributed optimizer: %s", line);
		ck_assert_msg(has(c, "--no-gradient-accumulation-fusion"), "--use-torch-fsdp2 with "
			      "gradient accumulation fusion: %s", line);
		ck_assert_msg(strcmp(ckpt, "torch_dist") == 0 || strcmp(ckpt, "torch_dcp") == 0,
			      "--use-torch-fsdp2 with --ckpt-format %s: %s", ckpt, line);
		ck_assert_msg(has(c, "--untie-embeddings-and-output-weights"), "--use-torch-fsdp2 "
			      "with tied embeddings: %s", line);
		ck_assert_msg(!has(c, "--fp16"), "--use-torch-fsdp2 with fp16: %s", line);
		ck_assert_msg(!sc->model.tied_embeddings, "untied for FSDP2 a model simulated tied: %s",
			      line);
	}
	ck_assert_msg(!(fsdp2 && mfsdp), "two FSDPs: %s", line);
	if (mfsdp)
		ck_assert_msg(strcmp(ckpt, "fsdp_dtensor") == 0, "Megatron-FSDP needs --ckpt-format "
			      "fsdp_dtensor: %s", line);
	if (has(c, "--overlap-param-gather")) {
		ck_assert_msg(distopt || mfsdp, "--overlap-param-gather without a sharded optimizer: %s",
			      line);
		ck_assert_msg(has(c, "--overlap-grad-reduce"), "--overlap-param-gather without "
			      "--overlap-grad-reduce: %s", line);
	}
	if (has(c, "--fp8-param-gather"))
		ck_assert_msg(distopt || fsdp2 || mfsdp, "--fp8-param-gather without a sharded "
			      "optimizer: %s", line);
	ck_assert_msg(!(has(c, "--fp16") && has(c, "--bf16")), "fp16 and bf16: %s", line);
	if (has(c, "--tp-comm-overlap"))
		ck_assert_msg(has(c, "--sequence-parallel"), "--tp-comm-overlap without sequence "
			      "parallelism: %s", line);
	if (has(c, "--sequence-parallel"))
		ck_assert_msg(tp > 1, "sequence parallelism that tp 1 switches off: %s", line);
	int vpp_args = has(c, "--num-layers-per-virtual-pipeline-stage") +
		       has(c, "--num-virtual-stages-per-pipeline-rank") +
		       has(c, "--pipeline-model-parallel-layout");
	ck_assert_msg(vpp_args <= 1, "more than one way of giving virtual stages: %s", line);
	bool uneven = has(c, "--decoder-first-pipeline-num-layers") ||
		      has(c, "--decoder-last-pipeline-num-layers");
	bool account = has(c, "--account-for-embedding-in-pipeline-split") ||
		       has(c, "--account-for-loss-in-pipeline-split");
	ck_assert_msg(!(uneven && account), "uneven stages with accounting: %s", line);
	if (has(c, "--pipeline-model-parallel-layout"))
		ck_assert_msg(!uneven && !account, "a layout with other split flags: %s", line);
	if (has(c, "--num-virtual-stages-per-pipeline-rank") &&
	    num(c, "--num-virtual-stages-per-pipeline-rank", 1) > 1)
		ck_assert_msg(pp > 2 || (pp > 1 && !has(c, "--no-overlap-p2p-communication")),
			      "interleaving on pp %lld: %s", (long long)pp, line);
	/* tensor or context parallelism before Blackwell */
	if ((tp > 1 || cp > 1) && sc->cluster.gpu.arch < 100 && !fsdp2 && !mfsdp)
		ck_assert_msg(env_connections_1(c), "tp/cp without CUDA_DEVICE_MAX_CONNECTIONS=1: %s",
			      line);
	if (fsdp2 || mfsdp)
		ck_assert_msg(!env_connections_1(c), "FSDP with CUDA_DEVICE_MAX_CONNECTIONS=1: %s", line);
}

/* ---- the plan simulated --------------------------------------------------- */

static void check_plan(const cmd *c, const cs_scenario *sc, const cs_plan *p, const char *line)
{
	cs_scenario *run = malloc(sizeof *run);
	cs_plan_layout *lay = malloc(sizeof *lay);
	int64_t *cnt = malloc(4096 * sizeof *cnt);
	cs_diag diag;
	ck_assert(run && lay && cnt);
	cs__plan_fill(sc, p, run);
	ck_assert_msg(cs_plan_layout_init(lay, run, &diag) == CS_OK, "%s", diag.msg);

	ck_assert_int_eq(num(c, "--tensor-model-parallel-size", 1), p->tp);
	ck_assert_int_eq(num(c, "--pipeline-model-parallel-size", 1), p->pp);
	ck_assert_int_eq(num(c, "--context-parallel-size", 1), p->cp);
	ck_assert_int_eq(num(c, "--expert-model-parallel-size", 1), p->ep);
	ck_assert_int_eq(num(c, "--micro-batch-size", 0), p->micro_batch);
	ck_assert_int_eq(num(c, "--global-batch-size", 0), run->training.global_batch);
	ck_assert_int_eq(num(c, "--seq-length", 0), run->training.seq_len);
	ck_assert_int_eq(has(c, "--sequence-parallel"), p->tp > 1);
	/* torchrun's processes: the values of --nnodes and --nproc-per-node */
	ck_assert_int_eq(atoll(c->tok[c->first - 4]) * atoll(c->tok[c->first - 2]),
			 p->tp * p->pp * p->cp * p->dp);
	const cs_parallel_spec *q = &run->parallel;
	bool titan = q->recompute == CS_RECOMPUTE_SELECTIVE && (q->recompute_every > 0 || (q->recompute_modules & CS_RCM_OP));
	const char *rg = val(c, "--recompute-granularity", "none");
	ck_assert_str_eq(rg, titan ? "none" : cs_recompute_name(p->recompute));
	/* full: its method and layers, as TransformerConfig requires them */
	ck_assert_int_eq(has(c, "--recompute-method"), q->recompute == CS_RECOMPUTE_FULL);
	if (q->recompute == CS_RECOMPUTE_FULL) {
		ck_assert_str_eq(val(c, "--recompute-method", ""), cs_recompute_method_name(q->recompute_method));
		ck_assert_int_eq(num(c, "--recompute-num-layers", 0), q->recompute_layers);
	}
	ck_assert_int_eq(has(c, "--recompute-modules"),
			 q->recompute == CS_RECOMPUTE_SELECTIVE && !titan && q->recompute_modules != CS_RCM_CORE_ATTN);

	/* precision */
	cs_precision pr = run->training.precision;
	ck_assert_int_eq(has(c, "--bf16"), pr == CS_PREC_BF16 || cs_prec_is_low(pr));
	ck_assert_int_eq(has(c, "--fp16"), pr == CS_PREC_FP16);
	ck_assert_int_eq(has(c, "--fp8-format"),
			 cs_prec_is_fp8(pr) || pr == CS_PREC_MXFP8 || pr == CS_PREC_FP8_CURRENT);
	ck_assert_str_eq(val(c, "--fp8-recipe", "none"), cs_prec_is_fp8(pr)	       ? "delayed"
							 : pr == CS_PREC_MXFP8	       ? "mxfp8"
							 : pr == CS_PREC_FP8_CURRENT ? "tensorwise"
										     : "none");
	ck_assert_int_eq(has(c, "--fp4-format"), pr == CS_PREC_NVFP4);
	ck_assert_int_eq(has(c, "--no-gradient-accumulation-fusion"),
			 run->training.grad_accum == CS_GRAD_ACCUM_SEPARATE);

	/* sharding: DDP, the distributed optimizer (ZeRO-1), Megatron-FSDP's
	 * strategies (ZeRO-2, ZeRO-3) or FSDP2 (ZeRO-3) */
	const char *strat = has(c, "--use-megatron-fsdp")
		? val(c, "--data-parallel-sharding-strategy", "optim_grads_params") : NULL;
	switch (p->sharding) {
	case CS_SHARD_NONE:
		ck_assert(!has(c, "--use-distributed-optimizer") && !strat && !has(c, "--use-torch-fsdp2"));
		break;
	case CS_SHARD_ZERO1:
		ck_assert(has(c, "--use-distributed-optimizer"));
		break;
	case CS_SHARD_ZERO2:
	case CS_SHARD_GRAD_OP:
		ck_assert_msg(strat && strcmp(strat, "optim_grads") == 0, "%s", line);
		break;
	default:
		ck_assert_msg(has(c, "--use-torch-fsdp2") || (strat && strcmp(strat, "optim_grads_params") == 0),
			      "%s", line);
		break;
	}
	if (strat) {
		cs_precision gd = run->training.grad_dtype;
		ck_assert_str_eq(val(c, "--megatron-fsdp-main-grads-dtype", "auto"),
				 gd == CS_PREC_FP32 ? "fp32" : gd == CS_PREC_FP16 ? "fp16" : "bf16");
	} else if (!has(c, "--use-torch-fsdp2")) {
		ck_assert_int_eq(has(c, "--grad-reduce-in-bf16"), run->training.grad_dtype == CS_PREC_BF16 &&
				 (pr == CS_PREC_BF16 || cs_prec_is_low(pr)));
	}
	bool dpc = p->dp * p->cp > 1 && !has(c, "--use-torch-fsdp2");
	ck_assert_int_eq(has(c, "--overlap-grad-reduce"), dpc && run->parallel.overlap_grad_reduce);
	ck_assert_int_eq(has(c, "--overlap-param-gather"), dpc && p->sharding != CS_SHARD_NONE &&
			 run->parallel.overlap_grad_reduce && run->parallel.overlap_param_gather);

	/* the layers of every virtual stage */
	int64_t V = megatron_layers(c, run->model.layers, cnt, line);
	ck_assert_int_eq(V, lay->vstages);
	for (int64_t k = 0; k < V; k++)
		ck_assert_msg(cnt[k] == lay->nlayers[k], "virtual stage %lld: %lld layers by the "
			      "flags, %lld simulated: %s", (long long)k, (long long)cnt[k],
			      (long long)lay->nlayers[k], line);
	free(run);
	free(lay);
	free(cnt);
}

/* ---- the cases ------------------------------------------------------------ */

typedef struct mcase {
	const char *name;
	const char *sets[8];      /* on Llama 2 7B on 4 x 8 H100 */
	int64_t tp, pp, cp, ep, v, mb;
	cs_sharding sharding;
	cs_recompute recompute;
	const char *want[6];      /* flags the line must hold */
	const char *refuse[4];    /* flags it must not */
	bool noted;               /* a note says what no flag says */
	bool unrunnable;
} mcase;

static const mcase cases[] = {
	{ "ddp overlaps its reductions", {0}, 1, 1, 1, 1, 1, 1, CS_SHARD_NONE, CS_RECOMPUTE_NONE,
	  {"--bf16", "--overlap-grad-reduce"}, {"--overlap-param-gather", "--use-distributed-optimizer"},
	  false, false },
	{ "zero1 is the distributed optimizer", {0}, 2, 1, 1, 1, 1, 1, CS_SHARD_ZERO1,
	  CS_RECOMPUTE_SELECTIVE, {"--use-distributed-optimizer", "--overlap-param-gather",
	  "--sequence-parallel"}, {"--use-megatron-fsdp"}, false, false },
	{ "zero2 is megatron-fsdp's optim_grads", {0}, 1, 1, 1, 1, 1, 2, CS_SHARD_ZERO2,
	  CS_RECOMPUTE_NONE, {"--use-megatron-fsdp", "--data-parallel-sharding-strategy"},
	  {"--use-distributed-optimizer"}, false, false },
	{ "zero3 on pp 1 is fsdp2 with its required flags",
	  {"training.grad_accumulation=separate"}, 2, 1, 1, 1, 1, 1, CS_SHARD_ZERO3,
	  CS_RECOMPUTE_NONE, {"--use-torch-fsdp2", "--untie-embeddings-and-output-weights",
	  "--no-gradient-accumulation-fusion"}, {"--overlap-grad-reduce"}, false, false },
	{ "zero3 on pp 2 is megatron-fsdp, not fsdp2", {"training.grad_accumulation=separate"},
	  1, 2, 1, 1, 1, 1, CS_SHARD_ZERO3, CS_RECOMPUTE_NONE, {"--use-megatron-fsdp"},
	  {"--use-torch-fsdp2"}, false, false },
	{ "zero3 with fused accumulation is megatron-fsdp", {0}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO3,
	  CS_RECOMPUTE_NONE, {"--use-megatron-fsdp"}, {"--use-torch-fsdp2"}, false, false },
	{ "zero3 in fp16 is megatron-fsdp", {"training.precision=fp16",
	  "training.grad_accumulation=separate"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO3,
	  CS_RECOMPUTE_FULL, {"--fp16", "--use-megatron-fsdp"}, {"--use-torch-fsdp2", "--bf16"},
	  false, false },
	{ "zero3 of a tied model is megatron-fsdp", {"model.tied_embeddings=true",
	  "training.grad_accumulation=separate"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO3,
	  CS_RECOMPUTE_NONE, {"--use-megatron-fsdp"}, {"--use-torch-fsdp2"}, false, false },
	{ "fp8 recipe with fp8 weights gathered", {"training.precision=fp8",
	  "training.fp8.params=true"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1, CS_RECOMPUTE_NONE,
	  {"--bf16", "--fp8-format", "--fp8-recipe", "--fp8-param-gather"}, {0}, false, false },
	{ "fp8 weights under ddp are noted", {"training.precision=fp8", "training.fp8.params=true"},
	  1, 1, 1, 1, 1, 1, CS_SHARD_NONE, CS_RECOMPUTE_NONE, {"--fp8-format"},
	  {"--fp8-param-gather"}, true, false },
	{ "fp8 current scaling with its weights gathered", {"training.precision=fp8-current",
	  "training.fp8.params=true"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1, CS_RECOMPUTE_NONE,
	  {"--bf16", "--fp8-format", "--fp8-recipe", "--fp8-param-gather"}, {"--fp4-format"}, false,
	  false },
	{ "mxfp8 recipe with its weights gathered", {"cluster.gpu=b200", "training.precision=mxfp8",
	  "training.fp8.params=true"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1, CS_RECOMPUTE_NONE,
	  {"--bf16", "--fp8-format", "--fp8-recipe", "--fp8-param-gather"}, {"--fp4-format"}, false,
	  false },
	{ "nvfp4 recipe with its weights gathered", {"cluster.gpu=b200", "training.precision=nvfp4",
	  "training.fp8.params=true"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1, CS_RECOMPUTE_NONE,
	  {"--bf16", "--fp4-format", "--fp4-recipe", "--fp4-param-gather"}, {"--fp8-format"}, false,
	  false },
	{ "nvfp4 weights under ddp are noted", {"cluster.gpu=b200", "training.precision=nvfp4",
	  "training.fp8.params=true"}, 1, 1, 1, 1, 1, 1, CS_SHARD_NONE, CS_RECOMPUTE_NONE,
	  {"--fp4-format"}, {"--fp4-param-gather"}, true, false },
	{ "fp32 has no precision flag", {"training.precision=fp32", "training.grad_dtype=fp32"},
	  1, 1, 1, 1, 1, 1, CS_SHARD_NONE, CS_RECOMPUTE_NONE, {0},
	  {"--bf16", "--fp16", "--grad-reduce-in-bf16"}, false, false },
	{ "fp32 gradients are megatron's default", {"training.grad_dtype=fp32"}, 1, 1, 1, 1, 1, 1,
	  CS_SHARD_ZERO1, CS_RECOMPUTE_NONE, {"--bf16"}, {"--grad-reduce-in-bf16"}, false, false },
	{ "gathers overlapped without reductions are noted",
	  {"parallelism.data_parallel.overlap=false"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1,
	  CS_RECOMPUTE_NONE, {"--use-distributed-optimizer"},
	  {"--overlap-grad-reduce", "--overlap-param-gather"}, true, false },
	{ "nothing overlapped", {"parallelism.data_parallel.overlap=false",
	  "parallelism.data_parallel.overlap_param_gather=false"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1,
	  CS_RECOMPUTE_NONE, {0}, {"--overlap-grad-reduce", "--overlap-param-gather"}, false, false },
	{ "interleaved even split", {0}, 1, 4, 1, 1, 2, 1, CS_SHARD_NONE, CS_RECOMPUTE_NONE,
	  {"--num-virtual-stages-per-pipeline-rank"}, {"--decoder-first-pipeline-num-layers",
	  "--pipeline-model-parallel-layout"}, false, false },
	{ "interleaved on pp 2", {0}, 1, 2, 1, 1, 2, 1, CS_SHARD_NONE, CS_RECOMPUTE_NONE,
	  {"--num-virtual-stages-per-pipeline-rank"}, {"--no-overlap-p2p-communication"}, false,
	  false },
	{ "uneven split as first and last stages", {"model.layers=30"}, 1, 4, 1, 1, 1, 1,
	  CS_SHARD_NONE, CS_RECOMPUTE_NONE, {"--decoder-first-pipeline-num-layers",
	  "--decoder-last-pipeline-num-layers"}, {"--pipeline-model-parallel-layout"}, false, false },
	{ "uneven split as a layout", {"model.layers=29"}, 1, 4, 1, 1, 1, 1, CS_SHARD_NONE,
	  CS_RECOMPUTE_NONE, {"--pipeline-model-parallel-layout"},
	  {"--decoder-first-pipeline-num-layers"}, false, false },
	{ "uneven interleaved split as a layout", {"model.layers=30"}, 1, 4, 1, 1, 2, 1,
	  CS_SHARD_NONE, CS_RECOMPUTE_NONE, {"--pipeline-model-parallel-layout"},
	  {"--num-virtual-stages-per-pipeline-rank"}, false, false },
	{ "embedding and loss counted as layers", {"model.layers=30",
	  "parallelism.pipeline.account_for_embedding=true",
	  "parallelism.pipeline.account_for_loss=true"}, 1, 4, 1, 1, 1, 1, CS_SHARD_NONE,
	  CS_RECOMPUTE_NONE, {"--account-for-embedding-in-pipeline-split",
	  "--account-for-loss-in-pipeline-split"}, {"--decoder-first-pipeline-num-layers"}, false,
	  false },
	{ "counted embedding and loss interleaved", {"model.layers=30",
	  "parallelism.pipeline.account_for_embedding=true",
	  "parallelism.pipeline.account_for_loss=true"}, 1, 4, 1, 1, 2, 1, CS_SHARD_NONE,
	  CS_RECOMPUTE_NONE, {"--account-for-embedding-in-pipeline-split"}, {0}, false, false },
	{ "context parallelism before blackwell", {"training.seq_len=32768"}, 2, 1, 2, 1, 1, 1,
	  CS_SHARD_ZERO1, CS_RECOMPUTE_SELECTIVE, {"--context-parallel-size", "--cp-comm-type"},
	  {0}, false, false },
	{ "tensor parallelism on blackwell", {"cluster.gpu=b200"}, 2, 1, 1, 1, 1, 1, CS_SHARD_ZERO1,
	  CS_RECOMPUTE_NONE, {"--sequence-parallel"}, {0}, false, false },
	{ "tensor-parallel overlap", {"parallelism.tp_overlap=true"}, 2, 1, 1, 1, 1, 1,
	  CS_SHARD_ZERO1, CS_RECOMPUTE_NONE, {"--tp-comm-overlap"}, {0}, false, false },
	{ "experts on zero3 are megatron-fsdp", {"model.experts=8", "model.top_k=2",
	  "model.expert_ffn=11008", "parallelism.ep=2", "training.grad_accumulation=separate"},
	  1, 1, 1, 2, 1, 1, CS_SHARD_ZERO3, CS_RECOMPUTE_NONE, {"--expert-model-parallel-size",
	  "--use-megatron-fsdp"}, {"--use-torch-fsdp2"}, false, false },
	{ "full recompute by block", {"parallelism.recompute=full", "parallelism.recompute_method=block",
	  "parallelism.recompute_layers=4"}, 1, 2, 1, 1, 1, 1, CS_SHARD_ZERO1, CS_RECOMPUTE_FULL,
	  {"--recompute-granularity", "--recompute-method", "--recompute-num-layers"}, {"--recompute-modules"},
	  false, false },
	{ "selective recompute of modules", {"parallelism.recompute=selective",
	  "parallelism.recompute_modules=core_attn,layernorm,mlp"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1,
	  CS_RECOMPUTE_SELECTIVE, {"--recompute-granularity", "--recompute-modules"}, {"--recompute-method"},
	  false, false },
	{ "torchtitan's layer policy is noted", {"parallelism.recompute=selective",
	  "parallelism.recompute_every=2"}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1, CS_RECOMPUTE_SELECTIVE, {0},
	  {"--recompute-granularity", "--recompute-modules"}, true, false },
	{ "full recompute defaults to uniform 1", {0}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO1, CS_RECOMPUTE_FULL,
	  {"--recompute-method", "--recompute-num-layers"}, {0}, false, false },
	{ "megatron-fsdp refuses lamb", {"training.optimizer=lamb"}, 1, 1, 1, 1, 1, 1,
	  CS_SHARD_ZERO2, CS_RECOMPUTE_NONE, {0}, {0}, true, true },
};

static const char *const base_sets[] = {
	"cluster.gpu=h100-sxm-80g", "cluster.nodes=4", "model.preset=llama2-7b",
	"training.seq_len=4096", "training.global_batch=64",
};

static cs_scenario *make(const char *const *sets, int nsets)
{
	cs_scenario *sc = malloc(sizeof *sc);
	cs_diag diag;
	ck_assert_ptr_nonnull(sc);
	ck_assert_int_eq(cs_config_defaults(sc), CS_OK);
	for (int i = 0; i < N(base_sets); i++)
		ck_assert_msg(cs_config_apply_override(sc, base_sets[i], &diag) == CS_OK, "%s", diag.msg);
	for (int i = 0; i < nsets && sets[i]; i++)
		ck_assert_msg(cs_config_apply_override(sc, sets[i], &diag) == CS_OK, "%s", diag.msg);
	ck_assert_msg(cs_config_validate(sc, &diag) == CS_OK, "%s", diag.msg);
	return sc;
}

static cs_plan plan_of(const cs_scenario *sc, const mcase *m)
{
	cs_plan p = {0};
	p.tp = m->tp;
	p.pp = m->pp;
	p.cp = m->cp;
	p.ep = m->ep;
	p.vstages = m->v;
	p.micro_batch = m->mb;
	p.sharding = m->sharding;
	p.recompute = m->recompute;
	p.dp = cs_scenario_gpus(sc) / (p.tp * p.pp * p.cp);
	p.sequence_parallel = p.tp > 1;
	return p;
}

START_TEST(command_line_is_one_megatron_accepts_for_the_plan)
{
	const mcase *m = &cases[_i];
	cs_scenario *sc = make(m->sets, N(m->sets));
	cs_plan p = plan_of(sc, m);
	char line[CS_MEGATRON_LINE_MAX], note[CS_MEGATRON_NOTE_MAX];
	cmd *c = malloc(sizeof *c);
	ck_assert_ptr_nonnull(c);
	load_flags();

	/* the plan itself must be one the simulator accepts */
	cs_scenario *run = malloc(sizeof *run);
	cs_diag diag;
	ck_assert_ptr_nonnull(run);
	ck_assert_msg(cs_plan_apply(sc, &p, run, &diag) == CS_OK, "%s: %s", m->name, diag.msg);
	free(run);

	int rc = cs_megatron_args(sc, &p, line, sizeof line, note, sizeof note);
	if (m->unrunnable) {
		ck_assert_msg(rc == -1 && line[0] == '\0' && note[0], "%s: %d '%s'", m->name, rc, line);
		goto done;
	}
	ck_assert_msg(rc == 0, "%s: %s", m->name, note);
	ck_assert_msg((note[0] != '\0') == m->noted, "%s: note '%s'", m->name, note);
	split_line(line, c);
	check_vocabulary(c, line);
	check_rules(c, sc, line);
	check_plan(c, sc, &p, line);
	for (int i = 0; i < N(m->want) && m->want[i]; i++)
		ck_assert_msg(has(c, m->want[i]), "%s: no '%s' in: %s", m->name, m->want[i], line);
	for (int i = 0; i < N(m->refuse) && m->refuse[i]; i++)
		ck_assert_msg(!has(c, m->refuse[i]), "%s: '%s' in: %s", m->name, m->refuse[i], line);
done:
	free(c);
	free(sc);
}
END_TEST

/* Every plan the search ranks on a small cluster: a line Megatron-LM takes
 * for the plan simulated. */
START_TEST(every_searched_plan_prints_a_valid_line)
{
	static const char *const sets[] = { "cluster.nodes=2", "model.layers=30" };
	cs_scenario *sc = make(sets, N(sets));
	cs_plan_opts o = { .jobs = 1 };
	cs_plan_search *s = NULL;
	cs_diag diag;
	char line[CS_MEGATRON_LINE_MAX], note[CS_MEGATRON_NOTE_MAX];
	cmd *c = malloc(sizeof *c);
	ck_assert_ptr_nonnull(c);
	load_flags();
	ck_assert_msg(cs_plan_prepare(sc, &o, &s, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_gt(s->nplans, 100);
	for (int64_t i = 0; i < s->nplans; i++) {
		const cs_plan *p = &s->plans[i];
		ck_assert_msg(cs_megatron_args(s->base, p, line, sizeof line, note, sizeof note) == 0,
			      "%s", note);
		split_line(line, c);
		check_vocabulary(c, line);
		check_rules(c, s->base, line);
		check_plan(c, s->base, p, line);
	}
	cs_plan_search_free(s);
	free(c);
	free(sc);
}
END_TEST

/* What `plan --format megatron` writes for the first `top` plans of s;
 * the caller frees it. */
static char *listing(const cs_scenario *sc, const cs_plan_search *s, int64_t top)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	cs_plan_write_megatron(f, sc, s, top);
	fclose(f);
	return out;
}

/* The listing: a header per plan, a refusal said, and a line that is an
 * earlier plan's merged into it. */
START_TEST(plans_with_the_same_line_are_merged)
{
	cs_scenario *sc = make(NULL, 0);
	cs_plan_search s = {0};
	cs_plan plans[4];
	const mcase zero2 = { "zero2", {0}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO2, CS_RECOMPUTE_NONE,
			      {0}, {0}, false, false };
	plans[0] = plan_of(sc, &zero2);
	plans[1] = plans[0];
	plans[1].sharding = CS_SHARD_GRAD_OP;  /* Megatron-FSDP's optim_grads too */
	plans[2] = plans[0];
	plans[2].sharding = CS_SHARD_ZERO1;
	plans[3] = plans[0];
	for (int i = 0; i < 4; i++) {
		plans[i].step_time_s = 1.0 + 0.1 * i;
		plans[i].mem_bytes = 40e9 - 1e9 * i;
	}
	s.plans = plans;
	s.nplans = 4;
	char *out = listing(sc, &s, 3);
	ck_assert_msg(strstr(out, "# 1: 1 s per step") && strstr(out, "# 2: 1.1 s per step") &&
		      strstr(out, "# 3: 1.2 s per step") && !strstr(out, "# 4:"), "%s", out);
	ck_assert_msg(strstr(out, "#   the same command line as #1"), "%s", out);
	/* two command lines: #1's and #3's */
	int lines = 0;
	for (const char *p = out; (p = strstr(p, "torchrun ")); p++)
		lines++;
	ck_assert_int_eq(lines, 2);
	ck_assert_msg(strstr(out, "--use-distributed-optimizer"), "%s", out);
	free(out);
	free(sc);
}
END_TEST

START_TEST(a_plan_megatron_cannot_run_is_said)
{
	static const char *const sets[] = { "training.optimizer=lamb" };
	cs_scenario *sc = make(sets, N(sets));
	const mcase z = { "zero2", {0}, 1, 1, 1, 1, 1, 1, CS_SHARD_ZERO2, CS_RECOMPUTE_NONE, {0},
			  {0}, false, false };
	cs_plan p = plan_of(sc, &z);
	cs_plan_search s = { .plans = &p, .nplans = 1 };
	char *out = listing(sc, &s, 10);
	ck_assert_msg(strstr(out, "#   Megatron-LM cannot run this plan: Megatron-FSDP (for sharding "
			      "'zero2') takes only the adam and sgd optimizers\n"), "%s", out);
	ck_assert_msg(!strstr(out, "torchrun"), "%s", out);
	free(out);
	free(sc);
}
END_TEST

static Suite *megatron_suite(void)
{
	Suite *s = suite_create("megatron");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, command_line_is_one_megatron_accepts_for_the_plan, 0, N(cases));
	tcase_add_test(tc, every_searched_plan_prints_a_valid_line);
	tcase_add_test(tc, plans_with_the_same_line_are_merged);
	tcase_add_test(tc, a_plan_megatron_cannot_run_is_said);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(megatron_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(flags);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
