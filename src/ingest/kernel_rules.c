/*
 * kernel_rules.c - a user's classes of kernels (kernel_rules.h): the
 * file's lines parsed into (class, lowercase pattern) pairs, matched in
 * order as the reader matches names (cs_kineto_name_has).
 */
#include "ingest/kernel_rules.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"

typedef struct rule {
	cs_kineto_class cls;
	char *pattern; /* lowercase */
} rule;

struct cs_kernel_rules {
	rule *r;
	size_t n;
};

/* The classes a rule may name: the kernels' own, not copy or memset. */
static const cs_kineto_class ruled[] = { CS_KINETO_GEMM, CS_KINETO_ATTN, CS_KINETO_MEMBOUND, CS_KINETO_OPTIM,
					 CS_KINETO_COMM };

void cs_kernel_rules_free(cs_kernel_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->r[i].pattern);
	free(r->r);
	free(r);
}

static cs_status fail(cs_diag *diag, const char *name, int line, int col, const char *fmt, const char *word)
{
	char what[256];
	snprintf(what, sizeof what, fmt, word);
	snprintf(diag->msg, sizeof diag->msg, "%.300s:%d:%d: %s", name, line, col, what);
	return CS_ERR_INPUT;
}

static cs_status nomem(cs_diag *diag)
{
	snprintf(diag->msg, sizeof diag->msg, "out of memory reading kernel rules");
	return CS_ERR_NOMEM;
}

/* Line `no`, [s, e): blank, a comment, or a rule added to *r. */
static cs_status take_line(cs_kernel_rules *r, size_t *cap, const char *name, int no, const char *s,
			   const char *e, cs_diag *diag)
{
	const char *p = s;
	while (p < e && isspace((unsigned char)*p))
		p++;
	if (p == e || *p == '#')
		return CS_OK;
	const char *w = p;
	while (p < e && !isspace((unsigned char)*p))
		p++;
	char word[64];
	snprintf(word, sizeof word, "%.*s", (int)(p - w), w);
	int cls = -1;
	for (size_t i = 0; i < sizeof ruled / sizeof ruled[0]; i++)
		if (strcmp(word, cs_kineto_class_name(ruled[i])) == 0)
			cls = (int)ruled[i];
	if (cls < 0)
		return fail(diag, name, no, (int)(w - s) + 1,
			    "unknown class '%s' (gemm, attention, memory_bound, optimizer or communication)",
			    word);
	while (p < e && isspace((unsigned char)*p))
		p++;
	const char *q = e;
	while (q > p && isspace((unsigned char)q[-1]))
		q--;
	if (q == p)
		return fail(diag, name, no, (int)(p - s) + 1, "no pattern after '%s'", word);
	if (r->n == CS_KERNEL_RULES_MAX)
		return fail(diag, name, no, 1, "more than %s rules", "10000");
	if (r->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		rule *g = realloc(r->r, ncap * sizeof *g);
		if (!g)
			return nomem(diag);
		r->r = g;
		*cap = ncap;
	}
	char *pat = malloc((size_t)(q - p) + 1);
	if (!pat)
		return nomem(diag);
	for (size_t i = 0; i < (size_t)(q - p); i++)
		pat[i] = (char)tolower((unsigned char)p[i]);
	pat[q - p] = '\0';
	r->r[r->n++] = (rule){ (cs_kineto_class)cls, pat };
	return CS_OK;
}

cs_status cs_kernel_rules_parse(const char *name, const char *text, size_t len, cs_kernel_rules **out,
				cs_diag *diag)
{
	*out = NULL;
	if (memchr(text, 0, len))
		return fail(diag, name, 1, 1, "not a text file of kernel rules: it holds a NUL byte%s", "");
	cs_kernel_rules *r = calloc(1, sizeof *r);
	if (!r)
		return nomem(diag);
	size_t cap = 0;
	int no = 1;
	for (const char *s = text, *end = text + len; s < end; no++) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		cs_status st = take_line(r, &cap, name, no, s, e, diag);
		if (st != CS_OK) {
			cs_kernel_rules_free(r);
			return st;
		}
		s = e + 1;
	}
	*out = r;
	return CS_OK;
}

cs_status cs_kernel_rules_load(const char *path, cs_kernel_rules **out, cs_diag *diag)
{
	char *buf;
	size_t len;
	*out = NULL;
	cs_status st = cs_file_read(path, (size_t)1 << 20, &buf, &len, diag);
	if (st != CS_OK)
		return st;
	st = cs_kernel_rules_parse(path, buf, len, out, diag);
	free(buf);
	return st;
}

int cs_kernel_rules_match(const cs_kernel_rules *r, const char *name)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (cs_kineto_name_has(name, r->r[i].pattern))
			return (int)r->r[i].cls;
	return -1;
}
