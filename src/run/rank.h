/*
 * rank.h - a rank's state as the runner keeps it: its layout on cache
 * lines, the template its program is dispatched from, the packing of the
 * engine's event arguments and the flow network's tags, and what moving a
 * counter does. Private to src/run.
 */
#ifndef CS_RUN_RANK_H
#define CS_RUN_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/runner.h"

#define CS__NO_COUNTER 0xff

/* busy, retry, waiters and a template's stream_mask keep a bit per stream
 * in a byte; the engine's event args keep a stream in 4 bits */
_Static_assert(CS_STREAMS <= 8, "stream bit masks are uint8_t");
/* ---- event arguments ------------------------------------------------------
 * The engine gives each event one uint64_t and the flow network one tag per
 * flow; what they carry is packed and unpacked here and nowhere else.
 *
 * A ticket names a rank (local < 2^32) and, for the compute stream, the
 * generation of the op an event is for: an op re-timed under contention may
 * have events for times it no longer ends at (cs__run_contend). An op's
 * end is an item of the engine's merge of its stream (cs_sim_at_merge), a
 * ticket; a collective's event carries the slot, group kind and stream of
 * its comm table; a flow's tag either a collective's event or a pipeline
 * send's local and stream with the top bit set.
 */
typedef int64_t cs__ticket;
#define CS__GEN_MASK 0x07ffffffu /* 27 bits, as a ticket once also held a stream */

_Static_assert(CS_STREAMS <= CS_SIM_MERGE_KEYS, "an op's end merges by its stream");
_Static_assert(CS_STREAMS <= 16, "a send's tag keeps its stream in 4 bits");
_Static_assert(CS_GROUP_KINDS <= 256, "a collective event keeps its group kind in 8 bits");

static inline cs__ticket cs__ticket_of(int64_t local, uint32_t gen)
{
	return local | (int64_t)((uint64_t)(gen & CS__GEN_MASK) << 32);
}
static inline int64_t cs__ticket_local(cs__ticket t) { return t & 0xffffffff; }
static inline uint32_t cs__ticket_gen(cs__ticket t) { return (uint32_t)((uint64_t)t >> 32); }

typedef struct cs__coll_ev {
	int64_t slot; /* in the comm table [kind][stream] */
	int kind;     /* cs_group_kind */
	int stream;
} cs__coll_ev;

static inline uint64_t cs__coll_ev_pack(cs__coll_ev e)
{
	return ((uint64_t)e.slot << 16) | ((uint64_t)e.kind << 8) | (uint64_t)e.stream;
}
static inline cs__coll_ev cs__coll_ev_unpack(uint64_t a)
{
	return (cs__coll_ev){ .slot = (int64_t)(a >> 16),
			      .kind = (int)((a >> 8) & 0xff),
			      .stream = (int)(a & 0xff) };
}

typedef struct cs__send {
	int64_t local; /* the sender */
	int stream;
} cs__send;

#define CS__SEND_TAG (1ull << 63)
static inline uint64_t cs__send_tag(int64_t local, int stream)
{
	return CS__SEND_TAG | (uint64_t)local << 5 | (uint64_t)stream;
}
static inline bool cs__tag_is_send(uint64_t tag) { return (tag & CS__SEND_TAG) != 0; }
/* The sender's local and stream of a send's tag. */
static inline cs__send cs__send_of(uint64_t tag)
{
	return (cs__send){ .local = (int64_t)((tag & ~CS__SEND_TAG) >> 5), .stream = (int)(tag & 15u) };
}

/* A path named by the collective it extends rather than copied: the
 * instance's path of generation `parity` (cs__comm_table.paths), the transfer
 * to this member that ended at `end`, then `add` ns of compute. A
 * member's counter that a collective moved reads as one with add 0; the
 * compute counter keeps one in its path slot while its kernels follow
 * such a counter, so a tensor-parallel layer's kernels copy no path. */
typedef struct cs__path_ref {
	int32_t gi;
	uint8_t kind, stream, parity, comm, coll;
	cs_time end, add;
} cs__path_ref;

/* A rank's state, what every op touches first: a large run waits on the
 * lines of these, so what every op reads lies on the first four, what a
 * traced run reads at every op on the fifth, and what only pipeline sends
 * read after them; the trace's times are in cs__rank_times. */
typedef struct cs__rank {
	/* line 0, what every try reads: a stream's counter is also its
	 * program counter (the ops it completed), and what waits on them */
	_Alignas(64) int32_t cnt[CS_COUNTERS];
	uint16_t tmpl;
	uint8_t busy;                 /* bit per stream */
	uint8_t retry;                /* bit per stream: try it at the next try_rank */
	uint8_t waiters[CS_COUNTERS]; /* bits of the streams whose head waits on a counter */
	uint8_t wait_counter;         /* counter the compute stream waits on, or CS__NO_COUNTER */
	uint16_t left[CS_STREAMS];    /* moves of that counter the head still waits for
	                               * (at most 65535: then it is tried, and waits again) */
	/* line 1, what a compute op's start and end read: its rate, its end
	 * and the clock model */
	_Alignas(64) float factor;
	float comp_rate;          /* rate of the running compute op (contention) */
	uint32_t comp_gen;        /* compute ops started, to tell their events apart */
	uint16_t ctas;            /* SMs held by the rank's communication kernels */
	uint8_t held[CS_STREAMS]; /* of them, by the op running on each stream */
	cs_time comp_end;         /* when the running compute op ends */
	cs_time comp_wake;        /* the earliest event pending for it */
	cs_time clk_at;           /* clock model: the controller's view is up to here */
	double clk_g, clk_h;      /* its averages: GEMM share of time, W left under the cap */
	/* lines 2 and 3, what an op adds to and a collective looks up */
	_Alignas(64) cs_rank_stats st;
	double mem;
	cs_time blocked_at;
	cs_time wait_xfer;            /* transfer time seen while the compute stream waits */
	int32_t gidx[CS_GROUP_KINDS]; /* group instance per kind, -1 until needed (the
	                               * last, hybrid sharding's, lies past line 3) */
	/* line 4, what a traced run reads at every op: per stream, the counter
	 * whose path its op in flight extends, read in place until that path
	 * changes (then copied to the stream's own slot: CS__PATH_OWN) */
	uint8_t path_from[CS_STREAMS];
	bool comp_path_ref; /* the compute counter's path is path_refs[local], not its cs__slot */
	/* bit per counter whose path a collective set last, and is read from
	 * the collective's (cs__run_flying_path), and the parity of its generation */
	uint16_t coll_paths, parity;
	/* what only pipeline sends read */
	cs_time send_at; /* when the pipeline send in flight started */
	/* pipeline peers down [0] and up [1], and the time of the last message
	 * size sent each way (links do not change during a run) */
	int64_t p2p_peer[2];
	double p2p_bytes[2];
	cs_time p2p_ns[2];
	double p2p_net[2];   /* flow fidelity: the bytes that message puts on the net */
	uint8_t p2p_ch[2];   /* channels of the last message size each way */
	uint8_t p2p_tier[2]; /* the highest tier a message crosses each way */
	int32_t p2p_plan[2]; /* flow fidelity: the net's plan of that message + 1,
	                               * 0 not yet asked, -1 not kept */
} cs__rank;

_Static_assert(CS_COUNTERS <= 16, "coll_paths and parity keep a bit per counter");
/* What a large run streams through for every op: four lines of a rank,
 * and a fifth when traced */
#define CS__RANK_HOT_BYTES offsetof(cs__rank, gidx[CS_GROUP_DP_INTER])
_Static_assert(offsetof(cs__rank, factor) == 64 && CS__RANK_HOT_BYTES <= 256,
	       "a rank's hot state lies on its first four cache lines");
_Static_assert(offsetof(cs__rank, send_at) <= 320, "its traced state on the fifth");

#define CS__PATH_OWN 0xff

/* When each rank's ops began and its counters moved: kept only for the
 * trace and the critical path (r->shared.times). */
typedef struct cs__rank_times {
	cs_time started[CS_STREAMS];  /* when the op at the head began */
	cs_time done_at[CS_COUNTERS]; /* when each counter last moved */
} cs__rank_times;

/* What every op's dispatch reads of its rank's program (cs_program is
 * larger than a power of two, so indexing it multiplies), in 128 bytes. */
typedef struct cs__tmpl {
	_Alignas(128) const cs_op *ops[CS_STREAMS];
	int32_t nops[CS_STREAMS];
	const cs_dep *deps;
	uint8_t stream_mask; /* streams that have ops */
} cs__tmpl;

_Static_assert(sizeof(cs__tmpl) == 128, "a template's dispatch table is indexed by a shift");

/* The first dependency of op, an op of template p, that rs lacks, -1 for
 * none; *short_by: how many moves of its counter it still needs. */
static inline int cs__run_unmet_dep(const cs__tmpl *p, const cs__rank *rs, const cs_op *op, int32_t *short_by)
{
	const cs_dep *d = &p->deps[op->dep];
	for (int i = 0; i < op->ndeps; i++)
		if (rs->cnt[d[i].counter] < d[i].value) {
			*short_by = d[i].value - rs->cnt[d[i].counter];
			return d[i].counter;
		}
	return -1;
}

/* Counter c of rs moved: the streams waiting on it whose dependency it now
 * meets are tried again (a stream waits on the first dependency its head
 * lacks, which counters only move towards). */
static inline void cs__run_counter_moved(cs__rank *rs, int c)
{
	rs->cnt[c]++;
	for (unsigned w = rs->waiters[c]; w; w &= w - 1) {
		int s = __builtin_ctz(w);
		if (--rs->left[s] == 0) {
			rs->retry |= (uint8_t)(1u << s);
			rs->waiters[c] &= (uint8_t) ~(1u << s);
		}
	}
}

#endif
