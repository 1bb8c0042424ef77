/*
 * report.h - run results for people (text) and programs (JSON, CSV).
 */
#ifndef CS_REPORT_REPORT_H
#define CS_REPORT_REPORT_H

#include <stdio.h>

#include "clustersim/clustersim.h"

/* `name` labels the run; `color` adds ANSI emphasis. */
void cs_report_text(FILE *f, const char *name, const cs_metrics *m, int color);
/* One JSON object; indent 0 writes a single line. */
void cs_report_json(FILE *f, const char *name, const cs_metrics *m, int indent);
/* Two CSV lines: "scenario" and the sweep's columns (cs_study_columns),
 * then the run's row. */
void cs_report_csv(FILE *f, const char *name, const cs_metrics *m);

#endif
