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
 * (`guards`). Exit 0 when all of that holds, 1 otherwise (the reasons go to
 * stderr, one line each), 2 on a usage error.
 *
 * It prints the per-category summary and the five worst rows, and writes a
 * Markdown report (docs/validation.md is that file). With --fit, fit.c fits
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
   (here, or a source's in `guards` below) is passed; a category above its
   target passes with the report saying the target is not met. */
static const struct {
	const char *name;
	double target;                   /* MAPE of the rows as shipped */
	double cv_mape, cv_bias, cv_p90; /* guards of the cross-validated figures */
} cats[] = {
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
#define NCATS (int)(sizeof cats / sizeof cats[0])

/* What the cross-validated figures of every category aim for (issue 16). */
static const double cv_target_mape = 0.08, cv_target_bias = 0.04, cv_target_p90 = 0.20;

/* What the ratios between chips aim for (issue 7). */
static const double ratio_target = 0.10;

/*
 * Guards against regressions, per category and source (the first word of a
 * row's source column; "ratios": the pairs whose first row is from it): the
 * largest shipped MAPE of those rows. Each was set when its rows came in,
 * at the figure of that day rounded up to a whole percent plus one point
 * (2026-11-24: 234 rows of the public table added, LLMCompass's host-timed
 * rows made conditioned), so that no source's rows get worse unseen while a
 * category misses its target. A source with rows and no guard is an error:
 * new data comes with its guard. LLM-Inference-Bench's inference and ratio
 * guards were lowered on 2026-11-27, when vLLM's host time per step came in.
 * bench/gpu/measure.py's rows (this project's own, measured on a lent H100
 * the same day: tests/validation/measurements-lent.tsv) came in with
 * matrix.sync_fraction and FlashAttention-2's CTAs dispatched in launch
 * order, which lowered Dao-AILab's attention figure (15.2% to 10.6%) and
 * pytorch/benchmark's (42.6% to 36.3%): their guards came down with them.
 */
static const struct {
	const char *cat, *source;
	double mape;
} guards[] = {
    {"gemm", "Azure/AI-benchmarking-guide", 0.12},
    {"gemm", "ROCm/rocm-blogs", 0.07},
    {"gemm", "deepseek-ai/DeepGEMM", 0.11},
    {"gemm", "bench/gpu/measure.py", 0.13},
    {"gemm", "bench/gpu/misaligned.py", 0.10},
    {"attention", "Azure/AI-benchmarking-guide", 0.04},
    {"attention", "Dao-AILab/flash-attention", 0.12},
    {"attention", "pytorch/benchmark", 0.38},
    {"attention", "bench/gpu/measure.py", 0.21},
    {"memory", "te42kyfo/gpu-benches", 0.11},
    {"memory", "bench/gpu/measure.py", 0.13},
    {"sim_validation", "PrincetonUniversity/LLMCompass", 0.16},
    {"collective", "Azure/AI-benchmarking-guide", 0.08},
    {"collective", "ROCm/rocm-blogs", 0.14},
    {"collective", "hisohara/ai-scripts", 0.56},
    {"collective", "lessizzmore/create-a3mega-ztan-fork", 0.89},
    {"collective", "stas00/ml-engineering", 0.89},
    {"training", "Dao-AILab/flash-attention", 0.18},
    {"training", "NVIDIA/Megatron-LM", 0.09},
    /* eager PyTorch steps replayed from their profiler traces (`import` cases): 10-25% fast, the eager
       row kernels and cuDNN attention the model times faster than they run (docs/import.md) */
    {"training_import", "bench/gpu/measure.py", 0.21},
    /* ResNet-50's convolutions on an H200, 2026-11-28: 20.8% then (the 1x1 convolutions' backward of 64 to 256
       channels 30-80% fast, cuDNN's stem of 3 channels off both ways) */
    {"conv", "bench/gpu/measure.py", 0.22},
    /* the clocks of sustained GEMMs on an H200, 2026-11-28: 5.9% then (bf16 6-10% low: the model's clock stops at
       the 1830 MHz of the rated peak) */
    {"clock", "bench/gpu/measure.py", 0.07},
    {"training", "NVIDIA-NeMo/Megatron-Bridge", 0.11},
    {"training_moe", "NVIDIA-NeMo/Megatron-Bridge", 0.36},
    {"inference", "Azure/AI-benchmarking-guide", 0.08},
    {"inference", "argonne-lcf/LLM-Inference-Bench", 0.40},
    /* Llama-3 8B batches served from CUDA graphs on one H100 or H200 (the device alone, no host time), measured
       here on 2026-11-27: 3.8% then */
    {"inference", "bench/gpu/measure.py", 0.05},
    {"ratios", "Azure/AI-benchmarking-guide", 0.10},
    {"ratios", "ROCm/rocm-blogs", 0.04},
    {"ratios", "te42kyfo/gpu-benches", 0.12},
    {"ratios", "Dao-AILab/flash-attention", 0.09},
    {"ratios", "hisohara/ai-scripts", 0.19},
    {"ratios", "argonne-lcf/LLM-Inference-Bench", 0.91},
};
#define NGUARDS (int)(sizeof guards / sizeof guards[0])

struct meas *ms;
int nms;
static struct ratio *rs;
static int nrs;
struct vcase *vs;
int nvs;
struct chipent *chips;
int nchips;
static struct skip *sk;
static int nsk;
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

static int cat_index(const char *name)
{
	for (int i = 0; i < NCATS; i++)
		if (!strcmp(cats[i].name, name))
			return i;
	return -1;
}

static int find_meas(const char *id)
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

/* A `gen` case's ops column: `gen ARGS` (what follows `sim gen`), then
   options separated by ';': attn=IMPL runs every attention of the trace
   with that kernel (naive: the separate kernels of an eager framework);
   memory=unchecked drops the trace's memory statements; ranks_per_node=N
   places N ranks on each node (sim run --ranks-per-node). */
static int parse_gen_case(struct vcase *v, char *why, size_t whylen)
{
	int first = 0; /* the gen command's place in the ops list */
	if (!strncmp(v->op_text[0], "import ", 7)) {
		/* `import PATH ; gen ...`: the recorded step, and what it computes */
		snprintf(v->import_path, sizeof v->import_path, "%s", v->op_text[0] + 7);
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

static double ratio_mape(int *n)
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

struct catstat {
	int n;
	double mape, bias, sd;
};

/* Statistics of the scored rows of category cat (-1: all), as shipped. */
static struct catstat stats_of(int cat)
{
	struct catstat s = {0, 0, 0, NAN};
	double *a = malloc(sizeof(double) * (size_t)(nvs + 1));
	double *e = malloc(sizeof(double) * (size_t)(nvs + 1));
	if (!a || !e) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	for (int i = 0; i < nvs; i++) {
		if (!vs[i].ok || vs[i].cond || (cat >= 0 && cat_index(ms[vs[i].meas].cat) != cat))
			continue;
		a[s.n] = fabs(vs[i].err);
		e[s.n] = vs[i].err;
		s.n++;
	}
	if (s.n > 0) {
		s.mape = gsl_stats_mean(a, 1, (size_t)s.n);
		s.bias = gsl_stats_mean(e, 1, (size_t)s.n);
	}
	if (s.n > 1)
		s.sd = gsl_stats_sd(e, 1, (size_t)s.n);
	free(a);
	free(e);
	return s;
}

static int rows_in(int cat)
{
	int n = 0;
	for (int i = 0; i < nvs; i++)
		n += cat_index(ms[vs[i].meas].cat) == cat && !(no_steps && vs[i].gen) && !vs[i].cond;
	return n;
}

static int cmp_worst(const void *pa, const void *pb)
{
	const struct vcase *a = &vs[*(const int *)pa], *b = &vs[*(const int *)pb];
	double ea = fabs(a->err), eb = fabs(b->err);
	if (ea != eb)
		return ea < eb ? 1 : -1;
	return strcmp(a->id, b->id);
}

/* Markdown cell text: '|' escaped, shortened to max characters. */
static void md_cell(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s);
	size_t lim = n > max ? max - 3 : n;
	for (size_t i = 0; i < lim; i++) {
		if (s[i] == '|')
			fputc('\\', f);
		fputc(s[i], f);
	}
	if (n > max)
		fputs("...", f);
}

static void md_ops(FILE *f, const struct vcase *v)
{
	if (v->gen) {
		fputs("`sim ", f);
		md_cell(f, v->op_text[0], sizeof v->op_text[0]);
		fputc('`', f);
		if (v->attn[0])
			fprintf(f, " with `impl=%s` attention", v->attn);
		if (v->nomem)
			fprintf(f, ", memory not checked");
		if (v->rpn)
			fprintf(f, ", `--ranks-per-node %d`", v->rpn);
		if (v->ok && v->serve)
			fprintf(f, "; served in %.4g s on %d devices", v->step_s, v->ranks);
		else if (v->ok)
			fprintf(f, "; step %.4g s, %d of %d ranks replayed", v->step_s, v->nrep, v->ranks);
		return;
	}
	char parts[MAX_OPS][320];
	int n = split_list(v->ops_text, ';', parts, MAX_OPS, sizeof parts[0]);
	if (n < 0) {
		fputc('`', f);
		md_cell(f, v->ops_text, sizeof v->ops_text);
		fputc('`', f);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(" ; ", f);
		fputc('`', f);
		md_cell(f, parts[i], sizeof parts[i]);
		fputc('`', f);
	}
}

void pct(char *buf, size_t len, double x)
{
	if (isnan(x))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100 * x);
}

void spct(char *buf, size_t len, double x)
{
	if (isnan(x))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", 100 * x);
}

/* The "Ratios between chips" section. */
/* The rows this project measured itself (--also files): how, where the raw output is, their errors. */
static void write_lent(FILE *f)
{
	int nlent = 0;
	for (int i = 0; i < nms; i++)
		nlent += ms[i].lent;
	if (!nlent)
		return;
	fprintf(f, "## Measured here\n\n");
	fprintf(f,
	        "The %d rows of `tests/validation/measurements-lent.tsv` were measured by this project on a GPU lent "
	        "to it for a session: the scripts of `bench/gpu/` (PyTorch; Triton's `do_bench`: CUDA events around "
	        "each call, the L2 flushed before it, the median after warm-up; where its software column says so, "
	        "a CUDA graph's replays, which leave the host's time out) wrote the op line each measurement "
	        "times beside its time, `bench/gpu/to_validation.py` turned that into these rows, and the raw "
	        "output (software versions, the GPU's clocks and power every 200 ms, the log) is kept in "
	        "`tests/validation/measured/`, whose README.md says what each run measured and found. Each row's "
	        "device and software columns name the machine. They are scored like the published rows, each script "
	        "a source of its own (`bench/gpu/measure.py`, ...), but never fitted on: a held-out set, so that even "
	        "their in-sample "
	        "figures are predictions of data no constant was fitted to.\n\n",
	        nlent);
	fprintf(f,
	        "| category | rows | simulated | skipped | MAPE (shipped) | bias |\n|---|---:|---:|---:|---:|---:|\n");
	for (int c = 0; c < NCATS; c++) {
		int n = 0, nsim = 0, nskip = 0;
		double sa = 0, ss = 0;
		for (int i = 0; i < nms; i++)
			if (ms[i].lent && cat_index(ms[i].cat) == c)
				n++, nskip += ms[i].in_skipped;
		for (int i = 0; i < nvs; i++)
			if (vs[i].ok && !vs[i].cond && ms[vs[i].meas].lent && cat_index(ms[vs[i].meas].cat) == c)
				nsim++, sa += fabs(vs[i].err), ss += vs[i].err;
		if (!n)
			continue;
		char b1[32], b2[32];
		pct(b1, sizeof b1, nsim ? sa / nsim : NAN);
		spct(b2, sizeof b2, nsim ? ss / nsim : NAN);
		fprintf(f, "| %s | %d | %d | %d | %s | %s |\n", cats[c].name, n, nsim, nskip, b1, b2);
	}
	fprintf(f, "\n");
}

static void write_ratios(FILE *f)
{
	char b1[32], b2[32];
	int n;
	double mape = ratio_mape(&n);
	fprintf(f, "## Ratios between chips\n\n");
	fprintf(f, "A simulator used to choose between chips must get their relative speed right even where its "
	           "absolute errors are not small. Each pair of `tests/validation/ratios.tsv` is one workload "
	           "measured on two chips (the same harness and source where the data has it; the last column "
	           "says what differs). The ratio is the speed-up of the first chip over the second (> 1: the first "
	           "is faster): the quotient of the two throughputs, or the inverse quotient of two times. Its "
	           "error is (predicted - measured) / measured. The pairs were chosen from the measurements alone "
	           "(every chip pair with a common workload of one harness: the largest common square GEMM and the "
	           "skinny 802816x192x768 one, the smallest and the largest common all-reduce message, every common "
	           "inference batch), before any prediction was compared.\n\n");
	fprintf(f, "| pair | chips | workload | measured | predicted | error | basis |\n");
	fprintf(f, "|---|---|---|---:|---:|---:|---|\n");
	for (int i = 0; i < nrs; i++) {
		const struct ratio *r = &rs[i];
		fprintf(f, "| %s / %s | ", r->a, r->b);
		md_cell(f, r->chips, 96);
		fputs(" | ", f);
		md_cell(f, r->work, 160);
		if (r->ok) {
			spct(b1, sizeof b1, r->err);
			fprintf(f, " | %.3f | %.3f | %s%s | ", r->meas, r->pred, b1, r->cond ? " (conditioned)" : "");
		} else
			fprintf(f, " | - | - | %s | ", r->skipped ? "not run" : "failed");
		md_cell(f, r->basis, 400);
		fputs(" |\n", f);
	}
	pct(b1, sizeof b1, mape);
	fprintf(f, "\nMAPE of the %d ratios: **%s**", n, b1);
	pct(b2, sizeof b2, ratio_target);
	fprintf(f, " (target %s: %s; each source's pairs have a guard, \"Guards\" below).\n\n", b2,
	        n && mape > ratio_target ? "not met" : "met");
}

/* The shipped MAPE of one category's rows from source src ("ratios": the
   pairs whose first row is from it); n = 0 when there are none. */
static double group_mape(const char *cat, int src, int *n)
{
	double sum = 0;
	*n = 0;
	if (!strcmp(cat, "ratios")) {
		for (int i = 0; i < nrs; i++)
			if (rs[i].ok && !rs[i].cond && vs[rs[i].va].src == src)
				sum += fabs(rs[i].err), (*n)++;
	} else {
		for (int i = 0; i < nvs; i++)
			if (vs[i].ok && !vs[i].cond && vs[i].src == src && !strcmp(ms[vs[i].meas].cat, cat))
				sum += fabs(vs[i].err), (*n)++;
	}
	return *n ? sum / *n : NAN;
}

static int find_guard(const char *cat, int src)
{
	for (int g = 0; g < NGUARDS; g++)
		if (!strcmp(guards[g].cat, cat) && !strcmp(guards[g].source, srcs[src]))
			return g;
	return -1;
}

/* Whether the rows of cat from some source pass its guard, or have none. */
static int guard_failed(const char *cat)
{
	for (int s = 0; s < nsrcs; s++) {
		int n, g = find_guard(cat, s);
		double m = group_mape(cat, s, &n);
		if (n && (g < 0 || m > guards[g].mape))
			return 1;
	}
	return 0;
}

static void check_guards(void)
{
	for (int c = -1; c < NCATS; c++) {
		const char *cat = c < 0 ? "ratios" : cats[c].name;
		for (int s = 0; s < nsrcs; s++) {
			int n, g = find_guard(cat, s);
			double m = group_mape(cat, s, &n);
			if (n && g < 0)
				fail("%s: the %d rows of %s have no guard (add one to `guards` in validate.c)", cat, n,
				     srcs[s]);
			else if (n && m > guards[g].mape)
				fail("%s: MAPE %.1f%% of the %d rows of %s exceeds its guard %.0f%%", cat, 100 * m, n,
				     srcs[s], 100 * guards[g].mape);
		}
	}
}

/* The guards with the figures they hold. */
static void write_guards(FILE *f)
{
	fprintf(f,
	        "## Guards\n\nThe shipped MAPE of each category's rows per source (ratios: the pairs whose first row "
	        "is from it) and the guard the test holds it to (`guards` in `tests/validation/validate.c`: the "
	        "figure of the day the rows came in, rounded up to a whole percent plus one point).\n\n"
	        "| category | source | rows | MAPE | guard | result |\n|---|---|---:|---:|---:|---|\n");
	for (int c = 0; c <= NCATS; c++) {
		const char *cat = c == NCATS ? "ratios" : cats[c].name;
		for (int s = 0; s < nsrcs; s++) {
			int n, g = find_guard(cat, s);
			double m = group_mape(cat, s, &n);
			if (!n)
				continue;
			fprintf(f, "| %s | %s | %d | %.1f%% | ", cat, srcs[s], n, 100 * m);
			if (g < 0)
				fprintf(f, "none | FAIL |\n");
			else
				fprintf(f, "%.0f%% | %s |\n", 100 * guards[g].mape,
				        m > guards[g].mape ? "FAIL" : "pass");
		}
	}
	fprintf(f, "\n");
}

/* Out-of-sample statistics of a category (-1: all scored rows): the
   in-sample and cross-validated MAPE, the cross-validated bias and 90th
   percentile of the absolute error. */
struct cvstat {
	int n;
	double mape_in, mape_cv, bias_cv, p90_cv;
};

static struct cvstat cvstats_of(int cat)
{
	struct cvstat s = {0, NAN, NAN, NAN, NAN};
	double *a = malloc(sizeof(double) * (size_t)(nvs + 1));
	if (!a) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	double sin = 0, scv = 0, sb = 0;
	int nin = 0;
	for (int i = 0; i < nvs; i++) {
		const struct vcase *v = &vs[i];
		if (!v->ok || v->cond || (cat >= 0 && cat_index(ms[v->meas].cat) != cat))
			continue;
		if (isfinite(v->err_in))
			sin += fabs(v->err_in), nin++;
		if (!isfinite(v->err_cv))
			continue;
		a[s.n++] = fabs(v->err_cv);
		scv += fabs(v->err_cv), sb += v->err_cv;
	}
	if (nin)
		s.mape_in = sin / nin;
	if (s.n) {
		s.mape_cv = scv / s.n, s.bias_cv = sb / s.n;
		s.p90_cv = cv_quantile(a, s.n, 0.9);
	}
	free(a);
	return s;
}

/* Whether a category's cross-validated figures pass a set of limits (NAN:
   none set). */
static int cv_within(const struct cvstat *s, double mape, double bias, double p90)
{
	return !s->n || ((isnan(mape) || s->mape_cv <= mape) && (isnan(bias) || fabs(s->bias_cv) <= bias) &&
	                 (isnan(p90) || s->p90_cv <= p90));
}

static const char *verdict(int c, const struct catstat *cs, const struct cvstat *cv)
{
	if (cs[c].n < rows_in(c))
		return "FAIL (cases failed)";
	if (guard_failed(cats[c].name))
		return "FAIL (a source's guard)";
	if (cv && !cv_within(&cv[c], cats[c].cv_mape, cats[c].cv_bias, cats[c].cv_p90))
		return "FAIL (cross-validated)";
	if (cs[c].n && cs[c].mape > cats[c].target)
		return "pass (target not met)";
	if (cv && !cv_within(&cv[c], cv_target_mape, cv_target_bias, cv_target_p90))
		return "pass (cross-validated target not met)";
	return "pass";
}

/* The errors of v in a report's cells: shipped, in-sample, cross-validated. */
static void err_cells(FILE *f, const struct vcase *v, int fit)
{
	char b1[32], b2[32], b3[32];
	spct(b1, sizeof b1, v->err);
	if (!fit) {
		fprintf(f, " %s |", b1);
		return;
	}
	spct(b2, sizeof b2, v->err_in);
	spct(b3, sizeof b3, v->err_cv);
	fprintf(f, " %s | %s | %s |", b1, b2, b3);
}

static int cmp_worst_cv(const void *pa, const void *pb)
{
	const struct vcase *a = &vs[*(const int *)pa], *b = &vs[*(const int *)pb];
	double ea = isfinite(a->err_cv) ? fabs(a->err_cv) : -1, eb = isfinite(b->err_cv) ? fabs(b->err_cv) : -1;
	if (ea != eb)
		return ea < eb ? 1 : -1;
	return strcmp(a->id, b->id);
}

/* "G033 +52%, A020 +41%, ...": the n rows of category cat with the largest
   cross-validated errors. */
static void worst_of(FILE *f, int cat, int n)
{
	int *o = malloc(sizeof(int) * (size_t)(nvs + 1)), m = 0;
	if (!o)
		return;
	for (int i = 0; i < nvs; i++)
		if (vs[i].ok && !vs[i].cond && isfinite(vs[i].err_cv) && cat_index(ms[vs[i].meas].cat) == cat)
			o[m++] = i;
	qsort(o, (size_t)m, sizeof *o, cmp_worst_cv);
	for (int i = 0; i < m && i < n; i++) {
		char b[32];
		spct(b, sizeof b, vs[o[i]].err_cv);
		fprintf(f, "%s%s %s", i ? ", " : "", vs[o[i]].id, b);
	}
	free(o);
}

/* The first screen: what was fitted, on what, and how well it predicts the
   rows it was not fitted on, in numbers. */
static void write_headline(FILE *f, const struct cvstat *cv, const struct cvstat *cvall)
{
	char b1[32], b2[32];
	int nfit = 0, nsrc = 0, met = 0, ncat = 0, ncond = 0;
	for (int i = 0; i < nvs; i++)
		nfit += fit_row(&vs[i]), ncond += vs[i].ok && vs[i].cond && !vs[i].unscored;
	nsrc = fit_folds();
	int nf = fit_families_fitted();
	for (int c = 0; c < NCATS; c++)
		if (cv[c].n) {
			ncat++;
			met += cv_within(&cv[c], cv_target_mape, cv_target_bias, cv_target_p90);
		}
	pct(b1, sizeof b1, cvall->mape_cv);
	pct(b2, sizeof b2, cvall->mape_in);
	fprintf(f,
	        "**What was fitted, on what, and how well it predicts what it was not fitted on.** The suite fits "
	        "the %d constants of the device model's `model` section and the energy per MAC of %d "
	        "microarchitectures (the clock a power-limited GEMM sustains) itself, on the %d op-level rows of %d "
	        "sources (GEMM, attention, memory and collective rows; conditioned rows and the replayed training "
	        "and inference steps are not fitted on). Leaving each source out in turn, fitting on the others and "
	        "predicting it, the error over all %d scored rows is **%s** (cross-validated MAPE; %s in-sample). "
	        "%d of the %d categories with rows meet the cross-validated targets (MAPE <= %.0f%%, |bias| <= "
	        "%.0f%%, 90th percentile <= %.0f%%). No prediction reads a clock or an overhead measured in its own "
	        "run: clocks under load come from the power model, and the %d rows whose harness adds an overhead "
	        "only its own measurements give are reported apart (\"Conditioned rows\").\n\n",
	        fit_nkeys(), nf, nfit, nsrc, cvall->n, b1, b2, met, ncat, 100 * cv_target_mape, 100 * cv_target_bias,
	        100 * cv_target_p90, ncond);
}

static void write_summary(FILE *f, const struct catstat *cs, const struct catstat *all, const struct cvstat *cv,
                          const struct cvstat *cvall)
{
	char b[8][32];
	fprintf(f, "## Summary\n\n");
	if (cv) {
		fprintf(f,
		        "| category | rows | MAPE (shipped) | in-sample | cross-validated | CV bias | CV p90 | target "
		        "(shipped) | guards (CV MAPE, bias, p90) | result | worst rows (CV) |\n");
		fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
	} else {
		fprintf(f, "| category | rows | MAPE | bias | sd | target | result |\n");
		fprintf(f, "|---|---:|---:|---:|---:|---:|---|\n");
	}
	for (int c = 0; c < NCATS; c++) {
		pct(b[0], sizeof b[0], cs[c].n ? cs[c].mape : NAN);
		if (!cv) {
			spct(b[1], sizeof b[1], cs[c].n ? cs[c].bias : NAN);
			pct(b[2], sizeof b[2], cs[c].sd);
			pct(b[4], sizeof b[4], cats[c].target);
			fprintf(f, "| %s | %d | %s | %s | %s | %s | %s |\n", cats[c].name, rows_in(c), b[0], b[1], b[2],
			        b[4], verdict(c, cs, NULL));
			continue;
		}
		pct(b[1], sizeof b[1], cv[c].mape_in);
		pct(b[2], sizeof b[2], cv[c].mape_cv);
		spct(b[3], sizeof b[3], cv[c].bias_cv);
		pct(b[4], sizeof b[4], cv[c].p90_cv);
		pct(b[5], sizeof b[5], cats[c].target);
		pct(b[6], sizeof b[6], cats[c].cv_mape);
		fprintf(f, "| %s | %d | %s | %s | %s | %s | %s | %s | %s, %.0f%%, %.0f%% | %s | ", cats[c].name,
		        rows_in(c), b[0], b[1], b[2], b[3], b[4], b[5], b[6], 100 * cats[c].cv_bias,
		        100 * cats[c].cv_p90, verdict(c, cs, cv));
		worst_of(f, c, NWORST);
		fprintf(f, " |\n");
	}
	pct(b[0], sizeof b[0], all->n ? all->mape : NAN);
	if (cv) {
		pct(b[1], sizeof b[1], cvall->mape_in);
		pct(b[2], sizeof b[2], cvall->mape_cv);
		spct(b[3], sizeof b[3], cvall->bias_cv);
		pct(b[4], sizeof b[4], cvall->p90_cv);
		fprintf(f, "| all | %d | %s | %s | %s | %s | %s | | | | |\n\n", all->n, b[0], b[1], b[2], b[3], b[4]);
		fprintf(f,
		        "MAPE (shipped): the rows predicted with the constants the configs ship. In-sample: with the "
		        "constants refitted on every fit row. Cross-validated: each row predicted with the constants "
		        "fitted on the rows of the other sources (leave one source out). The bias is the mean signed "
		        "error, p90 the 90th percentile of the absolute error. The test fails when the shipped MAPE of "
		        "one source's rows passes its guard (\"Guards\" below) or a cross-validated figure its guard; "
		        "the guards hold the figures against regressions while a category misses the targets (shipped "
		        "MAPE as in the target column; cross-validated MAPE %.0f%%, |bias| %.0f%%, p90 %.0f%%), and "
		        "the result says so.\n\n",
		        100 * cv_target_mape, 100 * cv_target_bias, 100 * cv_target_p90);
	} else {
		spct(b[1], sizeof b[1], all->n ? all->bias : NAN);
		pct(b[2], sizeof b[2], all->sd);
		fprintf(f, "| all | %d | %s | %s | %s | | |\n\n", all->n, b[0], b[1], b[2]);
	}
}

/* The length of a skip reason's first blocker: up to its first ':' or " (". */
static size_t blocker_len(const char *reason)
{
	size_t n = strcspn(reason, ":");
	const char *p = strstr(reason, " (");
	return p && (size_t)(p - reason) < n ? (size_t)(p - reason) : n;
}

/* A markdown cell of a skip reason's first blocker (cut to 199 characters), at most max wide. */
static void md_blocker(FILE *f, const char *reason, size_t max)
{
	char key[200];
	size_t n = blocker_len(reason);
	snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), reason);
	md_cell(f, key, max);
}

/* The skipped rows: counts per category and reason, then each row. */
static void write_skipped(FILE *f)
{
	char *done = calloc((size_t)nsk + 1, 1);
	if (!done)
		return;
	/* the first blocker: a reason up to its first ':' or " (" */
	fprintf(f, "## Skipped rows\n\nRows per category and first blocker (a reason up to its first colon or "
	           "parenthesis):\n\n"
	           "| category | rows | first blocker |\n|---|---:|---|\n");
	for (int c = 0; c < NCATS; c++)
		for (int j = 0; j < nsk; j++) {
			size_t lj = blocker_len(sk[j].reason);
			if (done[j] || cat_index(ms[find_meas(sk[j].id)].cat) != c)
				continue;
			int n = 0;
			for (int k = j; k < nsk; k++)
				if (!done[k] && cat_index(ms[find_meas(sk[k].id)].cat) == c &&
				    blocker_len(sk[k].reason) == lj && !strncmp(sk[k].reason, sk[j].reason, lj))
					done[k] = 1, n++;
			fprintf(f, "| %s | %d | ", cats[c].name, n);
			md_blocker(f, sk[j].reason, 160);
			fputs(" |\n", f);
		}
	memset(done, 0, (size_t)nsk + 1);
	fprintf(f, "\nRows per category and reason (the reasons are the work list):\n\n"
	           "| category | rows | reason |\n|---|---:|---|\n");
	for (int c = 0; c < NCATS; c++)
		for (int j = 0; j < nsk; j++) {
			int mj = find_meas(sk[j].id);
			if (done[j] || cat_index(ms[mj].cat) != c)
				continue;
			int n = 0;
			for (int k = j; k < nsk; k++) {
				int mk = find_meas(sk[k].id);
				if (!done[k] && cat_index(ms[mk].cat) == c && !strcmp(sk[k].reason, sk[j].reason))
					done[k] = 1, n++;
			}
			fprintf(f, "| %s | %d | ", cats[c].name, n);
			md_cell(f, sk[j].reason, sizeof sk[j].reason);
			fputs(" |\n", f);
		}
	free(done);
	fprintf(f, "\n| id | category | device | first blocker |\n|---|---|---|---|\n");
	for (int i = 0; i < nms; i++) {
		if (!ms[i].in_skipped)
			continue;
		for (int j = 0; j < nsk; j++) {
			if (strcmp(sk[j].id, ms[i].id))
				continue;
			fprintf(f, "| %s | %s | ", ms[i].id, ms[i].cat);
			md_cell(f, ms[i].device, 200);
			fputs(" | ", f);
			md_blocker(f, sk[j].reason, 200);
			fputs(ms[i].in_cases ? " (replayed, not scored) |\n" : " |\n", f);
		}
	}
	fprintf(f, "\n");
}

/* The conditioned rows: simulated, reported, scored nowhere. */
static void write_conditioned(FILE *f, int fit)
{
	int n = 0;
	for (int i = 0; i < nvs; i++)
		n += vs[i].cond && !vs[i].unscored;
	if (!n)
		return;
	fprintf(
	    f,
	    "## Conditioned rows\n\nThese %d rows are simulated with a constant their harness adds that only its own "
	    "measurements give (LLMCompass's per-call host overhead, `overhead_dict` of its hardware model, "
	    "set per case in `cases.tsv`). They show what the device model adds under that condition, but "
	    "they are in no category score, no fit and no ratio.\n\n",
	    n);
	fprintf(f,
	        fit ? "| id | category | device | case overrides | predicted | measured | unit | error | in-sample | "
	              "cross-validated |\n|---|---|---|---|---:|---:|---|---:|---:|---:|\n"
	            : "| id | category | device | case overrides | predicted | measured | unit | error |\n"
	              "|---|---|---|---|---:|---:|---|---:|\n");
	for (int i = 0; i < nvs; i++) {
		const struct vcase *v = &vs[i];
		const struct meas *m = &ms[v->meas];
		if (!v->cond || v->unscored)
			continue;
		fprintf(f, "| %s | %s | ", v->id, m->cat);
		md_cell(f, m->device, 120);
		fputs(" | `", f);
		md_cell(f, v->sets_text, 200);
		fprintf(f, "` | %.4g | %s | %s |", v->pred, m->value_text, m->unit);
		err_cells(f, v, fit);
		fputs("\n", f);
	}
	fprintf(f, "\n");
}

/* The reason a skipped row gives, "" if none. */
static const char *skip_reason(const char *id)
{
	for (int j = 0; j < nsk; j++)
		if (!strcmp(sk[j].id, id))
			return sk[j].reason;
	return "";
}

/* The replayed, unscored rows: in both cases.tsv and skipped.tsv. What they would score, per category, then each
   row with its first blocker (the skipped rows' table gives the whole reason). */
static void write_unscored(FILE *f)
{
	int n = 0;
	for (int i = 0; i < nvs; i++)
		n += vs[i].unscored;
	if (!n)
		return;
	fprintf(f,
	        "## Replayed, not scored\n\nThese %d rows are in `tests/validation/skipped.tsv`, whose reason says why "
	        "no score counts them (the run's settings are not all published, or a mechanism of the run is not "
	        "modelled yet), and in `cases.tsv` too, with the best reading of the run the sources give: each is "
	        "replayed on every run of the suite, so that what the model predicts for it stays in view, but it is "
	        "in no category score, fit, ratio or mechanism.\n\n",
	        n);
	fprintf(f, "| category | rows | replayed | MAPE | bias |\n|---|---:|---:|---:|---:|\n");
	for (int c = 0; c < NCATS; c++) {
		int nc = 0, nok = 0;
		double sa = 0, ss = 0;
		for (int i = 0; i < nvs; i++)
			if (vs[i].unscored && cat_index(ms[vs[i].meas].cat) == c) {
				nc++;
				if (vs[i].ok)
					nok++, sa += fabs(vs[i].err), ss += vs[i].err;
			}
		if (!nc)
			continue;
		char b1[32], b2[32];
		pct(b1, sizeof b1, nok ? sa / nok : NAN);
		spct(b2, sizeof b2, nok ? ss / nok : NAN);
		fprintf(f, "| %s | %d | %d | %s | %s |\n", cats[c].name, nc, nok, b1, b2);
	}
	fprintf(f, "\n| id | category | device | config | op(s) | predicted | measured | unit | error | not scored "
	           "because |\n|---|---|---|---|---|---:|---:|---|---:|---|\n");
	for (int i = 0; i < nvs; i++) {
		const struct vcase *v = &vs[i];
		const struct meas *m = &ms[v->meas];
		if (!v->unscored)
			continue;
		fprintf(f, "| %s | %s | ", v->id, m->cat);
		md_cell(f, m->device, 120);
		fputs(" | `", f);
		md_cell(f, v->config, 300);
		fputs("` | ", f);
		md_ops(f, v);
		if (v->ok)
			fprintf(f, " | %.4g | %s | %s |", v->pred, m->value_text, m->unit), err_cells(f, v, 0);
		else
			fprintf(f, " | %s | %s | %s | - |", v->gen && no_steps ? "not run" : "failed", m->value_text,
			        m->unit);
		fputc(' ', f);
		md_blocker(f, skip_reason(v->id), 200);
		fputs(" |\n", f);
	}
	fprintf(f, "\n");
}

/* The import cases' modelled ops against the kernels they stand for, family by family (issue 19's yardstick: each
   within 10%), a table apart from the steps' errors: where the device model errs on kernels nobody fitted it to. */
static void write_families(FILE *f)
{
	int any = 0;
	for (int i = 0; i < nvs && !any; i++)
		any = vs[i].ok && vs[i].import_path[0];
	if (!any)
		return;
	fprintf(f,
	        "## Imported steps by kernel family\n\n"
	        "Each `import` case's ops that the model times (`sim import kineto` maps a recorded kernel to an op "
	        "from its CPU op's shapes; docs/import.md), replayed on the case's config, against the measured time "
	        "of the kernels they stand for, per family, in ms over the step; the kernels the import carries at "
	        "their measured time are not in it. A replayed op counts as a profiler would time its kernel: its "
	        "time less the launch gap before it (the share of `model.launch_overhead` outside the kernel: "
	        "`model.launch_in_kernel`, docs/config-reference.md, falls inside). The "
	        "step's own error is in the training_import table above.\n\n"
	        "| id | trace | family | replayed | measured | error |\n|---|---|---|---:|---:|---:|\n");
	for (int i = 0; i < nvs; i++) {
		const struct vcase *v = &vs[i];
		if (!v->ok || !v->import_path[0])
			continue;
		for (int k = 0; k < IF_COUNT; k++) {
			if (!(v->fam_meas_s[k] > 0))
				continue;
			char e[32];
			spct(e, sizeof e, v->fam_replay_s[k] / v->fam_meas_s[k] - 1);
			fprintf(f, "| %s | `%s` | %s | %.3f | %.3f | %s |\n", v->id, v->import_path,
			        imp_family_name((enum imp_family)k), v->fam_replay_s[k] * 1e3, v->fam_meas_s[k] * 1e3,
			        e);
		}
	}
	fprintf(f, "\n");
}

static void write_report(FILE *f, const struct catstat *cs, const struct catstat *all, const int *order, int nok,
                         const struct cvstat *cv, const struct cvstat *cvall)
{
	char b1[32];
	int fit = cv != NULL;
	fprintf(f, "# Validation against published measurements\n\n");
	fprintf(
	    f,
	    "The device model (`sim/device/model*.c`) predicts the duration of one op on one chip; the cluster replay "
	    "(`sim run`) the time of a whole training step or inference batch, and the serving engine (`sim serve`) "
	    "the time a stream of requests takes. This page compares their "
	    "predictions with published hardware measurements: every row of the categories");
	for (int c = 0; c < NCATS - 2; c++) /* the last two, training_import and training_moe, are parts of training */
		fprintf(f, "%s %s", c == 0 ? "" : c == NCATS - 3 ? " and" : ",", cats[c].name);
	fprintf(f,
	        " (training rows of mixture-of-experts models are scored apart, as %s, and eager steps replayed from "
	        "their profiler traces, as %s)",
	        cats[NCATS - 1].name, cats[NCATS - 2].name);
	fprintf(f, " in `tests/validation/measurements-public.tsv` (a copy of "
	           "`shared/reference/measurements-public.tsv`, see `tests/validation/README.md`) is either "
	           "simulated as a case of `tests/validation/cases.tsv` (config, `--set` overrides that are settings "
	           "of the run, never a figure measured in it, the op lines whose times are summed, and how the time "
	           "converts to the measurement's unit) or listed with its reason in "
	           "`tests/validation/skipped.tsv` (a row in both is replayed but not scored: \"Replayed, not "
	           "scored\"). So is every row of `tests/validation/measurements-lent.tsv`, "
	           "what this project measured itself on lent hardware (\"Measured here\").\n\n");
	fprintf(f, "A training or inference row is a `sim gen` command instead of op lines: the generated trace (one "
	           "training step, or one request batch: prefill and every decode step) is replayed on the config's "
	           "cluster, each row in a process of its own, and the step time converts to the figure the way "
	           "its source computed it: Megatron-LM's TFLOP/s per GPU with Narayanan et al. (SC21) eq. (3), "
	           "96 B s l h^2 (1 + s/6h + V/16lh) per iteration over step time x GPUs; MFU with Korthikanti et "
	           "al. (2022), model FLOPs 72 B s l h^2 (1 + s/6h + V/12lh) over step time x GPUs x the peak the "
	           "source names; tokens/s as the step's tokens (inference: generated tokens, batch x output "
	           "length) over the step time; an inference batch's end-to-end latency as the replayed time itself. "
	           "A serving row is a `sim serve` command instead: the batch a harness handed its engine at once, "
	           "scheduled as that engine does (vLLM's preemption, TensorRT-LLM's admission of whole requests), "
	           "for batches whose KV cache does not hold them all; its time is the first arrival to the last "
	           "token. "
	           "`cases.tsv` gives each row's layout and its source.\n\n");
	fprintf(f, "The error of a row is (predicted - measured) / measured; a category's MAPE is the mean of its "
	           "absolute errors, its bias the mean of the signed ones, sd their standard deviation. The ctest "
	           "`validation` fails when one source's rows pass their guard, a cross-validated figure its guard, "
	           "an op does not parse or predict, or a row is in neither file; `validation_doc` fails when this "
	           "page is stale. "
	           "Regenerate it from the repository root with:\n\n");
	fprintf(f, "```\ncmake -S . -B build && cmake --build build\n"
	           "build/tests/validate . tests/validation/measurements-public.tsv docs/validation.md \\\n"
	           "    --also tests/validation/measurements-lent.tsv --fit\n```\n\n");

	if (fit)
		write_headline(f, cv, cvall);
	write_summary(f, cs, all, cv, cvall);
	int nun = 0;
	for (int i = 0; i < nvs; i++)
		nun += vs[i].unscored;
	fprintf(f,
	        "%d rows simulated (%d scored, %d replayed but not scored, the rest conditioned), %d skipped (%d of "
	        "them the replayed rows).\n\n",
	        nvs, all->n, nun, nsk, nun);
	write_ratios(f);
	write_lent(f);

	fprintf(f, "## Worst rows\n\n");
	fprintf(f, "| id | device | predicted | measured | unit | error |\n|---|---|---:|---:|---|---:|\n");
	for (int i = 0; i < nok && i < NWORST; i++) {
		const struct vcase *v = &vs[order[i]];
		const struct meas *m = &ms[v->meas];
		spct(b1, sizeof b1, v->err);
		fprintf(f, "| %s | ", v->id);
		md_cell(f, m->device, 200);
		fprintf(f, " | %.4g | %s | %s | %s |\n", v->pred, m->value_text, m->unit, b1);
	}
	fprintf(f, "\n");
	if (!no_steps)
		mech_write(f);

	for (int c = 0; c < NCATS; c++) {
		fprintf(f, "## %s\n\n", cats[c].name);
		fprintf(f, fit ? "| id | device | config | op(s) | predicted | measured | unit | error | in-sample | "
		                 "cross-validated | source |\n|---|---|---|---|---:|---:|---|---:|---:|---:|---|\n"
		               : "| id | device | config | op(s) | predicted | measured | unit | error | source |\n"
		                 "|---|---|---|---|---:|---:|---|---:|---|\n");
		for (int i = 0; i < nvs; i++) {
			const struct vcase *v = &vs[i];
			const struct meas *m = &ms[v->meas];
			if (cat_index(m->cat) != c || v->cond)
				continue;
			fprintf(f, "| %s | ", v->id);
			md_cell(f, m->device, 200);
			fputs(" | `", f);
			md_cell(f, v->config, 300);
			fputs("`", f);
			for (int j = 0; j < v->nsets; j++) {
				fputs(j ? " `" : " --set `", f);
				md_cell(f, v->sets[j], sizeof v->sets[j]);
				fputs("`", f);
			}
			fputs(" | ", f);
			md_ops(f, v);
			if (v->ok) {
				fprintf(f, " | %.4g | %s | %s |", v->pred, m->value_text, m->unit);
				err_cells(f, v, fit);
				fputc(' ', f);
			} else {
				fprintf(f, " | failed: ");
				md_cell(f, v->why, 300);
				fprintf(f, " | %s | %s | - |%s ", m->value_text, m->unit, fit ? " - | - |" : "");
			}
			md_cell(f, m->source, 80);
			fputs(" |\n", f);
		}
		fprintf(f, "\n");
	}

	write_families(f);
	traces_write(f);
	write_guards(f);
	write_conditioned(f, fit);
	write_unscored(f);
	write_skipped(f);
	if (fit)
		fit_write(f);
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
		mech_run();
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
