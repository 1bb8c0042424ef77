/*
 * report.c - text and JSON renderings of cs_metrics.
 */
#include "report/report.h"

#include <string.h>

#include "config/config.h"
#include "report/out.h"
#include "study/study.h"

#define GB 1e9
#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *b(int color) { return color ? "\033[1m" : ""; }
static const char *e(int color) { return color ? "\033[0m" : ""; }

/* Which of the fleet's effects ran, and what each took. */
static void print_fleet(FILE *f, const cs_fleet_effects *x)
{
	const char *sep = "";
	fprintf(f, "  fleet           ");
	if (!x->spread && !x->slow_machines && !x->diurnal && !x->gc)
		fprintf(f, " ideal");
	if (x->spread)
		fprintf(f, " spread %.1f %%", 100 * x->spread_sigma), sep = ";";
	if (x->slow_machines) {
		fprintf(f, "%s %lld of %lld machines x%.2f (none slow: p %.4f)", sep, (long long)x->slow,
			(long long)x->machines, x->slow_factor, x->p_none);
		sep = ";";
	}
	if (x->diurnal)
		fprintf(f, "%s diurnal x%.4f", sep, x->diurnal_factor), sep = ";";
	if (x->gc)
		fprintf(f, "%s gc %.0f ms every %lld steps%s: +%.4f s a step", sep, 1e3 * x->gc_pause_s,
			(long long)x->gc_interval, x->gc_sync ? " together" : ", each rank its own",
			x->gc_cost_s);
	fprintf(f, "%s\n", x->folded ? " (folded: per-GPU effects left out)" : "");
}

/* Folded or rank by rank, and why (simulate.fold). */
static void print_route(FILE *f, const cs_route *x, int64_t gpus)
{
	if (x->simulated_ranks <= 0)
		return;
	if (x->folded)
		fprintf(f, "  route            folded: %lld of %lld ranks simulated\n",
			(long long)x->simulated_ranks, (long long)gpus);
	else
		fprintf(f, "  route            every rank%s%s\n", x->why[0] ? ": " : "", x->why);
}

static void write_route(cs_jw *w, const cs_route *x)
{
	if (x->simulated_ranks <= 0)
		return;
	cs_jw_key(w, "route");
	cs_jw_begin_obj(w);
	cs_jw_kv_bool(w, "folded", x->folded);
	cs_jw_kv_int(w, "simulated_ranks", x->simulated_ranks);
	cs_jw_kv_str(w, "why", x->why);
	cs_jw_end_obj(w);
}

static void write_fleet(cs_jw *w, const cs_fleet_effects *x)
{
	static const char *const names[] = { "spread", "slow_machines", "diurnal", "gc" };
	const int ran[] = { x->spread, x->slow_machines, x->diurnal, x->gc };
	cs_jw_key(w, "fleet");
	cs_jw_begin_obj(w);
	cs_jw_key(w, "effects");
	cs_jw_begin_arr(w);
	for (int i = 0; i < 4; i++)
		if (ran[i])
			cs_jw_str(w, names[i]);
	cs_jw_end_arr(w);
	cs_jw_kv_bool(w, "per_gpu_folded_out", x->folded);
	cs_jw_kv_num(w, "spread_sigma", x->spread_sigma);
	cs_jw_kv_int(w, "machines", x->machines);
	cs_jw_kv_int(w, "slow_machines", x->slow);
	cs_jw_kv_num(w, "slow_factor", x->slow_factor);
	cs_jw_kv_num(w, "p_no_slow_machine", x->p_none);
	cs_jw_kv_num(w, "diurnal_factor", x->diurnal_factor);
	cs_jw_kv_num(w, "gc_pause_s", x->gc_pause_s);
	cs_jw_kv_int(w, "gc_interval", x->gc_interval);
	cs_jw_kv_bool(w, "gc_sync", x->gc_sync);
	cs_jw_kv_num(w, "gc_cost_s", x->gc_cost_s);
	cs_jw_end_obj(w);
}

void cs_report_text(FILE *f, const char *name, const cs_metrics *m, int color)
{
	fprintf(f, "%s%s%s: %lld GPU%s, %lld micro-batch%s per replica, %lld step%s simulated\n", b(color),
		name && *name ? name : "scenario", e(color), (long long)m->gpus, m->gpus == 1 ? "" : "s",
		(long long)m->micro_batches, m->micro_batches == 1 ? "" : "es", (long long)m->steps,
		m->steps == 1 ? "" : "s");
	fprintf(f, "  step time        %s%.4f s%s", b(color), m->step_time_s, e(color));
	if (m->steps > 1)
		fprintf(f, "  (p50 %.4f, p99 %.4f, max %.4f)", m->step_time_p50_s, m->step_time_p99_s,
			m->step_time_max_s);
	fputc('\n', f);
	if (m->slowdown > 1.0 + 1e-12 || m->slowdown < 1.0 - 1e-12)
		fprintf(f, "  baseline         %.4f s unperturbed, slowdown x%.4f\n", m->baseline_step_time_s,
			m->slowdown);
	fprintf(f,
		"  throughput       %.0f tokens/s, %.1f TFLOP/s per GPU (%.1f by Megatron-LM's count, "
		"%.1f with recomputation)\n",
		m->tokens_per_s, m->tflops_per_gpu, m->tflops_per_gpu_megatron, m->tflops_per_gpu_hardware);
	fprintf(f, "  MFU              %s%.1f %%%s (Megatron-LM's count %.1f %%, HFU %.1f %%)", b(color),
		100 * m->mfu, e(color), 100 * m->mfu_megatron, 100 * m->hfu);
	if (m->peak_scale > 1.0)
		fprintf(f, " of the fastest GPU's peak, x%.3g the GPU's", m->peak_scale);
	fputc('\n', f);
	double span = m->step_time_s > 0 ? m->step_time_s : 1;
	fprintf(f, "  critical rank    %lld:\n", (long long)m->critical_rank);
	fprintf(f, "    compute        %.4f s (%.1f %%)\n", m->compute_s, 100 * m->compute_s / span);
	static const char *const kind_label[CS_COMPUTE_KINDS] = { "gemm", "attention", "memory-bound",
								  "optimizer", "host idle" };
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		if (m->compute_kind_s[k] > 0)
			fprintf(f, "      %-12s %.4f s (%.1f %%)\n", kind_label[k], m->compute_kind_s[k],
				100 * m->compute_kind_s[k] / span);
	if (m->profile[0])
		fprintf(f, "      timed by     kernel profile %s (%s)\n", m->profile,
			m->profile_derived ? "derived from another GPU's measurements" : "measured");
	else
		fprintf(f, "      timed by     flat efficiencies (no kernel profile)\n");
	if (m->gemm_clock > 0)
		fprintf(f, "      GEMM clock   x%.3f of the speed at the power cap\n", m->gemm_clock);
	for (int k = 0; k < CS_COMM_KINDS; k++) {
		if (m->exposed_comm_s[k] <= 0 && !m->coll_choice[k][0])
			continue;
		fprintf(f, "    exposed %-6s %.4f s (%.1f %%)%s%s\n", cs_comm_kind_name((cs_comm_kind)k),
			m->exposed_comm_s[k], 100 * m->exposed_comm_s[k] / span,
			m->coll_choice[k][0] ? "  " : "", m->coll_choice[k]);
	}
	fprintf(f, "    bubble/idle    %.4f s (%.1f %%)\n", m->bubble_s, 100 * m->bubble_fraction);
	fprintf(f, "  idle per rank    min %.4f s, mean %.4f s, max %.4f s\n", m->idle_min_s, m->idle_mean_s,
		m->idle_max_s);
	if (m->straggler_rank >= 0)
		fprintf(f, "  straggler        rank %lld computes x%.3f\n", (long long)m->straggler_rank,
			m->straggler_factor);
	print_fleet(f, &m->fleet);
	if (m->path.valid) {
		const cs_critical_path *p = &m->path;
		fprintf(f, "  critical path    ends on rank %lld after %lld rank changes; compute %.4f s",
			(long long)p->end_rank, (long long)p->hops, p->compute_s);
		for (int k = 0; k < CS_COMM_KINDS; k++)
			if (p->comm_s[k] > 0)
				fprintf(f, ", %s %.4f s", cs_comm_kind_name((cs_comm_kind)k), p->comm_s[k]);
		fprintf(f, "\n    longest on rank %lld (%.4f s of compute in one stretch)\n",
			(long long)p->longest_rank, p->longest_s);
		for (int i = 0; i < p->nlast; i++)
			fprintf(f, "    %s rank %lld -> %lld via %s %s (%s) at %.4f s\n",
				i ? "  " : "ends:", (long long)p->last[i].from, (long long)p->last[i].to,
				cs_comm_kind_name((cs_comm_kind)p->last[i].kind), p->last[i].via,
				cs_tier_name((cs_tier)p->last[i].tier), p->last[i].at_s);
	}
	const cs_memory *mem = &m->memory;
	fprintf(f, "  memory per GPU   %.1f GB of %.1f GB: %s%s%s\n", mem->total / GB, mem->capacity / GB,
		b(color), mem->fits ? "fits" : "does NOT fit", e(color));
	fprintf(f,
		"    weights %.1f GB, grads %.1f GB, optimizer %.1f GB, activations %.1f GB "
		"(%.1f GB measured from the schedule)\n",
		mem->weights / GB, mem->grads / GB, mem->optimizer / GB, mem->activations / GB,
		m->activation_peak_bytes / GB);
	print_route(f, &m->route, m->gpus);
	fprintf(f, "  simulated        %lld events in %.3f s\n", (long long)m->events, m->sim_wall_s);
}

void cs_report_json(FILE *f, const char *name, const cs_metrics *m, int indent)
{
	cs_jw w;
	cs_jw_init(&w, f, indent);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "name", name ? name : "");
	int nd;
	const cs_metric_def *t = cs_metric_table(&nd);
	for (int i = 0; i < nd; i++)
		if (t[i].in & CS_METRIC_JSON)
			cs_jw_kv_num(&w, t[i].name, cs_metric_value(&t[i], m));
	cs_jw_key(&w, "compute_by_kind_s");
	cs_jw_begin_obj(&w);
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		cs_jw_kv_num(&w, cs_compute_kind_name((cs_compute_kind)k), m->compute_kind_s[k]);
	cs_jw_end_obj(&w);
	cs_jw_key(&w, "compute_by_kind_kernels");
	cs_jw_begin_obj(&w);
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		cs_jw_kv_int(&w, cs_compute_kind_name((cs_compute_kind)k), m->compute_kind_kernels[k]);
	cs_jw_end_obj(&w);
	cs_jw_kv_str(&w, "kernel_profile", m->profile[0] ? m->profile : "none");
	cs_jw_kv_bool(&w, "kernel_profile_derived", m->profile_derived);
	cs_jw_kv_num(&w, "gemm_clock", m->gemm_clock);
	cs_jw_key(&w, "exposed_comm_s");
	cs_jw_begin_obj(&w);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		cs_jw_kv_num(&w, cs_comm_kind_name((cs_comm_kind)k), m->exposed_comm_s[k]);
	cs_jw_end_obj(&w);
	cs_jw_key(&w, "collectives");
	cs_jw_begin_obj(&w);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		if (m->coll_choice[k][0])
			cs_jw_kv_str(&w, cs_comm_kind_name((cs_comm_kind)k), m->coll_choice[k]);
	cs_jw_end_obj(&w);
	cs_jw_kv_num(&w, "bubble_s", m->bubble_s);
	cs_jw_kv_num(&w, "bubble_fraction", m->bubble_fraction);
	cs_jw_key(&w, "idle_s");
	cs_jw_begin_obj(&w);
	cs_jw_kv_num(&w, "min", m->idle_min_s);
	cs_jw_kv_num(&w, "mean", m->idle_mean_s);
	cs_jw_kv_num(&w, "max", m->idle_max_s);
	cs_jw_end_obj(&w);
	cs_jw_key(&w, "memory");
	cs_jw_begin_obj(&w);
	cs_jw_kv_num(&w, "weights", m->memory.weights);
	cs_jw_kv_num(&w, "grads", m->memory.grads);
	cs_jw_kv_num(&w, "optimizer", m->memory.optimizer);
	cs_jw_kv_num(&w, "activations", m->memory.activations);
	cs_jw_kv_num(&w, "total", m->memory.total);
	cs_jw_kv_num(&w, "capacity", m->memory.capacity);
	cs_jw_kv_bool(&w, "fits", m->memory.fits);
	cs_jw_kv_num(&w, "activation_peak_measured", m->activation_peak_bytes);
	cs_jw_end_obj(&w);
	cs_jw_kv_int(&w, "critical_rank", m->critical_rank);
	cs_jw_kv_int(&w, "straggler_rank", m->straggler_rank);
	cs_jw_kv_num(&w, "straggler_factor", m->straggler_factor);
	write_fleet(&w, &m->fleet);
	if (m->path.valid) {
		const cs_critical_path *p = &m->path;
		cs_jw_key(&w, "critical_path");
		cs_jw_begin_obj(&w);
		cs_jw_kv_num(&w, "compute_s", p->compute_s);
		cs_jw_key(&w, "comm_s");
		cs_jw_begin_obj(&w);
		for (int k = 0; k < CS_COMM_KINDS; k++)
			cs_jw_kv_num(&w, cs_comm_kind_name((cs_comm_kind)k), p->comm_s[k]);
		cs_jw_end_obj(&w);
		cs_jw_kv_int(&w, "hops", p->hops);
		cs_jw_kv_int(&w, "end_rank", p->end_rank);
		cs_jw_kv_int(&w, "longest_rank", p->longest_rank);
		cs_jw_kv_num(&w, "longest_s", p->longest_s);
		cs_jw_key(&w, "last_hops");
		cs_jw_begin_arr(&w);
		for (int i = 0; i < p->nlast; i++) {
			cs_jw_begin_obj(&w);
			cs_jw_kv_int(&w, "from", p->last[i].from);
			cs_jw_kv_int(&w, "to", p->last[i].to);
			cs_jw_kv_str(&w, "kind", cs_comm_kind_name((cs_comm_kind)p->last[i].kind));
			cs_jw_kv_str(&w, "via", p->last[i].via);
			cs_jw_kv_int(&w, "tier", p->last[i].tier);
			cs_jw_kv_num(&w, "at_s", p->last[i].at_s);
			cs_jw_end_obj(&w);
		}
		cs_jw_end_arr(&w);
		cs_jw_end_obj(&w);
	}
	cs_jw_kv_int(&w, "gpus", m->gpus);
	cs_jw_kv_int(&w, "micro_batches", m->micro_batches);
	cs_jw_kv_int(&w, "steps", m->steps);
	write_route(&w, &m->route);
	cs_jw_kv_int(&w, "events", m->events);
	cs_jw_kv_num(&w, "sim_wall_s", m->sim_wall_s);
	cs_jw_end_obj(&w);
	cs_jw_finish(&w);
}

void cs_report_csv(FILE *f, const char *name, const cs_metrics *m)
{
	const char *names[64];
	double values[64];
	int n = cs_study_columns(m, names, values, 64);
	if (n > 64)
		n = 64;
	fputs("scenario", f);
	for (int i = 0; i < n; i++) {
		fputc(',', f);
		cs_csv_field(f, names[i]);
	}
	fputc('\n', f);
	cs_csv_field(f, name);
	for (int i = 0; i < n; i++) {
		fputc(',', f);
		cs_csv_num(f, values[i]);
	}
	fputc('\n', f);
}

void cs_report_ranks_csv(FILE *f, const cs_rank_row *rows, int64_t n)
{
	fputs("rank,end_s,busy_s,idle_s", f);
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		fprintf(f, ",%s_s", cs_compute_kind_name((cs_compute_kind)k));
	for (int k = 0; k < CS_COMM_KINDS; k++)
		fprintf(f, ",exposed_%s_s", cs_comm_kind_name((cs_comm_kind)k));
	fputs(",activation_peak_bytes,compute_factor\n", f);
	for (int64_t i = 0; i < n; i++) {
		const cs_rank_row *r = &rows[i];
		fprintf(f, "%lld", (long long)r->rank);
		fputc(',', f);
		cs_csv_num(f, r->end_s);
		fputc(',', f);
		cs_csv_num(f, r->busy_s);
		fputc(',', f);
		cs_csv_num(f, r->idle_s);
		for (int k = 0; k < CS_COMPUTE_KINDS; k++) {
			fputc(',', f);
			cs_csv_num(f, r->kind_s[k]);
		}
		for (int k = 0; k < CS_COMM_KINDS; k++) {
			fputc(',', f);
			cs_csv_num(f, r->exposed_s[k]);
		}
		fputc(',', f);
		cs_csv_num(f, r->act_peak);
		fputc(',', f);
		cs_csv_num(f, r->compute_factor);
		fputc('\n', f);
	}
}
