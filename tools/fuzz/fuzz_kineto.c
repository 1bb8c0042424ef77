/*
 * fuzz_kineto.c - libFuzzer target for the profiler trace reader.
 *
 * Each input is written to a private temporary file and read with
 * cs_kineto_load (plain JSON, or gzip when it starts with gzip's magic
 * bytes); a trace that loads is checked for sane totals and freed. The
 * reader must refuse bad input with a diagnostic, never crash, hang, leak
 * or read out of bounds. Built and run by tools/fuzz/run-fuzz.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/kineto.h"

#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("kineto");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cs_kineto *t = NULL;
	cs_diag diag;

	fuzz_file_write(data, size);
	/* a 64 MiB limit: libFuzzer's inputs can inflate 1000-fold */
	if (cs__kineto_load_limit(input_path, (size_t)64 << 20, &t, &diag) == CS_OK) {
		if (!t || cs_kineto_kernels(t) < 1 || cs_kineto_steps(t) < 1 ||
		    cs_kineto_busy_ns(t) < 0 || cs_kineto_busy_ns(t) > cs_kineto_span_ns(t))
			abort();   /* success must hand back sane totals */
		int64_t named = 0;
		for (int a = 0; a < CS_KINETO_ARCH_CODES; a++)
			named += cs_kineto_arch_kernels(t, a);
		if (named != cs_kineto_kernels(t) || strlen(cs_kineto_device(t)) >= 128)
			abort();   /* every kernel counted once by architecture; a bounded name */
		cs_kineto_free(t);
	} else {
		if (t || diag.msg[0] == '\0' || !memchr(diag.msg, '\0', sizeof diag.msg))
			abort();   /* failure must leave no trace and say why */
	}
	return 0;
}
