/*
 * serve.c -- a serving run: the KV cache each replica gets, the fleet's
 * engines (replicas, their pipeline virtual engines, or disaggregated
 * prefill and decode pools), the latency statistics and outputs, and the
 * search for the highest rate that meets the latency limits.
 *
 * The KV cache is what vLLM gives it (vllm/v1/worker/gpu_worker.py,
 * determine_available_memory): gpu_memory_utilization x device memory, less
 * the weights and the peak of a profiling forward of max_num_batched_tokens
 * tokens, in blocks of block_size tokens on every rank. TensorRT-LLM's
 * (--kv-free-fraction, KvCacheConfig.free_gpu_memory_fraction) is that
 * fraction of the memory left after the engine's weights and activations.
 */
#include "serve_int.h"

#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sv_defaults(struct sv_options *o)
{
	memset(o, 0, sizeof *o);
	o->arrivals = SV_POISSON;
	o->rate = 1;
	o->requests = 1000;
	o->in = (struct sv_len){SV_LEN_FIXED, 512, 512};
	o->out = (struct sv_len){SV_LEN_FIXED, 128, 128};
	o->seed = 1;
	o->max_num_seqs = 256;
	o->max_batched_tokens = 8192;
	o->block_tokens = 16;
	o->chunked_prefill = 1;
	o->mem_util = 0.9;
	o->preempt = SV_RECOMPUTE;
	o->replicas = 1;
}

/* ---- the fleet --------------------------------------------------------------- */

/* requests handed from the prefill pool to each decode engine */
struct pool {
	struct sv_req **v; /* per decode engine */
	long *n, *cap;
	int engines;
	struct sv_model *m;
	struct sv_geom g;
	int prefill_replicas;
	double xfer_sum;
	long long xfers;
};

static int handoff(void *ctx, struct sv_req *q)
{
	struct pool *P = ctx;
	int d = (int)(q->id % P->engines), per = P->g.tp * P->g.pp;
	int src = q->replica / P->g.pp * per, dst = (P->prefill_replicas + d / P->g.pp) * per;
	if (P->n[d] + 1 >= P->cap[d]) {
		long cap = P->cap[d] ? 2 * P->cap[d] : 256;
		struct sv_req *v = realloc(P->v[d], (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		P->v[d] = v;
		P->cap[d] = cap;
	}
	double t = sv_kv_transfer(P->m, src, dst, P->g.kv_token_bytes * (double)q->computed);
	struct sv_req c = *q;
	c.avail_s = q->last_s + t;
	c.replica = P->prefill_replicas * P->g.pp + d;
	c.next = NULL;
	P->v[d][P->n[d]++] = c;
	P->xfer_sum += t;
	P->xfers++;
	free(q);
	return 0;
}

static int by_avail(const void *a, const void *b)
{
	const struct sv_req *x = a, *y = b;
	if (x->avail_s != y->avail_s)
		return x->avail_s < y->avail_s ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static void pool_free(struct pool *P)
{
	for (int i = 0; P->v && i < P->engines; i++)
		free(P->v[i]);
	free(P->v);
	free(P->n);
	free(P->cap);
}

static int run_engines(struct sv_model *m, const struct sv_options *o, struct sv_geom *g, long long blocks,
                       long long max_len, struct sv_stats *st, struct sv_result *r, char *why, size_t whylen)
{
	int pp = g->pp, pre = o->prefill_replicas, engines = (pre ? pre : o->replicas) * pp;
	struct pool P = {.m = m, .g = *g, .prefill_replicas = pre, .engines = (o->replicas - pre) * pp};
	int rc = 0;
	if (pre) {
		P.v = calloc((size_t)P.engines, sizeof *P.v);
		P.n = calloc((size_t)P.engines, sizeof *P.n);
		P.cap = calloc((size_t)P.engines, sizeof *P.cap);
		if (!P.v || !P.n || !P.cap) {
			pool_free(&P);
			snprintf(why, whylen, "serve: out of memory");
			return SIM_EXIT_INTERNAL;
		}
	}
	for (int e = 0; e < engines && !rc; e++) {
		struct sv_src src;
		if ((rc = -sv_src_open(&src, o, e, engines, why, whylen)))
			break;
		struct sv_engine_in in = {.m = m,
		                          .o = o,
		                          .g = *g,
		                          .blocks = blocks,
		                          .replica = e,
		                          .role = pre ? 1 : 0,
		                          .src = &src,
		                          .st = st,
		                          .max_len = max_len,
		                          .handoff = handoff,
		                          .ctx = &P};
		rc = sv_engine_run(&in, r, why, whylen);
		sv_src_close(&src);
	}
	for (int d = 0; pre && d < P.engines && !rc; d++) {
		struct sv_req end = {.id = -1};
		if (!P.v[d]) /* no request reached this engine */
			continue;
		qsort(P.v[d], (size_t)P.n[d], sizeof *P.v[d], by_avail);
		P.v[d][P.n[d]] = end; /* handoff keeps a spare slot */
		struct sv_engine_in in = {.m = m,
		                          .o = o,
		                          .g = *g,
		                          .blocks = blocks,
		                          .replica = pre * pp + d,
		                          .role = 2,
		                          .ready = P.v[d],
		                          .st = st,
		                          .max_len = max_len};
		rc = sv_engine_run(&in, r, why, whylen);
	}
	r->kv_xfer_s = P.xfers ? P.xfer_sum / (double)P.xfers : 0;
	pool_free(&P);
	return rc;
}

static void finish(const struct sv_stats *st, struct sv_result *r)
{
	r->finished = st->finished;
	r->good = st->good;
	r->in_tokens = st->in_tokens;
	r->out_tokens = st->out_tokens;
	r->cached_tokens = st->cached;
	r->t_first_s = st->t_first;
	r->t_last_s = st->t_last;
	r->duration_s = st->t_last - st->t_first;
	if (r->duration_s > 0) {
		r->req_per_s = (double)r->finished / r->duration_s;
		r->out_tok_per_s = (double)r->out_tokens / r->duration_s;
		r->tok_per_s = (double)(r->in_tokens + r->out_tokens) / r->duration_s;
		r->good_per_s = (double)r->good / r->duration_s;
	}
}

int sv_run(struct sv_model *m, const struct sv_options *o, struct sv_result *r, char *why, size_t whylen)
{
	const struct gen_config *gc = sv_model_gen(m);
	struct sv_geom g;
	struct sv_stats st = {.o = o};
	clock_t c0 = clock();
	memset(r, 0, sizeof *r);
	sv_model_geom(m, o->max_batched_tokens, &g);
	r->tp = g.tp;
	r->pp = g.pp;
	r->replicas = o->replicas;
	r->prefill_replicas = o->prefill_replicas;
	r->gpus = o->replicas * g.tp * g.pp;
	r->weights_bytes = g.weights_bytes;
	r->act_bytes = g.act_bytes;
	r->capacity_bytes = g.capacity_bytes;
	r->kv_token_bytes = g.kv_token_bytes;
	double pool = o->kv_free_frac > 0 ? o->kv_free_frac * (g.capacity_bytes - g.weights_bytes - g.act_bytes)
	                                  : o->mem_util * g.capacity_bytes - g.weights_bytes - g.act_bytes;
	long long blocks = pool > 0 ? (long long)floor(pool / ((double)o->block_tokens * g.kv_token_bytes)) : 0;
	r->kv_pool_bytes = pool > 0 ? pool : 0;
	r->kv_blocks = blocks;
	if (blocks < 1) {
		snprintf(why, whylen,
		         "serve: no KV cache fits: %.0f%% of %.1f GiB is %.1f GiB, the weights take %.1f GiB and a "
		         "%lld-token forward %.1f GiB per rank (more --tp or --pp, or a smaller --max-batched-tokens)",
		         100 * o->mem_util, g.capacity_bytes / 1073741824.0,
		         o->mem_util * g.capacity_bytes / 1073741824.0, g.weights_bytes / 1073741824.0,
		         o->max_batched_tokens, g.act_bytes / 1073741824.0);
		return SIM_EXIT_NOFIT;
	}
	/* pipeline virtual engines split the cache (vLLM V0's per-virtual-engine block managers) */
	long long per_engine = blocks / g.pp;
	long long max_len = o->max_model_len ? o->max_model_len : gc->m.seq;
	int rc = 0;
	if (sv_q_init(&st.ttft) || sv_q_init(&st.tpot) || sv_q_init(&st.itl) || sv_q_init(&st.e2e) ||
	    sv_q_init(&st.queue)) {
		snprintf(why, whylen, "serve: out of memory");
		rc = SIM_EXIT_INTERNAL;
	}
	if (!rc && o->csv &&
	    fputs("id,engine,arrival_s,input_len,output_len,cached_tokens,scheduled_s,first_token_s,finish_s,ttft_s,"
	          "tpot_s,e2e_s,max_itl_s,preemptions,within_slo\n",
	          o->csv) < 0)
		st.write_err = 1;
	if (!rc && o->timeline) {
		int engines = o->replicas * g.pp;
		fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", o->timeline);
		for (int e = 0; e < engines; e++) {
			char name[96];
			int n = snprintf(name, sizeof name, "replica %d", e / g.pp);
			if (g.pp > 1)
				n += snprintf(name + n, sizeof name - (size_t)n, " virtual engine %d", e % g.pp);
			if (o->prefill_replicas)
				snprintf(name + n, sizeof name - (size_t)n,
				         e < o->prefill_replicas * g.pp ? " (prefill)" : " (decode)");
			sv_stats_sep(&st);
			fprintf(
			    o->timeline,
			    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"%s\"}},\n"
			    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"engine "
			    "steps\"}},\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":1,\"args\":{"
			    "\"name\":"
			    "\"requests\"}}",
			    e, name, e, e);
			st.tl_events += 2;
		}
	}
	if (!rc)
		rc = run_engines(m, o, &g, per_engine, max_len, &st, r, why, whylen);
	if (!rc && o->timeline)
		fputs("\n]}\n", o->timeline);
	if (!rc && (st.write_err || (o->csv && ferror(o->csv)) || (o->timeline && ferror(o->timeline)))) {
		snprintf(why, whylen, "serve: cannot write %s",
		         st.write_err && o->csv ? o->csv_name : o->timeline_name);
		rc = SIM_EXIT_CANTCREAT;
	}
	finish(&st, r);
	sv_q_get(&st.ttft, &r->ttft);
	sv_q_get(&st.tpot, &r->tpot);
	sv_q_get(&st.itl, &r->itl);
	sv_q_get(&st.e2e, &r->e2e);
	sv_q_get(&st.queue, &r->queue);
	sv_q_free(&st.ttft);
	sv_q_free(&st.tpot);
	sv_q_free(&st.itl);
	sv_q_free(&st.e2e);
	sv_q_free(&st.queue);
	sv_model_stats(m, &r->dm_hits, &r->dm_misses, &r->memo_hits, &r->memo_misses);
	r->wall_s = (double)(clock() - c0) / CLOCKS_PER_SEC;
	return rc;
}

/* ---- the highest rate within the limits --------------------------------------- */

static int within(const struct sv_options *o, const struct sv_result *r)
{
	return r->finished > 0 && (o->slo_ttft_s <= 0 || r->ttft.p99 <= o->slo_ttft_s) &&
	       (o->slo_tpot_s <= 0 || r->tpot.p99 <= o->slo_tpot_s);
}

int sv_max_rate(struct sv_model *m, const struct sv_options *o, double *rate, struct sv_result *r, char *why,
                size_t whylen)
{
	struct sv_options q = *o;
	double wall = 0;
	int rc;
	q.csv = q.timeline = NULL;
	q.arrivals = SV_BURST;
	q.progress = 0;             /* one progress for the whole search */
	struct progress prog = {0}; /* off unless o->progress */
	if (o->progress)
		progress_start(&prog, "serve");
	if ((rc = sv_run(m, &q, r, why, whylen)))
		return rc;
	wall += r->wall_s;
	double lo = 0, hi = r->req_per_s;
	q.arrivals = SV_POISSON;
	for (int i = 0; i < 40 && hi - lo > 0.01 * hi; i++) {
		q.rate = (lo + hi) / 2;
		if ((rc = sv_run(m, &q, r, why, whylen)))
			break;
		wall += r->wall_s;
		if (within(o, r))
			lo = q.rate;
		else
			hi = q.rate;
		if (progress_due(&prog))
			progress_print(&prog, "rate search, run %d: between %.4g and %.4g requests/s", i + 2, lo, hi);
	}
	progress_end(&prog);
	if (rc)
		return rc;
	*rate = lo;
	if (lo <= 0) {
		memset(r, 0, sizeof *r);
		return 0;
	}
	q = *o;
	q.arrivals = SV_POISSON;
	q.rate = lo;
	rc = sv_run(m, &q, r, why, whylen);
	r->wall_s += wall;
	return rc;
}
