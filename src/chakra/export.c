/*
 * export.c - a rank's program as a Chakra execution trace, written node by
 * node.
 *
 * The ops of the program's streams are merged into one dependency order
 * (an op is written once the ops it waits on are): each op becomes a node
 * whose control dependency is the op before it on its stream and whose data
 * dependencies are the ops of other streams it waits on. A wait on a
 * pipeline mailbox ("k messages have arrived from below") becomes a data
 * dependency on the k-th receive node from that neighbour; every message
 * the neighbour sends gets its receive node, waited on or not, so that
 * ASTRA-sim can match each send.
 *
 * Besides Chakra's own attributes (comm_type, comm_size, pg_name, comm_src,
 * comm_dst, comm_tag, is_cpu_op), nodes carry clustersim's in "cs_*"
 * attributes (the exact duration in ns, the stream, the attention and GEMM
 * parts, the activation memory), so that an import gives back the same
 * program; other tools ignore them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/chakra.h"
#include "chakra/chakra_int.h"
#include "chakra/et_wire.pb-c.h"
#include "coll/coll.h"

typedef ChakraProtoMsg__AttributeProto attr_t;

#define MAX_ATTRS 20

typedef struct wnode {
	ChakraProtoMsg__Node n;
	attr_t a[MAX_ATTRS];
	attr_t *ap[MAX_ATTRS];
	uint64_t ctrl, data[CS_COUNTERS];
} wnode;

typedef struct writer {
	FILE *f;
	uint8_t *buf;
	size_t cap;
	uint64_t next_id;
	cs_chakra_written *out;
	/* for ASTRA-sim: the first number of each kind's groups (NULL: groups
	 * named KIND.INSTANCE, all-gathers sized by what they gather) */
	const int64_t *pg_base;
	int failed;
} writer;

static void put_bytes(writer *w, const void *p, size_t n)
{
	if (!w->failed && w->f && fwrite(p, 1, n, w->f) != n)
		w->failed = 1;
	w->out->bytes += (int64_t)n;
}

static void put_msg(writer *w, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t pre[10];
	put_bytes(w, pre, cs__chakra_varint_put(pre, n));
	if (n > w->cap) {
		uint8_t *nb = realloc(w->buf, n);
		if (!nb) {
			w->failed = 2;
			return;
		}
		w->buf = nb;
		w->cap = n;
	}
	protobuf_c_message_pack(m, w->buf);
	put_bytes(w, w->buf, n);
}

static attr_t *attr(wnode *x, const char *name)
{
	attr_t *a = &x->a[x->n.n_attr];
	chakra_proto_msg__attribute_proto__init(a);
	a->name = (char *)name;
	x->ap[x->n.n_attr++] = a;
	return a;
}

static void attr_i64(wnode *x, const char *name, int64_t v)
{
	attr_t *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
	a->int64_val = v;
}

static void attr_i32(wnode *x, const char *name, int32_t v)
{
	attr_t *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
	a->int32_val = v;
}

static void attr_f64(wnode *x, const char *name, double v)
{
	attr_t *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
	a->double_val = v;
}

static void attr_str(wnode *x, const char *name, const char *v)
{
	attr_t *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
	a->string_val = (char *)v;
}

static void attr_bool(wnode *x, const char *name, int v)
{
	attr_t *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
	a->bool_val = v != 0;
}

static uint64_t node_start(writer *w, wnode *x, uint32_t type, const char *name)
{
	chakra_proto_msg__node__init(&x->n);
	x->n.id = w->next_id++;
	x->n.name = (char *)name;
	x->n.type = type;
	x->n.attr = x->ap;
	x->n.ctrl_deps = &x->ctrl;
	x->n.data_deps = x->data;
	return x->n.id;
}

/* The rank's pipeline neighbours and what they send it. */
typedef struct mailbox {
	int64_t peer; /* the sending rank */
	const cs_program *from;
	int to;        /* the sends that land here: +1 (up) or -1 (down) */
	int32_t next;  /* the next of them to give a receive node */
	int32_t sop;   /* scanning the sender's PP stream */
	uint64_t *ids; /* receive node per message, 0 before it is written */
	int32_t n;
} mailbox;

static void mailbox_init(mailbox *mb, const cs_mesh *m, const cs_program *progs, int64_t rank, int to)
{
	int64_t p = m->deg[CS_AXIS_PP], s = cs_mesh_coord(m, rank, CS_AXIS_PP);
	int64_t from = ((s - to) % p + p) % p;
	memset(mb, 0, sizeof(*mb));
	mb->peer = cs_mesh_pp_peer(m, rank, from);
	mb->from = &progs[from];
	mb->to = to;
	const cs_program *fp = mb->from;
	for (int32_t i = 0; i < fp->nops[CS_STREAM_PP]; i++)
		if (fp->ops[CS_STREAM_PP][i].kind == CS_OP_SEND && fp->ops[CS_STREAM_PP][i].to == to)
			mb->n++;
}

/* Write receive nodes until the mailbox has `upto` of them. */
static void recv_upto(writer *w, mailbox *mb, int64_t rank, int32_t upto)
{
	while (mb->next < upto && mb->next < mb->n) {
		const cs_op *op;
		do
			op = &mb->from->ops[CS_STREAM_PP][mb->sop++];
		while (op->kind != CS_OP_SEND || op->to != mb->to);
		wnode x;
		mb->ids[mb->next++] = node_start(w, &x, CS_CHAKRA_RECV, "recv");
		attr_i32(&x, "comm_src", (int32_t)mb->peer);
		attr_i32(&x, "comm_dst", (int32_t)rank);
		attr_i32(&x, "comm_tag", mb->to > 0 ? 0 : 1);
		attr_i64(&x, "comm_size", (int64_t)(op->bytes + 0.5));
		attr_i64(&x, "cs_to", mb->to);
		attr_bool(&x, "is_cpu_op", 0);
		put_msg(w, &x.n.base);
		w->out->nodes++;
	}
}

static const char *node_name(const cs_op *op)
{
	static const char *const phase[] = { "fwd", "bwd", "bwd_w", "recompute", "optim", "comm" };
	if (op->kind == CS_OP_COMPUTE)
		return op->phase < sizeof phase / sizeof phase[0] ? phase[op->phase] : "compute";
	if (op->kind == CS_OP_SEND)
		return "send";
	return cs_coll_op_name((cs_coll_op)op->coll);
}

/* Write op `op` of stream `s`; `prev` is the node of the op before it on
 * the stream (UINT64_MAX for none). Returns its node id. */
static uint64_t write_op(writer *w, const cs_scenario *sc, const cs_mesh *m, int64_t rank, int s,
			 const cs_op *op, const cs_dep *deps, uint64_t *const *ids, const mailbox *mb,
			 uint64_t prev)
{
	wnode x;
	char pg[48];
	double size = op->bytes; /* comm_size */
	uint64_t id = node_start(w, &x, 0, node_name(op));
	if (prev != UINT64_MAX) {
		x.ctrl = prev;
		x.n.n_ctrl_deps = 1;
	}
	int32_t need[CS_COUNTERS] = { 0 }; /* per counter the highest value waited for */
	for (int i = 0; i < op->ndeps; i++) {
		const cs_dep *d = &deps[op->dep + i];
		if (d->value > need[d->counter])
			need[d->counter] = d->value;
	}
	for (int c = 0; c < CS_COUNTERS; c++)
		if (need[c] > 0)
			x.data[x.n.n_data_deps++] =
				c < CS_STREAMS ? ids[c][need[c] - 1] : mb[c - CS_STREAMS].ids[need[c] - 1];
	attr_i64(&x, "cs_stream", s);
	switch ((cs_op_kind)op->kind) {
	case CS_OP_COMPUTE:
		x.n.type = CS_CHAKRA_COMP;
		x.n.duration_micros = op->ns > 0 ? (uint64_t)((op->ns + 500) / 1000) : 0;
		attr_i64(&x, "cs_ns", op->ns);
		attr_i64(&x, "cs_phase", op->phase);
		if (op->attn_ns)
			attr_i64(&x, "cs_attn_ns", op->attn_ns);
		if (op->gemm_ns)
			attr_i64(&x, "cs_gemm_ns", op->gemm_ns);
		if (op->spare != 0)
			attr_f64(&x, "cs_spare", op->spare);
		break;
	case CS_OP_COLL: {
		int type = cs__chakra_comm_type((cs_coll_op)op->coll);
		x.n.type = CS_CHAKRA_COLL;
		attr_i64(&x, "comm_type", type);
		size = op->bytes;
		if (w->pg_base && type == CS_CHAKRA_ALL_GATHER) {
			/* ASTRA-sim's ring gathers comm_size from every rank */
			cs_group g =
				cs_mesh_group(m, (cs_group_kind)op->group, rank, sc->cluster.gpus_per_node);
			size /= (double)cs_group_size(&g);
		}
		attr_i64(&x, "comm_size", (int64_t)(size + 0.5));
		if (w->pg_base)
			snprintf(pg, sizeof pg, "%" PRId64,
				 w->pg_base[op->group] + cs_mesh_group_index(m, (cs_group_kind)op->group,
									     rank,
									     sc->cluster.gpus_per_node));
		else
			snprintf(pg, sizeof pg, "%s.%" PRId64, cs_group_kind_name((cs_group_kind)op->group),
				 cs_mesh_group_index(m, (cs_group_kind)op->group, rank,
						     sc->cluster.gpus_per_node));
		attr_str(&x, "pg_name", pg);
		attr_i64(&x, "cs_coll", op->coll);
		attr_i64(&x, "cs_comm", op->comm);
		if (op->ub) { /* a userbuffers kernel: its time and SMs */
			attr_i64(&x, "cs_ub_ns", op->ns);
			attr_i64(&x, "cs_ub_sms", op->sms);
		}
		break;
	}
	case CS_OP_SEND: {
		x.n.type = CS_CHAKRA_SEND;
		int64_t p = m->deg[CS_AXIS_PP], st = cs_mesh_coord(m, rank, CS_AXIS_PP);
		attr_i32(&x, "comm_src", (int32_t)rank);
		attr_i32(&x, "comm_dst", (int32_t)cs_mesh_pp_peer(m, rank, ((st + op->to) % p + p) % p));
		attr_i32(&x, "comm_tag", op->to > 0 ? 0 : 1);
		attr_i64(&x, "comm_size", (int64_t)(op->bytes + 0.5));
		attr_i64(&x, "cs_to", op->to);
		break;
	}
	}
	/* sizes are whole bytes in Chakra, and an all-gather's is a rank's part
	 * for ASTRA-sim: the size clustersim runs */
	if (op->kind != CS_OP_COMPUTE && op->bytes != (double)(int64_t)(size + 0.5))
		attr_f64(&x, "cs_bytes", op->bytes);
	attr_bool(&x, "is_cpu_op", 0);
	if (op->mem != 0)
		attr_f64(&x, "cs_mem", op->mem);
	if (op->micro >= 0)
		attr_i64(&x, "cs_micro", op->micro);
	if (op->layer >= 0)
		attr_i64(&x, "cs_layer", op->layer);
	attr_i64(&x, "cs_vstage", op->vstage);
	put_msg(w, &x.n.base);
	w->out->nodes++;
	return id;
}

static void write_metadata(writer *w, const cs_program *p)
{
	ChakraProtoMsg__GlobalMetadata g = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
	ChakraProtoMsg__Int64List cls = CHAKRA_PROTO_MSG__INT64_LIST__INIT,
				  ker = CHAKRA_PROTO_MSG__INT64_LIST__INIT;
	int64_t cv[CS_COMPUTE_KINDS], kv[CS_COMPUTE_KINDS];
	wnode x; /* its attribute slots */
	memcpy(cv, p->class_ns, sizeof cv);
	memcpy(kv, p->class_kernels, sizeof kv);
	cls.n_values = ker.n_values = CS_COMPUTE_KINDS;
	cls.values = cv;
	ker.values = kv;
	x.n.n_attr = 0;
	attr_str(&x, "cs_generator", "clustersim " CS_VERSION);
	attr_f64(&x, "cs_model_flops", p->model_flops);
	attr_f64(&x, "cs_spare", p->spare);
	attr_str(&x, "cs_profile", p->profile);
	attr_i64(&x, "cs_profile_derived", p->profile_derived);
	attr_t *a = attr(&x, "cs_class_ns");
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST;
	a->int64_list = &cls;
	a = attr(&x, "cs_class_kernels");
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST;
	a->int64_list = &ker;
	g.version = (char *)"0.0.4";
	g.n_attr = x.n.n_attr;
	g.attr = x.ap;
	put_msg(w, &g.base);
}

cs_status cs_chakra_write_rank(FILE *f, const char *name, const cs_scenario *sc, const cs_mesh *m,
			       const cs_program *progs, int64_t rank, const int64_t *pg_base,
			       cs_chakra_written *out, cs_diag *diag)
{
	const cs_program *p = &progs[cs_mesh_coord(m, rank, CS_AXIS_PP)];
	writer w = { .f = f, .out = out, .pg_base = pg_base };
	uint64_t *ids[CS_STREAMS] = { 0 };
	int32_t done[CS_STREAMS] = { 0 };
	mailbox mb[2];
	cs_status st = CS_ERR_NOMEM;
	snprintf(diag->msg, sizeof diag->msg, "out of memory");
	mailbox_init(&mb[0], m, progs, rank, +1);
	mailbox_init(&mb[1], m, progs, rank, -1);
	for (int s = 0; s < CS_STREAMS; s++)
		if (!(ids[s] = malloc(((size_t)p->nops[s] + 1) * sizeof(uint64_t))))
			goto out;
	for (int k = 0; k < 2; k++)
		if (!(mb[k].ids = calloc((size_t)mb[k].n + 1, sizeof(uint64_t))))
			goto out;
	write_metadata(&w, p);
	for (int moved = 1; moved;) {
		moved = 0;
		for (int s = 0; s < CS_STREAMS; s++)
			while (done[s] < p->nops[s]) {
				const cs_op *op = &p->ops[s][done[s]];
				const cs_dep *d = &p->deps[op->dep];
				int ready = 1;
				for (int i = 0; i < op->ndeps && ready; i++)
					if (d[i].counter < CS_STREAMS)
						ready = done[d[i].counter] >= d[i].value;
					else if (d[i].value > mb[d[i].counter - CS_STREAMS].n)
						ready = 0; /* a message that never comes: an error below */
				if (!ready)
					break;
				for (int i = 0; i < op->ndeps; i++)
					if (d[i].counter >= CS_STREAMS)
						recv_upto(&w, &mb[d[i].counter - CS_STREAMS], rank,
							  d[i].value);
				ids[s][done[s]] = write_op(&w, sc, m, rank, s, op, p->deps, ids, mb,
							   done[s] ? ids[s][done[s] - 1] : UINT64_MAX);
				done[s]++;
				moved = 1;
			}
	}
	recv_upto(&w, &mb[0], rank, mb[0].n);
	recv_upto(&w, &mb[1], rank, mb[1].n);
	st = CS_ERR_INPUT;
	for (int s = 0; s < CS_STREAMS; s++)
		if (done[s] < p->nops[s]) {
			snprintf(diag->msg, sizeof diag->msg,
				 "%s: rank %" PRId64 "'s program waits in a cycle at op %d of stream '%s'",
				 name, rank, done[s], cs_stream_name((cs_stream)s));
			goto out;
		}
	if (w.failed) {
		snprintf(diag->msg, sizeof diag->msg, w.failed == 2 ? "out of memory" : "%s: cannot write",
			 name);
		st = w.failed == 2 ? CS_ERR_NOMEM : CS_ERR_INPUT;
		goto out;
	}
	st = CS_OK;
	diag->msg[0] = 0;
out:
	for (int s = 0; s < CS_STREAMS; s++)
		free(ids[s]);
	free(mb[0].ids);
	free(mb[1].ids);
	free(w.buf);
	return st;
}
