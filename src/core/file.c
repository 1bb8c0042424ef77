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
	/* O_NONBLOCK: a FIFO without a writer must not hold the open */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	*size = (long long)stt.st_size;
	return fd;
}

/* Standard input, whole, up to `limit` bytes. */
static cs_status read_stdin(size_t limit, char **buf, size_t *len, cs_diag *diag)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap + 1);
	while (b) {
		if (n == cap) {
			if (cap > limit)
				break;
			char *nb = realloc(b, 2 * cap + 1);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
		size_t got = fread(b + n, 1, cap - n, stdin);
		n += got;
		if (got == 0)
			break;
	}
	if (!b) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading the standard input");
		return CS_ERR_NOMEM;
	}
	if (n > limit) {
		free(b);
		snprintf(diag->msg, sizeof diag->msg,
			 "'-' (the standard input) is larger than the limit "
			 "of %zu MiB",
			 limit / (1024 * 1024));
		return CS_ERR_INPUT;
	}
	if (ferror(stdin)) {
		free(b);
		snprintf(diag->msg, sizeof diag->msg, "cannot read the standard input: %s", strerror(errno));
		return CS_ERR_INPUT;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return CS_OK;
}

cs_status cs_file_read(const char *path, size_t limit, char **buf, size_t *len, cs_diag *diag)
{
	long long size;
	size_t got;

	*buf = NULL;
	*len = 0;
	if (strcmp(path, "-") == 0)
		return read_stdin(limit, buf, len, diag);
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
		snprintf(diag->msg, sizeof diag->msg, "'%.400s' is larger than the limit of %zu MiB", path,
			 limit / (1024 * 1024));
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
