/*
 * model_ops.h - private helpers shared by the op-list builders of src/model.
 */
#ifndef CS_MODEL_MODEL_OPS_H
#define CS_MODEL_MODEL_OPS_H

#include "model/model.h"

/* An op list being written: ops past `cap` are counted, not stored. */
typedef struct cs__oplist {
	cs_layer_op *out;
	int cap;
	int n;
} cs__oplist;

/* Per-rank sizes of one micro-batch. */
typedef struct cs__dims {
	double tokens;      /* s/cp * b: tokens this rank computes */
	double norm_tokens; /* tokens under the norms (divided by tp with SP) */
	double h, kv, ffn;  /* hidden, kv_dim, ffn (full) */
	double tp;
	double ab;          /* activation bytes per element */
	double wb;          /* weight bytes per element */
} cs__dims;

void cs__dims_init(cs__dims *d, const cs_model_spec *m, const cs_layer_ctx *c);
void cs__push(cs__oplist *l, const cs_layer_op *op);
/* A GEMM Y(m x n) = X(m x k) W(k x n), `batch` of them; weights of `wbytes`. */
void cs__gemm(cs__oplist *l, const char *name, double m, double n, double k, double batch,
              double ab, double wb);
void cs__membound(cs__oplist *l, const char *name, double bytes);
void cs__comm(cs__oplist *l, const char *name, int kind, int coll, double bytes);

#endif
