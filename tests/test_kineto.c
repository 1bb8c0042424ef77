/*
 * test_kineto.c - the PyTorch profiler (Kineto) trace reader: kernel
 * classes against tools/profile/trace_classes.py on the two measured
 * traces, classification by name, steps and the busy union, and bad input.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/kernel_rules.h"
#include "ingest/kineto.h"
#include "tmp_dir.h"

#define ROWS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the measured traces against the Python reference ------------------- */

/*
 * `python3 tools/profile/trace_classes.py tests/data/TRACE` prints these
 * (ms/step to two decimals); the figures here are its sums at full
 * precision, in microseconds, which equal the exact sums of the trace's
 * three-decimal durations. Span and idle are its too (it sums durations;
 * the kernels of these traces never overlap, so that is the union).
 */
static const struct {
	const char *file;
	double us[4];          /* gemm, attention, memory_bound, optimizer */
	int64_t n[4];
	double span_us, idle_us;
	int64_t memsets;
} ref_rows[] = {
	/* gemm 295.38 ms 198, attention 65.72 96, memory_bound 143.44 1076,
	 * optimizer 24.31 134, busy 528.84 1504, span 532.32, gpu_idle 3.48 */
	{ "trace_llama8l-h4096-s8192.json.gz", { 295375.229, 65718.879, 143441.458, 24305.335 },
	  { 198, 96, 1076, 134 }, 532321.514648, 3480.613648, 250 },
	/* gemm 391.01 ms 198, attention 26.28 64, memory_bound 95.78 804,
	 * optimizer 25.79 146, busy 538.86 1212, span 541.83, gpu_idle 2.97 */
	{ "trace_gpt-h5120-8l-s2048-mb4.json.gz", { 391011.801, 26276.890, 95783.390, 25789.304 },
	  { 198, 64, 804, 146 }, 541833.477539, 2972.092539, 314 },
};

START_TEST(classes_match_the_python_reference)
{
	char path[512];
	snprintf(path, sizeof path, CS_SOURCE_ROOT "/tests/data/%s", ref_rows[_i].file);
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kineto_load(path, &t, &diag) == CS_OK, "%s", diag.msg);
	int64_t kernels = 0;
	for (int c = 0; c < 4; c++) {
		/* exact to the nanosecond: the durations have three decimals */
		ck_assert_int_eq(cs_kineto_class_ns(t, (cs_kineto_class)c), llround(ref_rows[_i].us[c] * 1e3));
		ck_assert_int_eq(cs_kineto_class_count(t, (cs_kineto_class)c), ref_rows[_i].n[c]);
		kernels += ref_rows[_i].n[c];
	}
	ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_COMM), 0);
	ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_COPY), 0);
	ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_MEMSET), ref_rows[_i].memsets);
	ck_assert_int_eq(cs_kineto_kernels(t), kernels);
	ck_assert_int_eq(cs_kineto_steps(t), 1);
	ck_assert_int_eq(cs_kineto_steps_marked(t), 0);
	/* to the microsecond (Python's float timestamps are good to a ns or so) */
	ck_assert_double_eq_tol(1e-3 * (double)cs_kineto_span_ns(t), ref_rows[_i].span_us, 1.0);
	ck_assert_double_eq_tol(1e-3 * (double)(cs_kineto_span_ns(t) - cs_kineto_busy_ns(t)),
				ref_rows[_i].idle_us, 1.0);
	cs_kineto_free(t);
}
END_TEST

/* ---- classification by name -------------------------------------------- */

static const struct {
	const char *name;
	cs_kineto_class want;
} name_rows[] = {
	{ "nvjet_tst_256x128_64x4_2x1_v_bz_coopB_TNT", CS_KINETO_GEMM },
	{ "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", CS_KINETO_GEMM },
	{ "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>", CS_KINETO_GEMM },
	{ "ampere_bf16_s16816GEMM_bf16_128x128_ldg8_f2f_stages_32x5_tn", CS_KINETO_GEMM },
	{ "void cublasLt::splitKreduce_kernel<32, 16, int, float>", CS_KINETO_GEMM },
	{ "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128", CS_KINETO_ATTN },
	{ "cudnn::fusion::compute_dot_do_o", CS_KINETO_ATTN },
	{ "fmha_cutlassF_bf16_aligned_64x128_rf_sm80", CS_KINETO_ATTN },
	{ "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, true>", CS_KINETO_ATTN },
	{ "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", CS_KINETO_ATTN },
	{ "xformers_AttentionKernel", CS_KINETO_ATTN },
	{ "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
	  "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>",
	  CS_KINETO_OPTIM },
	{ "void at::native::multi_tensor_apply_kernel<FusedOptimizerTensorListMetadata<float, 4>>", CS_KINETO_OPTIM },
	{ "adam_update_kernel", CS_KINETO_OPTIM },
	{ "void at::native::multi_tensor_apply_kernel<TensorListMetadata<2>, ZeroFunctor>", CS_KINETO_MEMBOUND },
	{ "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", CS_KINETO_COMM },
	{ "ncclKernel_AllGather_RING_SIMPLE_Sum_int8_t", CS_KINETO_COMM },
	{ "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", CS_KINETO_MEMBOUND },
	{ "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", CS_KINETO_MEMBOUND },
	{ "NVJET_UPPER", CS_KINETO_GEMM },
	{ "", CS_KINETO_MEMBOUND },
	{ "void fbgemm_gpu::permute_2D_indices_weights_kernel<int>", CS_KINETO_MEMBOUND },
	{ "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1", CS_KINETO_GEMM },
	{ "void cudnn::detail::implicit_convolve_sgemm<float>", CS_KINETO_GEMM },
	{ "void cudnn::winograd_nonfused::winogradForwardData4x4", CS_KINETO_GEMM },
	{ "ampere_sgemm_128x64_nn", CS_KINETO_GEMM },
	/* torch.compile's Triton kernels: a matmul template, pointwise,
	 * reductions; Triton's flash attention */
	{ "triton_tem_fused_mm_0", CS_KINETO_GEMM },
	{ "triton_tem_fused_addmm_relu_3", CS_KINETO_GEMM },
	{ "triton_tem_fused_bmm_1", CS_KINETO_GEMM },
	{ "triton_poi_fused_add_mul_4", CS_KINETO_MEMBOUND },
	{ "triton_red_fused_native_layer_norm_2", CS_KINETO_MEMBOUND },
	{ "triton_per_fused_sum_7", CS_KINETO_MEMBOUND },
	{ "_attn_fwd", CS_KINETO_ATTN },
	{ "_attn_bwd_dkdv", CS_KINETO_ATTN },
};

START_TEST(kernels_are_classified_by_name_ignoring_case)
{
	ck_assert_str_eq(cs_kineto_class_name(cs_kineto_classify(name_rows[_i].name)),
			 cs_kineto_class_name(name_rows[_i].want));
}
END_TEST

/* What architecture a kernel's name says it was built for. */
static const struct { const char *name; int want; } arch_rows[] = {
	{ "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", 90 },
	{ "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize96x128x32_stage4_warpsize2x2x1", 80 },
	{ "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn>", 80 },
	{ "void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_bf16_128x256x64>", 90 },
	{ "sm100_xmma_gemm_bf16bf16_bf16f32", 100 },
	{ "cudnn_generated_fort_native_sdpa_sm90a_flash_fprop", 90 },
	{ "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn", 80 },
	{ "volta_sgemm_128x64_nn", 70 },
	{ "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn", 75 },
	{ "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1", CS_KINETO_ARCH_ROCM },
	{ "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", CS_KINETO_ARCH_NVJET },
	{ "void at::native::vectorized_elementwise_kernel<4, at::native::smem_kernel>", 0 },
	{ "softmax_warp_forward", 0 },
	{ "asm90_kernel", 0 },
	{ "sm9_kernel", 0 },
	{ "sm900_kernel", 0 },
	{ "sm90x_kernel", 0 },
	{ "", 0 },
};

START_TEST(kernel_names_say_their_architecture)
{
	ck_assert_msg(cs_kineto_kernel_arch(arch_rows[_i].name) == arch_rows[_i].want, "'%s': %d, not %d",
		      arch_rows[_i].name, cs_kineto_kernel_arch(arch_rows[_i].name), arch_rows[_i].want);
}
END_TEST

/* ---- small traces in temporary files ------------------------------------ */

enum { PLAIN, GZIP, GZIP_TRUNCATED, GZIP_CORRUPT };

/* Write `text` to a fresh temporary file as `how` says; the caller unlinks
 * and frees the path. */
static char *temp_trace(const char *text, int how)
{
	char buf[4096];
	char *path = strdup(cs_test_tmp(buf, sizeof buf, "cs-kineto"));
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	size_t len = strlen(text);
	if (how == PLAIN) {
		FILE *f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(text, 1, len, f), len);
		ck_assert_int_eq(fclose(f), 0);
		return path;
	}
	gzFile gz = gzopen(path, "wb");
	ck_assert_ptr_nonnull(gz);
	ck_assert_int_eq(gzwrite(gz, text, (unsigned)len), (int)len);
	ck_assert_int_eq(gzclose(gz), Z_OK);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	if (how == GZIP_TRUNCATED) {
		ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
	} else if (how == GZIP_CORRUPT) {
		FILE *f = fopen(path, "r+b");
		ck_assert_ptr_nonnull(f);
		fseek(f, 12, SEEK_SET);   /* into the deflate data, past the 10-byte header */
		fputs("\xff\xff\xff\xff\xff\xff", f);
		ck_assert_int_eq(fclose(f), 0);
	}
	return path;
}

#define K(name, ts, dur) "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" name "\", \"pid\": 0, " \
	"\"tid\": 7, \"ts\": " #ts ", \"dur\": " #dur ", \"args\": {\"device\": 0, \"stream\": 7}}"
#define STEP(cat, n, ts, dur) "{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"ProfilerStep#" #n "\", " \
	"\"ts\": " #ts ", \"dur\": " #dur "}"

/* Two steps, each marked on the CPU and on the GPU; on two streams, an
 * NCCL kernel overlaps a GEMM, so the busy union is less than the sum. */
static const char two_steps[] =
	"{\"schemaVersion\": 1, \"traceEvents\": [\n"
	STEP("user_annotation", 5, 990, 200) ",\n"
	STEP("gpu_user_annotation", 5, 1000, 150) ",\n"
	K("nvjet_tst_128x256", 1000.5, 40) ",\n"
	K("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 1020.5, 60) ",\n"
	K("void at::native::vectorized_elementwise_kernel<4>", 1100, 10.25) ",\n"
	"{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"ts\": 1111, \"dur\": 1},\n"
	"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"ts\": 1112, \"dur\": 3},\n"
	STEP("user_annotation", 6, 1190, 200) ",\n"
	STEP("gpu_user_annotation", 6, 1200, 150) ",\n"
	K("cudnn_generated_fort_native_sdpa_sm90_flash_fprop", 1200, 30) ",\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 1190, \"dur\": 5},\n"
	K("multi_tensor_apply_kernel<FusedAdamMathFunctor>", 1240, 20) "\n"
	"]}\n";

START_TEST(steps_span_and_busy_union)
{
	for (int how = PLAIN; how <= GZIP; how++) {
		char *path = temp_trace(two_steps, how);
		cs_kineto *t = NULL;
		cs_diag diag = { { 0 } };
		ck_assert_msg(cs_kineto_load(path, &t, &diag) == CS_OK, "%s", diag.msg);
		ck_assert_int_eq(cs_kineto_steps(t), 2);
		ck_assert_int_eq(cs_kineto_steps_marked(t), 1);
		ck_assert_int_eq(cs_kineto_kernels(t), 5);
		ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_GEMM), 40000);
		ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_COMM), 60000);
		ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_MEMBOUND), 10250);
		ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_ATTN), 30000);
		ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_OPTIM), 20000);
		ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_COPY), 1);
		ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_COPY), 3000);
		ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_MEMSET), 1);
		/* kernels from 1000.5 to 1260 us; busy [1000.5, 1080.5) + 10.25 + 30 + 20 */
		ck_assert_int_eq(cs_kineto_span_ns(t), 259500);
		ck_assert_int_eq(cs_kineto_busy_ns(t), 80000 + 10250 + 30000 + 20000);
		cs_kineto_free(t);
		unlink(path);
		free(path);
	}
}
END_TEST

/* PyTorch 1.8: Unix-epoch microseconds, ProfilerStep#N as "Operator". */
static const char epoch_steps[] =
	"{\"traceEvents\": [\n"
	STEP("Operator", 1, 1700000000000000, 200) ",\n"
	K("volta_sgemm_128x64_nn", 1700000000000010, 40) ",\n"
	STEP("Operator", 2, 1700000000000200, 200) ",\n"
	K("volta_sgemm_128x64_nn", 1700000000000210, 40) "\n"
	"]}\n";

START_TEST(epoch_times_and_operator_steps)
{
	char *path = temp_trace(epoch_steps, PLAIN);
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kineto_load(path, &t, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(cs_kineto_steps(t), 2);
	ck_assert_int_eq(cs_kineto_steps_marked(t), 1);
	ck_assert_int_eq(cs_kineto_span_ns(t), 240000);
	ck_assert_int_eq(cs_kineto_busy_ns(t), 80000);
	ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_GEMM), 80000);
	cs_kineto_free(t);
	unlink(path);
	free(path);
}
END_TEST

/* ---- GEMM shapes (record_shapes) --------------------------------------- */

#define OP(name, ext, dims) "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", " \
	"\"ts\": 1, \"dur\": 1, \"args\": {\"External id\": " #ext ", \"Input Dims\": " dims "}}"
#define KX(name, ts, dur, ext) "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" name "\", " \
	"\"ts\": " #ts ", \"dur\": " #dur ", \"args\": {\"device\": 0, \"External id\": " #ext "}}"

static const char shaped[] =
	"{\"traceEvents\": [\n"
	KX("nvjet_tst_256x128", 100, 100, 10) ",\n"
	OP("aten::mm", 10, "[[8192, 4096], [4096, 6144]]") ",\n"
	OP("aten::addmm", 11, "[[6144], [8192, 4096], [4096, 6144], [], []]") ",\n"
	KX("sm90_xmma_gemm_bf16", 200, 120, 11) ",\n"
	KX("splitKreduce_kernel", 320, 3, 11) ",\n"
	OP("aten::bmm", 12, "[[16, 128, 64], [16, 64, 128]]") ",\n"
	KX("cutlass_80_tensorop_bf16_s16816gemm", 330, 5, 12) ",\n"
	KX("ampere_bf16_gemm", 340, 7, 13) ",\n"
	OP("aten::mm", 14, "[[8, 4], [5, 6]]") ",\n"
	KX("gemm_bad_dims", 350, 1, 14) ",\n"
	OP("aten::linear", 15, "[[8, 4], [6, 4], [6]]") ",\n"
	KX("gemm_of_linear", 360, 1, 15) "\n"
	"]}\n";

START_TEST(gemm_kernels_by_shape)
{
	char *path = temp_trace(shaped, GZIP);
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kineto_load(path, &t, &diag) == CS_OK, "%s", diag.msg);
	size_t n;
	const cs_kineto_shape *sh = cs_kineto_gemm_shapes(t, &n);
	/* the kernels of 13 (no op), 14 (dims that do not multiply) and 15 (a
	 * linear, not the leaf that launches) have no shape; the split-K
	 * reduction is not a GEMM kernel */
	ck_assert_uint_eq(n, 2);
	ck_assert(sh[0].m == 128 && sh[0].n == 128 && sh[0].k == 64 && sh[0].batch == 16);
	ck_assert(sh[0].kernels == 1 && sh[0].ns == 5000);
	ck_assert(sh[1].m == 8192 && sh[1].n == 6144 && sh[1].k == 4096 && sh[1].batch == 1);
	ck_assert(sh[1].kernels == 2 && sh[1].ns == 220000);
	ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_GEMM), 6);
	cs_kineto_free(t);
	unlink(path);
	free(path);
	/* the measured traces were recorded without shapes */
	ck_assert_int_eq(cs_kineto_load(CS_SOURCE_ROOT "/tests/data/trace_gpt-h5120-8l-s2048-mb4.json.gz",
					&t, &diag), CS_OK);
	ck_assert_ptr_null(cs_kineto_gemm_shapes(t, &n));
	ck_assert_uint_eq(n, 0);
	cs_kineto_free(t);
}
END_TEST

/* ---- bad input ----------------------------------------------------------- */

/* Each refused with CS_ERR_INPUT and a message that starts with the file
 * (quoted, or as FILE:LINE:COL for JSON errors; jansson's column is where it
 * stopped reading, the end of the offending token). */
static const struct {
	const char *text;
	int how;
	const char *want;      /* after the path */
} bad_rows[] = {
	{ "hello", PLAIN, ":1:5: not JSON: '[' or '{' expected near 'hello'" },
	{ "", PLAIN, ":1:0: not JSON: '[' or '{' expected near end of file" },
	{ "{\"traceEvents\": [\n  {\"cat\": \"kernel\",", PLAIN, ":2:19: not JSON: " },
	{ "{\"traceEvents\": [1, 2}", GZIP, ":1:22: not JSON: ']' expected near '}'" },
	/* the events are parsed one at a time: their errors keep their place */
	{ "{\"traceEvents\": [\n  {\"cat\": \"kernel\", \"name\": nope}]}", PLAIN,
	  ":2:32: not JSON: invalid token near 'nope'" },
	{ "{\"traceEvents\": [\n  {\"cat\": \"kernel\", \"name\": \"k\",\n \"ts\": 1, \"dur\": 1,}]}", GZIP,
	  ":3:20: not JSON: string or '}' expected near '}'" },
	{ "{\"a\": nope, \"traceEvents\": []}", PLAIN, ":1:10: not JSON: invalid token near 'nope'" },
	{ "{\"traceEvents\": []} x", PLAIN, ":1:21: not JSON: end of file expected near 'x'" },
	{ two_steps, GZIP_TRUNCATED, "': truncated gzip data at byte " },
	{ two_steps, GZIP_CORRUPT, "': corrupt gzip data at byte " },
	{ "{\"displayTimeUnit\": \"ms\"}", PLAIN, "': no 'traceEvents' array at the top level" },
	{ "{\"traceEvents\": {}}", PLAIN, "': no 'traceEvents' array at the top level" },
	{ "[" K("gemm", 1, 2) "]", PLAIN, "': no 'traceEvents' array at the top level" },
	{ "{\"traceEvents\": []}", PLAIN, "': no GPU kernels (no event with \"cat\": \"kernel\"" },
	{ "{\"traceEvents\": [{\"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 1, \"dur\": 2}]}", GZIP,
	  "': no GPU kernels" },
	{ "{\"traceEvents\": [1, {\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]}", PLAIN,
	  "': event 1 of 'traceEvents' (\"cat\": \"kernel\") has no numeric 'dur' (microseconds)" },
	{ "{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": \"1\", \"dur\": 1}]}", PLAIN,
	  "': event 0 of 'traceEvents' (\"cat\": \"kernel\") has no numeric 'ts'" },
	{ "{\"traceEvents\": [{\"cat\": \"gpu_memset\", \"ts\": 1, \"dur\": -1}]}", PLAIN,
	  "': event 0 of 'traceEvents' (\"cat\": \"gpu_memset\") has an out-of-range 'dur'" },
	{ "{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1e300, \"dur\": 1}]}", PLAIN,
	  "': event 0 of 'traceEvents' (\"cat\": \"kernel\") has an out-of-range 'ts'" },
	{ "{\"traceEvents\": [{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1}]}", PLAIN,
	  "': event 0 of 'traceEvents' (\"cat\": \"kernel\") has no 'name' string" },
	{ "{\"traceEvents\": [" K("a", 1, 1) ", {\"cat\": \"kernel\", \"name\": \"b\", \"ts\": 3, \"dur\": 1, "
	  "\"args\": {\"device\": 1}}]}", PLAIN, "': kernels of more than one GPU (devices 0 and 1)" },
};

START_TEST(bad_input_is_refused_with_its_place)
{
	char *path = temp_trace(bad_rows[_i].text, bad_rows[_i].how);
	static char sentinel;
	cs_kineto *t = (cs_kineto *)(void *)&sentinel;   /* must come back NULL */
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kineto_load(path, &t, &diag), CS_ERR_INPUT);
	ck_assert_ptr_null(t);
	char want[1200];
	int quoted = bad_rows[_i].want[0] == '\'';
	snprintf(want, sizeof want, "%s%s%s", quoted ? "'" : "", path, bad_rows[_i].want);
	ck_assert_msg(strncmp(diag.msg, want, strlen(want)) == 0, "got \"%s\", want \"%s...\"", diag.msg, want);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(files_that_cannot_be_read)
{
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kineto_load("/nonexistent/trace.json", &t, &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "cannot open '/nonexistent/trace.json': No such file or directory");
	ck_assert_int_eq(cs_kineto_load("/dev/null", &t, &diag), CS_ERR_INPUT);
	ck_assert_str_eq(diag.msg, "cannot read '/dev/null': not a regular file");
	ck_assert_ptr_null(t);
	/* the size limit applies to one event's text, not to the trace: the
	 * longest event of two_steps is the element-wise kernel, element 4, of
	 * 171 bytes (the first over 137 is element 2, of 138) */
	for (int how = PLAIN; how <= GZIP; how++) {
		char *path = temp_trace(two_steps, how);
		ck_assert_int_eq(cs__kineto_load_limit(path, 170, &t, &diag), CS_ERR_INPUT);
		char want[600];
		snprintf(want, sizeof want, "'%s': element 4 of 'traceEvents' is larger than the limit of "
			 "170 bytes", path);
		ck_assert_str_eq(diag.msg, want);
		ck_assert_ptr_null(t);
		ck_assert_int_eq(cs__kineto_load_limit(path, 171, &t, &diag), CS_OK);
		cs_kineto_free(t);
		t = NULL;
		unlink(path);
		free(path);
	}
}
END_TEST

/* The GPU's name from 'deviceProperties', before or after the events, and
 * the kernels by architecture; the events read the same either way. */
static const struct { const char *text; const char *device; } device_rows[] = {
	{ "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\"}, {\"name\": \"B\"}], "
	  "\"traceEvents\": [" K("sm80_xmma_gemm_bf16", 10, 5) "," K("ampere_sgemm_nn", 20, 5) ","
	  K("elementwise", 30, 5) "]}", "NVIDIA A100-SXM4-80GB" },
	{ "{\"traceEvents\": [" K("sm80_xmma_gemm_bf16", 10, 5) "," K("ampere_sgemm_nn", 20, 5) ","
	  K("elementwise", 30, 5) "], \"deviceProperties\": [{\"name\": \"NVIDIA H100 80GB HBM3\"}]}",
	  "NVIDIA H100 80GB HBM3" },
	{ "{\"traceEvents\": [" K("sm80_xmma_gemm_bf16", 10, 5) "," K("ampere_sgemm_nn", 20, 5) ","
	  K("elementwise", 30, 5) "]}", "" },
	{ "{\"deviceProperties\": {\"name\": \"not an array\"}, \"traceEvents\": ["
	  K("sm80_xmma_gemm_bf16", 10, 5) "," K("ampere_sgemm_nn", 20, 5) "," K("elementwise", 30, 5)
	  "]}", "" },
};

START_TEST(device_properties_name_the_gpu)
{
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	const char *text = device_rows[_i].text;
	ck_assert_msg(cs_kineto_parse("t.json", text, strlen(text), &t, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_str_eq(cs_kineto_device(t), device_rows[_i].device);
	ck_assert_int_eq(cs_kineto_kernels(t), 3);
	ck_assert_int_eq(cs_kineto_arch_kernels(t, 80), 2);
	ck_assert_int_eq(cs_kineto_arch_kernels(t, 0), 1);
	ck_assert_int_eq(cs_kineto_arch_kernels(t, 90), 0);
	ck_assert_int_eq(cs_kineto_arch_kernels(t, -1), 0);
	cs_kineto_free(t);
}
END_TEST

/* Each kernel name's totals, the most time first (ties by name), with its
 * class; copies and memsets are not kernels. */
static const char by_name[] =
	"{\"traceEvents\": [\n"
	K("nvjet_a", 1000, 10) ",\n"
	K("elementwise_b", 1010, 5) ",\n"
	K("flash_fwd", 1020, 60) ",\n"
	K("nvjet_a", 1080, 20) ",\n"
	K("ncclKernel_x", 1100, 60) ",\n"
	"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"ts\": 1160, \"dur\": 3},\n"
	K("elementwise_b", 1170, 5) ",\n"
	K("nvjet_a", 1180, 35) "\n"
	"]}\n";

START_TEST(kernels_are_totalled_by_name)
{
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kineto_parse("t.json", by_name, strlen(by_name), &t, &diag) == CS_OK, "%s", diag.msg);
	static const struct {
		const char *name;
		cs_kineto_class cls;
		int64_t count, ns;
	} want[] = {
		{ "nvjet_a", CS_KINETO_GEMM, 3, 65000 },
		{ "flash_fwd", CS_KINETO_ATTN, 1, 60000 },
		{ "ncclKernel_x", CS_KINETO_COMM, 1, 60000 },
		{ "elementwise_b", CS_KINETO_MEMBOUND, 2, 10000 },
	};
	size_t n;
	const cs_kineto_kernel *k = cs_kineto_kernels_by_name(t, &n);
	ck_assert_uint_eq(n, ROWS(want));
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(k[i].name, want[i].name);
		ck_assert_int_eq(k[i].cls, want[i].cls);
		ck_assert_int_eq(k[i].count, want[i].count);
		ck_assert_int_eq(k[i].ns, want[i].ns);
	}
	cs_kineto_free(t);
}
END_TEST

/* Thousands of names: the table grows and loses none. */
START_TEST(many_kernel_names_keep_their_totals)
{
	enum { NAMES = 3000 };
	size_t cap = (size_t)NAMES * 2 * 128 + 64, len = 0;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	len += (size_t)snprintf(text + len, cap - len, "{\"traceEvents\": [\n");
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < NAMES; i++)
			len += (size_t)snprintf(text + len, cap - len,
						"%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", "
						"\"ts\": %d, \"dur\": %d}",
						r || i ? ",\n" : "", i, 10 * (r * NAMES + i), i + 1);
	len += (size_t)snprintf(text + len, cap - len, "\n]}\n");
	ck_assert_uint_lt(len, cap);
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kineto_parse("t.json", text, len, &t, &diag) == CS_OK, "%s", diag.msg);
	size_t n;
	const cs_kineto_kernel *k = cs_kineto_kernels_by_name(t, &n);
	ck_assert_uint_eq(n, NAMES);
	for (size_t i = 0; i < n; i++) {
		/* k2999 took the most: 2 x 3000 us */
		char want[16];
		snprintf(want, sizeof want, "k%zu", NAMES - 1 - i);
		ck_assert_str_eq(k[i].name, want);
		ck_assert_int_eq(k[i].count, 2);
		ck_assert_int_eq(k[i].ns, 2 * 1000 * (int64_t)(NAMES - i));
	}
	cs_kineto_free(t);
	free(text);
}
END_TEST

/* A user's rules come first, in their order, ignoring case; a kernel no
 * rule matches keeps its built-in class. */
START_TEST(user_rules_classify_first)
{
	static const char rules[] = "# the user's\n"
				    "memory_bound  NVJET_A\n"
				    "  gemm\telementwise_b  \n"
				    "\n"
				    "attention elementwise\n";
	cs_kernel_rules *r = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kernel_rules_parse("r.txt", rules, strlen(rules), &r, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_int_eq(cs_kernel_rules_match(r, "xx_nvjet_a_yy"), CS_KINETO_MEMBOUND);
	ck_assert_int_eq(cs_kernel_rules_match(r, "Elementwise_B"), CS_KINETO_GEMM);
	ck_assert_int_eq(cs_kernel_rules_match(r, "elementwise_c"), CS_KINETO_ATTN);
	ck_assert_int_eq(cs_kernel_rules_match(r, "flash_fwd"), -1);
	cs_kineto *t = NULL;
	ck_assert_msg(cs_kineto_parse_ruled("t.json", by_name, strlen(by_name), r, &t, &diag) == CS_OK, "%s",
		      diag.msg);
	ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_MEMBOUND), 65000);
	ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_GEMM), 10000);
	ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_ATTN), 60000);
	size_t n;
	const cs_kineto_kernel *k = cs_kineto_kernels_by_name(t, &n);
	ck_assert_str_eq(k[0].name, "nvjet_a");
	ck_assert_int_eq(k[0].cls, CS_KINETO_MEMBOUND);
	cs_kineto_free(t);
	cs_kernel_rules_free(r);
}
END_TEST

static const struct {
	const char *text, *msg;
} bad_rule_rows[] = {
	{ "gemmm x\n", "r.txt:1:1: unknown class 'gemmm' (gemm, attention, memory_bound, optimizer or communication)" },
	{ "# ok\n  copy memcpy\n", "r.txt:2:3: unknown class 'copy'" },
	{ "gemm nvjet\nattention   \n", "r.txt:2:13: no pattern after 'attention'" },
};

START_TEST(bad_rules_are_refused_with_their_place)
{
	cs_kernel_rules *r = NULL;
	cs_diag diag = { { 0 } };
	const char *text = bad_rule_rows[_i].text;
	ck_assert_int_eq(cs_kernel_rules_parse("r.txt", text, strlen(text), &r, &diag), CS_ERR_INPUT);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(diag.msg, bad_rule_rows[_i].msg) != NULL, "%s", diag.msg);
}
END_TEST


/* ---- other people's traces ----------------------------------------------- */

/*
 * The traces of HolisticTraceAnalysis's test data (tests/data/README.md):
 * ROCm, Triton, a plain-JSON trace, several streams, relative timestamps
 * behind a baseTimeNanoseconds, absolute Unix-epoch ones. The figures are
 * what this Python computes from each file (kernel events of any case of
 * "cat"; times rebased to the first kernel, memcpy or memset event and
 * rounded to ns; ProfilerStep#N of any other category):
 *   base = first ts; iv = [(round((ts - base) * 1000), + round(dur * 1000))]
 *   span = max(end) - min(start); busy = length of the union of iv
 * Each GPU's time is exact to the ns the reader rounds to, or one ns a
 * kernel off where Python's rounding of a double differs from llroundl's.
 */
static const struct {
	const char *file;
	int64_t kernels, steps, span_ns, busy_ns;
	const char *device;
	int64_t rank, gemms;
} hta_rows[] = {
	{ "mi250_minitoy_train_ROCm6_2_kineto.json.gz", 14, 2, 8594445, 110881, "AMD Radeon Graphics", -1, 2 },
	{ "triton_example.json.gz", 1, 1, 1760, 1760, "NVIDIA A100-PG509-200", -1, 0 }, /* a pointwise */
	{ "backward_thread.json", 1, 1, 45000, 45000, "", 0, 1 }, /* a CUTLASS GEMM */
	{ "alexnet_benchmark_result_2869224_1695835535_trace.json.gz", 79, 1, 12840244000, 10630000,
	  "NVIDIA A100-PG509-200", 0, -1 },
	{ "event_sync_multi_stream_trace.json.gz", 3, 1, 19473000, 369000, "NVIDIA A100-PG509-200", 0, 3 },
	{ "benchmark_simple_add_trace.json.gz", 4, 1, 108919000, 16000, "NVIDIA A100-PG509-200", 0, -1 },
	{ "trace_compare_base.json.gz", 6, 2, 274039000, 432000, "", 1, -1 },
	{ "inference_rank_1.json.gz", 4, 1, 1629000, 30000, "", 1, -1 },
	{ "sampled/sampled_rank-0.json.gz", 1154, 2, 1222818000, 547303000, "", 0, -1 },
	{ "sampled/sampled_rank-1.json.gz", 1104, 2, 1231182000, 575496000, "", 1, -1 },
};

START_TEST(hta_traces_are_read)
{
	char path[512];
	snprintf(path, sizeof path, CS_SOURCE_ROOT "/tests/data/kineto/hta/%s", hta_rows[_i].file);
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kineto_load(path, &t, &diag) == CS_OK, "%s", diag.msg);
	int64_t k = hta_rows[_i].kernels;
	ck_assert_int_eq(cs_kineto_kernels(t), k);
	ck_assert_int_eq(cs_kineto_steps(t), hta_rows[_i].steps);
	ck_assert_int_le(llabs(cs_kineto_span_ns(t) - hta_rows[_i].span_ns), k);
	ck_assert_int_le(llabs(cs_kineto_busy_ns(t) - hta_rows[_i].busy_ns), k);
	ck_assert_str_eq(cs_kineto_device(t), hta_rows[_i].device);
	ck_assert_uint_eq(cs_kineto_ranks(t), 1);
	ck_assert_int_eq(cs_kineto_rank_at(t, 0)->rank, hta_rows[_i].rank);
	ck_assert_int_eq(cs_kineto_rank_at(t, 0)->kernels, k);
	ck_assert_ptr_null(cs_kineto_rank_at(t, 1));
	if (hta_rows[_i].gemms >= 0)
		ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_GEMM), hta_rows[_i].gemms);
	cs_kineto_free(t);
}
END_TEST

/* Files of HTA's test data that are not Kineto traces of a GPU. */
static const struct { const char *file, *msg; } hta_refused_rows[] = {
	{ "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", "no GPU kernels" },
	{ "benchmark_simple_add_et.json.gz", "no 'traceEvents' array at the top level" },
};

START_TEST(hta_files_without_gpu_kernels_are_refused)
{
	char path[512];
	snprintf(path, sizeof path, CS_SOURCE_ROOT "/tests/data/kineto/hta/%s", hta_refused_rows[_i].file);
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kineto_load(path, &t, &diag), CS_ERR_INPUT);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(diag.msg, hta_refused_rows[_i].msg) && strstr(diag.msg, path), "%s", diag.msg);
}
END_TEST

/* A folder of two ranks' traces: the job's totals are the files' sums, each
 * rank's its own, in rank order. */
START_TEST(a_folder_is_a_job_of_ranks)
{
	cs_kineto *t = NULL, *r0 = NULL, *r1 = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_msg(cs_kineto_load(CS_SOURCE_ROOT "/tests/data/kineto/hta/sampled", &t, &diag) == CS_OK, "%s",
		      diag.msg);
	ck_assert_int_eq(cs_kineto_load(CS_SOURCE_ROOT "/tests/data/kineto/hta/sampled/sampled_rank-0.json.gz",
					&r0, &diag),
			 CS_OK);
	ck_assert_int_eq(cs_kineto_load(CS_SOURCE_ROOT "/tests/data/kineto/hta/sampled/sampled_rank-1.json.gz",
					&r1, &diag),
			 CS_OK);
	ck_assert_uint_eq(cs_kineto_ranks(t), 2);
	ck_assert_int_eq(cs_kineto_kernels(t), 1154 + 1104);
	ck_assert_int_eq(cs_kineto_steps(t), 2);
	ck_assert_int_eq(cs_kineto_span_ns(t), cs_kineto_span_ns(r0) + cs_kineto_span_ns(r1));
	ck_assert_int_eq(cs_kineto_busy_ns(t), cs_kineto_busy_ns(r0) + cs_kineto_busy_ns(r1));
	for (int c = 0; c < CS_KINETO_CLASSES; c++) {
		ck_assert_int_eq(cs_kineto_class_ns(t, c), cs_kineto_class_ns(r0, c) + cs_kineto_class_ns(r1, c));
		ck_assert_int_eq(cs_kineto_class_count(t, c),
				 cs_kineto_class_count(r0, c) + cs_kineto_class_count(r1, c));
	}
	ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_COMM), 20);
	const cs_kineto_rank *a = cs_kineto_rank_at(t, 0), *b = cs_kineto_rank_at(t, 1);
	ck_assert_str_eq(a->file, "sampled_rank-0.json.gz");
	ck_assert_str_eq(b->file, "sampled_rank-1.json.gz");
	ck_assert_int_eq(a->rank, 0);
	ck_assert_int_eq(b->rank, 1);
	ck_assert_int_eq(a->kernels, 1154);
	ck_assert_int_eq(b->span_ns, cs_kineto_span_ns(r1));
	/* the names' table: every kernel once, the sums of both ranks */
	size_t n, n0, n1;
	const cs_kineto_kernel *kt = cs_kineto_kernels_by_name(t, &n);
	const cs_kineto_kernel *k0 = cs_kineto_kernels_by_name(r0, &n0);
	(void)cs_kineto_kernels_by_name(r1, &n1);
	ck_assert_uint_ge(n, n0);
	ck_assert_uint_le(n, n0 + n1);
	int64_t count = 0;
	for (size_t i = 0; i < n; i++) {
		count += kt[i].count;
		if (i > 0)
			ck_assert_int_ge(kt[i - 1].ns, kt[i].ns);
	}
	ck_assert_int_eq(count, 1154 + 1104);
	int64_t want = 0;
	for (size_t i = 0; i < n0; i++)
		if (strcmp(k0[i].name, kt[0].name) == 0)
			want += k0[i].ns;
	size_t m1;
	const cs_kineto_kernel *k1 = cs_kineto_kernels_by_name(r1, &m1);
	for (size_t i = 0; i < m1; i++)
		if (strcmp(k1[i].name, kt[0].name) == 0)
			want += k1[i].ns;
	ck_assert_int_eq(kt[0].ns, want);
	cs_kineto_free(t);
	cs_kineto_free(r0);
	cs_kineto_free(r1);
}
END_TEST

/* Write `text` as dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define TRACE_OF_RANK(r, steps) \
	"{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " #r "}, \"traceEvents\": [" steps "," \
	K("gemm_a", 1700000000000000, 10) "," K("ncclKernel_AllReduce", 1700000000000020, 5) "]}"
#define ONE_STEP "{\"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"ts\": 0, \"dur\": 9}"
#define TWO_STEPS ONE_STEP ", {\"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"ts\": 9, \"dur\": 9}"

/* Ranks in distributedInfo order whatever the files' names; what cannot be
 * one job is refused with the file named. */
START_TEST(folders_order_ranks_and_refuse_what_is_not_one_job)
{
	char dir[256];
	cs_test_tmp(dir, sizeof dir, "cs_kineto_dir");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	cs_kineto *t = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kineto_load(dir, &t, &diag), CS_ERR_INPUT);
	ck_assert_msg(strstr(diag.msg, "a folder without trace files"), "%s", diag.msg);
	put(dir, "host_b.pt.trace.json", TRACE_OF_RANK(0, ONE_STEP));
	put(dir, "host_a.pt.trace.json", TRACE_OF_RANK(10, ONE_STEP));
	put(dir, "host_c.pt.trace.json", TRACE_OF_RANK(2, ONE_STEP));
	put(dir, "notes.txt", "not a trace");
	ck_assert_msg(cs_kineto_load(dir, &t, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_uint_eq(cs_kineto_ranks(t), 3);
	ck_assert_str_eq(cs_kineto_rank_at(t, 0)->file, "host_b.pt.trace.json");
	ck_assert_int_eq(cs_kineto_rank_at(t, 1)->rank, 2);
	ck_assert_int_eq(cs_kineto_rank_at(t, 2)->rank, 10);
	ck_assert_int_eq(cs_kineto_class_ns(t, CS_KINETO_GEMM), 3 * 10000);
	ck_assert_int_eq(cs_kineto_class_count(t, CS_KINETO_COMM), 3);
	ck_assert_int_eq(cs_kineto_span_ns(t), 3 * 25000);
	size_t n;
	const cs_kineto_kernel *k = cs_kineto_kernels_by_name(t, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(k[0].name, "gemm_a");
	ck_assert_int_eq(k[0].count, 3);
	cs_kineto_free(t);
	t = NULL;
	/* another step count */
	put(dir, "host_d.pt.trace.json", TRACE_OF_RANK(3, TWO_STEPS));
	ck_assert_int_eq(cs_kineto_load(dir, &t, &diag), CS_ERR_INPUT);
	ck_assert_msg(strstr(diag.msg, "host_d.pt.trace.json': 2 steps, and 1 in 'host_a.pt.trace.json'"), "%s",
		      diag.msg);
	ck_assert_ptr_null(t);
	/* a file that is not a trace of a GPU */
	put(dir, "host_d.pt.trace.json", "{\"traceEvents\": []}");
	ck_assert_int_eq(cs_kineto_load(dir, &t, &diag), CS_ERR_INPUT);
	ck_assert_msg(strstr(diag.msg, "host_d.pt.trace.json': no GPU kernels"), "%s", diag.msg);
	/* without a rank in every trace, the files' natural order */
	put(dir, "host_d.pt.trace.json", "{\"traceEvents\": [" ONE_STEP "," K("gemm_a", 5, 10) "]}");
	ck_assert_msg(cs_kineto_load(dir, &t, &diag) == CS_OK, "%s", diag.msg);
	ck_assert_str_eq(cs_kineto_rank_at(t, 0)->file, "host_a.pt.trace.json");
	ck_assert_int_eq(cs_kineto_rank_at(t, 3)->rank, -1);
	cs_kineto_free(t);
	const char *names[] = { "host_a.pt.trace.json", "host_b.pt.trace.json", "host_c.pt.trace.json",
				"host_d.pt.trace.json", "notes.txt" };
	for (size_t i = 0; i < ROWS(names); i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}
END_TEST

/* A trace whose times count from its baseTimeNanoseconds reads as the same
 * trace in Unix-epoch microseconds. */
START_TEST(base_time_and_epoch_times_read_alike)
{
	const char *rel = "{\"baseTimeNanoseconds\": 1735632360000000000, \"traceEvents\": [" K("gemm_a", 3.5, 10) ","
			  K("elementwise", 20.25, 4) "]}";
	const char *abs = "{\"traceEvents\": [" K("gemm_a", 1735632360000003.5, 10) ","
			  K("elementwise", 1735632360000020.25, 4) "]}";
	cs_kineto *a = NULL, *b = NULL;
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_kineto_parse("rel.json", rel, strlen(rel), &a, &diag), CS_OK);
	ck_assert_int_eq(cs_kineto_parse("abs.json", abs, strlen(abs), &b, &diag), CS_OK);
	ck_assert_int_eq(cs_kineto_span_ns(a), 20750);
	ck_assert_int_eq(cs_kineto_span_ns(b), 20750);
	ck_assert_int_eq(cs_kineto_busy_ns(a), 14000);
	ck_assert_int_eq(cs_kineto_busy_ns(b), 14000);
	cs_kineto_free(a);
	cs_kineto_free(b);
}
END_TEST

static Suite *kineto_suite(void)
{
	Suite *s = suite_create("kineto");
	TCase *tc = tcase_create("reference");
	tcase_add_loop_test(tc, classes_match_the_python_reference, 0, ROWS(ref_rows));
	suite_add_tcase(s, tc);
	tc = tcase_create("classify");
	tcase_add_loop_test(tc, kernels_are_classified_by_name_ignoring_case, 0, ROWS(name_rows));
	tcase_add_loop_test(tc, kernel_names_say_their_architecture, 0, ROWS(arch_rows));
	tcase_add_loop_test(tc, device_properties_name_the_gpu, 0, ROWS(device_rows));
	suite_add_tcase(s, tc);
	tc = tcase_create("steps");
	tcase_add_test(tc, steps_span_and_busy_union);
	tcase_add_test(tc, epoch_times_and_operator_steps);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_add_test(tc, kernels_are_totalled_by_name);
	tcase_add_test(tc, many_kernel_names_keep_their_totals);
	tcase_add_test(tc, user_rules_classify_first);
	tcase_add_loop_test(tc, bad_rules_are_refused_with_their_place, 0, ROWS(bad_rule_rows));
	suite_add_tcase(s, tc);
	tc = tcase_create("shapes");
	tcase_add_test(tc, gemm_kernels_by_shape);
	suite_add_tcase(s, tc);
	tc = tcase_create("others");
	tcase_add_loop_test(tc, hta_traces_are_read, 0, ROWS(hta_rows));
	tcase_add_loop_test(tc, hta_files_without_gpu_kernels_are_refused, 0, ROWS(hta_refused_rows));
	tcase_add_test(tc, a_folder_is_a_job_of_ranks);
	tcase_add_test(tc, folders_order_ranks_and_refuse_what_is_not_one_job);
	tcase_add_test(tc, base_time_and_epoch_times_read_alike);
	suite_add_tcase(s, tc);
	tc = tcase_create("bad_input");
	tcase_add_loop_test(tc, bad_input_is_refused_with_its_place, 0, ROWS(bad_rows));
	tcase_add_test(tc, files_that_cannot_be_read);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(kineto_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
