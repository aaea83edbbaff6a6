/*
 * import_check.h -- what the importers' fuzz targets (fuzz_kineto.c,
 * fuzz_chakra.c) assert of one import: a refusal says why on one line
 * starting with the input's name, with exit code 65 (or 70 for memory),
 * and writes nothing; an import writes a trace that the trace parser reads
 * back, and whose coverage adds up (modelled <= measured in every family).
 * Aborts otherwise; frees text.
 */
#ifndef SIM_FUZZ_IMPORT_CHECK_H
#define SIM_FUZZ_IMPORT_CHECK_H

#include "import.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void import_check(int rc, const char *why, const char *name, char *text, size_t len, const struct imp_stats *st)
{
	size_t n = strlen(name);
	if (rc) {
		if ((rc != 65 && rc != 70) || strncmp(why, name, n) || strncmp(why + n, ": ", 2) || strchr(why, '\n'))
			abort();
		if (len)
			abort(); /* nothing is written on a refusal */
		free(text);
		return;
	}
	for (int f = 0; f < IF_COUNT; f++)
		if (st->modelled_us[f] > st->gpu_us[f] + 1e-6 || st->modelled_items[f] > st->items[f] ||
		    st->gpu_us[f] < 0)
			abort();
	char msg[1024];
	struct trace *t = tr_parse_string(text, "out.trace", msg, sizeof msg);
	if (!t) {
		fprintf(stderr, "imported trace does not parse: %s\n", msg);
		abort();
	}
	tr_free(t);
	free(text);
}

#endif
