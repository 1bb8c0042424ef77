/*
 * kernel_rules.h - a user's classes of kernels for the profiler trace
 * reader (kineto.h), ahead of its built-in ones: a text file of rules,
 * one a line,
 *
 *     # comment
 *     gemm          my_fused_matmul
 *     memory_bound  triton_tem_fused_mm_
 *
 * the class (gemm, attention, memory_bound, optimizer, communication) and
 * a pattern, the rest of the line: a kernel whose name contains the
 * pattern, ignoring ASCII case, is of the class of the first rule that
 * matches; a kernel no rule matches is classified as kineto.h says.
 *
 * Ownership: cs_kernel_rules_load and cs_kernel_rules_parse allocate
 * *out, which the caller frees with cs_kernel_rules_free.
 */
#ifndef CS_INGEST_KERNEL_RULES_H
#define CS_INGEST_KERNEL_RULES_H

#include <stddef.h>

#include "clustersim/clustersim.h"
#include "ingest/kineto.h"

/* At most this many rules, of a file of at most 1 MiB. */
#define CS_KERNEL_RULES_MAX 10000

typedef struct cs_kernel_rules cs_kernel_rules;

/* Errors, in diag: "cannot open 'PATH': ...", "FILE:LINE:COL: unknown
 * class 'x' (gemm, attention, memory_bound, optimizer or communication)",
 * "FILE:LINE:COL: no pattern after 'gemm'", "FILE:LINE:1: more than 10000
 * rules" (CS_ERR_INPUT), or out of memory (CS_ERR_NOMEM). */
cs_status cs_kernel_rules_load(const char *path, cs_kernel_rules **out, cs_diag *diag);
/* The same from `len` bytes of text; `name` labels messages. */
cs_status cs_kernel_rules_parse(const char *name, const char *text, size_t len, cs_kernel_rules **out,
				cs_diag *diag);
void cs_kernel_rules_free(cs_kernel_rules *r);
/* The class of the first rule whose pattern `name` contains, or -1. */
int cs_kernel_rules_match(const cs_kernel_rules *r, const char *name);

#endif
