/*
 * fuzz_kineto.c -- libFuzzer target for the Kineto importer (sim/import/):
 * the input is one rank's trace, uncompressed JSON. A refusal must say why
 * on one line, naming the input, with exit code 65 (or 70 for memory); an
 * import must write a trace that the trace parser reads back, and whose
 * coverage adds up (modelled <= measured in every family). Seeds: hand-made
 * ranks (streams.json: a stream wait, an NCCL kernel, a copy, a sync) and
 * tests/import/mi250_minitoy_train.json.gz uncompressed (HolisticTraceAnalysis, MIT).
 */
#include "import.h"
#include "trace.h"

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
	struct imp_options o = {.max_events = 100000};
	struct imp_stats st;
	int rc = imp_kineto_buf((const char *)data, size, "in.json", &o, out, &st, why, sizeof why);
	fclose(out);
	if (rc) {
		if ((rc != 65 && rc != 70) || strncmp(why, "in.json: ", 9) || strchr(why, '\n'))
			abort();
		if (len)
			abort(); /* nothing is written on a refusal */
		free(text);
		return 0;
	}
	for (int f = 0; f < IF_COUNT; f++)
		if (st.modelled_us[f] > st.gpu_us[f] + 1e-6 || st.modelled_items[f] > st.items[f] || st.gpu_us[f] < 0)
			abort();
	struct trace *t = tr_parse_string(text, "out.trace", why, sizeof why);
	if (!t) {
		fprintf(stderr, "imported trace does not parse: %s\n", why);
		abort();
	}
	tr_free(t);
	free(text);
	return 0;
}
