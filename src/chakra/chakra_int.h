/*
 * chakra_int.h - what the files of src/chakra share: the varint framing,
 * the collective types, the JSON files' reader, the checksum of a file's
 * bytes and the manifest of an export. Private to src/chakra.
 */
#ifndef CS_CHAKRA_CHAKRA_INT_H
#define CS_CHAKRA_CHAKRA_INT_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"
#include "program/program.h"

/* Chakra's CollectiveCommType values. */
enum {
	CS_CHAKRA_ALL_REDUCE,
	CS_CHAKRA_REDUCE,
	CS_CHAKRA_ALL_GATHER,
	CS_CHAKRA_GATHER,
	CS_CHAKRA_SCATTER,
	CS_CHAKRA_BROADCAST,
	CS_CHAKRA_ALL_TO_ALL,
	CS_CHAKRA_REDUCE_SCATTER,
	CS_CHAKRA_REDUCE_SCATTER_BLOCK,
	CS_CHAKRA_BARRIER
};

/* Write `v` as a base-128 varint at p (at most 10 bytes); its length. */
size_t cs__chakra_varint_put(uint8_t *p, uint64_t v);
/* Read a varint from p (len bytes there): the bytes it took, or 0 when it
 * is cut short or longer than 10 bytes. */
size_t cs__chakra_varint_get(const uint8_t *p, size_t len, uint64_t *v);

/* The Chakra type of a collective; clustersim's ring exchange of K/V
 * (CS_COLL_SEND_RECV on a group), which Chakra has no type for, goes out
 * as an all-gather (the cs_coll attribute keeps the truth). */
int cs__chakra_comm_type(cs_coll_op op);
/* The collective of a Chakra type: 0, or -1 for a type it does not know.
 * A barrier is an all-reduce of the node's size. */
int cs__chakra_coll_of(int64_t type, cs_coll_op *op);

/* Memory for decoding one message at a time: protobuf-c allocates from a
 * block that is reset between messages (its frees do nothing), instead of
 * a malloc and a free per field. What does not fit the block is malloc'ed
 * and freed at the reset. */
typedef struct cs__chakra_arena {
	ProtobufCAllocator pa; /* what protobuf-c is given; its data is the arena */
	uint8_t *block;
	size_t cap, used;
	void **big;
	size_t nbig, bigcap;
	int failed; /* an allocation failed since the last reset */
} cs__chakra_arena;

void cs__chakra_arena_init(cs__chakra_arena *a);
void cs__chakra_arena_reset(cs__chakra_arena *a);
void cs__chakra_arena_free(cs__chakra_arena *a);

/* A decoded node, before it has a place on a stream. */
typedef struct cs__chakra_node {
	uint64_t id;
	int64_t dep0; /* its first dependency in the graph's deps */
	int32_t ndeps;
	int32_t nctrl; /* of them, control dependencies (the first ones) */
	int8_t stream; /* -1: a receive, which is no op */
	uint8_t mbox;  /* a receive's mailbox counter */
	cs_op op;
} cs__chakra_node;

/* A rank's decoded nodes, in file order, and their dependencies (node ids). */
typedef struct cs__chakra_graph {
	const char *name; /* the file, for messages */
	cs__chakra_node *nodes;
	int64_t n;
	uint64_t *deps;
	int64_t ndeps;
	int64_t dropped; /* control dependencies left out */
	int ctrl_cycle;  /* all of them, for they formed a cycle */
} cs__chakra_graph;

/* Append the graph's nodes to `p` in a dependency order (file order where
 * it allows), each on its stream, waits as counters. The graph's deps are
 * rewritten in place. A control dependency on a node that is not there is
 * left out (counted in g->dropped: PyTorch's converter keeps them on the
 * host's parent ops, and Chakra's feeder follows data dependencies only);
 * CS_ERR_INPUT with "NAME: node ID: ..." for a data dependency on a node
 * that is not there, an id used twice or a cycle. When the control
 * dependencies close a cycle, they are all left out (g->ctrl_cycle) and
 * the data dependencies alone order the nodes, as Chakra's feeder does. */
cs_status cs__chakra_place(cs__chakra_graph *g, cs_program *p, cs_diag *diag);

/* Read the JSON file `path` whole (a regular file of at most `limit`
 * bytes, cs_file_read's messages) and parse it, duplicate keys refused:
 * *out, which the caller frees with json_decref, or CS_ERR_INPUT with
 * "PATH:LINE:COL: reason". */
struct json_t;
cs_status cs__chakra_json_load(const char *path, size_t limit, struct json_t **out, cs_diag *diag);

#endif
