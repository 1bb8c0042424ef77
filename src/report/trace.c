/*
 * trace.c - what traced ranks did, as a Chrome trace (Perfetto opens it)
 * and as an SVG of the pipeline schedule.
 */
#include "report/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/pipesim.h"
#include "program/schedule.h"
#include "report/out.h"
#include "report/svg.h"

typedef struct span {
	int64_t rank;
	cs_time start, end, xfer;
	cs_op op;
	int stream;
	char algo[24];
} span;

struct cs_trace {
	span *spans;
	int64_t n, cap;
	int oom;
};

cs_trace *cs_trace_new(void) { return calloc(1, sizeof(cs_trace)); }

void cs_trace_free(cs_trace *t)
{
	if (!t)
		return;
	free(t->spans);
	free(t);
}

void cs_trace_span(void *ctx, int64_t rank, int stream, cs_time start, cs_time end, const cs_op *op,
		   cs_time xfer, const cs_coll_choice *choice)
{
	cs_trace *t = ctx;
	if (t->n == t->cap) {
		int64_t nc = t->cap ? t->cap * 2 : 1024;
		span *ns = realloc(t->spans, (size_t)nc * sizeof(span));
		if (!ns) {
			t->oom = 1;
			return;
		}
		t->spans = ns;
		t->cap = nc;
	}
	span *s = &t->spans[t->n++];
	*s = (span){ .rank = rank, .start = start, .end = end, .xfer = xfer, .op = *op, .stream = stream };
	if (choice)
		snprintf(s->algo, sizeof(s->algo), "%s/%s", cs_coll_algo_name(choice->algo),
			 cs_coll_proto_name(choice->proto));
}

static const char *phase_name(int phase)
{
	static const char *const names[] = { "forward",   "backward",  "weight-grad",
					     "recompute", "optimizer", "comm" };
	return phase >= 0 && phase <= CS_PHASE_COMM ? names[phase] : "?";
}

static const char *group_label(int group) { return cs_group_kind_name((cs_group_kind)group); }

static void span_name(const span *s, char *buf, size_t n)
{
	const cs_op *op = &s->op;
	switch (op->kind) {
	case CS_OP_COMPUTE:
		if (op->micro >= 0)
			snprintf(buf, n, "%s mb%d v%d%s", phase_name(op->phase), op->micro, op->vstage,
				 op->layer >= 0 ? "" : " (ends)");
		else
			snprintf(buf, n, "%s", phase_name(op->phase));
		break;
	case CS_OP_COLL:
		snprintf(buf, n, "%s %s %.3g MB", group_label(op->group),
			 cs_coll_op_name((cs_coll_op)op->coll), op->bytes / 1e6);
		break;
	default:
		snprintf(buf, n, "send %s mb%d %.3g MB", op->to > 0 ? "up" : "down", op->micro,
			 op->bytes / 1e6);
		break;
	}
}

static int cmp_rank(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

cs_status cs_trace_admit(void *ctx, int64_t ranks, double spans, cs_diag *diag)
{
	(void)ctx;
	double bytes = spans * CS_TRACE_SPAN_BYTES;
	if (bytes <= CS_TRACE_MAX_BYTES)
		return CS_OK;
	snprintf(diag->msg, sizeof(diag->msg),
		 "--trace: %lld rank%s would write about %.3g spans "
		 "(%.1f GB of JSON), more than the limit of %.0f GB: trace fewer ranks "
		 "(--trace-ranks)",
		 (long long)ranks, ranks == 1 ? "" : "s", spans, bytes / 1e9, CS_TRACE_MAX_BYTES / 1e9);
	return CS_ERR_INPUT;
}

int cs_trace_write_chrome(const cs_trace *t, const char *path, cs_diag *diag)
{
	if (t->oom) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory while tracing");
		return -1;
	}
	cs_out *o = cs_out_open(path, diag);
	if (!o)
		return -1;
	FILE *f = cs_out_file(o);
	cs_jw w;
	cs_jw_init(&w, f, 0);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "displayTimeUnit", "ns");
	cs_jw_key(&w, "traceEvents");
	cs_jw_begin_arr(&w);
	/* names: one process per rank, one thread per stream, each once */
	int64_t *ranks = malloc((size_t)(t->n ? t->n : 1) * sizeof *ranks), nranks = 0;
	if (!ranks) {
		cs_out_abort(o);
		snprintf(diag->msg, sizeof(diag->msg), "out of memory");
		return -1;
	}
	for (int64_t i = 0; i < t->n; i++)
		ranks[i] = t->spans[i].rank;
	qsort(ranks, (size_t)t->n, sizeof *ranks, cmp_rank);
	for (int64_t i = 0; i < t->n; i++)
		if (i == 0 || ranks[i] != ranks[i - 1])
			ranks[nranks++] = ranks[i];
	for (int64_t i = 0; i < nranks; i++) {
		const span rs = { .rank = ranks[i] }, *s = &rs;
		char name[48];
		snprintf(name, sizeof(name), "rank %lld", (long long)s->rank);
		cs_jw_begin_obj(&w);
		cs_jw_kv_str(&w, "name", "process_name");
		cs_jw_kv_str(&w, "ph", "M");
		cs_jw_kv_int(&w, "pid", s->rank);
		cs_jw_key(&w, "args");
		cs_jw_begin_obj(&w);
		cs_jw_kv_str(&w, "name", name);
		cs_jw_end_obj(&w);
		cs_jw_end_obj(&w);
		for (int st = 0; st < CS_STREAMS; st++) {
			cs_jw_begin_obj(&w);
			cs_jw_kv_str(&w, "name", "thread_name");
			cs_jw_kv_str(&w, "ph", "M");
			cs_jw_kv_int(&w, "pid", s->rank);
			cs_jw_kv_int(&w, "tid", st);
			cs_jw_key(&w, "args");
			cs_jw_begin_obj(&w);
			cs_jw_kv_str(&w, "name", cs_stream_name((cs_stream)st));
			cs_jw_end_obj(&w);
			cs_jw_end_obj(&w);
		}
	}
	free(ranks);
	for (int64_t i = 0; i < t->n; i++) {
		const span *s = &t->spans[i];
		char name[96];
		span_name(s, name, sizeof(name));
		cs_jw_begin_obj(&w);
		cs_jw_kv_str(&w, "name", name);
		cs_jw_kv_str(&w, "cat", s->op.kind == CS_OP_COMPUTE ? "compute" : "comm");
		cs_jw_kv_str(&w, "ph", "X");
		cs_jw_kv_int(&w, "pid", s->rank);
		cs_jw_kv_int(&w, "tid", s->stream);
		cs_jw_kv_num(&w, "ts", 1e-3 * (double)s->start);
		cs_jw_kv_num(&w, "dur", 1e-3 * (double)(s->end - s->start));
		cs_jw_key(&w, "args");
		cs_jw_begin_obj(&w);
		if (s->op.kind != CS_OP_COMPUTE) {
			cs_jw_kv_num(&w, "bytes", s->op.bytes);
			cs_jw_kv_num(&w, "transfer_us", 1e-3 * (double)s->xfer);
			cs_jw_kv_num(&w, "wait_us", 1e-3 * (double)(s->end - s->start - s->xfer));
		}
		if (s->algo[0])
			cs_jw_kv_str(&w, "algorithm", s->algo);
		if (s->op.layer >= 0)
			cs_jw_kv_int(&w, "layer", s->op.layer);
		cs_jw_end_obj(&w);
		cs_jw_end_obj(&w);
	}
	cs_jw_end_arr(&w);
	cs_jw_end_obj(&w);
	if (cs_jw_finish(&w) != 0) {
		cs_out_abort(o);
		snprintf(diag->msg, sizeof(diag->msg), "internal error writing '%s'", path);
		return -1;
	}
	return cs_out_commit(o, diag);
}

/* The schedule op a compute span belongs to. */
static int sched_kind(const span *s, int split)
{
	switch (s->op.phase) {
	case CS_PHASE_FWD: return CS_SCHED_F;
	case CS_PHASE_BWD_W: return split ? CS_SCHED_W : CS_SCHED_BW;
	case CS_PHASE_BWD:
	case CS_PHASE_RECOMPUTE: return split ? CS_SCHED_B : CS_SCHED_BW;
	default: return -1;
	}
}

static int by_stage_start(const void *a, const void *b)
{
	const cs_pipe_span *x = a, *y = b;
	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

int cs_trace_write_timeline(const cs_trace *t, const cs_scenario *sc, const cs_mesh *mesh, const char *path,
			    cs_diag *diag)
{
	cs_pipe_result res = { .sched = sc->parallel.schedule,
			       .stages = sc->parallel.pp,
			       .micro_batches = cs_scenario_micro_batches(sc) };
	int64_t p = sc->parallel.pp;
	int split = cs_sched_split_backward(sc->parallel.schedule);
	res.chunks = cs_sched_chunks(sc->parallel.schedule, sc->parallel.virtual_stages);
	res.spans = calloc((size_t)(t->n ? t->n : 1), sizeof(cs_pipe_span));
	res.peak_in_flight = calloc((size_t)p, sizeof(double));
	if (!res.spans || !res.peak_in_flight) {
		free(res.spans);
		free(res.peak_in_flight);
		snprintf(diag->msg, sizeof(diag->msg), "out of memory");
		return -1;
	}
	/* the first rank of each stage (other coordinates 0), its compute spans
	 * in stage and time order, consecutive ones of one schedule op merged */
	int64_t n = 0;
	for (int64_t i = 0; i < t->n; i++) {
		const span *s = &t->spans[i];
		int64_t stage = cs_mesh_coord(mesh, s->rank, CS_AXIS_PP);
		int kind = sched_kind(s, split);
		if (s->stream != CS_STREAM_COMPUTE || s->op.micro < 0 || kind < 0 ||
		    s->rank != stage * mesh->stride[CS_AXIS_PP])
			continue;
		int64_t chunk, st;
		cs_sched_stage_of(sc->parallel.schedule, p, res.chunks, s->op.vstage, &st, &chunk);
		res.spans[n++] = (cs_pipe_span){
			.start = s->start,
			.end = s->end,
			.stage = stage,
			.op = { .kind = (uint8_t)kind, .chunk = (uint16_t)chunk, .micro = s->op.micro }
		};
	}
	qsort(res.spans, (size_t)n, sizeof(cs_pipe_span), by_stage_start);
	for (int64_t i = 0; i < n; i++) {
		cs_pipe_span *sp = &res.spans[i];
		cs_pipe_span *prev = res.n_spans ? &res.spans[res.n_spans - 1] : NULL;
		if (sp->end > res.makespan)
			res.makespan = sp->end;
		if (prev && prev->stage == sp->stage && prev->op.micro == sp->op.micro &&
		    prev->op.chunk == sp->op.chunk && prev->op.kind == sp->op.kind) {
			prev->end = sp->end;
			continue;
		}
		res.spans[res.n_spans++] = *sp;
	}
	for (int64_t i = 0; i < res.n_spans; i++) /* after merging: the merged lengths */
		res.busy += res.spans[i].end - res.spans[i].start;
	if (res.makespan > 0)
		res.bubble_fraction = 1.0 - (double)res.busy / ((double)p * (double)res.makespan);
	cs_out *o = cs_out_open(path, diag);
	int rc = -1;
	if (o) {
		rc = cs_svg_pipeline(cs_out_file(o), &res, 1e6, "ms");
		if (rc == 0)
			rc = cs_out_commit(o, diag);
		else
			cs_out_abort(o);
	}
	free(res.spans);
	free(res.peak_in_flight);
	return rc;
}
