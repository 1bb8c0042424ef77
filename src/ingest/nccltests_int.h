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

/* A test's hosts by name: an open-addressing table, so that each '# Rank'
 * line (or device) costs the same however many hosts came before. */
typedef struct cs__nccl_hosts {
	cs__nccl_host *slot; /* cap slots, a name of "" free */
	size_t cap, n;
} cs__nccl_hosts;

/* The most ranks a test may have: more than any machine nccl-tests ran on. */
#define CS_NCCL_MAX_RANKS ((int64_t)1 << 24)

/* Add `ranks` ranks on host `name` (its first 63 bytes) to *h, counting a
 * new host into t->nhosts and the ranks into t->nranks; CS_ERR_NOMEM when
 * the table cannot grow. */
cs_status cs__nccl_hosts_add(cs__nccl_hosts *h, const char *name, size_t len, int64_t ranks, cs_nccltests *t,
			     cs_diag *diag);
/* t->ranks_per_host from the table, which is then freed. */
void cs__nccl_hosts_end(cs__nccl_hosts *h, cs_nccltests *t);

/* "FILE:LINE:COL: WHAT" into diag; CS_ERR_INPUT. */
cs_status cs__nccltests_fail(cs_diag *diag, const char *file, int lineno, int col, const char *what);
/* Move *t to the end of the set (t is left empty); CS_ERR_NOMEM when it
 * cannot grow. */
cs_status cs__nccltests_push(cs_nccltests_set *set, cs_nccltests *t, cs_diag *diag);
/* The -J JSON document buf[0, len) as one test appended to *set. */
cs_status cs__nccltests_parse_json(const char *buf, size_t len, const char *file, cs_nccltests_set *set,
				   cs_diag *diag);

#endif
