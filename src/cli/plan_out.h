/*
 * plan_out.h - the writers of `clustersim plan` (internal to the command
 * line): the search's ranked plans, the first `top` of them (CSV: all).
 */
#ifndef CS_CLI_PLAN_OUT_H
#define CS_CLI_PLAN_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "config/scenario.h"
#include "study/planner.h"

void cs__plan_write_text(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top);
/* 0, or -1 when the JSON writer was misused. */
int cs__plan_write_json(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top);
void cs__plan_write_csv(FILE *f, const cs_plan_search *s);
void cs__plan_write_megatron(FILE *f, const cs_scenario *sc, const cs_plan_search *s, int64_t top);

#endif
