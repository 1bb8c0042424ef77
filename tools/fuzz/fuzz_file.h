/*
 * fuzz_file.h - what the fuzz targets whose reader takes a path share: one
 * private temporary file a fuzzing process, named at start-up and removed
 * at exit, that each input is written to. Included by one target each.
 */
#ifndef CS_FUZZ_FILE_H
#define CS_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The harness's one temporary file. */
static char input_path[4096];

static void remove_input(void)
{
	if (input_path[0])
		unlink(input_path);
}

/* Name and create the file, "$TMPDIR/cs-fuzz-NAME-XXXXXX"; abort if it cannot be. */
static void fuzz_file_init(const char *name)
{
	const char *dir = getenv("TMPDIR");
	snprintf(input_path, sizeof input_path, "%s/cs-fuzz-%s-XXXXXX", dir && *dir ? dir : "/tmp", name);
	int fd = mkstemp(input_path);
	if (fd < 0) {
		perror("fuzz: mkstemp");
		abort();
	}
	close(fd);
	atexit(remove_input);
}

/* The input as the file's whole content; abort if it cannot be written. */
static void fuzz_file_write(const uint8_t *data, size_t size)
{
	FILE *f = fopen(input_path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		perror("fuzz: writing the input");
		abort();
	}
}

#endif
