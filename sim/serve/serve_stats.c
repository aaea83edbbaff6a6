/*
 * serve_stats.c -- the latency statistics of a serving run and its per-request
 * outputs: histograms of 0.1% log bins (GSL) from which the quantiles are
 * read, each finished request's line of the CSV, and the timeline's request
 * and step events. serve.c (the fleet) and serve_sched.c (the engines) call
 * it; it calls neither.
 */
#include "serve_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Latency histograms: bins from Q_LO to Q_HI seconds, each Q_STEP wider
   than the one below (0.1%): a quantile read from it is within 0.1% of the
   sample's, whatever the number of requests. */
#define Q_LO   1e-9
#define Q_HI   1e7
#define Q_STEP 1.001

int sv_q_init(struct sv_q *q)
{
	size_t n = (size_t)ceil(log(Q_HI / Q_LO) / log(Q_STEP));
	double *r = malloc((n + 1) * sizeof *r);
	memset(q, 0, sizeof *q);
	q->h = r ? gsl_histogram_alloc(n) : NULL;
	if (!q->h) {
		free(r);
		return -1;
	}
	for (size_t i = 0; i <= n; i++)
		r[i] = Q_LO * pow(Q_STEP, (double)i);
	gsl_histogram_set_ranges(q->h, r, n + 1);
	free(r);
	return 0;
}

void sv_q_free(struct sv_q *q)
{
	if (q->h)
		gsl_histogram_free(q->h);
}

void sv_q_add(struct sv_q *q, double x)
{
	double c = x < Q_LO ? Q_LO : x; /* zero (a burst's queue time) counts in the first bin */
	if (gsl_histogram_increment(q->h, c))
		gsl_histogram_accumulate(q->h, gsl_histogram_max(q->h) * (1 - 1e-12), 1);
	q->sum += x;
	q->min = q->n && q->min < x ? q->min : x;
	q->max = q->n && q->max > x ? q->max : x;
	q->n++;
}

/* the sample of rank floor(p (n - 1)) + 1: the geometric middle of its bin,
   kept within the samples' range */
static double q_at(const struct sv_q *q, double p)
{
	double want = floor(p * (double)(q->n - 1)) + 1, seen = 0;
	size_t nb = gsl_histogram_bins(q->h);
	for (size_t i = 0; i < nb; i++) {
		seen += gsl_histogram_get(q->h, i);
		if (seen >= want) {
			double lo, hi, x;
			gsl_histogram_get_range(q->h, i, &lo, &hi);
			x = i == 0 ? q->min : sqrt(lo * hi);
			return x < q->min ? q->min : x > q->max ? q->max : x;
		}
	}
	return q->max;
}

void sv_q_get(struct sv_q *q, struct sv_dist *d)
{
	memset(d, 0, sizeof *d);
	d->n = q->n;
	if (!q->n)
		return;
	d->mean = q->sum / (double)q->n;
	d->p50 = q_at(q, 0.5);
	d->p90 = q_at(q, 0.9);
	d->p99 = q_at(q, 0.99);
	d->max = q->max;
}

/* TPOT of a request as the serving benchmarks define it (vLLM's
   benchmark_serving.py): (end-to-end - TTFT) / (output tokens - 1) */
static double tpot_of(const struct sv_req *q)
{
	return q->out_len > 1 ? (q->last_s - q->first_s) / (double)(q->out_len - 1) : 0;
}

void sv_stats_sep(struct sv_stats *st)
{
	if (st->tl_events++)
		fputs(",\n", st->o->timeline);
}

/* microseconds, as the Chrome trace format counts */
static double us(double s)
{
	return s * 1e6;
}

static void tl_slice(struct sv_stats *st, const struct sv_req *q, const char *name, double t0, double t1)
{
	sv_stats_sep(st);
	fprintf(st->o->timeline,
	        "{\"ph\":\"b\",\"cat\":\"request\",\"name\":\"%s\",\"id\":%lld,\"pid\":%d,\"tid\":1,\"ts\":%.3f},\n"
	        "{\"ph\":\"e\",\"cat\":\"request\",\"name\":\"%s\",\"id\":%lld,\"pid\":%d,\"tid\":1,\"ts\":%.3f}",
	        name, q->id, q->replica, us(t0), name, q->id, q->replica, us(t1));
	st->tl_events++;
}

void sv_stats_request(struct sv_stats *st, const struct sv_req *q)
{
	const struct sv_options *o = st->o;
	double ttft = q->first_s - q->arrival_s, tpot = tpot_of(q), e2e = q->last_s - q->arrival_s;
	int good = (o->slo_ttft_s <= 0 || ttft <= o->slo_ttft_s) && (o->slo_tpot_s <= 0 || tpot <= o->slo_tpot_s);
	sv_q_add(&st->ttft, ttft);
	if (q->out_len > 1)
		sv_q_add(&st->tpot, tpot);
	sv_q_add(&st->e2e, e2e);
	sv_q_add(&st->queue, q->sched_s - q->arrival_s);
	st->finished++;
	st->good += good;
	st->in_tokens += q->in_len;
	st->out_tokens += q->out_len;
	st->cached += q->cached;
	if (st->finished == 1 || q->arrival_s < st->t_first)
		st->t_first = q->arrival_s;
	if (q->last_s > st->t_last)
		st->t_last = q->last_s;
	if (o->csv && fprintf(o->csv, "%lld,%d,%.9g,%lld,%lld,%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%d\n", q->id,
	                      q->replica, q->arrival_s, q->in_len, q->out_len, q->cached, q->sched_s, q->first_s,
	                      q->last_s, ttft, tpot, e2e, q->itl_max_s, q->preemptions, good) < 0)
		st->write_err = 1;
	if (o->timeline) {
		tl_slice(st, q, "request", q->arrival_s, q->last_s);
		tl_slice(st, q, "queued", q->arrival_s, q->sched_s);
		tl_slice(st, q, "prefill", q->sched_s, q->first_s);
		if (q->last_s > q->first_s)
			tl_slice(st, q, "decode", q->first_s, q->last_s);
		if (ferror(o->timeline))
			st->write_err = 1;
	}
}

void sv_stats_step(struct sv_stats *st, int replica, double t0, double dt, const struct sv_shape *sh)
{
	if (!st->o->timeline)
		return;
	sv_stats_sep(st);
	fprintf(st->o->timeline,
	        "{\"ph\":\"X\",\"cat\":\"step\",\"name\":\"step\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
	        "\"args\":{\"tokens\":%lld,\"decodes\":%lld,\"prefills\":%lld,\"prefill_tokens\":%.0f}}",
	        replica, us(t0), us(dt), sh->tokens, sh->decodes, sh->prefills, sh->chunk_sum);
}
