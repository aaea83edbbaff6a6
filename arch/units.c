/*
 * units.c -- quantities with units: the one parser every config value,
 * `--set` override and (later) trace argument goes through.
 *
 * Exactness: a decimal prefix is applied by rewriting the number's exponent
 * ("3.35 TB/s" is read as the decimal text 3.35e12), so the result is the
 * double nearest to the exact value; binary prefixes (KiB, MiB ...) and the
 * bits-to-bytes factor are powers of two, applied by exact scaling.
 * TB = 1e12 bytes, TiB = 2^40 bytes; "b" is a bit, "B" a byte.
 */
#include "arch.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
	const char *sym;
	enum unit_kind kind;
	int pow10; /* decimal prefix exponent */
	int pow2;  /* binary prefix exponent (negative for bits: -3) */
};

/* Longest symbols first is not needed: matching is on the whole suffix. */
static const struct unit units[] = {
    {"B", UNIT_BYTES, 0, 0},          {"KB", UNIT_BYTES, 3, 0},         {"kB", UNIT_BYTES, 3, 0},
    {"MB", UNIT_BYTES, 6, 0},         {"GB", UNIT_BYTES, 9, 0},         {"TB", UNIT_BYTES, 12, 0},
    {"PB", UNIT_BYTES, 15, 0},        {"KiB", UNIT_BYTES, 0, 10},       {"MiB", UNIT_BYTES, 0, 20},
    {"GiB", UNIT_BYTES, 0, 30},       {"TiB", UNIT_BYTES, 0, 40},       {"PiB", UNIT_BYTES, 0, 50},

    {"B/s", UNIT_BANDWIDTH, 0, 0},    {"KB/s", UNIT_BANDWIDTH, 3, 0},   {"kB/s", UNIT_BANDWIDTH, 3, 0},
    {"MB/s", UNIT_BANDWIDTH, 6, 0},   {"GB/s", UNIT_BANDWIDTH, 9, 0},   {"TB/s", UNIT_BANDWIDTH, 12, 0},
    {"PB/s", UNIT_BANDWIDTH, 15, 0},  {"KiB/s", UNIT_BANDWIDTH, 0, 10}, {"MiB/s", UNIT_BANDWIDTH, 0, 20},
    {"GiB/s", UNIT_BANDWIDTH, 0, 30}, {"TiB/s", UNIT_BANDWIDTH, 0, 40}, {"GBps", UNIT_BANDWIDTH, 9, 0},
    {"TBps", UNIT_BANDWIDTH, 12, 0},  {"MBps", UNIT_BANDWIDTH, 6, 0},   {"b/s", UNIT_BANDWIDTH, 0, -3},
    {"kb/s", UNIT_BANDWIDTH, 3, -3},  {"Kb/s", UNIT_BANDWIDTH, 3, -3},  {"Mb/s", UNIT_BANDWIDTH, 6, -3},
    {"Gb/s", UNIT_BANDWIDTH, 9, -3},  {"Tb/s", UNIT_BANDWIDTH, 12, -3}, {"bps", UNIT_BANDWIDTH, 0, -3},
    {"kbps", UNIT_BANDWIDTH, 3, -3},  {"Mbps", UNIT_BANDWIDTH, 6, -3},  {"Gbps", UNIT_BANDWIDTH, 9, -3},
    {"Tbps", UNIT_BANDWIDTH, 12, -3},

    {"Hz", UNIT_FREQ, 0, 0},          {"kHz", UNIT_FREQ, 3, 0},         {"MHz", UNIT_FREQ, 6, 0},
    {"GHz", UNIT_FREQ, 9, 0},

    {"s", UNIT_TIME, 0, 0},           {"ms", UNIT_TIME, -3, 0},         {"us", UNIT_TIME, -6, 0},
    {"\xc2\xb5s", UNIT_TIME, -6, 0},  {"ns", UNIT_TIME, -9, 0},         {"ps", UNIT_TIME, -12, 0},

    {"W", UNIT_POWER, 0, 0},          {"mW", UNIT_POWER, -3, 0},        {"kW", UNIT_POWER, 3, 0},

    {"FLOPS", UNIT_FLOPS, 0, 0},      {"GFLOPS", UNIT_FLOPS, 9, 0},     {"TFLOPS", UNIT_FLOPS, 12, 0},
    {"PFLOPS", UNIT_FLOPS, 15, 0},    {"FLOP/s", UNIT_FLOPS, 0, 0},     {"GFLOP/s", UNIT_FLOPS, 9, 0},
    {"TFLOP/s", UNIT_FLOPS, 12, 0},   {"PFLOP/s", UNIT_FLOPS, 15, 0},   {"OPS", UNIT_FLOPS, 0, 0},
    {"GOPS", UNIT_FLOPS, 9, 0},       {"TOPS", UNIT_FLOPS, 12, 0},      {"POPS", UNIT_FLOPS, 15, 0},

    {"USD", UNIT_USD, 0, 0},
};
#define NUNITS (sizeof units / sizeof units[0])

static const char *kind_names[UNIT_KIND_COUNT] = {
    "number", "size", "bandwidth", "frequency", "time", "power", "throughput", "price",
};
static const char *kind_examples[UNIT_KIND_COUNT] = {
    "4", "\"50 MiB\"", "\"3.35 TB/s\"", "\"1830 MHz\"", "\"1 us\"", "\"700 W\"", "\"989.4 TFLOPS\"", "\"25000 USD\"",
};

const char *units_kind_name(enum unit_kind kind)
{
	return kind_names[kind];
}
const char *units_symbol(enum unit_kind kind)
{
	static const char *const sym[UNIT_KIND_COUNT] = {"", "B", "B/s", "Hz", "s", "W", "FLOP/s", "USD"};
	return sym[kind];
}
const char *units_example(enum unit_kind kind)
{
	return kind_examples[kind];
}

static const struct unit *find_unit(const char *sym, size_t len)
{
	for (size_t i = 0; i < NUNITS; i++)
		if (strlen(units[i].sym) == len && memcmp(units[i].sym, sym, len) == 0)
			return &units[i];
	return NULL;
}

/*
 * Splits "[+-]digits[.digits][e[+-]digits]" at the start of s into the
 * mantissa text and a decimal exponent. Returns characters consumed, 0 if s
 * does not start with a plain decimal number (hex, inf and nan are refused).
 */
static size_t scan_number(const char *s, char *mant, size_t mlen, long *exp10)
{
	size_t i = 0, m = 0;
	int digits = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	while (isdigit((unsigned char)s[i]) || s[i] == '.') {
		if (s[i] == '.' && strchr(s, '.') != s + i)
			return 0; /* second point */
		digits += isdigit((unsigned char)s[i]) != 0;
		i++;
	}
	if (!digits || i + 1 >= mlen)
		return 0;
	m = i;
	memcpy(mant, s, m);
	mant[m] = '\0';
	*exp10 = 0;
	if ((s[i] == 'e' || s[i] == 'E') &&
	    (isdigit((unsigned char)s[i + 1]) ||
	     ((s[i + 1] == '+' || s[i + 1] == '-') && isdigit((unsigned char)s[i + 2])))) {
		char *end;
		long e = strtol(s + i + 1, &end, 10);
		if (e > 400 || e < -400)
			return 0;
		*exp10 = e;
		i = (size_t)(end - s);
	}
	return i;
}

int units_parse(const char *text, enum unit_kind kind, double *out, char *why, size_t whylen)
{
	char mant[128], buf[160];
	long exp10;
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	size_t n = scan_number(p, mant, sizeof mant, &exp10);
	if (n == 0) {
		snprintf(why, whylen, "\"%s\" is not a number; expected a %s such as %s", text, kind_names[kind],
		         kind_examples[kind]);
		return -1;
	}
	const char *u = p + n;
	while (*u == ' ' || *u == '\t')
		u++;
	size_t ulen = strlen(u);
	while (ulen && isspace((unsigned char)u[ulen - 1]))
		ulen--;
	const struct unit *un = NULL;
	if (ulen) {
		un = find_unit(u, ulen);
		if (!un) {
			snprintf(why, whylen, "unknown unit \"%.*s\" in \"%s\"; expected a %s such as %s", (int)ulen, u,
			         text, kind_names[kind], kind_examples[kind]);
			return -1;
		}
	}
	if (kind == UNIT_NONE && un) {
		snprintf(why, whylen, "\"%s\" has a unit; expected a plain number", text);
		return -1;
	}
	if (kind != UNIT_NONE && !un) {
		snprintf(why, whylen, "\"%s\" has no unit; expected a %s such as %s", text, kind_names[kind],
		         kind_examples[kind]);
		return -1;
	}
	if (un && un->kind != kind) {
		snprintf(why, whylen, "\"%s\" is a %s; expected a %s such as %s", text, kind_names[un->kind],
		         kind_names[kind], kind_examples[kind]);
		return -1;
	}
	snprintf(buf, sizeof buf, "%se%ld", mant, exp10 + (un ? un->pow10 : 0));
	double v = strtod(buf, NULL);
	if (un && un->pow2)
		v = ldexp(v, un->pow2);
	if (!isfinite(v)) {
		snprintf(why, whylen, "\"%s\" is out of range", text);
		return -1;
	}
	*out = v;
	return 0;
}

/* Preferred output symbols, largest first, per kind. */
struct fmt_unit {
	const char *sym;
	double scale;
};
static const struct fmt_unit fmt_bytes_bin[] = {{"PiB", 1125899906842624.0},
                                                {"TiB", 1099511627776.0},
                                                {"GiB", 1073741824.0},
                                                {"MiB", 1048576.0},
                                                {"KiB", 1024.0},
                                                {"B", 1},
                                                {NULL, 0}};
static const struct fmt_unit fmt_bytes_dec[] = {{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6},
                                                {"KB", 1e3},  {"B", 1},     {NULL, 0}};
static const struct fmt_unit fmt_bw[] = {{"PB/s", 1e15}, {"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6},
                                         {"KB/s", 1e3},  {"B/s", 1},     {NULL, 0}};
static const struct fmt_unit fmt_freq[] = {{"GHz", 1e9}, {"MHz", 1e6}, {"kHz", 1e3}, {"Hz", 1}, {NULL, 0}};
static const struct fmt_unit fmt_time[] = {{"s", 1},     {"ms", 1e-3},  {"us", 1e-6},
                                           {"ns", 1e-9}, {"ps", 1e-12}, {NULL, 0}};
static const struct fmt_unit fmt_power[] = {{"kW", 1e3}, {"W", 1}, {"mW", 1e-3}, {NULL, 0}};
static const struct fmt_unit fmt_flops[] = {
    {"PFLOPS", 1e15}, {"TFLOPS", 1e12}, {"GFLOPS", 1e9}, {"FLOPS", 1}, {NULL, 0}};
static const struct fmt_unit fmt_usd[] = {{"USD", 1}, {NULL, 0}};

/* Formats with the largest unit not above v; "" if t has none. */
static void format_with(double v, const struct fmt_unit *t, char *buf, size_t len)
{
	int i = 0;
	while (t[i + 1].sym && fabs(v) < t[i].scale)
		i++;
	snprintf(buf, len, "%.4g %s", v / t[i].scale, t[i].sym);
}

void units_format(double v, enum unit_kind kind, char *buf, size_t len)
{
	const struct fmt_unit *t = NULL;
	switch (kind) {
	case UNIT_BYTES: {
		/* binary prefixes when they print the value exactly and shorter,
		   or when neither does (memory is binary-sized: 81559 MiB reads
		   79.65 GiB, as nvidia-smi users count it) */
		char dec[64], bin[64];
		double back;
		char why[8];
		format_with(v, fmt_bytes_dec, dec, sizeof dec);
		format_with(v, fmt_bytes_bin, bin, sizeof bin);
		int dec_exact = !units_parse(dec, UNIT_BYTES, &back, why, sizeof why) && back == v;
		int bin_exact = !units_parse(bin, UNIT_BYTES, &back, why, sizeof why) && back == v;
		int use_bin = bin_exact ? !dec_exact || strlen(bin) < strlen(dec) : !dec_exact;
		snprintf(buf, len, "%s", use_bin ? bin : dec);
		return;
	}
	case UNIT_BANDWIDTH: t = fmt_bw; break;
	case UNIT_FREQ: t = fmt_freq; break;
	case UNIT_TIME: t = fmt_time; break;
	case UNIT_POWER: t = fmt_power; break;
	case UNIT_FLOPS: t = fmt_flops; break;
	case UNIT_USD: t = fmt_usd; break;
	default: snprintf(buf, len, "%g", v); return;
	}
	format_with(v, t, buf, len);
}
