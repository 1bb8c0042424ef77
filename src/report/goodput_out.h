/*
 * goodput_out.h - a goodput report as text or JSON, and one sampled run's
 * timeline as SVG (a row of coloured stretches: training, degraded,
 * checkpoint, restart, waiting; a tick per interruption).
 *
 * Ownership: cs_goodput_timeline_new allocates; cs_goodput_timeline_free
 * releases (NULL is fine).
 */
#ifndef CS_REPORT_GOODPUT_OUT_H
#define CS_REPORT_GOODPUT_OUT_H

#include <stdio.h>

#include "study/goodput.h"

void cs_goodput_write_text(FILE *f, const char *name, const cs_goodput_report *g);
void cs_goodput_write_json(FILE *f, const char *name, const cs_goodput_report *g);

typedef struct cs_goodput_timeline cs_goodput_timeline;

cs_goodput_timeline *cs_goodput_timeline_new(void);
void cs_goodput_timeline_free(cs_goodput_timeline *tl);
/* A cs_rel_span_fn; ctx is the timeline. Stretches of one state that
 * touch are merged. */
void cs_goodput_timeline_span(void *ctx, cs_rel_state s, int64_t t0, int64_t t1, int cls);
/* The whole SVG document of the sampled run `run` whose spans tl holds:
 * 0, or -1 (nothing written) when the timeline lost spans for want of
 * memory. */
int cs_goodput_write_svg(FILE *f, const char *name, const cs_goodput_report *g, const cs_goodput_timeline *tl,
			 const cs_rel_run *run);

#endif
