/*
 * gen_train.c -- one training step of a `sim gen` trace (gen_trace.c says
 * what it holds): each pipeline stage's and model chunk's forward and
 * backward defs, written once per distinct text; the schedule of each
 * stage (1F1B, GPipe, interleaved) as run-length-encoded calls in `on pp=K`
 * blocks; with --moe-a2a-overlap the steady steps as merged forward and
 * backward defs; the memory line and the optimizer.
 */
#include "gen_trace_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- training: stages and schedule ----------------------------------------- */

enum pass { PASS_F, PASS_B, PASS_BS, PASS_COUNT };
static const char *const pass_names[PASS_COUNT] = {"fwd", "bwd", "bwd_sync"};

/* captured text: what gt_out() writes between cap_begin and cap_end */
struct cap {
	FILE *saved, *f;
	int depth;
	char *buf;
	size_t len;
};

static void cap_begin(struct em *e, struct cap *k)
{
	k->buf = NULL;
	k->len = 0;
	k->f = open_memstream(&k->buf, &k->len);
	k->saved = e->f;
	k->depth = e->depth;
	if (!k->f) {
		e->err = 1;
		k->f = fopen("/dev/null", "w");
	}
	e->f = k->f;
	e->depth = 0;
}

static char *cap_end(struct em *e, struct cap *k)
{
	if (k->f && fclose(k->f))
		e->err = 1;
	e->f = k->saved;
	e->depth = k->depth;
	if (!k->buf)
		e->err = 1;
	return k->buf;
}

/* writes captured text at the current indentation */
static void put_text(struct em *e, const char *text)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		int n = nl ? (int)(nl - text) : (int)strlen(text);
		gt_out(e, "%.*s", n, text);
		text += n + (nl != NULL);
	}
}

static int same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

void gt_chunk_runs(const struct gen_config *c, long long stage, long long chunk, struct runs *r)
{
	long long lc = gen_chunk_layers(c, stage, chunk), first = gen_chunk_first_layer(c, stage, chunk);
	r->count = 0;
	for (long long l = first; l < first + lc; l++) {
		enum block_kind k = gt_layer_kind(&c->m, l);
		if (r->count && r->kind[r->count - 1] == k) {
			r->n[r->count - 1]++;
			continue;
		}
		if (r->count == GEN_RUNS_MAX)
			abort(); /* gen_check refuses a model with more */
		r->kind[r->count] = k;
		r->n[r->count++] = 1;
	}
}

/* Writes runs r (reversed for a backward) through one(e, kind, n, ctx), with a periodic stretch of them as
   one repeat block: the windowed and full layers of a model that alternates them become `repeat 18 { ... }`. */
void gt_emit_runs_of(struct em *e, const struct runs *r, int reverse, run_fn one, const void *ctx)
{
	enum block_kind k[GEN_RUNS_MAX];
	long long n[GEN_RUNS_MAX];
	int count = r->count;
	for (int j = 0; j < count; j++) {
		int i = reverse ? count - 1 - j : j;
		k[j] = r->kind[i], n[j] = r->n[i];
	}
	/* the first offset (0-2) and the shortest period (1-8) that repeat at least twice from there */
	for (int o = 0; o < 3 && o < count; o++)
		for (int p = 1; p <= 8 && (count - o) / p >= 2; p++) {
			int ok = 1;
			for (int i = o + p; i < count && ok; i++)
				ok = k[i] == k[o + (i - o) % p] && n[i] == n[o + (i - o) % p];
			if (!ok)
				continue;
			for (int i = 0; i < o; i++)
				one(e, k[i], n[i], ctx);
			gt_open_block(e, "repeat %d", (count - o) / p);
			for (int i = o; i < o + p; i++)
				one(e, k[i], n[i], ctx);
			gt_close_block(e);
			for (int i = o + (count - o) / p * p; i < count; i++)
				one(e, k[i], n[i], ctx);
			return;
		}
	for (int i = 0; i < count; i++)
		one(e, k[i], n[i], ctx);
}

struct call_ctx {
	const char *prefix, *sfx;
};

static void call_one(struct em *e, enum block_kind kind, long long n, const void *ctx)
{
	const struct call_ctx *x = ctx;
	if (n > 1)
		gt_open_block(e, "repeat %lld", n);
	gt_out(e, "call %s%s_%s", x->prefix, gt_block_names[kind], x->sfx);
	if (n > 1)
		gt_close_block(e);
}

void gt_call_runs(struct em *e, const struct runs *r, int reverse, const char *prefix, const char *sfx)
{
	struct call_ctx x = {prefix, sfx};
	gt_emit_runs_of(e, r, reverse, call_one, &x);
}

/* a chunk's MTP modules, after its layers (backward: before them) */
static void call_mtp(struct em *e, long long n, const char *sfx)
{
	if (n > 1)
		gt_open_block(e, "repeat %lld", n);
	if (n > 0)
		gt_out(e, "call mtp_%s", sfx);
	if (n > 1)
		gt_close_block(e);
}

static long long p2p_bytes(const struct em *e)
{
	const struct gen_config *c = e->c;
	long long a = c->p.micro_batch * gen_seq_local(c) * e->h * 2;
	return c->p.sp ? a / e->t : a;
}

/* the body of a stage def: one micro-batch's forward or backward of one
   model chunk on one stage */
static void stage_body(struct em *e, long long stage, long long chunk, enum pass p)
{
	const struct gen_config *c = e->c;
	int first = stage == 0 && chunk == 0, last = stage == c->p.pp - 1 && chunk == c->p.vstages - 1;
	long long bytes = p2p_bytes(e);
	const char *next = stage < c->p.pp - 1 ? "pp+1" : NULL, *prev = stage > 0 ? "pp-1" : NULL;
	char wrap[32];
	snprintf(wrap, sizeof wrap, stage ? "pp-%lld" : "pp+%lld", c->p.pp - 1); /* last <-> first stage */
	struct runs r;
	long long mtp = gen_chunk_mtp(c, stage, chunk);
	gt_chunk_runs(c, stage, chunk, &r);
	if (p == PASS_F) {
		gt_out(e, "mark name=forward");
		if (first)
			gt_out(e, "call emb_fwd");
		else
			gt_out(e, "recv peer=%s bytes=%lld", prev ? prev : wrap, bytes);
		gt_call_runs(e, &r, 0, "", "fwd");
		call_mtp(e, mtp, "fwd");
		if (last)
			gt_out(e, "call head_fwd");
		else
			gt_out(e, "send peer=%s bytes=%lld stream=p2p_fwd after=lo", next ? next : wrap, bytes);
		return;
	}
	gt_out(e, "mark name=backward");
	if (last)
		gt_out(e, "call head_%s", pass_names[p]);
	else
		gt_out(e, "recv peer=%s bytes=%lld", next ? next : wrap, bytes);
	call_mtp(e, mtp, pass_names[p]);
	gt_call_runs(e, &r, 1, "", pass_names[p]);
	if (first)
		gt_out(e, "call emb_%s", pass_names[p]);
	else
		gt_out(e, "send peer=%s bytes=%lld stream=p2p_bwd after=wg", prev ? prev : wrap, bytes);
}

static void def_name(const struct em *e, char *buf, size_t len, enum pass p, long long chunk, long long stage)
{
	char cs[32] = "", ss[32] = "";
	if (e->c->p.vstages > 1)
		snprintf(cs, sizeof cs, "_c%lld", chunk);
	if (e->c->p.pp > 1)
		snprintf(ss, sizeof ss, "_pp%lld", stage);
	snprintf(buf, len, "%s%s%s", pass_names[p], cs, ss);
}

/* stage defs: text[(stage * v + chunk) * PASS_COUNT + pass], and the first
   stage whose text is the same (it names the def) */
struct merged_defs;
struct stage_defs {
	char **text;
	long long *first;
	long long n;
	struct merged_defs *md; /* --moe-a2a-overlap: the steady steps' merged defs (NULL: none) */
};

static long long sd_index(const struct gen_config *c, long long stage, long long chunk, enum pass p)
{
	return (stage * c->p.vstages + chunk) * PASS_COUNT + p;
}

static int build_stage_defs(struct em *e, struct stage_defs *sd, int npass)
{
	const struct gen_config *c = e->c;
	sd->n = c->p.pp * c->p.vstages * PASS_COUNT;
	sd->text = calloc((size_t)sd->n, sizeof *sd->text);
	sd->first = calloc((size_t)sd->n, sizeof *sd->first);
	if (!sd->text || !sd->first)
		return -1;
	for (long long s = 0; s < c->p.pp; s++)
		for (long long ch = 0; ch < c->p.vstages; ch++)
			for (int p = 0; p < npass; p++) {
				struct cap k;
				long long i = sd_index(c, s, ch, (enum pass)p);
				cap_begin(e, &k);
				stage_body(e, s, ch, (enum pass)p);
				sd->text[i] = cap_end(e, &k);
				sd->first[i] = s;
				if (s > 0 && same(sd->text[i], sd->text[sd_index(c, s - 1, ch, (enum pass)p)]))
					sd->first[i] = sd->first[sd_index(c, s - 1, ch, (enum pass)p)];
			}
	for (long long i = 0; i < sd->n; i++) {
		long long s = i / PASS_COUNT / c->p.vstages;
		if (!sd->text[i] || sd->first[i] != s)
			continue;
		char nm[64];
		def_name(e, nm, sizeof nm, (enum pass)(i % PASS_COUNT), i / PASS_COUNT % c->p.vstages, s);
		gt_open_block(e, "def %s", nm);
		put_text(e, sd->text[i]);
		gt_close_block(e);
	}
	return e->err ? -1 : 0;
}

static void free_stage_defs(struct stage_defs *sd)
{
	for (long long i = 0; sd->text && i < sd->n; i++)
		free(sd->text[i]);
	free(sd->text);
	free(sd->first);
}

/* ---- --moe-a2a-overlap: a steady step's forward and backward as one ------------ */

/* a MoE block's all-to-all on the communication stream, after label `after`, labelled `id` */
static void a2a_on_stream(struct em *e, enum block_kind k, const char *after, const char *id)
{
	struct lines L = {.n = 0};
	gt_a2a_text(e, &L, &e->a2a[k]);
	gt_append(&L, " stream=ep after=%s id=%s", after, id);
	gt_flush_lines(e, &L, NULL, NULL);
}

/* forward layer fk against backward layer bk, both cut at their all-to-alls (see emit_moe_segments) */
static void pair_layers(struct em *e, enum block_kind fk, enum block_kind bk, const char *bpass)
{
	const char *f = gt_block_names[fk], *b = gt_block_names[bk];
	gt_out(e, "call %s_bwd_r", b);
	gt_out(e, "delay time=0ns id=xbr");
	a2a_on_stream(e, bk, "xbr", "xbc"); /* B's combine, backward */
	gt_out(e, "call %s_fwd_a", f);
	gt_out(e, "delay time=0ns id=xfa");
	a2a_on_stream(e, fk, "xfa", "xfd"); /* F's dispatch */
	gt_out(e, "delay time=0ns after=xbc");
	gt_out(e, "call %s_bwd_m", b);
	gt_out(e, "delay time=0ns id=xbm");
	a2a_on_stream(e, bk, "xbm", "xbd"); /* B's dispatch, backward */
	gt_out(e, "delay time=0ns after=xfd");
	gt_out(e, "call %s_fwd_m", f);
	gt_out(e, "delay time=0ns id=xfm");
	a2a_on_stream(e, fk, "xfm", "xfc"); /* F's combine */
	gt_out(e, "delay time=0ns after=xbd");
	gt_out(e, "call %s_%s_a", b, bpass);
	gt_out(e, "delay time=0ns after=xfc");
	gt_out(e, "call %s_fwd_r", f);
}

/* a chunk's layers one by one in the order they run (a backward's last first); returns the count */
static long long layer_list(const struct gen_config *c, long long stage, long long chunk, int reverse,
                            enum block_kind *out_k)
{
	struct runs r;
	long long n = 0;
	gt_chunk_runs(c, stage, chunk, &r);
	for (int j = 0; j < r.count; j++) {
		int i = reverse ? r.count - 1 - j : j;
		for (long long q = 0; q < r.n[i]; q++)
			out_k[n++] = r.kind[i];
	}
	return n;
}

/* the forward of chunk fch and the backward (pass bp) of chunk bch of stage `stage` as one step: both prologues,
   then layer against layer (cut MoE layers interleaved, others one after the other; a run of like pairs as a
   repeat), what is left of either, then the epilogues. The region is marked backward. */
static void merged_body(struct em *e, long long stage, long long fch, long long bch, enum pass bp)
{
	const struct gen_config *c = e->c;
	long long pp = c->p.pp, v = c->p.vstages, bytes = p2p_bytes(e);
	int ffirst = stage == 0 && fch == 0, flast = stage == pp - 1 && fch == v - 1;
	int bfirst = stage == 0 && bch == 0, blast = stage == pp - 1 && bch == v - 1;
	char wrap[32], next[32], prev[32];
	snprintf(wrap, sizeof wrap, stage ? "pp-%lld" : "pp+%lld", pp - 1);
	snprintf(next, sizeof next, "%s", stage < pp - 1 ? "pp+1" : wrap);
	snprintf(prev, sizeof prev, "%s", stage > 0 ? "pp-1" : wrap);
	const char *bpn = pass_names[bp];
	enum block_kind *fl = malloc(2 * (size_t)(c->m.layers + 1) * sizeof *fl), *bl = fl + c->m.layers + 1;
	if (!fl) {
		e->err = 1;
		return;
	}
	long long nf = layer_list(c, stage, fch, 0, fl), nb = layer_list(c, stage, bch, 1, bl), k = 0;
	gt_out(e, "mark name=forward");
	if (ffirst)
		gt_out(e, "call emb_fwd");
	else
		gt_out(e, "recv peer=%s bytes=%lld", prev, bytes);
	gt_out(e, "mark name=backward");
	if (blast)
		gt_out(e, "call head_%s", bpn);
	else
		gt_out(e, "recv peer=%s bytes=%lld", next, bytes);
	call_mtp(e, gen_chunk_mtp(c, stage, bch), bpn);
	while (k < nf && k < nb) {
		long long r = 1;
		while (k + r < nf && k + r < nb && fl[k + r] == fl[k] && bl[k + r] == bl[k])
			r++;
		if (r > 1)
			gt_open_block(e, "repeat %lld", r);
		if (e->cut[fl[k]] && e->cut[bl[k]]) {
			pair_layers(e, fl[k], bl[k], bpn);
		} else {
			gt_out(e, "call %s_fwd", gt_block_names[fl[k]]);
			gt_out(e, "call %s_%s", gt_block_names[bl[k]], bpn);
		}
		if (r > 1)
			gt_close_block(e);
		k += r;
	}
	for (long long i = k; i < nf; i++)
		gt_out(e, "call %s_fwd", gt_block_names[fl[i]]);
	call_mtp(e, gen_chunk_mtp(c, stage, fch), "fwd");
	if (flast)
		gt_out(e, "call head_fwd");
	else
		gt_out(e, "send peer=%s bytes=%lld stream=p2p_fwd after=lo", next, bytes);
	for (long long i = k; i < nb; i++)
		gt_out(e, "call %s_%s", gt_block_names[bl[i]], bpn);
	if (bfirst)
		gt_out(e, "call emb_%s", bpn);
	else
		gt_out(e, "send peer=%s bytes=%lld stream=p2p_bwd after=wg", prev, bytes);
	free(fl);
}

/* the merged defs, text[((stage * v + fch) * v + bch) * PASS_COUNT + pass] for the steps a schedule has, named
   by the first stage with the same text: fb_cF_bwd_cB_ppS */
struct merged_defs {
	char **text;
	long long *first;
	long long n;
};

static long long md_index(const struct gen_config *c, long long stage, long long fch, long long bch, enum pass p)
{
	return ((stage * c->p.vstages + fch) * c->p.vstages + bch) * PASS_COUNT + p;
}

static void merged_name(const struct em *e, char *buf, size_t len, long long fch, long long bch, enum pass p,
                        long long stage)
{
	char fc[32] = "", bc[32] = "", ss[32] = "";
	if (e->c->p.vstages > 1) {
		snprintf(fc, sizeof fc, "_c%lld", fch);
		snprintf(bc, sizeof bc, "_c%lld", bch);
	}
	if (e->c->p.pp > 1)
		snprintf(ss, sizeof ss, "_pp%lld", stage);
	snprintf(buf, len, "fb%s_%s%s%s", fc, pass_names[p], bc, ss);
}

/* one step of a stage's schedule: a forward, a backward, or both (1F1B's
   steady state); each is a call index pass * v + chunk, -1 for none */
struct unit {
	long long a, b;
};

static long long fchunk(const struct gen_config *c, long long i)
{
	return i / c->p.pp % c->p.vstages;
}

static long long bchunk(const struct gen_config *c, long long j)
{
	return c->p.vstages - 1 - j / c->p.pp % c->p.vstages;
}

/* Megatron-LM's schedules: GPipe (all forwards, then all backwards); 1F1B
   (stage K: pp-K-1 warm-up forwards, then one forward and one backward,
   then the remaining backwards); interleaved 1F1B over v model chunks
   (warm-up (pp-K-1)*2 + (v-1)*pp chunk forwards). Returns the count. */
static long long schedule(const struct gen_config *c, long long stage, struct unit *u)
{
	long long v = c->p.vstages, mb = gen_microbatches(c) * v, n = 0, w;
	if (c->p.sched == GEN_GPIPE)
		w = mb;
	else if (c->p.sched == GEN_INTERLEAVED)
		w = (c->p.pp - stage - 1) * 2 + (v - 1) * c->p.pp;
	else
		w = c->p.pp - stage - 1;
	/* --moe-a2a-overlap: one more warm-up forward, so that each steady step's forward and backward are of two
	   micro-batches (as Megatron-Core's schedules.py adds one with the overlap on) */
	if (c->p.sched != GEN_GPIPE)
		w += c->p.moe_overlap;
	w = w < mb ? w : mb;
	for (long long i = 0; i < w; i++)
		u[n++] = (struct unit){PASS_F * v + fchunk(c, i), -1};
	for (long long j = 0; j < mb - w; j++)
		u[n++] = (struct unit){PASS_F * v + fchunk(c, w + j), PASS_B * v + bchunk(c, j)};
	for (long long j = mb - w; j < mb; j++)
		u[n++] = (struct unit){PASS_B * v + bchunk(c, j), -1};
	return n;
}

/* the last backward of each chunk carries the gradient buckets */
static int mark_sync(const struct gen_config *c, struct unit *u, long long n)
{
	long long v = c->p.vstages;
	char *seen = calloc((size_t)v, 1);
	if (!seen)
		return -1;
	for (long long i = n - 1; i >= 0; i--)
		for (int slot = 1; slot >= 0; slot--) {
			long long *x = slot ? &u[i].b : &u[i].a;
			if (*x >= 0 && *x / v == PASS_B && !seen[*x % v]) {
				seen[*x % v] = 1;
				*x += v; /* PASS_BS */
			}
		}
	free(seen);
	return 0;
}

/* the step of a stage's schedule u[0..n) (the last backward of each chunk marked for the gradient buckets);
   returns n, or -1 when memory runs out (*u freed by the caller) */
static long long stage_units(struct em *e, long long stage, struct unit **u)
{
	long long cap = 2 * gen_microbatches(e->c) * e->c->p.vstages + 2;
	*u = malloc((size_t)cap * sizeof **u);
	if (!*u)
		return -1;
	long long n = schedule(e->c, stage, *u);
	if (e->sync && e->c->p.zero < 2 && mark_sync(e->c, *u, n))
		return -1;
	return n;
}

static int build_merged_defs(struct em *e, struct merged_defs *md)
{
	const struct gen_config *c = e->c;
	long long v = c->p.vstages;
	md->n = c->p.pp * v * v * PASS_COUNT;
	md->text = calloc((size_t)md->n, sizeof *md->text);
	md->first = calloc((size_t)md->n, sizeof *md->first);
	if (!md->text || !md->first)
		return -1;
	for (long long s = 0; s < c->p.pp; s++) {
		struct unit *u = NULL;
		long long n = stage_units(e, s, &u);
		for (long long i = 0; i < n; i++) {
			if (u[i].a < 0 || u[i].b < 0)
				continue;
			enum pass p = (enum pass)(u[i].b / v);
			long long fch = u[i].a % v, bch = u[i].b % v, x = md_index(c, s, fch, bch, p);
			if (md->text[x])
				continue;
			struct cap k;
			cap_begin(e, &k);
			merged_body(e, s, fch, bch, p);
			md->text[x] = cap_end(e, &k);
			md->first[x] = s;
			long long y = s > 0 ? md_index(c, s - 1, fch, bch, p) : -1;
			if (y >= 0 && same(md->text[x], md->text[y]))
				md->first[x] = md->first[y];
		}
		free(u);
		if (n < 0)
			return -1;
	}
	for (long long x = 0; x < md->n; x++) {
		long long s = x / PASS_COUNT / v / v, fch = x / PASS_COUNT / v % v, bch = x / PASS_COUNT % v;
		if (!md->text[x] || md->first[x] != s)
			continue;
		char nm[80];
		merged_name(e, nm, sizeof nm, fch, bch, (enum pass)(x % PASS_COUNT), s);
		gt_open_block(e, "def %s", nm);
		put_text(e, md->text[x]);
		gt_close_block(e);
	}
	return e->err ? -1 : 0;
}

static void free_merged_defs(struct merged_defs *md)
{
	for (long long i = 0; md->text && i < md->n; i++)
		free(md->text[i]);
	free(md->text);
	free(md->first);
}

static void call_unit(struct em *e, const struct stage_defs *sd, long long stage, long long x)
{
	long long v = e->c->p.vstages;
	enum pass p = (enum pass)(x / v);
	char nm[64];
	def_name(e, nm, sizeof nm, p, x % v, sd->first[sd_index(e->c, stage, x % v, p)]);
	gt_out(e, "call %s", nm);
}

/* a unit and how many times it repeats in a row */
struct run {
	struct unit u;
	long long n;
};

/* runs in a repeated pattern: the interleaved schedule's cycle over its
   chunks takes two runs a virtual stage (a forward chunk's last micro-batches
   beside the backward of one, its first beside the next's) */
static long long max_period(const struct em *e)
{
	return e->c->p.vstages > 4 ? 2 * e->c->p.vstages : 8;
}

static int runs_equal(const struct run *a, const struct run *b, long long q)
{
	for (long long k = 0; k < q; k++)
		if (a[k].u.a != b[k].u.a || a[k].u.b != b[k].u.b || a[k].n != b[k].n)
			return 0;
	return 1;
}

static void emit_run(struct em *e, const struct stage_defs *sd, long long stage, const struct run *r)
{
	if (r->n > 1)
		gt_open_block(e, "repeat %lld", r->n);
	if (sd->md && r->u.a >= 0 && r->u.b >= 0) { /* --moe-a2a-overlap: the two as one */
		long long v = e->c->p.vstages, fch = r->u.a % v, bch = r->u.b % v;
		enum pass p = (enum pass)(r->u.b / v);
		char nm[80];
		merged_name(e, nm, sizeof nm, fch, bch, p, sd->md->first[md_index(e->c, stage, fch, bch, p)]);
		gt_out(e, "call %s", nm);
	} else {
		call_unit(e, sd, stage, r->u.a);
		if (r->u.b >= 0)
			call_unit(e, sd, stage, r->u.b);
	}
	if (r->n > 1)
		gt_close_block(e);
}

/* Writes runs, folding a pattern of up to max_period runs that recurs
   (the interleaved schedule's chunk alternation) into one repeat. */
static void emit_runs(struct em *e, const struct stage_defs *sd, long long stage, const struct run *r, long long n)
{
	for (long long i = 0; i < n;) {
		long long bq = 0, br = 1;
		for (long long q = 2; q <= max_period(e) && i + 2 * q <= n; q++) {
			long long k = 1;
			while (i + (k + 1) * q <= n && runs_equal(r + i, r + i + k * q, q))
				k++;
			if (k >= 2 && q * k > bq * br)
				bq = q, br = k;
		}
		if (!bq) {
			emit_run(e, sd, stage, &r[i++]);
			continue;
		}
		gt_open_block(e, "repeat %lld", br);
		for (long long k = 0; k < bq; k++)
			emit_run(e, sd, stage, &r[i + k]);
		gt_close_block(e);
		i += bq * br;
	}
}

static int emit_schedule(struct em *e, const struct stage_defs *sd, long long stage)
{
	long long cap = 2 * gen_microbatches(e->c) * e->c->p.vstages + 2, nr = 0;
	struct unit *u = NULL;
	struct run *r = malloc((size_t)cap * sizeof *r);
	long long n = stage_units(e, stage, &u);
	int rc = -1;
	if (!r || n < 0)
		goto out;
	for (long long i = 0; i < n; i++) {
		if (nr && r[nr - 1].u.a == u[i].a && r[nr - 1].u.b == u[i].b)
			r[nr - 1].n++;
		else
			r[nr++] = (struct run){u[i], 1};
	}
	emit_runs(e, sd, stage, r, nr);
	rc = 0;
out:
	free(u);
	free(r);
	return rc;
}

void gt_memory_line(struct em *e, long long stage)
{
	struct gen_memory m;
	gen_stage_memory(e->c, stage, &m);
	gt_out(e, "memory params=%.0f grads=%.0f optimizer=%.0f activations=%.0f kv=%.0f workspace=%.0f",
	       ceil(m.params), ceil(m.grads), ceil(m.optimizer), ceil(m.activations), ceil(m.kv), ceil(m.workspace));
}

/* unscale (fp16), [bring the states in], Adam on this rank's shard in fp32,
   [send them back], cast to the model dtype, [gather the updated shards] */
static void optimizer(struct em *e, long long stage)
{
	const struct gen_config *c = e->c;
	struct gen_params ps = gen_stage_params(c, stage);
	int z = c->p.zero;
	long long n = gt_ceil_ll(ps.dense / (z ? (double)e->nd : 1) + ps.expert / (z ? (double)e->ne : 1));
	struct lines L = {.n = 0};
	gt_out(e, "mark name=optimizer");
	if (c->mode == GEN_TRAIN && c->p.grad_sync == GEN_GS_AFTER && z < 2) {
		/* every gradient at once, on the compute stream after the backward */
		const char *op = z ? "reducescatter" : "allreduce";
		if (e->nd > 1 && ps.dense > 0)
			gt_add(&L, "coll op=%s comm=%s bytes=%lld", op, e->cd, gt_ceil_ll(2 * ps.dense));
		if (e->ne > 1 && ps.expert > 0)
			gt_add(&L, "coll op=%s comm=%s bytes=%lld", op, e->ce, gt_ceil_ll(2 * ps.expert));
	}
	if (c->p.dtype == GEN_FP16)
		gt_add(&L, "elem op=mul n=%lld dtype=fp32", n); /* unscale the loss-scaled gradients */
	if (c->p.offload)
		gt_add(&L, "copy bytes=%lld src=host dst=hbm", 12 * n);
	gt_add(&L, "elem op=adam n=%lld dtype=fp32", n);
	if (c->p.offload)
		gt_add(&L, "copy bytes=%lld src=hbm dst=host", 12 * n);
	gt_add(&L, "elem op=cast n=%lld dtype=fp32 to=%s", n, c->p.dtype == GEN_FP16 ? "fp16" : "bf16");
	if ((z == 1 || z == 2) && e->nd > 1)
		gt_add(&L, "coll op=allgather comm=%s bytes=%lld", e->cd, gt_ceil_ll(2 * ps.dense));
	if ((z == 1 || z == 2) && e->ne > 1 && ps.expert > 0)
		gt_add(&L, "coll op=allgather comm=%s bytes=%lld", e->ce, gt_ceil_ll(2 * ps.expert));
	gt_flush_lines(e, &L, e->sync ? "dpg" : NULL, NULL);
}

static int stage_blocks(struct em *e, const struct stage_defs *sd)
{
	long long pp = e->c->p.pp;
	char **text = calloc((size_t)pp, sizeof *text);
	if (!text)
		return -1;
	for (long long s = 0; s < pp; s++) {
		struct cap k;
		cap_begin(e, &k);
		gt_memory_line(e, s);
		if (emit_schedule(e, sd, s))
			e->err = 1;
		optimizer(e, s);
		text[s] = cap_end(e, &k);
	}
	for (long long s = 0; s < pp && !e->err;) {
		long long j = s + 1;
		while (j < pp && same(text[j], text[s]))
			j++;
		if (pp == 1)
			put_text(e, text[s]);
		else {
			if (j - s > 1)
				gt_open_block(e, "on pp=%lld-%lld", s, j - 1);
			else
				gt_open_block(e, "on pp=%lld", s);
			put_text(e, text[s]);
			gt_close_block(e);
		}
		s = j;
	}
	for (long long s = 0; s < pp; s++)
		free(text[s]);
	free(text);
	return e->err ? -1 : 0;
}

/* whether the trace has blocks of this kind: dense and MoE layers as the
   model has them, MTP modules in training */
int gt_kind_used(const struct em *e, int kind)
{
	const struct gen_model *m = e->m;
	switch (kind) {
	case BK_EMB:
	case BK_HEAD: return 1;
	case BK_MTP: return e->c->mode == GEN_TRAIN && m->mtp > 0;
	default:
		for (long long l = 0; l < m->layers; l++)
			if (gt_layer_kind(m, l) == (enum block_kind)kind)
				return 1;
		return 0;
	}
}

int gt_write_train(struct em *e)
{
	const struct gen_config *c = e->c;
	struct tok k = {c->p.micro_batch, gen_seq_local(c), gen_seq_local(c), 0, 0};
	struct block *B = malloc(sizeof *B);
	if (!B)
		return -1;
	for (int kind = 0; kind < BK_COUNT; kind++) {
		if (!gt_kind_used(e, kind))
			continue;
		gt_build_block(e, (enum block_kind)kind, &k, B);
		int d, cut;
		/* the layers a merged step pairs (an MTP module runs whole, after them) */
		e->cut[kind] = c->p.moe_overlap && kind != BK_MTP && gt_a2a_cut(B, &d, &cut);
		if (e->cut[kind])
			e->a2a[kind] = B->st[d];
		gt_emit_block_defs(e, "", (enum block_kind)kind, B);
	}
	free(B);
	struct stage_defs sd = {0};
	struct merged_defs md = {0};
	int rc = build_stage_defs(e, &sd, e->sync && c->p.zero < 2 ? PASS_COUNT : PASS_BS);
	if (!rc && c->p.moe_overlap) {
		sd.md = &md;
		rc = build_merged_defs(e, &md);
	}
	if (!rc)
		rc = stage_blocks(e, &sd);
	free_stage_defs(&sd);
	free_merged_defs(&md);
	return rc;
}
