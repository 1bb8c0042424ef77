/*
 * import.c - one rank's Chakra execution trace as a program.
 *
 * The nodes are read in file order, then placed in a dependency order (the
 * file's own order where it allows, a node never before one it depends
 * on): compute nodes go on the compute stream, collectives on the stream of
 * their process group's kind, sends on the pipeline stream, each stream
 * keeping that order. A dependency on a node becomes "its stream has
 * completed that many ops"; a receive is no op but a mailbox counter, so a
 * dependency on the k-th receive from a neighbour waits for that neighbour's
 * k-th message. What a receive itself depends on is not modelled (clustersim
 * delivers a message whenever it is sent). A message to or from a rank that
 * is no pipeline neighbour takes the mailbox of its way round the ring of
 * ranks, and then every send of the trace names its receiver (cs_op_peer).
 * The host's side of a collective (PyTorch's c10d::allreduce_ beside its
 * NCCL kernel) is an op of no time, counted and named.
 */
#include <float.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/chakra.h"
#include "chakra/chakra_int.h"
#include "chakra/et_wire.pb-c.h"
#include "core/sim.h"

typedef ChakraProtoMsg__AttributeProto attr_t;

typedef cs__chakra_node inode;

/* The attributes a node may carry, by name. */
enum {
	A_COMM_TYPE,
	A_COMM_SIZE,
	A_PG,
	A_SRC,
	A_DST,
	A_NS,
	A_STREAM,
	A_PHASE,
	A_ATTN,
	A_GEMM,
	A_SPARE,
	A_COLL,
	A_COMM,
	A_TO,
	A_BYTES,
	A_MEM,
	A_MICRO,
	A_LAYER,
	A_VSTAGE,
	A_UB_NS,
	A_UB_SMS,
	A_CPU,
	A_N
};
static const char *const attr_names[A_N] = { "comm_type", "comm_size", "pg_name",  "comm_src",   "comm_dst",
					     "cs_ns",     "cs_stream", "cs_phase", "cs_attn_ns", "cs_gemm_ns",
					     "cs_spare",  "cs_coll",   "cs_comm",  "cs_to",      "cs_bytes",
					     "cs_mem",    "cs_micro",  "cs_layer", "cs_vstage",  "cs_ub_ns",
					     "cs_ub_sms", "is_cpu_op" };

typedef struct ctx {
	cs__chakra_graph g;
	const cs_chakra_where *w;
	cs_diag *diag;
	int64_t cap, depcap;
	int rank_free;
	int far; /* a message to or from a rank that is no pipeline neighbour */
	cs_chakra_skipped *skipped;
	size_t attr_len[A_N]; /* of attr_names */
} ctx;

static cs_status fail(ctx *c, uint64_t id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cs_status fail(ctx *c, uint64_t id, const char *fmt, ...)
{
	char m[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	snprintf(c->diag->msg, sizeof c->diag->msg, "%s: node %" PRIu64 ": %s", c->g.name, id, m);
	return CS_ERR_INPUT;
}

static int attr_int(const attr_t *a, int64_t *v)
{
	switch (a->value_case) {
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *v = a->int32_val; return 0;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *v = a->int64_val; return 0;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *v = a->uint32_val; return 0;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
		if (a->uint64_val > INT64_MAX)
			return -1;
		*v = (int64_t)a->uint64_val;
		return 0;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: *v = a->bool_val; return 0;
	default: return -1;
	}
}

static int attr_num(const attr_t *a, double *v)
{
	int64_t i;
	if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL) {
		*v = a->double_val;
		return a->double_val == a->double_val ? 0 : -1; /* no NaN */
	}
	if (attr_int(a, &i))
		return -1;
	*v = (double)i;
	return 0;
}

/* The group of a "kind", "kind.instance" or absent (NULL) name. */
static cs_status group_of(ctx *c, uint64_t id, const char *pg, uint8_t *kind)
{
	const cs_mesh *m = c->w->mesh;
	int64_t gpn = c->w->gpus_per_node, rank = c->w->rank;
	if (!pg) {
		/* the groups of the parallelism's axes; not the step's edges' */
		for (int k = CS_GROUP_DP;; k = (k + 1) % CS_GROUP_MP) {
			cs_group g = cs_mesh_group(m, (cs_group_kind)k, rank, gpn);
			if (cs_group_size(&g) == m->world) {
				*kind = (uint8_t)k;
				return CS_OK;
			}
			if (k == CS_GROUP_DP - 1)
				break;
		}
		return fail(c, id,
			    "a collective without 'pg_name' needs a group of all %" PRId64
			    " ranks; the scenario's parallelism has none",
			    m->world);
	}
	size_t len = strcspn(pg, ".");
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		const char *kn = cs_group_kind_name((cs_group_kind)k);
		if (strlen(kn) != len || strncmp(pg, kn, len) != 0)
			continue;
		char *end;
		long long inst = pg[len] ? strtoll(pg + len + 1, &end, 10) : 0;
		if (pg[len] && (*end || end == pg + len + 1 || pg[len + 1] == '-' || pg[len + 1] == '+'))
			break; /* "tp.x": not an instance, perhaps a comm-group file's name */
		*kind = (uint8_t)k;
		if (!pg[len])
			return CS_OK;
		int64_t mine = cs_mesh_group_index(m, (cs_group_kind)k, rank, gpn);
		c->rank_free = 0;
		if (inst != mine)
			return fail(c, id,
				    "process group '%.64s' does not hold rank %" PRId64
				    " (its %s group is '%s.%" PRId64 "')",
				    pg, rank, kn, kn, mine);
		return CS_OK;
	}
	char why[300];
	int r = cs_chakra_groups_kind(c->w->groups, pg, m, gpn, rank, kind, why, sizeof why);
	if (r == 0) {
		c->rank_free = 0; /* the name held this rank */
		return CS_OK;
	}
	if (r == -2)
		return fail(c, id, "%s", why);
	return fail(c, id,
		    "unknown process group '%.64s' (not in %s; the kinds are tp, cp, ep, pp, "
		    "dp, dp-intra and dp-inter, with an optional instance: 'tp.3')",
		    pg, c->w->groups ? "the comm-group file" : "a comm-group file, for none was given");
}

/* The direction (+1 up the pipeline ring, -1 down) of a message between
 * this rank and `peer` (a receive's sender: the way it was sent), or 0 when
 * `peer` is no pipeline neighbour. `hint` (cs_to, +1/-1, 0 for none)
 * settles a two-stage ring, where both neighbours are the same rank. */
static int direction(const ctx *c, int64_t peer, int64_t hint, int recv)
{
	const cs_mesh *m = c->w->mesh;
	int64_t rank = c->w->rank, p = m->deg[CS_AXIS_PP];
	if (peer < 0 || peer >= m->world || peer == rank)
		return 0;
	int64_t ps = cs_mesh_coord(m, peer, CS_AXIS_PP), s = cs_mesh_coord(m, rank, CS_AXIS_PP);
	if (cs_mesh_pp_peer(m, rank, ps) != peer)
		return 0;
	int up = ps == (s + 1) % p, down = ps == (s - 1 + p) % p;
	if (recv) { /* a message from below was sent up */
		int t = up;
		up = down;
		down = t;
	}
	if (hint)
		return (hint > 0 ? up : down) ? (hint > 0 ? 1 : -1) : 0;
	if (up && down) /* a two-stage ring: a guess, messages go forward from stage 0 */
		return (ps > s) != recv ? 1 : -1;
	return up ? 1 : down ? -1 : 0;
}

static const int8_t stream_of_kind[CS_GROUP_KINDS] = {
	CS_STREAM_TP, CS_STREAM_CP, CS_STREAM_EP, CS_STREAM_PP, CS_STREAM_DP, CS_STREAM_DP,
	CS_STREAM_DP, CS_STREAM_DP, CS_STREAM_DP, CS_STREAM_TP, CS_STREAM_DP, CS_STREAM_EP
};
static const uint8_t comm_of_kind[CS_GROUP_KINDS] = { CS_COMM_TP, CS_COMM_CP, CS_COMM_EP, CS_COMM_PP,
						      CS_COMM_DP, CS_COMM_DP, CS_COMM_DP, CS_COMM_DP,
						      CS_COMM_DP, CS_COMM_DP, CS_COMM_DP, CS_COMM_EP };
_Static_assert(CS_GROUP_KINDS == 12, "a stream and a comm kind for every group kind");

/* Note a skipped node: counted, and its name without a "(k)" suffix added
 * to the list when it is not there yet and the list has room. */
static void skip(ctx *c, const char *name)
{
	cs_chakra_skipped *sk = c->skipped;
	if (!sk)
		return;
	sk->nodes++;
	if (!name || !*name)
		name = "(unnamed)";
	size_t n = strlen(name);
	if (n > 2 && name[n - 1] == ')') {
		size_t i = n - 1;
		while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
			i--;
		if (i > 0 && i < n - 1 && name[i - 1] == '(')
			n = i - 1;
	}
	size_t have = strlen(sk->names);
	for (const char *p = sk->names; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 2 : 0))
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == 0))
			return;
	if (sk->more || have + n + 3 >= sizeof sk->names) {
		sk->more = 1;
		return;
	}
	snprintf(sk->names + have, sizeof sk->names - have, "%s%.*s", have ? ", " : "", (int)n, name);
}

static cs_status fill(ctx *c, const ChakraProtoMsg__Node *n, inode *x)
{
	const attr_t *a[A_N] = { 0 };
	int64_t v[A_N] = { 0 };
	double d[A_N] = { 0 };
	uint64_t id = n->id;
	for (size_t i = 0; i < n->n_attr; i++) {
		const char *name = n->attr[i]->name;
		size_t len = name ? strlen(name) : 0;
		for (int k = 0; k < A_N; k++) {
			if (len != c->attr_len[k] || memcmp(name, attr_names[k], len) != 0)
				continue;
			a[k] = n->attr[i];
			if (k == A_PG) {
				if (a[k]->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
					return fail(c, id, "attribute 'pg_name' is not a string");
			} else if ((k == A_SPARE || k == A_BYTES || k == A_MEM) ? attr_num(a[k], &d[k])
										: attr_int(a[k], &v[k])) {
				return fail(c, id, "attribute '%s' is not a number", attr_names[k]);
			}
			break;
		}
	}
	cs_op *op = &x->op;
	memset(x, 0, sizeof *x);
	x->id = id;
	op->micro = a[A_MICRO] ? (int32_t)v[A_MICRO] : -1;
	op->layer = a[A_LAYER] ? (int16_t)v[A_LAYER] : -1;
	op->vstage = (int16_t)v[A_VSTAGE];
	op->mem = d[A_MEM];
	static const int8_t amounts[] = { A_BYTES, A_MEM, A_SPARE };
	for (size_t i = 0; i < sizeof amounts; i++) {
		int k = amounts[i];
		/* bytes moved are not negative; memory freed and a clock model's
		 * spare (W x ns left under the cap, or taken over it) may be */
		double hi = k == A_SPARE ? DBL_MAX : CS__CHAKRA_MAX_BYTES, lo = k == A_BYTES ? 0 : -hi;
		if (!(d[k] >= lo && d[k] <= hi))
			return fail(c, id, "attribute '%s' of %g is %s", attr_names[k], d[k],
				    d[k] < 0 && lo == 0 ? "negative" : "out of range");
	}
	op->phase = CS_PHASE_COMM;
	if (a[A_PHASE] && (v[A_PHASE] < 0 || v[A_PHASE] > CS_PHASE_COMM))
		return fail(c, id, "unknown phase %" PRId64, v[A_PHASE]);
	if (a[A_STREAM] && (v[A_STREAM] < 0 || v[A_STREAM] >= CS_STREAMS))
		return fail(c, id, "unknown stream %" PRId64, v[A_STREAM]);
	switch (n->type) {
	case CS_CHAKRA_METADATA:
	case CS_CHAKRA_COMP:
		if (!a[A_NS] && n->duration_micros > (uint64_t)CS_TIME_HORIZON / 1000)
			return fail(c, id,
				    "duration of %" PRIu64 " us is beyond the 2^61 ns of simulated time",
				    n->duration_micros);
		op->kind = CS_OP_COMPUTE;
		op->ns = a[A_NS] ? v[A_NS] : (int64_t)n->duration_micros * 1000;
		if (op->ns < 0 || v[A_ATTN] < 0 || v[A_GEMM] < 0)
			return fail(c, id, "a negative duration (%" PRId64 " ns)", op->ns);
		if (op->ns > CS_TIME_HORIZON || v[A_ATTN] > CS_TIME_HORIZON || v[A_GEMM] > CS_TIME_HORIZON)
			return fail(c, id,
				    "a duration of %" PRId64 " ns, beyond the 2^61 ns of simulated time",
				    op->ns > CS_TIME_HORIZON ? op->ns
				    : v[A_ATTN] > v[A_GEMM]  ? v[A_ATTN]
							     : v[A_GEMM]);
		op->attn_ns = v[A_ATTN];
		op->gemm_ns = v[A_GEMM];
		op->spare = d[A_SPARE];
		op->phase = (uint8_t)(a[A_PHASE] ? v[A_PHASE] : CS_PHASE_FWD);
		x->stream = CS_STREAM_COMPUTE;
		return CS_OK;
	case CS_CHAKRA_COLL: {
		cs_coll_op co;
		if (!a[A_COMM_TYPE] || (a[A_CPU] && v[A_CPU])) {
			/* the host's side of a collective (PyTorch's c10d::allreduce_):
			 * no kernel, kept as an op of no time for what depends on it */
			skip(c, n->name);
			op->kind = CS_OP_COMPUTE;
			op->phase = CS_PHASE_FWD;
			x->stream = CS_STREAM_COMPUTE;
			return CS_OK;
		}
		if (cs__chakra_coll_of(v[A_COMM_TYPE], &co))
			return fail(c, id, "unknown collective type %" PRId64, v[A_COMM_TYPE]);
		if (a[A_COLL] && (v[A_COLL] < 0 || v[A_COLL] >= CS_COLL_OPS))
			return fail(c, id, "unknown clustersim collective %" PRId64, v[A_COLL]);
		if (!a[A_COMM_SIZE] || v[A_COMM_SIZE] < 0)
			return fail(c, id, "a collective without a size ('comm_size')");
		if ((double)v[A_COMM_SIZE] >= CS__CHAKRA_MAX_BYTES)
			return fail(c, id, "a collective of %" PRId64 " bytes, beyond 2^60", v[A_COMM_SIZE]);
		cs_status st = group_of(c, id, a[A_PG] ? a[A_PG]->string_val : NULL, &op->group);
		if (st != CS_OK)
			return st;
		op->kind = CS_OP_COLL;
		op->coll = (uint8_t)(a[A_COLL] ? v[A_COLL] : co);
		op->bytes = a[A_BYTES] ? d[A_BYTES] : (double)v[A_COMM_SIZE];
		if (a[A_COMM] && (v[A_COMM] < 0 || v[A_COMM] >= CS_COMM_KINDS))
			return fail(c, id, "unknown communication kind %" PRId64, v[A_COMM]);
		op->comm = (uint8_t)(a[A_COMM] ? v[A_COMM] : comm_of_kind[op->group]);
		if (a[A_UB_NS]) { /* a userbuffers kernel of that time on those SMs */
			if (v[A_UB_NS] < 0 || v[A_UB_NS] > CS_TIME_HORIZON || v[A_UB_SMS] < 0 ||
			    v[A_UB_SMS] > 255)
				return fail(c, id,
					    "a userbuffers collective of %" PRId64 " ns on %" PRId64 " SMs",
					    v[A_UB_NS], v[A_UB_SMS]);
			op->ub = 1;
			op->ns = v[A_UB_NS];
			op->sms = (uint8_t)v[A_UB_SMS];
		}
		x->stream = a[A_STREAM] ? (int8_t)v[A_STREAM] : stream_of_kind[op->group];
		if (x->stream == CS_STREAM_COMPUTE)
			return fail(c, id, "a collective on the compute stream");
		return CS_OK;
	}
	case CS_CHAKRA_SEND:
	case CS_CHAKRA_RECV: {
		int recv = n->type == CS_CHAKRA_RECV;
		int k = recv ? A_SRC : A_DST;
		if (!a[k] || !a[A_COMM_SIZE])
			return fail(c, id, "a %s without '%s' or 'comm_size'", recv ? "receive" : "send",
				    attr_names[k]);
		if (v[A_COMM_SIZE] < 0 || (double)v[A_COMM_SIZE] >= CS__CHAKRA_MAX_BYTES)
			return fail(c, id, "a %s of %" PRId64 " bytes", recv ? "receive" : "send",
				    v[A_COMM_SIZE]);
		int64_t world = c->w->mesh->world, peer = v[k];
		if (peer < 0 || peer >= world || peer == c->w->rank)
			return fail(c, id, "a %s rank %" PRId64 ", %s %" PRId64 " ranks",
				    recv ? "receive from" : "send to", peer,
				    peer == c->w->rank ? "the rank itself, of the scenario's"
						       : "which is not one of the scenario's",
				    world);
		int dir = direction(c, peer, v[A_TO], recv);
		c->rank_free = 0;
		if (!dir) { /* any other rank: the mailbox of the way round the ring of ranks */
			int64_t src = recv ? peer : c->w->rank, dst = recv ? c->w->rank : peer;
			dir = 2 * ((dst - src + world) % world) <= world ? 1 : -1;
			c->far = 1;
		}
		op->bytes = a[A_BYTES] ? d[A_BYTES] : (double)v[A_COMM_SIZE];
		if (recv) {
			x->stream = -1;
			x->mbox = dir > 0 ? CS_MBOX_UP : CS_MBOX_DOWN;
			return CS_OK;
		}
		op->kind = CS_OP_SEND;
		op->comm = CS_COMM_PP;
		op->to = (int8_t)dir;
		op->ns = peer + 1; /* kept only when some send goes beyond the neighbours */
		x->stream = a[A_STREAM] ? (int8_t)v[A_STREAM] : CS_STREAM_PP;
		return CS_OK;
	}
	case CS_CHAKRA_MEM_LOAD:
	case CS_CHAKRA_MEM_STORE:
	case CS_CHAKRA_STORAGE:
	case CS_CHAKRA_BATCH:
	case CS_CHAKRA_CHECKPOINT:
		return fail(c, id,
			    "unsupported node type %" PRIu32
			    " (memory, storage, batch and checkpoint nodes are not simulated)",
			    n->type);
	default: return fail(c, id, "unknown node type %" PRIu32, n->type);
	}
}

static cs_status add_node(ctx *c, const ChakraProtoMsg__Node *n)
{
	if (c->g.n == c->cap) {
		int64_t cap = c->cap ? c->cap * 2 : 1024;
		inode *nn = cap > INT32_MAX ? NULL : realloc(c->g.nodes, (size_t)cap * sizeof *nn);
		if (!nn)
			goto nomem;
		c->g.nodes = nn;
		c->cap = cap;
	}
	size_t nd = n->n_ctrl_deps + n->n_data_deps;
	if (c->g.ndeps + (int64_t)nd > c->depcap) {
		int64_t cap = c->depcap ? c->depcap : 4096;
		while (cap < c->g.ndeps + (int64_t)nd)
			cap *= 2;
		uint64_t *d = realloc(c->g.deps, (size_t)cap * sizeof *d);
		if (!d)
			goto nomem;
		c->g.deps = d;
		c->depcap = cap;
	}
	inode *x = &c->g.nodes[c->g.n];
	cs_status st = fill(c, n, x);
	if (st != CS_OK)
		return st;
	x->dep0 = c->g.ndeps;
	x->ndeps = (int32_t)nd;
	x->nctrl = (int32_t)n->n_ctrl_deps;
	if (n->n_ctrl_deps) /* (no deps array yet while no node has had one) */
		memcpy(c->g.deps + c->g.ndeps, n->ctrl_deps, n->n_ctrl_deps * sizeof(uint64_t));
	if (n->n_data_deps)
		memcpy(c->g.deps + c->g.ndeps + n->n_ctrl_deps, n->data_deps,
		       n->n_data_deps * sizeof(uint64_t));
	c->g.ndeps += (int64_t)nd;
	c->g.n++;
	return CS_OK;
nomem:
	snprintf(c->diag->msg, sizeof c->diag->msg, "out of memory");
	return CS_ERR_NOMEM;
}

/* The trace's own figures, each refused where it cannot be: negative
 * (but the spare, which a power cap may make so), infinite, or beyond the
 * 2^61 ns of simulated time. */
static cs_status read_metadata(ctx *c, const ChakraProtoMsg__GlobalMetadata *g, cs_program *p)
{
	for (size_t i = 0; i < g->n_attr; i++) {
		const attr_t *a = g->attr[i];
		if (!a->name)
			continue;
		int list = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST &&
			   a->int64_list && a->int64_list->n_values == CS_COMPUTE_KINDS;
		int64_t v;
		double *num = strcmp(a->name, "cs_model_flops") == 0 ? &p->model_flops
			      : strcmp(a->name, "cs_spare") == 0     ? &p->spare
								     : NULL;
		int64_t *ints = strcmp(a->name, "cs_class_ns") == 0        ? p->class_ns
				: strcmp(a->name, "cs_class_kernels") == 0 ? p->class_kernels
									   : NULL;
		if (num) {
			if (attr_num(a, num) == 0 &&
			    !(*num >= (num == &p->spare ? -DBL_MAX : 0) && *num <= DBL_MAX))
				goto bad;
		} else if (ints && list) {
			for (int k = 0; k < CS_COMPUTE_KINDS; k++)
				if (a->int64_list->values[k] < 0 ||
				    a->int64_list->values[k] > CS_TIME_HORIZON)
					goto bad;
			memcpy(ints, a->int64_list->values, CS_COMPUTE_KINDS * sizeof *ints);
		} else if (strcmp(a->name, "cs_profile_derived") == 0 && attr_int(a, &v) == 0) {
			p->profile_derived = v != 0;
		} else if (strcmp(a->name, "cs_profile") == 0 &&
			   a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
			snprintf(p->profile, sizeof p->profile, "%s", a->string_val);
		}
		continue;
	bad:
		snprintf(c->diag->msg, sizeof c->diag->msg,
			 "%s: global metadata: '%.64s' holds a negative or out-of-range figure", c->g.name,
			 a->name);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

/* Split the buffer into its messages. */
static cs_status read_messages(ctx *c, const uint8_t *buf, size_t len, cs_program *p)
{
	size_t pos = 0;
	int first = 1;
	cs_status st = CS_OK;
	cs__chakra_arena arena;
	cs__chakra_arena_init(&arena);
	if (len == 0) {
		snprintf(c->diag->msg, sizeof c->diag->msg, "%s: empty trace (no global metadata)",
			 c->g.name);
		return CS_ERR_INPUT;
	}
	while (pos < len) {
		uint64_t n;
		size_t k = cs__chakra_varint_get(buf + pos, len - pos, &n);
		if (!k || n > len - pos - k) {
			snprintf(c->diag->msg, sizeof c->diag->msg,
				 "%s: malformed trace: message at byte %zu %s", c->g.name, pos,
				 k ? "runs past the end of the file" : "has a broken length prefix");
			st = CS_ERR_INPUT;
			break;
		}
		const uint8_t *m = buf + pos + k;
		cs__chakra_arena_reset(&arena);
		if (first) {
			ChakraProtoMsg__GlobalMetadata *g =
				chakra_proto_msg__global_metadata__unpack(&arena.pa, (size_t)n, m);
			if (!g)
				goto bad;
			first = 0;
			if ((st = read_metadata(c, g, p)) != CS_OK)
				break;
		} else {
			ChakraProtoMsg__Node *node = chakra_proto_msg__node__unpack(&arena.pa, (size_t)n, m);
			if (!node)
				goto bad;
			if ((st = add_node(c, node)) != CS_OK)
				break;
		}
		pos += k + (size_t)n;
		continue;
	bad:
		if (arena.failed) {
			snprintf(c->diag->msg, sizeof c->diag->msg, "out of memory");
			st = CS_ERR_NOMEM;
		} else {
			snprintf(c->diag->msg, sizeof c->diag->msg, "%s: malformed %s at byte %zu", c->g.name,
				 first ? "global metadata" : "node message", pos);
			st = CS_ERR_INPUT;
		}
		break;
	}
	cs__chakra_arena_free(&arena);
	return st;
}

cs_status cs_chakra_decode(const uint8_t *buf, size_t len, const char *name, const cs_chakra_where *where,
			   cs_program *out, int *rank_free, cs_chakra_skipped *skipped, cs_diag *diag)
{
	ctx c = { .g = { .name = name }, .w = where, .diag = diag, .rank_free = 1, .skipped = skipped };
	for (int k = 0; k < A_N; k++)
		c.attr_len[k] = strlen(attr_names[k]);
	cs_status st = read_messages(&c, buf, len, out);
	if (st == CS_OK && !c.far) /* pipeline messages only: the runner finds the neighbours */
		for (int64_t i = 0; i < c.g.n; i++)
			if (c.g.nodes[i].op.kind == CS_OP_SEND)
				c.g.nodes[i].op.ns = 0;
	if (st == CS_OK)
		st = cs__chakra_place(&c.g, out, diag);
	if (skipped) {
		skipped->ctrl_deps += c.g.dropped;
		skipped->ctrl_cycles += c.g.ctrl_cycle;
	}
	free(c.g.nodes);
	free(c.g.deps);
	*rank_free = c.rank_free;
	if (st == CS_OK)
		diag->msg[0] = 0;
	return st;
}
