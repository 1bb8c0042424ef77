/*
 * invariant.h - CS_ASSERT: an invariant of the code (not of the input:
 * bad input is a cs_status with a message), checked in debug and
 * sanitizer builds (CS_CHECKED, set by meson.build) and compiled out of a
 * release build, where the hot paths that hold most of them run.
 */
#ifndef CS_CORE_INVARIANT_H
#define CS_CORE_INVARIANT_H

#include <stdio.h>
#include <stdlib.h>

_Noreturn static inline void cs__invariant_failed(const char *cond, const char *file, int line)
{
	fprintf(stderr, "%s:%d: invariant failed: %s\n", file, line, cond);
	abort();
}

#ifdef CS_CHECKED
#define CS_ASSERT(cond) ((cond) ? (void)0 : cs__invariant_failed(#cond, __FILE__, __LINE__))
#else
/* the condition is still compiled, so it cannot rot, but never evaluated */
#define CS_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#endif
