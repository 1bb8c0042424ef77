/*
 * load.c - a scenario file into a cs_scenario.
 *
 * Order: defaults, the presets the file names (cluster.gpu, model.preset)
 * wherever they appear in their mapping, every other value of the file,
 * the --set overrides in the order given, then validation. The file is
 * read whole (at most CS_CONFIG_MAX_FILE bytes), scanned once for aliases
 * (refused), then loaded with libyaml's document API so every node keeps
 * its line and column.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "core/file.h"
#include "config/config_int.h"
#include "config/yaml_node.h"

typedef struct loader {
	cs_scenario *sc;
	const char *file;
	yaml_document_t doc;
	cs_diag *diag;
} loader;

#define at(ld, node, ...) cs__yaml_at((ld)->diag, (ld)->file, (node), __VA_ARGS__)

#define type_word cs__yaml_type_word

static yaml_node_t *find(loader *ld, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(&ld->doc, p->value);
	}
	return NULL;
}

static void mark(loader *ld, const cs_config_key *k, const yaml_node_t *node)
{
	ld->sc->where[cs__config_key_index(k)] =
		(cs_key_pos){ (int32_t)node->start_mark.line + 1, (int32_t)node->start_mark.column + 1 };
}

/* A list of names (CS_KIND_SET) as a YAML sequence: each item checked at
 * its own node, then the whole joined as one value. */
static cs_status set_list(loader *ld, const cs_config_key *k, yaml_node_t *value)
{
	char msg[700], text[512];
	size_t used = 0;

	text[0] = '\0';
	for (yaml_node_item_t *it = value->data.sequence.items.start; it < value->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&ld->doc, *it);
		if (!item || item->type != YAML_SCALAR_NODE)
			return at(ld, item ? item : value, "the items of '%s' must be names, not %s", k->path,
				  item ? type_word(item) : "nothing");
		const char *name = (const char *)item->data.scalar.value;
		if (strlen(name) != item->data.scalar.length || strpbrk(name, " ,[]") ||
		    used + item->data.scalar.length + 2 > sizeof text)
			return at(ld, item, "'%s' expects names, not '%.40s'", k->path, name);
		if (cs__config_set(ld->sc, k, name, msg, sizeof msg) != CS_OK)
			return at(ld, item, "%s", msg);
		used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", used ? " " : "", name);
	}
	if (cs__config_set(ld->sc, k, used ? text : "[]", msg, sizeof msg) != CS_OK)
		return at(ld, value, "%s", msg);
	mark(ld, k, value);
	return CS_OK;
}

static cs_status set_scalar(loader *ld, const cs_config_key *k, yaml_node_t *value)
{
	char msg[700];

	if (k->kind == CS_KIND_SET && value->type == YAML_SEQUENCE_NODE)
		return set_list(ld, k, value);
	if (value->type != YAML_SCALAR_NODE)
		return at(ld, value, "'%s' expects a %s, not %s", k->path, cs_config_kind_name(k->kind),
			  type_word(value));
	const char *text = (const char *)value->data.scalar.value;
	if (strlen(text) != value->data.scalar.length)
		return at(ld, value, "the value of '%s' holds a NUL character (\\0 or \\u0000)", k->path);
	if (cs__config_set(ld->sc, k, text, msg, sizeof msg) != CS_OK)
		return at(ld, value, "%s", msg);
	mark(ld, k, value);
	return CS_OK;
}

/* Phase one: presets first, so inline keys next to them win. */
static cs_status load_presets(loader *ld, yaml_node_t *root)
{
	yaml_node_t *gpu = find(ld, find(ld, root, "cluster"), "gpu");
	yaml_node_t *model = find(ld, root, "model");

	if (gpu && gpu->type == YAML_MAPPING_NODE)
		gpu = find(ld, gpu, "preset");
	if (gpu && gpu->type == YAML_SCALAR_NODE) {
		cs_status st = set_scalar(ld, cs_config_key_find("cluster.gpu.preset"), gpu);
		if (st != CS_OK)
			return st;
	}
	if (model && model->type == YAML_MAPPING_NODE)
		model = find(ld, model, "preset");
	if (model && model->type == YAML_SCALAR_NODE)
		return set_scalar(ld, cs_config_key_find("model.preset"), model);
	return CS_OK;
}

static cs_status unknown_key(loader *ld, yaml_node_t *key, const char *prefix, const char *name)
{
	const char *names[96];
	char buf[96][48];
	size_t n = cs__config_children(prefix, names, buf, 96);
	const char *near = cs__config_key_alias(name);
	if (!near)
		near = cs_suggest(name, names, n);
	char where[300];

	if (prefix[0])
		snprintf(where, sizeof where, " in '%.200s'", prefix);
	else
		where[0] = '\0';
	if (near)
		return at(ld, key, "unknown key '%.100s'%s (did you mean '%.60s'?)", name, where, near);
	return at(ld, key, "unknown key '%.100s'%s", name, where);
}

static cs_status walk(loader *ld, yaml_node_t *map, const char *prefix)
{
	yaml_node_pair_t *start = map->data.mapping.pairs.start;

	for (yaml_node_pair_t *p = start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *key = yaml_document_get_node(&ld->doc, p->key);
		yaml_node_t *value = yaml_document_get_node(&ld->doc, p->value);
		const cs_config_key *k;
		const char *name;
		char path[256];
		cs_status st;

		if (!key || !value)
			continue;
		if (key->type != YAML_SCALAR_NODE)
			return at(ld, key, "keys must be plain names, not %s", type_word(key));
		name = (const char *)key->data.scalar.value;
		for (yaml_node_pair_t *q = start; q < p; q++) {
			yaml_node_t *other = yaml_document_get_node(&ld->doc, q->key);
			if (other && other->type == YAML_SCALAR_NODE &&
			    strcmp((const char *)other->data.scalar.value, name) == 0)
				return at(ld, key, "duplicate key '%.100s' (first given on line %d)", name,
					  (int)other->start_mark.line + 1);
		}
		if (strchr(name, '.') || strlen(prefix) + strlen(name) + 2 > sizeof path)
			return unknown_key(ld, key, prefix, name);
		{
			size_t pl = strlen(prefix), nl = strlen(name);
			memcpy(path, prefix, pl);
			if (pl)
				path[pl++] = '.';
			memcpy(path + pl, name, nl + 1);
		}

		if (!prefix[0] && strcmp(name, "stragglers") == 0) {
			if (value->type == YAML_SCALAR_NODE && value->data.scalar.length == 0)
				continue; /* an empty list */
			if (value->type != YAML_SEQUENCE_NODE)
				return at(ld, value, "'stragglers' must be a list, not %s", type_word(value));
			st = cs__config_stragglers(ld->sc, &ld->doc, value, ld->file, ld->diag);
			if (st != CS_OK)
				return st;
			continue;
		}
		if (strcmp(path, "fleet") == 0 && value->type != YAML_MAPPING_NODE) {
			/* 'fleet: ideal' names the preset */
			if (value->type != YAML_SCALAR_NODE)
				return at(ld, value,
					  "'fleet' must be a preset (production | ideal) or a "
					  "mapping, not %s",
					  type_word(value));
			if ((st = set_scalar(ld, cs_config_key_find("fleet.preset"), value)) != CS_OK)
				return st;
			continue;
		}
		if ((strcmp(path, "cluster.gpu") == 0 || strcmp(path, "model") == 0) &&
		    value->type == YAML_SCALAR_NODE) {
			mark(ld, cs_config_key_find(path), value); /* preset set in phase one */
			continue;
		}
		k = cs_config_key_find(path);
		if (k && strcmp(k->path, path) == 0) {
			if (k->kind == CS_KIND_GPU_PRESET || k->kind == CS_KIND_MODEL_PRESET) {
				mark(ld, k, value);
				continue;
			}
			if ((st = set_scalar(ld, k, value)) != CS_OK)
				return st;
			continue;
		}
		if (cs__config_is_section(path)) {
			if (value->type != YAML_MAPPING_NODE)
				return at(ld, value, "'%s' must be a mapping, not %s", path,
					  type_word(value));
			if ((st = walk(ld, value, path)) != CS_OK)
				return st;
			continue;
		}
		return unknown_key(ld, key, prefix, name);
	}
	return CS_OK;
}

/* ---- reading the file ---------------------------------------------------- */

static cs_status load_doc(loader *ld, const unsigned char *buf, size_t len)
{
	yaml_parser_t parser;
	yaml_node_t *root;
	cs_status st;

	if (!yaml_parser_initialize(&parser)) {
		snprintf(ld->diag->msg, sizeof ld->diag->msg, "out of memory parsing '%.400s'", ld->file);
		return CS_ERR_NOMEM;
	}
	yaml_parser_set_input_string(&parser, buf, len);
	if (!yaml_parser_load(&parser, &ld->doc)) {
		st = cs__yaml_error(&parser, ld->file, ld->diag);
		yaml_parser_delete(&parser);
		return st;
	}
	yaml_parser_delete(&parser);
	root = yaml_document_get_root_node(&ld->doc);
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
		      root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE))
		st = (snprintf(ld->diag->msg, sizeof ld->diag->msg,
			       "%.400s:1:1: empty scenario "
			       "(expected a mapping with 'cluster' and 'model')",
			       ld->file),
		      CS_ERR_INPUT);
	else if (root->type != YAML_MAPPING_NODE)
		st = at(ld, root, "the top level must be a mapping, not %s", type_word(root));
	else if ((st = load_presets(ld, root)) == CS_OK)
		st = walk(ld, root, "");
	yaml_document_delete(&ld->doc);
	return st;
}

/* ---- overrides ----------------------------------------------------------- */

/* Keep the assignment text in the scenario for messages about the key. */
static cs_key_pos set_mark(cs_scenario *sc, const char *a)
{
	size_t len = strlen(a) + 1;
	if (sc->set_used < 0 || (size_t)sc->set_used + len > sizeof sc->set_text)
		return (cs_key_pos){ -1, -1 };
	memcpy(sc->set_text + sc->set_used, a, len);
	cs_key_pos w = { -1, sc->set_used };
	sc->set_used += (int32_t)len;
	return w;
}

static cs_status override(cs_scenario *sc, const char *a, cs_diag *diag)
{
	char key[256], value[512], msg[700];
	const char *eq = a ? strchr(a, '=') : NULL, *v;
	const cs_config_key *k;
	size_t kl, vl;

	/* checked before any message echoes it: the key, then the whole argument
	 * under the key's name */
	char what[160] = "--set's argument";
	if (a && eq && cs__config_text(what, a, (size_t)(eq - a), msg, sizeof msg) == CS_OK)
		snprintf(what, sizeof what, "--set '%.*s=...'", (int)(eq - a > 100 ? 100 : eq - a), a);
	if (a && cs__config_text(what, a, strlen(a), msg, sizeof msg) != CS_OK) {
		snprintf(diag->msg, sizeof diag->msg, "%s", msg);
		return CS_ERR_INPUT;
	}
	if (!eq) {
		snprintf(diag->msg, sizeof diag->msg, "--set '%.200s': expected key.path=value", a ? a : "");
		return CS_ERR_INPUT;
	}
	for (kl = (size_t)(eq - a); kl && a[kl - 1] == ' '; kl--)
		;
	for (v = eq + 1; *v == ' '; v++)
		;
	for (vl = strlen(v); vl && v[vl - 1] == ' '; vl--)
		;
	if (kl >= sizeof key || vl >= sizeof value) {
		snprintf(diag->msg, sizeof diag->msg, "--set '%.200s': too long", a);
		return CS_ERR_INPUT;
	}
	memcpy(key, a, kl);
	key[kl] = '\0';
	memcpy(value, v, vl);
	value[vl] = '\0';
	k = cs_config_key_find(strcmp(key, "fleet") == 0 ? "fleet.preset" : key);
	if (!k) {
		const char *names[CS__MAX_KEYS + 2], *near;
		size_t n = cs_config_key_count();
		for (size_t i = 0; i < n; i++)
			names[i] = cs_config_key_at(i)->path;
		names[n++] = "cluster.gpu";
		names[n++] = "model";
		near = cs__config_key_alias(key);
		if (!near)
			near = cs_suggest(key, names, n);
		if (strcmp(key, "stragglers") == 0)
			snprintf(diag->msg, sizeof diag->msg,
				 "--set '%.200s': 'stragglers' can only be "
				 "given in the scenario file",
				 a);
		else if (cs__config_is_section(key))
			snprintf(diag->msg, sizeof diag->msg,
				 "--set '%.200s': '%.100s' is a section; "
				 "set one of its keys",
				 a, key);
		else if (near)
			snprintf(diag->msg, sizeof diag->msg,
				 "--set '%.200s': unknown key '%.100s' (did "
				 "you mean '%s'?)",
				 a, key, near);
		else
			snprintf(diag->msg, sizeof diag->msg, "--set '%.200s': unknown key '%.100s'", a, key);
		return CS_ERR_INPUT;
	}
	cs__config_reopen(sc);
	if (cs__config_set(sc, k, value, msg, sizeof msg) != CS_OK) {
		snprintf(diag->msg, sizeof diag->msg, "--set '%.200s': %s", a, msg);
		return CS_ERR_INPUT;
	}
	sc->where[cs__config_key_index(k)] = set_mark(sc, a);
	return CS_OK;
}

void cs__config_where(const cs_scenario *sc, const cs_config_key *k, char *out, size_t n)
{
	cs_key_pos w = k ? sc->where[cs__config_key_index(k)] : (cs_key_pos){ 0, 0 };
	const char *file = sc->path[0] ? sc->path : "scenario";
	if (w.line > 0)
		snprintf(out, n, "%.300s:%d:%d", file, (int)w.line, (int)w.col);
	else if (w.line < 0 && w.col >= 0 && w.col < sc->set_used)
		snprintf(out, n, "--set '%.300s'", sc->set_text + w.col);
	else if (w.line < 0)
		snprintf(out, n, "--set '%s'", k->path);
	else
		snprintf(out, n, "%.300s", file);
}

void cs_config_locate(const cs_scenario *sc, const char *key, char *out, size_t n)
{
	cs__config_where(sc, cs_config_key_find(key), out, n);
}

cs_status cs_config_apply_override(cs_scenario *sc, const char *assignment, cs_diag *diag)
{
	cs_diag scratch;

	if (!sc)
		return CS_ERR_INPUT;
	return override(sc, assignment, diag ? diag : &scratch);
}

/* ---- the public entry points --------------------------------------------- */

static void default_name(cs_scenario *sc, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strcspn(base, ".");
	if (len >= sizeof sc->name)
		len = sizeof sc->name - 1;
	memcpy(sc->name, base, len);
	sc->name[len] = '\0';
}

cs_status cs_config_load(const char *path, const char *const *overrides, size_t n_overrides,
			 cs_scenario **out, cs_diag *diag)
{
	cs_diag scratch;
	unsigned char *buf = NULL;
	size_t len = 0;
	loader *ld;
	cs_status st;

	if (!diag)
		diag = &scratch;
	diag->msg[0] = '\0';
	if (!out) {
		snprintf(diag->msg, sizeof diag->msg, "no place for the scenario");
		return CS_ERR_INPUT;
	}
	*out = NULL;
	if (!path) {
		snprintf(diag->msg, sizeof diag->msg, "no scenario file given");
		return CS_ERR_INPUT;
	}
	if ((st = cs_file_read(path, CS_CONFIG_MAX_FILE, (char **)&buf, &len, diag)) != CS_OK)
		return st;
	ld = calloc(1, sizeof *ld);
	if (ld)
		ld->sc = calloc(1, sizeof *ld->sc);
	if (!ld || !ld->sc) {
		free(ld);
		free(buf);
		snprintf(diag->msg, sizeof diag->msg, "out of memory loading '%.400s'", path);
		return CS_ERR_NOMEM;
	}
	ld->file = path;
	ld->diag = diag;
	cs_config_defaults(ld->sc);
	snprintf(ld->sc->path, sizeof ld->sc->path, "%s", path);

	st = cs__config_scan(buf, len, path, diag);
	if (st == CS_OK)
		st = load_doc(ld, buf, len);
	free(buf);
	for (size_t i = 0; st == CS_OK && i < n_overrides; i++)
		st = override(ld->sc, overrides[i], diag);
	if (st == CS_OK && ld->sc->name[0] == '\0')
		default_name(ld->sc, path);
	if (st == CS_OK)
		st = cs__config_check(ld->sc, diag);
	if (st == CS_OK)
		*out = ld->sc;
	else
		free(ld->sc);
	free(ld);
	return st;
}

void cs_config_free(cs_scenario *sc) { free(sc); }
