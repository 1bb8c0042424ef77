/*
 * jstream.h - the elements of one array of a JSON document, one at a time,
 * without the document in memory: a profiler trace of a gigabyte is a
 * top-level object whose "traceEvents" array holds millions of small
 * objects. The scanner reads the text in chunks, checks its brackets,
 * strings and literals, and hands each element of the named array to
 * jansson alone; memory is one element, whatever the document's size.
 *
 * Errors are "NAME:LINE:COL: not JSON: ..." at the place in the whole text
 * (an element's own syntax errors are jansson's, moved to that place).
 */
#ifndef CS_INGEST_JSTREAM_H
#define CS_INGEST_JSTREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <zlib.h>

#include "clustersim/clustersim.h"

/* Fill buf[0..cap) with the next bytes of the text: *got = 0 at its end.
 * CS_OK, or an error with its message in diag. */
typedef cs_status (*cs_jstream_read)(void *ctx, char *buf, size_t cap, size_t *got, cs_diag *diag);

/* Called for element `index` of the array (an object, array or scalar,
 * parsed with JSON_DECODE_INT_AS_REAL; the callee does not keep it). A
 * status other than CS_OK stops the scan and is returned. */
typedef cs_status (*cs_jstream_each)(void *arg, const json_t *element, size_t index);

typedef struct cs_jstream_opts {
	const char *name;   /* the document, for messages */
	const char *key;    /* the top-level object's member whose array is streamed */
	size_t max_element; /* bytes; a larger element is an error */
	/* optional: a second member whose array's elements go to each2 (numbered
	 * from 0; the first array's numbering goes on after it) */
	const char *key2;
	cs_jstream_each each2;
	/* optional: a member whose value, of any type, goes whole to each3 (index
	 * 0), within max_element bytes */
	const char *key3;
	cs_jstream_each each3;
} cs_jstream_opts;

/* Scan the document that `rd` reads; call `each` for every element of the
 * array member o->key of its top-level object (the first, if repeated).
 * *found is false when the document is valid JSON without that array
 * (a top level that is not an object, or a member that is not an array).
 * CS_ERR_INPUT for text that is not JSON, CS_ERR_NOMEM, or what `rd` or
 * `each` returned. */
cs_status cs_jstream_array(const cs_jstream_opts *o, cs_jstream_read rd, void *rctx, cs_jstream_each each,
			   void *arg, bool *found, cs_diag *diag);

/* Two sources: a file through zlib, which reads plain text and gzip alike
 * (errors: "cannot read 'PATH': ...", "'PATH': truncated gzip data at byte
 * N (...)", "... corrupt gzip data ..."), and text in memory. The caller
 * opens and closes the gzFile. */
typedef struct cs_jstream_gz {
	gzFile gz;
	const char *path;
} cs_jstream_gz;
cs_status cs_jstream_gz_read(void *ctx, char *buf, size_t cap, size_t *got, cs_diag *diag);

typedef struct cs_jstream_mem {
	const char *text;
	size_t len, pos;
} cs_jstream_mem;
cs_status cs_jstream_mem_read(void *ctx, char *buf, size_t cap, size_t *got, cs_diag *diag);

#endif
