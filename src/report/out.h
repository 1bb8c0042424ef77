/*
 * out.h - output files and the small formatters every writer uses.
 *
 * cs_out writes a file atomically: cs_out_open creates "<path>.tmp.XXXXXX"
 * (mkstemp, with the old file's mode and owner), the writer fills
 * cs_out_file(o), and cs_out_commit flushes, fsyncs and renames it over
 * <path>, so a run that fails or is interrupted never leaves a truncated
 * result behind (a signal that ends the process removes the temporary
 * file). A symlink is resolved and its target written. A device
 * (/dev/stdout, /dev/null), a pipe, a file with several hard links or the
 * file a standard stream has open is written in place, but only at commit:
 * until then the result is staged in an anonymous temporary file. A
 * directory or a file without write permission is refused. The path "-"
 * means standard output (commit only flushes). Write errors read "cannot
 * write 'PATH': reason".
 *
 * Ownership: cs_out_open allocates; cs_out_commit and cs_out_abort both
 * release the handle (and close the file), whatever they return.
 *
 * The JSON and CSV helpers write to any FILE *. Numbers use the shortest
 * "%.*g" form that reads back (strtod) to the same double; JSON has no NaN
 * or infinity, so those are written as null (and as an empty CSV field).
 */
#ifndef CS_REPORT_OUT_H
#define CS_REPORT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clustersim/clustersim.h"

typedef struct cs_out cs_out;

/* NULL with a message in *diag (when not NULL) on error. */
cs_out *cs_out_open(const char *path, cs_diag *diag);
FILE *cs_out_file(cs_out *o);
/* The temporary file's path, which holds what was written and flushed
 * (a signal that ends the process removes it); NULL when the result is
 * staged anonymously (in place) or goes to standard output. */
const char *cs_out_staged(const cs_out *o);
/* Before the work that fills an output: 0 when `path` can be written
 * (decided from stat and access: nothing is created, opened or truncated),
 * -1 with a message when it cannot or when it is the same file (device and
 * inode) as one of inputs[0..ninputs) (NULL and "-" entries skipped). */
int cs_out_check(const char *path, const char *const *inputs, size_t ninputs, cs_diag *diag);
/* Whether two outputs name one file: the same path, one existing regular
 * file under two names, or, neither existing yet, one name in one folder
 * (symlinks followed; "-" is never the same). */
bool cs_out_same(const char *a, const char *b);
/* 0, or -1 with a message in *diag; on error the temporary file is removed
 * and <path> is left as it was. */
int cs_out_commit(cs_out *o, cs_diag *diag);
/* Close and remove the temporary file; <path> is left as it was. */
void cs_out_abort(cs_out *o);

/* Shortest round-trip decimal form of a finite v into buf (>= 32 bytes);
 * "null" for NaN and infinities. Returns the length. */
#define CS_NUM_BUF 32
int cs_num_fmt(char buf[CS_NUM_BUF], double v);

/* A JSON string literal with its quotes; NULL writes null. Bytes >= 0x80
 * (UTF-8) pass through unchanged. */
void cs_json_str(FILE *f, const char *s);
void cs_json_num(FILE *f, double v);

/* One CSV field, quoted per RFC 4180 when it holds a comma, a quote, a line
 * break or leading/trailing space; NULL writes an empty field. */
void cs_csv_field(FILE *f, const char *s);
/* A number as a CSV field; NaN and infinities write an empty field. */
void cs_csv_num(FILE *f, double v);

/*
 * cs_jw - a streaming JSON writer that places the commas and, with
 * indent > 0, the line breaks. A plain struct on the caller's stack; it owns
 * nothing.
 *
 *   cs_jw w;
 *   cs_jw_init(&w, f, 2);
 *   cs_jw_begin_obj(&w);
 *   cs_jw_key(&w, "step_time_s"); cs_jw_num(&w, 1.25);
 *   cs_jw_kv_str(&w, "name", "llama");
 *   cs_jw_end_obj(&w);
 *   if (cs_jw_finish(&w) != 0) ... misuse (unbalanced, too deep) ...
 */
#define CS_JW_MAX_DEPTH 64

typedef struct cs_jw {
	FILE *f;
	int indent; /* spaces per level; 0 writes one line */
	int depth;
	bool after_key;                /* a key was written, its value comes next */
	bool bad;                      /* misuse seen: unbalanced, too deep, key outside an object */
	bool any[CS_JW_MAX_DEPTH + 1]; /* the container at this depth has a member */
	bool is_obj[CS_JW_MAX_DEPTH + 1];
} cs_jw;

void cs_jw_init(cs_jw *w, FILE *f, int indent);
void cs_jw_begin_obj(cs_jw *w);
void cs_jw_end_obj(cs_jw *w);
void cs_jw_begin_arr(cs_jw *w);
void cs_jw_end_arr(cs_jw *w);
void cs_jw_key(cs_jw *w, const char *key);
void cs_jw_str(cs_jw *w, const char *s);
void cs_jw_num(cs_jw *w, double v);
void cs_jw_int(cs_jw *w, int64_t v);
void cs_jw_bool(cs_jw *w, bool v);
void cs_jw_null(cs_jw *w);
void cs_jw_kv_str(cs_jw *w, const char *key, const char *s);
void cs_jw_kv_num(cs_jw *w, const char *key, double v);
void cs_jw_kv_int(cs_jw *w, const char *key, int64_t v);
void cs_jw_kv_bool(cs_jw *w, const char *key, bool v);
/* Ends the document (a newline when indenting). 0 when the document is
 * complete and well formed, -1 otherwise. */
int cs_jw_finish(cs_jw *w);

/* Text inside an XML (SVG) element or attribute: & < > " ' escaped,
 * control characters other than tab and newline dropped. */
void cs_xml_text(FILE *f, const char *s);

#endif
