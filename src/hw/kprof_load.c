/*
 * kprof_load.c - the public entry points that load a kernel profile: from a
 * built-in name or a file (cs_kprof_load) or from text (cs_kprof_parse),
 * reading (kprof_parse.c) then building (kprof_build.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/file.h"
#include "hw/kprof_int.h"

cs_status cs_kprof_parse(const char *text_in, size_t len, const char *file, cs_kprof **out, cs_diag *diag)
{
	cs_diag scratch;
	cs__kprof_raw *raw;
	cs_status st;

	if (!diag)
		diag = &scratch;
	diag->msg[0] = '\0';
	if (!file)
		file = "profile";
	if (!out || !text_in) {
		snprintf(diag->msg, sizeof diag->msg, "%.300s: no profile text or no place for it", file);
		return CS_ERR_INPUT;
	}
	*out = NULL;
	if (len > CS__KPROF_MAX_FILE) {
		snprintf(diag->msg, sizeof diag->msg, "%.300s: profile is larger than the limit of %d MiB",
			 file, CS__KPROF_MAX_FILE / (1024 * 1024));
		return CS_ERR_INPUT;
	}
	raw = calloc(1, sizeof *raw);
	if (!raw) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory loading '%.300s'", file);
		return CS_ERR_NOMEM;
	}
	st = cs__kprof_read(text_in, len, file, raw, diag);
	if (st == CS_OK)
		st = cs__kprof_build(raw, file, out, diag);
	cs__kprof_raw_free(raw);
	free(raw);
	return st;
}

cs_status cs_kprof_load(const char *name_or_path, cs_kprof **out, cs_diag *diag)
{
	cs_diag scratch;
	const char *builtin, *label = NULL;
	char *buf = NULL;
	size_t len = 0;
	cs_status st;

	if (!diag)
		diag = &scratch;
	diag->msg[0] = '\0';
	if (out)
		*out = NULL;
	if (!name_or_path || !out) {
		snprintf(diag->msg, sizeof diag->msg, "no profile name or no place for it");
		return CS_ERR_INPUT;
	}
	builtin = cs__kprof_builtin_text(name_or_path, &len, &label);
	if (builtin)
		return cs_kprof_parse(builtin, len, label, out, diag);
	if ((st = cs_file_read(name_or_path, CS__KPROF_MAX_FILE, &buf, &len, diag)) != CS_OK)
		return st;
	st = cs_kprof_parse(buf, len, name_or_path, out, diag);
	free(buf);
	return st;
}

bool cs_kprof_builtin(const char *name) { return cs__kprof_builtin_text(name, NULL, NULL) != NULL; }

const char *cs_kprof_builtin_name(size_t i) { return cs__kprof_builtin_name(i); }
