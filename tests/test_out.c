/*
 * test_out.c - atomic output files and the JSON/CSV formatters.
 */
#include <check.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/out.h"

/* Capture what a formatter writes. */
typedef struct capture {
	FILE *f;
	char *buf;
	size_t len;
} capture;

static void cap_open(capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	ck_assert_ptr_nonnull(c->f);
}

/* Closes the stream; the caller frees the returned text. */
static char *cap_close(capture *c)
{
	ck_assert_int_eq(fclose(c->f), 0);
	return c->buf;
}

/* -- JSON strings -- */

static const struct {
	const char *in, *want;
} json_str_rows[] = {
	{ "", "\"\"" },
	{ "plain", "\"plain\"" },
	{ "say \"hi\"", "\"say \\\"hi\\\"\"" },
	{ "a\\b", "\"a\\\\b\"" },
	{ "line\nnext\ttab\rcr", "\"line\\nnext\\ttab\\rcr\"" },
	{ "\b\f", "\"\\b\\f\"" },
	{ "\x01\x1f", "\"\\u0001\\u001f\"" },
	{ "del\x7f", "\"del\x7f\"" },
	{ "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80", "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80\"" },
	{ "/path</", "\"/path</\"" },
	{ NULL, "null" },
};

START_TEST(json_strings_are_escaped)
{
	capture c;
	cap_open(&c);
	cs_json_str(c.f, json_str_rows[_i].in);
	char *got = cap_close(&c);
	ck_assert_str_eq(got, json_str_rows[_i].want);
	free(got);
}
END_TEST

/* -- numbers -- */

static const struct {
	double v;
	const char *want;  /* NULL: only the round trip is checked */
} num_rows[] = {
	{ 0.0, "0" },
	{ -0.0, "-0" },
	{ 1.0, "1" },
	{ 0.1, "0.1" },
	{ 1.25, "1.25" },
	{ 123456789.0, "123456789" },
	{ 1e21, "1e+21" },
	{ 6.02214076e23, "6.02214076e+23" },
	{ 1.0 / 3.0, "0.3333333333333333" },
	{ 0.1 + 0.2, "0.30000000000000004" },
	{ DBL_MAX, "1.7976931348623157e+308" },
	{ DBL_MIN, NULL },
	{ 5e-324, "4.94065645841247e-324" },
	{ -2.5e-7, "-2.5e-07" },
	{ 989e12, "989000000000000" },
};

START_TEST(numbers_round_trip_in_shortest_form)
{
	capture c;
	cap_open(&c);
	cs_json_num(c.f, num_rows[_i].v);
	char *got = cap_close(&c);
	if (num_rows[_i].want)
		ck_assert_str_eq(got, num_rows[_i].want);
	char *end;
	double back = strtod(got, &end);
	ck_assert(*end == '\0');
	ck_assert(back == num_rows[_i].v);
	ck_assert(signbit(back) == signbit(num_rows[_i].v));
	free(got);
}
END_TEST

START_TEST(random_doubles_round_trip)
{
	uint64_t s = 12345;
	char buf[CS_NUM_BUF];
	int bad = 0;
	for (int i = 0; i < 20000; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		double v;
		uint64_t bits = s ^ (s >> 29);
		memcpy(&v, &bits, sizeof(v));
		if (!isfinite(v))
			continue;
		int len = cs_num_fmt(buf, v);
		if (len <= 0 || len >= CS_NUM_BUF || strtod(buf, NULL) != v)
			bad++;
	}
	ck_assert_int_eq(bad, 0);
}
END_TEST

static const double non_finite[] = { NAN, -NAN, INFINITY, -INFINITY };

START_TEST(non_finite_numbers_are_null_in_json_and_empty_in_csv)
{
	capture c;
	cap_open(&c);
	cs_json_num(c.f, non_finite[_i]);
	fputc('|', c.f);
	cs_csv_num(c.f, non_finite[_i]);
	fputc('|', c.f);
	cs_csv_num(c.f, 2.5);
	char *got = cap_close(&c);
	ck_assert_str_eq(got, "null||2.5");
	free(got);
}
END_TEST

/* -- CSV -- */

static const struct {
	const char *in, *want;
} csv_rows[] = {
	{ "plain", "plain" },
	{ "", "" },
	{ NULL, "" },
	{ "a,b", "\"a,b\"" },
	{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
	{ "\"", "\"\"\"\"" },
	{ "two\nlines", "\"two\nlines\"" },
	{ "cr\r", "\"cr\r\"" },
	{ " padded", "\" padded\"" },
	{ "padded ", "\"padded \"" },
	{ "in side", "in side" },
	{ "caf\xc3\xa9", "caf\xc3\xa9" },
};

START_TEST(csv_fields_are_quoted_per_rfc4180)
{
	capture c;
	cap_open(&c);
	cs_csv_field(c.f, csv_rows[_i].in);
	char *got = cap_close(&c);
	ck_assert_str_eq(got, csv_rows[_i].want);
	free(got);
}
END_TEST

/* -- the JSON writer -- */

static void write_doc(cs_jw *w)
{
	cs_jw_begin_obj(w);
	cs_jw_kv_str(w, "name", "a\"b");
	cs_jw_kv_num(w, "t", 0.5);
	cs_jw_kv_int(w, "n", -3);
	cs_jw_kv_bool(w, "ok", true);
	cs_jw_key(w, "list");
	cs_jw_begin_arr(w);
	cs_jw_num(w, 1);
	cs_jw_null(w);
	cs_jw_begin_obj(w);
	cs_jw_end_obj(w);
	cs_jw_begin_arr(w);
	cs_jw_end_arr(w);
	cs_jw_end_arr(w);
	cs_jw_end_obj(w);
}

static const struct {
	int indent;
	const char *want;
} jw_rows[] = {
	{ 0, "{\"name\":\"a\\\"b\",\"t\":0.5,\"n\":-3,\"ok\":true,\"list\":[1,null,{},[]]}" },
	{ 2, "{\n"
	     "  \"name\": \"a\\\"b\",\n"
	     "  \"t\": 0.5,\n"
	     "  \"n\": -3,\n"
	     "  \"ok\": true,\n"
	     "  \"list\": [\n"
	     "    1,\n"
	     "    null,\n"
	     "    {},\n"
	     "    []\n"
	     "  ]\n"
	     "}\n" },
};

START_TEST(json_writer_places_commas_and_indentation)
{
	capture c;
	cap_open(&c);
	cs_jw w;
	cs_jw_init(&w, c.f, jw_rows[_i].indent);
	write_doc(&w);
	ck_assert_int_eq(cs_jw_finish(&w), 0);
	char *got = cap_close(&c);
	ck_assert_str_eq(got, jw_rows[_i].want);
	free(got);
}
END_TEST

/* Each misuse, played on a fresh writer, must make cs_jw_finish fail. */
static void misuse_unclosed(cs_jw *w) { cs_jw_begin_obj(w); }
static void misuse_wrong_close(cs_jw *w) { cs_jw_begin_obj(w); cs_jw_end_arr(w); }
static void misuse_key_in_array(cs_jw *w) { cs_jw_begin_arr(w); cs_jw_key(w, "k"); cs_jw_num(w, 1); cs_jw_end_arr(w); }
static void misuse_value_without_key(cs_jw *w) { cs_jw_begin_obj(w); cs_jw_num(w, 1); cs_jw_end_obj(w); }
static void misuse_dangling_key(cs_jw *w) { cs_jw_begin_obj(w); cs_jw_key(w, "k"); cs_jw_end_obj(w); }
static void misuse_two_roots(cs_jw *w) { cs_jw_num(w, 1); cs_jw_num(w, 2); }
static void misuse_nothing(cs_jw *w) { (void)w; }
static void misuse_too_deep(cs_jw *w)
{
	for (int i = 0; i <= CS_JW_MAX_DEPTH; i++)
		cs_jw_begin_arr(w);
	for (int i = 0; i <= CS_JW_MAX_DEPTH; i++)
		cs_jw_end_arr(w);
}

static void (*const misuse_rows[])(cs_jw *) = {
	misuse_unclosed, misuse_wrong_close, misuse_key_in_array, misuse_value_without_key,
	misuse_dangling_key, misuse_two_roots, misuse_nothing, misuse_too_deep,
};

START_TEST(json_writer_reports_misuse)
{
	capture c;
	cap_open(&c);
	cs_jw w;
	cs_jw_init(&w, c.f, 0);
	misuse_rows[_i](&w);
	ck_assert_int_eq(cs_jw_finish(&w), -1);
	free(cap_close(&c));
}
END_TEST

/* -- atomic files -- */

typedef struct tmpdir {
	char path[64];
} tmpdir;

static void tmpdir_make(tmpdir *d)
{
	strcpy(d->path, "/tmp/cs_test_out.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d->path));
}

/* Number of entries in the directory (".", ".." excluded). */
static int tmpdir_count(const tmpdir *d)
{
	DIR *dir = opendir(d->path);
	ck_assert_ptr_nonnull(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(dir);
	return n;
}

static void tmpdir_remove(const tmpdir *d, const char *file)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", d->path, file);
	unlink(p);
	ck_assert_int_eq(rmdir(d->path), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 4096);
	ck_assert_ptr_nonnull(buf);
	size_t n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static const bool prior_rows[] = { false, true };  /* does the target exist already */

START_TEST(commit_renames_into_place)
{
	tmpdir d;
	tmpdir_make(&d);
	char target[128];
	snprintf(target, sizeof(target), "%s/res.json", d.path);
	if (prior_rows[_i])
		write_file(target, "old");
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open(target, &diag);
	ck_assert_ptr_nonnull(o);
	fputs("{\"new\":1}", cs_out_file(o));
	fflush(cs_out_file(o));
	/* Until the commit the target holds what it held, plus the temp file. */
	char *mid = slurp(target);
	if (prior_rows[_i])
		ck_assert_str_eq(mid, "old");
	else
		ck_assert_ptr_null(mid);
	free(mid);
	ck_assert_int_eq(tmpdir_count(&d), prior_rows[_i] ? 2 : 1);
	ck_assert_int_eq(cs_out_commit(o, &diag), 0);
	char *got = slurp(target);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "{\"new\":1}");
	free(got);
	ck_assert_int_eq(tmpdir_count(&d), 1);
	tmpdir_remove(&d, "res.json");
}
END_TEST

START_TEST(abort_leaves_no_file)
{
	tmpdir d;
	tmpdir_make(&d);
	char target[128];
	snprintf(target, sizeof(target), "%s/res.csv", d.path);
	if (prior_rows[_i])
		write_file(target, "old");
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open(target, &diag);
	ck_assert_ptr_nonnull(o);
	fputs("partial", cs_out_file(o));
	cs_out_abort(o);
	char *got = slurp(target);
	if (prior_rows[_i]) {
		ck_assert_str_eq(got, "old");
		ck_assert_int_eq(tmpdir_count(&d), 1);
	} else {
		ck_assert_ptr_null(got);
		ck_assert_int_eq(tmpdir_count(&d), 0);
	}
	free(got);
	tmpdir_remove(&d, "res.csv");
}
END_TEST

START_TEST(open_failure_names_the_path)
{
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open("/nonexistent-dir/x/res.json", &diag);
	ck_assert_ptr_null(o);
	ck_assert_ptr_nonnull(strstr(diag.msg, "cannot open '/nonexistent-dir/x/res.json': "));
	/* diag may be NULL */
	ck_assert_ptr_null(cs_out_open("/nonexistent-dir/x/res.json", NULL));
}
END_TEST

START_TEST(dash_means_stdout)
{
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open("-", &diag);
	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_eq(cs_out_file(o), stdout);
	ck_assert_int_eq(cs_out_commit(o, &diag), 0);
	ck_assert_int_ne(fileno(stdout), -1);  /* still open */
	o = cs_out_open("-", &diag);
	ck_assert_ptr_nonnull(o);
	cs_out_abort(o);
	ck_assert_int_ne(fileno(stdout), -1);
}
END_TEST

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *out_suite(void)
{
	Suite *s = suite_create("out");
	TCase *tc;

	tc = tcase_create("json_strings");
	tcase_add_loop_test(tc, json_strings_are_escaped, 0, ROWS(json_str_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("numbers");
	tcase_add_loop_test(tc, numbers_round_trip_in_shortest_form, 0, ROWS(num_rows));
	tcase_add_test(tc, random_doubles_round_trip);
	tcase_add_loop_test(tc, non_finite_numbers_are_null_in_json_and_empty_in_csv, 0,
	                    ROWS(non_finite));
	suite_add_tcase(s, tc);

	tc = tcase_create("csv");
	tcase_add_loop_test(tc, csv_fields_are_quoted_per_rfc4180, 0, ROWS(csv_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("json_writer");
	tcase_add_loop_test(tc, json_writer_places_commas_and_indentation, 0, ROWS(jw_rows));
	tcase_add_loop_test(tc, json_writer_reports_misuse, 0, ROWS(misuse_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("atomic_files");
	tcase_add_loop_test(tc, commit_renames_into_place, 0, ROWS(prior_rows));
	tcase_add_loop_test(tc, abort_leaves_no_file, 0, ROWS(prior_rows));
	tcase_add_test(tc, open_failure_names_the_path);
	tcase_add_test(tc, dash_means_stdout);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(out_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
