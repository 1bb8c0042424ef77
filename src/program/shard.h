/*
 * shard.h - how tensor parallelism cuts a block's weights (Megatron-LM).
 *
 * Column-parallel layers (QKV, MLP up and gate) split their output columns,
 * row-parallel layers (attention output, MLP down) their input rows; the
 * attention is split by heads, so rank i owns query heads and the key/value
 * heads they attend with. The program builder sizes each rank's weights and
 * gradients with these functions; tests/test_shard.c multiplies real
 * matrices cut by them and checks that the shards' partial results sum to
 * the unsharded block.
 */
#ifndef CS_PROGRAM_SHARD_H
#define CS_PROGRAM_SHARD_H

#include <stdint.h>

/* Rank i's slice [*off, *off + *len) of a dimension of size n cut t ways:
 * equal parts, the first n % t ranks one larger. */
static inline void cs_shard_range(int64_t n, int64_t t, int64_t i, int64_t *off, int64_t *len)
{
	int64_t base = n / t, extra = n % t;
	*len = base + (i < extra ? 1 : 0);
	*off = i * base + (i < extra ? i : extra);
}

/* Heads of rank i: query heads [*q0, *q0 + *nq) and key/value heads
 * [*kv0, *kv0 + *nkv). With grouped-query attention (kv_heads < heads) the
 * key/value heads split like the query heads when t divides kv_heads, and are
 * replicated (each rank keeps the group its query heads use) otherwise. */
static inline void cs_shard_heads(int64_t heads, int64_t kv_heads, int64_t t, int64_t i, int64_t *q0,
				  int64_t *nq, int64_t *kv0, int64_t *nkv)
{
	cs_shard_range(heads, t, i, q0, nq);
	if (kv_heads % t == 0) {
		cs_shard_range(kv_heads, t, i, kv0, nkv);
	} else {
		int64_t group = heads / kv_heads;
		*kv0 = *q0 / group;
		*nkv = (*q0 + *nq - 1) / group - *kv0 + 1;
	}
}

#endif
