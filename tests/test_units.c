/*
 * test_units.c -- the unit parser: exact values, every unit kind, and the
 * refusals (missing unit, wrong kind, junk), each with its message.
 */
#include "arch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int fails;

static void ok(const char *text, enum unit_kind k, double want)
{
	double v = -1;
	char why[256] = "";
	if (units_parse(text, k, &v, why, sizeof why) || v != want) {
		printf("FAIL %-14s -> %.17g (want %.17g) %s\n", text, v, want, why);
		fails++;
	}
}

static void bad(const char *text, enum unit_kind k, const char *msg)
{
	double v = 0;
	char why[256] = "";
	if (!units_parse(text, k, &v, why, sizeof why) || !strstr(why, msg)) {
		printf("FAIL %-14s accepted or wrong message: '%s' (want '%s')\n", text, why, msg);
		fails++;
	}
}

static void fmt(double v, enum unit_kind k, const char *want)
{
	char buf[64];
	units_format(v, k, buf, sizeof buf);
	if (strcmp(buf, want)) {
		printf("FAIL format %.17g -> '%s' (want '%s')\n", v, buf, want);
		fails++;
	}
}

int main(void)
{
	/* exact decimal prefixes: the double nearest the decimal value */
	ok("3.35 TB/s", UNIT_BANDWIDTH, 3.35e12);
	ok("3.35TB/s", UNIT_BANDWIDTH, 3.35e12);
	ok("  900 GB/s ", UNIT_BANDWIDTH, 900e9);
	ok("1830 MHz", UNIT_FREQ, 1.83e9);
	ok("1.98 GHz", UNIT_FREQ, 1.98e9);
	ok("80 GB", UNIT_BYTES, 80e9);
	ok("1 TB", UNIT_BYTES, 1e12);
	ok("1 TiB", UNIT_BYTES, 1099511627776.0);
	ok("50 MiB", UNIT_BYTES, 52428800.0);
	ok("0.5 KiB", UNIT_BYTES, 512.0);
	ok("48MiB", UNIT_BYTES, 50331648.0);
	ok("1 us", UNIT_TIME, 1e-6);
	ok("1 \xc2\xb5s", UNIT_TIME, 1e-6);
	ok("20 ns", UNIT_TIME, 20e-9);
	ok("400 Gb/s", UNIT_BANDWIDTH, 50e9);
	ok("400 Gbps", UNIT_BANDWIDTH, 50e9);
	ok("450 GBps", UNIT_BANDWIDTH, 450e9);
	ok("6.4 Gb/s", UNIT_BANDWIDTH, 0.8e9);
	ok("700 W", UNIT_POWER, 700.0);
	ok("989.4 TFLOPS", UNIT_FLOPS, 989.4e12);
	ok("624 TOPS", UNIT_FLOPS, 624e12);
	ok("2.25 PFLOPS", UNIT_FLOPS, 2.25e15);
	ok("25000 USD", UNIT_USD, 25000.0);
	ok("1.5e3 GB", UNIT_BYTES, 1.5e12);
	ok("132", UNIT_NONE, 132.0);
	ok("0.1", UNIT_NONE, 0.1);

	/* refusals, with what was expected */
	bad("3.35 TB", UNIT_BANDWIDTH, "is a size; expected a bandwidth");
	bad("3.35", UNIT_BANDWIDTH, "has no unit");
	bad("1830 Mhz", UNIT_FREQ, "unknown unit \"Mhz\"");
	bad("fast", UNIT_FREQ, "is not a number");
	bad("", UNIT_BYTES, "is not a number");
	bad("inf GB", UNIT_BYTES, "is not a number");
	bad("nan", UNIT_NONE, "is not a number");
	bad("0x10 GB", UNIT_BYTES, "unknown unit");
	bad("1.2.3 GB", UNIT_BYTES, "is not a number");
	bad("5 GB", UNIT_NONE, "has a unit");
	bad("1e999 GB", UNIT_BYTES, "is not a number");
	bad("1e300 PB", UNIT_BYTES, "out of range");
	bad("- GB", UNIT_BYTES, "is not a number");

	/* formatting picks the largest prefix */
	fmt(3.35e12, UNIT_BANDWIDTH, "3.35 TB/s");
	fmt(52428800.0, UNIT_BYTES, "50 MiB");
	fmt(80e9, UNIT_BYTES, "80 GB");
	fmt(1.83e9, UNIT_FREQ, "1.83 GHz");
	fmt(2e-6, UNIT_TIME, "2 us");

	printf("%d failed\n", fails);
	return fails != 0;
}
