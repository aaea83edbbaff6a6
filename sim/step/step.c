/*
 * step.c -- the warp-level stepper's engine: the CTAs resident on one compute
 * unit, their warps split over the unit's warp schedulers (warp i on
 * scheduler i mod schedulers), each scheduler issuing at most one instruction
 * per cycle from a warp its policy picks among the ready ones.
 *
 * A warp is ready when its next instruction's operands are (scoreboard:
 * the cycle each virtual register's producer delivers), its pipe is free,
 * and nothing holds it (a CTA barrier, an async-copy or wgmma group it waits
 * for, a TMA stage not yet full or not yet free). Pipes: per scheduler the
 * lanes (ALU), the SFU and the tensor core, each busy `ii` cycles per
 * instruction; per unit the shared-memory pipe (bytes / shared_mem_bandwidth)
 * and the memory port, a queue served at this unit's share of L2 and device
 * memory bandwidth (the chip's reachable bandwidth over its units, as when
 * every unit runs the same kernel), after which a load sees the loaded
 * latency (L2 hit, or a miss in the model's hit share).
 *
 * The engine never steps through a cycle in which no warp can issue: it
 * jumps to the earliest cycle at which some warp's condition clears, and
 * charges the skipped cycles to each warp's stall reason (the same result
 * as stepping one cycle at a time; tests/test_step.c checks it).
 */
#include "step_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[SS_COUNT] = {"issued",  "dependency",     "memory",      "pipe busy",
                                                  "barrier", "no instruction", "not selected"};
static const char *const pipe_names[SP_COUNT] = {"-", "fp32 lanes", "sfu", "tensor", "shared memory", "memory"};

const char *step_state_name(int s)
{
	return s >= 0 && s < SS_COUNT ? state_names[s] : "?";
}
const char *step_pipe_name(int p)
{
	return p >= 0 && p < SP_COUNT ? pipe_names[p] : "?";
}

/* ------------------------------------------------------------------ */
/* policies                                                             */

/* Loose round robin: the first ready warp after the one issued last. */
static int pick_lrr(struct step_sched *sc, const struct step_sim *s, const uint8_t *ready)
{
	(void)s;
	int start = 0;
	for (int i = 0; i < sc->n; i++)
		if (sc->w[i] == sc->last)
			start = i + 1;
	for (int k = 0; k < sc->n; k++) {
		int i = (start + k) % sc->n;
		if (ready[i])
			return i;
	}
	return -1;
}

/* Greedy then oldest: the warp issued last while it stays ready, else the oldest ready warp. */
static int pick_gto(struct step_sched *sc, const struct step_sim *s, const uint8_t *ready)
{
	(void)s;
	for (int i = 0; i < sc->n; i++)
		if (sc->w[i] == sc->last && ready[i])
			return i;
	for (int i = 0; i < sc->n; i++) /* sc->w is in launch order */
		if (ready[i])
			return i;
	return -1;
}

/* Two-level (Narasiman et al., MICRO 2011): only the first `active` warps may issue, round robin;
   an active warp that waits for memory (or has finished) goes to the back of the pending list and
   the first pending warp takes its place. */
static int pick_two(struct step_sched *sc, const struct step_sim *s, uint8_t *ready)
{
	int A = sc->active < sc->n ? sc->active : sc->n;
	int moved = 0;
	for (int i = 0; i < A && moved < sc->n - A;) {
		const struct step_warp *w = &s->warps[sc->w[i]];
		if (A < sc->n && (w->state == SS_MEM || w->state == SS_NONE)) {
			int g = sc->w[i];
			uint8_t r = ready[i];
			memmove(sc->w + i, sc->w + i + 1, (size_t)(sc->n - i - 1) * sizeof *sc->w);
			memmove(ready + i, ready + i + 1, (size_t)(sc->n - i - 1));
			sc->w[sc->n - 1] = g, ready[sc->n - 1] = r;
			moved++;
		} else
			i++;
	}
	int start = 0;
	for (int i = 0; i < A; i++)
		if (sc->w[i] == sc->last)
			start = i + 1;
	for (int k = 0; k < A; k++) {
		int i = (start + k) % A;
		if (ready[i])
			return i;
	}
	return -1;
}

static int pick_two_c(struct step_sched *sc, const struct step_sim *s, const uint8_t *ready)
{
	return pick_two(sc, s, (uint8_t *)ready);
}

/* The active set of the two-level policy, per scheduler. */
#define TWO_LEVEL_ACTIVE 4

static const struct step_policy_ops policies[STEP_NPOLICIES] = {
    {"lrr", "loose round robin: the next ready warp after the last one issued", pick_lrr},
    {"gto", "greedy then oldest: the same warp while it is ready, else the oldest ready", pick_gto},
    {"two-level",
     "two-level: round robin over an active set of 4 warps per scheduler; a warp waiting for memory "
     "leaves it",
     pick_two_c},
};

const char *step_policy_name(int p)
{
	return p >= 0 && p < STEP_NPOLICIES ? policies[p].name : "?";
}
const char *step_policy_list(void)
{
	return "lrr|gto|two-level";
}
int step_policy_parse(const char *name)
{
	for (int i = 0; i < STEP_NPOLICIES; i++)
		if (!strcmp(name, policies[i].name))
			return i;
	if (!strcmp(name, "two_level") || !strcmp(name, "2level"))
		return STEP_TWO_LEVEL;
	return -1;
}

/* ------------------------------------------------------------------ */
/* one warp                                                             */

static int64_t cyc(double t)
{
	return (int64_t)ceil(t - 1e-9);
}

/* Is the instruction's tile (iter + arg) one of the CTA's? */
static int tile_in(const struct step_warp *w, const struct step_cta *ct, const struct step_inst *in)
{
	long long j = w->iter + in->arg;
	return j >= 0 && j < ct->iters;
}

/* The warp's state at cycle t: SS_ISSUED if it can issue, else why not, and until when (w->until). */
static int eval(struct step_sim *s, struct step_warp *w, int64_t t)
{
	w->spipe = SP_NONE;
	w->until = STEP_NEVER;
	if (w->done)
		return SS_NONE;
	struct step_cta *ct = &s->ctas[w->cta];
	if (t < ct->start_at) { /* not launched yet */
		w->until = ct->start_at;
		return SS_NONE;
	}
	if (w->bar_wait) {
		if (ct->gen == w->bar_gen)
			return SS_BAR;
		if (t < ct->release_at) {
			w->until = ct->release_at;
			return SS_BAR;
		}
		w->bar_wait = 0;
	}
	const struct step_inst *in = &s->progs[w->prog].in[w->pc];
	switch (in->op) {
	case I_CPWAIT: { /* groups 0 .. cp_n-1-arg complete (their completion times are kept as a running max) */
		long long need = w->cp_n - in->arg;
		if (need > 0) {
			int64_t d = w->cp_grp[(need - 1) % STEP_MAX_GROUPS];
			if (d > t) {
				w->until = d;
				return SS_MEM;
			}
		}
		break;
	}
	case I_WGWAIT: {
		long long need = w->wg_n - in->arg;
		if (need > 0) {
			int64_t d = w->wg_grp[(need - 1) % STEP_MAX_GROUPS];
			if (d > t) {
				w->until = d;
				return SS_DEP;
			}
		}
		break;
	}
	case I_MBWAIT:
		if (tile_in(w, ct, in)) {
			long long j = w->iter + in->arg, st = j % s->stages, round = j / s->stages;
			if (ct->filled[in->ch][st] <= round)
				return SS_MEM; /* the producer has not issued its load yet */
			if (ct->full_at[in->ch][st] > t) {
				w->until = ct->full_at[in->ch][st];
				return SS_MEM;
			}
		}
		break;
	case I_TMA:
		if (tile_in(w, ct, in)) {
			long long j = w->iter + in->arg, st = j % s->stages, round = j / s->stages;
			if (ct->released[in->ch][st] < round)
				return SS_BAR; /* the consumers still read the stage's previous tile */
		}
		break;
	case I_PPWAIT:
		if (ct->pp_turn < (long long)s->pp_groups * w->iter + w->wg)
			return SS_BAR;
		break;
	default: break;
	}
	/* scoreboard */
	int blocked = 0, lng = 0;
	int64_t u = STEP_NEVER;
	for (int k = 0; k < 4; k++) {
		int r = k < 3 ? in->src[k] : in->dst;
		if (r >= 0 && w->rdy[r] > t) {
			blocked = 1;
			lng |= w->rlong[r];
			if (w->rdy[r] < u)
				u = w->rdy[r];
		}
	}
	if (blocked) {
		w->until = u;
		return lng ? SS_MEM : SS_DEP;
	}
	/* the pipe: the scheduler's (for shared memory: its MIO queue, STEP_LSU_QUEUE cycles of work deep;
	   wgmma is queued at the tensor core and never waits here) */
	const double *f = &s->sched[w->sched].free[in->pipe];
	if (in->pipe != SP_NONE && in->pipe != SP_MEM && in->op != I_WGMMA) {
		double lim = (double)t + (in->pipe == SP_LSU ? STEP_LSU_QUEUE : 0);
		if (*f > lim + 1e-9) {
			w->spipe = in->pipe;
			w->until = cyc(*f - (lim - (double)t));
			return SS_PIPE;
		}
	}
	return SS_ISSUED;
}

/* A request of `bytes` through the unit's memory port; returns when a load's data arrives. */
static int64_t mem_req(struct step_sim *s, int64_t t, double bytes, int store)
{
	double l2 = s->l2_Bpc > 0 ? bytes / s->l2_Bpc : 0;
	double dr = bytes * (store ? s->write_cost : s->miss) / s->dram_Bpc;
	double svc = l2 > dr ? l2 : dr;
	double start = s->mem_free > (double)t ? s->mem_free : (double)t;
	s->mem_free = start + svc;
	s->pipe_busy[SP_MEM] += svc;
	return cyc(start + svc + (store ? 0 : s->lat_mem));
}

static void commit(int64_t *grp, long long *n, int64_t *open, int64_t t)
{
	int64_t prev = *n > 0 ? grp[(*n - 1) % STEP_MAX_GROUPS] : 0;
	int64_t d = *open > prev ? *open : prev;
	grp[*n % STEP_MAX_GROUPS] = d > t ? d : t;
	(*n)++;
	*open = 0;
}

static void advance(struct step_sim *s, struct step_warp *w)
{
	const struct step_prog *p = &s->progs[w->prog];
	w->pc++;
	if (w->pc == p->end && p->end > p->body && ++w->iter < w->iters)
		w->pc = p->body;
	if (w->pc == p->body && w->iter >= w->iters)
		w->pc = p->end;
	if (w->pc >= p->n) {
		w->done = 1;
		s->finished++;
	}
}

static void issue(struct step_sim *s, struct step_warp *w, int64_t t)
{
	const struct step_prog *p = &s->progs[w->prog];
	const struct step_inst *in = &p->in[w->pc];
	struct step_cta *ct = &s->ctas[w->cta];
	w->last_pc = w->pc;
	w->issued++;
	s->issued++;
	if (w->marker && w->pc == p->body)
		ct->it_start[w->iter] = t;
	int noop = (in->op == I_WGMMA && in->arg && !tile_in(w, ct, in));
	double *f = &s->sched[w->sched].free[in->pipe];
	if (in->pipe == SP_LSU) { /* the unit's shared-memory pipe serves the MIO queues in order */
		s->lsu_free = (s->lsu_free > (double)t ? s->lsu_free : (double)t) + in->ii;
		*f = s->lsu_free;
		s->pipe_busy[SP_LSU] += in->ii;
	} else if (in->pipe != SP_NONE && in->pipe != SP_MEM && !noop) {
		*f = (*f > (double)t ? *f : (double)t) + in->ii;
		s->pipe_busy[in->pipe] += in->ii;
	}
	switch (in->op) {
	case I_SHFL:
	case I_LDS: /* queued: the result comes `lat` after the pipe has served it */
		if (in->dst >= 0) {
			w->rdy[in->dst] = cyc(*f - in->ii + in->lat);
			w->rlong[in->dst] = 0;
			w->rprod[in->dst] = (int16_t)w->pc;
		}
		break;
	case I_ALU:
	case I_SFU:
	case I_MMA:
		if (in->dst >= 0) {
			w->rdy[in->dst] = t + cyc(in->lat);
			w->rlong[in->dst] = 0;
			w->rprod[in->dst] = (int16_t)w->pc;
		}
		break;
	case I_LDG:
		if (in->dst >= 0) {
			w->rdy[in->dst] = mem_req(s, t, in->bytes, 0);
			w->rlong[in->dst] = 1;
			w->rprod[in->dst] = (int16_t)w->pc;
		}
		break;
	case I_STG: mem_req(s, t, in->bytes, 1); break;
	case I_CPASYNC:
		if (tile_in(w, ct, in)) {
			int64_t d = mem_req(s, t, in->bytes, 0);
			if (d > w->cp_open)
				w->cp_open = d;
		}
		break;
	case I_CPCOMMIT: commit(w->cp_grp, &w->cp_n, &w->cp_open, t); break;
	case I_WGMMA:
		if (!noop) { /* it starts when the tensor core has finished the ones queued before it */
			int64_t d = cyc(*f + in->lat);
			if (d > w->wg_open)
				w->wg_open = d;
		}
		break;
	case I_WGCOMMIT: commit(w->wg_grp, &w->wg_n, &w->wg_open, t); break;
	case I_BAR:
		w->bar_wait = 1;
		w->bar_gen = ct->gen;
		if (++ct->arrived >= ct->nwarps) {
			ct->arrived = 0;
			ct->gen++;
			ct->release_at = t + cyc(s->unit->lat_bar);
		}
		break;
	case I_TMA:
		if (tile_in(w, ct, in)) {
			long long j = w->iter + in->arg;
			int st = (int)(j % s->stages);
			ct->full_at[in->ch][st] = mem_req(s, t, in->bytes, 0);
			ct->filled[in->ch][st]++;
		}
		break;
	case I_PPARRIVE:
		if (++ct->pp_count >= ct->pp_warps) {
			ct->pp_count = 0;
			ct->pp_turn++;
		}
		break;
	case I_MBARRIVE:
		if (tile_in(w, ct, in)) {
			int st = (int)((w->iter + in->arg) % s->stages);
			if (++ct->rel_count[in->ch][st] >= ct->consumers) {
				ct->rel_count[in->ch][st] = 0;
				ct->released[in->ch][st]++;
			}
		}
		break;
	default: break;
	}
	advance(s, w);
}

/* ------------------------------------------------------------------ */
/* the unit, cycle by cycle                                             */

int step_gantt_char(const struct step_sim *s, const struct step_warp *w)
{
	switch (w->state) {
	case SS_ISSUED: return w->last_pc >= 0 ? s->progs[w->prog].in[w->last_pc].cls : '?';
	case SS_DEP: return '.';
	case SS_MEM: return '~';
	case SS_PIPE: return '=';
	case SS_BAR: return '|';
	case SS_SEL: return '-';
	default: return ' ';
	}
}

long long step_tick(struct step_sim *s, long long cap)
{
	if (s->finished == s->nwarps)
		return 0;
	int64_t t = s->now, next = STEP_NEVER;
	int any = 0;
	for (int k = 0; k < s->nsched; k++) {
		/* the scheduler served first rotates, so that none is favoured on unit-wide pipes */
		struct step_sched *sc = &s->sched[(k + t) % s->nsched];
		uint8_t *ready = s->ready;
		int nr = 0;
		for (int i = 0; i < sc->n; i++) {
			struct step_warp *w = &s->warps[sc->w[i]];
			w->last_pc = -1;
			/* a stall with a known end (its own scoreboard or groups, its scheduler's pipe, a timed
			   release, not yet launched, finished) holds until then: nothing another warp does can
			   end it sooner. Stalls that wait for other warps (until = never) are looked at again. */
			if (w->state != SS_ISSUED && w->state != SS_SEL && w->until > t &&
			    (w->until != STEP_NEVER || w->done)) {
				ready[i] = 0;
				if (w->until < next)
					next = w->until;
				continue;
			}
			w->state = (uint8_t)eval(s, w, t);
			ready[i] = w->state == SS_ISSUED;
			nr += ready[i];
			if (!ready[i] && w->until < next)
				next = w->until;
		}
		if (!nr)
			continue;
		int pick = s->pol->pick(sc, s, ready);
		if (pick < 0) { /* two-level: ready warps outside the active set */
			for (int i = 0; i < sc->n; i++)
				if (ready[i])
					s->warps[sc->w[i]].state = SS_SEL;
			continue;
		}
		for (int i = 0; i < sc->n; i++)
			if (ready[i] && i != pick)
				s->warps[sc->w[i]].state = SS_SEL;
		struct step_warp *w = &s->warps[sc->w[pick]];
		issue(s, w, t);
		sc->last = w->gid;
		any = 1;
	}
	long long span = 1;
	if (!any) {
		if (next == STEP_NEVER)
			return s->finished == s->nwarps ? 0 : -1;
		span = next - t;
		if (span > cap)
			span = cap;
		if (span < 1)
			span = 1;
	}
	for (int g = 0; g < s->nwarps; g++) {
		const struct step_warp *w = &s->warps[g];
		s->state[w->state] += span;
		if (w->state == SS_PIPE)
			s->pipe_stall[w->spipe] += span;
	}
	if (s->hist) {
		long long n = span < STEP_HIST ? span : STEP_HIST;
		for (long long c = t + span - n; c < t + span; c++) {
			uint8_t *row = s->hist + (size_t)(c % STEP_HIST) * (size_t)s->nwarps;
			for (int g = 0; g < s->nwarps; g++)
				row[g] =
				    (uint8_t)(c == t ? step_gantt_char(s, &s->warps[g])
				                     : (s->warps[g].state == SS_ISSUED || s->warps[g].state == SS_SEL
				                            ? ' '
				                            : step_gantt_char(s, &s->warps[g])));
		}
	}
	s->now = t + span;
	return span;
}

int step_run(struct step_sim *s, long long until)
{
	while (s->now < until) {
		long long r = step_tick(s, until - s->now);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* set-up                                                               */

/* Inner iterations of query block i for a causal forward (as sim/device/model_attn.c counts them). */
static long long causal_iters(const struct op *op, long long i, int bo, int bi)
{
	long long nin = (op->skv + bi - 1) / bi, off = op->skv - op->sq;
	long long rows_end = (i + 1) * bo < op->sq ? (i + 1) * bo : op->sq;
	long long last = off + rows_end;
	long long n = (last + bi - 1) / bi;
	if (n > nin)
		n = nin;
	return n < 0 ? 0 : n;
}

struct step_sim *step_new(const struct arch_chip *c, const struct op *op, const struct step_opts *o, char *why,
                          size_t wl, int *code)
{
	*code = SIM_EXIT_TRACE;
	struct step_sim *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(why, wl, "out of memory");
		*code = SIM_EXIT_INTERNAL;
		return NULL;
	}
	s->chip = c;
	s->o = *o;
	if (dm_iteration(c, op, &s->it, why, wl))
		goto fail;
	const struct dm_iter *it = &s->it;
	s->unit = &c->units[it->unit_group];
	const struct arch_unit *u = s->unit;
	*code = SIM_EXIT_USAGE;
	if (o->sm < 0 || o->sm >= u->count) {
		snprintf(why, wl, "--sm %d is out of range: %s has %ld %s units (0 to %ld)", o->sm, c->name, u->count,
		         u->name, u->count - 1);
		goto fail;
	}
	if (o->policy < 0 || o->policy >= STEP_NPOLICIES) {
		snprintf(why, wl, "unknown policy (expected %s)", step_policy_list());
		goto fail;
	}
	s->pol = &policies[o->policy];
	*code = SIM_EXIT_TRACE;
	if (step_build(s, op, why, wl))
		goto fail;
	*code = SIM_EXIT_USAGE;
	/* the CTAs of the first wave on this unit: sm, sm + units, ... */
	int occ = o->ctas > 0 ? o->ctas : it->ctas_per_unit;
	int here = 0;
	for (int k = 0; k < occ; k++)
		if ((long long)o->sm + (long long)k * u->count < it->ctas)
			here++;
	if (!here) {
		snprintf(why, wl, "--sm %d runs no CTA of this kernel: %lld CTAs on %ld units (use --sm 0 to %lld)",
		         o->sm, it->ctas, u->count, it->ctas - 1);
		goto fail;
	}
	if ((long)here * s->cta_nw > u->max_warps) {
		snprintf(why, wl, "%d CTAs of %d warps exceed the %ld warps a %s unit holds", here, s->cta_nw,
		         u->max_warps, u->name);
		goto fail;
	}
	*code = SIM_EXIT_INTERNAL;
	s->ctas_here = here;
	s->nctas = here;
	s->nwarps = here * s->cta_nw;
	s->nsched = (int)u->schedulers;
	s->warps = calloc((size_t)s->nwarps, sizeof *s->warps);
	s->ctas = calloc((size_t)s->nctas, sizeof *s->ctas);
	s->sched = calloc((size_t)s->nsched, sizeof *s->sched);
	s->ready = calloc((size_t)s->nwarps + 1, 1);
	int64_t *rdy = calloc((size_t)s->nwarps * STEP_MAX_REGS, sizeof *rdy);
	uint8_t *rl = calloc((size_t)s->nwarps * STEP_MAX_REGS, 1);
	int16_t *rp = calloc((size_t)s->nwarps * STEP_MAX_REGS, sizeof *rp);
	int *sw = calloc((size_t)s->nwarps, sizeof *sw);
	if (!s->warps || !s->ctas || !s->sched || !s->ready || !rdy || !rl || !rp || !sw) {
		free(rdy), free(rl), free(rp), free(sw);
		snprintf(why, wl, "out of memory");
		goto fail;
	}
	s->warps[0].rdy = rdy, s->warps[0].rlong = rl, s->warps[0].rprod = rp; /* freed through warp 0 */
	s->sched[0].w = sw;
	if (o->record) {
		s->hist = calloc((size_t)STEP_HIST * (size_t)s->nwarps, 1);
		if (!s->hist) {
			snprintf(why, wl, "out of memory");
			goto fail;
		}
		memset(s->hist, ' ', (size_t)STEP_HIST * (size_t)s->nwarps);
	}
	/* iterations per CTA */
	long long units = u->count;
	for (int k = 0; k < here; k++) {
		struct step_cta *ct = &s->ctas[k];
		long long id = o->sm + (long long)k * units, n = it->iters;
		if (it->kind == OP_ATTN && op->causal) {
			long long nout = (op->sq + it->tile_m - 1) / it->tile_m;
			n = causal_iters(op, id % nout, it->tile_m, it->tile_n);
		} else if (it->kind == OP_ELEM) { /* grid-stride loop over the CTAs this slot would run */
			long long slots = units * occ;
			n = it->ctas / slots + (id < it->ctas % slots ? 1 : 0);
		}
		if (o->iters > 0)
			n = o->iters;
		ct->iters = n;
		/* In a long kernel the CTAs resident on a unit are at different points of their loops (each
		   started when an earlier one ended); started together and alike, they would start in
		   lockstep, all in their matrix phase at once. CTA k starts k model CTA-iterations later
		   (k/here of a CTA's own iteration): the phases spread evenly. The steady state is measured
		   from a quarter of the loop on, whatever phases the CTAs have settled into by then. */
		ct->start_at = (int64_t)floor((double)k * it->c_total + 0.5);
		ct->nwarps = s->cta_barw;
		ct->consumers = s->cta_consumers > 0 ? s->cta_consumers : 1;
		ct->pp_warps = 4;
		ct->it_start = malloc((size_t)(n + 1) * sizeof *ct->it_start);
		if (!ct->it_start) {
			snprintf(why, wl, "out of memory");
			goto fail;
		}
		for (long long j = 0; j <= n; j++)
			ct->it_start[j] = -1;
	}
	/* warps: CTA after CTA; warp g on scheduler g mod schedulers */
	int per = 0;
	for (int k = 0; k < s->nsched; k++)
		s->sched[k].last = -1, s->sched[k].active = TWO_LEVEL_ACTIVE;
	for (int g = 0; g < s->nwarps; g++) {
		struct step_warp *w = &s->warps[g];
		w->gid = g, w->cta = g / s->cta_nw, w->wid = g % s->cta_nw;
		w->prog = s->wprog[w->wid < 64 ? w->wid : 63];
		w->sched = g % s->nsched;
		w->iters = s->ctas[w->cta].iters;
		w->marker = w->wid == s->marker_wid;
		w->wg = s->wwg[w->wid < 64 ? w->wid : 63];
		w->rdy = rdy + (size_t)g * STEP_MAX_REGS;
		w->rlong = rl + (size_t)g * STEP_MAX_REGS;
		w->rprod = rp + (size_t)g * STEP_MAX_REGS;
		w->last_pc = -1;
		w->state = SS_NONE;
		w->pc = -1;
		advance(s, w); /* to the first instruction (past an empty loop) */
	}
	for (int k = 0; k < s->nsched; k++) {
		struct step_sched *sc = &s->sched[k];
		sc->w = sw + per;
		for (int g = k; g < s->nwarps; g += s->nsched)
			sc->w[sc->n++] = g;
		per += sc->n;
	}
	/* the memory port: this unit's share, the model's hit rate and loaded latencies */
	s->l2_Bpc = it->l2_Bpc, s->dram_Bpc = it->dram_Bpc, s->write_cost = it->write_cost;
	s->miss = 1 - it->hit;
	s->lat_mem = it->lat_l2 + s->miss * (it->lat_dram - it->lat_l2);
	*code = SIM_EXIT_OK;
	return s;
fail:
	step_free(s);
	return NULL;
}

void step_free(struct step_sim *s)
{
	if (!s)
		return;
	if (s->warps) {
		free(s->warps[0].rdy), free(s->warps[0].rlong), free(s->warps[0].rprod);
	}
	if (s->sched)
		free(s->sched[0].w);
	if (s->ctas)
		for (int k = 0; k < s->nctas; k++)
			free(s->ctas[k].it_start);
	for (int i = 0; i < 3; i++)
		free(s->progs[i].in);
	free(s->warps), free(s->ctas), free(s->sched), free(s->ready), free(s->hist);
	free(s);
}

const struct dm_iter *step_model(const struct step_sim *s)
{
	return &s->it;
}
long long step_now(const struct step_sim *s)
{
	return s->now;
}
int step_done(const struct step_sim *s)
{
	return s->finished == s->nwarps;
}
int step_nwarps(const struct step_sim *s)
{
	return s->nwarps;
}

int step_issued_warp(const struct step_sim *s, int w)
{
	return w >= 0 && w < s->nwarps && s->warps[w].last_pc >= 0;
}

int step_issued_name(const struct step_sim *s, const char *prefix)
{
	size_t n = strlen(prefix);
	for (int g = 0; g < s->nwarps; g++) {
		const struct step_warp *w = &s->warps[g];
		if (w->last_pc >= 0) {
			const struct step_prog *p = &s->progs[w->prog];
			if (!strncmp(p->names[p->in[w->last_pc].name], prefix, n))
				return 1;
		}
	}
	return 0;
}

void step_stats(const struct step_sim *s, struct step_stats *st)
{
	memset(st, 0, sizeof *st);
	st->cycles = s->now;
	st->issued = s->issued;
	memcpy(st->state, s->state, sizeof st->state);
	memcpy(st->pipe_stall, s->pipe_stall, sizeof st->pipe_stall);
	memcpy(st->pipe_busy, s->pipe_busy, sizeof st->pipe_busy);
	/* work queued past the current cycle is not busy time yet */
	double now = (double)s->now;
	for (int k = 0; k < s->nsched; k++)
		for (int p = SP_ALU; p <= SP_TENSOR; p++)
			if (s->sched[k].free[p] > now)
				st->pipe_busy[p] -= s->sched[k].free[p] - now;
	if (s->lsu_free > now)
		st->pipe_busy[SP_LSU] -= s->lsu_free - now;
	if (s->mem_free > now)
		st->pipe_busy[SP_MEM] -= s->mem_free - now;
	for (int p = 0; p < SP_COUNT; p++)
		if (st->pipe_busy[p] < 0)
			st->pipe_busy[p] = 0;
	st->schedulers = s->nsched, st->warps = s->nwarps, st->ctas = s->nctas;
	st->ipc = s->now > 0 ? (double)s->issued / (double)s->now : 0;
	st->slot_use = s->now > 0 ? (double)s->issued / ((double)s->now * s->nsched) : 0;
	st->done = s->finished == s->nwarps;
	/* steady state: each CTA's rate between a quarter of its iterations and an eighth before its end;
	   the unit's rate is their sum (CTAs on less loaded schedulers go faster) */
	double rate = 0;
	int measured = 0;
	for (int k = 0; k < s->nctas; k++) {
		const struct step_cta *ct = &s->ctas[k];
		long long n = ct->iters, done = 0;
		while (done < n && ct->it_start[done] >= 0)
			done++;
		if (k == 0)
			st->iters_done = st->done ? n : done > 0 ? done - 1 : 0;
		long long j0 = n / 4, j1 = n - 1 - n / 8;
		if (j1 > j0 && j1 < done && ct->it_start[j1] > ct->it_start[j0]) {
			rate += (double)(j1 - j0) / (double)(ct->it_start[j1] - ct->it_start[j0]);
			measured++;
		}
	}
	if (measured == s->nctas && rate > 0)
		st->cyc_iter = 1 / rate;
}
