/*
 * file.c - reading a whole input file, with a size limit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/file.h"

cs_status cs_file_read(const char *path, size_t limit, char **buf, size_t *len, cs_diag *diag)
{
	struct stat stt;
	FILE *f = fopen(path, "rb");
	size_t got;

	*buf = NULL;
	*len = 0;
	if (!f || fstat(fileno(f), &stt) != 0) {
		snprintf(diag->msg, sizeof diag->msg, "cannot open '%.400s': %s", path, strerror(errno));
		if (f)
			fclose(f);
		return CS_ERR_INPUT;
	}
	if (!S_ISREG(stt.st_mode)) {
		fclose(f);
		snprintf(diag->msg, sizeof diag->msg, "cannot read '%.400s': not a regular file", path);
		return CS_ERR_INPUT;
	}
	if ((unsigned long long)stt.st_size > (unsigned long long)limit) {
		fclose(f);
		snprintf(diag->msg, sizeof diag->msg, "'%.400s' is larger than the limit of %zu MiB",
		         path, limit / (1024 * 1024));
		return CS_ERR_INPUT;
	}
	*buf = malloc((size_t)stt.st_size + 1);
	if (!*buf) {
		fclose(f);
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", path);
		return CS_ERR_NOMEM;
	}
	got = fread(*buf, 1, (size_t)stt.st_size, f);
	if (ferror(f)) {
		snprintf(diag->msg, sizeof diag->msg, "cannot read '%.400s': %s", path, strerror(errno));
		fclose(f);
		free(*buf);
		*buf = NULL;
		return CS_ERR_INPUT;
	}
	fclose(f);
	(*buf)[got] = '\0';
	*len = got;
	return CS_OK;
}
