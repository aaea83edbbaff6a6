/*
 * fuzz_chakra.c -- libFuzzer target for the Chakra importer (sim/import/):
 * the input is one rank's execution trace (the protobuf stream, not
 * gzipped). A refusal must say why on one line, naming the input, with
 * exit code 65 (or 70 for memory) and write nothing; an import must write
 * a trace that the trace parser reads back, and whose coverage adds up
 * (modelled <= measured in every family). Seeds: the first nodes of
 * tests/import/chakra_feeder_test.0.et.gz (MLCommons Chakra, Apache-2.0)
 * and small graphs with a collective, a send and nodes out of order.
 */
#include "import_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[1024] = "";
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return 0;
	struct imp_options o = {.max_events = 100000, .ranks = size % 2 ? 2 : 0};
	struct imp_stats st;
	int rc = imp_chakra_buf(data, size, "in.et", &o, out, &st, why, sizeof why);
	fclose(out);
	import_check(rc, why, "in.et", text, len, &st);
	return 0;
}
