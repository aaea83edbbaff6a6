/*
 * trace_test.h -- what tests/test_trace.c and test_trace_bad.c share: a trace
 * parsed from a string (a CHECK that it loads), a rank's events expanded, and
 * their count. Static in each test (CHECK counts per file, check.h).
 */
#ifndef SIM_TESTS_TRACE_TEST_H
#define SIM_TESTS_TRACE_TEST_H

#include "check.h"
#include "trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline struct trace *parse(const char *text)
{
	char why[TR_MSG_MAX] = "";
	struct trace *t = tr_parse_string(text, "t.trace", why, sizeof why);
	CHECK(t != NULL, "refused: %s\n--- trace ---\n%s---", why, text);
	return t;
}

/* Events of one rank (up to max); the count, or -1 with the message. */
static inline int expand(const struct trace *t, int rank, struct tr_event *ev, int max, char *why, size_t whylen)
{
	struct tr_cursor *c = tr_cursor_new(t, rank);
	struct tr_event tmp;
	int n = 0, r;
	if (!c)
		return -2;
	while ((r = tr_next(c, n < max ? &ev[n] : &tmp, why, whylen)) == 1)
		n++;
	tr_cursor_free(c);
	return r < 0 ? -1 : n;
}

static inline int count(const struct trace *t, int rank)
{
	char why[TR_MSG_MAX] = "";
	struct tr_event ev;
	int n = expand(t, rank, &ev, 0, why, sizeof why);
	CHECK(n >= 0, "rank %d: %s", rank, why);
	return n;
}

#endif
