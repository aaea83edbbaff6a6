/*
 * replay_result.c -- what a replay returns (struct rp_result, replay.h):
 * its spans, the iterations steady states derived, and freeing it. Plain
 * data, no engine: the reports read results without loading SimGrid (the
 * engine itself is sim/cluster/engine.h's).
 */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

long rp_list_find(const long *v, long n, long x)
{
	long lo = 0, hi = n - 1;
	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		if (v[mid] == x)
			return mid;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

double rp_steady_time(const struct rp_steady *st, long k, double t)
{
	return k == st->copies ? st->t_resume - (st->t_cut - t) : t + (double)k * st->period;
}

int rp_steady_find(const struct rp_result *r, long i, long *pos)
{
	int lo = 0, hi = r->nsteady - 1, si = -1;
	while (lo <= hi) { /* the last steady state whose template starts at or before i */
		int mid = lo + (hi - lo) / 2;
		if (r->steady[mid].tmpl[0] <= i) {
			si = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	*pos = si >= 0 ? rp_list_find(r->steady[si].tmpl, r->steady[si].n, i) : -1;
	return *pos >= 0 ? si : -1;
}

void rp_steady_span(const struct rp_result *r, int si, long k, long pos, struct rp_span *out)
{
	const struct rp_steady *st = &r->steady[si];
	*out = r->spans[st->tmpl[pos]];
	out->arrive = rp_steady_time(st, k, out->arrive);
	out->t0 = rp_steady_time(st, k, out->t0);
	out->t1 = rp_steady_time(st, k, out->t1);
	out->pred = -1;
}

void rp_span_iter_init(struct rp_span_iter *it, const struct rp_result *r)
{
	memset(it, 0, sizeof *it);
	it->r = r;
	it->si = -1;
}

const struct rp_span *rp_span_iter_next(struct rp_span_iter *it)
{
	const struct rp_result *r = it->r;
	if (it->si >= 0) {
		const struct rp_steady *st = &r->steady[it->si];
		rp_steady_span(r, it->si, it->k, it->p, &it->tmp);
		if (++it->p == st->n) {
			it->p = 0;
			if (++it->k > st->copies)
				it->si = -1;
		}
		return &it->tmp;
	}
	if (it->i >= r->nspans)
		return NULL;
	long i = it->i++;
	if (it->next < r->nsteady && r->steady[it->next].tmpl[r->steady[it->next].n - 1] == i) {
		if (r->steady[it->next].copies > 0) { /* its copies follow its last span */
			it->si = it->next;
			it->k = 1;
			it->p = 0;
		}
		it->next++;
	}
	return &r->spans[i];
}

void rp_result_free(struct rp_result *r)
{
	for (int i = 0; i < r->ntexts; i++)
		free(r->texts[i]);
	free(r->texts);
	free(r->spans);
	for (int k = 0; k < r->nsteady; k++) {
		free(r->steady[k].tmpl);
		free(r->steady[k].pcls);
		free(r->steady[k].parg);
		free(r->steady[k].pnext);
	}
	free(r->steady);
	free(r->rep_of);
	free(r->mem);
	memset(r, 0, sizeof *r);
}
