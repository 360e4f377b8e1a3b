/* unit.h: what every cmocka test program of the runner shares. */
#ifndef RCUWB_UNIT_H
#define RCUWB_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/*
 * The program finds its data (stats/, perf-configs/, ...) next to its binary;
 * a test program is in obj/tests, so it is told where the checkout is.
 */
__attribute__((constructor)) static void unit_data_dir(void)
{
	setenv("RCUWB_DATADIR", RCUWB_SRCDIR, 0);
}

/*
 * Run a group (with a group setup and teardown, or NULL) and end with the
 * line "NAME: N passed, M failed" that 'make check' adds up; exit status 1
 * if any failed.
 */
#define RUN_UNIT_GROUP(name, tests, setup, teardown)					\
	do {										\
		int failed_ = cmocka_run_group_tests_name(name, tests, setup, teardown);	\
		printf("%s: %zu passed, %d failed\n", name,				\
		       sizeof(tests) / sizeof((tests)[0]) - (size_t)failed_, failed_);	\
		return failed_ ? 1 : 0;							\
	} while (0)

#define RUN_UNIT_TESTS(name, tests) RUN_UNIT_GROUP(name, tests, NULL, NULL)

#endif
