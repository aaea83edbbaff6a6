/*
 * stagger.c -- report quantities that add up over time (unions, exposed time)
 * for a rank whose iterations a pipeline's steady state derived
 * (sim/cluster/replay_steady.c: rp_steady.stagger). There the copies of the
 * template interleave with one another and with the spans recorded around
 * them, so the rank's union is not the recorded one plus copies x the
 * template's, as it is at a cut (report.c's rank_unions); and listing every
 * copy would cost what playing them saved. report.c and report_work.c pass
 * the function to evaluate; this file lists the spans.
 */
#include "report.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct rp_steady *report_stagger(const struct rp_result *r)
{
	return r->nsteady == 1 && r->steady[0].stagger ? &r->steady[0] : NULL;
}

/*
 * The rank's spans as three lists by start, from which every expansion below
 * is merged (sorting each expansion whole cost the GPT-3 step's report a
 * sixth of its run): the spans issued before the skip (`early`), those issued
 * after it (`late`, recorded K periods early: moved by the same amount in
 * every span, so their order holds), and the template's (`tmpl`, a
 * subsequence of early: a template span is never late), whose copy k is the
 * list k periods later. Each is idx's order (by start, report.c) kept; spans
 * that start together may come in another order than a sort would give them,
 * which nothing summed over time sees.
 */
struct lists {
	struct rp_span *early, *late, *tmpl;
	long nearly, nlate, ntmpl;
};

static int lists_make(const struct rp_result *r, const long *idx, long n, const long *copies, struct lists *L)
{
	memset(L, 0, sizeof *L);
	L->early = malloc(((size_t)n + 1) * sizeof *L->early);
	L->late = malloc(((size_t)n + 1) * sizeof *L->late);
	L->tmpl = malloc(((size_t)n + 1) * sizeof *L->tmpl);
	if (!L->early || !L->late || !L->tmpl)
		return -1;
	for (long i = 0; i < n; i++) {
		const struct rp_span *s = &r->spans[idx[i]];
		assert(i == 0 || r->spans[idx[i - 1]].t0 <= s->t0);
		if (s->late == RP_LATE_YES)
			L->late[L->nlate++] = *s;
		else
			L->early[L->nearly++] = *s;
		if (copies[idx[i]]) {
			assert(s->late != RP_LATE_YES);
			L->tmpl[L->ntmpl++] = *s;
		}
	}
	return 0;
}

static void lists_free(struct lists *L)
{
	free(L->early);
	free(L->late);
	free(L->tmpl);
}

/* One list of a merge: v[pos..n) moved by shift. */
struct head {
	const struct rp_span *v;
	long pos, n;
	double shift;
	struct rp_span cur; /* v[pos] moved */
};

static void head_load(struct head *h)
{
	h->cur = h->v[h->pos];
	if (h->shift != 0) {
		h->cur.arrive += h->shift;
		h->cur.t0 += h->shift;
		h->cur.t1 += h->shift;
	}
}

static int head_before(const struct head *a, const struct head *b)
{
	return a->cur.t0 < b->cur.t0 || (a->cur.t0 == b->cur.t0 && a < b); /* ties: the list first made */
}

static void sift_down(struct head **heap, long nh, long i)
{
	for (;;) {
		long l = 2 * i + 1, m = i;
		if (l < nh && head_before(heap[l], heap[m]))
			m = l;
		if (l + 1 < nh && head_before(heap[l + 1], heap[m]))
			m = l + 1;
		if (m == i)
			return;
		struct head *t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* The rank's spans as the replay would have recorded them with kk copies of
   the template instead of st->copies, by start, into out: the spans issued
   after the copies come kk periods after the template. hs and heap hold
   kk + 2 entries. */
static long expand_rank(const struct rp_steady *st, const struct lists *L, long kk, struct head *hs, struct head **heap,
                        struct rp_span *out)
{
	long nh = 0;
	hs[nh++] = (struct head){.v = L->early, .n = L->nearly};
	hs[nh++] =
	    (struct head){.v = L->late, .n = L->nlate, .shift = (double)kk * st->period - (st->t_resume - st->t_cut)};
	for (long k = 1; k <= kk; k++)
		hs[nh++] = (struct head){.v = L->tmpl, .n = L->ntmpl, .shift = (double)k * st->period};
	long live = 0;
	for (long i = 0; i < nh; i++)
		if (hs[i].n > 0) {
			head_load(&hs[i]);
			heap[live++] = &hs[i];
		}
	for (long i = live / 2 - 1; i >= 0; i--)
		sift_down(heap, live, i);
	long m = 0;
	while (live > 0) {
		struct head *h = heap[0];
		out[m++] = h->cur;
		if (++h->pos < h->n)
			head_load(h);
		else
			heap[0] = heap[--live];
		sift_down(heap, live, 0);
	}
	return m;
}

/*
 * out[0..dim) = f of the rank's spans idx[0..n), for an f that adds up over
 * time (unions, exposed time) while the copies of st interleave with one
 * another and with the spans around them. A copy reaches at most M periods
 * (a template span's reach over the rank's template, its longest span), so
 * with K0 = 2M + 2 copies the middle ones touch only copies, and each copy
 * more adds the same: f(K) = f(K0 + 2) + (K - K0 - 2) (f(K0 + 2) - f(K0 + 1)).
 * Evaluated at K0, K0 + 1, K0 + 2; when the two increments differ (beyond
 * rounding), or K is small, f of all K copies. Returns -1 when memory runs out.
 */
int report_stagger_eval(const struct report *rep, const long *idx, long n, const long *copies, int dim,
                        int (*f)(const struct report *, const struct rp_span *, long, double *, void *), void *arg,
                        double *out)
{
	const struct rp_result *r = rep->r;
	const struct rp_steady *st = report_stagger(r);
	double lo = INFINITY, hi = -INFINITY, longest = 0;
	long nt = 0;
	for (long i = 0; i < n; i++) {
		const struct rp_span *s = &r->spans[idx[i]];
		longest = fmax(longest, s->t1 - s->t0);
		if (copies[idx[i]]) {
			nt++;
			lo = fmin(lo, s->t0);
			hi = fmax(hi, s->t1);
		}
	}
	long K = st->copies, M = nt && st->period > 0 ? (long)ceil((hi - lo + longest) / st->period) + 1 : 0;
	long K0 = 2 * M + 2, top = K <= K0 + 3 ? K : K0 + 2;
	struct lists L;
	struct rp_span *v = malloc(((size_t)n + (size_t)nt * (size_t)top + 1) * sizeof *v);
	struct head *hs = malloc(((size_t)top + 2) * sizeof *hs);
	struct head **heap = malloc(((size_t)top + 2) * sizeof *heap);
	double *g = calloc(3 * (size_t)dim, sizeof *g);
	int ok = 0, failed = lists_make(r, idx, n, copies, &L) || !v || !hs || !heap || !g;
	if (!failed && top == K0 + 2) {
		for (int c = 0; c < 3 && !failed; c++)
			failed |= f(rep, v, expand_rank(st, &L, K0 + c, hs, heap, v), g + c * dim, arg);
		ok = !failed;
		for (int d = 0; d < dim; d++) {
			double d1 = g[dim + d] - g[d], d2 = g[2 * dim + d] - g[dim + d];
			ok &= fabs(d1 - d2) <= 1e-9 * fmax(fabs(g[2 * dim + d]), 1e-12);
		}
	}
	if (!failed && ok) {
		for (int d = 0; d < dim; d++)
			out[d] = g[2 * dim + d] + (double)(K - K0 - 2) * (g[2 * dim + d] - g[dim + d]);
	} else if (!failed) { /* every copy */
		struct rp_span *w = realloc(v, ((size_t)n + (size_t)nt * (size_t)K + 1) * sizeof *w);
		struct head *hw = w ? realloc(hs, ((size_t)K + 2) * sizeof *hw) : NULL;
		struct head **pw = hw ? realloc(heap, ((size_t)K + 2) * sizeof *pw) : NULL;
		v = w ? w : v;
		hs = hw ? hw : hs;
		heap = pw ? pw : heap;
		failed = !pw;
		if (!failed) {
			memset(out, 0, (size_t)dim * sizeof *out);
			failed = f(rep, v, expand_rank(st, &L, K, hs, heap, v), out, arg);
		}
	}
	lists_free(&L);
	free(v);
	free(hs);
	free(heap);
	free(g);
	return failed ? -1 : 0;
}
