/*
 * trace.c -- the `simtrace 1` trace: parsed once into a small tree (this
 * file and the three below), then expanded lazily for one rank at a time
 * (trace_cursor.c).
 *
 * The parser reads the text line by line (each line copied into a 4 KiB
 * buffer, '#' comments cut, split at white space) and builds:
 *
 *   blocks   lists of nodes; block 0 is the top level, each def, repeat and
 *            on body is a block of its own
 *   nodes    an event (index of a pre-parsed event), a repeat (count, body),
 *            an on (selector set, body) or a call (def index)
 *   events   struct tr_event templates: op lines already through op_parse,
 *            units already read, names interned; only peer=DIM+K is left to
 *            resolve for the rank
 *   names    streams, labels (id=), marks, algo= names, communicators and
 *            defs, each an interned table (a hash of the name to its index)
 *
 * This file has the loop over the lines and the statements that give the
 * trace its structure (header, ranks, layout, comm, def, call, repeat, on,
 * '}'); trace_events.c the statements that add an event; trace_lex.c the
 * primitives both use (the parser's state and their prototypes are in
 * trace_parse.h); trace_query.c what callers ask of a parsed trace (trace.h's
 * accessors, communicator groups, symmetry). trace_cursor.c expands the tree
 * for one rank at a time (tr_cursor_new, tr_next) and writes an event's
 * canonical text; the types all of them read are in trace_int.h.
 */
#include "trace_parse.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tr_free(struct trace *t)
{
	if (!t)
		return;
	free(t->path);
	tp_names_free(&t->streams);
	tp_names_free(&t->labels);
	tp_names_free(&t->marks);
	tp_names_free(&t->algos);
	for (int i = 0; i < t->commnames.n && t->comms; i++)
		free(t->comms[i].iv);
	tp_names_free(&t->commnames);
	tp_names_free(&t->defnames);
	free(t->comms);
	free(t->defs);
	for (int i = 0; i < t->nblocks; i++)
		free(t->blocks[i].v);
	free(t->blocks);
	free(t->evs);
	free(t->ivals);
	free(t->sels);
	free(t->selsets);
	free(t);
}

/* ---- statements ---- */

static int st_header(struct parser *P)
{
	char s[SHOW_MAX + 4];
	struct span k = P->tok[0];
	if (!tp_is(k, "simtrace"))
		return tp_perr(P, "expected the header 'simtrace 1' on the first line (not '%s')", tp_show(s, k));
	if (P->ntok != 2)
		return tp_perr(P, "the header must be exactly 'simtrace 1'");
	long long v;
	int r = tp_parse_uint(P->tok[1], (long long)INT_MAX, &v);
	if (r == 0 && v == 1 && P->tok[1].n == 1) {
		P->header = P->line;
		return 0;
	}
	if (r == -1)
		return tp_perr(P, "the header must be exactly 'simtrace 1' (not 'simtrace %s')", tp_show(s, P->tok[1]));
	return tp_perr(P, "unsupported trace version %s (this sim reads simtrace 1)", tp_show(s, P->tok[1]));
}

static int st_ranks(struct parser *P)
{
	char s[SHOW_MAX + 4];
	if (P->ranks_line)
		return tp_perr(P, "ranks given twice (first at line %d)", P->ranks_line);
	if (P->ntok != 2)
		return tp_perr(P, "ranks: expected 'ranks N' (how many ranks run the trace)");
	long long v;
	int r = tp_parse_uint(P->tok[1], (long long)INT_MAX, &v);
	if (r || v < 1 || v > TR_MAX_RANKS)
		return tp_perr(P, "ranks %s: expected an integer from 1 to %d", tp_show(s, P->tok[1]), TR_MAX_RANKS);
	P->t->ranks = (int)v;
	P->ranks_line = P->line;
	return 0;
}

static int st_layout(struct parser *P)
{
	static const char *const keys[] = {"tp", "cp", "ep", "dp", "pp", "order", NULL};
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	struct span v[7];
	if (P->layout_line)
		return tp_perr(P, "layout given twice (first at line %d)", P->layout_line);
	if (P->depth)
		return tp_perr(P, "layout belongs at the top level (not inside a block)");
	if (P->body_line)
		return tp_perr(P, "layout must come before the first op, comm, def or block (line %d)", P->body_line);
	if (P->ntok < 2)
		return tp_perr(P, "layout: expected dims such as 'layout tp=8 pp=4 dp=2'");
	if (tp_parse_keys(P, "layout", 1, P->ntok, keys, v))
		return -1;
	unsigned long long prod = 1;
	char dims[128] = "";
	for (int d = 0; d < DIM_COUNT; d++) {
		if (!v[d].p)
			continue;
		long long x;
		if (tp_parse_uint(v[d], TR_MAX_RANKS, &x) || x < 1)
			return tp_perr(P, "layout: %s=%s must be an integer from 1 to %d", tp_dim_names[d],
			               tp_show(s, v[d]), TR_MAX_RANKS);
		t->size[d] = (int)x;
		if (prod <= (unsigned long long)TR_MAX_RANKS)
			prod *= (unsigned long long)x; /* below 2^40: no overflow */
		size_t used = strlen(dims);
		snprintf(dims + used, sizeof dims - used, "%s%s=%d", used ? " " : "", tp_dim_names[d], (int)x);
	}
	if (prod != (unsigned long long)t->ranks) {
		if (prod > (unsigned long long)TR_MAX_RANKS)
			return tp_perr(
			    P, "layout: %s makes more than %d ranks, but ranks is %d (the product must equal ranks)",
			    dims[0] ? dims : "(no dims)", TR_MAX_RANKS, t->ranks);
		return tp_perr(P, "layout: %s makes %llu ranks, but ranks is %d (the product must equal ranks)",
		               dims[0] ? dims : "(no dims)", prod, t->ranks);
	}
	if (v[5].p) { /* order= */
		int n = 0, seen[DIM_COUNT] = {0};
		const char *p = v[5].p, *end = v[5].p + v[5].n;
		while (p <= end) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			struct span item = {p, (size_t)((c ? c : end) - p)};
			p = (c ? c : end) + 1;
			int d = tp_choice(item, tp_dim_names);
			if (d < 0)
				return tp_perr(P, "layout: order=%s: '%s' is not a dim (expected tp, cp, ep, dp, pp)",
				               tp_show(s, v[5]), item.n ? tp_show((char[SHOW_MAX + 4]){0}, item) : "");
			if (seen[d])
				return tp_perr(P, "layout: order= names %s twice", tp_dim_names[d]);
			seen[d] = 1;
			t->order[n++] = d;
		}
		for (int d = 0; d < DIM_COUNT; d++) {
			if (seen[d])
				continue;
			if (t->size[d] > 1)
				return tp_perr(P, "layout: order= leaves out %s (%s=%d); name every dim above 1",
				               tp_dim_names[d], tp_dim_names[d], t->size[d]);
			t->order[n++] = d;
		}
	}
	int stride = 1;
	for (int i = 0; i < DIM_COUNT; i++) {
		t->stride[t->order[i]] = stride;
		stride *= t->size[t->order[i]];
	}
	P->layout_line = P->line;
	return 0;
}

static int st_comm(struct parser *P)
{
	static const char *const keys[] = {"dims", "ranks", NULL};
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	struct span v[2];
	if (P->depth)
		return tp_perr(P, "comm belongs at the top level (not inside a block)");
	if (P->ntok < 3)
		return tp_perr(P, "comm: expected 'comm NAME dims=DIM,...' or 'comm NAME ranks=LIST'");
	struct span name = P->tok[1];
	if (!tp_name_ok(name))
		return tp_bad_name(P, "comm", "", name);
	int old = tp_names_find(&t->commnames, name.p, name.n);
	if (old >= 0 && t->commnames.line[old] == 0)
		return tp_perr(P, "comm %s: the name of a built-in communicator", tp_show(s, name));
	if (old >= 0)
		return tp_perr(P, "comm %s is already defined at line %d", tp_show(s, name), t->commnames.line[old]);
	char stmt[64];
	snprintf(stmt, sizeof stmt, "comm %.*s", (int)name.n, name.p);
	if (tp_parse_keys(P, stmt, 2, P->ntok, keys, v))
		return -1;
	if (v[0].p && v[1].p)
		return tp_perr(P, "%s: give dims= or ranks=, not both", stmt);
	struct comm c = {CK_DIMS, 0, NULL, 0, 0};
	if (v[0].p) {
		const char *p = v[0].p, *end = v[0].p + v[0].n;
		while (p <= end) {
			const char *cm = memchr(p, ',', (size_t)(end - p));
			struct span item = {p, (size_t)((cm ? cm : end) - p)};
			p = (cm ? cm : end) + 1;
			int d = tp_choice(item, tp_dim_names);
			if (d < 0)
				return tp_perr(P, "%s: dims=%s: '%s' is not a dim (expected tp, cp, ep, dp, pp)", stmt,
				               tp_show(s, v[0]), tp_show((char[SHOW_MAX + 4]){0}, item));
			if (c.dims & (1u << d))
				return tp_perr(P, "%s: dims= names %s twice", stmt, tp_dim_names[d]);
			c.dims |= 1u << d;
		}
	} else if (v[1].p) {
		int first, n;
		if (tp_parse_list(P, stmt, "ranks=", NULL, v[1], t->ranks, &first, &n))
			return -1;
		/* sorted and merged: memory follows the text, not the rank count */
		qsort(t->ivals + first, (size_t)n, sizeof *t->ivals, tp_cmp_ival);
		c.kind = CK_RANKS;
		c.iv = malloc((size_t)n * sizeof *c.iv);
		if (!c.iv)
			return tp_oom(P);
		for (int i = first; i < first + n; i++) {
			struct ival x = t->ivals[i];
			if (c.niv && x.lo <= c.iv[c.niv - 1].hi + 1) {
				if (x.hi > c.iv[c.niv - 1].hi)
					c.iv[c.niv - 1].hi = x.hi;
			} else {
				c.iv[c.niv++] = x;
			}
		}
		for (int i = 0; i < c.niv; i++)
			c.n += c.iv[i].hi - c.iv[i].lo + 1;
		t->nivals = first; /* the list lives on in the comm */
	} else {
		return tp_perr(P, "%s: expected dims=DIM,... or ranks=LIST", stmt);
	}
	struct comm *cs = tp_grow(t->comms, &t->ccap, t->commnames.n + 1, sizeof *cs);
	if (!cs) {
		free(c.iv);
		return tp_oom(P);
	}
	t->comms = cs;
	t->comms[t->commnames.n] = c;
	if (tp_names_add(&t->commnames, name.p, name.n, P->line) < 0) {
		free(c.iv);
		return tp_oom(P);
	}
	return 0;
}

static int st_def(struct parser *P)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	if (P->depth)
		return tp_perr(P, "def belongs at the top level (not inside a block)");
	if (P->ntok != 3 || !tp_is(P->tok[2], "{"))
		return tp_perr(P, "def: expected 'def NAME {'");
	struct span name = P->tok[1];
	if (!tp_name_ok(name))
		return tp_bad_name(P, "def", "", name);
	int old = tp_names_find(&t->defnames, name.p, name.n);
	if (old >= 0)
		return tp_perr(P, "def %s is already defined at line %d", tp_show(s, name), t->defnames.line[old]);
	struct def *d = tp_grow(t->defs, &t->dcap, t->defnames.n + 1, sizeof *d);
	if (!d)
		return tp_oom(P);
	t->defs = d;
	int idx = t->defnames.n;
	if (tp_open_block(P, 0, 0, 0, idx))
		return -1;
	t->defs[idx] = (struct def){P->blk[P->depth], 0, 1};
	if (tp_names_add(&t->defnames, name.p, name.n, P->line) < 0)
		return tp_oom(P);
	return 0;
}

static int st_close(struct parser *P)
{
	if (P->depth == 0)
		return tp_perr(P, "'}' without an open block");
	if (P->ntok != 1)
		return tp_perr(P, "'}' must be alone on its line");
	int h = P->height[P->depth], def = P->bdef[P->depth];
	P->depth--;
	if (def >= 0) {
		P->t->defs[def].height = h;
		P->t->defs[def].open = 0;
	} else {
		tp_raise_height(P, h + 1);
	}
	return 0;
}

static int st_call(struct parser *P)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	if (P->ntok != 2)
		return tp_perr(P, "call: expected 'call NAME'");
	struct span name = P->tok[1];
	tp_show(s, name);
	int d = tp_names_find(&t->defnames, name.p, name.n);
	if (d < 0) {
		int later = tp_name_ok(name) ? tp_later_line(P, 1, name) : 0;
		if (later)
			return tp_perr(
			    P, "call %s: def %s is at line %d, after this call (a def must come before its calls)", s,
			    s, later);
		return tp_perr(P, "call %s: no def %s before this line (a def must come before its calls)", s, s);
	}
	if (t->defs[d].open)
		return tp_perr(P, "call %s inside def %s: a def cannot call itself (cycle %s -> %s)", s, s, s, s);
	int h = t->defs[d].height + 1;
	if (P->depth + h > MAX_DEPTH)
		return tp_perr(P, "call %s: blocks nest deeper than %d here (def %s at line %d nests %d deep)", s,
		               MAX_DEPTH, s, t->defnames.line[d], h);
	if (tp_add_node(P, (struct node){N_CALL, P->line, d, -1, 1}))
		return -1;
	tp_raise_height(P, h);
	return 0;
}

static int st_repeat(struct parser *P)
{
	char s[SHOW_MAX + 4];
	if (P->ntok != 3 || !tp_is(P->tok[2], "{"))
		return tp_perr(P, "repeat: expected 'repeat N {'");
	long long n;
	int r = tp_parse_uint(P->tok[1], REPEAT_MAX, &n);
	if (r || n < 1)
		return tp_perr(P, "repeat %s: the count must be an integer from 1 to %lld", tp_show(s, P->tok[1]),
		               REPEAT_MAX);
	return tp_open_block(P, N_REPEAT, 0, n, -1);
}

static int st_on(struct parser *P)
{
	static const char *const keys[] = {"rank", "ranks", "tp", "cp", "ep", "dp", "pp", NULL};
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	if (P->ntok < 3 || !tp_is(P->tok[P->ntok - 1], "{"))
		return tp_perr(P, "on: expected 'on SELECTOR... {' (selectors such as pp=0, pp!=last, ranks=0-7)");
	int first = t->nsels, seen[DIM_COUNT + 1] = {0};
	for (int i = 1; i < P->ntok - 1; i++) {
		struct span tk = P->tok[i];
		const char *eq = memchr(tk.p, '=', tk.n);
		if (!eq)
			return tp_perr(P, "on: '%s' is not a selector (expected KEY=VALUES or KEY!=VALUES)",
			               tp_show(s, tk));
		int neg = eq > tk.p && eq[-1] == '!';
		struct span k = {tk.p, (size_t)(eq - tk.p) - (size_t)neg}, v = {eq + 1, tk.n - (size_t)(eq - tk.p) - 1};
		int key = tp_choice(k, keys);
		if (key < 0)
			return tp_perr(P, "on: unknown key '%s' (expected rank, ranks, tp, cp, ep, dp, pp)",
			               tp_show(s, k));
		int dim = key <= 1 ? -1 : key - 2;
		if (seen[dim + 1])
			return tp_perr(P, "on: %s given twice", dim < 0 ? "rank" : tp_dim_names[dim]);
		seen[dim + 1] = 1;
		int f, n;
		char kw[16];
		snprintf(kw, sizeof kw, "%s%s=", keys[key], neg ? "!" : "");
		if (tp_parse_list(P, "on", kw, dim < 0 ? NULL : tp_dim_names[dim], v, dim < 0 ? t->ranks : t->size[dim],
		                  &f, &n))
			return -1;
		struct sel *sv = tp_grow(t->sels, &t->scap, t->nsels + 1, sizeof *sv);
		if (!sv)
			return tp_oom(P);
		t->sels = sv;
		t->sels[t->nsels++] = (struct sel){dim, neg, f, n};
	}
	struct selset *ss = tp_grow(t->selsets, &t->sscap, t->nselsets + 1, sizeof *ss);
	if (!ss)
		return tp_oom(P);
	t->selsets = ss;
	t->selsets[t->nselsets] = (struct selset){first, t->nsels - first};
	return tp_open_block(P, N_ON, t->nselsets++, 1, -1);
}

static int statement(struct parser *P)
{
	char s[SHOW_MAX + 4];
	struct span k = P->tok[0];
	if (!P->header)
		return st_header(P);
	if (tp_is(k, "simtrace"))
		return tp_perr(P, "a second header (simtrace belongs on the first line only)");
	if (tp_is(k, "ranks"))
		return st_ranks(P);
	if (!P->ranks_line)
		return tp_perr(P, "'%s' before 'ranks N' (the rank count comes right after the header)", tp_show(s, k));
	if (tp_is(k, "layout"))
		return st_layout(P);
	if (tp_is(k, "}"))
		return st_close(P);
	if (tp_is(k, "workload"))
		return tp_st_workload(P);
	if (!P->body_line)
		P->body_line = P->line;
	if (tp_is(k, "comm"))
		return st_comm(P);
	if (tp_is(k, "def"))
		return st_def(P);
	if (tp_is(k, "call"))
		return st_call(P);
	if (tp_is(k, "repeat"))
		return st_repeat(P);
	if (tp_is(k, "on"))
		return st_on(P);
	if (tp_is(k, "coll"))
		return tp_st_coll(P);
	if (tp_is(k, "send"))
		return tp_st_p2p(P, TK_SEND);
	if (tp_is(k, "recv"))
		return tp_st_p2p(P, TK_RECV);
	if (tp_is(k, "delay"))
		return tp_st_delay(P);
	if (tp_is(k, "mark"))
		return tp_st_mark(P);
	if (tp_is(k, "memory"))
		return tp_st_memory(P);
	for (int i = 0; i < OP_KIND_COUNT; i++)
		if (tp_is(k, op_kind_name((enum op_kind)i)))
			return tp_st_op(P);
	return tp_perr(
	    P,
	    "unknown statement '%s' (expected gemm|attn|elem|copy|conv|embedding|coll|send|recv|delay|mark|memory, "
	    "repeat, on, def, call, comm, layout, workload or '}')",
	    tp_show(s, k));
}

static int init_trace(struct trace *t, const char *name)
{
	t->path = strdup(name);
	if (!t->path)
		return -1;
	for (int d = 0; d < DIM_COUNT; d++) {
		t->size[d] = 1;
		t->stride[d] = 1;
		t->order[d] = d;
	}
	if (tp_names_add(&t->streams, "0", 1, 0) < 0)
		return -1;
	static const char *const builtin[] = {"world", "tp", "cp", "ep", "dp", "pp"};
	t->comms = calloc(8, sizeof *t->comms);
	if (!t->comms)
		return -1;
	t->ccap = 8;
	for (int i = 0; i < 6; i++) {
		t->comms[i] = (struct comm){i ? CK_DIMS : CK_WORLD, i ? 1u << (i - 1) : 0, NULL, 0, 0};
		if (tp_names_add(&t->commnames, builtin[i], strlen(builtin[i]), 0) < 0)
			return -1;
	}
	return 0;
}

static struct trace *parse(const char *text, const char *name, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	if (!name)
		name = "trace";
	if (!text) {
		tr_fail_at(why, whylen, name, 0, "no text");
		return NULL;
	}
	struct trace *t = calloc(1, sizeof *t);
	struct parser *P = calloc(1, sizeof *P);
	if (!t || !P || init_trace(t, name)) {
		tr_fail_at(why, whylen, name, 0, "out of memory");
		goto fail;
	}
	P->t = t;
	P->name = name;
	P->why = why;
	P->whylen = whylen;
	P->next = text;
	if (tp_new_block(P) < 0) {
		tp_oom(P);
		goto fail;
	}
	P->blk[0] = 0;
	P->bdef[0] = -1;
	for (;;) {
		int r = tp_read_line(P);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		if (P->ntok && statement(P))
			goto fail;
	}
	if (P->line == 0)
		P->line = 1;
	if (!P->header) {
		tp_perr(P, "empty trace: expected the header 'simtrace 1'");
		goto fail;
	}
	if (P->depth) {
		tp_perr(P, "unexpected end of file: the block opened at line %d is not closed by '}'",
		        P->bline[P->depth]);
		goto fail;
	}
	if (!P->ranks_line) {
		tp_perr(P, "missing 'ranks N' (how many ranks run the trace) after the header");
		goto fail;
	}
	t->height = P->height[0];
	free(P);
	return t;
fail:
	free(P);
	tr_free(t);
	return NULL;
}

struct trace *tr_parse_string(const char *text, const char *name, char *why, size_t whylen)
{
	return parse(text, name, why, whylen);
}

struct trace *tr_load(const char *path, long long max_bytes, int *exit_code, char *why, size_t whylen)
{
	int dummy;
	if (!exit_code)
		exit_code = &dummy;
	*exit_code = 66;
	if (why && whylen)
		why[0] = '\0';
	if (!path) {
		tr_fail_at(why, whylen, "trace", 0, "no path");
		return NULL;
	}
	if (max_bytes <= 0)
		max_bytes = TR_MAX_BYTES;
	FILE *f = fopen(path, "rb");
	if (!f) {
		tr_fail_at(why, whylen, path, 0, "cannot read: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(f);
			*exit_code = 70;
			tr_fail_at(why, whylen, path, 0, "out of memory");
			return NULL;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		const char *nul = memchr(buf + n, '\0', got);
		n += got;
		if (nul) { /* refused as soon as seen: /dev/zero is not read to the end */
			int line = 1;
			for (const char *p = buf; p < nul; p++)
				line += *p == '\n';
			fclose(f);
			free(buf);
			*exit_code = 65;
			tr_fail_at(why, whylen, path, line, "a NUL byte: this is not a text trace");
			return NULL;
		}
		if ((long long)n > max_bytes) {
			fclose(f);
			free(buf);
			*exit_code = 65;
			tr_fail_at(why, whylen, path, 0,
			           "larger than %lld bytes, the most a trace may have (--max-trace-bytes)", max_bytes);
			return NULL;
		}
		if (n < cap - 1)
			break;
		char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		tr_fail_at(why, whylen, path, 0, "cannot read: read error");
		return NULL;
	}
	buf[n] = '\0';
	*exit_code = 65;
	struct trace *t = parse(buf, path, why, whylen);
	free(buf);
	if (t)
		*exit_code = 0;
	return t;
}
