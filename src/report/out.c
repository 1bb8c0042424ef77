/*
 * out.c - atomic output files, and JSON/CSV formatting helpers.
 *
 * Whether and how a path can be written is decided from stat and access
 * alone (plan_out), so a check before the work touches nothing. The
 * temporary file sits next to its target (same directory, so the rename
 * stays on one file system and is atomic), made by mkstemp (O_EXCL: a name
 * planted in advance is never followed), with the target's mode and owner.
 * A symlink's target is written, not the link. A device, a pipe, a
 * hard-linked file or the file of a standard stream cannot be renamed over:
 * the result is staged in an anonymous temporary file and copied into the
 * target at commit, which is opened (and a regular one truncated) only
 * then. SIGINT, SIGTERM and SIGHUP remove the temporary files still open.
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "report/out.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cs_out {
	FILE *f;
	bool is_stdout;
	bool in_place; /* a special or hard-linked file: f is a staging file, copied at commit */
	bool regular;  /* in place: the target is a regular file (truncated at commit) */
	int std_fd;    /* in place: the standard descriptor that has the target open, or -1 */
	char *path;    /* the target, symlinks resolved (in place: as given) */
	char *tmp;     /* the file being renamed into place, NULL in place */
	int slot;      /* in the signal handler's list, -1 when not */
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

/*
 * Temporary files to remove when SIGINT or SIGTERM ends the process: a
 * fixed table the handler reads without locks (unlink is async-signal-
 * safe). The one process-wide state of this module: signals are the
 * process's, not a simulation's.
 */
#define CS_OUT_SLOTS 16
#define CS_OUT_PATH 4096
static char pending_tmp[CS_OUT_SLOTS][CS_OUT_PATH];
static volatile sig_atomic_t pending_used[CS_OUT_SLOTS];
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

static void on_signal(int sig)
{
	for (int i = 0; i < CS_OUT_SLOTS; i++)
		if (pending_used[i])
			unlink(pending_tmp[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_handler(void)
{
	int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		/* leave a signal the user set to be ignored (nohup) as it is */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static int remember(const char *tmp)
{
	if (strlen(tmp) >= CS_OUT_PATH)
		return -1;
	pthread_once(&handler_once, install_handler);
	pthread_mutex_lock(&pending_lock);
	int slot = -1;
	for (int i = 0; i < CS_OUT_SLOTS && slot < 0; i++)
		if (!pending_used[i]) {
			memcpy(pending_tmp[i], tmp, strlen(tmp) + 1);
			pending_used[i] = 1;
			slot = i;
		}
	pthread_mutex_unlock(&pending_lock);
	return slot;
}

static void forget(int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&pending_lock);
	pending_used[slot] = 0;
	pthread_mutex_unlock(&pending_lock);
}

static void out_release(cs_out *o)
{
	forget(o->slot);
	free(o->path);
	free(o->tmp);
	free(o);
}

/* The permission bits a new file gets here (0666 less the umask). */
static mode_t new_file_mode(void)
{
	mode_t mask = umask(022);
	umask(mask);
	return 0666 & ~mask;
}

/* The path to write: a symlink's target (resolved, also when it does not
 * exist yet); NULL with a message. The caller frees it. */
static char *resolve(const char *path, cs_diag *diag)
{
	struct stat ls;
	if (lstat(path, &ls) != 0 || !S_ISLNK(ls.st_mode))
		return strdup(path);
	char *real = realpath(path, NULL);
	if (real)
		return real;
	/* a link to a file still to be made: follow it by hand, a few times */
	char *cur = strdup(path);
	for (int hop = 0; cur && hop < 40; hop++) {
		if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode))
			return cur;
		char target[CS_OUT_PATH];
		ssize_t n = readlink(cur, target, sizeof target - 1);
		if (n < 0)
			break;
		target[n] = 0;
		char *next;
		const char *slash = strrchr(cur, '/');
		if (target[0] == '/' || !slash) {
			next = strdup(target);
		} else {
			size_t dir = (size_t)(slash - cur) + 1;
			next = malloc(dir + (size_t)n + 1);
			if (next) {
				memcpy(next, cur, dir);
				memcpy(next + dir, target, (size_t)n + 1);
			}
		}
		free(cur);
		cur = next;
	}
	free(cur);
	diagf(diag, "cannot write '%s': cannot follow its symbolic link", path);
	return NULL;
}

/* The folder of `path` ("." for a bare name), a new string; NULL when out
 * of memory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
}

/* The standard output or error (1 or 2) when `st` is the file it has open
 * (a path such as /dev/stdout, or the file the shell redirected to), else
 * -1: a rename would leave the descriptor on the old file, and a second
 * open would write over what the stream writes. */
static int std_stream(const struct stat *st)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat s;
		if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

/* How an output is written, decided from stat and access alone. */
typedef struct plan {
	char *path;    /* the file to write (the caller frees it) */
	bool exists;   /* st is the file's */
	bool in_place; /* staged and copied at commit, not renamed */
	int std_fd;    /* in place through this standard descriptor, or -1 */
	struct stat st;
} plan;

/* Decide how `path` is written without touching it or its folder: 0 with
 * *p filled, or -1 with a message. */
static int plan_out(const char *path, plan *p, cs_diag *diag)
{
	memset(p, 0, sizeof *p);
	p->std_fd = -1;
	if (stat(path, &p->st) == 0) {
		p->exists = true;
		if (S_ISDIR(p->st.st_mode)) {
			diagf(diag, "cannot write '%s': it is a directory", path);
			return -1;
		}
		if (S_ISREG(p->st.st_mode) && (p->st.st_mode & 0222) == 0) {
			diagf(diag, "cannot write '%s': the file is read-only (mode %03o)", path,
			      (unsigned)(p->st.st_mode & 0777));
			return -1;
		}
		if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0) {
			diagf(diag, "cannot write '%s': %s", path, strerror(errno));
			return -1;
		}
		/* a device, a pipe, a file with other names or a standard stream:
		 * no rename could keep it, so it is written where it is */
		p->std_fd = std_stream(&p->st);
		p->in_place = !S_ISREG(p->st.st_mode) || p->st.st_nlink > 1 || p->std_fd >= 0;
		if (p->in_place) {
			p->path = strdup(path);
			if (!p->path)
				diagf(diag, "cannot open '%s': out of memory", path);
			return p->path ? 0 : -1;
		}
	}
	p->path = resolve(path, diag);
	if (!p->path)
		return -1;
	char *dir = dir_of(p->path);
	if (!dir) {
		diagf(diag, "cannot open '%s': out of memory", path);
		free(p->path);
		return -1;
	}
	int ok = faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS), err = errno;
	free(dir);
	if (ok != 0 && p->exists) {
		p->in_place = true; /* a file that may be written in a folder that may not */
	} else if (ok != 0) {
		diagf(diag, "cannot open '%s': %s", path, strerror(err));
		free(p->path);
		return -1;
	}
	return 0;
}

cs_out *cs_out_open(const char *path, cs_diag *diag)
{
	cs_out *o = calloc(1, sizeof(*o));
	if (!o) {
		diagf(diag, "cannot open '%s': out of memory", path);
		return NULL;
	}
	o->slot = -1;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		o->is_stdout = true;
		return o;
	}
	plan p;
	if (plan_out(path, &p, diag) != 0) {
		out_release(o);
		return NULL;
	}
	o->path = p.path;
	if (p.in_place) {
		/* nothing reaches the target before the result is complete */
		o->in_place = true;
		o->regular = S_ISREG(p.st.st_mode);
		o->std_fd = p.std_fd;
		o->f = tmpfile();
		if (!o->f) {
			diagf(diag, "cannot open '%s': no temporary file: %s", path, strerror(errno));
			out_release(o);
			return NULL;
		}
		return o;
	}
	size_t n = strlen(o->path) + 16;
	o->tmp = malloc(n);
	if (!o->tmp) {
		diagf(diag, "cannot open '%s': out of memory", path);
		out_release(o);
		return NULL;
	}
	/* O_EXCL: never through a file or a link planted under the name */
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", o->path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		diagf(diag, "cannot open '%s': %s", path, strerror(errno));
		out_release(o);
		return NULL;
	}
	o->slot = remember(o->tmp);
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (fchmod(fd, p.exists ? (p.st.st_mode & 07777) : new_file_mode()) != 0 ||
	    (p.exists && geteuid() == 0 && fchown(fd, p.st.st_uid, p.st.st_gid) != 0)) {
		/* keeping the old mode or owner is best effort */
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

/* Whether a and b exist and are one file (device and inode). */
static bool same_file(const struct stat *a, const char *b)
{
	struct stat sb;
	return stat(b, &sb) == 0 && a->st_dev == sb.st_dev && a->st_ino == sb.st_ino;
}

int cs_out_check(const char *path, const char *const *inputs, size_t ninputs, cs_diag *diag)
{
	if (strcmp(path, "-") == 0)
		return 0;
	struct stat out;
	if (stat(path, &out) == 0)
		for (size_t i = 0; i < ninputs; i++)
			if (inputs[i] && strcmp(inputs[i], "-") != 0 && same_file(&out, inputs[i])) {
				diagf(diag, "cannot write '%s': it is the input '%s'", path, inputs[i]);
				return -1;
			}
	plan p;
	if (plan_out(path, &p, diag) != 0)
		return -1;
	free(p.path);
	return 0;
}

/* Whether the paths a write makes of a and b (symlinks followed), both
 * missing, are one name in one folder: the last parts equal, the folders
 * the same by device and inode. */
static bool same_new_file(const char *a, const char *b)
{
	char *ra = resolve(a, NULL), *rb = resolve(b, NULL);
	bool same = false;
	struct stat sa, sb;
	if (ra && rb && stat(ra, &sa) != 0 && stat(rb, &sb) != 0) {
		const char *na = strrchr(ra, '/'), *nb = strrchr(rb, '/');
		na = na ? na + 1 : ra;
		nb = nb ? nb + 1 : rb;
		char *da = dir_of(ra), *db = dir_of(rb);
		same = da && db && strcmp(na, nb) == 0 && stat(da, &sa) == 0 && S_ISDIR(sa.st_mode) &&
		       same_file(&sa, db);
		free(da);
		free(db);
	}
	free(ra);
	free(rb);
	return same;
}

bool cs_out_same(const char *a, const char *b)
{
	if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		return false;
	struct stat sa;
	if (strcmp(a, b) == 0)
		return true;
	if (stat(a, &sa) == 0)
		return S_ISREG(sa.st_mode) && same_file(&sa, b);
	return same_new_file(a, b);
}

FILE *cs_out_file(cs_out *o) { return o->f; }

const char *cs_out_staged(const cs_out *o) { return o->tmp; }

/* Best effort: make the rename itself durable. */
static void sync_parent_dir(const char *path)
{
	char *dir = dir_of(path);
	if (!dir)
		return;
	int fd = open(dir, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

/* Copy the staged result into the target, opened now (a regular file
 * truncated only now), or after what its standard stream holds: 0 or an
 * errno. */
static int copy_in_place(cs_out *o)
{
	if (fseek(o->f, 0, SEEK_SET) != 0)
		return errno;
	int fd;
	if (o->std_fd >= 0) {
		errno = 0;
		if (fflush(o->std_fd == 1 ? stdout : stderr) != 0)
			return errno ? errno : EIO;
		fd = dup(o->std_fd);
	} else {
		fd = open(o->path, O_WRONLY | O_CLOEXEC | (o->regular ? O_TRUNC : 0));
	}
	if (fd < 0)
		return errno;
	char buf[65536];
	size_t n;
	int err = 0;
	while (!err && (n = fread(buf, 1, sizeof buf, o->f)) > 0)
		for (size_t off = 0; off < n && !err;) {
			ssize_t w = write(fd, buf + off, n - off);
			if (w >= 0)
				off += (size_t)w;
			else if (errno != EINTR)
				err = errno;
		}
	if (!err && ferror(o->f))
		err = EIO;
	if (!err && o->regular && o->std_fd < 0 && fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && !err)
		err = errno;
	return err;
}

int cs_out_commit(cs_out *o, cs_diag *diag)
{
	int rc = 0;
	if (o->is_stdout) {
		errno = 0;
		if (fflush(o->f) != 0 || ferror(o->f)) {
			diagf(diag, "cannot write the standard output: %s", strerror(errno ? errno : EIO));
			rc = -1;
		}
		out_release(o);
		return rc;
	}
	int err = 0;
	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		err = errno ? errno : EIO;
	else if (o->in_place)
		err = copy_in_place(o);
	else if (fsync(fileno(o->f)) != 0)
		err = errno;
	if (fclose(o->f) != 0 && !err)
		err = errno;
	if (!err && o->tmp && rename(o->tmp, o->path) != 0)
		err = errno;
	if (err) {
		if (o->tmp)
			unlink(o->tmp);
		diagf(diag, "cannot write '%s': %s", o->path, strerror(err));
		rc = -1;
	} else if (o->tmp) {
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
		if (o->tmp)
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
		case '"': fputs("\\\"", f); break;
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
			w->bad = true; /* a second top-level value */
		w->any[0] = true;
		return;
	}
	if (w->is_obj[w->depth])
		w->bad = true; /* a value in an object needs a key */
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

void cs_xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
				fputc(*s, f);
		}
	}
}
