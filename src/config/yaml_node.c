/*
 * yaml_node.c - messages and numbers for the library's YAML readers
 * (yaml_node.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "config/yaml_node.h"

cs_status cs__yaml_at(cs_diag *diag, const char *file, const yaml_node_t *node, const char *fmt, ...)
{
	char body[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	snprintf(diag->msg, sizeof diag->msg, "%.300s:%d:%d: %.680s", file, (int)node->start_mark.line + 1,
		 (int)node->start_mark.column + 1, body);
	return CS_ERR_INPUT;
}

const char *cs__yaml_type_word(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	default: return node->data.scalar.length ? "a scalar" : "an empty value";
	}
}

cs_status cs__yaml_error(const yaml_parser_t *yp, const char *file, cs_diag *diag)
{
	const char *problem = yp->problem ? yp->problem : "cannot parse";

	if (yp->error == YAML_MEMORY_ERROR) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory parsing '%.400s'", file);
		return CS_ERR_NOMEM;
	}
	if (yp->error == YAML_READER_ERROR && yp->input.string.start &&
	    yp->problem_offset <= (size_t)(yp->input.string.end - yp->input.string.start)) {
		/* bytes that are not UTF-8: libyaml gives their offset, not a mark
		 * (every reader here hands libyaml a string) */
		int line = 1, col = 1;
		const unsigned char *e = yp->input.string.start + yp->problem_offset;
		/* a bad trailing byte is named at the sequence it cuts short */
		while (yp->problem && strstr(yp->problem, "trailing") && e > yp->input.string.start &&
		       (e[-1] & 0xc0) == 0x80)
			e--;
		if (yp->problem && strstr(yp->problem, "trailing") && e > yp->input.string.start &&
		    (e[-1] & 0xc0) == 0xc0)
			e--;
		for (const unsigned char *c = yp->input.string.start; c < e; c++)
			if (*c == '\n') {
				line++;
				col = 1;
			} else if ((*c & 0xc0) != 0x80) {
				col++; /* a character's first byte */
			}
		snprintf(diag->msg, sizeof diag->msg, "%.400s:%d:%d: yaml: %s: not UTF-8 text", file, line,
			 col, problem);
		return CS_ERR_INPUT;
	}
	if (yp->context)
		snprintf(diag->msg, sizeof diag->msg, "%.400s:%d:%d: yaml: %s (%s, line %d)", file,
			 (int)yp->problem_mark.line + 1, (int)yp->problem_mark.column + 1, problem,
			 yp->context, (int)yp->context_mark.line + 1);
	else
		snprintf(diag->msg, sizeof diag->msg, "%.400s:%d:%d: yaml: %s", file,
			 (int)yp->problem_mark.line + 1, (int)yp->problem_mark.column + 1, problem);
	return CS_ERR_INPUT;
}

cs_status cs__yaml_check_keys(cs_diag *diag, const char *file, yaml_document_t *doc, const yaml_node_t *map)
{
	yaml_node_pair_t *start = map->data.mapping.pairs.start;
	for (yaml_node_pair_t *p = start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (!k || k->type != YAML_SCALAR_NODE)
			return cs__yaml_at(diag, file, k ? k : map, "keys must be plain names, not %s",
					   k ? cs__yaml_type_word(k) : "nothing");
		for (yaml_node_pair_t *q = start; q < p; q++) {
			yaml_node_t *o = yaml_document_get_node(doc, q->key);
			if (o && o->type == YAML_SCALAR_NODE &&
			    strcmp((const char *)o->data.scalar.value, (const char *)k->data.scalar.value) ==
				    0)
				return cs__yaml_at(
					diag, file, k, "duplicate key '%.100s' (first given on line %d)",
					(const char *)k->data.scalar.value, (int)o->start_mark.line + 1);
		}
	}
	return CS_OK;
}

bool cs__yaml_number(const yaml_node_t *node, double *out)
{
	const char *s = (const char *)node->data.scalar.value;
	char *end;

	if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !s[0])
		return false;
	if (strcasecmp(s, ".nan") == 0 || strcasecmp(s + (s[0] == '+' || s[0] == '-'), ".inf") == 0) {
		*out = s[1] == 'n' || s[1] == 'N' ? NAN : s[0] == '-' ? -INFINITY : INFINITY;
		return true;
	}
	*out = strtod(s, &end);
	return end != s && *end == '\0';
}

/* 0, or the message at the first collection deeper than CS_CONFIG_MAX_DEPTH. */
static cs_status depth_ok(const char *buf, size_t len, const char *file, cs_diag *diag)
{
	yaml_parser_t yp;
	yaml_event_t ev;
	cs_status st = CS_OK;
	int depth = 0;
	if (!yaml_parser_initialize(&yp)) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory parsing '%.400s'", file);
		return CS_ERR_NOMEM;
	}
	yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
	for (bool end = false; st == CS_OK && !end;) {
		if (!yaml_parser_parse(&yp, &ev)) {
			st = cs__yaml_error(&yp, file, diag);
			break;
		}
		if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
			if (depth++ == CS_CONFIG_MAX_DEPTH) {
				snprintf(diag->msg, sizeof diag->msg,
					 "%.400s:%d:%d: nesting deeper than %d levels", file,
					 (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					 CS_CONFIG_MAX_DEPTH);
				st = CS_ERR_INPUT;
			}
		} else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
			depth--;
		}
		end = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	return st;
}

cs_status cs__yaml_load(yaml_parser_t *yp, const char *buf, size_t len, const char *file,
			yaml_document_t *doc, cs_diag *diag)
{
	cs_status st = depth_ok(buf, len, file, diag);
	if (st != CS_OK)
		return st;
	if (!yaml_parser_initialize(yp)) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory parsing '%.400s'", file);
		return CS_ERR_NOMEM;
	}
	yaml_parser_set_input_string(yp, (const unsigned char *)buf, len);
	if (!yaml_parser_load(yp, doc)) {
		st = cs__yaml_error(yp, file, diag);
		yaml_parser_delete(yp);
	}
	return st;
}
