/*
 * jstream.c -- a JSON document read a piece at a time (jstream.h): a byte
 * source (zlib for files, plain or gzip; or memory) with line and column,
 * and a scanner that walks objects, arrays and strings without building
 * them, keeping one value's text at a time.
 */
#include "jstream.h"

#include "arch.h"
#include "import_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH_MAX 512 /* nesting a captured value may have */

/* the first error: "NAME: msg" and its exit code */
static int fail(struct js *J, int code, const char *msg)
{
	if (!J->code) {
		snprintf(J->why, J->whylen, "%s: %s", J->name, msg);
		J->code = code;
	}
	return J->code;
}

static int fail_errno(struct js *J, int code, const char *what)
{
	char m[256];
	snprintf(m, sizeof m, "%s: %s", what, strerror(errno));
	return fail(J, code, m);
}

static void init(struct js *J, const char *name, long long max, char *why, size_t whylen)
{
	memset(J, 0, offsetof(struct js, buf));
	J->n = J->pos = 0;
	J->total = 0;
	J->max = max;
	J->peeked = -1;
	J->line = J->col = 1;
	J->code = 0;
	J->name = name;
	J->why = why;
	J->whylen = whylen;
	J->cap = NULL;
	J->caplen = J->capcap = 0;
}

int js_open_file(struct js *J, const char *path, long long max, char *why, size_t whylen)
{
	init(J, path, max, why, whylen);
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail_errno(J, SIM_EXIT_NOINPUT, "cannot read");
	unsigned char magic[2] = {0, 0};
	size_t got = fread(magic, 1, 2, f);
	fclose(f);
	int gz = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (imp_ends_with(path, ".gz") && !gz)
		return fail(J, SIM_EXIT_TRACE,
		            "not gzip (the name ends in .gz but the file does not start with 1f 8b)");
	errno = 0;
	J->z = gzopen(path, "rb");
	if (!J->z)
		return errno ? fail_errno(J, SIM_EXIT_NOINPUT, "cannot read")
		             : fail(J, SIM_EXIT_INTERNAL, "out of memory");
	gzbuffer(J->z, JS_BUF);
	return 0;
}

void js_open_mem(struct js *J, const char *data, size_t len, const char *name, long long max, char *why, size_t whylen)
{
	init(J, name, max, why, whylen);
	J->mem = (const unsigned char *)data;
	J->mlen = len;
}

void js_close(struct js *J)
{
	if (J->z)
		gzclose(J->z);
	J->z = NULL;
	free(J->cap);
	J->cap = NULL;
}

/* refills buf; 0 at the end, -2 on an error */
static int fill(struct js *J)
{
	if (J->code)
		return -2;
	if (!J->z) {
		size_t k = J->mlen - (size_t)J->total < JS_BUF ? J->mlen - (size_t)J->total : JS_BUF;
		memcpy(J->buf, J->mem + J->total, k);
		J->n = k;
	} else {
		int r = gzread(J->z, J->buf, JS_BUF);
		int e = Z_OK;
		if (r <= 0)
			gzerror(J->z, &e);
		if (r < 0 || (r == 0 && e != Z_OK))
			return fail(J, SIM_EXIT_TRACE,
			            r == 0 || e == Z_BUF_ERROR ? "truncated gzip (the compressed stream ends early)"
			                                       : "corrupt gzip (the compressed data does not decode)"),
			       -2;
		J->n = (size_t)r;
	}
	J->pos = 0;
	J->total += (long long)J->n;
	if (J->total > J->max) {
		char m[96];
		snprintf(m, sizeof m, "larger than %lld bytes uncompressed (--max-bytes)", J->max);
		return fail(J, SIM_EXIT_TRACE, m), -2;
	}
	return J->n > 0;
}

/* the next byte, consumed: -1 at the end, -2 on an error */
static int next(struct js *J)
{
	int c;
	if (J->peeked >= 0) {
		c = J->peeked;
		J->peeked = -1;
	} else {
		if (J->pos == J->n) {
			int r = fill(J);
			if (r <= 0)
				return r == 0 ? -1 : -2;
		}
		c = J->buf[J->pos++];
	}
	if (c == '\n')
		J->line++, J->col = 1;
	else
		J->col++;
	return c;
}

/* the next byte, not consumed */
static int peek_raw(struct js *J)
{
	if (J->peeked >= 0)
		return J->peeked;
	if (J->pos == J->n) {
		int r = fill(J);
		if (r <= 0)
			return r == 0 ? -1 : -2;
	}
	return J->peeked = J->buf[J->pos++];
}

int js_syntax(struct js *J, const char *msg)
{
	char m[192];
	snprintf(m, sizeof m, "not JSON: line %d, column %d: %s", J->line, J->col, msg);
	return fail(J, SIM_EXIT_TRACE, m);
}

int js_peek(struct js *J)
{
	for (;;) {
		int c = peek_raw(J);
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return c;
		next(J);
	}
}

int js_expect(struct js *J, int c, const char *what)
{
	int got = js_peek(J);
	if (got == -2)
		return J->code;
	if (got != c) {
		char m[128];
		snprintf(m, sizeof m, "expected %s", what);
		return js_syntax(J, got == -1 ? "unexpected end of input" : m);
	}
	next(J);
	return 0;
}

static int keep(struct js *J, int c)
{
	if (J->caplen + 2 > J->capcap) {
		size_t n = J->capcap ? 2 * J->capcap : 4096;
		char *p = realloc(J->cap, n);
		if (!p)
			return fail(J, SIM_EXIT_INTERNAL, "out of memory");
		J->cap = p;
		J->capcap = n;
	}
	J->cap[J->caplen++] = (char)c;
	return 0;
}

/* the rest of a string after its opening quote, kept when k; the escapes are checked by jansson */
static int string_rest(struct js *J, int k)
{
	for (;;) {
		int c = next(J);
		if (c < 0)
			return c == -2 ? J->code : js_syntax(J, "unexpected end of input in a string");
		if (k && keep(J, c))
			return J->code;
		if (c == '"')
			return 0;
		if (c == '\\') {
			c = next(J);
			if (c < 0)
				return c == -2 ? J->code : js_syntax(J, "unexpected end of input in a string");
			if (k && keep(J, c))
				return J->code;
		} else if (c < 0x20) {
			return js_syntax(J, "control character in a string");
		}
	}
}

int js_key(struct js *J, char *key, size_t len)
{
	if (js_expect(J, '"', "a string (an object's key)"))
		return J->code;
	size_t n = 0;
	for (;;) {
		int c = next(J);
		if (c < 0)
			return c == -2 ? J->code : js_syntax(J, "unexpected end of input in a key");
		if (c == '"')
			break;
		if (c == '\\') {
			c = next(J);
			if (c < 0)
				return c == -2 ? J->code : js_syntax(J, "unexpected end of input in a key");
		}
		if (n + 1 < len)
			key[n++] = (char)c;
	}
	key[n] = 0;
	return js_expect(J, ':', "':' after an object's key");
}

int js_capture(struct js *J)
{
	char stack[DEPTH_MAX];
	int depth = 0;
	J->caplen = 0;
	int c = js_peek(J);
	if (c == -2)
		return J->code;
	if (c == -1)
		return js_syntax(J, "unexpected end of input (expected a value)");
	if (c == ',' || c == '}' || c == ']' || c == ':')
		return js_syntax(J, "expected a value");
	J->cap_line = J->line;
	J->cap_col = J->col;
	for (;;) {
		c = next(J);
		if (c < 0)
			return c == -2 ? J->code : js_syntax(J, "unexpected end of input in a value");
		if (keep(J, c))
			return J->code;
		if (c == '"') {
			if (string_rest(J, 1))
				return J->code;
		} else if (c == '{' || c == '[') {
			if (depth == DEPTH_MAX)
				return js_syntax(J, "nested too deep");
			stack[depth++] = c == '{' ? '}' : ']';
		} else if (c == '}' || c == ']') {
			if (!depth || stack[depth - 1] != c)
				return js_syntax(J, "unbalanced bracket");
			depth--;
		}
		if (!depth) { /* a scalar ends before a delimiter; a container at its closing bracket */
			if (c == '}' || c == ']' || c == '"')
				break;
			int d = peek_raw(J);
			if (d == -2)
				return J->code;
			if (d == -1 || d == ',' || d == '}' || d == ']' || d == ' ' || d == '\t' || d == '\n' ||
			    d == '\r')
				break;
		}
	}
	J->cap[J->caplen] = 0;
	return 0;
}

int js_end(struct js *J)
{
	int c = js_peek(J);
	if (c == -2)
		return J->code;
	return c == -1 ? 0 : js_syntax(J, "extra data after the document");
}
