/*
 * gen_args.c -- `sim gen`'s argument list to a struct gen_config
 * (gen_parse_args, gen.h): the command (sim/cli/cmd_gen.c) and the validation
 * suite (tests/validation/gen_case.c) read a command line the same way.
 *
 * Flags are one table: name, kind, the field it sets, its range, and which
 * mode it belongs to; parsing, errors and the "given" bookkeeping all come
 * from it. The preset goes under the flags: they are parsed into a config
 * of defaults, then the ones given are copied over the preset, then the
 * derived defaults (head dim, kv heads, ffn, ...) are filled in.
 */
#include "gen.h"

#include "arch.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum flag_kind { F_POS, F_COUNT, F_ZERO, F_BOOL, F_ENUM, F_PROB, F_FACTOR, F_RATIO, F_TEXT };
enum flag_mode { M_ANY, M_TRAIN, M_INFER };

struct flag {
	const char *name;
	enum flag_kind kind;
	size_t off;                 /* field in struct gen_config */
	long long max;              /* F_POS, F_COUNT: largest value */
	enum flag_mode mode;        /* which --mode it belongs to */
	const char *const *choices; /* F_ENUM: values, in enum order */
};

_Static_assert(sizeof(enum gen_sched) == sizeof(int) && sizeof(enum gen_mode) == sizeof(int) &&
                   sizeof(enum gen_dtype) == sizeof(int) && sizeof(enum gen_recompute) == sizeof(int) &&
                   sizeof(enum gen_attn_impl) == sizeof(int) && sizeof(enum gen_grad_sync) == sizeof(int) &&
                   sizeof(enum gen_fp8_recipe) == sizeof(int) && sizeof(enum gen_engine) == sizeof(int) &&
                   sizeof(enum gen_launch) == sizeof(int) && sizeof(enum gen_decode_impl) == sizeof(int),
               "enum flags are stored as int");

static const char *const sched_names[] = {"1f1b", "gpipe", "interleaved", NULL};
static const char *const rc_names[] = {"none", "selective", "full", NULL};
static const char *const mode_names[] = {"train", "infer", NULL};
static const char *const dtype_names[] = {"bf16", "fp16", "fp8", "fp4", NULL};
static const char *const impl_names[] = {"flash2", "flash3", "naive", "flash1", "cudnn", NULL};
static const char *const gs_names[] = {"overlap", "after", NULL};
static const char *const recipe_names[] = {"delayed", "current", "mxfp8", "none", NULL};
static const char *const engine_names[] = {"none", "vllm", "trtllm", NULL};
static const char *const launch_names[] = {"eager", "graph", NULL}; /* enum gen_launch order */
static const char *const decode_impl_names[] = {"auto",   "flash2_decode", "paged",
                                                "decode", "mmha",          NULL}; /* gen_decode_impl */
static const char *const cp_comm_names[] = {"p2p", "a2a", NULL};                  /* enum gen_cp_comm order */
static const char *const disp_names[] = {"alltoall", "allgather", "flex", NULL};  /* enum gen_dispatcher order */

#define C(f) offsetof(struct gen_config, f)
#define K    (1LL << 10)
#define M    (1LL << 20)
static const struct flag flags[] = {
    {"--layers", F_POS, C(m.layers), 100 * K, M_ANY, NULL},
    {"--hidden", F_POS, C(m.hidden), M, M_ANY, NULL},
    {"--heads", F_POS, C(m.heads), 64 * K, M_ANY, NULL},
    {"--kv-heads", F_POS, C(m.kv_heads), 64 * K, M_ANY, NULL},
    {"--head-dim", F_POS, C(m.head_dim), 64 * K, M_ANY, NULL},
    {"--ffn", F_POS, C(m.ffn), 16 * M, M_ANY, NULL},
    {"--vocab", F_POS, C(m.vocab), 16 * M, M_ANY, NULL},
    {"--seq", F_POS, C(seq), 16 * M, M_TRAIN, NULL},
    {"--experts", F_POS, C(m.experts), 64 * K, M_ANY, NULL},
    {"--topk", F_POS, C(m.topk), 64 * K, M_ANY, NULL},
    {"--expert-ffn", F_POS, C(m.expert_ffn), 16 * M, M_ANY, NULL},
    {"--dense-layers", F_COUNT, C(m.dense_layers), 100 * K, M_ANY, NULL},
    {"--moe-latent", F_COUNT, C(m.moe_latent), M, M_ANY, NULL},
    {"--router-groups", F_POS, C(m.router_groups), 64 * K, M_ANY, NULL},
    {"--router-group-topk", F_POS, C(m.router_group_topk), 64 * K, M_ANY, NULL},
    {"--moe-dispatcher", F_ENUM, C(p.dispatcher), 0, M_ANY, disp_names},
    {"--moe-a2a-overlap", F_BOOL, C(p.moe_overlap), 0, M_TRAIN, NULL},
    {"--moe-imbalance", F_FACTOR, C(p.moe_imbalance), 64, M_ANY, NULL},
    {"--moe-capacity-factor", F_RATIO, C(p.moe_capacity), 64, M_ANY, NULL},
    {"--window", F_COUNT, C(m.window), 16 * M, M_ANY, NULL},
    {"--window-skip-freq", F_COUNT, C(m.window_skip), 100 * K, M_ANY, NULL},
    {"--qk-norm", F_BOOL, C(m.qk_norm), 0, M_ANY, NULL},
    {"--mtp-num-layers", F_COUNT, C(m.mtp), 16, M_TRAIN, NULL},
    {"--hybrid-pattern", F_TEXT, C(m.hybrid), GEN_HYBRID_MAX - 1, M_ANY, NULL},
    {"--mamba-heads", F_POS, C(m.mamba_heads), 64 * K, M_ANY, NULL},
    {"--mamba-head-dim", F_POS, C(m.mamba_head_dim), 64 * K, M_ANY, NULL},
    {"--mamba-state", F_POS, C(m.mamba_state), 64 * K, M_ANY, NULL},
    {"--mamba-groups", F_POS, C(m.mamba_groups), 64 * K, M_ANY, NULL},
    {"--attn-impl", F_ENUM, C(attn_impl), 0, M_ANY, impl_names},
    {"--tp", F_POS, C(p.tp), M, M_ANY, NULL},
    {"--pp", F_POS, C(p.pp), M, M_ANY, NULL},
    {"--dp", F_POS, C(p.dp), M, M_ANY, NULL},
    {"--ep", F_POS, C(p.ep), M, M_ANY, NULL},
    {"--cp", F_POS, C(p.cp), M, M_TRAIN, NULL},
    {"--cp-comm-type", F_ENUM, C(p.cp_comm), 0, M_TRAIN, cp_comm_names},
    {"--sp", F_BOOL, C(p.sp), 0, M_ANY, NULL},
    {"--tp-comm-overlap", F_BOOL, C(p.tp_overlap), 0, M_TRAIN, NULL},
    {"--micro-batch", F_POS, C(p.micro_batch), M, M_TRAIN, NULL},
    {"--global-batch", F_POS, C(p.global_batch), 1024 * M, M_TRAIN, NULL},
    {"--schedule", F_ENUM, C(p.sched), 0, M_TRAIN, sched_names},
    {"--virtual-stages", F_POS, C(p.vstages), K, M_TRAIN, NULL},
    {"--decoder-first-pipeline-num-layers", F_POS, C(p.first_layers), 100 * K, M_TRAIN, NULL},
    {"--decoder-last-pipeline-num-layers", F_POS, C(p.last_layers), 100 * K, M_TRAIN, NULL},
    {"--account-for-embedding-in-pipeline-split", F_BOOL, C(p.split_embedding), 0, M_TRAIN, NULL},
    {"--account-for-loss-in-pipeline-split", F_BOOL, C(p.split_loss), 0, M_TRAIN, NULL},
    {"--pipeline-layout", F_TEXT, C(p.layout.text), GEN_LAYOUT_TEXT - 1, M_TRAIN, NULL},
    {"--recompute", F_ENUM, C(p.recompute), 0, M_TRAIN, rc_names},
    {"--dropout", F_PROB, C(dropout), 0, M_TRAIN, NULL},
    {"--zero", F_ZERO, C(p.zero), 3, M_TRAIN, NULL},
    {"--grad-sync", F_ENUM, C(p.grad_sync), 0, M_TRAIN, gs_names},
    {"--offload", F_BOOL, C(p.offload), 0, M_TRAIN, NULL},
    {"--dtype", F_ENUM, C(p.dtype), 0, M_ANY, dtype_names},
    {"--fp8-recipe", F_ENUM, C(p.fp8_recipe), 0, M_TRAIN, recipe_names},
    {"--make-vocab-size-divisible-by", F_POS, C(p.vocab_div), 64 * K, M_ANY, NULL},
    {"--mode", F_ENUM, C(mode), 0, M_ANY, mode_names},
    {"--batch", F_POS, C(inf.batch), M, M_INFER, NULL},
    {"--input-len", F_POS, C(inf.input_len), 16 * M, M_INFER, NULL},
    {"--output-len", F_POS, C(inf.output_len), 16 * M, M_INFER, NULL},
    {"--paged", F_BOOL, C(inf.paged), 0, M_INFER, NULL},
    {"--engine", F_ENUM, C(inf.engine), 0, M_INFER, engine_names},
    {"--enforce-eager", F_BOOL, C(inf.enforce_eager), 0, M_INFER, NULL},
    {"--launch", F_ENUM, C(launch), 0, M_ANY, launch_names},
    {"--decode-impl", F_ENUM, C(inf.decode_impl), 0, M_INFER, decode_impl_names},
    {"--same-prompt", F_BOOL, C(inf.same_prompt), 0, M_INFER, NULL},
};
#undef C
#undef K
#undef M
#define NFLAGS (int)(sizeof flags / sizeof flags[0])

/* the parse's state: the message buffer and what was given */
struct parse {
	struct gen_args *a;
	char given[NFLAGS];
	char *why;
	size_t len;
};

static int fail(struct parse *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parse *P, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(P->why, P->len, fmt, ap);
	va_end(ap);
	return -1;
}

static int flag_index(const char *name)
{
	for (int i = 0; i < NFLAGS; i++)
		if (!strcmp(flags[i].name, name))
			return i;
	return -1;
}

int gen_flag_kind(const char *name)
{
	int i = flag_index(name);
	return i < 0 ? -1 : flags[i].kind != F_BOOL;
}

static void *field(struct gen_config *c, const struct flag *f)
{
	return (char *)c + f->off;
}

static size_t field_size(const struct flag *f)
{
	switch (f->kind) {
	case F_POS:
	case F_COUNT: return sizeof(long long);
	case F_PROB:
	case F_FACTOR:
	case F_RATIO: return sizeof(double);
	case F_TEXT: return (size_t)f->max + 1;
	default: return sizeof(int);
	}
}

static void join(char *buf, size_t len, const char *const *list)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; list[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "", list[i]);
}

/* Sets flag f from text v; -1 with the message on a bad value. */
static int set_flag(struct parse *P, struct gen_config *c, const struct flag *f, const char *v)
{
	char list[128];
	if (f->kind == F_ENUM) {
		for (int i = 0; f->choices[i]; i++)
			if (!strcmp(v, f->choices[i])) {
				*(int *)field(c, f) = i;
				return 0;
			}
		join(list, sizeof list, f->choices);
		return fail(P, "%s %s: expected %s", f->name, v, list);
	}
	if (f->kind == F_TEXT) {
		if (strlen(v) > (size_t)f->max)
			return fail(P, "%s: longer than %lld characters", f->name, f->max);
		snprintf((char *)field(c, f), (size_t)f->max + 1, "%s", v);
		return 0;
	}
	char *end;
	errno = 0;
	if (f->kind == F_PROB || f->kind == F_FACTOR || f->kind == F_RATIO) { /* a real number */
		double x = strtod(v, &end);
		int num = ((*v >= '0' && *v <= '9') || *v == '.') && !*end && !errno;
		if (f->kind == F_PROB && !(num && x >= 0 && x < 1))
			return fail(P, "%s %s: expected a probability from 0 up to (not including) 1", f->name, v);
		/* F_FACTOR from 1, F_RATIO above 0, both to max */
		if (f->kind != F_PROB && !(num && x >= (f->kind == F_FACTOR ? 1 : 0) && x > 0 && x <= (double)f->max))
			return fail(P, "%s %s: expected a number from %s to %lld", f->name, v,
			            f->kind == F_FACTOR ? "1" : "above 0", f->max);
		*(double *)field(c, f) = x;
		return 0;
	}
	long long x = strtoll(v, &end, 10);
	int ok = *v >= '0' && *v <= '9' && !*end && !errno;
	long long lo = f->kind == F_ZERO || f->kind == F_COUNT ? 0 : 1;
	if (!ok || x < lo || x > f->max) {
		if (f->kind == F_ZERO)
			return fail(P, "%s %s: expected 0, 1, 2 or 3", f->name, v);
		if (f->kind == F_COUNT)
			return fail(P, "%s %s: expected an integer from 0 to %lld", f->name, v, f->max);
		return fail(P, "%s %s: expected a positive integer up to %lld", f->name, v, f->max);
	}
	if (f->kind == F_ZERO)
		*(int *)field(c, f) = (int)x;
	else
		*(long long *)field(c, f) = x;
	return 0;
}

static void cmd_append(struct gen_args *a, const char *s)
{
	size_t n = strlen(a->cmdline);
	snprintf(a->cmdline + n, sizeof a->cmdline - n, "%s%s", n ? " " : "", s);
}

static int parse_args(struct parse *P, int argc, char **argv, struct gen_config *c)
{
	struct gen_args *a = P->a;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '=');
		char name[64];
		if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
			if (i + 1 >= argc)
				return fail(P, "%s needs a file name", arg);
			a->outpath = argv[++i];
			continue;
		}
		if (arg[0] != '-' || !arg[1]) {
			if (a->model)
				return fail(P, "unexpected argument '%s' (one MODEL only)", arg);
			a->model = arg;
			cmd_append(a, arg);
			continue;
		}
		size_t n = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);
		snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), arg);
		int fi = flag_index(name);
		if (fi < 0) {
			const char *names[NFLAGS];
			for (int k = 0; k < NFLAGS; k++)
				names[k] = flags[k].name;
			int near = arch_nearest(name, names, NFLAGS);
			if (near >= 0)
				return fail(P, "unknown option '%s' (did you mean '%s'?)", name, flags[near].name);
			return fail(P, "unknown option '%s'", name);
		}
		const struct flag *f = &flags[fi];
		cmd_append(a, arg);
		P->given[fi] = 1;
		if (f->kind == F_BOOL) {
			if (eq && arg[1] == '-')
				return fail(P, "%s takes no value", f->name);
			*(int *)field(c, f) = 1;
			continue;
		}
		const char *v = eq && arg[1] == '-' ? eq + 1 : NULL;
		if (!v) {
			if (i + 1 >= argc)
				return fail(P, "%s needs a value", f->name);
			v = argv[++i];
			cmd_append(a, v);
		}
		if (set_flag(P, c, f, v))
			return -1;
	}
	return 0;
}

static int given(const struct parse *P, const char *name)
{
	return P->given[flag_index(name)];
}

static void list_presets(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; gen_preset_at(i) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s, ", gen_preset_at(i)->name);
	if (n < len)
		snprintf(buf + n, len - n, "or gpt with --layers --hidden --heads");
}

/* the model: a preset, or gpt from its shape flags */
static int pick_model(struct parse *P, struct gen_model *m)
{
	char list[1024];
	const char *name = P->a->model;
	if (!name) {
		list_presets(list, sizeof list);
		return fail(P, "missing MODEL: %s", list);
	}
	if (!strcmp(name, "gpt")) {
		gen_gpt_base(m);
		return 0;
	}
	const struct gen_model *p = gen_preset(name);
	if (!p) {
		const char *names[64];
		int n = 0;
		while (n < 63 && gen_preset_at(n)) {
			names[n] = gen_preset_at(n)->name;
			n++;
		}
		names[n++] = "gpt";
		int near = arch_nearest(name, names, n);
		if (near >= 0)
			return fail(P, "unknown model '%s' (did you mean '%s'?)", name, names[near]);
		list_presets(list, sizeof list);
		return fail(P, "unknown model '%s' (presets: %s)", name, list);
	}
	*m = *p;
	return 0;
}

/* Flags given on the command line win over the preset: copy them from o. */
static void overlay(const struct parse *P, struct gen_config *c, const struct gen_config *o)
{
	for (int i = 0; i < NFLAGS; i++)
		if (P->given[i])
			memcpy((char *)c + flags[i].off, (const char *)o + flags[i].off, field_size(&flags[i]));
}

static int mode_check(struct parse *P, const struct gen_config *c)
{
	for (int i = 0; i < NFLAGS; i++) {
		enum flag_mode want = c->mode == GEN_TRAIN ? M_TRAIN : M_INFER;
		if (P->given[i] && flags[i].mode != M_ANY && flags[i].mode != want)
			return fail(P, "%s belongs to --mode %s", flags[i].name,
			            flags[i].mode == M_TRAIN ? "train" : "infer");
	}
	return 0;
}

/* --pipeline-layout: the chunks it names set the virtual stages (and the
   interleaved schedule when there are several a stage), as Megatron-Core
   derives them from the layout */
static int layout(struct parse *P, struct gen_config *c)
{
	struct gen_layout *L = &c->p.layout;
	char text[GEN_LAYOUT_TEXT];
	snprintf(text, sizeof text, "%s", L->text);
	if (gen_layout_parse(L, text, P->why, P->len))
		return -1;
	long long pp = c->p.pp, v = L->chunks / pp;
	if (L->chunks % pp)
		return fail(P, "--pipeline-layout '%s' names %d model chunks, not a multiple of --pp %lld", text,
		            L->chunks, pp);
	if (given(P, "--virtual-stages") && c->p.vstages != v)
		return fail(P, "--pipeline-layout '%s' names %lld chunks a stage, --virtual-stages says %lld", text, v,
		            c->p.vstages);
	if (v > 1 && given(P, "--schedule") && c->p.sched != GEN_INTERLEAVED)
		return fail(P, "--pipeline-layout '%s' names %lld chunks a stage: that is --schedule interleaved", text,
		            v);
	if (v == 1 && c->p.sched == GEN_INTERLEAVED)
		return fail(P, "--pipeline-layout '%s' names one chunk a stage: --schedule interleaved needs more",
		            text);
	c->p.vstages = v;
	if (v > 1)
		c->p.sched = GEN_INTERLEAVED;
	return 0;
}

/* derived defaults: head dim, kv heads, ffn, experts, batch, virtual stages */
static int complete(struct parse *P, struct gen_config *c, int mha)
{
	struct gen_model *m = &c->m;
	int gpt = !strcmp(m->name, "gpt");
	if (given(P, "--hybrid-pattern") && !given(P, "--layers")) /* the pattern names the layers */
		m->layers = (long long)strlen(m->hybrid);
	if (gpt && (!m->layers || !m->hidden || !m->heads))
		return fail(P, "gpt needs --layers, --hidden and --heads");
	if ((gpt || given(P, "--hidden") || given(P, "--heads")) && !given(P, "--head-dim")) {
		if (m->hidden % m->heads)
			return fail(P, "--hidden %lld is not divisible by --heads %lld (or give --head-dim)", m->hidden,
			            m->heads);
		m->head_dim = m->hidden / m->heads;
	}
	if ((gpt || mha) && !given(P, "--kv-heads")) /* MHA stays MHA */
		m->kv_heads = m->heads;
	if (gpt && !given(P, "--ffn"))
		m->ffn = 4 * m->hidden;
	if (given(P, "--experts") && !m->topk)
		m->topk = m->experts < 2 ? m->experts : 2;
	if (m->experts && !m->expert_ffn)
		m->expert_ffn = m->ffn;
	if (given(P, "--hybrid-pattern")) {
		/* a model made hybrid here takes Megatron-Core's MambaModel defaults:
		   no position embedding, heads of 64 channels over twice the width, state 128 in 8 groups */
		if (gpt)
			m->nopos = 1;
		if (!m->mamba_head_dim)
			m->mamba_head_dim = 64;
		if (!m->mamba_heads)
			m->mamba_heads = 2 * m->hidden / m->mamba_head_dim;
		if (!m->mamba_state)
			m->mamba_state = 128;
		if (!m->mamba_groups)
			m->mamba_groups = 8;
	}
	if (!c->seq)
		c->seq = m->seq;
	m->seq = c->seq;
	if (!c->p.global_batch)
		c->p.global_batch = c->p.micro_batch * c->p.dp;
	if (c->p.sched == GEN_INTERLEAVED && !given(P, "--virtual-stages"))
		c->p.vstages = 2;
	if (!c->inf.input_len)
		c->inf.input_len = 512;
	if (c->p.layout.text[0] && layout(P, c))
		return -1;
	if (given(P, "--fp8-recipe") && c->p.dtype != GEN_FP8)
		return fail(P, "--fp8-recipe needs --dtype fp8");
	if (given(P, "--enforce-eager") && c->inf.engine != GEN_ENGINE_VLLM)
		return fail(P, "--enforce-eager is vLLM's setting: it needs --engine vllm");
	if (c->inf.enforce_eager && c->launch == GEN_LAUNCH_GRAPH)
		return fail(P, "--enforce-eager runs vLLM without CUDA graphs: not with --launch graph");
	return 0;
}

int gen_parse_args(int argc, char **argv, struct gen_config *c, struct gen_args *a, char *why, size_t len)
{
	struct parse P;
	struct gen_config o;
	memset(&P, 0, sizeof P);
	memset(a, 0, sizeof *a);
	P.a = a;
	P.why = why;
	P.len = len;
	memset(&o, 0, sizeof o);
	gen_defaults(&o);
	if (parse_args(&P, argc, argv, &o))
		return -1;
	memset(c, 0, sizeof *c);
	gen_defaults(c);
	if (pick_model(&P, &c->m))
		return -1;
	int mha = c->m.kv_heads == c->m.heads;
	overlay(&P, c, &o);
	if (mode_check(&P, c) || complete(&P, c, mha))
		return -1;
	return gen_check(c, why, len);
}
