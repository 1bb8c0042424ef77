/*
 * wire.c - the length-delimited framing of Chakra ET files and the
 * collective types on both sides.
 */
#include "chakra/chakra_int.h"

#include <stdlib.h>

#define ARENA_BLOCK (256 * 1024)

static void *arena_alloc(void *data, size_t size)
{
	cs__chakra_arena *a = data;
	size = (size + 15) & ~(size_t)15;
	if (!a->block && !a->failed) {
		a->block = malloc(ARENA_BLOCK);
		a->cap = a->block ? ARENA_BLOCK : 0;
	}
	if (a->used + size <= a->cap) {
		void *p = a->block + a->used;
		a->used += size;
		return p;
	}
	if (a->nbig == a->bigcap) {
		size_t cap = a->bigcap ? 2 * a->bigcap : 16;
		void **nb = realloc(a->big, cap * sizeof *nb);
		if (!nb) {
			a->failed = 1;
			return NULL;
		}
		a->big = nb;
		a->bigcap = cap;
	}
	void *p = malloc(size);
	if (!p) {
		a->failed = 1;
		return NULL;
	}
	return a->big[a->nbig++] = p;
}

static void arena_free(void *data, void *p)
{
	(void)data; /* all of it goes at the reset */
	(void)p;
}

void cs__chakra_arena_init(cs__chakra_arena *a)
{
	*a = (cs__chakra_arena){ .pa = { .alloc = arena_alloc, .free = arena_free } };
	a->pa.allocator_data = a;
}

void cs__chakra_arena_reset(cs__chakra_arena *a)
{
	for (size_t i = 0; i < a->nbig; i++)
		free(a->big[i]);
	a->nbig = 0;
	a->used = 0;
	a->failed = 0;
}

void cs__chakra_arena_free(cs__chakra_arena *a)
{
	cs__chakra_arena_reset(a);
	free(a->big);
	free(a->block);
	cs__chakra_arena_init(a);
}

size_t cs__chakra_varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

size_t cs__chakra_varint_get(const uint8_t *p, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	for (size_t i = 0; i < len && i < 10; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return 0;
}

int cs__chakra_comm_type(cs_coll_op op)
{
	switch (op) {
	case CS_COLL_ALL_REDUCE: return CS_CHAKRA_ALL_REDUCE;
	case CS_COLL_REDUCE_SCATTER: return CS_CHAKRA_REDUCE_SCATTER;
	case CS_COLL_ALL_GATHER: return CS_CHAKRA_ALL_GATHER;
	case CS_COLL_ALL_TO_ALL: return CS_CHAKRA_ALL_TO_ALL;
	case CS_COLL_BROADCAST: return CS_CHAKRA_BROADCAST;
	case CS_COLL_REDUCE: return CS_CHAKRA_REDUCE;
	case CS_COLL_GATHER: return CS_CHAKRA_GATHER;
	case CS_COLL_SCATTER: return CS_CHAKRA_SCATTER;
	case CS_COLL_SEND_RECV:
	case CS_COLL_OPS: break;
	}
	return CS_CHAKRA_ALL_GATHER;
}

int cs__chakra_coll_of(int64_t type, cs_coll_op *op)
{
	static const cs_coll_op of[] = {
		[CS_CHAKRA_ALL_REDUCE] = CS_COLL_ALL_REDUCE,
		[CS_CHAKRA_REDUCE] = CS_COLL_REDUCE,
		[CS_CHAKRA_ALL_GATHER] = CS_COLL_ALL_GATHER,
		[CS_CHAKRA_GATHER] = CS_COLL_GATHER,
		[CS_CHAKRA_SCATTER] = CS_COLL_SCATTER,
		[CS_CHAKRA_BROADCAST] = CS_COLL_BROADCAST,
		[CS_CHAKRA_ALL_TO_ALL] = CS_COLL_ALL_TO_ALL,
		[CS_CHAKRA_REDUCE_SCATTER] = CS_COLL_REDUCE_SCATTER,
		[CS_CHAKRA_REDUCE_SCATTER_BLOCK] = CS_COLL_REDUCE_SCATTER,
		[CS_CHAKRA_BARRIER] = CS_COLL_ALL_REDUCE,
	};
	if (type < 0 || type >= (int64_t)(sizeof of / sizeof of[0]))
		return -1;
	*op = of[type];
	return 0;
}
