/*
 * path.h - the critical path, carried forward as the simulation runs.
 *
 * Every op starts when its last predecessor ends: the previous op of its
 * stream, a dependency, or (for a collective) the last member to arrive.
 * The path that ends at an op is the path of that predecessor plus the op.
 * Each rank keeps, per counter, the path ending at the counter's latest
 * completion; the path ending at the step's last op is the critical path.
 * A path is a fixed-size summary: time by category (which sums to the time
 * the path ends), the number of rank changes, the rank it stayed on longest,
 * and its last hops (which rank it came from and what carried it there).
 */
#ifndef CS_RUN_PATH_H
#define CS_RUN_PATH_H

#include <stdint.h>

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"
#include "config/config.h"
#include "core/sim.h"

#define CS_PATH_HOPS 8

/* A hop in 16 bytes, for paths are copied at nearly every op: the ranks
 * it left and reached (24 bits each), the cs_comm_kind that carried the
 * delay (4 bits), the cs_coll_op (or CS_COLL_SEND_RECV for a pipeline
 * send, 5 bits) and the highest tier it crossed (3 bits) packed in `what`
 * (cs_path_hop_* unpack them); when the transfer ended in `at`. */
typedef struct cs_path_hop {
	uint64_t what;
	cs_time at;
} cs_path_hop;

_Static_assert(CS_CONFIG_MAX_GPUS < (1 << 24), "a hop keeps a rank in 24 bits");
_Static_assert(CS_COMM_KINDS <= 16 && CS_COLL_OPS <= 32 && CS_TIERS <= 8, "a hop's fields");

static inline int64_t cs_path_hop_from(const cs_path_hop *h) { return (int64_t)(h->what & 0xffffff); }
static inline int64_t cs_path_hop_to(const cs_path_hop *h) { return (int64_t)((h->what >> 24) & 0xffffff); }
static inline int cs_path_hop_kind(const cs_path_hop *h) { return (int)((h->what >> 48) & 0xf); }
static inline int cs_path_hop_coll(const cs_path_hop *h) { return (int)((h->what >> 52) & 0x1f); }
static inline int cs_path_hop_tier(const cs_path_hop *h) { return (int)((h->what >> 57) & 0x7); }

typedef struct cs_path {
	cs_time compute;
	cs_time comm[CS_COMM_KINDS];
	int64_t rank;     /* where the path is now */
	cs_time stretch;  /* compute time on `rank` since the last hop */
	int64_t top_rank; /* the rank with the longest stretch so far */
	cs_time top;
	int32_t hops;
	int16_t nlast; /* valid entries in last[] */
	int16_t first; /* the oldest of them: last[] is a ring until
	                         * cs_path_finish puts it in order */
	cs_path_hop last[CS_PATH_HOPS];
} cs_path;

/* An empty path starting at `rank` at time 0. */
void cs_path_start(cs_path *p, int64_t rank);
/* Extend by `d` ns of compute on the path's rank. */
static inline void cs_path_compute(cs_path *p, cs_time d)
{
	p->compute += d;
	p->stretch += d;
}
/* Extend by a transfer of kind `kind` lasting d that moved the path to
 * rank `to` (== the current rank when it stays). */
void cs_path_transfer(cs_path *p, cs_time d, int kind, int coll, int tier, int64_t to, cs_time end);
/* Close the current stretch and put last[] oldest first (call once on
 * the final path). */
void cs_path_finish(cs_path *p);

#endif
