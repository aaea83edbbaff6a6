/*
 * plan_out.c -- what a plan writes besides its tables: the Pareto plots
 * (`sim plan --plot`) and the shard files of a plan run in parts (`sim plan
 * --shard I/N`, read back by `sim merge`).
 *
 * A shard file: the line PL_SHARD_LINE "I/N of P replays, plan ID", the
 * plan's arguments a line each ("# arg A"), the header PL_SHARD_HEADER, then
 * one row for each replay k of the shard (k = I, I + N, ... below P, the
 * k-th layout replayed in enumeration order): its results at full precision
 * (%.17g reads back to the same double) and its error text last. ID is the
 * caller's fingerprint of the config and the arguments: the merge lists the
 * layouts again from those arguments, and the ID says it is the same plan.
 */
#include "plan.h"

#include "plot.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static double gib(double b)
{
	return b / 1073741824.0;
}

/* ---- plots ------------------------------------------------------------------- */

/* "tp2 pp1 dp8 mb2 sel z1": a front point's label */
static void short_layout(const struct gen_config *c, char *l, size_t len)
{
	char cp[24] = "", ep[24] = "";
	if (c->p.cp > 1)
		snprintf(cp, sizeof cp, " cp%lld", c->p.cp);
	if (c->p.ep > 1)
		snprintf(ep, sizeof ep, " ep%lld", c->p.ep);
	snprintf(l, len, "tp%lld pp%lld%s dp%lld%s mb%lld%s z%d", c->p.tp, c->p.pp, cp, c->p.dp, ep, c->p.micro_batch,
	         c->p.recompute == GEN_RC_NONE        ? ""
	         : c->p.recompute == GEN_RC_SELECTIVE ? " sel"
	                                              : " full",
	         c->p.zero);
}

struct plot *pl_plot(const struct pl_plan *p, const char *title)
{
	struct plot *pl = plot_new(1100, 600, title);
	size_t cap_n = (size_t)(p->n ? p->n : 1);
	long n = 0, *ord = malloc(cap_n * sizeof *ord);
	double *fx = malloc(cap_n * sizeof *fx), *fy = malloc(cap_n * sizeof *fy);
	int bad = !pl || !ord || !fx || !fy;
	double ymax = 0;
	for (long i = 0; !bad && i < p->n; i++)
		if (p->pt[i].state == PL_REPLAYED && !p->pt[i].rc) {
			ord[n++] = i;
			ymax = p->pt[i].time_s > ymax ? p->pt[i].time_s : ymax;
			bad |= plot_point(pl, gib(p->pt[i].mem_bytes), p->pt[i].time_s, 2.5, 0, NULL);
		}
	/* the front: by memory ascending (ties: the faster first, as ranked), each faster than all before it */
	for (long a = 1; a < n; a++) /* insertion sort, stable: n is at most a few thousand */
		for (long b = a; b > 0 && p->pt[ord[b]].mem_bytes < p->pt[ord[b - 1]].mem_bytes; b--) {
			long t = ord[b];
			ord[b] = ord[b - 1];
			ord[b - 1] = t;
		}
	int nf = 0;
	double best = INFINITY;
	for (long k = 0; !bad && k < n; k++) {
		const struct pl_point *q = &p->pt[ord[k]];
		if (q->time_s >= best)
			continue;
		best = q->time_s;
		fx[nf] = gib(q->mem_bytes), fy[nf++] = q->time_s;
		char l[128];
		short_layout(&q->c, l, sizeof l);
		bad |= plot_point(pl, gib(q->mem_bytes), q->time_s, 4, 1, l);
	}
	if (!bad && nf)
		bad |= plot_line(pl, fx, fy, nf, 1, PLOT_SOLID, "Pareto front (labelled)");
	double cap = gib(p->capacity_bytes), vx[2] = {cap, cap}, vy[2] = {0, ymax > 0 ? 1.1 * ymax : 1};
	char leg[96], note[128];
	snprintf(leg, sizeof leg, "device memory, %.1f GiB", cap);
	snprintf(note, sizeof note, "%ld layouts replayed (dots), %ld do not fit", n, p->counts[PL_NOFIT]);
	if (!bad)
		bad |= plot_line(pl, vx, vy, 2, 2, PLOT_DASHED, leg) || plot_note(pl, note) ||
		       plot_note(pl, "front: none is faster with as little memory");
	if (!bad) {
		plot_axis(pl, 0, 0, 1.05 * cap, 0, "memory per device, the stage that needs most (GiB)");
		plot_axis(pl, 1, 0, vy[1], 0, "step time (s)");
	}
	free(ord);
	free(fx);
	free(fy);
	if (bad)
		plot_free(pl);
	return bad ? NULL : pl;
}

struct plot *pl_serve_plot(const struct pl_serve_plan *p, const char *title)
{
	struct plot *pl = plot_new(1100, 600, title);
	double *fx = malloc((size_t)(p->n ? p->n : 1) * sizeof *fx),
	       *fy = malloc((size_t)(p->n ? p->n : 1) * sizeof *fy);
	int bad = !pl || !fx || !fy, nf = 0;
	double xmax = 1, ymax = 0;
	for (long i = 0; !bad && i < p->n; i++) {
		const struct pl_serve_point *q = &p->pt[i];
		double d = (double)(q->c.p.tp * q->c.p.pp);
		xmax = d > xmax ? d : xmax;
		if (q->rc)
			continue;
		ymax = q->rate > ymax ? q->rate : ymax;
		int front = 1; /* none of as few devices a replica serves more (of equal rates, the first ranked) */
		for (long k = 0; k < p->n && front; k++)
			front = p->pt[k].rc || k == i || (double)(p->pt[k].c.p.tp * p->pt[k].c.p.pp) > d ||
			        p->pt[k].rate < q->rate || (p->pt[k].rate == q->rate && k > i);
		char l[64];
		snprintf(l, sizeof l, "tp %lld pp %lld x%d, %lld seqs", q->c.p.tp, q->c.p.pp, q->replicas, q->max_seqs);
		bad |= plot_point(pl, d, q->rate, front ? 4 : 2.5, front, front ? l : NULL);
		if (front)
			fx[nf] = d, fy[nf++] = q->rate;
	}
	for (int a = 1; a < nf; a++) /* the front's points by devices a replica, for its line */
		for (int b = a; b > 0 && fx[b] < fx[b - 1]; b--) {
			double tx = fx[b], ty = fy[b];
			fx[b] = fx[b - 1], fy[b] = fy[b - 1];
			fx[b - 1] = tx, fy[b - 1] = ty;
		}
	if (!bad && nf)
		bad |= plot_line(pl, fx, fy, nf, 1, PLOT_SOLID, "Pareto front (labelled)") ||
		       plot_note(pl, "front: none of as few devices serves more");
	if (!bad) {
		plot_axis(pl, 0, 0, 1.1 * xmax + 0.5, 0, "devices a replica (tp x pp)");
		plot_axis(pl, 1, 0, ymax > 0 ? 1.1 * ymax : 1, 0, "requests/s within the limits (the fleet)");
	}
	free(fx);
	free(fy);
	if (bad)
		plot_free(pl);
	return bad ? NULL : pl;
}

/* ---- shard files --------------------------------------------------------------- */

#define PL_SHARD_HEADER                                                                                                \
	"replay,rc,step_s,tokens_per_s,mfu,compute_s,exposed_tp_s,exposed_pp_s,exposed_cp_s,exposed_dp_s,"             \
	"exposed_ep_s,exposed_other_s,idle_s,error"

void pl_shard_write(FILE *f, const struct pl_plan *p, long part, long parts, unsigned long long id, char *const *args,
                    int nargs)
{
	fprintf(f, "%s%ld/%ld of %ld replays, plan %016llx\n", PL_SHARD_LINE, part, parts, p->counts[PL_REPLAYED], id);
	for (int i = 0; i < nargs; i++)
		fprintf(f, "# arg %s\n", args[i]);
	fputs(PL_SHARD_HEADER "\n", f);
	for (long i = 0, k = 0; i < p->n; i++) {
		if (p->pt[i].state != PL_REPLAYED)
			continue;
		if (k % parts == part) {
			struct pl_result r;
			pl_result_get(&p->pt[i], &r);
			fprintf(f, "%ld,%d,%.17g,%.17g,%.17g,%.17g", k, r.rc, r.time_s, r.tokens_per_s, r.mfu,
			        r.compute_s);
			for (int j = 0; j < PL_NCOMM; j++)
				fprintf(f, ",%.17g", r.exposed_s[j]);
			fprintf(f, ",%.17g,", r.idle_s);
			for (const char *t = r.why; *t; t++)
				fputc(*t == '\n' ? ' ' : *t, f);
			fputc('\n', f);
		}
		k++;
	}
}

/* "FILE:LINE: what" into s->why; SIM_EXIT_TRACE */
static int shard_bad(struct pl_shard *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int shard_bad(struct pl_shard *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(s->why, sizeof s->why, "%s:%ld: ", s->path, s->line);
	if (n >= 0 && (size_t)n < sizeof s->why)
		vsnprintf(s->why + n, sizeof s->why - (size_t)n, fmt, ap);
	va_end(ap);
	return SIM_EXIT_TRACE;
}

/* one row's fields after "k,": rc and the figures, then the error text; 0 or -1 */
static int shard_row(const char *t, struct pl_result *r)
{
	char *e;
	memset(r, 0, sizeof *r);
	errno = 0;
	long rc = strtol(t, &e, 10);
	if (e == t || *e != ',' || errno || rc < 0 || rc > 255)
		return -1;
	r->rc = (int)rc;
	double *v[5 + PL_NCOMM] = {&r->time_s, &r->tokens_per_s, &r->mfu, &r->compute_s};
	for (int j = 0; j < PL_NCOMM; j++)
		v[4 + j] = &r->exposed_s[j];
	v[4 + PL_NCOMM] = &r->idle_s;
	for (int j = 0; j < 5 + PL_NCOMM; j++) {
		t = e + 1;
		*v[j] = strtod(t, &e);
		if (e == t || *e != ',')
			return -1;
	}
	snprintf(r->why, sizeof r->why, "%s", e + 1);
	return 0;
}

/* the rows shard I of N holds of P replays */
static long shard_rows(const struct pl_shard *s)
{
	return s->replays > s->i ? (s->replays - s->i + s->n - 1) / s->n : 0;
}

/* line 1 of a shard file into s; 0 or an exit code */
static int shard_head(struct pl_shard *s, const char *l)
{
	int used = 0;
	size_t pre = strlen(PL_SHARD_LINE);
	if (strncmp(l, PL_SHARD_LINE, pre) ||
	    sscanf(l + pre, "%ld/%ld of %ld replays, plan %16llx%n", &s->i, &s->n, &s->replays, &s->id, &used) != 4 ||
	    l[pre + (size_t)used] || s->n < 1 || s->n > PL_MAX_SHARDS || s->i < 0 || s->i >= s->n || s->replays < 0 ||
	    s->replays > 100000000)
		return shard_bad(s, "expected '" PL_SHARD_LINE "I/N of P replays, plan ID'");
	return 0;
}

/* room for one more row (grown with the rows read, not by what line 1 promises); 0 or an exit code */
static int shard_grow(struct pl_shard *s, long *cap)
{
	if (s->nr < *cap)
		return 0;
	long c = *cap ? 2 * *cap : 64;
	struct pl_result *r = realloc(s->r, (size_t)c * sizeof *r);
	if (!r) {
		snprintf(s->why, sizeof s->why, "%s: out of memory", s->path);
		return SIM_EXIT_INTERNAL;
	}
	s->r = r;
	*cap = c;
	return 0;
}

int pl_shard_read(struct pl_shard *s)
{
	FILE *f = fopen(s->path, "r");
	if (!f) {
		snprintf(s->why, sizeof s->why, "%s: cannot read: %s", s->path, strerror(errno));
		return SIM_EXIT_NOINPUT;
	}
	char *l = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0, header = 0;
	long cap_r = 0;
	while (!rc && (len = getline(&l, &cap, f)) >= 0) {
		s->line++;
		if (!len || l[len - 1] != '\n') {
			rc = shard_bad(s, "the last line has no line break (a file cut short?)");
			break;
		}
		if (memchr(l, '\0', (size_t)len)) {
			rc = shard_bad(s, "a NUL byte: not a shard");
			break;
		}
		l[--len] = '\0';
		int used = 0;
		long k, want = s->i + s->nr * s->n;
		if (s->line == 1)
			rc = shard_head(s, l);
		else if (!header && !strncmp(l, "# arg ", 6)) {
			if (s->nargs == PL_MAX_ARGS || !(s->args[s->nargs] = strdup(l + 6)))
				rc = shard_bad(s, "more than %d arguments", PL_MAX_ARGS);
			else
				s->nargs++;
		} else if (!header) {
			header = 1;
			if (strcmp(l, PL_SHARD_HEADER))
				rc = shard_bad(s, "expected the header '" PL_SHARD_HEADER "'");
		} else if (want >= s->replays)
			rc = shard_bad(s, "expected no more rows (replays %ld, %ld + %ld, ... below %ld)", s->i, s->i,
			               s->n, s->replays);
		else if (sscanf(l, "%ld,%n", &k, &used) != 1 || !used || k != want)
			rc = shard_bad(s, "expected the row of replay %ld", want);
		else if ((rc = shard_grow(s, &cap_r)))
			break;
		else if (shard_row(l + used, &s->r[s->nr]))
			rc = shard_bad(s, "expected rc and %d numbers, then the error text", 5 + PL_NCOMM);
		else
			s->nr++;
	}
	if (!rc && ferror(f))
		rc = (snprintf(s->why, sizeof s->why, "%s: cannot read: %s", s->path, strerror(EIO)), SIM_EXIT_NOINPUT);
	if (!rc && (!header || s->nr != shard_rows(s)))
		rc = shard_bad(s, "%ld rows, expected %ld (replays %ld, %ld + %ld, ... below %ld)", s->nr,
		               shard_rows(s), s->i, s->i, s->n, s->replays);
	free(l);
	fclose(f);
	return rc;
}

int pl_shard_check(struct pl_shard *sh, int n, struct pl_shard **by)
{
	for (int k = 0; k < n; k++) {
		struct pl_shard *s = &sh[k];
		int same =
		    s->n == sh[0].n && s->replays == sh[0].replays && s->id == sh[0].id && s->nargs == sh[0].nargs;
		for (int a = 0; same && a < s->nargs; a++)
			same = !strcmp(s->args[a], sh[0].args[a]);
		s->line = 1;
		if (!same)
			return shard_bad(s,
			                 "shard %ld/%ld of %ld replays of plan %016llx, but %s is of %ld shards of %ld "
			                 "replays of plan %016llx: not the same plan",
			                 s->i, s->n, s->replays, s->id, sh[0].path, sh[0].n, sh[0].replays, sh[0].id);
		if (by[s->i])
			return shard_bad(s, "shard %ld/%ld twice: %s is it too", s->i, s->n, by[s->i]->path);
		by[s->i] = s;
	}
	for (long i = 0; i < sh[0].n; i++)
		if (!by[i]) {
			snprintf(sh[0].why, sizeof sh[0].why,
			         "sim merge: shard %ld/%ld is missing (%d files for %ld shards)", i, sh[0].n, n,
			         sh[0].n);
			return SIM_EXIT_TRACE;
		}
	return 0;
}

void pl_shard_put(struct pl_plan *p, struct pl_shard *const *by)
{
	long parts = by[0]->n;
	for (long i = 0, k = 0; i < p->n; i++)
		if (p->pt[i].state == PL_REPLAYED) {
			assert(k < by[0]->replays);
			pl_result_put(&p->pt[i], &by[k % parts]->r[k / parts]);
			k++;
		}
}

void pl_shard_free(struct pl_shard *s)
{
	for (int a = 0; a < s->nargs; a++)
		free(s->args[a]);
	free(s->r);
	memset(s, 0, sizeof *s);
}
