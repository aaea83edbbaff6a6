/*
 * replay_steady_iter.c -- the steady-state watcher's records of iterations
 * (replay_steady.c watches, proves and skips; replay_stagger.c does so for
 * a pipeline): the ring of slots the hosts issue into, the history of
 * evaluated iterations, their canonical order and the comparison of two,
 * how far the hosts run ahead, and what a proven steady state records in the
 * result (its template, copies and period).
 */
#include "replay_steady_int.h"

#include <assert.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

double st_tol(double t)
{
	return ST_TOL * fmax(fabs(t), 1e-3);
}

/* The iteration a proof is about (back 0) and the two before it (back 1,
   2): the latest evaluated, but in a pipeline whose ops wait for ones of the
   next iteration on another rank (S->lag: the interleaved schedule, where a
   stage's iteration j receives from its neighbour's j + 1) the one before
   it, judged once the next is in. */
struct st_hist *st_judged(struct steady *S, int back)
{
	return &S->hist[3 - S->lag - back];
}

/* The iteration after the judged one: with S->lag the latest, else none. */
struct st_hist *st_after_judged(struct steady *S)
{
	return S->lag ? &S->hist[3] : NULL;
}

int st_list_push(struct st_list *l, long v)
{
	if (l->n == l->cap) {
		long cap = l->cap ? 2 * l->cap : 256;
		long *w = realloc(l->v, (size_t)cap * sizeof *w);
		if (!w)
			return -1;
		l->v = w;
		l->cap = cap;
	}
	l->v[l->n++] = v;
	return 0;
}

struct st_slot *st_slot_get(struct steady *S, long long j)
{
	struct st_slot *sl = j >= 0 ? &S->ring[j % ST_RING] : NULL;
	return sl && sl->j == j ? sl : NULL;
}

/* Opens iteration j's slot (0 when the ring is full of older ones). */
int st_slot_open(struct steady *S, long long j)
{
	struct st_slot *sl = &S->ring[j % ST_RING];
	if (sl->j == j)
		return 1;
	if (sl->j >= 0)
		return 0;
	struct st_list keep = sl->spans;
	memset(sl, 0, sizeof *sl);
	sl->j = j;
	sl->spans = keep;
	sl->spans.n = 0;
	return 1;
}

void st_give_up(struct steady *S)
{
	if (S->state == ST_WATCH)
		S->state = ST_DONE;
}

int st_active(const struct steady *S)
{
	return S->state == ST_WATCH || S->state == ST_ARMED;
}

/* ---- evaluating iterations ---- */

/* Stable counting sort of the positions p[0..n) by key[p] in [0, nkeys):
   out[0..n) */
static int count_sort(const long *p, const int *key, long n, int nkeys, long *out)
{
	long *first = calloc((size_t)nkeys + 1, sizeof *first);
	if (!first)
		return -1;
	for (long i = 0; i < n; i++)
		first[key[p[i]] + 1]++;
	for (int k = 0; k < nkeys; k++)
		first[k + 1] += first[k];
	for (long i = 0; i < n; i++)
		out[first[key[p[i]]]++] = p[i];
	free(first);
	return 0;
}

/* Sets h's canonical order; -1 when memory runs out. The spans are listed
   as recorded (by index), so two stable counting sorts, by stream then by
   rank, give the order by rank, stream, then as recorded. */
int st_canonical(const struct run *R, struct st_hist *h)
{
	long n = h->spans.n;
	if (n > h->ccap) {
		long *c = realloc(h->canon, (size_t)n * sizeof *c);
		if (c)
			h->canon = c;
		long *ic = c ? realloc(h->icanon, (size_t)n * sizeof *ic) : NULL;
		if (!c || !ic)
			return -1;
		h->icanon = ic;
		h->ccap = n;
	}
	int *rank = calloc((size_t)n + 1, sizeof *rank), *stream = calloc((size_t)n + 1, sizeof *stream);
	long *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
	int rc = -1;
	if (rank && stream && tmp) {
		int nstreams = 1;
		for (long p = 0; p < n; p++) {
			const struct rp_span *s = &R->r->spans[h->spans.v[p]];
			assert(p == 0 || h->spans.v[p] > h->spans.v[p - 1]); /* as recorded */
			rank[p] = s->rank;
			stream[p] = s->stream;
			if (s->stream >= nstreams)
				nstreams = s->stream + 1;
			h->canon[p] = p;
		}
		rc = count_sort(h->canon, stream, n, nstreams, tmp) || count_sort(tmp, rank, n, R->nranks, h->canon)
		         ? -1
		         : 0;
	}
	for (long c = 0; !rc && c < n; c++)
		h->icanon[h->canon[c]] = c;
	free(rank);
	free(stream);
	free(tmp);
	return rc;
}

/* The canonical position of span i in iteration h, -1 when not in it. */
static long canon_pos(const struct st_hist *h, long i)
{
	long p = i >= 0 && h ? rp_list_find(h->spans.v, h->spans.n, i) : -1;
	return p >= 0 ? h->icanon[p] : -1;
}

/* What a span's predecessor is, seen from an iteration (cur), the one
   before it (prev) and the one after it (next; NULL: none can be):
   RP_PRED_* and the canonical position in that one. */
static int pred_class(long pred, const struct st_hist *cur, const struct st_hist *prev, const struct st_hist *next,
                      long *pos)
{
	*pos = -1;
	if (pred == -1)
		return RP_PRED_NONE;
	if ((*pos = canon_pos(cur, pred)) >= 0)
		return RP_PRED_SAME;
	if ((*pos = canon_pos(prev, pred)) >= 0)
		return RP_PRED_PREV;
	if (next && (*pos = canon_pos(next, pred)) >= 0)
		return RP_PRED_NEXT;
	return RP_PRED_FIXED;
}

static int shifted(double a, double b, double T)
{
	return fabs(b - a - T) <= st_tol(b);
}

/* Iteration b is iteration a, T later (a's predecessors seen with before
   and b, b's with a and next; next NULL: at a cut, where nothing waits for
   a later iteration). */
int st_same_iter(const struct run *R, const struct st_hist *before, const struct st_hist *a, const struct st_hist *b,
                 const struct st_hist *next, double T)
{
	const struct rp_span *S = R->r->spans;
	if (a->spans.n != b->spans.n)
		return 0;
	for (long p = 0; p < a->spans.n; p++) { /* in the canonical order */
		const struct rp_span *x = &S[a->spans.v[a->canon[p]]], *y = &S[b->spans.v[b->canon[p]]];
		if (x->rank != y->rank || x->line != y->line || x->text != y->text || x->stream != y->stream ||
		    x->kind != y->kind || x->bound != y->bound || x->mark != y->mark || x->algo != y->algo ||
		    x->proto != y->proto || x->flops != y->flops || x->bytes != y->bytes)
			return 0;
		if (!shifted(x->t0, y->t0, T) || !shifted(x->t1, y->t1, T) || !shifted(x->arrive, y->arrive, T))
			return 0;
		long px, py;
		int cx = pred_class(x->pred, a, before, next ? b : NULL, &px);
		int cy = pred_class(y->pred, b, a, next, &py);
		if (cx != cy || px != py || (cx == RP_PRED_FIXED && x->pred != y->pred))
			return 0;
	}
	return 1;
}

static int by_value(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* The ops a host may issue ahead of its streams, in iterations (see the top
   of the file): 0 when each rank's actor runs its own ops. */
long long st_host_lead(const struct run *R, const struct st_hist *h)
{
	if (R->inline_streams)
		return 0;
	int ns = tr_nstreams(R->t);
	long *key = malloc(((size_t)h->spans.n + 1) * sizeof *key);
	if (!key)
		return -1;
	for (long p = 0; p < h->spans.n; p++) {
		const struct rp_span *s = &R->r->spans[h->spans.v[p]];
		key[p] = (long)s->rank * ns + s->stream;
	}
	/* per rank, the most ops on one stream: sort (rank, stream) keys */
	qsort(key, (size_t)h->spans.n, sizeof *key, by_value);
	long long lead = 0;
	long most = 0;
	for (long i = 0; i < h->spans.n;) {
		long k = i;
		while (k < h->spans.n && key[k] == key[i])
			k++;
		if (k - i > most)
			most = k - i;
		int rank = (int)(key[i] / ns);
		i = k;
		if (i == h->spans.n || key[i] / ns != rank) { /* the rank's last stream */
			long long l = (QDEPTH + most - 1) / most + 1;
			if (l > lead)
				lead = l;
			most = 0;
		}
	}
	free(key);
	return lead;
}

/* One past the iteration the farthest host issues: where the hosts can all stop (or skip). */
long long st_next_boundary(const struct run *R)
{
	const struct steady *S = R->steady;
	long long A = 0;
	for (int i = 0; i < R->nranks; i++)
		if (R->ranks[i].streams && S->rk[i].iter + 1 > A)
			A = S->rk[i].iter + 1;
	return A;
}

/* The steady state the judged iteration (the template) starts: its copies, period and cut. */
struct rp_steady st_steady_of(struct steady *S)
{
	const struct st_hist *h = st_judged(S, 0);
	struct rp_steady st = {0};
	st.line = S->line;
	st.n = h->spans.n;
	st.copies = S->skip;
	st.period = (h->end - S->run_from_end) / (double)(h->j - S->run_from);
	st.t_cut = h->end;
	return st;
}

/* Adds st to the result with its template, the latest evaluated iteration, and each span's predecessor as the
   copies see it (canonical positions map to the template's own); counts the derived ops and FLOPs. -1 when
   memory runs out (nothing added). */
int st_record_steady(struct run *R, struct rp_steady *st)
{
	struct steady *S = R->steady;
	struct rp_result *r = R->r;
	const struct st_hist *h = st_judged(S, 0), *prev = st_judged(S, 1), *next = st_after_judged(S);
	st->tmpl = malloc((size_t)st->n * sizeof *st->tmpl);
	st->pcls = malloc((size_t)st->n);
	st->parg = malloc((size_t)st->n * sizeof *st->parg);
	st->pnext = next ? malloc((size_t)st->n * sizeof *st->pnext) : NULL;
	struct rp_steady *v = realloc(r->steady, ((size_t)r->nsteady + 1) * sizeof *v);
	if (v)
		r->steady = v;
	if (!st->tmpl || !st->pcls || !st->parg || (next && !st->pnext) || !v) {
		free(st->tmpl);
		free(st->pcls);
		free(st->parg);
		free(st->pnext);
		return -1;
	}
	memcpy(st->tmpl, h->spans.v, (size_t)st->n * sizeof *st->tmpl);
	for (long p = 0; p < st->n; p++) {
		long pred = r->spans[st->tmpl[p]].pred, c;
		st->pcls[p] = (signed char)pred_class(pred, h, prev, next, &c);
		st->parg[p] = st->pcls[p] == RP_PRED_FIXED ? pred : c >= 0 ? h->canon[c] : -1;
		if (next) /* the iteration played after the copies: the last copy's next */
			st->pnext[p] = st->pcls[p] == RP_PRED_NEXT ? next->spans.v[next->canon[c]] : -1;
	}
	S->seg = r->nsteady;
	r->steady[r->nsteady++] = *st;
	r->derived += st->copies * st->n;
	for (int d = 0; d < DT_COUNT; d++)
		R->flops_by_dtype[d] += (double)st->copies * h->flops[d];
	return 0;
}

void st_candidate(struct steady *S, const struct tr_loop *l, long ordinal)
{
	S->state = ST_WATCH;
	S->body = l->body;
	S->line = l->line;
	S->depth = l->depth;
	S->count = l->count;
	S->ordinal = ordinal;
	S->joined = S->left = 0;
	S->next_eval = 0;
	S->run_from = S->arm_at = -1;
	S->skip = 0;
	S->arrived = 0;
	S->seg = -1;
	for (int i = 0; i < ST_RING; i++)
		S->ring[i].j = -1;
	for (int i = 0; i < 4; i++)
		S->hist[i].j = -1;
}
