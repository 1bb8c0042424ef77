/*
 * kineto.c - kernel time by class in one PyTorch profiler (Kineto) Chrome
 * trace file: read (plain or gzip, zlib), stream its events (jstream.c,
 * one event at a time through jansson), classify (kineto_names.c), total.
 *
 * Memory is one event's text and tree, and 16 bytes per kernel (the busy
 * intervals), whatever the trace's size. The returned cs_kineto holds
 * numbers only; cs_kineto_free frees it.
 */
#include "ingest/kineto_int.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "core/file.h"
#include "ingest/jstream.h"
#include "ingest/kernel_rules.h"
/* ---- summarising -------------------------------------------------------- */

typedef struct span {
	int64_t start, end;
} span;

/* A GEMM's shape by its External id (from its CPU op), and a GEMM kernel's
 * time by the External id of the op that launched it. */
typedef struct op_shape {
	int64_t ext, m, n, k, batch;
} op_shape;
typedef struct gemm_kernel {
	int64_t ext, ns;
} gemm_kernel;

/* A kernel name's totals. */
typedef struct kname {
	char *name; /* NULL: an empty place */
	uint64_t hash;
	cs_kineto_class cls;
	int64_t count, ns;
} kname;

typedef struct acc {
	const char *name; /* for messages */
	cs_kineto *t;
	span *iv; /* kernel intervals */
	size_t niv, cap;
	op_shape *ops; /* GEMM CPU ops with their Input Dims */
	size_t nops, opcap;
	gemm_kernel *gk; /* GEMM kernels with an External id */
	size_t ngk, gkcap;
	int64_t *step; /* ProfilerStep numbers seen */
	size_t nstep, stepcap;
	int have_dev;
	double dev;
	int have_base;
	double base_us;               /* the first timed event's 'ts': times are rebased to it */
	const cs_kernel_rules *rules; /* the user's classes, or NULL */
	kname *kn;                    /* kernel names, open-addressed by hash; kncap a power of two */
	size_t nkn, kncap;
	cs_diag *diag;
} acc;

/* FNV-1a, 64 bits. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The place of `name` (hash h) in the table, or the empty one it would
 * take. */
static size_t kname_slot(const kname *kn, size_t cap, const char *name, uint64_t h)
{
	size_t i = h & (cap - 1);
	while (kn[i].name && (kn[i].hash != h || strcmp(kn[i].name, name) != 0))
		i = (i + 1) & (cap - 1);
	return i;
}

/* One more kernel of `name`, of class cls, `ns` long. 0, or -1 when out
 * of memory. */
static int note_kernel(acc *a, const char *name, cs_kineto_class cls, int64_t ns)
{
	if (2 * (a->nkn + 1) > a->kncap) {
		size_t cap = a->kncap ? 2 * a->kncap : 256;
		kname *kn = calloc(cap, sizeof *kn);
		if (!kn)
			return -1;
		for (size_t i = 0; i < a->kncap; i++)
			if (a->kn[i].name)
				kn[kname_slot(kn, cap, a->kn[i].name, a->kn[i].hash)] = a->kn[i];
		free(a->kn);
		a->kn = kn;
		a->kncap = cap;
	}
	uint64_t h = name_hash(name);
	kname *k = &a->kn[kname_slot(a->kn, a->kncap, name, h)];
	if (!k->name) {
		if (!(k->name = strdup(name)))
			return -1;
		k->hash = h;
		k->cls = cls;
		a->nkn++;
	}
	k->count++;
	k->ns += ns; /* at most its class's sum, which add_ns bounds */
	return 0;
}

int cs__kineto_cmp_kernel(const void *x, const void *y)
{
	const cs_kineto_kernel *p = x, *q = y;
	if (p->ns != q->ns)
		return p->ns > q->ns ? -1 : 1;
	return strcmp(p->name, q->name);
}

/* The table's names into t->by_name, the most time first (the names move;
 * the table is freed). 0, or -1 when out of memory. */
static int list_kernels(acc *a)
{
	cs_kineto *t = a->t;
	t->by_name = a->nkn ? malloc(a->nkn * sizeof *t->by_name) : NULL;
	if (a->nkn && !t->by_name)
		return -1;
	for (size_t i = 0; i < a->kncap; i++)
		if (a->kn[i].name) {
			t->by_name[t->nnames++] = (cs_kineto_kernel){ a->kn[i].name, a->kn[i].cls,
								      a->kn[i].count, a->kn[i].ns };
			a->kn[i].name = NULL;
		}
	cs__kineto_sort(t->by_name, t->nnames, sizeof *t->by_name, cs__kineto_cmp_kernel);
	return 0;
}

static void kname_free(acc *a)
{
	for (size_t i = 0; i < a->kncap; i++)
		free(a->kn[i].name);
	free(a->kn);
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 1024;
	void *np = realloc(*p, ncap * size);
	if (!np)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

static int cmp_span(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* A field of event i in microseconds as ns: 0, or -1 with a message. */
static int field_ns(acc *a, const json_t *e, size_t i, const char *cat, const char *key, int64_t *ns)
{
	const json_t *v = json_object_get(e, key);
	double us = json_is_number(v) ? json_number_value(v) : NAN;
	/* 'ts' may be Unix-epoch microseconds (~1.7e15): rebase it to the
	 * first event's, so only differences within the trace are kept */
	if (strcmp(key, "ts") == 0 && isfinite(us) && fabs(us) <= 1e17) {
		if (!a->have_base) {
			a->have_base = 1;
			a->base_us = us;
		}
		us -= a->base_us;
	}
	/* 1e14 us is three years: far beyond a trace, far below 2^63 ns */
	if (!(fabs(us) <= 1e14) || (strcmp(key, "dur") == 0 && us < 0)) {
		snprintf(a->diag->msg, sizeof a->diag->msg,
			 "'%.400s': event %zu of 'traceEvents' "
			 "(\"cat\": \"%.40s\") has %s '%s' (microseconds)",
			 a->name, i, cat, json_is_number(v) ? "an out-of-range" : "no numeric", key);
		return -1;
	}
	*ns = (int64_t)llroundl((long double)us * 1000.0L);
	return 0;
}

static int add_ns(acc *a, int64_t *sum, int64_t ns)
{
	if (__builtin_add_overflow(*sum, ns, sum)) {
		snprintf(a->diag->msg, sizeof a->diag->msg, "'%.400s': event times add up beyond 2^63 ns",
			 a->name);
		return -1;
	}
	return 0;
}

/* The device of kernel event e: one GPU per trace. 0, or -1 with a message. */
static int check_device(acc *a, const json_t *e)
{
	const json_t *args = json_object_get(e, "args");
	const json_t *d = json_object_get(args, "device");
	if (!json_is_number(d))
		d = json_object_get(e, "pid");
	if (!json_is_number(d))
		return 0;
	double dev = json_number_value(d);
	if (!a->have_dev) {
		a->have_dev = 1;
		a->dev = dev;
	} else if (dev != a->dev) {
		snprintf(a->diag->msg, sizeof a->diag->msg,
			 "'%.400s': kernels of more than one GPU "
			 "(devices %.0f and %.0f); compare reads the trace of one GPU",
			 a->name, a->dev, dev);
		return -1;
	}
	return 0;
}

/* "ProfilerStep#12" -> 12 into the step list; other names are ignored. */
static int note_step(acc *a, const char *name)
{
	static const char prefix[] = "ProfilerStep#";
	if (strncmp(name, prefix, sizeof prefix - 1) != 0)
		return 0;
	char *end;
	errno = 0;
	long long n = strtoll(name + sizeof prefix - 1, &end, 10);
	if (end == name + sizeof prefix - 1 || *end || errno)
		return 0;
	if (grow((void **)&a->step, &a->stepcap, a->nstep, sizeof(int64_t)))
		return -1;
	a->step[a->nstep++] = n;
	return 0;
}

/* Dimension i of Input Dims entry `arg` (a list of sizes); -1 if absent. */
static int64_t dim(const json_t *dims, size_t arg, size_t i)
{
	const json_t *v = json_array_get(json_array_get(dims, arg), i);
	double d = json_is_number(v) ? json_number_value(v) : -1;
	return d >= 1 && d <= 1e15 ? (int64_t)d : -1;
}

/* A GEMM's CPU op with record_shapes' "Input Dims": keep its shape. */
static cs_status note_shape(acc *a, const json_t *e, const char *name)
{
	const json_t *args = json_object_get(e, "args");
	const json_t *dims = json_object_get(args, "Input Dims");
	const json_t *ext = json_object_get(args, "External id");
	if (!json_is_array(dims) || !json_is_number(ext))
		return CS_OK;
	/* the two matrices: their argument positions, and whether batched */
	size_t x, w;
	int batched;
	if (strcmp(name, "aten::mm") == 0 || strcmp(name, "aten::_scaled_mm") == 0) {
		x = 0, w = 1, batched = 0;
	} else if (strcmp(name, "aten::addmm") == 0) {
		x = 1, w = 2, batched = 0;
	} else if (strcmp(name, "aten::bmm") == 0) {
		x = 0, w = 1, batched = 1;
	} else if (strcmp(name, "aten::baddbmm") == 0) {
		x = 1, w = 2, batched = 1;
	} else {
		return CS_OK;
	}
	int64_t b = batched ? dim(dims, x, 0) : 1;
	op_shape s = { .ext = (int64_t)json_number_value(ext),
		       .batch = b,
		       .m = dim(dims, x, (size_t)batched),
		       .k = dim(dims, x, (size_t)batched + 1),
		       .n = dim(dims, w, (size_t)batched + 1) };
	if (s.m < 0 || s.n < 0 || s.k < 0 || s.batch < 0 || dim(dims, w, (size_t)batched) != s.k)
		return CS_OK; /* not the shapes of a matrix product: leave it out */
	if (grow((void **)&a->ops, &a->opcap, a->nops, sizeof(op_shape))) {
		snprintf(a->diag->msg, sizeof a->diag->msg, "out of memory reading '%.400s'", a->name);
		return CS_ERR_NOMEM;
	}
	a->ops[a->nops++] = s;
	return CS_OK;
}

/* One event: a kernel, a copy, a memset, a step mark, or something else. */
static cs_status take_event(acc *a, const json_t *e, size_t i)
{
	const char *cat = json_string_value(json_object_get(e, "cat"));
	const char *name = json_string_value(json_object_get(e, "name"));
	if (!cat)
		return CS_OK;
	/* ProfilerStep#N: user_annotation in PyTorch 1.9 on, cpu_op or
	 * Operator in 1.8 */
	if (name && strncmp(name, "ProfilerStep#", 13) == 0 && strcasecmp(cat, "kernel") != 0) {
		if (note_step(a, name)) {
			snprintf(a->diag->msg, sizeof a->diag->msg, "out of memory reading '%.400s'",
				 a->name);
			return CS_ERR_NOMEM;
		}
		return CS_OK;
	}
	cs_kineto_class c;
	if (strcasecmp(cat, "kernel") == 0) {
		if (!name) {
			snprintf(a->diag->msg, sizeof a->diag->msg,
				 "'%.400s': event %zu of 'traceEvents' "
				 "(\"cat\": \"kernel\") has no 'name' string",
				 a->name, i);
			return CS_ERR_INPUT;
		}
		int ruled = cs_kernel_rules_match(a->rules, name);
		c = ruled >= 0 ? (cs_kineto_class)ruled : cs_kineto_classify(name);
	} else if (strcasecmp(cat, "gpu_memcpy") == 0 || strcasecmp(cat, "memcpy") == 0) {
		c = CS_KINETO_COPY;
	} else if (strcasecmp(cat, "gpu_memset") == 0 || strcasecmp(cat, "memset") == 0) {
		c = CS_KINETO_MEMSET;
	} else if (name && strcasecmp(cat, "cpu_op") == 0) {
		return note_shape(a, e, name);
	} else {
		return CS_OK;
	}
	int64_t ts, dur;
	if (field_ns(a, e, i, cat, "ts", &ts) || field_ns(a, e, i, cat, "dur", &dur) ||
	    add_ns(a, &a->t->ns[c], dur))
		return CS_ERR_INPUT;
	a->t->count[c]++;
	if (c == CS_KINETO_COPY || c == CS_KINETO_MEMSET)
		return CS_OK;
	a->t->arch[cs_kineto_kernel_arch(name)]++;
	if (note_kernel(a, name, c, dur)) {
		snprintf(a->diag->msg, sizeof a->diag->msg, "out of memory reading '%.400s'", a->name);
		return CS_ERR_NOMEM;
	}
	if (check_device(a, e))
		return CS_ERR_INPUT;
	if (grow((void **)&a->iv, &a->cap, a->niv, sizeof(span))) {
		snprintf(a->diag->msg, sizeof a->diag->msg, "out of memory reading '%.400s'", a->name);
		return CS_ERR_NOMEM;
	}
	a->iv[a->niv++] = (span){ ts, ts + dur };
	const json_t *ext = json_object_get(json_object_get(e, "args"), "External id");
	if (c == CS_KINETO_GEMM && json_is_number(ext)) {
		if (grow((void **)&a->gk, &a->gkcap, a->ngk, sizeof(gemm_kernel))) {
			snprintf(a->diag->msg, sizeof a->diag->msg, "out of memory reading '%.400s'",
				 a->name);
			return CS_ERR_NOMEM;
		}
		a->gk[a->ngk++] = (gemm_kernel){ (int64_t)json_number_value(ext), dur };
	}
	return CS_OK;
}

/* Span, busy union and steps from what take_event collected. */
static void finish(acc *a)
{
	cs_kineto *t = a->t;
	cs__kineto_sort(a->iv, a->niv, sizeof(span), cmp_span);
	/* [from, to): the busy stretch being merged */
	int64_t first = a->iv[0].start, last = a->iv[0].end, from = a->iv[0].start, to = a->iv[0].end;
	for (size_t i = 1; i < a->niv; i++) {
		const span *s = &a->iv[i];
		if (s->end > last)
			last = s->end;
		if (s->start > to) {
			t->busy_ns += to - from;
			from = s->start;
			to = s->end;
		} else if (s->end > to) {
			to = s->end;
		}
	}
	t->busy_ns += to - from;
	t->span_ns = last - first;
	t->kernels = (int64_t)a->niv;
	if (a->nstep)
		cs__kineto_sort(a->step, a->nstep, sizeof(int64_t), cmp_i64);
	int64_t distinct = 0;
	for (size_t i = 0; i < a->nstep; i++)
		distinct += i == 0 || a->step[i] != a->step[i - 1];
	t->steps_marked = distinct > 0;
	t->steps = distinct > 0 ? distinct : 1;
}

static int cmp_op(const void *x, const void *y)
{
	const op_shape *p = x, *q = y;
	return (p->ext > q->ext) - (p->ext < q->ext);
}

static int cmp_gk(const void *x, const void *y)
{
	const gemm_kernel *p = x, *q = y;
	return (p->ext > q->ext) - (p->ext < q->ext);
}

static int cmp_shape(const void *x, const void *y)
{
	const cs_kineto_shape *p = x, *q = y;
	if (p->m != q->m)
		return (p->m > q->m) - (p->m < q->m);
	if (p->n != q->n)
		return (p->n > q->n) - (p->n < q->n);
	if (p->k != q->k)
		return (p->k > q->k) - (p->k < q->k);
	return (p->batch > q->batch) - (p->batch < q->batch);
}

size_t cs__kineto_sum_shapes(cs_kineto_shape *sh, size_t n)
{
	cs__kineto_sort(sh, n, sizeof *sh, cmp_shape);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w > 0 && cmp_shape(&sh[w - 1], &sh[i]) == 0) {
			sh[w - 1].kernels += sh[i].kernels;
			sh[w - 1].ns += sh[i].ns;
		} else {
			sh[w++] = sh[i];
		}
	}
	return w;
}

/* GEMM kernels joined to their ops' shapes, summed by shape. 0, or -1 out
 * of memory. */
static int join_shapes(acc *a)
{
	if (a->nops == 0 || a->ngk == 0)
		return 0;
	cs__kineto_sort(a->ops, a->nops, sizeof *a->ops, cmp_op);
	cs__kineto_sort(a->gk, a->ngk, sizeof *a->gk, cmp_gk);
	cs_kineto_shape *sh = malloc(a->ngk * sizeof *sh);
	if (!sh)
		return -1;
	size_t n = 0, j = 0;
	for (size_t i = 0; i < a->ngk; i++) {
		while (j < a->nops && a->ops[j].ext < a->gk[i].ext)
			j++;
		if (j == a->nops || a->ops[j].ext != a->gk[i].ext)
			continue;
		const op_shape *o = &a->ops[j];
		sh[n++] = (cs_kineto_shape){ o->m, o->n, o->k, o->batch, 1, a->gk[i].ns };
	}
	size_t w = cs__kineto_sum_shapes(sh, n);
	if (w == 0) {
		free(sh);
		return 0;
	}
	a->t->shapes = sh;
	a->t->nshapes = w;
	return 0;
}

static cs_status each_event(void *arg, const json_t *e, size_t i)
{
	return json_is_object(e) ? take_event(arg, e, i) : CS_OK;
}

/* An element of 'deviceProperties': the first device's name. */
static cs_status each_device(void *arg, const json_t *e, size_t i)
{
	acc *a = arg;
	const char *name = json_string_value(json_object_get(e, "name"));
	(void)i;
	if (name && !a->t->device[0])
		snprintf(a->t->device, sizeof a->t->device, "%s", name);
	return CS_OK;
}

/* 'distributedInfo': the trace's rank in its job. */
static cs_status each_info(void *arg, const json_t *e, size_t i)
{
	acc *a = arg;
	const json_t *r = json_object_get(e, "rank");
	(void)i;
	if (json_is_number(r) && json_number_value(r) >= 0 && json_number_value(r) < 1e9)
		a->t->rank = (int64_t)json_number_value(r);
	return CS_OK;
}

/* Stream the events of the text `rd` reads into *t. */
static cs_status summarise(const char *name, size_t max_event, const cs_kernel_rules *rules,
			   cs_jstream_read rd, void *rctx, cs_kineto *t, cs_diag *diag)
{
	acc a = { .name = name, .t = t, .rules = rules, .diag = diag };
	cs_jstream_opts o = { .name = name,
			      .key = "traceEvents",
			      .max_element = max_event,
			      .key2 = "deviceProperties",
			      .each2 = each_device,
			      .key3 = "distributedInfo",
			      .each3 = each_info };
	bool found;
	cs_status st = cs_jstream_array(&o, rd, rctx, each_event, &a, &found, diag);
	if (st == CS_OK && !found) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'%.400s': no 'traceEvents' array at the top level: "
			 "not a PyTorch profiler (Kineto) trace",
			 name);
		st = CS_ERR_INPUT;
	}
	if (st == CS_OK && a.niv == 0) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'%.400s': no GPU kernels (no event with "
			 "\"cat\": \"kernel\" in 'traceEvents')",
			 name);
		st = CS_ERR_INPUT;
	}
	if (st == CS_OK) {
		finish(&a);
		if (join_shapes(&a) || list_kernels(&a)) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", name);
			st = CS_ERR_NOMEM;
		}
	}
	kname_free(&a);
	free(a.iv);
	free(a.step);
	free(a.ops);
	free(a.gk);
	return st;
}
/* ---- entry points ------------------------------------------------------- */

static cs_status run(const char *name, size_t max_event, const cs_kernel_rules *rules, cs_jstream_read rd,
		     void *rctx, cs_kineto **out, cs_diag *diag)
{
	cs_kineto *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", name);
		return CS_ERR_NOMEM;
	}
	t->rank = -1;
	cs_status st = summarise(name, max_event, rules, rd, rctx, t, diag);
	if (st == CS_OK && cs__kineto_own_rank(t, name) != 0) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", name);
		st = CS_ERR_NOMEM;
	}
	if (st != CS_OK) {
		cs_kineto_free(t);
		return st;
	}
	*out = t;
	return CS_OK;
}

cs_status cs__kineto_load_file(const char *path, size_t max_event, const cs_kernel_rules *rules,
			       cs_kineto **out, cs_diag *diag)
{
	long long size;
	*out = NULL;
	int fd = cs_file_open(path, &size, diag);
	if (fd < 0)
		return CS_ERR_INPUT;
	if (size > CS_KINETO_MAX_FILE) {
		close(fd);
		snprintf(diag->msg, sizeof diag->msg, "'%.400s' is larger than the limit of %lld GiB", path,
			 CS_KINETO_MAX_FILE >> 30);
		return CS_ERR_INPUT;
	}
	cs_jstream_gz g = { .gz = gzdopen(fd, "rb"), .path = path };
	if (!g.gz) {
		close(fd);
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", path);
		return CS_ERR_NOMEM;
	}
	gzbuffer(g.gz, 256 * 1024);
	cs_status st = run(path, max_event, rules, cs_jstream_gz_read, &g, out, diag);
	/* a gzip stream cut short may read as text that ends early: say what it is */
	if (gzclose_r(g.gz) == Z_BUF_ERROR && st != CS_ERR_NOMEM) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'%.400s': truncated gzip data at byte %lld "
			 "(unexpected end of file)",
			 path, size);
		cs_kineto_free(*out);
		*out = NULL;
		st = CS_ERR_INPUT;
	}
	return st;
}

cs_status cs_kineto_parse(const char *name, const char *text, size_t len, cs_kineto **out, cs_diag *diag)
{
	return cs_kineto_parse_ruled(name, text, len, NULL, out, diag);
}

cs_status cs_kineto_parse_ruled(const char *name, const char *text, size_t len, const cs_kernel_rules *rules,
				cs_kineto **out, cs_diag *diag)
{
	cs_jstream_mem m = { .text = text, .len = len };
	*out = NULL;
	return run(name, CS_KINETO_MAX_EVENT, rules, cs_jstream_mem_read, &m, out, diag);
}
