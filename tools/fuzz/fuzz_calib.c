/*
 * fuzz_calib.c - libFuzzer target for the readers of `calibrate`'s inputs
 * and outputs besides the trace: nccl-tests output, text or -J JSON
 * (cs_nccltests_parse_set, then each test's op and GPU), calibration files
 * (cs_calib_parse) and a user's kernel classes (cs_kernel_rules_parse, then
 * a match). The first byte picks the reader (odd: calibration, 'r': kernel
 * classes, else nccl-tests); the rest is the text.
 * Both must refuse bad input with a diagnostic, never crash, hang, leak or
 * read out of bounds. Built and run by tools/fuzz/run-fuzz.sh.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "hw/calib.h"
#include "ingest/kernel_rules.h"
#include "ingest/nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	cs_diag diag = { { 0 } };
	if (data[0] & 1) {
		cs_calib c;
		if (cs_calib_parse(text, len, "fuzz.yaml", &c, &diag) == CS_OK)
			for (int k = 0; k < CS_CALIB_NETS; k++)
				if (!(c.net[k] > 0) || !isfinite(c.net[k]))
					abort(); /* the parser promised positive finite factors */
		return 0;
	}
	if (data[0] == 'r') {
		cs_kernel_rules *r = NULL;
		if (cs_kernel_rules_parse("fuzz.txt", text, len, &r, &diag) == CS_OK) {
			int c = cs_kernel_rules_match(r, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
			if (c < -1 || c >= CS_KINETO_CLASSES)
				abort(); /* a class or -1 */
		} else if (r) {
			abort(); /* refused: nothing handed over */
		}
		cs_kernel_rules_free(r);
		return 0;
	}
	cs_nccltests_set set;
	if (cs_nccltests_parse_set(text, len, "fuzz.txt", &set, &diag) == CS_OK) {
		if (set.n == 0)
			abort(); /* the parser promised a test */
		for (size_t k = 0; k < set.n; k++) {
			const cs_nccltests *t = &set.tests[k];
			cs_coll_op op;
			if (t->nrows == 0 || t->nranks < 1)
				abort(); /* the parser promised rows and ranks */
			(void)cs_nccltests_op(t, "fuzz.txt", -1, &op, &diag);
			(void)cs_nccltests_same_gpu(t->gpu, "h100-sxm-80g");
		}
	}
	cs_nccltests_set_free(&set);
	return 0;
}
