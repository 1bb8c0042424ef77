/*
 * memory_out.c - one GPU's training memory as text or JSON (memory_out.h).
 */
#include "report/memory_out.h"

#include "config/config.h"
#include "report/out.h"

void cs_mem_write_text(FILE *f, const cs_scenario *sc, const cs_mem_breakdown *r)
{
	const cs_parallel_spec *p = &sc->parallel;
	const double gb = 1e9, gib = 1024.0 * 1024.0 * 1024.0;
	fprintf(f, "model %s: %.4g B parameters (%lld), %.0f bytes/param of training state\n", sc->model.name,
		(double)r->params / 1e9, (long long)r->params, r->state_bytes_per_param);
	fprintf(f,
		"plan: tp %lld, pp %lld, dp %lld, cp %lld; sharding %s%s; recompute %s; "
		"flash %s; sequence parallel %s\n",
		(long long)p->tp, (long long)p->pp, (long long)p->dp, (long long)p->cp,
		cs_sharding_name(p->sharding), p->sharding == CS_SHARD_NONE ? " (DDP)" : "",
		cs_recompute_name(p->recompute), p->flash_attention ? "on" : "off",
		p->sequence_parallel ? "on" : "off");
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
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		fprintf(f, "  %-32s %12.2f %14.2f\n", rows[i].name, rows[i].v / gb, rows[i].v / gib);
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
	cs_jw_kv_num(&w, "total", r->total);
	cs_jw_end_obj(&w);
	cs_jw_kv_num(&w, "capacity_bytes", r->capacity);
	cs_jw_kv_bool(&w, "fits", r->fits);
	cs_jw_end_obj(&w);
	cs_jw_finish(&w);
}
