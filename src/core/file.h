/*
 * file.h - reading a whole input file (scenarios, kernel profiles).
 */
#ifndef CS_CORE_FILE_H
#define CS_CORE_FILE_H

#include <stddef.h>

#include "clustersim/clustersim.h"

/*
 * Read the regular file `path` ("-": the standard input) whole into a new
 * NUL-terminated buffer that the caller frees: *buf, *len bytes (the NUL
 * not counted). Refuses more
 * than `limit` bytes. Errors, in diag: "cannot open 'PATH': reason",
 * "cannot read 'PATH': not a regular file", "'PATH' is larger than the
 * limit of N MiB" (CS_ERR_INPUT), or out of memory (CS_ERR_NOMEM).
 */
/*
 * Open the regular file `path` for reading: its descriptor, which the
 * caller closes, and its size in *size; -1 with "cannot open 'PATH':
 * reason" or "cannot read 'PATH': not a regular file" in diag.
 */
int cs_file_open(const char *path, long long *size, cs_diag *diag);

cs_status cs_file_read(const char *path, size_t limit, char **buf, size_t *len, cs_diag *diag);

#endif
