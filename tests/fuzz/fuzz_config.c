/*
 * fuzz_config.c -- libFuzzer target for the config loader: the input is a
 * config text; lines "#set path=value" (comments to libconfig) are also
 * applied as --set overrides. Loading must either succeed or fail with a
 * located message and a config exit code, never crash or leak.
 */
#include "arch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_BASEDIR
#define FUZZ_BASEDIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	const char *sets[4];
	int nsets = 0;
	char *copy = strdup(text);
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line && nsets < 4;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "#set ", 5))
			sets[nsets++] = line + 5;
	struct arch_error err;
	struct arch_chip *c = arch_load_string(text, "<fuzz>", FUZZ_BASEDIR, sets, nsets, &err);
	if (c) {
		for (int dt = 0; dt < DT_COUNT; dt++) {
			(void)arch_peak_matrix(c, dt, 1);
			(void)arch_ridge(c, dt, &c->dram);
		}
		arch_free(c);
	} else if (!err.msg[0] || (err.exit_code != SIM_EXIT_CONFIG && err.exit_code != SIM_EXIT_NOINPUT)) {
		abort();
	}
	free(copy);
	free(text);
	return 0;
}
