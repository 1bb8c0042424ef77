/*
 * config.h - the scenario loader's verbs for the rest of the project.
 *
 * A scenario is built in this order: cs_config_defaults, the presets the
 * file names (cluster.gpu, model.preset), the file's values, the --set
 * overrides (cs_config_apply_override), then cs_config_validate, which
 * derives what was left open (dp, global_batch, the server fabric of the
 * GPU, ...) and checks the fields against each other.
 *
 * One const table of keys (cs_config_key_at) drives the file loader, the
 * overrides, the documentation check and `--help` listings. Nothing here
 * keeps global state.
 *
 * Messages written into `msg` buffers or cs_diag are one lowercase line with
 * the subject in quotes; the loader prefixes them with "file:line:col: ".
 */
#ifndef CS_CONFIG_CONFIG_H
#define CS_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"
#include "config/scenario.h"

/* Largest cluster accepted, in GPUs (nodes x gpus_per_node). */
#define CS_CONFIG_MAX_GPUS 10000000
/* Most micro-batches per step (the programs hold every one of them). */
#define CS_CONFIG_MAX_MICRO_BATCHES 100000
/* Most ranks simulated one by one (about 400 bytes of state each); folding
 * simulates one rank per pipeline stage. */
#define CS_CONFIG_MAX_RANKS 2000000
/* Why the scenario's ranks of a stage can differ, so that a folded run
 * would not equal the full one (documents, GPU variation, flow fidelity,
 * the fleet's spread), with the key that says so in *key (when key is not
 * NULL); NULL when nothing does. Perturbations and slow machines are not
 * among them: a folded run simulates the replicas they touch whole. */
const char *cs_config_fold_blocker(const cs_scenario *sc, const char **key);
/* Largest scenario file accepted, in bytes. */
#define CS_CONFIG_MAX_FILE (16 * 1024 * 1024)
/* Limits on a scenario's YAML, checked in one pass before its tree is
 * built: nesting, nodes, keys in one mapping (docs/scenarios.md). */
#define CS_CONFIG_MAX_DEPTH 32
#define CS_CONFIG_MAX_NODES 200000
#define CS_CONFIG_MAX_KEYS 1000

/* ---- the key table ------------------------------------------------------ */

typedef enum cs_config_kind {
	CS_KIND_INT,          /* integer */
	CS_KIND_FLOAT,        /* real number */
	CS_KIND_BOOL,         /* true | false */
	CS_KIND_STRING,       /* text */
	CS_KIND_ENUM,         /* one of `names` */
	CS_KIND_SIZE,         /* bytes: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB */
	CS_KIND_BANDWIDTH,    /* bytes/s: B/s ... TB/s, KiB/s ... GiB/s, Mb/s, Gb/s, Tb/s */
	CS_KIND_TIME,         /* integer ns: ns, us (µs), ms, s */
	CS_KIND_FLOPS,        /* FLOP/s: FLOPS, GFLOPS, TFLOPS, PFLOPS */
	CS_KIND_RATIO,        /* a fraction, plain number */
	CS_KIND_ORDER,        /* mesh axis order, "tp-cp-ep-pp-dp" */
	CS_KIND_GPU_PRESET,   /* a name from cs_preset_gpu_name */
	CS_KIND_MODEL_PRESET, /* a name from cs_preset_model_name */
	CS_KIND_SET           /* some of `names` (a bit each): a list, or a string of names */
} cs_config_kind;

typedef struct cs_config_key {
	const char *path; /* dotted, "cluster.scale_out.bandwidth" */
	cs_config_kind kind;
	size_t offset;            /* into cs_scenario */
	size_t size;              /* of the field there */
	double min, max;          /* limits of the value in base units */
	bool min_open;            /* min itself is refused (value must exceed it) */
	const char *const *names; /* CS_KIND_ENUM, CS_KIND_SET: names in order, NULL-terminated;
	                           * CS_KIND_INT: a word taken as 0 ("auto"), or NULL */
	const char *def;          /* documented default */
	const char *desc;         /* one line */
} cs_config_key;

size_t cs_config_key_count(void);
const cs_config_key *cs_config_key_at(size_t i);
/* The key with this dotted path (the aliases "cluster.gpu" and "model" name
 * their preset keys), or NULL. */
const cs_config_key *cs_config_key_find(const char *path);
/* "int", "size", ... and an example value with its unit ("25 MiB"). */
const char *cs_config_kind_name(cs_config_kind kind);
const char *cs_config_kind_example(cs_config_kind kind);

/* ---- scenario building -------------------------------------------------- */

/* Values cs_config_validate filled in (bits of cs_scenario.derived). */
enum {
	CS_DERIVED_DP = 1u << 0,
	CS_DERIVED_GLOBAL_BATCH = 1u << 1,
	CS_DERIVED_DOMAIN = 1u << 2,
	CS_DERIVED_VSTAGES = 1u << 3,
	CS_DERIVED_SCALE_UP_BW = 1u << 4,
	CS_DERIVED_SCALE_UP_LAT = 1u << 5,
	CS_DERIVED_SCALE_OUT_BW = 1u << 6,
	CS_DERIVED_SCALE_OUT_LAT = 1u << 7,
	CS_DERIVED_NICS = 1u << 8,
	CS_DERIVED_PCIE_BW = 1u << 9,
	CS_DERIVED_PCIE_LAT = 1u << 10,
	CS_DERIVED_KV_HEADS = 1u << 11,
	CS_DERIVED_MAX_POS = 1u << 12,
	CS_DERIVED_EXPERT_FFN = 1u << 13,
	CS_DERIVED_ICI_BW = 1u << 14
};

/* Fill every default; fields derived later hold 0 (or -1 for latencies). */
cs_status cs_config_defaults(cs_scenario *sc);

/* Apply "key.path=value" with the file's units and checks. Setting
 * cluster.gpu (model.preset) replaces the whole GPU (model) with the preset;
 * values derived by an earlier validation are reopened, so call
 * cs_config_validate afterwards. Errors read "--set 'key=value': ...". */
cs_status cs_config_apply_override(cs_scenario *sc, const char *assignment, cs_diag *diag);

/* Where `key`'s value came from, for a message about it found after loading:
 * "file:line:col", "--set 'key'" or, for a default, the file's path. */
void cs_config_locate(const cs_scenario *sc, const char *key, char *out, size_t n);

/* Derive open values, then check fields against each other. The files
 * the scenario names are not opened here (hw/files.h). */
cs_status cs_config_validate(cs_scenario *sc, cs_diag *diag);

/* cs_scenario_load's first part: read and parse the file ("-": standard
 * input), apply the overrides and validate, without opening the files it
 * names. Same ownership and errors. */
cs_status cs_config_load(const char *path, const char *const *overrides, size_t n_overrides,
			 cs_scenario **out, cs_diag *diag);
/* Free a scenario cs_config_load made (NULL is fine). */
void cs_config_free(cs_scenario *sc);

/* ---- units (also for the command line) ---------------------------------- */

/* Each parses "<number>[ ]<unit>" (a unit is required) into base units and
 * returns CS_OK, or CS_ERR_INPUT with a message in msg (size n). Negative
 * values, NaN and infinities are refused. */
cs_status cs_parse_size(const char *text, double *bytes, char *msg, size_t n);
cs_status cs_parse_bandwidth(const char *text, double *bytes_per_s, char *msg, size_t n);
cs_status cs_parse_time(const char *text, int64_t *ns, char *msg, size_t n);
cs_status cs_parse_flops(const char *text, double *flops, char *msg, size_t n);

/* ---- presets ------------------------------------------------------------ */

/* NULL when unknown; the tables are static and never freed. */
const cs_gpu_spec *cs_preset_gpu(const char *name);
const cs_model_spec *cs_preset_model(const char *name);
/* Name number i, or NULL past the end. */
const char *cs_preset_gpu_name(size_t i);
const char *cs_preset_model_name(size_t i);

/* Fill the standard 8-GPU server of this GPU's generation (arch): NVLink
 * scale-up, eight InfiniBand NICs, PCIe, one NVLink domain of 8; for a
 * rack-scale GPU (gb200-nvl72, gb300-nvl72) its rack: trays of 4 GPUs with
 * a NIC each in one NVLink domain of 72 (scale_up_domain > gpus_per_node). */
void cs_preset_server_defaults(const cs_gpu_spec *gpu, cs_cluster_spec *c);

/* The names of the scenario's enums, as the key table reads them ('-' and
 * '_' alike) and as every report prints them; "?" out of range. */
const char *cs_coll_algo_name(cs_coll_algo a);               /* "auto", "ring", ..., "nvls_tree" */
const char *cs_coll_proto_name(cs_coll_proto p);             /* "auto", "ll", "ll128", "simple" */
const char *cs_sched_name(cs_schedule s);                    /* "gpipe", "1f1b", ..., "zb-v" */
const char *cs_sharding_name(cs_sharding s);                 /* "none", "zero1", ..., "hybrid" */
const char *cs_recompute_name(cs_recompute r);               /* "none", "selective", "full" */
const char *cs_recompute_method_name(cs_recompute_method r); /* "uniform", "block" */
/* The name of selective recomputation's module bit `bit` (CS_RCM_), or "?". */
const char *cs_recompute_module_name(unsigned bit);
const char *cs_arch_name(cs_arch_kind a);        /* "gpt", "llama" */
const char *cs_activation_name(cs_activation a); /* "auto", "gelu", "relu", "swiglu" */
const char *cs_precision_name(cs_precision p);   /* "bf16", ..., "mxfp8", "nvfp4" */
/* The fleet's effects with the preset filling those left unset (< 0):
 * production values (docs/references.md, "The fleet"), or all off for
 * 'ideal'. */
void cs_fleet_resolve(const cs_fleet_spec *in, cs_fleet_spec *out);

/* "nvlink", "nic", "leaf" or "pod": the names the stragglers take. */
const char *cs_tier_name(cs_tier t);

/* ---- suggestions -------------------------------------------------------- */

/* The candidate closest to word by edit distance (case-insensitive), or NULL
 * when none is close enough to be a likely typo. */
const char *cs_suggest(const char *word, const char *const *candidates, size_t n);

/* Whether two enum names are the same, '-' and '_' alike ("nvls-tree" is
 * "nvls_tree"): every name a report prints is accepted back. */
bool cs_name_eq(const char *a, const char *b);

#endif
