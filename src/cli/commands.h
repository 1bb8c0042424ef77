/*
 * commands.h - the subcommands main.c dispatches to. Each takes its own
 * argv (argv[0] is the command's name), prints its output to stdout and
 * its errors to stderr, and returns the exit status, cs_status's values:
 * 0 success, 1 the work failed (a simulation, a schedule's deadlock, a
 * search that simulated no plan), 2 bad input, 3 out of memory.
 */
#ifndef CS_CLI_COMMANDS_H
#define CS_CLI_COMMANDS_H

/* `run` and `validate`: simulate a scenario's training step, or check it. */
int cs_cmd_run(int argc, char **argv);
int cs_cmd_validate(int argc, char **argv);
/* `coll`: the nccl-tests twin. */
int cs_cmd_coll(int argc, char **argv);
/* `memory`: the per-GPU training-memory breakdown of a model under a
 * parallel plan, and whether it fits the GPU. */
int cs_cmd_memory(int argc, char **argv);
/* `pipeline`: one pipeline schedule with per-op times, its makespan,
 * bubble and in-flight peaks. */
int cs_cmd_pipeline(int argc, char **argv);
/* `sweep`: a scenario over the cartesian product of varied keys, one CSV
 * row per point. */
int cs_cmd_sweep(int argc, char **argv);
/* `plan`: search the parallel plans of a scenario. */
int cs_cmd_plan(int argc, char **argv);
/* `compare`: a profiler trace beside a simulation. */
int cs_cmd_compare(int argc, char **argv);
/* `calibrate`: per-class factors that make a simulation reproduce a
 * profiler trace, or network factors that make the collective tuner
 * reproduce nccl-tests output, written as a calibration file. */
int cs_cmd_calibrate(int argc, char **argv);
/* `goodput`: effective training time over a run of days under failures,
 * checkpoints and restarts. */
int cs_cmd_goodput(int argc, char **argv);
/* `list`: GPU and model presets, shipped scenarios. */
int cs_cmd_list(int argc, char **argv);
/* `export-chakra` and `run-chakra`. */
int cs_cmd_export_chakra(int argc, char **argv);
int cs_cmd_run_chakra(int argc, char **argv);

#endif
