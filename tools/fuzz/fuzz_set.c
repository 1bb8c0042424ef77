/*
 * fuzz_set.c - libFuzzer target for --set overrides and the unit parsers.
 *
 * The input is read as text (up to its first NUL, as a command line would
 * pass it) and split at newlines into at most MAX_SETS assignments
 * "key.path=value". A small valid scenario, written once to a private
 * temporary file, is loaded with them as overrides; each assignment is also
 * applied to a default scenario with cs_config_apply_override, and its
 * value (the text after '=', or the whole line) and the whole line go
 * through cs_parse_size, cs_parse_bandwidth, cs_parse_time and
 * cs_parse_flops, whose documented promises are checked: a success is
 * finite and not negative, a failure says why. Built and run by
 * tools/fuzz/run-fuzz.sh.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"
#include "config/config.h"
#include "config/scenario.h"

#define MAX_SETS 8

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A scenario that touches most sections: presets with inline keys, a
 * pipeline, sharded data parallelism and a straggler. */
static const char base_scenario[] =
	"name: fuzz-set\n"
	"cluster:\n"
	"  gpu: h100-sxm-80g\n"
	"  nodes: 2\n"
	"  scale_out: {kind: ib, bandwidth: 400 Gb/s, latency: 5 us}\n"
	"model: {preset: llama3-8b, layers: 8}\n"
	"training: {seq_len: 2048, micro_batch: 1, global_batch: 16}\n"
	"parallelism:\n"
	"  tp: 2\n"
	"  pp: 2\n"
	"  pipeline: {schedule: 1f1b}\n"
	"  data_parallel: {sharding: zero1, bucket: 25 MiB}\n"
	"stragglers:\n"
	"  - {gpu: 3, compute: 1.1}\n"
	"simulate: {steps: 1}\n";

/* The harness's one temporary file, named once per fuzzing process. */
static char base_path[4096];

static void remove_base(void)
{
	if (base_path[0])
		unlink(base_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");
	cs_scenario *sc = NULL;
	cs_diag diag;
	FILE *f;
	int fd;

	(void)argc;
	(void)argv;
	snprintf(base_path, sizeof base_path, "%s/cs-fuzz-set-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(base_path);
	if (fd < 0 || !(f = fdopen(fd, "wb"))) {
		perror("fuzz_set: temporary scenario");
		abort();
	}
	if (fwrite(base_scenario, 1, sizeof base_scenario - 1, f) != sizeof base_scenario - 1 ||
	    fclose(f) != 0) {
		perror("fuzz_set: writing the scenario");
		abort();
	}
	atexit(remove_base);
	/* Without overrides the base must load, or the target fuzzes nothing. */
	if (cs_scenario_load(base_path, NULL, 0, &sc, &diag) != CS_OK) {
		fprintf(stderr, "fuzz_set: the base scenario does not load: %s\n", diag.msg);
		abort();
	}
	cs_scenario_free(sc);
	return 0;
}

static void check_unit(cs_status st, double value, const char *msg)
{
	if (st == CS_OK && (!isfinite(value) || value < 0))
		abort();   /* negative values, NaN and infinities are refused */
	if (st != CS_OK && (st != CS_ERR_INPUT || msg[0] == '\0'))
		abort();   /* a refusal is CS_ERR_INPUT with a message */
}

static void parse_units(const char *text)
{
	char msg[256];
	double v;
	int64_t ns;
	cs_status st;

	msg[0] = '\0';
	st = cs_parse_size(text, &v, msg, sizeof msg);
	check_unit(st, v, msg);
	msg[0] = '\0';
	st = cs_parse_bandwidth(text, &v, msg, sizeof msg);
	check_unit(st, v, msg);
	msg[0] = '\0';
	st = cs_parse_flops(text, &v, msg, sizeof msg);
	check_unit(st, v, msg);
	msg[0] = '\0';
	st = cs_parse_time(text, &ns, msg, sizeof msg);
	check_unit(st, st == CS_OK ? (double)ns : 0.0, msg);
	/* a tiny buffer must still be terminated, never overrun */
	cs_parse_size(text, &v, msg, 1);
	cs_parse_time(text, &ns, msg, 8);
}

static void apply_to_defaults(const char *const *sets, size_t n)
{
	cs_scenario *sc = calloc(1, sizeof *sc);
	cs_diag diag;

	if (!sc)
		return;
	if (cs_config_defaults(sc) != CS_OK)
		abort();
	for (size_t i = 0; i < n; i++) {
		diag.msg[0] = '\0';
		if (cs_config_apply_override(sc, sets[i], &diag) != CS_OK && diag.msg[0] == '\0')
			abort();   /* a refused override says why */
	}
	cs_config_validate(sc, &diag);
	free(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sets[MAX_SETS];
	size_t n = 0;
	cs_scenario *sc = NULL;
	cs_diag diag;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *line = text; n < MAX_SETS; ) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		sets[n++] = line;
		if (!nl)
			break;
		line = nl + 1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(sets[i], '=');
		parse_units(sets[i]);
		if (eq)
			parse_units(eq + 1);
	}
	if (cs_scenario_load(base_path, sets, n, &sc, &diag) == CS_OK) {
		if (!sc)
			abort();
		cs_scenario_free(sc);
	} else if (sc || diag.msg[0] == '\0') {
		abort();
	}
	apply_to_defaults(sets, n);
	free(text);
	return 0;
}
