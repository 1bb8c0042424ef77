/*
 * args.c - option parsing shared by the subcommands.
 */
#include "cli/args.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "hw/files.h"
#include "report/out.h"

int cs_args_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cs_args_jobs(const cs_args *a, const char *opt, const char *val, int64_t hi, int *out)
{
	int64_t n;
	if (cs_args_parse_int(val, 1, hi, &n))
		return cs_args_fail(a, "'--%s' needs a whole number from 1 to %lld (got '%s')", opt,
				    (long long)hi, val);
	*out = (int)n;
	return 0;
}

void cs_args_init(cs_args *a, const char *cmd, int argc, char **argv)
{
	a->cmd = cmd;
	a->argc = argc;
	a->argv = argv;
	a->i = 1;
	a->err = stderr;
}

int cs_args_fail(const cs_args *a, const char *fmt, ...)
{
	va_list ap;
	fprintf(a->err, "clustersim %s: ", a->cmd);
	va_start(ap, fmt);
	vfprintf(a->err, fmt, ap);
	va_end(ap);
	fprintf(a->err, "\n(see 'clustersim %s --help')\n", a->cmd);
	return 2;
}

static int unknown(const cs_args *a, const cs_opt *opts, const char *name)
{
	const char *names[64];
	size_t n = 0;
	for (; opts[n].name && n < 64; n++)
		names[n] = opts[n].name;
	const char *s = cs_suggest(name, names, n);
	if (s)
		cs_args_fail(a, "unknown option '--%s' (did you mean '--%s'?)", name, s);
	else
		cs_args_fail(a, "unknown option '--%s'", name);
	return CS_ARGS_ERROR;
}

int cs_args_next(cs_args *a, const cs_opt *opts, const char **val)
{
	*val = NULL;
	if (a->i >= a->argc)
		return CS_ARGS_END;
	char *arg = a->argv[a->i++];
	if (strncmp(arg, "--", 2) != 0 || arg[2] == 0) {
		if (arg[0] == '-' && arg[1] != 0 && strcmp(arg, "-h") != 0) {
			cs_args_fail(a, "unknown option '%s'", arg);
			return CS_ARGS_ERROR;
		}
		if (strcmp(arg, "-h") == 0)
			arg = "--help";
		else {
			*val = arg;
			return CS_ARGS_POSITIONAL;
		}
	}
	const char *name = arg + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	for (const cs_opt *o = opts; o->name; o++) {
		if (strlen(o->name) != len || strncmp(o->name, name, len) != 0)
			continue;
		if (!o->has_arg) {
			if (eq) {
				cs_args_fail(a, "option '--%s' takes no value", o->name);
				return CS_ARGS_ERROR;
			}
			return o->id;
		}
		if (eq) {
			*val = eq + 1;
		} else if (a->i < a->argc) {
			*val = a->argv[a->i++];
		} else {
			cs_args_fail(a, "option '--%s' needs a value", o->name);
			return CS_ARGS_ERROR;
		}
		return o->id;
	}
	char buf[128];
	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 120 ? len : 120), name);
	return unknown(a, opts, buf);
}

int cs_args_scenario(const cs_args *a, cs_scenario_args *sa, int is_set, const char *val)
{
	if (is_set) {
		if (sa->nsets == CS_ARGS_MAX_SETS)
			return cs_args_fail(a, "more than %d '--set' options", CS_ARGS_MAX_SETS);
		sa->sets[sa->nsets++] = val;
		return 0;
	}
	if (sa->file)
		return cs_args_fail(a, "unexpected argument '%s'", val);
	sa->file = cs_cli_scenario_find(a, val, sa->found, sizeof sa->found);
	return sa->file ? 0 : 2;
}

#ifndef CS_SCENARIO_DIR
#define CS_SCENARIO_DIR "/usr/local/share/clustersim/scenarios"
#endif

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether this binary is the one of its build folder (not installed). */
static bool uninstalled(void)
{
#if defined(CS_BUILD_DIR) && defined(CS_SOURCE_SCENARIO_DIR)
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	struct stat here, build;
	if (len <= 0)
		return false;
	exe[len] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = 0;
	return stat(exe[0] ? exe : "/", &here) == 0 && stat(CS_BUILD_DIR, &build) == 0 &&
	       here.st_dev == build.st_dev && here.st_ino == build.st_ino;
#else
	return false;
#endif
}

int cs_cli_scenario_dirs(const char *dirs[2])
{
	int n = 0;
	if (is_dir("scenarios"))
		dirs[n++] = "scenarios";
#ifdef CS_SOURCE_SCENARIO_DIR
	dirs[n++] = uninstalled() ? CS_SOURCE_SCENARIO_DIR : CS_SCENARIO_DIR;
#else
	dirs[n++] = CS_SCENARIO_DIR;
#endif
	return n;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && strcmp(s + n - m, tail) == 0;
}

const char *cs_cli_scenario_find(const cs_args *a, const char *arg, char *buf, size_t n)
{
	struct stat st;
	if (!arg[0] || strcmp(arg, "-") == 0 || arg[0] == '/' || stat(arg, &st) == 0)
		return arg;
	const char *dirs[2];
	int nd = cs_cli_scenario_dirs(dirs);
	bool yaml = ends_with(arg, ".yaml") || ends_with(arg, ".yml");
	for (int d = 0; d < nd; d++)
		for (int ext = 0; ext < (yaml ? 1 : 2); ext++) {
			int len = snprintf(buf, n, "%s/%s%s", dirs[d], arg, ext ? ".yaml" : "");
			if (len > 0 && (size_t)len < n && stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
				fprintf(a->err, "clustersim %s: scenario '%s': reading %s\n", a->cmd, arg,
					buf);
				return buf;
			}
		}
	if (yaml || strchr(arg, '/'))
		return arg;
	cs_args_fail(a,
		     "no file '%s' and no shipped scenario of that name in %s%s%s (see 'clustersim list "
		     "scenarios')",
		     arg, dirs[0], nd > 1 ? " or " : "", nd > 1 ? dirs[1] : "");
	return NULL;
}

int cs_trace_args_take(cs_args *a, int id, const char *val, int o_set, int o_steps, int o_classes,
		       cs_trace_args *t)
{
	if (id == o_classes) {
		t->classes = val;
		return 1;
	}
	if (id == CS_ARGS_POSITIONAL) {
		if (!t->trace)
			t->trace = val;
		else if (cs_args_scenario(a, &t->sc, 0, val))
			return 2;
		return 1;
	}
	if (id == o_set)
		return cs_args_scenario(a, &t->sc, 1, val) ? 2 : 1;
	if (id == o_steps) {
		if (cs_args_parse_int(val, 1, 1000000, &t->steps))
			return cs_args_fail(a,
					    "'--steps' needs a whole number from 1 to 1000000 "
					    "(got '%s')",
					    val);
		return 1;
	}
	return 0;
}

int cs_trace_args_check(cs_args *a, const cs_trace_args *t)
{
	if (!t->trace)
		return cs_args_fail(a, "no trace file given");
	if (!t->sc.file)
		return cs_args_fail(a, "no scenario file given");
	return 0;
}

int cs_cli_color(int fd)
{
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return 0;
	return isatty(fd);
}

int cs_cli_check_outputs(const char *cmd, const char *const *outs, size_t nouts, const char *const *inputs,
			 size_t ninputs, const cs_scenario *sc)
{
	cs_diag diag = { { 0 } };
	char named[CS_HW_NAMED_FILES][CS_HW_NAMED_PATH];
	const char *all[CS_CLI_MAX_INPUTS + CS_HW_NAMED_FILES];
	size_t nall = 0;
	for (size_t i = 0; i < ninputs && nall < CS_CLI_MAX_INPUTS; i++)
		all[nall++] = inputs[i];
	for (int i = 0, n = sc ? cs_hw_named_files(sc, named) : 0; i < n; i++)
		all[nall++] = named[i];
	inputs = all;
	ninputs = nall;
	for (size_t i = 0; i < nouts; i++) {
		if (!outs[i])
			continue;
		for (size_t j = 0; j < i; j++)
			if (outs[j] && cs_out_same(outs[i], outs[j])) {
				fprintf(stderr, "clustersim %s: '%s' is given for two outputs\n", cmd,
					outs[i]);
				return 2;
			}
		if (cs_out_check(outs[i], inputs, ninputs, &diag) != 0) {
			fprintf(stderr, "clustersim %s: %s\n", cmd, CS_CLEAN(diag));
			return 2;
		}
	}
	return 0;
}

char *cs_cli_clean(char *msg, size_t cap)
{
	char out[2048];
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)msg; *p && n + 5 < sizeof out; p++) {
		if (*p < 0x20 || *p == 0x7f)
			n += (size_t)snprintf(out + n, sizeof out - n, "\\x%02x", *p);
		else
			out[n++] = (char)*p;
	}
	if (cap == 0)
		return msg;
	if (n > cap - 1)
		n = cap - 1; /* truncated as snprintf would */
	memcpy(msg, out, n);
	msg[n] = 0;
	return msg;
}

int cs_cli_write(const char *cmd, const char *path, cs_cli_writer *write, const void *ctx)
{
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open(path, &diag);
	if (!o) {
		fprintf(stderr, "clustersim %s: %s\n", cmd, CS_CLEAN(diag));
		return 1;
	}
	if (write(cs_out_file(o), ctx) != 0) {
		cs_out_abort(o);
		fprintf(stderr, "clustersim %s: cannot write '%s'\n", cmd, path);
		return 1;
	}
	if (cs_out_commit(o, &diag) != 0) {
		fprintf(stderr, "clustersim %s: %s\n", cmd, CS_CLEAN(diag));
		return 1;
	}
	return 0;
}
