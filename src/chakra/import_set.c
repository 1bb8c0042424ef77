/*
 * import_set.c - cs_chakra_load: every rank's trace of a directory, as
 * shared program templates.
 *
 * Two ranks share a template when their traces decode to the same program
 * (compared op by op after a hash). A trace whose program does not depend
 * on its rank (no "kind.instance" group names, no point-to-point peers) is
 * also remembered by a hash of its bytes, so the next rank with the same
 * bytes takes the template without decoding: 16,384 identical files cost
 * one decode and 16,384 reads.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chakra/chakra.h"
#include "chakra/chakra_int.h"
#include "core/file.h"

#define MAX_TEMPLATES 65535               /* the runner keeps a template index in 16 bits */
#define MAX_TRACE_BYTES ((size_t)1 << 32) /* a rank's trace is read whole: 4 GiB at most */

struct cs_chakra_set {
	cs_program *progs;
	int64_t nprogs, cap;
	uint16_t *tmpl_of;
	int64_t files, decoded;
	cs_chakra_skipped skipped;
};

/* A table of (hash -> template) with linear probing; 0 marks a free slot. */
typedef struct table {
	uint64_t *key;
	int32_t *val;
	int64_t cap;
} table;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

#define MIX(h, x)                               \
	do {                                    \
		__typeof__(x) v_ = (x);         \
		(h) = fnv((h), &v_, sizeof v_); \
	} while (0)

static uint64_t op_hash(uint64_t h, const cs_program *p, const cs_op *o)
{
	MIX(h, o->ns);
	MIX(h, o->attn_ns);
	MIX(h, o->gemm_ns);
	MIX(h, o->spare);
	MIX(h, o->bytes);
	MIX(h, o->mem);
	MIX(h, o->ndeps);
	MIX(h, o->kind);
	MIX(h, o->group);
	MIX(h, o->coll);
	MIX(h, o->comm);
	MIX(h, o->phase);
	MIX(h, o->to);
	MIX(h, o->vstage);
	MIX(h, o->layer);
	MIX(h, o->micro);
	MIX(h, o->ub);
	MIX(h, o->sms);
	for (int i = 0; i < o->ndeps; i++) {
		MIX(h, p->deps[o->dep + i].value);
		MIX(h, p->deps[o->dep + i].counter);
	}
	return h;
}

static uint64_t prog_hash(const cs_program *p)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int s = 0; s < CS_STREAMS; s++) {
		MIX(h, p->nops[s]);
		for (int32_t i = 0; i < p->nops[s]; i++)
			h = op_hash(h, p, &p->ops[s][i]);
	}
	MIX(h, p->model_flops);
	h = fnv(h, p->class_ns, sizeof p->class_ns);
	return h | 1; /* never 0, the free slot */
}

static int op_equal(const cs_program *pa, const cs_op *a, const cs_program *pb, const cs_op *b)
{
	if (a->ns != b->ns || a->attn_ns != b->attn_ns || a->gemm_ns != b->gemm_ns || a->spare != b->spare ||
	    a->bytes != b->bytes || a->mem != b->mem || a->ndeps != b->ndeps || a->kind != b->kind ||
	    a->group != b->group || a->coll != b->coll || a->comm != b->comm || a->phase != b->phase ||
	    a->to != b->to || a->vstage != b->vstage || a->layer != b->layer || a->micro != b->micro ||
	    a->ub != b->ub || a->sms != b->sms)
		return 0;
	for (int i = 0; i < a->ndeps; i++) {
		const cs_dep *x = &pa->deps[a->dep + i], *y = &pb->deps[b->dep + i];
		if (x->value != y->value || x->counter != y->counter)
			return 0;
	}
	return 1;
}

static int prog_equal(const cs_program *a, const cs_program *b)
{
	if (a->model_flops != b->model_flops || a->spare != b->spare ||
	    memcmp(a->class_ns, b->class_ns, sizeof a->class_ns) ||
	    memcmp(a->class_kernels, b->class_kernels, sizeof a->class_kernels) ||
	    strcmp(a->profile, b->profile))
		return 0;
	for (int s = 0; s < CS_STREAMS; s++) {
		if (a->nops[s] != b->nops[s])
			return 0;
		for (int32_t i = 0; i < a->nops[s]; i++)
			if (!op_equal(a, &a->ops[s][i], b, &b->ops[s][i]))
				return 0;
	}
	return 1;
}

static int32_t *slot(table *t, uint64_t key, int *found)
{
	for (int64_t i = (int64_t)(key % (uint64_t)t->cap);; i = (i + 1) % t->cap) {
		if (t->key[i] == key) {
			*found = 1;
			return &t->val[i];
		}
		if (t->key[i] == 0) {
			*found = 0;
			t->key[i] = key;
			return &t->val[i];
		}
	}
}

/* The template equal to *p, or -1; with add, a new template from *p
 * (moved into the set) when none is. */
static int64_t find_or_add(cs_chakra_set *s, table *t, cs_program *p, cs_diag *diag)
{
	uint64_t h = prog_hash(p);
	for (int64_t i = (int64_t)(h % (uint64_t)t->cap); t->key[i]; i = (i + 1) % t->cap)
		if (t->key[i] == h && prog_equal(&s->progs[t->val[i]], p)) {
			cs_program_free(p);
			return t->val[i];
		}
	if (s->nprogs == MAX_TEMPLATES) {
		snprintf(diag->msg, sizeof diag->msg, "more than %d distinct programs among the traces",
			 MAX_TEMPLATES);
		return -2;
	}
	if (s->nprogs == s->cap) {
		int64_t cap = s->cap ? s->cap * 2 : 16;
		cs_program *np = realloc(s->progs, (size_t)cap * sizeof *np);
		if (!np) {
			snprintf(diag->msg, sizeof diag->msg, "out of memory");
			return -3;
		}
		s->progs = np;
		s->cap = cap;
	}
	s->progs[s->nprogs] = *p;
	int64_t i = (int64_t)(h % (uint64_t)t->cap);
	while (t->key[i])
		i = (i + 1) % t->cap;
	t->key[i] = h;
	t->val[i] = (int32_t)s->nprogs;
	return s->nprogs++;
}

/* Whether the file at `path` opens as a PyTorch execution trace (JSON, as
 * torch.profiler.ExecutionTraceObserver writes it: a "schema" and then
 * "nodes"), which Chakra's converter turns into a Chakra trace. */
static int pytorch_et(const char *path)
{
	char head[4097];
	long long size;
	cs_diag d;
	int fd = cs_file_open(path, &size, &d); /* a FIFO is not waited on */
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, head, sizeof head - 1);
	close(fd);
	head[n > 0 ? n : 0] = 0;
	size_t i = strspn(head, " \t\r\n");
	return head[i] == '{' && strstr(head, "\"schema\"") && strstr(head, "\"nodes\"");
}

/* The message for a PyTorch execution trace given as Chakra traces. */
static cs_status pytorch_hint(const char *path, cs_diag *diag)
{
	snprintf(diag->msg, sizeof diag->msg,
		 "'%.700s' is a PyTorch execution trace (JSON), not a Chakra trace: convert each rank's "
		 "with Chakra's converter, 'chakra_converter PyTorch --input FILE --output "
		 "DIR/PREFIX.RANK.et' "
		 "(after 'chakra_trace_link' to join it with its Kineto trace), then run DIR",
		 path);
	return CS_ERR_INPUT;
}

/* Split `path` into the directory and the prefix of its <prefix>.<rank>.et
 * files: a directory names the one prefix its files share, anything else is
 * DIR/prefix. Counts the files and the highest rank. */
static cs_status find_traces(const char *path, char *dir, size_t dcap, char *prefix, size_t pcap,
			     int64_t *nfiles, int64_t *maxrank, cs_diag *diag)
{
	struct stat sb;
	int is_dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
	const char *slash = strrchr(path, '/');
	prefix[0] = 0;
	if (is_dir) {
		snprintf(dir, dcap, "%s", path);
	} else if (slash) {
		snprintf(dir, dcap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
		snprintf(prefix, pcap, "%s", slash + 1);
	} else {
		snprintf(dir, dcap, ".");
		snprintf(prefix, pcap, "%s", path);
	}
	size_t plen0 = strlen(path);
	if (!is_dir && plen0 > 5 && strcmp(path + plen0 - 5, ".json") == 0 && pytorch_et(path))
		return pytorch_hint(path, diag);
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(diag->msg, sizeof diag->msg, "cannot open trace directory '%.900s'", dir);
		return CS_ERR_INPUT;
	}
	*nfiles = 0;
	*maxrank = -1;
	struct dirent *e;
	char json[4200] = "";
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (is_dir && !json[0] && n > 5 && strcmp(e->d_name + n - 5, ".json") == 0) {
			snprintf(json, sizeof json, "%s/%s", dir, e->d_name);
			if (!pytorch_et(json))
				json[0] = 0;
		}
		if (n < 5 || strcmp(e->d_name + n - 3, ".et") != 0)
			continue;
		size_t end = n - 3, i = end;
		while (i > 0 && e->d_name[i - 1] >= '0' && e->d_name[i - 1] <= '9')
			i--;
		if (i == end || i < 2 || e->d_name[i - 1] != '.' || end - i > 9)
			continue;
		size_t plen = i - 1;
		if (!prefix[0] && plen < pcap)
			snprintf(prefix, pcap, "%.*s", (int)plen, e->d_name);
		if (strlen(prefix) != plen || strncmp(prefix, e->d_name, plen) != 0) {
			if (is_dir) {
				snprintf(
					diag->msg, sizeof diag->msg,
					"'%.900s' holds traces of two prefixes, '%.40s' and '%.*s'; name one "
					"as DIR/PREFIX",
					dir, prefix, (int)plen, e->d_name);
				closedir(d);
				return CS_ERR_INPUT;
			}
			continue;
		}
		int64_t r = strtoll(e->d_name + i, NULL, 10);
		(*nfiles)++;
		if (r > *maxrank)
			*maxrank = r;
	}
	closedir(d);
	if (*nfiles == 0) {
		if (json[0])
			return pytorch_hint(json, diag);
		if (is_dir)
			snprintf(diag->msg, sizeof diag->msg,
				 "no Chakra traces ('<prefix>.<rank>.et') in '%.900s'", dir);
		else
			snprintf(diag->msg, sizeof diag->msg,
				 "no Chakra traces '%.400s.<rank>.et', and no directory '%.400s'", path,
				 path);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

static cs_status load_ranks(cs_chakra_set *s, const char *dir, const char *prefix, const cs_scenario *sc,
			    const cs_chakra_groups *groups, cs__chakra_manifest *man, table *ptab,
			    table *ctab, cs_diag *diag)
{
	cs_mesh mesh;
	cs_mesh_init(&mesh, &sc->parallel);
	const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
	for (int64_t r = 0; r < mesh.world; r++) {
		char path[4200];
		snprintf(path, sizeof path, "%s%s%s.%" PRId64 ".et", dir, sep, prefix, r);
		char *buf;
		size_t len;
		struct stat sb;
		if (stat(path, &sb) != 0 && man && cs__chakra_manifest_find(man, path))
			return cs__chakra_manifest_missing(man, dir, diag);
		if (stat(path, &sb) != 0) {
			snprintf(diag->msg, sizeof diag->msg,
				 "missing trace '%.900s' of rank %" PRId64 " (the scenario has %" PRId64
				 " ranks)",
				 path, r, mesh.world);
			return CS_ERR_INPUT;
		}
		cs_status st = cs_file_read(path, MAX_TRACE_BYTES, &buf, &len, diag);
		if (st == CS_OK && man)
			st = cs__chakra_manifest_check(man, path, buf, len, diag);
		if (st != CS_OK) {
			if (buf)
				free(buf);
			return st;
		}
		s->files++;
		uint64_t ch = cs__chakra_checksum(buf, len);
		int found;
		int32_t *cv = slot(ctab, ch, &found);
		if (found) {
			s->tmpl_of[r] = (uint16_t)*cv;
			free(buf);
			continue;
		}
		ctab->key[cv - ctab->val] = 0; /* only a rank-free decode may claim it */
		cs_program p;
		cs_program_init(&p);
		int rank_free = 0;
		cs_chakra_where w = {
			.mesh = &mesh, .gpus_per_node = sc->cluster.gpus_per_node, .rank = r, .groups = groups
		};
		int64_t before = s->skipped.nodes;
		st = cs_chakra_decode((const uint8_t *)buf, len, path, &w, &p, &rank_free, &s->skipped, diag);
		s->skipped.files += s->skipped.nodes > before;
		free(buf);
		s->decoded++;
		if (st != CS_OK) {
			cs_program_free(&p);
			return st;
		}
		int64_t t = find_or_add(s, ptab, &p, diag);
		if (t < 0) {
			cs_program_free(&p);
			return t == -2 ? CS_ERR_INPUT : CS_ERR_NOMEM;
		}
		s->tmpl_of[r] = (uint16_t)t;
		if (rank_free)
			*slot(ctab, ch, &found) = (int32_t)t;
	}
	return CS_OK;
}

/* The comm-group file asked for, or DIR/PREFIX.comm_group.json when there
 * is one, or none. */
static cs_status load_groups(const char *asked, const char *dir, const char *prefix, cs__chakra_manifest *man,
			     cs_chakra_groups **out, cs_diag *diag)
{
	char path[4400];
	struct stat sb;
	*out = NULL;
	snprintf(path, sizeof path, "%s%s%s.comm_group.json", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		 prefix);
	cs__chakra_manifest_entry *e = man ? cs__chakra_manifest_find(man, path) : NULL;
	if (asked) {
		if (e)
			e->seen = 1; /* another file serves: the export's is not read */
		return cs_chakra_groups_load(asked, out, diag);
	}
	if (stat(path, &sb) != 0)
		return CS_OK; /* none; a manifest that lists one says so at the end */
	if (e) {
		char *buf;
		size_t len;
		cs_status st = cs_file_read(path, CS_CHAKRA_GROUPS_MAX_BYTES, &buf, &len, diag);
		if (st == CS_OK)
			st = cs__chakra_manifest_check(man, path, buf, len, diag);
		free(buf);
		if (st != CS_OK)
			return st;
	}
	return cs_chakra_groups_load(path, out, diag);
}

/* DIR/<prefix>.manifest when the traces have one (an export's; other
 * tools' traces have none), else NULL. */
static cs_status load_manifest(const char *dir, const char *prefix, cs__chakra_manifest **out, cs_diag *diag)
{
	char path[4400];
	struct stat sb;
	*out = NULL;
	snprintf(path, sizeof path, "%s%s%s.manifest", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", prefix);
	if (stat(path, &sb) != 0)
		return CS_OK;
	return cs__chakra_manifest_load(path, out, diag);
}

cs_status cs_chakra_load(const char *path, const char *groups_file, const cs_scenario *sc,
			 cs_chakra_set **out, cs_diag *diag)
{
	cs_chakra_groups *groups = NULL;
	char dir[4096], prefix[256];
	int64_t nfiles, maxrank;
	*out = NULL;
	cs_status st = find_traces(path, dir, sizeof dir, prefix, sizeof prefix, &nfiles, &maxrank, diag);
	if (st != CS_OK)
		return st;
	int64_t world = cs_scenario_gpus(sc);
	if (maxrank >= world || nfiles > world) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'%s' has traces of ranks up to %" PRId64 ", more than the scenario's %" PRId64
			 " GPUs",
			 path, maxrank, world);
		return CS_ERR_INPUT;
	}
	cs__chakra_manifest *man = NULL;
	if ((st = load_manifest(dir, prefix, &man, diag)) != CS_OK)
		return st;
	if ((st = load_groups(groups_file, dir, prefix, man, &groups, diag)) != CS_OK) {
		cs__chakra_manifest_free(man);
		return st;
	}
	cs_chakra_set *s = calloc(1, sizeof *s);
	table ptab = { .cap = 2 * world + 64 }, ctab = { .cap = 2 * world + 64 };
	ptab.key = calloc((size_t)ptab.cap, sizeof(uint64_t));
	ptab.val = calloc((size_t)ptab.cap, sizeof(int32_t));
	ctab.key = calloc((size_t)ctab.cap, sizeof(uint64_t));
	ctab.val = calloc((size_t)ctab.cap, sizeof(int32_t));
	if (s)
		s->tmpl_of = calloc((size_t)world, sizeof(uint16_t));
	if (!s || !s->tmpl_of || !ptab.key || !ptab.val || !ctab.key || !ctab.val) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		st = CS_ERR_NOMEM;
	} else {
		st = load_ranks(s, dir, prefix, sc, groups, man, &ptab, &ctab, diag);
	}
	if (st == CS_OK && man)
		st = cs__chakra_manifest_missing(man, dir, diag);
	cs__chakra_manifest_free(man);
	cs_chakra_groups_free(groups);
	free(ptab.key);
	free(ptab.val);
	free(ctab.key);
	free(ctab.val);
	if (st != CS_OK) {
		cs_chakra_set_free(s);
		return st;
	}
	*out = s;
	return CS_OK;
}

void cs_chakra_set_free(cs_chakra_set *s)
{
	if (!s)
		return;
	for (int64_t i = 0; i < s->nprogs; i++)
		cs_program_free(&s->progs[i]);
	free(s->progs);
	free(s->tmpl_of);
	free(s);
}

const cs_program *cs_chakra_set_programs(const cs_chakra_set *s, int64_t *n)
{
	*n = s->nprogs;
	return s->progs;
}

const uint16_t *cs_chakra_set_template_of(const cs_chakra_set *s) { return s->tmpl_of; }

const cs_chakra_skipped *cs_chakra_set_skipped(const cs_chakra_set *s) { return &s->skipped; }

int64_t cs_chakra_set_files(const cs_chakra_set *s, int64_t *decoded)
{
	*decoded = s->decoded;
	return s->files;
}
