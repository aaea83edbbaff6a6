/*
 * replay_plan.c -- collective plans and their SimGrid tasks.
 *
 * A plan (coll_plan: algorithm, protocol, latency, flows per phase) is made
 * once per (communicator group, collective, bytes, algo=) and kept with its
 * phases prepared as SimGrid parallel tasks: hosts, a zero flops vector and
 * the byte matrix between them. A phase of more than SPLIT_FLOWS flows runs
 * as one point-to-point task per (source, destination) pair instead (see
 * SPLIT_FLOWS).
 *
 * Invariants: a prepared phase carries every byte of its flows (flows of a
 * member to itself or of no bytes never reach it: coll.c drops them);
 * R->tmp_idx is all -1 between calls.
 */
#include "replay_int.h"

#include <assert.h>
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_pair(const void *a, const void *b)
{
	const struct flow *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

static int prepare_pairs(struct run *R, struct cplan *cp, int ph)
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
		assert(f[i].src != f[i].dst && f[i].bytes > 0); /* coll_fl_add keeps no other */
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

/* What one member of a phase sends (dir 0) or receives (1), inside its node
   (kind 0) or across (1): how many flows, their fewest and most bytes. */
struct msig {
	int n[2][2];
	double lo[2][2], hi[2][2];
};

static void msig_add(struct msig *m, int dir, int kind, double bytes)
{
	if (!m->n[dir][kind]++ || bytes < m->lo[dir][kind])
		m->lo[dir][kind] = bytes;
	if (bytes > m->hi[dir][kind])
		m->hi[dir][kind] = bytes;
}

/* Whether the n flows (one per pair) make a regular phase of a group of gn
   members: every member sends and receives, and each sends and receives as
   many flows of each kind as any other, all of one size per kind. -1: out
   of memory. R->tmp_idx maps ranks to members meanwhile. */
static int regular_phase(struct run *R, const struct flow *f, int n, int gn)
{
	int m = 0, dpn = R->topo.dpn, regular = 1;
	struct msig *sig = calloc(2 * (size_t)n + 1, sizeof *sig);
	if (!sig)
		return -1;
	for (int i = 0; i < n; i++) {
		int e[2] = {f[i].src, f[i].dst}, kind = f[i].src / dpn != f[i].dst / dpn;
		for (int d = 0; d < 2; d++) {
			if (R->tmp_idx[e[d]] < 0)
				R->tmp_idx[e[d]] = m++;
			msig_add(&sig[R->tmp_idx[e[d]]], d, kind, f[i].bytes);
		}
	}
	for (int j = 0; j < m && regular; j++)
		for (int d = 0; d < 2; d++)
			for (int k = 0; k < 2; k++)
				regular &= sig[j].n[d][k] == sig[0].n[d][k] &&
				           (!sig[j].n[d][k] ||
				            (sig[j].lo[d][k] == sig[0].lo[d][k] && sig[j].hi[d][k] == sig[0].lo[d][k]));
	for (int i = 0; i < n; i++)
		R->tmp_idx[f[i].src] = R->tmp_idx[f[i].dst] = -1;
	free(sig);
	return regular && m == gn;
}

/*
 * Flows of a phase that no replayed rank can tell from the others. When
 * ranks fold (replay_fold.c: private links, a port or direct links and a NIC
 * per device, a fabric that is not oversubscribed), a group's members that
 * are not replayed do nothing else, and groups of two dims share no member
 * but the representative, so their links carry only this group's flows
 * (of this collective, and of another of the group in flight beside it, which
 * loads a replayed member's links as it loads theirs).
 *  - In a phase that is a permutation of each kind (a member sends at most
 *    one flow inside its node and one across nodes, and receives at most one
 *    of each: a ring, or a tree's chains with their rails between nodes), a
 *    flow between two folded members shares no link with this phase's other
 *    flows (a flow inside a node takes the port or direct links, one across
 *    nodes the device's own NIC and the non-blocking core): it takes the time
 *    it takes alone, or with the group's other collective, which depends only
 *    on its bytes and on whether it stays in a node (the links of a kind are
 *    alike), and a flow of the same kind that touches a replayed member, whose
 *    links carry that and other work besides, takes at least that long.
 *  - In a regular phase (regular_phase: every member sends and receives the
 *    same flows, as an all-to-all does), every member's links carry the same
 *    load from the phase, and a replayed member's carry other work besides:
 *    a flow between folded members gets at least the share a replayed
 *    member's flow of its kind and size gets, and ends no later.
 * Either way, keeping the flows that touch a replayed member, and one flow of
 * each (bytes, in a node or not) kind of the others, ends the phase when all
 * of them would have ended: a ring over 2,048 nodes plays 3 tasks, not 2,048,
 * an all-to-all over 32 members 62 and one, not 992. The phase stays a set of
 * independent pair tasks (prepare_pairs), as it would have been with all its
 * flows. Returns the flows kept, in place (-1: out of memory). Folded replays
 * only; --no-memo plays every flow (tests/run_fold.sh compares).
 */
#define PRUNE_KINDS 8
static int prune_phase(struct run *R, struct flow *f, int nf, int gn)
{
	int n = 0, perm = 1, dpn = R->topo.dpn;
	qsort(f, (size_t)nf, sizeof *f, by_pair);
	for (int i = 0; i < nf; i++) /* one flow per (source, destination) */
		if (n && f[n - 1].src == f[i].src && f[n - 1].dst == f[i].dst)
			f[n - 1].bytes += f[i].bytes;
		else
			f[n++] = f[i];
	for (int i = 0; i < n && perm; i++) { /* tmp_idx: bit 2 kind sends, bit 2 kind + 1 receives */
		int *s = &R->tmp_idx[f[i].src], *d = &R->tmp_idx[f[i].dst];
		int kind = f[i].src / dpn != f[i].dst / dpn, sends = 1 << 2 * kind, recvs = 2 << 2 * kind;
		*s = *s < 0 ? 0 : *s;
		*d = *d < 0 ? 0 : *d;
		perm = !(*s & sends) && !(*d & recvs);
		*s |= sends;
		*d |= recvs;
	}
	for (int i = 0; i < n; i++)
		R->tmp_idx[f[i].src] = R->tmp_idx[f[i].dst] = -1;
	if (!perm) {
		int reg = regular_phase(R, f, n, gn);
		if (reg <= 0)
			return reg < 0 ? -1 : n;
	}
	struct {
		double bytes;
		int in_node;
	} kind[PRUNE_KINDS];
	int nk = 0, kept = 0;
	for (int i = 0; i < n; i++) {
		int keep = R->is_rep[f[i].src] || R->is_rep[f[i].dst];
		int in_node = f[i].src / dpn == f[i].dst / dpn, k = 0;
		while (!keep && k < nk && !(kind[k].bytes == f[i].bytes && kind[k].in_node == in_node))
			k++;
		if (!keep && k == nk) { /* the first of its kind, or one of too many kinds */
			keep = 1;
			if (nk < PRUNE_KINDS)
				kind[nk].bytes = f[i].bytes, kind[nk++].in_node = in_node;
		}
		if (keep)
			f[kept++] = f[i];
	}
	return kept;
}

static int prepare_phase(struct run *R, struct cplan *cp, int ph, int group_n)
{
	const struct flow *f = cp->p.flows[ph];
	int nf = cp->p.nflows[ph], h = 0;
	if (nf > SPLIT_FLOWS) {
		if (group_n > 0 && (nf = prune_phase(R, cp->p.flows[ph], nf, group_n)) < 0)
			return -1;
		cp->p.nflows[ph] = nf;
		return prepare_pairs(R, cp, ph);
	}
	sg_host_t *hosts = malloc((size_t)(2 * nf + 1) * sizeof *hosts);
	int *ranks = malloc((size_t)(2 * nf + 1) * sizeof *ranks);
	if (!hosts || !ranks)
		goto oom;
	for (int i = 0; i < nf; i++) {
		int e[2] = {f[i].src, f[i].dst};
		assert(e[0] >= 0 && e[0] < R->nranks && e[1] >= 0 && e[1] < R->nranks);
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
	return rp_key_hash(ev->coll, ev->comm, group, ev->algo, (int)(ev->bytes / 4096)) % NBUCKETS;
}

struct cplan *rp_plan_find(struct run *R, const struct tr_event *ev, int group)
{
	for (struct cplan *p = R->plans[plan_hash(ev, group)]; p; p = p->next)
		if (p->comm == ev->comm && p->group == group && p->coll == (int)ev->coll && p->algo == (int)ev->algo &&
		    p->bytes == ev->bytes && !memcmp(&p->route, &ev->route, sizeof p->route))
			return p;
	return NULL;
}

struct cplan *rp_plan_get(struct run *R, const struct tr_event *ev, int group, const int *members, int n)
{
	struct cplan *p = rp_plan_find(R, ev, group);
	if (p)
		return p;
	uint64_t h = plan_hash(ev, group);
	p = calloc(1, sizeof *p);
	char why[TR_MSG_MAX];
	if (!p) {
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory planning a collective");
		return NULL;
	}
	int algo = ev->algo == TR_ALGO_AUTO ? COLL_AUTO : R->algo_of[ev->algo];
	if (coll_plan(&R->topo, ev->coll, algo, ev->bytes, &ev->route, members, n, 1, &p->p, why, sizeof why)) {
		rp_fail(R, SIM_EXIT_TRACE, "%s:%d: %s", tr_path(R->t), ev->line, why);
		free(p);
		return NULL;
	}
	int prune_n = R->is_rep && !R->o->no_memo ? n : 0; /* prune_phase: folded replays */
	for (int ph = 0; ph < p->p.nphases; ph++)
		if (prepare_phase(R, p, ph, prune_n)) {
			rp_fail(R, SIM_EXIT_INTERNAL, "out of memory preparing a collective over %d ranks", n);
			return NULL;
		}
	p->comm = ev->comm;
	p->group = group;
	p->coll = ev->coll;
	p->algo = ev->algo;
	p->bytes = ev->bytes;
	p->route = ev->route;
	p->next = R->plans[h];
	R->plans[h] = p;
	return p;
}

/*
 * The pair tasks of a phase (more than SPLIT_FLOWS flows) start at one
 * instant, one per pair, in the order of the pairs, and the phase ends when
 * the last one ends. SimGrid 3.32 keeps each actor's started activities in a
 * list and removes a finished one by a linear search over that list, so an
 * actor that starts k tasks pays k^2 (at 16384 ranks, 98% of the replay).
 * The caller therefore holds only the first PAIR_CHUNK tasks and hands the
 * others, a chunk each, to a chain of pool actors: the caller starts its
 * chunk and wakes the first worker, which starts its own and wakes the next,
 * so every task still starts at the same simulated instant, in the same
 * order, with the same hosts and bytes (the sharing and the times do not
 * change), and each actor's list stays short. Workers are made when the pool
 * has none idle, return to it after their chunk, and are daemons: the engine
 * ends them when the last rank's actor ends. The pool holds at most
 * R->pw_max (the actors the machine allows, see actor_budget in replay.c);
 * past that the chunks grow, which costs time, never a result.
 */
struct pjob {
	const struct cplan *cp;
	int ph;
	int left;      /* chunks handed to workers and not yet over */
	sg_sem_t done; /* released when left reaches 0 */
};

struct pworker {
	struct run *R;
	struct pworker *next; /* in the pool: the next idle one; in a job: the next of the chain */
	sg_sem_t go;          /* released when a chunk is ready */
	struct pjob *job;
	int lo, hi;    /* its pairs [lo, hi) of the job's phase */
	sg_exec_t *ex; /* cap; PAIR_CHUNK unless the pool is full */
	int cap;
};

static void start_chunk(const struct cplan *cp, int ph, int lo, int hi, sg_exec_t *ex)
{
	for (int i = lo; i < hi; i++) {
		ex[i - lo] = sg_actor_parallel_exec_init(2, cp->hosts[ph] + 2 * i, cp->flops[ph], cp->mat[ph] + 4 * i);
		sg_exec_start(ex[i - lo]);
	}
}

static void wait_chunk(sg_exec_t *ex, int n)
{
	for (int i = 0; i < n; i++)
		sg_exec_wait(ex[i]);
}

static void worker_put(struct run *R, struct pworker *w)
{
	w->job = NULL;
	w->next = R->pw_free;
	R->pw_free = w;
	R->pw_idle++;
}

static void worker_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct pworker *w = sg_actor_self_get_data();
	sg_actor_daemonize(sg_actor_self());
	for (;;) {
		sg_sem_acquire(w->go);
		struct pjob *job = w->job;
		struct pworker *next = w->next;
		start_chunk(job->cp, job->ph, w->lo, w->hi, w->ex);
		if (next)
			sg_sem_release(next->go); /* the next chunk starts after this one */
		wait_chunk(w->ex, w->hi - w->lo);
		worker_put(w->R, w);
		assert(job->left > 0);
		if (--job->left == 0)
			sg_sem_release(job->done);
	}
}

/* An idle worker of the pool, made when there is none (at most R->pw_max
   in all); NULL when memory runs out. */
static struct pworker *worker_get(struct run *R)
{
	struct pworker *w = R->pw_free;
	if (w) {
		R->pw_free = w->next;
		R->pw_idle--;
		return w;
	}
	assert(R->npw < R->pw_max);
	if (R->npw == R->cappw) {
		int cap = R->cappw ? 2 * R->cappw : 64;
		struct pworker **v = realloc(R->pw_all, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		R->pw_all = v;
		R->cappw = cap;
	}
	if (!(w = calloc(1, sizeof *w)))
		return NULL;
	w->R = R;
	w->go = sg_sem_init(0);
	R->pw_all[R->npw++] = w;
	char name[32];
	snprintf(name, sizeof name, "pairs%d", R->npw - 1);
	rp_actor_start(name, sg_host_self(), w, worker_main);
	return w;
}

/* Hands pairs [lo, hi) to a worker of the pool; -1 when memory runs out. */
static int worker_chunk(struct run *R, struct pjob *job, int lo, int hi, struct pworker ***tail)
{
	struct pworker *w = worker_get(R);
	if (!w)
		return -1;
	if (w->cap < hi - lo) {
		sg_exec_t *ex = realloc(w->ex, (size_t)(hi - lo) * sizeof *ex);
		if (!ex) {
			worker_put(R, w);
			return -1;
		}
		w->ex = ex;
		w->cap = hi - lo;
	}
	w->job = job;
	w->lo = lo;
	w->hi = hi;
	**tail = w;
	*tail = &w->next;
	job->left++;
	return 0;
}

static void run_pairs(struct run *R, struct cplan *cp, int ph)
{
	int n = cp->npairs[ph];
	/* chunks of PAIR_CHUNK; larger ones when the pool may not grow enough */
	int want = (n - 1) / PAIR_CHUNK, can = R->pw_idle + R->pw_max - R->npw;
	int nw = want < can ? want : can > 0 ? can : 0;
	int chunk = nw == want ? PAIR_CHUNK : (n + nw) / (nw + 1); /* ceil(n / (nw + 1)) */
	int own = n < chunk ? n : chunk;
	sg_exec_t stack_ex[PAIR_CHUNK], *ex = own <= PAIR_CHUNK ? stack_ex : malloc((size_t)own * sizeof *ex);
	struct pjob job = {cp, ph, 0, NULL};
	struct pworker *first = NULL, **tail = &first;
	for (int lo = own; ex && lo < n; lo += chunk)
		if (worker_chunk(R, &job, lo, n - lo < chunk ? n : lo + chunk, &tail)) {
			*tail = NULL;
			while (first) { /* give back the ones taken */
				struct pworker *w = first;
				first = w->next;
				worker_put(R, w);
			}
			break;
		}
	if (!ex || (own < n && !first)) {
		if (ex != stack_ex)
			free(ex);
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory running a collective");
		return;
	}
	*tail = NULL;
	if (first)
		job.done = sg_sem_init(0);
	start_chunk(cp, ph, 0, own, ex);
	if (first)
		sg_sem_release(first->go);
	wait_chunk(ex, own);
	if (first) {
		sg_sem_acquire(job.done);
		sg_sem_destroy(job.done);
	}
	if (ex != stack_ex)
		free(ex);
	R->r->sg_activities += n;
}

void rp_plan_run(struct run *R, struct cplan *cp)
{
	for (int ph = 0; ph < cp->p.nphases; ph++)
		if (cp->npairs[ph])
			run_pairs(R, cp, ph);
		else if (cp->h[ph] > 1) {
			sg_actor_parallel_execute(cp->h[ph], cp->hosts[ph], cp->flops[ph], cp->mat[ph]);
			R->r->sg_activities++;
		}
}

void rp_plans_free(struct run *R)
{
	for (int i = 0; i < R->npw; i++) { /* their actors ended with the engine */
		sg_sem_destroy(R->pw_all[i]->go);
		free(R->pw_all[i]->ex);
		free(R->pw_all[i]);
	}
	free(R->pw_all);
	for (int h = 0; h < NBUCKETS; h++)
		for (struct cplan *p = R->plans[h], *nx; p; p = nx) {
			nx = p->next;
			for (int ph = 0; ph < COLL_MAX_PHASES; ph++) {
				free(p->hosts[ph]);
				free(p->mat[ph]);
				free(p->flops[ph]);
			}
			coll_plan_free(&p->p);
			free(p);
		}
}
