/*
 * test_fmt.c -- how the human reports write durations and counts
 * (sim/report/fmt.c), against strings written by hand: the unit or prefix
 * that keeps 1 to 999.9 in front of it, four significant digits.
 */
#include "check.h"
#include "report.h"

#include <string.h>

static void want_n(double v, const char *s)
{
	char buf[32];
	report_nfmt(v, buf, sizeof buf);
	CHECK(!strcmp(buf, s), "report_nfmt(%g) = '%s', want '%s'", v, buf, s);
}

static void want_t(double v, const char *s)
{
	char buf[32];
	report_tfmt(v, buf, sizeof buf);
	CHECK(!strcmp(buf, s), "report_tfmt(%g) = '%s', want '%s'", v, buf, s);
}

int main(void)
{
	want_n(0, "0");
	want_n(999, "999");
	want_n(999.96, "1 k"); /* would print as 1000 with no prefix */
	want_n(184732, "184.7 k");
	want_n(2.23e5, "223 k");
	want_n(1.288e4, "12.88 k");
	want_n(4.2e9, "4.2 G");
	want_n(-3.5e6, "-3.5 M");
	want_n(7e18, "7000 P"); /* past the last prefix: the number grows */
	want_n(0.5, "0.5");
	want_n(0.001234, "0.001234");
	want_n(4.484e-8, "0.00000004484"); /* %g: 4.484e-08 */
	want_n(-2.5e-5, "-0.00002500");
	want_t(1.42, "1.42 s");
	want_t(0.7223, "722.3 ms");
	want_t(15.9e-6, "15.9 us");
	printf("%d checks, %d failed\n", checks, fails);
	return fails != 0;
}
