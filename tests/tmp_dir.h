/*
 * tmp_dir.h - where the Check suites put their temporary files: $TMPDIR,
 * which tests/meson.build sets to the build folder's tests/tmp, else /tmp
 * (a suite run by hand). Header only, for the suites that write files.
 */
#ifndef CS_TESTS_TMP_DIR_H
#define CS_TESTS_TMP_DIR_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The folder. */
static inline const char *cs_test_tmp_dir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

/* "DIR/STEM-XXXXXX" in buf (n bytes), for mkstemp or mkdtemp; returns buf. */
static inline char *cs_test_tmp(char *buf, size_t n, const char *stem)
{
	snprintf(buf, n, "%s/%s-XXXXXX", cs_test_tmp_dir(), stem);
	return buf;
}

#endif
