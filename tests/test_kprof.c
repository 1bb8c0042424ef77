/*
 * test_kprof.c - kernel profiles: every measured point comes back, values
 * between points lie between them, the clamping rules, the derived GPUs'
 * rules, and the messages of malformed profiles.
 *
 * The expected values are read from the profile files by a line scanner of
 * this test's own (not libyaml), and a dozen H200 points are literals
 * copied from the measurement table (tools/measure/h200/kernels.json).
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kprof.h"
#include "test_kprof_mamf.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define REL(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * fabs((double)(b)))

/* ---- the profile files, scanned line by line ------------------------------ */

typedef struct row {
	char sec[3][16]; /* "gemm", "bf16", "NN"; "attention", "cudnn", ""; ... */
	double v[7];
	int n;
} row;

typedef struct rows {
	row r[1200];
	int n;
} rows;

/* Rows "- [a, b, ...]" of src/hw/profiles/<name>.yaml under their section
 * keys (indentation 0, 2 and 4). */
static rows *scan(const char *name)
{
	char path[512], line[512], sec[3][16] = {"", "", ""};
	rows *out = calloc(1, sizeof *out);
	FILE *f;

	snprintf(path, sizeof path, CS_SOURCE_ROOT "/src/hw/profiles/%s.yaml", name);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof line, f)) {
		int ind = (int)strspn(line, " ");
		char *s = line + ind;
		if (*s == '#' || *s == '\n')
			continue;
		if (s[0] == '-' && s[1] == ' ' && s[2] == '[') {
			row *r = &out->r[out->n++];
			char *p = s + 3;
			ck_assert_int_lt(out->n, N(out->r));
			memcpy(r->sec, sec, sizeof sec);
			while (*p && *p != ']') {
				if (strncmp(p, "true", 4) == 0 || strncmp(p, "false", 5) == 0) {
					r->v[r->n++] = *p == 't';
					p += *p == 't' ? 4 : 5;
				} else {
					r->v[r->n++] = strtod(p, &p);
				}
				p += strspn(p, ", ");
			}
			continue;
		}
		if (ind / 2 < 3 && strchr(s, ':')) {
			size_t len = strcspn(s, ":");
			int lev = ind / 2;
			snprintf(sec[lev], sizeof sec[lev], "%.*s", (int)len, s);
			for (int l = lev + 1; l < 3; l++)
				sec[l][0] = '\0';
		}
	}
	fclose(f);
	return out;
}

static cs_kprof *load(const char *name)
{
	cs_kprof *p = NULL;
	cs_diag d;
	ck_assert_msg(cs_kprof_load(name, &p, &d) == CS_OK, "%s: %s", name, d.msg);
	return p;
}

static int dtype_of(const char *s) { return strcmp(s, "fp8") == 0 ? CS_GEMM_FP8 : CS_GEMM_BF16; }
static int layout_of(const char *s) { return s[0] == 'N' ? (s[1] == 'N' ? CS_GEMM_NN : CS_GEMM_NT) : CS_GEMM_TN; }
static int backend_of(const char *s) { return strcmp(s, "cudnn") == 0 ? CS_ATTN_CUDNN : CS_ATTN_FLASH2; }

static int kind_of(const char *s)
{
	for (int k = 0; k < CS_MEM_KINDS; k++)
		if (strcmp(cs_kprof_mem_kind_name((cs_mem_kind)k), s) == 0)
			return k;
	ck_abort_msg("unknown kind %s", s);
	return 0;
}

/* What the profile gives at a row's point, in the row's unit. */
static double at_row(const cs_kprof *p, const row *r, int col)
{
	const double *v = r->v;
	if (strcmp(r->sec[0], "gemm") == 0)
		return cs_kprof_gemm(p, (cs_gemm_dtype)dtype_of(r->sec[1]),
		                     (cs_gemm_layout)layout_of(r->sec[2]), v[0], v[1], v[2]) / 1e12;
	if (strcmp(r->sec[0], "attention") == 0)
		return cs_kprof_attn(p, (cs_attn_backend)backend_of(r->sec[1]), v[0] != 0,
		                     (int64_t)v[4], v[1] * v[2], v[3], col == 6) / 1e12;
	if (strcmp(r->sec[0], "contention") == 0)
		return cs_kprof_contention(p, v[0]);
	return cs_kprof_mem(p, (cs_mem_kind)kind_of(r->sec[1]), v[0]) / 1e9;
}

/* ---- every point of every built-in profile comes back ---------------------- */

static const char *const builtins[] = {"h200-sxm", "h100-sxm", "a100-sxm", "b200", "gb200"};

START_TEST(test_every_table_point_comes_back)
{
	rows *rs = scan(builtins[_i]);
	cs_kprof *p = load(builtins[_i]);
	int checked = 0;

	for (int i = 0; i < rs->n; i++) {
		const row *r = &rs->r[i];
		int first = r->n == 7 ? 5 : r->n - 1;
		for (int c = first; c < r->n; c++, checked++) {
			double got = at_row(p, r, c);
			ck_assert_msg(REL(got, r->v[c]), "%s %s.%s.%s row %d col %d: got %.12g, file %.12g",
			              builtins[_i], r->sec[0], r->sec[1], r->sec[2], i, c, got, r->v[c]);
		}
	}
	ck_assert_int_gt(checked, 900);
	free(rs);
	cs_kprof_free(p);
}
END_TEST

/* ---- literals from kernels.json ------------------------------------------------- */

static const struct gemm_lit {
	cs_gemm_dtype dt;
	cs_gemm_layout lay;
	double m, n, k, tflops;
} gemm_lits[] = {
	{CS_GEMM_BF16, CS_GEMM_NN, 8192, 8192, 8192, 664.8},
	{CS_GEMM_BF16, CS_GEMM_NN, 1024, 256, 256, 10.8},
	{CS_GEMM_BF16, CS_GEMM_NN, 1024, 4096, 4096, 743.4},
	{CS_GEMM_BF16, CS_GEMM_NN, 16384, 32768, 32768, 697.2},
	{CS_GEMM_BF16, CS_GEMM_NN, 8192, 6144, 4096, 708.8},
	{CS_GEMM_BF16, CS_GEMM_NT, 8192, 8192, 8192, 707.8},
	{CS_GEMM_BF16, CS_GEMM_TN, 8192, 8192, 8192, 745.5},
	{CS_GEMM_BF16, CS_GEMM_NT, 8192, 2304, 16384, 677.2},
	{CS_GEMM_BF16, CS_GEMM_TN, 2048, 1536, 12288, 757.4},
	{CS_GEMM_FP8, CS_GEMM_NT, 8192, 8192, 8192, 1469.3},
	{CS_GEMM_FP8, CS_GEMM_NT, 16384, 16384, 16384, 1392.7},
};

START_TEST(test_h200_gemm_matches_measurement)
{
	const struct gemm_lit *l = &gemm_lits[_i];
	cs_kprof *p = load("h200-sxm");
	double got = cs_kprof_gemm(p, l->dt, l->lay, l->m, l->n, l->k) / 1e12;
	ck_assert_msg(REL(got, l->tflops), "%g x %g x %g: %.12g", l->m, l->n, l->k, got);
	cs_kprof_free(p);
}
END_TEST

/* attention rows [backend, causal, batch, heads, seq, hd, fwd_ms, fwd_tflops, fwdbwd_ms] */
static const struct attn_lit {
	cs_attn_backend be;
	bool causal;
	double batch, heads, seq, hd, fwd_ms, fwd_tflops, fb_ms;
} attn_lits[] = {
	{CS_ATTN_CUDNN, true, 2, 16, 8192, 128, 0.8942, 614.8, 3.5963},
	{CS_ATTN_CUDNN, false, 2, 32, 8192, 128, 3.1526, 697.5, 13.2967},
	{CS_ATTN_FLASH2, true, 1, 16, 32768, 64, 7.2965, 301.4, 27.1183},
	{CS_ATTN_FLASH2, false, 16, 8, 1024, 128, 0.2076, 331.0, 1.0491},
};

/* The profile states attention at the sustained clock: misc.json's
 * cuDNN run of seconds (459 TF/s forward + backward) against the table's
 * short loop of the same work (504.1). */
#define ATTN_SUSTAINED (459.0 / 504.1)

START_TEST(test_h200_attention_matches_measurement)
{
	const struct attn_lit *l = &attn_lits[_i];
	cs_kprof *p = load("h200-sxm");
	double f = 4 * l->batch * l->heads * l->seq * l->seq * l->hd * (l->causal ? 0.5 : 1.0);
	double fwd = cs_kprof_attn(p, l->be, l->causal, (int64_t)l->hd, l->batch * l->heads, l->seq,
	                           false) / 1e12;
	double bwd = cs_kprof_attn(p, l->be, l->causal, (int64_t)l->hd, l->batch * l->heads, l->seq,
	                           true) / 1e12;
	/* the table's TF/s is rounded to 0.1, as is the profile's */
	ck_assert_msg(fabs(fwd - ATTN_SUSTAINED * l->fwd_tflops) <= 0.1, "fwd %.12g", fwd);
	ck_assert_msg(fabs(bwd - ATTN_SUSTAINED * 2.5 * f / (l->fb_ms - l->fwd_ms) / 1e9) <= 0.05,
		      "bwd %.12g", bwd);
	cs_kprof_free(p);
}
END_TEST

static const struct mem_lit {
	cs_mem_kind kind;
	double bytes, gbps;
} mem_lits[] = {
	{CS_MEM_COPY, 268435456, 4062.0},
	{CS_MEM_RMSNORM, 268435456, 2579.9},
	{CS_MEM_STRIDED, 201326592, 1080.9},
	{CS_MEM_ACT, 805306368, 3624.5},
	{CS_MEM_GRAD_ACCUM, 671088640, 2766.2},
	{CS_MEM_ADAM_FUSED, 7516192768.0, 3431.2},
	{CS_MEM_CROSS_ENTROPY, 4202692608.0, 555.2},
	{CS_MEM_ADD, 268435456, 5886.9 * 2 / 3}, /* 8192 x 8192 x + x: 2 tensors, not 3 */
};

START_TEST(test_h200_membound_matches_measurement)
{
	const struct mem_lit *l = &mem_lits[_i];
	cs_kprof *p = load("h200-sxm");
	double got = cs_kprof_mem(p, l->kind, l->bytes) / 1e9;
	ck_assert_msg(fabs(got - l->gbps) <= 0.05, "%s: %.12g", cs_kprof_mem_kind_name(l->kind), got);
	ck_assert(fabs(cs_kprof_eager_launch_ns(p) - 12530) < 1e-6);
	ck_assert(fabs(cs_kprof_graph_launch_ns(p) - 840) < 1e-6);
	ck_assert(fabs(cs_kprof_min_kernel_ns(p) - 840) < 1e-6);
	ck_assert(fabs(cs_kprof_sync_ns(p) - 10310) < 1e-6); /* launch.synchronize_us */
	cs_kprof_free(p);
}
END_TEST

/* ---- a small profile with round numbers --------------------------------------- */

static const char fixture[] =
	"name: fixture\n"
	"gpu: a test GPU\n"
	"derived: false\n"
	"launch: {eager_op_us: 10, graph_kernel_us: 2}\n"
	"gemm:\n"
	"  bf16:\n"
	"    NN:\n"
	"      - [1024, 256, 256, 100]\n"
	"      - [1024, 256, 1024, 200]\n"
	"      - [1024, 256, 4096, 300]\n"
	"      - [1024, 1024, 256, 400]\n"
	"      - [1024, 1024, 1024, 500]\n"
	"      - [1024, 1024, 4096, 600]\n"
	"      - [4096, 256, 256, 150]\n"
	"      - [4096, 256, 1024, 250]\n"
	"      - [4096, 256, 4096, 350]\n"
	"      - [4096, 1024, 256, 450]\n"
	"      - [4096, 1024, 1024, 550]\n"
	"      - [4096, 1024, 4096, 650]\n"
	"    NT:\n"
	"      - [2048, 512, 512, 700]\n"
	"  fp8:\n"
	"    NT:\n"
	"      - [1024, 256, 256, 300]\n"
	"attention:\n"
	"  cudnn:\n"
	"    - [true, 4, 8, 1024, 128, 100, 80]\n"
	"    - [true, 4, 16, 1024, 128, 120, 90]\n"
	"    - [true, 1, 8, 4096, 128, 200, 160]\n"
	"    - [true, 1, 16, 4096, 128, 240, 180]\n"
	"    - [true, 4, 16, 1024, 64, 50, 40]\n"
	"    - [true, 1, 16, 4096, 64, 70, 60]\n"
	"    - [true, 2, 16, 4096, 64, 80, 70]\n"
	"membound:\n"
	"  copy:\n"
	"    - [1000, 100]\n"
	"    - [4000, 200]\n"
	"    - [16000, 400]\n"
	"  rmsnorm:\n"
	"    - [1000, 50]\n";

static cs_kprof *fixture_profile(void)
{
	cs_kprof *p = NULL;
	cs_diag d;
	ck_assert_msg(cs_kprof_parse(fixture, strlen(fixture), "fixture.yaml", &p, &d) == CS_OK, "%s",
	              d.msg);
	return p;
}

static double tf(const cs_kprof *p, cs_gemm_dtype dt, cs_gemm_layout l, double m, double n, double k)
{
	return cs_kprof_gemm(p, dt, l, m, n, k) / 1e12;
}

static const struct { cs_gemm_dtype dt; cs_gemm_layout l; double m, n, k, want; } fix_gemm[] = {
	{CS_GEMM_BF16, CS_GEMM_NN, 1024, 256, 4096, 300},
	{CS_GEMM_BF16, CS_GEMM_NN, 4096, 1024, 1024, 550},
	{CS_GEMM_BF16, CS_GEMM_NN, 2048, 512, 512, 325},   /* the mean of the cell's 8 corners */
	{CS_GEMM_BF16, CS_GEMM_NN, 2048, 1024, 1024, 525}, /* halfway in log M */
	{CS_GEMM_BF16, CS_GEMM_NN, 8192, 1024, 1024, 550}, /* above M: clamped */
	{CS_GEMM_BF16, CS_GEMM_NN, 4096, 4096, 16384, 650},/* above N and K: clamped */
	{CS_GEMM_BF16, CS_GEMM_NN, 512, 1024, 1024, 250},  /* below M: as long as at 1024 */
	{CS_GEMM_BF16, CS_GEMM_NN, 1024, 64, 128, 12.5},   /* below N and K: / 4 / 2 */
	{CS_GEMM_BF16, CS_GEMM_NT, 2048, 512, 512, 700},   /* the measured point */
	{CS_GEMM_BF16, CS_GEMM_NT, 1024, 256, 256, 100 * 700.0 / 325},
	{CS_GEMM_BF16, CS_GEMM_TN, 1024, 1024, 1024, 500}, /* no TN table: NN */
	{CS_GEMM_FP8, CS_GEMM_NT, 1024, 256, 256, 300},
	{CS_GEMM_FP8, CS_GEMM_NN, 1024, 64, 128, 37.5},   /* fp8 NN: the fp8 NT table's ratio 3 */
	{CS_GEMM_FP8, CS_GEMM_NN, 4096, 1024, 4096, 300},  /* 3 x 650, held at the fastest fp8 point */
};

START_TEST(test_fixture_gemm)
{
	cs_kprof *p = fixture_profile();
	double got = tf(p, fix_gemm[_i].dt, fix_gemm[_i].l, fix_gemm[_i].m, fix_gemm[_i].n, fix_gemm[_i].k);
	ck_assert_msg(REL(got, fix_gemm[_i].want), "case %d: %.15g", _i, got);
	cs_kprof_free(p);
}
END_TEST

static const struct { bool causal; int64_t hd; double bh, seq, fwd, bwd; } fix_attn[] = {
	{true, 128, 32, 1024, 100, 80},
	{true, 128, 16, 4096, 240, 180},
	{true, 128, 46340.950011841578 / 2048, 2048, 165, 127.5}, /* the cell's centre */
	{true, 128, 8, 512, 100, 80},          /* below seq and work: the edge */
	{true, 128, 64, 65536, 240, 180},      /* above both: the edge */
	{false, 128, 16, 4096, 240, 180},      /* no non-causal rows: the causal ones */
	{true, 96, 16, 4096, 240, 180},        /* nearest head_dim: 128 */
	{true, 80, 16, 4096, 70, 60},          /* nearest head_dim: 64 */
	{true, 64, 32, 2048, 60, 50},          /* between seq 1024 and 4096 at work 65536 */
	{true, 64, 32, 4096, 80, 70},          /* seq 4096 has two work values */
	{true, 64, 64, 2048, 65, 55},          /* work 131072: seq 1024's one value, 4096's 80 */
	{true, 64, 128, 1024, 50, 40},         /* seq 1024 has one work value */
};

START_TEST(test_fixture_attention)
{
	cs_kprof *p = fixture_profile();
	double f = cs_kprof_attn(p, CS_ATTN_CUDNN, fix_attn[_i].causal, fix_attn[_i].hd, fix_attn[_i].bh,
	                         fix_attn[_i].seq, false) / 1e12;
	double b = cs_kprof_attn(p, CS_ATTN_CUDNN, fix_attn[_i].causal, fix_attn[_i].hd, fix_attn[_i].bh,
	                         fix_attn[_i].seq, true) / 1e12;
	ck_assert_msg(REL(f, fix_attn[_i].fwd) && REL(b, fix_attn[_i].bwd), "case %d: %.15g %.15g", _i, f, b);
	ck_assert(cs_kprof_attn(p, CS_ATTN_FLASH2, true, 128, 16, 4096, false) == 0);
	cs_kprof_free(p);
}
END_TEST

static const struct { cs_mem_kind kind; double bytes, want; } fix_mem[] = {
	{CS_MEM_COPY, 1000, 100}, {CS_MEM_COPY, 4000, 200}, {CS_MEM_COPY, 16000, 400},
	{CS_MEM_COPY, 2000, 150}, {CS_MEM_COPY, 8000, 300},
	{CS_MEM_COPY, 10, 100}, {CS_MEM_COPY, 0, 100},       /* below: the smallest's bandwidth */
	{CS_MEM_COPY, 1e12, 400},                            /* above: the largest's */
	{CS_MEM_ACT, 2000, 150},                             /* no gelu curve: copy's */
	{CS_MEM_RMSNORM, 1e9, 50}, {CS_MEM_RMSNORM, 1, 50},  /* one point: constant */
};

START_TEST(test_fixture_membound_and_launch)
{
	cs_kprof *p = fixture_profile();
	double got = cs_kprof_mem(p, fix_mem[_i].kind, fix_mem[_i].bytes) / 1e9;
	ck_assert_msg(REL(got, fix_mem[_i].want), "case %d: %.15g", _i, got);
	ck_assert(REL(cs_kprof_eager_launch_ns(p), 10000) && REL(cs_kprof_graph_launch_ns(p), 2000));
	ck_assert(cs_kprof_sync_ns(p) == 0.0); /* no sync_us: none */
	ck_assert(REL(cs_kprof_min_kernel_ns(p), 2000));
	ck_assert_str_eq(cs_kprof_name(p), "fixture");
	ck_assert_str_eq(cs_kprof_gpu(p), "a test GPU");
	ck_assert(!cs_kprof_derived(p));
	cs_kprof_free(p);
}
END_TEST

START_TEST(test_bad_queries_give_zero)
{
	cs_kprof *p = fixture_profile();
	ck_assert(tf(p, CS_GEMM_BF16, CS_GEMM_NN, 0, 256, 256) == 0);
	ck_assert(tf(p, CS_GEMM_BF16, CS_GEMM_NN, -1, 256, 256) == 0);
	ck_assert(tf(p, CS_GEMM_BF16, CS_GEMM_NN, NAN, 256, 256) == 0);
	ck_assert(tf(p, CS_GEMM_BF16, CS_GEMM_NN, 1024, INFINITY, 256) == 0);
	ck_assert(tf(p, (cs_gemm_dtype)7, CS_GEMM_NN, 1024, 256, 256) == 0);
	ck_assert(tf(p, CS_GEMM_BF16, (cs_gemm_layout)-1, 1024, 256, 256) == 0);
	ck_assert(cs_kprof_attn(p, CS_ATTN_CUDNN, true, 0, 16, 4096, false) == 0);
	ck_assert(cs_kprof_attn(p, CS_ATTN_CUDNN, true, 128, NAN, 4096, false) == 0);
	ck_assert(cs_kprof_attn(p, (cs_attn_backend)9, true, 128, 16, 4096, false) == 0);
	ck_assert(cs_kprof_mem(p, CS_MEM_COPY, NAN) == 0);
	ck_assert(cs_kprof_mem(p, (cs_mem_kind)99, 1000) == 0);
	ck_assert_ptr_null(cs_kprof_mem_kind_name((cs_mem_kind)99));
	ck_assert(tf(NULL, CS_GEMM_BF16, CS_GEMM_NN, 1024, 256, 256) == 0);
	cs_kprof_free(p);
	cs_kprof_free(NULL);
}
END_TEST

/* ---- values between neighbours lie between them (H200) ------------------------- */

static unsigned long long rng = 88172645463325252ULL;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* sorted distinct values of column c of the rows in section (s0, s1, s2) */
static int axis(const rows *rs, const char *s0, const char *s1, const char *s2, int c, double *out)
{
	int n = 0;
	for (int i = 0; i < rs->n; i++) {
		const row *r = &rs->r[i];
		int j;
		if (strcmp(r->sec[0], s0) || strcmp(r->sec[1], s1) || strcmp(r->sec[2], s2))
			continue;
		for (j = 0; j < n && out[j] != r->v[c]; j++)
			;
		if (j == n)
			out[n++] = r->v[c];
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && out[j] < out[j - 1]; j--) {
			double t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static double between(double a, double b)
{
	return exp(log(a) + (log(b) - log(a)) * (0.01 + 0.98 * uniform()));
}

static void assert_between(double v, double a, double b, const char *what)
{
	double lo = fmin(a, b), hi = fmax(a, b);
	ck_assert_msg(v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12), "%s: %.12g not in [%.12g, %.12g]",
	              what, v, lo, hi);
}

START_TEST(test_gemm_between_neighbours)
{
	rows *rs = scan("h200-sxm");
	cs_kprof *p = load("h200-sxm");
	double g[3][16];
	int n[3];

	for (int c = 0; c < 3; c++)
		n[c] = axis(rs, "gemm", "bf16", "NN", c, g[c]);
	ck_assert(n[0] == 5 && n[1] == 12 && n[2] == 12);
	for (int t = 0; t < 3000; t++) {
		int a = t % 3, idx[3];
		double x[3], lo[3], hi[3];
		for (int c = 0; c < 3; c++) {
			idx[c] = (int)(uniform() * (n[c] - (c == a)));
			x[c] = lo[c] = hi[c] = g[c][idx[c]];
		}
		hi[a] = g[a][idx[a] + 1];
		x[a] = between(lo[a], hi[a]);
		assert_between(tf(p, CS_GEMM_BF16, CS_GEMM_NN, x[0], x[1], x[2]),
		               tf(p, CS_GEMM_BF16, CS_GEMM_NN, lo[0], lo[1], lo[2]),
		               tf(p, CS_GEMM_BF16, CS_GEMM_NN, hi[0], hi[1], hi[2]), "gemm");
	}
	free(rs);
	cs_kprof_free(p);
}
END_TEST

START_TEST(test_attention_and_membound_between_neighbours)
{
	rows *rs = scan("h200-sxm");
	cs_kprof *p = load("h200-sxm");
	double seqs[16], heads[16], bytes[16];
	int ns, nh;

	/* the H200's table keeps batch x seq = 16384: work = 16384 x heads */
	ns = axis(rs, "attention", "cudnn", "", 3, seqs);
	nh = axis(rs, "attention", "cudnn", "", 2, heads);
	ck_assert(ns == 6 && nh == 3);
	for (int t = 0; t < 2000; t++) {
		bool causal = t & 1, bwd = t & 2, along_seq = t & 4;
		int i = (int)(uniform() * (ns - along_seq)), j = (int)(uniform() * (nh - !along_seq));
		double s0 = seqs[i], s1 = along_seq ? seqs[i + 1] : s0;
		double w0 = 16384 * heads[j], w1 = along_seq ? w0 : 16384 * heads[j + 1];
		double s = along_seq ? between(s0, s1) : s0, w = along_seq ? w0 : between(w0, w1);
		cs_attn_backend be = t & 8 ? CS_ATTN_FLASH2 : CS_ATTN_CUDNN;
		assert_between(cs_kprof_attn(p, be, causal, 128, w / s, s, bwd),
		               cs_kprof_attn(p, be, causal, 128, w0 / s0, s0, bwd),
		               cs_kprof_attn(p, be, causal, 128, w1 / s1, s1, bwd), "attention");
	}
	for (int k = 0; k < CS_MEM_KINDS; k++) {
		int nb = axis(rs, "membound", cs_kprof_mem_kind_name((cs_mem_kind)k), "", 0, bytes);
		ck_assert_int_ge(nb, 2);
		for (int t = 0; t < 200; t++) {
			int i = (int)(uniform() * (nb - 1));
			assert_between(cs_kprof_mem(p, (cs_mem_kind)k, between(bytes[i], bytes[i + 1])),
			               cs_kprof_mem(p, (cs_mem_kind)k, bytes[i]),
			               cs_kprof_mem(p, (cs_mem_kind)k, bytes[i + 1]), "membound");
		}
	}
	free(rs);
	cs_kprof_free(p);
}
END_TEST

START_TEST(test_h200_clamps_outside_the_table)
{
	cs_kprof *p = load("h200-sxm");
	double big = tf(p, CS_GEMM_BF16, CS_GEMM_NN, 16384, 32768, 32768);
	ck_assert(REL(tf(p, CS_GEMM_BF16, CS_GEMM_NN, 65536, 1e6, 1e6), big));
	/* below the smallest M, N, K: as long as the smallest takes */
	ck_assert(REL(tf(p, CS_GEMM_BF16, CS_GEMM_NN, 256, 64, 128),
	              tf(p, CS_GEMM_BF16, CS_GEMM_NN, 1024, 256, 256) / 4 / 4 / 2));
	ck_assert(REL(cs_kprof_attn(p, CS_ATTN_CUDNN, true, 128, 1024, 131072, false),
	              cs_kprof_attn(p, CS_ATTN_CUDNN, true, 128, 32, 32768, false)));
	ck_assert(REL(cs_kprof_attn(p, CS_ATTN_CUDNN, false, 128, 1, 128, true),
	              cs_kprof_attn(p, CS_ATTN_CUDNN, false, 128, 128, 1024, true)));
	ck_assert(REL(cs_kprof_mem(p, CS_MEM_COPY, 1e13), cs_kprof_mem(p, CS_MEM_COPY, 805306368)));
	ck_assert(REL(cs_kprof_mem(p, CS_MEM_COPY, 4096), cs_kprof_mem(p, CS_MEM_COPY, 67108864)));
	cs_kprof_free(p);
}
END_TEST

/* ---- derived GPUs follow their rules ----------------------------------------- */

static const struct derived_case {
	const char *name;
	double bf16, fp8, attn_fwd, attn_bwd, mem; /* attn < 0: A100's FlashAttention-2 rule */
} derived_cases[] = {
	{"h100-sxm", 1, 1, 1, 1, 3.35 / 4.8},
	{"b200", 1745.0 / 794.5, 3432.5 / 1453.4, 1745.0 / 794.5, 1745.0 / 794.5, 8.0 / 4.8},
	/* the b200 rule at the GB200's peaks: x 2500/2250 (= 5000/4500 for fp8) */
	{"gb200", 1745.0 / 794.5 * 2500 / 2250, 3432.5 / 1453.4 * 2500 / 2250, 1745.0 / 794.5 * 2500 / 2250,
	 1745.0 / 794.5 * 2500 / 2250, 8.0 / 4.8},
	{"a100-sxm", 271.2 / 794.5, 0, -0.73, -0.63, 2.039 / 4.8},
};

START_TEST(test_derived_profiles_follow_their_rules)
{
	const struct derived_case *c = &derived_cases[_i];
	cs_kprof *h = load("h200-sxm"), *p = load(c->name);
	double ff = c->attn_fwd, fb = c->attn_bwd;

	if (ff < 0) { /* scaled so that the paper's point is 73 % / 63 % of 312 TF/s */
		ff = -ff * 312e12 / cs_kprof_attn(h, CS_ATTN_FLASH2, false, 128, 16, 16384, false);
		fb = -fb * 312e12 / cs_kprof_attn(h, CS_ATTN_FLASH2, false, 128, 16, 16384, true);
	}
	ck_assert(cs_kprof_derived(p) && !cs_kprof_derived(h));
	ck_assert(REL(cs_kprof_eager_launch_ns(p), cs_kprof_eager_launch_ns(h)));
	ck_assert(REL(cs_kprof_graph_launch_ns(p), cs_kprof_graph_launch_ns(h)));
	for (int t = 0; t < 400; t++) {
		double m = exp(log(512) + 4.5 * uniform()), n = exp(log(128) + 6 * uniform());
		double k = exp(log(128) + 6 * uniform()), s = exp(log(512) + 4.5 * uniform());
		double bh = exp(log(1) + 6 * uniform()), b = exp(log(1e6) + 9 * uniform());
		cs_gemm_layout l = (cs_gemm_layout)(t % 3);
		bool causal = t & 1;
		int64_t hd = t & 2 ? 64 : 128;
		ck_assert(REL(cs_kprof_gemm(p, CS_GEMM_BF16, l, m, n, k),
		              c->bf16 * cs_kprof_gemm(h, CS_GEMM_BF16, l, m, n, k)));
		ck_assert(REL(cs_kprof_gemm(p, CS_GEMM_FP8, l, m, n, k),
		              c->fp8 * cs_kprof_gemm(h, CS_GEMM_FP8, l, m, n, k)));
		for (int bwd = 0; bwd < 2; bwd++) {
			double f = bwd ? fb : ff;
			double want = f * cs_kprof_attn(h, CS_ATTN_FLASH2, causal, hd, bh, s, bwd);
			ck_assert(REL(cs_kprof_attn(p, CS_ATTN_FLASH2, causal, hd, bh, s, bwd), want));
			if (c->attn_fwd < 0) /* the A100 has no cuDNN table of its own: flash2's */
				want = cs_kprof_attn(p, CS_ATTN_FLASH2, causal, hd, bh, s, bwd);
			else
				want = f * cs_kprof_attn(h, CS_ATTN_CUDNN, causal, hd, bh, s, bwd);
			ck_assert(REL(cs_kprof_attn(p, CS_ATTN_CUDNN, causal, hd, bh, s, bwd), want));
		}
		for (int kind = 0; kind < CS_MEM_KINDS; kind++)
			ck_assert(REL(cs_kprof_mem(p, (cs_mem_kind)kind, b),
			              c->mem * cs_kprof_mem(h, (cs_mem_kind)kind, b)));
	}
	cs_kprof_free(h);
	cs_kprof_free(p);
}
END_TEST

/* ---- built-in names ----------------------------------------------------------- */

START_TEST(test_builtin_profiles_load)
{
	size_t n = 0;
	for (const char *name; (name = cs_kprof_builtin_name(n)); n++) {
		cs_kprof *p = load(name);
		ck_assert(cs_kprof_builtin(name));
		ck_assert_str_eq(cs_kprof_name(p), name);
		ck_assert(cs_kprof_derived(p) == (strcmp(name, "h200-sxm") != 0));
		ck_assert(strlen(cs_kprof_gpu(p)) > 10);
		cs_kprof_free(p);
	}
	ck_assert_int_eq(n, N(builtins));
	for (int i = 0; i < N(builtins); i++)
		ck_assert(cs_kprof_builtin(builtins[i]));
	ck_assert(!cs_kprof_builtin("h200"));
	ck_assert(!cs_kprof_builtin(NULL));
}
END_TEST

START_TEST(test_a_path_loads_like_the_builtin)
{
	cs_kprof *a = load("h200-sxm"), *b = load(CS_SOURCE_ROOT "/src/hw/profiles/h200-sxm.yaml");
	ck_assert(tf(a, CS_GEMM_BF16, CS_GEMM_NT, 3000, 5000, 7000) ==
	          tf(b, CS_GEMM_BF16, CS_GEMM_NT, 3000, 5000, 7000));
	ck_assert(cs_kprof_mem(a, CS_MEM_SOFTMAX, 3e8) == cs_kprof_mem(b, CS_MEM_SOFTMAX, 3e8));
	cs_kprof_free(a);
	ck_assert(cs_kprof_mem(b, CS_MEM_SOFTMAX, 3e8) > 0); /* no state shared with a */
	cs_kprof_free(b);
}
END_TEST

/* ---- threads: loads and lookups share nothing mutable ------------------------ */

typedef struct worker {
	const cs_kprof *shared;
	double sum_shared, sum_own;
} worker;

static double lookups(const cs_kprof *p)
{
	double s = 0;
	for (int i = 1; i <= 2000; i++) {
		double x = 300.0 * i;
		s += tf(p, CS_GEMM_BF16, (cs_gemm_layout)(i % 3), x, 7 * i + 100, 11 * i + 100);
		s += cs_kprof_attn(p, (cs_attn_backend)(i & 1), i & 2, i & 4 ? 64 : 128, i % 64 + 1, 20 * i, i & 8) / 1e12;
		s += cs_kprof_mem(p, (cs_mem_kind)(i % CS_MEM_KINDS), x * x) / 1e9;
	}
	return s;
}

static void *work(void *arg)
{
	worker *w = arg;
	cs_kprof *own = NULL;
	cs_diag d;
	w->sum_shared = lookups(w->shared);
	if (cs_kprof_load("b200", &own, &d) == CS_OK)
		w->sum_own = lookups(own);
	cs_kprof_free(own);
	return NULL;
}

START_TEST(test_threads_share_a_profile)
{
	cs_kprof *p = load("h200-sxm"), *b = load("b200");
	double want = lookups(p), want_own = lookups(b);
	worker w[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++) {
		w[i] = (worker){p, 0, 0};
		ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert(w[i].sum_shared == want && w[i].sum_own == want_own);
	}
	cs_kprof_free(p);
	cs_kprof_free(b);
}
END_TEST

/* ---- malformed profiles ----------------------------------------------------------- */

#define NAME "name: bad\n"
#define LAUNCH "launch: {eager_op_us: 10, graph_kernel_us: 1}\n"
#define GEMM_HEAD "gemm:\n  bf16:\n    NN:\n"
#define ROW6 "      - [1024, 256, 256, 10]\n"
#define ROW7 "      - [1024, 256, 1024, 20]\n"
#define ROW8 "      - [1024, 1024, 256, 30]\n"
#define ROW9 "      - [1024, 1024, 1024, 40]\n"
#define GEMM GEMM_HEAD ROW6 ROW7 ROW8 ROW9
#define MEM "membound:\n  copy:\n    - [1000, 100]\n"   /* lines 10-12 after GEMM */

static const struct bad_case {
	const char *what, *text, *want; /* want: the message's start */
} bad_cases[] = {
	{"good", NAME LAUNCH GEMM MEM, NULL},
	{"unknown key", NAME "lanch: {eager_op_us: 10, graph_kernel_us: 1}\n" GEMM MEM,
	 "bad.yaml:2:1: unknown key 'lanch' (did you mean 'launch'?)"},
	{"unknown kind", NAME LAUNCH GEMM MEM "  rmsnrom:\n    - [1000, 50]\n",
	 "bad.yaml:13:3: unknown key 'rmsnrom' in 'membound' (did you mean 'rmsnorm'?)"},
	{"unknown layout", NAME LAUNCH "gemm:\n  bf16:\n    NX:\n" ROW6 MEM,
	 "bad.yaml:5:5: unknown key 'NX' in 'gemm.bf16'"},
	{"duplicate key", NAME LAUNCH "name: again\n" GEMM MEM,
	 "bad.yaml:3:1: duplicate key 'name' (first given on line 1)"},
	{"wrong type", NAME "launch: [10, 1]\n" GEMM MEM,
	 "bad.yaml:2:9: 'launch' must be a mapping, not a list"},
	{"wrong cell type", NAME LAUNCH GEMM_HEAD "      - [1024, 256, abc, 10]\n" ROW7 ROW8 ROW9 MEM,
	 "bad.yaml:6:21: 'K' in 'gemm.bf16.NN' expects a number, not 'abc'"},
	{"table not a list", NAME LAUNCH GEMM "  fp8:\n    NT: 7\n" MEM,
	 "bad.yaml:11:9: 'gemm.fp8.NT' must be a list of rows [M, N, K, TFLOPs], not a scalar"},
	{"negative number", NAME "launch: {eager_op_us: -10, graph_kernel_us: 1}\n" GEMM MEM,
	 "bad.yaml:2:23: 'launch.eager_op_us' must be a positive finite number, not '-10'"},
	{"with a sync cost", NAME "launch: {eager_op_us: 10, graph_kernel_us: 1, sync_us: 5}\n" GEMM MEM, NULL},
	{"zero sync cost", NAME "launch: {eager_op_us: 10, graph_kernel_us: 1, sync_us: 0}\n" GEMM MEM,
	 "bad.yaml:2:56: 'launch.sync_us' must be a positive finite number, not '0'"},
	{"zero", NAME LAUNCH GEMM_HEAD "      - [1024, 0, 256, 10]\n" ROW7 ROW8 ROW9 MEM,
	 "bad.yaml:6:16: 'N' in 'gemm.bf16.NN' must be a positive finite number, not '0'"},
	{"nan", NAME LAUNCH GEMM_HEAD "      - [1024, 256, 256, .nan]\n" ROW7 ROW8 ROW9 MEM,
	 "bad.yaml:6:26: 'TFLOPs' in 'gemm.bf16.NN' must be a positive finite number, not '.nan'"},
	{"infinite", NAME LAUNCH GEMM MEM "  gelu:\n    - [1000, inf]\n",
	 "bad.yaml:14:14: 'GBps' in 'membound.gelu' must be a positive finite number, not 'inf'"},
	{"fractional size", NAME LAUNCH GEMM_HEAD "      - [1024.5, 256, 256, 10]\n" ROW7 ROW8 ROW9 MEM,
	 "bad.yaml:6:10: 'M' in 'gemm.bf16.NN' must be a positive integer, not '1024.5'"},
	{"short row", NAME LAUNCH GEMM_HEAD "      - [1024, 256, 256]\n" ROW7 ROW8 ROW9 MEM,
	 "bad.yaml:6:9: a row of 'gemm.bf16.NN' has 3 values; expected 4: [M, N, K, TFLOPs]"},
	{"unsorted rows", NAME LAUNCH GEMM_HEAD ROW7 ROW6 ROW8 ROW9 MEM,
	 "bad.yaml:7:9: a row of 'gemm.bf16.NN' is out of order or repeated"},
	{"repeated bytes", NAME LAUNCH GEMM MEM "    - [1000, 200]\n",
	 "bad.yaml:13:7: a row of 'membound.copy' is out of order or repeated"},
	{"ragged grid", NAME LAUNCH GEMM_HEAD ROW6 ROW8 ROW9 MEM,
	 "bad.yaml:7:9: 'gemm.bf16.NN' is not a full M x N x K grid (1 x 2 x 2 values): expected "
	 "[1024, 256, 1024] in this row"},
	{"grid short at the end", NAME LAUNCH GEMM_HEAD ROW6 ROW7 ROW8 MEM,
	 "bad.yaml:5:5: 'gemm.bf16.NN' is not a full M x N x K grid (1 x 2 x 2 values): it lacks "
	 "[1024, 1024, 1024]"},
	{"repeated attention point", NAME LAUNCH GEMM MEM "attention:\n  flash2:\n"
	 "    - [false, 4, 8, 1024, 64, 100, 80]\n    - [false, 2, 16, 1024, 64, 120, 90]\n",
	 "bad.yaml:16:7: a row of 'attention.flash2' repeats the point of line 15"},
	{"not a bool", NAME LAUNCH GEMM MEM "attention:\n  cudnn:\n"
	 "    - [yes, 4, 8, 1024, 128, 100, 80]\n",
	 "bad.yaml:15:8: 'causal' in 'attention.cudnn' expects true or false, not 'yes'"},
	{"missing gemm", NAME LAUNCH MEM, "bad.yaml:1:1: the profile lacks 'gemm'"},
	{"missing NN", NAME LAUNCH "gemm:\n  bf16:\n    NT:\n" ROW6 MEM,
	 "bad.yaml:4:3: 'gemm' lacks 'bf16.NN'"},
	{"missing launch", NAME GEMM MEM, "bad.yaml:1:1: the profile lacks 'launch'"},
	{"missing launch key", NAME "launch: {eager_op_us: 10}\n" GEMM MEM,
	 "bad.yaml:2:9: 'launch' lacks 'graph_kernel_us'"},
	{"missing copy", NAME LAUNCH GEMM "membound:\n  gelu:\n    - [1000, 100]\n",
	 "bad.yaml:11:3: 'membound' lacks 'copy'"},
	{"missing name", LAUNCH GEMM MEM, "bad.yaml:1:1: the profile lacks 'name'"},
	{"derived without source", NAME "derived: true\n" LAUNCH GEMM MEM,
	 "bad.yaml:2:10: a derived profile needs 'derived_from'"},
	{"empty file", "", "bad.yaml:1:1: empty profile"},
	{"only comments", "# nothing here\n\n", "bad.yaml:1:1: empty profile"},
	{"top level list", "- a\n- b\n", "bad.yaml:1:1: the top level must be a mapping, not a list"},
	{"syntax error", NAME "launch: {eager_op_us: 10\n" GEMM MEM, "bad.yaml:3:5: yaml: "},
	{"two documents", NAME LAUNCH GEMM MEM "---\nname: other\n",
	 "bad.yaml:14:1: only one yaml document per profile"},
};

START_TEST(test_malformed_profile_messages)
{
	const struct bad_case *c = &bad_cases[_i];
	cs_kprof *p = (cs_kprof *)&p; /* must come back NULL on failure */
	cs_diag d;
	cs_status st = cs_kprof_parse(c->text, strlen(c->text), "bad.yaml", &p, &d);

	if (!c->want) {
		ck_assert_msg(st == CS_OK, "%s: %s", c->what, d.msg);
		cs_kprof_free(p);
		return;
	}
	ck_assert_msg(st == CS_ERR_INPUT, "%s: accepted", c->what);
	ck_assert_ptr_null(p);
	ck_assert_msg(strncmp(d.msg, c->want, strlen(c->want)) == 0, "%s:\n got  %s\n want %s",
	              c->what, d.msg, c->want);
}
END_TEST

START_TEST(test_unreadable_files)
{
	cs_kprof *p = NULL;
	cs_diag d;
	char *big;

	ck_assert(cs_kprof_load("no/such/profile.yaml", &p, &d) == CS_ERR_INPUT);
	ck_assert_str_eq(d.msg, "cannot open 'no/such/profile.yaml': No such file or directory");
	ck_assert(cs_kprof_load(CS_SOURCE_ROOT "/src/hw", &p, &d) == CS_ERR_INPUT);
	ck_assert_msg(strstr(d.msg, "/src/hw': not a regular file") != NULL, "%s", d.msg);
	ck_assert_ptr_null(p);
	big = malloc(16 * 1024 * 1024 + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', 16 * 1024 * 1024 + 1);
	big[16 * 1024 * 1024 + 1] = '\0';
	ck_assert(cs_kprof_parse(big, 16 * 1024 * 1024 + 1, "big.yaml", &p, &d) == CS_ERR_INPUT);
	ck_assert_str_eq(d.msg, "big.yaml: profile is larger than the limit of 16 MiB");
	free(big);
	ck_assert(cs_kprof_load(NULL, &p, &d) == CS_ERR_INPUT);
	ck_assert(cs_kprof_load("h200-sxm", NULL, NULL) == CS_ERR_INPUT);
}
END_TEST

static Suite *kprof_suite(void)
{
	Suite *s = suite_create("kprof");
	TCase *tc = tcase_create("table_points");
	tcase_add_loop_test(tc, test_every_table_point_comes_back, 0, N(builtins));
	tcase_add_loop_test(tc, test_h200_gemm_matches_measurement, 0, N(gemm_lits));
	tcase_add_loop_test(tc, test_h200_attention_matches_measurement, 0, N(attn_lits));
	tcase_add_loop_test(tc, test_h200_membound_matches_measurement, 0, N(mem_lits));
	suite_add_tcase(s, tc);
	tc = tcase_create("interpolation");
	tcase_add_loop_test(tc, test_fixture_gemm, 0, N(fix_gemm));
	tcase_add_loop_test(tc, test_fixture_attention, 0, N(fix_attn));
	tcase_add_loop_test(tc, test_fixture_membound_and_launch, 0, N(fix_mem));
	tcase_add_test(tc, test_bad_queries_give_zero);
	tcase_add_test(tc, test_gemm_between_neighbours);
	tcase_add_test(tc, test_attention_and_membound_between_neighbours);
	tcase_add_test(tc, test_h200_clamps_outside_the_table);
	suite_add_tcase(s, tc);
	tc = tcase_create("profiles");
	tcase_add_loop_test(tc, test_derived_profiles_follow_their_rules, 0, N(derived_cases));
	tcase_add_test(tc, test_builtin_profiles_load);
	tcase_add_test(tc, test_a_path_loads_like_the_builtin);
	tcase_add_test(tc, test_threads_share_a_profile);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_malformed_profile_messages, 0, N(bad_cases));
	tcase_add_test(tc, test_unreadable_files);
	suite_add_tcase(s, tc);
	cs_test_kprof_mamf(s);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(kprof_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
