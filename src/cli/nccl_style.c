/*
 * nccl_style.c - nccl-tests' options for `clustersim coll`: its short
 * options and its sizes (what it prints is report/nccl_out.c's).
 */
#include "cli/nccl_style.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

/* nccl-tests' short options, as the long ones they mean here. */
static const struct {
	char flag;
	const char *opt;
} short_opts[] = {
	{ 'b', "--min" }, { 'e', "--max" }, { 'f', "--factor" }, { 'g', "--gpus" },
	{ 'd', "--dtype" }, { 'o', "--redop" }, { 'n', "--iters" }, { 'w', "--warmup-iters" },
	{ 'c', "--check" },
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

/* argv with nccl-tests' -b 8, -b8 and -b=8 as --min 8: a new array the
 * caller frees (the strings stay argv's or static). */
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
	}
	v[n] = NULL;
	*out_argc = n;
	return v;
}
