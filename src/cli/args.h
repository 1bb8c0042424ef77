/*
 * args.h - the subcommands' option parser: --name value, --name=value,
 * positional arguments, and a "did you mean" for a misspelt option.
 */
#ifndef CS_CLI_ARGS_H
#define CS_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/scenario.h"

typedef struct cs_opt {
	const char *name; /* without the dashes */
	int has_arg;
	int id; /* > 0 */
} cs_opt;

typedef struct cs_args {
	const char *cmd; /* "run", for messages */
	int argc;
	char **argv;
	int i;
	FILE *err; /* where messages go: stderr unless the caller says */
} cs_args;

enum { CS_ARGS_END = -1, CS_ARGS_ERROR = -2, CS_ARGS_POSITIONAL = 0 };

/* What a command's parser returns after printing its --help: the command
 * stops there and exits 0 (after main has checked that standard output
 * took the text). */
#define CS_ARGS_HELP_SHOWN (-1)

void cs_args_init(cs_args *a, const char *cmd, int argc, char **argv);
/* The next option's id with its value in *val (NULL without one), or
 * CS_ARGS_POSITIONAL with the argument in *val, CS_ARGS_END, or
 * CS_ARGS_ERROR after printing the problem to stderr. `opts` ends with a
 * zeroed entry. */
int cs_args_next(cs_args *a, const cs_opt *opts, const char **val);

/* The scenario file and the --set overrides of the commands that load one. */
#define CS_ARGS_MAX_SETS 256

typedef struct cs_scenario_args {
	const char *file;
	const char *sets[CS_ARGS_MAX_SETS];
	size_t nsets;
	char found[4096]; /* the file a scenario given by name was found as */
} cs_scenario_args;

/* Take a positional argument as the scenario file (one only; a shipped
 * scenario's name as cs_cli_scenario_find finds it) or, with `is_set`, a
 * --set value. 0, or 2 after printing the problem. */
int cs_args_scenario(const cs_args *a, cs_scenario_args *sa, int is_set, const char *val);

/* The folders where shipped scenarios are looked for, the first first:
 * ./scenarios when it is a folder, then the build's: the source tree's
 * scenarios/ for a binary run from its build folder, else the installed
 * ones (meson's datadir/clustersim/scenarios). Returns their count. */
int cs_cli_scenario_dirs(const char *dirs[2]);

/* The file a scenario argument `arg` names: `arg` itself when it is a file
 * (or '-', or an absolute path); else NAME or NAME.yaml in the folders of
 * cs_cli_scenario_dirs, written into buf (n bytes), after saying on
 * standard error which file is read. NULL when `arg` is no file and no
 * shipped scenario's name, after saying so (a path or a NAME.yaml that
 * does not exist is left to the loader, which names it). */
const char *cs_cli_scenario_find(const cs_args *a, const char *arg, char *buf, size_t n);

/* What compare and calibrate both take: a trace and a scenario, given in
 * that order, the scenario's --set overrides and --steps. */
typedef struct cs_trace_args {
	const char *trace;
	cs_scenario_args sc;
	int64_t steps;       /* 0: the trace's */
	const char *classes; /* --kernel-classes FILE, or NULL */
} cs_trace_args;

/* Take cs_args_next's `id` when it is one of those (o_set, o_steps,
 * o_classes: the command's ids for --set, --steps and --kernel-classes):
 * 1 when taken, 0 when not, 2 after printing the problem. */
int cs_trace_args_take(cs_args *a, int id, const char *val, int o_set, int o_steps, int o_classes,
		       cs_trace_args *t);
/* 0 when the trace and the scenario were given, else 2 after saying so. */
int cs_trace_args_check(cs_args *a, const cs_trace_args *t);

/* A whole number from lo to hi in *out: 0, or -1 when `s` is not one (the
 * caller words the message). */
int cs_args_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A parallel count (`--jobs`, and run's `--threads`, named `opt`) from 1
 * to hi in *out: 0, or 2 after printing the problem. */
int cs_args_jobs(const cs_args *a, const char *opt, const char *val, int64_t hi, int *out);

/* Print "clustersim CMD: <message>" and a pointer to --help; returns 2. */
int cs_args_fail(const cs_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether stdout/stderr is a terminal and colour is wanted (NO_COLOR unset). */
int cs_cli_color(int fd);

/* A message to print: its control characters (a scenario's key can hold
 * an escape sequence) rewritten in place as \xNN, cut to fit the buffer of
 * `cap` bytes. Returns msg. */
char *cs_cli_clean(char *msg, size_t cap);
#define CS_CLEAN(d) cs_cli_clean((d).msg, sizeof(d).msg)

/* Before the work: each output outs[i] (NULL entries skipped) can be
 * written and is none of the inputs (nor, with a scenario `sc`, the kernel
 * profile or calibration it names), and no two outputs are one file. 0, or
 * 2 after printing "clustersim CMD: <message>". At most CS_CLI_MAX_INPUTS
 * inputs are looked at. */
#define CS_CLI_MAX_INPUTS 16
int cs_cli_check_outputs(const char *cmd, const char *const *outs, size_t nouts, const char *const *inputs,
			 size_t ninputs, const cs_scenario *sc);

/* Write `path` atomically (report/out.h) with write(f, ctx), which returns
 * 0, or -1 when it could not. 0, or 1 after printing "clustersim CMD:
 * <message>". */
typedef int cs_cli_writer(FILE *f, const void *ctx);
int cs_cli_write(const char *cmd, const char *path, cs_cli_writer *write, const void *ctx);

#endif
