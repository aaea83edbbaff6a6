/*
 * replay_exec.c -- executing one op of the replay (replay.c's stream
 * actors call these): the spans ops leave, the rendezvous where the members
 * of a collective or a send/recv meet, device ops and the collectives that
 * run alone as one sleep of merged durations, host delays, collectives and
 * point-to-point transfers played by their last arriver; the run's progress
 * line. The invariants they keep are listed in replay.c.
 */
#include "replay_int.h"

#include "platform.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double rp_wall_now(struct run *R)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - R->wall0.tv_sec) + 1e-9 * (double)(ts.tv_nsec - R->wall0.tv_nsec);
}

void rp_progress(struct run *R)
{
	if (!R->o->progress || (R->r->events & 1023) || !progress_due(&R->prog))
		return;
	progress_print(&R->prog, "%.1f s wall, %ld ops replayed, simulated time %.6g s", rp_wall_now(R), R->r->events,
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

static int intern(struct run *R, const char *s)
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

static long add_span(struct run *R, const struct rp_span *s)
{
	struct rp_result *r = R->r;
	assert(s->arrive <= s->t0 && s->t0 <= s->t1); /* invariant 2 */
	if (r->nspans == R->capspans) {
		long cap = R->capspans ? 2 * R->capspans : 4096;
		struct rp_span *v = realloc(r->spans, (size_t)cap * sizeof *v);
		if (!v) {
			rp_fail(R, SIM_EXIT_INTERNAL, "out of memory recording %ld ops", r->nspans);
			return -1;
		}
		r->spans = v;
		R->capspans = cap;
	}
	r->spans[r->nspans] = *s;
	return r->nspans++;
}

/* A span's end; -2 - i names span i's copy in the last iteration a steady
   state derived (replay_steady.c). */
double rp_span_end(struct run *R, long i)
{
	return i >= 0 ? R->r->spans[i].t1 : i == -1 ? -1 : rp_steady_end(R, -2 - i);
}

/* Records the span of the op q stream s just ran: it starts no earlier than
   the stream's previous op ended (invariant 3). */
static long stream_span(struct run *R, struct stream_st *s, const struct qev *q, const struct rp_span *sp)
{
	assert(sp->t0 >= rp_span_end(R, s->last_span));
	long i = add_span(R, sp);
	if (i >= 0)
		R->r->spans[i].late = q->late;
	s->last_span = i;
	if (R->steady && i >= 0)
		rp_steady_recorded(R, q, i);
	return i;
}

/* ---- rendezvous ---- */

static struct inst *inst_find(struct run *R, int kind, int a, int b, int c, int seq)
{
	uint64_t h = rp_key_hash(kind, a, b, c, seq) % NBUCKETS;
	for (struct inst *x = R->tab[h]; x; x = x->next)
		if (x->kind == kind && x->a == a && x->b == b && x->c == c && x->seq == seq)
			return x;
	return NULL;
}

static struct inst *inst_get(struct run *R, int kind, int a, int b, int c, int seq, int n, const int *members)
{
	uint64_t h = rp_key_hash(kind, a, b, c, seq) % NBUCKETS;
	struct inst *x = inst_find(R, kind, a, b, c, seq);
	if (x)
		return x;
	x = calloc(1, sizeof *x);
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

void rp_inst_drop(struct run *R, struct inst *x)
{
	uint64_t h = rp_key_hash(x->kind, x->a, x->b, x->c, x->seq) % NBUCKETS;
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

/* ---- executing one op ---- */

/* An op's wait for its after= labels. Actors run one at a time, so the
   check and the wait need no lock: a stream that has to wait names the label
   (waiting_label) and sleeps on its own semaphore, which label_done releases
   when that label completes; a label already done costs no engine call. */
void rp_wait_labels(struct run *R, struct stream_st *s, const struct qev *q, long *pred, double *ready)
{
	struct rank_st *rk = s->rk;
	for (int i = 0; i < q->ev.nafter; i++) {
		int l = q->ev.after[i];
		while (rk->done[l] < q->need[i] && !R->err_code) {
			if (!s->lbl_sem && !(s->lbl_sem = sg_sem_init(0))) {
				rp_fail(R, SIM_EXIT_INTERNAL, "out of memory");
				return;
			}
			s->waiting_label = l;
			sg_sem_acquire(s->lbl_sem);
		}
		s->waiting_label = -1;
		long sp = rk->lbl_span[l];
		if (rp_span_end(R, sp) > *ready) {
			*ready = rp_span_end(R, sp);
			*pred = sp;
		}
	}
}

static void label_done(struct stream_st *s, const struct qev *q, long span)
{
	if (q->ev.label < 0)
		return;
	struct rank_st *rk = s->rk;
	rk->done[q->ev.label] = q->inst;
	rk->lbl_span[q->ev.label] = span;
	rk->completed[q->ev.label]++;
	for (int i = 0; i < tr_nstreams(rk->run->t); i++) { /* wake the streams waiting for it (they check again) */
		struct stream_st *w = rk->streams[i];
		if (w && w->waiting_label == q->ev.label) {
			w->waiting_label = -1;
			sg_sem_release(w->lbl_sem);
		}
	}
}

static double jitter(struct run *R, struct rank_st *rk)
{
	if (R->o->jitter <= 0)
		return 1;
	return exp(gsl_ran_gaussian(rk->rng, R->o->jitter));
}

static void base_span(struct run *R, struct rp_span *sp, const struct stream_st *s, const struct qev *q)
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
	struct p2p_text *slot = NULL; /* send/recv: their text per (line, peer), in a fixed table */
	if (!per_line && q->ev.line >= 0 &&
	    (R->p2p_text || (R->p2p_text = calloc(P2P_TEXT_SLOTS, sizeof *R->p2p_text)))) {
		slot = &R->p2p_text[((unsigned)q->ev.line * 2654435761u ^ (unsigned)q->ev.peer) % P2P_TEXT_SLOTS];
		if (slot->line == q->ev.line + 1 && slot->peer == q->ev.peer) {
			sp->text = slot->text;
			return;
		}
	}
	char text[OP_TEXT_MAX + 128];
	tr_event_format(R->t, &q->ev, text, sizeof text);
	sp->text = intern(R, text);
	if (slot && sp->text >= 0)
		*slot = (struct p2p_text){q->ev.line + 1, q->ev.peer, sp->text};
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

/* The device model's time of a device op: every expansion of a trace line
   issues the same op, so the answer is kept per line (the model's own memo
   formats and hashes the op, which costs more than the replay of it), in a
   fixed table of LINE_SLOTS slots by line number: a generated trace fits,
   a long flat one only costs misses. */
static int predict(struct run *R, const struct tr_event *ev, struct dm_result *r, char *why, size_t whylen)
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
 * communicator owns the links it uses (rp_exclusive_comms), every other member
 * of its group is folded into this rank (no one to meet), and its time
 * alone is known. Returns its plan, or NULL.
 */
static const struct cplan *alone_call(struct run *R, const struct rank_st *rk, const struct tr_event *ev)
{
	int gid;
	if (!R->excl_comm || !R->excl_comm[ev->comm] || tr_comm_group(R->t, ev->comm, rk->rank, NULL, 0, &gid) < 2)
		return NULL;
	const struct cplan *p = rp_plan_find(R, ev, gid);
	return p && p->alone_known && p->nrep == 1 ? p : NULL;
}

/* Ops a batch of exec_ops can hold: device ops and alone_call collectives. */
int rp_merges(struct run *R, const struct stream_st *s, const struct qev *q)
{
	return q->ev.kind == TK_OP || (q->ev.kind == TK_COLL && alone_call(R, s->rk, &q->ev));
}

/* Device ops, and collectives that run alone (alone_call): durations from
   the model and the memoized plans; a run of them is one sleep. */
void rp_exec_ops(struct run *R, struct stream_st *s, struct qev *first, long pred)
{
	struct qev *batch[QDEPTH];
	int nb = 0;
	batch[nb++] = first;
	/* merge the following device ops the queue already holds, as long as
	   nothing waits on them and they wait on nothing */
	while (first->ev.label < 0 && s->n > 0 && nb < QDEPTH) {
		struct qev *nx = &s->q[s->head];
		if (nx->ev.nafter > 0 || !rp_merges(R, s, nx))
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
		base_span(R, &sp, s, batch[i]);
		sp.t0 = sp.arrive = t;
		sp.pred = last;
		const struct cplan *cp = batch[i]->ev.kind == TK_COLL ? alone_call(R, s->rk, &batch[i]->ev) : NULL;
		if (cp) {
			s->rk->coll_seq[batch[i]->ev.comm]++;
			sp.t1 = t + cp->alone_s;
			sp.bytes = cp->p.bus_bytes;
			sp.algo = (signed char)cp->p.algo;
			sp.proto = (signed char)cp->p.proto;
			assert(cp->alone_s >= 0);
			last = stream_span(R, s, batch[i], &sp);
			t += cp->alone_s;
			total += cp->alone_s;
			R->r->events++;
			continue;
		}
		struct dm_result dr;
		char why[TR_MSG_MAX];
		if (predict(R, &batch[i]->ev, &dr, why, sizeof why)) {
			rp_fail(R, SIM_EXIT_TRACE, "%s:%d: %s", tr_path(R->t), batch[i]->ev.line, why);
			s->taken += nb - 1;
			return;
		}
		double d = dr.time_s * jitter(R, s->rk);
		assert(d >= 0); /* invariant 2 */
		sp.t1 = t + d;
		sp.gap_s = (float)fmin(dr.gap_s, d);
		sp.flops = dr.flops;
		sp.bytes = dr.bytes_dram;
		sp.bound = (signed char)dr.bound;
		if (batch[i]->ev.op.dtype >= 0 && batch[i]->ev.op.dtype < DT_COUNT)
			R->flops_by_dtype[batch[i]->ev.op.dtype] += dr.flops;
		last = stream_span(R, s, batch[i], &sp);
		t += d;
		total += d;
		R->r->events++;
	}
	if (total > 0) {
		sg_actor_sleep_for(total);
		R->r->sg_activities++;
		/* the batch ends when the sleep does (the sum of the times above can
		   differ from it in the last bit): what follows starts exactly at
		   its end, so the critical path runs on through it; the last op
		   started before that end (invariant 2: a kernel takes at least
		   its launch, far above that last bit) */
		double end = simgrid_get_clock();
		assert(last < 0 || end >= R->r->spans[last].t0);
		if (last >= 0)
			R->r->spans[last].t1 = end;
	}
	/* only the last op of a batch can carry a label (see the loop above) */
	label_done(s, batch[nb - 1], last);
	s->taken += nb - 1; /* their slots are freed with first's (stream_main) */
	rp_progress(R);
}

void rp_exec_delay(struct run *R, struct stream_st *s, struct qev *q, long pred)
{
	struct rp_span sp;
	base_span(R, &sp, s, q);
	sp.t0 = sp.arrive = simgrid_get_clock();
	double t = tr_delay_seconds(&q->ev, R->chip->dram.bw_Bps, R->matrix_fp16);
	if (t > 0) {
		sg_actor_sleep_for(t);
		R->r->sg_activities++;
	}
	sp.t1 = simgrid_get_clock();
	sp.pred = pred;
	stream_span(R, s, q, &sp);
	R->r->events++;
	label_done(s, q, s->last_span);
}

/* Checks a later arriver's op against the first one's. */
static int same_coll(struct run *R, const struct inst *x, const struct tr_event *ev, int rank)
{
	if (x->ev.coll == ev->coll && x->ev.bytes == ev->bytes && x->ev.root == ev->root && x->ev.algo == ev->algo &&
	    !memcmp(&x->ev.route, &ev->route, sizeof ev->route))
		return 1;
	char a[256], b[256];
	tr_event_format(R->t, &x->ev, a, sizeof a);
	tr_event_format(R->t, ev, b, sizeof b);
	rp_fail(
	    R, SIM_EXIT_TRACE,
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
static int rendezvous(struct run *R, struct stream_st *s, struct inst *x, double arrive, long pred)
{
	int i = member_index(x, s->rk->rank);
	assert(i >= 0 && !x->in[i] && x->arrived < x->n); /* invariant 4: a member arrives once */
	x->in[i] = 1;
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
static void end_transfer(struct run *R, struct stream_st *s, const struct qev *q, struct inst *x, struct rp_span *sp,
                         long pred)
{
	sp->t0 = x->t_all;
	sp->t1 = simgrid_get_clock();
	sp->pred = x->t_all > sp->arrive ? x->pred : pred;
	if (x->left == 0)
		x->t_end = sp->t1;
	assert(sp->t1 == x->t_end); /* invariant 4: the members end together */
	stream_span(R, s, q, sp);
	R->r->events++;
	label_done(s, q, s->last_span);
	if (++x->left == x->n)
		rp_inst_drop(R, x);
}

/* The rendezvous of collective ev (call seq) over the n members of group
   gid, made by its first member to arrive: folded members arrive with their
   representative, so only replayed members meet; the plan covers the whole
   group (x->full). NULL when memory runs out. */
static struct inst *coll_inst(struct run *R, const struct tr_event *ev, int rank, int n, int gid, int seq)
{
	int *members = malloc((size_t)n * sizeof *members), *reps = members, nrep = n;
	if (!members)
		return NULL;
	tr_comm_group(R->t, ev->comm, rank, members, n, NULL);
	if (R->is_rep) {
		if (!(reps = malloc((size_t)n * sizeof *reps))) {
			free(members);
			return NULL;
		}
		nrep = 0;
		for (int i = 0; i < n; i++)
			if (R->is_rep[members[i]])
				reps[nrep++] = members[i];
	}
	struct inst *x = inst_get(R, TK_COLL, ev->comm, gid, 0, seq, nrep, reps);
	if (x && nrep < n) {
		x->full = members; /* kept: the plan's members */
		x->nfull = n;
		members = NULL;
	}
	if (reps != members)
		free(reps);
	free(members);
	return x;
}

void rp_exec_coll(struct run *R, struct stream_st *s, struct qev *q, long pred)
{
	struct rank_st *rk = s->rk;
	struct tr_event *ev = &q->ev;
	if (alone_call(R, rk, ev)) {
		rp_exec_ops(R, s, q, pred);
		return;
	}
	int gid = 0, n = tr_comm_group(R->t, ev->comm, rk->rank, NULL, 0, &gid);
	double arrive = simgrid_get_clock();
	struct rp_span sp;
	base_span(R, &sp, s, q);
	sp.arrive = arrive;
	int seq = rk->coll_seq[ev->comm]++;
	/* the first member to arrive makes the rendezvous (from the group's
	   members: O(group)); the others find it (O(1)) */
	struct inst *x = n > 1 ? inst_find(R, TK_COLL, ev->comm, gid, 0, seq) : NULL;
	if (n > 1 && !x && !(x = coll_inst(R, ev, rk->rank, n, gid, seq))) {
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory");
		return;
	}
	if (!x) { /* a group of one: nothing to move */
		sp.t0 = sp.t1 = arrive;
		sp.pred = pred;
		stream_span(R, s, q, &sp);
		R->r->events++;
		label_done(s, q, s->last_span);
		return;
	}
	if (x->arrived == 0) {
		x->ev = *ev;
		x->first_rank = rk->rank;
	} else if (!same_coll(R, x, ev, rk->rank)) {
		return;
	}
	int last = rendezvous(R, s, x, arrive, pred);
	if (last < 0)
		return;
	if (last) {
		x->plan =
		    x->full ? rp_plan_get(R, ev, gid, x->full, x->nfull) : rp_plan_get(R, ev, gid, x->members, x->n);
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
			rp_plan_run(R, cp);
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
	end_transfer(R, s, q, x, &sp, pred);
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

void rp_exec_p2p(struct run *R, struct stream_st *s, struct qev *q, long pred)
{
	struct rank_st *rk = s->rk;
	struct tr_event *ev = &q->ev;
	int send = ev->kind == TK_SEND;
	int src = send ? rk->rank : ev->peer, dst = send ? ev->peer : rk->rank;
	int seq = p2p_seq(rk, ev->peer, ev->tag, send);
	int pair[2] = {src < dst ? src : dst, src < dst ? dst : src};
	struct inst *x = seq < 0 ? NULL : inst_get(R, TK_SEND, src, dst, (int)ev->tag, seq, 2, pair);
	if (!x) {
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory");
		return;
	}
	double arrive = simgrid_get_clock();
	struct rp_span sp;
	base_span(R, &sp, s, q);
	sp.arrive = arrive;
	if (x->arrived == 0) {
		x->ev = *ev;
		x->first_rank = rk->rank;
	} else if (x->ev.bytes != ev->bytes) {
		rp_fail(
		    R, SIM_EXIT_TRACE,
		    "%s:%d: rank %d %s %g bytes (tag %ld) but rank %d %s %g bytes (line %d): a send and its recv must "
		    "have the same size",
		    tr_path(R->t), ev->line, rk->rank, send ? "sends" : "receives", ev->bytes, ev->tag, x->first_rank,
		    send ? "receives" : "sends", x->ev.bytes, x->ev.line);
		return;
	}
	int last = rendezvous(R, s, x, arrive, pred);
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
	end_transfer(R, s, q, x, &sp, pred);
}
