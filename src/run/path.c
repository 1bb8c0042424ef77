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
	p->last[p->nlast++] = (cs_path_hop){ .from = (int32_t)p->rank, .to = (int32_t)to, .kind = (uint8_t)kind,
					     .coll = (uint8_t)coll, .tier = (uint8_t)tier, .at = end };
	p->hops++;
	p->rank = to;
}

void cs_path_finish(cs_path *p)
{
	close_stretch(p);
}
