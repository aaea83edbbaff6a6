/*
 * import_util.c -- what the Kineto and the Chakra importers share below
 * their readers and writers: the --carry test and the rank lists of the
 * communicator lines they write. (import.c, the entry points, calls both
 * importers; these sit under them.)
 */
#include "import_int.h"

#include <string.h>

int imp_carry_named(const struct imp_options *o, const char *kernel)
{
	for (int i = 0; o && i < o->ncarry; i++)
		if (o->carry[i] && *o->carry[i] && strstr(kernel, o->carry[i]))
			return 1;
	return 0;
}

void imp_write_ranks(FILE *f, const int *r, int n)
{
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && r[j + 1] == r[j] + 1)
			j++;
		fprintf(f, "%s%d", i ? "," : "", r[i]);
		if (j > i)
			fprintf(f, "-%d", r[j]);
		i = j + 1;
	}
}
