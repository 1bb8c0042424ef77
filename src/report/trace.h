/*
 * trace.h - spans of traced ranks, written as a Chrome trace JSON (one
 * process per rank, one thread per stream; collectives labelled with their
 * algorithm, bytes and wait) or as an SVG of the pipeline schedule (the
 * first rank of each stage, one row per stage).
 *
 * Ownership: cs_trace_new allocates; cs_trace_free releases.
 */
#ifndef CS_REPORT_TRACE_H
#define CS_REPORT_TRACE_H

#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/scenario.h"
#include "program/mesh.h"
#include "program/program.h"
#include "run/runner.h"

/* The largest Chrome trace written, estimated before the run at about 160
 * bytes of JSON per span (measured: 157 on the 3D Llama 3 70B scenario). */
#define CS_TRACE_MAX_BYTES 2e9
#define CS_TRACE_SPAN_BYTES 160.0

typedef struct cs_trace cs_trace;

cs_trace *cs_trace_new(void);
void cs_trace_free(cs_trace *t);
/* A cs_span_fn: pass it with the trace as context to the runner (or in
 * a study's cs_span_sink). */
void cs_trace_span(void *ctx, int64_t rank, int stream, cs_time start, cs_time end, const cs_op *op,
		   cs_time xfer, const cs_coll_choice *choice);
/* A sink's admit for a Chrome trace: refuses (CS_ERR_INPUT, naming --trace)
 * a run whose spans would pass CS_TRACE_MAX_BYTES of JSON. */
cs_status cs_trace_admit(void *ctx, int64_t ranks, double spans, cs_diag *diag);
/* 0, or -1 with a message. Files are written through a temporary and renamed. */
int cs_trace_write_chrome(const cs_trace *t, const char *path, cs_diag *diag);
int cs_trace_write_timeline(const cs_trace *t, const cs_scenario *sc, const cs_mesh *mesh, const char *path,
			    cs_diag *diag);

#endif
