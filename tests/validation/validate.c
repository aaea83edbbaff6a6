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
 * of the two files (cases.c reads and checks the inputs). Each case is predicted (ops' times summed, one config
 * load per distinct config and overrides; a `gen` case, a training or
 * inference row, replays the trace `sim gen` writes for it in a child
 * process of its own: gen_case.c), its error is (predicted - measured) /
 * measured. A case may not set a clock, and one that sets a `model.*`
 * constant is conditioned: reported apart, scored nowhere. The mean
 * absolute error (MAPE) of each category's rows from one source, and of the
 * ratios of ratios.tsv (the measured speed-up of chip a over chip b against
 * the predicted one) whose first row is from it, must stay under its guard
 * (`guards`, guards.c). Exit 0 when all of that holds, 1 otherwise (the reasons go to
 * stderr, one line each), 2 on a usage error or a --baseline that is not a
 * table --rows writes.
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
 * With --rows TSV it writes each row's figures as a table as well (rows.c;
 * docs/validation-rows.tsv is that file), and with --baseline TSV it prints,
 * per category, how many rows got better and worse than in such a table of an
 * earlier run, and the rows that moved most.
 *
 * usage: validate ROOT MEASUREMENTS_TSV OUT_MD [--also TSV]... [--fit] [--no-steps] [--rows TSV] [--baseline TSV]
 */
#include "model.h"
#include "platform.h"
#include "validate_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Categories checked: the shipped MAPE each aims for, and guards of its
   cross-validated figures (--fit; NAN: none). The test fails when a guard
   (here, or a source's in guards.c's `guards`) is passed; a category above its
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
       move. attention's lowered on 2026-12-01, when mma.sync on Hopper came to sustain model.sync_efficiency of its
       peak (fitted: 0.73), FlashAttention-2's occupancy its 255 registers, and the fit a prior toward the shipped
       constants: attention 10.8% to 6.5% cross-validated (bias -6.5% to -1.7%, p90 21.0% to 14.1%); gemm's MAPE and
       p90 lowered then too (9.9% to 9.8%, 26.1% to 23.5%, while its bias went from -2.3% to -4.0%: the fp8 MAC's
       energy from Horowitz's table raised the bf16 clocks the fit gives, toward the NVML samples, and Hopper's
       GEMMs at those clocks come out too fast); and on 2026-12-03 (9.4%, -3.8%, 21.8% before), when PyTorch's
       grouped GEMMs came to run behind their setup kernel (grouped=1, the 77 rows LQG of them from 10.4% to 7.9%):
       9.0%, -3.3%, 20.5% */
    {"gemm", 0.10, 0.10, 0.04, 0.22},
    {"attention", 0.12, 0.08, 0.03, 0.16},
    {"memory", 0.10, 0.11, 0.03, 0.27},
    {"sim_validation", 0.12, 0.14, 0.08, 0.20},
    /* collective's lowered on 2026-12-02 (29.6%, +6.4%, 76.8% before), when a network step came to pay the latency
       the fabric's NCCL plugin reports (system.nic_latency: EFA's 35 us on P6): 28.2%, +3.1%, 67.2% */
    {"collective", 0.10, 0.30, 0.05, 0.69},
    {"training", 0.10, 0.08, 0.03, 0.16},
    /* inference's lowered on 2026-12-01 (33.6%, -31.3%, 66.0% before), when impl=paged became vLLM's
       PagedAttention V1/V2 (a CTA a query head) and the A100 vLLM rows decoded with FlashAttention-2's kernels,
       as their backend ran: 32.3%, -29.8%, 64.4%; and on 2026-12-03 (22.5%, -18.5%, 55.0%), when LLM-Inference-Bench's
       90 H100 rows came in on the SXM5 config (their GPU's power samples reach 595 W), never fitted on */
    {"inference", 0.10, 0.24, 0.20, 0.56},
    /* cuDNN's convolutions (forward, dgrad, wgrad, and the two together), measured here on 2026-11-28 on an
       H200 (ResNet-50's layers at batch 64): never fitted on, scored apart from the GEMMs they are lowered to;
       the guards are that day's figures (23.1%, -16.2%, 46.7%) set as above, the MAPE's lowered on 2026-12-01
       (22.4%) */
    {"conv", 0.10, 0.24, 0.18, 0.48},
    /* the clock the device model runs a sustained GEMM at, against the SM clock NVML read (an H200 at its 700 W
       limit, all SMs or fewer, 2026-11-28): never fitted on; the guards are that day's figures (6.6%, +1.3%,
       13.3%) set as above, the MAPE's lowered on 2026-12-01 (4.1%: an fp8 MAC at 0.55 of a bf16 one) */
    {"clock", 0.10, 0.06, 0.03, 0.15},
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

/* The case's prediction in the measurement's unit; -1 with why on failure. kern (may be NULL): the kernel the model
   runs the first op as. */
int predict(const struct arch_chip *c, const struct vcase *v, double *out, struct dm_kernel *kern, char *why,
            size_t whylen)
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
		t += v->kernel_time ? r.time_s - r.gap_s : r.time_s;
		if (!v->coll[i].on)
			flops += op_flops(&v->ops[i]);
		if (!v->coll[i].on && clock_hz == 0)
			clock_hz = r.clock_hz; /* the first op's */
		if (i == 0 && kern)
			*kern = r.kern;
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
	for (int j = 0; j < n; j++) {
		struct vcase *v = &vs[idx[j]];
		char cmd[400];
		snprintf(cmd, sizeof cmd, "%s", v->op_text[0] + 4);
		set.texts[j] = vcase_trace(v, &v->gc, cmd);
		set.chips[j] = chips[v->chip].c;
		set.rpn[j] = v->rpn;
		set.cost[j] = gen_cost(v);
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
		v->activities = r->activities;
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

/* Writes the report to md_path and, given rows_path, the rows as a table: 0, or -1 with a line on stderr. */
static int write_outputs(const char *md_path, const char *rows_path, const struct catstat *cs,
                         const struct catstat *all, const int *order, int nord, int fit, const struct cvstat *cv,
                         const struct cvstat *cvall)
{
	FILE *f = fopen(md_path, "w");
	if (!f) {
		fprintf(stderr, "validate: cannot write %s\n", md_path);
		return -1;
	}
	write_report(f, cs, all, order, nord, fit ? cv : NULL, fit ? cvall : NULL);
	if (fclose(f)) {
		fprintf(stderr, "validate: cannot write %s\n", md_path);
		return -1;
	}
	if (!rows_path)
		return 0;
	FILE *rf = fopen(rows_path, "w");
	if (!rf) {
		fprintf(stderr, "validate: cannot write %s\n", rows_path);
		return -1;
	}
	rows_write(rf, fit);
	if (fclose(rf)) {
		fprintf(stderr, "validate: cannot write %s\n", rows_path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { MAX_ALSO = 8 };
	const char *also[MAX_ALSO];
	int fit = 0, nalso = 0;
	const char *pos[3], *rows_path = NULL, *baseline = NULL;
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fit"))
			fit = 1;
		else if (!strcmp(argv[i], "--no-steps"))
			no_steps = 1;
		else if (!strcmp(argv[i], "--also") && i + 1 < argc && nalso < MAX_ALSO)
			also[nalso++] = argv[++i];
		else if (!strcmp(argv[i], "--rows") && i + 1 < argc && !rows_path)
			rows_path = argv[++i];
		else if (!strcmp(argv[i], "--baseline") && i + 1 < argc && !baseline)
			baseline = argv[++i];
		else if (npos < 3 && argv[i][0] != '-')
			pos[npos++] = argv[i];
		else
			npos = 99;
	}
	if (npos != 3) {
		fprintf(
		    stderr,
		    "usage: validate ROOT MEASUREMENTS_TSV OUT_MD [--also TSV]... [--fit] [--no-steps] [--rows TSV] "
		    "[--baseline TSV]\n");
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
		if (predict(chips[v->chip].c, v, &v->pred, &v->kern, why, sizeof why)) {
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
			    "%7s  replay %.1f s, %ld engine activities%s\n",
			    vs[i].id, vs[i].step_s, vs[i].ranks, vs[i].nrep, vs[i].pred, ms[vs[i].meas].value_text, b1,
			    vs[i].wall_s, vs[i].activities, vs[i].unscored ? "  (not scored)" : "");
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

	/* the outputs, then everything freed on every path (a sanitizer build counts what is not) */
	int rc = baseline && rows_compare(baseline, fit, stdout) ? 2 : 0;
	if (!rc && write_outputs(pos[2], rows_path, cs, &all, order, nord, fit, cv, &cvall))
		rc = 1;

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
	if (rc)
		return rc;
	if (failures) {
		fprintf(stderr, "validate: %d problem%s\n", failures, failures == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
