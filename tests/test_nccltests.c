/*
 * test_nccltests.c - nccl-tests output (src/ingest/nccltests.c) and the
 * network fit (src/study/net_fit.c): a real-format output parses into its
 * group and rows; bad input is a file:line:col error; the op comes from
 * the header or the bus factor; outputs written from the tuner with known
 * factors give those factors back within 1 %, on one node and across
 * nodes; a factor the times do not depend on is reported as such; what
 * `clustersim coll` writes (src/report/nccl_out.c) reads back.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "config/config.h"
#include "hw/topo.h"
#include "ingest/nccltests.h"
#include "report/nccl_out.h"
#include "study/net_fit.h"

/* nccl-tests 2.x all_reduce_perf on two hosts of two GPUs, abridged, with a
 * launcher's message between the lines. */
static const char two_hosts[] =
	"# nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22105\n"
	"# Collective test starting: all_reduce_perf\n"
	"# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 "
	"agg iters: 1 validation: 1 graph: 0\n"
	"#\n"
	"# Using devices\n"
	"#  Rank  0 Group  0 Pid  11 on      gpu-a device  0 [0x18] NVIDIA H100 80GB HBM3\n"
	"#  Rank  1 Group  0 Pid  12 on      gpu-a device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
	"#  Rank  2 Group  0 Pid  13 on      gpu-b device  0 [0x18] NVIDIA H100 80GB HBM3\n"
	"#  Rank  3 Group  0 Pid  14 on      gpu-b device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
	"#\n"
	"#                                                              out-of-place                       in-place\n"
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
	"           0             0     float     sum      -1     3.18    0.00    0.00      0     3.17    0.00    0.00      0\n"
	"           8             2     float     sum      -1    37.35    0.00    0.00      0    36.92    0.00    0.00      0\n"
	"gpu-a:11:11 [0] NCCL INFO comm 0x55 rank 0 nranks 4 - Init COMPLETE\n"
	"        1024           256     float     sum      -1    38.10    0.03    0.04      0      N/A     N/A     N/A    N/A\n"
	"# Out of bounds values : 0 OK\n"
	"# Avg bus bandwidth    : 0.02\n";

START_TEST(parses_group_and_rows)
{
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse(two_hosts, strlen(two_hosts), "ar.txt", &t, &d) == CS_OK,
		      "%s", d.msg);
	ck_assert_str_eq(t.test, "all_reduce_perf");
	ck_assert_int_eq(t.nranks, 4);
	ck_assert_int_eq(t.nhosts, 2);
	ck_assert_int_eq(t.ranks_per_host, 2);
	ck_assert_str_eq(t.gpu, "NVIDIA H100 80GB HBM3");
	ck_assert_str_eq(t.redop, "sum");
	ck_assert_int_eq(t.root, -1);
	ck_assert_uint_eq(t.nrows, 2); /* the size-0 row is left out */
	ck_assert_double_eq(t.rows[0].bytes, 8);
	ck_assert_double_eq(t.rows[0].time_us[0], 37.35);
	ck_assert_double_eq(t.rows[0].time_us[1], 36.92);
	ck_assert_int_eq(t.rows[0].line, 15);
	ck_assert_double_eq(t.rows[1].bytes, 1024);
	ck_assert(isnan(t.rows[1].time_us[1]));
	cs_coll_op op;
	ck_assert_int_eq(cs_nccltests_op(&t, "ar.txt", -1, &op, &d), CS_OK);
	ck_assert_int_eq(op, CS_COLL_ALL_REDUCE);
	cs_nccltests_free(&t);
}
END_TEST

/* Every line of `text` behind `prefix`; the caller frees the result. */
static char *tagged(const char *text, const char *prefix)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	for (const char *s = text; *s;) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) + 1 : strlen(s);
		fprintf(f, "%s%.*s", prefix, (int)n, s);
		s += n;
	}
	fclose(f);
	return out;
}

/* mpirun --tag-output, torchrun and srun -l prefix each line: the same
 * group and rows come out, and the MPI build's test name is its op. */
START_TEST(launcher_prefixes_are_stripped)
{
	static const char *const prefixes[] = { "[1,0]<stdout>:", "[default0]:", "0: ",
						"12:", "[1,3]<stderr>:", "[0] ", "[15] " };
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		char *text = tagged(two_hosts, prefixes[i]);
		cs_nccltests t;
		cs_diag d = { { 0 } };
		ck_assert_msg(cs_nccltests_parse(text, strlen(text), "ar.txt", &t, &d) == CS_OK,
			      "%s: %s", prefixes[i], d.msg);
		ck_assert_int_eq(t.nranks, 4);
		ck_assert_int_eq(t.nhosts, 2);
		ck_assert_str_eq(t.gpu, "NVIDIA H100 80GB HBM3");
		ck_assert_uint_eq(t.nrows, 2);
		ck_assert_double_eq(t.rows[0].time_us[1], 36.92);
		ck_assert_int_eq(t.rows[0].line, 15);
		cs_nccltests_free(&t);
		free(text);
	}
}
END_TEST

START_TEST(mpi_build_names_its_op)
{
	static const char s[] = "# Collective test starting: all_gather_perf_mpi\n"
		"#  Rank  0 Group 0 Pid 1 on h device 0 [0x1] GPU\n"
		"#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
		"8 2 float none -1 1 0 0 0 1 0 0 0\n";
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse(s, strlen(s), "ag.txt", &t, &d) == CS_OK, "%s", d.msg);
	cs_coll_op op;
	ck_assert_msg(cs_nccltests_op(&t, "ag.txt", -1, &op, &d) == CS_OK, "%s", d.msg);
	ck_assert_int_eq(op, CS_COLL_ALL_GATHER);
	cs_nccltests_free(&t);
}
END_TEST

#define HDR "#  Rank  0 Group 0 Pid 1 on h device 0 [0x1] GPU\n" \
	    "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"

static const struct {
	const char *text, *prefix;
} bad[] = {
	{ "", "t.txt:1:1: not nccl-tests output: no column header" },
	{ "{\"traceEvents\": []}\n", "t.txt:1:1: not nccl-tests output: no column header" },
	{ "# size count type redop root time algbw #wrong\n",
	  "t.txt:1:1: wrong columns: the header has no 'busbw'" },
	{ "# size count type time busbw\n", "t.txt:1:1: wrong columns: the header has no 'algbw'" },
	{ "8 2 float sum -1 1.0 0 0 0 1.0 0 0 0\n",
	  "t.txt:1:1: a result row before the column header" },
	{ HDR "8 2 float sum -1 1.0 0 0 0\n",
	  "t.txt:3:1: wrong columns: 9 where the header at line 2 names 13" },
	{ HDR "8 2 float sum -1 fast 0 0 0 1.0 0 0 0\n",
	  "t.txt:3:18: expected a positive number of microseconds in column 'time' (out-of-place), not 'fast'" },
	{ HDR "8 2 float sum -1 -3 0 0 0 1.0 0 0 0\n",
	  "t.txt:3:18: expected a positive number of microseconds" },
	{ HDR "8.5 2 float sum -1 1 0 0 0 1.0 0 0 0\n",
	  "t.txt:3:1: expected a whole number of bytes in column 'size'" },
	{ HDR "0 0 float sum -1 1 0 0 0 1.0 0 0 0\n", "t.txt:3:1: no result rows of a nonzero size" },
	{ HDR, "t.txt:2:1: no result rows of a nonzero size" },
	{ "#  size count type redop root time algbw busbw #wrong\n8 2 float sum -1 1 0 0 0\n",
	  "t.txt:1:1: no '# Rank' lines" },
	/* a negative size is a row, refused (not a launcher's line, dropped) */
	{ HDR "8 2 float sum -1 1 0 0 0 1 0 0 0\n  -16 4 float sum -1 1 0 0 0 1 0 0 0\n",
	  "t.txt:4:3: a negative size in column 'size': not a measurement" },
	/* a rank twice, or one no machine has, is not a test's group */
	{ HDR "#  Rank  0 Group 0 Pid 2 on h device 1 [0x2] GPU\n8 2 float sum -1 1 0 0 0 1 0 0 0\n",
	  "t.txt:3:10: rank 0 is listed twice in this test's '# Rank' lines" },
	{ "#  Rank  10000000000 Group 0 Pid 1 on h device 0 [0x1] GPU\n",
	  "t.txt:1:10: expected a rank from 0 to 16777215 after '# Rank', not '10000000000'" },
	{ "#  Rank  x Group 0 Pid 1 on h device 0 [0x1] GPU\n",
	  "t.txt:1:10: expected a rank from 0 to 16777215 after '# Rank', not 'x'" },
	{ "# Collective test starting: hypercube_perf\n" HDR "8 2 float sum -1 1 0 0 0 1 0 0 0\n",
	  "t.txt: 'hypercube_perf' measures a collective clustersim has no model for" },
};

START_TEST(bad_input_is_an_error_at_its_place)
{
	cs_nccltests t;
	cs_diag d = { { 0 } };
	const char *s = bad[_i].text;
	cs_status st = cs_nccltests_parse(s, strlen(s), "t.txt", &t, &d);
	if (st == CS_OK) {
		cs_coll_op op;
		st = cs_nccltests_op(&t, "t.txt", -1, &op, &d);
	}
	cs_nccltests_free(&t);
	ck_assert_int_eq(st, CS_ERR_INPUT);
	ck_assert_msg(strncmp(d.msg, bad[_i].prefix, strlen(bad[_i].prefix)) == 0, "case %d: '%s'",
		      _i, d.msg);
}
END_TEST

/* Hosts by name in a table that grows: 300 ranks on 100 hosts, 3 on each
 * (the ranks go round 99 hosts, then the last three to the 100th). */
START_TEST(many_hosts_are_counted_once)
{
	static char s[32768];
	size_t n = 0;
	for (int r = 0; r < 300; r++)
		n += (size_t)snprintf(s + n, sizeof s - n, "#  Rank %d Group 0 Pid 1 on host-%d device 0 [0x1] GPU\n",
				      r, r < 297 ? r % 99 : 99);
	n += (size_t)snprintf(s + n, sizeof s - n, "%s",
			      "#  size count type redop root time algbw busbw #wrong\n8 2 float sum -1 1 0 0 0\n");
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse(s, n, "t.txt", &t, &d) == CS_OK, "%s", d.msg);
	ck_assert_int_eq(t.nranks, 300);
	ck_assert_int_eq(t.nhosts, 100);
	ck_assert_int_eq(t.ranks_per_host, 3);
	cs_nccltests_free(&t);
}
END_TEST

/* A root that is no rank (found by fuzzing: 1e308 was cast to an integer). */
START_TEST(root_out_of_range_is_no_root)
{
	static const char s[] = HDR "8 2 float none 1e308 1 0 0 0 1 0 0 0\n";
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_nccltests_parse(s, sizeof s - 1, "t.txt", &t, &d), CS_OK);
	ck_assert_int_eq(t.root, -1);
	cs_nccltests_free(&t);
}
END_TEST

START_TEST(nul_byte_is_refused)
{
	static const char s[] = HDR "8 2 float sum -1 1 0 0 0 1 0 0 0\n\0junk";
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_nccltests_parse(s, sizeof s - 1, "t.txt", &t, &d), CS_ERR_INPUT);
	cs_nccltests_free(&t);
	ck_assert_str_eq(d.msg, "t.txt:1:1: not nccl-tests output: the file holds a NUL byte");
}
END_TEST

/* A log whose runs of blanks were collapsed to one (or turned into tabs),
 * as text pasted into an issue or a chat comes back, reads the same. */
static char *collapsed(const char *text, char blank)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	bool start = true;
	for (const char *p = text; *p; p++) {
		if (*p == ' ') {
			while (p[1] == ' ')
				p++;
			if (!start)
				*o++ = blank;
			continue;
		}
		start = *p == '\n';
		*o++ = *p;
	}
	*o = 0;
	return out;
}

START_TEST(collapsed_whitespace_reads_the_same)
{
	static const char blanks[] = { ' ', '\t' };
	for (size_t i = 0; i < sizeof blanks; i++) {
		char *text = collapsed(two_hosts, blanks[i]);
		cs_nccltests t;
		cs_diag d = { { 0 } };
		ck_assert_msg(cs_nccltests_parse(text, strlen(text), "ar.txt", &t, &d) == CS_OK, "%s",
			      d.msg);
		ck_assert_str_eq(t.test, "all_reduce_perf");
		ck_assert_int_eq(t.nranks, 4);
		ck_assert_int_eq(t.nhosts, 2);
		ck_assert_str_eq(t.gpu, blanks[i] == ' ' ? "NVIDIA H100 80GB HBM3"
							 : "NVIDIA\tH100\t80GB\tHBM3");
		ck_assert_uint_eq(t.nrows, 2);
		ck_assert_double_eq(t.rows[0].time_us[1], 36.92);
		ck_assert(isnan(t.rows[1].time_us[1]));
		cs_nccltests_free(&t);
		free(text);
	}
}
END_TEST

/* -S 1 adds a timestamp column, a date and a time in each row. */
START_TEST(timestamp_column_is_two_tokens)
{
	static const char s[] = "#  Rank  0 Group 0 Pid 1 on h device 0 [0x1] GPU\n"
		"#  Rank  1 Group 0 Pid 2 on h device 1 [0x2] GPU\n"
		"#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong timestamp\n"
		"1024 256 float sum -1 12.5 0.08 0.08 0 11.5 0.09 0.09 0 2026-07-10 09:00:00\n";
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse(s, sizeof s - 1, "s.txt", &t, &d) == CS_OK, "%s", d.msg);
	ck_assert_uint_eq(t.nrows, 1);
	ck_assert_double_eq(t.rows[0].time_us[1], 11.5);
	cs_nccltests_free(&t);
}
END_TEST

/* -C 1 names the time columns 'cputime'. */
START_TEST(cputime_columns_are_the_times)
{
	static const char s[] = "#  Rank  0 Group 0 Pid 1 on h device 0 [0x1] GPU\n"
		"#  Rank  1 Group 0 Pid 2 on h device 1 [0x2] GPU\n"
		"#  size count type redop root cputime algbw busbw #wrong cputime algbw busbw #wrong\n"
		"1024 256 float sum -1 12.5 0.08 0.08 0 11.5 0.09 0.09 0\n";
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse(s, sizeof s - 1, "c.txt", &t, &d) == CS_OK, "%s", d.msg);
	ck_assert_double_eq(t.rows[0].time_us[0], 12.5);
	ck_assert_double_eq(t.rows[0].time_us[1], 11.5);
	cs_nccltests_free(&t);
}
END_TEST

/* mpirun --tag-output around two MPI builds' runs in one log (a public
 * log, tests/data/README.md): two tests, each with its op, ranks and
 * rows, the launcher's lines between them skipped. */
START_TEST(several_tests_in_one_file)
{
	char file[512];
	snprintf(file, sizeof file, "%s/tests/data/nccl-tests/rtx5090-tagged-mpi-two-tests.txt",
		 CS_SOURCE_ROOT);
	cs_nccltests_set set;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_load_set(file, &set, &d) == CS_OK, "%s", d.msg);
	ck_assert_uint_eq(set.n, 2);
	static const char *const names[] = { "all_reduce_perf_mpi", "all_gather_perf_mpi" };
	static const cs_coll_op ops[] = { CS_COLL_ALL_REDUCE, CS_COLL_ALL_GATHER };
	static const int lines[] = { 9, 42 };
	static const double first_us[] = { 4366.46, 2191.72 }, last_us[] = { 58055.4, 29349.9 };
	for (size_t k = 0; k < 2; k++) {
		const cs_nccltests *t = &set.tests[k];
		ck_assert_str_eq(t->test, names[k]);
		ck_assert_int_eq(t->line, lines[k]);
		ck_assert_int_eq(t->nranks, 2);
		ck_assert_int_eq(t->nhosts, 1);
		ck_assert_int_eq(t->ranks_per_host, 2);
		ck_assert_str_eq(t->gpu, "NVIDIA GeForce RTX 5090");
		ck_assert_uint_eq(t->nrows, 8);
		ck_assert_double_eq(t->rows[0].bytes, 1048576);
		ck_assert_double_eq(t->rows[0].time_us[0], first_us[k]);
		ck_assert_double_eq(t->rows[7].time_us[1], last_us[k]);
		cs_coll_op op;
		ck_assert_int_eq(cs_nccltests_op(t, file, -1, &op, &d), CS_OK);
		ck_assert_int_eq(op, ops[k]);
	}
	cs_nccltests_set_free(&set);
	/* the one-test reader takes the first */
	cs_nccltests t;
	ck_assert_int_eq(cs_nccltests_load(file, &t, &d), CS_OK);
	ck_assert_str_eq(t.test, "all_reduce_perf_mpi");
	cs_nccltests_free(&t);
}
END_TEST

/* nccl-tests' -J JSON of the published NVLS points reads as their text:
 * the test from args[0], 8 ranks from one process's device times -g 8,
 * the same rows. */
START_TEST(json_output_reads_as_the_text)
{
	char json[512], text[512];
	snprintf(json, sizeof json, "%s/tests/data/nccl-tests/h100-nvls-all_reduce.json",
		 CS_SOURCE_ROOT);
	snprintf(text, sizeof text, "%s/tests/data/nccl-tests/h100-nvls-all_reduce.txt",
		 CS_SOURCE_ROOT);
	cs_nccltests j, t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_load(json, &j, &d) == CS_OK, "%s", d.msg);
	ck_assert_msg(cs_nccltests_load(text, &t, &d) == CS_OK, "%s", d.msg);
	ck_assert_str_eq(j.test, "all_reduce_perf");
	ck_assert_int_eq(j.nranks, t.nranks);
	ck_assert_int_eq(j.nhosts, t.nhosts);
	ck_assert_int_eq(j.ranks_per_host, t.ranks_per_host);
	ck_assert_str_eq(j.gpu, t.gpu);
	ck_assert_str_eq(j.redop, "sum");
	ck_assert_int_eq(j.root, -1);
	ck_assert_uint_eq(j.nrows, t.nrows);
	for (size_t i = 0; i < j.nrows; i++) {
		ck_assert_double_eq(j.rows[i].bytes, t.rows[i].bytes);
		ck_assert_double_eq_tol(j.rows[i].time_us[0], t.rows[i].time_us[0], 1e-9);
		ck_assert_double_eq_tol(j.rows[i].time_us[1], t.rows[i].time_us[1], 1e-9);
		ck_assert_double_eq_tol(j.rows[i].busbw[0], t.rows[i].busbw[0], 1e-9);
	}
	cs_coll_op op;
	ck_assert_int_eq(cs_nccltests_op(&j, json, -1, &op, &d), CS_OK);
	ck_assert_int_eq(op, CS_COLL_ALL_REDUCE);
	cs_nccltests_free(&j);
	cs_nccltests_free(&t);
}
END_TEST

#define JCFG "{\"config\":{\"nthreads\":1,\"ngpus\":2,\"devices\":[{\"hostname\":\"h\"," \
	     "\"device_info\":\"GPU\"}]},\"results\":"
#define JROW(t) "{\"size\":8,\"redop\":\"sum\",\"root\":\"    -1\",\"out_of_place\":" \
		"{\"time\":" t ",\"alg_bw\":0,\"bus_bw\":0,\"nwrong\":null},\"in_place\":null}"

static const struct {
	const char *text, *msg;
} bad_json[] = {
	{ "{\"results\": [", "t.json:1:13: not nccl-tests output: bad JSON" },
	{ "{\n  \"config\": {} x\n}", "t.json:2:16: not nccl-tests output: bad JSON" },
	{ "{\"traceEvents\": []}", "t.json:1:1: not nccl-tests output: no column header" },
	{ "{\"config\":{\"devices\":[]},\"results\":[]}",
	  "t.json: config.devices: no devices: the group's size and hosts are unknown" },
	{ "{\"config\":{\"ngpus\":0,\"devices\":[{}]},\"results\":[]}",
	  "t.json: config.ngpus: expected a whole number from 1 to 65536" },
	{ "{\"config\":{\"devices\":[{\"device\":0}]},\"results\":[]}",
	  "t.json: config.devices[0].hostname: expected the host's name" },
	{ "{\"config\":{\"nthreads\":65536,\"ngpus\":65536,\"devices\":[{\"hostname\":\"h\"}]},"
	  "\"results\":[]}",
	  "t.json: config.devices[0]: more than 16777216 ranks (65536 threads of 65536 GPUs a process)" },
	{ JCFG "[]}", "t.json: results: no result rows of a nonzero size" },
	{ JCFG "[7]}", "t.json: results[0]: expected an object" },
	{ JCFG "[{\"size\":1.5}]}", "t.json: results[0].size: expected a whole number of bytes" },
	{ JCFG "[" JROW("1") "," JROW("-2") "]}",
	  "t.json: results[1].out_of_place.time: expected a positive number of microseconds" },
	{ JCFG "[" JROW("\"nan\"") "]}",
	  "t.json: results[0]: no time in either 'out_of_place' or 'in_place'" },
};

START_TEST(bad_json_is_an_error_at_its_place)
{
	cs_nccltests t;
	cs_diag d = { { 0 } };
	const char *s = bad_json[_i].text;
	ck_assert_int_eq(cs_nccltests_parse(s, strlen(s), "t.json", &t, &d), CS_ERR_INPUT);
	cs_nccltests_free(&t);
	ck_assert_msg(strncmp(d.msg, bad_json[_i].msg, strlen(bad_json[_i].msg)) == 0,
		      "case %d: '%s'", _i, d.msg);
}
END_TEST

START_TEST(json_group_is_processes_times_gpus)
{
	static const char s[] = "{\"config\":{\"nthreads\":2,\"ngpus\":4,\"devices\":["
		"{\"hostname\":\"a\",\"device_info\":\"NVIDIA B200\"},{\"hostname\":\"b\"},"
		"{\"hostname\":\"a\"}]},\"results\":[" JROW("5.5") "]}";
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse(s, sizeof s - 1, "t.json", &t, &d) == CS_OK, "%s", d.msg);
	ck_assert_int_eq(t.nranks, 24);
	ck_assert_int_eq(t.nhosts, 2);
	ck_assert_int_eq(t.ranks_per_host, 16);
	ck_assert_str_eq(t.gpu, "NVIDIA B200");
	ck_assert_str_eq(t.test, "");
	ck_assert_double_eq(t.rows[0].time_us[0], 5.5);
	ck_assert(isnan(t.rows[0].time_us[1]));
	cs_nccltests_free(&t);
}
END_TEST

/* A device name against a scenario's GPU: the family token decides. */
START_TEST(gpu_family_match)
{
	static const struct {
		const char *device, *gpu;
		int want;
	} cases[] = {
		{ "NVIDIA H100 80GB HBM3", "h100-sxm-80g", 1 },
		{ "NVIDIA A100-SXM4-40GB", "a100-sxm-80g", 1 },
		{ "NVIDIA A100-SXM4-40GB", "h100-sxm-80g", 0 },
		{ "NVIDIA H200", "h200-sxm-141g", 1 },
		{ "NVIDIA B200", "b200", 1 },
		{ "NVIDIA GH200 480GB", "h100-sxm-80g", 0 },
		{ "AMD Instinct MI300X", "mi300x", 1 },
		{ "NVIDIA GeForce RTX 5090", "h100-sxm-80g", 0 },
		{ "NVIDIA H100 80GB HBM3", "my-accelerator", -1 },
		{ "", "h100-sxm-80g", -1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ck_assert_msg(cs_nccltests_same_gpu(cases[i].device, cases[i].gpu) == cases[i].want,
			      "'%s' against '%s'", cases[i].device, cases[i].gpu);
}
END_TEST

/* Without the test's name the op comes from busbw / algbw. */
START_TEST(op_from_the_bus_factor)
{
	static const struct {
		const char *redop, *root;
		double factor;
		int want;   /* -1: cannot tell */
	} cases[] = {
		{ "sum", "-1", 2 * 7.0 / 8, CS_COLL_ALL_REDUCE },
		{ "sum", "-1", 7.0 / 8, CS_COLL_REDUCE_SCATTER },
		{ "none", "-1", 7.0 / 8, -1 },   /* all-gather or all-to-all */
		{ "none", "0", 1.0, CS_COLL_BROADCAST },
		{ "none", "-1", 1.0, -1 },       /* send/recv prints no root */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[2048];
		int n = snprintf(text, sizeof text,
				 "# size count type redop root time algbw busbw #wrong\n");
		for (int r = 0; r < 8; r++)
			n += snprintf(text + n, sizeof text - (size_t)n,
				      "#  Rank %d Group 0 Pid 1 on h device %d [0x1] GPU\n", r, r);
		/* 1 MB in 10 us: algbw 100 GB/s */
		snprintf(text + n, sizeof text - (size_t)n, "1000000 250000 float %s %s 10.00 100.00 %.2f 0\n",
			 cases[i].redop, cases[i].root, 100 * cases[i].factor);
		cs_nccltests t;
		cs_diag d = { { 0 } };
		ck_assert_msg(cs_nccltests_parse(text, strlen(text), "t.txt", &t, &d) == CS_OK, "%s",
			      d.msg);
		cs_coll_op op = CS_COLL_OPS;
		cs_status st = cs_nccltests_op(&t, "t.txt", -1, &op, &d);
		if (cases[i].want < 0) {
			ck_assert_int_eq(st, CS_ERR_INPUT);
			ck_assert_ptr_nonnull(strstr(d.msg, "name it with --op"));
			ck_assert_int_eq(cs_nccltests_op(&t, "t.txt", CS_COLL_ALL_GATHER, &op, &d), CS_OK);
			ck_assert_int_eq(op, CS_COLL_ALL_GATHER);
		} else {
			ck_assert_msg(st == CS_OK, "case %zu: %s", i, d.msg);
			ck_assert_int_eq(op, cases[i].want);
		}
		cs_nccltests_free(&t);
	}
}
END_TEST

/* ---- the fit ------------------------------------------------------------ */

static cs_cluster_spec h100_cluster(int64_t nodes)
{
	cs_scenario *sc = calloc(1, sizeof *sc);
	ck_assert_ptr_nonnull(sc);
	cs_config_defaults(sc);
	const cs_gpu_spec *gpu = cs_preset_gpu("h100-sxm-80g");
	ck_assert_ptr_nonnull(gpu);
	sc->cluster.gpu = *gpu;
	cs_preset_server_defaults(gpu, &sc->cluster);
	sc->cluster.nodes = nodes;
	cs_cluster_spec c = sc->cluster;
	free(sc);
	return c;
}

/* nccl-tests text for `op` on ranks_per_host ranks of each of `hosts`
 * nodes, timed by the tuner with the given factors; the caller frees it. */
static char *synthetic(const cs_cluster_spec *c, const cs_coll_spec *spec, cs_coll_op op,
		       int64_t hosts, int64_t per_host, cs_group_shape *g)
{
	cs_topo *topo = cs_topo_new(c);
	ck_assert_ptr_nonnull(topo);
	*g = per_host == 1 ? cs_topo_group(topo, 0, c->gpus_per_node, hosts)
			   : cs_topo_group(topo, 0, 1, hosts * per_host);
	cs_topo_free(topo);
	cs_coll *co = cs_coll_new(c, spec);
	ck_assert_ptr_nonnull(co);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	static const char *const tests[] = { "all_reduce_perf", "reduce_scatter_perf",
					     "all_gather_perf", "alltoall_perf" };
	fprintf(f, "# Collective test starting: %s\n#\n# Using devices\n", tests[op]);
	for (int64_t r = 0; r < hosts * per_host; r++)
		fprintf(f, "#  Rank %3lld Group  0 Pid %5lld on node-%lld device %2lld [0x%02llx] "
			"NVIDIA H100 80GB HBM3\n", (long long)r, (long long)(1000 + r),
			(long long)(r / per_host), (long long)(r % per_host), (long long)r);
	fprintf(f, "#\n#       size         count      type   redop    root     time   algbw   busbw "
		"#wrong     time   algbw   busbw #wrong\n");
	double bus = cs_coll_bus_factor(op, g->nranks);
	for (double b = 8; b <= 8.0 * (1 << 30); b *= 2) {
		double us = 1e-3 * (double)cs_coll_time(co, op, g, b, NULL);
		double alg = b / us / 1e3;
		fprintf(f, "%12.0f %13.0f %9s %7s %7d %8.2f %7.2f %7.2f %6d %8.2f %7.2f %7.2f %6d\n", b,
			b / 4, "float", op == CS_COLL_ALL_GATHER || op == CS_COLL_ALL_TO_ALL ? "none"
											   : "sum",
			-1, us, alg, alg * bus, 0, us, alg, alg * bus, 0);
	}
	fclose(f);
	cs_coll_free(co);
	return text;
}

/* Fit the synthetic output; the factors must come back within 1 %. */
static cs_net_fit recover(int64_t nodes, int64_t per_host, cs_coll_op op, double up, double out,
			   double lat)
{
	cs_cluster_spec c = h100_cluster(nodes);
	cs_coll_spec truth = { .contention = 1, .scale_up_bw = up, .scale_out_bw = out,
			       .latency = lat };
	cs_group_shape g;
	char *text = synthetic(&c, &truth, op, nodes, per_host, &g);
	cs_nccltests t;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse(text, strlen(text), "syn.txt", &t, &d) == CS_OK, "%s", d.msg);
	free(text);
	cs_coll_op got;
	ck_assert_int_eq(cs_nccltests_op(&t, "syn.txt", -1, &got, &d), CS_OK);
	ck_assert_int_eq(got, op);
	ck_assert_int_eq(t.nranks, nodes * per_host);
	ck_assert_int_eq(t.nhosts, nodes);
	double bytes[64], ns[64];
	for (size_t i = 0; i < t.nrows; i++) {
		bytes[i] = t.rows[i].bytes;
		ns[i] = 1e3 * t.rows[i].time_us[0];
	}
	cs_coll_spec start = { .contention = 1 };
	cs_net_fit fit;
	ck_assert_msg(cs_net_fit_times(&c, &start, op, &g, bytes, ns, t.nrows, &fit, &d) == CS_OK,
		      "%s", d.msg);
	cs_nccltests_free(&t);
	return fit;
}

START_TEST(recovers_nvlink_factors_on_one_node)
{
	cs_net_fit f = recover(1, 8, CS_COLL_ALL_REDUCE, 0.85, 0, 1.3);
	ck_assert(!f.nic && f.bandwidth_fit && f.latency_fit);
	ck_assert_msg(fabs(f.bandwidth / 0.85 - 1) < 0.01, "bandwidth %.5f", f.bandwidth);
	ck_assert_msg(fabs(f.latency / 1.3 - 1) < 0.01, "latency %.5f", f.latency);
	ck_assert_msg(f.rms < 0.005, "rms %.5f", f.rms);
	f = recover(1, 8, CS_COLL_ALL_GATHER, 1.1, 0, 0.7);
	ck_assert_msg(fabs(f.bandwidth / 1.1 - 1) < 0.01, "bandwidth %.5f", f.bandwidth);
	ck_assert_msg(fabs(f.latency / 0.7 - 1) < 0.01, "latency %.5f", f.latency);
}
END_TEST

START_TEST(recovers_nic_factors_across_nodes)
{
	/* one GPU per node: the NIC alone carries the ring and the tree */
	cs_net_fit f = recover(16, 1, CS_COLL_ALL_REDUCE, 0, 0.8, 1.5);
	ck_assert(f.nic && f.bandwidth_fit && f.latency_fit);
	ck_assert_msg(fabs(f.bandwidth / 0.8 - 1) < 0.01, "bandwidth %.5f", f.bandwidth);
	ck_assert_msg(fabs(f.latency / 1.5 - 1) < 0.01, "latency %.5f", f.latency);
	/* eight per node, NICs slower than NVLink: the NIC binds */
	f = recover(4, 8, CS_COLL_REDUCE_SCATTER, 0, 0.6, 1.2);
	ck_assert(f.nic && f.bandwidth_fit);
	ck_assert_msg(fabs(f.bandwidth / 0.6 - 1) < 0.01, "bandwidth %.5f", f.bandwidth);
	ck_assert_msg(fabs(f.latency / 1.2 - 1) < 0.01, "latency %.5f", f.latency);
}
END_TEST

/* Eight NICs of 48 GB/s (384 GB/s) outrun NVLink's 370.8 GB/s bus
 * bandwidth: a two-node all-gather 3 % faster than modelled says nothing of
 * the NIC, so the fit moves to NVLink. */
START_TEST(moves_to_nvlink_when_the_nic_does_not_bind)
{
	cs_net_fit f = recover(2, 8, CS_COLL_ALL_GATHER, 1.03, 0, 1.0);
	ck_assert(!f.nic && f.bandwidth_fit);
	ck_assert_msg(fabs(f.bandwidth / 1.03 - 1) < 0.01, "bandwidth %.5f", f.bandwidth);
}
END_TEST

/* The published points of docs/validation.md, written as nccl-tests rows
 * (tests/data/nccl-tests/): fitted, the model is within 5 % of each row;
 * fitted to the NVLS points, it predicts the same server's ring all-reduce
 * and all-gather (370 GB/s busBw, 1 GB) within 5 %. */
static const struct {
	const char *file, *scenario, *set;
	double busbw_ring, busbw_all_gather; /* published on the same GPUs, 0: none */
} published[] = {
	{ "h100-nvls-all_reduce.txt", "3d-llama3-70b-64gpu.yaml", NULL, 370, 370 },
	{ "ndr-4node-ring-all_reduce.txt", "3d-llama3-70b-64gpu.yaml", "collectives.algorithm=ring",
	  0, 0 },
	{ "dgx-a100-4node-all_reduce.txt", "megatron-1t-3072gpu.yaml", NULL, 0, 0 },
};

START_TEST(published_points_within_5_percent)
{
	char file[512], scenario[512];
	snprintf(file, sizeof file, "%s/tests/data/nccl-tests/%s", CS_SOURCE_ROOT, published[_i].file);
	snprintf(scenario, sizeof scenario, "%s/scenarios/%s", CS_SOURCE_ROOT, published[_i].scenario);
	const char *sets[] = { published[_i].set };
	cs_scenario *sc = NULL;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_scenario_load(scenario, sets, published[_i].set ? 1 : 0, &sc, &d) == CS_OK,
		      "%s", d.msg);
	cs_nccltests t;
	ck_assert_msg(cs_nccltests_load(file, &t, &d) == CS_OK, "%s", d.msg);
	cs_coll_op op;
	cs_group_shape g;
	ck_assert_int_eq(cs_nccltests_op(&t, file, -1, &op, &d), CS_OK);
	ck_assert_msg(cs_nccltests_group(&t, file, &sc->cluster, &g, &d) == CS_OK, "%s", d.msg);
	double bytes[16], ns[16];
	ck_assert_uint_le(t.nrows, 16);
	for (size_t i = 0; i < t.nrows; i++) {
		bytes[i] = t.rows[i].bytes;
		ns[i] = 1e3 * t.rows[i].time_us[0];
	}
	cs_net_fit fit;
	ck_assert_int_eq(cs_net_fit_times(&sc->cluster, &sc->coll, op, &g, bytes, ns, t.nrows, &fit,
					  &d), CS_OK);
	ck_assert(fit.bandwidth_fit);
	cs_coll_spec fitted = cs_net_fit_apply(&sc->coll, &fit);
	cs_coll *co = cs_coll_new(&sc->cluster, &fitted);
	ck_assert_ptr_nonnull(co);
	for (size_t i = 0; i < t.nrows; i++) {
		double e = (double)cs_coll_time(co, op, &g, bytes[i], NULL) / ns[i] - 1;
		ck_assert_msg(fabs(e) < 0.05, "%s, %.0f B: %+.2f %%", published[_i].file, bytes[i],
			      100 * e);
	}
	cs_coll_free(co);
	if (published[_i].busbw_ring > 0) {
		cs_coll_spec ring = fitted;
		ring.algorithm = CS_ALGO_RING;
		co = cs_coll_new(&sc->cluster, &ring);
		ck_assert_ptr_nonnull(co);
		double b = 1e9, bus = b / (double)cs_coll_time(co, CS_COLL_ALL_REDUCE, &g, b, NULL) *
				      cs_coll_bus_factor(CS_COLL_ALL_REDUCE, g.nranks);
		ck_assert_msg(fabs(bus / published[_i].busbw_ring - 1) < 0.05, "ring %.1f GB/s", bus);
		bus = b / (double)cs_coll_time(co, CS_COLL_ALL_GATHER, &g, b, NULL) *
		      cs_coll_bus_factor(CS_COLL_ALL_GATHER, g.nranks);
		ck_assert_msg(fabs(bus / published[_i].busbw_all_gather - 1) < 0.05,
			      "all-gather %.1f GB/s", bus);
		cs_coll_free(co);
	}
	cs_nccltests_free(&t);
	cs_scenario_free(sc);
}
END_TEST

/* Two tests of one file (all-reduce, then all-gather, as a script runs them
 * into one log) fitted at once give the factors back, and the rms before
 * the fit is the start's misfit. */
START_TEST(fits_several_tests_at_once)
{
	cs_cluster_spec c = h100_cluster(1);
	cs_coll_spec truth = { .contention = 1, .scale_up_bw = 0.9, .latency = 1.25 };
	cs_group_shape g;
	char *ar = synthetic(&c, &truth, CS_COLL_ALL_REDUCE, 1, 8, &g);
	char *ag = synthetic(&c, &truth, CS_COLL_ALL_GATHER, 1, 8, &g);
	size_t na = strlen(ar), ng = strlen(ag);
	char *both = malloc(na + ng + 1);
	ck_assert_ptr_nonnull(both);
	memcpy(both, ar, na);
	memcpy(both + na, ag, ng + 1);
	free(ar);
	free(ag);
	cs_nccltests_set set;
	cs_diag d = { { 0 } };
	ck_assert_msg(cs_nccltests_parse_set(both, na + ng, "two.txt", &set, &d) == CS_OK, "%s",
		      d.msg);
	free(both);
	ck_assert_uint_eq(set.n, 2);
	cs_net_series series[2];
	double bytes[2][64], ns[2][64];
	for (size_t k = 0; k < 2; k++) {
		const cs_nccltests *t = &set.tests[k];
		cs_coll_op op;
		ck_assert_int_eq(cs_nccltests_op(t, "two.txt", -1, &op, &d), CS_OK);
		ck_assert_int_eq(op, k ? CS_COLL_ALL_GATHER : CS_COLL_ALL_REDUCE);
		ck_assert_uint_le(t->nrows, 64);
		for (size_t i = 0; i < t->nrows; i++) {
			bytes[k][i] = t->rows[i].bytes;
			ns[k][i] = 1e3 * t->rows[i].time_us[0];
		}
		series[k] = (cs_net_series){ .op = op, .g = &g, .bytes = bytes[k], .time_ns = ns[k],
					     .n = t->nrows };
	}
	cs_coll_spec start = { .contention = 1 };
	cs_net_fit f;
	ck_assert_msg(cs_net_fit_series(&c, &start, series, 2, &f, &d) == CS_OK, "%s", d.msg);
	ck_assert(!f.nic && f.bandwidth_fit && f.latency_fit);
	ck_assert_msg(fabs(f.bandwidth / 0.9 - 1) < 0.01, "bandwidth %.5f", f.bandwidth);
	ck_assert_msg(fabs(f.latency / 1.25 - 1) < 0.01, "latency %.5f", f.latency);
	ck_assert_msg(f.rms < 0.005 && f.rms_before > 0.05, "rms %.5f, before %.5f", f.rms,
		      f.rms_before);
	cs_nccltests_set_free(&set);
}
END_TEST

START_TEST(nothing_to_fit)
{
	cs_cluster_spec c = h100_cluster(1);
	cs_coll_spec s = { .contention = 1 };
	cs_group_shape g = { .nranks = 1, .nnodes = 1, .ranks_per_node = 1, .ndomains = 1 };
	double b = 8, t = 1e4;
	cs_net_fit f;
	cs_diag d = { { 0 } };
	ck_assert_int_eq(cs_net_fit_times(&c, &s, CS_COLL_ALL_REDUCE, &g, &b, &t, 1, &f, &d),
			 CS_ERR_INPUT);
	ck_assert_str_eq(d.msg, "nothing to fit: a group of one rank does not communicate");
}
END_TEST

/* What `clustersim coll` writes (report/nccl_out.h) reads back as
 * nccl-tests output: its test, its ranks and hosts, every size with the
 * tuner's time. */
START_TEST(predicted_output_reads_back)
{
	static const cs_coll_op ops[] = { CS_COLL_ALL_REDUCE, CS_COLL_ALL_GATHER, CS_COLL_BROADCAST };
	for (int op = 0; op < CS_COLL_OPS; op++)
		ck_assert_ptr_nonnull(cs_nccltests_name((cs_coll_op)op));
	cs_cluster_spec c = h100_cluster(2);
	cs_coll_spec spec = { .contention = 1 };
	cs_topo *topo = cs_topo_new(&c);
	cs_coll *co = cs_coll_new(&c, &spec);
	ck_assert(topo && co);
	cs_group_shape g = cs_topo_group(topo, 0, 1, 16);
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		cs_nccl_run r = { .c = &c, .op = ops[i], .g = &g, .n = 16, .min = 1024,
				  .max = 1 << 30, .factor = 4, .dtype = 0, .redop = 0 };
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		ck_assert_ptr_nonnull(f);
		ck_assert(!cs_nccl_write(f, false, &r, co, CS_ALGO_AUTO));
		fclose(f);
		cs_nccltests t;
		cs_diag d = { { 0 } };
		ck_assert_msg(cs_nccltests_parse(text, len, "coll.txt", &t, &d) == CS_OK, "%s", d.msg);
		free(text);
		ck_assert_str_eq(t.test, cs_nccltests_name(ops[i]));
		cs_coll_op op;
		ck_assert_int_eq(cs_nccltests_op(&t, "coll.txt", -1, &op, &d), CS_OK);
		ck_assert_int_eq(op, ops[i]);
		ck_assert_int_eq(t.nranks, 16);
		ck_assert_int_eq(t.nhosts, 2);
		ck_assert_uint_eq(t.nrows, 11);   /* 1 KiB to 1 GiB by 4 */
		for (size_t k = 0; k < t.nrows; k++) {
			double us = 1e-3 * (double)cs_coll_time(co, ops[i], &g, t.rows[k].bytes, NULL);
			ck_assert_double_eq_tol(t.rows[k].time_us[0], us, 0.005 + 1e-9);
			ck_assert_double_eq_tol(t.rows[k].time_us[1], us, 0.005 + 1e-9);
		}
		cs_nccltests_free(&t);
	}
	cs_coll_free(co);
	cs_topo_free(topo);
}
END_TEST

/* nccl-tests' -J JSON as coll writes it (report/nccl_out.h) reads back:
 * its test, its ranks as processes of -t x -g GPUs, every size with the
 * tuner's time; and the text's rows keep nccl-tests' widths: every time 7
 * characters and every row as long as the first, whatever the size. */
START_TEST(predicted_json_reads_back)
{
	cs_cluster_spec c = h100_cluster(4);
	cs_coll_spec spec = { .contention = 1 };
	cs_topo *topo = cs_topo_new(&c);
	cs_coll *co = cs_coll_new(&c, &spec);
	ck_assert(topo && co);
	cs_group_shape g = cs_topo_group(topo, 0, 1, 32);
	static const struct {
		int64_t threads, gpus;
	} shapes[] = { { 1, 1 }, { 1, 8 }, { 2, 4 } };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		cs_nccl_run r = { .c = &c, .op = CS_COLL_REDUCE_SCATTER, .g = &g, .n = 32, .min = 8,
				  .max = 16.0 * (1 << 30), .factor = 8, .nthreads = shapes[i].threads,
				  .ngpus = shapes[i].gpus, .iters = 20 };
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(cs_nccl_write_json(f, &r, co, "2026-01-01 00:00:00"), 0);
		fclose(f);
		cs_nccltests t;
		cs_diag d = { { 0 } };
		ck_assert_msg(cs_nccltests_parse(text, len, "coll.json", &t, &d) == CS_OK, "%s", d.msg);
		free(text);
		ck_assert_str_eq(t.test, "reduce_scatter_perf");
		ck_assert_int_eq(t.nranks, 32);
		ck_assert_int_eq(t.nhosts, 4);
		ck_assert_int_eq(t.ranks_per_host, 8);
		ck_assert_str_eq(t.gpu, "h100-sxm-80g");
		ck_assert_str_eq(t.redop, "sum");
		ck_assert_uint_eq(t.nrows, 9); /* 512 B (8 and 64 B hold no element per rank) to 8 GiB by 8 */
		for (size_t k = 0; k < t.nrows; k++) {
			double us = 1e-3 * (double)cs_coll_time(co, CS_COLL_REDUCE_SCATTER, &g,
							       t.rows[k].bytes, NULL);
			ck_assert_double_eq_tol(t.rows[k].time_us[0], us, 1e-6 + 1e-9);
			ck_assert_double_eq_tol(t.rows[k].time_us[1], us, 1e-6 + 1e-9);
		}
		cs_nccltests_free(&t);
		/* the text of the same run */
		f = open_memstream(&text, &len);
		ck_assert_ptr_nonnull(f);
		cs_nccl_write(f, false, &r, co, CS_ALGO_AUTO);
		fclose(f);
		size_t width = 0, rows = 0;
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			if (line[0] == '#')
				continue;
			char *proto = strrchr(line, ' '); /* the protocol's width varies */
			size_t w = (size_t)(proto - line);
			if (!width)
				width = w;
			ck_assert_msg(w == width, "'%s' is %zu wide, the first row %zu", line, w, width);
			/* 52 characters of size, count, type, redop and root, 2 blanks, the time */
			ck_assert_msg(line[53] == ' ' && line[60] != ' ' && line[61] == ' ',
				      "the time of '%s' does not end at column 61", line);
			rows++;
		}
		ck_assert_uint_eq(rows, 9);
		free(text);
	}
	cs_coll_free(co);
	cs_topo_free(topo);
}
END_TEST

/* -d all and -o all run every data type and reduction in nccl-tests' order. */
START_TEST(all_types_and_reductions_in_order)
{
	cs_cluster_spec c = h100_cluster(1);
	cs_coll_spec spec = { .contention = 1 };
	cs_topo *topo = cs_topo_new(&c);
	cs_coll *co = cs_coll_new(&c, &spec);
	ck_assert(topo && co);
	cs_group_shape g = cs_topo_group(topo, 0, 1, 8);
	cs_nccl_run r = { .c = &c, .op = CS_COLL_ALL_REDUCE, .g = &g, .n = 8, .min = 1024,
			  .max = 1024, .factor = 2, .all_dtypes = true, .all_redops = true };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	cs_nccl_write(f, false, &r, co, CS_ALGO_AUTO);
	fclose(f);
	static const char *const types[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64",
					     "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2" };
	static const char *const ops[] = { "sum", "prod", "max", "min", "avg", "mulsum" };
	size_t k = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		char type[16], op[16];
		ck_assert_int_eq(sscanf(line, "%*s %*s %15s %15s", type, op), 2);
		ck_assert_str_eq(type, types[k / 6]);
		ck_assert_str_eq(op, ops[k % 6]);
		k++;
	}
	ck_assert_uint_eq(k, 72);
	free(text);
	cs_coll_free(co);
	cs_topo_free(topo);
}
END_TEST

static int count_of(const char *s, const char *what)
{
	int n = 0;
	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* coll's chart (report/nccl_out.h): a dot per row, a line per run of sizes
 * one algorithm and protocol take, each pair once in the legend. */
/* The tuner of `nodes` H100 servers and the group of their first n GPUs. */
typedef struct tuner {
	cs_cluster_spec c;
	cs_topo *topo;
	cs_coll *co;
	cs_group_shape g;
} tuner;

static void tuner_open(tuner *t, int nodes, int64_t n)
{
	cs_coll_spec spec = { .contention = 1 };
	t->c = h100_cluster(nodes);
	t->topo = cs_topo_new(&t->c);
	t->co = cs_coll_new(&t->c, &spec);
	ck_assert(t->topo && t->co);
	t->g = cs_topo_group(t->topo, 0, 1, n);
}

START_TEST(chart_has_a_line_per_algorithm_and_protocol)
{
	tuner t;
	tuner_open(&t, 2, 16);
	cs_coll *co = t.co;
	cs_group_shape g = t.g;
	cs_nccl_run r = { .c = &t.c, .op = CS_COLL_ALL_REDUCE, .g = &g, .n = 16, .min = 1024,
			  .max = 1 << 30, .factor = 4, .dtype = 0, .redop = 0 };
	/* the runs and pairs the tuner picks, size by size */
	char pairs[16][64], last[64] = "";
	int npairs = 0, runs = 0;
	for (double b = 1024; b <= (1 << 30); b *= 4) {
		cs_coll_choice ch;
		cs_coll_time(co, CS_COLL_ALL_REDUCE, &g, b, &ch);
		char pair[64];
		snprintf(pair, sizeof pair, ">%s, %s</text>", cs_coll_choice_name(CS_COLL_ALL_REDUCE, &ch),
			 cs_coll_proto_name(ch.proto));
		runs += strcmp(pair, last) != 0;
		snprintf(last, sizeof last, "%s", pair);
		int seen = 0;
		for (int k = 0; k < npairs; k++)
			seen |= !strcmp(pairs[k], pair);
		if (!seen)
			snprintf(pairs[npairs++], sizeof pairs[0], "%s", pair);
	}
	ck_assert_int_ge(npairs, 2); /* the tuner switches in this range */
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(cs_nccl_write_svg(f, &r, co, CS_ALGO_AUTO), 0);
	fclose(f);
	ck_assert_int_eq(count_of(svg, "<circle"), 11);
	ck_assert_int_ge(count_of(svg, "<polyline"), runs);
	for (int k = 0; k < npairs; k++)
		ck_assert_msg(count_of(svg, pairs[k]) == 1, "'%s' is not once in the legend", pairs[k]);
	ck_assert_ptr_nonnull(strstr(svg, ">all_reduce bus bandwidth on 16 GPUs (float, all_reduce_perf)</text>"));
	free(svg);
	cs_coll_free(t.co);
	cs_topo_free(t.topo);
}
END_TEST

/* calibrate's chart: per test a ring per size measured and two lines, the
 * model before (dashed) and after; the tests named in the legend. */
START_TEST(fit_chart_has_the_measured_points_and_both_models)
{
	double bytes[3] = { 1e6, 1e7, 1e8 }, measured[3] = { 100e3, 300e3, 2e6 };
	double before[3] = { 90e3, 280e3, 2.1e6 }, after[3] = { 101e3, 299e3, 2e6 };
	cs_nccl_fit_series s[2] = {
		{ "all_reduce on 8 ranks", 1.75, 3, bytes, measured, before, after },
		{ "all_gather on 8 ranks", 0.875, 2, bytes, measured, before, after },
	};
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(cs_nccl_write_fit_svg(f, "a fit", s, 2), 0);
	fclose(f);
	ck_assert_int_eq(count_of(svg, "<circle"), 3 + 2 + 1); /* and the legend's */
	ck_assert_int_eq(count_of(svg, "<polyline"), 4);
	ck_assert_int_eq(count_of(svg, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" stroke-dasharray"), 1);
	ck_assert_ptr_nonnull(strstr(svg, ">all_gather on 8 ranks</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">before the fit</text>"));
	/* the highest point, 1e8 B in 2 ms at 1.75: 87.5 GB/s, under the axis' top */
	ck_assert_ptr_nonnull(strstr(svg, ">100</text>"));
	free(svg);
}
END_TEST

static Suite *nccltests_suite(void)
{
	Suite *s = suite_create("nccltests");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, parses_group_and_rows);
	tcase_add_loop_test(tc, bad_input_is_an_error_at_its_place, 0,
			    (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, nul_byte_is_refused);
	tcase_add_test(tc, launcher_prefixes_are_stripped);
	tcase_add_test(tc, mpi_build_names_its_op);
	tcase_add_test(tc, root_out_of_range_is_no_root);
	tcase_add_test(tc, many_hosts_are_counted_once);
	tcase_add_test(tc, op_from_the_bus_factor);
	tcase_add_test(tc, predicted_output_reads_back);
	tcase_add_test(tc, predicted_json_reads_back);
	tcase_add_test(tc, all_types_and_reductions_in_order);
	tcase_add_test(tc, collapsed_whitespace_reads_the_same);
	tcase_add_test(tc, cputime_columns_are_the_times);
	tcase_add_test(tc, timestamp_column_is_two_tokens);
	tcase_add_test(tc, several_tests_in_one_file);
	tcase_add_test(tc, json_output_reads_as_the_text);
	tcase_add_loop_test(tc, bad_json_is_an_error_at_its_place, 0,
			    (int)(sizeof bad_json / sizeof bad_json[0]));
	tcase_add_test(tc, json_group_is_processes_times_gpus);
	tcase_add_test(tc, gpu_family_match);
	tcase_add_test(tc, chart_has_a_line_per_algorithm_and_protocol);
	tcase_add_test(tc, fit_chart_has_the_measured_points_and_both_models);
	suite_add_tcase(s, tc);
	tc = tcase_create("fit");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, recovers_nvlink_factors_on_one_node);
	tcase_add_test(tc, recovers_nic_factors_across_nodes);
	tcase_add_test(tc, moves_to_nvlink_when_the_nic_does_not_bind);
	tcase_add_test(tc, nothing_to_fit);
	tcase_add_test(tc, fits_several_tests_at_once);
	tcase_add_loop_test(tc, published_points_within_5_percent, 0,
			    (int)(sizeof published / sizeof published[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(nccltests_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
