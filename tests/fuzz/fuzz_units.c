/*
 * fuzz_units.c -- libFuzzer target for the unit parser: any text, any kind;
 * a parsed value must be finite and re-format without trouble.
 */
#include "arch.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 256)
		return 0;
	char text[257], why[256], buf[64];
	enum unit_kind kind = (enum unit_kind)(data[0] % UNIT_KIND_COUNT);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	double v;
	if (units_parse(text, kind, &v, why, sizeof why) == 0) {
		if (!isfinite(v))
			abort();
		units_format(v, kind, buf, sizeof buf);
	} else if (!why[0]) {
		abort(); /* every refusal says why */
	}
	return 0;
}
