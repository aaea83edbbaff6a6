/*
 * cmd_compare.c -- `sim compare A.cfg B.cfg [C.cfg ...] (TRACE | --op 'OP')
 * [--json] [--csv FILE] [--markdown] [--years N] [--usd-per-kwh X] [--ranks-per-node N] [--set ...]`
 *
 * Side by side, one column per config: how long the op or the trace's step
 * takes and what bounds it, then energy, cost per hour and performance per
 * watt and per dollar (sim/report/cost.h), each with its ratio to the first column.
 *
 * An op is predicted in this process with the device model. A trace is
 * replayed once per config, and SimGrid runs one simulation per process:
 * each replay runs in a forked child (up to one per CPU at a time) that
 * sends its figures back through a pipe. Columns keep the argument order, so
 * the output does not depend on which child finishes first.
 */
#include "cli.h"
#include "cost.h"
#include "engine.h"
#include "json.h"
#include "model.h"
#include "outfile.h"
#include "platform.h"
#include "procpool.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_compare_help[] =
    "usage: sim compare A.cfg [B.cfg ...] (TRACE | --op 'OP') [--json] [--csv FILE]\n"
    "                   [--markdown] [--years N] [--usd-per-kwh X] [--ranks-per-node N]\n"
    "                   [--set path=value]...\n"
    "\n"
    "Compares chips side by side, one column per config, with the ratio of each\n"
    "figure to the first column's (x1.50: one and a half times the first).\n"
    "\n"
    "With --op: the op on one device of each chip (as `sim op`): time,\n"
    "TFLOP/s, share of the peak, what bounds it. With a TRACE: the trace\n"
    "replayed on each chip's system (as `sim run`): step time, TFLOP/s per\n"
    "device, HFU (executed FLOPs over the peak); with the trace's workload line\n"
    "tokens/s, MFU (model FLOPs over the peak) and, for inference, time per\n"
    "output token; with its memory lines the peak device memory and\n"
    "whether it fits (a step that does not fit is still timed, and marked).\n"
    "\n"
    "Then for each: TDP and price, energy at TDP and from activity (static\n"
    "power plus matrix MAC energy, where the config has matrix.pj_per_mac),\n"
    "dollars per device-hour (price amortized over --years running 24/7, plus\n"
    "electricity at TDP), cost of the run, TFLOP/s and tokens/s per watt of\n"
    "TDP and per $/h. A chip without a published TDP or price shows\n"
    "'unpublished', and what depends on it 'unknown'.\n"
    "\n"
    "options:\n"
    "  --op 'OP'           compare one op (the vocabulary of `sim op`)\n"
    "  --json              one object: parameters and a column per config\n"
    "                      (null where unknown), with ratios to the first\n"
    "  --csv FILE          one row per config into FILE (empty where unknown)\n"
    "  --markdown          a Markdown table, one row per config\n"
    "  --years N           amortization period of the price (default 4)\n"
    "  --ranks-per-node N  (with a TRACE) place N ranks on each node of every\n"
    "                      chip's system, its other devices idle (as sim run\n"
    "                      --ranks-per-node; every config must allow it)\n"
    "  --usd-per-kwh X     price of electricity (default 0.08, EIA 2023 US\n"
    "                      industrial average)\n"
    "  --set path=value    override a parameter of every config (repeatable)\n"
    "\n"
    "exit codes: 0 ok, 2 usage, 65 bad op or trace (or a chip without a unit\n"
    "for the op's dtype, or a system too small for the trace), 66 file missing,\n"
    "70 a replay's process failed, 73 cannot write output (or the CSV is one of\n"
    "the inputs), 78 bad config.\n"
    "\n"
    "examples:\n"
    "  sim compare configs/h100.cfg configs/a100.cfg --op 'gemm m=8192 n=8192 k=8192 dtype=bf16'\n"
    "  sim compare configs/h100.cfg configs/mi300x.cfg traces/allreduce_8.trace\n"
    "  sim compare configs/h100.cfg configs/a100.cfg traces/llama3_8b_train.trace --json\n";

#define CMP_MAX 64

/* What a figure is, how it prints, and where it applies. */
enum fmt { F_TIME, F_NUM, F_PCT, F_GIB, F_W, F_USD, F_J, F_INT };
enum { A_OP = 1, A_TRACE = 2, A_WORK = 4, A_INFER = 8, A_MEM = 16, A_MD = 32, A_FLOPS = 64 };

enum metric {
	M_DEVICES,
	M_TIME,
	M_TFLOPS,
	M_PEAKFRAC,
	M_HFU,
	M_TOKENS,
	M_MFU,
	M_TPOT,
	M_MEM_PEAK,
	M_MEM_DEV,
	M_TDP,
	M_PRICE,
	M_E_TDP,
	M_E_ACT,
	M_J_TOKEN,
	M_USD_H,
	M_USD_RUN,
	M_USD_MTOK,
	M_TFLOPS_W,
	M_TOKENS_W,
	M_TFLOPS_USD,
	M_TOKENS_USD,
	M_COUNT
};

static const struct metric_def {
	const char *key;   /* JSON and CSV */
	const char *label; /* text and Markdown */
	enum fmt fmt;
	int where; /* A_OP / A_TRACE: the modes; A_WORK, A_INFER, A_MEM: the trace lines it needs */
} metrics[M_COUNT] = {
    [M_DEVICES] = {"devices", "devices", F_INT, A_TRACE},
    [M_TIME] = {"time_s", "time", F_TIME, A_OP | A_TRACE | A_MD},
    [M_TFLOPS] = {"tflops_per_device", "TFLOP/s per device", F_NUM, A_OP | A_TRACE | A_FLOPS | A_MD},
    [M_PEAKFRAC] = {"peak_fraction", "share of peak", F_PCT, A_OP | A_FLOPS},
    [M_HFU] = {"hfu", "HFU (executed FLOPs)", F_PCT, A_TRACE | A_FLOPS},
    [M_TOKENS] = {"tokens_per_s", "tokens/s", F_NUM, A_TRACE | A_WORK | A_MD},
    [M_MFU] = {"mfu", "MFU (model FLOPs)", F_PCT, A_TRACE | A_WORK | A_MD},
    [M_TPOT] = {"tpot_s", "time per output token", F_TIME, A_TRACE | A_INFER | A_MD},
    [M_MEM_PEAK] = {"memory_peak_bytes", "peak memory per device", F_GIB, A_TRACE | A_MEM | A_MD},
    [M_MEM_DEV] = {"memory_device_bytes", "device memory", F_GIB, A_TRACE | A_MEM},
    [M_TDP] = {"tdp_w", "TDP", F_W, A_OP | A_TRACE | A_MD},
    [M_PRICE] = {"price_usd", "price", F_USD, A_OP | A_TRACE | A_MD},
    [M_E_TDP] = {"energy_tdp_j", "energy at TDP", F_J, A_OP | A_TRACE},
    [M_E_ACT] = {"energy_activity_j", "energy from activity", F_J, A_OP | A_TRACE},
    [M_J_TOKEN] = {"j_per_token", "J per token (at TDP)", F_NUM, A_TRACE | A_WORK | A_MD},
    [M_USD_H] = {"usd_per_device_hour", "$ per device-hour", F_USD, A_OP | A_TRACE | A_MD},
    [M_USD_RUN] = {"usd_per_run", "$ per run", F_USD, A_OP | A_TRACE},
    [M_USD_MTOK] = {"usd_per_mtoken", "$ per million tokens", F_USD, A_TRACE | A_WORK | A_MD},
    [M_TFLOPS_W] = {"tflops_per_w", "TFLOP/s per W", F_NUM, A_OP | A_TRACE | A_FLOPS | A_MD},
    [M_TOKENS_W] = {"tokens_per_s_per_w", "tokens/s per W", F_NUM, A_TRACE | A_WORK | A_MD},
    [M_TFLOPS_USD] = {"tflops_per_usd_h", "TFLOP/s per $/h", F_NUM, A_OP | A_TRACE | A_FLOPS | A_MD},
    [M_TOKENS_USD] = {"tokens_per_s_per_usd_h", "tokens/s per $/h", F_NUM, A_TRACE | A_WORK | A_MD},
};

/* What one replay sends back from its child (a plain struct, one write). */
struct cmp_run {
	int rc;
	char why[1536];
	int ranks;
	int dtype; /* dominant dtype, -1 = none */
	int has_work, infer;
	double time_s, flops, tflops_dev, hfu, tokens_s, mfu, tpot_s;
	int mem_rank; /* -1 = no memory lines */
	double mem_peak;
};

struct column {
	const char *path;
	struct arch_chip *chip;
	double v[M_COUNT]; /* NaN = unknown */
	char bound[16];    /* op: what bounds it */
	int fits;          /* trace with memory lines: 1 fits, 0 not */
	int dtype, devices;
	double flops; /* all devices */
};

struct compare {
	struct column col[CMP_MAX];
	int n;
	int trace_mode, has_work, infer, has_mem, has_flops;
	char what[512]; /* the canonical op or the trace path */
	struct cost_params cp;
	int ranks_per_node; /* --ranks-per-node (0: whole nodes) */
};

/* Energy, cost and per-watt / per-dollar figures from the performance ones. */
static void derive(struct column *k, const struct cost_params *cp)
{
	const struct arch_chip *c = k->chip;
	double *v = k->v;
	double t = v[M_TIME], tdp = c->tdp_w > 0 ? c->tdp_w : COST_UNKNOWN;
	v[M_TDP] = tdp;
	v[M_PRICE] = c->price_usd > 0 ? c->price_usd : COST_UNKNOWN;
	v[M_E_TDP] = cost_energy_tdp_j(c->tdp_w, t, k->devices);
	v[M_E_ACT] = cost_energy_activity_j(c->tdp_w, c->model.static_power, cost_mac_pj(c, k->dtype),
	                                    cost_mac_scale(k->dtype), k->flops, t, k->devices);
	v[M_USD_H] = cost_usd_per_hour(c->price_usd, c->tdp_w, cp);
	v[M_USD_RUN] = cost_usd_of_run(v[M_USD_H], k->devices, t);
	v[M_TFLOPS_W] = cost_div(v[M_TFLOPS], tdp);
	v[M_TFLOPS_USD] = cost_div(v[M_TFLOPS], v[M_USD_H]);
	double tok_dev = cost_div(v[M_TOKENS], k->devices);
	v[M_J_TOKEN] = cost_div(v[M_E_TDP], v[M_TOKENS] * t);
	v[M_TOKENS_W] = cost_div(tok_dev, tdp);
	v[M_TOKENS_USD] = cost_div(tok_dev, v[M_USD_H]);
	v[M_USD_MTOK] = cost_div(v[M_USD_RUN] * 1e6, v[M_TOKENS] * t);
}

static int predict_op(struct compare *cm, const struct op *op)
{
	for (int i = 0; i < cm->n; i++) {
		struct column *k = &cm->col[i];
		struct dm_result r;
		char why[512];
		if (dm_predict(k->chip, op, &r, NULL, why, sizeof why)) {
			fprintf(stderr, "sim compare: %s: %s: %s\n", k->path, op_kind_name(op->kind), why);
			return SIM_EXIT_TRACE;
		}
		k->devices = 1;
		k->dtype = op->dtype;
		k->flops = r.flops;
		cm->has_flops |= r.flops > 0;
		k->v[M_DEVICES] = 1;
		k->v[M_TIME] = r.time_s;
		k->v[M_TFLOPS] = r.flops > 0 ? r.tflops : COST_UNKNOWN;
		k->v[M_PEAKFRAC] = r.flops > 0 ? r.peak_frac : COST_UNKNOWN;
		snprintf(k->bound, sizeof k->bound, "%s", dm_bound_name(r.bound));
	}
	return 0;
}

struct cmp_batch {
	struct compare *cm;
	const struct trace *t;
	struct cmp_run *res;
	struct progress prog;
	long done;
};

/* In column i's child: replay with the memory check off (the parent says
   whether the peak fits) and keep the report's figures. */
static void replay_one(long i, void *ctx, void *out)
{
	const struct cmp_batch *b = ctx;
	struct arch_chip *c = b->cm->col[i].chip;
	struct cmp_run *res = out;
	c->dram.size_bytes = 0; /* no capacity: rp_run times a step that does not fit */
	struct rp_options o = {0, 1, 0, 0, 0, 0, 0, 0, 0};
	o.ranks_per_node = b->cm->ranks_per_node;
	struct rp_result r;
	memset(&r, 0, sizeof r);
	res->rc = rp_run(c, b->t, &o, &r, res->why, sizeof res->why);
	if (res->rc)
		return;
	struct report rep;
	if (report_build(&rep, c, b->t, &r)) {
		res->rc = SIM_EXIT_INTERNAL;
		snprintf(res->why, sizeof res->why, "sim compare: out of memory building the report");
	} else {
		res->ranks = r.ranks;
		res->dtype = r.dtype;
		res->time_s = r.time_s;
		res->flops = rep.flops;
		res->tflops_dev = rep.tflops_dev;
		res->hfu = rep.hfu;
		res->has_work = rep.has_workload;
		res->infer = rep.tpot_s > 0;
		res->tokens_s = rep.tokens_per_s;
		res->mfu = rep.model_mfu;
		res->tpot_s = rep.tpot_s;
		res->mem_rank = rep.mem_rank;
		res->mem_peak = rep.mem_peak;
		report_free(&rep);
	}
	rp_result_free(&r);
}

static void replayed(long i, void *ctx, int ok, int status, double wall_s)
{
	(void)wall_s;
	struct cmp_batch *b = ctx;
	struct cmp_run *r = &b->res[i];
	cli_progress_jobs(&b->prog, "chips replayed", ++b->done, b->cm->n);
	if (ok)
		return;
	char d[160];
	pp_describe(status, d, sizeof d);
	r->rc = SIM_EXIT_INTERNAL;
	snprintf(r->why, sizeof r->why, "sim compare: the replay's process %s", d);
}

static int run_trace(struct compare *cm, const struct trace *t)
{
	struct cmp_run *res = calloc((size_t)cm->n, sizeof *res);
	if (!res) {
		fprintf(stderr, "sim compare: out of memory\n");
		return SIM_EXIT_INTERNAL;
	}
	struct cmp_batch b = {.cm = cm, .t = t, .res = res};
	char why[1024];
	if (rp_engine_load(why, sizeof why)) { /* once, inherited by every replay's process */
		fprintf(stderr, "sim compare: %s\n", why);
		free(res);
		return SIM_EXIT_INTERNAL;
	}
	progress_start(&b.prog, "compare");
	if (pp_run(cm->n, pp_cpus(), sizeof *res, res, replay_one, replayed, &b)) {
		fprintf(stderr, "sim compare: cannot start a process: %s\n", strerror(errno));
		free(res);
		return SIM_EXIT_INTERNAL;
	}
	int rc = 0;
	for (int i = 0; i < cm->n && !rc; i++) {
		const struct cmp_run *r = &res[i];
		if (r->rc) {
			fprintf(stderr, "%s\n", r->why);
			rc = r->rc;
			break;
		}
		struct column *k = &cm->col[i];
		k->devices = r->ranks;
		k->dtype = r->dtype;
		k->flops = r->flops;
		double *v = k->v;
		v[M_DEVICES] = r->ranks;
		v[M_TIME] = r->time_s;
		v[M_TFLOPS] = r->flops > 0 ? r->tflops_dev : COST_UNKNOWN;
		v[M_HFU] = r->flops > 0 && r->hfu > 0 ? r->hfu : COST_UNKNOWN;
		v[M_TOKENS] = r->has_work && r->tokens_s > 0 ? r->tokens_s : COST_UNKNOWN;
		v[M_MFU] = r->has_work && r->mfu > 0 ? r->mfu : COST_UNKNOWN;
		v[M_TPOT] = r->tpot_s > 0 ? r->tpot_s : COST_UNKNOWN;
		v[M_MEM_PEAK] = r->mem_rank >= 0 ? r->mem_peak : COST_UNKNOWN;
		v[M_MEM_DEV] = k->chip->dram.size_bytes > 0 ? k->chip->dram.size_bytes : COST_UNKNOWN;
		k->fits = r->mem_rank < 0 || k->chip->dram.size_bytes <= 0 || r->mem_peak <= k->chip->dram.size_bytes;
		cm->has_work |= r->has_work;
		cm->infer |= r->infer;
		cm->has_mem |= r->mem_rank >= 0;
		cm->has_flops |= r->flops > 0;
	}
	free(res);
	return rc;
}

static int shown(const struct compare *cm, int m)
{
	int w = metrics[m].where;
	if (!(w & (cm->trace_mode ? A_TRACE : A_OP)))
		return 0;
	if ((w & A_WORK) && !cm->has_work)
		return 0;
	if ((w & A_INFER) && !cm->infer)
		return 0;
	if ((w & A_MEM) && !cm->has_mem)
		return 0;
	if ((w & A_FLOPS) && !cm->has_flops)
		return 0;
	return 1;
}

static void fmt_value(int m, double v, char *buf, size_t len)
{
	if (!cost_known(v)) {
		snprintf(buf, len, "%s", m == M_TDP || m == M_PRICE ? "unpublished" : "unknown");
		return;
	}
	switch (metrics[m].fmt) {
	case F_TIME: report_tfmt(v, buf, len); break;
	case F_PCT: snprintf(buf, len, "%.1f%%", 100 * v); break;
	case F_GIB: snprintf(buf, len, "%.1f GiB", v / 1073741824.0); break;
	case F_W: snprintf(buf, len, "%.0f W", v); break;
	case F_USD: {
		char n[40];
		report_nfmt(v, n, sizeof n); /* "$0.00000004484" rather than $4.484e-08 */
		if (v >= 1e3)                /* whole dollars: $1600, $25000 */
			snprintf(buf, len, "$%.0f", v);
		else
			snprintf(buf, len, "$%s", n);
		break;
	}
	case F_J: {
		char n[40];
		report_nfmt(v, n, sizeof n); /* "146.8 k" + "J"; "0.1468" + " J" */
		snprintf(buf, len, "%s%sJ", n, n[strlen(n) - 1] >= 'A' ? "" : " ");
		break;
	}
	case F_INT: snprintf(buf, len, "%.0f", v); break;
	default: report_nfmt(v, buf, len); break;
	}
}

static double ratio(const struct compare *cm, int i, int m)
{
	return cost_div(cm->col[i].v[m], cm->col[0].v[m]);
}

#define LABEL_W 26

static void cell(char *buf, size_t len, const struct compare *cm, int i, int m)
{
	char val[48];
	fmt_value(m, cm->col[i].v[m], val, sizeof val);
	double q = ratio(cm, i, m);
	if (i > 0 && cost_known(q) && metrics[m].fmt != F_INT)
		snprintf(buf, len, "%s x%.2f", val, q);
	else
		snprintf(buf, len, "%s", val);
}

/* A cell padded to its column, except the last one of a line. */
static void put(FILE *f, const struct compare *cm, int i, int w, const char *s)
{
	fprintf(f, "  %-*s", i + 1 < cm->n ? w : 0, s);
}

static void print_text(const struct compare *cm, FILE *f)
{
	if (cm->trace_mode)
		fprintf(f, "compare %s on %d chips (replayed on each chip's system)\n", cm->what, cm->n);
	else
		fprintf(f, "compare '%s' on %d chips (one device each)\n", cm->what, cm->n);
	fprintf(f, "cost: price amortized over %.4g years running 24/7 + electricity at %.4g USD/kWh at TDP;\n",
	        cm->cp.years, cm->cp.usd_per_kwh);
	fprintf(f, "xN: ratio to the first column\n\n");
	/* column widths: the widest cell of each */
	int w[CMP_MAX];
	for (int i = 0; i < cm->n; i++) {
		w[i] = (int)strlen(cm->col[i].chip->name);
		int pl = (int)strlen(cm->col[i].path);
		if (pl > w[i])
			w[i] = pl;
		for (int m = 0; m < M_COUNT; m++) {
			char b[96];
			cell(b, sizeof b, cm, i, m);
			if (shown(cm, m) && (int)strlen(b) > w[i])
				w[i] = (int)strlen(b);
		}
	}
	fprintf(f, "%-*s", LABEL_W, "");
	for (int i = 0; i < cm->n; i++)
		put(f, cm, i, w[i], cm->col[i].chip->name);
	fprintf(f, "\n%-*s", LABEL_W, "config");
	for (int i = 0; i < cm->n; i++)
		put(f, cm, i, w[i], cm->col[i].path);
	fprintf(f, "\n");
	for (int m = 0; m < M_COUNT; m++) {
		if (shown(cm, m)) {
			fprintf(f, "%-*s", LABEL_W, metrics[m].label);
			for (int i = 0; i < cm->n; i++) {
				char b[96];
				cell(b, sizeof b, cm, i, m);
				put(f, cm, i, w[i], b);
			}
			fprintf(f, "\n");
		}
		/* the string rows after their group */
		if (m == M_PEAKFRAC && !cm->trace_mode) {
			fprintf(f, "%-*s", LABEL_W, "bound");
			for (int i = 0; i < cm->n; i++)
				put(f, cm, i, w[i], cm->col[i].bound);
			fprintf(f, "\n");
		}
		if (m == M_MEM_DEV && shown(cm, m)) {
			fprintf(f, "%-*s", LABEL_W, "fits");
			for (int i = 0; i < cm->n; i++)
				put(f, cm, i, w[i], cm->col[i].fits ? "yes" : "no");
			fprintf(f, "\n");
		}
	}
}

static void print_json(const struct compare *cm, FILE *f)
{
	struct json j;
	json_begin(&j, f, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 2);
	json_str(&j, cm->trace_mode ? "trace" : "op", cm->what);
	json_num(&j, "amortization_years", cm->cp.years);
	json_num(&j, "usd_per_kwh", cm->cp.usd_per_kwh);
	json_arr(&j, "columns");
	for (int i = 0; i < cm->n; i++) {
		const struct column *k = &cm->col[i];
		json_obj(&j, NULL);
		json_str(&j, "config", k->path);
		json_str(&j, "chip", k->chip->name);
		if (!cm->trace_mode)
			json_str(&j, "bound", k->bound);
		else if (cm->has_mem)
			json_bool(&j, "fits", k->fits);
		for (int m = 0; m < M_COUNT; m++)
			if (shown(cm, m))
				json_num(&j, metrics[m].key, k->v[m]);
		json_obj(&j, "ratio");
		for (int m = 0; m < M_COUNT; m++)
			if (shown(cm, m) && metrics[m].fmt != F_INT)
				json_num(&j, metrics[m].key, ratio(cm, i, m));
		json_obj_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

/* One row per config: the chip, what bounds the op or whether the step fits,
   then the figures marked A_MD. */
static void print_markdown(const struct compare *cm, FILE *f)
{
	int fits = cm->trace_mode && cm->has_mem, bound = !cm->trace_mode;
	fprintf(f, "| chip |%s", bound ? " bound |" : fits ? " fits |" : "");
	for (int m = 0; m < M_COUNT; m++)
		if (shown(cm, m) && (metrics[m].where & A_MD))
			fprintf(f, " %s |", metrics[m].label);
	fprintf(f, "\n|---|%s", bound || fits ? "---|" : "");
	for (int m = 0; m < M_COUNT; m++)
		if (shown(cm, m) && (metrics[m].where & A_MD))
			fprintf(f, "---:|");
	fprintf(f, "\n");
	for (int i = 0; i < cm->n; i++) {
		const struct column *k = &cm->col[i];
		fprintf(f, "| %s |", k->chip->name);
		if (bound || fits)
			fprintf(f, " %s |", bound ? k->bound : k->fits ? "yes" : "**no**");
		for (int m = 0; m < M_COUNT; m++) {
			if (!shown(cm, m) || !(metrics[m].where & A_MD))
				continue;
			char b[48];
			fmt_value(m, k->v[m], b, sizeof b);
			fprintf(f, " %s |", b);
		}
		fprintf(f, "\n");
	}
}

static int write_csv(const struct compare *cm, const char *path)
{
	struct out_file o;
	FILE *f = out_open(path, &o, NULL, 0);
	if (!f)
		return -1;
	fprintf(f, "config,chip,%s", cm->trace_mode ? "fits" : "bound");
	for (int m = 0; m < M_COUNT; m++)
		if (shown(cm, m))
			fprintf(f, ",%s", metrics[m].key);
	fprintf(f, "\n");
	for (int i = 0; i < cm->n; i++) {
		const struct column *k = &cm->col[i];
		fprintf(f, "%s,\"%s\",%s", k->path, k->chip->name,
		        cm->trace_mode ? (cm->has_mem ? (k->fits ? "yes" : "no") : "") : k->bound);
		for (int m = 0; m < M_COUNT; m++) {
			if (!shown(cm, m))
				continue;
			if (cost_known(k->v[m]))
				fprintf(f, ",%.9g", k->v[m]);
			else
				fprintf(f, ",");
		}
		fprintf(f, "\n");
	}
	return out_commit(&o, NULL, 0);
}

static int parse_pos(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno || !(x >= lo && x <= hi))
		return cli_usage_error("compare", "%s %s: expected a number from %g to %g", opt, v, lo, hi);
	*out = x;
	return 0;
}

/* Everything the arguments say; 0 or an exit code. */
struct args {
	struct cli_common o;
	const char *pos[CMP_MAX + 1];
	int npos;
	const char *op, *csv;
	int markdown;
};

static int parse_args(struct args *a, struct compare *cm, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int r = cli_common_opt(&a->o, argc, argv, &i, "compare");
		if (r < 0)
			return SIM_EXIT_USAGE;
		if (r)
			continue;
		const char *s = argv[i];
		if (!strcmp(s, "--markdown")) {
			a->markdown = 1;
			continue;
		}
		if (!strcmp(s, "--op") || !strcmp(s, "--csv") || !strcmp(s, "--years") || !strcmp(s, "--usd-per-kwh") ||
		    !strcmp(s, "--ranks-per-node")) {
			if (i + 1 >= argc)
				return cli_usage_error("compare", "%s needs a value", s);
			const char *v = argv[++i];
			if (!strcmp(s, "--op"))
				a->op = v;
			else if (!strcmp(s, "--csv"))
				a->csv = v;
			else if (!strcmp(s, "--years") && parse_pos(s, v, 0.01, 100, &cm->cp.years))
				return SIM_EXIT_USAGE;
			else if (!strcmp(s, "--usd-per-kwh") && parse_pos(s, v, 0, 100, &cm->cp.usd_per_kwh))
				return SIM_EXIT_USAGE;
			else if (!strcmp(s, "--ranks-per-node") &&
			         cli_parse_ranks_per_node("compare", v, &cm->ranks_per_node))
				return SIM_EXIT_USAGE;
			continue;
		}
		if (s[0] == '-' && s[1])
			return cli_unknown_option("compare", cmd_compare_help, s);
		if (a->npos == CMP_MAX + 1)
			return cli_usage_error("compare", "more than %d configs", CMP_MAX);
		a->pos[a->npos++] = s;
	}
	if (a->o.json && a->markdown)
		return cli_usage_error("compare", "--json and --markdown exclude each other");
	int ncfg = a->op ? a->npos : a->npos - 1;
	if (!a->op && a->npos == 1)
		return cli_usage_error("compare", "expected configs and a TRACE, or --op 'OP'");
	if (ncfg < 1)
		return cli_usage_error("compare", "expected at least one CONFIG");
	if (ncfg > CMP_MAX)
		return cli_usage_error("compare", "more than %d configs", CMP_MAX);
	if (a->op && cm->ranks_per_node)
		return cli_usage_error("compare", "--ranks-per-node places a trace's ranks: not with --op");
	cm->n = ncfg;
	cm->trace_mode = !a->op;
	return out_check_inputs("compare", &a->csv, 1, a->pos, a->npos);
}

static int output(const struct compare *cm, const struct args *a)
{
	if (a->csv && write_csv(cm, a->csv)) {
		fprintf(stderr, "sim compare: cannot write %s: %s\n", a->csv, strerror(errno ? errno : EIO));
		return SIM_EXIT_CANTCREAT;
	}
	if (a->o.json)
		print_json(cm, stdout);
	else if (a->markdown)
		print_markdown(cm, stdout);
	else
		print_text(cm, stdout);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sim compare: cannot write output\n");
		return SIM_EXIT_CANTCREAT;
	}
	return 0;
}

/* Reads, checks, runs and prints; the caller frees the chips. */
static int compare_main(struct compare *cm, int argc, char **argv)
{
	cm->cp = (struct cost_params){COST_YEARS_DEFAULT, COST_USD_PER_KWH_DEFAULT};
	struct args a;
	memset(&a, 0, sizeof a);
	int rc = parse_args(&a, cm, argc, argv);
	if (rc) {
		cm->n = 0;
		return rc;
	}
	struct op op;
	char why[4096];
	if (a.op) {
		if (op_parse(a.op, NULL, &op, why, sizeof why)) {
			fprintf(stderr, "sim compare: %s\n", why);
			return SIM_EXIT_TRACE;
		}
		op_format(&op, cm->what, sizeof cm->what);
	}
	for (int i = 0; i < cm->n && !rc; i++) {
		cm->col[i].path = a.pos[i];
		for (int m = 0; m < M_COUNT; m++)
			cm->col[i].v[m] = COST_UNKNOWN;
		cm->col[i].chip = cli_load(a.pos[i], &a.o, &rc);
		if (!rc && cm->ranks_per_node &&
		    platform_ranks_per_node(cm->col[i].chip, cm->ranks_per_node, why, sizeof why))
			rc = cli_usage_error("compare", "--ranks-per-node: %s", why);
	}
	struct trace *t = NULL;
	if (!rc && cm->trace_mode) {
		snprintf(cm->what, sizeof cm->what, "%s", a.pos[cm->n]);
		t = tr_load(a.pos[cm->n], 0, &rc, why, sizeof why);
		if (!t)
			fprintf(stderr, "%s\n", why);
	}
	if (!rc)
		rc = cm->trace_mode ? run_trace(cm, t) : predict_op(cm, &op);
	if (!rc) {
		for (int i = 0; i < cm->n; i++)
			derive(&cm->col[i], &cm->cp);
		rc = output(cm, &a);
	}
	tr_free(t);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct compare *cm = calloc(1, sizeof *cm);
	if (!cm) {
		fprintf(stderr, "sim compare: out of memory\n");
		return SIM_EXIT_INTERNAL;
	}
	int rc = compare_main(cm, argc, argv);
	for (int i = 0; i < cm->n; i++)
		arch_free(cm->col[i].chip); /* NULL past a config that failed to load */
	free(cm);
	return rc;
}
