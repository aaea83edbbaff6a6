/*
 * serve_step.c -- the time of one engine step of a serving replica.
 *
 * A step is one forward of the continuous batch: every new token (prefill
 * chunks and decode tokens alike) through the embedding, each layer's
 * GEMMs, norms and tensor-parallel collectives, and the LM head over the
 * sequences that sample. workloads/gen_trace.c writes those ops
 * (gen_serve_step) exactly as it writes `sim gen --mode infer`'s forward, so
 * a step here and the same batch replayed by `sim run` price the same ops.
 * The parts that do not depend on the sequences' contexts are a function of
 * (stage, tokens, sampled) and memoized as a whole; each layer's attention
 * is priced per step from the batch's own contexts:
 *
 *   decode   one PagedAttention kernel over the decoding sequences (vLLM
 *            runs them in one launch), at their mean context rounded up to
 *            a KV block: its time is the KV it reads;
 *   prefill  one FlashAttention kernel over the prefilling sequences at their
 *            mean chunk and mean keys (chunk plus what is cached before it),
 *            causal within the chunk.
 *
 * Device ops take the device model's time (memoized by op text, as the
 * replay does); a collective takes the planner's latency plus its bandwidth
 * time on idle links (coll_plan), which is what the replay's memo plays for
 * a communicator alone on its links, as a replica's tensor-parallel group
 * is. Pipeline stages run in turn, the activations sent between them. An
 * engine whose host work the device waits for (--engine vllm) adds it
 * before the forward (gen_engine_host_s).
 */
#include "serve_int.h"

#include "platform.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct memo_ent {
	unsigned long long key; /* 0: empty */
	double t;
};

struct sv_model {
	const struct arch_chip *c;
	struct gen_config g;
	struct dm *dm;
	struct topo topo;
	struct op attn; /* the attention template (heads, dim, dtype, kernel of prefill) */
	int have_attn;
	long long attn_layers[64]; /* per stage: layers attending to every key (gen_serve_step's ATTN lines) */
	long long swa_layers[64]; /* per stage: layers attending through the sliding window (ATTN lines with window=) */
	struct memo_ent *memo;
	size_t cap, used;
	long hits, misses;
	int err;
	char why[512];
};

/* ---- a memo of dense-part times by (stage, tokens, sampled) ---------------- */

static unsigned long long mix(unsigned long long x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static struct memo_ent *memo_slot(struct sv_model *m, unsigned long long key)
{
	size_t i = (size_t)mix(key) & (m->cap - 1);
	while (m->memo[i].key && m->memo[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return &m->memo[i];
}

static int memo_grow(struct sv_model *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	struct memo_ent *old = m->memo, *v = calloc(cap, sizeof *v);
	size_t ocap = m->cap;
	if (!v)
		return -1;
	m->memo = v;
	m->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key)
			*memo_slot(m, old[i].key) = old[i];
	free(old);
	return 0;
}

/* the slot of key (empty or holding it), growing the table first; NULL out of memory */
static struct memo_ent *memo_find(struct sv_model *m, unsigned long long key)
{
	if (m->used * 2 >= m->cap && memo_grow(m)) {
		snprintf(m->why, sizeof m->why, "serve: out of memory");
		m->err = 1;
		return NULL;
	}
	return memo_slot(m, key);
}

/* ---- pricing one line ------------------------------------------------------- */

struct price {
	struct sv_model *m;
	long long stage;
	double t;
};

static double coll_time(struct sv_model *m, enum tr_coll k, double bytes, int first, int n)
{
	int members[1024];
	struct coll_plan p;
	char why[256];
	if (n <= 1 || bytes <= 0)
		return 0;
	if (n > 1024)
		n = 1024;
	for (int i = 0; i < n; i++)
		members[i] = first + i;
	if (coll_plan(&m->topo, k, COLL_AUTO, bytes, NULL, members, n, 0, &p, why, sizeof why)) {
		snprintf(m->why, sizeof m->why, "%s", why);
		m->err = 1;
		return 0;
	}
	double t = p.lat_s + p.bw_s;
	coll_plan_free(&p);
	return t;
}

static double op_time(struct sv_model *m, const struct op *op)
{
	struct dm_result r;
	char why[256];
	if (dm_predict_cached(m->dm, m->c, op, &r, why, sizeof why)) {
		snprintf(m->why, sizeof m->why, "%s", why);
		m->err = 1;
		return 0;
	}
	return r.time_s;
}

static int price_line(void *ctx, int what, const char *line, long long times)
{
	struct price *P = ctx;
	struct sv_model *m = P->m;
	char why[256];
	if (!strncmp(line, "coll ", 5)) {
		const char *o = strstr(line, "op="), *b = strstr(line, "bytes=");
		enum tr_coll k = CO_COUNT;
		for (int i = 0; i < CO_COUNT && o; i++) {
			size_t n = strlen(tr_coll_name((enum tr_coll)i));
			if (!strncmp(o + 3, tr_coll_name((enum tr_coll)i), n) && o[3 + n] == ' ')
				k = (enum tr_coll)i;
		}
		if (k == CO_COUNT || !b || strstr(line, "comm=tp") == NULL) {
			snprintf(m->why, sizeof m->why, "serve: unexpected collective in a step: %s", line);
			return m->err = 1;
		}
		int tp = (int)m->g.p.tp;
		P->t += (double)times * coll_time(m, k, strtod(b + 6, NULL), (int)P->stage * tp, tp);
		return m->err;
	}
	struct op op;
	if (op_parse(line, NULL, &op, why, sizeof why)) {
		snprintf(m->why, sizeof m->why, "serve: %s: %s", line, why);
		return m->err = 1;
	}
	if (what == GEN_LINE_ATTN) {
		if (!m->have_attn) {
			m->attn = op;
			m->have_attn = 1;
		}
		return 0;
	}
	P->t += (double)times * op_time(m, &op);
	return m->err;
}

/* a part of the stage's ops but attention (gen_serve_step), memoized */
static double part_time(struct sv_model *m, long long stage, int part, long long tokens, long long sampled)
{
	/* top bits 8 and up: attention's kinds (attn_op) are 1 to 4 */
	unsigned long long key = ((unsigned long long)(8 + part) << 60) | ((unsigned long long)stage << 48) |
	                         ((unsigned long long)tokens << 24) | (unsigned long long)sampled;
	struct memo_ent *e = memo_find(m, key);
	if (!e)
		return 0;
	if (e->key) {
		m->hits++;
		return e->t;
	}
	struct price P = {m, stage, 0};
	if (gen_serve_step(&m->g, stage, part, tokens, sampled, price_line, &P)) {
		if (!m->err)
			snprintf(m->why, sizeof m->why, "serve: out of memory");
		m->err = 1;
		return 0;
	}
	m->misses++;
	e->key = key;
	e->t = P.t;
	m->used++;
	return P.t;
}

/* The stage's ops but attention for `tokens` new tokens of which `sampled`
   sample. The body (embedding, layers) is priced at its exact token count up
   to BODY_EXACT tokens (decode batches: vLLM pads them to its CUDA-graph
   sizes, 1, 2, 4 and multiples of 8 up to 256 in 0.5 and 0.6, which this
   does not) and interpolated
   between multiples of BODY_GRID above (prefill-sized steps, whose GEMMs are
   compute-bound and near linear in the tokens); the head at its exact
   shape (its GEMM is the sampled rows'). */
#define BODY_EXACT 256
#define BODY_GRID  64
static double dense_time(struct sv_model *m, long long stage, long long tokens, long long sampled)
{
	double t;
	if (tokens <= BODY_EXACT || tokens % BODY_GRID == 0) {
		t = part_time(m, stage, GEN_STEP_BODY, tokens, 0);
	} else {
		long long lo = tokens / BODY_GRID * BODY_GRID;
		double t0 = part_time(m, stage, GEN_STEP_BODY, lo, 0);
		t = t0 +
		    (part_time(m, stage, GEN_STEP_BODY, lo + BODY_GRID, 0) - t0) * (double)(tokens - lo) / BODY_GRID;
	}
	if (sampled > 0)
		t += part_time(m, stage, GEN_STEP_HEAD, tokens, sampled);
	return t;
}

static long long ceil_div(double a, double b)
{
	return (long long)ceil(a / b - 1e-9);
}

/* an attention op's time through the step memo: kind 1 decode, 2 prefill, 3 prefill through the sliding window (a
   decode step's windowed layers read their window's keys: kind 1 over those), 4 decode in a step of decodes alone
   (which vLLM replays from a CUDA graph: gen_decode_max_keys) */
static double attn_op(struct sv_model *m, int kind, long long b, long long sq, long long skv)
{
	if (kind == 4 && !gen_decode_max_keys(&m->g, b, skv))
		kind = 1; /* launched as it would be eagerly: one memo entry for both */
	unsigned long long key = ((unsigned long long)kind << 60) | ((unsigned long long)b << 40) |
	                         ((unsigned long long)sq << 20) | (unsigned long long)(skv >> 4);
	struct memo_ent *e = memo_find(m, key);
	if (!e)
		return 0;
	if (e->key) {
		m->hits++;
		return e->t;
	}
	struct op a = m->attn;
	a.b = b;
	a.sq = sq;
	a.skv = skv;
	a.causal = kind == 2 || kind == 3;
	a.window = kind == 3 ? m->g.m.window : 0;
	if (kind == 1 || kind == 4) {
		a.impl = gen_decode_attn(&m->g); /* as sim gen writes it */
		a.page = GEN_PAGE;
		a.maxkv = kind == 4 ? gen_decode_max_keys(&m->g, b, skv) : 0;
	}
	double t = op_time(m, &a);
	m->misses++;
	e->key = key;
	e->t = t;
	m->used++;
	return t;
}

/* one layer's attention over the step's sequences. Decode: the mean context
   rounded up to a block, interpolated between multiples of ATTN_GRID keys
   (a decode kernel's time is its KV reads, linear in the keys); prefill: the
   mean chunk rounded up to 16 tokens and the mean cached keys before it to
   ATTN_GRID. Both keep the shapes a long stream times to a few thousand. */
#define ATTN_GRID 64
static double attn_time(struct sv_model *m, const struct sv_shape *sh, int windowed)
{
	double t = 0;
	if (sh->decodes > 0) {
		double keys = windowed ? sh->decode_win : sh->decode_ctx;
		long long b = sh->decodes, skv = ceil_div(keys / (double)b, 16) * 16;
		int kind = sh->prefills > 0 ? 1 : 4;
		if (skv <= ATTN_GRID) {
			t += attn_op(m, kind, b, 1, skv);
		} else {
			long long lo = skv / ATTN_GRID * ATTN_GRID;
			double t0 = attn_op(m, kind, b, 1, lo);
			t += lo == skv
			         ? t0
			         : t0 + (attn_op(m, kind, b, 1, lo + ATTN_GRID) - t0) * (double)(skv - lo) / ATTN_GRID;
		}
	}
	if (sh->prefills > 0) {
		long long b = sh->prefills, sq = ceil_div(sh->chunk_sum / (double)b, 16) * 16;
		long long prior = ceil_div(sh->prior_sum / (double)b, ATTN_GRID) * ATTN_GRID;
		t += attn_op(m, windowed ? 3 : 2, b, sq, sq + prior);
	}
	return t;
}

static double stage_time(struct sv_model *m, long long s, const struct sv_shape *sh)
{
	long long sampled = s == m->g.p.pp - 1 ? sh->sampled : 0;
	double t = dense_time(m, s, sh->tokens, sampled);
	if (m->attn_layers[s] > 0)
		t += (double)m->attn_layers[s] * attn_time(m, sh, 0);
	if (m->swa_layers[s] > 0)
		t += (double)m->swa_layers[s] * attn_time(m, sh, 1);
	return t;
}

static double p2p_time(const struct sv_model *m, long long s, double bytes)
{
	int tp = (int)m->g.p.tp, a = (int)s * tp, b = (int)(s + 1) * tp;
	double bw = p2p_bandwidth(&m->topo, a, b);
	return p2p_latency(&m->topo, a, b) + (bw > 0 ? bytes / bw : 0);
}

/* the engine's host work before the step's forward (gen_engine_host_s) */
static double host_time(const struct sv_model *m, const struct sv_shape *sh)
{
	return gen_engine_host_s(&m->g, sh->decodes + sh->prefills);
}

double sv_step_time(struct sv_model *m, const struct sv_shape *sh, char *why, size_t whylen)
{
	double t = host_time(m, sh), act = (double)sh->tokens * (double)m->g.m.hidden * 2;
	for (long long s = 0; s < m->g.p.pp; s++) {
		t += stage_time(m, s, sh);
		if (s + 1 < m->g.p.pp)
			t += p2p_time(m, s, act);
	}
	if (m->err) {
		snprintf(why, whylen, "%s", m->why);
		return -1;
	}
	return t;
}

double sv_stage_max(struct sv_model *m, const struct sv_shape *sh, char *why, size_t whylen)
{
	double mx = 0, act = (double)sh->tokens * (double)m->g.m.hidden * 2;
	for (long long s = 0; s < m->g.p.pp; s++) {
		double t = stage_time(m, s, sh) + (s + 1 < m->g.p.pp ? p2p_time(m, s, act) : 0) +
		           (s == 0 ? host_time(m, sh) : 0); /* the host prepares a micro-batch for stage 0 */
		mx = t > mx ? t : mx;
	}
	if (m->err) {
		snprintf(why, whylen, "%s", m->why);
		return -1;
	}
	return mx;
}

/* ---- the model ---------------------------------------------------------------- */

static int count_attn(void *ctx, int what, const char *line, long long times)
{
	struct price *P = ctx;
	if (what == GEN_LINE_ATTN) {
		if (strstr(line, " window="))
			P->m->swa_layers[P->stage] += times;
		else
			P->m->attn_layers[P->stage] += times;
	}
	return 0;
}

struct sv_model *sv_model_new(const struct arch_chip *c, const struct gen_config *g, int gpus, char *why, size_t whylen)
{
	struct sv_model *m = calloc(1, sizeof *m);
	if (!m || !(m->dm = dm_new())) {
		free(m);
		snprintf(why, whylen, "serve: out of memory");
		return NULL;
	}
	m->c = c;
	m->g = *g;
	if (g->p.pp > (long long)(sizeof m->attn_layers / sizeof m->attn_layers[0])) {
		snprintf(why, whylen, "serve: --pp %lld: at most 64 pipeline stages", g->p.pp);
		sv_model_free(m);
		return NULL;
	}
	if (platform_topo(c, gpus, 0, &m->topo, why, whylen)) {
		sv_model_free(m);
		return NULL;
	}
	for (long long s = 0; s < g->p.pp; s++) {
		struct price P = {m, s, 0};
		if (gen_serve_step(&m->g, s, GEN_STEP_BODY, 1, 0, count_attn, &P) ||
		    gen_serve_step(&m->g, s, GEN_STEP_BODY, 1, 0, price_line, &P)) {
			snprintf(why, whylen, "%s", m->err ? m->why : "serve: out of memory");
			sv_model_free(m);
			return NULL;
		}
	}
	if (!m->have_attn) {
		snprintf(why, whylen, "serve: the model has no attention layer");
		sv_model_free(m);
		return NULL;
	}
	return m;
}

void sv_model_free(struct sv_model *m)
{
	if (!m)
		return;
	dm_free(m->dm);
	free(m->memo);
	free(m);
}

void sv_model_geom(const struct sv_model *m, long long max_batched_tokens, struct sv_geom *g)
{
	const struct gen_config *c = &m->g;
	memset(g, 0, sizeof *g);
	g->tp = (int)c->p.tp;
	g->pp = (int)c->p.pp;
	g->capacity_bytes = m->c->dram.size_bytes;
	g->act_token_bytes = (double)c->m.hidden * 2;
	g->window = c->m.window;
	for (long long s = 0; s < c->p.pp; s++) {
		/* the stage's memory for one sequence of one token (KV per token), and
		   for vLLM's profiling forward of max_num_batched_tokens tokens */
		struct gen_config one = *c, prof = *c;
		struct gen_memory a, b;
		one.inf.batch = 1;
		one.inf.input_len = 1;
		one.inf.output_len = 0;
		one.inf.paged = 0;
		gen_stage_memory(&one, s, &a);
		prof.inf.batch = 1;
		prof.inf.input_len = max_batched_tokens;
		prof.inf.output_len = 0;
		prof.inf.paged = 0;
		gen_stage_memory(&prof, s, &b);
		if (a.kv > g->kv_token_bytes)
			g->kv_token_bytes = a.kv;
		if (b.params > g->weights_bytes)
			g->weights_bytes = b.params;
		if (b.activations + b.workspace > g->act_bytes)
			g->act_bytes = b.activations + b.workspace;
	}
}

double sv_swap_time(struct sv_model *m, double bytes)
{
	struct op op;
	char line[96], why[256];
	if (bytes <= 0)
		return 0;
	snprintf(line, sizeof line, "copy bytes=%.0f src=hbm dst=host", ceil(bytes));
	if (op_parse(line, NULL, &op, why, sizeof why)) {
		snprintf(m->why, sizeof m->why, "serve: %s: %s", line, why);
		m->err = 1;
		return 0;
	}
	return op_time(m, &op);
}

double sv_kv_transfer(const struct sv_model *m, int src, int dst, double bytes)
{
	double bw = p2p_bandwidth(&m->topo, src, dst);
	return p2p_latency(&m->topo, src, dst) + (bw > 0 ? bytes / bw : 0);
}

void sv_model_stats(const struct sv_model *m, long *dm_hits, long *dm_misses, long *hits, long *misses)
{
	dm_stats(m->dm, dm_hits, dm_misses);
	*hits = m->hits;
	*misses = m->misses;
}

const struct gen_config *sv_model_gen(const struct sv_model *m)
{
	return &m->g;
}

const struct arch_chip *sv_model_chip(const struct sv_model *m)
{
	return m->c;
}
