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
 * predecessor back from the span that ends last.
 */
#include "report.h"

#include "json.h"
#include "model.h"
#include "outfile.h"
#include "platform.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct rp_span *SP; /* for the qsort comparators */

/* span a starts before span b (the earlier recorded first on a tie) */
static int starts_before(long a, long b)
{
	return SP[a].t0 < SP[b].t0 || (SP[a].t0 == SP[b].t0 && a < b);
}

/* Sorts v[0..n) by start, with tmp[0..n) as scratch: a merge sort of the
   runs already in order (a rank's spans come in order per stream, so there
   are few), linear when there is one run. */
static void sort_by_start(long *v, long *tmp, long n)
{
	for (;;) { /* merge neighbouring runs pairwise until one remains */
		long i = 0, o = 0, runs = 0;
		while (i < n) {
			long a = i, am = i + 1;
			while (am < n && !starts_before(v[am], v[am - 1]))
				am++;
			long b = am, bm = am < n ? am + 1 : am;
			while (bm < n && !starts_before(v[bm], v[bm - 1]))
				bm++;
			while (a < am && b < bm)
				tmp[o++] = starts_before(v[b], v[a]) ? v[b++] : v[a++];
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
	long *first = calloc((size_t)r->ranks + 1, sizeof *first), *tmp = malloc(((size_t)r->nspans + 1) * sizeof *tmp);
	if (!first || !tmp) {
		free(first);
		free(tmp);
		return -1;
	}
	for (long i = 0; i < r->nspans; i++)
		first[r->spans[i].rank + 1]++;
	for (int k = 0; k < r->ranks; k++)
		first[k + 1] += first[k];
	for (long i = 0; i < r->nspans; i++)
		tmp[first[r->spans[i].rank]++] = i;
	for (int k = r->ranks; k > 0; k--)
		first[k] = first[k - 1];
	first[0] = 0;
	memcpy(idx, tmp, (size_t)r->nspans * sizeof *idx);
	for (int k = 0; k < r->ranks; k++)
		sort_by_start(idx + first[k], tmp, first[k + 1] - first[k]);
	free(first);
	free(tmp);
	return 0;
}

static int is_comm(int kind)
{
	return kind == TK_COLL || kind == TK_SEND || kind == TK_RECV;
}

/* Length of the union of the spans sp[idx[0..n)] (sp[0..n) when idx is
   NULL), sorted by start, that pass the filter. */
static double union_len(const struct rp_span *sp, const long *idx, long n, int want)
{
	double total = 0, lo = 0, hi = -1;
	for (long i = 0; i < n; i++) {
		const struct rp_span *s = &sp[idx ? idx[i] : i];
		int ok = want == 0   ? s->kind == TK_OP
		         : want == 1 ? is_comm(s->kind)
		         : want == 2 ? s->kind != TK_DELAY
		                     : 1;
		if (!ok || s->t1 <= s->t0)
			continue;
		if (s->t0 > hi) {
			if (hi > lo)
				total += hi - lo;
			lo = s->t0;
			hi = s->t1;
		} else if (s->t1 > hi) {
			hi = s->t1;
		}
	}
	if (hi > lo)
		total += hi - lo;
	return total;
}

/* The span's label (the op's first word, the collective's op=) in BUF, 32 bytes. */
static const char *kind_label(const struct rp_span *s, const struct rp_result *r, char buf[32])
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
	for (int w = 0; w < 4; w++)
		u[w] = union_len(SP, idx, n, w);
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
			for (int w = 0; w < 4; w++)
				u[w] += (double)r->steady[cur].copies * union_len(SP, sub, m, w);
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
	for (int w = 0; w < 4; w++)
		u[w] = union_len(v, NULL, n, w);
	return 0;
}

static void per_rank(struct report *rep, const long *idx, long n, const long *copies)
{
	const struct rp_result *r = rep->r;
	long *sub = copies ? malloc(((size_t)n + 1) * sizeof *sub) : NULL;
	if (copies && !sub) {
		rep->no_memory = 1; /* (the report fails: what follows is not shown) */
		return;
	}
	long i = 0;
	for (int k = 0; k < r->ranks; k++) {
		long j = i;
		while (j < n && SP[idx[j]].rank == k)
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
			if (is_comm(SP[idx[m]].kind))
				x->wait +=
				    (SP[idx[m]].t0 - SP[idx[m]].arrive) * (copies ? 1 + (double)copies[idx[m]] : 1);
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
		                    kind_label(s, r, label))) &&
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
	SP = r->spans;
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

/* ---- text ---- */

static double pct(double a, double b)
{
	return b > 0 ? 100 * a / b : 0;
}

static void span_line(const struct report *rep, int i, FILE *f)
{
	const struct rp_span *s = &rep->crit[i];
	char d[32], at[32];
	report_tfmt(rep->crit_d[i], d, sizeof d);
	report_tfmt(s->t0, at, sizeof at);
	fprintf(f, "    %-10s at %-10s rank %-4d line %-4d %s\n", d, at, s->rank, s->line, rep->r->texts[s->text]);
}

void report_text(const struct report *rep, const char *config_path, FILE *f)
{
	const struct rp_result *r = rep->r;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], sys[512];
	platform_describe(rep->chip, &r->topo, sys, sizeof sys);
	fprintf(f, "%s on %s\n", tr_path(rep->trace), config_path);
	fprintf(f, "  system       %s\n", sys);
	rep_placement_text(rep, f);
	report_tfmt(r->time_s, b1, sizeof b1);
	fprintf(f, "  step time    %s\n", b1);
	if (rep->peak > 0)
		fprintf(f,
		        "  throughput   %.4g TFLOP/s per device executed, HFU %.1f%% (of the %.4g TFLOP/s %s peak)\n",
		        rep->tflops_dev, 100 * rep->hfu, rep->peak / 1e12, arch_dtype_name((enum arch_dtype)r->dtype));
	report_work_text(rep, f);
	const struct rep_rank *m = &rep->mean;
	report_tfmt(m->busy, b1, sizeof b1);
	report_tfmt(m->compute, b2, sizeof b2);
	report_tfmt(m->comm, b3, sizeof b3);
	report_tfmt(m->exposed, b4, sizeof b4);
	report_tfmt(m->wait, b5, sizeof b5);
	report_tfmt(m->idle, b6, sizeof b6);
	fprintf(f, "  per rank     (mean of %d) busy %s (%.1f%%), idle %s\n", r->ranks, b1, pct(m->busy, r->time_s),
	        b6);
	fprintf(
	    f,
	    "               compute %s (%.1f%%), communication %s, exposed %s (%.1f%%), waiting for peers %s (in the "
	    "idle time and other streams' work)\n",
	    b2, pct(m->compute, r->time_s), b3, b4, pct(m->exposed, r->time_s), b5);
	fprintf(f, "\n  time by op kind (summed over ranks)\n");
	for (int i = 0; i < rep->nkinds; i++) {
		report_tfmt(rep->kinds[i].time_s, b1, sizeof b1);
		fprintf(f, "    %-14s %8ld ops  %12s  %5.1f%%\n", rep->kinds[i].name, rep->kinds[i].count, b1,
		        pct(rep->kinds[i].time_s, rep->total_op_time));
	}
	if (rep->ncolls) {
		fprintf(f, "\n  collectives (per call; bus bandwidth as nccl-tests counts it)\n");
		for (int i = 0; i < rep->ncolls; i++) {
			const struct rep_group *g = &rep->colls[i];
			report_tfmt(g->time_s / g->count, b1, sizeof b1);
			fprintf(f, "    %-44s x%-6ld %10s  %s/%s  busbw %.4g GB/s\n", g->name, g->count, b1,
			        coll_algo_name(g->algo), coll_proto_name((enum coll_proto)g->proto), g->extra / 1e9);
		}
	}
	report_work_text_groups(rep, f);
	if (rep->nmarks) {
		fprintf(f, "\n  regions (mark): longest span over ranks, compute per rank\n");
		for (int i = 0; i < rep->nmarks; i++) {
			report_tfmt(rep->marks[i].time_s, b1, sizeof b1);
			report_tfmt(rep->marks[i].extra, b2, sizeof b2);
			fprintf(f, "    %-20s %12s  compute %s\n", rep->marks[i].name, b1, b2);
		}
	}
	fprintf(f, "\n  top bottlenecks (ops by total time over ranks)\n");
	for (int i = 0; i < rep->ntop; i++) {
		const struct rep_group *g = &rep->top[i];
		report_tfmt(g->time_s, b1, sizeof b1);
		fprintf(f, "    %5.1f%%  %10s  x%-6ld %-8s %s\n", 100 * g->extra, b1, g->count,
		        g->bound >= 0  ? dm_bound_name((enum dm_bound)g->bound)
		        : g->algo >= 0 ? "comm"
		                       : "",
		        g->name);
	}
	report_tfmt(rep->crit_compute, b1, sizeof b1);
	report_tfmt(rep->crit_comm, b2, sizeof b2);
	report_tfmt(rep->crit_wait, b3, sizeof b3);
	fprintf(f, "\n  critical path: %ld ops; compute %s, communication %s, gaps %s; longest:\n", rep->crit_len, b1,
	        b2, b3);
	for (int i = 0; i < rep->ncrit; i++)
		span_line(rep, i, f);
	fprintf(f, "\n  replayed %ld ops with %ld engine activities", r->events, r->sg_activities);
	if (r->nsteady)
		fprintf(f, "; %ld ops derived from %d steady state%s (--exact plays them)", r->derived, r->nsteady,
		        r->nsteady == 1 ? "" : "s");
	fprintf(f, "\n");
}

/* ---- JSON ---- */

static void json_rank(struct json *j, const char *key, const struct rep_rank *x)
{
	json_obj(j, key);
	json_num(j, "busy_s", x->busy);
	json_num(j, "compute_s", x->compute);
	json_num(j, "comm_s", x->comm);
	json_num(j, "exposed_comm_s", x->exposed);
	json_num(j, "wait_s", x->wait);
	json_num(j, "idle_s", x->idle);
	json_obj_end(j);
}

static void json_span(struct json *j, const struct report *rep, int i)
{
	const struct rp_span *s = &rep->crit[i];
	json_obj(j, NULL);
	json_int(j, "rank", s->rank);
	json_int(j, "line", s->line);
	json_str(j, "op", rep->r->texts[s->text]);
	json_num(j, "start_s", s->t0);
	json_num(j, "time_s", rep->crit_d[i]);
	json_obj_end(j);
}

/* What made this output: sim's version, the command line, the config file
   with its --set overrides and the fingerprint of the chip they gave
   (arch_chip_fingerprint: equal for equal parameters), the trace. */
static void provenance_json(const struct report *rep, const char *config_path, struct json *j)
{
	char fp[32];
	snprintf(fp, sizeof fp, "%016llx", (unsigned long long)arch_chip_fingerprint(rep->chip));
	json_obj(j, "provenance");
	if (rep->version)
		json_str(j, "sim_version", rep->version);
	else
		json_nil(j, "sim_version");
	json_arr(j, "command");
	if (rep->argc > 0)
		json_str(j, NULL, "sim");
	for (int i = 0; i < rep->argc; i++)
		json_str(j, NULL, rep->argv[i]);
	json_arr_end(j);
	json_str(j, "config", config_path);
	json_str(j, "config_fingerprint", fp);
	json_arr(j, "overrides");
	for (int i = 0; i < rep->chip->nsets; i++)
		json_str(j, NULL, rep->chip->sets[i]);
	json_arr_end(j);
	json_str(j, "trace", tr_path(rep->trace));
	json_obj_end(j);
}

void report_json(const struct report *rep, const char *config_path, FILE *f)
{
	const struct rp_result *r = rep->r;
	struct json j;
	char sys[512];
	platform_describe(rep->chip, &r->topo, sys, sizeof sys);
	json_begin(&j, f, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 2);
	json_str(&j, "config", config_path);
	json_str(&j, "trace", tr_path(rep->trace));
	provenance_json(rep, config_path, &j);
	json_num(&j, "time_s", r->time_s);
	json_int(&j, "ranks", r->ranks);
	json_int(&j, "nodes", r->topo.nodes);
	json_int(&j, "ranks_per_node", r->topo.dpn);
	json_str(&j, "system", sys);
	json_num(&j, "flops", rep->flops);
	json_num(&j, "tflops_per_device", rep->tflops_dev);
	json_num_or_null(&j, "peak_tflops", rep->peak / 1e12);
	if (r->dtype >= 0)
		json_str(&j, "dtype", arch_dtype_name((enum arch_dtype)r->dtype));
	else
		json_nil(&j, "dtype");
	json_num_or_null(&j, "hfu", rep->hfu);
	json_num_or_null(&j, "mfu", rep->has_workload && rep->peak > 0 && rep->model_mfu > 0 ? rep->model_mfu : NAN);
	report_work_json(rep, &j);
	json_rank(&j, "rank_mean", &rep->mean);
	json_rank(&j, "rank_max", &rep->max);
	json_arr(&j, "by_kind");
	for (int i = 0; i < rep->nkinds; i++) {
		json_obj(&j, NULL);
		json_str(&j, "kind", rep->kinds[i].name);
		json_int(&j, "count", rep->kinds[i].count);
		json_num(&j, "time_s", rep->kinds[i].time_s);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "collectives");
	for (int i = 0; i < rep->ncolls; i++) {
		const struct rep_group *g = &rep->colls[i];
		json_obj(&j, NULL);
		json_str(&j, "op", g->name);
		json_int(&j, "count", g->count);
		json_num(&j, "time_s", g->time_s / g->count);
		json_str(&j, "algo", coll_algo_name(g->algo));
		json_str(&j, "proto", coll_proto_name((enum coll_proto)g->proto));
		json_num(&j, "busbw_GBps", g->extra / 1e9);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "marks");
	for (int i = 0; i < rep->nmarks; i++) {
		json_obj(&j, NULL);
		json_str(&j, "name", rep->marks[i].name);
		json_num(&j, "time_s", rep->marks[i].time_s);
		json_num(&j, "compute_s", rep->marks[i].extra);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "top");
	for (int i = 0; i < rep->ntop; i++) {
		const struct rep_group *g = &rep->top[i];
		json_obj(&j, NULL);
		json_str(&j, "op", g->name);
		json_int(&j, "count", g->count);
		json_num(&j, "time_s", g->time_s);
		json_num(&j, "share", g->extra);
		json_str(&j, "bound",
		         g->bound >= 0  ? dm_bound_name((enum dm_bound)g->bound)
		         : g->algo >= 0 ? "comm"
		                        : "");
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj(&j, "critical_path");
	json_int(&j, "ops", rep->crit_len);
	json_num(&j, "compute_s", rep->crit_compute);
	json_num(&j, "comm_s", rep->crit_comm);
	json_num(&j, "gaps_s", rep->crit_wait);
	json_arr(&j, "longest");
	for (int i = 0; i < rep->ncrit; i++)
		json_span(&j, rep, i);
	json_arr_end(&j);
	json_obj_end(&j);
	json_arr(&j, "per_rank");
	for (int k = 0; k < r->ranks; k++)
		json_rank(&j, NULL, &rep->rank[k]);
	json_arr_end(&j);
	json_obj(&j, "engine");
	json_int(&j, "ops", r->events);
	json_int(&j, "activities", r->sg_activities);
	if (r->nsteady) { /* only then: outputs of runs that derive nothing keep their keys */
		json_int(&j, "derived_ops", r->derived);
		json_int(&j, "steady_states", r->nsteady);
	}
	json_obj_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

/* ---- files: written whole or not at all (sim/base/outfile.c) ---- */

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int report_csv(const struct report *rep, const char *dir, char *why, size_t whylen)
{
	const struct rp_result *r = rep->r;
	char path[4096], err[256];
	struct out_file o;
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(why, whylen, "sim run: cannot create directory %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/ranks.csv", dir);
	FILE *f = out_open(path, &o, err, sizeof err);
	if (!f)
		goto fail;
	fprintf(f, "rank,busy_s,compute_s,comm_s,exposed_comm_s,wait_s,idle_s\n");
	for (int k = 0; k < r->ranks; k++) {
		const struct rep_rank *x = &rep->rank[k];
		fprintf(f, "%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", k, x->busy, x->compute, x->comm, x->exposed, x->wait,
		        x->idle);
	}
	if (out_commit(&o, err, sizeof err))
		goto fail;
	snprintf(path, sizeof path, "%s/ops.csv", dir);
	if (!(f = out_open(path, &o, err, sizeof err)))
		goto fail;
	fprintf(f, "rank,stream,line,kind,op,start_s,end_s,time_s,wait_s,bound,flops,bytes,region,profiled_s\n");
	struct rp_span_iter it;
	rp_span_iter_init(&it, r);
	for (const struct rp_span *s; (s = rp_span_iter_next(&it));) {
		char label[32];
		fprintf(f, "%d,", s->rank);
		csv_str(f, tr_stream_name(rep->trace, s->stream));
		fprintf(f, ",%d,%s,", s->line, kind_label(s, r, label));
		csv_str(f, r->texts[s->text]);
		fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%s,%.9g,%.9g,", s->t0, s->t1, s->t1 - s->t0, s->t0 - s->arrive,
		        s->bound >= 0  ? dm_bound_name((enum dm_bound)s->bound)
		        : s->algo >= 0 ? coll_algo_name(s->algo)
		                       : "",
		        s->flops, s->bytes);
		csv_str(f, s->mark >= 0 ? tr_mark_name(rep->trace, s->mark) : "");
		fprintf(f, ",%.9g\n", s->t1 - s->t0 - s->gap_s); /* the kernel as a profiler times it */
	}
	if (out_commit(&o, err, sizeof err))
		goto fail;
	snprintf(path, sizeof path, "%s/kinds.csv", dir);
	if (!(f = out_open(path, &o, err, sizeof err)))
		goto fail;
	fprintf(f, "kind,count,time_s\n");
	for (int i = 0; i < rep->nkinds; i++)
		fprintf(f, "%s,%ld,%.9g\n", rep->kinds[i].name, rep->kinds[i].count, rep->kinds[i].time_s);
	if (out_commit(&o, err, sizeof err))
		goto fail;
	return 0;
fail:
	snprintf(why, whylen, "sim run: cannot write %s: %s", path, err);
	return -1;
}

/* ---- timeline (Chrome trace event format, opened by Perfetto) ---- */

/* One span of the timeline as rank pid's (pid: the span's own rank, or a folded rank it stands for): the
   process and track names the first time pid's stream appears, the wait for peers, the op. */
static void timeline_span(FILE *f, const struct report *rep, const struct rp_span *s, int pid, char *named, int *first)
{
	const struct rp_result *r = rep->r;
	char label[32];
	char *nm = &named[(size_t)pid * ((size_t)tr_nstreams(rep->trace) + 1) + (size_t)s->stream];
	if (!*nm) {
		*nm = 1;
		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}},\n",
		        *first ? "" : ",", pid, pid);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":{\"sort_index\":%d}},\n",
		        pid, pid);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"stream ",
		        pid, s->stream + 1);
		fprintf(f, "%s\"}}", tr_stream_name(rep->trace, s->stream));
		*first = 0;
	}
	if (s->t0 > s->arrive)
		fprintf(f,
		        ",\n{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"wait for peers\",\"pid\":%d,\"tid\":%d,"
		        "\"ts\":%.6f,\"dur\":%.6f}",
		        pid, s->stream + 1, s->arrive * 1e6, (s->t0 - s->arrive) * 1e6);
	fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", *first ? "" : ",\n",
	        tr_kind_name((enum tr_kind)s->kind));
	*first = 0;
	json_put_string(f, kind_label(s, r, label));
	fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,\"args\":{\"op\":", pid, s->stream + 1, s->t0 * 1e6,
	        (s->t1 - s->t0) * 1e6);
	json_put_string(f, r->texts[s->text]);
	fprintf(f, ",\"line\":%d", s->line);
	if (pid != s->rank)
		fprintf(f, ",\"replayed_as\":%d", s->rank);
	if (s->bound >= 0)
		fprintf(f, ",\"bound\":\"%s\"", dm_bound_name((enum dm_bound)s->bound));
	if (s->algo >= 0)
		fprintf(f, ",\"algo\":\"%s\",\"proto\":\"%s\"", coll_algo_name(s->algo),
		        coll_proto_name((enum coll_proto)s->proto));
	if (s->flops > 0)
		fprintf(f, ",\"flops\":%.9g", s->flops);
	if (s->bytes > 0)
		fprintf(f, ",\"bytes\":%.9g", s->bytes);
	if (s->mark >= 0)
		fprintf(f, ",\"region\":\"%s\"", tr_mark_name(rep->trace, s->mark));
	fprintf(f, "}}");
}

int report_timeline(const struct report *rep, FILE *f, const char *keep)
{
	const struct rp_result *r = rep->r;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"sim run\",\"trace\":");
	json_put_string(f, tr_path(rep->trace));
	fprintf(f, ",\"sim_version\":");
	json_put_string(f, rep->version ? rep->version : "");
	fprintf(f, ",\"config\":");
	json_put_string(f, rep->chip->path);
	fprintf(f, ",\"config_fingerprint\":\"%016llx\",\"overrides\":[",
	        (unsigned long long)arch_chip_fingerprint(rep->chip));
	for (int i = 0; i < rep->chip->nsets; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_put_string(f, rep->chip->sets[i]);
	}
	fprintf(f, "],\"command\":[");
	for (int i = 0; i < rep->argc; i++) {
		fprintf(f, "%s", i ? "," : "\"sim\",");
		json_put_string(f, rep->argv[i]);
	}
	fprintf(f, "],\"step_time_s\":%.9g},\n\"traceEvents\":[\n", r->time_s);
	int first = 1, rc = 0;
	char *named = calloc((size_t)r->ranks * ((size_t)tr_nstreams(rep->trace) + 1), 1);
	/* with keep: the kept ranks each replayed rank stands for (itself, and the folded ranks whose representative
	   it is), as lists: head[q] the first, next[k] the one after k; -1 ends a list */
	int *head = keep ? malloc(sizeof(int) * (size_t)r->ranks) : NULL;
	int *next = keep ? malloc(sizeof(int) * (size_t)r->ranks) : NULL;
	if (!named || (keep && (!head || !next))) {
		rc = -1;
		goto out;
	}
	if (keep) {
		for (int k = 0; k < r->ranks; k++)
			head[k] = next[k] = -1;
		for (int k = r->ranks - 1; k >= 0; k--)
			if (keep[k]) {
				int q = r->rep_of ? r->rep_of[k] : k;
				assert(q >= 0 && q < r->ranks);
				next[k] = head[q], head[q] = k;
			}
	}
	struct rp_span_iter it;
	rp_span_iter_init(&it, r);
	for (const struct rp_span *s; (s = rp_span_iter_next(&it));) {
		if (!keep)
			timeline_span(f, rep, s, s->rank, named, &first);
		else
			for (int k = head[s->rank]; k >= 0; k = next[k])
				timeline_span(f, rep, s, k, named, &first);
	}
	fprintf(f, "\n]}\n");
	rc = ferror(f) ? -1 : 0;
out:
	free(named);
	free(head);
	free(next);
	return rc;
}
