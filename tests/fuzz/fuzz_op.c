/*
 * fuzz_op.c -- libFuzzer target for the op parser: the input is one op line.
 * A parsed op must re-format to a canonical text that parses back to the same
 * op and the same text, with finite non-negative FLOPs; a refusal must say
 * why, on one line.
 */
#include "op.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const extra[] = {"stream", "after", NULL};
	if (size > 65536)
		return 0;
	char *line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	struct op a, b;
	char why[256], t1[OP_TEXT_MAX], t2[OP_TEXT_MAX];
	why[0] = '\0';
	if (op_parse(line, extra, &a, why, sizeof why) == 0) {
		size_t n = op_format(&a, t1, sizeof t1);
		if (n == 0 || n >= sizeof t1)
			abort(); /* canonical text fits OP_TEXT_MAX */
		why[0] = '\0';
		if (op_parse(t1, NULL, &b, why, sizeof why))
			abort(); /* canonical text must parse */
		op_format(&b, t2, sizeof t2);
		if (strcmp(t1, t2) || memcmp(&a, &b, sizeof a))
			abort(); /* and give back the same op */
		double f = op_flops(&a);
		if (!isfinite(f) || f < 0)
			abort();
	} else if (!why[0] || strchr(why, '\n')) {
		abort(); /* every refusal says why, on one line */
	}
	free(line);
	return 0;
}
