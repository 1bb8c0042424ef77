/*
 * runner_int.h - the runner: what its engines share and what each owns
 * (each member says which file writes it), its comm tables, and the calls
 * between its files (runner.c its life, step.c the steps of an op,
 * runner_coll.c the work per collective and the flow network,
 * runner_path.c the critical path, ranks.c folding, parts.c parts).
 * Private to src/run.
 */
#ifndef CS_RUN_RUNNER_INT_H
#define CS_RUN_RUNNER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "coll/flow.h"
#include "run/path.h"
#include "run/rank.h"
#include "run/runner.h"

/* SMs communication kernels may hold on one GPU that contention tracks */
#define CS__MAX_CTAS 1024

/* The tuner's answers for a group's last two kinds of collective (tensor
 * parallelism alternates all-gathers and reduce-scatters of one size),
 * kept while its collectives keep to them: its members take a collective's
 * channels' SMs as each arrives, and its time when the last does. */
typedef struct cs__tuned {
	double bytes;
	int32_t coll; /* cs_coll_op + 1, 0 for none yet */
	cs_time d;    /* its time on the group's shape */
	cs_coll_choice choice;
	int32_t plan; /* flow fidelity: the net's plan of it + 1, 0 not
	                               * yet asked, -1 not kept */
	uint8_t ub;   /* a userbuffers op's SMs + 1, 0 for NCCL's */
} cs__tuned;

typedef struct cs__tunes {
	cs__tuned e[2];
	int32_t next; /* the entry a new answer replaces */
} cs__tunes;

typedef struct cs__slot {
	int32_t arrived;  /* members; across parts, the parts whose members all did */
	int32_t expected; /* 0 until first use */
	cs_time dur;      /* transfer time of the collective in flight */
	cs_time start;    /* when it started; across parts, the latest arrival so far */
	cs__tunes tuned;
	cs_coll_choice choice; /* of the collective in flight */
	int64_t *locals;       /* the simulated members' locals, listed at first use:
	                               * a collective costs O(simulated members) and no
	                               * arithmetic per member */
	/* a group across parts (parts.c): its members in ascending order, the
	 * parts they lie in, and the member that arrived last */
	int32_t *parts;
	int32_t nparts;
	int64_t last;
	uint32_t gen; /* collectives started */
} cs__slot;

/* A part's members of a group instance that spans parts: they are
 * cs__slot.locals[off, off + expected). */
typedef struct cs__part_group {
	int32_t arrived, expected; /* expected 0 until first use */
	int64_t off;
	cs__tunes tuned;
} cs__part_group;

/* A part's group whose members have all arrived, for the root to count
 * when the window ends. */
typedef struct cs__arrival {
	const cs_op *op;
	int64_t gi;
	cs_time at;
	int64_t local; /* the last of them */
	int kind, stream;
} cs__arrival;

typedef struct cs__comm_table {
	cs__slot *slots; /* one per group instance (made in runner.c) */
	/* Critical path: the last arriver's path and the transfer time, per
	 * instance and generation ([2 gi + (gen & 1)]). A member's counter
	 * moved by a collective keeps no copy: its path is the collective's
	 * and the transfer to it, worked out when read. A member's stream
	 * reaches the next collective of the instance only after this one, so
	 * the counter moves on before the generation after that overwrites
	 * the path it reads. Writing the path (216 bytes) to every member
	 * instead would cost a cache miss a member at scale. */
	cs_path *paths;
	cs_time *xfers;
	cs_group_shape *shapes;
	uint8_t *shape_ok;
	float *keep;   /* degraded links: bandwidth kept by the group */
	cs_time *lat;  /* and latency added */
	double *alone; /* flow fidelity: seconds per byte of each op (ring and
	                               * tree apart) alone on an idle fabric, 0 unknown */
	int64_t ngroups;
} cs__comm_table;

/* What every engine of a run reads: built once by the root
 * (cs_runner_new, runner.c) and shared by its parts (parts.c), which write
 * only their own ranks' entries and, under parts.c's rules, the comm
 * tables. */
typedef struct cs__run_shared {
	cs_run_env env;  /* the caller's; its tuner and progress are the root's
	                               * (cs_runner.coll, cs_runner.progress) */
	cs__tmpl *tmpls; /* per template, what the dispatch reads of it */
	cs__rank *ranks;
	cs__rank_times *times; /* per local, or NULL when nothing reads them */
	int64_t nlocal;
	int fold_mask; /* bit per axis not simulated beyond coordinate 0 */
	/* Folded runs with perturbations, traced ranks or replicas placed
	 * otherwise in the fabric (ranks.c): the data-parallel replicas holding
	 * a perturbed or traced rank and one representative per placement are
	 * simulated whole (xdp[0..nx), sorted); replica d copies rep_of[d]
	 * (itself when simulated). */
	int64_t *xdp, nx, *rep_of;
	int64_t per_replica; /* ranks of one data-parallel replica */
	int64_t gpn;
	cs__comm_table comm[CS_GROUP_KINDS][CS_STREAMS]; /* made in runner.c, worked in by
	                               * runner_coll.c */
	cs_path *paths;                  /* per rank: CS_COUNTERS paths, then CS_STREAMS in flight
	                               * (runner_path.c) */
	cs__path_ref *path_refs;         /* per rank: the compute counter's path while it names a
	                               * collective's (cs__rank.comp_path_ref); 32 bytes a rank, where
	                               * its slot in paths would cost a cache miss each op */
	float rate_of[CS__MAX_CTAS + 1]; /* compute's rate while k SMs are held */
	bool contend;                    /* some rate is below 1: track the SMs held */
	uint8_t *cross[CS_GROUP_KINDS];  /* per group instance: 1 when it spans parts (parts.c) */
} cs__run_shared;

struct cs_runner {
	cs__run_shared shared; /* the root's, made in runner.c; a part's a copy of it */

	/* What this engine owns: the root's in a whole run, each part's its
	 * own (cs__run_part_new); made by own_init and freed by own_free
	 * (runner.c). Each member names the file that writes it. */
	cs_sim *sim;   /* runner.c; step.c, runner_coll.c and parts.c schedule on it */
	cs_coll *coll; /* runner.c: the tuner it asks (runner_coll.c), the caller's
	                               * for the root, a copy for a part (its cache is the part's) */
	int progress;  /* runner.c: CS_PROGRESS_*, the root's, 0 for a part */
	cs_coll_choice last_choice[CS_COMM_KINDS]; /* runner_coll.c (cs__run_coll_begin) */
	cs_time last_at[CS_COMM_KINDS];            /* runner_coll.c: when last_choice was set, -1
	                               * never; the root's taken from its parts' (parts.c) */
	cs_time makespan;                          /* step.c (an op's end); the root's from its parts' */
	int failed;                                /* where it fails (CS_ERR_*); runner.c reports it */
	uint64_t ops_done;                         /* step.c; the root's summed from its parts' */
	uint64_t ops_total;                        /* runner.c */
	/* progress lines (runner.c, the root's) */
	uint64_t next_progress_events;
	double last_progress_s; /* elapsed at the last progress line */
	int64_t progress_lines;
	struct timespec t0;
	/* flow fidelity (runner_coll.c, a whole run's) */
	cs_net *net;      /* the shared network, else NULL */
	cs_net *idle;     /* a network that runs one collective at a time, to time
	                               * it alone */
	uint64_t net_gen; /* only the newest net event is live */
	int64_t *members; /* scratch: a group's GPUs */

	/* Partitioned runs (parts.c): the ranks split into parts along the
	 * data-parallel axis, each part an engine of its own over the shared
	 * state. Parts run in windows no longer than the shortest collective
	 * across parts (the lookahead); at each window's end the root starts
	 * the collectives whose members have all arrived. */
	struct cs__parts *parts; /* root: its parts and threads, NULL for a whole run */
	int64_t lo, hi;          /* a part: its locals (hi > 0), 0 for the root */
	cs__part_group *part_groups[CS_GROUP_KINDS][CS_STREAMS]; /* a part: its members of groups
	                               * across parts, by instance (step.c ends their collectives) */
	cs__arrival *out; /* a part: its groups complete in this window */
	int32_t nout, capout;
};

#define CS__PATHS_PER_RANK (CS_COUNTERS + CS_STREAMS)

/* The first index of sorted v[0, n) whose value is not below x (n if none). */
static inline int64_t cs__lower_bound(const int64_t *v, int64_t n, int64_t x)
{
	int64_t lo = 0, hi = n;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the calls between the files --------------------------------------
 * By the file that defines them; tools/run-calls.sh lists the ones each
 * file uses of another's. */

/* ranks.c: folded runs. Choose the replicas simulated whole around
 * perturbations: 0, 1 when every replica differs (nothing to fold), -1 on
 * out-of-memory. */
int cs__run_fold_exceptions(cs_runner *r);
/* A rank's local index, a local's rank, whether a rank is simulated: in
 * a plain run a shift, in a folded run worked out in ranks.c. */
int64_t cs__run_local_of_folded(const cs_runner *r, int64_t rank);
int64_t cs__run_rank_of_folded(const cs_runner *r, int64_t local);
int cs__run_simulated_folded(const cs_runner *r, int64_t rank);
/* Whether one rank per stage, with no replica whole, simulates `rank`. */
int cs__run_simulated_folded_plain(const cs_runner *r, int64_t rank);
static inline int64_t cs__run_local_of(const cs_runner *r, int64_t rank)
{
	return r->shared.fold_mask ? cs__run_local_of_folded(r, rank) : rank - r->shared.env.first_rank;
}
static inline int64_t cs__run_rank_of(const cs_runner *r, int64_t local)
{
	return r->shared.fold_mask ? cs__run_rank_of_folded(r, local) : local + r->shared.env.first_rank;
}
static inline int cs__run_simulated(const cs_runner *r, int64_t rank)
{
	if (r->shared.fold_mask)
		return cs__run_simulated_folded(r, rank);
	return rank >= r->shared.env.first_rank && rank < r->shared.env.first_rank + r->shared.env.nranks;
}

/* runner.c: a part of root holding locals [lo, hi): the root's shared
 * state, and an engine and a copy of the root's tuner of its own; NULL when
 * out of memory. cs_runner_free frees it (and the copy). */
cs_runner *cs__run_part_new(const cs_runner *root, int64_t lo, int64_t hi);
/* The progress line, after `events` events at simulated time `now`. */
void cs__run_progress(cs_runner *r, uint64_t events, cs_time now);

/* step.c: the steps. The op at the head of rs's stream s, NULL when the
 * stream is done. */
static inline const cs_op *cs__run_head(const cs_runner *r, const cs__rank *rs, int s)
{
	const cs__tmpl *p = &r->shared.tmpls[rs->tmpl];
	return rs->cnt[s] < p->nops[s] ? &p->ops[s][rs->cnt[s]] : NULL;
}
/* Try local's streams. */
void cs__run_try_rank(cs_runner *r, int64_t local);
/* Schedule fn(arg) at `at`; a time past the horizon stops the run. */
void cs__run_schedule(cs_runner *r, cs_time at, cs_event_fn fn, uint64_t arg);
/* A pipeline send of `local`'s stream s (op, its head) has arrived:
 * complete it, deliver it to the peer's mailbox, and try both ranks. */
void cs__run_send_done(cs_runner *r, int64_t local, int s, const cs_op *op);
/* The engine's event of a collective's end (a cs__coll_ev): its members
 * complete it and are tried (in a part, those of the part). */
void cs__run_on_coll_done(cs_sim *sim, void *ctx, uint64_t arg);
/* The rate of local's running compute op changed: re-time it. */
void cs__run_retime(cs_runner *r, int64_t local, cs__rank *rs, float rate);

/* runner_coll.c: the work per collective. The shape of instance gi of a
 * group kind, `local` one of its members: worked out once
 * (cs__run_shape_of), then kept. */
const cs_group_shape *cs__run_shape_of(cs_runner *r, cs__comm_table *t, int64_t gi, int kind, int64_t local);
static inline const cs_group_shape *cs__run_group_shape(cs_runner *r, cs__comm_table *t, int64_t gi, int kind,
							int64_t local)
{
	return t->shape_ok[gi] ? &t->shapes[gi] : cs__run_shape_of(r, t, gi, kind, local);
}
/* The tuner's answer for op on instance gi of table t (`local` one of its
 * members), kept in tc while the group's collectives keep to its two
 * latest kinds (asked anew by cs__run_retune on the group's shape, which
 * only then is looked up). */
cs__tuned *cs__run_retune(cs_runner *r, cs__tunes *tc, const cs_group_shape *sh, const cs_op *op);
static inline cs__tuned *cs__run_tune(cs_runner *r, cs__tunes *tc, cs__comm_table *t, int64_t gi,
				      int64_t local, const cs_op *op)
{
	for (int i = 0; i < 2; i++)
		if (tc->e[i].coll == op->coll + 1 && tc->e[i].bytes == op->bytes &&
		    tc->e[i].ub == (op->ub ? op->sms + 1 : 0))
			return &tc->e[i];
	return cs__run_retune(r, tc, cs__run_group_shape(r, t, gi, op->group, local), op);
}
/* Member `local` arrives at collective `op` on its stream s: the first
 * arrival at an instance lists its members, the last starts it (a call;
 * step.c counts the others). */
void cs__run_arrive(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op);
/* The last member of instance gi arrived at `now` (last_local): the
 * collective starts; returns its time. */
cs_time cs__run_coll_begin(cs_runner *r, cs__comm_table *t, int64_t gi, int s, const cs_op *op,
			   int64_t last_local, cs_time now);
/* The route of rank's pipeline messages of `bytes` down (up 0) or up (1)
 * to its peer there (rs->p2p_peer[up]): their time, channels and highest
 * tier, and in flow fidelity the bytes each puts on the net. */
void cs__run_p2p_route(cs_runner *r, cs__rank *rs, int up, int64_t rank, double bytes);
/* The flow network of a run in flow fidelity: 0, or -1 when out of memory. */
int cs__run_flow_init(cs_runner *r);
/* Start a collective on the flow net, planned once: *plan is the net's
 * plan + 1 (0 not yet asked, then set; -1 not kept); its flows wait
 * `latency` (CS_NET_ROUTE_LATENCY: their routes') before they drain. */
void cs__run_net_start(cs_runner *r, const int64_t *members, int64_t n, cs_coll_op op, double bytes,
		       cs_coll_algo algo, cs_time latency, uint64_t tag, int32_t *plan);

/* runner_path.c: the critical path. What ends an op, for the trace and the
 * critical path: the transfer time (-1 for compute), and for a collective
 * the tuner's choice and its generation, for a transfer the tier it crossed
 * (paths only). */
typedef struct cs__done {
	cs_time xfer;
	const cs_coll_choice *choice;
	uint32_t gen; /* the collective's generation (paths only) */
	int tier;
} cs__done;
/* What completing an op records when the trace or the critical path
 * reads it (r->shared.times is kept): its span, its path (and a send's
 * receiver's), when it ended. */
void cs__run_complete_times(cs_runner *r, int64_t local, int s, const cs_op *op, const cs__done *d);
/* The path of local's op in flight on `stream`, to read: in place, or
 * worked out into *tmp. */
const cs_path *cs__run_flying_path(const cs_runner *r, int64_t local, int stream, cs_path *tmp);
/* local arrives at collective op on stream s while its compute counter
 * names a collective's path (cs__path_ref): if the collective about to start
 * overwrites that path, the counter takes a copy first. */
void cs__run_path_ref_arrive(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op);

/* parts.c: split a runner into parts (0, or -1 on out-of-memory; a run
 * that cannot be split stays whole), run them, free them. */
int cs__run_partition(cs_runner *r);
cs_status cs__run_parts(cs_runner *r, cs_diag *diag);
void cs__run_parts_free(cs_runner *r);
/* A part's member arrives at a collective across parts. */
void cs__run_cross_arrive(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op,
			  cs__comm_table *t, int64_t gi);

/* Contention, inline where an op starts and ends. Compute's rate on rs's
 * GPU while its communication kernels hold the SMs they do. */
static inline float cs__run_rate(const cs_runner *r, const cs__rank *rs)
{
	return r->shared.rate_of[rs->ctas < CS__MAX_CTAS ? rs->ctas : CS__MAX_CTAS];
}
/* Communication kernels on `local` take (ctas > 0) or give back (< 0) SMs:
 * a compute op running there continues at the rate the GPU now gives it. */
static inline void cs__run_contend(cs_runner *r, int64_t local, int ctas)
{
	cs__rank *rs = &r->shared.ranks[local];
	int k = (int)rs->ctas + ctas;
	rs->ctas = (uint16_t)(k < 0 ? 0 : k > 0xffff ? 0xffff : k);
	if (!(rs->busy & (1u << CS_STREAM_COMPUTE)))
		return;
	float rate = cs__run_rate(r, rs);
	if (rate != rs->comp_rate)
		cs__run_retime(r, local, rs, rate);
}
/* Member `local` arrives at op on instance gi: with contention, its NCCL
 * kernel runs from now on, one CTA per channel, spinning on its SMs until
 * the others arrive, and holds them until it completes (the tuner's answer
 * kept in tc). */
static inline void cs__run_hold(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op,
				cs__comm_table *t, int64_t gi, cs__tunes *tc)
{
	if (!r->shared.contend)
		return;
	int channels = cs__run_tune(r, tc, t, gi, local, op)->choice.channels;
	if (channels <= 0)
		return;
	rs->held[s] = (uint8_t)(channels > 255 ? 255 : channels);
	cs__run_contend(r, local, rs->held[s]);
}

#endif
