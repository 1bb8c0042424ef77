/*
 * kprof_int.h - what the files of the kernel profile (kprof.c,
 * kprof_load.c, kprof_parse.c, kprof_build.c and the generated
 * kprof_builtin.c) share.
 *
 * Loading runs in two steps: kprof_parse.c reads the YAML text into raw
 * tables (checking types, values, row lengths and order, with every row's
 * position kept for messages), then kprof_build.c checks the grids' shapes
 * and builds the interpolants of the immutable cs_kprof that kprof.c looks
 * up.
 */
#ifndef CS_HW_KPROF_INT_H
#define CS_HW_KPROF_INT_H

#include <gsl/gsl_interp.h>
#include <gsl/gsl_interp2d.h>

#include "hw/kprof.h"

/* Largest profile accepted, in bytes. */
#define CS__KPROF_MAX_FILE (16 * 1024 * 1024)

/* ---- raw tables (kprof_parse.c) ------------------------------------------ */

/* One table of the file: n rows of `cols` numbers (bools as 0 and 1). */
typedef struct cs__kprof_table {
	char path[40];   /* "gemm.bf16.NN", for messages */
	size_t n, cols;  /* n == 0: the file has no such table */
	double *v;       /* n x cols, row-major */
	int *line, *col; /* each row's position, 1-based */
	int line0, col0; /* the table's own position */
} cs__kprof_table;

typedef struct cs__kprof_raw {
	char name[64], gpu[128];
	bool derived;
	double eager_us, graph_us, sync_us;
	cs__kprof_table gemm[CS_GEMM_DTYPES][CS_GEMM_LAYOUTS];
	cs__kprof_table attn[CS_ATTN_BACKENDS];
	cs__kprof_table mem[CS_MEM_KINDS];
	cs__kprof_table contention; /* [sm_fraction, rate]; n == 0: none */
	double doc_floor;           /* document-masked attention's fixed share */
	bool has_clock;
	cs_kprof_clock clock;
} cs__kprof_raw;

/* Reads the text of a profile (len bytes; `file` names it in messages)
 * into raw, zeroed by the caller, who frees it with cs__kprof_raw_free
 * whatever this returns. */
cs_status cs__kprof_read(const char *text, size_t len, const char *file, cs__kprof_raw *raw, cs_diag *diag);
/* Frees the tables' arrays, not raw itself. */
void cs__kprof_raw_free(cs__kprof_raw *raw);

/* ---- interpolation grids (kprof.c) --------------------------------------- */

/* Linear (nx or ny == 1) or bilinear interpolation over strictly increasing
 * x[nx] and y[ny], z[j * nx + i] the value at (x[i], y[j]); queries outside
 * are clamped to the edges. Immutable once built: GSL is called without
 * accelerators, so lookups may run from several threads. */
typedef struct cs__grid {
	size_t nx, ny;
	double *x, *y, *z;
	gsl_interp2d *it2; /* nx >= 2 and ny >= 2 */
	gsl_interp *it1;   /* exactly one of nx, ny >= 2 */
} cs__grid;

/* Takes x, y and z (malloc'd) whatever it returns; false when GSL could not
 * allocate. The caller checked that x and y increase strictly. */
bool cs__grid_init(cs__grid *g, size_t nx, size_t ny, double *x, double *y, double *z);
double cs__grid_eval(const cs__grid *g, double x, double y);
void cs__grid_free(cs__grid *g);

/* ---- the profile ---------------------------------------------------------- */

/* A sparse GEMM table: the measured points (log m, log n, log k) and their
 * throughput over the bf16 NN grid's at the same shape. */
typedef struct cs__kprof_sparse {
	size_t n;
	double *lm, *ln, *lk, *ratio;
} cs__kprof_sparse;

/* The attention points of one backend, mask and head dimension: for each
 * measured seq (log seq[i]), TF/s over log work, work = batch x heads x
 * seq. Each seq has its own work values (a table that keeps batch x seq
 * constant has the same ones, except where batch cannot shrink below 1). */
typedef struct cs__kprof_attn {
	bool causal;
	double head_dim;
	size_t nseq;
	double *lseq;
	cs__grid *fwd, *bwd;
} cs__kprof_attn;

struct cs_kprof {
	char name[64], gpu[128];
	bool derived;
	double eager_ns, graph_ns, sync_ns;
	/* bf16 NN: one (log n, log k) grid of TF/s per measured M */
	size_t nm;
	double *lm;
	cs__grid *nn;
	double min_m, min_n, min_k, max_m, max_n, max_k;
	cs__kprof_sparse sparse[CS_GEMM_DTYPES][CS_GEMM_LAYOUTS]; /* n == 0: absent */
	/* the fastest measured GEMM of each dtype, any layout (TF/s): no lookup
	 * exceeds it */
	double gemm_max[CS_GEMM_DTYPES];
	size_t nattn[CS_ATTN_BACKENDS];
	cs__kprof_attn *attn[CS_ATTN_BACKENDS];
	bool has_mem[CS_MEM_KINDS];
	cs__grid mem[CS_MEM_KINDS]; /* GB/s over log bytes */
	double mem_min_bytes[CS_MEM_KINDS];
	/* compute's rate while communication kernels hold a fraction of the
	 * SMs: n points, fractions increasing from 0 */
	size_t ncont;
	double *cont_x, *cont_rate;
	gsl_interp *cont;
	double doc_floor;
	bool has_clock;
	cs_kprof_clock clock;
};

/* kprof_build.c: raw tables into *out (the caller frees it with
 * cs_kprof_free); messages "file:line:col: ..." in diag. */
cs_status cs__kprof_build(const cs__kprof_raw *raw, const char *file, cs_kprof **out, cs_diag *diag);
/* kprof.c: the bf16 NN grid's TF/s at a shape, with the clamping rules. */
double cs__kprof_nn(const cs_kprof *p, double m, double n, double k);
/* kprof.c: linear in l between the two slices g[n] (at l[n], increasing)
 * around lq, each evaluated at (x, y); clamped to the first and last. */
double cs__grid_across(size_t n, const double *l, const cs__grid *g, double lq, double x, double y);

/* ---- built-in profiles (generated kprof_builtin.c) ------------------------ */

/* The text of the built-in profile `name`, its length and the source path
 * that names it in messages; NULL when there is none. The text is const
 * data of the library. */
const char *cs__kprof_builtin_text(const char *name, size_t *len, const char **path);
/* The i-th built-in name in alphabetical order, NULL past the last. */
const char *cs__kprof_builtin_name(size_t i);

#endif
