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
 * The run's state is one struct run (replay_int.h), passed as R; the
 * collective plans are in replay_plan.c, what may be skipped (folded ranks,
 * collectives that run alone) in replay_fold.c, iterations of repeats in a
 * steady state in replay_steady.c.
 *
 * Invariants (assert()ed: live in the Debug and sanitizer builds):
 *  1. Every op a host actor queues is executed once and leaves one span: at
 *     the end of a run, spans = ops executed = ops queued (check_end); the
 *     ops of iterations a steady state derived are neither, and are added to
 *     the ops executed after that check.
 *  2. Every span has arrive <= t0 <= t1 (add_span): no duration is negative
 *     (device-op times, collective latencies, times alone), and a batch's
 *     sleep ends after its last op started.
 *  3. A stream runs its ops in issue order, one at a time: each starts no
 *     earlier than its predecessor on the stream ended (stream_span), so a
 *     stream's times only grow.
 *  4. Every member arrives at a rendezvous once; the last to arrive plays
 *     the transfer; all members end at the same time (end_transfer).
 *  5. Every collective and send/recv completes: at the end no rendezvous is
 *     open (each is dropped when its last member leaves), so every flow of
 *     every phase ran to its end (check_end).
 *  6. A stream's queue holds at most QDEPTH ops (push); at the end every
 *     stream is done and its queue empty (check_end).
 *  7. Every labelled op completes once: at the end each label's completions
 *     equal its issues on every replayed rank (check_end). (rank_st.done
 *     is the instance that completed last, not a count: two ops with one
 *     label on two streams may complete out of issue order.)
 * When simgrid_run() returns every actor has finished, or the run is a
 * deadlock and is reported as such (a failed run skips check_end).
 */
#include "replay_int.h"

#include "outfile.h"
#include "platform.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
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
#include <xbt/config.h>
#include <xbt/log.h>

static double wall_now(struct run *R)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - R->wall0.tv_sec) + 1e-9 * (double)(ts.tv_nsec - R->wall0.tv_nsec);
}

static void progress(struct run *R)
{
	if (!R->o->progress || (R->r->events & 1023) || !progress_due(&R->prog))
		return;
	progress_print(&R->prog, "%.1f s wall, %ld ops replayed, simulated time %.6g s", wall_now(R), R->r->events,
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
static double span_end(struct run *R, long i)
{
	return i >= 0 ? R->r->spans[i].t1 : i == -1 ? -1 : rp_steady_end(R, -2 - i);
}

/* Records the span of the op q stream s just ran: it starts no earlier than
   the stream's previous op ended (invariant 3). */
static long stream_span(struct run *R, struct stream_st *s, const struct qev *q, const struct rp_span *sp)
{
	assert(sp->t0 >= span_end(R, s->last_span));
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

static void inst_drop(struct run *R, struct inst *x)
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

static void wait_labels(struct run *R, struct stream_st *s, const struct qev *q, long *pred, double *ready)
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
		if (span_end(R, sp) > *ready) {
			*ready = span_end(R, sp);
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
	rk->completed[q->ev.label]++;
	sg_cond_notify_all(rk->cv);
	sg_mutex_unlock(rk->mu);
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
	char text[OP_TEXT_MAX + 128];
	tr_event_format(R->t, &q->ev, text, sizeof text);
	sp->text = intern(R, text);
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
	assert(s->used >= 0);
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
static int merges(struct run *R, const struct stream_st *s, const struct qev *q)
{
	return q->ev.kind == TK_OP || (q->ev.kind == TK_COLL && alone_call(R, s->rk, &q->ev));
}

/* Device ops, and collectives that run alone (alone_call): durations from
   the model and the memoized plans; a run of them is one sleep. */
static void exec_ops(struct run *R, struct stream_st *s, struct qev *first, long pred)
{
	struct qev *batch[QDEPTH];
	int nb = 0;
	batch[nb++] = first;
	/* merge the following device ops the queue already holds, as long as
	   nothing waits on them and they wait on nothing */
	while (first->ev.label < 0 && s->n > 0 && nb < QDEPTH) {
		struct qev *nx = &s->q[s->head];
		if (nx->ev.nafter > 0 || !merges(R, s, nx))
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
			free_slots(s, nb - 1);
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
	free_slots(s, nb - 1);
	progress(R);
}

static void exec_delay(struct run *R, struct stream_st *s, struct qev *q, long pred)
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
		inst_drop(R, x);
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

static void exec_coll(struct run *R, struct stream_st *s, struct qev *q, long pred)
{
	struct rank_st *rk = s->rk;
	struct tr_event *ev = &q->ev;
	if (alone_call(R, rk, ev)) {
		exec_ops(R, s, q, pred);
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

static void exec_p2p(struct run *R, struct stream_st *s, struct qev *q, long pred)
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

/* ---- actors ---- */

/* Runs one queued event on stream s: waits for its stream predecessor and
   its after= edges, then executes it. */
static void stream_exec(struct run *R, struct stream_st *s, struct qev *q)
{
	s->cur = q;
	long pred = s->last_span;
	double ready = span_end(R, pred);
	if (q->issued > ready) {
		ready = q->issued;
		pred = -1;
	}
	wait_labels(R, s, q, &pred, &ready);
	if (!R->err_code)
		switch (q->ev.kind) {
		case TK_OP: exec_ops(R, s, q, pred); break;
		case TK_COLL: exec_coll(R, s, q, pred); break;
		case TK_SEND:
		case TK_RECV: exec_p2p(R, s, q, pred); break;
		case TK_DELAY: exec_delay(R, s, q, pred); break;
		default: break;
		}
	s->cur = NULL;
}

static void stream_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct stream_st *s = sg_actor_self_get_data();
	struct run *R = s->rk->run;
	s->waiting_label = -1;
	for (;;) {
		while (s->n == 0) {
			s->cons_wait = 1;
			if (R->steady)
				rp_steady_idle(R, s);
			sg_sem_acquire(s->items);
		}
		struct qev *q = &s->q[s->head];
		s->head = (s->head + 1) % s->cap;
		s->n--;
		if (q->ev.kind == END_KIND || R->err_code)
			break;
		stream_exec(R, s, q);
		free_slots(s, 1);
		if (R->err_code)
			break;
	}
	s->done = 1;
}

static struct stream_st *stream_get(struct run *R, struct rank_st *rk, int idx)
{
	if (rk->streams[idx])
		return rk->streams[idx];
	struct stream_st *s = calloc(1, sizeof *s);
	int cap = R->inline_streams ? 4 : QDEPTH; /* an inline queue grows as ops merge */
	if (!s || !(s->q = calloc((size_t)cap, sizeof *s->q))) {
		free(s);
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory");
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
	rp_actor_start(name, R->hosts[rk->rank], s, stream_main);
	return s;
}

/* Runs what a rank's inline stream has queued (no semaphores: the rank's
   actor fills the queue and empties it). */
static void run_queue(struct run *R, struct stream_st *s)
{
	while (s->n > 0 && !R->err_code) {
		struct qev *q = &s->q[s->head];
		s->head = (s->head + 1) % s->cap;
		s->n--;
		stream_exec(R, s, q);
	}
	s->head = 0;
}

static int grow_queue(struct run *R, struct stream_st *s)
{
	struct qev *q = realloc(s->q, 2 * (size_t)s->cap * sizeof *q);
	if (!q) {
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory");
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
	assert(s->n < s->cap && s->used < QDEPTH); /* invariant 6 */
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
   peak, and the first rank that no longer fits its device (the step is
   still timed, so a user sees how fast it would be). */
static int set_memory(struct run *R, struct rank_st *rk, const struct tr_event *ev)
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
	if (!R->r->nofit[0]) /* the first: later ones follow from it or repeat it */
		snprintf(
		    R->r->nofit, sizeof R->r->nofit,
		    "%.300s:%d: rank %d does not fit: it needs %.1f GiB of device memory but %.300s has %.1f GiB (%s)",
		    tr_path(R->t), ev->line, rk->rank, total / 1073741824.0, R->chip->path, cap / 1073741824.0, list);
	return 0;
}

static void host_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct rank_st *rk = sg_actor_self_get_data();
	struct run *R = rk->run;
	char why[TR_MSG_MAX];
	struct qev q;
	for (;;) {
		memset(&q, 0, sizeof q);
		int rc =
		    R->steady ? rp_steady_next(R, rk, &q, why, sizeof why) : tr_next(rk->cur, &q.ev, why, sizeof why);
		if (rc == RP_STEADY_RUN_QUEUE) { /* a steady state skips from here: run what is queued first */
			for (int i = 0; i < tr_nstreams(R->t); i++)
				if (rk->streams[i])
					run_queue(R, rk->streams[i]);
			continue;
		}
		if (rc < 0) {
			rp_fail(R, SIM_EXIT_TRACE, "%s", why);
			break;
		}
		if (rc == 0 || R->err_code)
			break;
		if (q.ev.kind == TK_MARK) {
			rk->mark = (short)q.ev.mark;
			continue;
		}
		if (q.ev.kind == TK_MEM) {
			if (set_memory(R, rk, &q.ev))
				break;
			continue;
		}
		q.mark = rk->mark;
		q.issued = simgrid_get_clock();
		for (int i = 0; i < q.ev.nafter; i++) {
			q.need[i] = rk->issued[q.ev.after[i]];
			if (q.need[i] == 0) {
				rp_fail(R, SIM_EXIT_TRACE,
				        "%s:%d: rank %d: after=%s waits for an op this rank never issued",
				        tr_path(R->t), q.ev.line, rk->rank, tr_label_name(R->t, q.ev.after[i]));
				break;
			}
		}
		if (R->err_code)
			break;
		if (q.ev.label >= 0)
			q.inst = ++rk->issued[q.ev.label];
		struct stream_st *s = stream_get(R, rk, q.ev.stream);
		if (!s)
			break;
		R->issued_ops++;
		if (!R->inline_streams) {
			push(s, &q);
			continue;
		}
		/* One stream: queue device ops that can merge into one sleep and run
		   the queue when anything else comes (or it is full). */
		if (s->n == s->cap && grow_queue(R, s))
			break;
		s->q[s->n++] = q; /* run_queue leaves it empty with head 0 */
		if (q.ev.label >= 0 || q.ev.nafter > 0 || s->n == QDEPTH || !merges(R, s, &q))
			run_queue(R, s);
	}
	if (R->inline_streams) {
		for (int i = 0; i < tr_nstreams(R->t); i++)
			if (rk->streams[i]) {
				run_queue(R, rk->streams[i]);
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

static int engine_init(int guard_pages)
{
	/* SimGrid runs one engine per process, and its C API cannot tell whether
	   simgrid_init() already ran (a second call aborts): this flag is the
	   only file-static mutable state of sim/cluster/ (a replay's own state
	   is its struct run). */
	static int inited; /* static-ok: one SimGrid engine per process, see above */
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
	if (!guard_pages) { /* see actor_budget */
		sg_cfg_set_int("contexts/guard-size", 0);
#if defined(__GLIBC__) && !defined(SIM_SANITIZE_BUILD)
		/* The stacks are then SimGrid's calloc'd heap memory, and glibc's
		   calloc clears only memory it reuses: a chunk carved past the old
		   top of the heap is fresh from the kernel, known to be zero. With
		   no top padding each stack is such a chunk, so its pages are not
		   written, nor resident, until the actor uses them: a 65,536-rank
		   all-reduce took 4.9 GB and 27 s with every stack cleared, 1.6 GB
		   and 10-12 s without (bench/scale_ranks.sh; padding of 8 or 32 KiB,
		   15 and 23 s). The heap then grows by each request, one system
		   call each, which costs less. One replay per process: the setting
		   stays. */
		mallopt(M_TOP_PAD, 0);
#endif
	}
#ifdef SIM_SANITIZE_BUILD
	sg_cfg_set_string("contexts/factory", "thread");
#endif
	if (!getenv("SIM_SIMGRID_LOG")) { /* developers: SIM_SIMGRID_LOG=1 shows SimGrid's own messages */
		xbt_log_control_set("root.thres:critical");
		xbt_log_control_set("root.app:file:/dev/null");
	}
	return 0;
}

/* The most memory mappings a process may hold (vm.max_map_count; Linux's
   default when it cannot be read). */
static long max_map_count(void)
{
	long n = 0;
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n > 0 ? n : 65530;
}

/*
 * What the replay will ask of the machine, bounded from the trace before
 * anything runs (after folding): the ops every replayed rank expands to
 * (--max-ops) and the SimGrid actors, one per replayed rank and one per
 * stream of a rank that has several (--max-actors), and what that bound
 * leaves to the pool that runs large collectives' pair tasks (run_pairs,
 * R->pw_max; a smaller pool costs time, never a result).
 *
 * Each actor has a stack of contexts/stack-size (64 KiB) and, by default, a
 * guard page below it that turns an overflow into a crash: two memory
 * mappings per actor, of the vm.max_map_count (65530 by default) Linux
 * allows a process, so 32 k actors made SimGrid abort. Where the actors and
 * a pool of 2 per PAIR_CHUNK ranks do not fit with 8192 mappings to spare,
 * the stacks go without guard (*guard_pages 0): then they are heap memory
 * that needs no mapping each (engine_init keeps glibc from clearing it, so
 * about 10 KiB of each is resident, not 64); the deepest stack the tests reach is about 15 KiB. With
 * thread contexts (the sanitizer build) each actor is a thread whose stack
 * has mappings of its own, and a replay that needs more is refused.
 * Returns 0, or the exit code of a refusal with its one line in why.
 */
static int actor_budget(struct run *R, char *why, size_t whylen, int *guard_pages)
{
	const struct trace *t = R->t;
	const struct rp_options *o = R->o;
	int reps = 0;
	double ops = 0, budget = o->max_ops > 0 ? o->max_ops : RP_MAX_OPS;
	for (int i = 0; i < R->nranks && ops <= budget; i++)
		if (!R->is_rep || R->is_rep[i]) {
			reps++;
			ops += tr_ops_of_rank(t, i);
		}
	if (ops > budget) {
		snprintf(why, whylen,
		         "%s: the replay would run more than %.4g ops (%.4g on its first %d replayed ranks; --max-ops)",
		         tr_path(t), budget, ops, reps);
		return SIM_EXIT_TRACE;
	}
	double per_rank = 1 + (R->inline_streams ? 0 : tr_nstreams(t));
	double actors = reps * per_rank, pool = 2.0 * (R->nranks / PAIR_CHUNK + 1);
	double amax = o->max_actors > 0 ? o->max_actors : RP_MAX_ACTORS;
	if (actors > amax) {
		snprintf(why, whylen,
		         "%s: the replay would need %.0f SimGrid actors (%d replayed ranks x %.0f), more than %.4g "
		         "(--max-actors)",
		         tr_path(t), actors, reps, per_rank, amax);
		return SIM_EXIT_TRACE;
	}
	double maps = (double)max_map_count(), room;
	*guard_pages = 2 * (actors + pool) + 8192 <= maps;
#ifdef SIM_SANITIZE_BUILD
	if (!*guard_pages) {
		snprintf(
		    why, whylen,
		    "%s: the replay would need %.0f SimGrid actors, more than this build's thread contexts can map "
		    "(vm.max_map_count %.0f; a build without SIM_SANITIZE runs it)",
		    tr_path(t), actors + pool, maps);
		return SIM_EXIT_TRACE;
	}
#endif
	room = amax - actors; /* the pool takes what the bound leaves, and the mappings */
	if (*guard_pages && (maps - 8192) / 2 - actors < room)
		room = (maps - 8192) / 2 - actors;
	R->pw_max = room > INT_MAX ? INT_MAX : (int)room;
	return 0;
}

static void describe_wait(struct run *R, const struct stream_st *s, char *buf, size_t len)
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

static void report_deadlock(struct run *R)
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
			describe_wait(R, s, one, sizeof one);
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
	rp_fail(R, SIM_EXIT_TRACE, "%s:%d: deadlock: %d stream%s of %d ranks cannot go on%s%s", tr_path(R->t),
	        first_line, blocked, blocked == 1 ? "" : "s", R->nranks, lines, blocked > 8 ? "; ..." : "");
}

static int dominant_dtype(struct run *R)
{
	int best = -1;
	for (int d = 0; d < DT_COUNT; d++)
		if (R->flops_by_dtype[d] > 0 && (best < 0 || R->flops_by_dtype[d] > R->flops_by_dtype[best]))
			best = d;
	return best;
}

/* The end of a run without error (invariants 1, 5, 6, 7). */
static void check_end(const struct run *R)
{
#ifndef NDEBUG
	assert(R->r->nspans == R->r->events && R->r->events == R->issued_ops);
	for (int h = 0; h < NBUCKETS; h++)
		assert(!R->tab[h]); /* every rendezvous played and left */
	for (int i = 0; i < R->nranks; i++) {
		const struct rank_st *rk = &R->ranks[i];
		if (!rk->streams)
			continue; /* folded */
		assert(rk->host_done);
		for (int l = 0; l < tr_nlabels(R->t); l++)
			assert(rk->completed[l] == rk->issued[l]);
		for (int k = 0; k < tr_nstreams(R->t); k++)
			assert(!rk->streams[k] || (rk->streams[k]->done && rk->streams[k]->n == 0));
	}
#else
	(void)R;
#endif
}

/* Frees what a replay holds (a run stopped at any point of its setup too). */
static void run_free(struct run *R)
{
	int ns = tr_nstreams(R->t) + 1;
	for (int i = 0; R->ranks && i < R->nranks; i++) {
		struct rank_st *rk = &R->ranks[i];
		if (!rk->streams)
			continue; /* folded into its representative */
		tr_cursor_free(rk->cur);
		free(rk->issued);
		free(rk->done);
		free(rk->completed);
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
		if (rk->mu)
			sg_mutex_destroy(rk->mu);
		if (rk->cv)
			sg_cond_destroy(rk->cv);
		free(rk->streams);
	}
	for (int h = 0; h < NBUCKETS; h++) /* rendezvous a deadlock left open */
		while (R->tab[h])
			inst_drop(R, R->tab[h]);
	rp_plans_free(R);
	rp_steady_free(R);
	platform_free(R->plat);
	free(R->ranks);
	free(R->hosts);
	free(R->tmp_idx);
	free(R->is_rep);
	free(R->excl_comm);
	free(R->algo_of);
	free(R->txt_hash);
	free(R->line_text);
	free(R->line_dm);
	dm_free(R->dm);
	free(R);
}

/* Writes the platform, starts the engine and one host actor per replayed
   rank, and runs. Returns 0 when the engine ran (R->err_code says how it
   went), or the exit code of a setup that failed, with why. */
static int replay(struct run *R, char *why, size_t whylen)
{
	const struct arch_chip *c = R->chip;
	const struct trace *t = R->t;
	const struct rp_options *o = R->o;
	struct rp_result *r = R->r;
	R->algo_of = malloc(((size_t)tr_nalgos(t) + 1) * sizeof *R->algo_of);
	if (!R->algo_of) {
		snprintf(why, whylen, "sim run: out of memory");
		return SIM_EXIT_INTERNAL;
	}
	if (coll_algo_resolve(t, R->algo_of, why, whylen))
		return SIM_EXIT_TRACE;
	if (platform_topo(c, R->nranks, o->ranks_per_node, &R->topo, why, whylen)) {
		char tmp[TR_MSG_MAX];
		snprintf(tmp, sizeof tmp, "%s", why);
		snprintf(why, whylen, "%s: %s", tr_path(t), tmp);
		return SIM_EXIT_TRACE;
	}
	r->topo = R->topo;
	R->hosts = calloc((size_t)R->nranks, sizeof *R->hosts);
	R->ranks = calloc((size_t)R->nranks, sizeof *R->ranks);
	R->tmp_idx = malloc((size_t)R->nranks * sizeof *R->tmp_idx);
	R->plat = platform_new(&R->topo);
	if (!R->hosts || !R->ranks || !R->tmp_idx || !R->plat) {
		snprintf(why, whylen, "sim run: out of memory for %d ranks", R->nranks);
		return SIM_EXIT_INTERNAL;
	}
	for (int i = 0; i < R->nranks; i++)
		R->tmp_idx[i] = -1;
	int nl = tr_nlabels(t) + 1, nc = tr_ncomms(t) + 1, ns = tr_nstreams(t) + 1;
	R->inline_streams = tr_nstreams(t) <= 1;
	r->mem = calloc((size_t)R->nranks, sizeof *r->mem);
	if (!r->mem || rp_fold_ranks(R, t, o) || rp_exclusive_comms(R, t, o)) {
		snprintf(why, whylen, "sim run: out of memory for %d ranks", R->nranks);
		return SIM_EXIT_INTERNAL;
	}
	int guard_pages = 1, refused = actor_budget(R, why, whylen, &guard_pages);
	if (refused)
		return refused;
	if (engine_init(guard_pages)) {
		snprintf(why, whylen, "sim run: one replay per process");
		return SIM_EXIT_INTERNAL;
	}
	if (platform_build(R->plat, R->hosts, why, whylen))
		return SIM_EXIT_INTERNAL;
	for (int i = 0; i < R->nranks; i++) {
		struct rank_st *rk = &R->ranks[i];
		rk->run = R;
		rk->rank = i;
		if (R->is_rep && !R->is_rep[i])
			continue;
		rk->cur = tr_cursor_new(t, i);
		rk->streams = calloc((size_t)ns, sizeof *rk->streams);
		rk->issued = calloc((size_t)nl, sizeof *rk->issued);
		rk->done = calloc((size_t)nl, sizeof *rk->done);
		rk->completed = calloc((size_t)nl, sizeof *rk->completed);
		rk->lbl_span = malloc((size_t)nl * sizeof *rk->lbl_span);
		rk->coll_seq = calloc((size_t)nc, sizeof *rk->coll_seq);
		if (!rk->cur || !rk->streams || !rk->issued || !rk->done || !rk->completed || !rk->lbl_span ||
		    !rk->coll_seq) {
			snprintf(why, whylen, "sim run: out of memory for %d ranks", R->nranks);
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
		rp_actor_start(name, R->hosts[i], rk, host_main);
	}
	if (rp_steady_init(R)) {
		snprintf(why, whylen, "sim run: out of memory for %d ranks", R->nranks);
		return SIM_EXIT_INTERNAL;
	}
	simgrid_run();
	r->time_s = simgrid_get_clock();
	if (!R->err_code)
		rp_steady_finish(R);
	if (!R->err_code)
		report_deadlock(R);
	if (!R->err_code)
		check_end(R);
	r->events += r->derived; /* spans = events - derived (invariant 1) */
	r->wall_s = wall_now(R);
	r->dtype = dominant_dtype(R);
	if (r->rep_of)
		for (int i = 0; i < R->nranks; i++)
			r->mem[i] = r->mem[r->rep_of[i]];
	return 0;
}

int rp_run(const struct arch_chip *c, const struct trace *t, const struct rp_options *o, struct rp_result *r, char *why,
           size_t whylen)
{
	memset(r, 0, sizeof *r);
	struct run *R = calloc(1, sizeof *R);
	if (!R) {
		snprintf(why, whylen, "sim run: out of memory");
		return SIM_EXIT_INTERNAL;
	}
	R->chip = c;
	R->matrix_fp16 = arch_peak_matrix(c, DT_FP16, 0);
	R->t = t;
	R->o = o;
	R->r = r;
	R->nranks = tr_ranks(t);
	r->ranks = R->nranks;
	r->dtype = -1;
	clock_gettime(CLOCK_MONOTONIC, &R->wall0);
	if (o->progress)
		progress_start(&R->prog, "run");
	int rc = replay(R, why, whylen);
	if (o->progress)
		progress_end(&R->prog);
	if (!rc && R->err_code) {
		snprintf(why, whylen, "%s", R->err);
		rc = R->err_code;
	}
	run_free(R);
	if (rc)
		return rc;
	/* the step ends with the last op, not with the engine's last event */
	double end = 0;
	for (long i = 0; i < r->nspans; i++)
		if (r->spans[i].t1 > end)
			end = r->spans[i].t1;
	for (int k = 0; k < r->nsteady; k++) /* and those of derived iterations */
		for (long p = 0; p < r->steady[k].n; p++)
			end = fmax(
			    end, rp_steady_time(&r->steady[k], r->steady[k].copies, r->spans[r->steady[k].tmpl[p]].t1));
	r->time_s = end;
	return 0;
}
