/*
 * csv.h -- a field of a CSV file (RFC 4180) for the writers of sim run
 * --csv and sim sweep.
 */
#ifndef SIM_CSV_H
#define SIM_CSV_H

#include <stdio.h>

/* s as one CSV field: in double quotes, each quote doubled, when it holds a
   comma, a quote or a line break, or always with quote_always (a column of
   free text whose readers expect quotes); else as it is. */
void csv_put_field(FILE *f, const char *s, int quote_always);

#endif
