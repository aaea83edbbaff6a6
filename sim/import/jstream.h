/*
 * jstream.h -- a JSON document read a piece at a time (sim/import/): the
 * members of its top-level object one by one, and the elements of an array
 * one by one, each handed over as its own text for jansson to parse. A
 * PyTorch profiler trace of millions of events is then never one DOM, nor
 * one buffer: what the reader keeps is what it takes from each event.
 *
 * The bytes come from a file (plain or gzip, through zlib, checked as it
 * reads: a truncated or corrupt stream is an error) or from memory, at most
 * `max` of them uncompressed. The scanner checks the structure it walks
 * (braces, brackets, strings, commas, colons); jansson checks each value it
 * hands over. Errors set one line in why ("NAME: not JSON: line L, column C:
 * ...") and an exit code (sim/base: 65 bad input, 66 unreadable, 70 out of
 * memory).
 */
#ifndef SIM_JSTREAM_H
#define SIM_JSTREAM_H

#include <stddef.h>
#include <zlib.h>

#define JS_BUF (1 << 16)

struct js {
	gzFile z;                 /* the file, or NULL: mem */
	const unsigned char *mem; /* the bytes in memory */
	size_t mlen;
	unsigned char buf[JS_BUF];
	size_t n, pos;        /* bytes in buf, next one */
	long long total, max; /* bytes read so far, the most allowed */
	int peeked;           /* a byte read ahead (-1: none) */
	int line, col;        /* of the next byte, from 1 */
	int code;             /* 0, or the exit code of the error in why */
	const char *name;
	char *why;
	size_t whylen;
	char *cap; /* the last value js_capture read, NUL-terminated */
	size_t caplen, capcap;
	int cap_line, cap_col; /* where it started */
};

/* Opens path (gzip when it starts with 1f 8b; a name ending in .gz must) or the len bytes at data. Returns 0 or an
   exit code with why set; js_close frees either way. */
int js_open_file(struct js *J, const char *path, long long max, char *why, size_t whylen);
void js_open_mem(struct js *J, const char *data, size_t len, const char *name, long long max, char *why, size_t whylen);
void js_close(struct js *J);

/* The next byte that is not white space, not consumed; -1 at the end, -2 on an error. */
int js_peek(struct js *J);
/* Consumes the byte js_peek returned, which must be c; else a syntax error naming what was expected. Returns 0 or
   the exit code. */
int js_expect(struct js *J, int c, const char *what);
/* Reads an object's key and its colon into key (at most len - 1 bytes kept, as written: no escapes decoded).
   Returns 0 or the exit code. */
int js_key(struct js *J, char *key, size_t len);
/* Reads the next value whole into J->cap (caplen bytes), its position in cap_line, cap_col. Returns 0 or the exit
   code. */
int js_capture(struct js *J);
/* After the document's last value: only white space may follow. Returns 0 or the exit code. */
int js_end(struct js *J);
/* Sets a syntax error at the current position: "NAME: not JSON: line L, column C: MSG". Returns its exit code. */
int js_syntax(struct js *J, const char *msg);

#endif
