/*
 * chakra.h - MLCommons Chakra execution traces: clustersim's programs out,
 * anyone's traces in.
 *
 * A Chakra ET file holds one rank's work: a GlobalMetadata message, then
 * Node messages, each prefixed with its length as a varint. Nodes are
 * compute kernels (a duration), collectives (type, size, process group),
 * point-to-point sends and receives, with control and data dependencies on
 * other nodes of the same file. ASTRA-sim reads one file per rank, named
 * <prefix>.<rank>.et.
 *
 * Export writes the programs cs_plan_build makes, one file per rank, node by
 * node. Import turns each file into a program (compute stream, comm streams
 * by process group, pipeline mailboxes for receives) for the runner; ranks
 * whose files decode to the same program share one template.
 *
 * Process groups are named "<kind>.<instance>" ("tp.3", "dp.0", "dp-intra.1"),
 * the group instances of the scenario's mesh (program/mesh.h); a bare "<kind>"
 * means the group of that kind that holds the rank, any other name one of a
 * comm-group file's ({"NAME": [ranks]}, matched to the mesh's groups by
 * their ranks), and no name the group spanning every rank.
 */
#ifndef CS_CHAKRA_CHAKRA_H
#define CS_CHAKRA_CHAKRA_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clustersim/clustersim.h"
#include "config/scenario.h"
#include "program/mesh.h"
#include "program/program.h"

/* Chakra's NodeType values. */
enum {
	CS_CHAKRA_METADATA = 1,
	CS_CHAKRA_MEM_LOAD,
	CS_CHAKRA_MEM_STORE,
	CS_CHAKRA_COMP,
	CS_CHAKRA_SEND,
	CS_CHAKRA_RECV,
	CS_CHAKRA_COLL,
	CS_CHAKRA_STORAGE,
	CS_CHAKRA_BATCH,
	CS_CHAKRA_CHECKPOINT
};

/* What an export wrote. */
typedef struct cs_chakra_written {
	int64_t files;     /* one per rank */
	int64_t templates; /* distinct programs behind them */
	int64_t nodes;     /* in all files */
	int64_t bytes;
} cs_chakra_written;

/* Build the scenario's programs and write DIR/<prefix>.<rank>.et for every
 * rank, DIR/<prefix>.comm_group.json (each process group's ranks, for
 * ASTRA-sim's --comm-group-configuration) and DIR/<prefix>.manifest (the
 * ranks, the nodes, and each file's size and checksum, which
 * cs_chakra_load checks). DIR must exist and hold none of these. Groups
 * are named KIND.INSTANCE ("tp.3") and an all-gather's comm_size is what it
 * gathers (as nccl-tests counts); with `astra_sim`, as ASTRA-sim reads
 * them: groups numbered 1, 2, ... (kind by kind, the instances of a kind in
 * order; it takes pg_name and the comm-group file's names as positive
 * integers) and an all-gather's comm_size the part each rank gives (its
 * ring gathers comm_size from every rank), the gathered size in cs_bytes.
 * Before anything is written the size is estimated (each pipeline stage's
 * first rank encoded, times the ranks of a stage): over `max_bytes`, the
 * export is refused (CS_ERR_INPUT, the size in the message). A failure to
 * write is CS_ERR_SIM. When `stop` (NULL for none) becomes non-zero, no
 * more files are started: CS_ERR_SIM, "interrupted", what was written left
 * for the caller to remove. */
cs_status cs_chakra_export(const cs_scenario *sc, const char *dir, const char *prefix, int astra_sim,
			   int64_t max_bytes, const volatile sig_atomic_t *stop, cs_chakra_written *out,
			   cs_diag *diag);

/* The default bound on an export's size: 1 GiB. */
#define CS_CHAKRA_EXPORT_MAX_BYTES ((int64_t)1 << 30)

/* Write one rank's program `p` (its pipeline stage's template, which
 * `progs` indexes by stage) to the open stream `f`, named `name` in
 * messages. `pg_base`, when not NULL, writes for ASTRA-sim (see
 * cs_chakra_export): group instance i of kind k is numbered pg_base[k] + i.
 * Adds to out->nodes and out->bytes. With `f` NULL nothing is written: the
 * bytes and nodes are counted alone. */
cs_status cs_chakra_write_rank(FILE *f, const char *name, const cs_scenario *sc, const cs_mesh *mesh,
			       const cs_program *progs, int64_t rank, const int64_t *pg_base,
			       cs_chakra_written *out, cs_diag *diag);

/* The largest input files read: a comm-group file, and ASTRA-sim's
 * network.yml and system.json (each read whole). */
#define CS_CHAKRA_GROUPS_MAX_BYTES ((size_t)64 << 20)
#define CS_CHAKRA_ASTRA_MAX_BYTES ((size_t)1 << 20)

/* Named process groups, from a comm-group file. */
typedef struct cs_chakra_groups cs_chakra_groups;

/* Read a comm-group file, {"NAME": [rank, ...], ...}; the caller frees
 * *out with cs_chakra_groups_free. Errors name the file (and line and
 * column for JSON) and the group. */
cs_status cs_chakra_groups_load(const char *path, cs_chakra_groups **out, cs_diag *diag);
void cs_chakra_groups_free(cs_chakra_groups *gs);

/* The group kind of the mesh whose group holding `rank` has exactly the
 * ranks of group `name`: 0 with *kind; -1 when there is no such name; -2
 * when the group does not hold the rank or is no group of the mesh, with
 * the reason in why (cap bytes). */
int cs_chakra_groups_kind(const cs_chakra_groups *gs, const char *name, const cs_mesh *mesh,
			  int64_t gpus_per_node, int64_t rank, uint8_t *kind, char *why, size_t cap);

/* Where to place a trace's ops: the scenario's mesh, the rank, and the
 * named groups (NULL for none). */
typedef struct cs_chakra_where {
	const cs_mesh *mesh;
	int64_t gpus_per_node;
	int64_t rank;
	const cs_chakra_groups *groups;
} cs_chakra_where;

/* The host's side of collectives a decode skipped (PyTorch's
 * c10d::broadcast_ beside its NCCL kernel: a collective node without
 * 'comm_type', or with 'is_cpu_op' true): how many, and their distinct
 * names ("(k)" suffixes cut), comma-separated, as far as they fit. */
typedef struct cs_chakra_skipped {
	int64_t nodes;
	int64_t files;       /* decoded files that had any (cs_chakra_load) */
	int64_t ctrl_deps;   /* control dependencies left out: on nodes not in the trace, */
	int64_t ctrl_cycles; /* or all of a trace's, for they closed a cycle (traces) */
	int more;            /* names left out */
	char names[256];
} cs_chakra_skipped;

/* Decode one rank's trace `buf` (`len` bytes; `name` for messages) into
 * `out`, which the caller has cs_program_init'ed and frees, also on error.
 * Errors are CS_ERR_INPUT with "NAME: node ID: ...", or "NAME: ..." for the
 * framing. *rank_free is set when the program does not depend on the rank
 * (no instance names, no point-to-point peers), so another rank with the
 * same bytes may share it without decoding. The host's side of a
 * collective becomes an op of no time, counted in *skipped (NULL: not
 * counted). */
cs_status cs_chakra_decode(const uint8_t *buf, size_t len, const char *name, const cs_chakra_where *where,
			   cs_program *out, int *rank_free, cs_chakra_skipped *skipped, cs_diag *diag);

/* A set of imported traces: templates and which one each rank runs. */
typedef struct cs_chakra_set cs_chakra_set;

/* Load every rank's trace of `path` for the scenario's cluster and mesh:
 * `path` is a directory holding <prefix>.<rank>.et files (one prefix), or
 * the prefix itself as ASTRA-sim takes it (DIR/prefix). Named process
 * groups come from the comm-group file `groups`, or with NULL from
 * DIR/<prefix>.comm_group.json when there is one. The caller frees *out
 * with cs_chakra_set_free. */
cs_status cs_chakra_load(const char *path, const char *groups, const cs_scenario *sc, cs_chakra_set **out,
			 cs_diag *diag);
void cs_chakra_set_free(cs_chakra_set *s);

/* The templates (owned by the set) and their count. */
const cs_program *cs_chakra_set_programs(const cs_chakra_set *s, int64_t *n);
/* Per rank, the template it runs. */
const uint16_t *cs_chakra_set_template_of(const cs_chakra_set *s);
/* The host's side of collectives skipped, over the files decoded. */
const cs_chakra_skipped *cs_chakra_set_skipped(const cs_chakra_set *s);
/* Files read, and of them the ones decoded (the rest shared a decoded
 * file's bytes). */
int64_t cs_chakra_set_files(const cs_chakra_set *s, int64_t *decoded);

/* ASTRA-sim's analytical network (network.yml) and system (system.json)
 * as scenario overrides ("key=value", as --set takes them): the topology
 * dimensions, NPUs, link bandwidths and latencies as the cluster (rings in
 * every dimension a torus; Switch or FullyConnected, then Switch, a
 * server's NVLink domain and the network between servers), the all-reduce
 * implementation as the collective algorithm. What has no counterpart is
 * refused (a Ring between servers, a third mixed dimension, an
 * implementation clustersim has not) with "FILE:LINE:COL: ..."; the system
 * keys left unmapped are listed in `unmapped`. Either file may be NULL. */
#define CS_CHAKRA_ASTRA_SETS 16
typedef struct cs_chakra_astra {
	char sets[CS_CHAKRA_ASTRA_SETS][96];
	int nsets;
	char unmapped[512];
} cs_chakra_astra;

cs_status cs_chakra_astra_read(const char *network, const char *system, cs_chakra_astra *out, cs_diag *diag);

#endif
