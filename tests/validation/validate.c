/*
 * validate.c -- the device model against published hardware measurements.
 *
 * Inputs (ROOT is the repository root):
 *   MEASUREMENTS_TSV   published measurements, one per row: id category
 *                      device software workload params value unit source note
 *                      (tests/validation/measurements-public.tsv is a
 *                      verbatim copy of shared/reference/measurements-public.tsv)
 *   ROOT/tests/validation/cases.tsv    id config sets metric ops: how a row is
 *                      simulated (the format is described at its top)
 *   ROOT/tests/validation/skipped.tsv  id reason: rows the model cannot express
 *   ROOT/tests/validation/ratios.tsv   a b chips workload basis: pairs of
 *                      cases that measure one workload on two chips
 *
 * Every measurement of the categories in `cats` below must be in exactly one
 * of the two files. Each case is predicted (ops' times summed, one config
 * load per distinct config and overrides; a `gen` case, a training or
 * inference row, replays the trace `sim gen` writes for it in a child
 * process of its own: gen_case.c), its error is (predicted - measured) /
 * measured. A case may not set a clock, and one that sets a `model.*`
 * constant is conditioned: reported apart, scored nowhere. The mean
 * absolute error (MAPE) of each category's rows from one source, and of the
 * ratios of ratios.tsv (the measured speed-up of chip a over chip b against
 * the predicted one) whose first row is from it, must stay under its guard
 * (`guards`, validate_report.c). Exit 0 when all of that holds, 1 otherwise (the reasons go to
 * stderr, one line each), 2 on a usage error.
 *
 * It prints the per-category summary and the five worst rows, and writes a
 * Markdown report (docs/validation.md is that file; validate_report.c
 * computes the statistics and writes it). With --fit, fit.c fits
 * the model's constants itself (every key of its `fitkeys` and the energy per
 * MAC of each microarchitecture; cv.c minimizes) on all op-level rows, once
 * per source left out and per chip left out, predicts every row in-sample and cross-validated (the
 * training and inference rows replayed again with their fold's constants),
 * checks the cross-validated guards of `cats` and reports the fitted values
 * with their spread over the folds.
 *
 * With --no-steps the training and inference rows (whole-step replays) are
 * not run and their categories not checked: the sanitizer build uses it,
 * where those replays would take many minutes.
 *
 * With --also TSV (repeatable) the rows of another measurements file in the
 * same columns join them: tests/validation/measurements-lent.tsv holds the
 * rows this project measured itself on lent hardware (bench/gpu/).
 *
 * usage: validate ROOT MEASUREMENTS_TSV OUT_MD [--also TSV]... [--fit] [--no-steps]
 */
#include "cv.h"
#include "model.h"
#include "platform.h"
#include "validate_int.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Categories checked: the shipped MAPE each aims for, and guards of its
   cross-validated figures (--fit; NAN: none). The test fails when a guard
   (here, or a source's in validate_report.c's `guards`) is passed; a category above its
   target passes with the report saying the target is not met. */
const struct vcat cats[] = {
    /* the guards: the cross-validated figures of 2026-11-24, when the fit and
       234 rows came in, rounded up to a whole percent plus one point; training
       set again the same day when the 25 Megatron-Bridge rows came in (new
       chips and software no constant was fitted on; the 20 older rows'
       errors did not change); inference's set again on 2026-11-27, lower,
       when vLLM's host time per step (--engine vllm) came in with the 10
       served rows (batches run in waves, which sim serve expresses);
       attention's and memory's lowered the same day, when
       matrix.sync_fraction and FlashAttention-2's launch order came in with
       the rows measured here (held out, never fitted: attention's 32 older
       rows 17.2% to 11.3% cross-validated, memory's 18 10.8% to 9.1%), and
       gemm's p90 set again then: the 50 GEMMs measured here, under 10 us or
       memory-bound among them, put it at 29.5% (the 72 older rows' 23-25%).
       gemm's bias, attention's three, memory's p90 and training_import's p90
       set again later that day, with no change to the model, when 247 rows
       measured on a second and a third H100 and on an H200 came in (never
       fitted on: held out like the first lease's): H200's FlashAttention-2
       rows -13% to -40%, its decode kernel -45%, the GEMVs and GEMMs under
       10 us -20% to -50% on both chips, and eager steps whose profiled host
       is slower than the timed one (tests/validation/measured/README.md).
       attention's and training's lowered on 2026-11-29, when the warp-specialized kernels' step (one consumer
       warpgroup's lane work after the matrix time), impl=cudnn with the 104 cuDNN rows measured here, and the
       energy prior by process node came in: attention 13.1% to 9.8% cross-validated (bias -8.7% to -5.9%, p90
       20.2% to 17.5%), training 8.6% to 7.2% (bias -0.4% to -1.8%, p90 20.1% to 14.3%), which meets the targets,
       so its MAPE guard is the target's. attention's p90 set again later that day (21.0%, from 17.5%), when 58 rows of
       FlashAttention-2's decode kernel measured here on an H200 came in (held out, never fitted; one query token
       against 512 to 32768 keys) with the combine kernel's chain of loads, which took those rows from 18.8% to 13.5%
       and the category's cross-validated MAPE and bias within their guards (10.8%, -6.5%); the old rows' p90 did not
       move */
    {"gemm", 0.10, 0.12, 0.05, 0.31},
    {"attention", 0.12, 0.11, 0.07, 0.22},
    {"memory", 0.10, 0.11, 0.03, 0.27},
    {"sim_validation", 0.12, 0.14, 0.08, 0.20},
    {"collective", 0.10, 0.40, 0.10, 0.80},
    {"training", 0.10, 0.08, 0.03, 0.16},
    {"inference", 0.10, 0.41, 0.38, 0.70},
    /* cuDNN's convolutions (forward, dgrad, wgrad, and the two together), measured here on 2026-11-28 on an
       H200 (ResNet-50's layers at batch 64): never fitted on, scored apart from the GEMMs they are lowered to;
       the guards are that day's figures (23.1%, -16.2%, 46.7%) set as above */
    {"conv", 0.10, 0.25, 0.18, 0.48},
    /* the clock the device model runs a sustained GEMM at, against the SM clock NVML read (an H200 at its 700 W
       limit, all SMs or fewer, 2026-11-28): never fitted on; the guards are that day's figures (6.6%, +1.3%,
       13.3%) set as above */
    {"clock", 0.10, 0.08, 0.03, 0.15},
    /* the training rows of mixture-of-experts models (a case whose sim gen
       model has experts), scored apart from the dense ones since 2026-11-25,
       when the first 13 (Megatron-Bridge's Qwen3 30B-A3B) came in: expert
       routing, all-to-all dispatch and the dispatcher's permutations are
       mechanisms the dense rows never exercise, and NeMo containers months
       apart differ by up to 70% on the same chips */
    /* eager PyTorch training steps replayed from their profiler (Kineto) traces, `import` cases: scored apart since
       2026-11-27, when the first 3 came in (measured here), for they time the importer's mapping of a recorded
       step (eager row kernels, cuDNN attention, the host's gaps), not sim gen's Megatron-style step */
    {"training_import", 0.10, 0.23, 0.23, 0.40},
    {"training_moe", 0.10, 0.36, 0.26, 0.52}, /* last two: the report's text says so */
};
_Static_assert(sizeof cats / sizeof cats[0] == NCATS, "NCATS (validate_int.h) counts the categories");

struct meas *ms;
int nms;
struct ratio *rs;
int nrs;
struct vcase *vs;
int nvs;
struct chipent *chips;
int nchips;
struct skip *sk;
int nsk;
static int failures;
int no_steps;
char srcs[MAX_SRCS][96];
int nsrcs;

static int source_index(const char *source)
{
	char key[96];
	size_t n = strcspn(source, " \t");
	snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), source);
	for (int i = 0; i < nsrcs; i++)
		if (!strcmp(srcs[i], key))
			return i;
	if (nsrcs == MAX_SRCS)
		return MAX_SRCS - 1;
	snprintf(srcs[nsrcs], sizeof srcs[nsrcs], "%s", key);
	return nsrcs++;
}

void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("validate: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	return q;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

int split_tabs(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;
	size_t len = strlen(p);
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
		p[--len] = '\0';
	while (n < max) {
		f[n++] = p;
		char *t = strchr(p, '\t');
		if (!t)
			break;
		*t = '\0';
		p = t + 1;
	}
	return n;
}

int cat_index(const char *name)
{
	for (int i = 0; i < NCATS; i++)
		if (!strcmp(cats[i].name, name))
			return i;
	return -1;
}

int find_meas(const char *id)
{
	for (int i = 0; i < nms; i++)
		if (!strcmp(ms[i].id, id))
			return i;
	return -1;
}

static int read_measurements(const char *path, int lent)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "validate: cannot open %s\n", path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		char *fl[10];
		if (lineno == 1)
			continue; /* header */
		if (!trim(line)[0])
			continue;
		int n = split_tabs(line, fl, 10);
		if (n < 9) {
			fail("%s:%d: expected 10 tab-separated columns, found %d", path, lineno, n);
			continue;
		}
		if (find_meas(fl[0]) >= 0) {
			fail("%s:%d: %s: duplicate id", path, lineno, fl[0]);
			continue;
		}
		ms = xrealloc(ms, (size_t)(nms + 1) * sizeof *ms);
		struct meas *m = &ms[nms++];
		memset(m, 0, sizeof *m);
		snprintf(m->id, sizeof m->id, "%s", fl[0]);
		snprintf(m->cat, sizeof m->cat, "%s", fl[1]);
		snprintf(m->device, sizeof m->device, "%s", fl[2]);
		snprintf(m->value_text, sizeof m->value_text, "%s", fl[6]);
		snprintf(m->unit, sizeof m->unit, "%s", fl[7]);
		snprintf(m->source, sizeof m->source, "%s", fl[8]);
		m->line = lineno;
		m->lent = lent;
		char *end;
		m->value = strtod(fl[6], &end);
		if (end == fl[6] || *end || !(m->value > 0))
			fail("%s:%d: %s: value '%s' is not a positive number", path, lineno, m->id, fl[6]);
	}
	free(line);
	fclose(f);
	return 0;
}

static int parse_metric(const char *text, struct vcase *v)
{
	static const char *const names[] = {"tflops",   "ms",   "us",     "GBps=",   "Gelems=", "busbw",
	                                    "megatron", "mfu=", "tokens", "latency", "mcore",   "mhz"};
	_Static_assert(sizeof names / sizeof names[0] == M_COUNT, "a name per metric");
	for (int i = 0; i < M_COUNT; i++) {
		size_t n = strlen(names[i]);
		if (names[i][n - 1] != '=') {
			if (!strcmp(text, names[i])) {
				v->metric = (enum metric)i;
				v->metric_arg = 0;
				return 0;
			}
			continue;
		}
		if (strncmp(text, names[i], n))
			continue;
		char *end;
		double a = strtod(text + n, &end);
		if (end == text + n || *end || !(a > 0))
			return -1;
		v->metric = (enum metric)i;
		v->metric_arg = a;
		return 0;
	}
	return -1;
}

int split_list(const char *text, char sep, char (*out)[320], int max, size_t outlen)
{
	char buf[2048];
	snprintf(buf, sizeof buf, "%s", text);
	int n = 0;
	char *p = buf;
	for (;;) {
		char *s = strchr(p, sep);
		if (s)
			*s = '\0';
		char *t = trim(p);
		if (!t[0] || n >= max || strlen(t) >= outlen)
			return -1;
		snprintf(out[n++], outlen, "%s", t);
		if (!s)
			break;
		p = s + 1;
	}
	return n;
}

/* Whether the measurement's unit is the metric's: tokens/s also matches
   "tokens/s (8 GPUs total)". */
static int unit_ok(enum metric m, const char *unit)
{
	if (m == M_TOKENS)
		return !strncmp(unit, "tokens/s", 8) && (!unit[8] || unit[8] == ' ');
	return !strcmp(metric_unit[m], unit);
}

/* A serving case: `serve ARGS` alone (no options after ';'). 0, or -1 with why. */
static int parse_serve_case(struct vcase *v, char *why, size_t len)
{
	if (v->nops > 1) {
		snprintf(why, len, "a serve case takes no options after ';'");
		return -1;
	}
	return vserve_config(v->op_text[0] + 6, &v->so, &v->gc, why, len);
}

/* An import case's `PATH [--host graph] [--profiler-overhead TIME]`: the options of `sim import kineto` that
   describe how the measurement was taken (a CUDA graph's replay; unprofiled steps), never a figure of it. */
static int parse_import(struct vcase *v, const char *text, char *why, size_t whylen)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", text);
	char *save = NULL, *tok = strtok_r(buf, " ", &save);
	if (!tok) {
		snprintf(why, whylen, "import: expected a path");
		return -1;
	}
	snprintf(v->import_path, sizeof v->import_path, "%s", tok);
	while ((tok = strtok_r(NULL, " ", &save))) {
		const char *val = strtok_r(NULL, " ", &save);
		char bad[256];
		int rc = val ? imp_host_option(&v->import_opts, tok, val, bad, sizeof bad) : 1;
		if (rc) {
			snprintf(why, whylen, "import: %s",
			         rc < 0 ? bad : "expected --host graph|recorded or --profiler-overhead TIME");
			return -1;
		}
	}
	return 0;
}

/* A `gen` case's ops column: `gen ARGS` (what follows `sim gen`), then
   options separated by ';': attn=IMPL runs every attention of the trace
   with that kernel (naive: the separate kernels of an eager framework);
   memory=unchecked drops the trace's memory statements; ranks_per_node=N
   places N ranks on each node (sim run --ranks-per-node). */
static int parse_gen_case(struct vcase *v, char *why, size_t whylen)
{
	int first = 0; /* the gen command's place in the ops list */
	if (!strncmp(v->op_text[0], "import ", 7)) {
		/* `import PATH [OPTIONS] ; gen ...`: the recorded step, and what it computes */
		if (parse_import(v, v->op_text[0] + 7, why, whylen))
			return -1;
		if (v->nops == 1 && v->metric == M_MS) /* the step time: nothing to count */
			return 0;
		if (v->nops != 2 || strncmp(v->op_text[1], "gen ", 4)) {
			snprintf(why, whylen,
			         "an import case is 'import PATH ; gen ARGS' (the gen command gives its tokens), or "
			         "'import PATH' alone with metric ms (its step time)");
			return -1;
		}
		first = 1;
	}
	for (int i = first + 1; i < v->nops; i++) {
		const char *o = v->op_text[i];
		if (!strncmp(o, "attn=", 5) && (!strcmp(o + 5, "naive") || !strcmp(o + 5, "flash3"))) {
			snprintf(v->attn, sizeof v->attn, "%s", o + 5);
			continue;
		}
		if (!strcmp(o, "memory=unchecked")) {
			v->nomem = 1;
			continue;
		}
		if (!strncmp(o, "ranks_per_node=", 15)) {
			char *end;
			long n = strtol(o + 15, &end, 10);
			if (*end || n < 1 || n > 65536) {
				snprintf(why, whylen, "gen case option '%.200s': expected an integer from 1 to 65536",
				         o);
				return -1;
			}
			v->rpn = (int)n;
			continue;
		}
		snprintf(
		    why, whylen,
		    "unknown gen case option '%.200s' (expected attn=naive|flash3, memory=unchecked, ranks_per_node=N)",
		    o);
		return -1;
	}
	return vgen_config(v->op_text[first] + 4, &v->gc, why, whylen);
}

static int parse_coll(const char *text, struct vcoll *vc, char *why, size_t whylen)
{
	char buf[320], *save = NULL;
	snprintf(buf, sizeof buf, "%s", text + 5);
	memset(vc, 0, sizeof *vc);
	vc->on = 1;
	vc->c = CO_COUNT;
	vc->algo = COLL_AUTO;
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '=');
		if (!eq) {
			snprintf(why, whylen, "coll: '%s' is not key=value", w);
			return -1;
		}
		*eq++ = '\0';
		if (!strcmp(w, "op")) {
			for (int c = 0; c < CO_COUNT; c++)
				if (!strcmp(eq, tr_coll_name((enum tr_coll)c)))
					vc->c = (enum tr_coll)c;
		} else if (!strcmp(w, "bytes")) {
			if (units_parse(eq, UNIT_BYTES, &vc->bytes, why, whylen))
				return -1;
		} else if (!strcmp(w, "ranks")) {
			vc->ranks = atoi(eq);
		} else if (!strcmp(w, "algo")) {
			vc->algo = coll_algo_find(eq);
			if (vc->algo == COLL_UNKNOWN) {
				snprintf(why, whylen, "coll: unknown algo=%s", eq);
				return -1;
			}
		} else {
			snprintf(why, whylen, "coll: unknown key %s (expected op bytes ranks algo)", w);
			return -1;
		}
	}
	if (vc->c == CO_COUNT || !(vc->bytes > 0) || vc->ranks < 2) {
		snprintf(why, whylen, "coll: needs op=, bytes= and ranks= (at least 2)");
		return -1;
	}
	return 0;
}

static int predict_coll(const struct arch_chip *c, const struct vcoll *vc, double *t, char *why, size_t whylen)
{
	struct topo tp;
	struct coll_plan p;
	int *mem = malloc((size_t)vc->ranks * sizeof *mem);
	if (!mem)
		return -1;
	for (int i = 0; i < vc->ranks; i++)
		mem[i] = i;
	int rc = platform_topo(c, vc->ranks, 0, &tp, why, whylen);
	if (!rc)
		rc = coll_plan(&tp, vc->c, vc->algo, vc->bytes, NULL, mem, vc->ranks, 0, &p, why, whylen);
	free(mem);
	if (!rc)
		*t = p.lat_s + p.bw_s;
	return rc;
}

static int find_chip(const char *config, const char *sets_text)
{
	for (int i = 0; i < nchips; i++)
		if (!strcmp(chips[i].config, config) && !strcmp(chips[i].sets_text, sets_text))
			return i;
	return -1;
}

/* Reads tests/validation/NAME: row(fields, line) for every line that is not
   blank or a comment and has exactly ncols tab-separated fields; another
   count is an error naming the columns. */
static void read_tsv(const char *root, const char *name, int ncols, const char *cols,
                     void (*row)(char **fl, int lineno))
{
	char path[1200];
	snprintf(path, sizeof path, "%s/tests/validation/%s", root, name);
	FILE *f = fopen(path, "r");
	if (!f) {
		fail("cannot open %s", path);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		char *t = trim(line);
		if (!t[0] || t[0] == '#')
			continue;
		char *fl[8];
		int n = split_tabs(line, fl, 8);
		if (n != ncols)
			fail("%s:%d: expected %d tab-separated columns (%s), found %d", name, lineno, ncols, cols, n);
		else
			row(fl, lineno);
	}
	free(line);
	fclose(f);
}

static void case_row(char **fl, int lineno)
{
	vs = xrealloc(vs, (size_t)(nvs + 1) * sizeof *vs);
	struct vcase *v = &vs[nvs];
	memset(v, 0, sizeof *v);
	v->line = lineno;
	v->chip = -1;
	snprintf(v->id, sizeof v->id, "%s", trim(fl[0]));
	v->meas = find_meas(v->id);
	if (v->meas < 0) {
		fail("cases.tsv:%d: %s: no such id in the measurements file", lineno, v->id);
		return;
	}
	struct meas *m = &ms[v->meas];
	if (m->in_cases) {
		fail("cases.tsv:%d: %s: listed twice", lineno, v->id);
		return;
	}
	m->in_cases = 1;
	if (cat_index(m->cat) < 0) {
		fail("cases.tsv:%d: %s: category '%s' is not validated here", lineno, v->id, m->cat);
		return;
	}
	snprintf(v->config, sizeof v->config, "%s", trim(fl[1]));
	snprintf(v->sets_text, sizeof v->sets_text, "%s", trim(fl[2]));
	if (strcmp(v->sets_text, "-")) {
		v->nsets = split_list(v->sets_text, ';', v->sets, MAX_SETS, sizeof v->sets[0]);
		if (v->nsets < 0) {
			fail("cases.tsv:%d: %s: bad sets '%s' (expected - or path=value;path=value, at most %d)",
			     lineno, v->id, v->sets_text, MAX_SETS);
			return;
		}
	}
	for (int i = 0; i < v->nsets; i++) {
		size_t klen = strcspn(v->sets[i], "=");
		const char *leaf = v->sets[i];
		for (size_t j = 0; j < klen; j++)
			if (v->sets[i][j] == '.')
				leaf = v->sets[i] + j + 1;
		if (!strncmp(leaf, "clock", 5) || !strncmp(leaf, "tensor_clock", 12)) {
			fail("cases.tsv:%d: %s: sets %.*s: a clock measured during the run is not an input of its "
			     "prediction (the power model derives the clock under load)",
			     lineno, v->id, (int)klen, v->sets[i]);
			return;
		}
		if (!strncmp(v->sets[i], "model.", 6))
			v->cond = 1;
	}
	v->src = source_index(m->source);
	if (parse_metric(trim(fl[3]), v)) {
		fail("cases.tsv:%d: %s: bad metric '%s' (expected "
		     "tflops|ms|us|GBps=<bytes>|Gelems=<n>|busbw|megatron|mfu=<peak TFLOP/s>|tokens|latency|mcore)",
		     lineno, v->id, fl[3]);
		return;
	}
	if (!unit_ok(v->metric, m->unit)) {
		fail("cases.tsv:%d: %s: metric %s gives %s but the measurement is in %s", lineno, v->id, trim(fl[3]),
		     metric_unit[v->metric], m->unit);
		return;
	}
	snprintf(v->ops_text, sizeof v->ops_text, "%s", trim(fl[4]));
	v->nops = split_list(v->ops_text, ';', v->op_text, MAX_OPS, sizeof v->op_text[0]);
	if (v->nops < 0) {
		fail("cases.tsv:%d: %s: bad ops list (1 to %d ops separated by ' ; ')", lineno, v->id, MAX_OPS);
		return;
	}
	v->serve = !strncmp(v->op_text[0], "serve ", 6);
	v->gen = v->serve || !strncmp(v->op_text[0], "gen ", 4) || !strncmp(v->op_text[0], "import ", 7);
	/* ms: the op lines' summed time, or an imported step's time */
	if (v->gen != GEN_METRIC(v->metric) && !(v->metric == M_MS && !strncmp(v->op_text[0], "import ", 7))) {
		fail("cases.tsv:%d: %s: metric %s is for %s", lineno, v->id, trim(fl[3]),
		     v->gen ? "op lines, not a gen case" : "a gen case, not op lines");
		return;
	}
	int bad = 0;
	if (v->gen) {
		char why[WHYLEN];
		if (v->serve ? parse_serve_case(v, why, sizeof why) : parse_gen_case(v, why, sizeof why)) {
			fail("%s: %s", v->id, why);
			snprintf(v->why, sizeof v->why, "%.900s", why);
			bad = 1;
		} else if (!strcmp(m->cat, "training") && v->import_path[0]) {
			/* a recorded eager step replayed is scored on its own */
			snprintf(m->cat, sizeof m->cat, "training_import");
		} else if (!strcmp(m->cat, "training") && v->gc.m.experts) {
			/* mixture-of-experts training is scored on its own */
			snprintf(m->cat, sizeof m->cat, "training_moe");
		}
		if (!bad && v->gc.mode != GEN_TRAIN &&
		    (v->metric == M_MCORE || v->metric == M_MEGATRON || v->metric == M_MFU)) {
			fail("cases.tsv:%d: %s: metric %s counts the FLOPs of a training step (the case is --mode "
			     "infer)",
			     lineno, v->id,
			     v->metric == M_MCORE      ? "mcore"
			     : v->metric == M_MEGATRON ? "megatron"
			                               : "mfu=");
			bad = 1;
		}
	}
	for (int i = 0; i < v->nops && !bad && !v->gen; i++) {
		char why[WHYLEN];
		if (!strncmp(v->op_text[i], "coll ", 5) ? parse_coll(v->op_text[i], &v->coll[i], why, sizeof why)
		                                        : op_parse(v->op_text[i], NULL, &v->ops[i], why, sizeof why)) {
			fail("%s: op '%s': %s", v->id, v->op_text[i], why);
			snprintf(v->why, sizeof v->why, "op does not parse: %.900s", why);
			bad = 1;
		}
	}
	nvs++;
	if (bad)
		return;
	v->chip = find_chip(v->config, v->sets_text);
	if (v->chip < 0) {
		chips = xrealloc(chips, (size_t)(nchips + 1) * sizeof *chips);
		struct chipent *ce = &chips[nchips];
		memset(ce, 0, sizeof *ce);
		snprintf(ce->config, sizeof ce->config, "%s", v->config);
		snprintf(ce->sets_text, sizeof ce->sets_text, "%s", v->sets_text);
		v->chip = nchips++;
	}
}

static void read_cases(const char *root)
{
	read_tsv(root, "cases.tsv", 5, "id config sets metric ops", case_row);
}

static void skipped_row(char **fl, int lineno)
{
	if (!trim(fl[1])[0]) {
		fail("skipped.tsv:%d: expected 2 tab-separated columns (id reason)", lineno);
		return;
	}
	int mi = find_meas(trim(fl[0]));
	if (mi < 0) {
		fail("skipped.tsv:%d: %s: no such id in the measurements file", lineno, trim(fl[0]));
		return;
	}
	if (ms[mi].in_skipped) {
		fail("skipped.tsv:%d: %s: listed twice", lineno, ms[mi].id);
		return;
	}
	if (cat_index(ms[mi].cat) < 0) {
		fail("skipped.tsv:%d: %s: category '%s' is not validated here", lineno, ms[mi].id, ms[mi].cat);
		return;
	}
	if (strlen(trim(fl[1])) >= sizeof sk->reason) {
		fail("skipped.tsv:%d: %s: reason of %zu characters (at most %zu)", lineno, ms[mi].id,
		     strlen(trim(fl[1])), sizeof sk->reason - 1);
		return;
	}
	ms[mi].in_skipped = 1;
	sk = xrealloc(sk, (size_t)(nsk + 1) * sizeof *sk);
	snprintf(sk[nsk].id, sizeof sk[nsk].id, "%s", ms[mi].id);
	snprintf(sk[nsk].reason, sizeof sk[nsk].reason, "%s", trim(fl[1]));
	nsk++;
}

static void read_skipped(const char *root)
{
	read_tsv(root, "skipped.tsv", 2, "id reason", skipped_row);
}

static int find_case(const char *id)
{
	for (int i = 0; i < nvs; i++)
		if (!strcmp(vs[i].id, id))
			return i;
	return -1;
}

/* Whether a unit is a time (a ratio of two times is inverted): ms, us, or
   seconds ("s", "s (end-to-end batch latency)"). */
static int time_unit(const char *unit)
{
	return !strcmp(unit, "ms") || !strcmp(unit, "us") || !strcmp(unit, "s") || !strncmp(unit, "s (", 3);
}

static void ratio_row(char **fl, int lineno)
{
	rs = xrealloc(rs, (size_t)(nrs + 1) * sizeof *rs);
	struct ratio *r = &rs[nrs++];
	memset(r, 0, sizeof *r);
	r->line = lineno;
	snprintf(r->a, sizeof r->a, "%s", trim(fl[0]));
	snprintf(r->b, sizeof r->b, "%s", trim(fl[1]));
	snprintf(r->chips, sizeof r->chips, "%s", trim(fl[2]));
	snprintf(r->work, sizeof r->work, "%s", trim(fl[3]));
	snprintf(r->basis, sizeof r->basis, "%s", trim(fl[4]));
	r->va = find_case(r->a);
	r->vb = find_case(r->b);
	if (r->va < 0 || r->vb < 0) {
		fail("ratios.tsv:%d: %s: not a case of cases.tsv", lineno, r->va < 0 ? r->a : r->b);
		return;
	}
	if (r->va == r->vb) {
		fail("ratios.tsv:%d: %s: a pair of one row", lineno, r->a);
		return;
	}
	const struct meas *ma = &ms[vs[r->va].meas], *mb = &ms[vs[r->vb].meas];
	if (strcmp(ma->unit, mb->unit)) {
		fail("ratios.tsv:%d: %s/%s: units differ (%s, %s)", lineno, r->a, r->b, ma->unit, mb->unit);
		r->va = r->vb = -1;
	}
}

static void read_ratios(const char *root)
{
	read_tsv(root, "ratios.tsv", 5, "a b chips workload basis", ratio_row);
}

/* Each pair's measured and predicted speed-up of a over b (> 1: a is faster)
   and the ratio's error. */
static void compute_ratios(void)
{
	for (int i = 0; i < nrs; i++) {
		struct ratio *r = &rs[i];
		if (r->va < 0 || r->vb < 0)
			continue;
		const struct vcase *a = &vs[r->va], *b = &vs[r->vb];
		if (no_steps && (a->gen || b->gen)) {
			r->skipped = 1;
			continue;
		}
		r->cond = a->cond || b->cond;
		if (!a->ok || !b->ok) {
			fail("ratio %s/%s: %s has no prediction", r->a, r->b, !a->ok ? r->a : r->b);
			continue;
		}
		double ma = ms[a->meas].value, mb = ms[b->meas].value;
		int inv = time_unit(ms[a->meas].unit);
		r->meas = inv ? mb / ma : ma / mb;
		r->pred = inv ? b->pred / a->pred : a->pred / b->pred;
		r->err = (r->pred - r->meas) / r->meas;
		r->ok = 1;
	}
}

double ratio_mape(int *n)
{
	double sum = 0;
	*n = 0;
	for (int i = 0; i < nrs; i++)
		if (rs[i].ok && !rs[i].cond) {
			sum += fabs(rs[i].err);
			(*n)++;
		}
	return *n ? sum / *n : NAN;
}

static int ratios_run(void)
{
	int n = 0;
	for (int i = 0; i < nrs; i++)
		n += !rs[i].skipped && !rs[i].cond;
	return n;
}

static void check_coverage(void)
{
	for (int i = 0; i < nms; i++) {
		if (cat_index(ms[i].cat) < 0)
			continue;
		if (ms[i].in_cases && ms[i].in_skipped) {
			/* replayed, not scored: the case is the best reading of the run, the reason why it is not
			 * scored */
			for (int j = 0; j < nvs; j++)
				if (vs[j].meas == i)
					vs[j].unscored = vs[j].cond = 1;
		} else if (!ms[i].in_cases && !ms[i].in_skipped)
			fail("%s (%s): in neither cases.tsv nor skipped.tsv", ms[i].id, ms[i].cat);
	}
}

static struct arch_chip *load_chip(const char *root, const struct vcase *v, const char *extra, char *why, size_t whylen)
{
	char path[1200];
	const char *sets[MAX_SETS + 1];
	int n = 0;
	snprintf(path, sizeof path, "%s/%s", root, v->config);
	for (int i = 0; i < v->nsets; i++)
		sets[n++] = v->sets[i];
	if (extra)
		sets[n++] = extra;
	struct arch_error err;
	memset(&err, 0, sizeof err);
	struct arch_chip *c = arch_load(path, sets, n, &err);
	if (!c) {
		if (err.line > 0)
			snprintf(why, whylen, "%.300s:%d: %.600s", err.file[0] ? err.file : v->config, err.line,
			         err.msg);
		else
			snprintf(why, whylen, "%.300s: %.600s", err.file[0] ? err.file : v->config, err.msg);
	}
	return c;
}

/* The case's prediction in the measurement's unit; -1 with why on failure. */
int predict(const struct arch_chip *c, const struct vcase *v, double *out, char *why, size_t whylen)
{
	double t = 0, flops = 0, clock_hz = 0;
	for (int i = 0; i < v->nops; i++) {
		struct dm_result r;
		char w[WHYLEN] = "";
		memset(&r, 0, sizeof r);
		if (v->coll[i].on) {
			if (predict_coll(c, &v->coll[i], &r.time_s, w, sizeof w)) {
				snprintf(why, whylen, "'%.300s': %.600s", v->op_text[i],
				         w[0] ? w : "prediction failed");
				return -1;
			}
		} else if (dm_predict(c, &v->ops[i], &r, NULL, w, sizeof w)) {
			snprintf(why, whylen, "'%.300s': %.600s", v->op_text[i], w[0] ? w : "prediction failed");
			return -1;
		}
		if (!(r.time_s > 0) || !isfinite(r.time_s)) {
			snprintf(why, whylen, "'%.300s': predicted time %g s is not positive", v->op_text[i], r.time_s);
			return -1;
		}
		t += r.time_s;
		if (!v->coll[i].on)
			flops += op_flops(&v->ops[i]);
		if (!v->coll[i].on && clock_hz == 0)
			clock_hz = r.clock_hz; /* the first op's */
	}
	switch (v->metric) {
	case M_TFLOPS: *out = flops / t / 1e12; break;
	case M_MS: *out = t * 1e3; break;
	case M_US: *out = t * 1e6; break;
	case M_GBPS:
	case M_GELEMS: *out = v->metric_arg / t / 1e9; break;
	case M_BUSBW:
		*out = 0;
		for (int i = 0; i < v->nops; i++)
			if (v->coll[i].on) {
				*out = v->coll[i].bytes * coll_busbw_factor(v->coll[i].c, v->coll[i].ranks) / t / 1e9;
				break;
			}
		break;
	case M_MHZ:
		if (!(clock_hz > 0)) {
			snprintf(why, whylen, "metric mhz: the case's first op has no clock (a collective?)");
			return -1;
		}
		*out = clock_hz / 1e6;
		break;
	case M_MEGATRON:
	case M_MFU:
	case M_TOKENS:
	case M_LATENCY:
	case M_MCORE:
	case M_COUNT: /* gen cases: predict_gen */ snprintf(why, whylen, "metric of a gen case"); return -1;
	}
	return 0;
}

/*
 * A gen case's prediction from its replayed step time t, computed the way
 * the measurement's source computed its figure (B sequences of s tokens per
 * step, l layers, hidden h, vocabulary V, on `ranks` GPUs):
 *
 *   megatron   TFLOP/s per GPU, Narayanan et al. SC21 eq. (3): F = 96 B s l h^2
 *              (1 + s/(6h) + V/(16 l h)) per iteration (full recomputation
 *              counted), divided by t x GPUs
 *   mfu=P      % MFU, Korthikanti et al. 2022: model FLOPs 72 B s l h^2 (1 +
 *              s/(6h) + V/(12 l h)) / (t x GPUs x P TFLOP/s)
 *   tokens     tokens/s: the step's tokens (training: B s; inference: the
 *              generated ones, batch x output length x replicas) / t
 *   latency    seconds: t itself (an inference batch's end-to-end latency)
 *   ms         milliseconds: t itself (an imported step's time)
 *   mcore      model TFLOP/s per GPU as Megatron-LM and Megatron-Bridge count
 *              them (gen_mcore_flops, workloads/gen.h), divided by t x GPUs
 */
double gen_metric(const struct vcase *v, double t)
{
	const struct gen_config *c = &v->gc;
	double B = (double)c->p.global_batch, s = (double)c->seq, l = (double)c->m.layers, h = (double)c->m.hidden,
	       V = (double)c->m.vocab, gpus = (double)v->ranks;
	switch (v->metric) {
	case M_MEGATRON: return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) / (t * gpus) / 1e12;
	case M_MFU:
		return 100 * 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) /
		       (t * gpus * v->metric_arg * 1e12);
	case M_TOKENS: return (v->serve ? v->served_tokens : gen_tokens(c)) / t;
	case M_LATENCY: return t;
	case M_MS: return t * 1e3;
	case M_MCORE: return gen_mcore_flops(c) / (t * gpus) / 1e12;
	default: return NAN;
	}
}

/* The work of replaying a gen case, roughly: the layer passes of a pipeline
   (micro-batches x layers for training, decode steps x layers for
   inference), each a representative's share of every stage. */
static double gen_cost(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	if (v->import_path[0] && v->nops == 1) /* an imported step alone: no gen command to size it */
		return 1;
	double steps = c->mode == GEN_TRAIN ? (double)gen_microbatches(c) : (double)gen_decode_steps(c) + 1;
	return steps * (double)c->m.layers;
}

static const struct vcase *cost_base;
static int cmp_cost(const void *pa, const void *pb)
{
	double a = gen_cost(&cost_base[*(const int *)pa]), b = gen_cost(&cost_base[*(const int *)pb]);
	return a != b ? (a < b ? 1 : -1) : *(const int *)pa - *(const int *)pb;
}

/* Serves every serving case in this process and sets its prediction. */
static void predict_serve(void)
{
	for (int i = 0; i < nvs; i++) {
		struct vcase *v = &vs[i];
		char why[WHYLEN];
		if (!v->serve || v->chip < 0 || !chips[v->chip].c)
			continue;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int rc = vserve_run(chips[v->chip].c, &v->gc, &v->so, &v->step_s, &v->served_tokens, why, sizeof why);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		v->wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
		if (rc) {
			fail("%s: serve: %s", v->id, why);
			snprintf(v->why, sizeof v->why, "serve: %.900s", why);
			continue;
		}
		v->ranks = v->so.replicas * (int)(v->gc.p.tp * v->gc.p.pp);
		v->nrep = v->ranks;
		v->pred = gen_metric(v, v->step_s);
		if (!(v->pred > 0) || !isfinite(v->pred)) {
			fail("%s: served in %g s gives %g", v->id, v->step_s, v->pred);
			snprintf(v->why, sizeof v->why, "served in %g s gives %g", v->step_s, v->pred);
			continue;
		}
		v->ok = 1;
		v->err = (v->pred - ms[v->meas].value) / ms[v->meas].value;
	}
}

/* Serves the serving cases, then replays every other gen case (a child
   process each, as many at a time as there are processors, the longest
   first) and sets its prediction. */
static void predict_gen(void)
{
	int n = 0;
	predict_serve();
	for (int i = 0; i < nvs; i++)
		n += vs[i].gen && !vs[i].serve && vs[i].chip >= 0 && chips[vs[i].chip].c;
	if (!n)
		return;
	struct vgen_set set;
	vgen_set_init(&set, n);
	int *idx = set.idx;
	for (int i = 0, j = 0; i < nvs; i++)
		if (vs[i].gen && !vs[i].serve && vs[i].chip >= 0 && chips[vs[i].chip].c)
			idx[j++] = i;
	cost_base = vs;
	qsort(idx, (size_t)n, sizeof *idx, cmp_cost);
	for (int j = 0; j < n; j++) {
		struct vcase *v = &vs[idx[j]];
		char cmd[400];
		snprintf(cmd, sizeof cmd, "%s", v->op_text[0] + 4);
		set.texts[j] = vcase_trace(v, &v->gc, cmd);
		set.chips[j] = chips[v->chip].c;
		set.rpn[j] = v->rpn;
	}
	set.m = n;
	vgen_set_run(&set);
	for (int j = 0; j < n; j++) {
		struct vcase *v = &vs[idx[j]];
		const struct vgen_result *r = &set.res[j];
		v->wall_s = r->wall_s;
		if (r->rc) {
			fail("%s: replay: %s", v->id, r->why);
			snprintf(v->why, sizeof v->why, "replay: %.900s", r->why);
			continue;
		}
		v->step_s = r->time_s;
		v->ranks = r->ranks;
		v->nrep = r->nrep;
		memcpy(v->fam_replay_s, r->fam_replay_s, sizeof v->fam_replay_s);
		memcpy(v->fam_meas_s, r->fam_meas_s, sizeof v->fam_meas_s);
		v->pred = gen_metric(v, v->step_s);
		if (!(v->pred > 0) || !isfinite(v->pred)) {
			fail("%s: step time %g s gives %g", v->id, v->step_s, v->pred);
			snprintf(v->why, sizeof v->why, "step time %g s gives %g", v->step_s, v->pred);
			continue;
		}
		v->ok = 1;
		v->err = (v->pred - ms[v->meas].value) / ms[v->meas].value;
	}
	vgen_set_free(&set);
}

int main(int argc, char **argv)
{
	enum { MAX_ALSO = 8 };
	const char *also[MAX_ALSO];
	int fit = 0, nalso = 0;
	const char *pos[3];
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fit"))
			fit = 1;
		else if (!strcmp(argv[i], "--no-steps"))
			no_steps = 1;
		else if (!strcmp(argv[i], "--also") && i + 1 < argc && nalso < MAX_ALSO)
			also[nalso++] = argv[++i];
		else if (npos < 3 && argv[i][0] != '-')
			pos[npos++] = argv[i];
		else
			npos = 99;
	}
	if (npos != 3) {
		fprintf(stderr, "usage: validate ROOT MEASUREMENTS_TSV OUT_MD [--also TSV]... [--fit] [--no-steps]\n");
		return 2;
	}
	const char *root = pos[0];
	if (read_measurements(pos[1], 0))
		return 1;
	for (int i = 0; i < nalso; i++)
		if (read_measurements(also[i], 1))
			return 1;
	read_cases(root);
	for (int i = 0; i < nvs; i++) {
		char why[WHYLEN];
		if (vs[i].import_path[0] && !vs[i].why[0] && vcase_import(&vs[i], root, why, sizeof why)) {
			fail("%s: %s", vs[i].id, why);
			snprintf(vs[i].why, sizeof vs[i].why, "%.900s", why);
		}
	}
	read_skipped(root);
	read_ratios(root);
	check_coverage();

	/* Load each distinct config + overrides once. */
	for (int ci = 0; ci < nchips; ci++) {
		const struct vcase *first = NULL;
		for (int i = 0; i < nvs && !first; i++)
			if (vs[i].chip == ci)
				first = &vs[i];
		char why[WHYLEN];
		chips[ci].c = load_chip(root, first, NULL, why, sizeof why);
		if (!chips[ci].c)
			for (int i = 0; i < nvs; i++)
				if (vs[i].chip == ci) {
					fail("%s: config: %s", vs[i].id, why);
					snprintf(vs[i].why, sizeof vs[i].why, "config: %.900s", why);
				}
	}
	double t0 = wall_now();
	if (!no_steps) {
		predict_gen();
		double tm = wall_now();
		fprintf(stderr, "validate: whole steps replayed in %.1f s\n", tm - t0);
		mech_run(root);
		fprintf(stderr, "validate: mechanisms replayed in %.1f s\n", wall_now() - tm);
	}
	double tt = wall_now();
	traces_run(root);
	fprintf(stderr, "validate: third-party traces imported and replayed in %.1f s\n", wall_now() - tt);
	double gen_wall = wall_now() - t0;
	fprintf(stderr, "validate: whole steps, mechanisms and traces replayed in %.1f s\n", gen_wall);
	for (int i = 0; i < nvs; i++) {
		struct vcase *v = &vs[i];
		if (v->chip < 0 || !chips[v->chip].c || v->gen)
			continue;
		char why[WHYLEN];
		if (predict(chips[v->chip].c, v, &v->pred, why, sizeof why)) {
			fail("%s: %s", v->id, why);
			snprintf(v->why, sizeof v->why, "%.900s", why);
			continue;
		}
		v->ok = 1;
		v->err = (v->pred - ms[v->meas].value) / ms[v->meas].value;
	}
	int nok = 0;
	for (int i = 0; i < nvs; i++)
		nok += vs[i].ok;

	compute_ratios();
	int nratio;
	double rmape = ratio_mape(&nratio);
	check_guards();
	struct catstat cs[NCATS], all = stats_of(-1);
	for (int c = 0; c < NCATS; c++)
		cs[c] = stats_of(c);
	int *order = malloc(sizeof(int) * (size_t)(nok + 1));
	if (!order)
		return 1;
	int nord = 0;
	for (int i = 0; i < nvs; i++)
		if (vs[i].ok && !vs[i].cond)
			order[nord++] = i;
	qsort(order, (size_t)nord, sizeof *order, cmp_worst);

	/* the fit and its out-of-sample scores, with their guards */
	struct cvstat cv[NCATS], cvall;
	if (fit) {
		double tf = wall_now();
		fprintf(stderr, "validate: op rows predicted in %.1f s; fitting\n", tf - t0 - gen_wall);
		fit_and_score();
		fprintf(stderr, "validate: fitted and cross-validated in %.1f s\n", wall_now() - tf);
		cvall = cvstats_of(-1);
		for (int c = 0; c < NCATS; c++) {
			cv[c] = cvstats_of(c);
			if (!cv_within(&cv[c], cats[c].cv_mape, cats[c].cv_bias, cats[c].cv_p90))
				fail("%s: cross-validated MAPE %.1f%%, bias %+.1f%%, p90 %.1f%% exceed the guards "
				     "%.0f%%, "
				     "%.0f%%, %.0f%%",
				     cats[c].name, 100 * cv[c].mape_cv, 100 * cv[c].bias_cv, 100 * cv[c].p90_cv,
				     100 * cats[c].cv_mape, 100 * cats[c].cv_bias, 100 * cats[c].cv_p90);
		}
	}

	/* stdout: the summary and the worst rows */
	char b1[32], b2[32], b3[32], b4[32];
	printf("%-15s %5s %8s %8s %8s %9s  %s\n", "category", "rows", "MAPE", "bias", "sd", "target", "result");
	for (int c = 0; c < NCATS; c++) {
		pct(b1, sizeof b1, cs[c].n ? cs[c].mape : NAN);
		spct(b2, sizeof b2, cs[c].n ? cs[c].bias : NAN);
		pct(b3, sizeof b3, cs[c].sd);
		pct(b4, sizeof b4, cats[c].target);
		printf("%-15s %5d %8s %8s %8s %9s  %s\n", cats[c].name, rows_in(c), b1, b2, b3, b4,
		       verdict(c, cs, fit ? cv : NULL));
		if (fit) {
			pct(b1, sizeof b1, cv[c].mape_in);
			pct(b2, sizeof b2, cv[c].mape_cv);
			spct(b3, sizeof b3, cv[c].bias_cv);
			pct(b4, sizeof b4, cv[c].p90_cv);
			printf("%-15s %5s in-sample %s, cross-validated %s, bias %s, p90 %s\n", "", "", b1, b2, b3, b4);
		}
	}
	pct(b1, sizeof b1, all.n ? all.mape : NAN);
	spct(b2, sizeof b2, all.n ? all.bias : NAN);
	pct(b3, sizeof b3, all.sd);
	printf("%-15s %5d %8s %8s %8s\n", "all", all.n, b1, b2, b3);
	pct(b1, sizeof b1, rmape);
	pct(b4, sizeof b4, ratio_target);
	printf("%-15s %5d %8s %8s %8s %9s  %s\n", "ratios", ratios_run(), b1, "", "", b4,
	       nratio < ratios_run()            ? "FAIL (pairs failed)"
	       : guard_failed("ratios")         ? "FAIL (a source's guard)"
	       : nratio && rmape > ratio_target ? "pass (target not met)"
	                                        : "pass");
	int ngen = 0;
	for (int i = 0; i < nvs; i++)
		if (vs[i].gen && vs[i].wall_s > 0) {
			if (!ngen++)
				printf("\ntraining and inference rows (replayed steps):\n");
			spct(b1, sizeof b1, vs[i].ok ? vs[i].err : NAN);
			printf(
			    "  %-5s step %9.4g s on %5d ranks (%4d replayed)  predicted %10.4g  measured %10s  error "
			    "%7s  replay %.1f s%s\n",
			    vs[i].id, vs[i].step_s, vs[i].ranks, vs[i].nrep, vs[i].pred, ms[vs[i].meas].value_text, b1,
			    vs[i].wall_s, vs[i].unscored ? "  (not scored)" : "");
		}
	if (ngen)
		printf("  %d replays in %.1f s (wall clock)\n", ngen, gen_wall);
	printf("\nworst rows:\n");
	for (int i = 0; i < nord && i < NWORST; i++) {
		const struct vcase *v = &vs[order[i]];
		spct(b1, sizeof b1, v->err);
		printf("  %-5s %-44.44s predicted %10.4g  measured %10s %-12s error %s\n", v->id, ms[v->meas].device,
		       v->pred, ms[v->meas].value_text, ms[v->meas].unit, b1);
	}

	FILE *f = fopen(pos[2], "w");
	if (!f) {
		fprintf(stderr, "validate: cannot write %s\n", pos[2]);
		return 1;
	}
	write_report(f, cs, &all, order, nord, fit ? cv : NULL, fit ? &cvall : NULL);
	if (fclose(f)) {
		fprintf(stderr, "validate: cannot write %s\n", pos[2]);
		return 1;
	}

	for (int i = 0; i < nchips; i++)
		if (chips[i].c)
			arch_free(chips[i].c);
	free(chips);
	for (int i = 0; i < nvs; i++)
		free(vs[i].imported);
	free(vs);
	free(ms);
	free(sk);
	free(rs);
	free(order);
	fit_free();
	mech_free();
	traces_free();
	if (failures) {
		fprintf(stderr, "validate: %d problem%s\n", failures, failures == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
