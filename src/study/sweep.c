/*
 * sweep.c - the points of a sweep, their results, the CSV and the exact
 * text form that carries results between processes.
 *
 * The threads that run the points live in sweep_run.c; the chart in
 * sweep_plot.c.
 */
#include "study/sweep_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "study/goodput.h"
#include "study/study.h"

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

cs_status cs_sweep_new(const char *path, const char *const *sets, size_t nsets, cs_sweep **out, cs_diag *diag)
{
	*out = NULL;
	if (nsets > CS_SWEEP_MAX_SETS) {
		snprintf(diag->msg, sizeof diag->msg, "more than %d '--set' options", CS_SWEEP_MAX_SETS);
		return CS_ERR_INPUT;
	}
	cs_sweep *sw = calloc(1, sizeof *sw);
	if (!sw)
		goto nomem;
	sw->npoints = 1;
	sw->path = dup_range(path, strlen(path));
	sw->sets = calloc(nsets + 1, sizeof *sw->sets);
	if (!sw->path || !sw->sets)
		goto nomem;
	for (size_t i = 0; i < nsets; i++) {
		if (!(sw->sets[i] = dup_range(sets[i], strlen(sets[i]))))
			goto nomem;
		sw->nsets++;
	}
	cs_metrics zero;
	double vals[CS_SWEEP_MAX_COLUMNS];
	memset(&zero, 0, sizeof zero);
	int n = cs_study_columns(&zero, sw->colnames, vals, CS_SWEEP_MAX_COLUMNS);
	sw->ncols = n < CS_SWEEP_MAX_COLUMNS ? (size_t)n : CS_SWEEP_MAX_COLUMNS;
	sw->nmetric = sw->ncols;
	*out = sw;
	return CS_OK;
nomem:
	cs_sweep_free(sw);
	snprintf(diag->msg, sizeof diag->msg, "out of memory");
	return CS_ERR_NOMEM;
}

void cs_sweep_free(cs_sweep *sw)
{
	if (!sw)
		return;
	free(sw->path);
	for (size_t i = 0; sw->sets && i < sw->nsets; i++)
		free(sw->sets[i]);
	free(sw->sets);
	for (size_t k = 0; k < sw->nkeys; k++) {
		free(sw->keys[k].key);
		for (size_t v = 0; v < sw->keys[k].n; v++)
			free(sw->keys[k].vals[v]);
		free(sw->keys[k].vals);
	}
	if (sw->errors)
		for (size_t p = 0; p < sw->npoints; p++)
			free(sw->errors[p]);
	free(sw->errors);
	free(sw->state);
	free(sw->values);
	free(sw);
}

cs_status cs_sweep_vary(cs_sweep *sw, const char *spec, cs_diag *diag)
{
	const char *eq = strchr(spec, '=');
	if (!eq) {
		snprintf(diag->msg, sizeof diag->msg, "--vary '%.200s': expected key.path=v1,v2,...", spec);
		return CS_ERR_INPUT;
	}
	if (sw->nkeys == CS_SWEEP_MAX_KEYS) {
		snprintf(diag->msg, sizeof diag->msg, "--vary '%.200s': more than %d varied keys", spec,
			 CS_SWEEP_MAX_KEYS);
		return CS_ERR_INPUT;
	}
	const char *k = spec;
	size_t kl = (size_t)(eq - spec);
	trim(&k, &kl);
	if (!kl) {
		snprintf(diag->msg, sizeof diag->msg, "--vary '%.200s': no key before '='", spec);
		return CS_ERR_INPUT;
	}
	for (size_t i = 0; i < sw->nkeys; i++)
		if (strlen(sw->keys[i].key) == kl && !strncmp(sw->keys[i].key, k, kl)) {
			snprintf(diag->msg, sizeof diag->msg, "--vary '%.200s': key '%.*s' is varied twice",
				 spec, (int)(kl > 200 ? 200 : kl), k);
			return CS_ERR_INPUT;
		}
	cs_sweep_key_vals *kv = &sw->keys[sw->nkeys];
	cs_status st = CS_ERR_INPUT;
	size_t count = 1;
	for (const char *c = eq + 1; *c; c++)
		count += *c == ',';
	memset(kv, 0, sizeof *kv);
	kv->key = dup_range(k, kl);
	kv->vals = calloc(count, sizeof *kv->vals);
	if (!kv->key || !kv->vals)
		goto nomem;
	for (const char *s = eq + 1;;) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *v = s;
		trim(&v, &n);
		if (!n) {
			snprintf(diag->msg, sizeof diag->msg, "--vary '%.200s': empty value (number %zu)",
				 spec, kv->n + 1);
			goto fail;
		}
		if (!(kv->vals[kv->n] = dup_range(v, n)))
			goto nomem;
		kv->n++;
		if (!e)
			break;
		s = e + 1;
	}
	sw->nkeys++;
	return CS_OK;
nomem:
	snprintf(diag->msg, sizeof diag->msg, "out of memory");
	st = CS_ERR_NOMEM;
fail:
	free(kv->key);
	for (size_t v = 0; v < kv->n; v++)
		free(kv->vals[v]);
	free(kv->vals);
	memset(kv, 0, sizeof *kv);
	return st;
}

cs_status cs_sweep_check(cs_sweep *sw, cs_diag *diag)
{
	size_t np = 1;
	for (size_t k = 0; k < sw->nkeys; k++) {
		if (np > CS_SWEEP_MAX_POINTS / sw->keys[k].n) {
			snprintf(diag->msg, sizeof diag->msg,
				 "the sweep has more than %d points (the "
				 "limit); vary fewer keys or values",
				 CS_SWEEP_MAX_POINTS);
			return CS_ERR_INPUT;
		}
		np *= sw->keys[k].n;
	}
	cs_scenario *base = NULL, *tmp = NULL;
	cs_status st = cs_scenario_load(sw->path, (const char *const *)sw->sets, sw->nsets, &base, diag);
	if (st != CS_OK)
		return st;
	tmp = malloc(sizeof *tmp);
	if (!tmp)
		goto nomem;
	for (size_t k = 0; k < sw->nkeys; k++)
		for (size_t v = 0; v < sw->keys[k].n; v++) {
			char a[1024];
			int n = snprintf(a, sizeof a, "%s=%s", sw->keys[k].key, sw->keys[k].vals[v]);
			if (n < 0 || (size_t)n >= sizeof a) {
				snprintf(diag->msg, sizeof diag->msg, "--vary '%.200s': too long", a);
				st = CS_ERR_INPUT;
				goto out;
			}
			*tmp = *base;
			cs_diag d = { { 0 } };
			if ((st = cs_config_apply_override(tmp, a, &d)) != CS_OK) {
				/* the override speaks of --set; this value came from --vary */
				const char *m = strncmp(d.msg, "--set ", 6) == 0 ? d.msg + 6 : d.msg;
				snprintf(diag->msg, sizeof diag->msg, "--vary %.900s", m);
				goto out;
			}
		}
	free(sw->state);
	free(sw->values);
	if (sw->errors)
		for (size_t p = 0; p < sw->npoints; p++)
			free(sw->errors[p]);
	free(sw->errors);
	sw->npoints = np;
	sw->state = calloc(np, 1);
	sw->errors = calloc(np, sizeof *sw->errors);
	sw->values = calloc(np * (sw->ncols ? sw->ncols : 1), sizeof *sw->values);
	if (!sw->state || !sw->errors || !sw->values)
		goto nomem;
	sw->checked = 1;
	st = CS_OK;
	goto out;
nomem:
	snprintf(diag->msg, sizeof diag->msg, "out of memory");
	st = CS_ERR_NOMEM;
out:
	free(tmp);
	cs_scenario_free(base);
	return st;
}

cs_status cs_sweep_goodput(cs_sweep *sw, double days, int64_t runs, cs_diag *diag)
{
	if (sw->checked || !(days > 0 && days <= 36500)) {
		snprintf(diag->msg, sizeof diag->msg,
			 "'--goodput' needs a number of days in (0, 36500]"
			 " (got %g)",
			 days);
		return CS_ERR_INPUT;
	}
	cs_goodput_report zero;
	double vals[CS_SWEEP_MAX_COLUMNS];
	memset(&zero, 0, sizeof zero);
	int n = cs_goodput_columns(&zero, sw->colnames + sw->nmetric, vals,
				   (int)(CS_SWEEP_MAX_COLUMNS - sw->nmetric));
	sw->ncols = sw->nmetric + (size_t)n;
	sw->goodput_days = days;
	sw->goodput_runs = runs;
	return CS_OK;
}

size_t cs_sweep_points(const cs_sweep *sw) { return sw->npoints; }
size_t cs_sweep_nkeys(const cs_sweep *sw) { return sw->nkeys; }
const char *cs_sweep_key(const cs_sweep *sw, size_t k) { return sw->keys[k].key; }
size_t cs_sweep_nvalues(const cs_sweep *sw, size_t k) { return sw->keys[k].n; }
const char *cs_sweep_value(const cs_sweep *sw, size_t k, size_t v) { return sw->keys[k].vals[v]; }
size_t cs_sweep_ncolumns(const cs_sweep *sw) { return sw->ncols; }
const char *cs_sweep_column(const cs_sweep *sw, size_t c) { return sw->colnames[c]; }

size_t cs_sweep_point_index(const cs_sweep *sw, size_t p, size_t k)
{
	size_t stride = 1;
	for (size_t j = k + 1; j < sw->nkeys; j++)
		stride *= sw->keys[j].n;
	return (p / stride) % sw->keys[k].n;
}

cs_status cs_sweep_point_sets(const cs_sweep *sw, size_t p, char *buf, size_t len)
{
	size_t used = 0;
	for (size_t k = 0; k < sw->nkeys; k++) {
		int n = snprintf(buf + used, len - used, "%s=%s", sw->keys[k].key,
				 sw->keys[k].vals[cs_sweep_point_index(sw, p, k)]);
		if (n < 0 || (size_t)n + 1 > len - used)
			return CS_ERR_INPUT;
		used += (size_t)n + 1;
	}
	return CS_OK;
}

int cs_sweep_column_find(const cs_sweep *sw, const char *name)
{
	for (size_t c = 0; c < sw->ncols; c++)
		if (strcmp(sw->colnames[c], name) == 0)
			return (int)c;
	return -1;
}

cs_sweep_state cs_sweep_point_state(const cs_sweep *sw, size_t p)
{
	return sw->state ? (cs_sweep_state)sw->state[p] : CS_SWEEP_PENDING;
}

const char *cs_sweep_point_error(const cs_sweep *sw, size_t p)
{
	return sw->errors && sw->errors[p] ? sw->errors[p] : "";
}

const double *cs_sweep_point_values(const cs_sweep *sw, size_t p)
{
	if (cs_sweep_point_state(sw, p) != CS_SWEEP_OK)
		return NULL;
	return sw->values + p * sw->ncols;
}

void cs__sweep_store(cs_sweep *sw, size_t p, cs_sweep_state st, const double *vals, const char *err)
{
	if (st == CS_SWEEP_OK) {
		memcpy(sw->values + p * sw->ncols, vals, sw->ncols * sizeof *vals);
	} else {
		free(sw->errors[p]);
		sw->errors[p] = dup_range(err, strlen(err));
	}
	sw->state[p] = (unsigned char)st;
}

/* ---- the exact text form ------------------------------------------------- */

/*
 * One line per finished point:
 *   "<p> 1 <hex float> x ncols\n"   ok
 *   "<p> 2 <len>:<message>\n"       failed
 */
cs_status cs_sweep_pack(const cs_sweep *sw, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	FILE *f = open_memstream(buf, len);
	if (!f)
		return CS_ERR_NOMEM;
	for (size_t p = 0; p < sw->npoints; p++) {
		cs_sweep_state st = cs_sweep_point_state(sw, p);
		if (st == CS_SWEEP_PENDING)
			continue;
		fprintf(f, "%zu %d", p, (int)st);
		if (st == CS_SWEEP_OK) {
			const double *v = cs_sweep_point_values(sw, p);
			for (size_t c = 0; c < sw->ncols; c++)
				fprintf(f, " %a", v[c]);
		} else {
			const char *e = cs_sweep_point_error(sw, p);
			fprintf(f, " %zu:", strlen(e));
			fputs(e, f);
		}
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		return CS_ERR_NOMEM;
	}
	return CS_OK;
}

static cs_status bad_pack(cs_diag *diag, size_t at)
{
	snprintf(diag->msg, sizeof diag->msg, "malformed sweep results at byte %zu", at);
	return CS_ERR_INPUT;
}

static int read_size(const char **s, const char *end, size_t *out)
{
	size_t v = 0;
	const char *c = *s;
	if (c >= end || *c < '0' || *c > '9')
		return 0;
	for (; c < end && *c >= '0' && *c <= '9'; c++) {
		if (v > ((size_t)-1 - 9) / 10)
			return 0;
		v = v * 10 + (size_t)(*c - '0');
	}
	*s = c;
	*out = v;
	return 1;
}

cs_status cs_sweep_unpack(cs_sweep *sw, const char *buf, size_t len, cs_diag *diag)
{
	const char *s = buf, *end = buf + len;
	double vals[CS_SWEEP_MAX_COLUMNS];
	char msg[2048];

	if (!sw->checked) {
		snprintf(diag->msg, sizeof diag->msg, "the sweep was not checked");
		return CS_ERR_INPUT;
	}
	while (s < end) {
		size_t p, st;
		if (!read_size(&s, end, &p) || p >= sw->npoints || s >= end || *s++ != ' ' ||
		    !read_size(&s, end, &st) || (st != CS_SWEEP_OK && st != CS_SWEEP_FAILED))
			return bad_pack(diag, (size_t)(s - buf));
		if (st == CS_SWEEP_OK) {
			for (size_t c = 0; c < sw->ncols; c++) {
				char num[64], *e;
				size_t n = 0;
				if (s >= end || *s++ != ' ')
					return bad_pack(diag, (size_t)(s - buf));
				while (s + n < end && s[n] != ' ' && s[n] != '\n' && n < sizeof num - 1)
					n++;
				memcpy(num, s, n);
				num[n] = '\0';
				errno = 0;
				vals[c] = strtod(num, &e);
				if (!n || *e)
					return bad_pack(diag, (size_t)(s - buf));
				s += n;
			}
			cs__sweep_store(sw, p, CS_SWEEP_OK, vals, NULL);
		} else {
			size_t n;
			if (s >= end || *s++ != ' ' || !read_size(&s, end, &n) || s >= end || *s++ != ':' ||
			    n > (size_t)(end - s) || n >= sizeof msg)
				return bad_pack(diag, (size_t)(s - buf));
			memcpy(msg, s, n);
			msg[n] = '\0';
			s += n;
			cs__sweep_store(sw, p, CS_SWEEP_FAILED, NULL, msg);
		}
		if (s >= end || *s++ != '\n')
			return bad_pack(diag, (size_t)(s - buf));
	}
	return CS_OK;
}
