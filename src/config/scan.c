/*
 * scan.c - the first pass over a scenario's YAML, one event at a time,
 * before its tree is built (config_int.h): what would make building the
 * tree slow or huge, and what can be refused without it. libyaml's parse
 * errors in the loader's words are here too.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "config/config_int.h"
#include "config/yaml_node.h"

/* Whether `name` is a top-level key; if not, the nearest one in *near. */
static bool top_level_known(const char *name, char near[48])
{
	const char *names[97];
	char buf[96][48];
	size_t n = cs__config_children("", names, buf, 96);
	names[n++] = "stragglers";
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	const char *s = cs_suggest(name, names, n);
	snprintf(near, 48, "%s", s ? s : "");
	return false;
}

static cs_status scan_fail(const char *file, const yaml_event_t *ev, cs_diag *diag, const char *what,
			   const char *name)
{
	snprintf(diag->msg, sizeof diag->msg, "%.400s:%d:%d: ", file, (int)ev->start_mark.line + 1,
		 (int)ev->start_mark.column + 1);
	size_t used = strlen(diag->msg);
	snprintf(diag->msg + used, sizeof diag->msg - used, what, name);
	return CS_ERR_INPUT;
}

/*
 * Before building the tree, in one pass over the events: refuse aliases,
 * more than one document, nesting deeper than CS_CONFIG_MAX_DEPTH, more
 * than CS_CONFIG_MAX_NODES nodes or CS_CONFIG_MAX_KEYS keys in one
 * mapping (a document that would take minutes or gigabytes to build), and
 * an unknown top-level key as soon as it is seen.
 */
cs_status cs__config_scan(const unsigned char *buf, size_t len, const char *file, cs_diag *diag)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	cs_status st = CS_OK;
	int docs = 0, depth = 0;
	long nodes = 0;
	char unknown[640] = ""; /* the first unknown top-level key: said after the syntax */
	/* per open collection: a mapping?, its next scalar a key?, keys so far */
	bool is_map[CS_CONFIG_MAX_DEPTH + 2] = { false }, want_key[CS_CONFIG_MAX_DEPTH + 2] = { false };
	long keys[CS_CONFIG_MAX_DEPTH + 2] = { 0 };

	if (!yaml_parser_initialize(&parser)) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory parsing '%.400s'", file);
		return CS_ERR_NOMEM;
	}
	yaml_parser_set_input_string(&parser, buf, len);
	for (;;) {
		yaml_event_type_t type;
		if (!yaml_parser_parse(&parser, &ev)) {
			st = cs__yaml_error(&parser, file, diag);
			break;
		}
		type = ev.type;
		if (type == YAML_ALIAS_EVENT || (type == YAML_DOCUMENT_START_EVENT && ++docs > 1)) {
			snprintf(diag->msg, sizeof diag->msg, "%.400s:%d:%d: %s", file,
				 (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
				 type == YAML_ALIAS_EVENT ? "yaml aliases ('*name') are not supported"
							  : "only one yaml document per file");
			st = CS_ERR_INPUT;
		}
		bool node = type == YAML_SCALAR_EVENT || type == YAML_MAPPING_START_EVENT ||
			    type == YAML_SEQUENCE_START_EVENT;
		if (st == CS_OK && node && ++nodes > CS_CONFIG_MAX_NODES)
			st = scan_fail(file, &ev, diag, "more than %s yaml nodes: not a scenario", "200000");
		if (st == CS_OK && node && depth > 0 && is_map[depth] && want_key[depth]) {
			if (++keys[depth] > CS_CONFIG_MAX_KEYS)
				st = scan_fail(file, &ev, diag, "more than %s keys in one mapping", "1000");
			else if (depth == 1 && type == YAML_SCALAR_EVENT && !unknown[0]) {
				char near[48];
				const char *name = (const char *)ev.data.scalar.value;
				if (!top_level_known(name, near))
					snprintf(unknown, sizeof unknown,
						 "%.300s:%d:%d: unknown key '%.100s'%s%.48s%s", file,
						 (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
						 name, near[0] ? " (did you mean '" : "", near,
						 near[0] ? "'?)" : "");
			}
		}
		if (st == CS_OK && node && depth > 0 && is_map[depth])
			want_key[depth] = !want_key[depth];
		if (st == CS_OK && (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT)) {
			if (depth == CS_CONFIG_MAX_DEPTH)
				st = scan_fail(file, &ev, diag, "nesting deeper than %s levels", "32");
			else {
				depth++;
				is_map[depth] = type == YAML_MAPPING_START_EVENT;
				want_key[depth] = true;
				keys[depth] = 0;
			}
		}
		if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT)
			depth--;
		yaml_event_delete(&ev);
		if (st != CS_OK || type == YAML_STREAM_END_EVENT)
			break;
	}
	if (st == CS_OK && unknown[0]) {
		snprintf(diag->msg, sizeof diag->msg, "%s", unknown);
		st = CS_ERR_INPUT;
	}
	yaml_parser_delete(&parser);
	return st;
}
