/*
 * fuzz_requests.c -- libFuzzer target for sim serve's request files
 * (sim/serve/serve_src.c): the input is written to a file and read both as
 * a request CSV (--requests-csv) and as a lengths CSV (--lengths). Every
 * request read must have lengths of at least one token within the context,
 * arrivals at or after the one before; a refusal must be one line naming the
 * file, with a documented exit code.
 */
#include "serve_int.h"

#include "fuzz_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REQUESTS 10000
#define MAX_LEN      100000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const char *why, const char *path)
{
	if (rc != -SIM_EXIT_TRACE && rc != -SIM_EXIT_USAGE && rc != -SIM_EXIT_INTERNAL)
		abort();
	if (!why[0] || strchr(why, '\n') || !strstr(why, path))
		abort();
}

static void read_all(struct sv_options *o, const char *path)
{
	struct sv_src s;
	struct sv_req q;
	char why[1024] = "";
	int rc = sv_src_open(&s, o, 0, 1, why, sizeof why);
	if (rc) {
		check_refusal(rc, why, path);
		return;
	}
	double last = 0;
	for (int n = 0; n < MAX_REQUESTS; n++) {
		why[0] = '\0';
		rc = sv_src_next(&s, &q, MAX_LEN, why, sizeof why);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (rc == -SIM_EXIT_USAGE) /* too long for the context: names the request, not the file */
				break;
			check_refusal(rc, why, path);
			break;
		}
		if (q.in_len < 1 || q.out_len < 1 || q.in_len + q.out_len > MAX_LEN || !(q.arrival_s >= last) ||
		    q.avail_s != q.arrival_s || q.generated || q.computed)
			abort();
		last = q.arrival_s;
	}
	sv_src_close(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_requests.XXXXXX";
	if (fuzz_write_file(path, data, size))
		return 0;
	struct sv_options o;
	sv_defaults(&o);
	o.arrivals = SV_CSV;
	o.requests_csv = path;
	read_all(&o, path);
	sv_defaults(&o);
	o.requests = 50;
	o.lengths_csv = path;
	read_all(&o, path);
	unlink(path);
	return 0;
}
