/*
 * search.h - the plan search with its simulations: study/planner.h
 * enumerates, prunes and picks the plans; each is simulated here, folded,
 * on the job pool, and the search ranks them.
 *
 *   cs_plan_search *s = NULL;
 *   if (cs_study_plans(sc, &(cs_plan_opts){ .jobs = 4 }, NULL, &s, &diag) != CS_OK)
 *           ... report diag.msg ...
 *   ... s->plans[0] is the fastest plan that fits ...
 *   cs_plan_search_free(s);
 */
#ifndef CS_STUDY_SEARCH_H
#define CS_STUDY_SEARCH_H

#include "clustersim/clustersim.h"
#include "study/planner.h"
#include "study/pool.h"

/* Search base's plans (base is not modified). pool may be NULL; its jobs
 * field is ignored (opts->jobs counts), its stop flag and progress are
 * used. *out is allocated on CS_OK and freed with cs_plan_search_free. */
cs_status cs_study_plans(const cs_scenario *base, const cs_plan_opts *opts, const cs_pool_opts *pool,
			 cs_plan_search **out, cs_diag *diag);

#endif
