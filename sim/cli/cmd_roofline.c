/*
 * cmd_roofline.c -- `sim roofline CONFIG [CONFIG...] [TRACE | --op 'OP'...]
 * [-o out.svg] [--json] [--set path=value]...`
 *
 * The roofline of one or more chips: a compute roof per dtype and pipe
 * (matrix, vector) the chip has, the device-memory and L2 bandwidth slopes,
 * the ridge points where they meet (arch_peak_* / bandwidth, arch/derive.c),
 * and ops placed at their arithmetic intensity (FLOPs over the device-memory
 * bytes the device model moves for them) and the FLOP/s it predicts. Text
 * table or JSON on stdout; with -o an SVG on log-log axes (sim/report/plot.c),
 * written whole or not at all.
 *
 * A TRACE contributes its distinct device ops, collected from one rank per
 * pipeline stage (the ranks with coordinate 0 in every other layout dim).
 */
#include "cli.h"
#include "json.h"
#include "model.h"
#include "outfile.h"
#include "plot.h"
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_roofline_help[] =
    "usage: sim roofline CONFIG [CONFIG...] [TRACE | --op 'OP'...] [-o FILE.svg]\n"
    "                    [--dtype D[,D...]] [--json] [--top N] [--set path=value]...\n"
    "\n"
    "The roofline of each chip: a compute roof per dtype and pipe (matrix,\n"
    "vector) the chip has, the device-memory and L2 bandwidth slopes, and the\n"
    "ridge points (peak / bandwidth, FLOP/byte) where they meet. Ops given\n"
    "with --op (repeatable; as `sim op` reads them) or the distinct device ops\n"
    "of a TRACE are placed at their arithmetic intensity (FLOPs over the\n"
    "device-memory bytes the device model moves) and the FLOP/s it predicts,\n"
    "with the share of the roof they reach there.\n"
    "\n"
    "A positional argument is a TRACE when its first line is `simtrace`,\n"
    "otherwise a CONFIG. Several configs share one plot (a colour each); a\n"
    "label that would cover another moves a little, or is left out (the\n"
    "legend counts them; the table has every roof). --dtype keeps the plot\n"
    "of many chips readable.\n"
    "\n"
    "options:\n"
    "  -o FILE.svg         write the plot (log-log axes); whole or not at all\n"
    "  --op 'OP'           place an op (repeatable)\n"
    "  --dtype D[,D...]    only the roofs of these dtypes (bf16, fp8, ...), in\n"
    "                      the table, the JSON and the plot\n"
    "  --top N             ops of a TRACE listed and plotted: the N that take\n"
    "                      most time on the first chip (default 20)\n"
    "  --json              print JSON (schema_version 1) instead of the table\n"
    "  --set path=value    override a config parameter of every chip (repeatable)\n"
    "\n"
    "exit codes: 0 ok, 2 usage, 65 bad op or trace, 66 file missing,\n"
    "73 cannot write the plot (or it is one of the inputs), 78 bad config.\n"
    "\n"
    "examples:\n"
    "  sim roofline configs/rtx3080.cfg\n"
    "  sim roofline configs/h100.cfg configs/mi300x.cfg --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' -o roof.svg\n"
    "  sim roofline configs/h100.cfg configs/b200.cfg configs/mi300x.cfg --dtype bf16,fp8 -o roof.svg\n"
    "  sim roofline configs/a100.cfg traces/llama3_8b_train.trace --top 10\n";

#define RF_MAX_CHIPS 8
#define RF_MAX_OPS   256
#define RF_MAX_RANKS 64

struct rf_op {
	char text[512]; /* canonical */
	struct op op;
	long count; /* occurrences in the ranks read (1 for --op) */
	double key; /* count x time on the first chip: the order of a trace's ops */
};

struct rf_res {
	int ok;
	char why[256];
	struct dm_result r;
};

/* One roof: a dtype on a pipe. */
struct rf_roof {
	int dtype, matrix;
	double peak;
};

static int is_trace(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[256];
	int yes = 0;
	while (fgets(line, sizeof line, f)) {
		char *s = line + strspn(line, " \t\r\n");
		if (!*s || *s == '#')
			continue;
		yes = !strncmp(s, "simtrace", 8);
		break;
	}
	fclose(f);
	return yes;
}

static int add_op(struct rf_op *ops, int *n, const struct op *op)
{
	char text[512];
	op_format(op, text, sizeof text);
	for (int i = 0; i < *n; i++)
		if (!strcmp(ops[i].text, text)) {
			ops[i].count++;
			return 0;
		}
	if (*n == RF_MAX_OPS)
		return 0; /* enough distinct ops for a picture */
	struct rf_op *o = &ops[(*n)++];
	memcpy(o->text, text, sizeof text);
	o->op = *op;
	o->count = 1;
	return 0;
}

/* The distinct device ops of one rank per pipeline stage. */
static int trace_ops(const struct trace *t, struct rf_op *ops, int *n, char *why, size_t whylen)
{
	int reps = 0;
	for (int r = 0; r < tr_ranks(t) && reps < RF_MAX_RANKS; r++) {
		int rep = 1;
		for (int d = 0; d < DIM_COUNT; d++)
			if (d != DIM_PP && tr_coord(t, r, (enum tr_dim)d))
				rep = 0;
		if (!rep)
			continue;
		reps++;
		struct tr_cursor *c = tr_cursor_new(t, r);
		if (!c) {
			snprintf(why, whylen, "sim roofline: out of memory");
			return SIM_EXIT_INTERNAL;
		}
		struct tr_event ev;
		int k;
		while ((k = tr_next(c, &ev, why, whylen)) > 0)
			if (ev.kind == TK_OP)
				add_op(ops, n, &ev.op);
		tr_cursor_free(c);
		if (k < 0)
			return SIM_EXIT_TRACE;
	}
	return 0;
}

/* The roofs of the dtypes in mask (bit d for dtype d; 0: every dtype). */
static int roofs(const struct arch_chip *c, unsigned mask, struct rf_roof *out)
{
	int n = 0;
	for (int m = 1; m >= 0; m--)
		for (int d = 0; d < DT_COUNT; d++) {
			if (mask && !(mask >> d & 1))
				continue;
			double p =
			    m ? arch_peak_matrix(c, (enum arch_dtype)d, 0) : arch_peak_vector(c, (enum arch_dtype)d);
			if (p > 0)
				out[n++] = (struct rf_roof){d, m, p};
		}
	return n;
}

static double ridge(double peak, const struct arch_mem *m)
{
	return m->present && m->bw_Bps > 0 ? peak / m->bw_Bps : 0;
}

/* The roof over an op at its intensity: the peak of the pipe it used, or the memory slope. */
static double roof_at(const struct arch_chip *c, const struct dm_result *r)
{
	if (r->bytes_dram <= 0 || c->dram.bw_Bps <= 0)
		return r->peak_flops;
	double slope = r->flops / r->bytes_dram * c->dram.bw_Bps;
	return slope < r->peak_flops ? slope : r->peak_flops;
}

static void fmt_ridge(double v, char *buf, size_t len)
{
	if (v > 0)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "-");
}

static void print_chip(const struct arch_chip *c, const char *path, unsigned mask)
{
	char bw[32], l2[32];
	units_format(c->dram.bw_Bps, UNIT_BANDWIDTH, bw, sizeof bw);
	if (c->l2.present && c->l2.bw_Bps > 0)
		units_format(c->l2.bw_Bps, UNIT_BANDWIDTH, l2, sizeof l2);
	else
		snprintf(l2, sizeof l2, "- (no bandwidth in the config)");
	printf("%s (%s)\n", c->name, path);
	printf("  device memory  %s\n", c->dram.bw_Bps > 0 ? bw : "-");
	printf("  L2             %s\n", l2);
	printf("  (ridge points in FLOP/byte: the peak over the bandwidth)\n");
	printf("  %-12s %17s %12s %9s\n", "roof", "peak", "ridge: mem", "L2");
	struct rf_roof rf[2 * DT_COUNT];
	int n = roofs(c, mask, rf);
	if (!n)
		printf("  (no unit of the chip computes the dtypes of --dtype)\n");
	for (int i = 0; i < n; i++) {
		char a[32], b[32];
		fmt_ridge(ridge(rf[i].peak, &c->dram), a, sizeof a);
		fmt_ridge(ridge(rf[i].peak, &c->l2), b, sizeof b);
		int isint = arch_dtype_is_int((enum arch_dtype)rf[i].dtype);
		printf("  %-6s %-5s %9.4g %-7s %12s %9s\n", rf[i].matrix ? "matrix" : "vector",
		       arch_dtype_name((enum arch_dtype)rf[i].dtype), rf[i].peak / 1e12, isint ? "TOP/s" : "TFLOP/s", a,
		       b);
	}
}

static void print_ops(const struct arch_chip *c, const struct rf_op *ops, const struct rf_res *res, int n)
{
	printf("  ops (intensity: FLOPs / device-memory bytes)\n");
	printf("  %3s %10s %9s %8s  %-8s %s\n", "#", "FLOP/byte", "TFLOP/s", "of roof", "bound", "op");
	for (int i = 0; i < n; i++) {
		if (!res[i].ok) {
			printf("  %3d %10s %9s %8s  %-8s %s (%s)\n", i + 1, "-", "-", "-", "-", ops[i].text,
			       res[i].why);
			continue;
		}
		const struct dm_result *r = &res[i].r;
		char ai[32];
		if (r->bytes_dram > 0)
			snprintf(ai, sizeof ai, "%.3g", r->flops / r->bytes_dram);
		else
			snprintf(ai, sizeof ai, "-");
		double roof = roof_at(c, r), got = r->time_s > 0 ? r->flops / r->time_s : 0;
		printf("  %3d %10s %9.4g %7.1f%%  %-8s %s", i + 1, ai, got / 1e12, roof > 0 ? 100 * got / roof : 0,
		       dm_bound_name(r->bound), ops[i].text);
		if (ops[i].count > 1)
			printf(" (x%ld)", ops[i].count);
		printf("\n");
	}
}

static void json_chip(struct json *j, const struct arch_chip *c, const char *path, unsigned mask,
                      const struct rf_op *ops, const struct rf_res *res, int nops)
{
	json_obj(j, NULL);
	json_str(j, "chip", c->name);
	json_str(j, "config", path);
	json_num(j, "dram_Bps", c->dram.bw_Bps);
	json_num_or_null(j, "l2_Bps", c->l2.present && c->l2.bw_Bps > 0 ? c->l2.bw_Bps : NAN);
	json_arr(j, "roofs");
	struct rf_roof rf[2 * DT_COUNT];
	int n = roofs(c, mask, rf);
	for (int i = 0; i < n; i++) {
		json_obj(j, NULL);
		json_str(j, "dtype", arch_dtype_name((enum arch_dtype)rf[i].dtype));
		json_str(j, "pipe", rf[i].matrix ? "matrix" : "vector");
		json_num(j, "peak_flops", rf[i].peak);
		double a = ridge(rf[i].peak, &c->dram), b = ridge(rf[i].peak, &c->l2);
		json_num_or_null(j, "ridge_dram", a > 0 ? a : NAN);
		json_num_or_null(j, "ridge_l2", b > 0 ? b : NAN);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr(j, "ops");
	for (int i = 0; i < nops; i++) {
		json_obj(j, NULL);
		json_str(j, "op", ops[i].text);
		json_int(j, "count", ops[i].count);
		if (!res[i].ok) {
			json_str(j, "error", res[i].why);
		} else {
			const struct dm_result *r = &res[i].r;
			json_num(j, "flops", r->flops);
			json_num(j, "bytes_dram", r->bytes_dram);
			json_num_or_null(j, "intensity", r->bytes_dram > 0 ? r->flops / r->bytes_dram : NAN);
			json_num(j, "time_s", r->time_s);
			json_num(j, "flops_per_s", r->time_s > 0 ? r->flops / r->time_s : 0);
			json_num(j, "roof_flops", roof_at(c, r));
			json_str(j, "bound", dm_bound_name(r->bound));
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	if (c->nsets) {
		json_arr(j, "overrides");
		for (int i = 0; i < c->nsets; i++)
			json_str(j, NULL, c->sets[i]);
		json_arr_end(j);
	}
	json_obj_end(j);
}

/* Axis ranges: whole decades around every slope, roof and op. */
static void ranges(struct arch_chip *const *chips, int nc, unsigned mask, struct rf_res *const *res, int nops,
                   double *x, double *y)
{
	double xmin = 1, xmax = 100, ymax = 0, ymin = INFINITY;
	for (int i = 0; i < nc; i++) {
		struct rf_roof rf[2 * DT_COUNT];
		int n = roofs(chips[i], mask, rf);
		for (int k = 0; k < n; k++) {
			if (rf[k].peak > ymax)
				ymax = rf[k].peak;
			double r = ridge(rf[k].peak, &chips[i]->dram);
			if (r * 4 > xmax)
				xmax = r * 4;
			if (r > 0 && r / 2 < xmin)
				xmin = r / 2;
		}
		for (int k = 0; k < nops; k++) {
			const struct dm_result *r = &res[i][k].r;
			if (!res[i][k].ok || r->bytes_dram <= 0 || r->time_s <= 0 || r->flops <= 0)
				continue;
			double ai = r->flops / r->bytes_dram, f = r->flops / r->time_s;
			xmin = ai / 2 < xmin ? ai / 2 : xmin;
			xmax = ai * 2 > xmax ? ai * 2 : xmax;
			ymin = f / 2 < ymin ? f / 2 : ymin;
		}
	}
	x[0] = pow(10, floor(log10(xmin)));
	x[1] = pow(10, ceil(log10(xmax)));
	for (int i = 0; i < nc; i++)
		if (chips[i]->dram.bw_Bps * x[0] < ymin)
			ymin = chips[i]->dram.bw_Bps * x[0];
	y[1] = pow(10, ceil(log10(ymax * 1.5)));
	if (!(ymin < y[1] / 10))
		ymin = y[1] / 1000;
	y[0] = pow(10, floor(log10(ymin)));
	if (y[0] < y[1] / 1e7)
		y[0] = y[1] / 1e7;
}

/* "matrix fp16/bf16, vector fp32": the roofs of rf[] whose peak is peak. */
static void roof_names(const struct rf_roof *rf, int n, double peak, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int m = 1; m >= 0; m--) {
		int first = 1;
		for (int k = 0; k < n && used < len; k++) {
			if (rf[k].matrix != m || rf[k].peak != peak)
				continue;
			const char *dt = arch_dtype_name((enum arch_dtype)rf[k].dtype);
			if (first)
				used += (size_t)snprintf(buf + used, len - used, "%s%s %s", used ? ", " : "",
				                         m ? "matrix" : "vector", dt);
			else
				used += (size_t)snprintf(buf + used, len - used, "/%s", dt);
			first = 0;
		}
	}
}

/*
 * One chip's slopes, a line per distinct roof (pipe, peak), a label per
 * distinct peak over its line, ridge points. The plot moves labels that
 * would cover others (several chips with close peaks).
 */
static int plot_chip(struct plot *p, const struct arch_chip *c, unsigned mask, int color, const double *x)
{
	struct rf_roof rf[2 * DT_COUNT];
	int n = roofs(c, mask, rf), bad = 0;
	double top = 0, bw = c->dram.bw_Bps;
	for (int k = 0; k < n; k++)
		top = rf[k].peak > top ? rf[k].peak : top;
	char leg[160], v[32];
	units_format(bw, UNIT_BANDWIDTH, v, sizeof v);
	snprintf(leg, sizeof leg, "%s, %s", c->name, v);
	if (bw > 0) {
		double xs[2] = {x[0], top / bw}, ys[2] = {bw * x[0], top};
		bad |= plot_line(p, xs, ys, 2, color, PLOT_SOLID, leg);
	}
	if (c->l2.present && c->l2.bw_Bps > 0) {
		double l2 = c->l2.bw_Bps, xs[2] = {x[0], top / l2}, ys[2] = {l2 * x[0], top};
		bad |= plot_line(p, xs, ys, 2, color, PLOT_DOTTED, NULL);
	}
	for (int k = 0; k < n; k++) {
		int seen_line = 0, seen_peak = 0;
		for (int m = 0; m < k; m++) {
			seen_peak |= rf[m].peak == rf[k].peak;
			seen_line |= rf[m].peak == rf[k].peak && rf[m].matrix == rf[k].matrix;
		}
		double r = bw > 0 ? rf[k].peak / bw : x[0];
		if (!seen_line) {
			double xs[2] = {r, x[1]}, ys[2] = {rf[k].peak, rf[k].peak};
			bad |= plot_line(p, xs, ys, 2, color, rf[k].matrix ? PLOT_SOLID : PLOT_DASHED, NULL);
		}
		if (seen_peak)
			continue;
		char names[160], lab[200];
		roof_names(rf, n, rf[k].peak, names, sizeof names);
		plot_si(rf[k].peak, v, sizeof v);
		snprintf(lab, sizeof lab, "%s %s", names, v);
		bad |= plot_text(p, x[1], rf[k].peak, -4, -4, PLOT_END, color, lab);
		if (bw > 0) {
			snprintf(lab, sizeof lab, "%.1f", r);
			bad |= plot_point(p, r, rf[k].peak, 3, color, lab);
		}
	}
	return bad;
}

static int write_svg(const char *out, struct arch_chip *const *chips, int nc, unsigned mask, struct rf_res *const *res,
                     int nops)
{
	struct plot *p = plot_new(1100, 650, "Roofline");
	if (!p)
		return -1;
	double x[2], y[2];
	ranges(chips, nc, mask, res, nops, x, y);
	plot_axis(p, 0, x[0], x[1], 1, "arithmetic intensity (FLOP/byte of device memory)");
	plot_axis(p, 1, y[0], y[1], 1, "FLOP/s");
	int bad = 0;
	for (int i = 0; i < nc; i++)
		bad |= plot_chip(p, chips[i], mask, i, x);
	for (int i = 0; i < nc; i++)
		for (int k = 0; k < nops; k++) {
			const struct dm_result *r = &res[i][k].r;
			if (!res[i][k].ok || r->bytes_dram <= 0 || r->time_s <= 0)
				continue;
			char lab[16];
			snprintf(lab, sizeof lab, "%d", k + 1);
			bad |= plot_point(p, r->flops / r->bytes_dram, r->flops / r->time_s, 4.5, i, lab);
		}
	bad |= plot_note(p, "solid: memory slope, matrix roofs");
	bad |= plot_note(p, "dashed: vector roofs; dotted: L2");
	bad |= plot_note(p, "small dots: ridge points (FLOP/byte)");
	if (nops)
		bad |= plot_note(p, "numbered dots: ops (see the table)");
	if (!bad)
		bad = plot_save(p, out);
	else
		errno = ENOMEM;
	int err = errno;
	plot_free(p);
	errno = err;
	return bad;
}

static int by_key_desc(const void *a, const void *b)
{
	const struct rf_op *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return strcmp(x->text, y->text);
}

struct rf_args {
	struct cli_common o;
	const char *configs[RF_MAX_CHIPS];
	int nconfigs;
	const char *trace;
	const char *ops[RF_MAX_OPS];
	int nops;
	const char *out;
	int top;
	unsigned dtypes; /* --dtype: bit d for dtype d; 0: every dtype */
};

/* --dtype bf16,fp8: a dtype mask; nonzero (a usage error printed) on a name no dtype has */
static int parse_dtypes(const char *v, unsigned *mask)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", v);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int d = arch_dtype_parse(t);
		if (d < 0) {
			const char *names[DT_COUNT];
			char known[256];
			size_t used = 0;
			known[0] = '\0';
			for (int k = 0; k < DT_COUNT; k++) {
				names[k] = arch_dtype_name((enum arch_dtype)k);
				if (used < sizeof known)
					used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
					                         k ? ", " : "", names[k]);
			}
			int near = arch_nearest(t, names, DT_COUNT);
			char hint[64] = "";
			if (near >= 0)
				snprintf(hint, sizeof hint, "did you mean '%s'? ", names[near]);
			cli_usage_error(
			    "roofline",
			    "--dtype %s: unknown dtype '%s' (%sexpected one or more of %s, comma-separated)", v, t,
			    hint, known);
			return -1;
		}
		*mask |= 1u << d;
	}
	if (!*mask) {
		cli_usage_error("roofline", "--dtype needs a dtype (bf16, fp8, ...)");
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct rf_args *a)
{
	a->top = 20;
	for (int i = 1; i < argc; i++) {
		int r = cli_common_opt(&a->o, argc, argv, &i, "roofline");
		if (r < 0)
			return SIM_EXIT_USAGE;
		if (r)
			continue;
		const char *s = argv[i];
		if (!strcmp(s, "-o") || !strcmp(s, "--op") || !strcmp(s, "--top") || !strcmp(s, "--dtype")) {
			if (i + 1 >= argc)
				return cli_usage_error("roofline", "%s needs a value", s);
			const char *v = argv[++i];
			if (!strcmp(s, "-o")) {
				a->out = v;
			} else if (!strcmp(s, "--dtype")) {
				if (parse_dtypes(v, &a->dtypes))
					return SIM_EXIT_USAGE;
			} else if (!strcmp(s, "--op")) {
				if (a->nops == RF_MAX_OPS)
					return cli_usage_error("roofline", "more than %d --op options", RF_MAX_OPS);
				a->ops[a->nops++] = v;
			} else {
				char *end;
				errno = 0;
				long t = strtol(v, &end, 10);
				if (*end || errno || t < 1 || t > RF_MAX_OPS)
					return cli_usage_error("roofline", "--top %s: expected an integer from 1 to %d",
					                       v, RF_MAX_OPS);
				a->top = (int)t;
			}
			continue;
		}
		if (s[0] == '-' && s[1])
			return cli_unknown_option("roofline", cmd_roofline_help, s);
		if (is_trace(s)) {
			if (a->trace)
				return cli_usage_error("roofline", "more than one TRACE ('%s', '%s')", a->trace, s);
			a->trace = s;
		} else {
			if (a->nconfigs == RF_MAX_CHIPS)
				return cli_usage_error("roofline", "more than %d configs", RF_MAX_CHIPS);
			a->configs[a->nconfigs++] = s;
		}
	}
	if (!a->nconfigs)
		return cli_usage_error("roofline", "missing CONFIG");
	if (a->trace && a->nops)
		return cli_usage_error("roofline", "give a TRACE or --op, not both");
	return 0;
}

/* The ops to place: --op in order, or a trace's by time on the first chip. */
static int collect_ops(const struct rf_args *a, struct dm *dm, const struct arch_chip *first, struct rf_op *ops, int *n)
{
	char why[1024];
	for (int i = 0; i < a->nops; i++) {
		struct op op;
		if (op_parse(a->ops[i], NULL, &op, why, sizeof why)) {
			fprintf(stderr, "sim roofline: --op %d: %s\n", i + 1, why);
			return SIM_EXIT_TRACE;
		}
		add_op(ops, n, &op); /* the same op twice is one point */
	}
	if (!a->trace)
		return 0;
	int code = 0;
	struct trace *t = tr_load(a->trace, 0, &code, why, sizeof why);
	if (!t) {
		fprintf(stderr, "%s\n", why);
		return code;
	}
	code = trace_ops(t, ops, n, why, sizeof why);
	tr_free(t);
	if (code) {
		fprintf(stderr, "%s\n", why);
		return code;
	}
	for (int i = 0; i < *n; i++) {
		struct dm_result r;
		ops[i].key =
		    dm_predict_cached(dm, first, &ops[i].op, &r, why, sizeof why) ? -1 : r.time_s * ops[i].count;
	}
	qsort(ops, (size_t)*n, sizeof *ops, by_key_desc);
	if (*n > a->top)
		*n = a->top;
	return 0;
}

int cmd_roofline(int argc, char **argv)
{
	static struct rf_args a;
	memset(&a, 0, sizeof a);
	int code = parse_args(argc, argv, &a);
	if (!code) {
		const char *ins[RF_MAX_CHIPS + 1];
		memcpy(ins, a.configs, (size_t)a.nconfigs * sizeof *ins);
		ins[a.nconfigs] = a.trace;
		code = out_check_inputs("roofline", &a.out, 1, ins, a.nconfigs + 1);
	}
	if (code)
		return code;
	struct arch_chip *chips[RF_MAX_CHIPS] = {0};
	struct rf_res *res[RF_MAX_CHIPS] = {0};
	struct rf_op *ops = calloc(RF_MAX_OPS, sizeof *ops);
	struct dm *dm = dm_new(); /* the ranking on the first chip and the placement on each share it */
	int nops = 0, nc = 0;
	if (!ops || !dm) {
		free(ops);
		dm_free(dm);
		fprintf(stderr, "sim roofline: out of memory\n");
		return SIM_EXIT_INTERNAL;
	}
	for (nc = 0; nc < a.nconfigs; nc++)
		if (!(chips[nc] = cli_load(a.configs[nc], &a.o, &code)))
			goto out;
	if ((code = collect_ops(&a, dm, chips[0], ops, &nops)))
		goto out;
	for (int i = 0; i < nc; i++) {
		if (!(res[i] = calloc((size_t)(nops ? nops : 1), sizeof *res[i]))) {
			fprintf(stderr, "sim roofline: out of memory\n");
			code = SIM_EXIT_INTERNAL;
			goto out;
		}
		for (int k = 0; k < nops; k++)
			res[i][k].ok = !dm_predict_cached(dm, chips[i], &ops[k].op, &res[i][k].r, res[i][k].why,
			                                  sizeof res[i][k].why);
	}
	if (a.out && write_svg(a.out, chips, nc, a.dtypes, res, nops)) {
		fprintf(stderr, "sim roofline: cannot write %s: %s\n", a.out, strerror(errno ? errno : EIO));
		code = SIM_EXIT_CANTCREAT;
		goto out;
	}
	if (a.o.json) {
		struct json j;
		json_begin(&j, stdout, 1);
		json_obj(&j, NULL);
		json_int(&j, "schema_version", 1);
		json_arr(&j, "chips");
		for (int i = 0; i < nc; i++)
			json_chip(&j, chips[i], a.configs[i], a.dtypes, ops, res[i], nops);
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		for (int i = 0; i < nc; i++) {
			if (i)
				printf("\n");
			print_chip(chips[i], a.configs[i], a.dtypes);
			if (nops)
				print_ops(chips[i], ops, res[i], nops);
		}
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sim roofline: cannot write output\n");
		code = SIM_EXIT_CANTCREAT;
	}
out:
	dm_free(dm);
	for (int i = 0; i < a.nconfigs; i++) {
		free(res[i]);
		if (chips[i])
			arch_free(chips[i]);
	}
	free(ops);
	return code;
}
