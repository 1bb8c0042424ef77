/*
 * nccl_style.c - nccl-tests' options for `clustersim coll`: its short
 * options (src/common.cu's getopt_long string and longopts), the names of
 * its test binaries, and its sizes (what it prints is report/nccl_out.c's).
 */
#include "cli/nccl_style.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

/* nccl-tests' short options, as the long ones they mean there. */
static const struct {
	char flag;
	const char *opt;
} short_opts[] = {
	{ 't', "--nthreads" },
	{ 'g', "--ngpus" },
	{ 'b', "--minbytes" },
	{ 'e', "--maxbytes" },
	{ 'i', "--stepbytes" },
	{ 'f', "--stepfactor" },
	{ 'n', "--iters" },
	{ 'm', "--agg_iters" },
	{ 'w', "--warmup_iters" },
	{ 'N', "--run_cycles" },
	{ 'p', "--parallel_init" },
	{ 'I', "--per_iter_timing" },
	{ 'K', "--per_iter_skip" },
	{ 'c', "--check" },
	{ 'o', "--op" },
	{ 'd', "--datatype" },
	{ 'r', "--root" },
	{ 'z', "--blocking" },
	{ 'y', "--stream_null" },
	{ 'T', "--timeout" },
	{ 'G', "--cudagraph" },
	{ 'C', "--report_cputime" },
	{ 'a', "--average" },
	{ 'R', "--local_register" },
	{ 'x', "--cta_policy" },
	{ 'D', "--device_implementation" },
	{ 'V', "--device_cta_count" },
	{ 'J', "--output_file" },
	{ 'S', "--report_timestamps" },
	{ 'M', "--memory" },
	{ 'u', "--unalign" },
};

/* A size as nccl-tests reads it (a bare K, M, G or T suffix is binary) or
 * as the scenario units do (8KB, 1MiB). */
int cs__nccl_size(const char *v, double *out, char *msg, size_t n)
{
	char *end;
	double x = strtod(v, &end);
	if (end != v && isfinite(x) && x >= 0) {
		static const char suffix[] = "KMGT";
		const char *p = *end ? strchr(suffix, end[0] & ~0x20) : NULL;
		if (!*end) {
			*out = x;
			return 0;
		}
		if (p && end[1] == 0) {
			*out = x * pow(1024.0, (double)(p - suffix + 1));
			return 0;
		}
	}
	return cs_parse_size(v, out, msg, n) == CS_OK ? 0 : -1;
}

/* argv with nccl-tests' -b 8 and -b8 as --minbytes 8 (and -b=8 as well):
 * a new array the caller frees (the strings stay argv's or static). */
char **cs__nccl_translate(int argc, char **argv, int *out_argc)
{
	char **v = malloc((size_t)(2 * argc + 1) * sizeof *v);
	int n = 0;
	if (!v)
		return NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		size_t k = 0;
		if (i > 0 && a[0] == '-' && a[1] && a[1] != '-')
			for (; k < sizeof short_opts / sizeof short_opts[0]; k++)
				if (short_opts[k].flag == a[1])
					break;
		if (i == 0 || a[0] != '-' || !a[1] || a[1] == '-' ||
		    k == sizeof short_opts / sizeof short_opts[0]) {
			v[n++] = argv[i];
			continue;
		}
		v[n++] = (char *)short_opts[k].opt;
		if (a[2]) /* -b8 or -b=8 */
			v[n++] = (char *)(a[2] == '=' ? a + 3 : a + 2);
		else if (i + 1 < argc) /* the value, whatever it looks like (-r -1) */
			v[n++] = argv[++i];
	}
	v[n] = NULL;
	*out_argc = n;
	return v;
}

/* nccl-tests' binaries, in cs_coll_op's order. */
static const char *const tests[CS_COLL_OPS] = {
	"all_reduce_perf", "reduce_scatter_perf", "all_gather_perf", "alltoall_perf", "broadcast_perf",
	"sendrecv_perf",   "reduce_perf",         "gather_perf",     "scatter_perf",
};

int cs__nccl_test(const char *arg)
{
	const char *base = strrchr(arg, '/');
	base = base ? base + 1 : arg;
	size_t len = strlen(base);
	if (len > 4 && strcmp(base + len - 4, "_mpi") == 0)
		len -= 4; /* all_reduce_perf_mpi: the MPI build of the same test */
	if (len < 5 || strncmp(base + len - 5, "_perf", 5) != 0)
		return -1;
	for (int i = 0; i < CS_COLL_OPS; i++)
		if (strlen(tests[i]) == len && strncmp(base, tests[i], len) == 0)
			return i;
	return -2;
}
