/*
 * validate_report.c -- the validation suite's report: the statistics of each
 * category (as shipped, in-sample and cross-validated) and docs/validation.md's
 * sections (guards.c: the guards a source's rows are held to, and their section) (validate.c reads the
 * rows and cases and predicts them; fit.c fits the constants; traces.c and
 * mech.c write their own sections).
 */
#include "cv.h"
#include "import.h"
#include "validate_int.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Statistics of the scored rows of category cat (-1: all), as shipped. */
struct catstat stats_of(int cat)
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

int rows_in(int cat)
{
	int n = 0;
	for (int i = 0; i < nvs; i++)
		n += cat_index(ms[vs[i].meas].cat) == cat && !(no_steps && vs[i].gen) && !vs[i].cond;
	return n;
}

int cmp_worst(const void *pa, const void *pb)
{
	const struct vcase *a = &vs[*(const int *)pa], *b = &vs[*(const int *)pb];
	double ea = fabs(a->err), eb = fabs(b->err);
	if (ea != eb)
		return ea < eb ? 1 : -1;
	return strcmp(a->id, b->id);
}

/* Markdown cell text: '|' escaped, shortened to max characters. */
void md_cell(FILE *f, const char *s, size_t max)
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
	if (v->kernel_time)
		fputs(", kernel time (less the launch gap)", f);
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
	           "inference batch; for Megatron-Bridge's pre-training runs, per model, precision and chip pair with "
	           "the same GPU count, global batch and sequence, the latest container release that has both, each "
	           "chip on its own published recipe), before any prediction was compared.\n\n");
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

/* Out-of-sample statistics of a category (-1: all scored rows): the
   in-sample and cross-validated MAPE, the cross-validated bias and 90th
   percentile of the absolute error. */
struct cvstat cvstats_of(int cat)
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
int cv_within(const struct cvstat *s, double mape, double bias, double p90)
{
	return !s->n || ((isnan(mape) || s->mape_cv <= mape) && (isnan(bias) || fabs(s->bias_cv) <= bias) &&
	                 (isnan(p90) || s->p90_cv <= p90));
}

const char *verdict(int c, const struct catstat *cs, const struct cvstat *cv)
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
	        "time less the launch gap before it (`model.launch_gap` of `model.launch_overhead`, docs/config-"
	        "reference.md; the rest falls inside the kernel; `model.graph_launch_gap` for an op from a CUDA "
	        "graph). The "
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

void write_report(FILE *f, const struct catstat *cs, const struct catstat *all, const int *order, int nok,
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
	fprintf(f,
	        " in `tests/validation/measurements-public.tsv` (a copy of "
	        "`shared/reference/measurements-public.tsv`, see `tests/validation/README.md`) is either "
	        "simulated as a case of `tests/validation/cases.tsv` (config, `--set` overrides that are settings "
	        "of the run, never a figure measured in it, the op lines whose times are summed, and how the time "
	        "converts to the measurement's unit: a launch's whole time, or where the source timed the kernel "
	        "alone as a profiler does, the kernel's, less the launch gap before it) or listed with its reason in "
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
	           "page or `docs/validation-rows.tsv` (each row's figures of this page as a tab-separated table, for "
	           "a spreadsheet or awk) is stale. "
	           "Regenerate both from the repository root with the command below; `--baseline` prints, per "
	           "category, how many rows got better and how many worse (by more than half a point of their "
	           "cross-validated error) than in the table committed before, and the rows that moved most, so that a "
	           "change that helps one row and hurts ten shows as such:\n\n");
	fprintf(f, "```\ncmake -S . -B build && cmake --build build\n"
	           "build/tests/validate . tests/validation/measurements-public.tsv docs/validation.md \\\n"
	           "    --also tests/validation/measurements-lent.tsv --fit \\\n"
	           "    --baseline docs/validation-rows.tsv --rows docs/validation-rows.tsv\n```\n\n");

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
	write_kernels(f);

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
