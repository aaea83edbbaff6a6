/*
 * serve_src.c -- the request stream: arrivals and lengths.
 *
 * Poisson arrivals draw exponential gaps of mean 1/rate, a burst puts every
 * request at time 0 (offline: LLM.generate over a list of prompts), a CSV
 * gives each request's arrival, prompt and output length. Lengths are fixed
 * or uniform over LO..HI, or pairs sampled with replacement from a CSV (the
 * statistics of a dataset such as ShareGPT). Arrivals and lengths draw from
 * two GSL streams (mt19937) seeded from --seed, so changing the lengths
 * does not move the arrivals. A CSV is read a line at a time: a stream of
 * any length costs the memory of one request.
 */
#include "serve_int.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <stdlib.h>
#include <string.h>

/* "a,b[,c]" of non-negative numbers; blank and # lines are skipped by the
   caller. Returns the fields read, -1 on anything else. */
static int fields(const char *line, double *v, int max)
{
	int n = 0;
	const char *p = line;
	for (;;) {
		char *end;
		while (*p == ' ' || *p == '\t')
			p++;
		errno = 0;
		double x = strtod(p, &end);
		if (end == p || errno || !(x >= 0) || x > 1e15 || n == max)
			return -1;
		v[n++] = x;
		p = end;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p)
			return n;
		if (*p++ != ',')
			return -1;
	}
}

static int skip_line(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return !*s || *s == '#';
}

/* a header line: starts with a letter */
static int header_line(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z');
}

static int whole(double x)
{
	return x == (double)(long long)x;
}

static int load_pairs(struct sv_src *s, const char *path, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	char line[512];
	long cap = 0, ln = 0;
	int first = 1; /* the first line that is not blank or a comment may be a header */
	if (!f) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? -SIM_EXIT_NOINPUT : -SIM_EXIT_TRACE;
	}
	while (fgets(line, sizeof line, f)) {
		double v[2];
		ln++;
		if (skip_line(line))
			continue;
		if (first && header_line(line)) {
			first = 0;
			continue;
		}
		first = 0;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(why, whylen, "%s:%ld: line longer than %zu characters", path, ln, sizeof line - 2);
			fclose(f);
			return -SIM_EXIT_TRACE;
		}
		if (fields(line, v, 2) != 2 || !whole(v[0]) || !whole(v[1]) || v[0] < 1 || v[1] < 1) {
			snprintf(why, whylen, "%s:%ld: expected input_len,output_len (two positive integers)", path,
			         ln);
			fclose(f);
			return -SIM_EXIT_TRACE;
		}
		if (s->npairs == 10000000) {
			snprintf(why, whylen, "%s:%ld: more than 10000000 pairs", path, ln);
			fclose(f);
			return -SIM_EXIT_TRACE;
		}
		if (s->npairs == cap) {
			long nc = cap ? 2 * cap : 1024;
			long long(*p)[2] = realloc(s->pairs, (size_t)nc * sizeof *p);
			if (!p) {
				fclose(f);
				snprintf(why, whylen, "serve: out of memory");
				return -SIM_EXIT_INTERNAL;
			}
			s->pairs = p;
			cap = nc;
		}
		s->pairs[s->npairs][0] = (long long)v[0];
		s->pairs[s->npairs++][1] = (long long)v[1];
	}
	int bad = ferror(f);
	fclose(f);
	if (bad || s->npairs == 0) {
		snprintf(why, whylen, "%s: %s", path, bad ? "read error" : "no input_len,output_len pairs");
		return -SIM_EXIT_TRACE;
	}
	return 0;
}

int sv_src_open(struct sv_src *s, const struct sv_options *o, int pick, int of, char *why, size_t whylen)
{
	memset(s, 0, sizeof *s);
	s->o = o;
	s->pick = pick;
	s->of = of;
	s->arr = gsl_rng_alloc(gsl_rng_mt19937);
	s->len = gsl_rng_alloc(gsl_rng_mt19937);
	if (!s->arr || !s->len) {
		sv_src_close(s);
		snprintf(why, whylen, "serve: out of memory");
		return -SIM_EXIT_INTERNAL;
	}
	gsl_rng_set(s->arr, o->seed);
	gsl_rng_set(s->len, o->seed ^ 0x5bd1e995UL);
	if (o->lengths_csv) {
		int rc = load_pairs(s, o->lengths_csv, why, whylen);
		if (rc) {
			sv_src_close(s);
			return rc;
		}
	}
	if (o->arrivals == SV_CSV && !(s->csv = fopen(o->requests_csv, "r"))) {
		snprintf(why, whylen, "%s: %s", o->requests_csv, strerror(errno));
		int rc = errno == ENOENT ? -SIM_EXIT_NOINPUT : -SIM_EXIT_TRACE;
		sv_src_close(s);
		return rc;
	}
	return 0;
}

void sv_src_close(struct sv_src *s)
{
	if (s->arr)
		gsl_rng_free(s->arr);
	if (s->len)
		gsl_rng_free(s->len);
	if (s->csv)
		fclose(s->csv);
	free(s->pairs);
	memset(s, 0, sizeof *s);
}

static long long draw(gsl_rng *r, const struct sv_len *l)
{
	if (l->kind == SV_LEN_FIXED || l->hi <= l->lo)
		return l->lo;
	return l->lo + (long long)gsl_rng_uniform_int(r, (unsigned long)(l->hi - l->lo + 1));
}

/* the next request of the whole stream: 1, 0 at its end, -code */
static int next_any(struct sv_src *s, struct sv_req *q, char *why, size_t whylen)
{
	const struct sv_options *o = s->o;
	memset(q, 0, sizeof *q);
	if (o->arrivals == SV_CSV) {
		char line[512];
		double v[3];
		for (;;) {
			if (!fgets(line, sizeof line, s->csv)) {
				if (ferror(s->csv)) {
					snprintf(why, whylen, "%s: read error", o->requests_csv);
					return -SIM_EXIT_TRACE;
				}
				return 0;
			}
			s->line++;
			if (!strchr(line, '\n') && !feof(s->csv)) {
				snprintf(why, whylen, "%s:%ld: line longer than %zu characters", o->requests_csv,
				         s->line, sizeof line - 2);
				return -SIM_EXIT_TRACE;
			}
			if (skip_line(line))
				continue;
			if (!s->data && header_line(line)) {
				s->data = 1;
				continue;
			}
			s->data = 1;
			break;
		}
		if (fields(line, v, 3) != 3 || !whole(v[1]) || !whole(v[2]) || v[1] < 1 || v[2] < 1) {
			snprintf(
			    why, whylen,
			    "%s:%ld: expected arrival_s,input_len,output_len (a time in seconds >= 0, two positive "
			    "integers)",
			    o->requests_csv, s->line);
			return -SIM_EXIT_TRACE;
		}
		if (v[0] < s->t) {
			snprintf(why, whylen,
			         "%s:%ld: arrival %.9g s is before the previous one (%.9g s): rows must be in "
			         "arrival order",
			         o->requests_csv, s->line, v[0], s->t);
			return -SIM_EXIT_TRACE;
		}
		q->arrival_s = s->t = v[0];
		q->in_len = (long long)v[1];
		q->out_len = (long long)v[2];
	} else {
		if (s->n >= o->requests)
			return 0;
		if (o->arrivals == SV_POISSON)
			s->t += gsl_ran_exponential(s->arr, 1.0 / o->rate);
		q->arrival_s = o->arrivals == SV_BURST ? 0 : s->t;
		if (s->npairs) {
			unsigned long i = gsl_rng_uniform_int(s->len, (unsigned long)s->npairs);
			q->in_len = s->pairs[i][0];
			q->out_len = s->pairs[i][1];
		} else {
			q->in_len = draw(s->len, &o->in);
			q->out_len = draw(s->len, &o->out);
		}
	}
	q->avail_s = q->arrival_s;
	q->id = s->n++;
	q->sched_s = q->first_s = q->last_s = -1;
	return 1;
}

int sv_src_next(struct sv_src *s, struct sv_req *q, long long max_len, char *why, size_t whylen)
{
	for (;;) {
		int rc = next_any(s, q, why, whylen);
		if (rc <= 0)
			return rc;
		if (q->in_len + q->out_len > max_len) {
			if (s->o->arrivals == SV_CSV)
				snprintf(why, whylen,
				         "%s:%ld: request of %lld + %lld tokens is longer than the context (%lld)",
				         s->o->requests_csv, s->line, q->in_len, q->out_len, max_len);
			else
				snprintf(
				    why, whylen,
				    "serve: request %lld: %lld prompt + %lld output tokens is longer than the context "
				    "(%lld; --max-model-len)",
				    q->id, q->in_len, q->out_len, max_len);
			return s->o->arrivals == SV_CSV ? -SIM_EXIT_TRACE : -SIM_EXIT_USAGE;
		}
		if (q->id % s->of == s->pick)
			return 1;
	}
}
