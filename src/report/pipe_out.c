/*
 * pipe_out.c - a pipeline schedule's run as text or JSON (pipe_out.h).
 */
#include "report/pipe_out.h"

#include "report/out.h"

void cs_pipe_write_text(FILE *f, const cs_pipe_result *r, double ticks_per_unit)
{
	fprintf(f, "schedule         %s\n", cs_sched_name(r->sched));
	fprintf(f, "stages           %lld\n", (long long)r->stages);
	fprintf(f, "micro_batches    %lld\n", (long long)r->micro_batches);
	fprintf(f, "virtual_stages   %lld\n", (long long)r->chunks);
	fprintf(f, "makespan         %.10g\n", (double)r->makespan / ticks_per_unit);
	fprintf(f, "bubble_fraction  %.6f\n", r->bubble_fraction);
	fprintf(f, "peak_in_flight  ");
	for (int64_t s = 0; s < r->stages; s++)
		fprintf(f, " %g", r->peak_in_flight[s]);
	fprintf(f, "\n");
}

int cs_pipe_write_json(FILE *f, const cs_pipe_result *r, double ticks_per_unit)
{
	cs_jw w;
	cs_jw_init(&w, f, 2);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "schedule", cs_sched_name(r->sched));
	cs_jw_kv_int(&w, "stages", r->stages);
	cs_jw_kv_int(&w, "micro_batches", r->micro_batches);
	cs_jw_kv_int(&w, "virtual_stages", r->chunks);
	cs_jw_kv_num(&w, "makespan", (double)r->makespan / ticks_per_unit);
	cs_jw_kv_num(&w, "bubble_fraction", r->bubble_fraction);
	cs_jw_key(&w, "peak_in_flight");
	cs_jw_begin_arr(&w);
	for (int64_t s = 0; s < r->stages; s++)
		cs_jw_num(&w, r->peak_in_flight[s]);
	cs_jw_end_arr(&w);
	cs_jw_end_obj(&w);
	return cs_jw_finish(&w);
}
