/*
 * study_int.h - the result of a simulation as the study's files fill it
 * (simulate.c) and the public functions read and free it (api.c).
 * Private to src/study.
 */
#ifndef CS_STUDY_STUDY_INT_H
#define CS_STUDY_STUDY_INT_H

#include "clustersim/clustersim.h"

struct cs_result {
	cs_metrics m;
	cs_rank_row *rows; /* per rank, when asked for */
	int64_t nrows;
};

#endif
