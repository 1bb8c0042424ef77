/*
 * memory_out.h - the training memory of one GPU (model/memory.h's
 * breakdown of a scenario's first pipeline stage) as text or JSON, as
 * `clustersim memory` prints it.
 */
#ifndef CS_REPORT_MEMORY_OUT_H
#define CS_REPORT_MEMORY_OUT_H

#include <stdio.h>

#include "config/scenario.h"
#include "model/memory.h"

/* The model, the plan and the batch, then a table of the parts in GB and
 * GiB against the GPU's capacity, and the verdict. */
void cs_mem_write_text(FILE *f, const cs_scenario *sc, const cs_mem_breakdown *r);
/* One JSON object: the model, the GPU, the counts, per_gpu_bytes, the
 * capacity and whether it fits. */
void cs_mem_write_json(FILE *f, const cs_scenario *sc, const cs_mem_breakdown *r);

#endif
