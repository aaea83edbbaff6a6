/*
 * cmd_gen.c -- `sim gen MODEL [--flag value]... [-o FILE]`
 *
 * Writes the `simtrace 1` trace of one training step or one inference
 * request batch of a transformer (workloads/gen.c, gen_trace.c): MODEL is
 * a preset (gpt3-175b, llama3-8b, mixtral-8x7b, deepseek-v3, ...) or `gpt`
 * with explicit shape flags. Flags are one table: name, kind, the field it
 * sets, its range, and which mode it belongs to; parsing, errors and the
 * "given" bookkeeping all come from it. The output file is written under a
 * temporary name in its directory and renamed: complete or absent.
 */
#include "cli.h"
#include "gen.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_gen_help[] =
    "usage: sim gen MODEL [options] [-o FILE]\n"
    "\n"
    "Writes a simtrace 1 workload trace (docs/trace-format.md) of one training\n"
    "step, or one inference request batch, of a transformer on tp x pp x dp ranks,\n"
    "with a `workload` line (model FLOPs, tokens) and a `memory` line per pipeline\n"
    "stage (docs/workloads.md). Replay it with `sim run CONFIG FILE`.\n"
    "\n"
    "MODEL is a preset, or gpt with --layers, --hidden and --heads (GPT: ffn 4h,\n"
    "GELU, LayerNorm, MHA, learned positions, tied embeddings, vocab 50257, seq 2048).\n"
    "Presets: gpt3-125m gpt3-350m gpt3-760m gpt3-1.3b gpt3-2.7b gpt3-6.7b gpt3-13b\n"
    "gpt3-175b llama2-7b llama2-13b llama2-70b llama3-8b llama3-70b llama3-405b\n"
    "mixtral-8x7b deepseek-v3. Shape flags override a preset.\n"
    "\n"
    "model shape:\n"
    "  --layers N          transformer blocks\n"
    "  --hidden N          model width h\n"
    "  --heads N           query heads\n"
    "  --kv-heads N        key/value heads (default: --heads; fewer is GQA, 1 is MQA)\n"
    "  --head-dim N        dimension per head (default: hidden / heads)\n"
    "  --ffn N             FFN width (gpt default: 4 x hidden)\n"
    "  --vocab N           vocabulary size\n"
    "  --seq N             sequence length (training; default: the model's)\n"
    "  --experts N         routed experts per MoE layer (makes every layer MoE)\n"
    "  --topk N            experts per token (default 2)\n"
    "  --expert-ffn N      FFN width of one expert (default: --ffn)\n"
    "\n"
    "parallelism (ranks = tp x pp x dp):\n"
    "  --tp N              tensor parallel (Megatron column/row split; default 1)\n"
    "  --pp N              pipeline stages (layers must divide evenly; default 1)\n"
    "  --dp N              data parallel (default 1)\n"
    "  --ep N              expert parallel, splits the dp ranks (layout tp, ep,\n"
    "                      dp/ep, pp; must divide --dp and the experts)\n"
    "  --sp                sequence parallelism: norms and dropout sharded over tp,\n"
    "                      reduce-scatter + all-gather instead of all-reduce\n"
    "\n"
    "training (--mode train, the default):\n"
    "  --micro-batch N     sequences per micro-batch (default 1)\n"
    "  --global-batch N    sequences per step (default micro-batch x dp); must be\n"
    "                      a multiple of micro-batch x dp\n"
    "  --schedule S        1f1b (default) | gpipe | interleaved\n"
    "  --virtual-stages N  model chunks per stage with interleaved (default 2)\n"
    "  --recompute R       none (default) | selective (attention core) | full\n"
    "  --zero N            0 (DDP all-reduce, default) | 1 | 2 | 3 (FSDP; not with\n"
    "                      --pp > 1)\n"
    "  --offload           optimizer states on the host, copied over PCIe\n"
    "  --dtype D           bf16 (default) | fp16 (adds loss-scale unscaling) | fp8\n"
    "                      (fp8 GEMMs); fp32 master weights and Adam states\n"
    "\n"
    "inference (--mode infer; --tp and --dp only):\n"
    "  --mode M            train (default) | infer\n"
    "  --batch N           sequences per model replica (default 1)\n"
    "  --input-len N       prompt tokens (default 512)\n"
    "  --output-len N      generated tokens (default 128; decode steps = N - 1)\n"
    "  --paged             PagedAttention decode (KV blocks of 16 tokens)\n"
    "\n"
    "output:\n"
    "  -o FILE             write the trace to FILE (default: stdout)\n"
    "\n"
    "exit codes: 0 ok, 2 usage (unknown flag or preset, bad value, a layout that\n"
    "does not divide), 73 cannot write output.\n"
    "\n"
    "examples:\n"
    "  sim gen gpt3-175b --tp 8 --pp 16 --dp 8 --global-batch 1536 --recompute full\n"
    "  sim gen gpt --layers 24 --hidden 2048 --heads 16 --vocab 50257 --seq 2048 --tp 2 --dp 4\n"
    "  sim gen llama3-8b --dp 8 --zero 1 --global-batch 64 -o llama.trace\n"
    "  sim gen llama2-70b --mode infer --tp 4 --batch 16 --input-len 1024 --output-len 256 --paged\n";

enum flag_kind { F_POS, F_ZERO, F_BOOL, F_ENUM };
enum flag_mode { M_ANY, M_TRAIN, M_INFER };

struct flag {
	const char *name;
	enum flag_kind kind;
	size_t off;                 /* field in struct gen_config */
	long long max;              /* F_POS: largest value */
	enum flag_mode mode;        /* which --mode it belongs to */
	const char *const *choices; /* F_ENUM: values, in enum order */
};

_Static_assert(sizeof(enum gen_sched) == sizeof(int) && sizeof(enum gen_mode) == sizeof(int) &&
                   sizeof(enum gen_dtype) == sizeof(int) && sizeof(enum gen_recompute) == sizeof(int),
               "enum flags are stored as int");

static const char *const sched_names[] = {"1f1b", "gpipe", "interleaved", NULL};
static const char *const rc_names[] = {"none", "selective", "full", NULL};
static const char *const mode_names[] = {"train", "infer", NULL};
static const char *const dtype_names[] = {"bf16", "fp16", "fp8", NULL};

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
    {"--tp", F_POS, C(p.tp), M, M_ANY, NULL},
    {"--pp", F_POS, C(p.pp), M, M_ANY, NULL},
    {"--dp", F_POS, C(p.dp), M, M_ANY, NULL},
    {"--ep", F_POS, C(p.ep), M, M_ANY, NULL},
    {"--sp", F_BOOL, C(p.sp), 0, M_ANY, NULL},
    {"--micro-batch", F_POS, C(p.micro_batch), M, M_TRAIN, NULL},
    {"--global-batch", F_POS, C(p.global_batch), 1024 * M, M_TRAIN, NULL},
    {"--schedule", F_ENUM, C(p.sched), 0, M_TRAIN, sched_names},
    {"--virtual-stages", F_POS, C(p.vstages), K, M_TRAIN, NULL},
    {"--recompute", F_ENUM, C(p.recompute), 0, M_TRAIN, rc_names},
    {"--zero", F_ZERO, C(p.zero), 3, M_TRAIN, NULL},
    {"--offload", F_BOOL, C(p.offload), 0, M_TRAIN, NULL},
    {"--dtype", F_ENUM, C(p.dtype), 0, M_ANY, dtype_names},
    {"--mode", F_ENUM, C(mode), 0, M_ANY, mode_names},
    {"--batch", F_POS, C(inf.batch), M, M_INFER, NULL},
    {"--input-len", F_POS, C(inf.input_len), 16 * M, M_INFER, NULL},
    {"--output-len", F_POS, C(inf.output_len), 16 * M, M_INFER, NULL},
    {"--paged", F_BOOL, C(inf.paged), 0, M_INFER, NULL},
};
#undef C
#undef K
#undef M
#define NFLAGS (int)(sizeof flags / sizeof flags[0])

static int flag_index(const char *name)
{
	for (int i = 0; i < NFLAGS; i++)
		if (!strcmp(flags[i].name, name))
			return i;
	return -1;
}

static void *field(struct gen_config *c, const struct flag *f)
{
	return (char *)c + f->off;
}

static void join(char *buf, size_t len, const char *const *list)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; list[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "", list[i]);
}

/* Sets flag f from text v; prints the usage error and returns -1 on a bad value. */
static int set_flag(struct gen_config *c, const struct flag *f, const char *v)
{
	char list[128];
	if (f->kind == F_ENUM) {
		for (int i = 0; f->choices[i]; i++)
			if (!strcmp(v, f->choices[i])) {
				*(int *)field(c, f) = i;
				return 0;
			}
		join(list, sizeof list, f->choices);
		return cli_usage_error("gen", "%s %s: expected %s", f->name, v, list);
	}
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	int ok = *v >= '0' && *v <= '9' && !*end && !errno;
	long long lo = f->kind == F_ZERO ? 0 : 1;
	if (!ok || x < lo || x > f->max) {
		if (f->kind == F_ZERO)
			return cli_usage_error("gen", "%s %s: expected 0, 1, 2 or 3", f->name, v);
		return cli_usage_error("gen", "%s %s: expected a positive integer up to %lld", f->name, v, f->max);
	}
	if (f->kind == F_ZERO)
		*(int *)field(c, f) = (int)x;
	else
		*(long long *)field(c, f) = x;
	return 0;
}

struct args {
	const char *model;
	const char *outpath;
	char given[NFLAGS];
	char cmdline[2048]; /* the arguments without -o FILE, for the trace's first line */
};

static void cmd_append(struct args *a, const char *s)
{
	size_t n = strlen(a->cmdline);
	snprintf(a->cmdline + n, sizeof a->cmdline - n, "%s%s", n ? " " : "", s);
}

static int parse_args(int argc, char **argv, struct gen_config *c, struct args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '=');
		char name[64];
		if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
			if (i + 1 >= argc)
				return cli_usage_error("gen", "%s needs a file name", arg);
			a->outpath = argv[++i];
			continue;
		}
		if (arg[0] != '-' || !arg[1]) {
			if (a->model)
				return cli_usage_error("gen", "unexpected argument '%s' (one MODEL only)", arg);
			a->model = arg;
			cmd_append(a, arg);
			continue;
		}
		size_t n = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);
		snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), arg);
		int fi = flag_index(name);
		if (fi < 0)
			return cli_usage_error("gen", "unknown option '%s'", name);
		const struct flag *f = &flags[fi];
		cmd_append(a, arg);
		a->given[fi] = 1;
		if (f->kind == F_BOOL) {
			if (eq && arg[1] == '-')
				return cli_usage_error("gen", "%s takes no value", f->name);
			*(int *)field(c, f) = 1;
			continue;
		}
		const char *v = eq && arg[1] == '-' ? eq + 1 : NULL;
		if (!v) {
			if (i + 1 >= argc)
				return cli_usage_error("gen", "%s needs a value", f->name);
			v = argv[++i];
			cmd_append(a, v);
		}
		if (set_flag(c, f, v))
			return SIM_EXIT_USAGE;
	}
	return 0;
}

static int given(const struct args *a, const char *name)
{
	return a->given[flag_index(name)];
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

/* the model: a preset, or gpt from its shape flags; shape flags are applied
   to the config by parse_args, so the preset goes under them */
static int pick_model(const struct args *a, struct gen_model *m)
{
	char list[1024];
	if (!a->model) {
		list_presets(list, sizeof list);
		return cli_usage_error("gen", "missing MODEL: %s", list);
	}
	if (!strcmp(a->model, "gpt")) {
		gen_gpt_base(m);
		return 0;
	}
	const struct gen_model *p = gen_preset(a->model);
	if (!p) {
		list_presets(list, sizeof list);
		return cli_usage_error("gen", "unknown model '%s' (presets: %s)", a->model, list);
	}
	*m = *p;
	return 0;
}

/* Flags given on the command line win over the preset: copy them from o. */
static void overlay(struct gen_config *c, const struct gen_config *o, const struct args *a)
{
	for (int i = 0; i < NFLAGS; i++) {
		if (!a->given[i])
			continue;
		const struct flag *f = &flags[i];
		size_t sz = f->kind == F_POS ? sizeof(long long) : sizeof(int);
		memcpy((char *)c + f->off, (const char *)o + f->off, sz);
	}
}

static int mode_check(const struct gen_config *c, const struct args *a)
{
	for (int i = 0; i < NFLAGS; i++) {
		enum flag_mode want = c->mode == GEN_TRAIN ? M_TRAIN : M_INFER;
		if (a->given[i] && flags[i].mode != M_ANY && flags[i].mode != want)
			return cli_usage_error("gen", "%s belongs to --mode %s", flags[i].name,
			                       flags[i].mode == M_TRAIN ? "train" : "infer");
	}
	return 0;
}

/* derived defaults: head dim, kv heads, ffn, experts, batch, virtual stages */
static int complete(struct gen_config *c, const struct args *a, int mha)
{
	struct gen_model *m = &c->m;
	int gpt = !strcmp(m->name, "gpt");
	if (gpt && (!m->layers || !m->hidden || !m->heads))
		return cli_usage_error("gen", "gpt needs --layers, --hidden and --heads");
	if ((gpt || given(a, "--hidden") || given(a, "--heads")) && !given(a, "--head-dim")) {
		if (m->hidden % m->heads)
			return cli_usage_error("gen",
			                       "--hidden %lld is not divisible by --heads %lld (or give --head-dim)",
			                       m->hidden, m->heads);
		m->head_dim = m->hidden / m->heads;
	}
	if ((gpt || mha) && !given(a, "--kv-heads")) /* MHA stays MHA */
		m->kv_heads = m->heads;
	if (gpt && !given(a, "--ffn"))
		m->ffn = 4 * m->hidden;
	if (given(a, "--experts") && !m->topk)
		m->topk = m->experts < 2 ? m->experts : 2;
	if (m->experts && !m->expert_ffn)
		m->expert_ffn = m->ffn;
	if (!c->seq)
		c->seq = m->seq;
	m->seq = c->seq;
	if (!c->p.global_batch)
		c->p.global_batch = c->p.micro_batch * c->p.dp;
	if (c->p.sched == GEN_INTERLEAVED && !given(a, "--virtual-stages"))
		c->p.vstages = 2;
	if (!c->inf.input_len)
		c->inf.input_len = 512;
	return 0;
}

static int configure(int argc, char **argv, struct gen_config *c, struct args *a)
{
	struct gen_config o;
	memset(&o, 0, sizeof o);
	gen_defaults(&o);
	memset(a, 0, sizeof *a);
	int rc = parse_args(argc, argv, &o, a);
	if (rc)
		return rc;
	memset(c, 0, sizeof *c);
	gen_defaults(c);
	if ((rc = pick_model(a, &c->m)))
		return rc;
	int mha = c->m.kv_heads == c->m.heads;
	overlay(c, &o, a);
	if ((rc = mode_check(c, a)) || (rc = complete(c, a, mha)))
		return rc;
	char why[512];
	if (gen_check(c, why, sizeof why))
		return cli_usage_error("gen", "%s", why);
	return 0;
}

static int write_out(const struct gen_config *c, const struct args *a)
{
	if (!a->outpath) {
		if (gen_write(stdout, c, a->cmdline) || fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "sim gen: cannot write output\n");
			return SIM_EXIT_CANTCREAT;
		}
		return SIM_EXIT_OK;
	}
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", a->outpath, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "sim gen: cannot write %s: %s\n", a->outpath, strerror(errno));
		return SIM_EXIT_CANTCREAT;
	}
	int bad = gen_write(f, c, a->cmdline);
	int err = errno;
	if (fclose(f) || bad || rename(tmp, a->outpath)) {
		err = errno ? errno : err;
		unlink(tmp);
		fprintf(stderr, "sim gen: cannot write %s: %s\n", a->outpath, strerror(err ? err : EIO));
		return SIM_EXIT_CANTCREAT;
	}
	return SIM_EXIT_OK;
}

int cmd_gen(int argc, char **argv)
{
	struct gen_config c;
	struct args a;
	int rc = configure(argc, argv, &c, &a);
	return rc ? rc : write_out(&c, &a);
}
