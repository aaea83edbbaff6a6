/*
 * replay.c -- trace replay on SimGrid (see replay.h for the model).
 *
 * Actors: per rank a host actor ("hR") that expands the trace lazily and
 * pushes ops into per-stream queues (256 deep, like a launch queue), and
 * per used stream an executor ("rRsS"); the executor that frees a slot of
 * a full queue carries the host's expansion on (host_pump). Executors wait
 * for after= labels on semaphores of their own, released by the op that
 * completes the label (rp_wait_labels); collectives and send/recv meet in
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
 * The run's state is one struct run (replay_int.h), passed as R. This file
 * has the actors (a rank's host, its streams), the setup and the deadlock
 * report; executing one op (spans, rendezvous, device ops, collectives,
 * send/recv) is replay_exec.c's; the collective plans are in
 * replay_plan.c, what may be skipped (folded ranks, collectives that run
 * alone) in replay_fold.c, iterations of repeats in a steady state in
 * replay_steady.c.
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
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xbt/config.h>
#include <xbt/log.h>

/* ---- actors ---- */

static void free_slots(struct stream_st *s, int k);

/* Runs one queued event on stream s: waits for its stream predecessor and
   its after= edges, then executes it. */
static void stream_exec(struct run *R, struct stream_st *s, struct qev *q)
{
	s->cur = q;
	long pred = s->last_span;
	double ready = rp_span_end(R, pred);
	if (q->issued > ready) {
		ready = q->issued;
		pred = -1;
	}
	rp_wait_labels(R, s, q, &pred, &ready);
	if (!R->err_code)
		switch (q->ev.kind) {
		case TK_OP: rp_exec_ops(R, s, q, pred); break;
		case TK_COLL: rp_exec_coll(R, s, q, pred); break;
		case TK_SEND:
		case TK_RECV: rp_exec_p2p(R, s, q, pred); break;
		case TK_DELAY: rp_exec_delay(R, s, q, pred); break;
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
		free_slots(s, 1 + s->taken);
		s->taken = 0;
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
		s->taken = 0; /* (no slots to free: the rank's own actor fills this queue) */
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

/* Queues q on s, which has room (invariant 6), and wakes s's executor if it
   waits for an op. */
static void enqueue(struct stream_st *s, const struct qev *q)
{
	assert(s->n < s->cap && s->used < QDEPTH); /* invariant 6 */
	s->q[(s->head + s->n) % s->cap] = *q;
	s->n++;
	s->used++;
	if (s->cons_wait) {
		s->cons_wait = 0;
		sg_sem_release(s->items);
	}
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

/*
 * The host's next op, into rk->next (has_next): 1; 0 at the trace's end or
 * when the run failed; RP_STEADY_RUN_QUEUE (inline streams) before a steady
 * state skips; RP_STEADY_NEED_HOST (may_block 0) when the steady state's
 * next step blocks, which only the host actor may do. Marks and memory
 * statements are taken on the way. The op is issued now (its issue time,
 * the instances of its after= labels and of its own label are fixed here,
 * as a launch fixes them), though its queue may have no room yet.
 */
static int fetch(struct run *R, struct rank_st *rk, int may_block)
{
	char why[TR_MSG_MAX];
	struct qev *q = &rk->next;
	for (;;) {
		memset(q, 0, sizeof *q);
		int rc = R->steady ? rp_steady_next(R, rk, q, why, sizeof why, may_block)
		                   : tr_next(rk->cur, &q->ev, why, sizeof why);
		if (rc == RP_STEADY_RUN_QUEUE || rc == RP_STEADY_NEED_HOST)
			return rc;
		if (rc < 0) {
			rp_fail(R, SIM_EXIT_TRACE, "%s", why);
			return 0;
		}
		if (rc == 0 || R->err_code)
			return 0;
		if (q->ev.kind == TK_MARK) {
			rk->mark = (short)q->ev.mark;
			continue;
		}
		if (q->ev.kind == TK_MEM) {
			if (set_memory(R, rk, &q->ev))
				return 0;
			continue;
		}
		break;
	}
	q->mark = rk->mark;
	q->issued = simgrid_get_clock();
	for (int i = 0; i < q->ev.nafter; i++) {
		q->need[i] = rk->issued[q->ev.after[i]];
		if (q->need[i] == 0) {
			rp_fail(R, SIM_EXIT_TRACE, "%s:%d: rank %d: after=%s waits for an op this rank never issued",
			        tr_path(R->t), q->ev.line, rk->rank, tr_label_name(R->t, q->ev.after[i]));
			return 0;
		}
	}
	if (q->ev.label >= 0)
		q->inst = ++rk->issued[q->ev.label];
	if (!stream_get(R, rk, q->ev.stream))
		return 0;
	R->issued_ops++;
	rk->has_next = 1;
	return 1;
}

/*
 * A rank's host with a queue per stream: expands the trace into the queues
 * until the next op's queue is full (PUMP_BLOCKED: the op waits in
 * rk->next, its stream's prod_wait set), until every stream has its end
 * queued (PUMP_END: the trace ended or the run failed), or, with may_block
 * 0, until a step only the host actor may take (PUMP_HOST).
 *
 * The host actor pumps, and sleeps while the pump is blocked; the executor
 * that frees a slot in the full queue pumps on itself (free_slots), at
 * the same simulated time the woken host would, and wakes the host only for
 * PUMP_HOST and PUMP_END. Without that, a host whose queue stays full woke
 * for every op a stream finished: an engine call and two context switches
 * an op, about 15% of the replay of a long pipeline.
 */
enum { PUMP_BLOCKED, PUMP_HOST, PUMP_END };

static int host_pump(struct run *R, struct rank_st *rk, int may_block)
{
	int ns = tr_nstreams(R->t);
	while (!rk->pump_done) {
		if (!rk->has_next && rk->end_next < 0) {
			int rc = fetch(R, rk, may_block);
			if (rc == RP_STEADY_NEED_HOST)
				return PUMP_HOST;
			assert(rc == 0 || rc == 1); /* RP_STEADY_RUN_QUEUE: inline streams only */
			if (rc == 0)
				rk->end_next = 0;
		}
		if (!rk->has_next) { /* ending: an end for every stream the rank used */
			while (rk->end_next < ns && !rk->streams[rk->end_next])
				rk->end_next++;
			if (rk->end_next == ns) {
				rk->pump_done = 1;
				break;
			}
			memset(&rk->next, 0, sizeof rk->next);
			rk->next.ev.kind = (enum tr_kind)END_KIND;
			rk->next.ev.stream = rk->end_next++;
			rk->has_next = 1;
		}
		struct stream_st *s = rk->streams[rk->next.ev.stream];
		if (s->used == QDEPTH) {
			s->prod_wait = 1;
			rk->host_state = "waiting for a free slot in a stream's queue";
			return PUMP_BLOCKED;
		}
		rk->host_state = NULL;
		enqueue(s, &rk->next);
		rk->has_next = 0;
	}
	return PUMP_END;
}

/* k slots of stream s's queue freed (its executor is done with their ops):
   the host's expansion goes on if it waited for one. */
static void free_slots(struct stream_st *s, int k)
{
	if (!s->items || k <= 0)
		return;
	s->used -= k;
	assert(s->used >= 0);
	if (!s->prod_wait)
		return;
	s->prod_wait = 0;
	struct rank_st *rk = s->rk;
	if (host_pump(rk->run, rk, 0) != PUMP_BLOCKED)
		sg_sem_release(rk->wake);
}

/* A rank's host with one stream, which its own actor runs (no queue
   between actors): queues device ops that can merge into one sleep and
   runs the queue when anything else comes (or it is full). */
static void host_inline(struct run *R, struct rank_st *rk)
{
	int rc;
	while ((rc = fetch(R, rk, 1)) != 0) {
		if (rc == RP_STEADY_RUN_QUEUE) { /* a steady state skips from here: run what is queued first */
			for (int i = 0; i < tr_nstreams(R->t); i++)
				if (rk->streams[i])
					run_queue(R, rk->streams[i]);
			continue;
		}
		const struct qev *q = &rk->next;
		struct stream_st *s = rk->streams[q->ev.stream];
		rk->has_next = 0;
		if (s->n == s->cap && grow_queue(R, s))
			break;
		s->q[s->n++] = *q; /* run_queue leaves it empty with head 0 */
		if (q->ev.label >= 0 || q->ev.nafter > 0 || s->n == QDEPTH || !rp_merges(R, s, q))
			run_queue(R, s);
	}
	for (int i = 0; i < tr_nstreams(R->t); i++)
		if (rk->streams[i]) {
			run_queue(R, rk->streams[i]);
			rk->streams[i]->done = !R->err_code;
		}
}

static void host_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct rank_st *rk = sg_actor_self_get_data();
	struct run *R = rk->run;
	if (R->inline_streams)
		host_inline(R, rk);
	else
		while (host_pump(R, rk, 1) != PUMP_END)
			sg_sem_acquire(rk->wake);
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
				if (rk->streams[s]->items)
					sg_sem_destroy(rk->streams[s]->items);
				if (rk->streams[s]->lbl_sem)
					sg_sem_destroy(rk->streams[s]->lbl_sem);
				free(rk->streams[s]->q);
				free(rk->streams[s]);
			}
		if (rk->wake)
			sg_sem_destroy(rk->wake);
		free(rk->streams);
	}
	for (int h = 0; h < NBUCKETS; h++) /* rendezvous a deadlock left open */
		while (R->tab[h])
			rp_inst_drop(R, R->tab[h]);
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
	free(R->p2p_text);
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
		rk->end_next = -1;
		rk->wake = sg_sem_init(0);
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
	r->wall_s = rp_wall_now(R);
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
