/*
 * cmd_plan.c -- `sim plan CONFIG MODEL --gpus N --global-batch B [options]`
 *
 * Searches the parallel layouts of a training run (sim/plan/: what is
 * searched, the memory check, the replays, the ranking) and prints them
 * ranked by step time: a table on stdout (--top rows), every layout as CSV
 * (--csv FILE) or JSON (--json). The run's options (sequence, global batch,
 * dtype, shape ...) are sim gen's, parsed by gen_parse_args; the layout
 * options are lists the search may take. This file has the options, the
 * search of a training plan and the shards; cmd_plan_out.c the outputs and
 * the serving plan (cmd_plan_int.h between them).
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

const char cmd_plan_help[] =
    "usage: sim plan CONFIG MODEL --gpus N --global-batch B [run options]\n"
    "                [search options] [--top K] [--csv FILE] [--json]\n"
    "       sim plan CONFIG MODEL --gpus N --mode serve --slo-ttft T --slo-tpot T\n"
    "                [stream and engine options] [--tp LIST] [--pp LIST] ...\n"
    "\n"
    "Searches the parallel layouts of a training run of MODEL (a sim gen preset,\n"
    "or gpt with shape options) on N devices of CONFIG's chip and prints them\n"
    "ranked by predicted step time: every tensor x pipeline x data (x expert,\n"
    "x context) split, micro-batch, recompute and ZeRO stage that sim gen can\n"
    "lay out (sequence parallelism with tp > 1), each checked for memory with\n"
    "sim gen's estimate, the ones that fit replayed as `sim gen` + `sim run` would\n"
    "(a child process each, --jobs at once). Of the layouts that differ only in\n"
    "recompute the lightest that fits is replayed (more recompute only adds work);\n"
    "layouts that do not fit are listed with the memory they need. docs/plan.md\n"
    "explains.\n"
    "\n"
    "run options (sim gen's, kept by every layout): --seq S, --global-batch B\n"
    "  (required), --dtype bf16|fp16|fp8, --fp8-recipe R, --grad-sync S,\n"
    "  --attn-impl I, --offload, shape options (--layers, --hidden, ...);\n"
    "  --schedule 1f1b|gpipe|interleaved and --virtual-stages V for the layouts\n"
    "  with pp > 1 (a single stage has no pipeline schedule), as are sim gen's\n"
    "  --decoder-first/last-pipeline-num-layers N and\n"
    "  --account-for-embedding/loss-in-pipeline-split\n"
    "\n"
    "search (comma-separated lists; default: all the model and node allow):\n"
    "  --gpus N                devices of the run (required)\n"
    "  --tp LIST               tensor parallel sizes (default: powers of two up to\n"
    "                          the devices of a node)\n"
    "  --pp LIST               pipeline stages (default: divisors of N up to the\n"
    "                          layers)\n"
    "  --cp LIST               context parallel sizes (ring attention, sim gen --cp;\n"
    "                          default 1: it pays on long sequences, e.g. --cp 1,2,4)\n"
    "  --ep LIST               expert parallel sizes, models with experts (default:\n"
    "                          1 and the powers of two that divide the experts)\n"
    "  --micro-batch LIST      sequences per micro-batch (default 1,2,4,8)\n"
    "  --recompute LIST        none,selective,full (default: all three)\n"
    "  --zero LIST             ZeRO stages 0-3 (default 0,1: DDP and Megatron's\n"
    "                          distributed optimizer)\n"
    "  --all-recompute         replay every recompute that fits, not only the\n"
    "                          lightest\n"
    "  --ranks-per-node N      place N ranks on each node, its other devices idle\n"
    "                          (as sim run --ranks-per-node; e.g. 64 of each NVL72\n"
    "                          rack of 72): tp then stays within N\n"
    "\n"
    "serving (--mode serve; default --mode train):\n"
    "  each replica layout tp x pp (--tp, --pp lists; pp default 1,2,4,8) makes\n"
    "  N / (tp x pp) replicas, with each engine batch of --max-num-seqs LIST\n"
    "  (default: sim serve's 256); the fleet is served as sim serve serves it (its\n"
    "  stream and engine options: --requests, --input-len, --output-len,\n"
    "  --lengths, --seed, --max-batched-tokens, --engine ...; see\n"
    "  sim help serve) at rising Poisson rates, and the layouts are ranked by the\n"
    "  highest rate whose p99 TTFT and p99 TPOT stay within --slo-ttft and\n"
    "  --slo-tpot (one at least)\n"
    "\n"
    "output:\n"
    "  --top K                 rows of the ranked table (default 10; 0: all)\n"
    "  --csv FILE              every layout, one row each (replayed, dominated,\n"
    "                          not fitting), ranked\n"
    "  --json                  the plan as JSON (schema_version 1) instead of the\n"
    "                          table\n"
    "  --plot FILE.svg         a Pareto plot: each replayed layout's memory per\n"
    "                          device and step time, the front (none faster with\n"
    "                          as little memory) labelled; with --mode serve, the\n"
    "                          rate against the devices a replica takes\n"
    "  --jobs J                replays at once (default: the processors)\n"
    "  --set path=value        override a config parameter (repeatable)\n"
    "  --shard I/N             replay only shard I of N (0 <= I < N): the layouts\n"
    "                          replayed I, I+N, ... of the plan; writes the shard's\n"
    "                          results to --csv FILE (or stdout) for `sim merge`,\n"
    "                          which joins the N files into the plan's CSV\n"
    "\n"
    "The table's bottleneck is what a layout loses most to beyond compute: the\n"
    "communicator with the most exposed time, or idle (pipeline bubbles, waits\n"
    "for peers), with its share of the step; compute, the exposed times and\n"
    "idle add up to the step (the CSV and JSON have each).\n"
    "\n"
    "As MPI ranks (`mpirun -n N sim plan ...`, sim built with MPI), a training\n"
    "plan's replays are dealt out by rank and rank 0 writes what one process\n"
    "writes; --mode serve runs in one process. As shards (--shard, a batch job\n"
    "or host each) the same split is left to the scheduler.\n"
    "\n"
    "exit codes: 0 ok (also when no layout fits: the table says so), 2 usage (a\n"
    "bad option or list, no layout of N devices at all), 73 cannot write an\n"
    "output, 78 bad config.\n"
    "\n"
    "examples:\n"
    "  sim plan configs/h100.cfg llama3-8b --gpus 16 --seq 4096 --global-batch 64\n"
    "  sim plan configs/h100.cfg llama3-70b --gpus 256 --seq 8192 --global-batch 512 --top 5\n"
    "  sim plan configs/mi300x.cfg llama3-70b --gpus 64 --seq 4096 --global-batch 256 --tp 4,8\n"
    "          --recompute selective --csv /tmp/plan.csv\n"
    "  sim plan configs/h100.cfg llama3-70b --gpus 16 --mode serve --slo-ttft 1s --slo-tpot 60ms\n"
    "          --requests 300 --input-len 128:2048 --output-len 256\n"
    "  sim plan configs/h100.cfg llama3-8b --gpus 16 --seq 4096 --global-batch 64 --plot plan.svg\n"
    "  sim plan configs/h100.cfg llama3-8b --gpus 16 --seq 4096 --global-batch 64 --shard 0/2 --csv p0.csv\n";

/* sim gen's layout options: the search sets them */
static const char *const layout_opts[] = {"--dp", "--sp", "--batch", "--replicas", "--prefill-replicas", "-o", NULL};

static int parse_int(const char *opt, const char *v, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (!*v || *end || errno || n < lo || n > hi) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s %s: expected a whole number from %lld to %lld", opt, v, lo, hi);
		return cli_usage_error("plan", "%s", msg);
	}
	*out = n;
	return 0;
}

/* "1,2,4" into l */
static int parse_list(const char *opt, const char *v, long long hi, struct pl_list *l)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", v);
	l->n = 0;
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (l->n == PL_MAX_CHOICES)
			return cli_usage_error("plan", "%s %s: at most 16 values", opt, v);
		long long n = 0;
		if (parse_int(opt, w, 1, hi, &n))
			return SIM_EXIT_USAGE;
		for (int k = 0; k < l->n; k++)
			if (l->v[k] == n)
				return cli_usage_error("plan", "%s %s: a value given twice", opt, v);
		l->v[l->n++] = n;
	}
	return l->n ? 0 : cli_usage_error("plan", "%s '%s': expected a comma-separated list", opt, v);
}

/* "none,full" or "0,1" into a bit mask */
static int parse_mask(const char *opt, const char *v, const char *const *names, unsigned *mask)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", v);
	*mask = 0;
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int k = 0;
		while (names[k] && strcmp(names[k], w))
			k++;
		if (!names[k]) {
			char all[128] = "";
			for (int i = 0; names[i]; i++)
				snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? "," : "", names[i]);
			char msg[320];
			snprintf(msg, sizeof msg, "%s %s: expected a list of %s", opt, v, all);
			return cli_usage_error("plan", "%s", msg);
		}
		*mask |= 1u << k;
	}
	return *mask ? 0 : cli_usage_error("plan", "%s '%s': expected a comma-separated list", opt, v);
}

static const char *const rc_names[] = {"none", "selective", "full", NULL};
static const char *const zero_names[] = {"0", "1", "2", "3", NULL};
static const char *const sched_names[] = {"1f1b", "gpipe", "interleaved", NULL}; /* enum gen_sched order */

/* one of plan's own options at argv[*i]: 1 consumed, 0 not ours, or an exit code + 2 */
static int plan_opt(struct pl_args *A, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--json"))
		return A->json = 1;
	if (!strcmp(a, "--all-recompute"))
		return A->sp.all_recompute = A->train_lists = 1;
	static const char *const valued[] = {"--gpus",
	                                     "--tp",
	                                     "--pp",
	                                     "--ep",
	                                     "--micro-batch",
	                                     "--recompute",
	                                     "--zero",
	                                     "--top",
	                                     "--csv",
	                                     "--jobs",
	                                     "--set",
	                                     "--schedule",
	                                     "--virtual-stages",
	                                     "--cp",
	                                     "--plot",
	                                     "--shard",
	                                     "--max-num-seqs",
	                                     "--ranks-per-node",
	                                     NULL};
	int k = 0;
	while (valued[k] && strcmp(valued[k], a))
		k++;
	if (!valued[k])
		return 0;
	if (*i + 1 >= argc)
		return 2 + cli_usage_error("plan", "%s needs a value", a);
	const char *v = argv[++*i];
	long long n = 0;
	int rc = 0;
	A->train_lists |= (k >= 3 && k <= 6) || k == 13; /* --ep, --micro-batch, --recompute, --zero, --cp */
	switch (k) {
	case 0: rc = parse_int(a, v, 1, 1 << 20, &A->gpus); break;
	case 1: rc = parse_list(a, v, 1 << 20, &A->sp.tp); break;
	case 2: rc = parse_list(a, v, 1 << 20, &A->sp.pp); break;
	case 3: rc = parse_list(a, v, 1 << 20, &A->sp.ep); break;
	case 4: rc = parse_list(a, v, 1 << 20, &A->sp.mb); break;
	case 5: rc = parse_mask(a, v, rc_names, &A->sp.rc_mask); break;
	case 6: rc = parse_mask(a, v, zero_names, &A->sp.zero_mask); break;
	case 7:
		rc = parse_int(a, v, 0, 1 << 20, &n);
		A->top = (int)n;
		break;
	case 8: A->csv = v; break;
	case 9:
		rc = parse_int(a, v, 1, 1024, &n);
		A->jobs = (int)n;
		break;
	case 11: {
		int k2 = 0;
		while (sched_names[k2] && strcmp(sched_names[k2], v))
			k2++;
		if (!sched_names[k2])
			rc = cli_usage_error("plan", "--schedule %s: expected 1f1b, gpipe or interleaved", v);
		A->sp.sched_set = 1;
		A->sp.sched = (enum gen_sched)k2;
		A->train_lists = 1;
		break;
	}
	case 12:
		rc = parse_int(a, v, 1, 1024, &A->sp.vstages);
		A->train_lists = 1;
		break;
	case 13: rc = parse_list(a, v, 1 << 20, &A->sp.cp); break;
	case 14: A->plot = v; break;
	case 15: rc = cli_parse_shard("plan", v, PL_MAX_SHARDS, &A->shard_i, &A->shard_n); break;
	case 16:
		rc = parse_list(a, v, 65536, &A->sp.max_seqs);
		A->serve_lists = 1;
		break;
	case 17: { /* the same check and message as run, sweep and compare */
		int rpn = 0;
		rc = cli_parse_ranks_per_node("plan", v, &rpn);
		A->sp.ranks_per_node = rpn;
		A->train_lists = 1;
		break;
	}
	default:
		if (A->nsets == CLI_MAX_SETS)
			return 2 + cli_usage_error("plan", "more than %d --set options", CLI_MAX_SETS);
		A->sets[A->nsets++] = v;
	}
	return rc ? 2 + rc : 1;
}

/* --mode serve: the model, stream, engine and limits as sim serve reads them
   (sv_parse_args), the replica layout left to the search */
static int parse_serve(struct pl_args *A, struct gen_config *g)
{
	char *argv[260];
	int argc = 0;
	argv[argc++] = "serve";
	argv[argc++] = (char *)A->config;
	for (int i = 1; i < A->gen_argc; i++)
		argv[argc++] = A->gen_argv[i];
	argv[argc] = NULL;
	if (A->train_lists)
		return cli_usage_error("plan",
		                       "--cp, --ep, --micro-batch, --recompute, --zero, --schedule, "
		                       "--virtual-stages, --ranks-per-node and --all-recompute are for --mode train");
	struct sv_args sa;
	const char *unknown;
	char why[1280];
	if (sv_parse_args(argc, argv, &sa, &A->so, g, &unknown, why, sizeof why))
		return unknown ? cli_unknown_option("plan", cmd_plan_help, unknown)
		               : cli_usage_error("plan", "%s", why);
	if (A->so.slo_ttft_s <= 0 && A->so.slo_tpot_s <= 0)
		return cli_usage_error("plan", "--mode serve needs --slo-ttft or --slo-tpot (the limits the rate is "
		                               "searched under)");
	if (A->so.arrivals == SV_CSV)
		return cli_usage_error("plan", "--mode serve searches a Poisson rate; it does not take --requests-csv");
	return 0;
}

/* sim gen's options of how the layers split over pipeline stages apply to the layouts with pp > 1, as --schedule
   does (sim gen refuses them with one stage): taken out of sim gen's arguments into the search space */
static int pipeline_split_opts(struct pl_args *A)
{
	static const char *const bools[] = {"--account-for-embedding-in-pipeline-split",
	                                    "--account-for-loss-in-pipeline-split"};
	static const char *const counts[] = {"--decoder-first-pipeline-num-layers",
	                                     "--decoder-last-pipeline-num-layers"};
	int out = 1;
	for (int i = 1; i < A->gen_argc; i++) {
		const char *a = A->gen_argv[i];
		if (!strcmp(a, bools[0]) || !strcmp(a, bools[1])) {
			*(strcmp(a, bools[0]) ? &A->sp.split_loss : &A->sp.split_embedding) = 1;
			A->train_lists = 1;
			continue;
		}
		if (!strcmp(a, counts[0]) || !strcmp(a, counts[1])) {
			if (i + 1 >= A->gen_argc)
				return cli_usage_error("plan", "%s needs a value", a);
			long long *n = strcmp(a, counts[0]) ? &A->sp.last_layers : &A->sp.first_layers;
			if (parse_int(a, A->gen_argv[++i], 1, 100000, n))
				return SIM_EXIT_USAGE;
			A->train_lists = 1;
			continue;
		}
		A->gen_argv[out++] = A->gen_argv[i];
	}
	A->gen_argc = out;
	A->gen_argv[out] = NULL;
	return 0;
}

static int parse(int argc, char **argv, struct pl_args *A, struct gen_config *g)
{
	memset(A, 0, sizeof *A);
	A->top = 10;
	A->jobs = pp_cpus();
	A->argc = argc;
	A->argv = argv;
	A->gen_argv[A->gen_argc++] = "gen";
	int has_gb = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(cmd_plan_help, stdout);
			return -1;
		}
		int rc = plan_opt(A, argc, argv, &i);
		if (rc >= 2)
			return rc - 2;
		if (rc)
			continue;
		if (!strcmp(a, "--mode")) {
			const char *v = i + 1 < argc ? argv[++i] : "";
			if (strcmp(v, "train") && strcmp(v, "serve"))
				return cli_usage_error("plan", "--mode %s: expected train or serve", v);
			A->serve = !strcmp(v, "serve");
			continue;
		}
		for (int k = 0; layout_opts[k]; k++)
			if (!strcmp(a, layout_opts[k]))
				return cli_usage_error(
				    "plan",
				    "%s is not a plan option (the search sets the layout; lists: --tp, "
				    "--pp, --cp, --ep, --micro-batch, --recompute, --zero)",
				    a);
		if (a[0] != '-' && !A->config) {
			A->config = a;
			continue;
		}
		if (A->gen_argc >= (int)(sizeof A->gen_argv / sizeof A->gen_argv[0]) - 2)
			return cli_usage_error("plan", "too many arguments");
		has_gb |= !strcmp(a, "--global-batch");
		A->gen_argv[A->gen_argc++] = argv[i];
	}
	if (!A->config || A->gen_argc < 2)
		return cli_usage_error("plan", "expected CONFIG MODEL");
	if (!A->gpus)
		return cli_usage_error("plan", "--gpus N is required (the devices of the run)");
	A->gen_argv[A->gen_argc] = NULL;
	if (A->shard_n && (A->serve || A->json || A->plot))
		return cli_usage_error("plan",
		                       "--shard writes one shard's replays for sim merge: not with %s (the merged "
		                       "plan has them)",
		                       A->serve  ? "--mode serve"
		                       : A->json ? "--json"
		                                 : "--plot");
	if (A->serve)
		return parse_serve(A, g);
	if (A->serve_lists)
		return cli_usage_error("plan", "--max-num-seqs is for --mode serve (a list the serving search takes)");
	if (A->sp.vstages && !(A->sp.sched_set && A->sp.sched == GEN_INTERLEAVED))
		return cli_usage_error("plan", "--virtual-stages %lld needs --schedule interleaved", A->sp.vstages);
	if (!has_gb)
		return cli_usage_error("plan", "--global-batch B is required (the sequences of a step, which every "
		                               "layout keeps)");
	A->gen_argv[A->gen_argc] = NULL;
	int rc = pipeline_split_opts(A);
	if (rc)
		return rc;
	struct gen_args ga;
	char why[1280];
	if (gen_parse_args(A->gen_argc, A->gen_argv, g, &ga, why, sizeof why)) {
		if (!strncmp(why, "unknown option '", 16)) {
			char opt[64];
			snprintf(opt, sizeof opt, "%.*s", (int)strcspn(why + 16, "'"), why + 16);
			return cli_unknown_option("plan", cmd_plan_help, opt);
		}
		return cli_usage_error("plan", "%s", why);
	}
	if (g->mode != GEN_TRAIN)
		return cli_usage_error("plan", "plans a training run (--mode train)");
	return 0;
}

/* ---- shards (--shard I/N, sim merge; the file format in sim/plan/plan_out.c) ------ */

/* whether argv[i] is kept in a shard's arguments (not an output or speed option, nor its value) */
static int kept_arg(char **argv, int i)
{
	static const char *const dropped[] = {"--shard", "--csv", "--jobs", "--top", NULL};
	for (int d = 0; dropped[d]; d++)
		if (!strcmp(argv[i], dropped[d]) || (i > 0 && !strcmp(argv[i - 1], dropped[d])))
			return 0;
	return 1;
}

/* a plan's fingerprint: FNV-1a of the config's contents (its fingerprint) and the arguments a shard keeps */
static unsigned long long plan_id(const struct arch_chip *c, char *const *args, int nargs)
{
	char fp[32];
	snprintf(fp, sizeof fp, "%016llx", (unsigned long long)arch_chip_fingerprint(c));
	unsigned long long h = CLI_FNV_START;
	cli_fnv(&h, fp);
	for (int i = 0; i < nargs; i++)
		cli_fnv(&h, args[i]);
	return h;
}

static void write_shard(FILE *f, const struct arch_chip *c, const struct pl_args *A, const struct pl_plan *p)
{
	char *args[PL_MAX_ARGS] = {0};
	int na = 0;
	for (int i = 1; i < A->argc; i++)
		if (kept_arg(A->argv, i))
			args[na++] = A->argv[i];
	pl_shard_write(f, p, A->shard_i, A->shard_n, plan_id(c, args, na), args, na);
}

/* the plan of the shards' arguments listed again, each replay's results put in, ranked, written as --csv would */
static int merge_write(struct pl_shard *const *by, const char *out, const char *plot)
{
	const struct pl_shard *s0 = by[0];
	char *argv[PL_MAX_ARGS + 2] = {"plan"};
	memcpy(argv + 1, s0->args, (size_t)s0->nargs * sizeof *argv);
	struct pl_args A;
	struct gen_config g;
	int rc = parse(s0->nargs + 1, argv, &A, &g);
	if (rc)
		return rc < 0 ? SIM_EXIT_USAGE : rc;
	if (A.serve) { /* --shard refuses it: not a shard sim plan wrote */
		fprintf(stderr, "%s: its arguments are a serving plan's, which runs in one process (no shards)\n",
		        s0->path);
		return SIM_EXIT_TRACE;
	}
	struct cli_common co = {.nsets = A.nsets};
	memcpy(co.sets, A.sets, sizeof co.sets);
	struct arch_chip *c = cli_load(A.config, &co, &rc);
	if (!c)
		return rc;
	struct pl_plan p = {0};
	char why[1024];
	if (plan_id(c, s0->args, s0->nargs) != s0->id) {
		fprintf(stderr,
		        "%s:1: plan %016llx, but its arguments on config %s are plan %016llx now: the config "
		        "changed since the shards ran\n",
		        s0->path, s0->id, A.config, plan_id(c, s0->args, s0->nargs));
		rc = SIM_EXIT_TRACE;
	} else if (pl_enumerate(c, &g, A.gpus, &A.sp, &p, why, sizeof why))
		rc = cli_usage_error("merge", "%s", why);
	else if (p.counts[PL_REPLAYED] != s0->replays) {
		fprintf(stderr, "%s:1: %ld replays, but the plan of its arguments lists %ld now\n", s0->path,
		        s0->replays, p.counts[PL_REPLAYED]);
		rc = SIM_EXIT_TRACE;
	}
	if (!rc) {
		pl_shard_put(&p, by);
		pl_rank(&p);
		struct out_file o;
		FILE *f;
		if (!(rc = cp_open_out(out ? out : "-", &o, &f))) {
			cp_write_csv(f, &p);
			rc = cp_close_out(out ? out : "stdout", &o, f);
		}
		char title[512];
		cp_plot_title(c, &A, &g, title, sizeof title);
		if (!rc && plot)
			rc = cp_save_plot(plot, pl_plot(&p, title));
	}
	pl_free(&p);
	arch_free(c);
	return rc;
}

int cli_plan_merge(const char *const *paths, int n, const char *out, const char *plot)
{
	struct pl_shard *sh = calloc((size_t)n, sizeof *sh);
	struct pl_shard **by = NULL;
	int rc = 0;
	for (int k = 0; sh && k < n && !rc; k++) {
		sh[k].path = paths[k];
		if ((rc = pl_shard_read(&sh[k])))
			fprintf(stderr, "%s\n", sh[k].why);
	}
	if (!rc && (!sh || !(by = calloc((size_t)sh[0].n, sizeof *by)))) {
		fprintf(stderr, "sim merge: out of memory\n");
		rc = SIM_EXIT_INTERNAL;
	}
	if (!rc && (rc = pl_shard_check(sh, n, by)))
		for (int k = 0; k < n; k++)
			if (sh[k].why[0])
				fprintf(stderr, "%s\n", sh[k].why);
	if (!rc)
		rc = merge_write(by, out, plot);
	for (int k = 0; sh && k < n; k++)
		pl_shard_free(&sh[k]);
	free(sh);
	free(by);
	return rc;
}

static int run_train(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g,
                     const struct sim_mpi *mp)
{
	char why[1024];
	struct pl_plan p;
	if (pl_enumerate(c, g, A->gpus, &A->sp, &p, why, sizeof why))
		return cli_usage_error("plan", "%s", why);
	struct progress P;
	progress_start(&P, "plan");
	int part = A->shard_n ? (int)A->shard_i : mp->rank, parts = A->shard_n ? (int)A->shard_n : mp->size;
	int rc = pl_replay(c, &p, A->jobs, part, parts, cp_progress, &P, why, sizeof why) ? SIM_EXIT_INTERNAL : 0;
	if (rc)
		fprintf(stderr, "sim plan: %s\n", why);
	if (!rc && A->shard_n) { /* the shard's replays, unranked, for sim merge */
		struct out_file o;
		FILE *f;
		if (!(rc = cp_open_out(A->csv ? A->csv : "-", &o, &f))) {
			write_shard(f, c, A, &p);
			rc = cp_close_out(A->csv ? A->csv : "stdout", &o, f);
		}
		pl_free(&p);
		return rc;
	}
	if (mp->size > 1 && !(rc = sim_mpi_agree(mp, rc)))
		rc = cp_gather_plan(mp, &p);
	if (rc || mp->rank != 0) { /* every rank but 0 is done */
		pl_free(&p);
		return rc;
	}
	pl_rank(&p);
	if (A->csv) {
		struct out_file o;
		FILE *f;
		if (!(rc = cp_open_out(A->csv, &o, &f))) {
			cp_write_csv(f, &p);
			rc = cp_close_out(A->csv, &o, f);
		}
	}
	char title[512];
	cp_plot_title(c, A, g, title, sizeof title);
	if (!rc && A->plot)
		rc = cp_save_plot(A->plot, pl_plot(&p, title));
	if (!rc && A->json)
		cp_write_json(c, A, g, &p);
	else if (!rc)
		cp_text_table(c, A, g, &p, progress_elapsed_s(&P));
	pl_free(&p);
	return rc;
}

static int plan(int argc, char **argv, const struct sim_mpi *mp)
{
	struct pl_args A;
	struct gen_config g;
	int rc = parse(argc, argv, &A, &g);
	if (rc)
		return rc < 0 ? SIM_EXIT_OK : rc;
	if (A.serve && mp->size > 1)
		return cli_usage_error("plan", "--mode serve runs in one process, not as %d MPI ranks", mp->size);
	if (A.shard_n && mp->size > 1)
		return cli_usage_error("plan",
		                       "--shard %ld/%ld as one of %d MPI ranks: the ranks share the plan's replays "
		                       "themselves (use one or the other)",
		                       A.shard_i, A.shard_n, mp->size);
	for (int i = 1; A.shard_n && i < argc; i++)
		if (strchr(argv[i], '\n') || i > PL_MAX_ARGS)
			return cli_usage_error("plan",
			                       "--shard: a shard keeps the plan's arguments a line each (at most %d, "
			                       "without line breaks)",
			                       PL_MAX_ARGS);
	struct cli_common co = {.nsets = A.nsets};
	memcpy(co.sets, A.sets, sizeof co.sets);
	struct arch_chip *c = cli_load(A.config, &co, &rc);
	char rpn_why[512];
	if (c && A.sp.ranks_per_node && platform_ranks_per_node(c, (int)A.sp.ranks_per_node, rpn_why, sizeof rpn_why)) {
		arch_free(c);
		return cli_usage_error("plan", "--ranks-per-node: %s", rpn_why);
	}
	if (c) {
		const char *outs[2] = {A.csv, A.plot}, *ins[1] = {c->path};
		rc = out_check_inputs("plan", outs, 2, ins, 1);
		for (int k = 0; k < 2 && !rc;
		     k++) /* a path that cannot be written is found now, not after the search */
			if (outs[k] && out_probe(outs[k], 0)) {
				fprintf(stderr, "sim plan: cannot write %s: %s\n", outs[k], strerror(errno));
				rc = SIM_EXIT_CANTCREAT;
			}
	}
	rc = sim_mpi_agree(mp, rc); /* every rank alike before the replays' collectives */
	if (!rc)
		rc = A.serve ? cp_run_serve(c, &A, &g) : run_train(c, &A, &g, mp);
	if (!rc && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, "sim plan: cannot write output\n");
		rc = SIM_EXIT_CANTCREAT;
	}
	arch_free(c);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	struct sim_mpi mp;
	int rc = sim_mpi_start(&mp, "plan");
	if (!rc)
		rc = plan(argc, argv, &mp);
	sim_mpi_end(&mp);
	return rc;
}
