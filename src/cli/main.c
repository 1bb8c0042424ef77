/*
 * main.c - the clustersim command: dispatch to subcommands.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "clustersim/clustersim.h"
#include "config/config.h"

typedef struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} command;

static const command commands[] = {
	{ "run", cs_cmd_run, "simulate a scenario's training step, rank by rank" },
	{ "validate", cs_cmd_validate, "check a scenario without running it" },
	{ "coll", cs_cmd_coll, "collective timings, nccl-tests style" },
	{ "memory", cs_cmd_memory, "memory per GPU: weights, gradients, optimizer state, activations" },
	{ "pipeline", cs_cmd_pipeline, "a pipeline schedule with unit op times" },
	{ "sweep", cs_cmd_sweep, "a scenario over varied keys, one CSV row per point" },
	{ "plan", cs_cmd_plan, "search parallel plans, rank them by simulated step time" },
	{ "compare", cs_cmd_compare, "a profiler trace's kernel time by class beside a simulation" },
	{ "calibrate", cs_cmd_calibrate, "fit a calibration to a profiler trace or nccl-tests output" },
	{ "goodput", cs_cmd_goodput, "effective training time over days of failures and restarts" },
	{ "list", cs_cmd_list, "GPU and model presets, and the scenarios shipped" },
	{ "export-chakra", cs_cmd_export_chakra, "a scenario's programs as Chakra execution traces" },
	{ "run-chakra", cs_cmd_run_chakra, "simulate Chakra execution traces on a scenario's cluster" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: clustersim COMMAND [options]\n"
	      "       clustersim --version | --help\n"
	      "\n"
	      "A discrete-event performance simulator of distributed LLM training.\n"
	      "\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'clustersim COMMAND --help' explains each command.\n"
	      "\n"
	      "examples:\n"
	      "  clustersim run scenarios/llama3-405b-16k.yaml\n"
	      "  clustersim validate scenarios/ddp-gpt-small.yaml --set cluster.nodes=2\n"
	      "  clustersim coll all_reduce_perf --gpu h100-sxm-80g --nodes 1 -b 8 -e 8G\n"
	      "\n"
	      "exit status: 0 success, 1 simulation failure, 2 bad input\n",
	      f);
}

/* What a command printed must reach standard output whole: a full disk or
 * a closed pipe (SIGPIPE is ignored, so a write gets EPIPE) is an error, not
 * a truncated report with exit 0; a run that could not write its result
 * exits 1. A command that failed already said why (its standard output
 * too, when it wrote its result there). Out of memory is a run that cannot
 * finish: exit 1, as documented. */
static int finish(int rc)
{
	if (rc == CS_ERR_NOMEM)
		rc = 1;
	errno = 0;
	int bad = fflush(stdout) != 0 || ferror(stdout), err = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	if (bad && rc == 0) {
		fprintf(stderr, "clustersim: cannot write the standard output: %s\n",
			strerror(err ? err : EIO));
		return 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	/* a reader that goes away is reported as a write error, not a silent
	 * death by signal before the command can say so */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return finish(0);
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("clustersim %s\n", CS_VERSION);
		return finish(0);
	}
	const char *names[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(cmd, commands[i].name) == 0)
			return finish(commands[i].fn(argc - 1, argv + 1));
		names[i] = commands[i].name;
	}
	const char *s = cs_suggest(cmd, names, NCOMMANDS);
	if (s)
		fprintf(stderr, "clustersim: unknown command '%s' (did you mean '%s'?)\n", cmd, s);
	else
		fprintf(stderr, "clustersim: unknown command '%s' (see 'clustersim --help')\n", cmd);
	return 2;
}
