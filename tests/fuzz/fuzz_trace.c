/*
 * fuzz_trace.c -- libFuzzer target for the trace parser: the input is a
 * whole trace. A refusal must say why, on one line. A trace that parses is
 * expanded on every rank (at most 64 ranks, 10000 events each, so an input
 * stays fast): each event must have indices inside the trace's tables and a
 * canonical text on one line; each rank's communicator groups must hold it,
 * in increasing order, named by their lowest rank; an expansion error must
 * say why on one line, naming the rank.
 */
#include "trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS  64
#define MAX_EVENTS 10000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_event(const struct trace *t, int rank, const struct tr_event *ev)
{
	char text[2048];
	if (ev->kind < 0 || ev->kind >= TK_COUNT || ev->line < 1)
		abort();
	if (ev->stream < 0 || ev->stream >= tr_nstreams(t) || ev->label < -1 || ev->label >= tr_nlabels(t))
		abort();
	if (ev->nafter < 0 || ev->nafter > TR_MAX_AFTER)
		abort();
	for (int i = 0; i < ev->nafter; i++)
		if (ev->after[i] < 0 || ev->after[i] >= tr_nlabels(t))
			abort();
	switch (ev->kind) {
	case TK_COLL:
		if (ev->comm < 0 || ev->comm >= tr_ncomms(t) || ev->root < 0 ||
		    ev->root >= tr_comm_group(t, ev->comm, rank, NULL, 0, NULL))
			abort(); /* this rank is in the group, and root inside it */
		if (ev->coll == CO_BARRIER ? ev->bytes != 0 : !(ev->bytes > 0))
			abort();
		break;
	case TK_SEND:
	case TK_RECV:
		if (ev->peer < 0 || ev->peer >= tr_ranks(t) || ev->peer == rank || !(ev->bytes > 0) || ev->tag < 0)
			abort();
		break;
	case TK_DELAY:
		if (!(ev->seconds >= 0))
			abort();
		break;
	case TK_MARK:
		if (ev->mark < 0 || ev->mark >= tr_nmarks(t))
			abort();
		break;
	default: break;
	}
	size_t n = tr_event_format(t, ev, text, sizeof text);
	if (n == 0 || n >= sizeof text || strlen(text) != n || strchr(text, '\n'))
		abort();
}

static void check_groups(const struct trace *t, int rank)
{
	int m[MAX_RANKS];
	for (int c = 0; c < tr_ncomms(t); c++) {
		int gid = -5, n = tr_comm_group(t, c, rank, m, MAX_RANKS, &gid);
		if (n < 0 || n > tr_ranks(t))
			abort();
		if (n == 0) {
			if (c < 1 + DIM_COUNT || gid != -1)
				abort(); /* only a `comm ranks=` list can leave a rank out */
			continue;
		}
		int in = 0;
		for (int i = 0; i < n && i < MAX_RANKS; i++) {
			if (m[i] < 0 || m[i] >= tr_ranks(t) || (i && m[i] <= m[i - 1]))
				abort();
			in |= m[i] == rank;
		}
		if (gid != m[0] || (n <= MAX_RANKS && !in))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char why[TR_MSG_MAX];
	why[0] = '\0';
	struct trace *t = tr_parse_string(text, "fuzz.trace", why, sizeof why);
	if (!t) {
		if (!why[0] || strchr(why, '\n') || strncmp(why, "fuzz.trace:", 11))
			abort(); /* every refusal says where and why, on one line */
		free(text);
		return 0;
	}
	int ranks = tr_ranks(t);
	if (ranks < 1 || ranks > TR_MAX_RANKS)
		abort();
	for (int r = 0; r < ranks && r < MAX_RANKS; r++) {
		check_groups(t, r);
		struct tr_cursor *c = tr_cursor_new(t, r);
		if (!c)
			abort();
		struct tr_event ev;
		int k = 0, got;
		while (k < MAX_EVENTS && (got = tr_next(c, &ev, why, sizeof why)) == 1) {
			check_event(t, r, &ev);
			k++;
		}
		if (k < MAX_EVENTS && got < 0) {
			char rk[32];
			snprintf(rk, sizeof rk, ": rank %d: ", r);
			if (!why[0] || strchr(why, '\n') || !strstr(why, rk))
				abort(); /* an expansion error names the rank, on one line */
		}
		tr_cursor_free(c);
	}
	tr_free(t);
	free(text);
	return 0;
}
