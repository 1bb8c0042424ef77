/*
 * out.c - atomic output files, and JSON/CSV formatting helpers.
 *
 * The temporary file sits next to its target (same directory, so the
 * rename stays on one file system and is atomic); its name carries the pid
 * so concurrent runs writing the same target do not collide.
 */
#include "report/out.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cs_out {
	FILE *f;
	bool is_stdout;
	char *path;   /* the target */
	char *tmp;    /* the file being written */
};

static void diagf(cs_diag *diag, const char *fmt, ...)
{
	if (!diag)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
	va_end(ap);
}

static void out_release(cs_out *o)
{
	free(o->path);
	free(o->tmp);
	free(o);
}

cs_out *cs_out_open(const char *path, cs_diag *diag)
{
	cs_out *o = calloc(1, sizeof(*o));
	if (!o) {
		diagf(diag, "cannot open '%s': out of memory", path);
		return NULL;
	}
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		o->is_stdout = true;
		return o;
	}
	size_t n = strlen(path) + 32;
	o->path = strdup(path);
	o->tmp = malloc(n);
	if (!o->path || !o->tmp) {
		out_release(o);
		diagf(diag, "cannot open '%s': out of memory", path);
		return NULL;
	}
	snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		diagf(diag, "cannot open '%s': %s", path, strerror(errno));
		out_release(o);
		return NULL;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		diagf(diag, "cannot open '%s': %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		out_release(o);
		return NULL;
	}
	return o;
}

FILE *cs_out_file(cs_out *o)
{
	return o->f;
}

/* Best effort: make the rename itself durable. */
static void sync_parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	if (!dir)
		return;
	int fd = open(dir, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

int cs_out_commit(cs_out *o, cs_diag *diag)
{
	int rc = 0;
	if (o->is_stdout) {
		errno = 0;
		if (fflush(o->f) != 0 || ferror(o->f)) {
			diagf(diag, "cannot write '-': %s", strerror(errno ? errno : EIO));
			rc = -1;
		}
		out_release(o);
		return rc;
	}
	int err = 0;
	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		err = errno ? errno : EIO;
	else if (fsync(fileno(o->f)) != 0)
		err = errno;
	if (fclose(o->f) != 0 && !err)
		err = errno;
	if (!err && rename(o->tmp, o->path) != 0)
		err = errno;
	if (err) {
		unlink(o->tmp);
		diagf(diag, "cannot write '%s': %s", o->path, strerror(err));
		rc = -1;
	} else {
		sync_parent_dir(o->path);
	}
	out_release(o);
	return rc;
}

void cs_out_abort(cs_out *o)
{
	if (!o)
		return;
	if (o->is_stdout) {
		fflush(o->f);
	} else {
		fclose(o->f);
		unlink(o->tmp);
	}
	out_release(o);
}

/* -- numbers -- */

int cs_num_fmt(char buf[CS_NUM_BUF], double v)
{
	if (!isfinite(v))
		return snprintf(buf, CS_NUM_BUF, "null");
	/* If a shorter form reads back, %.15g already finds it (%g drops
	 * trailing zeros); only values needing 16 or 17 digits go on. */
	int len = 0;
	for (int prec = 15; prec <= 17; prec++) {
		len = snprintf(buf, CS_NUM_BUF, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return len;
}

void cs_json_num(FILE *f, double v)
{
	char buf[CS_NUM_BUF];
	cs_num_fmt(buf, v);
	fputs(buf, f);
}

void cs_csv_num(FILE *f, double v)
{
	if (!isfinite(v))
		return;
	cs_json_num(f, v);
}

/* -- strings -- */

void cs_json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned c = *p;
		switch (c) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				putc((int)c, f);
		}
	}
	putc('"', f);
}

void cs_csv_field(FILE *f, const char *s)
{
	if (!s || !*s)
		return;
	size_t n = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") != NULL || s[0] == ' ' || s[n - 1] == ' ';
	if (!quote) {
		fputs(s, f);
		return;
	}
	putc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			putc('"', f);
		putc(*p, f);
	}
	putc('"', f);
}

/* -- the JSON writer -- */

void cs_jw_init(cs_jw *w, FILE *f, int indent)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->indent = indent < 0 ? 0 : indent;
}

static void jw_newline(cs_jw *w, int depth)
{
	if (w->indent == 0)
		return;
	putc('\n', w->f);
	for (int i = 0; i < depth * w->indent; i++)
		putc(' ', w->f);
}

/* Before any value: the comma and line break it needs, or none after a key. */
static void jw_value(cs_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0) {
		if (w->any[0])
			w->bad = true;  /* a second top-level value */
		w->any[0] = true;
		return;
	}
	if (w->is_obj[w->depth])
		w->bad = true;  /* a value in an object needs a key */
	if (w->any[w->depth])
		putc(',', w->f);
	w->any[w->depth] = true;
	jw_newline(w, w->depth);
}

static void jw_open(cs_jw *w, bool obj)
{
	jw_value(w);
	if (w->depth == CS_JW_MAX_DEPTH) {
		w->bad = true;
		return;
	}
	putc(obj ? '{' : '[', w->f);
	w->depth++;
	w->any[w->depth] = false;
	w->is_obj[w->depth] = obj;
}

static void jw_close(cs_jw *w, bool obj)
{
	if (w->depth == 0 || w->is_obj[w->depth] != obj || w->after_key) {
		w->bad = true;
		return;
	}
	if (w->any[w->depth])
		jw_newline(w, w->depth - 1);
	putc(obj ? '}' : ']', w->f);
	w->depth--;
}

void cs_jw_begin_obj(cs_jw *w) { jw_open(w, true); }
void cs_jw_end_obj(cs_jw *w) { jw_close(w, true); }
void cs_jw_begin_arr(cs_jw *w) { jw_open(w, false); }
void cs_jw_end_arr(cs_jw *w) { jw_close(w, false); }

void cs_jw_key(cs_jw *w, const char *key)
{
	if (w->depth == 0 || !w->is_obj[w->depth] || w->after_key || !key) {
		w->bad = true;
		return;
	}
	if (w->any[w->depth])
		putc(',', w->f);
	w->any[w->depth] = true;
	jw_newline(w, w->depth);
	cs_json_str(w->f, key);
	fputs(w->indent ? ": " : ":", w->f);
	w->after_key = true;
}

void cs_jw_str(cs_jw *w, const char *s)
{
	jw_value(w);
	cs_json_str(w->f, s);
}

void cs_jw_num(cs_jw *w, double v)
{
	jw_value(w);
	cs_json_num(w->f, v);
}

void cs_jw_int(cs_jw *w, int64_t v)
{
	jw_value(w);
	fprintf(w->f, "%" PRId64, v);
}

void cs_jw_bool(cs_jw *w, bool v)
{
	jw_value(w);
	fputs(v ? "true" : "false", w->f);
}

void cs_jw_null(cs_jw *w)
{
	jw_value(w);
	fputs("null", w->f);
}

void cs_jw_kv_str(cs_jw *w, const char *key, const char *s)
{
	cs_jw_key(w, key);
	cs_jw_str(w, s);
}

void cs_jw_kv_num(cs_jw *w, const char *key, double v)
{
	cs_jw_key(w, key);
	cs_jw_num(w, v);
}

void cs_jw_kv_int(cs_jw *w, const char *key, int64_t v)
{
	cs_jw_key(w, key);
	cs_jw_int(w, v);
}

void cs_jw_kv_bool(cs_jw *w, const char *key, bool v)
{
	cs_jw_key(w, key);
	cs_jw_bool(w, v);
}

int cs_jw_finish(cs_jw *w)
{
	if (w->indent && w->any[0])
		putc('\n', w->f);
	return (w->bad || w->depth != 0 || w->after_key || !w->any[0]) ? -1 : 0;
}
