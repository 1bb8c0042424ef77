/*
 * sweep_csv.c - a sweep's points as CSV: the varied keys, the status and
 * error, then the metric columns, one row per point.
 */
#include <stdio.h>

#include "report/out.h"
#include "report/sweep_out.h"

void cs_sweep_write_row(const cs_sweep *sw, size_t p, FILE *f)
{
	cs_sweep_state st = cs_sweep_point_state(sw, p);
	for (size_t k = 0; k < cs_sweep_nkeys(sw); k++) {
		cs_csv_field(f, cs_sweep_value(sw, k, cs_sweep_point_index(sw, p, k)));
		fputc(',', f);
	}
	fputs(st == CS_SWEEP_OK ? "ok," : st == CS_SWEEP_FAILED ? "error," : "pending,", f);
	cs_csv_field(f, st == CS_SWEEP_FAILED ? cs_sweep_point_error(sw, p) : NULL);
	const double *v = cs_sweep_point_values(sw, p);
	for (size_t c = 0; c < cs_sweep_ncolumns(sw); c++) {
		fputc(',', f);
		if (v)
			cs_csv_num(f, v[c]);
	}
	fputc('\n', f);
}

int cs_sweep_write_csv(const cs_sweep *sw, FILE *f)
{
	for (size_t k = 0; k < cs_sweep_nkeys(sw); k++) {
		cs_csv_field(f, cs_sweep_key(sw, k));
		fputc(',', f);
	}
	fputs("status,error", f);
	for (size_t c = 0; c < cs_sweep_ncolumns(sw); c++) {
		fputc(',', f);
		cs_csv_field(f, cs_sweep_column(sw, c));
	}
	fputc('\n', f);
	for (size_t p = 0; p < cs_sweep_points(sw); p++)
		if (cs_sweep_point_state(sw, p) != CS_SWEEP_PENDING)
			cs_sweep_write_row(sw, p, f);
	return ferror(f) ? -1 : 0;
}
