/*
 * kineto.c - kernel time by class in a PyTorch profiler (Kineto) Chrome
 * trace: read (plain or gzip, zlib), parse (jansson), classify, total.
 *
 * The decompressed text is one malloc'd buffer, freed once jansson has
 * parsed it; the jansson tree is freed once the totals are taken. The
 * returned cs_kineto holds numbers only; cs_kineto_free frees it.
 */
#include "report/kineto.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct cs_kineto {
	int64_t ns[CS_KINETO_CLASSES], count[CS_KINETO_CLASSES];
	int64_t steps;
	int steps_marked;
	int64_t kernels, span_ns, busy_ns;
};

/* ---- classification ----------------------------------------------------- */

/* Whether `hay` contains `needle` (lowercase ASCII), ignoring ASCII case. */
static int has(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] && (hay[i] >= 'A' && hay[i] <= 'Z' ? hay[i] + 32 : hay[i]) == needle[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

static int has_any(const char *hay, const char *const *needles)
{
	for (; *needles; needles++)
		if (has(hay, *needles))
			return 1;
	return 0;
}

cs_kineto_class cs_kineto_classify(const char *name)
{
	static const char *const attn[] = { "sdpa", "fmha", "flash", "cudnn::fusion", "attention", NULL };
	static const char *const gemm[] = { "nvjet", "gemm", "cutlass", "xmma", "cublas", NULL };
	if (has(name, "nccl"))
		return CS_KINETO_COMM;
	if (has(name, "adam") || (has(name, "multi_tensor_apply") && has(name, "fusedoptimizer")))
		return CS_KINETO_OPTIM;
	if (has_any(name, attn))
		return CS_KINETO_ATTN;
	if (has_any(name, gemm))
		return CS_KINETO_GEMM;
	return CS_KINETO_MEMBOUND;
}

const char *cs_kineto_class_name(cs_kineto_class c)
{
	static const char *const names[CS_KINETO_CLASSES] = {
		"gemm", "attention", "memory_bound", "optimizer", "communication", "copy", "memset"
	};
	return (unsigned)c < CS_KINETO_CLASSES ? names[c] : "?";
}

/* ---- reading ------------------------------------------------------------ */

/* The whole file, gunzipped when it is gzip, into *buf (the caller frees). */
static cs_status read_all(const char *path, size_t limit, char **buf, size_t *len, cs_diag *diag)
{
	struct stat st;
	*buf = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(diag->msg, sizeof diag->msg, "cannot open '%.400s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return CS_ERR_INPUT;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(diag->msg, sizeof diag->msg, "cannot read '%.400s': not a regular file", path);
		return CS_ERR_INPUT;
	}
	gzFile gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", path);
		return CS_ERR_NOMEM;
	}
	gzbuffer(gz, 256 * 1024);
	size_t cap = 0, n = 0;
	char *b = NULL;
	cs_status rc = CS_OK;
	for (;;) {
		if (n == cap) {
			if (cap > limit) {
				int mib = limit % ((size_t)1 << 20) == 0;
				snprintf(diag->msg, sizeof diag->msg, "'%.400s' is larger than the limit of "
					 "%zu %s decompressed", path, mib ? limit >> 20 : limit, mib ? "MiB" : "bytes");
				rc = CS_ERR_INPUT;
				break;
			}
			size_t ncap = cap ? cap * 2 : (size_t)1 << 20;
			if (ncap > limit + 1)
				ncap = limit + 1;
			char *nb = realloc(b, ncap + 1);
			if (!nb) {
				snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", path);
				rc = CS_ERR_NOMEM;
				break;
			}
			b = nb;
			cap = ncap;
		}
		size_t want = cap - n < (size_t)1 << 30 ? cap - n : (size_t)1 << 30;
		int got = gzread(gz, b + n, (unsigned)want);
		int err = Z_OK;
		const char *why = got <= 0 ? gzerror(gz, &err) : "";
		if (got > 0) {
			n += (size_t)got;
			continue;
		}
		if (err == Z_ERRNO) {
			snprintf(diag->msg, sizeof diag->msg, "cannot read '%.400s': %s", path, strerror(errno));
			rc = CS_ERR_INPUT;
		} else if (err == Z_MEM_ERROR) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", path);
			rc = CS_ERR_NOMEM;
		} else if (err != Z_OK) {
			/* zlib prefixes its message with the file's name, "<fd:3>" here */
			const char *colon = strstr(why, ": ");
			if (strncmp(why, "<fd:", 4) == 0 && colon)
				why = colon + 2;
			snprintf(diag->msg, sizeof diag->msg, "'%.400s': %s gzip data at byte %lld (%s)", path,
				 err == Z_BUF_ERROR ? "truncated" : "corrupt", (long long)gzoffset(gz), why);
			rc = CS_ERR_INPUT;
		}
		break;
	}
	if (gzclose_r(gz) == Z_BUF_ERROR && rc == CS_OK) {
		snprintf(diag->msg, sizeof diag->msg, "'%.400s': truncated gzip data at byte %lld "
			 "(unexpected end of file)", path, (long long)st.st_size);
		rc = CS_ERR_INPUT;
	}
	if (rc != CS_OK) {
		free(b);
		return rc;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return CS_OK;
}

/* ---- summarising -------------------------------------------------------- */

typedef struct span { int64_t start, end; } span;

typedef struct acc {
	const char *name;      /* for messages */
	cs_kineto *t;
	span *iv;              /* kernel intervals */
	size_t niv, cap;
	int64_t *step;         /* ProfilerStep numbers seen */
	size_t nstep, stepcap;
	int have_dev;
	double dev;
	cs_diag *diag;
} acc;

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
	/* 1e14 us is three years: far beyond a trace, far below 2^63 ns */
	if (!(fabs(us) <= 1e14) || (strcmp(key, "dur") == 0 && us < 0)) {
		snprintf(a->diag->msg, sizeof a->diag->msg, "'%.400s': event %zu of 'traceEvents' "
			 "(\"cat\": \"%.40s\") has %s '%s' (microseconds)", a->name, i, cat,
			 json_is_number(v) ? "an out-of-range" : "no numeric", key);
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
		snprintf(a->diag->msg, sizeof a->diag->msg, "'%.400s': kernels of more than one GPU "
			 "(devices %.0f and %.0f); compare reads the trace of one GPU", a->name, a->dev, dev);
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

/* One event: a kernel, a copy, a memset, a step mark, or something else. */
static cs_status take_event(acc *a, const json_t *e, size_t i)
{
	const char *cat = json_string_value(json_object_get(e, "cat"));
	const char *name = json_string_value(json_object_get(e, "name"));
	if (!cat)
		return CS_OK;
	cs_kineto_class c;
	if (strcasecmp(cat, "kernel") == 0) {
		if (!name) {
			snprintf(a->diag->msg, sizeof a->diag->msg, "'%.400s': event %zu of 'traceEvents' "
				 "(\"cat\": \"kernel\") has no 'name' string", a->name, i);
			return CS_ERR_INPUT;
		}
		c = cs_kineto_classify(name);
	} else if (strcasecmp(cat, "gpu_memcpy") == 0 || strcasecmp(cat, "memcpy") == 0) {
		c = CS_KINETO_COPY;
	} else if (strcasecmp(cat, "gpu_memset") == 0 || strcasecmp(cat, "memset") == 0) {
		c = CS_KINETO_MEMSET;
	} else if (name && (strcasecmp(cat, "user_annotation") == 0 ||
			    strcasecmp(cat, "gpu_user_annotation") == 0)) {
		if (note_step(a, name)) {
			snprintf(a->diag->msg, sizeof a->diag->msg, "out of memory reading '%.400s'", a->name);
			return CS_ERR_NOMEM;
		}
		return CS_OK;
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
	if (check_device(a, e))
		return CS_ERR_INPUT;
	if (grow((void **)&a->iv, &a->cap, a->niv, sizeof(span))) {
		snprintf(a->diag->msg, sizeof a->diag->msg, "out of memory reading '%.400s'", a->name);
		return CS_ERR_NOMEM;
	}
	a->iv[a->niv++] = (span){ ts, ts + dur };
	return CS_OK;
}

/* Span, busy union and steps from what take_event collected. */
static void finish(acc *a)
{
	cs_kineto *t = a->t;
	qsort(a->iv, a->niv, sizeof(span), cmp_span);
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
		qsort(a->step, a->nstep, sizeof(int64_t), cmp_i64);
	int64_t distinct = 0;
	for (size_t i = 0; i < a->nstep; i++)
		distinct += i == 0 || a->step[i] != a->step[i - 1];
	t->steps_marked = distinct > 0;
	t->steps = distinct > 0 ? distinct : 1;
}

static cs_status summarise(const char *name, const json_t *root, cs_kineto *t, cs_diag *diag)
{
	const json_t *ev = json_is_object(root) ? json_object_get(root, "traceEvents") : NULL;
	if (!json_is_array(ev)) {
		snprintf(diag->msg, sizeof diag->msg, "'%.400s': no 'traceEvents' array at the top level: "
			 "not a PyTorch profiler (Kineto) trace", name);
		return CS_ERR_INPUT;
	}
	acc a = { .name = name, .t = t, .diag = diag };
	cs_status st = CS_OK;
	size_t i;
	const json_t *e;
	json_array_foreach(ev, i, e) {
		if (json_is_object(e) && (st = take_event(&a, e, i)) != CS_OK)
			break;
	}
	if (st == CS_OK && a.niv == 0) {
		snprintf(diag->msg, sizeof diag->msg, "'%.400s': no GPU kernels (no event with "
			 "\"cat\": \"kernel\" in 'traceEvents')", name);
		st = CS_ERR_INPUT;
	}
	if (st == CS_OK)
		finish(&a);
	free(a.iv);
	free(a.step);
	return st;
}

/* ---- entry points ------------------------------------------------------- */

cs_status cs_kineto_parse(const char *name, const char *text, size_t len, cs_kineto **out, cs_diag *diag)
{
	*out = NULL;
	json_error_t err;
	/* integers as reals: a huge integer anywhere is no reason to refuse a trace */
	json_t *root = json_loadb(text, len, JSON_DECODE_INT_AS_REAL, &err);
	if (!root) {
		if (json_error_code(&err) == json_error_out_of_memory) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory parsing '%.400s'", name);
			return CS_ERR_NOMEM;
		}
		snprintf(diag->msg, sizeof diag->msg, "%.400s:%d:%d: not JSON: %s", name, err.line,
			 err.column, err.text);
		return CS_ERR_INPUT;
	}
	cs_kineto *t = calloc(1, sizeof *t);
	cs_status st = CS_ERR_NOMEM;
	if (!t)
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", name);
	else
		st = summarise(name, root, t, diag);
	json_decref(root);
	if (st != CS_OK) {
		free(t);
		return st;
	}
	*out = t;
	return CS_OK;
}

cs_status cs__kineto_load_limit(const char *path, size_t limit, cs_kineto **out, cs_diag *diag)
{
	char *buf;
	size_t len;
	*out = NULL;
	cs_status st = read_all(path, limit, &buf, &len, diag);
	if (st != CS_OK)
		return st;
	st = cs_kineto_parse(path, buf, len, out, diag);
	free(buf);
	return st;
}

cs_status cs_kineto_load(const char *path, cs_kineto **out, cs_diag *diag)
{
	return cs__kineto_load_limit(path, CS_KINETO_MAX_BYTES, out, diag);
}

void cs_kineto_free(cs_kineto *t)
{
	free(t);
}

int64_t cs_kineto_class_ns(const cs_kineto *t, cs_kineto_class c)
{
	return (unsigned)c < CS_KINETO_CLASSES ? t->ns[c] : 0;
}

int64_t cs_kineto_class_count(const cs_kineto *t, cs_kineto_class c)
{
	return (unsigned)c < CS_KINETO_CLASSES ? t->count[c] : 0;
}

int64_t cs_kineto_steps(const cs_kineto *t) { return t->steps; }
int cs_kineto_steps_marked(const cs_kineto *t) { return t->steps_marked; }
int64_t cs_kineto_kernels(const cs_kineto *t) { return t->kernels; }
int64_t cs_kineto_span_ns(const cs_kineto *t) { return t->span_ns; }
int64_t cs_kineto_busy_ns(const cs_kineto *t) { return t->busy_ns; }
