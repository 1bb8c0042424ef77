/*
 * file.c - reading a whole input file, with a size limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"

int cs_file_open(const char *path, long long *size, cs_diag *diag)
{
	struct stat stt;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &stt) != 0) {
		snprintf(diag->msg, sizeof diag->msg, "cannot open '%.400s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(stt.st_mode)) {
		close(fd);
		snprintf(diag->msg, sizeof diag->msg, "cannot read '%.400s': not a regular file", path);
		return -1;
	}
	*size = (long long)stt.st_size;
	return fd;
}

cs_status cs_file_read(const char *path, size_t limit, char **buf, size_t *len, cs_diag *diag)
{
	long long size;
	size_t got;

	*buf = NULL;
	*len = 0;
	int fd = cs_file_open(path, &size, diag);
	if (fd < 0)
		return CS_ERR_INPUT;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", path);
		return CS_ERR_NOMEM;
	}
	if ((unsigned long long)size > (unsigned long long)limit) {
		fclose(f);
		snprintf(diag->msg, sizeof diag->msg, "'%.400s' is larger than the limit of %zu MiB",
		         path, limit / (1024 * 1024));
		return CS_ERR_INPUT;
	}
	*buf = malloc((size_t)size + 1);
	if (!*buf) {
		fclose(f);
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", path);
		return CS_ERR_NOMEM;
	}
	got = fread(*buf, 1, (size_t)size, f);
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
