/*
 * fuzz_groups.c - libFuzzer target for the comm-group file reader of
 * `run-chakra --comm-groups` (cs_chakra_groups_load: {"NAME": [ranks]}, as
 * ASTRA-sim's --comm-group-configuration reads it). Each input is written
 * to a private temporary file and loaded; a file it takes is matched,
 * name by name, against the groups of a tp 2 x pp 2 x dp 2 mesh. It must
 * refuse bad input with a diagnostic, never crash, hang, leak or read out
 * of bounds. Built and run by tools/fuzz/run-fuzz.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/chakra.h"

#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("groups");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file_write(data, size);
	cs_chakra_groups *gs = NULL;
	cs_diag diag = { { 0 } };
	if (cs_chakra_groups_load(input_path, &gs, &diag) != CS_OK) {
		if (gs)
			abort(); /* refused: nothing handed over */
		return 0;
	}
	cs_parallel_spec p = { .tp = 2, .pp = 2, .dp = 2, .cp = 1, .ep = 1,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	cs_mesh mesh;
	cs_mesh_init(&mesh, &p);
	static const char *names[] = { "tp.0", "tp.1", "pp.0", "dp.0", "0", "1", "" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		for (int64_t r = 0; r < 8; r++) {
			uint8_t kind = 0;
			char why[256];
			int got = cs_chakra_groups_kind(gs, names[i], &mesh, 8, r, &kind, why, sizeof why);
			if (got < -2 || got > 0)
				abort(); /* 0, -1 or -2 */
		}
	cs_chakra_groups_free(gs);
	return 0;
}
