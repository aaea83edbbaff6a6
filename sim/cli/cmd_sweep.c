/*
 * cmd_sweep.c -- `sim sweep CONFIG (TRACE | --op 'OP' | --model 'MODEL ...')
 * --set key=v1,v2,... [--gen opt=v1,v2,...]... [-o results.csv]
 * [--plot out.svg [--metric M] [--x key]] [--jobs N] [--ranks-per-node N]`
 *
 * The cartesian grid of the listed config values: every point is the config
 * loaded with one value of each key as a --set override (arch_load), on
 * which the op is predicted (device model) or the trace replayed (SimGrid);
 * with --model, the trace is the one `sim gen` writes for the model with the
 * point's value of each --gen option (workloads/gen_args.c parses it).
 * SimGrid runs one simulation per process, so every point runs in a child
 * process (fork) that sends one fixed-size row up a pipe; up to --jobs run
 * at once. Rows come out in grid order (the last --set varies fastest), so
 * the CSV is the same bytes whatever the number of jobs.
 *
 * Errors: a key the config does not have fails up front (exit 78, before
 * anything runs); a value a point cannot take (out of range, wrong unit) is
 * that point's row with an error column; output files are opened up front
 * (exit 73) and renamed into place only when complete.
 */
#include "cli.h"
#include "csv.h"
#include "engine.h"
#include "gen.h"
#include "model.h"
#include "mpi_ranks.h"
#include "outfile.h"
#include "platform.h"
#include "plot.h"
#include "procpool.h"
#include "report.h"
#include "sweep_grid.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_sweep_help[] =
    "usage: sim sweep CONFIG (TRACE | --op 'OP' | --model 'MODEL [OPTIONS]')\n"
    "                 [--set key=v1,v2,...]... [--gen opt=v1,v2,...]...\n"
    "                 [-o FILE.csv] [--plot FILE.svg [--metric M] [--x key]] [--jobs N]\n"
    "                 [--shard I/N] [--ranks-per-node N]\n"
    "\n"
    "Runs the cartesian grid of the listed config values: each point is CONFIG\n"
    "with one value of every --set key applied as an override (values as the\n"
    "config takes them, with units: --set 'memory.device.bandwidth=2TB/s,3.35TB/s'),\n"
    "on which OP is predicted by the device model (as `sim op`) or TRACE is\n"
    "replayed (as `sim run`, one child process per point). A --set with one\n"
    "value is a fixed override (it still gets a column).\n"
    "\n"
    "With --model, each point replays the trace `sim gen MODEL [OPTIONS]` writes\n"
    "with the point's value of every --gen option (a `sim gen` option without\n"
    "its dashes: --gen tp=1,2,4 --gen recompute=none,full; a switch such as sp\n"
    "takes 0 or 1): workload layouts and hypothetical chips in one grid. A\n"
    "layout `sim gen` refuses (heads not divisible by tp) is that point's row\n"
    "with the error. A --gen column is named gen.OPTION (gen.tp).\n"
    "\n"
    "Prints CSV, one row per point in grid order (the last --set varies\n"
    "fastest): the values of the keys, then\n"
    "  time_s          the op's time or the step time\n"
    "  bound           op: what bounds it (matrix, dram, ...); trace: compute,\n"
    "                  comm or wait, the largest part of the critical path\n"
    "  tflops          achieved TFLOP/s (per device for a trace)\n"
    "  mfu             model FLOPs utilization: an op's FLOPs, or a trace's\n"
    "                  `workload` model FLOPs, over the peak (a trace without\n"
    "                  that line: empty)\n"
    "  hfu             executed FLOPs (recompute included) over the peak; an\n"
    "                  op's equals its mfu\n"
    "  tokens_per_s    trace with a `workload` line\n"
    "  peak_mem_bytes  trace with `memory` lines: the rank that needs most\n"
    "  fits            1 or 0 against the device memory (trace with `memory` lines)\n"
    "  error           why the point has no result (a value out of range, a\n"
    "                  rank that does not fit, a deadlock); empty otherwise\n"
    "Empty fields have no value for that kind of point.\n"
    "\n"
    "options:\n"
    "  --op 'OP'           the op to predict (as `sim op` reads it)\n"
    "  --set key=v1,v2     the values of a config key (repeatable, up to 16\n"
    "                      --set and --gen together)\n"
    "  --model 'MODEL ...' a `sim gen` command (without -o) whose trace each\n"
    "                      point replays\n"
    "  --gen opt=v1,v2     the values of a `sim gen` option (with --model)\n"
    "  -o FILE.csv         write the CSV to FILE (whole or not at all)\n"
    "  --plot FILE.svg     a line chart of --metric against --x, one line per\n"
    "                      combination of the other keys' values\n"
    "  --metric M          time (default), tflops, mfu or tokens_per_s\n"
    "  --x key             the swept key on the x axis (default: the first)\n"
    "  --jobs N            points run at once (default: the CPUs)\n"
    "  --ranks-per-node N  each replay places N ranks on a node, its other\n"
    "                      devices idle (as sim run --ranks-per-node); a point\n"
    "                      whose system cannot (N above its devices per node,\n"
    "                      a ring or torus) is a row with the error\n"
    "  --shard I/N         run only shard I of N (0 <= I < N): the points whose\n"
    "                      grid index is I modulo N, each row led by its index\n"
    "                      (column point) under a line naming the shard; `sim\n"
    "                      merge` joins the N shards' files into the CSV one\n"
    "                      process writes, byte for byte (not with --plot)\n"
    "\n"
    "As MPI ranks (`mpirun -n N sim sweep ...`, when sim was built with MPI:\n"
    "sim --version says so), rank r runs shard r/N on its --jobs processes and\n"
    "rank 0 gathers every row and writes the output (CSV, --plot) that one\n"
    "process writes, byte for byte; not with --shard.\n"
    "\n"
    "Progress (\"12/100 points\") goes to stderr: on a terminal after 1 s, in a\n"
    "log every 10 s (SIM_PROGRESS: see sim --help).\n"
    "\n"
    "exit codes: 0 ok (rows may carry errors), 2 usage (a malformed value\n"
    "list, --x not swept), 65 bad op or trace, 66 file missing, 73 cannot\n"
    "write output (or an output is the CONFIG or the TRACE), 78 bad config or\n"
    "a key the config does not have.\n"
    "\n"
    "examples:\n"
    "  sim sweep configs/h100.cfg --op 'gemm m=8192 n=8192 k=8192 dtype=bf16' --set compute.sm.count=66,132\n"
    "  sim sweep configs/h100.cfg traces/allreduce_8.trace --set links.nvlink.count=9,18 -o sweep.csv\n"
    "  sim sweep configs/h100.cfg --model 'llama3-8b --dp 8 --global-batch 64' --gen tp=1,2,4 --gen pp=1,2\n"
    "      --set memory.device.bandwidth=3.35TB/s,5TB/s\n";

#define SW_MAX_KEYS CLI_MAX_SETS

/* What a point's child sends up its pipe: fixed size, no pointers. */
struct sw_row {
	int rc;                                                  /* 0, or the exit code the point's error maps to */
	int fits;                                                /* 1, 0, or -1 when not known */
	double time_s, tflops, mfu, hfu, tokens_per_s, peak_mem; /* NaN = no value */
	char bound[16];
	char why[480];
};

enum sw_metric { M_TIME, M_TFLOPS, M_MFU, M_TOKENS };
static const char *const metric_names[] = {"time", "tflops", "mfu", "tokens_per_s"};
/* y-axis titles, with units: a trace's figures are per step and, for TFLOP/s, per device */
static const char *const metric_labels[] = {"time (s)", "TFLOP/s (per device)", "MFU (model FLOPs / peak, 0-1)",
                                            "tokens/s"};

struct sw_args {
	const char *config, *trace, *op, *out, *plot;
	const char *model;              /* --model: the `sim gen` command each point replays */
	char config_buf[PATH_MAX + 64]; /* the config's file when found by name (cli_config) */
	struct sw_key keys[SW_MAX_KEYS];
	int nkeys;
	int xkey; /* index into keys */
	const char *xname;
	enum sw_metric metric;
	int jobs;
	long shard_i, shard_n; /* --shard I/N; shard_n 0: every point */
	int ranks_per_node;    /* --ranks-per-node (0: the whole node) */
};

/* What every point shares, read-only in the children. */
struct sw_job {
	const struct sw_args *a;
	struct op op;
	const struct trace *t;
};

/* FNV-1a of the sweep's definition (config, workload, every key and value, in order): the shards of one sweep
   share it, so `sim merge` refuses shards of another that happens to have the same keys and number of points. */
static unsigned long long sweep_id(const struct sw_args *a)
{
	unsigned long long h = CLI_FNV_START;
	cli_fnv(&h, a->config);
	cli_fnv(&h, a->trace);
	cli_fnv(&h, a->op);
	cli_fnv(&h, a->model);
	char rpn[16];
	snprintf(rpn, sizeof rpn, "%d", a->ranks_per_node);
	cli_fnv(&h, rpn);
	for (int k = 0; k < a->nkeys; k++) {
		cli_fnv(&h, a->keys[k].key);
		for (int v = 0; v < a->keys[k].nvals; v++)
			cli_fnv(&h, a->keys[k].vals[v]);
	}
	return h;
}

/* The grid index of this run's k-th point (every point, or shard I of N's). */
static long grid_index(const struct sw_args *a, long k)
{
	return a->shard_n ? a->shard_i + k * a->shard_n : k;
}

/* "key=v1,v2" -> a key (a --gen option's key gets "gen." before it); returns 0 or a usage error. */
static int parse_set(const char *text, struct sw_key *k, int gen)
{
	char why[512];
	if (sw_key_parse(text, gen, k, why, sizeof why))
		return cli_usage_error("sweep", "%s", why);
	return 0;
}

static int parse_args(int argc, char **argv, struct sw_args *a)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	a->jobs = cpus > 0 ? (int)cpus : 1;
	const char *pos[2] = {NULL, NULL};
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--set") || !strcmp(s, "--op") || !strcmp(s, "-o") || !strcmp(s, "--plot") ||
		    !strcmp(s, "--metric") || !strcmp(s, "--x") || !strcmp(s, "--jobs") || !strcmp(s, "--model") ||
		    !strcmp(s, "--gen") || !strcmp(s, "--shard") || !strcmp(s, "--ranks-per-node")) {
			if (i + 1 >= argc)
				return cli_usage_error("sweep", "%s needs a value", s);
			const char *v = argv[++i];
			int rc = 0;
			if (!strcmp(s, "--set") || !strcmp(s, "--gen")) {
				if (a->nkeys == SW_MAX_KEYS)
					return cli_usage_error("sweep", "more than %d --set and --gen options",
					                       SW_MAX_KEYS);
				rc = parse_set(v, &a->keys[a->nkeys++], !strcmp(s, "--gen"));
			} else if (!strcmp(s, "--model")) {
				a->model = v;
			} else if (!strcmp(s, "--op")) {
				a->op = v;
			} else if (!strcmp(s, "-o")) {
				a->out = v;
			} else if (!strcmp(s, "--plot")) {
				a->plot = v;
			} else if (!strcmp(s, "--x")) {
				a->xname = v;
			} else if (!strcmp(s, "--shard")) {
				if (cli_parse_shard("sweep", v, SW_MAX_POINTS, &a->shard_i, &a->shard_n))
					return SIM_EXIT_USAGE;
			} else if (!strcmp(s, "--ranks-per-node")) {
				if (cli_parse_ranks_per_node("sweep", v, &a->ranks_per_node))
					return SIM_EXIT_USAGE;
			} else if (!strcmp(s, "--metric")) {
				int m = 0;
				while (m < 4 && strcmp(v, metric_names[m]))
					m++;
				if (m == 4)
					return cli_usage_error(
					    "sweep", "--metric %s: expected time, tflops, mfu or tokens_per_s", v);
				a->metric = (enum sw_metric)m;
			} else {
				char *end;
				errno = 0;
				long j = strtol(v, &end, 10);
				if (*end || errno || j < 1 || j > 256)
					return cli_usage_error("sweep", "--jobs %s: expected an integer from 1 to 256",
					                       v);
				a->jobs = (int)j;
			}
			if (rc)
				return rc;
			continue;
		}
		if (s[0] == '-' && s[1])
			return cli_unknown_option("sweep", cmd_sweep_help, s);
		if (npos == 2)
			return cli_usage_error("sweep", "unexpected argument '%s' (expected CONFIG and TRACE or --op)",
			                       s);
		pos[npos++] = s;
	}
	a->config = pos[0];
	a->trace = pos[1];
	if (!a->config)
		return cli_usage_error("sweep", "missing CONFIG");
	a->config = cli_config(a->config, a->config_buf, sizeof a->config_buf);
	if (!!a->trace + !!a->op + !!a->model != 1)
		return cli_usage_error("sweep", "expected a TRACE, --op 'OP' or --model 'MODEL ...' (one of them)");
	if (a->ranks_per_node && a->op)
		return cli_usage_error("sweep", "--ranks-per-node places a replay's ranks: not with --op");
	if (!a->nkeys)
		return cli_usage_error("sweep", "nothing to sweep: give --set key=v1,v2,... or --gen option=v1,v2,...");
	for (int k = 0; k < a->nkeys; k++) {
		const struct sw_key *g = &a->keys[k];
		if (!g->gen)
			continue;
		if (!a->model)
			return cli_usage_error("sweep", "--gen %s needs --model (the workload it changes)", g->key + 4);
		char name[96];
		snprintf(name, sizeof name, "--%s", g->key + 4);
		int kind = gen_flag_kind(name);
		if (kind < 0)
			return cli_usage_error("sweep", "--gen %s: sim gen has no option %s (see sim help gen)",
			                       g->key + 4, name);
		for (int v = 0; !kind && v < g->nvals; v++)
			if (strcmp(g->vals[v], "0") && strcmp(g->vals[v], "1"))
				return cli_usage_error("sweep", "--gen %s: a switch takes 0 or 1, not '%s'", g->key + 4,
				                       g->vals[v]);
	}
	a->xkey = 0;
	if (a->xname) {
		a->xkey = -1;
		for (int k = 0; k < a->nkeys; k++)
			if (!strcmp(a->keys[k].key, a->xname))
				a->xkey = k;
		if (a->xkey < 0)
			return cli_usage_error("sweep", "--x %s is not a swept key", a->xname);
	}
	if ((a->xname || a->metric) && !a->plot)
		return cli_usage_error("sweep", "--x and --metric need --plot");
	if (a->plot && a->shard_n)
		return cli_usage_error("sweep", "--plot needs every point: not with --shard (plot the merged CSV)");
	if (a->plot && a->metric == M_TOKENS && !a->trace && !a->model)
		return cli_usage_error("sweep", "--metric tokens_per_s needs a TRACE or --model");
	if (sw_grid_points(a->keys, a->nkeys) < 0)
		return cli_usage_error("sweep", "more than %d points", SW_MAX_POINTS);
	return 0;
}

static void free_args(struct sw_args *a)
{
	for (int k = 0; k < a->nkeys; k++)
		sw_key_free(&a->keys[k]);
}

/* Point i's value index for key k (the last key varies fastest). */
static int val_index(const struct sw_args *a, long i, int k)
{
	return sw_grid_value(a->keys, a->nkeys, i, k);
}

static long npoints(const struct sw_args *a)
{
	return sw_grid_points(a->keys, a->nkeys);
}

/* The base config, then each key alone: an error that is not about the value fails the sweep. */
static int check_keys(const struct sw_args *a, char *chip, size_t chiplen)
{
	struct arch_error err;
	struct arch_chip *c = arch_load(a->config, NULL, 0, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		return err.exit_code;
	}
	snprintf(chip, chiplen, "%s", c->name);
	arch_free(c);
	for (int k = 0; k < a->nkeys; k++) {
		if (a->keys[k].gen)
			continue;
		char set[512];
		snprintf(set, sizeof set, "%s=%s", a->keys[k].key, a->keys[k].vals[0]);
		const char *sets[1] = {set};
		if ((c = arch_load(a->config, sets, 1, &err))) {
			arch_free(c);
			continue;
		}
		size_t n = strlen(a->keys[k].key);
		if (!strncmp(err.msg, a->keys[k].key, n) && err.msg[n] == ':')
			continue; /* about this value: that point's row says so */
		if (!strcmp(err.file, "--set"))
			fprintf(stderr, "--set:%d: %s\n", k + 1, err.msg);
		else
			arch_error_print(&err, stderr);
		return err.exit_code;
	}
	return 0;
}

static void first_line(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%.*s", (int)strcspn(src, "\n"), src);
}

static void run_op(const struct sw_job *j, const struct arch_chip *c, struct sw_row *row)
{
	struct dm_result r;
	char why[512];
	if (dm_predict(c, &j->op, &r, NULL, why, sizeof why)) {
		row->rc = SIM_EXIT_TRACE;
		snprintf(row->why, sizeof row->why, "%s: %.400s", op_kind_name(j->op.kind), why);
		return;
	}
	row->time_s = r.time_s;
	row->tflops = r.tflops;
	row->mfu = row->hfu = r.peak_frac;
	snprintf(row->bound, sizeof row->bound, "%s", dm_bound_name(r.bound));
}

static void run_trace(const struct trace *t, const struct arch_chip *c, int ranks_per_node, struct sw_row *row)
{
	static char why[8192];
	struct rp_options o = {0, 1, 0, 0, 0, 0, 0, 0, 0};
	o.ranks_per_node = ranks_per_node;
	if (ranks_per_node && platform_ranks_per_node(c, ranks_per_node, why, sizeof why)) {
		row->rc = SIM_EXIT_USAGE;
		snprintf(row->why, sizeof row->why, "--ranks-per-node: %.440s", why);
		return;
	}
	struct rp_result r;
	memset(&r, 0, sizeof r);
	int rc = rp_run(c, t, &o, &r, why, sizeof why);
	if (rc) {
		row->rc = rc;
		if (rc == SIM_EXIT_NOFIT)
			row->fits = 0;
		first_line(row->why, sizeof row->why, why);
		return;
	}
	struct report rep;
	if (report_build(&rep, c, t, &r)) {
		row->rc = SIM_EXIT_INTERNAL;
		snprintf(row->why, sizeof row->why, "out of memory building the report");
		rp_result_free(&r);
		return;
	}
	row->time_s = r.time_s;
	row->tflops = rep.tflops_dev;
	row->mfu = rep.has_workload && rep.model_mfu > 0 ? rep.model_mfu : NAN;
	row->hfu = rep.hfu;
	if (rep.has_workload)
		row->tokens_per_s = rep.tokens_per_s;
	if (rep.mem_rank >= 0) {
		row->peak_mem = rep.mem_peak;
		row->fits = rep.mem_device <= 0 || rep.mem_peak <= rep.mem_device;
	}
	double comm = rep.crit_comm, wait = rep.crit_wait, comp = rep.crit_compute;
	snprintf(row->bound, sizeof row->bound, "%s",
	         comp >= comm && comp >= wait ? "compute"
	         : comm >= wait               ? "comm"
	                                      : "wait");
	report_free(&rep);
	rp_result_free(&r);
}

#define SW_MAX_ARGS 128

/* The `sim gen` config of --model with point i's value of each --gen option (i < 0: none of them). 0, or -1 with
   the command's message in why. */
static int gen_point(const struct sw_args *a, long i, struct gen_config *c, struct gen_args *ga, char *why, size_t len)
{
	char words[2048], names[SW_MAX_KEYS][96];
	char *argv[SW_MAX_ARGS];
	int argc = 0;
	argv[argc++] = "gen";
	if (strlen(a->model) >= sizeof words) {
		snprintf(why, len, "--model: longer than %zu characters", sizeof words - 1);
		return -1;
	}
	snprintf(words, sizeof words, "%s", a->model);
	char *save = NULL;
	for (char *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (argc >= SW_MAX_ARGS - 2 * SW_MAX_KEYS) {
			snprintf(why, len, "--model: more than %d words", SW_MAX_ARGS - 2 * SW_MAX_KEYS - 1);
			return -1;
		}
		argv[argc++] = w;
	}
	for (int k = 0; i >= 0 && k < a->nkeys; k++) {
		const struct sw_key *g = &a->keys[k];
		if (!g->gen)
			continue;
		snprintf(names[k], sizeof names[k], "--%s", g->key + 4);
		const char *v = g->vals[val_index(a, i, k)];
		if (gen_flag_kind(names[k])) {
			argv[argc++] = names[k];
			argv[argc++] = (char *)v;
		} else if (!strcmp(v, "1")) {
			argv[argc++] = names[k];
		}
	}
	argv[argc] = NULL;
	if (gen_parse_args(argc, argv, c, ga, why, len))
		return -1;
	if (ga->outpath) { /* the sweep replays the trace; it writes no file of it */
		snprintf(why, len, "-o %s: the model takes no output file", ga->outpath);
		return -1;
	}
	return 0;
}

/* Point i's trace: what `sim gen` writes for --model with the point's --gen values. NULL with row's error set. */
static struct trace *gen_trace_of(const struct sw_args *a, long i, struct sw_row *row)
{
	struct gen_config c;
	struct gen_args ga;
	char why[1024];
	if (gen_point(a, i, &c, &ga, why, sizeof why)) {
		row->rc = SIM_EXIT_USAGE;
		snprintf(row->why, sizeof row->why, "sim gen: %.460s", why);
		return NULL;
	}
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	int bad = !f || gen_write(f, &c, ga.cmdline);
	if (f && fclose(f))
		bad = 1;
	struct trace *t = bad ? NULL : tr_parse_string(text, "--model", why, sizeof why);
	free(text);
	if (!t) {
		row->rc = bad ? SIM_EXIT_INTERNAL : SIM_EXIT_TRACE;
		snprintf(row->why, sizeof row->why, "%.470s", bad ? "out of memory writing the trace" : why);
	}
	return t;
}

struct sw_pool {
	const struct sw_job *j;
	struct sw_row *rows;
	long n, done;
	struct progress prog;
};

/* In point i's child: load the config with the point's values, run. */
static void run_point(long job, void *ctx, void *out)
{
	const struct sw_job *j = ((const struct sw_pool *)ctx)->j;
	const struct sw_args *a = j->a;
	long i = grid_index(a, job);
	struct sw_row *row = out;
	row->fits = -1;
	row->time_s = row->tflops = row->mfu = row->hfu = row->tokens_per_s = row->peak_mem = NAN;
	char buf[SW_MAX_KEYS][512];
	const char *sets[SW_MAX_KEYS];
	int nsets = 0;
	for (int k = 0; k < a->nkeys; k++) {
		if (a->keys[k].gen)
			continue;
		snprintf(buf[nsets], sizeof buf[nsets], "%s=%s", a->keys[k].key, a->keys[k].vals[val_index(a, i, k)]);
		sets[nsets] = buf[nsets];
		nsets++;
	}
	struct arch_error err;
	struct arch_chip *c = arch_load(a->config, sets, nsets, &err);
	if (!c) {
		row->rc = err.exit_code;
		first_line(row->why, sizeof row->why, err.msg);
	} else if (a->model) {
		struct trace *t = gen_trace_of(a, i, row);
		if (t)
			run_trace(t, c, a->ranks_per_node, row);
		tr_free(t);
	} else if (j->t) {
		run_trace(j->t, c, a->ranks_per_node, row);
	} else {
		run_op(j, c, row);
	}
}

/* In the parent, when point i's child has ended. */
static void point_done(long i, void *ctx, int ok, int status, double wall_s)
{
	(void)wall_s;
	struct sw_pool *p = ctx;
	struct sw_row *r = &p->rows[i];
	if (!ok) {
		char d[160];
		pp_describe(status, d, sizeof d);
		r->rc = SIM_EXIT_INTERNAL;
		r->fits = -1;
		r->time_s = r->tflops = r->mfu = r->hfu = r->tokens_per_s = r->peak_mem = NAN;
		snprintf(r->why, sizeof r->why, "the point's process %s", d);
	}
	cli_progress_jobs(&p->prog, "points", ++p->done, p->n);
}

/* Runs every point, up to --jobs at once; rows[i] is point i's. */
static int run_all(const struct sw_job *j, long n, struct sw_row *rows)
{
	struct sw_pool p = {j, rows, n, 0, {0}};
	char why[1024];
	if (!j->a->op && rp_engine_load(why, sizeof why)) { /* once, inherited by every point's process */
		fprintf(stderr, "sim sweep: %s\n", why);
		return -1;
	}
	progress_start(&p.prog, "sweep");
	if (pp_run(n, j->a->jobs, sizeof *rows, rows, run_point, point_done, &p)) {
		fprintf(stderr, "sim sweep: cannot start a process: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.6g", v);
	else
		fputc(',', f);
}

static void write_csv(FILE *f, const struct sw_args *a, const struct sw_row *rows, long n)
{
	if (a->shard_n) /* sim merge reads this line and the point column (cmd_merge.c) */
		fprintf(f, "%s%ld/%ld of %ld points, sweep %016llx\npoint,", SWEEP_SHARD_LINE, a->shard_i, a->shard_n,
		        npoints(a), sweep_id(a));
	for (int k = 0; k < a->nkeys; k++) {
		csv_put_field(f, a->keys[k].key, 0);
		fputc(',', f);
	}
	fputs("time_s,bound,tflops,mfu,hfu,tokens_per_s,peak_mem_bytes,fits,error\n", f);
	for (long j = 0; j < n; j++) {
		const struct sw_row *r = &rows[j];
		long i = grid_index(a, j);
		if (a->shard_n)
			fprintf(f, "%ld,", i);
		for (int k = 0; k < a->nkeys; k++) {
			csv_put_field(f, a->keys[k].vals[val_index(a, i, k)], 0);
			fputc(',', f);
		}
		if (isfinite(r->time_s))
			fprintf(f, "%.6g", r->time_s);
		fputc(',', f);
		csv_put_field(f, r->bound, 0);
		csv_num(f, r->tflops);
		csv_num(f, r->mfu);
		csv_num(f, r->hfu);
		csv_num(f, r->tokens_per_s);
		csv_num(f, r->peak_mem);
		fputc(',', f);
		if (r->fits >= 0)
			fprintf(f, "%d", r->fits);
		fputc(',', f);
		csv_put_field(f, r->why, 0);
		fputc('\n', f);
	}
}

static double metric(const struct sw_row *r, enum sw_metric m)
{
	if (r->rc)
		return NAN;
	switch (m) {
	case M_TIME: return r->time_s;
	case M_TFLOPS: return r->tflops;
	case M_MFU: return r->mfu;
	default: return r->tokens_per_s;
	}
}

/* The x values as numbers when every value parses as the same kind of quantity: returns that unit kind; otherwise
   -1, and x = 1, 2, ... */
static int x_numbers(const struct sw_key *k, double *x)
{
	char why[256];
	for (int kind = 0; kind < UNIT_KIND_COUNT; kind++) {
		int ok = 1;
		for (int v = 0; v < k->nvals && ok; v++)
			ok = !units_parse(k->vals[v], (enum unit_kind)kind, &x[v], why, sizeof why) && isfinite(x[v]);
		if (ok)
			return kind;
	}
	for (int v = 0; v < k->nvals; v++)
		x[v] = v + 1;
	return -1;
}

/* One line per combination of the other keys: the points that share it, in x order. */
static int plot_lines(struct plot *p, const struct sw_args *a, const struct sw_row *rows, long n, const double *xv,
                      double *ylo, double *yhi)
{
	const struct sw_key *xk = &a->keys[a->xkey];
	double *xs = malloc((size_t)xk->nvals * sizeof *xs), *ys = malloc((size_t)xk->nvals * sizeof *ys);
	int bad = !xs || !ys, line = 0;
	*ylo = INFINITY;
	*yhi = -INFINITY;
	for (long i = 0; i < n && !bad; i++) {
		if (val_index(a, i, a->xkey))
			continue; /* each line starts at the point with the first x value */
		long stride = 1;
		for (int m = a->nkeys - 1; m > a->xkey; m--)
			stride *= a->keys[m].nvals;
		for (int v = 0; v < xk->nvals; v++) {
			xs[v] = xv[v];
			ys[v] = metric(&rows[i + v * stride], a->metric);
			if (isfinite(ys[v])) {
				*ylo = ys[v] < *ylo ? ys[v] : *ylo;
				*yhi = ys[v] > *yhi ? ys[v] : *yhi;
			}
		}
		char leg[256] = "";
		size_t used = 0;
		for (int k = 0; k < a->nkeys && used < sizeof leg; k++)
			if (k != a->xkey && a->keys[k].nvals > 1)
				used += (size_t)snprintf(leg + used, sizeof leg - used, "%s%s=%s", used ? ", " : "",
				                         a->keys[k].key, a->keys[k].vals[val_index(a, i, k)]);
		bad |= plot_line(p, xs, ys, xk->nvals, line, PLOT_SOLID, used ? leg : NULL);
		for (int v = 0; v < xk->nvals && !bad; v++)
			if (isfinite(ys[v]))
				bad |= plot_point(p, xs[v], ys[v], 3, line, NULL);
		line++;
	}
	free(xs);
	free(ys);
	return bad;
}

static int write_plot(FILE *f, const struct sw_args *a, const char *chip, const struct sw_row *rows, long n)
{
	const struct sw_key *xk = &a->keys[a->xkey];
	char title[512];
	snprintf(title, sizeof title, "%s on %s: %s",
	         a->trace ? a->trace
	         : a->op  ? a->op
	                  : a->model,
	         chip, metric_labels[a->metric]);
	struct plot *p = plot_new(1100, 600, title);
	double *xv = malloc((size_t)xk->nvals * sizeof *xv);
	if (!p || !xv) {
		free(xv);
		plot_free(p);
		return -1;
	}
	int xkind = x_numbers(xk, xv), numeric = xkind >= 0;
	char xlabel[160]; /* the key, and the unit its values were read in: "memory.device.bandwidth (B/s)" */
	if (numeric && *units_symbol((enum unit_kind)xkind))
		snprintf(xlabel, sizeof xlabel, "%s (%s)", xk->key, units_symbol((enum unit_kind)xkind));
	else
		snprintf(xlabel, sizeof xlabel, "%s%s", xk->key, numeric ? "" : " (numbered: see the legend)");
	double xlo = xv[0], xhi = xv[0], ylo, yhi;
	for (int v = 1; v < xk->nvals; v++) {
		xlo = xv[v] < xlo ? xv[v] : xlo;
		xhi = xv[v] > xhi ? xv[v] : xhi;
	}
	int xlog = numeric && xlo > 0 && xhi >= 100 * xlo;
	int bad = plot_lines(p, a, rows, n, xv, &ylo, &yhi);
	if (!numeric) {
		char note[512];
		size_t used = (size_t)snprintf(note, sizeof note, "x: ");
		for (int v = 0; v < xk->nvals && used < sizeof note; v++)
			used += (size_t)snprintf(note + used, sizeof note - used, "%s%d=%s", v ? ", " : "", v + 1,
			                         xk->vals[v]);
		bad |= plot_note(p, note);
	}
	if (!isfinite(ylo)) {
		ylo = 0;
		yhi = 1;
	}
	double pad = (xhi - xlo) * 0.05;
	if (xlog)
		plot_axis(p, 0, xlo / 1.2, xhi * 1.2, 1, xlabel);
	else
		plot_axis(p, 0, pad > 0 ? xlo - pad : xlo - 1, pad > 0 ? xhi + pad : xhi + 1, 0, xlabel);
	plot_axis(p, 1, ylo >= 0 ? 0 : ylo * 1.1, yhi > 0 ? yhi * 1.1 : 1, 0, metric_labels[a->metric]);
	if (!bad)
		bad = plot_write(p, f);
	free(xv);
	plot_free(p);
	return bad;
}

/* An output file opened up front (sim/base/outfile.c), committed when complete. */
static int open_out(struct out_file *o, const char *path)
{
	char why[256];
	if (!out_open(path, o, why, sizeof why)) {
		fprintf(stderr, "sim sweep: cannot write %s: %s\n", path, why);
		return SIM_EXIT_CANTCREAT;
	}
	return 0;
}

static int close_out(struct out_file *o, int keep)
{
	char why[256];
	if (!keep) {
		out_abort(o);
		return 0;
	}
	if (o->f && out_commit(o, why, sizeof why)) {
		fprintf(stderr, "sim sweep: cannot write %s: %s\n", o->path, why);
		return SIM_EXIT_CANTCREAT;
	}
	return 0;
}

/* Under MPI (mpi_ranks.h): every rank ran the points of its shard (rank r of N: r, r+N, ...); rank 0 gathers the
   rows and puts them in grid order into *all (n points). Returns 0, or an exit code. */
static int gather_rows(const struct sim_mpi *mp, const struct sw_args *a, const struct sw_row *mine,
                       struct sw_row **all)
{
	long P = npoints(a);
	*all = mp->rank == 0 ? calloc((size_t)(P ? P : 1), sizeof **all) : NULL;
	int code = mp->rank == 0 && !*all ? SIM_EXIT_INTERNAL : 0;
	if (code)
		fprintf(stderr, "sim sweep: out of memory\n");
	code = sim_mpi_agree(mp, code);
	if (!code)
		code = sim_mpi_gather_dealt(mp, mine, P, sizeof *mine, *all, "sweep");
	if (code) {
		free(*all);
		*all = NULL;
	}
	return code;
}

/* What a sweep checks and opens before it runs a point: the op, trace or model, the keys, the outputs (rank 0's).
   Returns 0, or an exit code with its line on stderr; *tp is the trace (the caller frees it). */
static int prepare(struct sw_args *a, struct out_file *csv, struct out_file *svg, const struct sim_mpi *mp,
                   struct sw_job *j, struct trace **tp, char *chip, size_t chiplen)
{
	char why[4096];
	int code = 0;
	if (a->op && op_parse(a->op, NULL, &j->op, why, sizeof why)) {
		fprintf(stderr, "sim sweep: %s\n", why);
		return SIM_EXIT_TRACE;
	}
	if (a->trace && !(*tp = tr_load(a->trace, 0, &code, why, sizeof why))) {
		fprintf(stderr, "%s\n", why);
		return code;
	}
	j->t = *tp;
	if (a->model) { /* the model must parse: with the first point's --gen values, or without them */
		struct gen_config gc;
		struct gen_args ga;
		char why2[1024];
		if (gen_point(a, 0, &gc, &ga, why, sizeof why) && gen_point(a, -1, &gc, &ga, why2, sizeof why2))
			return cli_usage_error("sweep", "--model '%s': %s", a->model, why);
	}
	if (a->plot && a->metric == M_TOKENS && *tp && !tr_workload(*tp))
		return cli_usage_error("sweep", "--metric tokens_per_s: %s has no workload line", a->trace);
	if (mp->size > 1 && a->shard_n)
		return cli_usage_error("sweep",
		                       "--shard %ld/%ld as one of %d MPI ranks: the ranks are the shards (use "
		                       "one or the other)",
		                       a->shard_i, a->shard_n, mp->size);
	if (mp->size > 1) /* rank r of N runs the points of shard r/N; rank 0 writes */
		a->shard_i = mp->rank, a->shard_n = mp->size;
	int writer = mp->rank == 0;
	if ((code = check_keys(a, chip, chiplen)) || (writer && a->out && (code = open_out(csv, a->out))) ||
	    (writer && a->plot && (code = open_out(svg, a->plot))))
		return code;
	return 0;
}

/* code0: what the caller's checks gave. Under MPI every rank reaches the same collectives: the checks' codes
   are agreed on (the largest) before any point runs, and again after the points. */
static int sweep(struct sw_args *a, struct out_file *csv, struct out_file *svg, const struct sim_mpi *mp, int code0)
{
	struct sw_job j = {a, {0}, NULL};
	char chip[ARCH_NAME_MAX];
	struct trace *t = NULL;
	int code = sim_mpi_agree(mp, code0 ? code0 : prepare(a, csv, svg, mp, &j, &t, chip, sizeof chip));
	int writer = mp->rank == 0;
	if (code) {
		tr_free(t);
		return code;
	}
	long n = npoints(a);
	if (a->shard_n) /* the points I, I+N, ... below n */
		n = sim_share(n, a->shard_i, a->shard_n);
	struct sw_row *rows = calloc((size_t)(n ? n : 1), sizeof *rows);
	code = !rows || run_all(&j, n, rows) ? SIM_EXIT_INTERNAL : 0;
	if (!rows)
		fprintf(stderr, "sim sweep: out of memory\n");
	if (mp->size > 1 && !(code = sim_mpi_agree(mp, code))) {
		struct sw_row *all;
		code = gather_rows(mp, a, rows, &all);
		free(rows);
		rows = all;
		n = npoints(a);
		a->shard_n = 0; /* rank 0 writes every point, as one process would */
	}
	if (code || !writer) {
		free(rows);
		tr_free(t);
		return code;
	}
	write_csv(csv->f ? csv->f : stdout, a, rows, n);
	if (svg->f && write_plot(svg->f, a, chip, rows, n)) {
		fprintf(stderr, "sim sweep: cannot write %s: %s\n", a->plot, strerror(errno ? errno : EIO));
		code = SIM_EXIT_CANTCREAT;
	}
	free(rows);
	tr_free(t);
	return code;
}

int cmd_sweep(int argc, char **argv)
{
	static struct sw_args a;
	memset(&a, 0, sizeof a);
	struct out_file csv = {0}, svg = {0};
	struct sim_mpi mp;
	int code = sim_mpi_start(&mp, "sweep");
	if (!code)
		code = parse_args(argc, argv, &a); /* the same arguments: every rank alike */
	const char *outs[2] = {a.out, a.plot}, *ins[2] = {a.config, a.trace};
	if (!code)
		code = sweep(&a, &csv, &svg, &mp, out_check_inputs("sweep", outs, 2, ins, 2));
	int c1 = close_out(&csv, !code), c2 = close_out(&svg, !code);
	if (!code)
		code = c1 ? c1 : c2;
	free_args(&a);
	if (!code && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, "sim sweep: cannot write output\n");
		code = SIM_EXIT_CANTCREAT;
	}
	sim_mpi_end(&mp);
	return code;
}
