/*
 * units.c - "450 GB/s", "2 us", "80 GiB", "989 TFLOPS" into base units.
 *
 * A quantity is a decimal number, an optional space and a unit from the
 * kind's table; units are case-sensitive because "Gb/s" (bits) and "GB/s"
 * (bytes) differ by eight.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

typedef struct unit {
	const char *name;
	double factor;
} unit;

static const unit size_units[] = { { "B", 1.0 },         { "KB", 1e3 },           { "MB", 1e6 },
				   { "GB", 1e9 },        { "TB", 1e12 },          { "KiB", 1024.0 },
				   { "MiB", 1048576.0 }, { "GiB", 1073741824.0 }, { "TiB", 1099511627776.0 },
				   { NULL, 0 } };

static const unit bandwidth_units[] = {
	{ "B/s", 1.0 },      { "KB/s", 1e3 },     { "MB/s", 1e6 },        { "GB/s", 1e9 },
	{ "TB/s", 1e12 },    { "KiB/s", 1024.0 }, { "MiB/s", 1048576.0 }, { "GiB/s", 1073741824.0 },
	{ "Mb/s", 1e6 / 8 }, { "Gb/s", 1e9 / 8 }, { "Tb/s", 1e12 / 8 },   { NULL, 0 }
};

/* factors to nanoseconds */
static const unit time_units[] = { { "ns", 1.0 },   { "us", 1e3 },    { "\xc2\xb5s", 1e3 },
				   { "ms", 1e6 },   { "s", 1e9 },     { "min", 60e9 },
				   { "h", 3600e9 }, { "d", 86400e9 }, { NULL, 0 } };

static const unit flops_units[] = { { "FLOPS", 1.0 },    { "GFLOPS", 1e9 },   { "TFLOPS", 1e12 },
				    { "PFLOPS", 1e15 },  { "FLOP/s", 1.0 },   { "GFLOP/s", 1e9 },
				    { "TFLOP/s", 1e12 }, { "PFLOP/s", 1e15 }, { NULL, 0 } };

static const unit *units_of(cs_config_kind kind)
{
	switch (kind) {
	case CS_KIND_SIZE: return size_units;
	case CS_KIND_BANDWIDTH: return bandwidth_units;
	case CS_KIND_TIME: return time_units;
	case CS_KIND_FLOPS: return flops_units;
	default: return NULL;
	}
}

static const char *kind_word(cs_config_kind kind)
{
	switch (kind) {
	case CS_KIND_SIZE: return "size";
	case CS_KIND_BANDWIDTH: return "bandwidth";
	case CS_KIND_TIME: return "time";
	default: return "flop rate";
	}
}

static void list_units(const unit *u, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; u->name; u++) {
		int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", u->name);
		if (w < 0 || (size_t)w >= n - used)
			return;
		used += (size_t)w;
	}
}

/* Parse a plain real number filling all of text; false otherwise. */
bool cs__parse_number(const char *text, double *out)
{
	char *end;

	if (!text || !*text || strchr(" \t\n", *text))
		return false;
	errno = 0;
	*out = strtod(text, &end);
	if (end == text || *end != '\0' || errno == ERANGE || !isfinite(*out))
		return false;
	return true;
}

cs_status cs__parse_quantity(const char *text, cs_config_kind kind, double *out, bool *no_unit, char *msg,
			     size_t n)
{
	const unit *units = units_of(kind);
	char num[64], accepted[256];
	const char *p = text, *u;
	size_t len;
	double v;
	char *end;

	*no_unit = false;
	while (*p == ' ' || *p == '\t')
		p++;
	/* the number ends where the unit's first letter starts */
	for (u = p; *u && (strchr("0123456789.+-", *u) ||
			   ((*u == 'e' || *u == 'E') && u > p && strchr("0123456789.", u[-1]) && u[1] &&
			    strchr("0123456789+-", u[1])));
	     u++)
		;
	len = (size_t)(u - p);
	if (len == 0 || len >= sizeof num) {
		snprintf(msg, n, "expected a %s like '%s', got '%.40s'", kind_word(kind),
			 cs_config_kind_example(kind), text);
		return CS_ERR_INPUT;
	}
	memcpy(num, p, len);
	num[len] = '\0';
	errno = 0;
	v = strtod(num, &end);
	if (*end != '\0' || errno == ERANGE || !isfinite(v)) {
		snprintf(msg, n, "expected a %s like '%s', got '%.40s'", kind_word(kind),
			 cs_config_kind_example(kind), text);
		return CS_ERR_INPUT;
	}
	while (*u == ' ' || *u == '\t')
		u++;
	len = strlen(u);
	while (len && (u[len - 1] == ' ' || u[len - 1] == '\t'))
		len--;
	if (len == 0) {
		*no_unit = true;
		snprintf(msg, n, "'%.40s' needs a unit (e.g. '%s %s')", text, num,
			 strchr(cs_config_kind_example(kind), ' ') + 1);
		return CS_ERR_INPUT;
	}
	for (const unit *x = units; x->name; x++) {
		if (strlen(x->name) == len && memcmp(x->name, u, len) == 0) {
			if (v < 0) {
				snprintf(msg, n, "negative %s '%.40s'", kind_word(kind), text);
				return CS_ERR_INPUT;
			}
			*out = v * x->factor;
			if (!isfinite(*out)) {
				snprintf(msg, n, "%s '%.40s' is too large", kind_word(kind), text);
				return CS_ERR_INPUT;
			}
			return CS_OK;
		}
	}
	list_units(units, accepted, sizeof accepted);
	snprintf(msg, n, "unknown %s unit '%.*s' in '%.40s' (accepted: %s)", kind_word(kind),
		 (int)(len > 20 ? 20 : len), u, text, accepted);
	return CS_ERR_INPUT;
}

cs_status cs__time_to_ns(double ns, const char *text, int64_t *out, char *msg, size_t n)
{
	if (ns >= 9.0e18) {
		snprintf(msg, n, "time '%.40s' is too large", text);
		return CS_ERR_INPUT;
	}
	*out = (int64_t)llround(ns);
	if (ns > 0 && *out == 0) {
		snprintf(msg, n, "time '%.40s' rounds to 0 ns", text);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

cs_status cs_parse_size(const char *text, double *bytes, char *msg, size_t n)
{
	bool no_unit;
	return cs__parse_quantity(text, CS_KIND_SIZE, bytes, &no_unit, msg, n);
}

cs_status cs_parse_bandwidth(const char *text, double *bytes_per_s, char *msg, size_t n)
{
	bool no_unit;
	return cs__parse_quantity(text, CS_KIND_BANDWIDTH, bytes_per_s, &no_unit, msg, n);
}

cs_status cs_parse_flops(const char *text, double *flops, char *msg, size_t n)
{
	bool no_unit;
	return cs__parse_quantity(text, CS_KIND_FLOPS, flops, &no_unit, msg, n);
}

cs_status cs_parse_time(const char *text, int64_t *ns, char *msg, size_t n)
{
	bool no_unit;
	double v;
	cs_status st = cs__parse_quantity(text, CS_KIND_TIME, &v, &no_unit, msg, n);

	if (st != CS_OK)
		return st;
	return cs__time_to_ns(v, text, ns, msg, n);
}
