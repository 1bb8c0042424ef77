/*
 * kineto_int.h - what the Kineto reader's files share: the summary's body
 * and the reading of one trace file, which kineto_ranks.c calls per file of
 * a folder.
 */
#ifndef CS_INGEST_KINETO_INT_H
#define CS_INGEST_KINETO_INT_H

#include "ingest/kineto.h"
#include "ingest/kernel_rules.h"

#include <stdlib.h>

/* qsort, for arrays that may be empty and then NULL (which qsort's
 * pointer must never be). */
static inline void cs__kineto_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

struct cs_kineto {
	/* totals over the ranks (one, for a file) */
	int64_t ns[CS_KINETO_CLASSES], count[CS_KINETO_CLASSES];
	int64_t steps; /* each rank's */
	int steps_marked;
	int64_t kernels, span_ns, busy_ns;
	cs_kineto_shape *shapes;
	size_t nshapes;
	char device[128];                   /* deviceProperties[0].name */
	int64_t arch[CS_KINETO_ARCH_CODES]; /* kernels by the architecture their names say */
	cs_kineto_kernel *by_name;          /* each kernel name's totals, the most time first */
	size_t nnames;
	int64_t rank;          /* distributedInfo's "rank", or -1 */
	cs_kineto_rank *ranks; /* each GPU's totals, in rank order; their names are owned */
	size_t nranks;
};

/* Read the trace file at `path` (not a folder) into *out, with its one
 * rank; as cs__kineto_load_limit. */
cs_status cs__kineto_load_file(const char *path, size_t max_event, const cs_kernel_rules *rules,
			       cs_kineto **out, cs_diag *diag);
/* The qsort order of kernels: the most time first, ties by name. */
int cs__kineto_cmp_kernel(const void *x, const void *y);
/* sh[0..n) sorted by (m, n, k, batch) and equal shapes summed into one;
 * returns how many are left. */
size_t cs__kineto_sum_shapes(cs_kineto_shape *sh, size_t n);
/* The one rank of a trace just read, named `file` (copied): 0, or -1 out
 * of memory. */
int cs__kineto_own_rank(cs_kineto *t, const char *file);

#endif
