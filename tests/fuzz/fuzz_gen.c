/*
 * fuzz_gen.c -- libFuzzer target for `sim gen`'s arguments (workloads/gen_args.c): the input, split at
 * whitespace, is the argument list after `sim gen` (at most 64 words). Parsing must either give a config that
 * gen_check() accepts, whose layout multiplies out and whose per-stage memory and model FLOPs are finite and
 * non-negative, or refuse with a one-line reason; never crash, hang or leak. No trace is written: the target is
 * the parser and the arithmetic the checks rely on, not the emitter (which the trace target covers).
 */
#include "gen.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char text[4097];
	memcpy(text, data, size);
	text[size] = '\0';
	if (memchr(text, '\0', size)) /* argv words hold no NUL: stop at the first */
		size = strlen(text);
	char *argv[66];
	int argc = 0;
	argv[argc++] = "gen";
	for (char *save = NULL, *w = strtok_r(text, " \t\r\n", &save); w && argc < 65;
	     w = strtok_r(NULL, " \t\r\n", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	struct gen_config c;
	struct gen_args a;
	char why[512];
	why[0] = '\0';
	if (gen_parse_args(argc, argv, &c, &a, why, sizeof why) != 0) {
		if (!why[0] || strchr(why, '\n'))
			abort(); /* every refusal says why, on one line */
		return 0;
	}
	/* the ep dim of the layout: ep, or ep / tp where the experts fold over the tensor-parallel ranks */
	if (c.p.tp < 1 || c.p.pp < 1 || c.p.dp < 1 || c.p.ep < 1 || gen_ep_dim(&c.p) < 1 || c.p.dp % gen_ep_dim(&c.p))
		abort();                    /* gen_check accepted a layout that does not multiply out */
	if (c.p.pp * c.p.vstages <= 4096) { /* every layer in one chunk, the MTP modules where training runs them */
		long long layers = 0, mtp = 0;
		for (long long s = 0; s < c.p.pp; s++)
			for (long long ch = 0; ch < c.p.vstages; ch++) {
				layers += gen_chunk_layers(&c, s, ch);
				mtp += gen_chunk_mtp(&c, s, ch);
			}
		if (layers != c.m.layers || mtp != (c.mode == GEN_TRAIN ? c.m.mtp : 0))
			abort();
	}
	for (long long s = 0; s < c.p.pp && s < 4; s++) {
		struct gen_memory m;
		gen_stage_memory(&c, s, &m);
		double parts[] = {m.params, m.grads, m.optimizer, m.activations, m.kv, m.workspace};
		for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
			if (!isfinite(parts[i]) || parts[i] < 0)
				abort();
	}
	double f = gen_model_flops(&c);
	if (!isfinite(f) || f < 0)
		abort();
	return 0;
}
