/*
 * trace_parse.h -- private to the parser of the trace (workloads/trace.c,
 * trace_events.c, trace_lex.c): the parser's state and the primitives its
 * statements share. trace_lex.c has the primitives (messages, tokens and
 * values, the format's words, name tables, blocks and nodes), trace_events.c
 * the statements that add an event (op lines, coll, send and recv, delay,
 * mark, memory, workload), trace.c the structure (header, ranks, layout,
 * comm, def, call, repeat, on, '}') and the loop over the lines. The calls go
 * one way: trace.c -> trace_events.c -> trace_lex.c.
 */
#ifndef SIM_TRACE_PARSE_H
#define SIM_TRACE_PARSE_H

#include "arch.h"
#include "trace_int.h"

#include <stddef.h>

#define LINE_CHARS  TR_LINE_MAX /* longest line */
#define NAME_CHARS  47          /* longest name */
#define REPEAT_MAX  1000000000LL
#define SHOW_MAX    40                    /* characters of a token quoted in a message */
#define BYTES_LIMIT 4611686018427387904.0 /* 2^62 */
#define TAG_MAX     2147483647L
#define MAX_TOKENS  (LINE_CHARS / 2 + 2)

/* a token: a slice of the line buffer */
struct span {
	const char *p;
	size_t n;
};

struct parser {
	struct trace *t;
	const char *name;
	char *why;
	size_t whylen;
	const char *next; /* the rest of the text */
	int line;
	char buf[LINE_CHARS + 1];
	struct span tok[MAX_TOKENS];
	int ntok;
	int header, ranks_line, layout_line, body_line;
	int depth;                /* 0 at the top level */
	int blk[MAX_DEPTH + 1];   /* the open blocks */
	int bline[MAX_DEPTH + 1]; /* where each was opened */
	int bdef[MAX_DEPTH + 1];  /* def index, or -1 */
	int height[MAX_DEPTH + 1];
};

/* ---- trace_lex.c: each returns 0 or a count when fine, -1 (why set) on an error ---- */

/* messages: an error at the current line (why = "FILE:LINE: ..."), out of memory; a token as quoted */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int tp_perr(struct parser *P, const char *fmt, ...);
int tp_oom(struct parser *P);
const char *tp_show(char out[SHOW_MAX + 4], struct span s);

/* lines and tokens: the next line into P->buf and P->tok (1, 0 at the end, -1); the first line after the
   current one that defines the label (def != 0: a def of that name), 0 if none; whether a token is the word */
int tp_read_line(struct parser *P);
int tp_later_line(const struct parser *P, int def, struct span name);
int tp_is(struct span s, const char *word);

/* values (their comments in trace_lex.c) */
int tp_name_ok(struct span v);
int tp_bad_name(struct parser *P, const char *stmt, const char *what, struct span v);
int tp_parse_uint(struct span v, long long max, long long *out);
int tp_parse_count(struct parser *P, const char *stmt, const char *key, struct span v, double max, double *out);
int tp_choice(struct span v, const char *const *names);
void tp_choice_list(char *buf, size_t len, const char *const *names);
int tp_parse_size(struct parser *P, const char *stmt, const char *key, struct span v, double *out);
int tp_parse_quantity(struct parser *P, const char *stmt, const char *key, struct span v, enum unit_kind kind,
                      double *out);
int tp_parse_bytes(struct parser *P, const char *stmt, struct span v, double *out);
int tp_cmp_ival(const void *a, const void *b);
int tp_parse_list(struct parser *P, const char *stmt, const char *key, const char *dim, struct span v, int size,
                  int *first, int *count);
int tp_parse_keys(struct parser *P, const char *stmt, int from, int to, const char *const *keys, struct span *vals);

/* growing arrays and interned names */
void *tp_grow(void *v, int *cap, int need, size_t elem);
int tp_names_find(const struct names *t, const char *p, size_t n);
int tp_names_add(struct names *t, const char *p, size_t n, int line);
void tp_names_free(struct names *t);

/* the tree: blocks, nodes, events */
int tp_new_block(struct parser *P);
int tp_add_node(struct parser *P, struct node nd);
int tp_open_block(struct parser *P, int type, int arg, long long count, int def);
void tp_raise_height(struct parser *P, int h);
void tp_init_event(struct evnode *en, enum tr_kind kind);
int tp_add_event(struct parser *P, const struct evnode *en);

/* ---- trace_events.c: one statement of the current line each, 0 or -1 ---- */

int tp_st_op(struct parser *P);
int tp_st_coll(struct parser *P);
int tp_st_p2p(struct parser *P, enum tr_kind kind);
int tp_st_delay(struct parser *P);
int tp_st_mark(struct parser *P);
int tp_st_memory(struct parser *P);
int tp_st_workload(struct parser *P);

#endif
