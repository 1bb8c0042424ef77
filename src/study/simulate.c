/*
 * simulate.c - cs_simulate: scenario -> mesh, topology, tuner, programs ->
 * runner -> metrics.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/config.h"
#include "config/scenario.h"
#include "fault/fault.h"
#include "hw/files.h"
#include "hw/topo.h"
#include "model/compute.h"
#include "model/memory.h"
#include "model/model.h"
#include "program/build.h"
#include "program/mesh.h"
#include "run/runner.h"
#include "study/fleet.h"
#include "study/study.h"
#include "study/study_int.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct sim_ctx {
	const cs_scenario *sc;
	const cs_kprof *prof;
	float *docs; /* document-mask attention factors, NULL for none */
	cs_mesh mesh;
	cs_topo *topo;
	cs_coll *coll;
	cs_program *progs; /* built here, freed with the context */
	int64_t nprogs;
	const cs_program *run;   /* what the ranks run: progs, or imported programs */
	const uint16_t *tmpl_of; /* per rank its program in run; NULL: its stage's */
	int64_t nrun;
	bool stragglers; /* the scenario's own perturbations, not only the fleet's */
} sim_ctx;

static const cs_program *prog_of(const sim_ctx *c, int64_t rank)
{
	return &c->run[c->tmpl_of ? c->tmpl_of[rank] : cs_mesh_coord(&c->mesh, rank, CS_AXIS_PP)];
}

static void ctx_free(sim_ctx *c)
{
	for (int64_t i = 0; c->progs && i < c->nprogs; i++)
		cs_program_free(&c->progs[i]);
	free(c->progs);
	cs_coll_free(c->coll);
	cs_topo_free(c->topo);
}

static void split_kinds(const sim_ctx *c, int64_t rank, const cs_rank_stats *s, double *kind_s);
static cs_status simulate(const cs_scenario *sc, const cs_run_opts *opts, const cs_span_sink *sink,
			  bool want_rows, const cs_kprof *prof, const cs__programs *given, cs_result **out,
			  cs_diag *diag);

static void fill_row(const sim_ctx *c, cs_rank_row *row, int64_t rank, const cs_rank_stats *s, double idle,
		     const float *factor)
{
	row->rank = rank;
	row->end_s = 1e-9 * (double)s->end;
	row->busy_s = 1e-9 * (double)s->busy;
	split_kinds(c, rank, s, row->kind_s);
	row->idle_s = idle;
	for (int k = 0; k < CS_COMM_KINDS; k++)
		row->exposed_s[k] = 1e-9 * (double)s->exposed[k];
	row->act_peak = s->mem_peak;
	row->compute_factor = factor ? factor[rank] : 1.0f;
}

/* One step with the given compute factors; fills stats of the step. */
typedef struct step_out {
	cs_time makespan;
	uint64_t events;
	int64_t critical;
	cs_rank_stats crit;
	double idle_min, idle_sum, idle_max;
	int64_t nranks;
	double act_peak;
	char choice[CS_COMM_KINDS][32];
	cs_critical_path path;
	int64_t straggler; /* the slowest-computing rank, -1 for none */
	double straggler_factor;
	int64_t simulated; /* ranks the runner simulated */
} step_out;

/* A rank's busy compute split by class as its template's compute is
 * (stragglers and contention stretch every class alike); under the clock
 * model GEMMs take the time they ran and the other classes share the rest. */
static void split_kinds(const sim_ctx *c, int64_t rank, const cs_rank_stats *s, double *out)
{
	const cs_program *p = prog_of(c, rank);
	int64_t all = p->compute_ns, gemm = 0;
	cs_time busy = s->busy;
	if (s->gemm_cap > 0 && s->gemm <= busy) {
		gemm = p->class_ns[CS_COMPUTE_GEMM];
		all -= gemm;
		busy -= s->gemm;
	}
	double scale = all > 0 ? (double)busy / (double)all : 0.0;
	for (int k = 0; k < CS_COMPUTE_KINDS; k++)
		out[k] = 1e-9 * (double)p->class_ns[k] * scale;
	if (gemm)
		out[CS_COMPUTE_GEMM] = 1e-9 * (double)s->gemm;
}

static void export_path(const cs_path *p, cs_critical_path *out)
{
	memset(out, 0, sizeof(*out));
	out->valid = 1;
	out->compute_s = 1e-9 * (double)p->compute;
	for (int k = 0; k < CS_COMM_KINDS; k++)
		out->comm_s[k] = 1e-9 * (double)p->comm[k];
	out->hops = p->hops;
	out->end_rank = p->rank;
	out->longest_rank = p->top_rank;
	out->longest_s = 1e-9 * (double)p->top;
	out->nlast = p->nlast;
	for (int i = 0; i < p->nlast; i++) {
		const cs_path_hop *h = &p->last[i];
		out->last[i] = (cs_path_step){ .from = cs_path_hop_from(h),
					       .to = cs_path_hop_to(h),
					       .kind = cs_path_hop_kind(h),
					       .tier = cs_path_hop_tier(h),
					       .at_s = 1e-9 * (double)h->at };
		snprintf(out->last[i].via, sizeof(out->last[i].via), "%s",
			 cs_coll_op_name((cs_coll_op)cs_path_hop_coll(h)));
	}
}

/*
 * Sequences that pack documents under a document mask: each data-parallel
 * replica's micro-batch of `step` fills its seq_len tokens with documents
 * drawn from training.documents (GSL, seeded from simulate.seed and the
 * step; the last one cut at the sequence's end). Causal attention then does
 * f = sum(length^2) / seq_len^2 of the unmasked work, and takes (floor +
 * (1 - floor) f) of its time, the floor the kernel profile's measured
 * share of the mask's partial blocks. Every rank of a replica (its TP, CP,
 * PP peers) sees the same documents.
 */
static void draw_documents(const cs_scenario *sc, double floor_share, int64_t step, float *out)
{
	const cs_training_spec *t = &sc->training;
	int64_t n = sc->parallel.dp * cs_scenario_micro_batches(sc);
	double s = (double)t->seq_len, mean = (double)t->doc_mean;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	uint64_t seed = sc->sim.seed * 0x9E3779B97F4A7C15ull + 0x94D049BB133111EBull +
			(uint64_t)step * 0xBF58476D1CE4E5B9ull;
	if (rng)
		gsl_rng_set(rng, (unsigned long)(seed ^ (seed >> 32)));
	double mu = log(mean) - 0.5 * t->doc_sigma * t->doc_sigma;
	for (int64_t i = 0; i < n; i++) {
		double pos = 0, sq = 0;
		while (pos < s) {
			double len = mean;
			if (rng && t->doc_dist == CS_DOCS_EXPONENTIAL)
				len = gsl_ran_exponential(rng, mean);
			else if (rng && t->doc_dist == CS_DOCS_LOGNORMAL)
				len = gsl_ran_lognormal(rng, mu, t->doc_sigma);
			len = floor(len + 0.5);
			if (len < 1)
				len = 1;
			if (len > s - pos)
				len = s - pos;
			sq += len * len;
			pos += len;
		}
		out[i] = (float)(floor_share + (1.0 - floor_share) * sq / (s * s));
	}
	if (rng)
		gsl_rng_free(rng);
}

/* Whether a step traces the critical path: asked for (1), refused (-1), or
 * by default (0) for a perturbed step with stragglers of the scenario's
 * own and up to 4,096 ranks, as it costs time. */
static bool path_wanted(const sim_ctx *c, const cs_run_opts *opts, bool perturbed)
{
	int want = opts ? opts->critical_path : 0;
	return want >= 0 && (want > 0 || (perturbed && c->stragglers) || c->mesh.world <= 4096);
}

/*
 * simulate.fold: whether the reported step folds, and when it runs every
 * rank, why (into why). Auto folds where the scenario's checks prove the
 * folded run equal to the full one (perturbations are simulated in their
 * replicas, as traced ranks are: cs__run_fold_exceptions) and nothing
 * asked for needs every rank: the critical path is traced rank by rank.
 * Beyond the ranks that can run one by one it folds without it, as `true`
 * does.
 */
static bool fold_route(const sim_ctx *c, const cs_run_opts *opts, bool perturbed, char *why, size_t n)
{
	const cs_scenario *sc = c->sc;
	why[0] = 0;
	if (sc->sim.fold == CS_FOLD_ON)
		return true;
	const char *blocker = cs_config_fold_blocker(sc, NULL);
	bool big = c->mesh.world > CS_CONFIG_MAX_RANKS;
	if (sc->sim.fold == CS_FOLD_OFF)
		snprintf(why, n, "simulate.fold is false");
	else if (c->tmpl_of)
		snprintf(why, n, "imported traces give ranks programs of their own");
	else if (blocker)
		snprintf(why, n, "%s", blocker);
	else if (!big && path_wanted(c, opts, perturbed))
		snprintf(why, n, "the critical path is traced rank by rank");
	return !why[0];
}

static cs_status run_step(sim_ctx *c, bool fold, const float *factor, const cs_link_faults *links,
			  const cs_run_opts *opts, step_out *o, cs_rank_row *rows, const cs_span_sink *sink,
			  const uint8_t *traced, cs_diag *diag)
{
	cs_run_env env = { .sc = c->sc,
			   .mesh = &c->mesh,
			   .progs = c->run,
			   .topo = c->topo,
			   .tmpl_of = c->tmpl_of,
			   .ntmpl = c->nrun,
			   .coll = c->coll,
			   .compute_factor = factor,
			   .first_rank = 0,
			   .nranks = c->mesh.world,
			   .progress = opts ? opts->progress : 0,
			   .traced = sink ? traced : NULL,
			   .on_span = sink ? sink->on_span : NULL,
			   .span_ctx = sink ? sink->ctx : NULL,
			   .links = links,
			   .prof = c->prof,
			   .doc_factor = c->docs,
			   .doc_micro = cs_scenario_micro_batches(c->sc),
			   .clock = c->sc->cluster.gpu.clock != CS_CLOCK_TABLE ? cs_kprof_clock_model(c->prof)
									       : NULL,
			   .fold = fold,
			   .critical_path = !fold && path_wanted(c, opts, factor != NULL) };
	cs_runner *r = cs_runner_new(&env);
	if (!r) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory for %lld ranks",
			 (long long)c->mesh.world);
		return CS_ERR_NOMEM;
	}
	cs_status st = cs_runner_run(r, diag);
	if (st != CS_OK) {
		cs_runner_free(r);
		return st;
	}
	memset(o, 0, sizeof(*o));
	o->makespan = cs_runner_makespan(r);
	if (o->makespan >= CS_TIME_HORIZON) { /* durations saturate there: the step is not its sum */
		cs_runner_free(r);
		snprintf(diag->msg, sizeof(diag->msg),
			 "simulated time reaches 2^61 ns (73 years), where durations saturate: an op or a "
			 "transfer takes far too long");
		return CS_ERR_SIM;
	}
	o->events = cs_runner_events(r);
	o->simulated = cs_runner_simulated_ranks(r);
	o->idle_min = INFINITY;
	o->critical = -1;
	o->straggler = -1;
	for (int64_t rank = 0; factor && rank < c->mesh.world; rank++)
		if (factor[rank] > 1.0f && (o->straggler < 0 || factor[rank] > o->straggler_factor)) {
			o->straggler = rank;
			o->straggler_factor = factor[rank];
		}
	for (int64_t rank = 0; rank < c->mesh.world; rank++) {
		const cs_rank_stats *s = cs_runner_stats(r, rank);
		/* folded away: a copy of its representative (exact by symmetry) */
		bool copy = !s && fold;
		if (copy)
			s = cs_runner_stats(r, cs_runner_representative(r, rank));
		if (!s)
			continue;
		double idle = 1e-9 * (double)(o->makespan - s->busy);
		if (rows)
			fill_row(c, &rows[rank], rank, s, idle, factor);
		/* copies count as the ranks they stand for, in rank order, so the
		 * idle statistics are the full run's to the last bit; the critical
		 * rank, the first to end last, is a simulated one */
		if (!copy && (o->critical < 0 || s->end > o->crit.end)) {
			o->critical = rank;
			o->crit = *s;
		}
		if (!copy)
			o->act_peak = fmax(o->act_peak, s->mem_peak);
		o->idle_sum += idle;
		o->idle_min = fmin(o->idle_min, idle);
		o->idle_max = fmax(o->idle_max, idle);
		o->nranks++;
	}
	cs_path cp;
	if (cs_runner_critical_path(r, &cp) == 0)
		export_path(&cp, &o->path);
	for (int k = 0; k < CS_COMM_KINDS; k++) {
		const cs_coll_choice *ch = cs_runner_last_choice(r, (cs_comm_kind)k);
		if (ch->channels > 0 || ch->bus_bw > 0)
			snprintf(o->choice[k], sizeof(o->choice[k]), "%s/%s", cs_coll_algo_name(ch->algo),
				 cs_coll_proto_name(ch->proto));
	}
	cs_runner_free(r);
	return CS_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pct(const double *sorted, int64_t n, double q)
{
	double pos = q * (double)(n - 1);
	int64_t i = (int64_t)pos;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (pos - (double)i) * (sorted[i + 1] - sorted[i]);
}

/* The ranks to trace: the ones asked for, and the first rank of each stage
 * when none are asked for or the sink wants the stages' heads. */
static cs_status trace_ranks(const cs_scenario *sc, const cs_mesh *mesh, const cs_run_opts *opts,
			     const cs_span_sink *sink, uint8_t *traced, cs_diag *diag)
{
	size_t n = opts ? opts->n_trace_ranks : 0;
	for (size_t i = 0; i < n; i++) {
		if (opts->trace_ranks[i] < 0 || opts->trace_ranks[i] >= mesh->world) {
			snprintf(diag->msg, sizeof(diag->msg), "trace rank %lld is outside 0..%lld",
				 (long long)opts->trace_ranks[i], (long long)(mesh->world - 1));
			return CS_ERR_INPUT;
		}
		traced[opts->trace_ranks[i]] = 1;
	}
	if (n == 0 || sink->stage_heads)
		for (int64_t s = 0; s < sc->parallel.pp; s++)
			traced[s * mesh->stride[CS_AXIS_PP]] = 1;
	return CS_OK;
}

/* The sink's say on the spans the traced ranks' programs will make in the
 * one traced step, before anything runs. */
static cs_status trace_admit(const sim_ctx *c, const cs_span_sink *sink, const uint8_t *traced, cs_diag *diag)
{
	double spans = 0;
	int64_t ranks = 0;
	if (!sink->admit)
		return CS_OK;
	for (int64_t r = 0; r < c->mesh.world; r++) {
		if (!traced[r])
			continue;
		ranks++;
		const cs_program *p = prog_of(c, r);
		for (int s = 0; s < CS_STREAMS; s++)
			spans += (double)p->nops[s];
	}
	return sink->admit(sink->ctx, ranks, spans, diag);
}

/* Everything the report shows, from the steps' times, the unperturbed step
 * and the reported one (the slowest perturbed step). MFU and HFU are
 * against the fastest GPU's peak: a GPU a straggler entry drew a compute
 * factor below 1 for (`fastest`) runs past the nominal one. */
static void fill_metrics(cs_metrics *m, const cs_scenario *sc, double *steps, int64_t nsteps,
			 const step_out *base, const step_out *rep, double fastest)
{
	double sum = 0;
	for (int64_t i = 0; i < nsteps; i++)
		sum += steps[i];
	qsort(steps, (size_t)nsteps, sizeof(double), cmp_double);
	m->steps = nsteps;
	m->step_time_s = sum / (double)nsteps;
	m->step_time_p50_s = pct(steps, nsteps, 0.50);
	m->step_time_p99_s = pct(steps, nsteps, 0.99);
	m->step_time_max_s = steps[nsteps - 1];
	m->baseline_step_time_s = 1e-9 * (double)base->makespan;
	m->slowdown = m->step_time_s / m->baseline_step_time_s;
	int64_t gpus = cs_scenario_gpus(sc);
	double tokens = (double)sc->training.global_batch * (double)sc->training.seq_len;
	double peak = cs_compute_peak(&sc->cluster.gpu, sc->training.precision) / fmin(1.0, fastest);
	m->peak_scale = 1.0 / fmin(1.0, fastest);
	double per_gpu_s = m->step_time_s * (double)gpus;
	m->gpus = gpus;
	m->micro_batches = cs_scenario_micro_batches(sc);
	m->model_flops_megatron =
		cs_model_flops_per_step(&sc->model, sc->training.seq_len, sc->training.global_batch);
	double hw = cs_model_hw_flops_per_step_p(&sc->model, sc->training.seq_len, sc->training.global_batch,
						 &sc->parallel);
	m->model_flops =
		cs_model_causal_flops_per_step(&sc->model, sc->training.seq_len, sc->training.global_batch);
	m->tokens_per_s = tokens / m->step_time_s;
	m->tflops_per_gpu = m->model_flops / per_gpu_s / 1e12;
	m->mfu = m->model_flops / (per_gpu_s * peak);
	m->tflops_per_gpu_megatron = m->model_flops_megatron / per_gpu_s / 1e12;
	m->mfu_megatron = m->model_flops_megatron / (per_gpu_s * peak);
	m->hfu = hw / (per_gpu_s * peak);
	m->tflops_per_gpu_hardware = hw / per_gpu_s / 1e12;
	double span = 1e-9 * (double)rep->makespan;
	m->critical_rank = rep->critical;
	m->compute_s = 1e-9 * (double)rep->crit.busy;
	double exposed = 0;
	for (int k = 0; k < CS_COMM_KINDS; k++) {
		m->exposed_comm_s[k] = 1e-9 * (double)rep->crit.exposed[k];
		exposed += m->exposed_comm_s[k];
		memcpy(m->coll_choice[k], rep->choice[k], sizeof(m->coll_choice[k]));
	}
	m->bubble_s = fmax(0.0, span - m->compute_s - exposed);
	m->bubble_fraction = span > 0 ? m->bubble_s / span : 0;
	m->idle_min_s = rep->idle_min;
	m->idle_mean_s = rep->idle_sum / (double)rep->nranks;
	m->idle_max_s = rep->idle_max;
	m->activation_peak_bytes = rep->act_peak;
	m->path = rep->path;
	m->straggler_rank = rep->straggler;
	m->straggler_factor = rep->straggler_factor;
	cs_mem_breakdown mb = cs_mem_per_gpu(&sc->model, &sc->training, &sc->parallel, &sc->cluster.gpu,
					     cs_cluster_shard_unit(&sc->cluster));
	m->memory = (cs_memory){ .weights = mb.weights,
				 .grads = mb.grads,
				 .optimizer = mb.optimizer,
				 .activations = mb.activations,
				 .total = mb.total,
				 .capacity = mb.capacity,
				 .fits = mb.fits };
}

cs_status cs__simulate_check(const cs_scenario *sc, cs_diag *diag)
{
	cs_kprof *prof = NULL;
	cs_coll_spec cspec;
	cs_status st = cs_hw_load_profile(sc, &prof, diag);
	if (st == CS_OK)
		st = cs_hw_coll_spec(sc, &cspec, diag);
	if (st != CS_OK) {
		cs_kprof_free(prof);
		return st;
	}
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	cs_program *progs = NULL;
	st = cs_plan_build_new(sc, &mesh, prof, &progs, diag);
	cs_plan_programs_free(progs, sc->parallel.pp);
	cs_kprof_free(prof);
	return st;
}

cs_status cs__simulate(const cs_scenario *sc, const cs__sim_request *rq, cs_result **out, cs_diag *diag)
{
	*out = NULL;
	if (rq->have_prof)
		return simulate(sc, rq->opts, rq->sink, rq->want_rows, rq->prof, rq->given, out, diag);
	cs_kprof *prof = NULL;
	cs_status st = cs_hw_load_profile(sc, &prof, diag);
	if (st == CS_OK)
		st = simulate(sc, rq->opts, rq->sink, rq->want_rows, prof, rq->given, out, diag);
	cs_kprof_free(prof);
	return st;
}

/* One fleet: the scenario's run with `slow` of the fleet's slow machines. */
static cs_status simulate_one(const cs_scenario *sc, const cs__fleet *fl, int64_t slow,
			      const cs_run_opts *opts, const cs_span_sink *sink, bool want_rows,
			      const cs_kprof *prof, const cs__programs *given, cs_result **out, cs_diag *diag)
{
	double t0 = now_s();
	*out = NULL;
	sim_ctx c = { .sc = sc,
		      .prof = prof,
		      .stragglers = sc->n_perturbations > 0 || sc->cluster.gpu_variation > 0 };
	float *fleet = NULL;
	cs_result *res = calloc(1, sizeof(*res));
	float *factor = NULL;
	double *steps = NULL;
	cs_rank_row *scratch = NULL;
	uint8_t *traced = NULL;
	cs_fault *fault = NULL;
	cs_coll_spec cspec;
	cs_status st = cs_hw_coll_spec(sc, &cspec, diag); /* with the calibration's network */
	if (st != CS_OK)
		goto fail;
	st = CS_ERR_NOMEM;
	snprintf(diag->msg, sizeof(diag->msg), "out of memory");
	if (!res)
		goto fail;
	cs_mesh_init(&c.mesh, &sc->parallel);
	c.topo = cs_topo_new(&sc->cluster);
	c.coll = cs_coll_new(&sc->cluster, &cspec);
	c.nprogs = given ? 0 : sc->parallel.pp;
	c.progs = given ? NULL : calloc((size_t)c.nprogs, sizeof(cs_program));
	if (!c.topo || !c.coll || (!given && !c.progs))
		goto fail;
	for (int64_t i = 0; i < c.nprogs; i++)
		cs_program_init(&c.progs[i]);
	if (!given && (st = cs_plan_build(sc, &c.mesh, prof, c.progs, diag)) != CS_OK)
		goto fail;
	c.run = given ? given->progs : c.progs;
	c.nrun = given ? given->n : c.nprogs;
	c.tmpl_of = given ? given->tmpl_of : NULL;
	st = CS_ERR_NOMEM;
	int64_t world = c.mesh.world, nsteps = sc->sim.steps > 0 ? sc->sim.steps : 1;
	res->nrows = want_rows ? world : 0;
	res->rows = want_rows ? calloc((size_t)world, sizeof(cs_rank_row)) : NULL;
	factor = malloc((size_t)world * sizeof(float));
	steps = malloc((size_t)nsteps * sizeof(double));
	if ((want_rows && !res->rows) || !factor || !steps)
		goto fail;
	if ((st = cs_fault_new(sc, world, &fault, diag)) != CS_OK)
		goto fail;
	if (fl->factors) {
		st = CS_ERR_NOMEM;
		if (!(fleet = malloc((size_t)world * sizeof(float))) ||
		    cs__fleet_factors(sc, fl, &c.mesh, slow, fleet) != CS_OK)
			goto fail;
		cs_fault_set_fleet(fault, fleet);
	}
	if (sink) {
		st = CS_ERR_NOMEM;
		if (!(traced = calloc((size_t)world, 1)))
			goto fail;
		if ((st = trace_ranks(sc, &c.mesh, opts, sink, traced, diag)) != CS_OK ||
		    (st = trace_admit(&c, sink, traced, diag)) != CS_OK)
			goto fail;
	}
	int perturbed = cs_fault_any(fault);
	double doc_floor = cs_kprof_document_floor(prof);
	if (sc->training.doc_mean > 0) {
		st = CS_ERR_NOMEM;
		c.docs = malloc((size_t)(sc->parallel.dp * cs_scenario_micro_batches(sc)) * sizeof(float));
		if (!c.docs)
			goto fail;
		draw_documents(sc, doc_floor, 0, c.docs);
	}
	/* perturbed steps write their rows here first; the reported (slowest)
	 * step's are kept */
	if (want_rows && perturbed) {
		st = CS_ERR_NOMEM;
		scratch = calloc((size_t)world, sizeof(cs_rank_row));
		if (!scratch)
			goto fail;
	}
	step_out base, so, worst;
	uint64_t events = 0;
	/* the unperturbed step: the baseline, and every step when nothing
	 * perturbs. Beside perturbed steps only its step time is reported,
	 * which folding keeps exactly (the ranks it folds are identical), so it
	 * folds wherever folding applies: a straggler study costs about one
	 * step, not two. */
	char why[sizeof res->m.route.why];
	bool fold = fold_route(&c, opts, perturbed, why, sizeof why);
	bool fold_base =
		fold || (perturbed && !c.docs && !c.tmpl_of && sc->coll.fidelity == CS_FIDELITY_ANALYTIC);
	st = run_step(&c, fold_base, NULL, NULL, opts, &base, perturbed ? NULL : res->rows,
		      perturbed ? NULL : sink, traced, diag);
	if (st != CS_OK)
		goto fail;
	events += base.events;
	worst = base;
	for (int64_t i = 0; i < nsteps; i++) {
		if (!perturbed && (!c.docs || i == 0)) {
			steps[i] = 1e-9 * (double)base.makespan;
			continue;
		}
		/* every step packs new documents */
		if (c.docs && i > 0)
			draw_documents(sc, doc_floor, i, c.docs);
		int fresh = perturbed ? cs_fault_draw(fault, i, factor) : 0;
		cs_link_faults lf;
		if (perturbed)
			cs_fault_links(fault, i, &lf);
		if (fresh || i == 0 || c.docs) {
			st = run_step(&c, fold, perturbed ? factor : NULL,
				      perturbed && cs_fault_any_links(fault) ? &lf : NULL, opts, &so,
				      perturbed ? scratch : NULL, i == 0 ? sink : NULL, traced, diag);
			if (st != CS_OK)
				goto fail;
			events += so.events;
		}
		steps[i] = 1e-9 * (double)so.makespan;
		if (i == 0 || so.makespan >= worst.makespan) {
			worst = so;
			if (scratch)
				memcpy(res->rows, scratch, (size_t)world * sizeof(cs_rank_row));
		}
	}
	fill_metrics(&res->m, sc, steps, nsteps, &base, perturbed ? &worst : &base, cs_fault_fastest(fault));
	cs_route *route = &res->m.route;
	route->simulated_ranks = (perturbed ? &worst : &base)->simulated;
	route->folded = route->simulated_ranks < world;
	if (fold && !route->folded) /* cs__run_fold_exceptions left no replica a copy */
		snprintf(why, sizeof why, "%s",
			 world == sc->parallel.pp
				 ? "each pipeline stage is one rank"
				 : "every data-parallel replica is perturbed or traced, or a "
				   "representative");
	memcpy(route->why, why, sizeof route->why);
	const cs_rank_stats *crit = &(perturbed ? &worst : &base)->crit;
	split_kinds(&c, res->m.critical_rank, crit, res->m.compute_kind_s);
	res->m.gemm_clock = crit->gemm > 0 ? (double)crit->gemm_cap / (double)crit->gemm : 0.0;
	const cs_program *cp = prog_of(&c, res->m.critical_rank);
	memcpy(res->m.compute_kind_kernels, cp->class_kernels, sizeof res->m.compute_kind_kernels);
	if (c.run[0].profile[0]) {
		snprintf(res->m.profile, sizeof res->m.profile, "%s", c.run[0].profile);
		res->m.profile_derived = c.run[0].profile_derived;
	}
	res->m.events = (int64_t)events;
	st = CS_OK;
	diag->msg[0] = 0;
fail:
	free(scratch);
	free(c.docs);
	free(factor);
	free(steps);
	free(traced);
	cs_fault_free(fault);
	free(fleet);
	ctx_free(&c);
	if (st != CS_OK) {
		cs_result_free(res);
		return st;
	}
	res->m.sim_wall_s = now_s() - t0;
	*out = res;
	return CS_OK;
}

/* The expected step on the scenario's fleet: the fleet with its slow
 * machines, and without them where that is likely enough (fleet.h). The
 * likelier of the two is reported in detail (traced, rows, path). */
static cs_status simulate(const cs_scenario *sc, const cs_run_opts *opts, const cs_span_sink *sink,
			  bool want_rows, const cs_kprof *prof, const cs__programs *given, cs_result **out,
			  cs_diag *diag)
{
	cs__fleet fl;
	cs_result *other = NULL;
	cs__fleet_plan(sc, &fl);
	int none_first = fl.run_none && fl.fx.p_none >= 0.5;
	cs_status st = simulate_one(sc, &fl, none_first ? 0 : fl.fx.slow, opts, sink, want_rows, prof, given,
				    out, diag);
	if (st != CS_OK)
		return st;
	double t[2] = { (*out)->m.step_time_s, (*out)->m.step_time_s }; /* without, with */
	if (fl.run_none) {
		st = simulate_one(sc, &fl, none_first ? fl.fx.slow : 0, opts, NULL, false, prof, given,
				  &other, diag);
		if (st != CS_OK) {
			cs_result_free(*out);
			*out = NULL;
			return st;
		}
		t[none_first] = other->m.step_time_s;
		(*out)->m.sim_wall_s += other->m.sim_wall_s;
		(*out)->m.events += other->m.events;
		cs_result_free(other);
	}
	cs__fleet_finish(&(*out)->m, &fl, t[0], t[1]);
	return CS_OK;
}
