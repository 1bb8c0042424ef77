/*
 * kineto_ranks.c - the traces of a job's GPUs: a folder of Kineto traces
 * (one per rank, as torch.profiler's tensorboard_trace_handler or HTA's
 * collections name them: rank-0.json.gz, host_pid.pt.trace.json, ...) read
 * file by file and summed, each rank's totals kept; and the accessors of
 * the summary.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/kineto_int.h"

int cs__kineto_own_rank(cs_kineto *t, const char *file)
{
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	t->ranks = calloc(1, sizeof *t->ranks);
	char *name = strdup(base);
	if (!t->ranks || !name) {
		free(name);
		return -1;
	}
	cs_kineto_rank *r = &t->ranks[0];
	*r = (cs_kineto_rank){ .file = name,
			       .rank = t->rank,
			       .steps = t->steps,
			       .kernels = t->kernels,
			       .span_ns = t->span_ns,
			       .busy_ns = t->busy_ns };
	memcpy(r->ns, t->ns, sizeof r->ns);
	memcpy(r->count, t->count, sizeof r->count);
	t->nranks = 1;
	return 0;
}

/* ---- a folder ------------------------------------------------------------ */

static bool is_trace_name(const char *n)
{
	size_t len = strlen(n);
	return n[0] != '.' && ((len > 5 && strcmp(n + len - 5, ".json") == 0) ||
			       (len > 8 && strcmp(n + len - 8, ".json.gz") == 0));
}

/* Names in natural order: "rank-2" before "rank-10". */
static int cmp_natural(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la, b += lb;
		} else {
			if (*a != *b)
				return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
			a++, b++;
		}
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_name(const void *x, const void *y)
{
	return cmp_natural(*(char *const *)x, *(char *const *)y);
}

static int cmp_rank(const void *x, const void *y)
{
	const cs_kineto_rank *p = x, *q = y;
	return (p->rank > q->rank) - (p->rank < q->rank);
}

static int cmp_kernel_name(const void *x, const void *y)
{
	return strcmp(((const cs_kineto_kernel *)x)->name, ((const cs_kineto_kernel *)y)->name);
}

static bool add(int64_t *sum, int64_t v) { return !__builtin_add_overflow(*sum, v, sum); }

/* Rank `p` into the totals of `t` (its names and shapes move; p keeps its
 * numbers). false when a sum passes 2^63. */
static bool take_rank(cs_kineto *t, cs_kineto *p)
{
	bool ok =
		add(&t->kernels, p->kernels) && add(&t->span_ns, p->span_ns) && add(&t->busy_ns, p->busy_ns);
	for (int c = 0; c < CS_KINETO_CLASSES; c++)
		ok = ok && add(&t->ns[c], p->ns[c]) && add(&t->count[c], p->count[c]);
	for (int a = 0; a < CS_KINETO_ARCH_CODES; a++)
		t->arch[a] += p->arch[a]; /* at most the kernels, which are bounded above */
	/* memcpy's pointers must not be NULL, even for no bytes */
	if (p->nnames > 0)
		memcpy(t->by_name + t->nnames, p->by_name, p->nnames * sizeof *p->by_name);
	t->nnames += p->nnames;
	p->nnames = 0;
	if (p->nshapes > 0)
		memcpy(t->shapes + t->nshapes, p->shapes, p->nshapes * sizeof *p->shapes);
	t->nshapes += p->nshapes;
	t->ranks[t->nranks++] = p->ranks[0];
	p->nranks = 0;
	return ok;
}

/* Equal kernel names and GEMM shapes summed, kernels the most time first. */
static void combine(cs_kineto *t)
{
	size_t w = 0;
	cs__kineto_sort(t->by_name, t->nnames, sizeof *t->by_name, cmp_kernel_name);
	for (size_t i = 0; i < t->nnames; i++) {
		if (w > 0 && strcmp(t->by_name[w - 1].name, t->by_name[i].name) == 0) {
			t->by_name[w - 1].count += t->by_name[i].count;
			t->by_name[w - 1].ns += t->by_name[i].ns;
			free((char *)t->by_name[i].name);
		} else {
			t->by_name[w++] = t->by_name[i];
		}
	}
	t->nnames = w;
	cs__kineto_sort(t->by_name, t->nnames, sizeof *t->by_name, cs__kineto_cmp_kernel);
	t->nshapes = cs__kineto_sum_shapes(t->shapes, t->nshapes);
	/* rank order when every trace names a distinct rank, else the files' */
	bool ranked = true;
	for (size_t i = 0; i < t->nranks; i++)
		ranked = ranked && t->ranks[i].rank >= 0;
	if (ranked) {
		cs_kineto_rank *r = malloc(t->nranks * sizeof *r);
		if (!r)
			return; /* the files' order stands */
		memcpy(r, t->ranks, t->nranks * sizeof *r);
		cs__kineto_sort(r, t->nranks, sizeof *r, cmp_rank);
		for (size_t i = 1; i < t->nranks; i++)
			ranked = ranked && r[i].rank != r[i - 1].rank;
		if (ranked)
			memcpy(t->ranks, r, t->nranks * sizeof *r);
		free(r);
	}
}

/* The traces under `dir`, one per rank. */
static cs_status load_dir(const char *dir, size_t max_event, const cs_kernel_rules *rules, cs_kineto **out,
			  cs_diag *diag)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(diag->msg, sizeof diag->msg, "cannot open '%.400s': %s", dir, strerror(errno));
		return CS_ERR_INPUT;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	cs_status st = CS_OK;
	for (struct dirent *e; st == CS_OK && (e = readdir(d)) != NULL;) {
		if (!is_trace_name(e->d_name))
			continue;
		if (n == CS_KINETO_MAX_RANKS) {
			snprintf(diag->msg, sizeof diag->msg,
				 "'%.400s': more than %d trace files; the limit is one per GPU of a "
				 "%d-GPU job",
				 dir, CS_KINETO_MAX_RANKS, CS_KINETO_MAX_RANKS);
			st = CS_ERR_INPUT;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nn = realloc(names, cap * sizeof *names);
			if (!nn) {
				st = CS_ERR_NOMEM;
				break;
			}
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name)))
			st = CS_ERR_NOMEM;
		else
			n++;
	}
	closedir(d);
	if (st == CS_OK && n == 0) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'%.400s': a folder without trace files (NAME.json or NAME.json.gz, one per GPU)",
			 dir);
		st = CS_ERR_INPUT;
	}
	cs__kineto_sort(names, n, sizeof *names, cmp_name);
	cs_kineto **part = st == CS_OK ? calloc(n, sizeof *part) : NULL;
	if (st == CS_OK && !part)
		st = CS_ERR_NOMEM;
	size_t nnames = 0, nshapes = 0;
	for (size_t i = 0; st == CS_OK && i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		if (!path) {
			st = CS_ERR_NOMEM;
			break;
		}
		snprintf(path, len, "%s/%s", dir, names[i]);
		st = cs__kineto_load_file(path, max_event, rules, &part[i], diag);
		if (st == CS_OK && part[i]->steps != part[0]->steps) {
			snprintf(
				diag->msg, sizeof diag->msg,
				"'%.400s': %lld step%s, and %lld in '%.200s': the traces of a folder are one "
				"job's ranks over the same steps",
				path, (long long)part[i]->steps, part[i]->steps == 1 ? "" : "s",
				(long long)part[0]->steps, names[0]);
			st = CS_ERR_INPUT;
		} else if (st == CS_OK && part[i]->device[0] && part[0]->device[0] &&
			   strcmp(part[i]->device, part[0]->device) != 0) {
			snprintf(diag->msg, sizeof diag->msg,
				 "'%.400s': measured on '%.100s', and '%.200s' on '%.100s': the traces of a "
				 "folder are one job's GPUs",
				 path, part[i]->device, names[0], part[0]->device);
			st = CS_ERR_INPUT;
		}
		if (st == CS_OK) {
			nnames += part[i]->nnames;
			nshapes += part[i]->nshapes;
		}
		free(path);
	}
	cs_kineto *t = st == CS_OK ? calloc(1, sizeof *t) : NULL;
	if (st == CS_OK && (!t || !(t->ranks = calloc(n, sizeof *t->ranks)) ||
			    (nnames && !(t->by_name = malloc(nnames * sizeof *t->by_name))) ||
			    (nshapes && !(t->shapes = malloc(nshapes * sizeof *t->shapes)))))
		st = CS_ERR_NOMEM;
	if (st == CS_OK) {
		t->rank = -1;
		t->steps = part[0]->steps;
		t->steps_marked = part[0]->steps_marked;
		for (size_t i = 0; i < n; i++)
			if (!t->device[0])
				memcpy(t->device, part[i]->device, sizeof t->device);
		bool ok = true;
		for (size_t i = 0; i < n; i++)
			ok = take_rank(t, part[i]) && ok;
		combine(t);
		if (!ok) {
			snprintf(diag->msg, sizeof diag->msg,
				 "'%.400s': the ranks' times add up beyond 2^63 ns", dir);
			st = CS_ERR_INPUT;
		}
	}
	if (st == CS_ERR_NOMEM)
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", dir);
	for (size_t i = 0; i < n; i++) {
		if (part)
			cs_kineto_free(part[i]);
		free(names[i]);
	}
	free(part);
	free(names);
	if (st != CS_OK) {
		cs_kineto_free(t);
		return st;
	}
	*out = t;
	return CS_OK;
}

/* ---- entry points ------------------------------------------------------- */

static cs_status load(const char *path, size_t max_event, const cs_kernel_rules *rules, cs_kineto **out,
		      cs_diag *diag)
{
	struct stat st;
	*out = NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return load_dir(path, max_event, rules, out, diag);
	return cs__kineto_load_file(path, max_event, rules, out, diag);
}

cs_status cs__kineto_load_limit(const char *path, size_t max_event, cs_kineto **out, cs_diag *diag)
{
	return load(path, max_event, NULL, out, diag);
}

cs_status cs_kineto_load(const char *path, cs_kineto **out, cs_diag *diag)
{
	return load(path, CS_KINETO_MAX_EVENT, NULL, out, diag);
}

cs_status cs_kineto_load_ruled(const char *path, const cs_kernel_rules *rules, cs_kineto **out, cs_diag *diag)
{
	return load(path, CS_KINETO_MAX_EVENT, rules, out, diag);
}

void cs_kineto_free(cs_kineto *t)
{
	if (!t)
		return;
	free(t->shapes);
	for (size_t i = 0; i < t->nnames; i++)
		free((char *)t->by_name[i].name);
	free(t->by_name);
	for (size_t i = 0; i < t->nranks; i++)
		free((char *)t->ranks[i].file);
	free(t->ranks);
	free(t);
}

const cs_kineto_kernel *cs_kineto_kernels_by_name(const cs_kineto *t, size_t *n)
{
	*n = t->nnames;
	return t->by_name;
}

const cs_kineto_shape *cs_kineto_gemm_shapes(const cs_kineto *t, size_t *n)
{
	*n = t->nshapes;
	return t->shapes;
}

int64_t cs_kineto_class_ns(const cs_kineto *t, cs_kineto_class c)
{
	return (unsigned)c < CS_KINETO_CLASSES ? t->ns[c] : 0;
}

int64_t cs_kineto_class_count(const cs_kineto *t, cs_kineto_class c)
{
	return (unsigned)c < CS_KINETO_CLASSES ? t->count[c] : 0;
}

const char *cs_kineto_device(const cs_kineto *t) { return t->device; }

int64_t cs_kineto_arch_kernels(const cs_kineto *t, int arch)
{
	return arch >= 0 && arch < CS_KINETO_ARCH_CODES ? t->arch[arch] : 0;
}

int64_t cs_kineto_steps(const cs_kineto *t) { return t->steps; }
int cs_kineto_steps_marked(const cs_kineto *t) { return t->steps_marked; }
int64_t cs_kineto_kernels(const cs_kineto *t) { return t->kernels; }
int64_t cs_kineto_span_ns(const cs_kineto *t) { return t->span_ns; }
int64_t cs_kineto_busy_ns(const cs_kineto *t) { return t->busy_ns; }

size_t cs_kineto_ranks(const cs_kineto *t) { return t->nranks; }

const cs_kineto_rank *cs_kineto_rank_at(const cs_kineto *t, size_t i)
{
	return i < t->nranks ? &t->ranks[i] : NULL;
}
