/*
 * columns.c - a run's scalar metrics in one table, in one fixed order:
 * the sweep's CSV and `run --format csv` take its columns, the JSON report
 * its leading flat keys.
 */
#include "study/study.h"

#include <stddef.h>

#define F64(k, c, fld) {(k), (c), offsetof(cs_metrics, fld), CS_METRIC_F64}
#define I64(k, c, fld) {(k), (c), offsetof(cs_metrics, fld), CS_METRIC_I64}
#define INT(k, c, fld) {(k), (c), offsetof(cs_metrics, fld), CS_METRIC_INT}

static const cs_metric_def cs__metric_table[] = {
	F64("step_time_s", "step_time_s", step_time_s),
	F64("step_time_p50_s", "step_time_p50_s", step_time_p50_s),
	F64("step_time_p99_s", "step_time_p99_s", step_time_p99_s),
	F64("step_time_max_s", "step_time_max_s", step_time_max_s),
	F64("baseline_step_time_s", "baseline_step_time_s", baseline_step_time_s),
	F64("slowdown", "slowdown", slowdown),
	F64("tokens_per_s", "tokens_per_s", tokens_per_s),
	F64("tflops_per_gpu", "tflops_per_gpu", tflops_per_gpu),
	F64("mfu", "mfu", mfu),
	F64("tflops_per_gpu_megatron", "tflops_per_gpu_megatron", tflops_per_gpu_megatron),
	F64("mfu_megatron", "mfu_megatron", mfu_megatron),
	F64("hfu", "hfu", hfu),
	F64("tflops_per_gpu_hardware", "tflops_per_gpu_hardware", tflops_per_gpu_hardware),
	F64("model_flops", NULL, model_flops),
	F64("model_flops_megatron", NULL, model_flops_megatron),
	F64("compute_s", "compute_s", compute_s),
	/* from here the JSON report nests them, or writes them in its own place */
	F64(NULL, "compute_gemm_s", compute_kind_s[CS_COMPUTE_GEMM]),
	F64(NULL, "compute_attention_s", compute_kind_s[CS_COMPUTE_ATTN]),
	F64(NULL, "compute_memory_bound_s", compute_kind_s[CS_COMPUTE_MEMBOUND]),
	F64(NULL, "compute_optimizer_s", compute_kind_s[CS_COMPUTE_OPTIM]),
	F64(NULL, "compute_host_idle_s", compute_kind_s[CS_COMPUTE_HOST]),
	F64(NULL, "gemm_clock", gemm_clock),
	F64(NULL, "exposed_tp_s", exposed_comm_s[CS_COMM_TP]),
	F64(NULL, "exposed_dp_s", exposed_comm_s[CS_COMM_DP]),
	F64(NULL, "exposed_pp_s", exposed_comm_s[CS_COMM_PP]),
	F64(NULL, "exposed_cp_s", exposed_comm_s[CS_COMM_CP]),
	F64(NULL, "exposed_ep_s", exposed_comm_s[CS_COMM_EP]),
	F64(NULL, "bubble_s", bubble_s),
	F64(NULL, "bubble_fraction", bubble_fraction),
	F64(NULL, "idle_min_s", idle_min_s),
	F64(NULL, "idle_mean_s", idle_mean_s),
	F64(NULL, "idle_max_s", idle_max_s),
	F64(NULL, "memory_total_bytes", memory.total),
	INT(NULL, "memory_fits", memory.fits),
	I64(NULL, "gpus", gpus),
	I64(NULL, "events", events),
};

#undef F64
#undef I64
#undef INT

const cs_metric_def *cs_metric_table(int *n)
{
	*n = (int)(sizeof(cs__metric_table) / sizeof(cs__metric_table[0]));
	return cs__metric_table;
}

double cs_metric_value(const cs_metric_def *d, const cs_metrics *m)
{
	const char *p = (const char *)m + d->offset;
	switch (d->type) {
	case CS_METRIC_I64:
		return (double)*(const int64_t *)(const void *)p;
	case CS_METRIC_INT:
		return *(const int *)(const void *)p;
	default:
		return *(const double *)(const void *)p;
	}
}

int cs_study_columns(const cs_metrics *m, const char **names, double *values, int cap)
{
	int nd, n = 0;
	const cs_metric_def *t = cs_metric_table(&nd);
	for (int i = 0; i < nd; i++) {
		if (!t[i].column)
			continue;
		if (n < cap) {
			names[n] = t[i].column;
			values[n] = cs_metric_value(&t[i], m);
		}
		n++;
	}
	return n;
}
