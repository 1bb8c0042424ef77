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

#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("load");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cs_scenario *sc = NULL;
	cs_diag diag;

	fuzz_file_write(data, size);
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
