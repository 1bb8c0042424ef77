/*
 * export_set.c - cs_chakra_export: build a scenario's programs and write
 * every rank's trace, the process groups ASTRA-sim needs to resolve
 * their names, and the manifest; the size estimated first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/chakra.h"
#include "chakra/chakra_int.h"
#include "hw/files.h"
#include "program/build.h"

static int path_of(char *buf, size_t cap, const char *dir, const char *prefix, const char *tail)
{
	size_t n = strlen(dir);
	const char *sep = n && dir[n - 1] == '/' ? "" : "/";
	return snprintf(buf, cap, "%s%s%s.%s", dir, sep, prefix, tail) >= (int)cap ? -1 : 0;
}

/* The group kinds any program uses, a bit each. */
static unsigned kinds_used(const cs_program *progs, int64_t n)
{
	unsigned used = 0;
	for (int64_t t = 0; t < n; t++)
		for (int s = 0; s < CS_STREAMS; s++)
			for (int32_t i = 0; i < progs[t].nops[s]; i++)
				if (progs[t].ops[s][i].kind == CS_OP_COLL)
					used |= 1u << progs[t].ops[s][i].group;
	return used;
}

/* The first number of each kind's groups when they are numbered: 1 for the
 * first kind used, then on past the instances of each kind used. */
static void number_groups(const cs_scenario *sc, const cs_mesh *m, unsigned used,
			  int64_t base[CS_GROUP_KINDS])
{
	int64_t next = 1;
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		base[k] = next;
		if (used & (1u << k))
			next += cs_mesh_group_count(m, (cs_group_kind)k, sc->cluster.gpus_per_node);
	}
}

/* {"tp.0": [0, 1], "tp.1": [2, 3], ...}, or numbered {"1": [0, 1], ...}:
 * every instance of every kind used. */
static cs_status write_groups(const char *path, const cs_scenario *sc, const cs_mesh *m, unsigned used,
			      const int64_t *base, cs_diag *diag)
{
	FILE *f = fopen(path, "wx");
	if (!f) {
		snprintf(diag->msg, sizeof diag->msg, "cannot write '%.900s': %s", path, strerror(errno));
		return CS_ERR_SIM;
	}
	int64_t gpn = sc->cluster.gpus_per_node;
	int first = 1;
	fputs("{", f);
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		if (!(used & (1u << k)))
			continue;
		int64_t n = cs_mesh_group_count(m, (cs_group_kind)k, gpn);
		uint8_t *seen = calloc((size_t)n, 1);
		if (!seen) {
			fclose(f);
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			return CS_ERR_NOMEM;
		}
		for (int64_t r = 0; r < m->world; r++) {
			int64_t g = cs_mesh_group_index(m, (cs_group_kind)k, r, gpn);
			if (seen[g])
				continue;
			seen[g] = 1;
			cs_group grp = cs_mesh_group(m, (cs_group_kind)k, r, gpn);
			if (base)
				fprintf(f, "%s\n  \"%" PRId64 "\": [", first ? "" : ",", base[k] + g);
			else
				fprintf(f, "%s\n  \"%s.%" PRId64 "\": [", first ? "" : ",",
					cs_group_kind_name((cs_group_kind)k), g);
			first = 0;
			for (int64_t i = 0; i < cs_group_size(&grp); i++)
				fprintf(f, "%s%" PRId64, i ? ", " : "", cs_group_member(&grp, i));
			fputs("]", f);
		}
		free(seen);
	}
	fputs("\n}\n", f);
	if (ferror(f) | (fclose(f) != 0)) {
		snprintf(diag->msg, sizeof diag->msg, "cannot write '%.900s'", path);
		return CS_ERR_SIM;
	}
	return CS_OK;
}

/* `bytes` as "1.50 GiB" or "3.2 MiB", in buf (32 bytes). */
static const char *size_text(int64_t bytes, char *buf)
{
	if (bytes >= (int64_t)1 << 30)
		snprintf(buf, 32, "%.2f GiB", (double)bytes / (double)((int64_t)1 << 30));
	else
		snprintf(buf, 32, "%.1f MiB", (double)bytes / (double)(1 << 20));
	return buf;
}

/* The export's size before it is written: each stage's first rank
 * encoded without writing, times the ranks of a stage. Over max_bytes,
 * CS_ERR_INPUT with the size. */
static cs_status check_size(const cs_scenario *sc, const cs_mesh *m, const cs_program *progs,
			    const int64_t *pg_base, int64_t max_bytes, cs_diag *diag)
{
	int64_t pp = sc->parallel.pp, per_stage = m->world / pp, seen = 0;
	cs_chakra_written est = { 0 };
	uint8_t *done = calloc((size_t)pp, 1);
	if (!done) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	cs_status st = CS_OK;
	for (int64_t r = 0; st == CS_OK && r < m->world && seen < pp; r++) {
		int64_t stage = cs_mesh_coord(m, r, CS_AXIS_PP);
		if (done[stage])
			continue;
		done[stage] = 1;
		seen++;
		cs_chakra_written one = { 0 };
		st = cs_chakra_write_rank(NULL, "the size estimate", sc, m, progs, r, pg_base, &one, diag);
		est.bytes += one.bytes * per_stage;
		est.nodes += one.nodes * per_stage;
	}
	free(done);
	if (st == CS_OK && est.bytes > max_bytes) {
		char want[32], limit[32];
		snprintf(diag->msg, sizeof diag->msg,
			 "the export would write about %s (%" PRId64 " ranks, %" PRId64
			 " nodes), more than the limit of %s ('--max-size' raises it)",
			 size_text(est.bytes, want), m->world, est.nodes, size_text(max_bytes, limit));
		st = CS_ERR_INPUT;
	}
	return st;
}

/* CS_ERR_SIM when `stop` says to start no more files, else `st`. */
static cs_status go_on(cs_status st, const volatile sig_atomic_t *stop, cs_diag *diag)
{
	if (st == CS_OK && stop && *stop) {
		snprintf(diag->msg, sizeof diag->msg, "interrupted");
		return CS_ERR_SIM;
	}
	return st;
}

cs_status cs_chakra_export(const cs_scenario *sc, const char *dir, const char *prefix, int astra_sim,
			   int64_t max_bytes, const volatile sig_atomic_t *stop, cs_chakra_written *out,
			   cs_diag *diag)
{
	memset(out, 0, sizeof *out);
	cs_kprof *prof = NULL;
	cs_status st = cs_hw_load_profile(sc, &prof, diag);
	if (st != CS_OK)
		return st;
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	int64_t n = sc->parallel.pp;
	cs_program *progs = NULL;
	st = cs_plan_build_new(sc, &mesh, prof, &progs, diag);
	int64_t base[CS_GROUP_KINDS];
	if (st == CS_OK)
		number_groups(sc, &mesh, kinds_used(progs, n), base);
	const int64_t *pg_base = astra_sim ? base : NULL;
	if (st == CS_OK)
		st = check_size(sc, &mesh, progs, pg_base, max_bytes, diag);
	/* the files written, for the manifest: a rank each and the groups */
	char **files = st == CS_OK ? calloc((size_t)mesh.world + 1, sizeof *files) : NULL;
	size_t nfiles = 0;
	if (st == CS_OK && !files) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		st = CS_ERR_NOMEM;
	}
	char path[4096];
	for (int64_t r = 0; (st = go_on(st, stop, diag)) == CS_OK && r < mesh.world; r++) {
		char tail[32];
		snprintf(tail, sizeof tail, "%" PRId64 ".et", r);
		if (path_of(path, sizeof path, dir, prefix, tail)) {
			snprintf(diag->msg, sizeof diag->msg, "output path under '%.900s' too long", dir);
			st = CS_ERR_INPUT;
			break;
		}
		FILE *f = fopen(path, "wbx");
		if (!f) {
			snprintf(diag->msg, sizeof diag->msg, "cannot write '%.900s': %s", path,
				 strerror(errno));
			st = CS_ERR_SIM;
			break;
		}
		st = cs_chakra_write_rank(f, path, sc, &mesh, progs, r, pg_base, out, diag);
		if ((fclose(f) != 0) && st == CS_OK) {
			snprintf(diag->msg, sizeof diag->msg, "cannot write '%.900s': %s", path,
				 strerror(errno));
			st = CS_ERR_SIM;
		}
		if (st == CS_OK && !(files[nfiles++] = strdup(path))) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			st = CS_ERR_NOMEM;
		}
		out->files++;
	}
	if (st == CS_OK) {
		out->templates = n;
		if (path_of(path, sizeof path, dir, prefix, "comm_group.json")) {
			snprintf(diag->msg, sizeof diag->msg, "output path under '%.900s' too long", dir);
			st = CS_ERR_INPUT;
		} else {
			st = write_groups(path, sc, &mesh, kinds_used(progs, n), pg_base, diag);
		}
		if (st == CS_OK && !(files[nfiles++] = strdup(path))) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			st = CS_ERR_NOMEM;
		}
	}
	if ((st = go_on(st, stop, diag)) == CS_OK) {
		if (path_of(path, sizeof path, dir, prefix, "manifest")) {
			snprintf(diag->msg, sizeof diag->msg, "output path under '%.900s' too long", dir);
			st = CS_ERR_INPUT;
		} else {
			st = cs__chakra_manifest_write(path, mesh.world, out->nodes, files, nfiles, diag);
		}
	}
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	cs_plan_programs_free(progs, n);
	cs_kprof_free(prof);
	return st;
}
