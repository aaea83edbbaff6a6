/*
 * fuzz_kineto.c -- libFuzzer target for the Kineto importer (sim/import/):
 * the input is one rank's trace, uncompressed JSON. A refusal must say why
 * on one line, naming the input, with exit code 65 (or 70 for memory); an
 * import must write a trace that the trace parser reads back, and whose
 * coverage adds up (modelled <= measured in every family), with or without
 * --profiler-overhead and --host graph. Seeds: hand-made
 * ranks (streams.json: a stream wait, an NCCL kernel, a copy, a sync) and
 * tests/import/mi250_minitoy_train.json.gz uncompressed (HolisticTraceAnalysis, MIT).
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
	/* the input's length picks the options too: one rank or two, the host as recorded, without the profiler's
	   cost (3 us a CPU op) or dropped (--host graph) */
	struct imp_options o = {.max_events = 100000,
	                        .ranks = size % 2 ? 2 : 0,
	                        .profiler_ns = size / 2 % 3 == 1 ? 3000 : 0,
	                        .host_graph = size / 2 % 3 == 2};
	struct imp_stats st;
	int rc = imp_kineto_buf((const char *)data, size, "in.json", &o, out, &st, why, sizeof why);
	fclose(out);
	import_check(rc, why, "in.json", text, len, &st);
	return 0;
}
