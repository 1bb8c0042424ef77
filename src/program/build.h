/*
 * build.h - turns a scenario into one program template per pipeline stage.
 *
 * The builder walks each stage's pipeline schedule (program/schedule.h) and,
 * for every forward and backward op of it, replays the transformer blocks of
 * that virtual stage (model/model.h) as compute segments on the compute
 * stream and collectives on their streams: TP/SP inside the block, CP and EP
 * where the model says, pipeline sends between stages, and data-parallel
 * gradient and parameter traffic as the sharding mode dictates (DDP buckets,
 * the distributed optimizer, FSDP units).
 */
#ifndef CS_PROGRAM_BUILD_H
#define CS_PROGRAM_BUILD_H

#include "clustersim/clustersim.h"
#include "config/config.h"
#include "config/scenario.h"
#include "hw/kprof.h"
#include "program/mesh.h"
#include "program/program.h"

/* Upper bounds that keep a scenario inside what one machine can simulate. */
#define CS_BUILD_MAX_MICRO_BATCHES CS_CONFIG_MAX_MICRO_BATCHES
#define CS_BUILD_MAX_OPS 20000000 /* ops over all templates (about 1 GB) */

typedef struct cs_plan_layout {
	int64_t stages;        /* p */
	int64_t chunks;        /* v, model chunks per stage */
	int64_t micro_batches; /* m */
	int64_t vstages;       /* p * v */
	int64_t first_layer[1024];
	int64_t nlayers[1024]; /* per virtual stage */
} cs_plan_layout;

#define CS_PLAN_MAX_VSTAGES 1024

/* Split the layers over virtual stages: every virtual stage gets L / V or
 * one more; the extra layers go to the middle stages first, so that the
 * first and last (which also hold the embedding and the LM head) carry
 * fewer. With `account_for_embedding` / `account_for_loss` (Megatron's
 * --account-for-*-in-pipeline-split) the embedding and the head count as one
 * layer each in that split, so the first and last virtual stages carry one
 * layer fewer: Llama 3 405B's 126 layers on 16 x 8 virtual stages leave the
 * first holding only the embedding and the last only the head and loss. */
cs_status cs_plan_layout_init(cs_plan_layout *lay, const cs_scenario *sc, cs_diag *diag);

/* Fill progs[0 .. pp-1] (each cs_program_init'ed by the caller; the caller
 * frees them with cs_program_free, also on error), timing compute from
 * `prof` (NULL: the flat efficiencies), which the caller keeps alive during
 * the call. */
cs_status cs_plan_build(const cs_scenario *sc, const cs_mesh *mesh, const cs_kprof *prof, cs_program *progs,
			cs_diag *diag);

/* cs_plan_build into a new array of pp programs, *out; the caller frees it
 * with cs_plan_programs_free(*out, pp), also on error (*out may be NULL). */
cs_status cs_plan_build_new(const cs_scenario *sc, const cs_mesh *mesh, const cs_kprof *prof,
			    cs_program **out, cs_diag *diag);
void cs_plan_programs_free(cs_program *progs, int64_t n);

#endif
