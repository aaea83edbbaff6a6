/*
 * report_work.c -- the workload side of a `sim run` report: tokens/s and
 * model FLOPs utilization from the trace's `workload` line, time to first
 * token and per output token for inference, device memory per rank from its
 * `memory` lines, and communication per communicator with the part of it
 * compute does not hide.
 *
 * Model FLOPs utilization = the workload's model FLOPs per step / (step time
 * x ranks x the device's peak for the dominant dtype): the FLOPs the model
 * needs, not those executed (recompute does not count), as Megatron-LM and
 * PaLM define MFU. The "throughput" line of the report counts executed FLOPs.
 */
#include "json.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mark_index(const struct trace *t, const char *name)
{
	for (int i = 0; i < tr_nmarks(t); i++)
		if (!strcmp(tr_mark_name(t, i), name))
			return i;
	return -1;
}

static void workload(struct report *rep)
{
	const struct rp_result *r = rep->r;
	const struct tr_workload *w = tr_workload(rep->trace);
	rep->has_workload = w != NULL;
	if (!w || r->time_s <= 0)
		return;
	rep->tokens_per_s = w->tokens / r->time_s;
	rep->model_tflops_dev = w->model_flops / r->time_s / r->ranks / 1e12;
	if (rep->peak > 0)
		rep->model_mfu = rep->model_tflops_dev * 1e12 / rep->peak;
	int pf = mark_index(rep->trace, "prefill"), dc = mark_index(rep->trace, "decode");
	if (pf >= 0 && pf < rep->nmarks)
		rep->ttft_s = rep->marks[pf].time_s;
	if (dc >= 0 && dc < rep->nmarks && w->decode_steps > 0)
		rep->tpot_s = rep->marks[dc].time_s / (double)w->decode_steps;
}

static void memory(struct report *rep)
{
	const struct rp_result *r = rep->r;
	rep->mem_rank = -1;
	rep->mem_device = rep->chip->dram.size_bytes;
	if (!r->mem)
		return;
	for (int k = 0; k < r->ranks; k++) {
		if (!r->mem[k].line)
			continue;
		rep->mem_mean += r->mem[k].total / r->ranks;
		if (rep->mem_rank < 0 || r->mem[k].total > rep->mem_peak) {
			rep->mem_peak = r->mem[k].total;
			rep->mem_rank = k;
		}
	}
}

/* The communicator of a collective's canonical text ("comm=tp"); of a send or receive, the one layout dim its peer
   differs in other than pp (the context-parallel ring's hops: "cp"), else "p2p" (the pipeline's, or a peer that
   differs in several dims). */
static void comm_class(const struct rp_span *s, const struct rp_result *r, const struct trace *t, char *buf, size_t len)
{
	const char *c = s->kind == TK_COLL ? strstr(r->texts[s->text], " comm=") : NULL;
	if (!c) {
		const char *p = t && s->kind != TK_COLL ? strstr(r->texts[s->text], " peer=") : NULL;
		int peer = p ? atoi(p + 6) : -1, dim = -1, ndiff = 0;
		for (int d = 0; peer >= 0 && peer < tr_ranks(t) && d < DIM_COUNT; d++)
			if (tr_coord(t, s->rank, (enum tr_dim)d) != tr_coord(t, peer, (enum tr_dim)d))
				ndiff++, dim = d;
		snprintf(buf, len, "%s", ndiff == 1 && dim != DIM_PP ? tr_dim_name((enum tr_dim)dim) : "p2p");
		return;
	}
	c += 6;
	snprintf(buf, len, "%.*s", (int)strcspn(c, " "), c);
}

static int is_comm(int kind)
{
	return kind == TK_COLL || kind == TK_SEND || kind == TK_RECV;
}

/* A boundary of a communication span in the sweep of comm_exposed. */
struct cedge {
	double t;
	int group, open; /* open: +1 at the start, -1 at the end */
	double mult;     /* copies of its steady state + 1 */
};

static int cedge_cmp(const void *a, const void *b)
{
	const struct cedge *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->open - y->open; /* ends first: touching spans do not overlap */
}

/* The rank's exposed time split over its communicators: the time in which a transfer is in flight and no device
   op of the rank runs (its ops' union, lo/hi[0..m)), each instant shared equally among the communicators then in
   flight, so that the groups' shares add up to the rank's exposed time. e[0..ne) are the spans' boundaries. */
static void comm_exposed(const struct report *rep, struct cedge *e, long ne, const double *lo, const double *hi, long m,
                         int nrep, double *extra)
{
	int active[REP_GROUPS] = {0};
	qsort(e, (size_t)ne, sizeof *e, cedge_cmp);
	long q = 0; /* first op interval that may overlap the piece */
	for (long i = 0; i + 1 < ne; i++) {
		active[e[i].group] += e[i].open;
		double a = e[i].t, b = e[i + 1].t;
		int k = 0;
		for (int g = 0; g < rep->ngroups; g++)
			k += active[g] > 0;
		if (b <= a || !k)
			continue;
		double covered = 0;
		while (q < m && hi[q] <= a)
			q++;
		for (long p = q; p < m && lo[p] < b; p++)
			covered += fmin(hi[p], b) - fmax(lo[p], a);
		double share = (b - a - covered) * e[i].mult / nrep / k;
		for (int g = 0; g < rep->ngroups; g++)
			if (active[g] > 0)
				extra[g] += share;
	}
}

/* The communicator group of a transfer's span, -1 when it has none yet; its name into name[64]. */
static int group_find(const struct report *rep, const struct rp_span *s, char name[64])
{
	comm_class(s, rep->r, rep->trace, name, 64);
	for (int g = 0; g < rep->ngroups; g++)
		if (!strcmp(rep->cgroups[g].name, name))
			return g;
	return -1;
}

/* ... or a new one when there is room, else -1. */
static int group_of(struct report *rep, const struct rp_span *s)
{
	char name[64];
	int g = group_find(rep, s, name);
	if (g >= 0 || rep->ngroups == REP_GROUPS)
		return g;
	g = rep->ngroups++;
	memset(&rep->cgroups[g], 0, sizeof rep->cgroups[g]);
	snprintf(rep->cgroups[g].name, sizeof rep->cgroups[g].name, "%s", name);
	return g;
}

/* The union of the device ops of spans sp[idx[i..j)] (sp[i..j) when idx is NULL), sorted by start, as sorted
   disjoint intervals lo/hi; returns how many. */
static long ops_union(const struct rp_span *sp, const long *idx, long i, long j, double *lo, double *hi)
{
	long m = 0;
	for (long k = i; k < j; k++) {
		const struct rp_span *s = &sp[idx ? idx[k] : k];
		if (s->kind != TK_OP || s->t1 <= s->t0)
			continue;
		if (m && s->t0 <= hi[m - 1]) {
			if (s->t1 > hi[m - 1])
				hi[m - 1] = s->t1;
		} else {
			lo[m] = s->t0;
			hi[m++] = s->t1;
		}
	}
	return m;
}

/* report_stagger_eval's f: the exposed time per communicator of one rank's spans v[0..n) (their groups exist). */
static int exposed_of(const struct report *rep, const struct rp_span *v, long n, double *extra, void *arg)
{
	int nrep = *(const int *)arg;
	double *lo = malloc(((size_t)n + 1) * sizeof *lo), *hi = malloc(((size_t)n + 1) * sizeof *hi);
	struct cedge *e = malloc(((size_t)2 * n + 2) * sizeof *e);
	/* a span's group by its text: one rank's spans, whose copies repeat few texts (2 + the group; 0 not yet) */
	int *of_text = calloc((size_t)rep->r->ntexts + 1, sizeof *of_text);
	memset(extra, 0, REP_GROUPS * sizeof *extra);
	int ok = lo && hi && e && of_text;
	if (ok) {
		long m = ops_union(v, NULL, 0, n, lo, hi), ne = 0;
		for (long k = 0; k < n; k++) {
			const struct rp_span *s = &v[k];
			if (!is_comm(s->kind) || s->t1 <= s->t0)
				continue;
			if (!of_text[s->text]) {
				char name[64];
				of_text[s->text] = 2 + group_find(rep, s, name);
			}
			int g = of_text[s->text] - 2;
			if (g < 0)
				continue;
			e[ne++] = (struct cedge){s->t0, g, 1, 1};
			e[ne++] = (struct cedge){s->t1, g, -1, 1};
		}
		comm_exposed(rep, e, ne, lo, hi, m, nrep, extra);
	}
	free(lo);
	free(hi);
	free(e);
	free(of_text);
	return ok ? 0 : -1;
}

/* Per communicator: mean time per rank in its transfers, and its share of the
   rank's exposed time (comm_exposed). idx[0..n) are the spans sorted by rank
   and start; a span a steady state copied counts once per copy (each copy
   overlaps its own iteration's device ops as the template does, and lies in an
   iteration of its own). */
static void comm_groups(struct report *rep, const long *idx, long n, const long *copies)
{
	const struct rp_result *r = rep->r;
	double *lo = malloc(((size_t)n + 1) * sizeof *lo), *hi = malloc(((size_t)n + 1) * sizeof *hi);
	struct cedge *e = malloc(((size_t)2 * n + 2) * sizeof *e);
	int nrep = r->nrep > 0 ? r->nrep : r->ranks;
	if (!lo || !hi || !e) {
		rep->no_memory = 1;
		goto out;
	}
	for (long i = 0; i < n;) {
		long j = i;
		int rank = r->spans[idx[i]].rank;
		while (j < n && r->spans[idx[j]].rank == rank)
			j++;
		long m = ops_union(r->spans, idx, i, j, lo, hi), ne = 0;
		for (long k = i; k < j; k++) {
			const struct rp_span *s = &r->spans[idx[k]];
			if (!is_comm(s->kind))
				continue;
			int g = group_of(rep, s);
			if (g < 0)
				continue;
			double d = s->t1 - s->t0;
			double mult = copies ? 1 + (double)copies[idx[k]] : 1;
			rep->cgroups[g].count += (long)mult;
			rep->cgroups[g].time_s += d * mult / nrep;
			if (d > 0) {
				e[ne++] = (struct cedge){s->t0, g, 1, mult};
				e[ne++] = (struct cedge){s->t1, g, -1, mult};
			}
		}
		double extra[REP_GROUPS] = {0};
		if (!copies || !report_stagger(r))
			comm_exposed(rep, e, ne, lo, hi, m, nrep, extra);
		else if (report_stagger_eval(rep, idx + i, j - i, copies, REP_GROUPS, exposed_of, &nrep, extra))
			rep->no_memory = 1;
		for (int g = 0; g < rep->ngroups; g++)
			rep->cgroups[g].extra += extra[g];
		i = j;
	}
out:
	free(lo);
	free(hi);
	free(e);
}

void report_work_build(struct report *rep, const long *idx, long n, const long *copies)
{
	workload(rep);
	memory(rep);
	comm_groups(rep, idx, n, copies);
}

static double gib(double b)
{
	return b / 1073741824.0;
}

void report_work_text(const struct report *rep, FILE *f)
{
	const struct rp_result *r = rep->r;
	const struct tr_workload *w = tr_workload(rep->trace);
	char b1[32], b2[32];
	if (w) {
		report_nfmt(rep->tokens_per_s, b1, sizeof b1);
		fprintf(f, "  workload     %s (%s): %s tokens/s", w->name,
		        w->kind == WK_TRAIN ? "training" : "inference", b1);
		if (w->model_flops > 0 && rep->peak > 0)
			fprintf(f, ", model FLOPs %.4g TFLOP/s per device, MFU %.1f%%", rep->model_tflops_dev,
			        100 * rep->model_mfu);
		fprintf(f, "\n");
		if (rep->ttft_s > 0 || rep->tpot_s > 0) {
			report_tfmt(rep->ttft_s, b1, sizeof b1);
			report_tfmt(rep->tpot_s, b2, sizeof b2);
			fprintf(f, "               time to first token %s, per output token %s\n", b1, b2);
		}
	}
	if (rep->mem_rank >= 0) {
		const struct rp_mem *m = &r->mem[rep->mem_rank];
		fprintf(f, "  memory       peak %.2f GiB on rank %d of %.1f GiB (", gib(rep->mem_peak), rep->mem_rank,
		        gib(rep->mem_device));
		int first = 1;
		for (int c = 0; c < MEM_COUNT; c++)
			if (m->cat[c] > 0) {
				fprintf(f, "%s%s %.2f", first ? "" : ", ", tr_mem_name((enum tr_mem)c), gib(m->cat[c]));
				first = 0;
			}
		fprintf(f, "), mean %.2f GiB\n", gib(rep->mem_mean));
	}
	if (r->nofit[0])
		fprintf(f, "  DOES NOT FIT %s (timed as if it did)\n", r->nofit);
	if (r->fold > 1) {
		fprintf(f, "  folded       %d rank%s replayed, each for %d symmetric ranks (dims", r->nrep,
		        r->nrep == 1 ? "" : "s", r->fold);
		for (int d = 0; d < DIM_COUNT; d++)
			if (r->fold_dims & (1u << d))
				fprintf(f, " %s", tr_dim_name((enum tr_dim)d));
		fprintf(f, "; --no-fold replays all)\n");
	}
}

/* Where a rank's step goes, mean over ranks: compute per mark region,
   communication per communicator that compute does not hide (an instant with
   several communicators in flight shared among them), and idle time
   (pipeline bubbles, waiting for peers, host gaps). The rows add up to the
   step time (tests/run_breakdown.sh). */
void report_work_text_groups(const struct report *rep, FILE *f)
{
	const struct rp_result *r = rep->r;
	if (!rep->ngroups && !rep->nmarks)
		return;
	char b1[32];
	double marked = 0;
	fprintf(f, "\n  step breakdown (mean per rank; the rows add up to the step time, exposed time with several "
	           "communicators in flight shared among them)\n");
	for (int i = 0; i < rep->nmarks; i++) {
		report_tfmt(rep->marks[i].extra, b1, sizeof b1);
		fprintf(f, "    compute in %-18s %12s  %5.1f%%\n", rep->marks[i].name, b1,
		        r->time_s > 0 ? 100 * rep->marks[i].extra / r->time_s : 0);
		marked += rep->marks[i].extra;
	}
	if (rep->nmarks && rep->mean.compute > marked * 1.0001) {
		report_tfmt(rep->mean.compute - marked, b1, sizeof b1);
		fprintf(f, "    compute outside regions       %12s\n", b1);
	} else if (!rep->nmarks) {
		report_tfmt(rep->mean.compute, b1, sizeof b1);
		fprintf(f, "    compute                       %12s  %5.1f%%\n", b1,
		        r->time_s > 0 ? 100 * rep->mean.compute / r->time_s : 0);
	}
	for (int g = 0; g < rep->ngroups; g++) {
		char label[112];
		snprintf(label, sizeof label, "exposed %s", rep->cgroups[g].name);
		report_tfmt(rep->cgroups[g].extra, b1, sizeof b1);
		fprintf(f, "    %-29s %12s  %5.1f%%", label, b1,
		        r->time_s > 0 ? 100 * rep->cgroups[g].extra / r->time_s : 0);
		report_tfmt(rep->cgroups[g].time_s, b1, sizeof b1);
		fprintf(f, "  (of %s in transfers)\n", b1);
	}
	report_tfmt(rep->mean.idle, b1, sizeof b1);
	fprintf(f, "    idle (bubbles, waits, gaps)   %12s  %5.1f%%\n", b1,
	        r->time_s > 0 ? 100 * rep->mean.idle / r->time_s : 0);
}

void report_work_json(const struct report *rep, struct json *j)
{
	const struct rp_result *r = rep->r;
	const struct tr_workload *w = tr_workload(rep->trace);
	if (w) {
		json_obj(j, "workload");
		json_str(j, "name", w->name);
		json_str(j, "kind", w->kind == WK_TRAIN ? "train" : "infer");
		json_num(j, "model_flops", w->model_flops);
		json_num(j, "tokens", w->tokens);
		json_num(j, "tokens_per_s", rep->tokens_per_s);
		json_num(j, "model_tflops_per_device", rep->model_tflops_dev);
		json_num_or_null(j, "ttft_s", rep->ttft_s > 0 ? rep->ttft_s : NAN);
		json_num_or_null(j, "tpot_s", rep->tpot_s > 0 ? rep->tpot_s : NAN);
		json_obj_end(j);
	} else {
		json_nil(j, "workload");
	}
	if (rep->mem_rank >= 0) {
		const struct rp_mem *m = &r->mem[rep->mem_rank];
		json_obj(j, "memory");
		json_num(j, "peak_bytes", rep->mem_peak);
		json_int(j, "peak_rank", rep->mem_rank);
		json_num(j, "mean_bytes", rep->mem_mean);
		json_num(j, "device_bytes", rep->mem_device);
		json_bool(j, "fits", !r->nofit[0]);
		if (r->nofit[0])
			json_str(j, "does_not_fit", r->nofit);
		else
			json_nil(j, "does_not_fit");
		json_obj(j, "peak_by_category");
		for (int c = 0; c < MEM_COUNT; c++)
			json_num(j, tr_mem_name((enum tr_mem)c), m->cat[c]);
		json_obj_end(j);
		json_obj_end(j);
	} else {
		json_nil(j, "memory");
	}
	json_arr(j, "comm_by_communicator");
	for (int g = 0; g < rep->ngroups; g++) {
		json_obj(j, NULL);
		json_str(j, "comm", rep->cgroups[g].name);
		json_num(j, "time_s", rep->cgroups[g].time_s);
		json_num(j, "exposed_s", rep->cgroups[g].extra);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj(j, "fold");
	json_int(j, "replayed_ranks", r->nrep > 0 ? r->nrep : r->ranks);
	json_int(j, "ranks_per_replayed", r->fold > 0 ? r->fold : 1);
	json_obj_end(j);
	json_arr(j, "placement");
	for (int i = 0; i < rep->nplace; i++) {
		const struct rep_place *p = &rep->place[i];
		json_obj(j, NULL);
		json_str(j, "comm", p->comm);
		json_int(j, "groups", p->groups);
		json_int(j, "spanning", p->spanning);
		json_int(j, "size", p->size);
		if (p->suggest && p->suggest != r->topo.dpn)
			json_int(j, "suggest_ranks_per_node", p->suggest);
		else
			json_nil(j, "suggest_ranks_per_node");
		json_obj_end(j);
	}
	json_arr_end(j);
}
