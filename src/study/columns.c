/*
 * columns.c - a run's scalar metrics as named columns, in one fixed order:
 * the sweep's CSV and `run --format csv` share it.
 */
#include "study/study.h"

int cs_study_columns(const cs_metrics *m, const char **names, double *values, int cap)
{
	int n = 0;
#define COL(nm, v) do { if (n < cap) { names[n] = (nm); values[n] = (v); } n++; } while (0)
	COL("step_time_s", m->step_time_s);
	COL("step_time_p50_s", m->step_time_p50_s);
	COL("step_time_p99_s", m->step_time_p99_s);
	COL("step_time_max_s", m->step_time_max_s);
	COL("baseline_step_time_s", m->baseline_step_time_s);
	COL("slowdown", m->slowdown);
	COL("tokens_per_s", m->tokens_per_s);
	COL("tflops_per_gpu", m->tflops_per_gpu);
	COL("mfu", m->mfu);
	COL("tflops_per_gpu_megatron", m->tflops_per_gpu_megatron);
	COL("mfu_megatron", m->mfu_megatron);
	COL("hfu", m->hfu);
	COL("tflops_per_gpu_hardware", m->tflops_per_gpu_hardware);
	COL("compute_s", m->compute_s);
	COL("compute_gemm_s", m->compute_kind_s[CS_COMPUTE_GEMM]);
	COL("compute_attention_s", m->compute_kind_s[CS_COMPUTE_ATTN]);
	COL("compute_memory_bound_s", m->compute_kind_s[CS_COMPUTE_MEMBOUND]);
	COL("compute_optimizer_s", m->compute_kind_s[CS_COMPUTE_OPTIM]);
	COL("compute_host_idle_s", m->compute_kind_s[CS_COMPUTE_HOST]);
	COL("gemm_clock", m->gemm_clock);
	COL("exposed_tp_s", m->exposed_comm_s[CS_COMM_TP]);
	COL("exposed_dp_s", m->exposed_comm_s[CS_COMM_DP]);
	COL("exposed_pp_s", m->exposed_comm_s[CS_COMM_PP]);
	COL("exposed_cp_s", m->exposed_comm_s[CS_COMM_CP]);
	COL("exposed_ep_s", m->exposed_comm_s[CS_COMM_EP]);
	COL("bubble_s", m->bubble_s);
	COL("bubble_fraction", m->bubble_fraction);
	COL("idle_min_s", m->idle_min_s);
	COL("idle_mean_s", m->idle_mean_s);
	COL("idle_max_s", m->idle_max_s);
	COL("memory_total_bytes", m->memory.total);
	COL("memory_fits", m->memory.fits);
	COL("gpus", (double)m->gpus);
	COL("events", (double)m->events);
#undef COL
	return n;
}
