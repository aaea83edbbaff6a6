/*
 * fmt.c -- how the reports write a duration and a count (sim/report/report.h):
 * a leaf both halves of the report (report.c, report_work.c) and the commands'
 * tables call.
 */
#include "report.h"

#include <math.h>
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

void report_nfmt(double v, char *buf, size_t len)
{
	static const char prefix[] = " kMGTP";
	int k = 0;
	double a = v < 0 ? -v : v;
	while (a >= 999.95 && k < 5) {
		a /= 1000;
		v /= 1000;
		k++;
	}
	if (k)
		snprintf(buf, len, "%.4g %c", v, prefix[k]);
	else if (a > 0 && a < 1e-3) /* four significant digits in fixed point: %g would write 4.484e-08 */
		snprintf(buf, len, "%.*f", (int)fmin(20, 3 - floor(log10(a))), v);
	else
		snprintf(buf, len, "%.4g", v);
}
