/*
 * nccltests.c - nccl-tests' output (nccltests.h). Text: one pass over the
 * lines: '#' lines give the test's name, the ranks and the column header;
 * lines that start with a digit after the header are result rows, and a
 * test's opening lines after rows start the next test. JSON (-J) is
 * nccltests_json.c's. Each test's rows are one array the caller frees
 * with cs_nccltests_set_free.
 */
#include "ingest/nccltests.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "ingest/nccltests_int.h"

#define MAX_TOKENS 32
#define MAX_BYTES ((size_t)64 << 20)

typedef struct line {
	const char *tok[MAX_TOKENS];
	int len[MAX_TOKENS], col[MAX_TOKENS];
	int n;     /* tokens (at most MAX_TOKENS) */
	bool more; /* more than MAX_TOKENS */
} line;

/* The length of a launcher's prefix at the start of [s, e), 0 if none:
 * mpirun --tag-output's "[1,0]<stdout>:", torchrun's "[default0]:", srun
 * -l's "0: " (digits and a colon: a result row's first number is followed
 * by a blank), Intel MPI -prepend-rank's "[0] " (digits in brackets). */
static size_t launcher_prefix(const char *s, const char *e)
{
	const char *p = s;
	if (p < e && *p == '[') {
		const char *q = memchr(p, ']', (size_t)(e - p));
		if (!q || q - p > 24)
			return 0;
		q++;
		if ((size_t)(e - q) >= 9 &&
		    (memcmp(q, "<stdout>:", 9) == 0 || memcmp(q, "<stderr>:", 9) == 0))
			return (size_t)(q + 9 - s);
		if (q < e && *q == ':' && q - p > 9 && memcmp(p, "[default", 8) == 0)
			return (size_t)(q + 1 - s);
		const char *d = p + 1;
		while (d < q - 1 && isdigit((unsigned char)*d))
			d++;
		if (d == q - 1 && d > p + 1 && q < e && *q == ' ')
			return (size_t)(q + 1 - s);
		return 0;
	}
	while (p < e && isdigit((unsigned char)*p))
		p++;
	if (p > s && p < e && *p == ':')
		return (size_t)(p + 1 - s);
	return 0;
}

/* Split [s, e) at blanks after a launcher's prefix; a leading '#' is a
 * token of its own. Columns count from s. */
static void split(const char *s, const char *e, line *l)
{
	const char *p = s + launcher_prefix(s, e);
	const char *first = p;
	l->n = 0;
	l->more = false;
	while (p < e) {
		while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p == e)
			break;
		const char *q = p;
		if (*q == '#' && p == first)
			q++;
		else
			while (q < e && *q != ' ' && *q != '\t' && *q != '\r')
				q++;
		if (l->n == MAX_TOKENS) {
			l->more = true;
			return;
		}
		l->tok[l->n] = p;
		l->len[l->n] = (int)(q - p);
		l->col[l->n] = (int)(p - s) + 1;
		l->n++;
		p = q;
	}
}

static bool is(const line *l, int i, const char *word)
{
	return i < l->n && (size_t)l->len[i] == strlen(word) && memcmp(l->tok[i], word, l->len[i]) == 0;
}

static int find(const line *l, const char *word, int from)
{
	for (int i = from; i < l->n; i++)
		if (is(l, i, word))
			return i;
	return -1;
}

/* A number of the whole token, or NAN for "N/A". false if neither. */
static bool number(const line *l, int i, double *v)
{
	char buf[64];
	if (l->len[i] >= (int)sizeof buf)
		return false;
	memcpy(buf, l->tok[i], (size_t)l->len[i]);
	buf[l->len[i]] = 0;
	if (strcmp(buf, "N/A") == 0) {
		*v = NAN;
		return true;
	}
	char *end;
	*v = strtod(buf, &end);
	return end != buf && *end == 0 && isfinite(*v);
}

typedef struct cols {
	int n;                 /* tokens of a result row */
	bool stamped;          /* -S 1: a timestamp column, two tokens in a row */
	int size, redop, root; /* -1 when absent */
	int time[2], busbw[2];
	int line;
} cols;

/* The column header: its tokens after '#' name the columns. */
static int header(const line *l, const char *file, int lineno, cols *c, cs_diag *diag)
{
	c->n = l->n - 1;
	c->line = lineno;
	c->stamped = find(l, "timestamp", 1) == l->n - 1;
	if (c->stamped)
		c->n++; /* "2026-07-10 09:00:00" */
	c->size = find(l, "size", 1) - 1;
	c->redop = find(l, "redop", 1) - 1;
	c->root = find(l, "root", 1) - 1;
	const char *tname = find(l, "time", 1) > 0 ? "time" : "cputime"; /* -C 1: cputime */
	int t0 = find(l, tname, 1), b0 = find(l, "busbw", 1), a0 = find(l, "algbw", 1);
	const char *missing = c->size < 0 ? "size"
			      : t0 < 0    ? "time"
			      : a0 < 0    ? "algbw"
			      : b0 < 0    ? "busbw"
					  : NULL;
	if (missing) {
		snprintf(diag->msg, sizeof diag->msg,
			 "%.300s:%d:1: wrong columns: the header has no "
			 "'%s' (nccl-tests prints size, count, type, redop, root, time, algbw, busbw)",
			 file, lineno, missing);
		return -1;
	}
	int t1 = find(l, tname, t0 + 1), b1 = find(l, "busbw", b0 + 1);
	c->time[0] = t0 - 1;
	c->busbw[0] = b0 - 1;
	c->time[1] = t1 > 0 ? t1 - 1 : -1;
	c->busbw[1] = b1 > 0 ? b1 - 1 : -1;
	return 0;
}

cs_status cs__nccltests_fail(cs_diag *diag, const char *file, int lineno, int col, const char *what)
{
	snprintf(diag->msg, sizeof diag->msg, "%.300s:%d:%d: %s", file, lineno, col, what);
	return CS_ERR_INPUT;
}

static void copy_token(char *dst, size_t n, const line *l, int i)
{
	snprintf(dst, n, "%.*s", l->len[i], l->tok[i]);
}

/* FNV-1a of the name, for the host table. */
static size_t host_hash(const char *name, size_t len)
{
	uint64_t h = 14695981039346656037u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211u;
	return (size_t)h;
}

/* The slot of `name` in a table of `cap` slots (a power of two, never full):
 * where it is, or the free slot where it goes. */
static cs__nccl_host *host_slot(cs__nccl_host *slot, size_t cap, const char *name, size_t len)
{
	for (size_t i = host_hash(name, len) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!slot[i].name[0] || (strlen(slot[i].name) == len && memcmp(slot[i].name, name, len) == 0))
			return &slot[i];
}

cs_status cs__nccl_hosts_add(cs__nccl_hosts *h, const char *name, size_t len, int64_t ranks, cs_nccltests *t,
			     cs_diag *diag)
{
	char key[sizeof h->slot->name];
	if (len >= sizeof key)
		len = sizeof key - 1;
	memcpy(key, name, len);
	key[len] = 0;
	if (len == 0)
		key[len++] = '?'; /* an empty name is a host too, never the free mark */
	if (2 * (h->n + 1) > h->cap) {
		size_t ncap = h->cap ? 2 * h->cap : 16;
		cs__nccl_host *grown = calloc(ncap, sizeof *grown);
		if (!grown) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			return CS_ERR_NOMEM;
		}
		for (size_t i = 0; i < h->cap; i++)
			if (h->slot[i].name[0])
				*host_slot(grown, ncap, h->slot[i].name, strlen(h->slot[i].name)) =
					h->slot[i];
		free(h->slot);
		h->slot = grown;
		h->cap = ncap;
	}
	cs__nccl_host *s = host_slot(h->slot, h->cap, key, len);
	if (!s->name[0]) {
		memcpy(s->name, key, len + 1);
		h->n++;
		t->nhosts++;
	}
	s->ranks += ranks;
	t->nranks += ranks;
	return CS_OK;
}

void cs__nccl_hosts_end(cs__nccl_hosts *h, cs_nccltests *t)
{
	for (size_t i = 0; i < h->cap; i++)
		if (h->slot[i].name[0] && h->slot[i].ranks > t->ranks_per_host)
			t->ranks_per_host = h->slot[i].ranks;
	free(h->slot);
	memset(h, 0, sizeof *h);
}

/* The ranks a test's '# Rank' lines named, one bit each. */
typedef struct rank_bits {
	uint64_t *w;
	size_t nw;
} rank_bits;

/* "#  Rank  3 Group 0 Pid 313 on HOST device 3 [0x5d] NAME ...": the host,
 * and rank 0's device name. A rank that is not a number from 0 to
 * CS_NCCL_MAX_RANKS - 1, or that an earlier line of the test named, is
 * refused at its place. */
static cs_status rank_line(const line *l, const char *file, int lineno, cs_nccltests *t,
			   cs__nccl_hosts *hosts, rank_bits *seen, cs_diag *diag)
{
	int on = find(l, "on", 3);
	if (on < 0 || on + 1 >= l->n)
		return CS_OK;
	double v;
	char msg[160];
	if (l->n < 3 || !number(l, 2, &v) || !(v >= 0 && v < (double)CS_NCCL_MAX_RANKS) || v != floor(v)) {
		snprintf(msg, sizeof msg, "expected a rank from 0 to %lld after '# Rank', not '%.*s'",
			 (long long)CS_NCCL_MAX_RANKS - 1,
			 l->n < 3         ? 0
			 : l->len[2] > 40 ? 40
					  : l->len[2],
			 l->n < 3 ? "" : l->tok[2]);
		return cs__nccltests_fail(diag, file, lineno, l->n < 3 ? 1 : l->col[2], msg);
	}
	size_t r = (size_t)v;
	if (r / 64 >= seen->nw) {
		size_t nw = seen->nw ? seen->nw : 1;
		while (nw <= r / 64)
			nw *= 2;
		uint64_t *grown = realloc(seen->w, nw * sizeof *grown);
		if (!grown) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			return CS_ERR_NOMEM;
		}
		memset(grown + seen->nw, 0, (nw - seen->nw) * sizeof *grown);
		seen->w = grown;
		seen->nw = nw;
	}
	if (seen->w[r / 64] >> (r % 64) & 1) {
		snprintf(msg, sizeof msg, "rank %zu is listed twice in this test's '# Rank' lines", r);
		return cs__nccltests_fail(diag, file, lineno, l->col[2], msg);
	}
	seen->w[r / 64] |= (uint64_t)1 << (r % 64);
	if (t->nranks == 0) {
		int dev = find(l, "device", on + 2);
		int g = dev < 0 ? -1 : dev + 2;
		if (g > 0 && g < l->n && l->tok[g][0] == '[')
			g++;
		if (g > 0 && g < l->n) {
			const char *end = l->tok[l->n - 1] + l->len[l->n - 1];
			snprintf(t->gpu, sizeof t->gpu, "%.*s", (int)(end - l->tok[g]), l->tok[g]);
		}
	}
	return cs__nccl_hosts_add(hosts, l->tok[on + 1], (size_t)l->len[on + 1], 1, t, diag);
}

static cs_status row(const line *l, const cols *c, const char *file, int lineno, cs_nccltests *t, size_t *cap,
		     cs_diag *diag)
{
	char msg[200];
	if (l->more || l->n != c->n) {
		snprintf(msg, sizeof msg, "wrong columns: %s%d where the header at line %d names %d",
			 l->more ? "more than " : "", l->n, c->line, c->n);
		return cs__nccltests_fail(diag, file, lineno, 1, msg);
	}
	cs_nccl_row r = { .line = lineno };
	double v;
	if (number(l, c->size, &r.bytes) && r.bytes < 0)
		return cs__nccltests_fail(diag, file, lineno, l->col[c->size],
					  "a negative size in column 'size': not a measurement");
	if (!number(l, c->size, &r.bytes) || !(r.bytes >= 0) || r.bytes != floor(r.bytes))
		return cs__nccltests_fail(diag, file, lineno, l->col[c->size],
					  "expected a whole number of bytes in column 'size'");
	for (int k = 0; k < 2; k++) {
		r.time_us[k] = r.busbw[k] = NAN;
		if (c->time[k] < 0)
			continue;
		if (!number(l, c->time[k], &v) || v <= 0) {
			snprintf(msg, sizeof msg,
				 "expected a positive number of microseconds in column "
				 "'time' (%s), not '%.*s'",
				 k ? "in-place" : "out-of-place",
				 l->len[c->time[k]] > 40 ? 40 : l->len[c->time[k]], l->tok[c->time[k]]);
			return cs__nccltests_fail(diag, file, lineno, l->col[c->time[k]], msg);
		}
		r.time_us[k] = v;
		if (c->busbw[k] >= 0 && number(l, c->busbw[k], &v))
			r.busbw[k] = v;
	}
	if (isnan(r.time_us[0]) && isnan(r.time_us[1]))
		return cs__nccltests_fail(diag, file, lineno, l->col[c->time[0]],
					  "no time in either column 'time'");
	if (t->nrows == 0 && c->redop >= 0)
		copy_token(t->redop, sizeof t->redop, l, c->redop);
	if (t->nrows == 0 && c->root >= 0 && number(l, c->root, &v) && v >= -1 && v < 1e9)
		t->root = (int64_t)v; /* a rank, or -1 for none */
	if (r.bytes == 0)
		return CS_OK; /* nccl-tests times empty calls too: nothing to fit */
	if (t->nrows == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		cs_nccl_row *grown = realloc(t->rows, ncap * sizeof *grown);
		if (!grown) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			return CS_ERR_NOMEM;
		}
		t->rows = grown;
		*cap = ncap;
	}
	t->rows[t->nrows++] = r;
	return CS_OK;
}

/* One test's output being read: its rows, hosts and column header. */
typedef struct sect {
	cs_nccltests t;
	cs__nccl_hosts hosts;
	rank_bits seen;
	size_t row_cap;
	cols c;
	int last;       /* the last result row's line */
	bool rows_seen; /* a result row, of any size */
} sect;

static void sect_start(sect *x, int lineno)
{
	memset(x, 0, sizeof *x);
	x->t.root = -1;
	x->t.line = lineno; /* 0: at its first '#' line */
	x->c.n = -1;
}

/* What a test being read holds besides its rows (x is left for the next). */
static void sect_drop(sect *x)
{
	cs__nccl_hosts_end(&x->hosts, &x->t);
	free(x->seen.w);
	x->seen.w = NULL;
	x->seen.nw = 0;
}

cs_status cs__nccltests_push(cs_nccltests_set *set, cs_nccltests *t, cs_diag *diag)
{
	/* capacity doubles: grown when n is 0 or a power of two */
	if ((set->n & (set->n - 1)) == 0) {
		cs_nccltests *grown = realloc(set->tests, (set->n ? 2 * set->n : 1) * sizeof *grown);
		if (!grown) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			return CS_ERR_NOMEM;
		}
		set->tests = grown;
	}
	set->tests[set->n++] = *t;
	memset(t, 0, sizeof *t);
	return CS_OK;
}

/* The test read into *x is complete at line `lineno`: check it and add it
 * to the set (x is left empty either way). */
static cs_status sect_end(sect *x, const char *file, int lineno, cs_nccltests_set *set, cs_diag *diag)
{
	sect_drop(x);
	cs_status st = CS_OK;
	if (x->c.n < 0)
		st = cs__nccltests_fail(diag, file, lineno ? lineno : 1, 1,
					"not nccl-tests output: no column header "
					"('# size count type ... time algbw busbw')");
	else if (x->t.nrows == 0)
		st = cs__nccltests_fail(diag, file, x->last ? x->last : x->c.line, 1,
					"no result rows of a nonzero size");
	else if (x->t.nranks == 0)
		st = cs__nccltests_fail(diag, file, x->t.line ? x->t.line : 1, 1,
					"no '# Rank' lines: the group's size "
					"and hosts are unknown (keep the header nccl-tests prints)");
	if (st == CS_OK)
		st = cs__nccltests_push(set, &x->t, diag);
	cs_nccltests_free(&x->t);
	return st;
}

/* Whether a '#' line is one a test prints before its rows. */
static bool opens_test(const line *l)
{
	return (is(l, 1, "Collective") && find(l, "starting:", 2) > 0) || is(l, 1, "nThread") ||
	       (is(l, 1, "nccl-tests") && is(l, 2, "version")) ||
	       (is(l, 1, "Using") && is(l, 2, "devices")) || is(l, 1, "Rank") ||
	       (find(l, "size", 1) > 0 && (find(l, "time", 1) > 0 || find(l, "cputime", 1) > 0));
}

static cs_status parse_text(const char *buf, size_t len, const char *file, cs_nccltests_set *set,
			    cs_diag *diag)
{
	sect x;
	sect_start(&x, 0);
	int lineno = 0;
	cs_status st = CS_OK;
	line l;
	for (const char *s = buf, *end = buf + len; s < end && st == CS_OK;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		lineno++;
		split(s, e, &l);
		s = e + 1;
		if (l.n == 0)
			continue;
		if (is(&l, 0, "#")) {
			if (x.rows_seen && opens_test(&l)) {
				st = sect_end(&x, file, lineno - 1, set, diag);
				sect_start(&x, lineno);
				if (st != CS_OK)
					break;
			}
			if (!x.t.line)
				x.t.line = lineno;
			int start = find(&l, "starting:", 1);
			if (is(&l, 1, "Collective") && start > 0 && start + 1 < l.n)
				copy_token(x.t.test, sizeof x.t.test, &l, start + 1);
			else if (is(&l, 1, "Rank"))
				st = rank_line(&l, file, lineno, &x.t, &x.hosts, &x.seen, diag);
			else if (x.c.n < 0 && find(&l, "size", 1) > 0 &&
				 (find(&l, "time", 1) > 0 || find(&l, "cputime", 1) > 0))
				st = header(&l, file, lineno, &x.c, diag) ? CS_ERR_INPUT : CS_OK;
			continue;
		}
		bool minus = l.tok[0][0] == '-' && l.len[0] > 1 && isdigit((unsigned char)l.tok[0][1]);
		if (!isdigit((unsigned char)l.tok[0][0]) && !(minus && x.c.n >= 0))
			continue; /* a launcher's or NCCL's own message */
		if (x.c.n < 0)
			st = cs__nccltests_fail(diag, file, lineno, 1,
						"a result row before the column header ('# size "
						"count type ... time algbw busbw'): not nccl-tests output?");
		else
			st = row(&l, &x.c, file, lineno, &x.t, &x.row_cap, diag);
		x.last = lineno;
		x.rows_seen = true;
	}
	if (st == CS_OK)
		return sect_end(&x, file, lineno, set, diag);
	sect_drop(&x);
	cs_nccltests_free(&x.t);
	return st;
}

cs_status cs_nccltests_parse_set(const char *buf, size_t len, const char *file, cs_nccltests_set *out,
				 cs_diag *diag)
{
	memset(out, 0, sizeof *out);
	if (memchr(buf, 0, len))
		return cs__nccltests_fail(diag, file, 1, 1,
					  "not nccl-tests output: the file holds a NUL byte");
	size_t i = 0;
	while (i < len && isspace((unsigned char)buf[i]))
		i++;
	if (i < len && buf[i] == '{')
		return cs__nccltests_parse_json(buf, len, file, out, diag);
	return parse_text(buf, len, file, out, diag);
}

/* The set's first test into *out (the rest freed), after `st`. */
static cs_status first_test(cs_status st, cs_nccltests_set *set, cs_nccltests *out)
{
	if (st == CS_OK && set->n > 0) {
		*out = set->tests[0];
		memset(&set->tests[0], 0, sizeof set->tests[0]);
	}
	cs_nccltests_set_free(set);
	return st;
}

cs_status cs_nccltests_parse(const char *buf, size_t len, const char *file, cs_nccltests *out, cs_diag *diag)
{
	cs_nccltests_set set;
	memset(out, 0, sizeof *out);
	out->root = -1;
	return first_test(cs_nccltests_parse_set(buf, len, file, &set, diag), &set, out);
}

cs_status cs_nccltests_load_set(const char *path, cs_nccltests_set *out, cs_diag *diag)
{
	char *buf = NULL;
	size_t len = 0;
	memset(out, 0, sizeof *out);
	cs_status st = cs_file_read(path, MAX_BYTES, &buf, &len, diag);
	if (st == CS_OK)
		st = cs_nccltests_parse_set(buf, len, path, out, diag);
	free(buf);
	return st;
}

cs_status cs_nccltests_load(const char *path, cs_nccltests *out, cs_diag *diag)
{
	cs_nccltests_set set;
	memset(out, 0, sizeof *out);
	out->root = -1;
	return first_test(cs_nccltests_load_set(path, &set, diag), &set, out);
}

void cs_nccltests_free(cs_nccltests *t)
{
	if (t) {
		free(t->rows);
		t->rows = NULL;
		t->nrows = 0;
	}
}

void cs_nccltests_set_free(cs_nccltests_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		cs_nccltests_free(&s->tests[i]);
	free(s->tests);
	s->tests = NULL;
	s->n = 0;
}

/* The first token of `name` (split at what is not a letter or a digit,
 * lowercased) that is letters then digits, with a letter or two after
 * (a100, h100, gb200, mi300x); false if none. */
static bool family(const char *name, char *out, size_t n)
{
	for (const char *p = name; *p;) {
		while (*p && !isalnum((unsigned char)*p))
			p++;
		const char *q = p;
		while (*q && isalnum((unsigned char)*q))
			q++;
		size_t len = (size_t)(q - p), i = 0;
		while (i < len && isalpha((unsigned char)p[i]))
			i++;
		size_t letters = i;
		while (i < len && isdigit((unsigned char)p[i]))
			i++;
		size_t digits = i - letters;
		if (letters >= 1 && letters <= 3 && digits >= 2 && digits <= 4 && len - i <= 2 && len < n) {
			for (size_t k = 0; k < len; k++)
				out[k] = (char)tolower((unsigned char)p[k]);
			out[len] = 0;
			return true;
		}
		p = q;
	}
	return false;
}

int cs_nccltests_same_gpu(const char *device, const char *gpu)
{
	char want[32], tok[64];
	if (!device || !device[0] || !family(gpu, want, sizeof want))
		return -1;
	for (const char *p = device; *p;) {
		while (*p && !isalnum((unsigned char)*p))
			p++;
		size_t len = 0;
		while (p[len] && isalnum((unsigned char)p[len]))
			len++;
		if (len > 0 && len < sizeof tok) {
			for (size_t k = 0; k < len; k++)
				tok[k] = (char)tolower((unsigned char)p[k]);
			tok[len] = 0;
			if (strcmp(tok, want) == 0)
				return 1;
		}
		p += len;
	}
	return 0;
}

cs_status cs_nccltests_group(const cs_nccltests *t, const char *file, const cs_cluster_spec *c,
			     cs_group_shape *g, cs_diag *diag)
{
	if (t->nhosts > c->nodes || t->ranks_per_host > c->gpus_per_node) {
		snprintf(diag->msg, sizeof diag->msg,
			 "%.300s: the group (%lld ranks on %lld hosts, up "
			 "to %lld per host) does not fit the scenario's cluster (%lld nodes of %d GPUs)",
			 file, (long long)t->nranks, (long long)t->nhosts, (long long)t->ranks_per_host,
			 (long long)c->nodes, c->gpus_per_node);
		return CS_ERR_INPUT;
	}
	cs_topo *topo = cs_topo_new(c);
	if (!topo) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	if (t->ranks_per_host == 1) {
		*g = cs_topo_group(topo, 0, c->gpus_per_node, t->nranks);
	} else {
		*g = cs_topo_group(topo, 0, 1, t->nhosts * c->gpus_per_node);
		g->nranks = t->nranks;
		g->ranks_per_node = t->ranks_per_host;
	}
	cs_topo_free(topo);
	return CS_OK;
}

static const struct {
	const char *test;
	cs_coll_op op;
} tests[] = {
	{ "all_reduce_perf", CS_COLL_ALL_REDUCE }, { "reduce_scatter_perf", CS_COLL_REDUCE_SCATTER },
	{ "all_gather_perf", CS_COLL_ALL_GATHER }, { "alltoall_perf", CS_COLL_ALL_TO_ALL },
	{ "broadcast_perf", CS_COLL_BROADCAST },   { "sendrecv_perf", CS_COLL_SEND_RECV },
	{ "reduce_perf", CS_COLL_REDUCE },         { "gather_perf", CS_COLL_GATHER },
	{ "scatter_perf", CS_COLL_SCATTER },
};

const char *cs_nccltests_name(cs_coll_op op)
{
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
		if (tests[i].op == op)
			return tests[i].test;
	return NULL;
}

cs_status cs_nccltests_op(const cs_nccltests *t, const char *file, int forced, cs_coll_op *op, cs_diag *diag)
{
	if (forced >= 0) {
		*op = (cs_coll_op)forced;
		return CS_OK;
	}
	if (t->test[0]) {
		/* all_reduce_perf_mpi (built with MPI=1) measures what all_reduce_perf does */
		size_t len = strlen(t->test);
		if (len > 4 && strcmp(t->test + len - 4, "_mpi") == 0)
			len -= 4;
		for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
			if (strlen(tests[i].test) == len && strncmp(t->test, tests[i].test, len) == 0) {
				*op = tests[i].op;
				return CS_OK;
			}
		snprintf(diag->msg, sizeof diag->msg,
			 "%.300s: '%s' measures a collective clustersim "
			 "has no model for (all_reduce_perf, reduce_scatter_perf, all_gather_perf, "
			 "alltoall_perf, broadcast_perf, sendrecv_perf, reduce_perf, gather_perf, "
			 "scatter_perf)",
			 file, t->test);
		return CS_ERR_INPUT;
	}
	/* busbw / algbw of the largest size: time and size give algbw */
	const cs_nccl_row *big = NULL;
	for (size_t i = 0; i < t->nrows; i++)
		if (!isnan(t->rows[i].busbw[0]) && (!big || t->rows[i].bytes > big->bytes))
			big = &t->rows[i];
	double n = (double)t->nranks, ratio = NAN;
	if (big && big->busbw[0] > 0)
		ratio = big->busbw[0] / (big->bytes / big->time_us[0] / 1e3);
	bool reduces = t->redop[0] && strcmp(t->redop, "none") != 0;
	if (fabs(ratio - 2 * (n - 1) / n) < 0.02 * ratio && n > 1) {
		*op = CS_COLL_ALL_REDUCE;
		return CS_OK;
	}
	if (fabs(ratio - (n - 1) / n) < 0.02 * ratio && n > 2 && reduces) {
		*op = CS_COLL_REDUCE_SCATTER;
		return CS_OK;
	}
	if (fabs(ratio - 1) < 0.02 && t->root >= 0) {
		*op = CS_COLL_BROADCAST;
		return CS_OK;
	}
	snprintf(diag->msg, sizeof diag->msg,
		 "%.300s: cannot tell which collective was measured "
		 "(no 'Collective test starting' line; busbw/algbw %.3g on %lld ranks): name it with "
		 "--op",
		 file, ratio, (long long)t->nranks);
	return CS_ERR_INPUT;
}
