/*
 * report.c -- `sim run` reports, derived once from the replay's spans.
 *
 * Definitions (docs/cli.md repeats them for users), per rank:
 *   compute  = time covered by at least one device op (union over streams)
 *   comm     = time covered by a collective or send/recv transfer
 *   exposed  = comm not overlapped by compute: |compute U comm| - |compute|
 *   wait     = time a rank sat in a collective or send/recv before its
 *              peers arrived (load imbalance, pipeline bubbles)
 *   busy     = time covered by anything (device ops, transfers, delays)
 *   idle     = step time - busy
 * HFU = executed FLOPs (recompute included) / (step time x ranks x the
 * chip's peak for the dtype that carries most FLOPs); MFU, the model FLOPs
 * of the trace's workload line over the same (PaLM's, Megatron-LM's), is
 * report_work.c's. Every output names them so: `mfu` always means model
 * FLOPs, `hfu` executed ones. The critical path follows each span's enabling
 * predecessor back from the span that ends last. report_out.c writes the
 * report as text, JSON, CSV and a timeline.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A span's place in the order by start: its start and index, side by side
   so that sorting reads one array in order (not the spans at random). */
struct by_t0 {
	double t0;
	long i;
};

/* a starts before b (the earlier recorded first on a tie) */
static int starts_before(const struct by_t0 *a, const struct by_t0 *b)
{
	return a->t0 < b->t0 || (a->t0 == b->t0 && a->i < b->i);
}

/* Sorts v[0..n) by start, with tmp[0..n) as scratch: a merge sort of the
   runs already in order (a rank's spans come in order per stream, so there
   are few), linear when there is one run. */
static void sort_by_start(struct by_t0 *v, struct by_t0 *tmp, long n)
{
	for (;;) { /* merge neighbouring runs pairwise until one remains */
		long i = 0, o = 0, runs = 0;
		while (i < n) {
			long a = i, am = i + 1;
			while (am < n && !starts_before(&v[am], &v[am - 1]))
				am++;
			long b = am, bm = am < n ? am + 1 : am;
			while (bm < n && !starts_before(&v[bm], &v[bm - 1]))
				bm++;
			while (a < am && b < bm)
				tmp[o++] = starts_before(&v[b], &v[a]) ? v[b++] : v[a++];
			while (a < am)
				tmp[o++] = v[a++];
			while (b < bm)
				tmp[o++] = v[b++];
			i = bm;
			runs++;
		}
		memcpy(v, tmp, (size_t)n * sizeof *v);
		if (runs <= 1)
			break;
	}
}

/* idx = every span, by rank, then by start (counting sort by rank, then
   sort_by_start per rank). */
static int sort_by_rank_start(const struct rp_result *r, long *idx)
{
	long *first = calloc((size_t)r->ranks + 1, sizeof *first);
	struct by_t0 *v = malloc(((size_t)r->nspans + 1) * sizeof *v),
	             *tmp = malloc(((size_t)r->nspans + 1) * sizeof *tmp);
	if (!first || !v || !tmp) {
		free(first);
		free(v);
		free(tmp);
		return -1;
	}
	for (long i = 0; i < r->nspans; i++)
		first[r->spans[i].rank + 1]++;
	for (int k = 0; k < r->ranks; k++)
		first[k + 1] += first[k];
	for (long i = 0; i < r->nspans; i++)
		v[first[r->spans[i].rank]++] = (struct by_t0){r->spans[i].t0, i};
	for (int k = r->ranks; k > 0; k--)
		first[k] = first[k - 1];
	first[0] = 0;
	for (int k = 0; k < r->ranks; k++)
		sort_by_start(v + first[k], tmp, first[k + 1] - first[k]);
	for (long i = 0; i < r->nspans; i++)
		idx[i] = v[i].i;
	free(first);
	free(v);
	free(tmp);
	return 0;
}

static int is_comm(int kind)
{
	return kind == TK_COLL || kind == TK_SEND || kind == TK_RECV;
}

/* Lengths of the unions of the spans sp[idx[0..n)] (sp[0..n) when idx is
   NULL), sorted by start, in one pass: u[0] of the device ops, u[1] of the
   communication, u[2] of all but host delays, u[3] of all. */
static void union_lens(const struct rp_span *sp, const long *idx, long n, double u[4])
{
	double lo[4] = {0, 0, 0, 0}, hi[4] = {-1, -1, -1, -1};
	for (int w = 0; w < 4; w++)
		u[w] = 0;
	for (long i = 0; i < n; i++) {
		const struct rp_span *s = &sp[idx ? idx[i] : i];
		if (s->t1 <= s->t0)
			continue;
		int in[4] = {s->kind == TK_OP, is_comm(s->kind), s->kind != TK_DELAY, 1};
		for (int w = 0; w < 4; w++) {
			if (!in[w])
				continue;
			if (s->t0 > hi[w]) {
				if (hi[w] > lo[w])
					u[w] += hi[w] - lo[w];
				lo[w] = s->t0;
				hi[w] = s->t1;
			} else if (s->t1 > hi[w]) {
				hi[w] = s->t1;
			}
		}
	}
	for (int w = 0; w < 4; w++)
		if (hi[w] > lo[w])
			u[w] += hi[w] - lo[w];
}

const char *report_span_label(const struct rp_span *s, const struct rp_result *r, char buf[32])
{
	if (s->kind == TK_OP) {
		const char *t = r->texts[s->text];
		size_t n = strcspn(t, " ");
		snprintf(buf, 32, "%.*s", (int)(n < 31 ? n : 31), t);
		return buf;
	}
	if (s->kind == TK_COLL) {
		const char *t = strstr(r->texts[s->text], "op=");
		size_t n = t ? strcspn(t + 3, " ") : 0;
		snprintf(buf, 32, "%.*s", (int)(n < 31 ? n : 31), t ? t + 3 : "coll");
		return buf;
	}
	return tr_kind_name((enum tr_kind)s->kind);
}

static struct rep_group *group_find(struct rep_group *g, int *n, int max, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(g[i].name, name))
			return &g[i];
	if (*n == max)
		return NULL;
	memset(&g[*n], 0, sizeof g[*n]);
	snprintf(g[*n].name, sizeof g[*n].name, "%s", name);
	g[*n].algo = g[*n].proto = g[*n].bound = -1;
	return &g[(*n)++];
}

/* x to 30 bits of mantissa: sums of the same times added in another order
   (folded or not, batched or not) sort the same */
static double coarse(double x)
{
	int e;
	double m = frexp(x, &e);
	return ldexp(nearbyint(m * 0x1p30), e - 30);
}

static int by_time_desc(const void *a, const void *b)
{
	const struct rep_group *x = a, *y = b;
	double tx = coarse(x->time_s), ty = coarse(y->time_s);
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The unions of a rank's spans (idx[0..n), by start) and of the copies a
   steady state derived: each copy's spans lie in an iteration of their own
   (the steady state began at a cut where nothing was in flight), so the
   union of all is the recorded union plus copies x the template's. The
   templates' spans, by start, come one steady state after the other (each
   lies between two cuts of its own). sub is scratch for n indices. */
static void rank_unions(const struct rp_result *r, const long *idx, long n, const long *copies, long *sub, double u[4])
{
	union_lens(r->spans, idx, n, u);
	if (!copies)
		return;
	long m = 0;
	int cur = -1;
	for (long i = 0; i <= n; i++) {
		long pos;
		int si = i < n && copies[idx[i]] ? rp_steady_find(r, idx[i], &pos) : -1;
		if (i < n && si < 0)
			continue;
		if (si != cur && m) { /* the spans of steady state cur end here */
			double t[4];
			union_lens(r->spans, sub, m, t);
			for (int w = 0; w < 4; w++)
				u[w] += (double)r->steady[cur].copies * t[w];
			m = 0;
		}
		cur = si;
		if (i < n)
			sub[m++] = idx[i];
	}
}

static int unions_of(const struct report *rep, const struct rp_span *v, long n, double *u, void *arg)
{
	(void)rep;
	(void)arg;
	union_lens(v, NULL, n, u);
	return 0;
}

static void per_rank(struct report *rep, const long *idx, long n, const long *copies)
{
	const struct rp_result *r = rep->r;
	const struct rp_span *sp = r->spans;
	long *sub = copies ? malloc(((size_t)n + 1) * sizeof *sub) : NULL;
	if (copies && !sub) {
		rep->no_memory = 1; /* (the report fails: what follows is not shown) */
		return;
	}
	long i = 0;
	for (int k = 0; k < r->ranks; k++) {
		long j = i;
		while (j < n && sp[idx[j]].rank == k)
			j++;
		struct rep_rank *x = &rep->rank[k];
		double u[4];
		if (!copies || !report_stagger(r))
			rank_unions(r, idx + i, j - i, copies, sub, u);
		else if (report_stagger_eval(rep, idx + i, j - i, copies, 4, unions_of, NULL, u))
			rep->no_memory = 1;
		x->compute = u[0];
		x->comm = u[1];
		double both = u[2];
		x->busy = u[3];
		x->exposed = both - x->compute;
		for (long m = i; m < j; m++)
			if (is_comm(sp[idx[m]].kind))
				x->wait +=
				    (sp[idx[m]].t0 - sp[idx[m]].arrive) * (copies ? 1 + (double)copies[idx[m]] : 1);
		x->idle = r->time_s - x->busy;
		if (fabs(x->idle) < 1e-9 * r->time_s) /* rounding of the unions */
			x->idle = 0;
		i = j;
	}
	free(sub);
	if (r->rep_of) /* folded ranks did what their representative did */
		for (int k = 0; k < r->ranks; k++)
			rep->rank[k] = rep->rank[r->rep_of[k]];
	double *mean = &rep->mean.busy, *max = &rep->max.busy;
	for (int k = 0; k < r->ranks; k++) {
		const double *v = &rep->rank[k].busy;
		for (int f = 0; f < 6; f++) {
			mean[f] += v[f] / r->ranks;
			if (v[f] > max[f])
				max[f] = v[f];
		}
	}
}

static void groups(struct report *rep, const long *copies)
{
	const struct rp_result *r = rep->r;
	int ncap = r->ntexts + 1;
	struct rep_group *by_text = calloc((size_t)ncap, sizeof *by_text);
	int *kind_of_text = calloc((size_t)ncap, sizeof *kind_of_text);
	rep->colls = calloc((size_t)ncap, sizeof *rep->colls);
	rep->nmarks = tr_nmarks(rep->trace);
	rep->marks = calloc((size_t)rep->nmarks + 1, sizeof *rep->marks);
	double *mark_lo = malloc(((size_t)rep->nmarks + 1) * (size_t)r->ranks * sizeof *mark_lo);
	double *mark_hi = malloc(((size_t)rep->nmarks + 1) * (size_t)r->ranks * sizeof *mark_hi);
	if (!by_text || !kind_of_text || !rep->colls || !rep->marks || !mark_lo || !mark_hi) {
		rep->no_memory = 1;
		goto out;
	}
	for (long i = 0; i < ((long)rep->nmarks + 1) * r->ranks; i++) {
		mark_lo[i] = INFINITY;
		mark_hi[i] = -INFINITY;
	}
	long w = r->fold > 1 ? r->fold : 1; /* ranks each replayed span stands for */
	/* a span's kind group follows from its text (device ops, collectives)
	   or its kind: found by name once per text and per kind (index + 1) */
	int kind_of_kind[TK_COUNT + 1] = {0};
	for (long i = 0; i < r->nspans; i++) {
		const struct rp_span *s = &r->spans[i];
		char label[32];
		double d = s->t1 - s->t0;
		/* a template of a steady state counts for its copies too */
		long c = copies ? copies[i] : 0, wc = w * (1 + c);
		double end = s->t1;
		if (c) {
			long pos;
			int si = rp_steady_find(r, i, &pos);
			end = rp_steady_time(&r->steady[si], c, s->t1);
		}
		rep->flops += s->flops * (double)wc;
		rep->total_op_time += d * (double)wc;
		int *known = s->kind == TK_OP || s->kind == TK_COLL ? &kind_of_text[s->text]
		             : s->kind >= 0 && s->kind <= TK_COUNT  ? &kind_of_kind[s->kind]
		                                                    : NULL;
		struct rep_group *g = known && *known ? &rep->kinds[*known - 1] : NULL;
		if (!g &&
		    (g = group_find(rep->kinds, &rep->nkinds, (int)(sizeof rep->kinds / sizeof rep->kinds[0]),
		                    report_span_label(s, r, label))) &&
		    known)
			*known = (int)(g - rep->kinds) + 1;
		if (g) {
			g->count += wc;
			g->time_s += d * (double)wc;
		}
		struct rep_group *t = &by_text[s->text];
		if (!t->count) {
			snprintf(t->name, sizeof t->name, "%.95s", r->texts[s->text]);
			t->bound = s->bound;
			t->algo = s->algo;
			t->proto = s->proto;
		}
		t->count += wc;
		t->time_s += d * (double)wc;
		if (s->kind == TK_COLL && d > 0)
			t->extra += s->bytes / d * (double)wc;
		if (s->mark >= 0 && s->mark < rep->nmarks) {
			long m = (long)s->mark * r->ranks + s->rank;
			if (s->arrive < mark_lo[m])
				mark_lo[m] = s->arrive;
			if (end > mark_hi[m])
				mark_hi[m] = end;
			if (s->kind == TK_OP)
				rep->marks[s->mark].extra += d * (double)wc;
			rep->marks[s->mark].count += wc;
		}
	}
	for (int m = 0; m < rep->nmarks; m++) {
		snprintf(rep->marks[m].name, sizeof rep->marks[m].name, "%s", tr_mark_name(rep->trace, m));
		double longest = 0;
		for (int k = 0; k < r->ranks; k++) {
			double span = mark_hi[(long)m * r->ranks + k] - mark_lo[(long)m * r->ranks + k];
			if (span > longest)
				longest = span;
		}
		rep->marks[m].time_s = longest;
		rep->marks[m].extra /= r->ranks; /* compute per rank */
	}
	for (int i = 0; i < r->ntexts; i++) {
		struct rep_group *t = &by_text[i];
		if (!t->count)
			continue;
		if (t->algo >= 0) {
			rep->colls[rep->ncolls] = *t;
			rep->colls[rep->ncolls].extra = t->extra / t->count;
			rep->ncolls++;
		}
	}
	qsort(by_text, (size_t)r->ntexts, sizeof *by_text, by_time_desc);
	for (int i = 0; i < r->ntexts && rep->ntop < REP_TOP; i++)
		if (by_text[i].count && by_text[i].time_s > 0) {
			rep->top[rep->ntop] = by_text[i];
			rep->top[rep->ntop].extra = rep->total_op_time > 0 ? by_text[i].time_s / rep->total_op_time : 0;
			rep->ntop++;
		}
	qsort(rep->kinds, (size_t)rep->nkinds, sizeof rep->kinds[0], by_time_desc);
	qsort(rep->colls, (size_t)rep->ncolls, sizeof rep->colls[0], by_time_desc);
out:
	free(by_text);
	free(kind_of_text);
	free(mark_lo);
	free(mark_hi);
}

/* a longer than b by more than the rounding two replays of one op may differ by */
static int longer(double a, double b)
{
	return a > b * (1 + 1e-9);
}

/* A span on the critical path: recorded (si < 0: span i) or derived (copy
   k of template position p of steady state si). */
struct cref {
	int si;
	long i, k, p;
};

/* The span a predecessor as rp_span.pred stores it names; 0 for none. */
static int cref_of_pred(const struct rp_result *r, long pred, struct cref *c)
{
	if (pred == -1)
		return 0;
	if (pred >= 0) {
		*c = (struct cref){-1, pred, 0, 0};
		return 1;
	}
	long pos;
	int si = rp_steady_find(r, -2 - pred, &pos);
	if (si < 0)
		return 0;
	*c = (struct cref){si, -2 - pred, r->steady[si].copies, pos};
	return 1;
}

/* Adds a span of duration d to the path: the sums, and the REP_CRIT longest
   (a span no longer than those kept, as two replays of one op may differ,
   does not displace the one met first). Returns 1 when it was kept. */
static int crit_add(struct report *rep, const struct cref *c, double d)
{
	const struct rp_result *r = rep->r;
	const struct rp_span *s = c->si < 0 ? &r->spans[c->i] : &r->spans[r->steady[c->si].tmpl[c->p]];
	if (s->kind == TK_OP)
		rep->crit_compute += d;
	else if (is_comm(s->kind))
		rep->crit_comm += d;
	else
		rep->crit_other += d;
	rep->crit_len++;
	int full = rep->ncrit == REP_CRIT;
	int pos = full ? REP_CRIT - 1 : rep->ncrit++;
	if (full && !longer(d, rep->crit_d[pos]))
		return 0;
	if (c->si < 0)
		rep->crit[pos] = *s;
	else
		rp_steady_span(r, c->si, c->k, c->p, &rep->crit[pos]);
	rep->crit_d[pos] = d;
	while (pos > 0 && longer(d, rep->crit_d[pos - 1])) {
		struct rp_span ts = rep->crit[pos - 1];
		double td = rep->crit_d[pos - 1];
		rep->crit[pos - 1] = rep->crit[pos];
		rep->crit_d[pos - 1] = rep->crit_d[pos];
		rep->crit[pos] = ts;
		rep->crit_d[pos] = td;
		pos--;
	}
	return 1;
}

struct crit_sums {
	double compute, comm, other;
	long len;
};

/*
 * The path through the copies of a steady state, entered at copy c->k,
 * template position c->p: within a copy it follows the template's
 * predecessors, from one copy to the one before through RP_PRED_PREV (and
 * in a pipeline's to the one after through RP_PRED_NEXT: it goes back in
 * time all the same). The copies repeat the template, so once the entries
 * into them repeat (with a cycle of c copies) and a whole cycle kept no span
 * among the longest, the cycles left add the same sums: they are added at
 * once, as many as keep every copy the path visits at 1 or more (the
 * lowest it reached so far bounds how far a cycle dips below its entry).
 * On return c is where the path goes on, or 0 when it ends.
 */
static int crit_copies(struct report *rep, struct cref *c)
{
	const struct rp_result *r = rep->r;
	const struct rp_steady *st = &r->steady[c->si];
	long *seen = calloc((size_t)st->n, sizeof *seen);            /* copy at which each entry was met, 0 = not yet */
	long *seen_step = malloc((size_t)st->n * sizeof *seen_step); /* ... and at which step */
	struct crit_sums *snap = malloc((size_t)st->n * sizeof *snap);
	long k = c->k, p = c->p, low = c->k, step = 0, kept = -1; /* the step at which a span was last kept */
	for (;; step++) {
		low = k < low ? k : low;
		if (seen && seen_step && snap) {
			if (seen[p] > k && kept < seen_step[p]) { /* a cycle that kept nothing: jump */
				long cyc = seen[p] - k, m = (low - 1) / cyc;
				rep->crit_compute += (double)m * (rep->crit_compute - snap[p].compute);
				rep->crit_comm += (double)m * (rep->crit_comm - snap[p].comm);
				rep->crit_other += (double)m * (rep->crit_other - snap[p].other);
				rep->crit_len += m * (rep->crit_len - snap[p].len);
				k -= m * cyc;
				low -= m * cyc;
			}
			seen[p] = k;
			seen_step[p] = step;
			snap[p] = (struct crit_sums){rep->crit_compute, rep->crit_comm, rep->crit_other, rep->crit_len};
		}
		long q = p;
		int cls;
		long arg;
		for (;;) { /* within copy k */
			const struct rp_span *t = &r->spans[st->tmpl[q]];
			struct cref v = {c->si, st->tmpl[q], k, q};
			if (crit_add(rep, &v, t->t1 - t->t0))
				kept = step;
			cls = st->pcls[q];
			arg = st->parg[q];
			if (cls != RP_PRED_SAME || arg >= q)
				break;
			q = arg;
		}
		if (cls == RP_PRED_PREV && k > 1) {
			k--;
			p = arg;
			continue;
		}
		if (cls == RP_PRED_NEXT && k < st->copies) {
			k++;
			p = arg;
			continue;
		}
		free(seen);
		free(seen_step);
		free(snap);
		if (cls == RP_PRED_PREV) { /* copy 0: the template itself */
			*c = (struct cref){-1, st->tmpl[arg], 0, 0};
			return 1;
		}
		if (cls == RP_PRED_NEXT) { /* after the last copy: the iteration played after them */
			*c = (struct cref){-1, st->pnext[q], 0, 0};
			return 1;
		}
		return cls == RP_PRED_FIXED ? cref_of_pred(r, arg, c) : 0;
	}
}

/* Ends of a and b, and which comes first in the order the replay would
   have recorded them (copies follow their template's last span). */
static int recorded_before(const struct rp_result *r, const struct cref *a, const struct cref *b)
{
	long pa = a->si < 0 ? a->i : r->steady[a->si].tmpl[r->steady[a->si].n - 1];
	long pb = b->si < 0 ? b->i : r->steady[b->si].tmpl[r->steady[b->si].n - 1];
	if (pa != pb)
		return pa < pb;
	if (a->k != b->k)
		return a->k < b->k;
	return a->p < b->p;
}

static double cref_end(const struct rp_result *r, const struct cref *c)
{
	if (c->si < 0)
		return r->spans[c->i].t1;
	const struct rp_steady *st = &r->steady[c->si];
	return rp_steady_time(st, c->k, r->spans[st->tmpl[c->p]].t1);
}

static void critical_path(struct report *rep)
{
	const struct rp_result *r = rep->r;
	struct cref cur = {-1, -1, 0, 0};
	for (long i = 0; i < r->nspans; i++)
		if (cur.i < 0 || r->spans[i].t1 > r->spans[cur.i].t1)
			cur.i = i;
	/* a derived span that ends last (in the last copy) */
	for (int si = 0; si < r->nsteady; si++)
		for (long p = 0; p < r->steady[si].n; p++) {
			struct cref v = {si, r->steady[si].tmpl[p], r->steady[si].copies, p};
			double e = cref_end(r, &v), ce = cref_end(r, &cur);
			if (e > ce || (e == ce && recorded_before(r, &v, &cur)))
				cur = v;
		}
	int have = cur.i >= 0;
	for (long steps = 0; have && steps <= r->nspans + r->nsteady; steps++) {
		if (cur.si >= 0) {
			have = crit_copies(rep, &cur);
			continue;
		}
		const struct rp_span *s = &r->spans[cur.i];
		crit_add(rep, &cur, s->t1 - s->t0);
		long p = s->pred, pos;
		int si = s->pred == -1 && r->nsteady ? rp_steady_find(r, cur.i, &pos) : -1;
		if (si >= 0 && r->steady[si].pcls[pos] == RP_PRED_NEXT) { /* a template op waiting for copy 1 */
			long q = r->steady[si].parg[pos];
			cur = (struct cref){si, r->steady[si].tmpl[q], 1, q};
			continue;
		}
		if (p >= cur.i)
			break; /* predecessors are recorded earlier; guards against a cycle */
		have = cref_of_pred(r, p, &cur);
	}
	rep->crit_wait = r->time_s - rep->crit_compute - rep->crit_comm - rep->crit_other;
	if (rep->crit_wait < 1e-9 * r->time_s) /* what is left of rounding in the sums */
		rep->crit_wait = 0;
}

int report_build(struct report *rep, const struct arch_chip *c, const struct trace *t, const struct rp_result *r)
{
	memset(rep, 0, sizeof *rep);
	rep->chip = c;
	rep->trace = t;
	rep->r = r;
	rep->rank = calloc((size_t)r->ranks, sizeof *rep->rank);
	long *idx = malloc(((size_t)r->nspans + 1) * sizeof *idx);
	if (!rep->rank || !idx) {
		free(idx);
		return -1;
	}
	if (sort_by_rank_start(r, idx)) {
		free(idx);
		return -1;
	}
	/* per recorded span, the copies steady states derived from it */
	long *copies = r->nsteady ? calloc((size_t)r->nspans + 1, sizeof *copies) : NULL;
	for (int si = 0; copies && si < r->nsteady; si++)
		for (long p = 0; p < r->steady[si].n; p++)
			copies[r->steady[si].tmpl[p]] = r->steady[si].copies;
	if (r->nsteady && !copies) {
		free(idx);
		return -1;
	}
	per_rank(rep, idx, r->nspans, copies);
	groups(rep, copies);
	rep_placement(rep);
	critical_path(rep);
	if (r->dtype >= 0)
		rep->peak = arch_peak(c, (enum arch_dtype)r->dtype);
	if (r->time_s > 0)
		rep->tflops_dev = rep->flops / r->ranks / r->time_s / 1e12;
	if (rep->peak > 0)
		rep->hfu = rep->tflops_dev * 1e12 / rep->peak;
	report_work_build(rep, idx, r->nspans, copies);
	free(copies);
	free(idx);
	return rep->no_memory ? -1 : 0;
}

void report_free(struct report *rep)
{
	free(rep->rank);
	free(rep->colls);
	free(rep->marks);
	memset(rep, 0, sizeof *rep);
}
