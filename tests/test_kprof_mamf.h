/*
 * test_kprof_mamf.h - the kprof suite's MAMF case (test_kprof_mamf.c).
 */
#ifndef CS_TEST_KPROF_MAMF_H
#define CS_TEST_KPROF_MAMF_H

#include <check.h>

/* Adds the TCase "mamf" to `s`. */
void cs_test_kprof_mamf(Suite *s);

#endif
