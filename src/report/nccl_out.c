/*
 * nccl_out.c - nccl-tests' output for the tuner's times (nccl_out.h), in
 * the formats of nccl-tests' src/util.cu: writeDeviceReport's header,
 * writeBenchmarkLine*'s rows (getFloatStr's widths), writeResultFooter's
 * footer, and its JSON writer (one object without blanks, "%lf" numbers,
 * "/" escaped, booleans as strings).
 */
#include "report/nccl_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/nccltests.h"
#include "report/svg.h"

/* nccl-tests' data types and their sizes. */
static const struct {
	const char *name;
	int bytes;
} dtypes[] = {
	{ "float", 4 }, { "half", 2 },   { "bfloat16", 2 }, { "double", 8 }, { "int8", 1 },   { "uint8", 1 },
	{ "int32", 4 }, { "uint32", 4 }, { "int64", 8 },    { "uint64", 8 }, { "f8e4m3", 1 }, { "f8e5m2", 1 },
};

/* nccl-tests' test_typenames order (src/common.cu), as indexes of dtypes. */
static const int all_order[] = { 4, 5, 6, 7, 8, 9, 1, 0, 3, 2, 10, 11 };

/* nccl-tests' test_opnames. */
static const char *const redops[] = { "sum", "prod", "max", "min", "avg", "mulsum" };

int cs_nccl_dtypes(void) { return (int)(sizeof dtypes / sizeof dtypes[0]); }

const char *cs_nccl_dtype_name(int i) { return dtypes[i].name; }

int cs_nccl_dtype_bytes(int i) { return dtypes[i].bytes; }

int cs_nccl_dtype_all(int i) { return all_order[i]; }

int cs_nccl_redops(void) { return (int)(sizeof redops / sizeof redops[0]); }

const char *cs_nccl_redop_name(int i) { return redops[i]; }

/* nccl-tests' count column (elements per rank for the ops whose size is
 * the whole buffer over the ranks) and the bytes it then moves. */
bool cs_nccl_per_rank(cs_coll_op op)
{
	return op == CS_COLL_REDUCE_SCATTER || op == CS_COLL_ALL_GATHER || op == CS_COLL_ALL_TO_ALL ||
	       op == CS_COLL_GATHER || op == CS_COLL_SCATTER;
}

void cs_nccl_count(cs_coll_op op, double size, int word, int64_t n, double *count, double *bytes)
{
	double div = cs_nccl_per_rank(op) ? (double)n : 1.0;
	*count = floor(size / word / div);
	*bytes = *count * word * div;
}

bool cs_nccl_reduces(cs_coll_op op)
{
	return op == CS_COLL_ALL_REDUCE || op == CS_COLL_REDUCE_SCATTER || op == CS_COLL_REDUCE;
}

bool cs_nccl_rooted(cs_coll_op op)
{
	return op == CS_COLL_BROADCAST || op == CS_COLL_REDUCE || op == CS_COLL_GATHER ||
	       op == CS_COLL_SCATTER;
}

/* getFloatStr: `width` characters, two decimals, then one, then none, then
 * an exponent, whichever fits first. */
static const char *fstr(double v, int width, char buf[32])
{
	if (snprintf(buf, 32, "%*.2f", width, v) <= width || snprintf(buf, 32, "%*.1f", width, v) <= width ||
	    snprintf(buf, 32, "%*.0f", width, v) <= width)
		return buf;
	snprintf(buf, 32, width >= 7 ? "%*.1e" : "%*.0e", width, v);
	return buf;
}

/* Ranks of one process, and the processes. */
static int64_t per_process(const cs_nccl_run *r)
{
	int64_t t = r->nthreads > 0 ? r->nthreads : 1;
	return r->ngpus > 0 ? t * r->ngpus : r->n;
}

static int gpn(const cs_nccl_run *r) { return r->c->gpus_per_node > 0 ? r->c->gpus_per_node : 1; }

/* The rows in nccl-tests' order: each data type, each reduction (or
 * "none"), each root (or -1), each cycle, each size. */
typedef struct row {
	double bytes, count, us, algbw, busbw;
	const char *type, *redop;
	int64_t root;
	cs_coll_choice ch;
} row;

typedef void (*row_fn)(void *arg, const cs_nccl_run *r, const row *w);

/* Each row to fn, timed by coll; without fn, the rows are only counted.
 * Returns whether some row's algorithm is not `asked`. */
static bool rows(const cs_nccl_run *r, cs_coll *coll, cs_coll_algo asked, row_fn fn, void *arg,
		 int64_t *count)
{
	cs_coll_op op = r->op;
	double factor = cs_coll_bus_factor(op, r->n);
	bool other = false, prints_redop = cs_nccl_reduces(op) || op == CS_COLL_SEND_RECV;
	int ntypes = r->all_dtypes ? cs_nccl_dtypes() : 1;
	int nops = prints_redop && r->all_redops ? cs_nccl_redops() : 1;
	bool rooted = cs_nccl_rooted(op);
	int64_t root0 = rooted ? (r->root < 0 ? 0 : r->root) : -1;
	int64_t root1 = rooted && r->root < 0 ? r->n - 1 : root0;
	int64_t cycles = r->cycles > 0 ? r->cycles : 1;
	for (int ti = 0; ti < ntypes; ti++) {
		int type = r->all_dtypes ? all_order[ti] : r->dtype;
		int word = dtypes[type].bytes;
		for (int oi = 0; oi < nops; oi++) {
			const char *redop = !prints_redop ? "none" : redops[r->all_redops ? oi : r->redop];
			for (int64_t root = root0; root <= root1; root++)
				for (int64_t cy = 0; cy < cycles; cy++)
					for (double size = r->min; size <= r->max * (1 + 1e-12);
					     size = r->factor > 1 ? size * r->factor : size + r->stepbytes) {
						row w = { .type = dtypes[type].name,
							  .redop = redop,
							  .root = root };
						cs_nccl_count(op, size, word, r->n, &w.count, &w.bytes);
						if (!(w.bytes > 0))
							continue;
						if (count)
							++*count;
						if (!fn)
							continue;
						int64_t ns = cs_coll_time(coll, op, r->g, w.bytes, &w.ch);
						w.us = (double)ns / 1e3;
						w.algbw = ns > 0 ? w.bytes / (double)ns : 0; /* GB/s */
						w.busbw = w.algbw * factor;
						other |= asked != CS_ALGO_AUTO && w.ch.algo != asked;
						fn(arg, r, &w);
					}
		}
	}
	return other;
}

int64_t cs_nccl_rows(const cs_nccl_run *r)
{
	int64_t n = 0;
	rows(r, NULL, CS_ALGO_AUTO, NULL, NULL, &n);
	return n;
}

/* ---- text ---------------------------------------------------------------- */

typedef struct text {
	FILE *f;
	double bus_sum;
	int64_t rows;
	bool json; /* clustersim's JSON array */
} text;

/* writeDeviceReport and writeResultHeader. */
static void header(FILE *f, const cs_nccl_run *r)
{
	const cs_cluster_spec *c = r->c;
	int64_t per = per_process(r);
	fprintf(f, "# predicted by clustersim from NCCL's tuning model; nothing was measured\n");
	fprintf(f, "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", CS_NCCL_TESTS_VERSION,
		CS_NCCL_VERSION_CODE, CS_NCCL_VERSION_CODE);
	fprintf(f, "# Collective test starting: %s\n", cs_nccltests_name(r->op));
	char step[32];
	snprintf(step, sizeof step, "%g(%s)", r->factor > 1 ? r->factor : r->stepbytes,
		 r->factor > 1 ? "factor" : "bytes");
	fprintf(f,
		"# nThread %lld nGpus %lld minBytes %.0f maxBytes %.0f step: %s warmup iters: %lld "
		"iters: %lld agg iters: %lld validation: %lld graph: %lld unalign: %lld\n",
		(long long)(r->nthreads > 0 ? r->nthreads : 1), (long long)(r->ngpus > 0 ? r->ngpus : r->n),
		r->min, r->max, step, (long long)r->warmup, (long long)r->iters,
		(long long)(r->agg > 0 ? r->agg : 1), (long long)r->check, (long long)r->graph,
		(long long)r->unalign);
	if (r->blocking == 1)
		fprintf(f, "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n");
	if (r->blocking == 2)
		fprintf(f, "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n");
	if (r->blocking == 3)
		fprintf(f, "# Blocking Enabled: wait and barrier after each outer iteration (-n); "
			   "time excludes barrier \n");
	if (r->parallel_init)
		fprintf(f, "# Parallel Init Enabled: threads call into NcclInitRank concurrently \n");
	fprintf(f, "#\n# Using devices\n");
	for (int64_t i = 0; i < r->n; i++) {
		char host[32];
		snprintf(host, sizeof host, "node-%lld", (long long)(i / gpn(r)));
		int dev = (int)(i % gpn(r));
		fprintf(f, "#  Rank %2lld Group %2d Pid %6lld on %10s device %2d [%04x:%02x:%02x] %s\n",
			(long long)i, 0, (long long)(1000 + i / per), host, dev, 0, dev, 0, c->gpu.name);
	}
	const char *t = r->cputime ? "cputime" : "time";
	fprintf(f, "#\n");
	fprintf(f,
		"# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
		"          \n",
		"", "", "", "", "");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %-10s %s\n", "size",
		"count", "type", "redop", "root", t, "algbw", "busbw", "#wrong", t, "algbw", "busbw",
		"#wrong", "algorithm", "protocol");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "(B)",
		"(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

static void text_row(void *arg, const cs_nccl_run *r, const row *w)
{
	text *x = arg;
	const char *an = cs_coll_choice_name(r->op, &w->ch), *pn = cs_coll_proto_name(w->ch.proto);
	if (x->json) {
		fprintf(x->f,
			"%s\n  {\"bytes\": %.0f, \"count\": %.0f, \"type\": \"%s\", "
			"\"redop\": \"%s\", \"root\": %lld, \"time_us\": %.3f, "
			"\"algbw_gbs\": %.3f, \"busbw_gbs\": %.3f, "
			"\"algorithm\": \"%s\", \"protocol\": \"%s\"}",
			x->rows ? "," : "", w->bytes, w->count, w->type, w->redop, (long long)w->root, w->us,
			w->algbw, w->busbw, an, pn);
	} else {
		char ts[32], as[32], bs[32];
		/* nothing ran to be checked, whatever -c says: writeBenchmarkLineBody's N/A */
		fprintf(x->f, "%12.0f  %12.0f  %8s  %6s  %6lld", w->bytes, w->count, w->type, w->redop,
			(long long)w->root);
		for (int k = 0; k < 2; k++)
			fprintf(x->f, "  %7s  %6s  %6s    N/A", fstr(w->us, 7, ts), fstr(w->algbw, 6, as),
				fstr(w->busbw, 6, bs));
		fprintf(x->f, "  %-10s %s\n", an, pn);
	}
	x->bus_sum += w->busbw;
	x->rows++;
}

bool cs_nccl_write(FILE *f, bool json, const cs_nccl_run *r, cs_coll *coll, cs_coll_algo asked)
{
	text x = { .f = f, .json = json };
	if (json)
		fprintf(f, "[");
	else
		header(f, r);
	bool other = rows(r, coll, asked, text_row, &x, NULL);
	if (json) {
		fprintf(f, "\n]\n");
		return other;
	}
	/* writeResultFooter, finalizeFooter and writeErrors (no error: an empty line) */
	fprintf(f, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
	fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", x.rows ? x.bus_sum / (double)x.rows : 0.0, "");
	fprintf(f, "#\n# Collective test concluded: %s\n#\n\n", cs_nccltests_name(r->op));
	return other;
}

/* ---- nccl-tests' -J JSON ------------------------------------------------- */

/* sanitizeJson: '"', '\\', '/', tab and newline escaped; other control
 * bytes and non-ASCII end the string there, as nccl-tests does. */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\' || ch == '/')
			fprintf(f, "\\%c", ch);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch >= 0x7f || ch <= 0x1f)
			break;
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void jdouble(FILE *f, double v)
{
	if (v != v)
		fputs("\"nan\"", f);
	else
		fprintf(f, "%f", v);
}

typedef struct jrows {
	FILE *f;
	double bus_sum;
	int64_t rows;
} jrows;

static void json_row(void *arg, const cs_nccl_run *r, const row *w)
{
	jrows *x = arg;
	FILE *f = x->f;
	char root[16];
	snprintf(root, sizeof root, "%6lld", (long long)w->root);
	fprintf(f, "%s{\"size\":%.0f,\"count\":%.0f,\"type\":", x->rows ? "," : "", w->bytes, w->count);
	jstr(f, w->type);
	fprintf(f, ",\"redop\":");
	jstr(f, w->redop);
	fprintf(f, ",\"root\":");
	jstr(f, root);
	static const char *const keys[2] = { "out_of_place", "in_place" };
	for (int k = 0; k < 2; k++) {
		fprintf(f, ",\"%s\":{\"%s\":", keys[k], r->cputime ? "cpu_time" : "time");
		jdouble(f, w->us);
		fprintf(f, ",\"alg_bw\":");
		jdouble(f, w->algbw);
		fprintf(f, ",\"bus_bw\":");
		jdouble(f, w->busbw);
		fprintf(f, ",\"nwrong\":null}");
	}
	fprintf(f,
		",\"actual_iterations\":%lld,\"experiment_name\":\"\",\"algorithm\":", (long long)r->iters);
	jstr(f, cs_coll_choice_name(r->op, &w->ch));
	fprintf(f, ",\"protocol\":");
	jstr(f, cs_coll_proto_name(w->ch.proto));
	fputc('}', f);
	x->bus_sum += w->busbw;
	x->rows++;
}

int cs_nccl_write_json(FILE *f, const cs_nccl_run *r, cs_coll *coll, const char *now)
{
	fprintf(f, "{\"version\":3,\"start_time\":");
	jstr(f, now);
	fprintf(f, ",\"args\":[");
	jstr(f, cs_nccltests_name(r->op));
	for (int i = 0; i < r->argc; i++) {
		fputc(',', f);
		jstr(f, r->argv[i]);
	}
	fprintf(f, "],\"env\":[],\"nccl_version\":%d,\"config\":{", CS_NCCL_VERSION_CODE);
	fprintf(f, "\"nthreads\":%lld,\"ngpus\":%lld,\"minimum_bytes\":%.0f,\"maximum_bytes\":%.0f,",
		(long long)(r->nthreads > 0 ? r->nthreads : 1), (long long)(r->ngpus > 0 ? r->ngpus : r->n),
		r->min, r->max);
	if (r->factor > 1)
		fprintf(f, "\"step_factor\":%g,", r->factor);
	else
		fprintf(f, "\"step_bytes\":%.0f,", r->stepbytes);
	fprintf(f,
		"\"warmup_iters\":%lld,\"iterations\":%lld,\"aggregated_iterations\":%lld,"
		"\"validation\":%lld,\"graph\":%lld,\"blocking_collectives\":\"%s\","
		"\"per_iter_timing\":\"false\",\"per_iter_skip\":0,\"parallel_init\":\"%s\","
		"\"devices\":[",
		(long long)r->warmup, (long long)r->iters, (long long)(r->agg > 0 ? r->agg : 1),
		(long long)r->check, (long long)r->graph, r->blocking ? "true" : "false",
		r->parallel_init ? "true" : "false");
	int64_t per = per_process(r);
	for (int64_t p = 0; p * per < r->n; p++) {
		int64_t rank = p * per;
		int dev = (int)(rank % gpn(r));
		char host[32], hex[32];
		snprintf(host, sizeof host, "node-%lld", (long long)(rank / gpn(r)));
		snprintf(hex, sizeof hex, "%04x:%02x:%02x", 0, dev, 0);
		fprintf(f, "%s{\"rank\":%lld,\"group\":0,\"pid\":%lld,\"hostname\":", p ? "," : "",
			(long long)rank, (long long)(1000 + p));
		jstr(f, host);
		fprintf(f, ",\"device\":%d,\"device_hex\":", dev);
		jstr(f, hex);
		fprintf(f, ",\"device_info\":");
		jstr(f, r->c->gpu.name);
		fputc('}', f);
	}
	fprintf(f, "]},\"results\":[");
	jrows x = { .f = f };
	rows(r, coll, CS_ALGO_AUTO, json_row, &x, NULL);
	fprintf(f, "],\"out_of_bounds\":{\"count\":0,\"okay\":\"true\"},"
		   "\"average_bus_bandwidth\":{\"bandwidth\":");
	jdouble(f, x.rows ? x.bus_sum / (double)x.rows : 0.0);
	fprintf(f, ",\"okay\":\"unchecked\"},\"errors\":[],\"end_time\":");
	jstr(f, now);
	fputc('}', f);
	return ferror(f) ? -1 : 0;
}

/* ---- the chart --------------------------------------------------------------- */

#define CH_W 900.0
#define CH_H 480.0
#define CH_LEFT 80.0
#define CH_RIGHT 230.0
#define CH_TOP 50.0
#define CH_BOTTOM 70.0
#define CH_LINES 16 /* algorithm and protocol pairs drawn */

typedef struct point {
	double bytes, busbw;
	int line;
} point;

typedef struct chart {
	point *p;
	int64_t n, cap;
	bool done; /* the first pass of sizes is over */
	const char *name[CH_LINES];
	const char *proto[CH_LINES];
	int lines;
	bool nomem;
} chart;

static void chart_row(void *arg, const cs_nccl_run *r, const row *w)
{
	chart *c = arg;
	if (c->done || (c->n && w->bytes <= c->p[c->n - 1].bytes)) {
		c->done = true;
		return;
	}
	const char *an = cs_coll_choice_name(r->op, &w->ch), *pn = cs_coll_proto_name(w->ch.proto);
	int line = 0;
	while (line < c->lines && (strcmp(c->name[line], an) || strcmp(c->proto[line], pn)))
		line++;
	if (line == c->lines && c->lines < CH_LINES) {
		c->name[line] = an;
		c->proto[line] = pn;
		c->lines++;
	}
	if (c->n == c->cap) {
		int64_t cap = c->cap ? 2 * c->cap : 64;
		point *p = realloc(c->p, (size_t)cap * sizeof *p);
		if (!p) {
			c->nomem = c->done = true;
			return;
		}
		c->p = p;
		c->cap = cap;
	}
	c->p[c->n++] = (point){ w->bytes, w->busbw, line < c->lines ? line : -1 };
}

/* The chart's frame: bus bandwidth (GB/s, from bottom to top, the axis
 * from 0 unless they are close) against size (log, from lo to hi bytes)
 * and the title above. */
static void frame(FILE *f, const char *title, double lo, double hi, double bottom, double top,
		  cs__svg_axis *x, cs__svg_axis *y)
{
	cs__svg_axis_log(x, lo, hi, CH_LEFT + 10, CH_W - CH_RIGHT - 10, 2);
	cs__svg_axis_lin(y, bottom, top, CH_H - CH_BOTTOM, CH_TOP);
	cs__svg_begin(f, CH_W, CH_H);
	cs__svg_text(f, (CH_LEFT + CH_W - CH_RIGHT) / 2, 26, "text-anchor=\"middle\" font-size=\"15\"",
		     title);
	cs__svg_yaxis(f, y, CH_LEFT, CH_W - CH_RIGHT, "bus bandwidth (GB/s)", NULL);
	cs__svg_xaxis(f, x, CH_H - CH_BOTTOM, CH_TOP, "message size (bytes, log scale)", cs__svg_fmt_bytes);
}

int cs_nccl_write_svg(FILE *f, const cs_nccl_run *r, cs_coll *coll, cs_coll_algo asked)
{
	chart c = { 0 };
	rows(r, coll, asked, chart_row, &c, NULL);
	if (c.nomem || !c.n) {
		free(c.p);
		return -1;
	}
	double lo = c.p[0].bytes, hi = c.p[c.n - 1].bytes, top = 0, bottom = INFINITY;
	for (int64_t i = 0; i < c.n; i++) {
		top = fmax(top, c.p[i].busbw);
		bottom = fmin(bottom, c.p[i].busbw);
	}
	cs__svg_axis x, y;
	char title[256];
	snprintf(title, sizeof title, "%s bus bandwidth on %lld GPUs (%s, %s)", cs_coll_op_name(r->op),
		 (long long)r->n, dtypes[r->all_dtypes ? all_order[0] : r->dtype].name,
		 cs_nccltests_name(r->op));
	frame(f, title, lo, hi, bottom, top, &x, &y);
	/* each line through its points, broken where another pair takes over */
	for (int l = 0; l < c.lines; l++) {
		const char *colour = cs__svg_colour((size_t)l);
		bool open = false;
		for (int64_t i = 0; i < c.n; i++) {
			if (c.p[i].line != l) {
				if (open)
					fputs("\"/>\n", f);
				open = false;
				continue;
			}
			double px = cs__svg_pos(&x, c.p[i].bytes), py = cs__svg_pos(&y, c.p[i].busbw);
			if (!open)
				fprintf(f,
					"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
					colour);
			fprintf(f, "%s%.2f,%.2f", open ? " " : "", px, py);
			open = true;
		}
		if (open)
			fputs("\"/>\n", f);
		for (int64_t i = 0; i < c.n; i++)
			if (c.p[i].line == l)
				fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"/>\n",
					cs__svg_pos(&x, c.p[i].bytes), cs__svg_pos(&y, c.p[i].busbw), colour);
	}
	cs__svg_text(f, CH_W - CH_RIGHT + 20, CH_TOP, "font-weight=\"bold\"", "algorithm, protocol");
	for (int l = 0; l < c.lines; l++) {
		char label[96];
		snprintf(label, sizeof label, "%s, %s", c.name[l], c.proto[l]);
		cs__svg_key(f, CH_W - CH_RIGHT + 20, CH_TOP + 22 + 18.0 * l, cs__svg_colour((size_t)l), false,
			    label);
	}
	free(c.p);
	return cs__svg_end(f);
}

/* Bus bandwidth, GB/s, of `bytes` in `ns`. */
static double busbw(double bytes, double ns, double factor) { return ns > 0 ? bytes / ns * factor : 0; }

/* A polyline through (bytes[o[i]], the bus bandwidth of t[o[i]]). */
static void fit_line(FILE *f, const cs_nccl_fit_series *s, const size_t *o, const double *t,
		     const cs__svg_axis *x, const cs__svg_axis *y, const char *colour, const char *dash)
{
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", colour, dash);
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "%s%.2f,%.2f", i ? " " : "", cs__svg_pos(x, s->bytes[o[i]]),
			cs__svg_pos(y, busbw(s->bytes[o[i]], t[o[i]], s->bus_factor)));
	fputs("\"/>\n", f);
}

static void ring(FILE *f, double x, double y, const char *colour)
{
	fprintf(f,
		"<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"white\" stroke=\"%s\" "
		"stroke-width=\"2\"/>\n",
		x, y, colour);
}

#define DASHED " stroke-dasharray=\"6 4\""

int cs_nccl_write_fit_svg(FILE *f, const char *title, const cs_nccl_fit_series *s, size_t n)
{
	double lo = INFINITY, hi = 0, top = 0, bottom = INFINITY;
	size_t most = 0;
	for (size_t k = 0; k < n; k++) {
		most = s[k].n > most ? s[k].n : most;
		for (size_t i = 0; i < s[k].n; i++) {
			lo = fmin(lo, s[k].bytes[i]);
			hi = fmax(hi, s[k].bytes[i]);
			const double *t[3] = { s[k].measured_ns, s[k].before_ns, s[k].after_ns };
			for (int j = 0; j < 3; j++) {
				top = fmax(top, busbw(s[k].bytes[i], t[j][i], s[k].bus_factor));
				bottom = fmin(bottom, busbw(s[k].bytes[i], t[j][i], s[k].bus_factor));
			}
		}
	}
	size_t *o = malloc((most ? most : 1) * sizeof *o);
	if (!o || !(lo <= hi)) {
		free(o);
		return -1;
	}
	cs__svg_axis x, y;
	frame(f, title, lo, hi, bottom, top, &x, &y);
	for (size_t k = 0; k < n; k++) {
		const cs_nccl_fit_series *e = &s[k];
		const char *colour = cs__svg_colour(k);
		for (size_t i = 0; i < e->n; i++) /* by size: insertion sort, stable */
			for (size_t j = o[i] = i; j > 0 && e->bytes[o[j - 1]] > e->bytes[o[j]]; j--) {
				size_t t = o[j];
				o[j] = o[j - 1];
				o[j - 1] = t;
			}
		fit_line(f, e, o, e->before_ns, &x, &y, colour, DASHED);
		fit_line(f, e, o, e->after_ns, &x, &y, colour, "");
		for (size_t i = 0; i < e->n; i++)
			ring(f, cs__svg_pos(&x, e->bytes[i]),
			     cs__svg_pos(&y, busbw(e->bytes[i], e->measured_ns[i], e->bus_factor)), colour);
	}
	free(o);
	/* the legend: what the marks are, then each test's colour */
	double lx = CH_W - CH_RIGHT + 20, ly = CH_TOP;
	cs__svg_text(f, lx, ly, "font-weight=\"bold\"", "nccl-tests, the model");
	ring(f, lx + 12, ly + 18, "#333");
	cs__svg_text(f, lx + 30, ly + 22, "", "measured");
	fprintf(f,
		"<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\" "
		"stroke-width=\"2\"" DASHED "/>\n",
		lx, ly + 36, lx + 24, ly + 36);
	cs__svg_text(f, lx + 30, ly + 40, "", "before the fit");
	cs__svg_key(f, lx, ly + 58, "#333", false, "after the fit");
	ly += 86;
	for (size_t k = 0; k < n; k++) {
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", lx + 6,
			ly - 10, cs__svg_colour(k));
		ly += 18.0 * cs__svg_lines(f, lx + 30, ly, 16, "", s[k].label, 22) + 4;
	}
	return cs__svg_end(f);
}
