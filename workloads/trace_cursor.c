/*
 * trace_cursor.c -- a trace expanded for one rank at a time, and an event's
 * canonical text.
 *
 * A cursor walks the blocks trace.c parsed with an explicit stack of frames
 * (block, next node, repeats left), one frame per nesting level: the nesting
 * depth, calls included, is limited to MAX_DEPTH and known at load time, so
 * a cursor is one allocation of that many frames plus a bit per label and
 * def. Two short cuts keep a rank's walk linear in what it emits: a repeat
 * whose iteration issued nothing for this rank stops (every iteration
 * expands the same way), and a def whose body issued nothing for this rank
 * is not walked again.
 */
#include "trace_int.h"

#include "arch.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- expansion ---- */

struct frame {
	int block, idx, def;
	int line;        /* a repeat's line; 0 for `on` and call frames */
	long long count; /* a repeat's iterations in all */
	long long left;  /* iterations left, this one included */
	long long mark;  /* events issued when this iteration began */
};

struct tr_cursor {
	const struct trace *t;
	int rank, coord[DIM_COUNT];
	int depth, nframes, failed;
	int stops;           /* tr_cursor_stops: tr_next returns TR_LOOP and TR_LOOP_END */
	int stopped;         /* depth of the repeat frame the last stop was at, 0 = none */
	struct tr_loop loop; /* ... and what it said */
	long long emitted;
	unsigned char *issued;   /* per label */
	unsigned char *defempty; /* per def: its body issues nothing on this rank */
	struct frame st[];
};

struct tr_cursor *tr_cursor_new(const struct trace *t, int rank)
{
	if (!t || rank < 0 || rank >= t->ranks)
		return NULL;
	int nf = t->height + 1;
	size_t size =
	    sizeof(struct tr_cursor) + (size_t)nf * sizeof(struct frame) + (size_t)t->labels.n + (size_t)t->defnames.n;
	struct tr_cursor *c = calloc(1, size);
	if (!c)
		return NULL;
	c->t = t;
	c->rank = rank;
	for (int d = 0; d < DIM_COUNT; d++)
		c->coord[d] = tr_coord(t, rank, (enum tr_dim)d);
	c->nframes = nf;
	c->issued = (unsigned char *)(c->st + nf);
	c->defempty = c->issued + t->labels.n;
	c->st[0] = (struct frame){0, 0, -1, 0, 1, 1, 0};
	c->depth = 1;
	return c;
}

void tr_cursor_free(struct tr_cursor *c)
{
	free(c);
}

static int selected(const struct tr_cursor *c, int set)
{
	const struct trace *t = c->t;
	const struct selset *ss = &t->selsets[set];
	for (int i = ss->first; i < ss->first + ss->n; i++) {
		const struct sel *s = &t->sels[i];
		int v = s->key < 0 ? c->rank : c->coord[s->key], in = 0;
		for (int j = s->first; j < s->first + s->n && !in; j++)
			in = v >= t->ivals[j].lo && v <= t->ivals[j].hi;
		if (in == s->neg)
			return 0;
	}
	return 1;
}

/* ops of block b for the cursor's rank, `on` blocks as its selectors say */
static double block_ops(const struct tr_cursor *c, int b, double *memo)
{
	const struct trace *t = c->t;
	if (memo[b] >= 0)
		return memo[b];
	double n = 0;
	const struct block *bl = &t->blocks[b];
	for (int i = 0; i < bl->n; i++) {
		const struct node *nd = &bl->v[i];
		switch (nd->type) {
		case N_EVENT: n += 1; break;
		case N_REPEAT: n += nd->count > 0 ? (double)nd->count * block_ops(c, nd->child, memo) : 0; break;
		case N_ON: n += selected(c, nd->arg) ? block_ops(c, nd->child, memo) : 0; break;
		case N_CALL: n += block_ops(c, t->defs[nd->arg].block, memo); break;
		}
	}
	return memo[b] = n;
}

double tr_ops_of_rank(const struct trace *t, int rank)
{
	struct tr_cursor *c = tr_cursor_new(t, rank);
	double *memo = c ? malloc((size_t)t->nblocks * sizeof *memo) : NULL;
	if (!memo) {
		tr_cursor_free(c);
		return INFINITY; /* no room to count: over any budget */
	}
	for (int b = 0; b < t->nblocks; b++)
		memo[b] = -1;
	double n = t->nblocks > 0 ? block_ops(c, 0, memo) : 0;
	free(memo);
	tr_cursor_free(c);
	return n;
}

struct largest {
	struct tr_loop best;
	double ops; /* the best one's, its iterations multiplied out */
};

/* Repeats of block b (at frame depth d) outside any repeat, for the cursor's rank. */
static void largest_in(const struct tr_cursor *c, int b, int d, double *memo, struct largest *L)
{
	const struct trace *t = c->t;
	const struct block *bl = &t->blocks[b];
	for (int i = 0; i < bl->n; i++) {
		const struct node *nd = &bl->v[i];
		if (nd->type == N_REPEAT && nd->count > 0) {
			double n = (double)nd->count * block_ops(c, nd->child, memo);
			if (n > L->ops) {
				L->ops = n;
				L->best = (struct tr_loop){nd->line, nd->child, d, nd->count, 0};
			}
		} else if (nd->type == N_ON && selected(c, nd->arg)) {
			largest_in(c, nd->child, d + 1, memo, L);
		} else if (nd->type == N_CALL) {
			largest_in(c, t->defs[nd->arg].block, d + 1, memo, L);
		}
	}
}

int tr_largest_repeat(const struct trace *t, int rank, struct tr_loop *out)
{
	struct tr_cursor *c = tr_cursor_new(t, rank);
	double *memo = c ? malloc((size_t)t->nblocks * sizeof *memo) : NULL;
	struct largest L = {{0}, 0};
	if (memo && t->nblocks > 0) {
		for (int b = 0; b < t->nblocks; b++)
			memo[b] = -1;
		largest_in(c, 0, 1, memo, &L);
	}
	free(memo);
	tr_cursor_free(c);
	if (L.ops <= 0)
		return 0;
	*out = L.best;
	return 1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int
xerr(const struct tr_cursor *c, int line, char *why, size_t whylen, const char *fmt, ...)
{
	char msg[TR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tr_fail_at(why, whylen, c->t->path, line, "rank %d: %s", c->rank, msg);
}

static int emit(struct tr_cursor *c, const struct evnode *en, struct tr_event *ev, char *why, size_t whylen)
{
	const struct trace *t = c->t;
	*ev = en->ev;
	const char *kn = tr_kind_name(ev->kind);
	if (ev->kind == TK_COLL) {
		const struct comm *cm = &t->comms[ev->comm];
		const char *name = names_get(&t->commnames, ev->comm);
		int size = tr_comm_group(t, ev->comm, c->rank, NULL, 0, NULL);
		if (size == 0)
			return xerr(c, ev->line, why, whylen,
			            "coll op=%s comm=%s: this rank is not in comm %s (line %d lists %d ranks)",
			            tr_coll_name(ev->coll), name, name, t->commnames.line[ev->comm], cm->n);
		if (ev->root >= size)
			return xerr(c, ev->line, why, whylen, "coll op=%s: root=%d must be below the group size %d",
			            tr_coll_name(ev->coll), ev->root, size);
	}
	if ((ev->kind == TK_SEND || ev->kind == TK_RECV) && en->peer_dim != PEER_ABS) {
		long long k = en->peer_k;
		int d = en->peer_dim;
		const char *dn = d == PEER_RANK ? "rank" : tr_dim_name((enum tr_dim)d);
		long long pos = (d == PEER_RANK ? c->rank : c->coord[d]) + k;
		int size = d == PEER_RANK ? t->ranks : t->size[d];
		if (pos < 0 || pos >= size)
			return xerr(c, ev->line, why, whylen,
			            "%s peer=%s%+lld is out of range (this rank is %s %d; %s has %d: 0-%d)", kn, dn, k,
			            dn, d == PEER_RANK ? c->rank : c->coord[d], dn, size, size - 1);
		ev->peer = (int)(c->rank + k * (d == PEER_RANK ? 1 : t->stride[d]));
	}
	if ((ev->kind == TK_SEND || ev->kind == TK_RECV) && ev->peer == c->rank)
		return xerr(c, ev->line, why, whylen, "%s to itself (peer=%d is this rank)", kn, ev->peer);
	for (int i = 0; i < ev->nafter; i++) {
		int l = ev->after[i];
		if (!c->issued[l]) {
			const char *ln = names_get(&t->labels, l);
			return xerr(c, ev->line, why, whylen,
			            "after=%s: this rank has issued no op with id=%s yet (line %d, which has it, is in "
			            "an `on` block this rank skips or a def it has not called)",
			            ln, ln, t->labels.line[l]);
		}
	}
	if (ev->label >= 0)
		c->issued[ev->label] = 1;
	return 1;
}

static int push(struct tr_cursor *c, int block, long long count, int def, int line)
{
	if (c->depth >= c->nframes)
		return -1; /* the load-time depth bound says this cannot happen */
	c->st[c->depth++] = (struct frame){block, 0, def, line, count, count, c->emitted};
	return 0;
}

/* Describes the repeat frame at depth d (1-based) for a stop. */
static int loop_stop(struct tr_cursor *c, int d, int end)
{
	const struct frame *f = &c->st[d - 1];
	struct tr_loop *l = &c->loop;
	l->line = f->line;
	l->body = f->block;
	l->depth = d - 1;
	l->count = f->count;
	l->iter = end ? f->count : f->count - f->left;
	c->stopped = end ? 0 : d;
	return end ? TR_LOOP_END : TR_LOOP;
}

void tr_cursor_stops(struct tr_cursor *c, int on)
{
	if (c)
		c->stops = on;
}

const struct tr_loop *tr_cursor_loop(const struct tr_cursor *c)
{
	return c ? &c->loop : NULL;
}

int tr_cursor_skip(struct tr_cursor *c, long long n)
{
	if (!c || !c->stopped || c->stopped != c->depth || n < 0)
		return -1;
	struct frame *f = &c->st[c->depth - 1];
	if (f->idx != 0 || n > f->left)
		return -1;
	if (n == f->left) { /* all that is left: the frame ends (tr_next pops it) */
		f->left = 1;
		f->idx = c->t->blocks[f->block].n;
		f->mark = c->emitted;
	} else {
		f->left -= n;
	}
	c->stopped = 0;
	return 0;
}

int tr_next(struct tr_cursor *c, struct tr_event *ev, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	if (!c || !ev)
		return tr_fail_at(why, whylen, "trace", 0, "tr_next: no cursor");
	const struct trace *t = c->t;
	if (c->failed)
		return tr_fail_at(why, whylen, t->path, 0, "rank %d: the expansion stopped at an earlier error",
		                  c->rank);
	c->stopped = 0;
	while (c->depth > 0) {
		struct frame *f = &c->st[c->depth - 1];
		const struct block *b = &t->blocks[f->block];
		if (f->idx >= b->n) {
			/* an iteration that issued nothing is what every other one
			   would be: stop the repeat */
			if (f->left > 1 && c->emitted != f->mark) {
				f->left--;
				f->idx = 0;
				f->mark = c->emitted;
				if (c->stops && f->line > 0)
					return loop_stop(c, c->depth, 0);
				continue;
			}
			if (f->def >= 0 && c->emitted == f->mark)
				c->defempty[f->def] = 1;
			c->depth--;
			if (c->stops && f->line > 0)
				return loop_stop(c, c->depth + 1, 1);
			continue;
		}
		const struct node *nd = &b->v[f->idx++];
		int r = 0;
		switch (nd->type) {
		case N_EVENT:
			r = emit(c, &t->evs[nd->arg], ev, why, whylen);
			if (r < 0) {
				c->failed = 1;
				return -1;
			}
			c->emitted++;
			return 1;
		case N_REPEAT: r = push(c, nd->child, nd->count, -1, nd->line); break;
		case N_ON:
			if (selected(c, nd->arg))
				r = push(c, nd->child, 1, -1, 0);
			break;
		case N_CALL:
			if (!c->defempty[nd->arg])
				r = push(c, t->defs[nd->arg].block, 1, nd->arg, 0);
			break;
		default: break;
		}
		if (r) {
			c->failed = 1;
			return xerr(c, nd->line, why, whylen, "internal error: nesting deeper than the trace allows");
		}
		if (c->stops && nd->type == N_REPEAT)
			return loop_stop(c, c->depth, 0);
	}
	return 0;
}

/* ---- canonical text ---- */

struct out {
	char *buf;
	size_t len, n;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
out(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
}

/* A time as the shortest text units_parse reads back to exactly the same
   double, in s, ms, us or ns. */
static void format_time(double sec, char *buf, size_t len)
{
	static const struct {
		const char *sym;
		double scale;
	} u[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
	int k = 0;
	while (k < 3 && sec < u[k].scale && sec > 0)
		k++;
	for (int prec = 1; prec <= 17; prec++) {
		double back;
		char why[128];
		snprintf(buf, len, "%.*g%s", prec, sec / u[k].scale, u[k].sym);
		if (strchr(buf, 'e') && sec / u[k].scale < 1e15)
			continue; /* 10us, not 1e+01us */
		if (!units_parse(buf, UNIT_TIME, &back, why, sizeof why) && back == sec)
			return;
	}
	snprintf(buf, len, "%.17gs", sec);
}

size_t tr_event_format(const struct trace *t, const struct tr_event *ev, char *buf, size_t len)
{
	struct out o = {buf, buf ? len : 0, 0};
	if (o.len)
		buf[0] = '\0';
	if (!t || !ev)
		return 0;
	char tmp[OP_TEXT_MAX];
	switch (ev->kind) {
	case TK_OP:
		op_format(&ev->op, tmp, sizeof tmp);
		out(&o, "%s", tmp);
		break;
	case TK_COLL:
		out(&o, "coll op=%s comm=%s", tr_coll_name(ev->coll), tr_comm_name(t, ev->comm));
		if (ev->coll != CO_BARRIER)
			out(&o, " bytes=%.0f", ev->bytes);
		out(&o, " algo=%s", tr_algo_name(t, ev->algo));
		if (ev->coll == CO_BROADCAST || ev->coll == CO_REDUCE)
			out(&o, " root=%d", ev->root);
		if (ev->route.topk)
			out(&o, " topk=%d experts=%d groups=%d group_topk=%d", ev->route.topk, ev->route.experts,
			    ev->route.groups, ev->route.group_topk);
		break;
	case TK_SEND:
	case TK_RECV:
		out(&o, "%s peer=%d bytes=%.0f tag=%ld", tr_kind_name(ev->kind), ev->peer, ev->bytes, ev->tag);
		break;
	case TK_DELAY:
		format_time(ev->seconds, tmp, sizeof tmp);
		out(&o, "delay time=%s", tmp);
		if (ev->scale == TR_SCALE_DRAM)
			out(&o, " scale=dram ref=%.17gB/s", ev->scale_ref);
		else if (ev->scale == TR_SCALE_MATRIX)
			out(&o, " scale=matrix ref=%.17gFLOPS", ev->scale_ref);
		break;
	case TK_MARK: out(&o, "mark name=%s", tr_mark_name(t, ev->mark)); return o.n;
	case TK_MEM:
		out(&o, "memory");
		for (int c = 0; c < MEM_COUNT; c++)
			if (ev->mem_set & (1u << c))
				out(&o, " %s=%.0f", tr_mem_name((enum tr_mem)c), ev->mem[c]);
		return o.n;
	default: out(&o, "?"); return o.n;
	}
	if (ev->stream != 0)
		out(&o, " stream=%s", tr_stream_name(t, ev->stream));
	if (ev->label >= 0)
		out(&o, " id=%s", tr_label_name(t, ev->label));
	for (int i = 0; i < ev->nafter && i < TR_MAX_AFTER; i++)
		out(&o, "%s%s", i ? "," : " after=", tr_label_name(t, ev->after[i]));
	return o.n;
}

double tr_delay_seconds(const struct tr_event *ev, double dram_Bps, double matrix_flops)
{
	double own = ev->scale == TR_SCALE_DRAM ? dram_Bps : ev->scale == TR_SCALE_MATRIX ? matrix_flops : 0;
	return own > 0 ? ev->seconds * ev->scale_ref / own : ev->seconds;
}
