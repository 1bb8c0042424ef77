/*
 * chakra_out.c - a run of another tool's Chakra traces: the step in the
 * unit that reads it (us, ms or s), compute and exposed communication by
 * kind, the collectives' bus bandwidth, the messages.
 */
#include "report/chakra_out.h"

#include "report/out.h"

/* A time in us below 1 ms, in ms below 1 s, else in s. */
static void put_time(FILE *f, double s)
{
	if (s < 1e-3)
		fprintf(f, "%.3f us", s * 1e6);
	else if (s < 1.0)
		fprintf(f, "%.3f ms", s * 1e3);
	else
		fprintf(f, "%.4f s", s);
}

static double bus_gbs(const cs_metrics *m, const cs_trace_comm *c)
{
	double t = m->baseline_step_time_s; /* the fleet's pauses are not the collectives' */
	return c->comm_only && t > 0 ? c->bus_bytes / t / 1e9 : 0.0;
}

void cs_report_trace_text(FILE *f, const char *name, const cs_metrics *m, const cs_trace_comm *c)
{
	fprintf(f, "%s: %lld GPUs, %s, %lld step%s simulated\n", name, (long long)m->gpus,
		c->comm_only ? "communication only" : "traces without a model", (long long)m->steps,
		m->steps == 1 ? "" : "s");
	fprintf(f, "  %-16s ", c->comm_only ? "collective time" : "step time");
	put_time(f, m->step_time_s);
	if (m->baseline_step_time_s != m->step_time_s) {
		fprintf(f, " (unperturbed ");
		put_time(f, m->baseline_step_time_s);
		fprintf(f, ")");
	}
	fprintf(f, "\n");
	if (!c->comm_only) {
		fprintf(f, "  %-16s ", "compute");
		put_time(f, m->compute_s);
		fprintf(f, " (%.1f %%) on rank %lld\n",
			m->step_time_s > 0 ? 100 * m->compute_s / m->step_time_s : 0.0,
			(long long)m->critical_rank);
		for (int k = 0; k < CS_COMM_KINDS; k++) {
			if (m->exposed_comm_s[k] <= 0)
				continue;
			fprintf(f, "  exposed %-8s ", cs_comm_kind_name((cs_comm_kind)k));
			put_time(f, m->exposed_comm_s[k]);
			fprintf(f, " (%.1f %%)\n", 100 * m->exposed_comm_s[k] / m->step_time_s);
		}
	}
	if (c->colls) {
		fprintf(f, "  %-16s %lld per rank (%s), %.4g MB", "collectives", (long long)c->colls, c->ops,
			c->coll_bytes / 1e6);
		if (c->comm_only)
			fprintf(f, "; bus bandwidth %.2f GB/s", bus_gbs(m, c));
		fprintf(f, "\n");
	}
	if (c->sends)
		fprintf(f, "  %-16s %lld sent per rank, %.4g MB\n", "messages", (long long)c->sends,
			c->send_bytes / 1e6);
	fprintf(f, "  %-16s %lld events in %.3f s\n", "simulated", (long long)m->events, m->sim_wall_s);
}

void cs_report_trace_json(FILE *f, const char *name, const cs_metrics *m, const cs_trace_comm *c)
{
	cs_jw w;
	cs_jw_init(&w, f, 2);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "name", name);
	cs_jw_kv_int(&w, "gpus", m->gpus);
	cs_jw_key(&w, "comm_only");
	cs_jw_bool(&w, c->comm_only != 0);
	cs_jw_kv_num(&w, "step_time_s", m->step_time_s);
	cs_jw_kv_num(&w, "baseline_step_time_s", m->baseline_step_time_s);
	cs_jw_kv_num(&w, "compute_s", m->compute_s);
	cs_jw_key(&w, "exposed_comm_s");
	cs_jw_begin_obj(&w);
	for (int k = 0; k < CS_COMM_KINDS; k++)
		cs_jw_kv_num(&w, cs_comm_kind_name((cs_comm_kind)k), m->exposed_comm_s[k]);
	cs_jw_end_obj(&w);
	cs_jw_kv_int(&w, "collectives", c->colls);
	cs_jw_kv_num(&w, "collective_bytes", c->coll_bytes);
	if (c->comm_only)
		cs_jw_kv_num(&w, "bus_bandwidth_gbs", bus_gbs(m, c));
	cs_jw_kv_int(&w, "sends", c->sends);
	cs_jw_kv_num(&w, "send_bytes", c->send_bytes);
	cs_jw_kv_int(&w, "critical_rank", m->critical_rank);
	cs_jw_kv_int(&w, "events", m->events);
	cs_jw_kv_num(&w, "sim_wall_s", m->sim_wall_s);
	cs_jw_end_obj(&w);
	cs_jw_finish(&w);
}

void cs_report_trace_csv(FILE *f, const char *name, const cs_metrics *m, const cs_trace_comm *c)
{
	fprintf(f, "name,gpus,comm_only,step_time_s,baseline_step_time_s,compute_s,collectives,"
		   "collective_bytes,bus_bandwidth_gbs,sends,send_bytes,events\n");
	cs_csv_field(f, name);
	fprintf(f, ",%lld,%d,%.9g,%.9g,%.9g,%lld,%.9g,%.6g,%lld,%.9g,%lld\n", (long long)m->gpus,
		c->comm_only != 0, m->step_time_s, m->baseline_step_time_s, m->compute_s, (long long)c->colls,
		c->coll_bytes, bus_gbs(m, c), (long long)c->sends, c->send_bytes, (long long)m->events);
}
