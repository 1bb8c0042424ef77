/*
 * path.c - critical-path summaries.
 */
#include "run/path.h"

#include <string.h>

void cs_path_start(cs_path *p, int64_t rank)
{
	memset(p, 0, sizeof(*p));
	p->rank = rank;
	p->top_rank = rank;
}

static void close_stretch(cs_path *p)
{
	if (p->stretch > p->top) {
		p->top = p->stretch;
		p->top_rank = p->rank;
	}
	p->stretch = 0;
}

void cs_path_transfer(cs_path *p, cs_time d, int kind, int coll, int tier, int64_t to, cs_time end)
{
	p->comm[kind] += d;
	if (to == p->rank)
		return;
	close_stretch(p);
	uint64_t what = (uint64_t)p->rank | (uint64_t)to << 24 | (uint64_t)kind << 48 | (uint64_t)coll << 52 |
			(uint64_t)tier << 57;
	cs_path_hop h = { .what = what, .at = end };
	if (p->nlast == CS_PATH_HOPS) { /* the oldest makes room */
		p->last[p->first] = h;
		p->first = (int16_t)((p->first + 1) % CS_PATH_HOPS);
	} else {
		p->last[(p->first + p->nlast++) % CS_PATH_HOPS] = h;
	}
	p->hops++;
	p->rank = to;
}

void cs_path_finish(cs_path *p)
{
	close_stretch(p);
	cs_path_hop in_order[CS_PATH_HOPS];
	for (int i = 0; i < p->nlast; i++)
		in_order[i] = p->last[(p->first + i) % CS_PATH_HOPS];
	memcpy(p->last, in_order, (size_t)p->nlast * sizeof in_order[0]);
	p->first = 0;
}
