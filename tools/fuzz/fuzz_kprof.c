/*
 * fuzz_kprof.c - libFuzzer target for the kernel-profile reader
 * (cs_kprof_parse: a profile's YAML, its tables and curves): the input is
 * the text. It must refuse bad input with a diagnostic, never crash, hang,
 * leak or read out of bounds; a profile it takes must time a GEMM, a
 * memory-bound kernel and contention as a positive finite figure (or 0
 * where it has no table). Seeded with the built-in profiles
 * (the YAML files of src/hw/profiles). Built and run by tools/fuzz/run-fuzz.sh.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "hw/kprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A time or rate the profile gives: finite, never negative. */
static void sane(double v)
{
	if (!isfinite(v) || v < 0)
		abort(); /* the parser promised tables that interpolate */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cs_kprof *p = NULL;
	cs_diag diag = { { 0 } };
	if (cs_kprof_parse((const char *)data, size, "fuzz.yaml", &p, &diag) != CS_OK) {
		if (p)
			abort(); /* refused: nothing handed over */
		return 0;
	}
	sane(cs_kprof_gemm(p, CS_GEMM_BF16, CS_GEMM_NN, 4096, 4096, 4096));
	sane(cs_kprof_gemm(p, CS_GEMM_FP8, CS_GEMM_NT, 1, 1, 1));
	for (int k = 0; k < CS_MEM_KINDS; k++)
		sane(cs_kprof_mem(p, (cs_mem_kind)k, 1 << 20));
	sane(cs_kprof_contention(p, 0.25));
	cs_kprof_free(p);
	return 0;
}
