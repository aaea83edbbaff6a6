/*
 * import_util.c -- what the Kineto and the Chakra importers share below
 * their readers and writers: the --carry test and the rank lists of the
 * communicator lines they write, and whether such a line fits a trace
 * line. (import.c, the entry points, calls both importers; these sit under
 * them.)
 */
#include "arch.h"
#include "import_int.h"
#include "trace.h"

#include <stdio.h>
#include <string.h>

int imp_host_option(struct imp_options *o, const char *key, const char *val, char *why, size_t whylen)
{
	if (!strcmp(key, "--host")) {
		if (strcmp(val, "recorded") && strcmp(val, "graph")) {
			snprintf(why, whylen, "--host %s: expected recorded or graph", val);
			return -1;
		}
		o->host_graph = !strcmp(val, "graph");
		return 0;
	}
	if (strcmp(key, "--profiler-overhead"))
		return 1;
	double t;
	char bad[160];
	if (units_parse(val, UNIT_TIME, &t, bad, sizeof bad) || !(t >= 0 && t <= 1e-3)) {
		snprintf(why, whylen, "--profiler-overhead %s: expected a time from 0 to 1 ms, such as 3us", val);
		return -1;
	}
	o->profiler_ns = (long long)(t * 1e9 + 0.5);
	return 0;
}

void imp_one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

int imp_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

int imp_carry_named(const struct imp_options *o, const char *kernel)
{
	for (int i = 0; o && i < o->ncarry; i++)
		if (o->carry[i] && *o->carry[i] && strstr(kernel, o->carry[i]))
			return 1;
	return 0;
}

void imp_write_scale(FILE *f, const struct imp_options *o, enum imp_family fam)
{
	if (!o)
		return;
	if ((fam == IF_ELEM || fam == IF_MEMCPY) && o->ref_dram_Bps > 0)
		fprintf(f, " scale=dram ref=%.6gB/s", o->ref_dram_Bps);
	else if ((fam == IF_GEMM || fam == IF_ATTN) && o->ref_matrix_flops > 0)
		fprintf(f, " scale=matrix ref=%.6gFLOPS", o->ref_matrix_flops);
}

/* The last index of the run of consecutive ranks that starts at i. */
static int run_end(const int *r, int n, int i)
{
	while (i + 1 < n && r[i + 1] == r[i] + 1)
		i++;
	return i;
}

int imp_check_group(int g, const int *r, int n, int extra, char *why, size_t whylen)
{
	long chars = snprintf(NULL, 0, "comm pg%d ranks=", g) + (long)extra;
	int ranges = 0;
	for (int i = 0, j; i < n; i = j + 1, ranges++) {
		j = run_end(r, n, i);
		chars += snprintf(NULL, 0, "%s%d", i ? "," : "", r[i]) + (j > i ? snprintf(NULL, 0, "-%d", r[j]) : 0);
	}
	if (chars <= TR_LINE_MAX)
		return 0;
	snprintf(why, whylen,
	         "process group pg%d: its %d ranks fall in %d separate runs, %ld characters as a trace's rank list, "
	         "more than a trace line holds (%d)",
	         g, n, ranges, chars, TR_LINE_MAX);
	return SIM_EXIT_TRACE;
}

void imp_write_ranks(FILE *f, const int *r, int n)
{
	for (int i = 0, j; i < n; i = j + 1) {
		j = run_end(r, n, i);
		fprintf(f, "%s%d", i ? "," : "", r[i]);
		if (j > i)
			fprintf(f, "-%d", r[j]);
	}
}
