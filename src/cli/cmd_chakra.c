/*
 * cmd_chakra.c - `clustersim export-chakra`: a scenario's programs as
 * Chakra execution traces, one per rank; and `clustersim run-chakra`: a set
 * of Chakra traces simulated on a scenario's cluster.
 */
#include "cli/commands.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chakra/chakra.h"
#include "cli/args.h"
#include "cli/progress.h"
#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/config.h"
#include "config/scenario.h"
#include "model/model.h"
#include "program/mesh.h"
#include "report/chakra_out.h"
#include "report/report.h"
#include "study/study.h"

static const char export_help[] =
	"usage: clustersim export-chakra SCENARIO.yaml --out DIR [options]\n"
	"\n"
	"Write the programs SCENARIO's ranks run as MLCommons Chakra execution\n"
	"traces, one file per rank, DIR/PREFIX.<rank>.et (the names ASTRA-sim reads),\n"
	"the process groups as DIR/PREFIX.comm_group.json (ASTRA-sim's\n"
	"--comm-group-configuration) and DIR/PREFIX.manifest (each file's size and\n"
	"checksum, which run-chakra checks). Compute nodes carry the durations of\n"
	"clustersim's compute model; collectives their type, size and process group;\n"
	"pipeline messages are send/receive pairs. See docs/chakra.md.\n"
	"\n"
	"options:\n"
	"  --out DIR           the directory to write: made whole in a temporary\n"
	"                      folder beside it and renamed into place; an old\n"
	"                      export there is replaced (a folder holding other\n"
	"                      files is refused); SIGINT or SIGTERM mid-export\n"
	"                      removes the temporary folder, the old export kept\n"
	"  --max-size SIZE     refuse an export estimated larger (default 1GiB)\n"
	"  --prefix NAME       file name prefix (default: the scenario's name)\n"
	"  --astra-sim         write what ASTRA-sim reads: process groups named 1,\n"
	"                      2, ... (not tp.0, dp.3, ...), an all-gather's size\n"
	"                      the part each rank gives (not the gathered size)\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable)\n"
	"  -h, --help          this help\n"
	"\n"
	"example:\n"
	"  clustersim export-chakra scenarios/ddp-gpt-small.yaml --out et/\n"
	"\n"
	"exit status: 0 success, 1 failure, 2 bad input\n";

static const char run_help[] =
	"usage: clustersim run-chakra TRACES --cluster SCENARIO.yaml [options]\n"
	"\n"
	"Simulate a set of Chakra execution traces, one per rank, on SCENARIO's\n"
	"cluster: compute nodes take their recorded durations, collectives run on\n"
	"their process groups with clustersim's tuner (and flow network when the\n"
	"scenario asks), sends and receives become pipeline messages. TRACES is a\n"
	"directory of PREFIX.<rank>.et files or the prefix itself (DIR/PREFIX), as\n"
	"ASTRA-sim takes it. SCENARIO's parallelism names the process groups; its\n"
	"model and training only feed MFU and memory in the report.\n"
	"A trace's pg_name is KIND.INSTANCE (tp.3), KIND (the rank's tp group), a\n"
	"name of the comm-group file (matched to the scenario's groups by their\n"
	"ranks) or absent (all ranks).\n"
	"\n"
	"options:\n"
	"  --cluster FILE      the scenario whose cluster runs the traces (required\n"
	"                      unless --astra-network gives the cluster)\n"
	"  --astra-network FILE  ASTRA-sim's analytical network.yml as the cluster:\n"
	"                      its dimensions, NPUs, link bandwidths and latencies\n"
	"                      (over --cluster's, or an H100 cluster on ideal machines)\n"
	"  --astra-system FILE   ASTRA-sim's system.json: its all-reduce algorithm\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable)\n"
	"  --comm-groups FILE  named process groups, {\"NAME\": [ranks], ...} as for\n"
	"                      ASTRA-sim (default: PREFIX.comm_group.json beside the\n"
	"                      traces, when there is one)\n"
	"  --format text|json|csv  output format (default text)\n"
	"  --progress          show progress on stderr (the default: a rewritten line\n"
	"                      on a terminal, elsewhere a line every 10 s), and a\n"
	"                      'wrote FILE' line for each file written\n"
	"  --no-progress       show neither\n"
	"  -h, --help          this help\n"
	"\n"
	"example:\n"
	"  clustersim export-chakra scenarios/ddp-gpt-small.yaml --out et/\n"
	"  clustersim run-chakra et/ --cluster scenarios/ddp-gpt-small.yaml\n"
	"  clustersim run-chakra tests/data/chakra/astra-sim/all_reduce_8npus_1MB \\\n"
	"      --astra-network tests/data/chakra/astra-sim/HGX-H100-validated.yml \\\n"
	"      --astra-system tests/data/chakra/astra-sim/HGX-H100-validated.json\n"
	"\n"
	"exit status: 0 success, 1 simulation failure, 2 bad input\n";

enum {
	O_OUT = 1,
	O_PREFIX,
	O_SET,
	O_HELP,
	O_CLUSTER,
	O_FORMAT,
	O_PROGRESS,
	O_NO_PROGRESS,
	O_GROUPS,
	O_ASTRA,
	O_ASTRA_NET,
	O_ASTRA_SYS,
	O_MAX_SIZE
};

static const cs_opt export_opts[] = {
	{ "out", 1, O_OUT },   { "prefix", 1, O_PREFIX },   { "set", 1, O_SET },
	{ "help", 0, O_HELP }, { "astra-sim", 0, O_ASTRA }, { "max-size", 1, O_MAX_SIZE },
	{ 0, 0, 0 },
};

static const cs_opt run_opts[] = {
	{ "cluster", 1, O_CLUSTER },         { "set", 1, O_SET },
	{ "format", 1, O_FORMAT },           { "progress", 0, O_PROGRESS },
	{ "no-progress", 0, O_NO_PROGRESS }, { "help", 0, O_HELP },
	{ "comm-groups", 1, O_GROUPS },      { "astra-network", 1, O_ASTRA_NET },
	{ "astra-system", 1, O_ASTRA_SYS },  { 0, 0, 0 },
};

/* A file name prefix from the scenario's name. */
static void default_prefix(const char *name, char *out, size_t cap)
{
	size_t n = 0;
	for (const char *p = name; p && *p && n + 1 < cap; p++)
		out[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
					   *p == '-' || *p == '_'
				   ? *p
				   : '_';
	out[n] = 0;
	if (n == 0)
		snprintf(out, cap, "trace");
}

/* The scenario with its --set overrides: 0, or the exit status after
 * printing the problem. */
static int load(const cs_scenario_args *sa, cs_scenario **sc)
{
	cs_diag diag = { { 0 } };
	cs_status st = cs_scenario_load(sa->file, sa->sets, sa->nsets, sc, &diag);
	if (st == CS_OK)
		return 0;
	fprintf(stderr, "%s\n", CS_CLEAN(diag));
	return st == CS_ERR_INPUT ? 2 : 1;
}

/* The cluster of ASTRA-sim's network and system files, over the
 * scenario's (or, without one, a cluster of H100s on ideal machines): 0,
 * or the exit status after printing the problem. */
static int load_astra(const cs_scenario_args *sa, const char *net, const char *sys, cs_scenario **sc)
{
	static const char base[] =
		"cluster: {gpu: h100-sxm-80g}\n"
		"model: {arch: gpt, layers: 1, hidden: 1024, heads: 16, ffn: 4096, vocab: 32000}\n"
		"training: {seq_len: 2048, micro_batch: 1}\n"
		"fleet: ideal\n";
	cs_chakra_astra as;
	cs_diag diag = { { 0 } };
	if (cs_chakra_astra_read(net, sys, &as, &diag) != CS_OK) {
		fprintf(stderr, "clustersim run-chakra: %s\n", CS_CLEAN(diag));
		return 2;
	}
	cs_scenario_args all = { .file = sa->file };
	for (int i = 0; i < as.nsets && all.nsets < CS_ARGS_MAX_SETS; i++)
		all.sets[all.nsets++] = as.sets[i];
	for (size_t i = 0; i < sa->nsets && all.nsets < CS_ARGS_MAX_SETS; i++)
		all.sets[all.nsets++] = sa->sets[i];
	char tmp[] = "/tmp/clustersim-astra-XXXXXX";
	int rc;
	if (!sa->file) {
		int fd = mkstemp(tmp);
		FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
		char name[128];
		const char *slash = net ? strrchr(net, '/') : NULL;
		default_prefix(net ? (slash ? slash + 1 : net) : "astra-sim", name, sizeof name);
		char *dot = strrchr(name, '_'); /* the file's extension, made a '_' */
		if (dot && (strcmp(dot, "_yml") == 0 || strcmp(dot, "_yaml") == 0))
			*dot = 0;
		if (!f || fprintf(f, "name: %s\n%s", name, base) < 0 || fclose(f) != 0) {
			fprintf(stderr, "clustersim run-chakra: cannot write '%s': %s\n", tmp,
				strerror(errno));
			return 1;
		}
		all.file = tmp;
	}
	rc = load(&all, sc);
	if (!sa->file)
		unlink(tmp);
	if (rc == 0 && as.unmapped[0])
		fprintf(stderr, "note: ASTRA-sim system keys without a counterpart here, not mapped: %s\n",
			as.unmapped);
	return rc;
}

/* What rank 0's program communicates. */
static void trace_comm(const cs_scenario *sc, const cs__programs *given, cs_trace_comm *c)
{
	memset(c, 0, sizeof *c);
	c->comm_only = 1;
	for (int64_t t = 0; t < given->n; t++)
		if (given->progs[t].compute_ns > 0)
			c->comm_only = 0;
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	const cs_program *p = &given->progs[given->tmpl_of[0]];
	int seen[CS_COLL_OPS] = { 0 };
	for (int s = 0; s < CS_STREAMS; s++)
		for (int32_t i = 0; i < p->nops[s]; i++) {
			const cs_op *op = &p->ops[s][i];
			if (op->kind == CS_OP_SEND) {
				c->sends++;
				c->send_bytes += op->bytes;
			}
			if (op->kind != CS_OP_COLL)
				continue;
			cs_group g =
				cs_mesh_group(&mesh, (cs_group_kind)op->group, 0, sc->cluster.gpus_per_node);
			c->colls++;
			c->coll_bytes += op->bytes;
			c->bus_bytes +=
				op->bytes * cs_coll_bus_factor((cs_coll_op)op->coll, cs_group_size(&g));
			if (!seen[op->coll]++) {
				size_t n = strlen(c->ops);
				snprintf(c->ops + n, sizeof c->ops - n, "%s%s", n ? ", " : "",
					 cs_coll_op_name((cs_coll_op)op->coll));
			}
		}
}

/* The ranks' FLOPs per step as the traces carry them (clustersim's carry
 * cs_model_flops; other tools' none: 0). */
static double trace_flops(const cs_scenario *sc, const cs__programs *given)
{
	double f = 0;
	int64_t world = cs_scenario_gpus(sc);
	for (int64_t r = 0; r < world; r++)
		f += given->progs[given->tmpl_of[r]].model_flops;
	return f;
}

/* Whether the scenario's model stands for the traces' (its MFU, tokens/s
 * and memory are then theirs): the traces carry FLOPs, within a factor
 * CS__FLOPS_MATCH of the scenario's model's (between its causal count and
 * what its kernels compute, recomputation included), and the step runs
 * them below the GPUs' peak.
 * Else a note says why the report is that of traces without a model. */
#define CS__FLOPS_MATCH 1.5
static bool model_stands(const cs_scenario *sc, double flops, const cs_metrics *m)
{
	if (!(flops > 0))
		return false;
	const cs_training_spec *t = &sc->training;
	double hw = cs_model_hw_flops_per_step_p(&sc->model, t->seq_len, t->global_batch, &sc->parallel);
	double causal = cs_model_causal_flops_per_step(&sc->model, t->seq_len, t->global_batch);
	if (!(flops > fmin(hw, causal) / CS__FLOPS_MATCH && flops < fmax(hw, causal) * CS__FLOPS_MATCH)) {
		fprintf(stderr,
			"note: the traces compute %.4g FLOPs a step, the scenario's model %.4g: they are not "
			"its traces, so the report gives no MFU, tokens/s or memory\n",
			flops, causal);
		return false;
	}
	if (!(m->mfu <= 1.0)) {
		fprintf(stderr,
			"note: the traces run the scenario's model above the GPUs' peak (MFU %.4g %%): their "
			"durations are not the model's, so the report gives no MFU, tokens/s or memory\n",
			100 * m->mfu);
		return false;
	}
	return true;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What an export's folder may hold to be replaced: its traces, process
 * groups and manifest (a name ending .et, .comm_group.json or .manifest).
 * 0 when `dir` is missing, empty or such a folder (*old set when it holds
 * anything), else 2 after saying what is in the way. */
static int replaceable(const char *dir, int *old)
{
	static const char *const tails[] = { ".et", ".comm_group.json", ".manifest" };
	struct stat sb;
	*old = 0;
	if (stat(dir, &sb) != 0)
		return 0;
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "clustersim export-chakra: cannot write '%s': it is not a directory\n", dir);
		return 2;
	}
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "clustersim export-chakra: cannot open '%s': %s\n", dir, strerror(errno));
		return 2;
	}
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		size_t n = strlen(e->d_name);
		int ours = 0;
		for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
			size_t k = strlen(tails[t]);
			ours |= n > k && strcmp(e->d_name + n - k, tails[t]) == 0;
		}
		if (!ours) {
			fprintf(stderr,
				"clustersim export-chakra: cannot replace '%s': it holds '%s', which is no "
				"part of an export (give a new or empty directory)\n",
				dir, e->d_name);
			rc = 2;
		}
		*old = 1;
	}
	closedir(d);
	return rc;
}

/* Remove the files of `dir` and the folder (an export's: no subfolders). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		char path[4400];
		for (struct dirent *e; (e = readdir(d)) != NULL;)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
			    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
				unlink(path);
		closedir(d);
	}
	rmdir(dir);
}

/* `base` (its trailing slashes dropped) with `tail`, "DIR.tmp.XXXXXX", as a
 * folder mkdtemp makes beside it: 0, or -1 with errno. */
static int sibling_dir(const char *base, const char *tail, char *out, size_t cap)
{
	size_t n = strlen(base);
	while (n > 1 && base[n - 1] == '/')
		n--;
	if (snprintf(out, cap, "%.*s%s", (int)n, base, tail) >= (int)cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(out) ? 0 : -1;
}

/* The signal that interrupts an export, 0 while none: the one piece of
 * process state here, what a handler can reach. The export starts no file
 * after it; the command removes its folder and ends by the signal. */
static volatile sig_atomic_t export_stop;

static void on_signal(int sig) { export_stop = sig; }

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP (sizeof stop_signals / sizeof stop_signals[0])

/* Catch the signals that end a command into export_stop, those not
 * ignored (nohup's stay ignored); `old` keeps what was there. */
static void catch_stop(struct sigaction old[NSTOP])
{
	export_stop = 0;
	for (size_t i = 0; i < NSTOP; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(stop_signals[i], NULL, &old[i]) == 0 && old[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
	}
}

/* What was there before catch_stop back; a signal caught meanwhile is
 * raised again, and ends the process as it would have. */
static void release_stop(const struct sigaction old[NSTOP])
{
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_signals[i], &old[i], NULL);
	if (export_stop) {
		signal(export_stop, SIG_DFL);
		raise(export_stop);
	}
}

/* Put the finished export `tmp` where `out` is: renamed over a missing or
 * empty folder; an old export is moved aside first and removed after. 0, or
 * 1 after saying why (the export is left in tmp). */
static int put_in_place(const char *tmp, const char *out, int old)
{
	char aside[4200] = "";
	if (old && (sibling_dir(out, ".old.XXXXXX", aside, sizeof aside) != 0 || rename(out, aside) != 0)) {
		fprintf(stderr, "clustersim export-chakra: cannot move the old export '%s' aside: %s\n", out,
			strerror(errno));
		if (aside[0])
			rmdir(aside);
		return 1;
	}
	if (rename(tmp, out) != 0) {
		int err = errno;
		if (aside[0])
			(void)rename(aside, out); /* the old export back */
		fprintf(stderr, "clustersim export-chakra: cannot rename '%s' to '%s': %s\n", tmp, out,
			strerror(err));
		return 1;
	}
	if (aside[0])
		remove_dir(aside);
	return 0;
}

int cs_cmd_export_chakra(int argc, char **argv)
{
	cs_args a;
	cs_scenario_args sa = { 0 };
	const char *out = NULL, *prefix = NULL, *val;
	int id, astra_sim = 0;
	double max_size = (double)CS_CHAKRA_EXPORT_MAX_BYTES;
	cs_args_init(&a, "export-chakra", argc, argv);
	while ((id = cs_args_next(&a, export_opts, &val)) != CS_ARGS_END) {
		switch (id) {
		case CS_ARGS_ERROR: return 2;
		case CS_ARGS_POSITIONAL:
		case O_SET:
			if (cs_args_scenario(&a, &sa, id == O_SET, val))
				return 2;
			break;
		case O_OUT: out = val; break;
		case O_ASTRA: astra_sim = 1; break;
		case O_PREFIX:
			if (!*val || strchr(val, '/'))
				return cs_args_fail(&a, "bad prefix '%s' (a file name, no '/')", val);
			prefix = val;
			break;
		case O_MAX_SIZE: {
			char msg[256];
			if (cs_parse_size(val, &max_size, msg, sizeof msg) != CS_OK || max_size < 1)
				return cs_args_fail(&a, "bad value '%s' for '--max-size' (a size, e.g. 4GiB)",
						    val);
			break;
		}
		case O_HELP: fputs(export_help, stdout); return 0;
		}
	}
	if (!sa.file)
		return cs_args_fail(&a, "no scenario file given");
	if (!out)
		return cs_args_fail(&a, "no output directory given (--out DIR)");
	int old;
	if (replaceable(out, &old) != 0)
		return 2;
	cs_scenario *sc = NULL;
	int rc = load(&sa, &sc);
	if (rc)
		return rc;
	cs_diag diag = { { 0 } };
	cs_status st;
	char pre[128], tmp[4200];
	default_prefix(prefix ? prefix : sc->name, pre, sizeof pre);
	/* from here a signal stops the export between files, and the folder goes */
	struct sigaction old_act[NSTOP];
	catch_stop(old_act);
	/* a fresh folder beside DIR, renamed into place once whole */
	if (sibling_dir(out, ".tmp.XXXXXX", tmp, sizeof tmp) != 0) {
		fprintf(stderr, "clustersim export-chakra: cannot make a directory beside '%s': %s\n", out,
			strerror(errno));
		cs_scenario_free(sc);
		release_stop(old_act);
		return 2;
	}
	mode_t mask = umask(022);
	umask(mask);
	(void)chmod(tmp, 0777 & ~mask); /* mkdtemp's 0700 is for while it is made */
	cs_chakra_written w;
	double t0 = now_s();
	st = cs_chakra_export(sc, tmp, pre, astra_sim, max_size < 9.2e18 ? (int64_t)max_size : INT64_MAX,
			      &export_stop, &w, &diag);
	cs_scenario_free(sc);
	if (st == CS_OK && export_stop) /* complete, but the signal came first */
		st = CS_ERR_SIM;
	/* put in place whole: a signal now waits in export_stop until it is */
	if (st != CS_OK || put_in_place(tmp, out, old) != 0) {
		remove_dir(tmp);
		if (st != CS_OK && !export_stop)
			fprintf(stderr, "clustersim export-chakra: %s\n", CS_CLEAN(diag));
		release_stop(old_act);
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	release_stop(old_act);
	printf("wrote %lld traces of %lld distinct program%s (%lld nodes, %.1f MB) to %s/%s.<rank>.et "
	       "in %.2f s; process groups in %s/%s.comm_group.json\n",
	       (long long)w.files, (long long)w.templates, w.templates == 1 ? "" : "s", (long long)w.nodes,
	       (double)w.bytes / 1e6, out, pre, now_s() - t0, out, pre);
	return 0;
}

int cs_cmd_run_chakra(int argc, char **argv)
{
	cs_args a;
	cs_scenario_args sa = { 0 };
	const char *traces = NULL, *groups = NULL, *astra_net = NULL, *astra_sys = NULL, *val;
	int id, format = 0, progress = cs_cli_progress_default();
	cs_args_init(&a, "run-chakra", argc, argv);
	while ((id = cs_args_next(&a, run_opts, &val)) != CS_ARGS_END) {
		switch (id) {
		case CS_ARGS_ERROR: return 2;
		case CS_ARGS_POSITIONAL:
			if (traces)
				return cs_args_fail(&a, "unexpected argument '%s'", val);
			traces = val;
			break;
		case O_CLUSTER:
		case O_SET:
			if (cs_args_scenario(&a, &sa, id == O_SET, val))
				return 2;
			break;
		case O_GROUPS: groups = val; break;
		case O_ASTRA_NET: astra_net = val; break;
		case O_ASTRA_SYS: astra_sys = val; break;
		case O_FORMAT:
			if (strcmp(val, "text") && strcmp(val, "json") && strcmp(val, "csv"))
				return cs_args_fail(&a, "unknown format '%s' (text, json or csv)", val);
			format = strcmp(val, "json") == 0 ? 1 : strcmp(val, "csv") == 0 ? 2 : 0;
			break;
		case O_PROGRESS: progress = cs_cli_progress_default(); break;
		case O_NO_PROGRESS: progress = 0; break;
		case O_HELP: fputs(run_help, stdout); return 0;
		}
	}
	if (!traces)
		return cs_args_fail(&a, "no traces given (a directory, or DIR/PREFIX)");
	if (!sa.file && !astra_net)
		return cs_args_fail(&a, "no cluster given (--cluster SCENARIO.yaml, or --astra-network "
					"network.yml)");
	cs_scenario *sc = NULL;
	int rc = astra_net || astra_sys ? load_astra(&sa, astra_net, astra_sys, &sc) : load(&sa, &sc);
	if (rc)
		return rc;
	cs_diag diag = { { 0 } };
	cs_status st;
	double t0 = now_s();
	cs_chakra_set *set = NULL;
	cs_result *res = NULL;
	cs_trace_comm comm;
	double flops = 0;
	st = cs_chakra_load(traces, groups, sc, &set, &diag);
	if (st == CS_OK) {
		int64_t decoded, files = cs_chakra_set_files(set, &decoded);
		cs__programs given = { .progs = cs_chakra_set_programs(set, &given.n),
				       .tmpl_of = cs_chakra_set_template_of(set) };
		fprintf(stderr, "imported %lld traces (%lld decoded, %lld distinct program%s) in %.2f s\n",
			(long long)files, (long long)decoded, (long long)given.n, given.n == 1 ? "" : "s",
			now_s() - t0);
		const cs_chakra_skipped *sk = cs_chakra_set_skipped(set);
		if (sk->nodes)
			fprintf(stderr,
				"note: skipped %lld CPU-side communication node%s (no 'comm_type', or "
				"'is_cpu_op' true) in %lld trace%s: %s%s\n",
				(long long)sk->nodes, sk->nodes == 1 ? "" : "s", (long long)sk->files,
				sk->files == 1 ? "" : "s", sk->names, sk->more ? ", ..." : "");
		if (sk->ctrl_deps)
			fprintf(stderr,
				"note: left out %lld control dependenc%s (on nodes not in the traces%s); "
				"data dependencies order the nodes, as Chakra's feeder takes them\n",
				(long long)sk->ctrl_deps, sk->ctrl_deps == 1 ? "y" : "ies",
				sk->ctrl_cycles ? ", or closing a cycle" : "");
		cs_run_opts opts = { .progress = progress };
		trace_comm(sc, &given, &comm);
		flops = trace_flops(sc, &given);
		st = cs__simulate(sc, &(cs__sim_request){ .opts = &opts, .given = &given }, &res, &diag);
	}
	cs_chakra_set_free(set);
	if (st != CS_OK) {
		fprintf(stderr, "clustersim run-chakra: %s\n", CS_CLEAN(diag));
		cs_scenario_free(sc);
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	const cs_metrics *m = cs_result_metrics(res);
	if (!(m->step_time_s > 0)) {
		fprintf(stderr, "clustersim run-chakra: the traces take no time (no node of theirs lasts): "
				"there is no step to report\n");
		cs_result_free(res);
		cs_scenario_free(sc);
		return 2;
	}
	bool foreign = !model_stands(sc, flops, m);
	if (foreign && format == 2)
		cs_report_trace_csv(stdout, sc->name, m, &comm);
	else if (foreign && format)
		cs_report_trace_json(stdout, sc->name, m, &comm);
	else if (foreign)
		cs_report_trace_text(stdout, sc->name, m, &comm);
	else if (format == 2)
		cs_report_csv(stdout, sc->name, m);
	else if (format)
		cs_report_json(stdout, sc->name, m, 2);
	else
		cs_report_text(stdout, sc->name, m, cs_cli_color(1));
	cs_result_free(res);
	cs_scenario_free(sc);
	return 0;
}
