/*
 * fuzz_chakra.c - libFuzzer target for the Chakra execution-trace decoder
 * of `run-chakra` (cs_chakra_decode): the first byte picks the rank of a
 * tp 2 x pp 2 x dp 2 mesh, the rest is the trace. It must refuse bad input
 * with a diagnostic, never crash, hang, leak or read out of bounds; a
 * trace it takes must give a program whose waits name counters that exist.
 * The corpus holds clustersim's own traces, ASTRA-sim's custom ring
 * all-reduce (sends to any rank) and Chakra's feeder trace (CPU-side
 * collectives, control dependencies on nodes not there).
 * Built and run by tools/fuzz/run-fuzz.sh.
 */
#include <stdint.h>
#include <stdlib.h>

#include "chakra/chakra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	cs_parallel_spec p = { .tp = 2, .pp = 2, .dp = 2, .cp = 1, .ep = 1,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	cs_mesh mesh;
	cs_mesh_init(&mesh, &p);
	cs_chakra_where w = { .mesh = &mesh, .gpus_per_node = 8, .rank = data[0] % 8 };
	cs_program prog;
	cs_program_init(&prog);
	cs_diag diag = { { 0 } };
	int rank_free;
	cs_chakra_skipped skipped = { 0 };
	if (cs_chakra_decode(data + 1, size - 1, "fuzz.et", &w, &prog, &rank_free, &skipped, &diag) == CS_OK)
		for (int32_t i = 0; i < prog.ndeps; i++)
			if (prog.deps[i].counter >= CS_COUNTERS || prog.deps[i].value <= 0)
				abort(); /* the decoder promised waits on counters that exist */
	cs_program_free(&prog);
	return 0;
}
