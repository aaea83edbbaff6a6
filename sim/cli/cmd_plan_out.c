/*
 * cmd_plan_out.c -- the outputs of `sim plan` (cmd_plan.c searches): a
 * training plan's ranked table, CSV and JSON, the plot's file, the serving
 * plan (--mode serve) with its own table, CSV and JSON, and the gathering of
 * an MPI run's points on rank 0.
 */
#include "cmd_plan_int.h"
#include "json.h"
#include "platform.h"
#include "procpool.h"
#include "report.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pl_progress_fn over the command line's progress */
void cp_progress(long done, long n, void *ctx)
{
	cli_progress_jobs(ctx, "layouts", done, n);
}

/* ---- outputs ---------------------------------------------------------------- */

static const char *state_name(const struct pl_point *p)
{
	return p->state == PL_NOFIT       ? "does-not-fit"
	       : p->state == PL_DOMINATED ? "dominated"
	       : p->rc                    ? "failed"
	                                  : "replayed";
}

static double gib(double b)
{
	return b / 1073741824.0;
}

void cp_text_table(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g,
                   const struct pl_plan *p, double wall_s)
{
	const char *model = g->m.name[0] ? g->m.name : "gpt";
	char nodes[96] = "";
	long long node = pl_node_devices(c, A->sp.ranks_per_node);
	if (A->gpus > node && A->gpus % node) /* as the replay lays them out: the last node partly used */
		snprintf(nodes, sizeof nodes, "; %lld node%s of %lld and one of %lld", A->gpus / node,
		         A->gpus / node == 1 ? "" : "s", node, A->gpus % node);
	else if (A->sp.ranks_per_node)
		snprintf(nodes, sizeof nodes, "; %lld ranks per node", A->sp.ranks_per_node);
	printf("sim plan: %s training on %lld x %s (%s%s), seq %lld, global batch %lld, %s\n", model, A->gpus, c->name,
	       A->config, nodes, g->seq, g->p.global_batch, gen_dtype_name(g->p.dtype));
	printf("layouts        %ld: %ld replayed, %ld not replayed (a lighter recompute of them fits), %ld do not fit "
	       "in %.1f GiB; %.1f s\n",
	       p->n, p->counts[PL_REPLAYED], p->counts[PL_DOMINATED], p->counts[PL_NOFIT], gib(p->capacity_bytes),
	       wall_s);
	int moe = g->m.experts > 0, ctx = 0;
	long shown = 0, ok = 0;
	for (long i = 0; i < p->n; i++)
		ctx |= p->pt[i].c.p.cp > 1;
	for (long i = 0; i < p->n; i++)
		ok += p->pt[i].state == PL_REPLAYED && !p->pt[i].rc;
	if (!ok)
		printf("\nno layout fits and replays: the ones that need the least memory are listed below\n");
	else {
		printf(
		    "\n rank  tp  pp%s   dp%s  mb  recompute  zero     step   tokens/s    MFU  mem GiB  exposed tp    "
		    "    pp%s"
		    "        dp%s  bottleneck\n",
		    ctx ? "  cp" : "", moe ? "  ep" : "", ctx ? "        cp" : "", moe ? "        ep" : "");
		for (long i = 0; i < p->n && (A->top == 0 || shown < A->top); i++) {
			const struct pl_point *q = &p->pt[i];
			if (q->state != PL_REPLAYED || q->rc)
				continue;
			char step[32], e[PL_NCOMM][32], tok[32];
			report_tfmt(q->time_s, step, sizeof step);
			report_nfmt(q->tokens_per_s, tok, sizeof tok);
			for (int k = 0; k < PL_NCOMM; k++)
				if (q->exposed_s[k] > 0)
					report_tfmt(q->exposed_s[k], e[k], sizeof e[k]);
				else
					snprintf(e[k], sizeof e[k], "-");
			char cp[16] = "", ep[16] = "", ecp[40] = "";
			if (ctx)
				snprintf(cp, sizeof cp, " %3lld", q->c.p.cp),
				    snprintf(ecp, sizeof ecp, " %9s", e[PL_CP]);
			if (moe)
				snprintf(ep, sizeof ep, " %3lld", q->c.p.ep);
			double loss_s;
			int loss = pl_bottleneck(q, &loss_s);
			printf(
			    " %4ld %3lld %3lld%s %4lld%s %3lld  %-9s  %4d %8s %10s %5.1f%% %8.1f %11s %9s%s %9s%s%s  "
			    "%-5s %4.1f%%\n",
			    ++shown, q->c.p.tp, q->c.p.pp, cp, q->c.p.dp, ep, q->c.p.micro_batch,
			    gen_recompute_name(q->c.p.recompute), q->c.p.zero, step, tok, 100 * q->mfu,
			    gib(q->mem_bytes), e[PL_TP], e[PL_PP], ecp, e[PL_DP], moe ? " " : "", moe ? e[PL_EP] : "",
			    pl_bottleneck_name(loss), q->time_s > 0 ? 100 * loss_s / q->time_s : 0.0);
		}
	}
	long failed = 0;
	for (long i = 0; i < p->n; i++)
		if (p->pt[i].state == PL_REPLAYED && p->pt[i].rc) {
			char l[128];
			pl_layout_text(&p->pt[i].c, l, sizeof l);
			if (!failed++)
				printf("\nreplays that failed:\n");
			printf("  %s: %s\n", l, p->pt[i].why);
		}
	long nofit = 0;
	for (long i = 0; i < p->n && nofit < 3; i++)
		if (p->pt[i].state == PL_NOFIT) {
			const struct pl_point *q = &p->pt[i];
			char l[128];
			pl_layout_text(&q->c, l, sizeof l);
			if (!nofit++)
				printf("\ndo not fit (least memory first):\n");
			printf("  %s: needs %.1f GiB on stage %d (params %.1f, grads %.1f, optimizer %.1f, activations "
			       "%.1f, workspace %.1f)\n",
			       l, gib(q->mem_bytes), q->mem_stage, gib(q->mem.params), gib(q->mem.grads),
			       gib(q->mem.optimizer), gib(q->mem.activations), gib(q->mem.workspace));
		}
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.6g", v);
	else
		fputc(',', f);
}

void cp_write_csv(FILE *f, const struct pl_plan *p)
{
	fprintf(f, "rank,state,tp,pp,cp,dp,ep,micro_batch,recompute,zero,sp,memory_gib,step_s,tokens_per_s,mfu,"
	           "compute_s,exposed_tp_s,exposed_pp_s,exposed_cp_s,exposed_dp_s,exposed_ep_s,exposed_other_s,idle_s,"
	           "bottleneck,error\n");
	long rank = 0;
	for (long i = 0; i < p->n; i++) {
		const struct pl_point *q = &p->pt[i];
		int timed = q->state == PL_REPLAYED && !q->rc;
		if (timed)
			fprintf(f, "%ld", ++rank);
		fprintf(f, ",%s,%lld,%lld,%lld,%lld,%lld,%lld,%s,%d,%d", state_name(q), q->c.p.tp, q->c.p.pp, q->c.p.cp,
		        q->c.p.dp, q->c.p.ep, q->c.p.micro_batch, gen_recompute_name(q->c.p.recompute), q->c.p.zero,
		        q->c.p.sp);
		csv_num(f, gib(q->mem_bytes));
		csv_num(f, timed ? q->time_s : NAN);
		csv_num(f, timed ? q->tokens_per_s : NAN);
		csv_num(f, timed ? q->mfu : NAN);
		csv_num(f, timed ? q->compute_s : NAN);
		for (int k = 0; k < PL_NCOMM; k++)
			csv_num(f, timed ? q->exposed_s[k] : NAN);
		csv_num(f, timed ? q->idle_s : NAN);
		double loss_s;
		fprintf(f, ",%s,", timed ? pl_bottleneck_name(pl_bottleneck(q, &loss_s)) : "");
		for (const char *s = q->why; *s; s++) /* one field: no comma, quote or newline of its own */
			fputc(*s == ',' || *s == '"' || *s == '\n' ? ' ' : *s, f);
		fputc('\n', f);
	}
}

/* what made this output: sim's version, the command, the config's fingerprint and overrides */
static void provenance(struct json *j, const struct arch_chip *c, const struct pl_args *A)
{
	char fp[32];
	snprintf(fp, sizeof fp, "%016llx", (unsigned long long)arch_chip_fingerprint(c));
	json_obj(j, "provenance");
	json_str(j, "sim_version", SIM_VERSION);
	json_arr(j, "command");
	json_str(j, NULL, "sim");
	for (int i = 0; i < A->argc; i++)
		json_str(j, NULL, A->argv[i]);
	json_arr_end(j);
	json_str(j, "config_fingerprint", fp);
	json_arr(j, "overrides");
	for (int i = 0; i < c->nsets; i++)
		json_str(j, NULL, c->sets[i]);
	json_arr_end(j);
	json_obj_end(j);
}

void cp_write_json(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g,
                   const struct pl_plan *p)
{
	struct json j;
	json_begin(&j, stdout, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 1);
	json_str(&j, "mode", "train");
	json_str(&j, "config", A->config);
	provenance(&j, c, A);
	json_str(&j, "model", g->m.name[0] ? g->m.name : "gpt");
	json_int(&j, "gpus", A->gpus);
	json_int(&j, "ranks_per_node", pl_node_devices(c, A->sp.ranks_per_node));
	json_int(&j, "seq", g->seq);
	json_int(&j, "global_batch", g->p.global_batch);
	json_str(&j, "dtype", gen_dtype_name(g->p.dtype));
	json_num(&j, "device_memory_bytes", p->capacity_bytes);
	json_obj(&j, "layouts_count");
	json_int(&j, "listed", p->n);
	json_int(&j, "replayed", p->counts[PL_REPLAYED]);
	json_int(&j, "dominated", p->counts[PL_DOMINATED]);
	json_int(&j, "do_not_fit", p->counts[PL_NOFIT]);
	json_obj_end(&j);
	json_arr(&j, "layouts");
	long rank = 0;
	for (long i = 0; i < p->n; i++) {
		const struct pl_point *q = &p->pt[i];
		int timed = q->state == PL_REPLAYED && !q->rc;
		json_obj(&j, NULL);
		if (timed)
			json_int(&j, "rank", ++rank);
		else
			json_nil(&j, "rank");
		json_str(&j, "state", state_name(q));
		json_int(&j, "tp", q->c.p.tp);
		json_int(&j, "pp", q->c.p.pp);
		json_int(&j, "cp", q->c.p.cp);
		json_int(&j, "dp", q->c.p.dp);
		json_int(&j, "ep", q->c.p.ep);
		json_int(&j, "micro_batch", q->c.p.micro_batch);
		json_str(&j, "recompute", gen_recompute_name(q->c.p.recompute));
		json_int(&j, "zero", q->c.p.zero);
		json_bool(&j, "sp", q->c.p.sp);
		json_num(&j, "memory_bytes", q->mem_bytes);
		json_int(&j, "memory_stage", q->mem_stage);
		if (timed) {
			json_num(&j, "step_s", q->time_s);
			json_num_or_null(&j, "tokens_per_s", q->tokens_per_s);
			json_num_or_null(&j, "mfu", q->mfu);
			json_num(&j, "compute_s", q->compute_s);
			json_obj(&j, "exposed_s");
			for (int k = 0; k < PL_NCOMM; k++)
				json_num(&j, pl_comm_name((enum pl_comm)k), q->exposed_s[k]);
			json_obj_end(&j);
			json_num(&j, "idle_s", q->idle_s);
			double loss_s;
			json_str(&j, "bottleneck", pl_bottleneck_name(pl_bottleneck(q, &loss_s)));
		}
		if (q->why[0])
			json_str(&j, "error", q->why);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

/* ---- serving ---------------------------------------------------------------- */

static void limits_text(const struct sv_options *o, char *buf, size_t len)
{
	char t[32] = "", p[32] = "";
	if (o->slo_ttft_s > 0)
		report_tfmt(o->slo_ttft_s, t, sizeof t);
	if (o->slo_tpot_s > 0)
		report_tfmt(o->slo_tpot_s, p, sizeof p);
	snprintf(buf, len, "%s%s%s%s%s", t[0] ? "p99 TTFT <= " : "", t, t[0] && p[0] ? ", " : "",
	         p[0] ? "p99 TPOT <= " : "", p);
}

static void serve_text(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g,
                       const struct pl_serve_plan *p, double wall_s)
{
	const struct sv_options *o = &A->so;
	char lim[128];
	limits_text(o, lim, sizeof lim);
	printf("sim plan: %s serving on %lld x %s (%s), %s, %s\n", g->m.name[0] ? g->m.name : "gpt", A->gpus, c->name,
	       A->config, gen_dtype_name(g->p.dtype), lim);
	printf("layouts        %ld replica layouts, each fleet served at rising Poisson rates (%lld requests a run); "
	       "%.1f s\n",
	       p->n, o->requests, wall_s);
	long ok = 0;
	for (long i = 0; i < p->n; i++)
		ok += !p->pt[i].rc;
	if (ok) {
		printf("\n rank  tp  pp  replicas  max seqs    rate/s  out tok/s  per GPU  TTFT p99  TPOT p99  KV "
		       "GiB/GPU\n");
		long shown = 0;
		for (long i = 0; i < p->n && (A->top == 0 || shown < A->top); i++) {
			const struct pl_serve_point *q = &p->pt[i];
			if (q->rc)
				continue;
			char t[32] = "-", u[32] = "-", tok[32], per[32];
			if (q->rate > 0) {
				report_tfmt(q->ttft_p99_s, t, sizeof t);
				report_tfmt(q->tpot_p99_s, u, sizeof u);
			}
			report_nfmt(q->out_tok_per_s, tok, sizeof tok);
			report_nfmt(q->out_tok_per_s / (double)A->gpus, per, sizeof per);
			printf(" %4ld %3lld %3lld %9d %9lld %9.3g %10s %8s %9s %9s %11.1f\n", ++shown, q->c.p.tp,
			       q->c.p.pp, q->replicas, q->max_seqs, q->rate, tok, per, t, u, gib(q->kv_pool_bytes));
		}
	}
	long bad = 0;
	for (long i = 0; i < p->n; i++)
		if (p->pt[i].rc) {
			if (!bad++)
				printf("\nnot served:\n");
			printf("  tp %lld pp %lld: %s\n", p->pt[i].c.p.tp, p->pt[i].c.p.pp, p->pt[i].why);
		}
}

static void serve_csv(FILE *f, const struct pl_serve_plan *p)
{
	fprintf(f, "rank,state,tp,pp,replicas,max_num_seqs,rate_per_s,output_tokens_per_s,ttft_p99_s,tpot_p99_s,"
	           "weights_gib,kv_cache_gib,error\n");
	long rank = 0;
	for (long i = 0; i < p->n; i++) {
		const struct pl_serve_point *q = &p->pt[i];
		if (!q->rc)
			fprintf(f, "%ld", ++rank);
		fprintf(f, ",%s,%lld,%lld,%d,%lld",
		        q->rc == SIM_EXIT_NOFIT ? "does-not-fit"
		        : q->rc                 ? "failed"
		                                : "served",
		        q->c.p.tp, q->c.p.pp, q->replicas, q->max_seqs);
		int on = !q->rc;
		csv_num(f, on ? q->rate : NAN);
		csv_num(f, on ? q->out_tok_per_s : NAN);
		csv_num(f, on && q->rate > 0 ? q->ttft_p99_s : NAN);
		csv_num(f, on && q->rate > 0 ? q->tpot_p99_s : NAN);
		csv_num(f, on ? gib(q->weights_bytes) : NAN);
		csv_num(f, on ? gib(q->kv_pool_bytes) : NAN);
		fputc(',', f);
		for (const char *t = q->why; *t; t++)
			fputc(*t == ',' || *t == '"' || *t == '\n' ? ' ' : *t, f);
		fputc('\n', f);
	}
}

static void serve_json(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g,
                       const struct pl_serve_plan *p)
{
	struct json j;
	json_begin(&j, stdout, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 1);
	json_str(&j, "mode", "serve");
	json_str(&j, "config", A->config);
	provenance(&j, c, A);
	json_str(&j, "model", g->m.name[0] ? g->m.name : "gpt");
	json_int(&j, "gpus", A->gpus);
	json_str(&j, "dtype", gen_dtype_name(g->p.dtype));
	json_num_or_null(&j, "slo_ttft_p99_s", A->so.slo_ttft_s > 0 ? A->so.slo_ttft_s : NAN);
	json_num_or_null(&j, "slo_tpot_p99_s", A->so.slo_tpot_s > 0 ? A->so.slo_tpot_s : NAN);
	json_int(&j, "requests", A->so.requests);
	json_arr(&j, "layouts");
	long rank = 0;
	for (long i = 0; i < p->n; i++) {
		const struct pl_serve_point *q = &p->pt[i];
		json_obj(&j, NULL);
		if (!q->rc)
			json_int(&j, "rank", ++rank);
		else
			json_nil(&j, "rank");
		json_str(&j, "state", q->rc == SIM_EXIT_NOFIT ? "does-not-fit" : q->rc ? "failed" : "served");
		json_int(&j, "tp", q->c.p.tp);
		json_int(&j, "pp", q->c.p.pp);
		json_int(&j, "replicas", q->replicas);
		json_int(&j, "max_num_seqs", q->max_seqs);
		if (!q->rc) {
			json_num(&j, "rate_per_s", q->rate);
			json_num(&j, "output_tokens_per_s", q->out_tok_per_s);
			json_num_or_null(&j, "ttft_p99_s", q->rate > 0 ? q->ttft_p99_s : NAN);
			json_num_or_null(&j, "tpot_p99_s", q->rate > 0 ? q->tpot_p99_s : NAN);
			json_num(&j, "weights_bytes", q->weights_bytes);
			json_num(&j, "kv_cache_bytes", q->kv_pool_bytes);
		} else
			json_str(&j, "error", q->why);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

int cp_open_out(const char *path, struct out_file *o, FILE **f)
{
	char why[256];
	*f = out_open(path, o, why, sizeof why);
	if (!*f)
		fprintf(stderr, "sim plan: cannot write %s: %s\n", path, why);
	return *f ? 0 : SIM_EXIT_CANTCREAT;
}

int cp_close_out(const char *path, struct out_file *o, FILE *f)
{
	char why[256];
	if (ferror(f)) {
		out_abort(o);
		fprintf(stderr, "sim plan: cannot write %s: %s\n", path, strerror(EIO));
		return SIM_EXIT_CANTCREAT;
	}
	if (out_commit(o, why, sizeof why)) {
		fprintf(stderr, "sim plan: cannot write %s: %s\n", path, why);
		return SIM_EXIT_CANTCREAT;
	}
	return 0;
}

/* the plot's title: what is planned on which chip */
void cp_plot_title(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g, char *t, size_t len)
{
	char lim[128];
	limits_text(&A->so, lim, sizeof lim);
	if (A->serve)
		snprintf(t, len, "%s served on %lld x %s within %s", g->m.name[0] ? g->m.name : "gpt", A->gpus, c->name,
		         lim);
	else
		snprintf(t, len, "%s on %lld x %s: step time and memory of each layout",
		         g->m.name[0] ? g->m.name : "gpt", A->gpus, c->name);
}

/* Writes plot pl (NULL: it could not be made) to path, whole or not at all, and frees it. */
int cp_save_plot(const char *path, struct plot *pl)
{
	struct out_file o;
	FILE *f;
	int rc = pl ? cp_open_out(path, &o, &f) : SIM_EXIT_INTERNAL;
	if (!pl)
		fprintf(stderr, "sim plan: out of memory making the plot\n");
	else if (!rc)
		rc = plot_write(pl, f)
		         ? (out_abort(&o), fprintf(stderr, "sim plan: cannot write %s: %s\n", path, strerror(EIO)),
		            SIM_EXIT_CANTCREAT)
		         : cp_close_out(path, &o, f);
	plot_free(pl);
	return rc;
}

int cp_run_serve(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g)
{
	char why[1024];
	struct pl_serve_plan p;
	struct progress P;
	progress_start(&P, "plan");
	if (pl_serve(c, g, &A->so, A->gpus, &A->sp, A->jobs, cp_progress, &P, &p, why, sizeof why))
		return strncmp(why, "no replica layout", 17)
		           ? (fprintf(stderr, "sim plan: %s\n", why), SIM_EXIT_INTERNAL)
		           : cli_usage_error("plan", "%s", why);
	int rc = 0;
	if (A->csv) {
		struct out_file o;
		FILE *f;
		if (!(rc = cp_open_out(A->csv, &o, &f))) {
			serve_csv(f, &p);
			rc = cp_close_out(A->csv, &o, f);
		}
	}
	char title[512];
	cp_plot_title(c, A, g, title, sizeof title);
	if (!rc && A->plot)
		rc = cp_save_plot(A->plot, pl_serve_plot(&p, title));
	if (!rc) {
		if (A->json)
			serve_json(c, A, g, &p);
		else
			serve_text(c, A, g, &p, progress_elapsed_s(&P));
	}
	pl_serve_free(&p);
	return rc;
}

/* Under MPI (mpi_ranks.h): rank r replayed the k-th replayed layout for k = r modulo N; rank 0 gathers every rank's
   results into the plan. Returns 0, or an exit code (on every rank). */
int cp_gather_plan(const struct sim_mpi *mp, struct pl_plan *p)
{
	long n = p->counts[PL_REPLAYED], N = mp->size, nmine = sim_share(n, mp->rank, N);
	long *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
	struct pl_result *mine = calloc((size_t)(nmine ? nmine : 1), sizeof *mine);
	struct pl_result *all = mp->rank == 0 ? calloc((size_t)(n ? n : 1), sizeof *all) : NULL;
	int code = !idx || !mine || (mp->rank == 0 && !all) ? SIM_EXIT_INTERNAL : 0;
	if (code)
		fprintf(stderr, "sim plan: out of memory\n");
	code = sim_mpi_agree(mp, code);
	for (long i = 0, k = 0; !code && i < p->n; i++)
		if (p->pt[i].state == PL_REPLAYED)
			idx[k++] = i;
	for (long j = 0; !code && j < nmine; j++)
		pl_result_get(&p->pt[idx[mp->rank + j * N]], &mine[j]);
	if (!code)
		code = sim_mpi_gather_dealt(mp, mine, n, sizeof *mine, all, "plan");
	for (long k = 0; !code && mp->rank == 0 && k < n; k++)
		pl_result_put(&p->pt[idx[k]], &all[k]);
	free(idx);
	free(mine);
	free(all);
	return code;
}
