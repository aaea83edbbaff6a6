/*
 * plan.c -- the layouts of a training run, their memory, their replays and
 * their ranking (`sim plan`; plan.h states what is searched and the
 * invariants).
 *
 * The pipeline reads top to bottom: the lists each dimension may take
 * (defaults from the node and the model), the cross product filtered by
 * gen_check, each layout's memory from sim gen's estimate, the dominance
 * rule on recompute, the replays in child processes, the ranking.
 */
#include "plan.h"

#include "engine.h"
#include "procpool.h"
#include "replay.h"
#include "report.h"
#include "trace.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pl_comm_name(enum pl_comm k)
{
	static const char *const names[PL_NCOMM] = {"tp", "pp", "cp", "dp", "ep", "other"};
	return k >= 0 && k < PL_NCOMM ? names[k] : "?";
}

void pl_layout_text(const struct gen_config *c, char *buf, size_t len)
{
	char cp[32] = "", ep[32] = "";
	if (c->p.cp > 1)
		snprintf(cp, sizeof cp, " cp %lld", c->p.cp);
	if (c->p.ep > 1)
		snprintf(ep, sizeof ep, " ep %lld", c->p.ep);
	snprintf(buf, len, "tp %lld pp %lld%s dp %lld%s mb %lld %s zero-%d", c->p.tp, c->p.pp, cp, c->p.dp, ep,
	         c->p.micro_batch, c->p.recompute == GEN_RC_NONE ? "no-recompute" : gen_recompute_name(c->p.recompute),
	         c->p.zero);
}

/* ---- the lists ------------------------------------------------------------ */

static void push(struct pl_list *l, long long v)
{
	if (l->n < PL_MAX_CHOICES)
		l->v[l->n++] = v;
}

long long pl_node_devices(const struct arch_chip *c, long long ranks_per_node)
{
	if (ranks_per_node > 0)
		return ranks_per_node;
	return c->sys.present && c->sys.devices_per_node > 0 ? c->sys.devices_per_node : 8;
}

/* tensor parallelism stays inside a node (its all-reduces and gathers sit on
   the critical path of every layer): powers of two up to the node */
static void default_tp(const struct arch_chip *c, long long rpn, long long gpus, struct pl_list *l)
{
	long long node = pl_node_devices(c, rpn);
	for (long long t = 1; t <= node && t <= gpus; t *= 2)
		push(l, t);
}

/* pipeline stages: the divisors of the devices up to the layers */
static void default_pp(const struct gen_config *b, long long gpus, struct pl_list *l)
{
	for (long long s = 1; s <= gpus && s <= b->m.layers && l->n < PL_MAX_CHOICES; s++)
		if (gpus % s == 0)
			push(l, s);
}

/* expert parallelism: powers of two dividing the experts (1 without) */
static void default_ep(const struct gen_config *b, long long gpus, struct pl_list *l)
{
	push(l, 1);
	for (long long e = 2; b->m.experts > 0 && e <= b->m.experts && e <= gpus; e *= 2)
		if (b->m.experts % e == 0)
			push(l, e);
}

static void default_mb(struct pl_list *l)
{
	for (long long m = 1; m <= 8; m *= 2)
		push(l, m);
}

/* ---- memory ----------------------------------------------------------------- */

static void point_memory(struct pl_point *pt)
{
	pt->mem_bytes = -1;
	for (long long s = 0; s < pt->c.p.pp; s++) {
		struct gen_memory m;
		gen_stage_memory(&pt->c, s, &m);
		double t = gen_memory_total(&m);
		if (t > pt->mem_bytes) {
			pt->mem_bytes = t;
			pt->mem_stage = (int)s;
			pt->mem = m;
		}
	}
}

/* ---- the layouts ---------------------------------------------------------- */

struct grow {
	struct pl_plan *p;
	long cap;
};

static int add_point(struct grow *g, const struct gen_config *c)
{
	struct pl_plan *p = g->p;
	if (p->n == g->cap) {
		long cap = g->cap ? 2 * g->cap : 64;
		struct pl_point *pt = realloc(p->pt, (size_t)cap * sizeof *pt);
		if (!pt)
			return -1;
		p->pt = pt;
		g->cap = cap;
	}
	struct pl_point *pt = &p->pt[p->n];
	memset(pt, 0, sizeof *pt);
	pt->c = *c;
	pt->order = p->n++;
	point_memory(pt);
	pt->state = pt->mem_bytes > p->capacity_bytes ? PL_NOFIT : PL_REPLAYED;
	return 0;
}

static int same_but_recompute(const struct gen_parallel *a, const struct gen_parallel *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->cp == b->cp && a->dp == b->dp && a->ep == b->ep &&
	       a->micro_batch == b->micro_batch && a->zero == b->zero;
}

/* Of the fitting points that differ only in recompute (consecutive in the
   enumeration, recompute innermost), all but the lightest are dominated. */
static void dominate(struct pl_plan *p)
{
	for (long i = 1; i < p->n; i++) {
		struct pl_point *a = &p->pt[i], *prev = NULL;
		for (long k = i - 1; k >= 0; k--) { /* the nearest earlier point of the same layout */
			if (!same_but_recompute(&p->pt[k].c.p, &a->c.p))
				break;
			if (p->pt[k].state == PL_REPLAYED || p->pt[k].state == PL_DOMINATED) {
				prev = &p->pt[k];
				break;
			}
		}
		if (prev && a->state == PL_REPLAYED)
			a->state = PL_DOMINATED;
	}
}

/* The layouts of one tensor x pipeline x context split x (its dp set): every ep, micro-batch, ZeRO stage and
   recompute of the lists that gen_check accepts, in that order (recompute innermost, as dominate() needs).
   Returns -1 when out of memory. */
static int add_split(struct grow *g, const struct gen_config *split, const struct pl_list *ep, const struct pl_list *mb,
                     unsigned zm, unsigned rcm, long *tried, char *last, size_t len)
{
	for (int e = 0; e < ep->n; e++)
		for (int m = 0; m < mb->n; m++)
			for (int z = 0; z <= 3; z++)
				for (int r = GEN_RC_NONE; r <= GEN_RC_FULL; r++) {
					if (!(zm & 1u << z) || !(rcm & 1u << r))
						continue;
					struct gen_config x = *split;
					x.p.ep = ep->v[e];
					x.p.micro_batch = mb->v[m];
					x.p.zero = z;
					x.p.recompute = (enum gen_recompute)r;
					++*tried;
					if (!gen_check(&x, last, len) && add_point(g, &x))
						return -1;
				}
	return 0;
}

int pl_enumerate(const struct arch_chip *c, const struct gen_config *base, long long gpus, const struct pl_space *sp,
                 struct pl_plan *p, char *why, size_t len)
{
	struct pl_list tp = sp->tp, pp = sp->pp, cp = sp->cp, ep = sp->ep, mb = sp->mb;
	unsigned rcm = sp->rc_mask ? sp->rc_mask : 7, zm = sp->zero_mask ? sp->zero_mask : 3;
	memset(p, 0, sizeof *p);
	p->capacity_bytes = c->dram.size_bytes > 0 ? c->dram.size_bytes : INFINITY;
	p->ranks_per_node = sp->ranks_per_node;
	if (!tp.n)
		default_tp(c, sp->ranks_per_node, gpus, &tp);
	if (!pp.n)
		default_pp(base, gpus, &pp);
	if (!cp.n)
		push(&cp, 1);
	if (!ep.n)
		default_ep(base, gpus, &ep);
	if (!mb.n)
		default_mb(&mb);
	struct grow g = {p, 0};
	long tried = 0;
	char last[512] = "";
	for (int a = 0; a < tp.n; a++)
		for (int b = 0; b < pp.n; b++)
			for (int d = 0; d < cp.n; d++) {
				struct gen_config x = *base;
				x.mode = GEN_TRAIN;
				x.p.tp = tp.v[a], x.p.pp = pp.v[b], x.p.cp = cp.v[d];
				if (gpus % (x.p.tp * x.p.pp * x.p.cp))
					continue;
				x.p.dp = gpus / (x.p.tp * x.p.pp * x.p.cp);
				x.p.sp = x.p.tp > 1;
				x.p.tp_overlap &= x.p.sp; /* --tp-comm-overlap where sequence parallelism is on */
				if (sp->sched_set && x.p.pp > 1) {
					x.p.sched = sp->sched;
					x.p.vstages = sp->sched != GEN_INTERLEAVED ? 1 : sp->vstages ? sp->vstages : 2;
				}
				if (x.p.pp > 1) {
					x.p.first_layers = sp->first_layers, x.p.last_layers = sp->last_layers;
					x.p.split_embedding = sp->split_embedding, x.p.split_loss = sp->split_loss;
				}
				if (add_split(&g, &x, &ep, &mb, zm, rcm, &tried, last, sizeof last)) {
					snprintf(why, len, "out of memory listing layouts");
					pl_free(p);
					return -1;
				}
			}
	if (!p->n) {
		if (tried)
			snprintf(why, len, "no layout of %lld devices: %s", gpus, last);
		else
			snprintf(
			    why, len,
			    "no layout of %lld devices: no tensor x pipeline x context split of the lists divides them",
			    gpus);
		pl_free(p);
		return -1;
	}
	if (!sp->all_recompute)
		dominate(p);
	for (long i = 0; i < p->n; i++)
		p->counts[p->pt[i].state]++;
	return 0;
}

/* ---- the replays ------------------------------------------------------------ */

struct pl_job {
	const struct arch_chip *c;
	struct pl_plan *p;
	long *idx; /* job -> point */
	long n, done;
	struct pl_result *msgs;
	pl_progress_fn progress;
	void *ctx;
};

static enum pl_comm comm_slot(const char *name)
{
	/* sim gen's communicators (gen_trace.c em_init): the gradients' reduction over the data-parallel ranks is
	   dp's, with experts (dpe) and with context parallelism (dpc, dpec) too; cp alone is the ring's and, with
	   dp 1, the gradients' */
	static const struct {
		const char *name;
		enum pl_comm slot;
	} map[] = {{"tp", PL_TP},  {"p2p", PL_PP},  {"cp", PL_CP}, {"dp", PL_DP}, {"dpe", PL_DP},
	           {"dpc", PL_DP}, {"dpec", PL_DP}, {"ep", PL_EP}, {"epc", PL_EP}};
	for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
		if (!strcmp(name, map[k].name))
			return map[k].slot;
	return PL_OTHER;
}

static void first_line(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%.*s", (int)strcspn(src, "\n"), src);
}

/* the report's figures of a finished replay */
static void read_report(const struct arch_chip *c, const struct trace *t, const struct rp_result *r,
                        struct pl_result *m)
{
	struct report rep;
	if (report_build(&rep, c, t, r)) {
		m->rc = SIM_EXIT_INTERNAL;
		snprintf(m->why, sizeof m->why, "out of memory building the report");
		return;
	}
	m->time_s = r->time_s;
	m->tokens_per_s = rep.has_workload ? rep.tokens_per_s : NAN;
	m->mfu = rep.has_workload ? rep.model_mfu : NAN;
	m->compute_s = rep.mean.compute;
	m->idle_s = rep.mean.idle;
	for (int g = 0; g < rep.ngroups; g++)
		m->exposed_s[comm_slot(rep.cgroups[g].name)] += rep.cgroups[g].extra;
	report_free(&rep);
}

/* In the child: the point's trace, its replay, the report's figures. */
static void replay_one(long i, void *ctx, void *out)
{
	const struct pl_job *J = ctx;
	const struct pl_point *pt = &J->p->pt[J->idx[i]];
	struct pl_result *m = out;
	char *text = NULL, why[2048];
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f || gen_write(f, &pt->c, NULL) || fclose(f)) {
		m->rc = SIM_EXIT_INTERNAL;
		snprintf(m->why, sizeof m->why, "cannot write the layout's trace: %s",
		         strerror(errno ? errno : ENOMEM));
		free(text);
		return;
	}
	struct trace *t = tr_parse_string(text, "plan.trace", why, sizeof why);
	free(text);
	if (!t) {
		m->rc = SIM_EXIT_TRACE;
		first_line(m->why, sizeof m->why, why);
		return;
	}
	struct rp_options o = {0, 1, 0, 0, 0, 0, 0, 0, 0};
	o.ranks_per_node = (int)J->p->ranks_per_node;
	struct rp_result r;
	memset(&r, 0, sizeof r);
	m->rc = rp_run(J->c, t, &o, &r, why, sizeof why);
	if (m->rc)
		first_line(m->why, sizeof m->why, why);
	else
		read_report(J->c, t, &r, m);
	if (!m->rc)
		rp_result_free(&r);
	tr_free(t);
}

/* A child that died or sent nothing: rc and why say so, and 1 comes back. */
static int child_failed(int ok, int status, const char *what, int *rc, char *why, size_t len)
{
	if (ok)
		return 0;
	char d[160];
	pp_describe(status, d, sizeof d);
	*rc = SIM_EXIT_INTERNAL;
	snprintf(why, len, "the %s process %s", what, d);
	return 1;
}

/* In the parent, when job i's child has ended. */
static void replayed(long i, void *ctx, int ok, int status, double wall_s)
{
	struct pl_job *J = ctx;
	struct pl_point *pt = &J->p->pt[J->idx[i]];
	if (!child_failed(ok, status, "replay's", &pt->rc, pt->why, sizeof pt->why))
		pl_result_put(pt, &J->msgs[i]);
	pt->wall_s = wall_s;
	if (J->progress)
		J->progress(++J->done, J->n, J->ctx);
}

void pl_result_get(const struct pl_point *pt, struct pl_result *r)
{
	memset(r, 0, sizeof *r);
	r->rc = pt->rc;
	r->time_s = pt->time_s, r->tokens_per_s = pt->tokens_per_s, r->mfu = pt->mfu, r->compute_s = pt->compute_s;
	memcpy(r->exposed_s, pt->exposed_s, sizeof r->exposed_s);
	r->idle_s = pt->idle_s;
	r->wall_s = pt->wall_s;
	_Static_assert(sizeof r->why == sizeof pt->why, "the same message field");
	memcpy(r->why, pt->why, sizeof r->why);
}

void pl_result_put(struct pl_point *pt, const struct pl_result *r)
{
	pt->rc = r->rc;
	pt->time_s = r->time_s, pt->tokens_per_s = r->tokens_per_s, pt->mfu = r->mfu, pt->compute_s = r->compute_s;
	memcpy(pt->exposed_s, r->exposed_s, sizeof pt->exposed_s);
	pt->idle_s = r->idle_s;
	pt->wall_s = r->wall_s;
	memcpy(pt->why, r->why, sizeof pt->why);
	pt->why[sizeof pt->why - 1] = '\0';
}

int pl_replay(const struct arch_chip *c, struct pl_plan *p, int jobs, int part, int parts, pl_progress_fn progress,
              void *ctx, char *why, size_t len)
{
	struct pl_job J = {c, p, NULL, 0, 0, NULL, progress, ctx};
	assert(parts >= 1 && part >= 0 && part < parts);
	long n = p->counts[PL_REPLAYED];
	n = n > part ? (n - part + parts - 1) / parts : 0; /* this part's */
	if (!n)
		return 0;
	J.idx = malloc((size_t)n * sizeof *J.idx);
	J.msgs = calloc((size_t)n, sizeof *J.msgs);
	if (!J.idx || !J.msgs) {
		free(J.idx);
		free(J.msgs);
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (long i = 0, k = 0; i < p->n; i++)
		if (p->pt[i].state == PL_REPLAYED && k++ % parts == part)
			J.idx[J.n++] = i;
	assert(J.n == n);
	if (rp_engine_load(why, len)) { /* once, inherited by every replay's process */
		free(J.idx);
		free(J.msgs);
		return -1;
	}
	int rc = pp_run(J.n, jobs, sizeof *J.msgs, J.msgs, replay_one, replayed, &J);
	if (rc)
		snprintf(why, len, "cannot start a process: %s", strerror(errno));
	free(J.idx);
	free(J.msgs);
	return rc ? -1 : 0;
}

int pl_bottleneck(const struct pl_point *pt, double *s)
{
	int k = PL_NCOMM;
	*s = pt->idle_s;
	for (int j = 0; j < PL_NCOMM; j++)
		if (pt->exposed_s[j] > *s)
			k = j, *s = pt->exposed_s[j];
	return k;
}

const char *pl_bottleneck_name(int k)
{
	return k == PL_NCOMM ? "idle" : pl_comm_name((enum pl_comm)k);
}

/* ---- the ranking ------------------------------------------------------------ */

/* 0 replayed and timed, 1 dominated, 2 replay failed, 3 does not fit */
static int klass(const struct pl_point *a)
{
	return a->state == PL_NOFIT ? 3 : a->state == PL_DOMINATED ? 1 : a->rc ? 2 : 0;
}

static int cmp_point(const void *pa, const void *pb)
{
	const struct pl_point *a = pa, *b = pb;
	int ka = klass(a), kb = klass(b);
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (ka == 0 && a->time_s != b->time_s)
		return a->time_s < b->time_s ? -1 : 1;
	if ((ka == 0 || ka == 3) && a->mem_bytes != b->mem_bytes)
		return a->mem_bytes < b->mem_bytes ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

void pl_rank(struct pl_plan *p)
{
	qsort(p->pt, (size_t)p->n, sizeof *p->pt, cmp_point);
}

void pl_free(struct pl_plan *p)
{
	free(p->pt);
	memset(p, 0, sizeof *p);
}

/* ---- serving ------------------------------------------------------------------ */

/* what a serving child sends back */
struct pl_smsg {
	int rc;
	double rate, out_tok_per_s, ttft_p99_s, tpot_p99_s, weights_bytes, kv_pool_bytes;
	char why[240];
};

struct pl_sjob {
	const struct arch_chip *c;
	const struct sv_options *o;
	struct pl_serve_plan *p;
	struct pl_smsg *msgs;
	long done;
	pl_progress_fn progress;
	void *ctx;
};

/* In the child: the fleet of point i served at rising rates (sv_max_rate). */
static void serve_one(long i, void *ctx, void *out)
{
	const struct pl_sjob *J = ctx;
	const struct pl_serve_point *pt = &J->p->pt[i];
	struct pl_smsg *m = out;
	struct sv_options o = *J->o;
	char why[1024] = "";
	o.replicas = pt->replicas;
	o.max_num_seqs = pt->max_seqs;
	o.prefill_replicas = 0;
	o.csv = o.timeline = NULL;
	o.progress = 0;
	int gpus = pt->replicas * (int)(pt->c.p.tp * pt->c.p.pp);
	struct sv_model *sm = sv_model_new(J->c, &pt->c, gpus, why, sizeof why);
	if (!sm) {
		m->rc = SIM_EXIT_CONFIG;
		first_line(m->why, sizeof m->why, why);
		return;
	}
	struct sv_result r;
	memset(&r, 0, sizeof r);
	m->rc = sv_max_rate(sm, &o, &m->rate, &r, why, sizeof why);
	if (m->rc)
		first_line(m->why, sizeof m->why, why);
	m->out_tok_per_s = r.out_tok_per_s;
	m->ttft_p99_s = r.ttft.p99;
	m->tpot_p99_s = r.tpot.p99;
	m->weights_bytes = r.weights_bytes;
	m->kv_pool_bytes = r.kv_pool_bytes;
	sv_model_free(sm);
}

static void served(long i, void *ctx, int ok, int status, double wall_s)
{
	struct pl_sjob *J = ctx;
	struct pl_serve_point *pt = &J->p->pt[i];
	const struct pl_smsg *m = &J->msgs[i];
	pt->wall_s = wall_s;
	if (!child_failed(ok, status, "serving", &pt->rc, pt->why, sizeof pt->why)) {
		pt->rc = m->rc;
		pt->rate = m->rate;
		pt->out_tok_per_s = m->out_tok_per_s;
		pt->ttft_p99_s = m->ttft_p99_s;
		pt->tpot_p99_s = m->tpot_p99_s;
		pt->weights_bytes = m->weights_bytes;
		pt->kv_pool_bytes = m->kv_pool_bytes;
		snprintf(pt->why, sizeof pt->why, "%s", m->why);
	}
	if (J->progress)
		J->progress(++J->done, J->p->n, J->ctx);
}

static int cmp_serve(const void *pa, const void *pb)
{
	const struct pl_serve_point *a = pa, *b = pb;
	int ka = a->rc != 0, kb = b->rc != 0;
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (!ka && a->rate != b->rate)
		return a->rate > b->rate ? -1 : 1;
	long long da = a->c.p.tp * a->c.p.pp, db = b->c.p.tp * b->c.p.pp;
	if (da != db)
		return da < db ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

int pl_serve(const struct arch_chip *c, const struct gen_config *base, const struct sv_options *o, long long gpus,
             const struct pl_space *sp, int jobs, pl_progress_fn progress, void *ctx, struct pl_serve_plan *p,
             char *why, size_t len)
{
	struct pl_list tp = sp->tp, pp = sp->pp;
	memset(p, 0, sizeof *p);
	if (!tp.n)
		default_tp(c, 0, gpus, &tp);
	if (!pp.n)
		for (long long s = 1; s <= 8 && s <= gpus; s *= 2) /* serving engines pipeline little */
			push(&pp, s);
	struct pl_list ms = sp->max_seqs;
	if (!ms.n)
		push(&ms, o->max_num_seqs);
	p->pt = calloc((size_t)(tp.n * pp.n * ms.n), sizeof *p->pt);
	if (!p->pt) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	char last[512] = "";
	for (int a = 0; a < tp.n; a++)
		for (int b = 0; b < pp.n; b++) {
			long long per = tp.v[a] * pp.v[b];
			if (gpus % per) {
				snprintf(last, sizeof last,
				         "a replica of tp %lld x pp %lld does not divide %lld devices", tp.v[a],
				         pp.v[b], gpus);
				continue;
			}
			struct gen_config x = *base;
			x.mode = GEN_INFER;
			x.p.tp = tp.v[a];
			x.p.pp = pp.v[b];
			x.p.dp = 1;
			if (gen_check(&x, last, sizeof last))
				continue;
			for (int m = 0; m < ms.n; m++) {
				struct pl_serve_point *pt = &p->pt[p->n];
				pt->c = x;
				pt->replicas = (int)(gpus / per);
				pt->max_seqs = ms.v[m];
				pt->order = p->n++;
			}
		}
	if (!p->n) {
		snprintf(why, len, "no replica layout of %lld devices: %s", gpus, last);
		pl_serve_free(p);
		return -1;
	}
	struct pl_sjob J = {c, o, p, calloc((size_t)p->n, sizeof *J.msgs), 0, progress, ctx};
	if (!J.msgs) {
		snprintf(why, len, "out of memory");
		pl_serve_free(p);
		return -1;
	}
	int rc = pp_run(p->n, jobs, sizeof *J.msgs, J.msgs, serve_one, served, &J);
	free(J.msgs);
	if (rc) {
		snprintf(why, len, "cannot start a process: %s", strerror(errno));
		pl_serve_free(p);
		return -1;
	}
	qsort(p->pt, (size_t)p->n, sizeof *p->pt, cmp_serve);
	return 0;
}

void pl_serve_free(struct pl_serve_plan *p)
{
	free(p->pt);
	memset(p, 0, sizeof *p);
}
