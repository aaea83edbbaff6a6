/*
 * fmt.c -- how the reports write a duration (sim/report/report.h): a leaf
 * both halves of the report (report.c, report_work.c) call.
 */
#include "report.h"

#include <stdio.h>

void report_tfmt(double s, char *buf, size_t len)
{
	if (s >= 1)
		snprintf(buf, len, "%.4g s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.4g ms", s * 1e3);
	else
		snprintf(buf, len, "%.4g us", s * 1e6);
}
