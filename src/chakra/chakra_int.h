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

/* The most bytes a node may move or allocate (2^60, an exabyte): beyond
 * any GPU's, and far from the doubles' and the times' overflow. */
#define CS__CHAKRA_MAX_BYTES 1152921504606846976.0

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

/* A checksum of `len` bytes (FNV-1a, eight bytes at a time; never 0): the
 * manifest's, and the key under which identical traces share a decode. */
uint64_t cs__chakra_checksum(const void *buf, size_t len);

/* An export's manifest (manifest.c): the ranks and nodes written and each
 * file's name (no folder), size and checksum. */
typedef struct cs__chakra_manifest_entry {
	char *name;
	unsigned long long size;
	uint64_t sum;
	int seen; /* checked by this load */
} cs__chakra_manifest_entry;

typedef struct cs__chakra_manifest {
	char path[4096];
	int64_t ranks, nodes;
	cs__chakra_manifest_entry *e;
	size_t n;
} cs__chakra_manifest;

/* Write the manifest `path` (a new file) of files[0..nfiles), each read
 * back for its size and checksum. CS_ERR_SIM when it cannot be written. */
cs_status cs__chakra_manifest_write(const char *path, int64_t ranks, int64_t nodes, char *const *files,
				    size_t nfiles, cs_diag *diag);
/* Read one ("PATH:LINE: ..." for a line it cannot read); the caller frees
 * it with cs__chakra_manifest_free. */
cs_status cs__chakra_manifest_load(const char *path, cs__chakra_manifest **out, cs_diag *diag);
void cs__chakra_manifest_free(cs__chakra_manifest *m);
/* The entry of the file `path` (its name after the last '/'), or NULL. */
cs__chakra_manifest_entry *cs__chakra_manifest_find(cs__chakra_manifest *m, const char *path);
/* The bytes read from `path` are what the manifest lists (and it is marked
 * seen): CS_OK, or CS_ERR_INPUT when the manifest has no such file or its
 * size or checksum differs. */
cs_status cs__chakra_manifest_check(cs__chakra_manifest *m, const char *path, const void *buf, size_t len,
				    cs_diag *diag);
/* CS_ERR_INPUT naming the first file the manifest lists that was not seen
 * in folder `dir`. */
cs_status cs__chakra_manifest_missing(const cs__chakra_manifest *m, const char *dir, cs_diag *diag);

#endif
