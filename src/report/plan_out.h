/*
 * plan_out.h - what `clustersim plan` writes: a plan search's ranked plans
 * (study/planner.h), the first `top` of them (CSV: all).
 */
#ifndef CS_REPORT_PLAN_OUT_H
#define CS_REPORT_PLAN_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "config/scenario.h"
#include "study/planner.h"

void cs_plan_write_text(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top);
/* 0, or -1 when the JSON writer was misused. */
int cs_plan_write_json(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top);
void cs_plan_write_csv(FILE *f, const cs_plan_search *s);
/* The first `top` plans (at most 40) as an SVG chart, a row each, best on
 * top: its step time as a bar (the value at its end) and its memory per
 * GPU as a bar against HBM and the search's budget (two vertical lines);
 * the best plan, the one chosen, is marked, and so is the heuristic's
 * where it is among them. 0, or -1 when f failed or there is no plan. */
int cs_plan_write_svg(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top);
/* Each plan as the Megatron-LM command line that runs it (megatron_out.c). */
void cs_plan_write_megatron(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top);

#endif
