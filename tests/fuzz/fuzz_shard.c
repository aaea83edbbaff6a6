/*
 * fuzz_shard.c -- libFuzzer target for the shard files of a plan run in parts
 * (`sim plan --shard I/N`, read back by `sim merge`; sim/plan/plan_out.c):
 * the input is written to a file and read as one. A shard read must hold
 * the rows its first line promises (replays I, I + N, ... below P), each
 * with an exit status of 0 to 255, and pass the merge's check as the only
 * shard when N is 1; a refusal must be one line naming the file, with a
 * documented exit code.
 */
#include "plan.h"

#include "fuzz_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_shard.XXXXXX";
	if (fuzz_write_file(path, data, size))
		return 0;
	struct pl_shard s;
	memset(&s, 0, sizeof s);
	s.path = path;
	int rc = pl_shard_read(&s);
	if (rc) {
		if ((rc != SIM_EXIT_TRACE && rc != SIM_EXIT_NOINPUT && rc != SIM_EXIT_INTERNAL) || !s.why[0] ||
		    strchr(s.why, '\n') || strncmp(s.why, path, strlen(path)))
			abort();
	} else {
		long want = s.replays > s.i ? (s.replays - s.i + s.n - 1) / s.n : 0;
		if (s.n < 1 || s.i < 0 || s.i >= s.n || s.nr != want || s.nargs < 0 || s.nargs > PL_MAX_ARGS)
			abort();
		for (long k = 0; k < s.nr; k++)
			if (s.r[k].rc < 0 || s.r[k].rc > 255 || memchr(s.r[k].why, '\0', sizeof s.r[k].why) == NULL)
				abort();
		if (s.n == 1) {
			struct pl_shard *by[1] = {NULL};
			if (pl_shard_check(&s, 1, by) || by[0] != &s)
				abort();
		}
	}
	pl_shard_free(&s);
	unlink(path);
	return 0;
}
