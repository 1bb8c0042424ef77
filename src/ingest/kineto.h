/*
 * kineto.h - GPU kernel time by class in a PyTorch profiler (Kineto)
 * Chrome trace, for comparing a measured step with a simulated one.
 *
 * cs_kineto_load reads TRACE.json or TRACE.json.gz (zlib's gzread reads
 * both), streams the events of its 'traceEvents' array one at a time
 * through jansson (jstream.h), and its 'deviceProperties', and keeps only
 * totals: the GPU's name, kernel time and count by class and by the
 * architecture their names say, the span from the first kernel's start to the last one's end,
 * the union of the kernels' busy intervals, and the number of steps
 * (ProfilerStep#N events of any category but kernel: user_annotation,
 * cpu_op, PyTorch 1.8's Operator; the whole trace is one step without
 * them). Timestamps are rebased to the first timed event's, so Unix-epoch
 * microseconds read like relative ones.
 * A folder of such traces, one per GPU of a job (rank-0.json.gz, ...,
 * or torch.profiler's HOST_PID.pt.trace.json: every NAME.json and
 * NAME.json.gz in it), reads as the job: the totals below summed over its
 * ranks, which must have the same steps and GPU, and each rank's own totals
 * (cs_kineto_rank_at), in the order of their distributedInfo ranks, else
 * of their file names. Times are each trace's own (rebased per file), so
 * traces of unsynchronised clocks, or with their own baseTimeNanoseconds,
 * read alike.
 * Memory is one event, 16 bytes per kernel and each distinct kernel name
 * once, whatever the trace's size;
 * an event of more than CS_KINETO_MAX_EVENT bytes is refused, and so is a
 * file of more than CS_KINETO_MAX_FILE bytes (as stored: gzip or text).
 *
 * Kernels are classified by name, case-insensitively, in this order:
 * communication (NCCL: "nccl"), optimizer ("adam", or "multi_tensor_apply"
 * with "fusedoptimizer"), attention ("sdpa", "fmha", "flash",
 * "cudnn::fusion", "attention", Triton's "_attn_fwd" and "_attn_bwd"), gemm
 * ("nvjet", "gemm" but not fbgemm's, "cutlass", "xmma", "cublas", ROCm's
 * "Cijk_", cuDNN's "convolve" and "winograd", Triton's "triton_tem_" with
 * "mm"), memory_bound (everything else). gpu_memcpy and gpu_memset
 * events are counted as copy and memset, apart from the kernels. The four
 * compute classes match tools/profile/trace_classes.py wherever a trace
 * has no NCCL kernels and no Adam kernel outside multi_tensor_apply.
 *
 * Ownership: cs_kineto_load and cs_kineto_parse allocate *out, which the
 * caller frees with cs_kineto_free; the handle keeps no pointer into the
 * input. No global state.
 */
#ifndef CS_INGEST_KINETO_H
#define CS_INGEST_KINETO_H

#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"

/* The largest event of 'traceEvents' read: 16 MiB of JSON text. */
#define CS_KINETO_MAX_EVENT ((size_t)16 << 20)
/* The largest trace file read (streamed, never held whole): 64 GiB. */
#define CS_KINETO_MAX_FILE ((long long)64 << 30)

/* Event classes; the first four are cs_compute_kind's. */
typedef enum cs_kineto_class {
	CS_KINETO_GEMM = CS_COMPUTE_GEMM,
	CS_KINETO_ATTN = CS_COMPUTE_ATTN,
	CS_KINETO_MEMBOUND = CS_COMPUTE_MEMBOUND,
	CS_KINETO_OPTIM = CS_COMPUTE_OPTIM,
	CS_KINETO_COMM,   /* NCCL kernels */
	CS_KINETO_COPY,   /* gpu_memcpy events */
	CS_KINETO_MEMSET, /* gpu_memset events */
	CS_KINETO_CLASSES
} cs_kineto_class;

typedef struct cs_kineto cs_kineto;

/* The most trace files a folder may hold. */
#define CS_KINETO_MAX_RANKS 65536

/* Read and summarise the trace at `path` (a file or a folder of them). On error returns CS_ERR_INPUT (or
 * CS_ERR_NOMEM) with *out NULL and a message in *diag: "cannot open 'PATH':
 * ...", "'PATH': truncated gzip data at byte N (...)", "PATH:LINE:COL: not
 * JSON: ...", "'PATH': no 'traceEvents' array ...", "'PATH': no GPU kernels
 * ...", "'PATH': element N of 'traceEvents' is larger than the limit of
 * 16777216 bytes". */
cs_status cs_kineto_load(const char *path, cs_kineto **out, cs_diag *diag);
/* The same with another limit on one event's bytes (tests). */
cs_status cs__kineto_load_limit(const char *path, size_t max_event, cs_kineto **out, cs_diag *diag);
/* Summarise `len` bytes of JSON text; `name` labels messages. */
cs_status cs_kineto_parse(const char *name, const char *text, size_t len, cs_kineto **out, cs_diag *diag);
void cs_kineto_free(cs_kineto *t);
/* cs_kineto_load and cs_kineto_parse with a user's classes of kernels
 * ahead of the built-in ones (kernel_rules.h; NULL: none), which the
 * caller keeps. */
struct cs_kernel_rules;
cs_status cs_kineto_load_ruled(const char *path, const struct cs_kernel_rules *rules, cs_kineto **out,
			       cs_diag *diag);
cs_status cs_kineto_parse_ruled(const char *name, const char *text, size_t len,
				const struct cs_kernel_rules *rules, cs_kineto **out, cs_diag *diag);

/* Whether `hay` contains `needle` (lowercase ASCII), ignoring ASCII case:
 * how kernel names are matched, here and by a user's rules. */
int cs_kineto_name_has(const char *hay, const char *needle);
/* The class of a kernel named `name` (never COPY or MEMSET). */
cs_kineto_class cs_kineto_classify(const char *name);
/* "gemm", "attention", "memory_bound", "optimizer", "communication", "copy",
 * "memset". */
const char *cs_kineto_class_name(cs_kineto_class c);

/* Whole-trace totals of a class: time in ns and events. */
int64_t cs_kineto_class_ns(const cs_kineto *t, cs_kineto_class c);
int64_t cs_kineto_class_count(const cs_kineto *t, cs_kineto_class c);
/* Steps: the distinct ProfilerStep#N annotations, 1 without any; and
 * whether they came from annotations. */
int64_t cs_kineto_steps(const cs_kineto *t);
int cs_kineto_steps_marked(const cs_kineto *t);
/* Kernels (every class but COPY and MEMSET), first start to last end, and
 * the union of their busy intervals, ns over the whole trace. */
int64_t cs_kineto_kernels(const cs_kineto *t);
int64_t cs_kineto_span_ns(const cs_kineto *t);
int64_t cs_kineto_busy_ns(const cs_kineto *t);

/* One GPU's trace: its file's name (within its folder), its rank
 * (distributedInfo's "rank", or -1), and its own totals. */
typedef struct cs_kineto_rank {
	const char *file;
	int64_t rank;
	int64_t steps, kernels, span_ns, busy_ns;
	int64_t ns[CS_KINETO_CLASSES], count[CS_KINETO_CLASSES];
} cs_kineto_rank;
/* The traces read: 1 for a file. */
size_t cs_kineto_ranks(const cs_kineto *t);
/* Trace i (< cs_kineto_ranks), NULL beyond; it belongs to t. */
const cs_kineto_rank *cs_kineto_rank_at(const cs_kineto *t, size_t i);

/* The GPU named by the trace's 'deviceProperties' (the first device's
 * "name", as "NVIDIA H100 80GB HBM3"); "" without them. */
const char *cs_kineto_device(const cs_kineto *t);

/* The GPU architecture a kernel's name says it was built for: the sm tag
 * of cuBLAS's and CUTLASS's kernels ("sm90_xmma_gemm_...",
 * "cutlass3x_sm90_...", "sm100_...", "cutlass_80_tensorop_...") and the
 * prefixes of cuBLAS's older ones ("volta_" 70, "turing_" 75, "ampere_" 80)
 * as 70, 75, 80, 86, 89, 90, 100, 120; CS_KINETO_ARCH_ROCM for ROCm's
 * Tensile GEMMs (Cijk_); CS_KINETO_ARCH_NVJET for cuBLASLt's nvjet kernels,
 * built for Hopper and later; 0 when the name says nothing. */
#define CS_KINETO_ARCH_ROCM 1
#define CS_KINETO_ARCH_NVJET 2
#define CS_KINETO_ARCH_CODES 131
int cs_kineto_kernel_arch(const char *name);
/* The trace's kernels whose names say architecture `arch`. */
int64_t cs_kineto_arch_kernels(const cs_kineto *t, int arch);

/* Each kernel name's class and totals over the whole trace, the most time
 * first (ties by name); the array and its names belong to t. */
typedef struct cs_kineto_kernel {
	const char *name;
	cs_kineto_class cls;
	int64_t count, ns;
} cs_kineto_kernel;
const cs_kineto_kernel *cs_kineto_kernels_by_name(const cs_kineto *t, size_t *n);

/* GEMM kernels by shape, where the trace records shapes (torch.profiler's
 * record_shapes=True: "Input Dims" on the CPU ops): each GEMM kernel joined
 * through its "External id" to the aten::mm, addmm, bmm, baddbmm or
 * _scaled_mm that launched it. M x N output, K reduced, `batch` GEMMs. */
typedef struct cs_kineto_shape {
	int64_t m, n, k, batch;
	int64_t kernels, ns;
} cs_kineto_shape;

/* The shapes seen, sorted by (m, n, k, batch), in *n; NULL and 0 for a
 * trace without shapes. The array belongs to t. */
const cs_kineto_shape *cs_kineto_gemm_shapes(const cs_kineto *t, size_t *n);

#endif
