/*
 * config_int.h - helpers shared by the files of src/config only.
 */
#ifndef CS_CONFIG_CONFIG_INT_H
#define CS_CONFIG_CONFIG_INT_H

#include "config/config.h"

/* Upper bound on the key table's length (checked by the tests). */
#define CS__MAX_KEYS CS_SCENARIO_MAX_KEYS

/* units.c */
bool cs__parse_number(const char *text, double *out);
cs_status cs__parse_quantity(const char *text, cs_config_kind kind, double *out, bool *no_unit, char *msg,
			     size_t n);
cs_status cs__time_to_ns(double ns, const char *text, int64_t *out, char *msg, size_t n);

/* keys.c, set.c */
size_t cs__config_key_index(const cs_config_key *k);
/* Set key k from text with its kind's checks; the message names the key. */
cs_status cs__config_set(cs_scenario *sc, const cs_config_key *k, const char *text, char *msg, size_t n);
/* CS_OK when text[len] is valid UTF-8 without a control character; else
 * CS_ERR_INPUT with "WHAT is not valid UTF-8 at byte N (0xXX)" or "WHAT
 * holds a control character ..." in msg[n] (the text itself not echoed). */
cs_status cs__config_text(const char *what, const char *text, size_t len, char *msg, size_t n);
/* Children names of a dotted section ("cluster" -> gpu, nodes, ...) into
 * names[max]; returns the count. */
size_t cs__config_children(const char *section, const char **names, char (*buf)[48], size_t max);
bool cs__config_is_section(const char *path);

/* scan.c: the event pass over buf[len] before the tree is built: aliases,
 * more than one document, the nesting, node and key limits of config.h, an
 * unknown top-level key (after any syntax error). */
cs_status cs__config_scan(const unsigned char *buf, size_t len, const char *file, cs_diag *diag);

/* aliases.c: other tools' spellings. Whether a and b are equal but for
 * case and the dashes, underscores and dots between their words; the
 * canonical value of `key` that `text` spells (NULL: none); the key an
 * unknown name is another tool's for (its last dotted part compared;
 * NULL: none). */
bool cs__config_loose_eq(const char *a, const char *b);
const char *cs__config_value_alias(const char *key, const char *text);
const char *cs__config_key_alias(const char *name);

/* validate.c, validate_model.c: a check reads the scenario and, failing,
 * writes diag (NULL: no message) at the place of the first of its keys
 * that has one, else the file. */
typedef struct cs__checker {
	cs_scenario *sc;
	cs_diag *diag;
} cs__checker;
cs_status cs__config_fail(const cs__checker *c, const char *key1, const char *key2, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The key's entry when it has a place (file or --set), else NULL. */
const cs_config_key *cs__config_placed(const cs__checker *c, const char *key);
cs_status cs__config_check_model(cs__checker *c);
cs_status cs__config_check_expert_fold(cs__checker *c);
void cs__config_reopen(cs_scenario *sc);
cs_status cs__config_check(cs_scenario *sc, cs_diag *diag);
/* Where key k's value came from, as messages print it: "file:line:col",
 * "--set 'key=value'" or, for a default, the file's path ("scenario" for
 * none). */
void cs__config_where(const cs_scenario *sc, const cs_config_key *k, char *out, size_t n);

/* stragglers.c: the "stragglers" list of a loaded document */
struct yaml_document_s;
struct yaml_node_s;
cs_status cs__config_stragglers(cs_scenario *sc, struct yaml_document_s *doc, struct yaml_node_s *list,
				const char *file, cs_diag *diag);

#endif
