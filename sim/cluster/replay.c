/*
 * replay.c -- trace replay on SimGrid (see replay.h for the model).
 *
 * Actors: per rank a host actor ("hR") that expands the trace lazily and
 * pushes ops into per-stream queues (256 deep, like a launch queue), and
 * per used stream an executor ("rRsS"). Executors wait for after= labels
 * on the rank's condition variable; collectives and send/recv meet in
 * rendezvous instances keyed by (communicator, group, sequence) or
 * (src, dst, tag, sequence). The last member to arrive plays the transfer
 * (latency sleep, then one parallel task per bandwidth phase) and releases
 * the others.
 *
 * SimGrid settings (platform-independent, set before loading): the CM02
 * network model without cross-traffic or TCP-gamma, so a flow of S bytes
 * alone on a link of bandwidth B takes exactly S/B; the ptask_L07 host
 * model, which shares bandwidth between parallel tasks by max-min.
 *
 * Invariants: every span has t0 <= t1 and arrive <= t0; a collective's
 * members all end at the same time; when simgrid_run() returns every actor
 * has finished, or the run is a deadlock and is reported as such.
 */
#include "replay.h"

#include "model.h"
#include "outfile.h"
#include "platform.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <signal.h>
#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xbt/config.h>
#include <xbt/log.h>

#define QDEPTH   256
#define END_KIND TK_COUNT
#define NBUCKETS 65536

struct qev {
	struct tr_event ev;
	int need[TR_MAX_AFTER]; /* instance of each after= label to wait for */
	int inst;               /* this op's instance of its own label */
	short mark;
	double issued;
};

struct stream_st;
struct inst;

struct rank_st {
	int rank;
	struct tr_cursor *cur;
	struct stream_st **streams; /* tr_nstreams, created on first use */
	int *issued, *done;         /* per label: instances issued, completed */
	long *lbl_span;             /* per label: span of the latest completion */
	int *coll_seq;              /* per communicator */
	sg_mutex_t mu;
	sg_cond_t cv;
	short mark;
	int host_done;
	const char *host_state; /* what the host actor is blocked on */
	double mem[MEM_COUNT];  /* current `memory` categories */
	gsl_rng *rng;
	struct p2pseq *p2p; /* sequence numbers of send/recv per (peer, tag, dir) */
	int np2p, cap2p;
};

struct p2pseq {
	int peer;
	long tag;
	int dir;
	int seq;
};

struct stream_st {
	struct rank_st *rk;
	int idx;
	struct qev *q;
	int head, n, cap;
	int used;                  /* slots holding an op: queued (n) or taken and running */
	char cons_wait, prod_wait; /* the executor waits on items, the host on slots */
	sg_sem_t items, slots;
	long last_span;
	int done;
	const struct qev *cur; /* op being executed (for deadlock reports) */
	struct inst *waiting;  /* rendezvous it waits in */
	int waiting_label;     /* label it waits for, -1 */
};

/* A collective or send/recv being assembled. */
struct inst {
	struct inst *next;
	int kind; /* TK_COLL, TK_SEND (p2p) */
	int a, b, c, seq;
	int n, arrived, left;
	int *members; /* the members that meet (replayed ranks) */
	char *in;
	int *full, nfull;   /* collectives: the whole group, folded members too */
	struct tr_event ev; /* as the first arriver issued it */
	int first_rank;
	sg_sem_t go;
	double t_all;
	long pred; /* span before the last arrival */
	struct cplan *plan;
};

/* A planned collective, memoized with its prepared parallel tasks. */
struct cplan {
	struct cplan *next;
	int comm, group, coll, algo;
	double bytes;
	struct coll_plan p;
	int h[COLL_MAX_PHASES];
	sg_host_t *hosts[COLL_MAX_PHASES];
	double *flops[COLL_MAX_PHASES], *mat[COLL_MAX_PHASES];
	/* a phase of more than SPLIT_FLOWS flows: one task per (src, dst) pair,
	   hosts[2i..2i+1] and mat[4i..4i+3] ({0, bytes, 0, 0}) */
	int npairs[COLL_MAX_PHASES];
	/* time of the whole collective (latency and phases) measured on links
	   that carry nothing else (see exclusive_comms) */
	int alone_known;
	double alone_s;
	int nrep; /* replayed members of the group (1: the others are folded into one) */
};

/* Above this many flows a phase runs as independent point-to-point tasks
   instead of one parallel task: SimGrid's solver pays for every link a task
   spans each time any of its links changes, which grows as flows x links. An
   idle collective takes the same time either way (each flow's bytes over its
   bottleneck); under contention independent flows share links max-min fairly
   instead of advancing in lockstep. */
#define SPLIT_FLOWS 64

#define LINE_SLOTS 4096
struct line_dm {
	int line; /* + 1; 0: empty */
	struct op op;
	struct dm_result r;
};

struct run {
	const struct arch_chip *chip;
	const struct trace *t;
	const struct rp_options *o;
	struct rp_result *r;
	struct topo topo;
	int nranks;
	int inline_streams; /* one stream per rank: the rank's actor runs its ops itself */
	char *is_rep;       /* per rank: replayed (1) or folded into its representative (0) */
	char *excl_comm;    /* per communicator: it owns the links its groups use (exclusive_comms) */
	struct rank_st *ranks;
	sg_host_t *hosts;
	struct inst *tab[NBUCKETS];
	struct cplan *plans[NBUCKETS];
	long capspans;
	/* interned texts */
	int *txt_hash; /* open addressing, index+1 */
	int txt_cap;
	int captexts;
	int *tmp_idx;   /* rank -> host index scratch, -1 */
	int *line_text; /* trace line -> text index + 1 (ops whose text depends on the line only) */
	int nline_text;
	struct line_dm *line_dm; /* LINE_SLOTS: a line's op and its prediction (see predict) */
	struct dm *dm;           /* the device model's memo for this run (NULL until the first op, or out of memory) */
	char err[TR_MSG_MAX * 2];
	int err_code;
	double flops_by_dtype[DT_COUNT];
	struct timespec wall0;
	double next_progress;
};

static struct run *R; /* SimGrid actors get it through their data; this is for the C callbacks only */

static void fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(int code, const char *fmt, ...)
{
	if (R->err_code)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(R->err, sizeof R->err, fmt, ap);
	va_end(ap);
	R->err_code = code;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - R->wall0.tv_sec) + 1e-9 * (double)(ts.tv_nsec - R->wall0.tv_nsec);
}

static void progress(void)
{
	if (!R->o->progress || (R->r->events & 1023))
		return;
	double w = wall_now();
	if (w < R->next_progress)
		return;
	R->next_progress = w + 1;
	fprintf(stderr, "sim run: %.1f s wall, %ld ops replayed, simulated time %.6g s\n", w, R->r->events,
	        simgrid_get_clock());
}

/* ---- texts ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int intern(const char *s)
{
	struct rp_result *r = R->r;
	if (2 * (r->ntexts + 1) > R->txt_cap) {
		int cap = R->txt_cap ? 2 * R->txt_cap : 1024;
		int *h = calloc((size_t)cap, sizeof *h);
		if (!h)
			return -1;
		for (int i = 0; i < r->ntexts; i++) {
			size_t j = hash_str(r->texts[i]) & (size_t)(cap - 1);
			while (h[j])
				j = (j + 1) & (size_t)(cap - 1);
			h[j] = i + 1;
		}
		free(R->txt_hash);
		R->txt_hash = h;
		R->txt_cap = cap;
	}
	size_t j = hash_str(s) & (size_t)(R->txt_cap - 1);
	while (R->txt_hash[j]) {
		if (!strcmp(r->texts[R->txt_hash[j] - 1], s))
			return R->txt_hash[j] - 1;
		j = (j + 1) & (size_t)(R->txt_cap - 1);
	}
	if (r->ntexts == R->captexts) {
		int cap = R->captexts ? 2 * R->captexts : 256;
		char **v = realloc(r->texts, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		r->texts = v;
		R->captexts = cap;
	}
	r->texts[r->ntexts] = strdup(s);
	if (!r->texts[r->ntexts])
		return -1;
	R->txt_hash[j] = ++r->ntexts;
	return r->ntexts - 1;
}

static long add_span(const struct rp_span *s)
{
	struct rp_result *r = R->r;
	if (r->nspans == R->capspans) {
		long cap = R->capspans ? 2 * R->capspans : 4096;
		struct rp_span *v = realloc(r->spans, (size_t)cap * sizeof *v);
		if (!v) {
			fail(SIM_EXIT_INTERNAL, "out of memory recording %ld ops", r->nspans);
			return -1;
		}
		r->spans = v;
		R->capspans = cap;
	}
	r->spans[r->nspans] = *s;
	return r->nspans++;
}

static double span_end(long i)
{
	return i >= 0 ? R->r->spans[i].t1 : -1;
}

/* ---- rendezvous ---- */

static uint64_t key_hash(int kind, int a, int b, int c, int seq)
{
	uint64_t h = (uint64_t)kind * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)(unsigned)a * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
	h ^= (uint64_t)(unsigned)b * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
	h ^= (uint64_t)(unsigned)c * 0xD6E8FEB86659FD93ull + (h << 6) + (h >> 2);
	h ^= (uint64_t)(unsigned)seq * 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h;
}

static struct inst *inst_get(int kind, int a, int b, int c, int seq, int n, const int *members)
{
	uint64_t h = key_hash(kind, a, b, c, seq) % NBUCKETS;
	for (struct inst *x = R->tab[h]; x; x = x->next)
		if (x->kind == kind && x->a == a && x->b == b && x->c == c && x->seq == seq)
			return x;
	struct inst *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	x->kind = kind;
	x->a = a;
	x->b = b;
	x->c = c;
	x->seq = seq;
	x->n = n;
	x->members = malloc((size_t)n * sizeof *x->members);
	x->in = calloc((size_t)n, 1);
	if (!x->members || !x->in) {
		free(x->members);
		free(x->in);
		free(x);
		return NULL;
	}
	memcpy(x->members, members, (size_t)n * sizeof *members);
	x->go = sg_sem_init(0);
	x->pred = -1;
	x->next = R->tab[h];
	R->tab[h] = x;
	return x;
}

static void inst_drop(struct inst *x)
{
	uint64_t h = key_hash(x->kind, x->a, x->b, x->c, x->seq) % NBUCKETS;
	for (struct inst **p = &R->tab[h]; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	sg_sem_destroy(x->go);
	free(x->members);
	free(x->full);
	free(x->in);
	free(x);
}

static int member_index(const struct inst *x, int rank)
{
	int lo = 0, hi = x->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (x->members[mid] == rank)
			return mid;
		if (x->members[mid] < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* ---- collective plans and their parallel tasks ---- */

static int by_pair(const void *a, const void *b)
{
	const struct flow *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

static int prepare_pairs(struct cplan *cp, int ph)
{
	int nf = cp->p.nflows[ph], n = 0;
	struct flow *f = malloc((size_t)nf * sizeof *f);
	sg_host_t *hosts = malloc(2 * (size_t)nf * sizeof *hosts);
	double *mat = calloc(4 * (size_t)nf, sizeof *mat), *flops = calloc(2, sizeof *flops);
	if (!f || !hosts || !mat || !flops) {
		free(f);
		free(hosts);
		free(mat);
		free(flops);
		return -1;
	}
	memcpy(f, cp->p.flows[ph], (size_t)nf * sizeof *f);
	qsort(f, (size_t)nf, sizeof *f, by_pair);
	for (int i = 0; i < nf; i++) {
		if (f[i].src == f[i].dst || f[i].bytes <= 0)
			continue;
		if (n && hosts[2 * n - 2] == R->hosts[f[i].src] && hosts[2 * n - 1] == R->hosts[f[i].dst]) {
			mat[4 * n - 3] += f[i].bytes;
			continue;
		}
		hosts[2 * n] = R->hosts[f[i].src];
		hosts[2 * n + 1] = R->hosts[f[i].dst];
		mat[4 * n + 1] = f[i].bytes;
		n++;
	}
	free(f);
	cp->npairs[ph] = n;
	cp->h[ph] = n ? 2 : 0;
	cp->hosts[ph] = hosts;
	cp->mat[ph] = mat;
	cp->flops[ph] = flops;
	return 0;
}

static int prepare_phase(struct cplan *cp, int ph)
{
	const struct flow *f = cp->p.flows[ph];
	int nf = cp->p.nflows[ph], h = 0;
	if (nf > SPLIT_FLOWS)
		return prepare_pairs(cp, ph);
	sg_host_t *hosts = malloc((size_t)(2 * nf + 1) * sizeof *hosts);
	int *ranks = malloc((size_t)(2 * nf + 1) * sizeof *ranks);
	if (!hosts || !ranks)
		goto oom;
	for (int i = 0; i < nf; i++) {
		int e[2] = {f[i].src, f[i].dst};
		for (int j = 0; j < 2; j++)
			if (R->tmp_idx[e[j]] < 0) {
				R->tmp_idx[e[j]] = h;
				ranks[h] = e[j];
				hosts[h++] = R->hosts[e[j]];
			}
	}
	double *mat = calloc((size_t)h * (size_t)h, sizeof *mat);
	double *flops = calloc((size_t)h + 1, sizeof *flops);
	if (!mat || !flops) {
		free(mat);
		free(flops);
		for (int i = 0; i < h; i++)
			R->tmp_idx[ranks[i]] = -1;
		goto oom;
	}
	for (int i = 0; i < nf; i++)
		mat[(size_t)R->tmp_idx[f[i].src] * (size_t)h + (size_t)R->tmp_idx[f[i].dst]] += f[i].bytes;
	for (int i = 0; i < h; i++)
		R->tmp_idx[ranks[i]] = -1;
	free(ranks);
	cp->h[ph] = h;
	cp->hosts[ph] = hosts;
	cp->mat[ph] = mat;
	cp->flops[ph] = flops;
	return 0;
oom:
	free(hosts);
	free(ranks);
	return -1;
}

static uint64_t plan_hash(const struct tr_event *ev, int group)
{
	return key_hash(ev->coll, ev->comm, group, ev->algo, (int)(ev->bytes / 4096)) % NBUCKETS;
}

static struct cplan *plan_find(const struct tr_event *ev, int group)
{
	for (struct cplan *p = R->plans[plan_hash(ev, group)]; p; p = p->next)
		if (p->comm == ev->comm && p->group == group && p->coll == (int)ev->coll && p->algo == (int)ev->algo &&
		    p->bytes == ev->bytes)
			return p;
	return NULL;
}

static struct cplan *plan_get(const struct tr_event *ev, int group, const int *members, int n)
{
	struct cplan *p = plan_find(ev, group);
	if (p)
		return p;
	uint64_t h = plan_hash(ev, group);
	p = calloc(1, sizeof *p);
	char why[TR_MSG_MAX];
	if (!p) {
		fail(SIM_EXIT_INTERNAL, "out of memory planning a collective");
		return NULL;
	}
	if (coll_plan(&R->topo, ev->coll, ev->algo, ev->bytes, members, n, 1, &p->p, why, sizeof why)) {
		fail(SIM_EXIT_TRACE, "%s:%d: %s", tr_path(R->t), ev->line, why);
		free(p);
		return NULL;
	}
	for (int ph = 0; ph < p->p.nphases; ph++)
		if (prepare_phase(p, ph)) {
			fail(SIM_EXIT_INTERNAL, "out of memory preparing a collective over %d ranks", n);
			return NULL;
		}
	p->comm = ev->comm;
	p->group = group;
	p->coll = ev->coll;
	p->algo = ev->algo;
	p->bytes = ev->bytes;
	p->next = R->plans[h];
	R->plans[h] = p;
	return p;
}

static void run_pairs(struct cplan *cp, int ph)
{
	int n = cp->npairs[ph];
	sg_exec_t *ex = malloc((size_t)n * sizeof *ex);
	if (!ex) {
		fail(SIM_EXIT_INTERNAL, "out of memory running a collective");
		return;
	}
	for (int i = 0; i < n; i++) {
		ex[i] = sg_actor_parallel_exec_init(2, cp->hosts[ph] + 2 * i, cp->flops[ph], cp->mat[ph] + 4 * i);
		sg_exec_start(ex[i]);
	}
	for (int i = 0; i < n; i++)
		sg_exec_wait(ex[i]);
	free(ex);
	R->r->sg_activities += n;
}

static void run_phases(struct cplan *cp)
{
	for (int ph = 0; ph < cp->p.nphases; ph++)
		if (cp->npairs[ph])
			run_pairs(cp, ph);
		else if (cp->h[ph] > 1) {
			sg_actor_parallel_execute(cp->h[ph], cp->hosts[ph], cp->flops[ph], cp->mat[ph]);
			R->r->sg_activities++;
		}
}

/* ---- executing one op ---- */

static void wait_labels(struct stream_st *s, const struct qev *q, long *pred, double *ready)
{
	struct rank_st *rk = s->rk;
	for (int i = 0; i < q->ev.nafter; i++) {
		int l = q->ev.after[i];
		sg_mutex_lock(rk->mu);
		while (rk->done[l] < q->need[i] && !R->err_code) {
			s->waiting_label = l;
			sg_cond_wait(rk->cv, rk->mu);
		}
		s->waiting_label = -1;
		sg_mutex_unlock(rk->mu);
		long sp = rk->lbl_span[l];
		if (span_end(sp) > *ready) {
			*ready = span_end(sp);
			*pred = sp;
		}
	}
}

static void label_done(struct stream_st *s, const struct qev *q, long span)
{
	if (q->ev.label < 0)
		return;
	struct rank_st *rk = s->rk;
	sg_mutex_lock(rk->mu);
	rk->done[q->ev.label] = q->inst;
	rk->lbl_span[q->ev.label] = span;
	sg_cond_notify_all(rk->cv);
	sg_mutex_unlock(rk->mu);
}

static double jitter(struct rank_st *rk)
{
	if (R->o->jitter <= 0)
		return 1;
	return exp(gsl_ran_gaussian(rk->rng, R->o->jitter));
}

static void base_span(struct rp_span *sp, const struct stream_st *s, const struct qev *q)
{
	memset(sp, 0, sizeof *sp);
	sp->rank = s->rk->rank;
	sp->line = q->ev.line;
	sp->stream = (short)s->idx;
	sp->kind = (signed char)q->ev.kind;
	sp->bound = -1;
	sp->mark = q->mark;
	sp->algo = -1;
	sp->proto = -1;
	/* a statement's text is the same for every rank and every expansion,
	   except send/recv, whose peer is resolved per rank: format it once */
	int per_line = q->ev.kind != TK_SEND && q->ev.kind != TK_RECV && q->ev.line >= 0;
	if (per_line && q->ev.line < R->nline_text && R->line_text[q->ev.line]) {
		sp->text = R->line_text[q->ev.line] - 1;
		return;
	}
	char text[OP_TEXT_MAX + 128];
	tr_event_format(R->t, &q->ev, text, sizeof text);
	sp->text = intern(text);
	if (!per_line || sp->text < 0)
		return;
	if (q->ev.line >= R->nline_text) {
		int n = 2 * q->ev.line + 64;
		int *v = realloc(R->line_text, (size_t)n * sizeof *v);
		if (!v)
			return;
		memset(v + R->nline_text, 0, (size_t)(n - R->nline_text) * sizeof *v);
		R->line_text = v;
		R->nline_text = n;
	}
	R->line_text[q->ev.line] = sp->text + 1;
}

/*
 * A stream's queue between its host actor and its executor (not inline):
 * plain counters, and a semaphore only when a side has to block (empty
 * queue, full queue): every semaphore call is an engine call, which costs as
 * much as the op it would guard. Actors run one at a time, so a flag set
 * before blocking is seen by the other side.
 */
static void free_slots(struct stream_st *s, int k)
{
	if (!s->items || k <= 0)
		return;
	s->used -= k;
	if (s->prod_wait) {
		s->prod_wait = 0;
		sg_sem_release(s->slots);
	}
}

/* The device model's time of a device op: every expansion of a trace line
   issues the same op, so the answer is kept per line (the model's own memo
   formats and hashes the op, which costs more than the replay of it), in a
   fixed table of LINE_SLOTS slots by line number: a generated trace fits,
   a long flat one only costs misses. */
static int predict(const struct tr_event *ev, struct dm_result *r, char *why, size_t whylen)
{
	int line = ev->line;
	struct line_dm *slot = NULL;
	if (line >= 0 && (R->line_dm || (R->line_dm = calloc(LINE_SLOTS, sizeof *R->line_dm)))) {
		slot = &R->line_dm[line % LINE_SLOTS];
		if (slot->line == line + 1 && !memcmp(&slot->op, &ev->op, sizeof ev->op)) {
			*r = slot->r;
			return 0;
		}
	}
	if (!R->dm)
		R->dm = dm_new();
	if (dm_predict_cached(R->dm, R->chip, &ev->op, r, why, whylen))
		return -1;
	if (slot) {
		memcpy(&slot->op, &ev->op, sizeof ev->op); /* bytes, padding too: compared with memcmp */
		slot->r = *r;
		slot->line = line + 1;
	}
	return 0;
}

/*
 * A collective this rank runs by itself as a plain duration: its
 * communicator owns the links it uses (exclusive_comms), every other member
 * of its group is folded into this rank (no one to meet), and its time
 * alone is known. Returns its plan, or NULL.
 */
static const struct cplan *alone_call(const struct rank_st *rk, const struct tr_event *ev)
{
	int gid;
	if (!R->excl_comm || !R->excl_comm[ev->comm] || tr_comm_group(R->t, ev->comm, rk->rank, NULL, 0, &gid) < 2)
		return NULL;
	const struct cplan *p = plan_find(ev, gid);
	return p && p->alone_known && p->nrep == 1 ? p : NULL;
}

/* Ops a batch of exec_ops can hold: device ops and alone_call collectives. */
static int merges(const struct stream_st *s, const struct qev *q)
{
	return q->ev.kind == TK_OP || (q->ev.kind == TK_COLL && alone_call(s->rk, &q->ev));
}

/* Device ops, and collectives that run alone (alone_call): durations from
   the model and the memoized plans; a run of them is one sleep. */
static void exec_ops(struct stream_st *s, struct qev *first, long pred)
{
	struct qev *batch[QDEPTH];
	int nb = 0;
	batch[nb++] = first;
	/* merge the following device ops the queue already holds, as long as
	   nothing waits on them and they wait on nothing */
	while (first->ev.label < 0 && s->n > 0 && nb < QDEPTH) {
		struct qev *nx = &s->q[s->head];
		if (nx->ev.nafter > 0 || !merges(s, nx))
			break;
		s->head = (s->head + 1) % s->cap;
		s->n--;
		batch[nb++] = nx; /* its slot is released after the sleep: the host must not overwrite it */
		if (nx->ev.label >= 0)
			break;
	}
	double now = simgrid_get_clock(), t = now, total = 0;
	long last = pred;
	for (int i = 0; i < nb; i++) {
		struct rp_span sp;
		base_span(&sp, s, batch[i]);
		sp.t0 = sp.arrive = t;
		sp.pred = last;
		const struct cplan *cp = batch[i]->ev.kind == TK_COLL ? alone_call(s->rk, &batch[i]->ev) : NULL;
		if (cp) {
			s->rk->coll_seq[batch[i]->ev.comm]++;
			sp.t1 = t + cp->alone_s;
			sp.bytes = cp->p.bus_bytes;
			sp.algo = (signed char)cp->p.algo;
			sp.proto = (signed char)cp->p.proto;
			last = add_span(&sp);
			s->last_span = last;
			t += cp->alone_s;
			total += cp->alone_s;
			R->r->events++;
			continue;
		}
		struct dm_result dr;
		char why[TR_MSG_MAX];
		if (predict(&batch[i]->ev, &dr, why, sizeof why)) {
			fail(SIM_EXIT_TRACE, "%s:%d: %s", tr_path(R->t), batch[i]->ev.line, why);
			free_slots(s, nb - 1);
			return;
		}
		double d = dr.time_s * jitter(s->rk);
		sp.t1 = t + d;
		sp.flops = dr.flops;
		sp.bytes = dr.bytes_dram;
		sp.bound = (signed char)dr.bound;
		if (batch[i]->ev.op.dtype >= 0 && batch[i]->ev.op.dtype < DT_COUNT)
			R->flops_by_dtype[batch[i]->ev.op.dtype] += dr.flops;
		last = add_span(&sp);
		s->last_span = last;
		t += d;
		total += d;
		R->r->events++;
	}
	if (total > 0) {
		sg_actor_sleep_for(total);
		R->r->sg_activities++;
		/* the batch ends when the sleep does (the sum of the times above can
		   differ from it in the last bit): what follows starts exactly at
		   its end, so the critical path runs on through it */
		double end = simgrid_get_clock();
		if (last >= 0 && end >= R->r->spans[last].t0)
			R->r->spans[last].t1 = end;
	}
	/* only the last op of a batch can carry a label (see the loop above) */
	label_done(s, batch[nb - 1], last);
	free_slots(s, nb - 1);
	progress();
}

static void exec_delay(struct stream_st *s, struct qev *q, long pred)
{
	struct rp_span sp;
	base_span(&sp, s, q);
	sp.t0 = sp.arrive = simgrid_get_clock();
	if (q->ev.seconds > 0) {
		sg_actor_sleep_for(q->ev.seconds);
		R->r->sg_activities++;
	}
	sp.t1 = simgrid_get_clock();
	sp.pred = pred;
	s->last_span = add_span(&sp);
	R->r->events++;
	label_done(s, q, s->last_span);
}

/* Checks a later arriver's op against the first one's. */
static int same_coll(const struct inst *x, const struct tr_event *ev, int rank)
{
	if (x->ev.coll == ev->coll && x->ev.bytes == ev->bytes && x->ev.root == ev->root && x->ev.algo == ev->algo)
		return 1;
	char a[256], b[256];
	tr_event_format(R->t, &x->ev, a, sizeof a);
	tr_event_format(R->t, ev, b, sizeof b);
	fail(
	    SIM_EXIT_TRACE,
	    "%s:%d: rank %d issued '%s' where rank %d issued '%s' (line %d) as call %d on communicator %s: the members "
	    "of a collective must issue the same one",
	    tr_path(R->t), ev->line, rank, b, x->first_rank, a, x->ev.line, x->seq + 1, tr_comm_name(R->t, ev->comm));
	return 0;
}

/*
 * Registers this stream's arrival at rendezvous x. Returns 1 for the last
 * member to arrive (it plays the transfer, then release_others), 0 for a
 * member the last one released, -1 when the run failed meanwhile.
 */
static int rendezvous(struct stream_st *s, struct inst *x, double arrive, long pred)
{
	x->in[member_index(x, s->rk->rank)] = 1;
	if (++x->arrived < x->n) {
		s->waiting = x;
		sg_sem_acquire(x->go);
		s->waiting = NULL;
		return R->err_code ? -1 : 0;
	}
	x->t_all = arrive;
	x->pred = pred;
	return 1;
}

static void release_others(struct inst *x)
{
	for (int i = 1; i < x->n; i++)
		sg_sem_release(x->go);
}

/* Records a finished transfer: it started when the last member arrived
   (that member's predecessor enabled it) and ends now. */
static void end_transfer(struct stream_st *s, const struct qev *q, struct inst *x, struct rp_span *sp, long pred)
{
	sp->t0 = x->t_all;
	sp->t1 = simgrid_get_clock();
	sp->pred = x->t_all > sp->arrive ? x->pred : pred;
	s->last_span = add_span(sp);
	R->r->events++;
	label_done(s, q, s->last_span);
	if (++x->left == x->n)
		inst_drop(x);
}

static void exec_coll(struct stream_st *s, struct qev *q, long pred)
{
	struct rank_st *rk = s->rk;
	struct tr_event *ev = &q->ev;
	if (alone_call(rk, ev)) {
		exec_ops(s, q, pred);
		return;
	}
	int stack_members[64], *members = stack_members, gid = 0;
	int n = tr_comm_group(R->t, ev->comm, rk->rank, members, 64, &gid);
	if (n > 64) {
		members = malloc((size_t)n * sizeof *members);
		if (!members) {
			fail(SIM_EXIT_INTERNAL, "out of memory");
			return;
		}
		tr_comm_group(R->t, ev->comm, rk->rank, members, n, &gid);
	}
	double arrive = simgrid_get_clock();
	struct rp_span sp;
	base_span(&sp, s, q);
	sp.arrive = arrive;
	int seq = rk->coll_seq[ev->comm]++;
	/* folded members arrive with their representative: only replayed
	   members meet, the plan covers the whole group */
	int nrep = n;
	int *reps = members;
	if (R->is_rep && n > 1) {
		reps = malloc((size_t)n * sizeof *reps);
		if (!reps) {
			if (members != stack_members)
				free(members);
			fail(SIM_EXIT_INTERNAL, "out of memory");
			return;
		}
		nrep = 0;
		for (int i = 0; i < n; i++)
			if (R->is_rep[members[i]])
				reps[nrep++] = members[i];
	}
	struct inst *x = n > 1 ? inst_get(TK_COLL, ev->comm, gid, 0, seq, nrep, reps) : NULL;
	if (x && nrep < n && !x->full && (x->full = malloc((size_t)n * sizeof *x->full))) {
		memcpy(x->full, members, (size_t)n * sizeof *members);
		x->nfull = n;
	}
	if (reps != members)
		free(reps);
	if (members != stack_members)
		free(members);
	if (x && nrep < n && !x->full) {
		fail(SIM_EXIT_INTERNAL, "out of memory");
		return;
	}
	if (n > 1 && !x) {
		fail(SIM_EXIT_INTERNAL, "out of memory");
		return;
	}
	if (!x) { /* a group of one: nothing to move */
		sp.t0 = sp.t1 = arrive;
		sp.pred = pred;
		s->last_span = add_span(&sp);
		R->r->events++;
		label_done(s, q, s->last_span);
		return;
	}
	if (x->arrived == 0) {
		x->ev = *ev;
		x->first_rank = rk->rank;
	} else if (!same_coll(x, ev, rk->rank)) {
		return;
	}
	int last = rendezvous(s, x, arrive, pred);
	if (last < 0)
		return;
	if (last) {
		x->plan = x->full ? plan_get(ev, gid, x->full, x->nfull) : plan_get(ev, gid, x->members, x->n);
		if (!x->plan)
			return;
		struct cplan *cp = x->plan;
		int alone = R->excl_comm && R->excl_comm[ev->comm];
		if (alone && cp->alone_known) {
			if (cp->alone_s > 0) {
				sg_actor_sleep_for(cp->alone_s);
				R->r->sg_activities++;
			}
		} else {
			double t0 = simgrid_get_clock();
			if (cp->p.lat_s > 0) {
				sg_actor_sleep_for(cp->p.lat_s);
				R->r->sg_activities++;
			}
			run_phases(cp);
			if (alone && !R->err_code) {
				cp->alone_s = simgrid_get_clock() - t0;
				cp->alone_known = 1;
				cp->nrep = x->n;
			}
		}
		release_others(x);
	}
	sp.bytes = x->plan->p.bus_bytes;
	sp.algo = (signed char)x->plan->p.algo;
	sp.proto = (signed char)x->plan->p.proto;
	end_transfer(s, q, x, &sp, pred);
}

static int p2p_seq(struct rank_st *rk, int peer, long tag, int dir)
{
	for (int i = 0; i < rk->np2p; i++)
		if (rk->p2p[i].peer == peer && rk->p2p[i].tag == tag && rk->p2p[i].dir == dir)
			return rk->p2p[i].seq++;
	if (rk->np2p == rk->cap2p) {
		int cap = rk->cap2p ? 2 * rk->cap2p : 8;
		struct p2pseq *v = realloc(rk->p2p, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		rk->p2p = v;
		rk->cap2p = cap;
	}
	rk->p2p[rk->np2p++] = (struct p2pseq){peer, tag, dir, 1};
	return 0;
}

static void exec_p2p(struct stream_st *s, struct qev *q, long pred)
{
	struct rank_st *rk = s->rk;
	struct tr_event *ev = &q->ev;
	int send = ev->kind == TK_SEND;
	int src = send ? rk->rank : ev->peer, dst = send ? ev->peer : rk->rank;
	int seq = p2p_seq(rk, ev->peer, ev->tag, send);
	int pair[2] = {src < dst ? src : dst, src < dst ? dst : src};
	struct inst *x = seq < 0 ? NULL : inst_get(TK_SEND, src, dst, (int)ev->tag, seq, 2, pair);
	if (!x) {
		fail(SIM_EXIT_INTERNAL, "out of memory");
		return;
	}
	double arrive = simgrid_get_clock();
	struct rp_span sp;
	base_span(&sp, s, q);
	sp.arrive = arrive;
	if (x->arrived == 0) {
		x->ev = *ev;
		x->first_rank = rk->rank;
	} else if (x->ev.bytes != ev->bytes) {
		fail(SIM_EXIT_TRACE,
		     "%s:%d: rank %d %s %g bytes (tag %ld) but rank %d %s %g bytes (line %d): a send and its recv must "
		     "have the same size",
		     tr_path(R->t), ev->line, rk->rank, send ? "sends" : "receives", ev->bytes, ev->tag, x->first_rank,
		     send ? "receives" : "sends", x->ev.bytes, x->ev.line);
		return;
	}
	int last = rendezvous(s, x, arrive, pred);
	if (last < 0)
		return;
	if (last) {
		sg_actor_sleep_for(p2p_latency(&R->topo, src, dst));
		sg_host_t h[2] = {R->hosts[src], R->hosts[dst]};
		double fl[2] = {0, 0}, m[4] = {0, ev->bytes, 0, 0}; /* the links already carry model.link_efficiency */
		sg_actor_parallel_execute(2, h, fl, m);
		R->r->sg_activities += 2;
		release_others(x);
	}
	sp.bytes = ev->bytes;
	end_transfer(s, q, x, &sp, pred);
}

/* ---- actors ---- */

/* Runs one queued event on stream s: waits for its stream predecessor and
   its after= edges, then executes it. */
static void stream_exec(struct stream_st *s, struct qev *q)
{
	s->cur = q;
	long pred = s->last_span;
	double ready = span_end(pred);
	if (q->issued > ready) {
		ready = q->issued;
		pred = -1;
	}
	wait_labels(s, q, &pred, &ready);
	if (!R->err_code)
		switch (q->ev.kind) {
		case TK_OP: exec_ops(s, q, pred); break;
		case TK_COLL: exec_coll(s, q, pred); break;
		case TK_SEND:
		case TK_RECV: exec_p2p(s, q, pred); break;
		case TK_DELAY: exec_delay(s, q, pred); break;
		default: break;
		}
	s->cur = NULL;
}

static void stream_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct stream_st *s = sg_actor_self_get_data();
	s->waiting_label = -1;
	for (;;) {
		while (s->n == 0) {
			s->cons_wait = 1;
			sg_sem_acquire(s->items);
		}
		struct qev *q = &s->q[s->head];
		s->head = (s->head + 1) % s->cap;
		s->n--;
		if (q->ev.kind == END_KIND || R->err_code)
			break;
		stream_exec(s, q);
		free_slots(s, 1);
		if (R->err_code)
			break;
	}
	s->done = 1;
}

static struct stream_st *stream_get(struct rank_st *rk, int idx)
{
	if (rk->streams[idx])
		return rk->streams[idx];
	struct stream_st *s = calloc(1, sizeof *s);
	int cap = R->inline_streams ? 4 : QDEPTH; /* an inline queue grows as ops merge */
	if (!s || !(s->q = calloc((size_t)cap, sizeof *s->q))) {
		free(s);
		fail(SIM_EXIT_INTERNAL, "out of memory");
		return NULL;
	}
	s->rk = rk;
	s->idx = idx;
	s->cap = cap;
	s->last_span = -1;
	s->waiting_label = -1;
	rk->streams[idx] = s;
	if (R->inline_streams) /* the rank's own actor runs it (see host_main) */
		return s;
	s->items = sg_sem_init(0);
	s->slots = sg_sem_init(0);
	char name[64];
	snprintf(name, sizeof name, "r%ds%d", rk->rank, idx);
	sg_actor_t a = sg_actor_init(name, R->hosts[rk->rank]);
	sg_actor_set_data(a, s);
	sg_actor_start(a, stream_main, 0, NULL);
	return s;
}

/* Runs what a rank's inline stream has queued (no semaphores: the rank's
   actor fills the queue and empties it). */
static void run_queue(struct stream_st *s)
{
	while (s->n > 0 && !R->err_code) {
		struct qev *q = &s->q[s->head];
		s->head = (s->head + 1) % s->cap;
		s->n--;
		stream_exec(s, q);
	}
	s->head = 0;
}

static int grow_queue(struct stream_st *s)
{
	struct qev *q = realloc(s->q, 2 * (size_t)s->cap * sizeof *q);
	if (!q) {
		fail(SIM_EXIT_INTERNAL, "out of memory");
		return -1;
	}
	s->q = q;
	s->cap *= 2;
	return 0;
}

static int push(struct stream_st *s, const struct qev *q)
{
	while (s->used == QDEPTH) {
		s->rk->host_state = "waiting for a free slot in a stream's queue";
		s->prod_wait = 1;
		sg_sem_acquire(s->slots);
		s->rk->host_state = NULL;
	}
	s->q[(s->head + s->n) % s->cap] = *q;
	s->n++;
	s->used++;
	if (s->cons_wait) {
		s->cons_wait = 0;
		sg_sem_release(s->items);
	}
	return 0;
}

static int by_size_desc(const void *a, const void *b)
{
	const double *x = a, *y = b;
	return x[0] != y[0] ? (x[0] > y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : 1);
}

/* A `memory` statement: sets the categories it names; records the rank's
   peak; fails the run when the rank no longer fits its device. */
static int set_memory(struct rank_st *rk, const struct tr_event *ev)
{
	double total = 0;
	for (int c = 0; c < MEM_COUNT; c++) {
		if (ev->mem_set & (1u << c))
			rk->mem[c] = ev->mem[c];
		total += rk->mem[c];
	}
	struct rp_mem *m = &R->r->mem[rk->rank];
	if (total > m->total || !m->line) {
		m->total = total;
		memcpy(m->cat, rk->mem, sizeof m->cat);
		m->line = ev->line;
	}
	double cap = R->chip->dram.size_bytes;
	if (cap <= 0 || total <= cap)
		return 0;
	double order[MEM_COUNT][2];
	for (int c = 0; c < MEM_COUNT; c++) {
		order[c][0] = rk->mem[c];
		order[c][1] = c;
	}
	qsort(order, MEM_COUNT, sizeof order[0], by_size_desc);
	char list[256] = "";
	size_t used = 0;
	for (int c = 0; c < MEM_COUNT && order[c][0] > 0 && used < sizeof list; c++) {
		int k = snprintf(list + used, sizeof list - used, "%s%s %.1f GiB", c ? ", " : "",
		                 tr_mem_name((enum tr_mem)(int)order[c][1]), order[c][0] / 1073741824.0);
		if (k > 0)
			used += (size_t)k;
	}
	fail(SIM_EXIT_NOFIT, "%s:%d: rank %d does not fit: it needs %.1f GiB of device memory but %s has %.1f GiB (%s)",
	     tr_path(R->t), ev->line, rk->rank, total / 1073741824.0, R->chip->path, cap / 1073741824.0, list);
	return -1;
}

static void host_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct rank_st *rk = sg_actor_self_get_data();
	char why[TR_MSG_MAX];
	struct qev q;
	for (;;) {
		memset(&q, 0, sizeof q);
		int rc = tr_next(rk->cur, &q.ev, why, sizeof why);
		if (rc < 0) {
			fail(SIM_EXIT_TRACE, "%s", why);
			break;
		}
		if (rc == 0 || R->err_code)
			break;
		if (q.ev.kind == TK_MARK) {
			rk->mark = (short)q.ev.mark;
			continue;
		}
		if (q.ev.kind == TK_MEM) {
			if (set_memory(rk, &q.ev))
				break;
			continue;
		}
		q.mark = rk->mark;
		q.issued = simgrid_get_clock();
		for (int i = 0; i < q.ev.nafter; i++) {
			q.need[i] = rk->issued[q.ev.after[i]];
			if (q.need[i] == 0) {
				fail(SIM_EXIT_TRACE, "%s:%d: rank %d: after=%s waits for an op this rank never issued",
				     tr_path(R->t), q.ev.line, rk->rank, tr_label_name(R->t, q.ev.after[i]));
				break;
			}
		}
		if (R->err_code)
			break;
		if (q.ev.label >= 0)
			q.inst = ++rk->issued[q.ev.label];
		struct stream_st *s = stream_get(rk, q.ev.stream);
		if (!s)
			break;
		if (!R->inline_streams) {
			push(s, &q);
			continue;
		}
		/* One stream: queue device ops that can merge into one sleep and run
		   the queue when anything else comes (or it is full). */
		if (s->n == s->cap && grow_queue(s))
			break;
		s->q[s->n++] = q; /* run_queue leaves it empty with head 0 */
		if (q.ev.label >= 0 || q.ev.nafter > 0 || s->n == QDEPTH || !merges(s, &q))
			run_queue(s);
	}
	if (R->inline_streams) {
		for (int i = 0; i < tr_nstreams(R->t); i++)
			if (rk->streams[i]) {
				run_queue(rk->streams[i]);
				rk->streams[i]->done = !R->err_code;
			}
		rk->host_done = 1;
		return;
	}
	/* end every stream this rank used */
	memset(&q, 0, sizeof q);
	q.ev.kind = (enum tr_kind)END_KIND;
	for (int i = 0; i < tr_nstreams(R->t); i++)
		if (rk->streams[i])
			push(rk->streams[i], &q);
	rk->host_done = 1;
}

/* ---- setup, deadlock report ---- */

static int engine_init(const char *xml_path)
{
	static int inited;
	int argc = 1;
	char arg0[] = "sim", *argv[] = {arg0, NULL};
	if (inited)
		return -1; /* SimGrid runs one simulation per process */
	inited = 1;
	simgrid_init(&argc, argv);
	/* simgrid_init() sets a SIGINT handler of its own (it prints "CTRL-C
	   pressed" through its log and exit(1)s, leaving temporary files):
	   sim's handlers (sim/base/outfile.c) take SIGINT back. */
	out_signals_reassert();
	sg_cfg_set_string("network/model", "CM02");
	sg_cfg_set_boolean("network/crosstraffic", "no");
	sg_cfg_set_double("network/TCP-gamma", 0.0);
	sg_cfg_set_string("host/model", "ptask_L07");
	sg_cfg_set_double("surf/precision", 1e-12);
	sg_cfg_set_int("contexts/stack-size", 64);
#ifdef SIM_SANITIZE_BUILD
	sg_cfg_set_string("contexts/factory", "thread");
#endif
	if (!getenv("SIM_SIMGRID_LOG")) { /* developers: SIM_SIMGRID_LOG=1 shows SimGrid's own messages */
		xbt_log_control_set("root.thres:critical");
		xbt_log_control_set("root.app:file:/dev/null");
	}
	simgrid_load_platform(xml_path);
	return 0;
}

static void describe_wait(const struct stream_st *s, char *buf, size_t len)
{
	const struct qev *q = s->cur;
	char text[OP_TEXT_MAX + 128] = "";
	if (q)
		tr_event_format(R->t, &q->ev, text, sizeof text);
	if (s->waiting) {
		const struct inst *x = s->waiting;
		int n =
		    snprintf(buf, len, "rank %d waits at line %d (%s): %d of %d ranks arrived; missing:", s->rk->rank,
		             q ? q->ev.line : 0, text, x->arrived, x->n);
		int shown = 0;
		for (int i = 0; i < x->n && n > 0 && (size_t)n < len; i++)
			if (!x->in[i]) {
				if (shown == 8) {
					n += snprintf(buf + n, len - (size_t)n, " ...");
					break;
				}
				n += snprintf(buf + n, len - (size_t)n, " %d", x->members[i]);
				shown++;
			}
	} else if (s->waiting_label >= 0) {
		snprintf(buf, len, "rank %d waits at line %d (%s) for after=%s, which never completes", s->rk->rank,
		         q ? q->ev.line : 0, text, tr_label_name(R->t, s->waiting_label));
	} else {
		snprintf(buf, len, "rank %d (stream %s) is blocked at line %d (%s)", s->rk->rank,
		         tr_stream_name(R->t, s->idx), q ? q->ev.line : 0, text);
	}
}

static void report_deadlock(void)
{
	char lines[TR_MSG_MAX * 2] = "";
	int blocked = 0, first_line = 0;
	size_t used = 0;
	for (int r = 0; r < R->nranks; r++)
		for (int i = 0; i < tr_nstreams(R->t); i++) {
			const struct stream_st *s = R->ranks[r].streams ? R->ranks[r].streams[i] : NULL;
			if (!s || s->done)
				continue;
			char one[TR_MSG_MAX];
			describe_wait(s, one, sizeof one);
			if (!blocked++)
				first_line = s->cur ? s->cur->ev.line : 0;
			if (blocked <= 8 && used < sizeof lines - 2) {
				int k = snprintf(lines + used, sizeof lines - used, "; %s", one);
				if (k > 0)
					used += (size_t)k;
			}
		}
	if (!blocked)
		return;
	fail(SIM_EXIT_TRACE, "%s:%d: deadlock: %d stream%s of %d ranks cannot go on%s%s", tr_path(R->t), first_line,
	     blocked, blocked == 1 ? "" : "s", R->nranks, lines, blocked > 8 ? "; ..." : "");
}

static int dominant_dtype(void)
{
	int best = -1;
	for (int d = 0; d < DT_COUNT; d++)
		if (R->flops_by_dtype[d] > 0 && (best < 0 || R->flops_by_dtype[d] > R->flops_by_dtype[best]))
			best = d;
	return best;
}

/*
 * Symmetric ranks: when the trace runs the same program along some dims
 * (tr_symmetric_dims) and the platform gives every device its own links
 * (switch, full mesh or PCIe node; fabric not oversubscribed), the ranks
 * that differ only in those dims do the same thing at the same time over
 * disjoint links, so one representative (coordinate 0 in each folded dim)
 * replays for all of them. Jitter draws per rank, so it turns folding off.
 */
static int fold_ranks(const struct trace *t, const struct rp_options *o)
{
	struct rp_result *r = R->r;
	const struct topo *tp = &R->topo;
	r->fold = 1;
	r->nrep = R->nranks;
	unsigned dims = tr_symmetric_dims(t);
	if (o->no_fold || o->jitter > 0 || !dims || tp->uplink_bw > 0 ||
	    !(tp->intra == TI_SWITCH || tp->intra == TI_MESH || tp->intra == TI_PCIE))
		return 0;
	long stride[DIM_COUNT] = {0};
	for (int i = 0; i < R->nranks; i++)
		for (int d = 0; d < DIM_COUNT; d++) {
			int k = 0, one = tr_coord(t, i, d) == 1;
			for (int e = 0; e < DIM_COUNT && one; e++)
				k += e != d && tr_coord(t, i, e) != 0;
			if (one && !k)
				stride[d] = i;
		}
	R->is_rep = calloc((size_t)R->nranks, 1);
	r->rep_of = malloc((size_t)R->nranks * sizeof *r->rep_of);
	if (!R->is_rep || !r->rep_of)
		return -1;
	r->nrep = 0;
	for (int i = 0; i < R->nranks; i++) {
		long rep = i;
		for (int d = 0; d < DIM_COUNT; d++)
			if (dims & (1u << d))
				rep -= tr_coord(t, i, d) * stride[d];
		r->rep_of[i] = (int)rep;
		R->is_rep[i] = rep == i;
		r->nrep += rep == i;
	}
	r->fold = R->nranks / r->nrep;
	r->fold_dims = dims;
	return 0;
}

/* Where the groups of communicator comm move data: REACH_IN when a group
   has two members in one node, REACH_OUT when one has members in two. */
enum { REACH_IN = 1, REACH_OUT = 2 };
static int comm_reach(const struct trace *t, int comm, char *seen, int **buf, int *cap)
{
	int reach = 0, dpn = R->topo.dpn;
	memset(seen, 0, (size_t)R->nranks);
	for (int a = 0; a < R->nranks && reach != (REACH_IN | REACH_OUT); a++) {
		int gid, n = tr_comm_group(t, comm, a, NULL, 0, &gid);
		if (n < 2 || gid < 0 || gid >= R->nranks || seen[gid])
			continue;
		seen[gid] = 1;
		if (n > *cap) {
			int *v = realloc(*buf, (size_t)n * sizeof *v);
			if (!v)
				return -1;
			*buf = v;
			*cap = n;
		}
		tr_comm_group(t, comm, a, *buf, n, &gid);
		for (int i = 1; i < n; i++) /* members in increasing order: a node's are adjacent */
			reach |= (*buf)[i] / dpn == (*buf)[i - 1] / dpn ? REACH_IN : REACH_OUT;
	}
	return reach;
}

/* The built-in communicator of layout dim d (the ranks that differ only in d). */
static int dim_comm(const struct trace *t, int d)
{
	for (int c = 0; c < tr_ncomms(t); c++)
		if (!strcmp(tr_comm_name(t, c), tr_dim_name((enum tr_dim)d)))
			return c;
	return -1;
}

/*
 * Communicators whose collectives own the links they use. Links fall in
 * two domains: inside a node (private device links: switch or PCIe ports,
 * full-mesh pairs; traffic between two devices of a node crosses only
 * theirs) and between nodes (each device's NICs and a non-blocking fabric).
 * When one communicator is all that moves data in each domain its groups
 * reach (no other communicator's group, no send/recv peer, reaches it) and
 * its collectives come from one stream (a group's calls never overlap),
 * every call runs alone on its links and takes the same time each time:
 * exec_coll measures it once, and later calls are one sleep, or with every
 * other member folded, part of a batch of device ops. --no-memo turns this
 * off.
 */
static int exclusive_comms(const struct trace *t, const struct rp_options *o)
{
	const struct topo *tp = &R->topo;
	int nc = tr_ncomms(t), p2p = tr_p2p_dims(t), users[4] = {0}, *buf = NULL, cap = 0, rc = 0;
	if (o->no_memo || p2p < 0)
		return 0;
	int *reach = calloc((size_t)nc, sizeof *reach);
	char *seen = malloc((size_t)R->nranks);
	R->excl_comm = calloc((size_t)nc, 1);
	if (!reach || !seen || !R->excl_comm) {
		rc = -1;
		goto out;
	}
	int peers = 0; /* where send/recv can go */
	for (int d = 0; d < DIM_COUNT && rc >= 0; d++) {
		int c = p2p & (1 << d) ? dim_comm(t, d) : -1;
		if (c >= 0 && (rc = comm_reach(t, c, seen, &buf, &cap)) > 0)
			peers |= rc;
	}
	for (int c = 0; c < nc && rc >= 0; c++)
		if (tr_comm_stream(t, c) != -1 && (rc = reach[c] = comm_reach(t, c, seen, &buf, &cap)) > 0)
			for (int k = REACH_IN; k <= REACH_OUT; k++)
				users[k] += (rc & k) != 0;
	if (rc < 0)
		goto out;
	rc = 0;
	users[REACH_IN] += (peers & REACH_IN) != 0;
	users[REACH_OUT] += (peers & REACH_OUT) != 0;
	int in_ok = tp->intra == TI_SWITCH || tp->intra == TI_MESH || tp->intra == TI_PCIE;
	int out_ok = tp->uplink_bw <= 0;
	for (int c = 0; c < nc; c++)
		R->excl_comm[c] = reach[c] && tr_comm_stream(t, c) >= 0 &&
		                  (!(reach[c] & REACH_IN) || (in_ok && users[REACH_IN] == 1)) &&
		                  (!(reach[c] & REACH_OUT) || (out_ok && users[REACH_OUT] == 1));
out:
	free(reach);
	free(seen);
	free(buf);
	return rc;
}

int rp_run(const struct arch_chip *c, const struct trace *t, const struct rp_options *o, struct rp_result *r, char *why,
           size_t whylen)
{
	static struct run run;
	memset(r, 0, sizeof *r);
	memset(&run, 0, sizeof run);
	R = &run;
	run.chip = c;
	run.t = t;
	run.o = o;
	run.r = r;
	run.nranks = tr_ranks(t);
	r->ranks = run.nranks;
	r->dtype = -1;
	clock_gettime(CLOCK_MONOTONIC, &run.wall0);
	run.next_progress = 2.0;
	if (platform_topo(c, run.nranks, &run.topo, why, whylen)) {
		char tmp[TR_MSG_MAX];
		snprintf(tmp, sizeof tmp, "%s", why);
		snprintf(why, whylen, "%s: %s", tr_path(t), tmp);
		return SIM_EXIT_TRACE;
	}
	r->topo = run.topo;
	char path[] = "/tmp/sim-platform-XXXXXX.xml";
	/* made and tracked with the signals held: a SIGINT/SIGTERM removes it */
	sigset_t hold, old;
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigprocmask(SIG_BLOCK, &hold, &old);
	int fd = mkstemps(path, 4);
	int slot = fd >= 0 ? out_track(path) : -1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || platform_write_xml(&run.topo, f) || fclose(f)) {
		if (fd >= 0)
			unlink(path);
		out_untrack(slot);
		snprintf(why, whylen, "sim run: cannot write the platform file %s", path);
		return SIM_EXIT_CANTCREAT;
	}
	int bad = engine_init(path);
	unlink(path);
	out_untrack(slot);
	if (bad) {
		snprintf(why, whylen, "sim run: one replay per process");
		return SIM_EXIT_INTERNAL;
	}
	run.hosts = calloc((size_t)run.nranks, sizeof *run.hosts);
	run.ranks = calloc((size_t)run.nranks, sizeof *run.ranks);
	run.tmp_idx = malloc((size_t)run.nranks * sizeof *run.tmp_idx);
	if (!run.hosts || !run.ranks || !run.tmp_idx) {
		snprintf(why, whylen, "sim run: out of memory for %d ranks", run.nranks);
		return SIM_EXIT_INTERNAL;
	}
	for (int i = 0; i < run.nranks; i++) {
		char name[32];
		snprintf(name, sizeof name, "dev%d", i);
		run.hosts[i] = sg_host_by_name(name);
		run.tmp_idx[i] = -1;
	}
	int nl = tr_nlabels(t) + 1, nc = tr_ncomms(t) + 1, ns = tr_nstreams(t) + 1;
	run.inline_streams = tr_nstreams(t) <= 1;
	r->mem = calloc((size_t)run.nranks, sizeof *r->mem);
	if (!r->mem || fold_ranks(t, o) || exclusive_comms(t, o)) {
		snprintf(why, whylen, "sim run: out of memory for %d ranks", run.nranks);
		return SIM_EXIT_INTERNAL;
	}
	for (int i = 0; i < run.nranks; i++) {
		struct rank_st *rk = &run.ranks[i];
		rk->rank = i;
		if (run.is_rep && !run.is_rep[i])
			continue;
		rk->cur = tr_cursor_new(t, i);
		rk->streams = calloc((size_t)ns, sizeof *rk->streams);
		rk->issued = calloc((size_t)nl, sizeof *rk->issued);
		rk->done = calloc((size_t)nl, sizeof *rk->done);
		rk->lbl_span = malloc((size_t)nl * sizeof *rk->lbl_span);
		rk->coll_seq = calloc((size_t)nc, sizeof *rk->coll_seq);
		if (!rk->cur || !rk->streams || !rk->issued || !rk->done || !rk->lbl_span || !rk->coll_seq) {
			snprintf(why, whylen, "sim run: out of memory for %d ranks", run.nranks);
			return SIM_EXIT_INTERNAL;
		}
		for (int l = 0; l < nl; l++)
			rk->lbl_span[l] = -1;
		rk->mark = -1;
		rk->mu = sg_mutex_init();
		rk->cv = sg_cond_init();
		if (o->jitter > 0) {
			rk->rng = gsl_rng_alloc(gsl_rng_mt19937);
			gsl_rng_set(rk->rng, o->seed * 1000003ul + (unsigned long)i);
		}
		char name[32];
		snprintf(name, sizeof name, "h%d", i);
		sg_actor_t a = sg_actor_init(name, run.hosts[i]);
		sg_actor_set_data(a, rk);
		sg_actor_start(a, host_main, 0, NULL);
	}
	simgrid_run();
	r->time_s = simgrid_get_clock();
	if (!run.err_code)
		report_deadlock();
	r->wall_s = wall_now();
	r->dtype = dominant_dtype();
	if (r->rep_of)
		for (int i = 0; i < run.nranks; i++)
			r->mem[i] = r->mem[r->rep_of[i]];
	for (int i = 0; i < run.nranks; i++) {
		struct rank_st *rk = &run.ranks[i];
		if (!rk->streams)
			continue; /* folded into its representative */
		tr_cursor_free(rk->cur);
		free(rk->issued);
		free(rk->done);
		free(rk->lbl_span);
		free(rk->coll_seq);
		free(rk->p2p);
		if (rk->rng)
			gsl_rng_free(rk->rng);
		for (int s = 0; s < ns; s++)
			if (rk->streams[s]) {
				if (rk->streams[s]->items) {
					sg_sem_destroy(rk->streams[s]->items);
					sg_sem_destroy(rk->streams[s]->slots);
				}
				free(rk->streams[s]->q);
				free(rk->streams[s]);
			}
		sg_mutex_destroy(rk->mu);
		sg_cond_destroy(rk->cv);
		free(rk->streams);
	}
	for (int h = 0; h < NBUCKETS; h++) /* rendezvous a deadlock left open */
		while (run.tab[h])
			inst_drop(run.tab[h]);
	for (int h = 0; h < NBUCKETS; h++)
		for (struct cplan *p = run.plans[h], *nx; p; p = nx) {
			nx = p->next;
			for (int ph = 0; ph < COLL_MAX_PHASES; ph++) {
				free(p->hosts[ph]);
				free(p->mat[ph]);
				free(p->flops[ph]);
			}
			coll_plan_free(&p->p);
			free(p);
		}
	free(run.ranks);
	free(run.hosts);
	free(run.tmp_idx);
	free(run.is_rep);
	free(run.excl_comm);
	free(run.txt_hash);
	free(run.line_text);
	free(run.line_dm);
	dm_free(run.dm);
	if (run.err_code) {
		snprintf(why, whylen, "%s", run.err);
		return run.err_code;
	}
	/* the step ends with the last op, not with the engine's last event */
	double end = 0;
	for (long i = 0; i < r->nspans; i++)
		if (r->spans[i].t1 > end)
			end = r->spans[i].t1;
	r->time_s = end;
	return 0;
}

void rp_result_free(struct rp_result *r)
{
	for (int i = 0; i < r->ntexts; i++)
		free(r->texts[i]);
	free(r->texts);
	free(r->spans);
	free(r->rep_of);
	free(r->mem);
	memset(r, 0, sizeof *r);
}
