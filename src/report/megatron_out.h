/*
 * megatron_out.h - a simulated plan as the Megatron-LM command line that
 * runs it: torchrun's node and process counts, and pretrain_gpt.py's
 * parallelism, batch, recompute, precision, data-parallel (DDP, the
 * distributed optimizer, Megatron-FSDP, PyTorch FSDP2) and pipeline-split
 * flags, each as the simulation assumed it. The model's own flags are the
 * user's.
 *
 * Every flag is one that Megatron-LM's parser defines
 * (megatron/training/arguments.py, tests/data/megatron/), in a combination
 * its validate_args and TransformerConfig accept: FSDP2 only with pp = 1,
 * ep = 1, untied embeddings and the gradient accumulation in a kernel of
 * its own; --overlap-param-gather only beside --overlap-grad-reduce and a
 * sharded optimizer; a pipeline split by --decoder-first/last-pipeline-
 * num-layers, --account-for-*-in-pipeline-split or, where neither draws the
 * simulated split, --pipeline-model-parallel-layout.
 */
#ifndef CS_REPORT_MEGATRON_OUT_H
#define CS_REPORT_MEGATRON_OUT_H

#include <stddef.h>

#include "config/scenario.h"
#include "study/planner.h"

/* Longest command line written (bytes, with its line breaks). */
#define CS_MEGATRON_LINE_MAX 2048
#define CS_MEGATRON_NOTE_MAX 1024

/* Plan p of a search over scenario sc (its cluster, model and training)
 * as a command line into line[n]: several lines joined by " \\\n    ",
 * without a final newline. note[nn] gets what the simulation assumed that
 * no flag says, as sentences ("" when nothing). Returns 0, or -1 when
 * Megatron-LM cannot run the plan at all (line is "" and note says why). */
int cs_megatron_args(const cs_scenario *sc, const cs_plan *p, char *line, size_t n, char *note, size_t nn);

#endif
