/*
 * fuzz_load.c - libFuzzer target for the scenario loader.
 *
 * Each input is written to a private temporary file and loaded with
 * cs_scenario_load, without overrides; a scenario that loads is freed. The
 * loader must refuse bad input with a diagnostic, never crash, hang, leak
 * or read out of bounds. Built and run by tools/fuzz/run-fuzz.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's one temporary file, named once per fuzzing process. */
static char input_path[4096];

static void remove_input(void)
{
	if (input_path[0])
		unlink(input_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	(void)argc;
	(void)argv;
	snprintf(input_path, sizeof input_path, "%s/cs-fuzz-load-XXXXXX",
	         dir && *dir ? dir : "/tmp");
	fd = mkstemp(input_path);
	if (fd < 0) {
		perror("fuzz_load: mkstemp");
		abort();
	}
	close(fd);
	atexit(remove_input);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cs_scenario *sc = NULL;
	cs_diag diag;
	FILE *f = fopen(input_path, "wb");

	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		perror("fuzz_load: writing the input");
		abort();
	}
	if (cs_scenario_load(input_path, NULL, 0, &sc, &diag) == CS_OK) {
		if (!sc)
			abort();   /* success must hand back a scenario */
		cs_scenario_free(sc);
	} else {
		if (sc || diag.msg[0] == '\0' || !memchr(diag.msg, '\0', sizeof diag.msg))
			abort();   /* failure must leave no scenario and say why */
	}
	return 0;
}
