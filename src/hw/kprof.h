/*
 * kprof.h - a GPU's kernel profile: measured throughput of the kernels a
 * training step runs, looked up by shape.
 *
 * A profile is a YAML file (src/hw/profiles/ holds the built-in ones,
 * generated from measurement tables by tools/profile/make_profiles.py):
 * GEMM throughput over (M, N, K) per layout and precision, attention
 * throughput per backend, mask, head dimension, sequence length and work
 * (forward and backward apart), memory-bound bandwidth per kind over the
 * bytes a kernel moves, and host launch costs. Lookups interpolate in log
 * space with GSL (linear, so every table point is reproduced exactly and
 * values between two points lie between them) and clamp outside the table
 * as documented in docs/kernel-profiles.md.
 *
 * A loaded profile is immutable: lookups may run from several threads.
 */
#ifndef CS_HW_KPROF_H
#define CS_HW_KPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"

typedef struct cs_kprof cs_kprof;

/* Operand layouts as PyTorch calls them for C = A @ B (T: the operand is
 * stored transposed). nn.Linear and Megatron keep weights [out, in]:
 * forward NT, input gradient NN, weight gradient TN. */
typedef enum cs_gemm_layout { CS_GEMM_NN, CS_GEMM_NT, CS_GEMM_TN, CS_GEMM_LAYOUTS } cs_gemm_layout;

typedef enum cs_gemm_dtype { CS_GEMM_BF16, CS_GEMM_FP8, CS_GEMM_DTYPES } cs_gemm_dtype;

typedef enum cs_attn_backend {
	CS_ATTN_CUDNN,  /* cuDNN fused flash attention (PyTorch SDPA's default on Hopper) */
	CS_ATTN_FLASH2, /* FlashAttention-2 */
	CS_ATTN_BACKENDS
} cs_attn_backend;

/* Memory-bound kernel kinds, each with its measured bandwidth curve. The
 * names (cs_kprof_mem_kind_name) are the profile file's keys. */
typedef enum cs_mem_kind {
	CS_MEM_COPY,          /* "copy": contiguous copy or dtype cast */
	CS_MEM_ADD,           /* "add": vectorized binary element-wise */
	CS_MEM_LAYERNORM,     /* "layernorm": forward */
	CS_MEM_RMSNORM,       /* "rmsnorm": forward */
	CS_MEM_NORM_BWD,      /* "layernorm_bwd": backward of a norm (from fwd+bwd minus fwd) */
	CS_MEM_ACT,           /* "gelu": vectorized unary element-wise */
	CS_MEM_STRIDED,       /* "silu_mul": element-wise on strided or broadcast operands */
	CS_MEM_SOFTMAX,       /* "softmax" */
	CS_MEM_DROPOUT,       /* "dropout" */
	CS_MEM_GRAD_ACCUM,    /* "grad_accum": fp32 += 16-bit */
	CS_MEM_CROSS_ENTROPY, /* "cross_entropy": fp32 softmax cross-entropy, forward + backward */
	CS_MEM_ADAM_FUSED,    /* "adamw_fused" */
	CS_MEM_ADAM_FOREACH,  /* "adamw_foreach" */
	CS_MEM_KINDS
} cs_mem_kind;

/*
 * Load the profile `name_or_path`: a built-in profile's name ("h200-sxm",
 * "h100-sxm", "a100-sxm", "b200") or a YAML file's path. On success *out
 * owns a new profile the caller frees with cs_kprof_free. On failure
 * returns CS_ERR_INPUT (CS_ERR_NOMEM) with "file:line:col: message" in
 * diag (a file that cannot be opened: "path: cannot open profile: reason").
 */
cs_status cs_kprof_load(const char *name_or_path, cs_kprof **out, cs_diag *diag);
/* The same from text held in memory; `file` names it in messages. */
cs_status cs_kprof_parse(const char *text, size_t len, const char *file, cs_kprof **out, cs_diag *diag);
void cs_kprof_free(cs_kprof *p);

/* True when `name` is a built-in profile's name. */
bool cs_kprof_builtin(const char *name);
/* The i-th built-in profile's name in alphabetical order, NULL past the
 * last (static storage). */
const char *cs_kprof_builtin_name(size_t i);
/* The profile's name and whether it was derived from another GPU's
 * measurements by stated rules (false: measured on this GPU). */
const char *cs_kprof_name(const cs_kprof *p);
bool cs_kprof_derived(const cs_kprof *p);
/* The file's one-line description of the GPU ("" when it gives none);
 * valid until cs_kprof_free. */
const char *cs_kprof_gpu(const cs_kprof *p);

/* GEMM throughput, FLOP/s, of C(m x n) = A(m x k) B(k x n). Returns 0 when
 * the profile has no table for `dtype`. */
double cs_kprof_gemm(const cs_kprof *p, cs_gemm_dtype dtype, cs_gemm_layout layout, double m, double n,
		     double k);
/* The fewest rows (M) the GEMM tables measured: below it a lookup is held
 * at that row count's time (0 without a profile). */
double cs_kprof_gemm_min_rows(const cs_kprof *p);

/* Attention throughput, FLOP/s, of the forward (bwd false) or backward of a
 * fused attention kernel over `batch_heads` (batch x query heads)
 * sequences of `seq` tokens with head dimension `head_dim`. FLOPs are
 * counted as the table counts them: forward 4·b·h·s²·d (halved when
 * causal), backward 2.5 times that. Returns 0 when the profile has no
 * table for `backend`. */
double cs_kprof_attn(const cs_kprof *p, cs_attn_backend backend, bool causal, int64_t head_dim,
		     double batch_heads, double seq, bool bwd);

/* Bandwidth, bytes/s, of a memory-bound kernel of `kind` moving `bytes`. */
double cs_kprof_mem(const cs_kprof *p, cs_mem_kind kind, double bytes);
/* The rate, in (0, 1], at which compute kernels run while communication
 * kernels hold `sm_fraction` of the SMs and stream memory as a collective
 * does (measured: a GEMM loop beside a resident kernel on k SMs that copies
 * memory); linear between the measured points, held at the last beyond
 * them; 1 when the profile has no such table. */
double cs_kprof_contention(const cs_kprof *p, double sm_fraction);
/* The same with its slowdown scaled by `scale` (collectives.contention: 1
 * the measured one, 0 none), held at 0.05 at the least. */
double cs_kprof_contention_scaled(const cs_kprof *p, double sm_fraction, double scale);
/* Causal attention under a document mask whose blocks hold a fraction f of
 * the causal work takes (floor + (1 - floor) f) of the unmasked time: the
 * fixed share of the mask's partial blocks (measured: FlexAttention at 8K
 * with 1 to 16 equal documents). 0 when the profile does not say. */
double cs_kprof_document_floor(const cs_kprof *p);
/*
 * The clock under the power cap, as the profile measured it (docs/
 * compute-model.md, "Clocks under the power cap"). A GEMM runs r times its
 * speed at the cap, r = 1 + (gemm_boost - 1)(1 - exp(-H / headroom_w)),
 * where H is the power the rest of the recent work leaves under cap_w per
 * unit of GEMM time, averaged over an exponential window of window_ns. The
 * powers are each kind of work's alone at full clock; idle_w is what an
 * idle stretch counts as. The GEMM table ran gemm_table times the speed at
 * the cap.
 */
typedef struct cs_kprof_clock {
	double cap_w, gemm_boost, gemm_table, headroom_w, window_ns, idle_w, attention_w;
	double membound_w[CS_MEM_KINDS];
} cs_kprof_clock;

/* The profile's clock model; NULL when it has none (then every GEMM runs as
 * the table measured it). Valid until cs_kprof_free. */
const cs_kprof_clock *cs_kprof_clock_model(const cs_kprof *p);
/* The shortest a kernel runs on this GPU, ns (a tiny kernel in a CUDA graph). */
double cs_kprof_min_kernel_ns(const cs_kprof *p);
/* Host time to issue one op from eager PyTorch, and one kernel of a CUDA
 * graph, ns. */
double cs_kprof_eager_launch_ns(const cs_kprof *p);
double cs_kprof_graph_launch_ns(const cs_kprof *p);
/* Host time from an idle GPU's last kernel to the host's return from a
 * synchronisation (`launch.sync_us`), ns; 0 when the profile has none. */
double cs_kprof_sync_ns(const cs_kprof *p);

const char *cs_kprof_mem_kind_name(cs_mem_kind kind);

#endif
