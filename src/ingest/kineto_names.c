/*
 * kineto_names.c - what a kernel's name says: its class (the order and the
 * families of kineto.h) and the GPU architecture it was built for.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/kineto.h"

/* ---- classification ----------------------------------------------------- */

int cs_kineto_name_has(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] &&
		       (hay[i] >= 'A' && hay[i] <= 'Z' ? hay[i] + 32 : hay[i]) == needle[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

static int has_any(const char *hay, const char *const *needles)
{
	for (; *needles; needles++)
		if (cs_kineto_name_has(hay, *needles))
			return 1;
	return 0;
}

/* "gemm" in `name` other than as fbgemm's (FBGEMM_GPU's permute, embedding
 * and jagged kernels are not matrix products). */
static int has_gemm(const char *name)
{
	for (const char *p = name; *p; p++)
		if (strncasecmp(p, "gemm", 4) == 0 && !(p - name >= 2 && strncasecmp(p - 2, "fb", 2) == 0))
			return 1;
	return 0;
}

cs_kineto_class cs_kineto_classify(const char *name)
{
	/* and Triton's flash attention (_attn_fwd, _attn_bwd...) */
	static const char *const attn[] = { "sdpa",      "fmha",      "flash",     "cudnn::fusion",
					    "attention", "_attn_fwd", "_attn_bwd", NULL };
	/* cuBLAS/cuBLASLt (nvjet, xmma), CUTLASS, ROCm's Tensile (Cijk_) and
	 * cuDNN's convolutions (convolve, winograd) */
	static const char *const gemm[] = { "nvjet", "cutlass",  "xmma",     "cublas",
					    "cijk_", "convolve", "winograd", NULL };
	if (cs_kineto_name_has(name, "nccl"))
		return CS_KINETO_COMM;
	if (cs_kineto_name_has(name, "adam") ||
	    (cs_kineto_name_has(name, "multi_tensor_apply") && cs_kineto_name_has(name, "fusedoptimizer")))
		return CS_KINETO_OPTIM;
	if (has_any(name, attn))
		return CS_KINETO_ATTN;
	if (has_gemm(name) || has_any(name, gemm))
		return CS_KINETO_GEMM;
	/* torch.compile's Triton templates: triton_tem_fused_mm, _addmm, _bmm
	 * (its pointwise and reduction kernels are memory-bound) */
	if (cs_kineto_name_has(name, "triton_tem_") && cs_kineto_name_has(name, "mm"))
		return CS_KINETO_GEMM;
	return CS_KINETO_MEMBOUND;
}

/* The digits at p as a number in [lo, hi], where the tag ends after them:
 * at the name's end, a byte that is no letter or digit, or one of `ends`;
 * 0 when it does not. */
static int tag_number(const char *p, int lo, int hi, const char *ends)
{
	int v = 0, n = 0;
	for (; *p >= '0' && *p <= '9' && n < 4; p++, n++)
		v = 10 * v + (*p - '0');
	if (n < 2 || v < lo || v > hi)
		return 0;
	return !isalnum((unsigned char)*p) || strchr(ends, *p) ? v : 0;
}

int cs_kineto_kernel_arch(const char *name)
{
	static const struct {
		const char *prefix;
		int arch;
	} legacy[] = {
		{ "volta_", 70 },
		{ "turing_", 75 },
		{ "ampere_", 80 },
	};
	for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++)
		if (strncmp(name, legacy[i].prefix, strlen(legacy[i].prefix)) == 0)
			return legacy[i].arch;
	for (const char *p = name; *p; p++) {
		bool start = p == name || !isalnum((unsigned char)p[-1]);
		int v = 0;
		if (start && p[0] == 's' && p[1] == 'm')
			v = tag_number(p + 2, 60, 130, "a_");
		else if (start && strncmp(p, "cutlass_", 8) == 0)
			v = tag_number(p + 8, 60, 130, "_");
		if (v)
			return v;
	}
	if (strncmp(name, "Cijk_", 5) == 0 || strstr(name, " Cijk_"))
		return CS_KINETO_ARCH_ROCM;
	if (strncmp(name, "nvjet_", 6) == 0)
		return CS_KINETO_ARCH_NVJET;
	return 0;
}

const char *cs_kineto_class_name(cs_kineto_class c)
{
	static const char *const names[CS_KINETO_CLASSES] = { "gemm",      "attention",     "memory_bound",
							      "optimizer", "communication", "copy",
							      "memset" };
	return (unsigned)c < CS_KINETO_CLASSES ? names[c] : "?";
}
