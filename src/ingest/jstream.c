/*
 * jstream.c - stream the elements of one array of a JSON document
 * (jstream.h). A byte-at-a-time scanner keeps a stack of open brackets,
 * whether it is in a string, the bare token being read (numbers and
 * literals, checked when they end), the top-level member's key, and the
 * element of the streamed array being copied out; each complete element
 * goes to jansson. Outside the elements it checks the grammar itself
 * (what may follow what, per open bracket) and words its errors as
 * jansson does, so a document reads the same either way.
 */
#include "ingest/jstream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 1024
#define CHUNK ((size_t)256 << 10)

/* What may come next in the innermost open value. */
typedef enum want {
	W_VALUE, /* after '[' is W_VALUE_OR_CLOSE; after ',' or ':' a value */
	W_VALUE_OR_CLOSE,
	W_KEY,          /* after ',' in an object */
	W_KEY_OR_CLOSE, /* after '{' */
	W_COLON,
	W_COMMA_OR_CLOSE, /* after a value inside an array or object */
	W_END             /* after the top-level value */
} want;

typedef struct scan {
	const cs_jstream_opts *o;
	cs_jstream_each each;
	void *arg;
	cs_diag *diag;
	char stack[MAX_DEPTH + 1]; /* open brackets; stack[0] is the top level */
	want want[MAX_DEPTH + 1];  /* per level */
	int depth;                 /* open brackets */
	bool in_string, escape, is_key;
	int hex;                /* hex digits of a \\u escape still to come */
	char tok[64];           /* the bare token being read */
	int ntok;               /* its length; -1 when none */
	long tok_line, tok_col; /* where its last byte stood */
	bool tok_long;          /* longer than tok[] */
	char key[64];           /* the top-level member key being read */
	int nkey;
	bool key_long;
	bool target_next; /* the next value is the streamed array's member's */
	bool streaming;   /* inside the streamed array */
	bool done_target;
	bool second_next; /* ... the second array's (o->key2) member's */
	bool second;      /* the array streamed is o->key2's */
	bool done_second;
	bool whole_next; /* the next value is o->key3's, handed over whole */
	bool whole;      /* the element being copied is that value */
	bool done_whole;
	bool *found;
	char *el; /* the element being copied */
	size_t nel, capel;
	bool in_el;
	long el_line, el_col;
	size_t index;
	size_t nfirst;  /* elements of the first array, once it has ended */
	long line, col; /* of the current byte (a newline ends its line) */
} scan;

static cs_status not_json(scan *s, long line, long col, const char *what, const char *near)
{
	snprintf(s->diag->msg, sizeof s->diag->msg, "%.400s:%ld:%ld: not JSON: %s near %s%.60s%s", s->o->name,
		 line, col, what, near[0] ? "'" : "", near[0] ? near : "end of file", near[0] ? "'" : "");
	return CS_ERR_INPUT;
}

/* The error for `near` where it cannot stand, in jansson's words. */
static cs_status misplaced(scan *s, long line, long col, const char *near)
{
	switch (s->want[s->depth]) {
	case W_KEY:
	case W_KEY_OR_CLOSE: return not_json(s, line, col, "string or '}' expected", near);
	case W_COLON: return not_json(s, line, col, "':' expected", near);
	case W_COMMA_OR_CLOSE:
		return not_json(s, line, col, s->stack[s->depth] == '[' ? "']' expected" : "'}' expected",
				near);
	case W_END: return not_json(s, line, col, "end of file expected", near);
	default:
		return not_json(s, line, col, s->depth == 0 ? "'[' or '{' expected" : "unexpected token",
				near);
	}
}

static cs_status nomem(scan *s)
{
	snprintf(s->diag->msg, sizeof s->diag->msg, "out of memory reading '%.400s'", s->o->name);
	return CS_ERR_NOMEM;
}

static cs_status copy(scan *s, char c)
{
	if (s->nel == s->capel) {
		if (s->capel >= s->o->max_element) {
			snprintf(s->diag->msg, sizeof s->diag->msg,
				 "'%.400s': element %zu of '%.60s' is "
				 "larger than the limit of %zu bytes",
				 s->o->name, s->whole ? 0 : s->index,
				 s->whole    ? s->o->key3
				 : s->second ? s->o->key2
					     : s->o->key,
				 s->o->max_element);
			return CS_ERR_INPUT;
		}
		size_t ncap = s->capel ? 2 * s->capel : 4096;
		if (ncap > s->o->max_element)
			ncap = s->o->max_element;
		char *n = realloc(s->el, ncap);
		if (!n)
			return nomem(s);
		s->el = n;
		s->capel = ncap;
	}
	s->el[s->nel++] = c;
	return CS_OK;
}

/* The element copied out is whole: parse it and hand it over. */
static cs_status element_done(scan *s)
{
	json_error_t err;
	json_t *v = json_loadb(s->el, s->nel, JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &err);
	bool whole = s->whole;
	s->in_el = false;
	s->whole = false;
	s->nel = 0;
	if (!v) {
		if (json_error_code(&err) == json_error_out_of_memory)
			return nomem(s);
		long line = s->el_line + err.line - 1;
		long col = err.line == 1 ? s->el_col - 1 + err.column : err.column;
		snprintf(s->diag->msg, sizeof s->diag->msg, "%.400s:%ld:%ld: not JSON: %s", s->o->name, line,
			 col, err.text);
		return CS_ERR_INPUT;
	}
	cs_status st = whole       ? s->o->each3(s->arg, v, 0)
		       : s->second ? s->o->each2(s->arg, v, s->index++)
				   : s->each(s->arg, v, s->index++);
	json_decref(v);
	return st;
}

/* A value starts here: is one allowed, and is it an element? */
static cs_status value_starts(scan *s, long line, long col, const char *near, bool container)
{
	want w = s->want[s->depth];
	if (w != W_VALUE && w != W_VALUE_OR_CLOSE)
		return misplaced(s, line, col, near);
	if (s->depth == 0 && !container)
		return misplaced(s, line, col, near);
	if (s->streaming && s->depth == 2 && !s->in_el) {
		s->in_el = true;
		s->el_line = line;
		s->el_col = col;
	} else if (s->whole_next && s->depth == 1) {
		s->whole_next = false;
		s->done_whole = true;
		s->in_el = s->whole = true;
		s->el_line = line;
		s->el_col = col;
	}
	return CS_OK;
}

/* The value at the current depth has ended. */
static cs_status value_ends(scan *s)
{
	s->want[s->depth] = s->depth == 0 ? W_END : W_COMMA_OR_CLOSE;
	if (s->in_el && s->depth == (s->whole ? 1 : 2))
		return element_done(s);
	return CS_OK;
}

/* A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number_ok(const char *t, const char *end)
{
	if (t < end && *t == '-')
		t++;
	if (t == end || *t < '0' || *t > '9')
		return false;
	if (*t == '0')
		t++;
	else
		while (t < end && *t >= '0' && *t <= '9')
			t++;
	if (t < end && *t == '.') {
		const char *d = ++t;
		while (t < end && *t >= '0' && *t <= '9')
			t++;
		if (t == d)
			return false;
	}
	if (t < end && (*t == 'e' || *t == 'E')) {
		t++;
		if (t < end && (*t == '+' || *t == '-'))
			t++;
		const char *d = t;
		while (t < end && *t >= '0' && *t <= '9')
			t++;
		if (t == d)
			return false;
	}
	return t == end;
}

static bool literal_ok(const char *t, int n)
{
	return (n == 4 && memcmp(t, "true", 4) == 0) || (n == 5 && memcmp(t, "false", 5) == 0) ||
	       (n == 4 && memcmp(t, "null", 4) == 0) || number_ok(t, t + n);
}

/* The bare token ends (before the byte now read). */
static cs_status token_done(scan *s)
{
	if (s->ntok < 0)
		return CS_OK;
	char near[sizeof s->tok + 1];
	memcpy(near, s->tok, (size_t)s->ntok);
	near[s->ntok] = 0;
	int n = s->ntok;
	s->ntok = -1;
	cs_status st = value_starts(s, s->tok_line, s->tok_col, near, false);
	if (st != CS_OK)
		return st;
	if (s->tok_long || !literal_ok(near, n))
		return not_json(s, s->tok_line, s->tok_col, "invalid token", near);
	if (s->target_next) { /* the member's value is a scalar, not an array */
		s->target_next = false;
		s->done_target = true;
	}
	s->second_next = false;
	return value_ends(s);
}

static bool bare(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
	       c == '-' || c == '.';
}

static cs_status open_bracket(scan *s, char c)
{
	char near[2] = { c, 0 };
	cs_status st = value_starts(s, s->line, s->col, near, true);
	if (st != CS_OK)
		return st;
	if (s->depth == MAX_DEPTH)
		return not_json(s, s->line, s->col, "more than 1024 levels of nesting", near);
	if (s->target_next) {
		s->target_next = false;
		s->done_target = true;
		if (c == '[') {
			s->streaming = true;
			s->second = false;
			*s->found = true;
		}
	} else if (s->second_next) {
		s->second_next = false;
		s->done_second = true;
		if (c == '[') {
			s->streaming = true;
			s->second = true;
			s->index = 0;
		}
	}
	if (s->in_el && (st = copy(s, c)) != CS_OK)
		return st;
	s->stack[++s->depth] = c;
	s->want[s->depth] = c == '{' ? W_KEY_OR_CLOSE : W_VALUE_OR_CLOSE;
	return CS_OK;
}

static cs_status close_bracket(scan *s, char c)
{
	char near[2] = { c, 0 };
	want w = s->want[s->depth];
	char open = c == '}' ? '{' : '[';
	bool ok = s->depth > 0 && s->stack[s->depth] == open &&
		  (w == W_COMMA_OR_CLOSE || w == (c == '}' ? W_KEY_OR_CLOSE : W_VALUE_OR_CLOSE));
	if (!ok)
		return misplaced(s, s->line, s->col, near);
	cs_status st;
	if (s->in_el && (st = copy(s, c)) != CS_OK)
		return st;
	s->depth--;
	if (s->streaming && s->depth == 1) {
		s->streaming = false;
		if (s->second)
			s->index = s->nfirst;
		else
			s->nfirst = s->index;
	}
	return value_ends(s);
}

static cs_status separator(scan *s, char c)
{
	char near[2] = { c, 0 };
	want w = s->want[s->depth];
	cs_status st;
	if (c == ':' ? w != W_COLON : w != W_COMMA_OR_CLOSE)
		return misplaced(s, s->line, s->col, near);
	if (s->in_el && (st = copy(s, c)) != CS_OK)
		return st;
	s->want[s->depth] = c == ':' ? W_VALUE : s->stack[s->depth] == '{' ? W_KEY : W_VALUE;
	return CS_OK;
}

/* A '"' outside a string: a key or a string value starts. */
static cs_status quote(scan *s)
{
	want w = s->want[s->depth];
	cs_status st;
	s->is_key = w == W_KEY || w == W_KEY_OR_CLOSE;
	if (!s->is_key && (st = value_starts(s, s->line, s->col, "\"", false)) != CS_OK)
		return st;
	if (s->in_el && (st = copy(s, '"')) != CS_OK)
		return st;
	s->in_string = true;
	s->nkey = 0;
	s->key_long = false;
	return CS_OK;
}

/* Whether the top-level key just read is `k`. */
static bool key_is(const scan *s, const char *k)
{
	return k && !s->key_long && (size_t)s->nkey == strlen(k) && memcmp(s->key, k, (size_t)s->nkey) == 0;
}

/* The string ends at this '"'. */
static cs_status string_ends(scan *s)
{
	s->in_string = false;
	if (s->is_key) {
		s->want[s->depth] = W_COLON;
		if (s->depth == 1) {
			s->target_next = !s->done_target && key_is(s, s->o->key);
			s->second_next = s->o->each2 && !s->done_second && key_is(s, s->o->key2);
			s->whole_next = s->o->each3 && !s->done_whole && key_is(s, s->o->key3);
		}
		return CS_OK;
	}
	if (s->target_next) {
		s->target_next = false;
		s->done_target = true;
	}
	s->second_next = false;
	return value_ends(s);
}

/* One byte of the text. */
static cs_status byte(scan *s, char c)
{
	cs_status st;
	if (s->in_string) {
		if (s->in_el && (st = copy(s, c)) != CS_OK)
			return st;
		if (s->hex > 0) {
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
				return not_json(s, s->line, s->col, "invalid escape", (char[]){ c, 0 });
			s->hex--;
		} else if (s->escape) {
			s->escape = false;
			if (!strchr("\"\\/bfnrtu", c) || c == 0)
				return not_json(s, s->line, s->col, "invalid escape", (char[]){ '\\', c, 0 });
			if (c == 'u')
				s->hex = 4;
		} else if ((unsigned char)c < 0x20) {
			char hex[8];
			snprintf(hex, sizeof hex, "0x%02x", (unsigned char)c);
			return not_json(s, s->line, s->col, "control character in a string", hex);
		} else if (c == '\\') {
			s->escape = true;
		} else if (c == '"') {
			return string_ends(s);
		} else if (s->is_key && s->depth == 1) {
			if (s->nkey < (int)sizeof s->key)
				s->key[s->nkey++] = c;
			else
				s->key_long = true;
		}
		return CS_OK;
	}
	if (bare(c)) {
		if (s->ntok < 0) {
			s->ntok = 0;
			s->tok_long = false;
			want w = s->want[s->depth];
			if (((s->streaming && s->depth == 2) || (s->whole_next && s->depth == 1)) &&
			    !s->in_el && (w == W_VALUE || w == W_VALUE_OR_CLOSE)) {
				s->in_el = true; /* value_starts checks it when the token ends */
				s->whole = s->depth == 1;
				s->whole_next = false;
				s->done_whole |= s->whole;
				s->el_line = s->line;
				s->el_col = s->col;
			}
		}
		if (s->ntok < (int)sizeof s->tok)
			s->tok[s->ntok++] = c;
		else
			s->tok_long = true;
		s->tok_line = s->line;
		s->tok_col = s->col;
		return s->in_el ? copy(s, c) : CS_OK;
	}
	if ((st = token_done(s)) != CS_OK)
		return st;
	switch (c) {
	case ' ':
	case '\t':
	case '\n':
	case '\r': return s->in_el ? copy(s, c) : CS_OK; /* jansson's columns count it */
	case '"': return quote(s);
	case '{':
	case '[': return open_bracket(s, c);
	case '}':
	case ']': return close_bracket(s, c);
	case ',':
	case ':': return separator(s, c);
	default: return not_json(s, s->line, s->col, "invalid token", (char[]){ c, 0 });
	}
}

cs_status cs_jstream_array(const cs_jstream_opts *o, cs_jstream_read rd, void *rctx, cs_jstream_each each,
			   void *arg, bool *found, cs_diag *diag)
{
	scan *s = calloc(1, sizeof *s);
	char *buf = malloc(CHUNK);
	*found = false;
	if (!s || !buf) {
		free(s);
		free(buf);
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", o->name);
		return CS_ERR_NOMEM;
	}
	*s = (scan){ .o = o,
		     .each = each,
		     .arg = arg,
		     .diag = diag,
		     .ntok = -1,
		     .found = found,
		     .line = 1,
		     .col = 0 };
	s->want[0] = W_VALUE;
	cs_status st = CS_OK;
	for (;;) {
		size_t got = 0;
		if ((st = rd(rctx, buf, CHUNK, &got, diag)) != CS_OK || got == 0)
			break;
		for (size_t i = 0; i < got && st == CS_OK; i++) {
			char c = buf[i];
			s->col++;
			st = byte(s, c);
			if (c == '\n') {
				s->line++;
				s->col = 0;
			}
		}
		if (st != CS_OK)
			break;
	}
	if (st == CS_OK)
		st = token_done(s);
	if (st == CS_OK && s->in_string)
		st = not_json(s, s->line, s->col, "premature end of input", "");
	else if (st == CS_OK && s->want[0] != W_END)
		st = misplaced(s, s->line, s->col, "");
	free(s->el);
	free(s);
	free(buf);
	return st;
}

/* ---- sources ----------------------------------------------------------- */

/* A gzip stream that expands past BOMB_RATIO times its compressed bytes once
 * it has given BOMB_FLOOR is refused: profiler traces compress 7 to 15
 * times (the measured H200 traces 14, HTA's samples 7 to 11), and a
 * repeated event compressed a thousandfold would read for minutes. */
enum { BOMB_FLOOR = 64 << 20, BOMB_RATIO = 100 };

cs_status cs_jstream_gz_read(void *ctx, char *buf, size_t cap, size_t *got, cs_diag *diag)
{
	cs_jstream_gz *g = ctx;
	int n = gzread(g->gz, buf, (unsigned)(cap < (size_t)1 << 30 ? cap : (size_t)1 << 30));
	*got = n > 0 ? (size_t)n : 0;
	if (n > 0) {
		long long out = (long long)gztell(g->gz), in = (long long)gzoffset(g->gz);
		if (out > BOMB_FLOOR && in > 0 && out / in > BOMB_RATIO) {
			snprintf(diag->msg, sizeof diag->msg,
				 "'%.400s': its gzip data expands more than %d times (%lld bytes from %lld): "
				 "not a profiler trace, which compresses 7 to 15 times",
				 g->path, BOMB_RATIO, out, in);
			return CS_ERR_INPUT;
		}
	}
	if (n >= 0)
		return CS_OK;
	int err = Z_OK;
	const char *why = gzerror(g->gz, &err);
	if (err == Z_ERRNO) {
		snprintf(diag->msg, sizeof diag->msg, "cannot read '%.400s': %s", g->path, strerror(errno));
		return CS_ERR_INPUT;
	}
	if (err == Z_MEM_ERROR) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory reading '%.400s'", g->path);
		return CS_ERR_NOMEM;
	}
	/* zlib prefixes its message with the file's name, "<fd:3>" here */
	const char *colon = strstr(why, ": ");
	if (strncmp(why, "<fd:", 4) == 0 && colon)
		why = colon + 2;
	snprintf(diag->msg, sizeof diag->msg, "'%.400s': %s gzip data at byte %lld (%s)", g->path,
		 err == Z_BUF_ERROR ? "truncated" : "corrupt", (long long)gzoffset(g->gz), why);
	return CS_ERR_INPUT;
}

cs_status cs_jstream_mem_read(void *ctx, char *buf, size_t cap, size_t *got, cs_diag *diag)
{
	cs_jstream_mem *m = ctx;
	(void)diag;
	*got = m->len - m->pos < cap ? m->len - m->pos : cap;
	memcpy(buf, m->text + m->pos, *got);
	m->pos += *got;
	return CS_OK;
}
