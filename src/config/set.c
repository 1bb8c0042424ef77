/*
 * set.c - the setter every source of values (file, --set) goes through:
 * text to a typed field of cs_scenario, with the key's kind and limits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config_int.h"

static const char *const axis_names[] = { "tp", "cp", "ep", "pp", "dp", NULL };

/* ---- setting one value --------------------------------------------------- */

static void join_names(const char *const *names, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; *names; names++) {
		int w = snprintf(buf + used, n - used, "%s%s", used ? " | " : "", *names);
		if (w < 0 || (size_t)w >= n - used)
			return;
		used += (size_t)w;
	}
}

static cs_status unknown_name(const cs_config_key *k, const char *text, const char *const *names,
			      size_t count, char *msg, size_t n)
{
	const char *near = cs_suggest(text, names, count);
	char list[256];

	join_names(names, list, sizeof list);
	if (near)
		snprintf(msg, n, "unknown value '%.40s' for '%s' (did you mean '%s'?)", text, k->path, near);
	else
		snprintf(msg, n, "unknown value '%.40s' for '%s' (expected %s)", text, k->path, list);
	return CS_ERR_INPUT;
}

static cs_status check_range(const cs_config_key *k, double v, const char *text, char *msg, size_t n)
{
	if (k->min_open && v <= k->min) {
		if (k->min == 0)
			snprintf(msg, n, "'%s' must be positive, got '%.40s'", k->path, text);
		else
			snprintf(msg, n, "'%s' must be more than %g, got '%.40s'", k->path, k->min, text);
		return CS_ERR_INPUT;
	}
	if (!k->min_open && v < k->min) {
		snprintf(msg, n, "'%s' must be at least %g, got '%.40s'", k->path, k->min, text);
		return CS_ERR_INPUT;
	}
	if (v > k->max) {
		snprintf(msg, n, "'%s' must be at most %.15g, got '%.40s'", k->path, k->max, text);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

static cs_status set_int(cs_scenario *sc, const cs_config_key *k, const char *text, char *msg, size_t n)
{
	char *end;
	long long v;

	if (k->names && cs__config_loose_eq(k->names[0], text)) { /* "auto": 0 */
		memset((char *)sc + k->offset, 0, k->size);
		return CS_OK;
	}
	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || *end != '\0' || text[0] == ' ' || text[0] == '+') {
		if (k->names)
			snprintf(msg, n, "expected an integer or '%s' for '%s', got '%.40s'", k->names[0],
				 k->path, text);
		else
			snprintf(msg, n, "expected an integer for '%s', got '%.40s'", k->path, text);
		return CS_ERR_INPUT;
	}
	if (errno == ERANGE) {
		snprintf(msg, n, "'%s' is out of range, got '%.40s' (at most %.15g)", k->path, text, k->max);
		return CS_ERR_INPUT;
	}
	if (check_range(k, (double)v, text, msg, n) != CS_OK)
		return CS_ERR_INPUT;
	if (k->size == sizeof(int64_t)) {
		int64_t x = v;
		memcpy((char *)sc + k->offset, &x, sizeof x);
	} else {
		int x = (int)v;
		memcpy((char *)sc + k->offset, &x, sizeof x);
	}
	return CS_OK;
}

static cs_status set_bool(cs_scenario *sc, const cs_config_key *k, const char *text, char *msg, size_t n)
{
	bool b;

	if (strcasecmp(text, "true") == 0)
		b = true;
	else if (strcasecmp(text, "false") == 0)
		b = false;
	else {
		snprintf(msg, n, "expected true or false for '%s', got '%.40s'", k->path, text);
		return CS_ERR_INPUT;
	}
	if (k->size == sizeof(bool)) {
		memcpy((char *)sc + k->offset, &b, sizeof b);
	} else {
		int x = b;
		memcpy((char *)sc + k->offset, &x, sizeof x);
	}
	return CS_OK;
}

static cs_status set_order(cs_scenario *sc, const cs_config_key *k, const char *text, char *msg, size_t n)
{
	int order[CS_AXIS_COUNT];
	unsigned seen = 0;
	const char *p = text;
	int count = 0;

	while (*p) {
		size_t w = strcspn(p, "-");
		int axis = -1;
		for (int a = 0; a < CS_AXIS_COUNT; a++)
			if (strlen(axis_names[a]) == w && strncmp(axis_names[a], p, w) == 0)
				axis = a;
		if (axis < 0 || (seen & (1u << axis)) || count == CS_AXIS_COUNT)
			goto bad;
		seen |= 1u << axis;
		order[count++] = axis;
		p += w;
		if (*p == '-' && *++p == '\0')
			goto bad;
	}
	if (count != CS_AXIS_COUNT)
		goto bad;
	memcpy(sc->parallel.order, order, sizeof order);
	return CS_OK;
bad:
	snprintf(msg, n,
		 "'%s' must name tp, cp, ep, pp and dp once each, innermost first "
		 "(e.g. 'tp-cp-ep-pp-dp'), got '%.40s'",
		 k->path, text);
	return CS_ERR_INPUT;
}

/* A rack-scale GPU's server is its rack's tray (gpus_per_node 4 on NVL72):
 * naming one sets the tray unless the scenario gave gpus_per_node, and
 * naming another GPU after it gives the tray's back to the 8-GPU server. */
static void server_gpus(cs_scenario *sc, const cs_gpu_spec *from, const cs_gpu_spec *to)
{
	const cs_config_key *k = cs_config_key_find("cluster.gpus_per_node");
	if (k && sc->where[cs__config_key_index(k)].line != 0)
		return;
	cs_cluster_spec a = { 0 }, b = { 0 };
	cs_preset_server_defaults(from, &a);
	cs_preset_server_defaults(to, &b);
	bool rack_a = a.scale_up_domain > a.gpus_per_node, rack_b = b.scale_up_domain > b.gpus_per_node;
	if (rack_b || (rack_a && sc->cluster.gpus_per_node == a.gpus_per_node))
		sc->cluster.gpus_per_node = b.gpus_per_node;
}

/* Names from k->names separated by spaces or commas, in brackets or not
 * ("core_attn mlp", "[core_attn, mlp]"; "[]" for none), as a bit each. */
static cs_status set_names(const cs_config_key *k, const char *text, void *field, char *msg, size_t n)
{
	size_t count = 0;
	unsigned bits = 0;
	const char *p = text, *end = text + strlen(text);

	while (k->names[count])
		count++;
	while (p < end && (*p == ' ' || *p == '['))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == ']'))
		end--;
	while (p < end) {
		size_t w = strcspn(p, " ,");
		char name[48];
		if (p + w > end)
			w = (size_t)(end - p);
		if (w > 0) {
			size_t i = 0;
			snprintf(name, sizeof name, "%.*s", (int)(w < 47 ? w : 47), p);
			const char *alias = cs__config_value_alias(k->path, name);
			while (i < count && !cs__config_loose_eq(k->names[i], name) &&
			       !(alias && strcmp(k->names[i], alias) == 0))
				i++;
			if (i == count || w > 47)
				return unknown_name(k, name, k->names, count, msg, n);
			if (bits & (1u << i)) {
				snprintf(msg, n, "'%s' names '%s' twice", k->path, k->names[i]);
				return CS_ERR_INPUT;
			}
			bits |= 1u << i;
		}
		p += w;
		while (p < end && (*p == ' ' || *p == ','))
			p++;
	}
	memcpy(field, &bits, sizeof bits);
	return CS_OK;
}

static cs_status set_preset(cs_scenario *sc, const cs_config_key *k, const char *text, char *msg, size_t n)
{
	const char *names[32];
	size_t count = 0;

	if (k->kind == CS_KIND_GPU_PRESET) {
		const cs_gpu_spec *g = cs_preset_gpu(text);
		if (g) {
			server_gpus(sc, &sc->cluster.gpu, g);
			sc->cluster.gpu = *g;
			return CS_OK;
		}
		while (count < 32 && (names[count] = cs_preset_gpu_name(count)))
			count++;
	} else {
		const cs_model_spec *m = cs_preset_model(text);
		if (m) {
			sc->model = *m;
			sc->derived &=
				~(unsigned)(CS_DERIVED_KV_HEADS | CS_DERIVED_MAX_POS | CS_DERIVED_EXPERT_FFN);
			return CS_OK;
		}
		while (count < 32 && (names[count] = cs_preset_model_name(count)))
			count++;
	}
	names[count] = NULL;
	{
		const char *near = cs_suggest(text, names, count);
		char list[512];
		join_names(names, list, sizeof list);
		if (near)
			snprintf(msg, n, "unknown preset '%.40s' for '%s' (did you mean '%s'?)", text,
				 k->path, near);
		else
			snprintf(msg, n, "unknown preset '%.40s' for '%s' (known: %s)", text, k->path, list);
	}
	return CS_ERR_INPUT;
}

/* The first byte of text[len] that is not valid UTF-8 (an overlong form,
 * a surrogate, past U+10FFFF, a sequence cut short) or starts a control
 * character (C0, DEL, C1), or len if none; *control tells which. */
static size_t bad_text(const unsigned char *t, size_t len, bool *control)
{
	for (size_t i = 0; i < len;) {
		unsigned c = t[i];
		size_t need = c < 0x80             ? 0
			      : (c & 0xe0) == 0xc0 ? 1
			      : (c & 0xf0) == 0xe0 ? 2
			      : (c & 0xf8) == 0xf0 ? 3
						   : 4;
		*control = false;
		if (need == 4 || i + need >= len + (need == 0))
			return i;
		unsigned cp = need == 0 ? c : c & (0x3f >> need);
		for (size_t j = 1; j <= need; j++) {
			if ((t[i + j] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (t[i + j] & 0x3f);
		}
		static const unsigned least[] = { 0, 0x80, 0x800, 0x10000 };
		if (cp < least[need] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			*control = true;
			return i;
		}
		i += need + 1;
	}
	return len;
}

cs_status cs__config_text(const char *what, const char *text, size_t len, char *msg, size_t n)
{
	bool control = false;
	size_t at = bad_text((const unsigned char *)text, len, &control);
	if (at == len)
		return CS_OK;
	if (control)
		snprintf(msg, n,
			 "%s holds a control character (0x%02x) at byte %zu: not printable in a report", what,
			 (unsigned char)text[at], at + 1);
	else
		snprintf(msg, n, "%s is not valid UTF-8 at byte %zu (0x%02x)", what, at + 1,
			 (unsigned char)text[at]);
	return CS_ERR_INPUT;
}

cs_status cs__config_set(cs_scenario *sc, const cs_config_key *k, const char *text, char *msg, size_t n)
{
	void *field = (char *)sc + k->offset;
	bool no_unit;
	double v;

	if (!text || !*text || strcmp(text, "~") == 0 || strcmp(text, "null") == 0) {
		snprintf(msg, n, "missing value for '%s'", k->path);
		return CS_ERR_INPUT;
	}
	switch (k->kind) {
	case CS_KIND_INT: return set_int(sc, k, text, msg, n);
	case CS_KIND_BOOL: return set_bool(sc, k, text, msg, n);
	case CS_KIND_FLOAT:
	case CS_KIND_RATIO:
		if (!cs__parse_number(text, &v)) {
			snprintf(msg, n, "expected a number for '%s', got '%.40s'", k->path, text);
			return CS_ERR_INPUT;
		}
		if (check_range(k, v, text, msg, n) != CS_OK)
			return CS_ERR_INPUT;
		memcpy(field, &v, sizeof v);
		return CS_OK;
	case CS_KIND_STRING: {
		char what[160];
		snprintf(what, sizeof what, "the value of '%s'", k->path);
		if (cs__config_text(what, text, strlen(text), msg, n) != CS_OK)
			return CS_ERR_INPUT;
		if (strlen(text) >= k->size) {
			snprintf(msg, n, "'%s' is too long (at most %zu characters)", k->path, k->size - 1);
			return CS_ERR_INPUT;
		}
		memcpy(field, text, strlen(text) + 1);
		return CS_OK;
	}
	case CS_KIND_ENUM: {
		size_t count = 0;
		while (k->names[count])
			count++;
		/* as written, then in any case ("1F1B"), then another tool's name
		 * for it ("Interleaved1F1B", "FULL_SHARD") */
		const char *alias = cs__config_value_alias(k->path, text);
		for (int pass = 0; pass < 3; pass++) {
			for (size_t i = 0; i < count; i++) {
				bool eq = pass == 0   ? cs_name_eq(k->names[i], text)
					  : pass == 1 ? cs__config_loose_eq(k->names[i], text)
						      : alias && strcmp(k->names[i], alias) == 0;
				if (eq) {
					int x = (int)i;
					memcpy(field, &x, sizeof x);
					return CS_OK;
				}
			}
		}
		return unknown_name(k, text, k->names, count, msg, n);
	}
	case CS_KIND_SIZE:
	case CS_KIND_BANDWIDTH:
	case CS_KIND_FLOPS:
	case CS_KIND_TIME: {
		char why[400];
		if (cs__parse_quantity(text, k->kind, &v, &no_unit, why, sizeof why) != CS_OK) {
			if (no_unit)
				snprintf(msg, n, "'%s' needs a unit (e.g. '%.20s %s')", k->path, text,
					 strchr(cs_config_kind_example(k->kind), ' ') + 1);
			else
				snprintf(msg, n, "'%s': %s", k->path, why);
			return CS_ERR_INPUT;
		}
		if (k->kind == CS_KIND_TIME) {
			int64_t ns;
			if (check_range(k, v, text, msg, n) != CS_OK)
				return CS_ERR_INPUT;
			if (cs__time_to_ns(v, text, &ns, why, sizeof why) != CS_OK) {
				snprintf(msg, n, "'%s': %s", k->path, why);
				return CS_ERR_INPUT;
			}
			memcpy(field, &ns, sizeof ns);
			return CS_OK;
		}
		if (check_range(k, v, text, msg, n) != CS_OK)
			return CS_ERR_INPUT;
		memcpy(field, &v, sizeof v);
		return CS_OK;
	}
	case CS_KIND_ORDER: return set_order(sc, k, text, msg, n);
	case CS_KIND_SET: return set_names(k, text, field, msg, n);
	case CS_KIND_GPU_PRESET:
	case CS_KIND_MODEL_PRESET: return set_preset(sc, k, text, msg, n);
	}
	snprintf(msg, n, "'%s' has an unknown kind", k->path);
	return CS_ERR_INPUT;
}
