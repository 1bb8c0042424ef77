/*
 * schedule_zb.c - zero-bubble pipeline orders (Qi et al., "Zero Bubble
 * Pipeline Parallelism", ICLR 2024) from a greedy list scheduler.
 *
 * The backward of each (micro-batch, chunk) is split into B, the input
 * gradient that the previous virtual stage waits for, and W, the weight
 * gradient that nobody waits for and can fill idle time. The paper's
 * schedules are hand-crafted (ZB-H1) or found by a heuristic search over a
 * time model (ZB-V, sail-sg/zero-bubble-pipeline-parallelism, zbv.py). Here
 * both come from a list scheduler run on the time model t_f = t_b = t_w
 * (one time unit per op, the setting the paper's figures use).
 *
 * ZB-H1 keeps 1F1B's order of forwards and input-gradient backwards and
 * defers every W to the first moment the next F or B cannot start (its
 * input has not arrived), with at most p micro-batches in flight. That is
 * the paper's construction: its bubble is (p-1) units, a third of 1F1B's
 * 3(p-1), for m >= p.
 *
 * ZB-V: whenever a stage is free, it starts, in this order of preference,
 *   1. a ready B (lowest micro-batch first, then the deeper virtual stage);
 *   2. a ready F that the memory limit admits (the deeper chunk first);
 *   3. the oldest pending W;
 *   and otherwise waits for the next op to end anywhere.
 *
 * Memory is counted in chunk activations, live from the start of F to the
 * end of W: W needs the layer inputs saved by F (the paper's memory model
 * frees part of an activation at B and the rest at W; counting it whole
 * until W is the conservative reading). The limit is the peak of 1F1B's
 * first stage, p micro-batches: p for ZB-H1, 2p chunk activations (each a
 * half) for ZB-V. For ZB-V an F of chunk 0 also reserves the slot its
 * chunk-1 F will need, so a stage never fills its memory with chunk-0
 * activations that can only drain through chunk 1 (which would deadlock).
 *
 * What differs from the paper: the ZB-V order is greedy rather than the
 * paper's searched one, so its bubble at t_f = t_b = t_w is a few time units
 * over the unavoidable p-1 ramp (see the tests).
 */
#include "program/schedule_zb.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct zb {
	cs_schedule sched;
	int64_t p, m, v, nv;                     /* nv = p*v virtual stages */
	int64_t limit;                           /* chunk activations per stage */
	int64_t *fdone;                          /* [nv*m] end time of F(j, k), -1 before */
	int64_t *bdone;                          /* [nv*m] end time of B(j, k), -1 before */
	int64_t *fnext;                          /* [p*v] next micro-batch to forward per (stage, chunk) */
	int64_t *bnext;                          /* [p*v] next micro-batch to backward */
	int64_t *wq;                             /* [p*v*m] per stage FIFO of chunk*m + micro */
	int64_t *whead, *wtail, *live, *free_at; /* [p] */
} zb;

static int done_by(const int64_t *done, int64_t at) { return *done >= 0 && *done <= at; }

static int64_t vstage(const zb *z, int64_t s, int64_t c)
{
	return cs_sched_virtual_stage(z->sched, z->p, z->v, s, c);
}

/* The oldest pending W of stage s, if any. */
static int zb_pending_w(const zb *z, int64_t s, cs_sched_op *op)
{
	if (z->whead[s] >= z->wtail[s])
		return 0;
	int64_t e = z->wq[s * z->v * z->m + z->whead[s]];
	*op = (cs_sched_op){ CS_SCHED_W, (uint16_t)(e / z->m), (int32_t)(e % z->m) };
	return 1;
}

/* ZB-H1: 1F1B's order of F and B (p-s-1 warm-up forwards, then one of
 * each), with every W deferred to the first moment the next F or B is not
 * ready, and at most p micro-batches in flight (1F1B's peak, first stage). */
static int zb_pick_h1(const zb *z, int64_t s, int64_t t, cs_sched_op *op)
{
	int64_t nf = z->fnext[s], nb = z->bnext[s];
	int64_t warm = z->p - s - 1 < z->m ? z->p - s - 1 : z->m;
	if (nf < z->m && nf - nb <= warm) {
		if (z->live[s] < z->limit && (s == 0 || done_by(&z->fdone[(s - 1) * z->m + nf], t))) {
			*op = (cs_sched_op){ CS_SCHED_F, 0, (int32_t)nf };
			return 1;
		}
	} else if (nb < z->m && done_by(&z->fdone[s * z->m + nb], t) &&
		   (s + 1 == z->p || done_by(&z->bdone[(s + 1) * z->m + nb], t))) {
		*op = (cs_sched_op){ CS_SCHED_B, 0, (int32_t)nb };
		return 1;
	}
	return zb_pending_w(z, s, op);
}

/* The op stage s starts at time t, or 0 when it must wait. */
static int zb_pick(const zb *z, int64_t s, int64_t t, cs_sched_op *op)
{
	if (z->sched == CS_SCHED_ZB_H1)
		return zb_pick_h1(z, s, t, op);
	int64_t best_j = -1, best_k = -1, best_c = -1;

	for (int64_t c = 0; c < z->v; c++) {
		int64_t j = z->bnext[s * z->v + c], k = vstage(z, s, c);
		if (j >= z->m || !done_by(&z->fdone[k * z->m + j], t))
			continue;
		if (k + 1 < z->nv && !done_by(&z->bdone[(k + 1) * z->m + j], t))
			continue;
		if (best_j < 0 || j < best_j || (j == best_j && k > best_k)) {
			best_j = j;
			best_k = k;
			best_c = c;
		}
	}
	if (best_j >= 0) {
		*op = (cs_sched_op){ CS_SCHED_B, (uint16_t)best_c, (int32_t)best_j };
		return 1;
	}
	int64_t reserve = z->v == 2 ? z->fnext[s * 2] - z->fnext[s * 2 + 1] : 0;
	for (int64_t c = 0; c < z->v; c++) {
		int64_t j = z->fnext[s * z->v + c], k = vstage(z, s, c);
		int64_t need = (z->v == 2 && c == 0) ? 2 : (z->v == 2 ? 0 : 1);
		if (j >= z->m || z->live[s] + reserve + need > z->limit)
			continue;
		if (k > 0 && !done_by(&z->fdone[(k - 1) * z->m + j], t))
			continue;
		if (best_j < 0 || k > best_k) {
			best_j = j;
			best_k = k;
			best_c = c;
		}
	}
	if (best_j >= 0) {
		*op = (cs_sched_op){ CS_SCHED_F, (uint16_t)best_c, (int32_t)best_j };
		return 1;
	}
	return zb_pending_w(z, s, op);
}

/* Start op on stage s at time t; ops take one time unit. */
static void zb_start(zb *z, int64_t s, int64_t t, cs_sched_op op)
{
	int64_t k = vstage(z, s, op.chunk), j = op.micro;

	z->free_at[s] = t + 1;
	switch (op.kind) {
	case CS_SCHED_F:
		z->fdone[k * z->m + j] = t + 1;
		z->fnext[s * z->v + op.chunk]++;
		z->live[s]++;
		break;
	case CS_SCHED_B:
		z->bdone[k * z->m + j] = t + 1;
		z->bnext[s * z->v + op.chunk]++;
		z->wq[s * z->v * z->m + z->wtail[s]++] = op.chunk * z->m + j;
		break;
	default:
		z->whead[s]++;
		z->live[s]--; /* the stage is busy until t + 1 anyway */
		break;
	}
}

int64_t cs__sched_zb(cs_schedule sched, int64_t p, int64_t m, int64_t v, int64_t stage, cs_sched_op *out,
		     int64_t cap, cs_diag *diag)
{
	zb z = { .sched = sched, .p = p, .m = m, .v = v, .nv = p * v, .limit = p * v };
	size_t n_all = (size_t)(2 * z.nv * m + 2 * p * v + p * v * m + 4 * p);
	int64_t *mem = malloc(n_all * sizeof(*mem));
	int64_t total = 3 * p * v * m, started = 0, n = 0, t = 0;

	if (!mem) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory building schedule '%s'",
			 cs_sched_name(sched));
		return -1;
	}
	z.fdone = mem;
	z.bdone = z.fdone + z.nv * m;
	z.fnext = z.bdone + z.nv * m;
	z.bnext = z.fnext + p * v;
	z.wq = z.bnext + p * v;
	z.whead = z.wq + p * v * m;
	z.wtail = z.whead + p;
	z.live = z.wtail + p;
	z.free_at = z.live + p;
	for (int64_t i = 0; i < 2 * z.nv * m; i++)
		mem[i] = -1;
	for (size_t i = (size_t)(2 * z.nv * m); i < n_all; i++)
		mem[i] = 0;

	while (started < total) {
		int64_t next = INT64_MAX;
		for (int64_t s = 0; s < p; s++) {
			cs_sched_op op;
			if (z.free_at[s] > t || !zb_pick(&z, s, t, &op))
				continue;
			zb_start(&z, s, t, op);
			started++;
			if (s == stage) {
				if (n < cap)
					out[n] = op;
				n++;
			}
		}
		for (int64_t s = 0; s < p; s++)
			if (z.free_at[s] > t && z.free_at[s] < next)
				next = z.free_at[s];
		if (next == INT64_MAX)
			break;
		t = next;
	}
	free(mem);
	if (started < total) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "schedule '%s' deadlocked while building %lld stages x %lld micro-batches",
			 cs_sched_name(sched), (long long)p, (long long)m);
		return -1;
	}
	return n;
}
