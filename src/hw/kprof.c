/*
 * kprof.c - lookups in a loaded kernel profile: GEMM, attention and
 * memory-bound throughput by shape, launch costs, and freeing.
 *
 * Every table is interpolated linearly in the logarithms of its shape
 * coordinates (bilinearly over two of them, with GSL), so a table's points
 * come back exactly and a value between two points lies between theirs.
 * Outside a table: above the largest value of a coordinate the throughput
 * stays at the edge's; a GEMM below the smallest M, N or K takes as long as
 * one at the smallest (throughput x / x_min); attention clamps to its
 * table's edges; a memory-bound kernel below the smallest measured size
 * keeps that size's bandwidth (the caller floors kernel time at
 * cs_kprof_min_kernel_ns). docs/kernel-profiles.md states the rules.
 */
#include <math.h>
#include <stdlib.h>

#include "hw/kprof_int.h"

static const char *const mem_names[CS_MEM_KINDS] = {
	"copy",    "add",     "layernorm",  "rmsnorm",       "layernorm_bwd", "gelu",          "silu_mul",
	"softmax", "dropout", "grad_accum", "cross_entropy", "adamw_fused",   "adamw_foreach",
};

/* ---- grids ---------------------------------------------------------------- */

bool cs__grid_init(cs__grid *g, size_t nx, size_t ny, double *x, double *y, double *z)
{
	g->nx = nx;
	g->ny = ny;
	g->x = x;
	g->y = y;
	g->z = z;
	if (nx >= 2 && ny >= 2) {
		g->it2 = gsl_interp2d_alloc(gsl_interp2d_bilinear, nx, ny);
		return g->it2 && gsl_interp2d_init(g->it2, x, y, z, nx, ny) == 0;
	}
	if (nx >= 2 || ny >= 2) {
		size_t n = nx >= 2 ? nx : ny;
		g->it1 = gsl_interp_alloc(gsl_interp_linear, n);
		return g->it1 && gsl_interp_init(g->it1, nx >= 2 ? x : y, z, n) == 0;
	}
	return true;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

double cs__grid_eval(const cs__grid *g, double x, double y)
{
	/* clamped into the grid, where GSL never reports a domain error */
	x = clamp(x, g->x[0], g->x[g->nx - 1]);
	y = clamp(y, g->y[0], g->y[g->ny - 1]);
	if (g->it2)
		return gsl_interp2d_eval(g->it2, g->x, g->y, g->z, x, y, NULL, NULL);
	if (g->it1)
		return g->nx >= 2 ? gsl_interp_eval(g->it1, g->x, g->z, x, NULL)
				  : gsl_interp_eval(g->it1, g->y, g->z, y, NULL);
	return g->z[0];
}

void cs__grid_free(cs__grid *g)
{
	if (g->it2)
		gsl_interp2d_free(g->it2);
	if (g->it1)
		gsl_interp_free(g->it1);
	free(g->x);
	free(g->y);
	free(g->z);
}

/* ---- GEMM ------------------------------------------------------------------- */

static bool shape_ok(double x) { return isfinite(x) && x > 0; }

/* Below a coordinate's smallest value a GEMM takes as long as at the
 * smallest: throughput scales by x / x_min. */
static double below(double *x, double x_min)
{
	if (*x >= x_min)
		return 1.0;
	double s = *x / x_min;
	*x = x_min;
	return s;
}

double cs__grid_across(size_t n, const double *l, const cs__grid *g, double lq, double x, double y)
{
	double v0, v1, t;
	size_t i;

	lq = clamp(lq, l[0], l[n - 1]);
	for (i = 0; i + 1 < n && l[i + 1] <= lq; i++)
		;
	v0 = cs__grid_eval(&g[i], x, y);
	if (i + 1 == n || lq == l[i])
		return v0;
	v1 = cs__grid_eval(&g[i + 1], x, y);
	t = (lq - l[i]) / (l[i + 1] - l[i]);
	return v0 + t * (v1 - v0);
}

double cs__kprof_nn(const cs_kprof *p, double m, double n, double k)
{
	double scale = below(&m, p->min_m) * below(&n, p->min_n) * below(&k, p->min_k);

	return scale * cs__grid_across(p->nm, p->lm, p->nn, log(m), log(n), log(k));
}

/* The sparse table a (dtype, layout) uses; NULL: bf16's NN grid itself
 * (bf16) or nothing (fp8). */
static const cs__kprof_sparse *sparse_for(const cs_kprof *p, cs_gemm_dtype dtype, cs_gemm_layout layout)
{
	if (p->sparse[dtype][layout].n)
		return &p->sparse[dtype][layout];
	if (dtype == CS_GEMM_BF16)
		return NULL;
	for (int l = 0; l < CS_GEMM_LAYOUTS; l++)
		if (p->sparse[dtype][l].n)
			return &p->sparse[dtype][l];
	return NULL;
}

double cs_kprof_gemm(const cs_kprof *p, cs_gemm_dtype dtype, cs_gemm_layout layout, double m, double n,
		     double k)
{
	const cs__kprof_sparse *s;
	double lm, ln, lk, best_d = INFINITY;
	size_t best = 0;

	if (!p || (unsigned)dtype >= CS_GEMM_DTYPES || (unsigned)layout >= CS_GEMM_LAYOUTS || !shape_ok(m) ||
	    !shape_ok(n) || !shape_ok(k))
		return 0;
	s = sparse_for(p, dtype, layout);
	if (!s)
		return dtype == CS_GEMM_BF16 ? 1e12 * cs__kprof_nn(p, m, n, k) : 0;
	lm = log(m);
	ln = log(n);
	lk = log(k);
	for (size_t i = 0; i < s->n; i++) {
		double a = lm - s->lm[i], b = ln - s->ln[i], c = lk - s->lk[i];
		double d = a * a + b * b + c * c;
		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return 1e12 * fmin(s->ratio[best] * cs__kprof_nn(p, m, n, k), p->gemm_max[dtype]);
}

double cs_kprof_gemm_min_rows(const cs_kprof *p) { return p ? p->min_m : 0.0; }

/* ---- attention -------------------------------------------------------------- */

/* The group of the mask asked for (else of the other mask) whose head_dim
 * is nearest in ratio, the larger on a tie. */
static const cs__kprof_attn *attn_group(const cs_kprof *p, cs_attn_backend backend, bool causal,
					double head_dim)
{
	const cs__kprof_attn *best = NULL;
	double best_d = 0;

	for (int pass = 0; pass < 2 && !best; pass++)
		for (size_t i = 0; i < p->nattn[backend]; i++) {
			const cs__kprof_attn *g = &p->attn[backend][i];
			double d = fabs(log(head_dim / g->head_dim));
			if (pass == 0 && g->causal != causal)
				continue;
			if (!best || d < best_d || (d == best_d && g->head_dim > best->head_dim)) {
				best = g;
				best_d = d;
			}
		}
	return best;
}

double cs_kprof_attn(const cs_kprof *p, cs_attn_backend backend, bool causal, int64_t head_dim,
		     double batch_heads, double seq, bool bwd)
{
	const cs__kprof_attn *g;

	if (!p || (unsigned)backend >= CS_ATTN_BACKENDS || head_dim <= 0 || !shape_ok(batch_heads) ||
	    !shape_ok(seq) || !shape_ok(batch_heads * seq))
		return 0;
	g = attn_group(p, backend, causal, (double)head_dim);
	if (!g)
		return 0;
	return 1e12 * cs__grid_across(g->nseq, g->lseq, bwd ? g->bwd : g->fwd, log(seq),
				      log(batch_heads * seq), 0.0);
}

/* ---- memory-bound kernels and launch costs -------------------------------- */

double cs_kprof_mem(const cs_kprof *p, cs_mem_kind kind, double bytes)
{
	int k;

	if (!p || (unsigned)kind >= CS_MEM_KINDS || !isfinite(bytes))
		return 0;
	k = p->has_mem[kind] ? (int)kind : CS_MEM_COPY;
	if (bytes <= p->mem_min_bytes[k])
		return 1e9 * p->mem[k].z[0];
	return 1e9 * cs__grid_eval(&p->mem[k], log(bytes), 0.0);
}

double cs_kprof_contention(const cs_kprof *p, double sm_fraction)
{
	if (!p || !p->cont || !(sm_fraction > 0.0))
		return 1.0;
	double x = sm_fraction < p->cont_x[p->ncont - 1] ? sm_fraction : p->cont_x[p->ncont - 1];
	return gsl_interp_eval(p->cont, p->cont_x, p->cont_rate, x, NULL);
}

double cs_kprof_contention_scaled(const cs_kprof *p, double sm_fraction, double scale)
{
	double rate = 1.0 - scale * (1.0 - cs_kprof_contention(p, sm_fraction));
	return rate > 0.05 ? rate : 0.05;
}

double cs_kprof_document_floor(const cs_kprof *p) { return p ? p->doc_floor : 0.0; }

const cs_kprof_clock *cs_kprof_clock_model(const cs_kprof *p) { return p && p->has_clock ? &p->clock : NULL; }

double cs_kprof_min_kernel_ns(const cs_kprof *p) { return p ? p->graph_ns : 0; }

double cs_kprof_eager_launch_ns(const cs_kprof *p) { return p ? p->eager_ns : 0; }

double cs_kprof_graph_launch_ns(const cs_kprof *p) { return p ? p->graph_ns : 0; }

double cs_kprof_sync_ns(const cs_kprof *p) { return p ? p->sync_ns : 0; }

const char *cs_kprof_mem_kind_name(cs_mem_kind kind)
{
	return (unsigned)kind < CS_MEM_KINDS ? mem_names[kind] : NULL;
}

/* ---- the profile ------------------------------------------------------------ */

const char *cs_kprof_name(const cs_kprof *p) { return p ? p->name : ""; }

const char *cs_kprof_gpu(const cs_kprof *p) { return p ? p->gpu : ""; }

bool cs_kprof_derived(const cs_kprof *p) { return p && p->derived; }

void cs_kprof_free(cs_kprof *p)
{
	if (!p)
		return;
	if (p->cont)
		gsl_interp_free(p->cont);
	free(p->cont_x);
	free(p->cont_rate);
	for (size_t i = 0; p->nn && i < p->nm; i++)
		cs__grid_free(&p->nn[i]);
	free(p->nn);
	free(p->lm);
	for (int d = 0; d < CS_GEMM_DTYPES; d++)
		for (int l = 0; l < CS_GEMM_LAYOUTS; l++) {
			cs__kprof_sparse *s = &p->sparse[d][l];
			free(s->lm);
			free(s->ln);
			free(s->lk);
			free(s->ratio);
		}
	for (int b = 0; b < CS_ATTN_BACKENDS; b++) {
		for (size_t i = 0; p->attn[b] && i < p->nattn[b]; i++) {
			cs__kprof_attn *g = &p->attn[b][i];
			for (size_t j = 0; j < g->nseq; j++) {
				if (g->fwd)
					cs__grid_free(&g->fwd[j]);
				if (g->bwd)
					cs__grid_free(&g->bwd[j]);
			}
			free(g->fwd);
			free(g->bwd);
			free(g->lseq);
		}
		free(p->attn[b]);
	}
	for (int k = 0; k < CS_MEM_KINDS; k++)
		cs__grid_free(&p->mem[k]);
	free(p);
}
