/*
 * csv.c -- see csv.h.
 */
#include "csv.h"

#include <string.h>

void csv_put_field(FILE *f, const char *s, int quote_always)
{
	if (!quote_always && !strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}
