/*
 * test_sweep.c - sweeps: the cartesian product, up-front checks, failing
 * points, rows against single runs, thread and rank independence, stopping,
 * and the SVG chart.
 */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "report/out.h"
#include "report/report.h"
#include "report/sweep_out.h"
#include "study/goodput.h"
#include "study/study.h"

#ifndef CS_SOURCE_ROOT
#define CS_SOURCE_ROOT "."
#endif
#define SCENARIO CS_SOURCE_ROOT "/scenarios/ddp-gpt-small.yaml"
#define ROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))
#define MAXV 6
/* both found, a first */
#define BEFORE(a, b) ck_assert((a) != NULL && (b) != NULL && (a) < (b))

/* A checked sweep of SCENARIO over the given --vary specs (NULL-ended). */
static cs_sweep *make(const char *const *vary)
{
	cs_sweep *sw = NULL;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_sweep_new(SCENARIO, NULL, 0, &sw, &d), CS_OK);
	for (; *vary; vary++)
		ck_assert_msg(cs_sweep_vary(sw, *vary, &d) == CS_OK, "%s", d.msg);
	ck_assert_msg(cs_sweep_check(sw, &d) == CS_OK, "%s", d.msg);
	return sw;
}

static void run(cs_sweep *sw, int jobs, int rank, int nranks)
{
	cs_sweep_run_opts o = { .jobs = jobs, .rank = rank, .nranks = nranks };
	ck_assert_int_eq(cs_sweep_run(sw, &o), CS_OK);
}

/* The CSV as a string; the caller frees it. */
static char *csv(const cs_sweep *sw)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(cs_sweep_write_csv(sw, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* -- the cartesian product -- */

static const struct {
	const char *vary[MAXV];
	size_t points;
	size_t probe;                 /* a point number */
	const char *sets[MAXV];       /* its assignments */
} product_rows[] = {
	{ { "training.micro_batch=1,2,4" }, 3, 2, { "training.micro_batch=4" } },
	{ { "parallelism.data_parallel.bucket=1MiB, 25 MiB ,100MiB", "training.micro_batch=1,2" }, 6, 3,
	  { "parallelism.data_parallel.bucket=25 MiB", "training.micro_batch=2" } },
	{ { "parallelism.data_parallel.bucket=1MiB,25MiB,100MiB", "training.micro_batch=1,2" }, 6, 4,
	  { "parallelism.data_parallel.bucket=100MiB", "training.micro_batch=1" } },
	{ { "parallelism.tp=1,2", "training.micro_batch=1,2,4", "parallelism.data_parallel.overlap=true,false" },
	  12, 7, { "parallelism.tp=2", "training.micro_batch=1", "parallelism.data_parallel.overlap=false" } },
};

START_TEST(points_follow_nested_loops_first_key_outermost)
{
	cs_sweep *sw = make(product_rows[_i].vary);
	ck_assert_uint_eq(cs_sweep_points(sw), product_rows[_i].points);
	char buf[512];
	ck_assert_int_eq(cs_sweep_point_sets(sw, product_rows[_i].probe, buf, sizeof buf), CS_OK);
	const char *s = buf;
	for (size_t k = 0; k < cs_sweep_nkeys(sw); k++) {
		ck_assert_str_eq(s, product_rows[_i].sets[k]);
		s += strlen(s) + 1;
	}
	/* the last key changes fastest: consecutive points differ in it */
	size_t last = cs_sweep_nkeys(sw) - 1;
	for (size_t p = 0; p < cs_sweep_points(sw); p++)
		ck_assert_uint_eq(cs_sweep_point_index(sw, p, last), p % cs_sweep_nvalues(sw, last));
	cs_sweep_free(sw);
}
END_TEST

/* -- bad input, reported before anything runs -- */

static const struct {
	const char *vary[MAXV];
	int at_check;                 /* 0: cs_sweep_vary refuses it; 1: cs_sweep_check */
	const char *want;
} bad_rows[] = {
	{ { "parallelism.tp" }, 0, "expected key.path=v1,v2" },
	{ { "=1,2" }, 0, "no key before '='" },
	{ { "parallelism.tp=1,,2" }, 0, "empty value (number 2)" },
	{ { "parallelism.tp=1,2,", }, 0, "empty value (number 3)" },
	{ { "parallelism.tp=1", "parallelism.tp=2" }, 0, "key 'parallelism.tp' is varied twice" },
	{ { "parallelism.tpp=1,2" }, 1, "--vary 'parallelism.tpp=1': unknown key 'parallelism.tpp' (did you mean 'parallelism.tp'?)" },
	{ { "parallelism.tp=1,x" }, 1, "--vary 'parallelism.tp=x': " },
	{ { "cluster.scale_out.bandwidth=100Gb/s,fast" }, 1, "--vary 'cluster.scale_out.bandwidth=fast': " },
	{ { "stragglers=1" }, 1, "'stragglers' can only be given in the scenario file" },
	{ { "parallelism.tp=1,2,3,4,5,6,7,8,9,10", "parallelism.pp=1,2,3,4,5,6,7,8,9,10",
	    "parallelism.cp=1,2,3,4,5,6,7,8,9,10", "parallelism.ep=1,2,3,4,5,6,7,8,9,10",
	    "training.micro_batch=1,2,3,4,5,6,7,8,9,10,11" }, 1,
	  "more than 100000 points" },
};

START_TEST(bad_values_are_refused_before_running)
{
	cs_sweep *sw = NULL;
	cs_diag d = { { 0 } };
	cs_status st = CS_OK;
	ck_assert_int_eq(cs_sweep_new(SCENARIO, NULL, 0, &sw, &d), CS_OK);
	for (int k = 0; k < MAXV && bad_rows[_i].vary[k] && st == CS_OK; k++)
		st = cs_sweep_vary(sw, bad_rows[_i].vary[k], &d);
	ck_assert_int_eq(st == CS_OK, bad_rows[_i].at_check);
	if (st == CS_OK)
		st = cs_sweep_check(sw, &d);
	ck_assert_int_eq(st, CS_ERR_INPUT);
	ck_assert_msg(strstr(d.msg, bad_rows[_i].want), "got '%s'", d.msg);
	/* an unchecked sweep runs nothing */
	cs_sweep_run_opts o = { .jobs = 1 };
	ck_assert_int_eq(cs_sweep_run(sw, &o), CS_ERR_INPUT);
	cs_sweep_free(sw);
}
END_TEST

START_TEST(bad_set_is_refused_before_running)
{
	cs_sweep *sw = NULL;
	cs_diag d = { { 0 } };
	const char *sets[] = { "training.micro_batch=0" };
	ck_assert_int_eq(cs_sweep_new(SCENARIO, sets, 1, &sw, &d), CS_OK);
	ck_assert_int_eq(cs_sweep_vary(sw, "parallelism.tp=1,2", &d), CS_OK);
	ck_assert_int_eq(cs_sweep_check(sw, &d), CS_ERR_INPUT);
	ck_assert_msg(strstr(d.msg, "training.micro_batch=0"), "got '%s'", d.msg);
	cs_sweep_free(sw);
}
END_TEST

/* -- a failing point -- */

START_TEST(failing_point_gets_an_error_row_and_the_others_run)
{
	const char *vary[] = { "parallelism.tp=1,3,2", NULL };
	cs_sweep *sw = make(vary);
	run(sw, 2, 0, 0);
	ck_assert_int_eq(cs_sweep_point_state(sw, 0), CS_SWEEP_OK);
	ck_assert_int_eq(cs_sweep_point_state(sw, 1), CS_SWEEP_FAILED);
	ck_assert_int_eq(cs_sweep_point_state(sw, 2), CS_SWEEP_OK);
	ck_assert_ptr_null(cs_sweep_point_values(sw, 1));
	const char *e = cs_sweep_point_error(sw, 1);
	ck_assert_msg(strstr(e, "--vary 'parallelism.tp=3'") && strstr(e, "does not divide"), "%s", e);
	char *text = csv(sw);
	char *row = strstr(text, "\n3,error,");
	ck_assert_ptr_nonnull(row);
	ck_assert_ptr_nonnull(strstr(text, "\n1,ok,,"));
	ck_assert_ptr_nonnull(strstr(text, "\n2,ok,,"));
	BEFORE(strstr(text, "\n1,ok"), row);   /* point order */
	BEFORE(row, strstr(text, "\n2,ok"));
	free(text);
	cs_sweep_free(sw);
}
END_TEST

/* -- rows equal single runs -- */

static const char *const single_rows[][MAXV] = {
	{ "training.micro_batch=1,2", "parallelism.data_parallel.overlap=true,false" },
	{ "cluster.scale_out.bandwidth=100Gb/s,400Gb/s", "cluster.nodes=2" },
};

START_TEST(rows_equal_single_runs)
{
	cs_sweep *sw = make(single_rows[_i]);
	run(sw, 2, 0, 0);
	for (size_t p = 0; p < cs_sweep_points(sw); p++) {
		char sets[512];
		const char *ov[MAXV];
		ck_assert_int_eq(cs_sweep_point_sets(sw, p, sets, sizeof sets), CS_OK);
		char *want = NULL, *got = NULL;
		size_t wl = 0, gl = 0;
		FILE *w = open_memstream(&want, &wl), *g = open_memstream(&got, &gl);
		const char *s = sets;
		for (size_t k = 0; k < cs_sweep_nkeys(sw); k++) {
			ov[k] = s;
			fprintf(w, "%s,", strchr(s, '=') + 1);
			s += strlen(s) + 1;
		}
		cs_scenario *sc = NULL;
		cs_result *res = NULL;
		cs_diag d;
		ck_assert_int_eq(cs_scenario_load(SCENARIO, ov, cs_sweep_nkeys(sw), &sc, &d), CS_OK);
		ck_assert_int_eq(cs_simulate(sc, NULL, &res, &d), CS_OK);
		const char *names[64];
		double vals[64];
		int n = cs_study_columns(cs_result_metrics(res), names, vals, 64);
		ck_assert_int_eq(n, (int)cs_sweep_ncolumns(sw));
		fputs("ok,", w);
		for (int c = 0; c < n; c++) {
			fputc(',', w);
			cs_csv_num(w, vals[c]);
		}
		fputc('\n', w);
		cs_sweep_write_row(sw, p, g);
		fclose(w);
		fclose(g);
		ck_assert_str_eq(got, want);
		free(want);
		free(got);
		cs_result_free(res);
		cs_scenario_free(sc);
	}
	cs_sweep_free(sw);
}
END_TEST

/* With --goodput, each point's goodput columns are what the goodput study
 * gives for that point's scenario, after the run's columns. */
START_TEST(goodput_columns_equal_the_goodput_study)
{
	cs_sweep *sw = NULL;
	cs_diag d = { { 0 } };
	const char *sets[] = { "reliability.preset=llama3" };
	ck_assert_int_eq(cs_sweep_new(SCENARIO, sets, 1, &sw, &d), CS_OK);
	ck_assert_int_eq(cs_sweep_vary(sw, "reliability.checkpoint.interval=2min,30min", &d), CS_OK);
	size_t before = cs_sweep_ncolumns(sw);
	ck_assert_int_eq(cs_sweep_goodput(sw, 20, 200, &d), CS_OK);
	ck_assert_msg(cs_sweep_check(sw, &d) == CS_OK, "%s", d.msg);
	int et = cs_sweep_column_find(sw, "effective_training");
	ck_assert_int_eq(et, (int)before);
	ck_assert_int_eq(cs_sweep_run(sw, &(cs_sweep_run_opts){ .jobs = 2 }), CS_OK);
	static const char *const ivs[] = { "reliability.checkpoint.interval=2min",
					   "reliability.checkpoint.interval=30min" };
	for (size_t p = 0; p < 2; p++) {
		const char *ov[] = { sets[0], ivs[p] };
		cs_scenario *sc = NULL;
		ck_assert_int_eq(cs_scenario_load(SCENARIO, ov, 2, &sc, &d), CS_OK);
		cs_goodput_report g;
		cs_goodput_opts o = { .days = 20, .runs = 200, .jobs = 1 };
		ck_assert_int_eq(cs_study_goodput(sc, &o, &g, &d), CS_OK);
		const char *names[16];
		double vals[16];
		int n = cs_goodput_columns(&g, names, vals, 16);
		ck_assert_int_eq((size_t)et + (size_t)n, cs_sweep_ncolumns(sw));
		const double *row = cs_sweep_point_values(sw, p);
		ck_assert_ptr_nonnull(row);
		for (int c = 0; c < n; c++)
			ck_assert_msg(row[et + c] == vals[c], "%s: %g against %g", names[c], row[et + c],
				      vals[c]);
		cs_scenario_free(sc);
	}
	/* 30 minutes between checkpoints loses more to rework than 2 */
	ck_assert_double_gt(cs_sweep_point_values(sw, 1)[cs_sweep_column_find(sw, "lost_rework")],
			    cs_sweep_point_values(sw, 0)[cs_sweep_column_find(sw, "lost_rework")]);
	cs_sweep_free(sw);
}
END_TEST

/* -- independence from threads and ranks -- */

static const char *const jobs_vary[] = {
	"training.micro_batch=1,2,4", "parallelism.tp=1,3,2", "parallelism.data_parallel.overlap=true,false", NULL,
};

START_TEST(csv_is_the_same_for_any_number_of_jobs)
{
	static const int jobs[] = { 2, 3, 8 };
	cs_sweep *one = make(jobs_vary), *many = make(jobs_vary);
	run(one, 1, 0, 0);
	run(many, jobs[_i], 0, 0);
	char *a = csv(one), *b = csv(many);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, ",error,"));
	free(a);
	free(b);
	cs_sweep_free(one);
	cs_sweep_free(many);
}
END_TEST

START_TEST(ranks_gathered_give_the_single_process_csv)
{
	int nranks = 2 + _i;  /* 2, 3, 4 */
	cs_sweep *one = make(jobs_vary), *root = make(jobs_vary);
	cs_diag d;
	run(one, 2, 0, 0);
	run(root, 1, 0, nranks);
	for (int r = 1; r < nranks; r++) {
		cs_sweep *other = make(jobs_vary);
		run(other, 2, r, nranks);
		for (size_t p = 0; p < cs_sweep_points(other); p++)
			ck_assert_int_eq(cs_sweep_point_state(other, p) != CS_SWEEP_PENDING,
			                 (int)(p % (size_t)nranks) == r);
		char *buf;
		size_t len;
		ck_assert_int_eq(cs_sweep_pack(other, &buf, &len), CS_OK);
		ck_assert_msg(cs_sweep_unpack(root, buf, len, &d) == CS_OK, "%s", d.msg);
		free(buf);
		cs_sweep_free(other);
	}
	char *a = csv(one), *b = csv(root);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	cs_sweep_free(one);
	cs_sweep_free(root);
}
END_TEST

static const char *const bad_packs[] = {
	"x 1 0x1p+0\n", "0 3\n", "0 2 5:abc\n", "99 2 1:a\n", "0 1 0x1p+0\n", "0 2 1:a",
};

START_TEST(malformed_packs_are_refused)
{
	const char *vary[] = { "training.micro_batch=1,2", NULL };
	cs_sweep *sw = make(vary);
	cs_diag d;
	ck_assert_int_eq(cs_sweep_unpack(sw, bad_packs[_i], strlen(bad_packs[_i]), &d), CS_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(d.msg, "malformed sweep results"));
	cs_sweep_free(sw);
}
END_TEST

/* -- stopping -- */

START_TEST(stop_flag_starts_no_point_and_csv_keeps_finished_rows)
{
	const char *vary[] = { "training.micro_batch=1,2,4,8", NULL };
	cs_sweep *sw = make(vary);
	volatile sig_atomic_t stop = 0;
	cs_sweep_run_opts o = { .jobs = 2, .rank = 0, .nranks = 2, .stop = &stop };
	ck_assert_int_eq(cs_sweep_run(sw, &o), CS_OK);  /* points 0 and 2 */
	stop = SIGINT;
	o.rank = 1;
	ck_assert_int_eq(cs_sweep_run(sw, &o), CS_ERR_SIM);
	ck_assert_int_eq(cs_sweep_point_state(sw, 1), CS_SWEEP_PENDING);
	ck_assert_int_eq(cs_sweep_point_state(sw, 3), CS_SWEEP_PENDING);
	char *text = csv(sw);
	int lines = 0;
	for (const char *c = text; *c; c++)
		lines += *c == '\n';
	ck_assert_int_eq(lines, 3);  /* header, points 0 and 2 in order */
	BEFORE(strstr(text, "\n1,ok"), strstr(text, "\n4,ok"));
	ck_assert_ptr_null(strstr(text, "\n2,"));
	free(text);
	cs_sweep_free(sw);
}
END_TEST

/* -- the chart -- */

/* A small well-formedness check: balanced, properly nested tags, quoted
 * attributes, no stray '<' or '&' in text; one root element. */
static int well_formed(const char *s)
{
	const char *stack[64];
	size_t stlen[64];
	int depth = 0, roots = 0;
	if (!strncmp(s, "<?xml", 5)) {
		s = strstr(s, "?>");
		if (!s)
			return 0;
		s += 2;
	}
	while (*s) {
		if (*s == '&') {
			static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
			int ok = 0;
			for (int i = 0; i < 5; i++)
				if (!strncmp(s, ents[i], strlen(ents[i])))
					ok = 1;
			if (!ok)
				return 0;
			s++;
			continue;
		}
		if (*s == '>')
			return 0;
		if (*s != '<') {
			if (!depth && *s != '\n' && *s != ' ')
				return 0;
			s++;
			continue;
		}
		s++;
		int closing = *s == '/';
		s += closing;
		const char *name = s;
		while (*s && (*s == '-' || *s == ':' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			s++;
		size_t nl = (size_t)(s - name);
		if (!nl)
			return 0;
		if (closing) {
			if (*s != '>' || !depth || stlen[depth - 1] != nl || strncmp(stack[depth - 1], name, nl))
				return 0;
			depth--;
			s++;
			continue;
		}
		for (;;) {  /* attributes */
			while (*s == ' ' || *s == '\n')
				s++;
			if (*s == '>' || (*s == '/' && s[1] == '>'))
				break;
			const char *an = s;
			while (*s && *s != '=' && *s != ' ' && *s != '>' && *s != '<')
				s++;
			if (s == an || *s != '=' || s[1] != '"')
				return 0;
			s += 2;
			while (*s && *s != '"') {
				if (*s == '<')
					return 0;
				s++;
			}
			if (*s++ != '"')
				return 0;
		}
		if (!depth)
			roots++;
		if (*s == '/') {
			s += 2;
			continue;
		}
		if (depth == 64)
			return 0;
		stack[depth] = name;
		stlen[depth++] = nl;
		s++;
	}
	return depth == 0 && roots == 1;
}

static const struct {
	const char *xml;
	int ok;
} xml_rows[] = {
	{ "<?xml version=\"1.0\"?>\n<svg a=\"1\"><g><line x=\"2\"/></g><text>a &amp; b</text></svg>\n", 1 },
	{ "<svg><g></svg></g>", 0 },
	{ "<svg><text>a & b</text></svg>", 0 },
	{ "<svg><text>a < b</text></svg>", 0 },
	{ "<svg a=1></svg>", 0 },
	{ "<svg></svg><svg></svg>", 0 },
	{ "<svg><g>", 0 },
};

START_TEST(xml_check_itself_can_fail)
{
	ck_assert_int_eq(well_formed(xml_rows[_i].xml), xml_rows[_i].ok);
}
END_TEST

static int count(const char *s, const char *what)
{
	int n = 0;
	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static const struct {
	const char *vary[MAXV];
	const char *metric;
	int polylines, circles;
} plot_rows[] = {
	{ { "cluster.scale_out.bandwidth=100Gb/s,200Gb/s,400Gb/s,800Gb/s" }, "step_time_s", 1, 4 },
	{ { "parallelism.data_parallel.bucket=1MiB,25MiB,100MiB", "parallelism.tp=1,2" }, "mfu", 2, 6 },
	/* tp=3 fails: its line has no points */
	{ { "parallelism.data_parallel.bucket=1MiB,25MiB", "parallelism.tp=1,3,2" }, "step_time_s", 3, 4 },
	{ { "parallelism.pipeline.schedule=1f1b,gpipe", "training.micro_batch=1,2",
	    "parallelism.data_parallel.overlap=true,false" }, "tokens_per_s", 4, 8 },
};

START_TEST(plot_is_well_formed_with_a_line_per_series)
{
	cs_sweep *sw = make(plot_rows[_i].vary);
	run(sw, 2, 0, 0);
	char *buf = NULL;
	size_t len = 0;
	cs_diag d;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(cs_sweep_plot(sw, plot_rows[_i].metric, f, &d), 0);
	fclose(f);
	ck_assert_msg(well_formed(buf), "%s", buf);
	ck_assert_int_eq(count(buf, "<polyline"), plot_rows[_i].polylines);
	ck_assert_int_eq(count(buf, "<circle"), plot_rows[_i].circles);
	ck_assert_ptr_nonnull(strstr(buf, plot_rows[_i].metric));
	ck_assert_ptr_nonnull(strstr(buf, cs_sweep_value(sw, 0, cs_sweep_nvalues(sw, 0) - 1)));
	free(buf);
	cs_sweep_free(sw);
}
END_TEST

/* The plot of the metric over the --vary specs, as a string to free. */
static char *plot(const char *const *vary, const char *metric)
{
	cs_sweep *sw = make(vary);
	run(sw, 2, 0, 0);
	char *buf = NULL;
	size_t len = 0;
	cs_diag d;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(cs_sweep_plot(sw, metric, f, &d), 0);
	fclose(f);
	cs_sweep_free(sw);
	ck_assert_msg(well_formed(buf), "%s", buf);
	return buf;
}

/* The dots' heights, in the order drawn; returns how many (at most cap). */
static int dots(const char *svg, double *cy, int cap)
{
	int n = 0;
	for (const char *s = svg; n < cap && (s = strstr(s, "<circle cx=\"")); s++)
		ck_assert_int_eq(sscanf(strstr(s, "cy=\""), "cy=\"%lf\"", &cy[n++]), 1);
	return n;
}

/* The text of the first <text> element holding `needle`, into buf. */
static int text_with(const char *svg, const char *needle, char *buf, size_t n)
{
	const char *hit = strstr(svg, needle);
	if (!hit)
		return 0;
	const char *open = hit, *close = strstr(hit, "</text>");
	while (open > svg && *open != '>')
		open--;
	snprintf(buf, n, "%.*s", (int)(close - open - 1), open + 1);
	return 1;
}

/* A difference of 0.02 % between the buckets' step times: the y axis starts
 * near the data, says so, and the two lines are far apart. */
START_TEST(plot_of_a_narrow_range_does_not_start_at_zero)
{
	const char *vary[] = { "parallelism.data_parallel.bucket=1MiB,25MiB", NULL };
	char *svg = plot(vary, "step_time_s");
	double cy[2];
	ck_assert_int_eq(dots(svg, cy, 2), 2);
	ck_assert_msg(fabs(cy[0] - cy[1]) > 100, "the points are %g px apart", fabs(cy[0] - cy[1]));
	ck_assert_ptr_nonnull(strstr(svg, "step time (s); the axis does not start at 0</text>"));
	ck_assert_ptr_null(strstr(svg, ">0</text>"));
	free(svg);
}
END_TEST

/* Step times four times the batch makes about four times as long: the
 * axis starts at 0 and says nothing of it. */
START_TEST(plot_of_a_wide_range_starts_at_zero)
{
	const char *vary[] = { "training.global_batch=32,128", NULL };
	char *svg = plot(vary, "step_time_s");
	ck_assert_ptr_null(strstr(svg, "does not start at 0"));
	ck_assert_ptr_nonnull(strstr(svg, ">0</text>"));
	free(svg);
}
END_TEST

/* Axes in words with their units, the raw names under the title, and a
 * legend title of two long key names wrapped into lines that fit. */
START_TEST(plot_labels_name_keys_in_words_and_wrap_the_legend)
{
	const char *vary[] = { "cluster.scale_out.bandwidth=100Gb/s,400Gb/s",
			       "cluster.fabric.leaf_oversubscription=1,2",
			       "parallelism.data_parallel.overlap=true,false", NULL };
	char *svg = plot(vary, "tokens_per_s"), line[256];
	ck_assert(text_with(svg, ">bandwidth per NIC per direction (Gb/s)</", line, sizeof line));
	ck_assert(text_with(svg, ">throughput (tokens/s)", line, sizeof line));
	ck_assert(text_with(svg, ">throughput against bandwidth per NIC per direction</", line, sizeof line));
	ck_assert(text_with(svg, ">tokens_per_s against cluster.scale_out.bandwidth</", line, sizeof line));
	/* the legend's title: both keys' descriptions whole, no line too long */
	char title[512] = "";
	int lines = 0;
	for (const char *s = svg; (s = strstr(s, "font-weight=\"bold\">")); s++, lines++) {
		const char *t = strchr(s, '>') + 1;
		size_t len = (size_t)(strstr(t, "</text>") - t);
		ck_assert_msg(len <= 32, "a legend title line of %zu characters: %.*s", len, (int)len, t);
		snprintf(title + strlen(title), sizeof title - strlen(title), "%s%.*s", lines ? " " : "", (int)len,
			 t);
	}
	ck_assert_int_ge(lines, 3);
	ck_assert_str_eq(title, "down:up bandwidth ratio at the leaf tier, overlap gradient reduction with backward");
	ck_assert(text_with(svg, ">2, false</", line, sizeof line));
	free(svg);
}
END_TEST

START_TEST(plot_refuses_an_unknown_metric)
{
	const char *vary[] = { "training.micro_batch=1,2", NULL };
	cs_sweep *sw = make(vary);
	cs_diag d;
	ck_assert_int_eq(cs_sweep_plot(sw, "speed", stdout, &d), -1);
	ck_assert_ptr_nonnull(strstr(d.msg, "unknown metric 'speed'"));
	cs_sweep_free(sw);
}
END_TEST

static Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("product");
	tcase_add_loop_test(tc, points_follow_nested_loops_first_key_outermost, 0, ROWS(product_rows));
	suite_add_tcase(s, tc);
	tc = tcase_create("checks");
	tcase_add_loop_test(tc, bad_values_are_refused_before_running, 0, ROWS(bad_rows));
	tcase_add_test(tc, bad_set_is_refused_before_running);
	suite_add_tcase(s, tc);
	tc = tcase_create("failures");
	tcase_add_test(tc, failing_point_gets_an_error_row_and_the_others_run);
	suite_add_tcase(s, tc);
	tc = tcase_create("rows");
	tcase_add_loop_test(tc, rows_equal_single_runs, 0, ROWS(single_rows));
	tcase_add_test(tc, goodput_columns_equal_the_goodput_study);
	suite_add_tcase(s, tc);
	tc = tcase_create("determinism");
	tcase_add_loop_test(tc, csv_is_the_same_for_any_number_of_jobs, 0, 3);
	tcase_add_loop_test(tc, ranks_gathered_give_the_single_process_csv, 0, 3);
	tcase_add_loop_test(tc, malformed_packs_are_refused, 0, ROWS(bad_packs));
	suite_add_tcase(s, tc);
	tc = tcase_create("stop");
	tcase_add_test(tc, stop_flag_starts_no_point_and_csv_keeps_finished_rows);
	suite_add_tcase(s, tc);
	tc = tcase_create("plot");
	tcase_add_loop_test(tc, xml_check_itself_can_fail, 0, ROWS(xml_rows));
	tcase_add_loop_test(tc, plot_is_well_formed_with_a_line_per_series, 0, ROWS(plot_rows));
	tcase_add_test(tc, plot_refuses_an_unknown_metric);
	tcase_add_test(tc, plot_of_a_narrow_range_does_not_start_at_zero);
	tcase_add_test(tc, plot_of_a_wide_range_starts_at_zero);
	tcase_add_test(tc, plot_labels_name_keys_in_words_and_wrap_the_legend);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sweep_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
