/*
 * schedule.c - op orders of GPipe, 1F1B and interleaved 1F1B, the virtual
 * stage maps, and schedules by name. The zero-bubble orders are built by the
 * list scheduler in schedule_zb.c.
 */
#include "program/schedule.h"
#include "program/schedule_zb.h"

#include <stdio.h>
#include <string.h>

int cs_sched_parse(const char *name, cs_schedule *out)
{
	for (int i = CS_SCHED_GPIPE; i <= CS_SCHED_ZB_V; i++) {
		if (cs_name_eq(name, cs_sched_name((cs_schedule)i))) {
			*out = (cs_schedule)i;
			return 0;
		}
	}
	return -1;
}

int cs_sched_split_backward(cs_schedule sched) { return sched == CS_SCHED_ZB_H1 || sched == CS_SCHED_ZB_V; }

int64_t cs_sched_chunks(cs_schedule sched, int64_t virtual_stages)
{
	if (sched == CS_SCHED_ZB_V)
		return 2;
	if (sched == CS_SCHED_INTERLEAVED)
		return virtual_stages > 1 ? virtual_stages : 1;
	return 1;
}

int64_t cs_sched_virtual_stage(cs_schedule sched, int64_t p, int64_t v, int64_t stage, int64_t chunk)
{
	(void)v;
	switch (sched) {
	case CS_SCHED_INTERLEAVED: return chunk * p + stage;
	case CS_SCHED_ZB_V: return chunk == 0 ? stage : 2 * p - 1 - stage;
	default: return stage;
	}
}

void cs_sched_stage_of(cs_schedule sched, int64_t p, int64_t v, int64_t vstage, int64_t *stage,
		       int64_t *chunk)
{
	(void)v;
	switch (sched) {
	case CS_SCHED_INTERLEAVED:
		*stage = vstage % p;
		*chunk = vstage / p;
		return;
	case CS_SCHED_ZB_V:
		if (vstage < p) {
			*stage = vstage;
			*chunk = 0;
		} else {
			*stage = 2 * p - 1 - vstage;
			*chunk = 1;
		}
		return;
	default:
		*stage = vstage;
		*chunk = 0;
		return;
	}
}

/* Appends ops while counting: `n` always counts, writes stop at cap. */
typedef struct op_sink {
	cs_sched_op *out;
	int64_t cap;
	int64_t n;
} op_sink;

static void emit(op_sink *k, cs_sched_kind kind, int64_t chunk, int64_t micro)
{
	if (k->n < k->cap) {
		k->out[k->n].kind = (uint8_t)kind;
		k->out[k->n].chunk = (uint16_t)chunk;
		k->out[k->n].micro = (int32_t)micro;
	}
	k->n++;
}

static void gen_gpipe(op_sink *k, int64_t m)
{
	for (int64_t j = 0; j < m; j++)
		emit(k, CS_SCHED_F, 0, j);
	for (int64_t j = 0; j < m; j++)
		emit(k, CS_SCHED_BW, 0, j);
}

static void gen_1f1b(op_sink *k, int64_t p, int64_t m, int64_t stage)
{
	int64_t warm = p - 1 - stage < m ? p - 1 - stage : m;

	for (int64_t j = 0; j < warm; j++)
		emit(k, CS_SCHED_F, 0, j);
	for (int64_t j = 0; j < m - warm; j++) {
		emit(k, CS_SCHED_F, 0, warm + j);
		emit(k, CS_SCHED_BW, 0, j);
	}
	for (int64_t j = m - warm; j < m; j++)
		emit(k, CS_SCHED_BW, 0, j);
}

/*
 * Interleaved 1F1B. The i-th forward "virtual micro-batch" of a stage is
 * micro-batch group i / (p*v) (groups of p micro-batches), chunk
 * (i mod p*v) / p, micro-batch (i / (p*v)) * p + i mod p: Megatron's schedule
 * table for a micro-batch group size of p. The i-th backward uses the same
 * micro-batch with the chunk mirrored (v-1-chunk).
 */
static void interleaved_at(int64_t i, int64_t p, int64_t v, int forward, int64_t *chunk, int64_t *micro)
{
	int64_t in_group = i % (p * v);

	*chunk = in_group / p;
	if (!forward)
		*chunk = v - 1 - *chunk;
	*micro = (i / (p * v)) * p + in_group % p;
}

static void gen_interleaved(op_sink *k, int64_t p, int64_t m, int64_t v, int64_t stage)
{
	int64_t total = m * v;
	int64_t warm = (p - stage - 1) * 2 + (v - 1) * p;
	int64_t c, j;

	if (warm > total)
		warm = total;
	for (int64_t i = 0; i < warm; i++) {
		interleaved_at(i, p, v, 1, &c, &j);
		emit(k, CS_SCHED_F, c, j);
	}
	for (int64_t i = 0; i < total - warm; i++) {
		interleaved_at(i + warm, p, v, 1, &c, &j);
		emit(k, CS_SCHED_F, c, j);
		interleaved_at(i, p, v, 0, &c, &j);
		emit(k, CS_SCHED_BW, c, j);
	}
	for (int64_t i = total - warm; i < total; i++) {
		interleaved_at(i, p, v, 0, &c, &j);
		emit(k, CS_SCHED_BW, c, j);
	}
}

static int check_args(cs_schedule sched, int64_t p, int64_t m, int64_t v, int64_t stage, cs_diag *diag)
{
	const char *name = cs_sched_name(sched);

	if (sched < CS_SCHED_GPIPE || sched > CS_SCHED_ZB_V) {
		snprintf(diag->msg, sizeof(diag->msg), "unknown pipeline schedule %d", (int)sched);
		return -1;
	}
	if (p < 1 || p > 65536) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "'stages' must be between 1 and 65536 for schedule '%s', got %lld", name,
			 (long long)p);
		return -1;
	}
	if (m < 1 || m > INT32_MAX) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "'micro-batches' must be between 1 and %d for schedule '%s', got %lld", INT32_MAX,
			 name, (long long)m);
		return -1;
	}
	if (stage < 0 || stage >= p) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "stage %lld is out of range for %lld stages of schedule '%s'", (long long)stage,
			 (long long)p, name);
		return -1;
	}
	switch (sched) {
	case CS_SCHED_INTERLEAVED:
		if (v < 2 || v > 1024) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "schedule 'interleaved' needs 'virtual-stages' between 2 and 1024, got %lld",
				 (long long)v);
			return -1;
		}
		if (m % p != 0) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "schedule 'interleaved' needs 'micro-batches' (%lld) to be a multiple of "
				 "'stages' (%lld), as Megatron-LM requires",
				 (long long)m, (long long)p);
			return -1;
		}
		break;
	case CS_SCHED_ZB_V:
		if (v != 2) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "schedule 'zb-v' has exactly 2 'virtual-stages' per stage, got %lld",
				 (long long)v);
			return -1;
		}
		break;
	default:
		if (v != 1) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "schedule '%s' has 1 'virtual-stages' per stage, got %lld", name,
				 (long long)v);
			return -1;
		}
		break;
	}
	if ((double)p * (double)m * (double)v * 3.0 > 1e9) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "schedule '%s' with %lld stages, %lld micro-batches and %lld chunks is too large",
			 name, (long long)p, (long long)m, (long long)v);
		return -1;
	}
	return 0;
}

int64_t cs_sched_stage_ops(cs_schedule sched, int64_t p, int64_t m, int64_t v, int64_t stage,
			   cs_sched_op *out, int64_t cap, cs_diag *diag)
{
	op_sink k = { out, out ? cap : 0, 0 };

	if (check_args(sched, p, m, v, stage, diag) != 0)
		return -1;
	switch (sched) {
	case CS_SCHED_GPIPE: gen_gpipe(&k, m); return k.n;
	case CS_SCHED_1F1B: gen_1f1b(&k, p, m, stage); return k.n;
	case CS_SCHED_INTERLEAVED: gen_interleaved(&k, p, m, v, stage); return k.n;
	case CS_SCHED_ZB_H1:
	case CS_SCHED_ZB_V:
		if (cap == 0 || !out)
			return 3 * m * v;
		return cs__sched_zb(sched, p, m, v, stage, out, cap, diag);
	}
	return -1;
}
