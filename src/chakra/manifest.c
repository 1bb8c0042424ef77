/*
 * manifest.c - an export's manifest, DIR/<prefix>.manifest: what was
 * written (ranks, nodes, and each file's size and checksum), so that
 * run-chakra can tell a folder cut short or changed since from the export.
 *
 *   clustersim-chakra-manifest 1
 *   ranks 8
 *   nodes 3120
 *   file ddp-gpt-small.0.et 48122 9f86d081884c7d65
 *   ...
 *   file ddp-gpt-small.comm_group.json 310 1b4f0e9851971998
 *
 * A file's checksum is cs__chakra_checksum of its bytes, in hexadecimal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/chakra_int.h"
#include "core/file.h"

#define MAGIC "clustersim-chakra-manifest 1"
/* A manifest lists one file a rank and two more; 64 MiB holds millions. */
#define MAX_MANIFEST_BYTES ((size_t)64 << 20)

uint64_t cs__chakra_checksum(const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h | 1;
}

/* The name after the last '/'. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

cs_status cs__chakra_manifest_write(const char *path, int64_t ranks, int64_t nodes, char *const *files,
				    size_t nfiles, cs_diag *diag)
{
	FILE *f = fopen(path, "wx"); /* in a fresh folder: never an old file */
	if (!f) {
		snprintf(diag->msg, sizeof diag->msg, "cannot write '%.900s'", path);
		return CS_ERR_SIM;
	}
	fprintf(f, "%s\nranks %" PRId64 "\nnodes %" PRId64 "\n", MAGIC, ranks, nodes);
	cs_status st = CS_OK;
	for (size_t i = 0; i < nfiles && st == CS_OK; i++) {
		char *buf;
		size_t len;
		/* what is on disk, read back: the bytes run-chakra will read */
		st = cs_file_read(files[i], (size_t)1 << 40, &buf, &len, diag);
		if (st != CS_OK)
			break;
		fprintf(f, "file %s %zu %016" PRIx64 "\n", base_name(files[i]), len,
			cs__chakra_checksum(buf, len));
		free(buf);
	}
	if ((ferror(f) | (fclose(f) != 0)) && st == CS_OK) {
		snprintf(diag->msg, sizeof diag->msg, "cannot write '%.900s'", path);
		st = CS_ERR_SIM;
	}
	return st;
}

void cs__chakra_manifest_free(cs__chakra_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->e[i].name);
	free(m->e);
	free(m);
}

static cs_status parse(cs__chakra_manifest *m, const char *path, char *text, cs_diag *diag)
{
	int line = 0;
	for (char *save = NULL, *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		line++;
		char name[4096];
		unsigned long long size;
		uint64_t sum;
		long long v;
		if (line == 1) {
			if (strcmp(ln, MAGIC) != 0)
				goto bad;
		} else if (sscanf(ln, "ranks %lld", &v) == 1 && v >= 0) {
			m->ranks = v;
		} else if (sscanf(ln, "nodes %lld", &v) == 1 && v >= 0) {
			m->nodes = v;
		} else if (sscanf(ln, "file %4095s %llu %" SCNx64, name, &size, &sum) == 3) {
			if (m->n % 256 == 0) {
				cs__chakra_manifest_entry *ne = realloc(m->e, (m->n + 256) * sizeof *ne);
				if (!ne)
					goto nomem;
				m->e = ne;
			}
			cs__chakra_manifest_entry *e = &m->e[m->n];
			if (!(e->name = strdup(name)))
				goto nomem;
			e->size = size;
			e->sum = sum;
			e->seen = 0;
			m->n++;
		} else {
			goto bad;
		}
	}
	if (line == 0)
		goto bad;
	return CS_OK;
bad:
	snprintf(diag->msg, sizeof diag->msg,
		 "%.900s:%d: not a manifest line (%s, ranks, nodes, file NAME SIZE SUM)", path,
		 line ? line : 1, MAGIC);
	return CS_ERR_INPUT;
nomem:
	snprintf(diag->msg, sizeof diag->msg, "out of memory");
	return CS_ERR_NOMEM;
}

cs_status cs__chakra_manifest_load(const char *path, cs__chakra_manifest **out, cs_diag *diag)
{
	char *text;
	size_t len;
	*out = NULL;
	cs_status st = cs_file_read(path, MAX_MANIFEST_BYTES, &text, &len, diag);
	if (st != CS_OK)
		return st;
	cs__chakra_manifest *m = calloc(1, sizeof *m);
	if (!m) {
		free(text);
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	snprintf(m->path, sizeof m->path, "%s", path);
	st = parse(m, path, text, diag);
	free(text);
	if (st != CS_OK) {
		cs__chakra_manifest_free(m);
		return st;
	}
	*out = m;
	return CS_OK;
}

cs__chakra_manifest_entry *cs__chakra_manifest_find(cs__chakra_manifest *m, const char *path)
{
	const char *name = base_name(path);
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->e[i].name, name) == 0)
			return &m->e[i];
	return NULL;
}

cs_status cs__chakra_manifest_check(cs__chakra_manifest *m, const char *path, const void *buf, size_t len,
				    cs_diag *diag)
{
	cs__chakra_manifest_entry *e = cs__chakra_manifest_find(m, path);
	if (!e) {
		snprintf(diag->msg, sizeof diag->msg, "'%.450s' is not in the manifest '%.450s'", path,
			 m->path);
		return CS_ERR_INPUT;
	}
	e->seen = 1;
	uint64_t sum = cs__chakra_checksum(buf, len);
	if (e->size != len || e->sum != sum) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'%.400s' is not the file its manifest '%.400s' lists (%zu bytes, checksum "
			 "%016" PRIx64 "; the manifest: %llu bytes, %016" PRIx64
			 "): it changed after the export",
			 path, m->path, len, sum, e->size, e->sum);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

cs_status cs__chakra_manifest_missing(const cs__chakra_manifest *m, const char *dir, cs_diag *diag)
{
	for (size_t i = 0; i < m->n; i++)
		if (!m->e[i].seen) {
			snprintf(diag->msg, sizeof diag->msg,
				 "'%.350s/%.200s' is missing: the manifest '%.350s' lists it", dir,
				 m->e[i].name, m->path);
			return CS_ERR_INPUT;
		}
	return CS_OK;
}
