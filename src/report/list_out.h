/*
 * list_out.h - the tables of `clustersim list`: the GPU presets with the
 * standard server each implies, the model presets with their shape and
 * parameters, and one line per scenario (its GPUs, model and plan).
 */
#ifndef CS_REPORT_LIST_OUT_H
#define CS_REPORT_LIST_OUT_H

#include <stdio.h>

#include "config/scenario.h"

void cs_list_write_gpus(FILE *f);
void cs_list_write_models(FILE *f);
/* The scenarios' header, then a line per scenario, ending with the file
 * (`path`) it was read from. */
void cs_list_write_scenario_header(FILE *f);
void cs_list_write_scenario(FILE *f, const cs_scenario *sc, const char *path);

#endif
