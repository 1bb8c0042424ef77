/*
 * test_out.c - atomic output files, the JSON/CSV formatters, and the
 * preset tables of `clustersim list`.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "report/list_out.h"
#include "report/out.h"
#include "tmp_dir.h"

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
	char path[256];
} tmpdir;

static void tmpdir_make(tmpdir *d)
{
	cs_test_tmp(d->path, sizeof d->path, "cs_test_out");
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
	char p[512];
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
	char target[512];
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
	char target[512];
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

/* Write "new" to path through cs_out; 0, or -1 with diag. */
static int put(const char *path, cs_diag *diag)
{
	cs_out *o = cs_out_open(path, diag);
	if (!o)
		return -1;
	fputs("new", cs_out_file(o));
	return cs_out_commit(o, diag);
}

START_TEST(symlink_target_is_written_not_the_link)
{
	tmpdir d;
	tmpdir_make(&d);
	char real[512], link[512], dangling[512], later[512];
	snprintf(real, sizeof real, "%s/real.csv", d.path);
	snprintf(link, sizeof link, "%s/link.csv", d.path);
	snprintf(dangling, sizeof dangling, "%s/dangling.csv", d.path);
	snprintf(later, sizeof later, "%s/later.csv", d.path);
	write_file(real, "old");
	ck_assert_int_eq(symlink("real.csv", link), 0);
	ck_assert_int_eq(symlink("later.csv", dangling), 0);
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(put(link, &diag), 0);
	struct stat st;
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	char *got = slurp(real);
	ck_assert_str_eq(got, "new");
	free(got);
	/* a link to a file not made yet makes it */
	ck_assert_int_eq(put(dangling, &diag), 0);
	ck_assert_int_eq(lstat(dangling, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	got = slurp(later);
	ck_assert_str_eq(got, "new");
	free(got);
	ck_assert_int_eq(tmpdir_count(&d), 4);
	unlink(link);
	unlink(dangling);
	unlink(later);
	tmpdir_remove(&d, "real.csv");
}
END_TEST

START_TEST(mode_and_hard_links_are_kept_read_only_refused)
{
	tmpdir d;
	tmpdir_make(&d);
	char a[512], b[512], ro[512];
	snprintf(a, sizeof a, "%s/a.csv", d.path);
	snprintf(b, sizeof b, "%s/b.csv", d.path);
	snprintf(ro, sizeof ro, "%s/ro.csv", d.path);
	write_file(a, "old");
	ck_assert_int_eq(chmod(a, 0640), 0);
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(put(a, &diag), 0);
	struct stat st;
	ck_assert_int_eq(stat(a, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640);
	/* a second name: written in place, both names see it */
	ck_assert_int_eq(link(a, b), 0);
	write_file(a, "old");
	ck_assert_int_eq(put(b, &diag), 0);
	char *got = slurp(a);
	ck_assert_str_eq(got, "new");
	free(got);
	/* a file nobody may write is refused and left as it is */
	write_file(ro, "old");
	ck_assert_int_eq(chmod(ro, 0444), 0);
	ck_assert_int_eq(put(ro, &diag), -1);
	ck_assert_ptr_nonnull(strstr(diag.msg, "the file is read-only (mode 444)"));
	got = slurp(ro);
	ck_assert_str_eq(got, "old");
	free(got);
	ck_assert_int_eq(tmpdir_count(&d), 3);
	unlink(a);
	unlink(b);
	tmpdir_remove(&d, "ro.csv");
}
END_TEST

START_TEST(pipe_is_written_in_place)
{
	tmpdir d;
	tmpdir_make(&d);
	char fifo[512];
	snprintf(fifo, sizeof fifo, "%s/fifo", d.path);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(put(fifo, &diag), 0);
	char buf[8] = { 0 };
	ck_assert_int_eq((int)read(rd, buf, sizeof buf - 1), 3);
	ck_assert_str_eq(buf, "new");
	close(rd);
	struct stat st;
	ck_assert_int_eq(lstat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	tmpdir_remove(&d, "fifo");
}
END_TEST

START_TEST(check_refuses_an_input_and_a_missing_directory)
{
	tmpdir d;
	tmpdir_make(&d);
	char in[512], out[1024];
	snprintf(in, sizeof in, "%s/s.yaml", d.path);
	/* the same file by another path: TMP/D/../D/s.yaml */
	snprintf(out, sizeof out, "%s/../%s/s.yaml", d.path, strrchr(d.path, '/') + 1);
	write_file(in, "name: x\n");
	const char *inputs[] = { NULL, in };
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_out_check(out, inputs, 2, &diag), -1);
	ck_assert_ptr_nonnull(strstr(diag.msg, "it is the input"));
	ck_assert_int_eq(cs_out_check("/nonexistent-dir/x.csv", inputs, 2, &diag), -1);
	ck_assert_ptr_nonnull(strstr(diag.msg, "cannot open '/nonexistent-dir/x.csv'"));
	snprintf(out, sizeof out, "%s/new.csv", d.path);
	ck_assert_int_eq(cs_out_check(out, inputs, 2, &diag), 0);
	ck_assert_int_eq(tmpdir_count(&d), 1); /* the check leaves nothing behind */
	tmpdir_remove(&d, "s.yaml");
}
END_TEST

/* The check before the work decides from stat and access alone: an old
 * output (a hard-linked one, written in place) keeps its bytes, and no
 * file appears. */
START_TEST(check_touches_nothing)
{
	tmpdir d;
	tmpdir_make(&d);
	char a[512], b[512], fresh[512];
	snprintf(a, sizeof a, "%s/a.csv", d.path);
	snprintf(b, sizeof b, "%s/b.csv", d.path);
	snprintf(fresh, sizeof fresh, "%s/fresh.csv", d.path);
	write_file(a, "old");
	ck_assert_int_eq(link(a, b), 0);
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_out_check(b, NULL, 0, &diag), 0);
	ck_assert_int_eq(cs_out_check(fresh, NULL, 0, &diag), 0);
	char *got = slurp(a);
	ck_assert_str_eq(got, "old");
	free(got);
	ck_assert_int_eq(tmpdir_count(&d), 2);
	unlink(a);
	tmpdir_remove(&d, "b.csv");
}
END_TEST

/* A file written in place (here a second name of it) is opened only at
 * commit: a run that fails leaves the old result. */
START_TEST(in_place_waits_for_the_commit)
{
	tmpdir d;
	tmpdir_make(&d);
	char a[512], b[512];
	snprintf(a, sizeof a, "%s/a.csv", d.path);
	snprintf(b, sizeof b, "%s/b.csv", d.path);
	write_file(a, "old");
	ck_assert_int_eq(link(a, b), 0);
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open(b, &diag);
	ck_assert_ptr_nonnull(o);
	fputs("partial", cs_out_file(o));
	fflush(cs_out_file(o));
	char *got = slurp(a);
	ck_assert_str_eq(got, "old");
	free(got);
	cs_out_abort(o);
	got = slurp(a);
	ck_assert_str_eq(got, "old");
	free(got);
	ck_assert_int_eq(put(b, &diag), 0);
	got = slurp(a);
	ck_assert_str_eq(got, "new");
	free(got);
	ck_assert_int_eq(tmpdir_count(&d), 2);
	unlink(a);
	tmpdir_remove(&d, "b.csv");
}
END_TEST

/* A device that cannot take the result: the commit fails with the path
 * and the reason. */
START_TEST(a_full_device_is_a_write_error)
{
	if (access("/dev/full", W_OK) != 0)
		return; /* no such device here */
	cs_diag diag = { { 0 } };
	ck_assert_int_eq(cs_out_check("/dev/full", NULL, 0, &diag), 0);
	ck_assert_int_eq(put("/dev/full", &diag), -1);
	ck_assert_str_eq(diag.msg, "cannot write '/dev/full': No space left on device");
}
END_TEST

/* Two outputs are one file under the same path or two names of it. */
START_TEST(same_output_by_path_or_inode)
{
	tmpdir d;
	tmpdir_make(&d);
	char a[512], b[512], dot[544], other[512];
	snprintf(a, sizeof a, "%s/a.csv", d.path);
	snprintf(b, sizeof b, "%s/b.csv", d.path);
	snprintf(dot, sizeof dot, "%s/./a.csv", d.path);
	snprintf(other, sizeof other, "%s/other.csv", d.path);
	write_file(a, "x");
	ck_assert_int_eq(link(a, b), 0);
	ck_assert(cs_out_same(a, a));
	ck_assert(cs_out_same(a, dot));
	ck_assert(cs_out_same(a, b));
	ck_assert(!cs_out_same(a, other));
	ck_assert(!cs_out_same("-", "-"));
	unlink(a);
	tmpdir_remove(&d, "b.csv");
}
END_TEST

/* A signal that ends the process removes the temporary file. */
START_TEST(signal_removes_the_temporary_file)
{
	tmpdir d;
	tmpdir_make(&d);
	char target[512];
	snprintf(target, sizeof target, "%s/res.json", d.path);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		cs_out *o = cs_out_open(target, NULL);
		if (!o)
			_exit(3);
		fputs("partial", cs_out_file(o));
		fflush(cs_out_file(o));
		raise(SIGTERM);
		_exit(4);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	ck_assert_int_eq(tmpdir_count(&d), 0);
	ck_assert_int_eq(rmdir(d.path), 0);
}
END_TEST

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* `clustersim list gpus|models` (report/list_out.h): a header, then a line
 * per preset, each starting with its name. */
static void preset_table(bool gpus)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	if (gpus)
		cs_list_write_gpus(f);
	else
		cs_list_write_models(f);
	fclose(f);
	ck_assert_msg(strncmp(text, gpus ? "gpu " : "model ", gpus ? 4 : 6) == 0, "%s", text);
	const char *line = strchr(text, '\n') + 1;
	size_t i = 0;
	for (; *line; i++) {
		const char *name = gpus ? cs_preset_gpu_name(i) : cs_preset_model_name(i);
		ck_assert_ptr_nonnull(name);
		ck_assert_msg(strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ' ',
		              "line %zu: %.60s", i, line);
		line = strchr(line, '\n') + 1;
	}
	ck_assert_ptr_null(gpus ? cs_preset_gpu_name(i) : cs_preset_model_name(i));
	free(text);
}

START_TEST(preset_tables_have_a_line_per_preset)
{
	preset_table(true);
	preset_table(false);
}
END_TEST

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
	tcase_add_test(tc, symlink_target_is_written_not_the_link);
	tcase_add_test(tc, mode_and_hard_links_are_kept_read_only_refused);
	tcase_add_test(tc, pipe_is_written_in_place);
	tcase_add_test(tc, check_refuses_an_input_and_a_missing_directory);
	tcase_add_test(tc, signal_removes_the_temporary_file);
	tcase_add_test(tc, check_touches_nothing);
	tcase_add_test(tc, in_place_waits_for_the_commit);
	tcase_add_test(tc, a_full_device_is_a_write_error);
	tcase_add_test(tc, same_output_by_path_or_inode);
	suite_add_tcase(s, tc);

	tc = tcase_create("tables");
	tcase_add_test(tc, preset_tables_have_a_line_per_preset);
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
