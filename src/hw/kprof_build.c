/*
 * kprof_build.c - a profile's raw tables into the lookups of a cs_kprof.
 *
 * Checks what needs the whole table: the bf16 NN rows must form a full
 * M x N x K grid, an attention group (backend, mask, head dimension) may
 * not give one (seq, work) twice (work = batch x heads x seq), and no two
 * points may share a logarithm. Then builds the GSL interpolants over log
 * coordinates and the sparse tables' ratios to the NN grid. Messages point at the row
 * (or table) at fault: "file:line:col: ...".
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kprof_int.h"

typedef struct builder {
	const char *file;
	cs_diag *diag;
} builder;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static cs_status
at(builder *b, int line, int col, const char *fmt, ...)
{
	char body[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	snprintf(b->diag->msg, sizeof b->diag->msg, "%.200s:%d:%d: %.760s", b->file, line, col, body);
	return CS_ERR_INPUT;
}

static cs_status nomem(builder *b)
{
	snprintf(b->diag->msg, sizeof b->diag->msg, "out of memory loading '%.300s'", b->file);
	return CS_ERR_NOMEM;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The sorted distinct values of vals[n] into a new array *out; the count. */
static size_t distinct(const double *vals, size_t n, double **out)
{
	double *v = malloc((n ? n : 1) * sizeof *v);
	size_t k = 0;

	*out = v;
	if (!v)
		return 0;
	memcpy(v, vals, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_double);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* A new array of the logarithms of v[n]; NULL without memory. *ok is false
 * when two values share a logarithm. */
static double *logs(const double *v, size_t n, bool *ok)
{
	double *l = malloc((n ? n : 1) * sizeof *l);

	*ok = true;
	for (size_t i = 0; l && i < n; i++) {
		l[i] = log(v[i]);
		if (i > 0 && !(l[i] > l[i - 1]))
			*ok = false;
	}
	return l;
}

/* A grid over (log xs[nx], log ys[ny]) of z (malloc'd, taken). */
static cs_status grid(builder *b, const cs__kprof_table *t, cs__grid *g, const double *xs, size_t nx,
		      const double *ys, size_t ny, double *z)
{
	bool okx, oky;
	double *x = logs(xs, nx, &okx), *y = logs(ys, ny, &oky);

	if (!x || !y || !z) {
		free(x);
		free(y);
		free(z);
		return nomem(b);
	}
	if (!okx || !oky) {
		free(x);
		free(y);
		free(z);
		return at(b, t->line0, t->col0, "'%s' has points too close to tell apart", t->path);
	}
	return cs__grid_init(g, nx, ny, x, y, z) ? CS_OK : nomem(b);
}

static cs_status build_nn(builder *b, const cs__kprof_table *t, cs_kprof *p)
{
	double *col[3] = { NULL, NULL, NULL }, *vals[3] = { NULL, NULL, NULL };
	size_t cnt[3] = { 0, 0, 0 }, total;
	cs_status st = CS_OK;

	for (int c = 0; c < 3; c++) {
		if (!(col[c] = malloc(t->n * sizeof *col[c])))
			st = nomem(b);
		for (size_t r = 0; col[c] && r < t->n; r++)
			col[c][r] = t->v[r * t->cols + (size_t)c];
		if (st == CS_OK && ((cnt[c] = distinct(col[c], t->n, &vals[c])), !vals[c]))
			st = nomem(b);
	}
	total = st == CS_OK ? cnt[0] * cnt[1] * cnt[2] : 0;
	/* rows go by increasing (M, N, K), so a full grid is exactly the product in order */
	for (size_t r = 0; st == CS_OK && r <= t->n && r < total; r++) {
		double m = vals[0][r / (cnt[1] * cnt[2])], n = vals[1][r / cnt[2] % cnt[1]];
		double k = vals[2][r % cnt[2]];
		if (r == t->n)
			st = at(b, t->line0, t->col0,
				"'%s' is not a full M x N x K grid (%d x %d x %d "
				"values): it lacks [%.17g, %.17g, %.17g]",
				t->path, (int)cnt[0], (int)cnt[1], (int)cnt[2], m, n, k);
		else if (t->v[r * t->cols] != m || t->v[r * t->cols + 1] != n || t->v[r * t->cols + 2] != k)
			st = at(b, t->line[r], t->col[r],
				"'%s' is not a full M x N x K grid (%d x %d x %d "
				"values): expected [%.17g, %.17g, %.17g] in this row",
				t->path, (int)cnt[0], (int)cnt[1], (int)cnt[2], m, n, k);
	}
	if (st == CS_OK) {
		bool ok;
		p->nm = cnt[0];
		p->min_m = vals[0][0], p->max_m = vals[0][cnt[0] - 1];
		p->min_n = vals[1][0], p->max_n = vals[1][cnt[1] - 1];
		p->min_k = vals[2][0], p->max_k = vals[2][cnt[2] - 1];
		p->lm = logs(vals[0], cnt[0], &ok);
		p->nn = calloc(cnt[0], sizeof *p->nn);
		if (!p->lm || !p->nn)
			st = nomem(b);
		else if (!ok)
			st = at(b, t->line0, t->col0, "'%s' has points too close to tell apart", t->path);
	}
	for (size_t i = 0; st == CS_OK && i < cnt[0]; i++) {
		size_t nx = cnt[1], ny = cnt[2];
		double *z = malloc(nx * ny * sizeof *z);
		for (size_t a = 0; z && a < nx; a++)
			for (size_t c = 0; c < ny; c++)
				z[c * nx + a] = t->v[((i * nx + a) * ny + c) * t->cols + 3];
		st = grid(b, t, &p->nn[i], vals[1], nx, vals[2], ny, z);
	}
	for (int c = 0; c < 3; c++) {
		free(col[c]);
		free(vals[c]);
	}
	return st;
}

static cs_status build_sparse(builder *b, const cs__kprof_table *t, cs__kprof_sparse *s, const cs_kprof *p)
{
	s->lm = malloc(t->n * sizeof *s->lm);
	s->ln = malloc(t->n * sizeof *s->ln);
	s->lk = malloc(t->n * sizeof *s->lk);
	s->ratio = malloc(t->n * sizeof *s->ratio);
	if (!s->lm || !s->ln || !s->lk || !s->ratio)
		return nomem(b);
	for (size_t r = 0; r < t->n; r++) {
		const double *v = t->v + r * t->cols;
		s->lm[r] = log(v[0]);
		s->ln[r] = log(v[1]);
		s->lk[r] = log(v[2]);
		s->ratio[r] = v[3] / cs__kprof_nn(p, v[0], v[1], v[2]);
	}
	s->n = t->n;
	return CS_OK;
}

/* A point of an attention group, sorted by work then by row. */
typedef struct apoint {
	double work, fwd, bwd;
	size_t row;
} apoint;

static int cmp_apoint(const void *a, const void *b)
{
	const apoint *x = a, *y = b;
	if (x->work != y->work)
		return (x->work > y->work) - (x->work < y->work);
	return (x->row > y->row) - (x->row < y->row);
}

static const double one = 1.0; /* the y of a curve, log 0 */

/* One seq of an attention group: the rows pts[np] of that seq. */
static cs_status build_slice(builder *b, const cs__kprof_table *t, apoint *pts, size_t np, cs__grid *fwd,
			     cs__grid *bwd)
{
	double *w = malloc(np * sizeof *w), *zf = malloc(np * sizeof *zf), *zb = malloc(np * sizeof *zb);
	cs_status st = CS_OK;

	qsort(pts, np, sizeof *pts, cmp_apoint);
	for (size_t i = 0; w && zf && zb && i < np; i++) {
		w[i] = pts[i].work;
		zf[i] = pts[i].fwd;
		zb[i] = pts[i].bwd;
		if (i > 0 && pts[i].work == pts[i - 1].work && st == CS_OK)
			st = at(b, t->line[pts[i].row], t->col[pts[i].row],
				"a row of '%s' repeats the point "
				"of line %d (the same causal, head_dim, seq and batch x heads)",
				t->path, t->line[pts[i - 1].row]);
	}
	if (st != CS_OK || !w || !zf || !zb) {
		free(w);
		free(zf);
		free(zb);
		return st != CS_OK ? st : nomem(b);
	}
	st = grid(b, t, fwd, w, np, &one, 1, zf);
	if (st == CS_OK)
		st = grid(b, t, bwd, w, np, &one, 1, zb);
	else
		free(zb);
	free(w);
	return st;
}

/* One attention group: the rows rows[nr] of t with one mask and head_dim,
 * a curve over work for each seq. */
static cs_status build_group(builder *b, const cs__kprof_table *t, const size_t *rows, size_t nr,
			     cs__kprof_attn *g)
{
	double *seq = malloc(nr * sizeof *seq), *sv = NULL;
	apoint *pts = malloc(nr * sizeof *pts);
	size_t ns = 0;
	cs_status st = CS_OK;
	bool ok = true;

	for (size_t i = 0; seq && i < nr; i++)
		seq[i] = t->v[rows[i] * t->cols + 3];
	if (seq)
		ns = distinct(seq, nr, &sv);
	if (sv) {
		g->lseq = logs(sv, ns, &ok);
		g->fwd = calloc(ns, sizeof *g->fwd);
		g->bwd = calloc(ns, sizeof *g->bwd);
	}
	if (!pts || !sv || !g->lseq || !g->fwd || !g->bwd)
		st = nomem(b);
	else if (!ok)
		st = at(b, t->line0, t->col0, "'%s' has points too close to tell apart", t->path);
	else
		g->nseq = ns;
	for (size_t j = 0; st == CS_OK && j < ns; j++) {
		size_t np = 0;
		for (size_t i = 0; i < nr; i++) {
			const double *v = t->v + rows[i] * t->cols;
			if (v[3] == sv[j])
				pts[np++] = (apoint){ v[1] * v[2] * v[3], v[5], v[6], rows[i] };
		}
		st = build_slice(b, t, pts, np, &g->fwd[j], &g->bwd[j]);
	}
	free(seq);
	free(sv);
	free(pts);
	return st;
}

static cs_status build_attn(builder *b, const cs__kprof_table *t, cs_kprof *p, int backend)
{
	size_t *rows = malloc(t->n * sizeof *rows);
	cs__kprof_attn *groups = calloc(t->n, sizeof *groups);
	bool *done = calloc(t->n, sizeof *done);
	cs_status st = CS_OK;

	p->attn[backend] = groups;
	if (!rows || !groups || !done)
		st = nomem(b);
	for (size_t r = 0; st == CS_OK && r < t->n; r++) {
		const double *v = t->v + r * t->cols;
		cs__kprof_attn *g = &groups[p->nattn[backend]];
		size_t nr = 0;
		if (done[r])
			continue;
		g->causal = v[0] != 0;
		g->head_dim = v[4];
		for (size_t q = r; q < t->n; q++)
			if (t->v[q * t->cols] == v[0] && t->v[q * t->cols + 4] == v[4]) {
				rows[nr++] = q;
				done[q] = true;
			}
		p->nattn[backend]++;
		st = build_group(b, t, rows, nr, g);
	}
	free(rows);
	free(done);
	return st;
}

static cs_status build_mem(builder *b, const cs__kprof_table *t, cs_kprof *p, int kind)
{
	double *x = malloc(t->n * sizeof *x), *z = malloc(t->n * sizeof *z);
	cs_status st;

	if (!x || !z) {
		free(x);
		free(z);
		return nomem(b);
	}
	for (size_t r = 0; r < t->n; r++) {
		x[r] = t->v[r * t->cols];
		z[r] = t->v[r * t->cols + 1];
	}
	st = grid(b, t, &p->mem[kind], x, t->n, &one, 1, z);
	p->has_mem[kind] = st == CS_OK;
	p->mem_min_bytes[kind] = x[0];
	free(x);
	return st;
}

static cs_status build_contention(builder *b, const cs__kprof_table *t, cs_kprof *p)
{
	if (t->n < 2)
		return t->n ? at(b, t->line0, t->col0, "'contention' needs at least two points") : CS_OK;
	p->cont_x = malloc(t->n * sizeof *p->cont_x);
	p->cont_rate = malloc(t->n * sizeof *p->cont_rate);
	p->cont = gsl_interp_alloc(gsl_interp_linear, t->n);
	if (!p->cont_x || !p->cont_rate || !p->cont)
		return nomem(b);
	for (size_t r = 0; r < t->n; r++) {
		p->cont_x[r] = t->v[r * t->cols];
		p->cont_rate[r] = t->v[r * t->cols + 1];
	}
	if (gsl_interp_init(p->cont, p->cont_x, p->cont_rate, t->n) != 0)
		return nomem(b);
	p->ncont = t->n;
	return CS_OK;
}

cs_status cs__kprof_build(const cs__kprof_raw *raw, const char *file, cs_kprof **out, cs_diag *diag)
{
	builder b = { file, diag };
	cs_kprof *p = calloc(1, sizeof *p);
	cs_status st;

	*out = NULL;
	if (!p)
		return nomem(&b);
	memcpy(p->name, raw->name, sizeof p->name);
	memcpy(p->gpu, raw->gpu, sizeof p->gpu);
	p->derived = raw->derived;
	p->eager_ns = raw->eager_us * 1e3;
	p->doc_floor = raw->doc_floor;
	p->has_clock = raw->has_clock;
	p->clock = raw->clock;
	p->graph_ns = raw->graph_us * 1e3;
	p->sync_ns = raw->sync_us * 1e3;
	st = build_nn(&b, &raw->gemm[CS_GEMM_BF16][CS_GEMM_NN], p);
	for (int d = 0; d < CS_GEMM_DTYPES; d++)
		for (int l = 0; l < CS_GEMM_LAYOUTS; l++)
			for (size_t r = 0; r < raw->gemm[d][l].n; r++)
				p->gemm_max[d] =
					fmax(p->gemm_max[d], raw->gemm[d][l].v[r * raw->gemm[d][l].cols + 3]);
	for (int d = 0; st == CS_OK && d < CS_GEMM_DTYPES; d++)
		for (int l = 0; st == CS_OK && l < CS_GEMM_LAYOUTS; l++)
			if (raw->gemm[d][l].n && !(d == CS_GEMM_BF16 && l == CS_GEMM_NN))
				st = build_sparse(&b, &raw->gemm[d][l], &p->sparse[d][l], p);
	for (int a = 0; st == CS_OK && a < CS_ATTN_BACKENDS; a++)
		if (raw->attn[a].n)
			st = build_attn(&b, &raw->attn[a], p, a);
	for (int k = 0; st == CS_OK && k < CS_MEM_KINDS; k++)
		if (raw->mem[k].n)
			st = build_mem(&b, &raw->mem[k], p, k);
	if (st == CS_OK)
		st = build_contention(&b, &raw->contention, p);
	if (st != CS_OK) {
		cs_kprof_free(p);
		return st;
	}
	*out = p;
	return CS_OK;
}
