/*
 * schedule.h - explicit step-by-step schedules of collective algorithms.
 *
 * A schedule is a list of transfers: in step `step`, rank `src` sends the
 * elements [off, off+len) of its buffer to rank `dst`, which either adds them
 * to its own copy (reduce) or overwrites its copy (copy). Transfers of one
 * step are concurrent: each reads the buffers as they were when the step
 * began. The timing model counts steps and bytes from the same code, and the
 * flow fidelity replays the transfers on links.
 *
 * Chunking: a buffer of `count` elements is cut into nchunk chunks, chunk c
 * being [c*count/nchunk, (c+1)*count/nchunk): sizes differ by at most one.
 */
#ifndef CS_COLL_SCHEDULE_H
#define CS_COLL_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll_op.h"

typedef struct cs_coll_xfer {
	int32_t step;
	int64_t src, dst;
	int64_t off, len; /* elements */
	int reduce;       /* 1: dst += src; 0: dst = src */
} cs_coll_xfer;

/* A growable list of transfers; zero-initialise, free with cs_coll_sched_free. */
typedef struct cs_coll_sched {
	cs_coll_xfer *x;
	size_t n, cap;
	int32_t nsteps;
} cs_coll_sched;

void cs_coll_sched_free(cs_coll_sched *s);

/* Append one transfer, growing the list (internal to the schedules);
 * 0, or -1 on out-of-memory. */
int cs__coll_sched_push(cs_coll_sched *s, int32_t step, int64_t src, int64_t dst, int64_t off, int64_t len,
			int reduce);

/* Chunk c of nchunk over count elements. */
void cs_coll_chunk(int64_t count, int64_t nchunk, int64_t c, int64_t *off, int64_t *len);

/* Ring over ranks 0..n-1 (rank r sends to r+1 mod n) for all-reduce,
 * reduce-scatter or all-gather of `count` elements (the full buffer).
 * Reduce-scatter: step k, rank r reduces chunk (r-k) mod n into rank r+1;
 * rank r ends owning chunk (r+1) mod n. All-gather: rank r starts owning
 * chunk (r+1) mod n (the reduce-scatter's result) and step k forwards chunk
 * (r+1-k) mod n. All-reduce is the two in sequence. Appends to *s; returns 0,
 * or -1 on out-of-memory or an op the ring does not schedule. */
int cs_coll_ring_schedule(cs_coll_op op, int64_t n, int64_t count, cs_coll_sched *s);

/* Chunk owned by rank r after a ring reduce-scatter (and before all-gather). */
int64_t cs_coll_ring_owned_chunk(int64_t r, int64_t n);

/* The double binary tree all-reduce over nnodes nodes of ppn ranks each
 * (rank = node * ppn + local). Tree 0 is an in-order binary tree over nodes;
 * tree 1 is its mirror (node i -> nnodes-1-i). Inside a node the ranks form
 * a chain below the node's head (local 0). Tree t reduces half t of the
 * buffer to its root, then broadcasts it down. Appends to *s. */
int cs_coll_tree_schedule(int64_t nnodes, int64_t ppn, int64_t count, cs_coll_sched *s);

/* In-order binary tree over n nodes, root 0: parent of node i (-1 for the
 * root) and its up-to-two children (-1 when absent). */
void cs_coll_btree(int64_t n, int64_t i, int64_t *parent, int64_t *child0, int64_t *child1);

/* Torus collectives (torus.c) over a grid of ndims dimensions, k[d] ranks
 * along dimension d (rank = mixed radix, dimension 0 fastest), `count`
 * elements (the full buffer, as for the ring). Along each dimension the
 * ranks form bidirectional rings: the first half of each piece goes up the
 * ring, the second half down. concurrent = 0: the dimensions in order, on
 * the whole buffer; 1: the torus algorithm, the buffer cut in one part per
 * dimension spanned, part p reduce-scattering along dimensions p, p+1, ...
 * then all-gathering back in reverse. All-reduce, reduce-scatter or
 * all-gather; an all-gather starts from what the reduce-scatter leaves.
 * When owner is non-NULL, owner[e] (count entries) receives the rank that
 * holds element e after the reduce-scatter. Appends to *s; 0, or -1 on
 * out-of-memory or another op. */
int cs_coll_torus_schedule(cs_coll_op op, int ndims, const int64_t *k, int concurrent, int64_t count,
			   cs_coll_sched *s, int64_t *owner);

/* Closed forms the timing model uses. */
int64_t cs_coll_ring_steps(cs_coll_op op, int64_t n);
double cs_coll_ring_bytes_on_wire(cs_coll_op op, double bytes, int64_t n);
/* Depth of the double binary tree: chain (ppn-1) plus the tree over nodes. */
int64_t cs_coll_tree_depth(int64_t nnodes, int64_t ppn);

#endif
