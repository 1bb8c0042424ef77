/*
 * cmd_compare.c - `clustersim compare`: a PyTorch profiler (Kineto) trace
 * of one GPU's training steps beside the simulation of a scenario, per
 * class of kernel: time and kernels per step, measured and simulated.
 *
 * The trace and the simulation come from src/study/compare.c (shared with
 * `clustersim calibrate`): the trace summarised by kineto.c, the scenario
 * loaded with the --set overrides and simulated as `clustersim run` does;
 * what is printed, from src/report/compare_out.c. Everything allocated
 * here is freed here.
 */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/progress.h"
#include "clustersim/clustersim.h"
#include "report/compare_out.h"
#include "study/compare.h"

static const char compare_help[] =
	"usage: clustersim compare TRACE.json[.gz]|FOLDER SCENARIO.yaml [options]\n"
	"\n"
	"Set a PyTorch profiler (Kineto) Chrome trace of one GPU's training steps\n"
	"beside a simulation of SCENARIO. Per class of kernel, per step: the\n"
	"trace's kernel time and count, the simulated time and count of the\n"
	"critical rank, and the error. Then the four classes together (compute),\n"
	"what the trace has and the simulation does not time as kernels (NCCL\n"
	"kernels, memcpy, memset), the GPU's idle time (trace: from its first\n"
	"kernel's start to its last one's end, minus the union of the kernels;\n"
	"simulated: host launch waits and idle time no transfer explains), and\n"
	"that span against the simulated step time. A trace of another GPU (its\n"
	"deviceProperties, its kernels' sm80/sm90 tags) or of another job (its\n"
	"kernels a step, its GEMM time) is warned of on standard error.\n"
	"\n"
	"Kernels are classified by name, ignoring case: 'nccl' communication;\n"
	"'adam' (or multi_tensor_apply with 'fusedoptimizer') optimizer; 'sdpa',\n"
	"'fmha', 'flash', 'cudnn::fusion', 'attention', Triton's '_attn_fwd' and\n"
	"'_attn_bwd' attention; 'nvjet', 'gemm' (not fbgemm's), 'cutlass', 'xmma',\n"
	"'cublas', ROCm's 'Cijk_', cuDNN's 'convolve' and 'winograd', Triton's\n"
	"'triton_tem_' with 'mm' gemm; anything else memory_bound (--kernels\n"
	"lists which kernel went where). Steps are\n"
	"the trace's ProfilerStep#N annotations (without any, the whole trace is\n"
	"one step); the figures are the trace's totals divided by the steps.\n"
	"The trace may be gzip-compressed; it is streamed, one event in memory at a\n"
	"time, whatever its size (an event of more than 16 MiB is refused).\n"
	"A FOLDER of traces, one per GPU of the job (every NAME.json and\n"
	"NAME.json.gz in it: rank-0.json.gz..., or torch.profiler's\n"
	"HOST_PID.pt.trace.json), is read as their mean, then one line per GPU\n"
	"(by its distributedInfo rank) and the slowest; the traces must hold the\n"
	"same steps and GPU.\n"
	"\n"
	"options:\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable)\n"
	"  --steps N           the trace holds N steps (default: its ProfilerStep\n"
	"                      annotations, or 1)\n"
	"  --kernel-classes FILE   classify kernels by FILE's rules first: a class\n"
	"                      (gemm, attention, memory_bound, optimizer,\n"
	"                      communication) and a name pattern a line\n"
	"  --format text|json|csv   output format (default text)\n"
	"  --plot FILE.svg     also chart the rows: per class, the trace's time per\n"
	"                      step beside the simulated one, with the error\n"
	"  --kernels           list the trace's kernels by name instead, the most\n"
	"                      time first: time and kernels per step and the class\n"
	"                      each is counted in\n"
	"  --progress          show progress on stderr (the default: a rewritten line\n"
	"                      on a terminal, elsewhere a line every 10 s)\n"
	"  --no-progress       never show progress\n"
	"  -h, --help          this help\n"
	"\n"
	"examples:\n"
	"  clustersim compare tests/data/trace_llama8l-h4096-s8192.json.gz \\\n"
	"      scenarios/h200-llama8l-h4096-s8192.yaml\n"
	"  clustersim compare tests/data/trace_gpt-h5120-8l-s2048-mb4.json.gz \\\n"
	"      scenarios/h200-gpt-h5120-8l-s2048-mb4.yaml --format json\n"
	"  clustersim compare tests/data/trace_llama8l-h4096-s8192.json.gz \\\n"
	"      scenarios/h200-llama8l-h4096-s8192.yaml --set training.cuda_graphs=true --format csv\n"
	"\n"
	"exit status: 0 success, 1 simulation failure, 2 bad input\n";

enum { O_SET = 1, O_STEPS, O_CLASSES, O_FORMAT, O_KERNELS, O_PLOT, O_PROGRESS, O_NO_PROGRESS, O_HELP };

static const cs_opt compare_opts[] = {
	{ "set", 1, O_SET },
	{ "steps", 1, O_STEPS },
	{ "kernel-classes", 1, O_CLASSES },
	{ "format", 1, O_FORMAT },
	{ "kernels", 0, O_KERNELS },
	{ "plot", 1, O_PLOT },
	{ "progress", 0, O_PROGRESS },
	{ "no-progress", 0, O_NO_PROGRESS },
	{ "help", 0, O_HELP },
	{ 0, 0, 0 },
};

enum { F_TEXT, F_JSON, F_CSV };

typedef struct compare_args {
	cs_trace_args in;
	int format;
	bool kernels;     /* --kernels: the trace's kernels by name instead */
	const char *plot; /* --plot FILE.svg */
	int progress;     /* CS_PROGRESS_* */
} compare_args;

static int parse(cs_args *a, compare_args *r)
{
	const char *val;
	int id;
	memset(r, 0, sizeof *r);
	r->progress = cs_cli_progress_default();
	while ((id = cs_args_next(a, compare_opts, &val)) != CS_ARGS_END) {
		int taken = cs_trace_args_take(a, id, val, O_SET, O_STEPS, O_CLASSES, &r->in);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		switch (id) {
		case CS_ARGS_ERROR: return 2;
		case O_FORMAT:
			if (strcmp(val, "text") == 0)
				r->format = F_TEXT;
			else if (strcmp(val, "json") == 0)
				r->format = F_JSON;
			else if (strcmp(val, "csv") == 0)
				r->format = F_CSV;
			else
				return cs_args_fail(a, "unknown format '%s' (text, json or csv)", val);
			break;
		case O_KERNELS: r->kernels = true; break;
		case O_PLOT:
			if (!val[0] || strcmp(val, "-") == 0)
				return cs_args_fail(a, "'--plot' needs a file name (got '%s')", val);
			r->plot = val;
			break;
		case O_PROGRESS: r->progress = cs_cli_progress_default(); break;
		case O_NO_PROGRESS: r->progress = CS_PROGRESS_NONE; break;
		case O_HELP: fputs(compare_help, stdout); return CS_ARGS_HELP_SHOWN;
		}
	}
	return cs_trace_args_check(a, &r->in);
}

typedef struct plot {
	const cs_compare *c;
	const char *trace;
} plot;

static int write_plot(FILE *f, const void *ctx)
{
	const plot *p = ctx;
	return cs_compare_write_svg(f, p->c, p->trace, NULL);
}

int cs_cmd_compare(int argc, char **argv)
{
	cs_args a;
	compare_args r;
	cs_args_init(&a, "compare", argc, argv);
	int prc = parse(&a, &r);
	if (prc)
		return prc == CS_ARGS_HELP_SHOWN ? 0 : 2;
	const char *outs[] = { r.plot }, *ins[] = { r.in.trace, r.in.sc.file, r.in.classes };
	if (r.plot && cs_cli_check_outputs("compare", outs, 1, ins, 3, NULL) != 0)
		return 2;
	cs_diag diag = { { 0 } };
	cs_compare c;
	cs_cli_progress pr;
	cs_cli_progress_init(&pr, r.progress, "compare");
	cs_cli_progress_phase(&pr, "reading the trace, simulating the scenario");
	cs_status st = cs_compare_open(r.in.trace, r.in.classes, r.in.sc.file, r.in.sc.sets, r.in.sc.nsets,
				       r.in.steps, &c, &diag);
	cs_cli_progress_end(&pr);
	if (st != CS_OK) {
		if (!c.sim_failed) {
			fprintf(stderr, "%s\n", CS_CLEAN(diag));
			return st;
		}
		fprintf(stderr, "clustersim compare: %s\n", CS_CLEAN(diag));
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	/* the scenario's own kernel profile and calibration are inputs too */
	if (r.plot && cs_cli_check_outputs("compare", outs, 1, ins, 3, c.sc) != 0) {
		cs_compare_close(&c);
		return 2;
	}
	char why[2048];
	if (cs_compare_device(&c, why, sizeof why))
		fprintf(stderr, "clustersim compare: warning: %s: %s\n", r.in.trace, why);
	if (cs_compare_workload(&c, why, sizeof why))
		fprintf(stderr, "clustersim compare: warning: %s: %s\n", r.in.trace, why);
	if (r.kernels)
		cs_compare_write_kernels(stdout, &c, r.in.trace,
					 r.format == F_JSON  ? CS_COMPARE_JSON
					 : r.format == F_CSV ? CS_COMPARE_CSV
							     : CS_COMPARE_TEXT);
	else if (r.format == F_JSON)
		cs_compare_write_json(stdout, &c, r.in.trace, r.in.steps > 0);
	else if (r.format == F_CSV)
		cs_compare_write_csv(stdout, &c);
	else
		cs_compare_write_text(stdout, &c, r.in.trace, r.in.steps > 0);
	int rc = 0;
	if (r.plot && (rc = cs_cli_write("compare", r.plot, write_plot, &(plot){ &c, r.in.trace })) == 0)
		cs_cli_wrote(r.progress, r.plot);
	cs_compare_close(&c);
	return rc;
}
