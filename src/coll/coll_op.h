/*
 * coll_op.h - the collective operations the simulator knows.
 */
#ifndef CS_COLL_OP_H
#define CS_COLL_OP_H

typedef enum cs_coll_op {
	CS_COLL_ALL_REDUCE,
	CS_COLL_REDUCE_SCATTER,
	CS_COLL_ALL_GATHER,
	CS_COLL_ALL_TO_ALL,
	CS_COLL_BROADCAST,
	CS_COLL_SEND_RECV,
	/* nccl-tests' other collectives, for `coll`; programs do not use them */
	CS_COLL_REDUCE,
	CS_COLL_GATHER,
	CS_COLL_SCATTER,
	CS_COLL_OPS
} cs_coll_op;

#endif
