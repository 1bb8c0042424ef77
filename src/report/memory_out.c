/*
 * memory_out.c - one GPU's training memory as text or JSON (memory_out.h).
 */
#include "report/memory_out.h"

#include "config/config.h"
#include "report/out.h"

/* The recomputation as the plan line names it: the granularity, and what
 * refines it where that is not the frameworks' default. */
static void recompute_text(const cs_parallel_spec *p, char *out, size_t n)
{
	int w = snprintf(out, n, "%s", cs_recompute_name(p->recompute));
	if (p->recompute == CS_RECOMPUTE_FULL &&
	    (p->recompute_method != CS_RECOMPUTE_UNIFORM || p->recompute_layers != 1))
		snprintf(out + w, n - (size_t)w,
			 p->recompute_method == CS_RECOMPUTE_UNIFORM
				 ? " (uniform, %lld layers a chunk)"
				 : " (block, the first %lld layers of a model chunk)",
			 (long long)p->recompute_layers);
	else if (p->recompute == CS_RECOMPUTE_SELECTIVE && p->recompute_every > 0)
		snprintf(out + w, n - (size_t)w, " (every %lld-th block whole)",
			 (long long)p->recompute_every);
	else if (p->recompute == CS_RECOMPUTE_SELECTIVE && p->recompute_modules != CS_RCM_CORE_ATTN &&
		 p->recompute_modules != 0) {
		const char *sep = " (";
		for (unsigned bit = 1; bit <= CS_RCM_OP && (size_t)w + 1 < n; bit <<= 1)
			if (p->recompute_modules & bit) {
				w += snprintf(out + w, n - (size_t)w, "%s%s", sep,
					      cs_recompute_module_name(bit));
				sep = ", ";
				if ((size_t)w >= n)
					return;
			}
		snprintf(out + w, n - (size_t)w, ")");
	}
}

void cs_mem_write_text(FILE *f, const cs_scenario *sc, const cs_mem_breakdown *r)
{
	char rc[160];
	recompute_text(&sc->parallel, rc, sizeof rc);
	const cs_parallel_spec *p = &sc->parallel;
	const double gb = 1e9, gib = 1024.0 * 1024.0 * 1024.0;
	fprintf(f, "model %s: %.4g B parameters (%lld), %.0f bytes/param of training state\n", sc->model.name,
		(double)r->params / 1e9, (long long)r->params, r->state_bytes_per_param);
	fprintf(f,
		"plan: tp %lld, pp %lld, dp %lld, cp %lld; sharding %s%s; recompute %s; "
		"flash %s; sequence parallel %s\n",
		(long long)p->tp, (long long)p->pp, (long long)p->dp, (long long)p->cp,
		cs_sharding_name(p->sharding), p->sharding == CS_SHARD_NONE ? " (DDP)" : "", rc,
		p->flash_attention ? "on" : "off", p->sequence_parallel ? "on" : "off");
	fprintf(f, "batch: seq_len %lld, micro_batch %lld\n", (long long)sc->training.seq_len,
		(long long)sc->training.micro_batch);
	fprintf(f, "activations: %.4g GB (%.4g GiB) per layer per micro-batch, %.4g layers in flight\n\n",
		r->activation_bytes_per_layer / gb, r->activation_bytes_per_layer / gib, r->layers_in_flight);
	fprintf(f, "%-34s %12s %14s\n", "per GPU (first pipeline stage)", "GB (1e9 B)", "GiB (2^30 B)");
	const struct {
		const char *name;
		double v;
	} rows[] = {
		{ "weights", r->weights },
		{ "gradients", r->grads },
		{ "optimizer state", r->optimizer },
		{ "activations", r->activations },
		{ "total", r->total },
		{ "capacity", r->capacity },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (i == 4 && r->recompute_working > 0.0) /* before the total */
			fprintf(f, "  %-32s %12.2f %14.2f\n", "recompute working set",
				r->recompute_working / gb, r->recompute_working / gib);
		fprintf(f, "  %-32s %12.2f %14.2f\n", rows[i].name, rows[i].v / gb, rows[i].v / gib);
	}
	fprintf(f, "\nverdict: %s (%.2f GB %s %.2f GB of %s)\n", r->fits ? "fits" : "does not fit",
		r->total / gb, r->fits ? "<=" : ">", r->capacity / gb, sc->cluster.gpu.name);
}

void cs_mem_write_json(FILE *f, const cs_scenario *sc, const cs_mem_breakdown *r)
{
	cs_jw w;
	cs_jw_init(&w, f, 2);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "model", sc->model.name);
	cs_jw_kv_str(&w, "gpu", sc->cluster.gpu.name);
	cs_jw_kv_int(&w, "params", r->params);
	cs_jw_kv_num(&w, "state_bytes_per_param", r->state_bytes_per_param);
	cs_jw_kv_num(&w, "state_bytes", r->state_bytes_per_param * (double)r->params);
	cs_jw_kv_num(&w, "activation_bytes_per_layer", r->activation_bytes_per_layer);
	cs_jw_kv_num(&w, "layers_in_flight", r->layers_in_flight);
	cs_jw_key(&w, "per_gpu_bytes");
	cs_jw_begin_obj(&w);
	cs_jw_kv_num(&w, "weights", r->weights);
	cs_jw_kv_num(&w, "grads", r->grads);
	cs_jw_kv_num(&w, "optimizer", r->optimizer);
	cs_jw_kv_num(&w, "activations", r->activations);
	if (r->recompute_working > 0.0)
		cs_jw_kv_num(&w, "recompute_working", r->recompute_working);
	cs_jw_kv_num(&w, "total", r->total);
	cs_jw_end_obj(&w);
	cs_jw_kv_num(&w, "capacity_bytes", r->capacity);
	cs_jw_kv_bool(&w, "fits", r->fits);
	cs_jw_end_obj(&w);
	cs_jw_finish(&w);
}
