/*
 * chakra_out.h - a run of Chakra traces that carry no model (written by
 * another tool: no model FLOPs recorded) as text, JSON or CSV, as
 * `clustersim run-chakra` prints it: the step, its compute and exposed
 * communication, the collectives with their bus bandwidth and the
 * messages, without the scenario's model (MFU, tokens/s, memory).
 */
#ifndef CS_REPORT_CHAKRA_OUT_H
#define CS_REPORT_CHAKRA_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "clustersim/clustersim.h"

/* What rank 0's trace communicates in a step. */
typedef struct cs_trace_comm {
	int64_t colls;     /* collectives */
	double coll_bytes; /* their sizes, as nccl-tests counts them */
	double bus_bytes;  /* each size times nccl-tests' bus factor for its group */
	char ops[128];     /* the collectives' names, each once */
	int64_t sends;     /* point-to-point messages sent */
	double send_bytes;
	int comm_only; /* no trace has compute time */
} cs_trace_comm;

/* The step and, when communication only, the bus bandwidth: the bus bytes
 * over the unperturbed step time (nccl-tests' busbw for one collective). */
void cs_report_trace_text(FILE *f, const char *name, const cs_metrics *m, const cs_trace_comm *c);
void cs_report_trace_json(FILE *f, const char *name, const cs_metrics *m, const cs_trace_comm *c);
void cs_report_trace_csv(FILE *f, const char *name, const cs_metrics *m, const cs_trace_comm *c);

#endif
