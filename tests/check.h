/*
 * check.h -- the assertion of the C unit tests: CHECK(cond, fmt, ...) counts
 * the check and, when cond is false, prints the file, line and message and
 * counts a failure. A test's main returns fails != 0.
 */
#ifndef SIM_TESTS_CHECK_H
#define SIM_TESTS_CHECK_H

#include <stdio.h>

static int fails, checks;

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		checks++;                                                                                              \
		if (!(cond)) {                                                                                         \
			fails++;                                                                                       \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                    \
			printf(__VA_ARGS__);                                                                           \
			printf("\n");                                                                                  \
		}                                                                                                      \
	} while (0)

#endif
