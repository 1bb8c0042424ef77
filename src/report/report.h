/*
 * report.h - run results for people (text) and programs (JSON, CSV).
 */
#ifndef CS_REPORT_REPORT_H
#define CS_REPORT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "clustersim/clustersim.h"
#include "study/study.h"

/* `name` labels the run; `color` adds ANSI emphasis. */
void cs_report_text(FILE *f, const char *name, const cs_metrics *m, int color);
/* One JSON object; indent 0 writes a single line. */
void cs_report_json(FILE *f, const char *name, const cs_metrics *m, int indent);
/* Two CSV lines: "scenario" and the sweep's columns (cs_study_columns),
 * then the run's row. */
void cs_report_csv(FILE *f, const char *name, const cs_metrics *m);
/* `run --per-rank`: a header, then one line per simulated rank of rows[n]
 * (study/study.h): its end, busy and idle time, busy time by compute
 * class, exposed time by communicator kind, activation peak and compute
 * factor. */
void cs_report_ranks_csv(FILE *f, const cs_rank_row *rows, int64_t n);

#endif
