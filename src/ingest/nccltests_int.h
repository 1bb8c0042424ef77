/*
 * nccltests_int.h - what the text reader (nccltests.c) and the -J JSON
 * reader (nccltests_json.c) of nccl-tests' output share. Private to
 * src/ingest.
 */
#ifndef CS_INGEST_NCCLTESTS_INT_H
#define CS_INGEST_NCCLTESTS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"
#include "ingest/nccltests.h"

/* A host of the test's "# Rank" lines (or devices) and its ranks. */
typedef struct cs__nccl_host {
	char name[64];
	int64_t ranks;
} cs__nccl_host;

/* "FILE:LINE:COL: WHAT" into diag; CS_ERR_INPUT. */
cs_status cs__nccltests_fail(cs_diag *diag, const char *file, int lineno, int col, const char *what);
/* Move *t to the end of the set (t is left empty); CS_ERR_NOMEM when it
 * cannot grow. */
cs_status cs__nccltests_push(cs_nccltests_set *set, cs_nccltests *t, cs_diag *diag);
/* The -J JSON document buf[0, len) as one test appended to *set. */
cs_status cs__nccltests_parse_json(const char *buf, size_t len, const char *file, cs_nccltests_set *set,
				   cs_diag *diag);

#endif
