/*
 * program.c - growable per-stream op lists with a shared dependency array.
 */
#include "program/program.h"

#include <stdlib.h>
#include <string.h>

#include "core/sim.h"

void cs_program_init(cs_program *p) { memset(p, 0, sizeof(*p)); }

void cs_program_free(cs_program *p)
{
	for (int s = 0; s < CS_STREAMS; s++)
		free(p->ops[s]);
	free(p->deps);
	memset(p, 0, sizeof(*p));
}

static int grow(void **buf, int32_t *cap, int32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	int64_t ncap = *cap ? (int64_t)*cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > INT32_MAX)
		return -1;
	void *nb = realloc(*buf, (size_t)ncap * elem);
	if (!nb)
		return -1;
	*buf = nb;
	*cap = (int32_t)ncap;
	return 0;
}

int32_t cs_program_add(cs_program *p, cs_stream stream, const cs_op *op, const cs_dep *deps, int ndeps)
{
	if (grow((void **)&p->ops[stream], &p->cap[stream], p->nops[stream] + 1, sizeof(cs_op)) ||
	    grow((void **)&p->deps, &p->depcap, p->ndeps + ndeps, sizeof(cs_dep)))
		return -1;
	cs_op *o = &p->ops[stream][p->nops[stream]];
	*o = *op;
	o->dep = p->ndeps;
	o->ndeps = 0;
	for (int i = 0; i < ndeps; i++) {
		/* a dependency on the op's own stream is implied by stream order */
		if (deps[i].counter == (uint8_t)stream || deps[i].value <= 0)
			continue;
		p->deps[p->ndeps++] = deps[i];
		o->ndeps++;
	}
	if (op->kind == CS_OP_COMPUTE)
		p->compute_ns = cs_time_add(p->compute_ns, op->ns);
	return ++p->nops[stream];
}

const char *cs_stream_name(cs_stream s)
{
	static const char *const names[CS_STREAMS] = { "compute", "tp", "cp", "ep", "pp", "dp", "dp-gather" };
	return (unsigned)s < CS_STREAMS ? names[s] : "?";
}
