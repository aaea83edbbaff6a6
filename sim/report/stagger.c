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

#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct rp_steady *report_stagger(const struct rp_result *r)
{
	return r->nsteady == 1 && r->steady[0].stagger ? &r->steady[0] : NULL;
}

static int by_t0(const void *a, const void *b)
{
	const struct rp_span *x = a, *y = b;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->t1 != y->t1)
		return x->t1 < y->t1 ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return (x->text > y->text) - (x->text < y->text);
}

/* The rank's spans idx[0..n) as the replay would have recorded them with kk
   copies of the template instead of st->copies, by start, into out: the
   spans issued after the copies come kk periods after the template. */
static long expand_rank(const struct rp_result *r, const struct rp_steady *st, const long *idx, long n,
                        const long *copies, long kk, struct rp_span *out)
{
	double back = (double)kk * st->period - (st->t_resume - st->t_cut);
	long m = 0;
	for (long i = 0; i < n; i++) {
		struct rp_span s = r->spans[idx[i]];
		if (s.late == RP_LATE_YES) {
			s.arrive += back;
			s.t0 += back;
			s.t1 += back;
		}
		out[m++] = s;
		for (long k = 1; copies[idx[i]] && k <= kk; k++) {
			out[m] = s;
			out[m].arrive += (double)k * st->period;
			out[m].t0 += (double)k * st->period;
			out[m].t1 += (double)k * st->period;
			m++;
		}
	}
	qsort(out, (size_t)m, sizeof *out, by_t0);
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
	struct rp_span *v = malloc(((size_t)n + (size_t)nt * (size_t)top + 1) * sizeof *v);
	double *g = calloc(3 * (size_t)dim, sizeof *g);
	if (!v || !g) {
		free(v);
		free(g);
		return -1;
	}
	int ok = 0, failed = 0;
	if (top == K0 + 2) {
		for (int c = 0; c < 3; c++)
			failed |= f(rep, v, expand_rank(r, st, idx, n, copies, K0 + c, v), g + c * dim, arg);
		ok = !failed;
		for (int d = 0; d < dim; d++) {
			double d1 = g[dim + d] - g[d], d2 = g[2 * dim + d] - g[dim + d];
			ok &= fabs(d1 - d2) <= 1e-9 * fmax(fabs(g[2 * dim + d]), 1e-12);
		}
	}
	if (failed) {
		free(v);
		free(g);
		return -1;
	}
	if (ok) {
		for (int d = 0; d < dim; d++)
			out[d] = g[2 * dim + d] + (double)(K - K0 - 2) * (g[2 * dim + d] - g[dim + d]);
	} else {
		struct rp_span *w = realloc(v, ((size_t)n + (size_t)nt * (size_t)K + 1) * sizeof *w);
		if (!w) {
			free(v);
			free(g);
			return -1;
		}
		v = w;
		memset(out, 0, (size_t)dim * sizeof *out);
		failed = f(rep, v, expand_rank(r, st, idx, n, copies, K, v), out, arg);
	}
	free(v);
	free(g);
	return failed ? -1 : 0;
}
