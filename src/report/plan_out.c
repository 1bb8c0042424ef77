/*
 * plan_out.c - what `clustersim plan` writes (plan_out.h): the ranked plans
 * as text, JSON, CSV or a chart (the Megatron-LM command lines are
 * megatron_out.c's).
 */
#include "report/plan_out.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "config/config.h"
#include "report/out.h"
#include "report/svg.h"
#include "study/planner.h"

static void text_plan_cols(FILE *f, const cs_plan *p)
{
	char etp[24] = "-"; /* the experts split over tp, ep inside dp */
	if (p->etp > 0)
		snprintf(etp, sizeof etp, "%lld", (long long)p->etp);
	fprintf(f, " %3lld%s %3lld %3lld %2lld %5lld %3lld %3s %2lld  %-13s %-9s", (long long)p->tp,
		p->tp_beyond_domain ? "*" : " ", (long long)p->cp, (long long)p->pp, (long long)p->vstages,
		(long long)p->dp, (long long)p->ep, etp, (long long)p->micro_batch,
		cs_sharding_name(p->sharding), cs_recompute_name(p->recompute));
}

static double bound_s(const cs_plan *p)
{
	if (p->bound == CS_PLAN_BOUND_COMPUTE)
		return p->compute_s;
	if (p->bound == CS_PLAN_BOUND_BUBBLE)
		return p->bubble_s;
	return p->exposed_s[p->bound - CS_PLAN_BOUND_COMM];
}

static void text_row(FILE *f, const char *rank, const cs_plan *p)
{
	fprintf(f, "%5s %9.4f %5.1f%% %6.1f", rank, p->step_time_s, 100.0 * p->mfu, p->mem_bytes / 1e9);
	text_plan_cols(f, p);
	fprintf(f, "  %s %.0f%%\n", cs_plan_bound_name(p->bound),
		p->step_time_s > 0 ? 100.0 * bound_s(p) / p->step_time_s : 0.0);
}

void cs_plan_write_text(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top)
{
	bool beyond = false;

	fprintf(f, "%s: %s on %lld x %s, seq %lld, global batch %lld\n", sc->name, sc->model.name,
		(long long)s->gpus, sc->cluster.gpu.name, (long long)sc->training.seq_len,
		(long long)sc->training.global_batch);
	fprintf(f,
		"searched %lld plans: %lld over memory (%.0f%% of %.1f GB), %lld invalid, "
		"%lld simulated",
		(long long)s->considered, (long long)s->pruned_memory, 100.0 * s->headroom,
		s->budget_bytes / s->headroom / 1e9, (long long)s->pruned_invalid, (long long)s->simulated);
	if (s->skipped)
		fprintf(f, ", %lld skipped by estimate (cap %lld)", (long long)s->skipped,
			(long long)s->max_sims);
	if (s->failed)
		fprintf(f, ", %lld failed", (long long)s->failed);
	fprintf(f, "; %.2f s on %d thread%s\n\n", s->wall_s, s->jobs, s->jobs == 1 ? "" : "s");
	fputs(" rank    step s   MFU  GB/GPU   tp   cp  pp  v    dp  ep etp mb  sharding      "
	      "recompute  bound\n",
	      f);
	for (int64_t i = 0; i < s->nplans && i < top; i++) {
		char rank[24];
		snprintf(rank, sizeof rank, "%lld", (long long)(i + 1));
		text_row(f, rank, &s->plans[i]);
		beyond = beyond || s->plans[i].tp_beyond_domain;
	}
	if (s->nplans == 0)
		fputs("  (no plan could be simulated)\n", f);
	if (s->failed)
		fprintf(f, "  first failed simulation: %s\n", s->first_failure);
	fputs("\nheuristic choice (smallest tp x pp fitting 85% of HBM; selective recompute, "
	      "sequence parallel, micro-batch 1, zero1):\n",
	      f);
	if (s->heuristic_rank > 0) {
		char rank[24];
		snprintf(rank, sizeof rank, "%lld", (long long)s->heuristic_rank);
		text_row(f, rank, &s->heuristic);
		fprintf(f, "  rank %lld of %lld simulated", (long long)s->heuristic_rank,
			(long long)s->nplans);
		if (s->nplans > 0 && s->plans[0].step_time_s > 0)
			fprintf(f, "; its step is %.1f%% longer than the best",
				100.0 * (s->heuristic.step_time_s / s->plans[0].step_time_s - 1.0));
		fprintf(f, "%s\n", s->heuristic_fits ? "" : " (it does not fit by the heuristic's rule)");
	} else if (s->heuristic.simulated) {
		text_row(f, "-", &s->heuristic);
		fprintf(f, "  not ranked: %s%s\n", s->heuristic_note,
			s->heuristic_fits ? "" : "; nothing fits by the heuristic's rule");
	} else {
		fprintf(f, "  tp %lld, pp %lld, dp %lld%s: not ranked, %s\n", (long long)s->heuristic.tp,
			(long long)s->heuristic.pp, (long long)s->heuristic.dp,
			s->heuristic_fits ? "" : " (nothing fits by the heuristic's rule)",
			s->heuristic_note);
	}
	if (beyond)
		fprintf(f, "\n* tp beyond the %d-GPU scale-up domain\n", sc->cluster.scale_up_domain);
}

/* ---- json --------------------------------------------------------------- */

static void json_plan(cs_jw *w, const cs_plan *p, int64_t rank)
{
	cs_jw_begin_obj(w);
	if (rank > 0)
		cs_jw_kv_int(w, "rank", rank);
	cs_jw_kv_int(w, "tp", p->tp);
	cs_jw_kv_int(w, "cp", p->cp);
	cs_jw_kv_int(w, "pp", p->pp);
	cs_jw_kv_int(w, "virtual_stages", p->vstages);
	cs_jw_kv_int(w, "dp", p->dp);
	cs_jw_kv_int(w, "ep", p->ep);
	if (p->etp > 0) /* the experts folded over tp x cp x dp */
		cs_jw_kv_int(w, "etp", p->etp);
	else
		cs_jw_kv_str(w, "etp", NULL); /* null: the experts split over tp */
	cs_jw_kv_int(w, "micro_batch", p->micro_batch);
	cs_jw_kv_str(w, "schedule", p->vstages > 1 ? "interleaved" : "1f1b");
	cs_jw_kv_bool(w, "sequence_parallel", p->sequence_parallel);
	cs_jw_kv_str(w, "sharding", cs_sharding_name(p->sharding));
	cs_jw_kv_str(w, "recompute", cs_recompute_name(p->recompute));
	cs_jw_kv_bool(w, "tp_beyond_domain", p->tp_beyond_domain);
	cs_jw_kv_num(w, "memory_bytes", p->mem_bytes);
	cs_jw_kv_num(w, "estimate_s", p->estimate_s);
	if (p->simulated) {
		cs_jw_kv_num(w, "step_time_s", p->step_time_s);
		cs_jw_kv_num(w, "mfu", p->mfu);
		cs_jw_kv_num(w, "tflops_per_gpu", p->tflops_per_gpu);
		cs_jw_kv_num(w, "tokens_per_s", p->tokens_per_s);
		cs_jw_kv_num(w, "compute_s", p->compute_s);
		cs_jw_key(w, "exposed_comm_s");
		cs_jw_begin_obj(w);
		for (int k = 0; k < CS_COMM_KINDS; k++)
			cs_jw_kv_num(w, cs_comm_kind_name((cs_comm_kind)k), p->exposed_s[k]);
		cs_jw_end_obj(w);
		cs_jw_kv_num(w, "bubble_s", p->bubble_s);
		cs_jw_kv_str(w, "bound", cs_plan_bound_name(p->bound));
	}
	cs_jw_end_obj(w);
}

int cs_plan_write_json(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top)
{
	cs_jw w;
	cs_jw_init(&w, f, 2);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "scenario", sc->name);
	cs_jw_kv_str(&w, "model", sc->model.name);
	cs_jw_kv_str(&w, "gpu", sc->cluster.gpu.name);
	cs_jw_kv_int(&w, "gpus", s->gpus);
	cs_jw_kv_int(&w, "seq_len", sc->training.seq_len);
	cs_jw_kv_int(&w, "global_batch", sc->training.global_batch);
	cs_jw_key(&w, "plans");
	cs_jw_begin_arr(&w);
	for (int64_t i = 0; i < s->nplans && i < top; i++)
		json_plan(&w, &s->plans[i], i + 1);
	cs_jw_end_arr(&w);
	cs_jw_key(&w, "search");
	cs_jw_begin_obj(&w);
	cs_jw_kv_int(&w, "considered", s->considered);
	cs_jw_kv_int(&w, "pruned_memory", s->pruned_memory);
	cs_jw_kv_int(&w, "pruned_invalid", s->pruned_invalid);
	cs_jw_kv_int(&w, "survived", s->survived);
	cs_jw_kv_int(&w, "simulated", s->simulated);
	cs_jw_kv_int(&w, "skipped", s->skipped);
	cs_jw_kv_int(&w, "failed", s->failed);
	if (s->failed)
		cs_jw_kv_str(&w, "first_failure", s->first_failure);
	cs_jw_kv_int(&w, "max_simulated", s->max_sims);
	cs_jw_kv_num(&w, "headroom", s->headroom);
	cs_jw_kv_num(&w, "budget_bytes", s->budget_bytes);
	cs_jw_kv_int(&w, "jobs", s->jobs);
	cs_jw_kv_num(&w, "wall_s", s->wall_s);
	cs_jw_key(&w, "heuristic");
	json_plan(&w, &s->heuristic, 0);
	cs_jw_kv_bool(&w, "heuristic_fits", s->heuristic_fits);
	cs_jw_kv_bool(&w, "heuristic_valid", s->heuristic_valid);
	if (s->heuristic_rank > 0)
		cs_jw_kv_int(&w, "heuristic_rank", s->heuristic_rank);
	else
		cs_jw_kv_str(&w, "heuristic_note", s->heuristic_note);
	cs_jw_end_obj(&w);
	cs_jw_end_obj(&w);
	return cs_jw_finish(&w);
}

/* ---- csv ---------------------------------------------------------------- */

void cs_plan_write_csv(FILE *f, const cs_plan_search *s)
{
	fputs("rank,tp,cp,pp,virtual_stages,dp,ep,etp,micro_batch,sequence_parallel,sharding,"
	      "recompute,tp_beyond_domain,memory_bytes,estimate_s,step_time_s,mfu,tflops_per_gpu,"
	      "tokens_per_s,compute_s",
	      f);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		fprintf(f, ",exposed_%s_s", cs_comm_kind_name((cs_comm_kind)k));
	fputs(",bubble_s,bound\n", f);
	for (int64_t i = 0; i < s->nplans; i++) {
		const cs_plan *p = &s->plans[i];
		fprintf(f, "%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%d,%s,%s,%d", (long long)(i + 1),
			(long long)p->tp, (long long)p->cp, (long long)p->pp, (long long)p->vstages,
			(long long)p->dp, (long long)p->ep, (long long)p->etp, (long long)p->micro_batch,
			p->sequence_parallel, cs_sharding_name(p->sharding), cs_recompute_name(p->recompute),
			p->tp_beyond_domain);
		const double nums[] = { p->mem_bytes,      p->estimate_s,   p->step_time_s, p->mfu,
					p->tflops_per_gpu, p->tokens_per_s, p->compute_s };
		for (size_t j = 0; j < sizeof nums / sizeof nums[0]; j++) {
			fputc(',', f);
			cs_csv_num(f, nums[j]);
		}
		for (int k = 0; k < CS_COMM_KINDS; k++) {
			fputc(',', f);
			cs_csv_num(f, p->exposed_s[k]);
		}
		fputc(',', f);
		cs_csv_num(f, p->bubble_s);
		fprintf(f, ",%s\n", cs_plan_bound_name(p->bound));
	}
}

/* ---- the chart --------------------------------------------------------------- */

#define PC_W 1090.0
#define PC_LABEL 380.0 /* the plans' columns */
#define PC_STEP 340.0  /* the step-time panel's width */
#define PC_GAP 50.0
#define PC_MEM 250.0 /* the memory panel's width */
#define PC_TOP 84.0
#define PC_ROW 22.0
#define PC_MAX 40

/* The plan's columns in one line: "tp 8  cp 1  pp 4 (v 2)  dp 64 ...". */
static void plan_label(char *buf, size_t n, const cs_plan *p)
{
	int len = snprintf(buf, n, "tp %lld%s cp %lld pp %lld", (long long)p->tp,
			   p->tp_beyond_domain ? "*" : "", (long long)p->cp, (long long)p->pp);
	if (p->vstages > 1)
		len += snprintf(buf + len, n - (size_t)len, " v %lld", (long long)p->vstages);
	len += snprintf(buf + len, n - (size_t)len, " dp %lld", (long long)p->dp);
	if (p->ep > 1)
		len += snprintf(buf + len, n - (size_t)len, " ep %lld", (long long)p->ep);
	if (p->etp > 0)
		len += snprintf(buf + len, n - (size_t)len, " etp %lld", (long long)p->etp);
	snprintf(buf + len, n - (size_t)len, " mb %lld, %s, %s%s", (long long)p->micro_batch,
		 cs_sharding_name(p->sharding),
		 p->recompute == CS_RECOMPUTE_NONE ? "no" : cs_recompute_name(p->recompute), " recompute");
}

/* A vertical line at x over the rows, labelled above. */
static void mark(FILE *f, double x, double foot, const char *colour, const char *dash, const char *label)
{
	fprintf(f,
		"<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
		"stroke-width=\"2\"%s/>\n",
		x, PC_TOP - 10, x, foot, colour, dash);
	cs__svg_text(f, x, PC_TOP - 14, "text-anchor=\"middle\" font-size=\"11\"", label);
}

int cs_plan_write_svg(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top)
{
	int64_t n = s->nplans < top ? s->nplans : top;
	n = n < PC_MAX ? n : PC_MAX;
	if (n <= 0)
		return -1;
	double hbm = s->headroom > 0 ? s->budget_bytes / s->headroom : s->budget_bytes;
	double slowest = 0, most = hbm;
	for (int64_t i = 0; i < n; i++) {
		slowest = fmax(slowest, s->plans[i].step_time_s);
		most = fmax(most, s->plans[i].mem_bytes);
	}
	double foot = PC_TOP + (double)n * PC_ROW + 4, x0 = PC_LABEL, x1 = PC_LABEL + PC_STEP + PC_GAP;
	cs__svg_axis step, mem;
	cs__svg_axis_lin(&step, 0, slowest * 1.3, x0, x0 + PC_STEP); /* room for the values */
	cs__svg_axis_lin(&mem, 0, most / 1e9, x1, x1 + PC_MEM);
	cs__svg_begin(f, PC_W, foot + 64);
	char line[320];
	snprintf(line, sizeof line, "%s: the %lld best of %lld plans simulated on %lld x %s", sc->name,
		 (long long)n, (long long)s->simulated, (long long)s->gpus, sc->cluster.gpu.name);
	cs__svg_text(f, PC_W / 2, 24, "text-anchor=\"middle\" font-size=\"15\"", line);
	cs__svg_key(f, x0, 48, "#d62728", true, "the chosen plan (the fastest)");
	if (s->heuristic_rank > 0 && s->heuristic_rank <= n)
		cs__svg_key(f, x0 + 250, 48, "#ff7f0e", true, "the heuristic's (smallest tp x pp)");
	cs__svg_xaxis(f, &step, foot, PC_TOP - 4, "step time (s)", NULL);
	cs__svg_xaxis(f, &mem, foot, PC_TOP - 4, "memory per GPU (GB)", NULL);
	mark(f, cs__svg_pos(&mem, hbm / 1e9), foot, "#333", "", "HBM");
	mark(f, cs__svg_pos(&mem, s->budget_bytes / 1e9), foot, "#333", " stroke-dasharray=\"5 3\"", "");
	snprintf(line, sizeof line, "budget %.0f %%", 100 * s->headroom);
	cs__svg_text(f, cs__svg_pos(&mem, s->budget_bytes / 1e9) - 4, PC_TOP - 2,
		     "text-anchor=\"end\" font-size=\"11\"", line);
	for (int64_t i = 0; i < n; i++) {
		const cs_plan *p = &s->plans[i];
		double y = PC_TOP + (double)i * PC_ROW;
		bool heuristic = i + 1 == s->heuristic_rank;
		const char *colour = i == 0 ? "#d62728" : heuristic ? "#ff7f0e" : "#1f77b4";
		char label[192];
		plan_label(label, sizeof label, p);
		snprintf(line, sizeof line, "%lld. %s", (long long)(i + 1), label);
		cs__svg_text(f, x0 - 8, y + PC_ROW / 2 + 4,
			     i == 0 ? "text-anchor=\"end\" font-weight=\"bold\"" : "text-anchor=\"end\"",
			     line);
		double w = cs__svg_pos(&step, p->step_time_s) - x0;
		fprintf(f,
			"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
			"<title>step %.4f s, MFU %.1f %%</title></rect>\n",
			x0, y + 3, w, PC_ROW - 6, colour, p->step_time_s, 100 * p->mfu);
		snprintf(line, sizeof line, "%.4g s%s", p->step_time_s,
			 i == 0      ? ", chosen"
			 : heuristic ? ", heuristic"
				     : "");
		cs__svg_text(f, x0 + w + 4, y + PC_ROW / 2 + 4, "font-size=\"11\"", line);
		fprintf(f,
			"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
			"opacity=\"0.8\">"
			"<title>%.1f GB per GPU</title></rect>\n",
			x1, y + 3, cs__svg_pos(&mem, p->mem_bytes / 1e9) - x1, PC_ROW - 6, colour,
			p->mem_bytes / 1e9);
	}
	return cs__svg_end(f);
}
