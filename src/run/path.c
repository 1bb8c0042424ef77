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

void cs_path_compute(cs_path *p, cs_time d)
{
	p->compute += d;
	p->stretch += d;
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
	if (p->nlast == CS_PATH_HOPS) {
		memmove(p->last, p->last + 1, sizeof(p->last[0]) * (CS_PATH_HOPS - 1));
		p->nlast--;
	}
	uint64_t what = (uint64_t)p->rank | (uint64_t)to << 24 | (uint64_t)kind << 48 |
			(uint64_t)coll << 52 | (uint64_t)tier << 57;
	p->last[p->nlast++] = (cs_path_hop){ .what = what, .at = end };
	p->hops++;
	p->rank = to;
}

void cs_path_finish(cs_path *p)
{
	close_stretch(p);
}
