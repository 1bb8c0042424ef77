/*
 * columns.c - a run's scalar metrics in one table, in one fixed order:
 * the sweep's CSV and `run --format csv` take its columns, the JSON report
 * its leading flat keys.
 */
#include "study/study.h"

#include <stddef.h>

#define JSON CS_METRIC_JSON
#define CSV CS_METRIC_CSV
/* clang-format off */
#define F64(nm, in, fld) {(nm), (in), offsetof(cs_metrics, fld), CS_METRIC_F64}
#define I64(nm, in, fld) {(nm), (in), offsetof(cs_metrics, fld), CS_METRIC_I64}
#define INT(nm, in, fld) {(nm), (in), offsetof(cs_metrics, fld), CS_METRIC_INT}
/* clang-format on */

static const cs_metric_def cs__metric_table[] = {
	F64("step_time_s", JSON | CSV, step_time_s),
	F64("step_time_p50_s", JSON | CSV, step_time_p50_s),
	F64("step_time_p99_s", JSON | CSV, step_time_p99_s),
	F64("step_time_max_s", JSON | CSV, step_time_max_s),
	F64("baseline_step_time_s", JSON | CSV, baseline_step_time_s),
	F64("slowdown", JSON | CSV, slowdown),
	F64("tokens_per_s", JSON | CSV, tokens_per_s),
	F64("tflops_per_gpu", JSON | CSV, tflops_per_gpu),
	F64("mfu", JSON | CSV, mfu),
	F64("tflops_per_gpu_megatron", JSON | CSV, tflops_per_gpu_megatron),
	F64("mfu_megatron", JSON | CSV, mfu_megatron),
	F64("hfu", JSON | CSV, hfu),
	F64("tflops_per_gpu_hardware", JSON | CSV, tflops_per_gpu_hardware),
	F64("model_flops", JSON, model_flops),
	F64("model_flops_megatron", JSON, model_flops_megatron),
	F64("compute_s", JSON | CSV, compute_s),
	/* the JSON report nests these, or writes them in its own place */
	F64("compute_gemm_s", CSV, compute_kind_s[CS_COMPUTE_GEMM]),
	F64("compute_attention_s", CSV, compute_kind_s[CS_COMPUTE_ATTN]),
	F64("compute_memory_bound_s", CSV, compute_kind_s[CS_COMPUTE_MEMBOUND]),
	F64("compute_optimizer_s", CSV, compute_kind_s[CS_COMPUTE_OPTIM]),
	F64("compute_host_idle_s", CSV, compute_kind_s[CS_COMPUTE_HOST]),
	F64("gemm_clock", CSV, gemm_clock),
	F64("exposed_tp_s", CSV, exposed_comm_s[CS_COMM_TP]),
	F64("exposed_dp_s", CSV, exposed_comm_s[CS_COMM_DP]),
	F64("exposed_pp_s", CSV, exposed_comm_s[CS_COMM_PP]),
	F64("exposed_cp_s", CSV, exposed_comm_s[CS_COMM_CP]),
	F64("exposed_ep_s", CSV, exposed_comm_s[CS_COMM_EP]),
	F64("bubble_s", CSV, bubble_s),
	F64("bubble_fraction", CSV, bubble_fraction),
	F64("idle_min_s", CSV, idle_min_s),
	F64("idle_mean_s", CSV, idle_mean_s),
	F64("idle_max_s", CSV, idle_max_s),
	F64("memory_total_bytes", CSV, memory.total),
	INT("memory_fits", CSV, memory.fits),
	I64("gpus", CSV, gpus),
	I64("events", CSV, events),
};

#undef F64
#undef I64
#undef INT
#undef JSON
#undef CSV

const cs_metric_def *cs_metric_table(int *n)
{
	*n = (int)(sizeof(cs__metric_table) / sizeof(cs__metric_table[0]));
	return cs__metric_table;
}

double cs_metric_value(const cs_metric_def *d, const cs_metrics *m)
{
	const char *p = (const char *)m + d->offset;
	switch (d->type) {
	case CS_METRIC_I64: return (double)*(const int64_t *)(const void *)p;
	case CS_METRIC_INT: return *(const int *)(const void *)p;
	default: return *(const double *)(const void *)p;
	}
}

int cs_study_columns(const cs_metrics *m, const char **names, double *values, int cap)
{
	int nd, n = 0;
	const cs_metric_def *t = cs_metric_table(&nd);
	for (int i = 0; i < nd; i++) {
		if (!(t[i].in & CS_METRIC_CSV))
			continue;
		if (n < cap) {
			names[n] = t[i].name;
			values[n] = cs_metric_value(&t[i], m);
		}
		n++;
	}
	return n;
}
