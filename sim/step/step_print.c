/*
 * step_print.c -- what the stepper shows: the kernel and the unit it runs on,
 * the cycle trace (per scheduler the warp that issued and what, and every
 * other warp's state), the per-warp Gantt, a warp's scoreboard, the
 * instruction counts of the loop, and the summary (IPC, issue-slot use,
 * stall breakdown, cycles per iteration against the model's).
 */
#include "step_int.h"

#include <math.h>
#include <string.h>

static const char *const short_state[SS_COUNT] = {"issued", "dep", "mem", "pipe", "bar", "done", "sel"};
static const char *const short_pipe[SP_COUNT] = {"-", "alu", "sfu", "tensor", "smem", "mem"};

static const char *inst_name(const struct step_sim *s, const struct step_warp *w, int pc)
{
	const struct step_prog *p = &s->progs[w->prog];
	return p->names[p->in[pc].name];
}

static void kernel_name(const struct step_sim *s, char *buf, size_t n)
{
	const struct dm_iter *it = &s->it;
	switch (it->kind) {
	case OP_GEMM:
		snprintf(buf, n, "gemm_%dx%dx%d_s%d (CTA tile %dx%d, k %d per iteration, %d stages)", it->tile_m,
		         it->tile_n, it->tile_k, it->stages, it->tile_m, it->tile_n, it->tile_k, it->stages);
		break;
	case OP_ATTN:
		snprintf(buf, n, "%s_fwd_%dx%d (%d query rows per CTA, %d keys per iteration, head dim %d)",
		         s->progs[0].role[0] ? "flash3" : "flash2", it->tile_m, it->tile_n, it->tile_m, it->tile_n,
		         it->tile_k);
		break;
	default: snprintf(buf, n, "elementwise, 256 threads per CTA, grid-stride loop"); break;
	}
}

void step_print_header(const struct step_sim *s, const struct arch_chip *c, const char *optext, FILE *f)
{
	const struct dm_iter *it = &s->it;
	const struct arch_unit *u = s->unit;
	char kn[160];
	kernel_name(s, kn, sizeof kn);
	fprintf(f, "%s on %s\n", optext, c->name);
	fprintf(f, "kernel    %s\n", kn);
	fprintf(f, "          %s\n", s->shape);
	long long imin = s->ctas[0].iters, imax = imin;
	for (int k = 1; k < s->nctas; k++) {
		if (s->ctas[k].iters < imin)
			imin = s->ctas[k].iters;
		if (s->ctas[k].iters > imax)
			imax = s->ctas[k].iters;
	}
	char its[64];
	if (imin == imax)
		snprintf(its, sizeof its, "%lld iterations each", imin);
	else
		snprintf(its, sizeof its, "%lld to %lld iterations", imin, imax);
	fprintf(f, "unit      %s %d of %ld at %.0f MHz: %d CTA(s) of %d warps (%s), %d warps on %d schedulers\n",
	        u->name, s->o.sm, u->count, it->clock_hz / 1e6, s->nctas, s->cta_nw, its, s->nwarps, s->nsched);
	if (s->nctas > 1)
		fprintf(f,
		        "          CTA k starts at cycle k x %lld: the resident CTAs of a long kernel are at different "
		        "points "
		        "of their loops\n",
		        (long long)s->ctas[1].start_at);
	fprintf(f, "policy    %s: %s\n", s->pol->name, s->pol->desc);
	double nsch = (double)s->nsched;
	double lanes = u->vec[DT_FP32] / nsch;
	fprintf(f, "pipes     per scheduler: one issue per cycle; tensor %.0f MAC/clk; fp32 lanes %.0f; sfu %.0f.",
	        it->macs_clk / nsch, lanes, u->sfu / nsch);
	char l2[40] = "L2 not a limit";
	if (s->l2_Bpc > 0)
		snprintf(l2, sizeof l2, "%.1f B/clk from L2", s->l2_Bpc);
	fprintf(f, " Per unit: shared memory %.0f B/clk; memory port %s, %.1f from device memory\n", u->smem_Bpc, l2,
	        s->dram_Bpc);
	fprintf(f,
	        "latency   cycles: alu %.0f, sfu %.0f, shared memory %.0f, matrix +%.0f, barrier %.0f; memory %.0f "
	        "(L2 hit) / %.0f (miss), loads hit L2 %.0f%%\n",
	        u->lat_alu, u->lat_sfu, u->lat_smem, u->lat_mma, u->lat_bar, it->lat_l2, it->lat_dram, 100 * it->hit);
}

void step_print_program(const struct step_sim *s, FILE *f)
{
	for (int pi = 0; pi < s->nprogs; pi++) {
		const struct step_prog *p = &s->progs[pi];
		if (p->body == p->end && !strcmp(p->role, "idle"))
			continue;
		static const char *const sec[3] = {"prologue", "loop body", "epilogue"};
		int lo[3] = {0, p->body, p->end}, hi[3] = {p->body, p->end, p->n};
		int first_sec = lo[0] < hi[0] ? 0 : lo[1] < hi[1] ? 1 : 2;
		for (int k = 0; k < 3; k++) {
			if (lo[k] == hi[k])
				continue;
			int cnt[STEP_MAX_NAMES] = {0}, order[STEP_MAX_NAMES], no = 0;
			for (int i = lo[k]; i < hi[k]; i++) {
				int nm = p->in[i].name;
				if (!cnt[nm]++)
					order[no++] = nm;
			}
			fprintf(f,
			        "%-9s %s%s%s (%d instructions per warp):", pi == 0 && k == first_sec ? "program" : "",
			        p->role, p->role[0] ? " " : "", sec[k], hi[k] - lo[k]);
			int col = 200;
			for (int i = 0; i < no; i++) {
				char item[64];
				snprintf(item, sizeof item, " %d %s%s", cnt[order[i]], p->names[order[i]],
				         i + 1 < no ? "," : "");
				if (col + (int)strlen(item) > 110) {
					fprintf(f, "\n         ");
					col = 9;
				}
				fputs(item, f);
				col += (int)strlen(item);
			}
			fputc('\n', f);
		}
	}
}

/* The state of a waiting warp as the trace groups it: "dep", "pipe:tensor", "not started". */
static void state_text(const struct step_sim *s, const struct step_warp *w, long long t, char *buf, size_t n)
{
	if (w->state == SS_NONE && !w->done && t < s->ctas[w->cta].start_at)
		snprintf(buf, n, "not started");
	else if (w->state == SS_PIPE)
		snprintf(buf, n, "pipe:%s", short_pipe[w->spipe]);
	else
		snprintf(buf, n, "%s", short_state[w->state]);
}

void step_print_tick(const struct step_sim *s, long long first, long long span, FILE *f)
{
	char cy[32];
	if (span > 1)
		snprintf(cy, sizeof cy, "%lld-%lld", first, first + span - 1);
	else
		snprintf(cy, sizeof cy, "%lld", first);
	for (int k = 0; k < s->nsched; k++) {
		const struct step_sched *sc = &s->sched[k];
		char iss[64] = "--";
		for (int i = 0; i < sc->n; i++) {
			const struct step_warp *w = &s->warps[sc->w[i]];
			if (w->state == SS_ISSUED && w->last_pc >= 0)
				snprintf(iss, sizeof iss, "w%d %s", w->gid, inst_name(s, w, w->last_pc));
		}
		fprintf(f, "%11s  s%d  %-30s", k ? "" : cy, k, iss);
		/* the other warps in warp order, grouped by state: "| sel w4; pipe:tensor w0 w8" */
		uint8_t shown[64 * 16] = {0};
		int nw = s->nwarps < (int)sizeof shown ? s->nwarps : (int)sizeof shown, groups = 0;
		for (int g = k; g < nw; g += s->nsched) {
			const struct step_warp *w = &s->warps[g];
			if (w->state == SS_ISSUED || shown[g])
				continue;
			char t[32], t2[32];
			state_text(s, w, first, t, sizeof t);
			fprintf(f, "%s%s", groups++ ? "; " : " | ", t);
			for (int h = g; h < nw; h += s->nsched) {
				const struct step_warp *v = &s->warps[h];
				if (v->state == SS_ISSUED || shown[h])
					continue;
				state_text(s, v, first, t2, sizeof t2);
				if (!strcmp(t, t2)) {
					fprintf(f, " w%d", h);
					shown[h] = 1;
				}
			}
		}
		fputc('\n', f);
	}
}

void step_print_gantt(const struct step_sim *s, long long from, long long to, FILE *f)
{
	if (!s->hist || to <= from)
		return;
	if (to - from > STEP_HIST)
		from = to - STEP_HIST;
	fprintf(f, "gantt     one column per cycle. Issued: M matrix, L shared-memory load, G global or async copy,\n"
	           "          A lanes, X SFU, S shuffle, B bar.sync, C control (wait, commit, arrive, branch).\n"
	           "          Waiting: . dependency, ~ memory, = pipe busy, | barrier, - not selected; blank: none\n");
	for (long long c0 = from; c0 < to; c0 += 100) {
		long long c1 = c0 + 100 < to ? c0 + 100 : to;
		fprintf(f, "%-14s", "cycle");
		for (long long c = c0; c < c1; c++)
			fputc(c % 10 == 0 ? '0' + (int)((c / 10) % 10) : ' ', f);
		fprintf(f, "\n%-14lld", c0);
		for (long long c = c0; c < c1; c++)
			fputc('0' + (int)(c % 10), f);
		fputc('\n', f);
		for (int g = 0; g < s->nwarps; g++) {
			const struct step_warp *w = &s->warps[g];
			char lab[32];
			snprintf(lab, sizeof lab, "w%d s%d c%d", g, w->sched, w->cta);
			fprintf(f, "%-14s", lab);
			for (long long c = c0; c < c1; c++)
				fputc(s->hist[(size_t)(c % STEP_HIST) * (size_t)s->nwarps + (size_t)g], f);
			fputc('\n', f);
		}
	}
}

static double pct(double a, double b)
{
	return b > 0 ? 100 * a / b : 0;
}

void step_print_summary(const struct step_sim *s, FILE *f)
{
	struct step_stats st;
	step_stats(s, &st);
	const struct dm_iter *it = &s->it;
	fprintf(f, "summary   cycles 0-%lld (%.3g us at %.0f MHz): %s\n", st.cycles, st.cycles / it->clock_hz * 1e6,
	        it->clock_hz / 1e6, st.done ? "every warp finished" : "stopped before the end");
	fprintf(f, "  issued        %lld warp instructions: IPC %.2f of %d, issue slots used %.1f%%\n", st.issued,
	        st.ipc, st.schedulers, 100 * st.slot_use);
	if (st.cyc_iter > 0)
		fprintf(f,
		        "  iteration     %.0f cycles per CTA-iteration in steady state (%lld iterations); the device "
		        "model's cost: %.0f (stepper/model %.3f)\n",
		        st.cyc_iter, st.iters_done, it->c_total, st.cyc_iter / it->c_total);
	else
		fprintf(f,
		        "  iteration     %lld of %lld iterations done (too few for a steady state); the device model's "
		        "cost: %.0f cycles per CTA-iteration\n",
		        st.iters_done, s->ctas[0].iters, it->c_total);
	fprintf(f, "  model terms   cycles per CTA-iteration, each resource alone:");
	const char *nm[7] = {"matrix", "shared memory", "sfu", "lanes", "L2", "device memory", "latency"};
	double v[7] = {it->c_matrix, it->c_smem, it->c_sfu, it->c_vector, it->c_l2, it->c_dram, it->c_latency};
	int first = 1;
	for (int i = 0; i < 7; i++)
		if (v[i] > 0) {
			fprintf(f, "%s %s %.0f", first ? "" : ",", nm[i], v[i]);
			first = 0;
		}
	fputc('\n', f);
	double wc = 0;
	for (int i = 0; i < SS_COUNT; i++)
		wc += (double)st.state[i];
	fprintf(f, "  warp states   ");
	for (int i = 0; i < SS_COUNT; i++) {
		fprintf(f, "%s%s %.1f%%", i ? ", " : "", step_state_name(i), pct((double)st.state[i], wc));
		if (i == SS_PIPE && st.state[SS_PIPE] > 0) {
			fprintf(f, " (");
			int fp = 1;
			for (int p = 1; p < SP_COUNT; p++)
				if (st.pipe_stall[p] > 0) {
					fprintf(f, "%s%s %.1f%%", fp ? "" : ", ", step_pipe_name(p),
					        pct((double)st.pipe_stall[p], wc));
					fp = 0;
				}
			fprintf(f, ")");
		}
	}
	fprintf(f,
	        "\n  pipes busy    tensor %.1f%%, fp32 lanes %.1f%%, sfu %.1f%%, shared memory %.1f%%, memory port "
	        "%.1f%%\n",
	        pct(st.pipe_busy[SP_TENSOR], (double)st.cycles * st.schedulers),
	        pct(st.pipe_busy[SP_ALU], (double)st.cycles * st.schedulers),
	        pct(st.pipe_busy[SP_SFU], (double)st.cycles * st.schedulers),
	        pct(st.pipe_busy[SP_LSU], (double)st.cycles), pct(st.pipe_busy[SP_MEM], (double)st.cycles));
}

int step_print_warp(const struct step_sim *s, int g, FILE *f)
{
	if (g < 0 || g >= s->nwarps)
		return -1;
	const struct step_warp *w = &s->warps[g];
	const struct step_prog *p = &s->progs[w->prog];
	fprintf(f, "warp %d: CTA %d, warp %d of %d, scheduler %d%s%s; ", g, w->cta, w->wid, s->cta_nw, w->sched,
	        p->role[0] ? ", " : "", p->role);
	if (w->done)
		fprintf(f, "finished after %lld instructions\n", w->issued);
	else
		fprintf(f, "iteration %lld of %lld, next: %s (pc %d); last cycle: %s; %lld instructions issued\n",
		        w->iter, w->iters, inst_name(s, w, w->pc), w->pc, step_state_name(w->state), w->issued);
	int n = 0;
	fprintf(f, "  in flight:");
	for (int r = 0; r < STEP_MAX_REGS; r++)
		if (w->rdy[r] > s->now) {
			fprintf(f, "%s r%d <- %s ready at %lld (%+lld)", n ? "," : "", r, inst_name(s, w, w->rprod[r]),
			        (long long)w->rdy[r], (long long)(w->rdy[r] - s->now));
			n++;
		}
	fprintf(f, "%s\n", n ? "" : " no register");
	if (w->cp_n || w->cp_open) {
		int pend = 0;
		for (long long k = w->cp_n - 1; k >= 0 && k >= w->cp_n - STEP_MAX_GROUPS; k--)
			if (w->cp_grp[k % STEP_MAX_GROUPS] > s->now)
				pend++;
		fprintf(f, "  cp.async: %lld groups committed, %d pending", w->cp_n, pend);
		if (pend)
			fprintf(f, " (the newest lands at %lld)",
			        (long long)w->cp_grp[(w->cp_n - 1) % STEP_MAX_GROUPS]);
		fputc('\n', f);
	}
	if (w->wg_n) {
		int pend = 0;
		for (long long k = w->wg_n - 1; k >= 0 && k >= w->wg_n - STEP_MAX_GROUPS; k--)
			if (w->wg_grp[k % STEP_MAX_GROUPS] > s->now)
				pend++;
		fprintf(f, "  wgmma: %lld groups committed, %d pending\n", w->wg_n, pend);
	}
	const struct step_cta *ct = &s->ctas[w->cta];
	if (w->bar_wait)
		fprintf(f, "  barrier: waiting (%d of %d warps arrived)\n", ct->arrived, ct->nwarps);
	return 0;
}
