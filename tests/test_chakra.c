/*
 * test_chakra.c - Chakra execution traces: a scenario exported and imported
 * back runs the same step; identical traces share one template; single
 * collectives (ASTRA-sim's microbenchmark traces) take what `coll` says;
 * bad traces are refused with the file, the node and the reason.
 *
 * The hand-made traces are encoded here byte by byte from the Chakra
 * schema's field numbers, independently of the generated decoder.
 */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/chakra.h"
#include "core/file.h"
#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/scenario.h"
#include "hw/files.h"
#include "hw/topo.h"
#include "study/study.h"
#include "tmp_dir.h"

#ifndef CS_SOURCE_ROOT
#define CS_SOURCE_ROOT "."
#endif

/* ---- a minimal protobuf writer ------------------------------------------ */

typedef struct buf {
	uint8_t b[16384];
	size_t n;
} buf;

static void varint(buf *o, uint64_t v)
{
	while (v >= 0x80) {
		o->b[o->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o->b[o->n++] = (uint8_t)v;
}

static void f_varint(buf *o, int field, uint64_t v)
{
	varint(o, (uint64_t)field << 3);
	varint(o, v);
}

static void f_bytes(buf *o, int field, const void *p, size_t n)
{
	varint(o, (uint64_t)field << 3 | 2);
	varint(o, n);
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void attr_int(buf *node, const char *name, int64_t v)
{
	buf a = { .n = 0 };
	f_bytes(&a, 1, name, strlen(name));
	f_varint(&a, 9, (uint64_t)v); /* int64_val */
	f_bytes(node, 10, a.b, a.n);
}

static void attr_str(buf *node, const char *name, const char *v)
{
	buf a = { .n = 0 };
	f_bytes(&a, 1, name, strlen(name));
	f_bytes(&a, 29, v, strlen(v)); /* string_val */
	f_bytes(node, 10, a.b, a.n);
}

/* A node of a hand-made trace; type 0 ends a list. */
typedef struct tnode {
	uint64_t id;
	uint32_t type;
	uint64_t dur_us;
	uint64_t dep[3];
	int ndeps;
	int64_t comm_type, comm_size; /* collectives, sends, receives (-1: left out) */
	const char *pg;
	int64_t peer;                 /* sends: comm_dst, receives: comm_src; -1 none */
	const char *name;
	int cpu;                      /* is_cpu_op: 0 left out, 1 false, 2 true */
	uint64_t ctrl[2];
	int nctrl;
	const char *xname; /* one more attribute: xint, or xdbl when xd */
	int64_t xint;
	double xdbl;
	int xd;
} tnode;

static void attr_dbl(buf *node, int field, const char *name, double v)
{
	buf a = { .n = 0 };
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	f_bytes(&a, 1, name, strlen(name));
	varint(&a, 3 << 3 | 1); /* double_val, 64-bit little-endian */
	for (int i = 0; i < 8; i++)
		a.b[a.n++] = (uint8_t)(u >> (8 * i));
	f_bytes(node, field, a.b, a.n);
}

static void attr_bool(buf *node, const char *name, int v)
{
	buf a = { .n = 0 };
	f_bytes(&a, 1, name, strlen(name));
	f_varint(&a, 27, (uint64_t)v); /* bool_val */
	f_bytes(node, 10, a.b, a.n);
}

static void put_node(buf *file, const tnode *t)
{
	buf n = { .n = 0 };
	f_varint(&n, 1, t->id);
	if (t->name)
		f_bytes(&n, 2, t->name, strlen(t->name));
	f_varint(&n, 3, t->type);
	for (int i = 0; i < t->nctrl; i++)
		f_varint(&n, 4, t->ctrl[i]); /* ctrl_deps, unpacked */
	if (t->ndeps) {
		buf d = { .n = 0 };
		for (int i = 0; i < t->ndeps; i++)
			varint(&d, t->dep[i]);
		f_bytes(&n, 5, d.b, d.n); /* data_deps, packed */
	}
	f_varint(&n, 7, t->dur_us);
	if (t->comm_type >= 0)
		attr_int(&n, "comm_type", t->comm_type);
	if (t->comm_size >= 0)
		attr_int(&n, "comm_size", t->comm_size);
	if (t->pg)
		attr_str(&n, "pg_name", t->pg);
	if (t->peer >= 0)
		attr_int(&n, t->type == CS_CHAKRA_SEND ? "comm_dst" : "comm_src", t->peer);
	if (t->cpu)
		attr_bool(&n, "is_cpu_op", t->cpu - 1);
	if (t->xname && t->xd)
		attr_dbl(&n, 10, t->xname, t->xdbl);
	else if (t->xname)
		attr_int(&n, t->xname, t->xint);
	varint(file, n.n);
	memcpy(file->b + file->n, n.b, n.n);
	file->n += n.n;
}

/* An empty GlobalMetadata, then the nodes up to the one of type 0. */
static void put_trace(buf *file, const tnode *nodes)
{
	file->n = 0;
	varint(file, 0);
	for (const tnode *t = nodes; t->type; t++)
		put_node(file, t);
}

#define COMP(i, us) { .id = i, .type = CS_CHAKRA_COMP, .dur_us = us, .comm_type = -1, .comm_size = -1, .peer = -1 }
#define END { .type = 0 }

/* On identical, ideal machines (the fleet's effects are tested in test_fault.c). */
static cs_scenario *load_set(const char *name, const char *const *sets, size_t nsets)
{
	char path[512];
	const char *all[16] = { "fleet.preset=ideal" };
	cs_scenario *sc = NULL;
	cs_diag d = { { 0 } };
	ck_assert_uint_lt(nsets, 16);
	for (size_t i = 0; i < nsets; i++)
		all[i + 1] = sets[i];
	snprintf(path, sizeof path, "%s/scenarios/%s", CS_SOURCE_ROOT, name);
	ck_assert_msg(cs_scenario_load(path, all, nsets + 1, &sc, &d) == CS_OK, "%s", d.msg);
	return sc;
}

static cs_scenario *load(const char *name)
{
	return load_set(name, NULL, 0);
}

/* A fresh temporary directory (tmp_dir.h), removed by rm_dir. */
static void make_dir(char *dir, size_t cap)
{
	cs_test_tmp(dir, cap, "cs-chakra");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_dir(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *path, const buf *b)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b->b, 1, b->n, f), b->n);
	ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Rank r's trace `nodes` as DIR/PREFIX.r.et. */
static void write_rank(const char *dir, const char *prefix, int r, const tnode *nodes)
{
	char path[128];
	buf b;
	put_trace(&b, nodes);
	snprintf(path, sizeof path, "%s/%s.%d.et", dir, prefix, r);
	write_file(path, &b);
}

/* Import `dir` for `sc` and simulate it: the step time. */
static double run_traces(const char *dir, const cs_scenario *sc, int64_t *decoded, int64_t *templates)
{
	cs_chakra_set *set = NULL;
	cs_result *res = NULL;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_chakra_load(dir, NULL, sc, &set, &d) == CS_OK, "%s", d.msg);
	cs__programs given = { .progs = cs_chakra_set_programs(set, &given.n),
			       .tmpl_of = cs_chakra_set_template_of(set) };
	cs_chakra_set_files(set, decoded);
	*templates = given.n;
	ck_assert_msg(cs__simulate(sc, &(cs__sim_request){ .given = &given }, &res, &d) == CS_OK, "%s",
		      d.msg);
	double t = cs_result_metrics(res)->step_time_s;
	cs_result_free(res);
	cs_chakra_set_free(set);
	return t;
}

/* What `clustersim coll` says op `op` of `bytes` takes on the n ranks
 * base, base + stride, ... of the scenario's cluster. */
static double coll_s(const cs_scenario *sc, cs_coll_op op, int64_t base, int64_t stride, int64_t n,
		     double bytes, cs_coll_choice *ch)
{
	cs_coll_spec spec;
	cs_diag d = { { 0 } };
	ck_assert(cs_hw_coll_spec(sc, &spec, &d) == CS_OK);
	cs_topo *topo = cs_topo_new(&sc->cluster);
	cs_coll *coll = cs_coll_new(&sc->cluster, &spec);
	cs_group_shape g = cs_topo_group(topo, base, stride, n);
	double t = 1e-9 * (double)cs_coll_time(coll, op, &g, bytes, ch);
	cs_coll_free(coll);
	cs_topo_free(topo);
	return t;
}

/* ---- round trip ----------------------------------------------------------- */

static const struct {
	const char *file;
	const char *sets[8];
	int astra_sim; /* written for ASTRA-sim: groups numbered, all-gathers by a rank's part */
} round_trips[] = {
	{ "ddp-gpt-small.yaml", { NULL }, 0 },
	{ "fsdp-llama3-8b-16gpu.yaml", { NULL }, 0 },
	{ "3d-llama3-70b-64gpu.yaml", { NULL }, 0 },
	/* two stages: both pipeline neighbours are the same rank */
	{ "ddp-gpt-small.yaml", { "model.layers=2", "parallelism.tp=2", "parallelism.pp=2",
				  "parallelism.dp=2", "training.global_batch=8", "training.micro_batch=1" },
	  0 },
	/* for ASTRA-sim: groups numbered (tp 0..3 are 1..4, dp 0..3 are 5..8),
	 * FSDP's all-gathers sized by a rank's part, the gathered size kept */
	{ "ddp-gpt-small.yaml", { "model.layers=2", "parallelism.tp=2", "parallelism.pp=2",
				  "parallelism.dp=2", "training.global_batch=8", "training.micro_batch=1" },
	  1 },
	{ "fsdp-llama3-8b-16gpu.yaml", { NULL }, 1 },
	/* userbuffers collectives keep their time and SMs (bulk ones on 2 SMs:
	 * read back as NCCL's, the step would be 0.2 % shorter) */
	{ "ddp-gpt-small.yaml", { "model.layers=2", "parallelism.tp=4", "parallelism.pp=2",
				  "parallelism.dp=1", "training.global_batch=8",
				  "parallelism.sequence_parallel=true", "parallelism.tp_overlap=true",
				  "parallelism.tp_overlap_config=nemo-h100-h16384-tp8-cp2-mbs1-seqlen8192" },
	  0 },
	/* expert parallelism: the experts' gradients over their own group, 'edp' */
	{ "ddp-gpt-small.yaml", { "model.preset=deepseek-v3-like", "model.layers=2", "model.dense_layers=1",
				  "model.experts=8", "parallelism.ep=4", "training.global_batch=8",
				  "training.micro_batch=1", "training.seq_len=512" },
	  0 },
	/* the experts folded over tp: the expert-TP gathers over 'etp', on the EP stream */
	{ "ddp-gpt-small.yaml", { "model.preset=deepseek-v3-like", "model.layers=2", "model.dense_layers=1",
				  "model.experts=8", "parallelism.tp=2", "parallelism.sequence_parallel=true",
				  "parallelism.ep=2", "parallelism.etp=2" },
	  0 },
};

/* An export for ASTRA-sim names its groups 1, 2, ...: no KIND.INSTANCE
 * name, no group 0. */
static void check_numbered_groups(const char *dir)
{
	char path[128], text[4096];
	snprintf(path, sizeof path, "%s/t.comm_group.json", dir);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = 0;
	fclose(f);
	ck_assert_msg(strstr(text, "\"1\": [0, 1") && !strstr(text, "\"0\"") && !strchr(text, '.'),
		      "%s", text);
}

START_TEST(exported_scenario_imports_to_the_same_step_time)
{
	size_t nsets = 0;
	while (nsets < 8 && round_trips[_i].sets[nsets])
		nsets++;
	cs_scenario *sc = load_set(round_trips[_i].file, round_trips[_i].sets, nsets);
	char dir[64];
	make_dir(dir, sizeof dir);
	cs_chakra_written w;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_chakra_export(sc, dir, "t", round_trips[_i].astra_sim, CS_CHAKRA_EXPORT_MAX_BYTES, NULL, &w, &d) == CS_OK,
		      "%s", d.msg);
	ck_assert_int_eq(w.files, cs_scenario_gpus(sc));
	ck_assert_int_eq(w.templates, sc->parallel.pp);
	if (round_trips[_i].astra_sim)
		check_numbered_groups(dir);
	cs_result *res = NULL;
	ck_assert_msg(cs_simulate(sc, NULL, &res, &d) == CS_OK, "%s", d.msg);
	double want = cs_result_metrics(res)->step_time_s;
	cs_result_free(res);
	int64_t decoded, templates;
	double got = run_traces(dir, sc, &decoded, &templates);
	ck_assert_msg(fabs(got - want) <= 1e-3 * want, "%s: imported %.9f s, run %.9f s",
		      round_trips[_i].file, got, want);
	ck_assert_int_eq(templates, sc->parallel.pp); /* one per stage, as built */
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* ---- the manifest and the size bound ------------------------------------- */

/* ddp-gpt-small exported into a fresh directory `dir` as "t". */
static cs_chakra_written export_to(const cs_scenario *sc, char *dir, size_t cap)
{
	cs_chakra_written w;
	cs_diag d = { { 0 } };
	make_dir(dir, cap);
	ck_assert_msg(cs_chakra_export(sc, dir, "t", 0, CS_CHAKRA_EXPORT_MAX_BYTES, NULL, &w, &d) == CS_OK, "%s",
		      d.msg);
	return w;
}

/* cs_chakra_load of `dir` fails with `want` in its message. */
static void refused(const cs_scenario *sc, const char *dir, const char *want)
{
	cs_chakra_set *set = NULL;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_chakra_load(dir, NULL, sc, &set, &d), CS_ERR_INPUT);
	ck_assert_msg(strstr(d.msg, want), "%s", d.msg);
}

/* An export's manifest names every file with its size and checksum: the
 * folder as written loads; a byte changed or a file removed is refused
 * with the file named; without the manifest (as another tool's traces come)
 * the folder loads unchecked. */
START_TEST(the_manifest_catches_a_changed_or_missing_file)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64], path[160];
	cs_chakra_written w = export_to(sc, dir, sizeof dir);
	snprintf(path, sizeof path, "%s/t.manifest", dir);
	char *text = NULL;
	size_t len = 0;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_file_read(path, 1 << 20, &text, &len, &d), CS_OK);
	char head[128];
	snprintf(head, sizeof head, "clustersim-chakra-manifest 1\nranks 8\nnodes %lld\nfile t.0.et ",
		 (long long)w.nodes);
	ck_assert_msg(strncmp(text, head, strlen(head)) == 0, "%s", text);
	ck_assert_ptr_nonnull(strstr(text, "\nfile t.7.et "));
	ck_assert_ptr_nonnull(strstr(text, "\nfile t.comm_group.json "));
	free(text);
	cs_chakra_set *set = NULL;
	ck_assert_msg(cs_chakra_load(dir, NULL, sc, &set, &d) == CS_OK, "%s", d.msg);
	cs_chakra_set_free(set);
	/* one byte of rank 3's trace changed, its size the same */
	snprintf(path, sizeof path, "%s/t.3.et", dir);
	FILE *f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 40, SEEK_SET), 0);
	int c = fgetc(f);
	ck_assert_int_eq(fseek(f, 40, SEEK_SET), 0);
	fputc(c ^ 1, f);
	ck_assert_int_eq(fclose(f), 0);
	refused(sc, dir, "t.3.et' is not the file its manifest");
	refused(sc, dir, "it changed after the export");
	/* without its manifest the folder is read as any tool's traces */
	snprintf(path, sizeof path, "%s/t.manifest", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_msg(cs_chakra_load(dir, NULL, sc, &set, &d) == CS_OK, "%s", d.msg);
	cs_chakra_set_free(set);
	rm_dir(dir);
	/* a rank's trace removed, or the process groups */
	const char *gone[] = { "t.5.et", "t.comm_group.json" };
	for (int i = 0; i < 2; i++) {
		export_to(sc, dir, sizeof dir);
		snprintf(path, sizeof path, "%s/%s", dir, gone[i]);
		ck_assert_int_eq(unlink(path), 0);
		char want[200];
		snprintf(want, sizeof want, "%s' is missing: the manifest '%s/t.manifest' lists it", gone[i], dir);
		refused(sc, dir, want);
		rm_dir(dir);
	}
	cs_scenario_free(sc);
}
END_TEST

/* The size is estimated before anything is written (each stage's first
 * rank, times the ranks of a stage): ddp-gpt-small's eight ranks run one
 * program, so the estimate is the bytes written to within the ranks'
 * numbers; a bound 1 % under them refuses the export and leaves the
 * folder empty, one 1 % over lets it through. */
START_TEST(an_export_over_its_size_bound_is_refused_before_writing)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64];
	cs_chakra_written w = export_to(sc, dir, sizeof dir);
	rm_dir(dir);
	make_dir(dir, sizeof dir);
	cs_chakra_written w2;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_chakra_export(sc, dir, "t", 0, w.bytes - w.bytes / 100, NULL, &w2, &d), CS_ERR_INPUT);
	ck_assert_msg(strstr(d.msg, "the export would write about ") &&
			      strstr(d.msg, " MiB (8 ranks, ") &&
			      strstr(d.msg, "more than the limit of "),
		      "%s", d.msg);
	char manifest[128];
	snprintf(manifest, sizeof manifest, "%s/t.0.et", dir);
	ck_assert_int_ne(access(manifest, F_OK), 0);
	ck_assert_int_eq(rmdir(dir), 0); /* empty */
	make_dir(dir, sizeof dir);
	ck_assert_msg(cs_chakra_export(sc, dir, "t", 0, w.bytes + w.bytes / 100, NULL, &w2, &d) == CS_OK, "%s",
		      d.msg);
	ck_assert_int_eq(w2.bytes, w.bytes);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* A stop flag (a signal's, in the command) already set: the export starts
 * no file, says it was interrupted, and leaves the folder empty; the same
 * export with the flag clear writes every file. */
START_TEST(a_stopped_export_starts_no_file)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64], path[128];
	make_dir(dir, sizeof dir);
	cs_chakra_written w;
	cs_diag d = { { 0 } };
	volatile sig_atomic_t stop = SIGTERM;
	ck_assert_int_eq(cs_chakra_export(sc, dir, "t", 0, CS_CHAKRA_EXPORT_MAX_BYTES, &stop, &w, &d), CS_ERR_SIM);
	ck_assert_str_eq(d.msg, "interrupted");
	ck_assert_int_eq(w.files, 0);
	ck_assert_int_eq(rmdir(dir), 0); /* empty */
	make_dir(dir, sizeof dir);
	stop = 0;
	ck_assert_msg(cs_chakra_export(sc, dir, "t", 0, CS_CHAKRA_EXPORT_MAX_BYTES, &stop, &w, &d) == CS_OK, "%s",
		      d.msg);
	ck_assert_int_eq(w.files, 8);
	snprintf(path, sizeof path, "%s/t.manifest", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* ---- sharing and microbenchmarks ------------------------------------------ */

START_TEST(identical_rank_free_traces_decode_once)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml"); /* 8 GPUs, dp 8 */
	char dir[64], path[128];
	make_dir(dir, sizeof dir);
	tnode nodes[] = {
		COMP(1, 100),
		{ .id = 2, .type = CS_CHAKRA_COLL, .dep = { 1 }, .ndeps = 1, .comm_type = 0,
		  .comm_size = 1 << 20, .pg = "dp", .peer = -1 },
		COMP(3, 50),
		END,
	};
	buf b;
	put_trace(&b, nodes);
	for (int r = 0; r < 8; r++) {
		snprintf(path, sizeof path, "%s/mb.%d.et", dir, r);
		write_file(path, &b);
	}
	int64_t decoded, templates;
	double t = run_traces(dir, sc, &decoded, &templates);
	ck_assert_int_eq(decoded, 1);
	ck_assert_int_eq(templates, 1);
	ck_assert(t > 100e-6);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* ASTRA-sim's microbenchmarks (examples/workload/microbenchmarks, made by
 * its generator_scripts): per rank a GlobalMetadata of version "0.0.4" and
 * one named collective node, its id the rank's, with is_cpu_op false,
 * comm_type and comm_size 1 MiB, no process group. */
static void put_microbenchmark(buf *file, int64_t id, int64_t type, int64_t bytes)
{
	buf m = { .n = 0 }, n = { .n = 0 }, a = { .n = 0 };
	f_bytes(&m, 1, "0.0.4", 5);
	file->n = 0;
	varint(file, m.n);
	memcpy(file->b + file->n, m.b, m.n);
	file->n += m.n;
	f_varint(&n, 1, (uint64_t)id);
	f_bytes(&n, 2, "coll_8npus_1MB", 14);
	f_varint(&n, 3, CS_CHAKRA_COLL);
	f_bytes(&a, 1, "is_cpu_op", 9);
	f_varint(&a, 27, 0); /* bool_val */
	f_bytes(&n, 10, a.b, a.n);
	attr_int(&n, "comm_type", type);
	attr_int(&n, "comm_size", bytes);
	varint(file, n.n);
	memcpy(file->b + file->n, n.b, n.n);
	file->n += n.n;
}

static const struct { int64_t chakra; cs_coll_op op; } micro[] = {
	{ 0, CS_COLL_ALL_REDUCE }, { 2, CS_COLL_ALL_GATHER }, { 7, CS_COLL_REDUCE_SCATTER },
	{ 6, CS_COLL_ALL_TO_ALL },
};

START_TEST(a_lone_collective_takes_what_coll_says)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64], path[128];
	make_dir(dir, sizeof dir);
	double bytes = 1024.0 * 1024;
	buf b;
	for (int r = 0; r < 8; r++) {
		put_microbenchmark(&b, r, micro[_i].chakra, (int64_t)bytes);
		snprintf(path, sizeof path, "%s/%d.%d.et", dir, _i, r);
		write_file(path, &b);
	}
	int64_t decoded, templates;
	double got = run_traces(dir, sc, &decoded, &templates);
	ck_assert_int_eq(templates, 1); /* the ids differ, the programs do not */
	/* `clustersim coll`'s time for the op on the first 8 GPUs */
	cs_coll_choice ch;
	double want = coll_s(sc, micro[_i].op, 0, 1, 8, bytes, &ch);
	ck_assert_msg(fabs(got - want) <= 1e-3 * want, "%s: imported %.9f s, coll %.9f s",
		      cs_coll_op_name(micro[_i].op), got, want);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* Durations saturate at the 2^61 ns horizon: a step that reaches it (an
 * op of 2^61 ns) or passes it (one more after it) fails (exit 1) rather
 * than report 73 years. */
START_TEST(a_step_at_the_horizon_fails)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64];
	make_dir(dir, sizeof dir);
	tnode nodes[] = { { .id = 1, .type = CS_CHAKRA_COMP, .comm_type = -1, .comm_size = -1, .peer = -1,
			    .xname = "cs_ns", .xint = (int64_t)1 << 61 },
			  { .id = 2, .type = CS_CHAKRA_COMP, .dep = { 1 }, .ndeps = 1, .comm_type = -1,
			    .comm_size = -1, .peer = -1, .xname = "cs_ns", .xint = 1000 },
			  END };
	if (_i == 0)
		nodes[1] = (tnode)END;
	for (int r = 0; r < 8; r++)
		write_rank(dir, "h", r, nodes);
	cs_chakra_set *set = NULL;
	cs_result *res = NULL;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_chakra_load(dir, NULL, sc, &set, &d) == CS_OK, "%s", d.msg);
	cs__programs given = { .progs = cs_chakra_set_programs(set, &given.n),
			       .tmpl_of = cs_chakra_set_template_of(set) };
	ck_assert_int_eq(cs__simulate(sc, &(cs__sim_request){ .given = &given }, &res, &d), CS_ERR_SIM);
	ck_assert_msg(strstr(d.msg, _i == 0 ? "reaches 2^61 ns (73 years)" : "exceeds 2^61 ns (73 years)"),
		      "%s", d.msg);
	ck_assert_ptr_null(res);
	cs_chakra_set_free(set);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* ---- messages between any two ranks ----------------------------------------- */

/* Per rank: 10 us of compute, a send of `bytes` to rank r + offset, a
 * receive from r - offset, 5 us of compute after it; the ranks are data
 * parallel, no pipeline neighbours. */
static const struct { int offset; int64_t bytes; } far_sends[] = {
	{ 1, 1 << 20 },   /* a ring, as ASTRA-sim's custom ring all-reduce runs it */
	{ 3, 1 << 20 },
	{ 7, 64 << 10 },  /* the ring the other way round */
	{ 4, 8 << 20 },   /* halfway: each rank sends to the rank it receives from */
};

START_TEST(a_message_to_any_rank_takes_the_links_time)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml"); /* 8 GPUs on one machine, dp 8 */
	char dir[64];
	make_dir(dir, sizeof dir);
	int off = far_sends[_i].offset;
	for (int r = 0; r < 8; r++) {
		tnode nodes[] = {
			COMP(1, 10),
			{ .id = 2, .type = CS_CHAKRA_SEND, .dep = { 1 }, .ndeps = 1, .comm_type = -1,
			  .comm_size = far_sends[_i].bytes, .peer = (r + off) % 8 },
			{ .id = 3, .type = CS_CHAKRA_RECV, .comm_type = -1,
			  .comm_size = far_sends[_i].bytes, .peer = (r - off + 8) % 8 },
			{ .id = 4, .type = CS_CHAKRA_COMP, .dur_us = 5, .dep = { 3 }, .ndeps = 1,
			  .comm_type = -1, .comm_size = -1, .peer = -1 },
			END,
		};
		write_rank(dir, "far", r, nodes);
	}
	int64_t decoded, templates;
	double got = run_traces(dir, sc, &decoded, &templates);
	ck_assert_int_eq(decoded, 8);
	cs_coll_choice ch;
	double want = 15e-6 + coll_s(sc, CS_COLL_SEND_RECV, 0, off, 2, (double)far_sends[_i].bytes, &ch);
	ck_assert_msg(fabs(got - want) <= 1e-6 * want, "offset %d: %.9f s, want %.9f s", off, got, want);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* ---- what PyTorch's converter writes ------------------------------------------ */

/* 100 us of compute, then what the row puts between it and 50 us more. */
static const struct host_side {
	tnode mid[3];
	int64_t skipped, ctrl_dropped;
	double want_us;
	const char *names;
} host_side[] = {
	/* the host's side of a collective: no comm_type */
	{ { { .id = 2, .type = CS_CHAKRA_COLL, .name = "c10d::allreduce_(0)", .cpu = 2, .dep = { 1 },
	      .ndeps = 1, .comm_type = -1, .comm_size = -1, .peer = -1 }, END },
	  1, 0, 150, "c10d::allreduce_" },
	/* with comm_type, but on the CPU; twice, named once */
	{ { { .id = 2, .type = CS_CHAKRA_COLL, .name = "c10d::broadcast_(0)", .cpu = 2, .dep = { 1 },
	      .ndeps = 1, .comm_type = 5, .comm_size = 64, .pg = "dp", .peer = -1 },
	    { .id = 5, .type = CS_CHAKRA_COLL, .name = "c10d::broadcast_(1)", .cpu = 2, .dep = { 2 },
	      .ndeps = 1, .comm_size = -1, .comm_type = -1, .peer = -1 }, END },
	  2, 0, 150, "c10d::broadcast_" },
	/* a control dependency on a node the converter left out */
	{ { { .id = 2, .type = CS_CHAKRA_COMP, .dur_us = 20, .ctrl = { 77 }, .nctrl = 1, .dep = { 1 },
	      .ndeps = 1, .comm_type = -1, .comm_size = -1, .peer = -1 }, END },
	  0, 1, 170, "" },
	/* control dependencies that close a cycle: the data dependencies order */
	{ { { .id = 2, .type = CS_CHAKRA_COMP, .dur_us = 20, .ctrl = { 5 }, .nctrl = 1, .dep = { 1 },
	      .ndeps = 1, .comm_type = -1, .comm_size = -1, .peer = -1 },
	    { .id = 5, .type = CS_CHAKRA_COMP, .dur_us = 30, .ctrl = { 1 }, .nctrl = 1, .dep = { 2 },
	      .ndeps = 1, .comm_type = -1, .comm_size = -1, .peer = -1 }, END },
	  0, 2, 200, "" },
};

START_TEST(host_side_nodes_are_left_out_and_named)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64];
	make_dir(dir, sizeof dir);
	tnode nodes[6] = { COMP(1, 100) };
	int k = 1;
	for (const tnode *t = host_side[_i].mid; t->type; t++)
		nodes[k++] = *t;
	nodes[k] = (tnode){ .id = 9, .type = CS_CHAKRA_COMP, .dur_us = 50, .dep = { nodes[k - 1].id },
			    .ndeps = 1, .comm_type = -1, .comm_size = -1, .peer = -1 };
	nodes[k + 1] = (tnode)END;
	for (int r = 0; r < 8; r++)
		write_rank(dir, "pt", r, nodes);
	cs_chakra_set *set = NULL;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_chakra_load(dir, NULL, sc, &set, &d) == CS_OK, "%s", d.msg);
	const cs_chakra_skipped *sk = cs_chakra_set_skipped(set);
	ck_assert_int_eq(sk->nodes, host_side[_i].skipped);
	ck_assert_int_eq(sk->files, host_side[_i].skipped ? 1 : 0);
	ck_assert_int_eq(sk->ctrl_deps, host_side[_i].ctrl_dropped);
	ck_assert_str_eq(sk->names, host_side[_i].names);
	cs_chakra_set_free(set);
	int64_t decoded, templates;
	double got = run_traces(dir, sc, &decoded, &templates);
	ck_assert_msg(fabs(got - 1e-6 * host_side[_i].want_us) < 1e-9, "%.9f s", got);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* A PyTorch execution trace (the JSON the converter reads) is named as
 * one, with the command that converts it. */
START_TEST(a_pytorch_execution_trace_is_named_with_the_converter)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64], path[128];
	make_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/rank0.json", dir);
	write_text(path, "{\n  \"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1,\n  \"nodes\": [\n");
	const char *asked[2] = { dir, path };
	for (int i = 0; i < 2; i++) {
		cs_chakra_set *set = NULL;
		cs_diag d = { { 0 } };
		ck_assert_int_eq(cs_chakra_load(asked[i], NULL, sc, &set, &d), CS_ERR_INPUT);
		char want[400];
		snprintf(want, sizeof want, "'%s' is a PyTorch execution trace (JSON), not a Chakra trace: "
			 "convert each rank's with Chakra's converter, 'chakra_converter PyTorch", path);
		ck_assert_msg(strncmp(d.msg, want, strlen(want)) == 0, "%s", d.msg);
	}
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

/* ---- ASTRA-sim's network and system files --------------------------------------- */

static const struct astra_case {
	const char *network, *system;  /* file texts, NULL for none */
	const char *want;              /* the overrides, joined by ' ', or the message's start */
	const char *unmapped;
} astra[] = {
	/* examples/network/analytical/Ring_8npus.yml: a torus of one dimension */
	{ "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n",
	  NULL, "cluster.gpus_per_node=8 cluster.nodes=1 cluster.topology=torus cluster.torus.shape=8 "
	  "cluster.torus.wrap=true cluster.torus.bandwidth=50 GiB/s cluster.torus.latency=500 ns", "" },
	/* HGX-H100-validated: one switch; a message crosses two links */
	{ "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]\nlatency: [ 936.25 ]\n",
	  "{\"all-reduce-implementation\": [\"ring\"], \"all-to-all-implementation\": [\"direct\"],"
	  " \"endpoint-delay\": 10}",
	  "cluster.gpus_per_node=8 cluster.nodes=1 cluster.scale_up.bandwidth=400 GiB/s "
	  "cluster.scale_up.latency=1872.5 ns collectives.algorithm=ring",
	  "all-to-all-implementation, endpoint-delay" },
	/* servers on a switched network; a tree all-reduce */
	{ "topology: [ FullyConnected, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 150, 25 ]\n"
	  "latency: [ 700, 1500 ]\n", "{\"all-reduce-implementation\": [\"doubleBinaryTree\", "
	  "\"doubleBinaryTree\"]}",
	  "cluster.gpus_per_node=4 cluster.nodes=2 cluster.scale_up.bandwidth=150 GiB/s "
	  "cluster.scale_up.latency=700 ns cluster.scale_out.nics_per_node=4 "
	  "cluster.scale_out.bandwidth=25 GiB/s cluster.scale_out.latency=3000 ns "
	  "collectives.algorithm=tree", "" },
	/* a 2D torus */
	{ "topology: [ Ring, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500, 500 ]\n",
	  NULL, "cluster.gpus_per_node=8 cluster.nodes=2 cluster.topology=torus cluster.torus.shape=4x4 "
	  "cluster.torus.wrap=true cluster.torus.bandwidth=50 GiB/s cluster.torus.latency=500 ns", "" },
	/* refused: inputs/network/hgx_h100_16gpu.yml, a ring between servers */
	{ "topology: [ Switch, Ring ]\nnpus_count: [ 8, 2 ]\nbandwidth: [400, 50 ]\nlatency: [ 936.25, 1000 ]\n",
	  NULL, "NET:1:21: 'Ring' between servers: clustersim's network beyond the server is switched", "" },
	{ "topology: [ Torus ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", NULL,
	  "NET:1:13: unknown topology 'Torus' (Ring, Switch or FullyConnected)", "" },
	{ "topology: [ Ring ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", NULL,
	  "NET:2:15: 1 topology dimensions but 2 in 'npus_count'", "" },
	{ "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\n", NULL, "NET:1:1: no 'latency'", "" },
	{ "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ fast ]\nlatency: [ 500 ]\n", NULL,
	  "NET:3:14: bandwidth 'fast' is not a positive GB/s", "" },
	{ "topology: [ Ring, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 500 ]\n",
	  NULL, "NET:3:18: rings of different links", "" },
	{ "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400 ]\nlatency: [ 900 ]\n",
	  "{\"all-reduce-implementation\": [\"halvingDoubling\"]}",
	  "SYS: 'all-reduce-implementation': clustersim runs 'ring' or 'doubleBinaryTree'", "" },
	{ "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400 ]\nlatency: [ 900 ]\n",
	  "{\"all-reduce-implementation\": [\"ring\"],}", "SYS:1:40: string or '}' expected", "" },
};

/* "NET" and "SYS" in a message stand for the files' paths. */
static void expand(char *out, size_t cap, const char *want, const char *net, const char *sys)
{
	size_t n = 0;
	for (const char *p = want; *p && n + 1 < cap; ) {
		const char *rep = strncmp(p, "NET", 3) == 0 ? net : strncmp(p, "SYS", 3) == 0 ? sys : NULL;
		if (rep) {
			n += (size_t)snprintf(out + n, cap - n, "%s", rep);
			p += 3;
		} else {
			out[n++] = *p++;
		}
	}
	out[n < cap ? n : cap - 1] = 0;
}

START_TEST(astra_sim_network_and_system_map_to_the_cluster)
{
	char dir[64], net[128], sys[128];
	make_dir(dir, sizeof dir);
	snprintf(net, sizeof net, "%s/network.yml", dir);
	snprintf(sys, sizeof sys, "%s/system.json", dir);
	write_text(net, astra[_i].network);
	if (astra[_i].system)
		write_text(sys, astra[_i].system);
	cs_chakra_astra as;
	cs_diag d = { { 0 } };
	cs_status st = cs_chakra_astra_read(net, astra[_i].system ? sys : NULL, &as, &d);
	char want[600], got[2048] = "";
	expand(want, sizeof want, astra[_i].want, net, sys);
	if (st == CS_OK) {
		for (int i = 0; i < as.nsets; i++)
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", as.sets[i]);
		ck_assert_str_eq(got, want);
		ck_assert_str_eq(as.unmapped, astra[_i].unmapped);
	} else {
		ck_assert_int_eq(st, CS_ERR_INPUT);
		ck_assert_msg(strncmp(d.msg, want, strlen(want)) == 0, "got '%s', want '%s...'", d.msg, want);
	}
	rm_dir(dir);
}
END_TEST

/* The public examples of tests/data/chakra (README.md there): each loads
 * on its own cluster and gives what its cluster says. */
#define DATA CS_SOURCE_ROOT "/tests/data/chakra/"

static cs_scenario *astra_cluster(const char *net, const char *sys)
{
	cs_chakra_astra as;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_chakra_astra_read(net, sys, &as, &d) == CS_OK, "%s", d.msg);
	const char *sets[CS_CHAKRA_ASTRA_SETS];
	for (int i = 0; i < as.nsets; i++)
		sets[i] = as.sets[i];
	return load_set("ddp-gpt-small.yaml", sets, (size_t)as.nsets);
}

START_TEST(astra_sim_h100_all_reduce_takes_what_coll_says)
{
	cs_scenario *sc = astra_cluster(DATA "astra-sim/HGX-H100-validated.yml",
					DATA "astra-sim/HGX-H100-validated.json");
	int64_t decoded, templates;
	double got = run_traces(DATA "astra-sim/all_reduce_8npus_1MB", sc, &decoded, &templates);
	cs_coll_choice ch;
	double want = coll_s(sc, CS_COLL_ALL_REDUCE, 0, 1, 8, 1 << 20, &ch);
	ck_assert_msg(fabs(got - want) <= 1e-6 * want, "%.9f s, coll %.9f s", got, want);
	ck_assert_str_eq(cs_coll_algo_name(ch.algo), "ring"); /* as its system file asks */
	cs_scenario_free(sc);
}
END_TEST

START_TEST(astra_sim_custom_ring_all_reduce_runs_on_its_ring)
{
	cs_scenario *sc = astra_cluster(DATA "astra-sim/Ring_8npus.yml",
					DATA "astra-sim/custom_collective.json");
	int64_t decoded, templates;
	double got = run_traces(DATA "astra-sim/custom_ring_allreduce_8npus_1MB", sc, &decoded, &templates);
	ck_assert_int_eq(decoded, 8);
	/* 14 steps of 128 KiB to the next rank on a 50 GiB/s link, and the
	 * seven 7 us reductions between them */
	double step = 131072.0 / (50.0 * 1073741824.0);
	ck_assert_msg(got > 49e-6 + 14 * step && got < 49e-6 + 14 * (step + 3e-6), "%.9f s", got);
	cs_scenario_free(sc);
}
END_TEST

START_TEST(chakra_feeder_trace_loads_without_its_host_side)
{
	static const char *const sets[] = { "parallelism.dp=1", "cluster.gpus_per_node=1" };
	cs_scenario *sc = load_set("ddp-gpt-small.yaml", sets, 2);
	cs_chakra_set *set = NULL;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_chakra_load(DATA "feeder", NULL, sc, &set, &d) == CS_OK, "%s", d.msg);
	const cs_chakra_skipped *sk = cs_chakra_set_skipped(set);
	ck_assert_int_eq(sk->nodes, 4);
	ck_assert_str_eq(sk->names, "c10d::broadcast_");
	ck_assert_int_eq(sk->ctrl_deps, 12); /* on the host's parent ops, not in the trace */
	cs_chakra_set_free(set);
	int64_t decoded, templates;
	double got = run_traces(DATA "feeder", sc, &decoded, &templates);
	ck_assert_msg(got > 0 && got < 1e-3, "%.9f s", got);
	d.msg[0] = 0;
	ck_assert_int_eq(cs_chakra_load(DATA "pytorch-et", NULL, sc, &set, &d), CS_ERR_INPUT);
	ck_assert_msg(strstr(d.msg, "1.0.2-chakra.0.0.4.json' is a PyTorch execution trace"), "%s", d.msg);
	cs_scenario_free(sc);
}
END_TEST

/* ---- named process groups ----------------------------------------------------- */

/* Per rank: compute, an all-reduce on its TP pair, one on its DP group,
 * compute; the groups named as `tp_names`/`dp_names` give them. */
static double run_named(const cs_scenario *sc, const char *const *tp_names,
			const char *const *dp_names, const char *groups_json)
{
	char dir[64], path[128];
	make_dir(dir, sizeof dir);
	for (int r = 0; r < 8; r++) {
		tnode nodes[] = {
			COMP(1, 100),
			{ .id = 2, .type = CS_CHAKRA_COLL, .dep = { 1 }, .ndeps = 1, .comm_type = 0,
			  .comm_size = 1 << 20, .pg = tp_names[r / 2], .peer = -1 },
			{ .id = 3, .type = CS_CHAKRA_COLL, .dep = { 2 }, .ndeps = 1, .comm_type = 0,
			  .comm_size = 4 << 20, .pg = dp_names[r % 2], .peer = -1 },
			{ .id = 4, .type = CS_CHAKRA_COMP, .dur_us = 50, .dep = { 3 }, .ndeps = 1,
			  .comm_type = -1, .comm_size = -1, .peer = -1 },
			END,
		};
		write_rank(dir, "n", r, nodes);
	}
	if (groups_json) {
		snprintf(path, sizeof path, "%s/n.comm_group.json", dir);
		write_text(path, groups_json);
	}
	int64_t decoded, templates;
	double t = run_traces(dir, sc, &decoded, &templates);
	rm_dir(dir);
	return t;
}

START_TEST(named_groups_resolve_by_their_ranks)
{
	static const char *const sets[] = { "parallelism.tp=2" }; /* tp 2 x dp 4 */
	cs_scenario *sc = load_set("ddp-gpt-small.yaml", sets, 1);
	static const char *const tp_bare[] = { "tp", "tp", "tp", "tp" }, *dp_bare[] = { "dp", "dp" };
	static const char *const tp_num[] = { "0", "1", "2", "3" }, *dp_num[] = { "even", "odd" };
	double bare = run_named(sc, tp_bare, dp_bare, NULL);
	double named = run_named(sc, tp_num, dp_num,
				 "{\"0\": [0, 1], \"1\": [2, 3], \"2\": [5, 4], \"3\": [6, 7],\n"
				 " \"even\": [0, 2, 4, 6], \"odd\": [7, 5, 3, 1]}\n");
	ck_assert(bare > 150e-6);
	ck_assert_msg(named == bare, "named groups %.9f s, kinds %.9f s", named, bare);
	cs_scenario_free(sc);
}
END_TEST

static const struct {
	const char *json, *pg;
	const char *msg;   /* of loading the file, or else of decoding */
} bad_groups[] = {
	{ "{\"a\": [0, 1]", "a", "x.json:1:12: '}' expected near end of file" },
	{ "[0, 1]", "a", "x.json: not a JSON object of process groups" },
	{ "{\"a\": [0, -1]}", "a", "x.json: process group 'a': a rank that is not a whole number >= 0" },
	{ "{\"a\": [0, 0]}", "a", "x.json: process group 'a': a rank listed twice" },
	{ "{\"a\": []}", "a", "x.json: process group 'a': not a list of ranks" },
	{ "{\"a\": [2, 3]}", "a", "x.et: node 4: process group 'a' does not hold rank 0" },
	{ "{\"a\": [0, 1, 2]}", "a",
	  "x.et: node 4: process group 'a' (3 ranks, from 0 to 2) is no group of the scenario's parallelism" },
	{ "{\"a\": [0, 1]}", "b", "x.et: node 4: unknown process group 'b' (not in the comm-group file" },
};

START_TEST(a_bad_named_group_is_refused)
{
	cs_parallel_spec p = { .tp = 2, .pp = 2, .dp = 2, .cp = 1, .ep = 1,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	cs_mesh mesh;
	cs_mesh_init(&mesh, &p);
	char dir[64], path[128];
	make_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/x.json", dir);
	write_text(path, bad_groups[_i].json);
	cs_chakra_groups *gs = NULL;
	cs_diag d = { { 0 } };
	char want[256];
	cs_status st = cs_chakra_groups_load(path, &gs, &d);
	if (st == CS_OK) {
		tnode nodes[] = { { .id = 4, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = 8,
				    .pg = bad_groups[_i].pg, .peer = -1 }, END };
		buf b;
		put_trace(&b, nodes);
		cs_chakra_where w = { .mesh = &mesh, .gpus_per_node = 8, .rank = 0, .groups = gs };
		cs_program prog;
		cs_program_init(&prog);
		int rank_free;
		st = cs_chakra_decode(b.b, b.n, "x.et", &w, &prog, &rank_free, NULL, &d);
		cs_program_free(&prog);
		snprintf(want, sizeof want, "%s", bad_groups[_i].msg);
	} else {
		snprintf(want, sizeof want, "%s/%s", dir, bad_groups[_i].msg);
	}
	ck_assert_int_eq(st, CS_ERR_INPUT);
	ck_assert_msg(strncmp(d.msg, want, strlen(want)) == 0, "got '%s', want '%s...'", d.msg, want);
	cs_chakra_groups_free(gs);
	rm_dir(dir);
}
END_TEST

/* ---- bad traces ------------------------------------------------------------ */

static const struct bad {
	tnode nodes[4];
	const char *raw;  /* the file itself instead, when not NULL */
	size_t rawlen;
	int64_t rank;
	const char *meta; /* a metadata attribute: a list of meta_v, or meta_d for cs_model_flops */
	int64_t meta_v[5];
	double meta_d;
	const char *msg;
} bad[] = {
	{ .raw = "", .rawlen = 0, .msg = "x.et: empty trace" },
	{ .raw = "\x00\x05\x08", .rawlen = 3, .msg = "x.et: malformed trace: message at byte 1 runs past the end" },
	{ .raw = "\x00\x02\x0f\x01", .rawlen = 4, .msg = "x.et: malformed node message at byte 1" },
	{ .nodes = { { .id = 12, .type = 99, .comm_type = -1, .comm_size = -1, .peer = -1 }, END },
	  .msg = "x.et: node 12: unknown node type 99" },
	{ .nodes = { { .id = 3, .type = CS_CHAKRA_MEM_LOAD, .comm_type = -1, .comm_size = -1, .peer = -1 }, END },
	  .msg = "x.et: node 3: unsupported node type 2" },
	{ .nodes = { { .id = 4, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = 8, .pg = "tp.1",
		       .peer = -1 }, END },
	  .msg = "x.et: node 4: process group 'tp.1' does not hold rank 0 (its tp group is 'tp.0')" },
	{ .nodes = { { .id = 4, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = 8, .pg = "everyone",
		       .peer = -1 }, END },
	  .msg = "x.et: node 4: unknown process group 'everyone'" },
	{ .nodes = { { .id = 4, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = 8, .pg = "tp.x",
		       .peer = -1 }, END },
	  .msg = "x.et: node 4: unknown process group 'tp.x' (not in a comm-group file" },
	{ .nodes = { { .id = 4, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = 8, .peer = -1 }, END },
	  .msg = "x.et: node 4: a collective without 'pg_name' needs a group of all 8 ranks" },
	{ .nodes = { { .id = 5, .type = CS_CHAKRA_COLL, .comm_type = 42, .comm_size = 8, .pg = "tp",
		       .peer = -1 }, END },
	  .msg = "x.et: node 5: unknown collective type 42" },
	{ .nodes = { { .id = 6, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = -1, .pg = "tp",
		       .peer = -1 }, END },
	  .msg = "x.et: node 6: a collective without a size ('comm_size')" },
	{ .nodes = { { .id = 1, .type = CS_CHAKRA_COMP, .dep = { 7 }, .ndeps = 1, .comm_type = -1,
		       .comm_size = -1, .peer = -1 }, END },
	  .msg = "x.et: node 1: depends on node 7, which is not in the trace" },
	{ .nodes = { { .id = 1, .type = CS_CHAKRA_COMP, .dep = { 2 }, .ndeps = 1, .comm_type = -1,
		       .comm_size = -1, .peer = -1 },
		     { .id = 2, .type = CS_CHAKRA_COMP, .dep = { 1 }, .ndeps = 1, .comm_type = -1,
		       .comm_size = -1, .peer = -1 }, END },
	  .msg = "x.et: node 1: its dependencies form a cycle" },
	{ .nodes = { COMP(9, 1), COMP(9, 2), END }, .msg = "x.et: node 9: id used by two nodes" },
	{ .nodes = { { .id = 8, .type = CS_CHAKRA_SEND, .comm_type = -1, .comm_size = 64, .peer = 8 },
		     END },
	  .msg = "x.et: node 8: a send to rank 8, which is not one of the scenario's 8 ranks" },
	{ .nodes = { { .id = 8, .type = CS_CHAKRA_RECV, .comm_type = -1, .comm_size = 64, .peer = 0 },
		     END },
	  .msg = "x.et: node 8: a receive from rank 0, the rank itself, of the scenario's 8 ranks" },
	{ .nodes = { { .id = 8, .type = CS_CHAKRA_RECV, .comm_type = -1, .comm_size = 64, .peer = -1 },
		     END },
	  .msg = "x.et: node 8: a receive without 'comm_src' or 'comm_size'" },
	/* figures that cannot be: beyond the 2^61 ns of simulated time, negative */
	{ .nodes = { { .id = 2, .type = CS_CHAKRA_COMP, .dur_us = ((uint64_t)1 << 61) / 1000 + 1,
		       .comm_type = -1, .comm_size = -1, .peer = -1 }, END },
	  .msg = "x.et: node 2: duration of 2305843009213694 us is beyond the 2^61 ns of simulated time" },
	{ .nodes = { { .id = 2, .type = CS_CHAKRA_COMP, .comm_type = -1, .comm_size = -1, .peer = -1,
		       .xname = "cs_ns", .xint = ((int64_t)1 << 61) + 1 }, END },
	  .msg = "x.et: node 2: a duration of 2305843009213693953 ns, beyond the 2^61 ns of simulated time" },
	{ .nodes = { { .id = 2, .type = CS_CHAKRA_COMP, .comm_type = -1, .comm_size = -1, .peer = -1,
		       .xname = "cs_gemm_ns", .xint = INT64_MAX }, END },
	  .msg = "x.et: node 2: a duration of 9223372036854775807 ns, beyond the 2^61 ns" },
	{ .nodes = { { .id = 3, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = 8, .pg = "tp", .peer = -1,
		       .xname = "cs_bytes", .xdbl = -8, .xd = 1 }, END },
	  .msg = "x.et: node 3: attribute 'cs_bytes' of -8 is negative" },
	{ .nodes = { { .id = 3, .type = CS_CHAKRA_COLL, .comm_type = 0, .comm_size = INT64_MAX, .pg = "tp",
		       .peer = -1 }, END },
	  .msg = "x.et: node 3: a collective of 9223372036854775807 bytes, beyond 2^60" },
	{ .nodes = { { .id = 3, .type = CS_CHAKRA_COMP, .comm_type = -1, .comm_size = -1, .peer = -1,
		       .xname = "cs_mem", .xdbl = 1e300, .xd = 1 }, END },
	  .msg = "x.et: node 3: attribute 'cs_mem' of 1e+300 is out of range" },
	{ .nodes = { COMP(1, 5), END }, .meta = "cs_class_ns", .meta_v = { 10, -5, 0, 0, 0 },
	  .msg = "x.et: global metadata: 'cs_class_ns' holds a negative or out-of-range figure" },
	{ .nodes = { COMP(1, 5), END }, .meta = "cs_model_flops", .meta_d = -1e12,
	  .msg = "x.et: global metadata: 'cs_model_flops' holds a negative or out-of-range figure" },
};

/* The trace of b->nodes after a GlobalMetadata holding b->meta. */
static void put_bad(buf *file, const struct bad *b)
{
	put_trace(file, b->nodes);
	if (!b->meta)
		return;
	buf m = { .n = 0 }, a = { .n = 0 }, list = { .n = 0 }, packed = { .n = 0 };
	if (strcmp(b->meta, "cs_model_flops") == 0) {
		attr_dbl(&m, 2, b->meta, b->meta_d);
	} else {
		for (int k = 0; k < CS_COMPUTE_KINDS; k++)
			varint(&packed, (uint64_t)b->meta_v[k]);
		f_bytes(&list, 1, packed.b, packed.n);
		f_bytes(&a, 1, b->meta, strlen(b->meta));
		f_bytes(&a, 10, list.b, list.n); /* int64_list */
		f_bytes(&m, 2, a.b, a.n);
	}
	buf nodes = *file; /* the empty metadata's one byte, then the nodes */
	file->n = 0;
	varint(file, m.n);
	memcpy(file->b + file->n, m.b, m.n);
	file->n += m.n;
	memcpy(file->b + file->n, nodes.b + 1, nodes.n - 1);
	file->n += nodes.n - 1;
}

START_TEST(a_bad_trace_is_refused_with_file_and_node)
{
	/* tp 2 x pp 2 x dp 2 = 8 ranks */
	cs_parallel_spec p = { .tp = 2, .pp = 2, .dp = 2, .cp = 1, .ep = 1,
			       .order = { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP } };
	cs_mesh mesh;
	cs_mesh_init(&mesh, &p);
	cs_chakra_where w = { .mesh = &mesh, .gpus_per_node = 8, .rank = bad[_i].rank };
	buf b;
	if (bad[_i].raw) {
		memcpy(b.b, bad[_i].raw, bad[_i].rawlen);
		b.n = bad[_i].rawlen;
	} else {
		put_bad(&b, &bad[_i]);
	}
	cs_program prog;
	cs_program_init(&prog);
	cs_diag d = { { 0 } };
	int rank_free;
	ck_assert_int_eq(cs_chakra_decode(b.b, b.n, "x.et", &w, &prog, &rank_free, NULL, &d), CS_ERR_INPUT);
	ck_assert_msg(strncmp(d.msg, bad[_i].msg, strlen(bad[_i].msg)) == 0, "got '%s', want '%s...'",
		      d.msg, bad[_i].msg);
	cs_program_free(&prog);
}
END_TEST

START_TEST(a_missing_rank_file_is_named)
{
	cs_scenario *sc = load("ddp-gpt-small.yaml");
	char dir[64], path[128];
	make_dir(dir, sizeof dir);
	tnode nodes[] = { COMP(1, 10), END };
	buf b;
	put_trace(&b, nodes);
	for (int r = 0; r < 8; r++) {
		snprintf(path, sizeof path, "%s/p.%d.et", dir, r);
		if (r != 5)
			write_file(path, &b);
	}
	cs_chakra_set *set = NULL;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_chakra_load(dir, NULL, sc, &set, &d), CS_ERR_INPUT);
	ck_assert_ptr_null(set);
	char want[256];
	snprintf(want, sizeof want, "missing trace '%s/p.5.et' of rank 5 (the scenario has 8 ranks)", dir);
	ck_assert_str_eq(d.msg, want);
	rm_dir(dir);
	cs_scenario_free(sc);
}
END_TEST

static Suite *chakra_suite(void)
{
	Suite *s = suite_create("chakra");
	TCase *tc = tcase_create("chakra");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, exported_scenario_imports_to_the_same_step_time, 0,
			    sizeof round_trips / sizeof round_trips[0]);
	tcase_add_test(tc, identical_rank_free_traces_decode_once);
	tcase_add_test(tc, the_manifest_catches_a_changed_or_missing_file);
	tcase_add_test(tc, an_export_over_its_size_bound_is_refused_before_writing);
	tcase_add_test(tc, a_stopped_export_starts_no_file);
	tcase_add_loop_test(tc, a_lone_collective_takes_what_coll_says, 0, sizeof micro / sizeof micro[0]);
	tcase_add_loop_test(tc, a_message_to_any_rank_takes_the_links_time, 0,
			    sizeof far_sends / sizeof far_sends[0]);
	tcase_add_loop_test(tc, host_side_nodes_are_left_out_and_named, 0,
			    sizeof host_side / sizeof host_side[0]);
	tcase_add_test(tc, a_pytorch_execution_trace_is_named_with_the_converter);
	tcase_add_loop_test(tc, astra_sim_network_and_system_map_to_the_cluster, 0,
			    sizeof astra / sizeof astra[0]);
	tcase_add_test(tc, astra_sim_h100_all_reduce_takes_what_coll_says);
	tcase_add_test(tc, astra_sim_custom_ring_all_reduce_runs_on_its_ring);
	tcase_add_test(tc, chakra_feeder_trace_loads_without_its_host_side);
	tcase_add_loop_test(tc, a_bad_trace_is_refused_with_file_and_node, 0, sizeof bad / sizeof bad[0]);
	tcase_add_loop_test(tc, a_step_at_the_horizon_fails, 0, 2);
	tcase_add_test(tc, a_missing_rank_file_is_named);
	tcase_add_test(tc, named_groups_resolve_by_their_ranks);
	tcase_add_loop_test(tc, a_bad_named_group_is_refused, 0, sizeof bad_groups / sizeof bad_groups[0]);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(chakra_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
