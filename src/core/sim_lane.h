/*
 * sim_lane.h - engine internals for the benchmark and the tests.
 *
 * cs_sim routes events scheduled at exactly the current time through a FIFO
 * lane instead of the queue (see sim.c). cs__sim_set_lane turns that off, so
 * tools/bench_eq.c can measure what the lane buys and tests/test_core.c can
 * check that both paths give the same order. Call it only while no
 * zero-delay event is pending (e.g. right after cs_sim_new).
 */
#ifndef CS_CORE_SIM_LANE_H
#define CS_CORE_SIM_LANE_H

#include <stdbool.h>

#include "core/sim.h"

void cs__sim_set_lane(cs_sim *sim, bool on);

#endif
