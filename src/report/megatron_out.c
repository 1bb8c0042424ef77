/*
 * megatron_out.c - a simulated plan as the Megatron-LM command line that
 * runs it (megatron_out.h), and `plan --format megatron`'s listing of the
 * ranked plans (plan_out.h).
 *
 * The rules followed are Megatron-LM's (megatron/training/arguments.py
 * validate_args, megatron/core/transformer/transformer_config.py
 * __post_init__): --use-torch-fsdp2 refused with pipeline or expert
 * parallelism, the distributed optimizer, gradient accumulation fusion,
 * tied embeddings or fp16; Megatron-FSDP only with --ckpt-format
 * fsdp_dtensor; --overlap-param-gather only with a sharded optimizer and
 * --overlap-grad-reduce; --tp-comm-overlap only with sequence parallelism;
 * one of --num-virtual-stages-per-pipeline-rank and
 * --pipeline-model-parallel-layout; the layer split's divisibility; and
 * CUDA_DEVICE_MAX_CONNECTIONS=1 for tensor or context parallelism before
 * Blackwell, unless FSDP (which refuses it).
 */
#include "report/megatron_out.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "program/build.h"
#include "report/plan_out.h"

/* ---- a bounded string --------------------------------------------------- */

typedef struct sbuf {
	char *s;
	size_t n, len;
	bool full;
} sbuf;

static void add(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->full)
		return;
	va_start(ap, fmt);
	int w = vsnprintf(b->s + b->len, b->n - b->len, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= b->n - b->len) {
		b->full = true;
		b->s[b->len] = '\0';
		return;
	}
	b->len += (size_t)w;
}

/* ---- the layer split ---------------------------------------------------- */

/* How Megatron-LM splits L layers over pp x v virtual stages (vstage k on
 * pipeline rank k % pp): with first/last (> 0) pipeline ranks of that many
 * layers each, the rest even over the middle ranks; else (L + e + l) even
 * over all, the first virtual stage one fewer for the embedding (e) and
 * the last for the loss (l). Fills cnt[0 .. pp*v); false where Megatron
 * refuses the numbers. */
static bool megatron_split(int64_t L, int64_t pp, int64_t v, int64_t first, int64_t last, int e, int l,
			   int64_t *cnt)
{
	int64_t V = pp * v;
	if (first <= 0 && last <= 0) {
		int64_t units = L + e + l;
		if (units % pp || (units / pp) % v)
			return false;
		for (int64_t k = 0; k < V; k++)
			cnt[k] = units / V;
		cnt[0] -= e;
		cnt[V - 1] -= l;
		return cnt[0] >= 0 && cnt[V - 1] >= 0;
	}
	if (e || l || first <= 0 || last <= 0 || first % v || last % v || pp < 2)
		return false;
	int64_t mid = L - first - last, nmid = pp - 2;
	if ((mid != 0) != (nmid != 0) || mid < 0 || (nmid && (mid % nmid || (mid / nmid) % v)))
		return false;
	for (int64_t k = 0; k < V; k++) {
		int64_t r = k % pp;
		cnt[k] = r == 0 ? first / v : r == pp - 1 ? last / v : mid / nmid / v;
	}
	return true;
}

static bool same_counts(const int64_t *a, const int64_t *b, int64_t n)
{
	for (int64_t k = 0; k < n; k++)
		if (a[k] != b[k])
			return false;
	return true;
}

/* One virtual stage of a --pipeline-model-parallel-layout: E, its layers
 * as t (t*N from four on), L. */
static void layout_stage(sbuf *b, int64_t k, int64_t V, int64_t layers)
{
	if (k == 0)
		add(b, "E");
	if (layers >= 4)
		add(b, "t*%lld", (long long)layers);
	else
		for (int64_t i = 0; i < layers; i++)
			add(b, "t");
	if (k == V - 1)
		add(b, "L");
}

/* The split as Megatron-LM's layout string: stages joined by '|', runs of
 * equal middle stages as (stage|)*N and a comma (which it ignores). */
static void layout_string(sbuf *b, const cs_plan_layout *lay)
{
	int64_t V = lay->vstages;
	for (int64_t k = 0; k < V;) {
		int64_t r = 1;
		if (k > 0)
			while (k + r < V - 1 && lay->nlayers[k + r] == lay->nlayers[k])
				r++;
		if (r > 1) {
			add(b, "(");
			layout_stage(b, k, V, lay->nlayers[k]);
			add(b, "|)*%lld%s", (long long)r, k + r < V ? "," : "");
		} else {
			layout_stage(b, k, V, lay->nlayers[k]);
			if (k < V - 1)
				add(b, "|");
		}
		k += r;
	}
}

/* The pipeline-split flags that give Megatron-LM the simulated split. */
static void split_flags(sbuf *b, const cs_scenario *run, const cs_plan_layout *lay, bool *layout)
{
	const cs_parallel_spec *q = &run->parallel;
	int64_t V = lay->vstages, L = run->model.layers, pp = lay->stages, v = lay->chunks;
	int e = q->account_embedding, l = q->account_loss;
	int64_t *cnt = malloc((size_t)V * sizeof *cnt);

	*layout = false;
	if (pp < 2 || !cnt) {
		free(cnt);
		return;
	}
	if (megatron_split(L, pp, v, 0, 0, e, l, cnt) && same_counts(cnt, lay->nlayers, V)) {
		if (e)
			add(b, " --account-for-embedding-in-pipeline-split");
		if (l)
			add(b, " --account-for-loss-in-pipeline-split");
		free(cnt);
		return;
	}
	if (megatron_split(L, pp, v, 0, 0, 0, 0, cnt) && same_counts(cnt, lay->nlayers, V)) {
		free(cnt);
		return;
	}
	int64_t first = 0, last = 0;
	for (int64_t k = 0; k < V; k++) {
		if (k % pp == 0)
			first += lay->nlayers[k];
		if (k % pp == pp - 1)
			last += lay->nlayers[k];
	}
	if (megatron_split(L, pp, v, first, last, 0, 0, cnt) && same_counts(cnt, lay->nlayers, V)) {
		add(b, " --decoder-first-pipeline-num-layers %lld --decoder-last-pipeline-num-layers %lld",
		    (long long)first, (long long)last);
		free(cnt);
		return;
	}
	free(cnt);
	add(b, " --pipeline-model-parallel-layout '");
	layout_string(b, lay);
	add(b, "'");
	*layout = true;
}

/* ---- the command line --------------------------------------------------- */

enum dp_impl { DP_DDP, DP_DISTOPT, DP_MFSDP, DP_FSDP2 };

/* Megatron-FSDP's --data-parallel-sharding-strategy of a sharding. */
static const char *mfsdp_strategy(cs_sharding s)
{
	return s == CS_SHARD_ZERO3 || s == CS_SHARD_HYBRID ? "optim_grads_params" : "optim_grads";
}

/* The recomputation: --recompute-granularity, with full its method and
 * layers (TransformerConfig requires both), with selective the modules
 * unless they are the default core_attn; torchtitan's policies have no
 * flag of Megatron-LM's and go into the note. */
static void recompute_flags(sbuf *b, sbuf *w, const cs_parallel_spec *q)
{
	if (q->recompute == CS_RECOMPUTE_FULL) {
		add(b, " --recompute-granularity full --recompute-method %s --recompute-num-layers %lld",
		    cs_recompute_method_name(q->recompute_method), (long long)q->recompute_layers);
		return;
	}
	if (q->recompute != CS_RECOMPUTE_SELECTIVE)
		return;
	if (q->recompute_every > 0 || (q->recompute_modules & CS_RCM_OP)) {
		if (q->recompute_every > 0)
			add(w,
			    "the simulation recomputed every %lld-th block whole (torchtitan's layer "
			    "policy), "
			    "for which Megatron-LM has no flag. ",
			    (long long)q->recompute_every);
		else
			add(w,
			    "the simulation recomputed by torchtitan's op policy (every second matmul), for "
			    "which Megatron-LM has no flag. ");
		return;
	}
	add(b, " --recompute-granularity selective");
	if (q->recompute_modules == CS_RCM_CORE_ATTN || q->recompute_modules == 0)
		return;
	add(b, " --recompute-modules");
	for (unsigned bit = 1; bit < CS_RCM_OP; bit <<= 1)
		if (q->recompute_modules & bit)
			add(b, " %s", cs_recompute_module_name(bit));
}

int cs_megatron_args(const cs_scenario *sc, const cs_plan *p, char *line, size_t n, char *note, size_t nn)
{
	sbuf b = { line, n, 0, false }, w = { note, nn, 0, false };
	cs_scenario *run = malloc(sizeof *run);
	cs_plan_layout *lay = malloc(sizeof *lay);
	cs_diag diag = { { 0 } };
	int rc = 0;

	line[0] = note[0] = '\0';
	if (!run || !lay) {
		add(&w, "out of memory");
		free(run);
		free(lay);
		return -1;
	}
	cs__plan_fill(sc, p, run);
	if (cs_plan_layout_init(lay, run, &diag) != CS_OK) {
		add(&w, "%s", diag.msg);
		rc = -1;
		goto done;
	}
	const cs_training_spec *t = &run->training;
	const cs_parallel_spec *q = &run->parallel;
	bool fp16 = t->precision == CS_PREC_FP16;
	bool separate = t->grad_accum == CS_GRAD_ACCUM_SEPARATE;

	/* who shards: FSDP2 where Megatron-LM takes it, else Megatron-FSDP */
	enum dp_impl dp = DP_DDP;
	if (p->sharding == CS_SHARD_ZERO1)
		dp = DP_DISTOPT;
	else if (p->sharding == CS_SHARD_ZERO3 && p->pp == 1 && p->ep == 1 && !fp16 &&
		 !run->model.tied_embeddings && separate)
		dp = DP_FSDP2;
	else if (p->sharding != CS_SHARD_NONE)
		dp = DP_MFSDP;
	if (p->sharding == CS_SHARD_HYBRID)
		add(&w, "hybrid sharding's replication across nodes has no flag here "
			"(Megatron-FSDP's --num-distributed-optimizer-instances and "
			"--outer-dp-sharding-strategy are the user's). ");
	if (dp == DP_MFSDP && t->optimizer != CS_OPT_ADAM && t->optimizer != CS_OPT_SGD &&
	    t->optimizer != CS_OPT_SGD_MOMENTUM) {
		add(&w, "Megatron-FSDP (for sharding '%s') takes only the adam and sgd optimizers",
		    cs_sharding_name(p->sharding));
		rc = -1;
		goto done;
	}

	bool fsdp = dp == DP_FSDP2 || dp == DP_MFSDP;
	bool conns = (p->tp > 1 || p->cp > 1) && run->cluster.gpu.arch < 100 && !fsdp;
	add(&b, "%storchrun --nnodes %lld --nproc-per-node %d pretrain_gpt.py \\\n    ",
	    conns ? "CUDA_DEVICE_MAX_CONNECTIONS=1 " : "", (long long)run->cluster.nodes,
	    run->cluster.gpus_per_node);
	add(&b, "--tensor-model-parallel-size %lld --pipeline-model-parallel-size %lld", (long long)p->tp,
	    (long long)p->pp);
	if (p->cp > 1)
		add(&b, " --context-parallel-size %lld --cp-comm-type %s", (long long)p->cp,
		    q->cp_kind == CS_CP_ALLGATHER ? "all_gather" : "p2p");
	if (p->ep > 1)
		add(&b, " --expert-model-parallel-size %lld", (long long)p->ep);
	if (p->etp > 0)
		add(&b, " --expert-tensor-parallel-size %lld", (long long)p->etp);
	if (q->sequence_parallel)
		add(&b, " --sequence-parallel");
	if (q->tp_overlap && q->sequence_parallel)
		add(&b, " --tp-comm-overlap");
	else if (q->tp_overlap)
		add(&w, "the simulation overlapped tensor-parallel communication, which Megatron-LM "
			"does only with sequence parallelism. ");
	sbuf split = { (char[1024]){ 0 }, 1024, 0, false };
	bool layout = false;
	split_flags(&split, run, lay, &layout);
	if (p->vstages > 1 && !layout)
		add(&b, " --num-virtual-stages-per-pipeline-rank %lld", (long long)p->vstages);
	if (split.len)
		add(&b, " \\\n   %s", split.s);
	if (split.full)
		b.full = true;

	add(&b, " \\\n    --micro-batch-size %lld --global-batch-size %lld --seq-length %lld",
	    (long long)p->micro_batch, (long long)t->global_batch, (long long)t->seq_len);
	recompute_flags(&b, &w, q);

	/* precision and data parallelism (Megatron-LM's default precision is fp32) */
	sbuf g = { (char[512]){ 0 }, 512, 0, false };
	if (fp16)
		add(&g, " --fp16");
	else if (t->precision != CS_PREC_FP32)
		add(&g, " --bf16");
	if (t->precision == CS_PREC_FP8_CURRENT) {
		add(&g, " --fp8-format hybrid --fp8-recipe tensorwise");
		if (t->fp8.params && dp != DP_DDP && dp != DP_FSDP2)
			add(&g, " --fp8-param-gather");
	} else if (t->precision == CS_PREC_MXFP8) {
		add(&g, " --fp8-format e4m3 --fp8-recipe mxfp8");
		if (t->fp8.params && dp != DP_DDP && dp != DP_FSDP2)
			add(&g, " --fp8-param-gather");
	} else if (t->precision == CS_PREC_NVFP4) {
		add(&g, " --fp4-format e2m1 --fp4-recipe nvfp4");
		if (t->fp8.params && dp != DP_DDP && dp != DP_FSDP2)
			add(&g, " --fp4-param-gather");
	}
	if (cs_prec_is_recipe(t->precision) && t->precision != CS_PREC_FP8 && t->fp8.params &&
	    (dp == DP_DDP || dp == DP_FSDP2))
		add(&w, "quantized weights (training.fp8.params) need the distributed optimizer or "
			"Megatron-FSDP in Megatron-LM; left out. ");
	if (cs_prec_is_fp8(t->precision)) {
		add(&g,
		    " --fp8-format hybrid --fp8-recipe delayed --fp8-amax-history-len %lld "
		    "--fp8-amax-compute-algo max",
		    (long long)t->fp8.amax_history);
		if (t->precision == CS_PREC_FP8_ALL)
			add(&w, "every GEMM in fp8 (precision fp8-all) is a bound, not a recipe: "
				"Transformer Engine runs the linear layers' GEMMs in fp8. ");
		if (t->fp8.params && dp != DP_DDP && dp != DP_FSDP2)
			add(&g, " --fp8-param-gather");
		else if (t->fp8.params)
			add(&w, "fp8 weights (training.fp8.params) need the distributed optimizer or "
				"Megatron-FSDP in Megatron-LM; left out. ");
	}
	if (t->grad_dtype == CS_PREC_BF16 && !fp16 && t->precision != CS_PREC_FP32 && !fsdp)
		add(&g, " --grad-reduce-in-bf16");
	if (separate || dp == DP_FSDP2)
		add(&g, " --no-gradient-accumulation-fusion");
	if (g.len)
		add(&b, " \\\n   %s", g.s);
	if (g.full)
		b.full = true;
	g.len = 0;
	g.s[0] = '\0';
	switch (dp) {
	case DP_DDP: break;
	case DP_DISTOPT: add(&g, " --use-distributed-optimizer"); break;
	case DP_MFSDP:
		add(&g,
		    " --use-megatron-fsdp --data-parallel-sharding-strategy %s --ckpt-format "
		    "fsdp_dtensor --megatron-fsdp-main-grads-dtype %s",
		    mfsdp_strategy(p->sharding),
		    t->grad_dtype == CS_PREC_FP32   ? "fp32"
		    : t->grad_dtype == CS_PREC_FP16 ? "fp16"
						    : "bf16");
		break;
	case DP_FSDP2:
		add(&g, " --use-torch-fsdp2 --untie-embeddings-and-output-weights --ckpt-format "
			"torch_dist");
		break;
	}
	if (dp != DP_FSDP2 && p->dp * p->cp > 1) {
		if (q->overlap_grad_reduce)
			add(&g, " --overlap-grad-reduce");
		if (q->overlap_grad_reduce && q->overlap_param_gather && dp != DP_DDP)
			add(&g, " --overlap-param-gather");
		else if (q->overlap_param_gather && dp != DP_DDP)
			add(&w, "the simulation overlapped the parameter all-gathers but not the gradient "
				"reductions; Megatron-LM overlaps the gathers only with both. ");
	} else if (dp == DP_FSDP2 && !q->overlap_grad_reduce) {
		add(&w, "FSDP2 overlaps its reductions with backward whatever the flags; the "
			"simulation did not. ");
	}
	if (g.len)
		add(&b, " \\\n   %s", g.s);
	if (g.full)
		b.full = true;
	if (b.full) {
		line[0] = '\0';
		note[0] = '\0';
		w.len = 0;
		w.full = false;
		add(&w, "the command line is longer than %zu bytes", n);
		rc = -1;
	}
done:
	/* a note ends without the space after its last sentence */
	if (w.len && note[w.len - 1] == ' ')
		note[--w.len] = '\0';
	free(run);
	free(lay);
	return rc;
}

/* ---- plan --format megatron --------------------------------------------- */

/* Each ranked plan as its command line; a plan whose line is an earlier
 * one's says so instead of repeating it. */
void cs_plan_write_megatron(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top)
{
	int64_t shown = s->nplans < top ? s->nplans : top;
	char(*lines)[CS_MEGATRON_LINE_MAX] = shown > 0 ? calloc((size_t)shown, sizeof *lines) : NULL;
	char note[CS_MEGATRON_NOTE_MAX];

	if (shown > 0 && !lines) {
		fputs("# out of memory\n", f);
		return;
	}
	for (int64_t i = 0; i < shown; i++) {
		const cs_plan *p = &s->plans[i];
		int rc = cs_megatron_args(sc, p, lines[i], sizeof lines[i], note, sizeof note);
		fprintf(f, "# %lld: %.4g s per step, MFU %.1f %%, %.1f GB per GPU, sharding %s%s\n",
			(long long)(i + 1), p->step_time_s, 100.0 * p->mfu, p->mem_bytes / 1e9,
			cs_sharding_name(p->sharding), p->sharding == CS_SHARD_NONE ? " (DDP)" : "");
		if (rc != 0) {
			fprintf(f, "#   Megatron-LM cannot run this plan: %s\n", note);
			continue;
		}
		if (note[0])
			fprintf(f, "#   note: %s\n", note);
		int64_t same = -1;
		for (int64_t j = 0; j < i && same < 0; j++)
			if (strcmp(lines[j], lines[i]) == 0)
				same = j;
		if (same >= 0)
			fprintf(f,
				"#   the same command line as #%lld: Megatron-LM has no flag for "
				"what tells them apart\n",
				(long long)(same + 1));
		else
			fprintf(f, "%s\n", lines[i]);
	}
	free(lines);
}
