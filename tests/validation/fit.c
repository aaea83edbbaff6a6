/*
 * fit.c -- the validation suite's fit of the device model's constants and
 * its out-of-sample scores (validate.c calls fit_and_score() with --fit).
 *
 * Fitted: every constant of fitkeys (one value for every chip: a chip whose
 * config overrides a constant keeps its ratio to the default) and, per
 * microarchitecture (chip.arch), the energy of a MAC of the matrix units
 * (compute.<group>.matrix.pj_per_mac: with chip.tdp and model.static_power
 * it sets the clock a power-limited GEMM sustains). The error minimized is
 * the mean absolute log ratio of predicted to measured over the fit rows:
 * the op-level cases that are not conditioned, and not this project's own
 * measurements (--also files: a held-out set) (cv_minimize, Nelder-Mead),
 * plus a prior: FIT_PRIOR times the mean squared log ratio of the constants
 * to their shipped values, so that constants the rows do not separate (the
 * static power and the energy per MAC trade against each other along the
 * power-limited GEMMs) stay near their values rather than wander along that
 * ridge as a constant is added or a source left out,
 * the collective constants and the others as two blocks. A microarchitecture with no GEMM row to fit takes the
 * geometric mean of the fitted ones on its process node (chip.process), or of all fitted ones when none shares
 * it (the prior for a chip nobody measured: the energy of a MAC is set mostly by the process).
 *
 * Scores: "in-sample", every row predicted with the fit over all fit rows;
 * "cross-validated", every row predicted with the fit over the rows of the
 * other sources (a source is the repository or paper in the row's source
 * column: leave one source out). Training and inference rows are not fit
 * rows (each is a replay of seconds); they are replayed with the fit of
 * their fold. Case overrides of a constant are kept throughout.
 */

#include "cv.h"
#include "model.h"
#include "procpool.h"
#include "validate_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fitted constants of the `model` section (--fit). [lo, hi] is the range
   the fit searches: what is physically plausible, a prior and not a fit,
   narrower than what a config may set (arch/params.c). */
enum fk_kind { FK_PLAIN, FK_TIME, FK_BYTES };
static const struct {
	const char *key;
	size_t off; /* in struct arch_model */
	enum fk_kind kind;
	double lo, hi;
	int coll; /* fitted in the second block: it moves only collective times */
} fitkeys[] = {
    /* the gap between back-to-back kernels of a stream: a few us on CUDA and ROCm */
    {"model.launch_overhead", offsetof(struct arch_model, launch_s), FK_TIME, 1e-6, 10e-6, 0},
    /* STREAM-like kernels reach 80-95% of HBM peak, L2 and matrix pipes similar or better */
    {"model.dram_efficiency", offsetof(struct arch_model, dram_eff), FK_PLAIN, 0.7, 0.98, 0},
    {"model.l2_efficiency", offsetof(struct arch_model, l2_eff), FK_PLAIN, 0.5, 1, 0},
    {"model.mma_efficiency", offsetof(struct arch_model, mma_eff), FK_PLAIN, 0.7, 1, 0},
    /* a legacy instruction among a kernel's loads and lane work: from half of its peak to all of it */
    {"model.sync_efficiency", offsetof(struct arch_model, sync_eff), FK_PLAIN, 0.5, 1, 0},
    /* loaded latency up to a few times the idle one; a thread keeps 4-128 B in flight */
    {"model.loaded_latency", offsetof(struct arch_model, loaded_latency), FK_PLAIN, 1, 4, 0},
    {"model.bytes_per_thread", offsetof(struct arch_model, bytes_per_thread), FK_BYTES, 4, 128, 0},
    /* idle load-to-use latencies of HBM and L2 on GPUs of the last decade */
    {"model.dram_latency", offsetof(struct arch_model, dram_latency_s), FK_TIME, 300e-9, 1e-6, 0},
    {"model.l2_latency", offsetof(struct arch_model, l2_latency_s), FK_TIME, 100e-9, 500e-9, 0},
    {"model.dram_write_cost", offsetof(struct arch_model, write_cost), FK_PLAIN, 1, 2, 0},
    /* leakage, memory and uncore: a tenth to a bit over half of the board power */
    {"model.static_power", offsetof(struct arch_model, static_power), FK_PLAIN, 0.1, 0.6, 0},
    {"model.link_efficiency", offsetof(struct arch_model, link_eff), FK_PLAIN, 0.5, 0.95, 1},
    /* RDMA over InfiniBand or RoCE carries 4 KiB of payload per ~80 B of headers; NCCL's proxy adds little */
    {"model.nic_efficiency", offsetof(struct arch_model, nic_eff), FK_PLAIN, 0.7, 0.98, 1},
    /* NCCL's chunk x channels: 128 KiB to 8 MiB */
    {"model.coll_chunk", offsetof(struct arch_model, coll_chunk), FK_BYTES, 131072, 8388608, 1},
    {"model.coll_latency_scale", offsetof(struct arch_model, coll_lat_scale), FK_PLAIN, 0.5, 2, 1},
};
/* the range of a microarchitecture's energy per dense 16-bit MAC with its
   operand delivery, pJ (published estimates of 7-4 nm matrix units: about 1-5) */
static const double pj_lo = 0.5, pj_hi = 10;
#define NFITKEYS (int)(sizeof fitkeys / sizeof fitkeys[0])

/* weight of the prior: the mean squared log ratio of the constants to their shipped values */
#define FIT_PRIOR 0.05

/* evaluations of the fit error per free parameter, restarts included */
#ifndef FIT_EVALS
#define FIT_EVALS 80
#endif
#define MAX_FAMS 16
#define FIT_MAXP (NFITKEYS + MAX_FAMS)

static char fams[MAX_FAMS][ARCH_NAME_MAX];
static char fam_process[MAX_FAMS][ARCH_NAME_MAX]; /* chip.process of the family's first chip */
static int nfams;

/* A chip entry as loaded: what the fit scales. */
struct chipbase {
	struct arch_model m;
	int g;     /* the unit group of its matrix energy, -1: none */
	double pj; /* its pj_per_mac as configured */
	int fam;   /* index into fams, -1: not fitted */
	int setpj; /* a case sets it */
};
static struct chipbase *cb;
static double key_default[NFITKEYS];
static double fam_default[MAX_FAMS];

/* The energy per MAC a microarchitecture without GEMM rows takes (x: the fitted values, fitted: which
   families were): the geometric mean of the other fitted families on its process node, or of all the other
   fitted ones when none shares it; 0 when none was fitted. */
static double prior_pj(const double *x, const int *fitted, int fam)
{
	for (int same = 1; same >= 0; same--) {
		double lsum = 0;
		int n = 0;
		for (int f = 0; f < nfams; f++)
			if (f != fam && fitted[f] &&
			    (!same || (fam_process[f][0] && !strcmp(fam_process[f], fam_process[fam]))))
				lsum += log(x[NFITKEYS + f]), n++;
		if (n)
			return exp(lsum / n);
	}
	return 0;
}

/* One fit: values of the parameters (NFITKEYS keys, then nfams energies),
   and which energies the fit rows constrained. */
struct fitres {
	double x[FIT_MAXP];
	int fitted[MAX_FAMS];
	double err; /* mean absolute log error over its fit rows */
	int nrows;
};

int fit_row(const struct vcase *v)
{
	return v->ok && !v->gen && !v->cond && !ms[v->meas].lent;
}

static double get_model(const struct arch_model *m, int k)
{
	double v;
	memcpy(&v, (const char *)m + fitkeys[k].off, sizeof v);
	return v;
}

static void set_model(struct arch_model *m, int k, double v)
{
	memcpy((char *)m + fitkeys[k].off, &v, sizeof v);
}

static void fmt_value(char *buf, size_t len, int k, double v)
{
	switch (fitkeys[k].kind) {
	case FK_TIME:
		if (v >= 1e-6)
			snprintf(buf, len, "%.3g us", v * 1e6);
		else
			snprintf(buf, len, "%.3g ns", v * 1e9);
		break;
	case FK_BYTES: snprintf(buf, len, "%.3g B", v); break;
	case FK_PLAIN: snprintf(buf, len, "%.3g", v); break;
	}
}

/* Whether a chip's overrides set key. */
static int sets_key(const struct chipent *ce, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = ce->sets_text; (p = strstr(p, key)) != NULL; p += n)
		if ((p == ce->sets_text || p[-1] == ';' || p[-1] == ' ' || p[-1] == '.') && p[n] == '=')
			return 1;
	return 0;
}

/* The unit group whose matrix energy limits the chip's GEMMs. */
static int pj_group(const struct arch_chip *c)
{
	int g = -1;
	for (int i = 0; i < c->nunits; i++)
		if (c->units[i].mat_pj > 0 && (g < 0 || c->units[i].mat_pj > c->units[g].mat_pj))
			g = i;
	return g;
}

/* Records each chip entry's constants as loaded, the defaults (the value
   most entries carry) and the microarchitectures with an energy per MAC. */
static int fit_setup(void)
{
	cb = calloc((size_t)nchips + 1, sizeof *cb);
	if (!cb)
		return -1;
	for (int ci = 0; ci < nchips; ci++) {
		const struct arch_chip *c = chips[ci].c;
		cb[ci].g = -1, cb[ci].fam = -1;
		if (!c)
			continue;
		cb[ci].m = c->model;
		cb[ci].g = pj_group(c);
		cb[ci].setpj = sets_key(&chips[ci], "pj_per_mac");
		if (cb[ci].g < 0 || cb[ci].setpj)
			continue;
		cb[ci].pj = c->units[cb[ci].g].mat_pj;
		int f = 0;
		while (f < nfams && strcmp(fams[f], c->archname))
			f++;
		if (f == nfams) {
			if (nfams == MAX_FAMS)
				continue;
			snprintf(fams[nfams], sizeof fams[nfams], "%s", c->archname);
			snprintf(fam_process[nfams], sizeof fam_process[nfams], "%s", c->process);
			fam_default[nfams++] = cb[ci].pj;
		}
		cb[ci].fam = f;
	}
	for (int k = 0; k < NFITKEYS; k++) {
		int bestn = 0;
		for (int i = 0; i < nchips; i++) {
			if (!chips[i].c)
				continue;
			double v = get_model(&cb[i].m, k);
			int n = 0;
			for (int j = 0; j < nchips; j++)
				n += chips[j].c && get_model(&cb[j].m, k) == v;
			if (n > bestn)
				bestn = n, key_default[k] = v;
		}
	}
	return 0;
}

static double clampv(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Puts the parameter values x into every loaded chip (NULL: as loaded). A memo of the device model knows
   the changed chip by its content: nothing to drop. */
static void fit_apply(const double *x)
{
	for (int ci = 0; ci < nchips; ci++) {
		struct arch_chip *c = chips[ci].c;
		if (!c)
			continue;
		c->model = cb[ci].m;
		for (int k = 0; x && k < NFITKEYS; k++)
			if (!sets_key(&chips[ci], fitkeys[k].key) && key_default[k] > 0)
				set_model(&c->model, k,
				          clampv(get_model(&cb[ci].m, k) * x[k] / key_default[k], fitkeys[k].lo,
				                 fitkeys[k].hi));
		if (cb[ci].fam >= 0)
			c->units[cb[ci].g].mat_pj =
			    x ? cb[ci].pj * x[NFITKEYS + cb[ci].fam] / fam_default[cb[ci].fam] : cb[ci].pj;
	}
}

/* The prediction of op-level case v with the chips as they are now. */
static int predict_now(const struct vcase *v, double *err)
{
	double p;
	char why[WHYLEN];
	if (predict(chips[v->chip].c, v, &p, NULL, why, sizeof why))
		return -1;
	*err = (p - ms[v->meas].value) / ms[v->meas].value;
	return 0;
}

/* The error the fit minimizes at x: the mean absolute log ratio of
   predicted to measured over the fit rows outside source `out` (-1: all).
   Unlike the relative error it weighs a factor of two too fast and too slow
   alike, so a few rows off by several times do not steer the fit. Plus the
   prior (FIT_PRIOR, the header). */
struct fit_ctx {
	int out;
};
static double fit_error(const double *x, void *vctx)
{
	const struct fit_ctx *ctx = vctx;
	fit_apply(x);
	double sum = 0;
	int n = 0;
	for (int i = 0; i < nvs; i++) {
		double e;
		if (!fit_row(&vs[i]) || vs[i].src == ctx->out)
			continue;
		if (predict_now(&vs[i], &e) || !(1 + e > 0))
			return HUGE_VAL;
		sum += fabs(log1p(e));
		n++;
	}
	double prior = 0;
	int np = 0;
	for (int k = 0; k < NFITKEYS; k++)
		if (!fitkeys[k].coll && key_default[k] > 0)
			prior += pow(log(x[k] / key_default[k]), 2), np++;
	for (int f = 0; f < nfams; f++)
		if (fam_default[f] > 0)
			prior += pow(log(x[NFITKEYS + f] / fam_default[f]), 2), np++;
	return (n ? sum / n : 0) + (np ? FIT_PRIOR * prior / np : 0);
}

/* The search range of every parameter: the keys', then the energies'. */
static void fit_ranges(struct cv_param *p)
{
	for (int k = 0; k < NFITKEYS; k++)
		p[k].lo = fitkeys[k].lo, p[k].hi = fitkeys[k].hi;
	for (int f = 0; f < nfams; f++)
		p[NFITKEYS + f].lo = pj_lo, p[NFITKEYS + f].hi = pj_hi;
}

/* Fits the parameters on the fit rows outside source out (-1: all). */
static void fit_on(int out, struct fitres *r)
{
	struct cv_param p[FIT_MAXP];
	int freei[FIT_MAXP], nfree = 0;
	memset(r, 0, sizeof *r);
	fit_ranges(p);
	for (int k = 0; k < NFITKEYS; k++)
		r->x[k] = key_default[k];
	for (int f = 0; f < nfams; f++)
		r->x[NFITKEYS + f] = fam_default[f];
	/* an energy is fitted where a GEMM row of its microarchitecture is in the fit */
	for (int i = 0; i < nvs; i++)
		if (fit_row(&vs[i]) && vs[i].src != out && cb[vs[i].chip].fam >= 0 &&
		    !strcmp(ms[vs[i].meas].cat, "gemm"))
			r->fitted[cb[vs[i].chip].fam] = 1;
	for (int i = 0; i < nvs; i++)
		r->nrows += fit_row(&vs[i]) && vs[i].src != out;
	struct fit_ctx ctx = {out};
	/* block 1: the device constants and energies; block 2: the collectives' */
	for (int k = 0; k < NFITKEYS; k++)
		if (!fitkeys[k].coll)
			freei[nfree++] = k;
	for (int f = 0; f < nfams; f++)
		if (r->fitted[f])
			freei[nfree++] = NFITKEYS + f;
	cv_minimize(fit_error, &ctx, NFITKEYS + nfams, p, freei, nfree, r->x, FIT_EVALS * nfree);
	nfree = 0;
	for (int k = 0; k < NFITKEYS; k++)
		if (fitkeys[k].coll)
			freei[nfree++] = k;
	r->err = cv_minimize(fit_error, &ctx, NFITKEYS + nfams, p, freei, nfree, r->x, FIT_EVALS * nfree);
	/* the energies of microarchitectures without a row: the prior */
	double pj[MAX_FAMS];
	for (int f = 0; f < nfams; f++)
		pj[f] = r->fitted[f] ? r->x[NFITKEYS + f] : prior_pj(r->x, r->fitted, f);
	for (int f = 0; f < nfams; f++)
		if (pj[f] > 0)
			r->x[NFITKEYS + f] = pj[f];
}

static struct fitres fit_all;
static struct fitres *fit_fold; /* per source */
static int *fold_has;           /* the source has a fit row (else its fold is the full fit) */

/* The fit of the fold that leaves out v's source. */
static const struct fitres *fold_of(const struct vcase *v)
{
	return fold_has[v->src] ? &fit_fold[v->src] : &fit_all;
}

/* Replays the gen cases twice more: with the full fit (in-sample) and with
   their fold's fit (cross-validated; the same replay where their source has
   no fit row). */
static void fit_replay_gen(void)
{
	int n = 0;
	for (int i = 0; i < nvs; i++)
		n += vs[i].gen && vs[i].ok;
	if (!n)
		return;
	struct vgen_set set;
	vgen_set_init(&set, 2 * n);
	struct arch_chip *copies = calloc((size_t)(2 * n), sizeof *copies);
	int *kind = calloc((size_t)(2 * n), sizeof *kind);
	if (!copies || !kind) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nvs; i++) {
			struct vcase *v = &vs[i];
			if (!v->gen || !v->ok || v->unscored || (pass == 1 && !fold_has[v->src]))
				continue;
			if (v->serve) { /* served here, with this pass's constants */
				double t, tok, e = NAN;
				char why[512];
				fit_apply(pass ? fold_of(v)->x : fit_all.x);
				if (vserve_run(chips[v->chip].c, &v->gc, &v->so, &t, &tok, why, sizeof why))
					fail("%s: serve with the fitted constants: %s", v->id, why);
				else
					e = (gen_metric(v, t) - ms[v->meas].value) / ms[v->meas].value;
				if (pass == 0)
					v->err_in = e;
				if (pass == 1 || !fold_has[v->src])
					v->err_cv = e;
				continue;
			}
			fit_apply(pass ? fold_of(v)->x : fit_all.x);
			int m = set.m++;
			copies[m] = *chips[v->chip].c;
			char cmd[400];
			snprintf(cmd, sizeof cmd, "%s", v->op_text[0] + 4);
			set.texts[m] = vcase_trace(v, &v->gc, cmd);
			set.chips[m] = &copies[m];
			set.rpn[m] = v->rpn;
			set.cost[m] = (double)v->activities;
			set.idx[m] = i, kind[m] = pass;
		}
	fit_apply(NULL);
	double t0 = wall_now();
	vgen_set_run(&set);
	fprintf(stderr, "validate: %d step replays with the fitted constants in %.1f s\n", set.m, wall_now() - t0);
	for (int j = 0; j < set.m; j++) {
		struct vcase *v = &vs[set.idx[j]];
		const struct vgen_result *r = &set.res[j];
		double e = r->rc ? NAN : (gen_metric(v, r->time_s) - ms[v->meas].value) / ms[v->meas].value;
		if (r->rc)
			fail("%s: replay with the fitted constants: %s", v->id, r->why);
		if (kind[j] == 0)
			v->err_in = e;
		if (kind[j] == 1 || !fold_has[v->src])
			v->err_cv = e;
	}
	vgen_set_free(&set);
	free(copies);
	free(kind);
}

static void fit_job(long i, void *ctx, void *out)
{
	(void)ctx;
	if (i == 0 || fold_has[i - 1])
		fit_on((int)i - 1, out);
}

static void fit_job_done(long i, void *ctx, int ok, int status, double wall_s)
{
	(void)ctx, (void)wall_s;
	if (!ok) {
		char why[200];
		pp_describe(status, why, sizeof why);
		fail("fit %ld: %s", i, why);
	}
}

/*
 * Leave one chip out: the energy per MAC of a chip with GEMM rows,
 * predicted without them. The other constants stay at the full fit; the
 * chip's microarchitecture is refitted on the GEMM rows of its other chips
 * (H100 from H200 and H800 ...), or, alone in its family, takes the
 * prior of a microarchitecture without rows (prior_pj).
 */
#define MAX_LOCO 32
struct loco {
	char config[256];
	int fam, rows, from_family; /* refitted on its family's other chips, or the prior */
	double pj, mape_in, mape_out, bias_out;
};
static struct loco locos[MAX_LOCO];
static int nlocos;

struct loco_ctx {
	int fam;
	const char *config;
};

static int loco_row(const struct vcase *v, int fam)
{
	return fit_row(v) && !strcmp(ms[v->meas].cat, "gemm") && cb[v->chip].fam == fam;
}

static double loco_error(const double *x, void *vctx)
{
	const struct loco_ctx *ctx = vctx;
	fit_apply(x);
	double sum = 0;
	int n = 0;
	for (int i = 0; i < nvs; i++) {
		double e;
		if (!loco_row(&vs[i], ctx->fam) || !strcmp(chips[vs[i].chip].config, ctx->config))
			continue;
		if (predict_now(&vs[i], &e) || !(1 + e > 0))
			return HUGE_VAL;
		sum += fabs(log1p(e)), n++;
	}
	return n ? sum / n : 0;
}

/* The MAPE and bias of config's GEMM fit rows at x. */
static void loco_score(const double *x, const char *config, int fam, double *mape, double *bias)
{
	fit_apply(x);
	double sa = 0, sb = 0;
	int n = 0;
	for (int i = 0; i < nvs; i++) {
		double e;
		if (!loco_row(&vs[i], fam) || strcmp(chips[vs[i].chip].config, config) || predict_now(&vs[i], &e))
			continue;
		sa += fabs(e), sb += e, n++;
	}
	*mape = n ? sa / n : NAN, *bias = n ? sb / n : NAN;
}

static void leave_chips_out(void)
{
	struct cv_param p[FIT_MAXP];
	fit_ranges(p);
	for (int i = 0; i < nvs && nlocos < MAX_LOCO; i++) {
		const struct vcase *v = &vs[i];
		int fam = v->chip >= 0 ? cb[v->chip].fam : -1;
		if (fam < 0 || !loco_row(v, fam))
			continue;
		int seen = 0;
		for (int j = 0; j < nlocos; j++)
			seen |= !strcmp(locos[j].config, chips[v->chip].config);
		if (seen)
			continue;
		struct loco *L = &locos[nlocos++];
		memset(L, 0, sizeof *L);
		snprintf(L->config, sizeof L->config, "%s", chips[v->chip].config);
		L->fam = fam;
		int others = 0;
		for (int j = 0; j < nvs; j++)
			if (loco_row(&vs[j], fam)) {
				int mine = !strcmp(chips[vs[j].chip].config, L->config);
				L->rows += mine, others += !mine;
			}
		double x[FIT_MAXP];
		memcpy(x, fit_all.x, sizeof x);
		loco_score(x, L->config, fam, &L->mape_in, &L->bias_out);
		if (others) {
			struct loco_ctx ctx = {fam, L->config};
			int freei[1] = {NFITKEYS + fam};
			cv_minimize(loco_error, &ctx, NFITKEYS + nfams, p, freei, 1, x, 60);
			L->from_family = 1;
		} else {
			double prior = prior_pj(fit_all.x, fit_all.fitted, fam);
			if (prior > 0)
				x[NFITKEYS + fam] = prior;
		}
		L->pj = x[NFITKEYS + fam];
		loco_score(x, L->config, fam, &L->mape_out, &L->bias_out);
	}
	fit_apply(NULL);
}

static void write_loco(FILE *f)
{
	if (!nlocos)
		return;
	fprintf(
	    f,
	    "### Leave one chip out: the energy per MAC\n\nEach chip's GEMM fit rows predicted with its "
	    "microarchitecture's energy per MAC fitted without them: on the GEMM rows of the family's other "
	    "chips, or, where it is alone in its family, the prior of a family without rows (the geometric mean of the "
	    "other fitted families on its process node, or of all of them); every other constant as fitted on all "
	    "rows.\n\n"
	    "| chip | microarchitecture | GEMM rows | pJ/MAC (all rows) | pJ/MAC without the chip | from | MAPE "
	    "in-sample | MAPE without the chip | bias without the chip |\n"
	    "|---|---|---:|---:|---:|---|---:|---:|---:|\n");
	for (int i = 0; i < nlocos; i++) {
		const struct loco *L = &locos[i];
		char b1[32], b2[32], b3[32];
		pct(b1, sizeof b1, L->mape_in);
		pct(b2, sizeof b2, L->mape_out);
		spct(b3, sizeof b3, L->bias_out);
		fprintf(f, "| `%s` | %s | %d | %.3g | %.3g | %s | %s | %s | %s |\n", L->config, fams[L->fam], L->rows,
		        fit_all.x[NFITKEYS + L->fam], L->pj,
		        L->from_family ? "its family's other chips" : "other families", b1, b2, b3);
	}
	fprintf(f, "\n");
}

/* Fits on all fit rows and on every fold; sets each row's in-sample and
   cross-validated errors. */
void fit_and_score(void)
{
	if (fit_setup())
		return;
	fit_fold = calloc((size_t)nsrcs + 1, sizeof *fit_fold);
	fold_has = calloc((size_t)nsrcs + 1, sizeof *fold_has);
	if (!fit_fold || !fold_has) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	for (int i = 0; i < nvs; i++)
		if (fit_row(&vs[i]))
			fold_has[vs[i].src] = 1;
	/* the fits, one process each, as many at a time as there are processors:
	   job 0 fits on every row, job 1 + s leaves source s out */
	struct fitres *res = calloc((size_t)nsrcs + 1, sizeof *res);
	if (!res) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	if (pp_run(nsrcs + 1, pp_cpus(), sizeof *res, res, fit_job, fit_job_done, NULL))
		fail("fit: cannot start its processes");
	fit_all = res[0];
	for (int s = 0; s < nsrcs; s++)
		fit_fold[s] = res[1 + s];
	free(res);
	for (int i = 0; i < nvs; i++)
		vs[i].err_in = vs[i].err_cv = NAN;
	/* op-level rows: with the full fit, then source by source with its fold's */
	fit_apply(fit_all.x);
	for (int i = 0; i < nvs; i++)
		if (vs[i].ok && !vs[i].gen && predict_now(&vs[i], &vs[i].err_in))
			vs[i].err_in = NAN;
	for (int s = -1; s < nsrcs; s++) {
		if (s >= 0 && !fold_has[s])
			continue;
		fit_apply(s >= 0 ? fit_fold[s].x : fit_all.x);
		for (int i = 0; i < nvs; i++) {
			struct vcase *v = &vs[i];
			if (v->ok && !v->gen && (s >= 0 ? v->src == s : !fold_has[v->src]) &&
			    predict_now(v, &v->err_cv))
				v->err_cv = NAN;
		}
	}
	fit_apply(NULL);
	leave_chips_out();
	if (!no_steps)
		fit_replay_gen();
}

/* The fitted values: shipped, fitted on all rows, and across the folds. */
void fit_write(FILE *f)
{
	int nfold = 0;
	for (int s = 0; s < nsrcs; s++)
		nfold += fold_has[s];
	fprintf(f, "## Fitted constants\n\n");
	fprintf(
	    f,
	    "The `model` section of a config (`sim help config`) holds the constants of the device model that no "
	    "datasheet gives, and each chip's matrix units an energy per MAC (`matrix.pj_per_mac`). The suite "
	    "fits them by minimizing the mean absolute log ratio of predicted to measured over the fit rows (a factor "
	    "of two too fast weighs as much as one too slow), plus %g times the mean squared log ratio of the "
	    "constants to their shipped values (a prior: constants the rows do not separate, such as the static "
	    "power and the energy per MAC, stay near them rather than wander along that ridge; GSL's Nelder-Mead "
	    "simplex, `tests/validation/cv.c`, "
	    "restarted from its best point while that gains, at most %d evaluations per free parameter: not always "
	    "converged, so a figure can move by a point when a constant is added; the collective constants and the "
	    "others as two blocks, from the shipped values), once on all %d fit rows and once per source left out "
	    "(%d folds). An energy is fitted per microarchitecture where a GEMM row of it is in the fit; one without "
	    "(in a fold, or at all) takes the geometric mean of the fitted ones on its process node (`chip.process`; "
	    "of "
	    "all fitted ones when none shares it). A constant whose folds spread by "
	    "more than a quarter of its median is marked: the rows do not pin it down, or one source pulls it.\n\n",
	    FIT_PRIOR, FIT_EVALS, fit_all.nrows, nfold);
	fprintf(f, "| constant | shipped | fitted (all rows) | folds: median | folds: min .. max | |\n"
	           "|---|---:|---:|---:|---:|---|\n");
	double *a = malloc(sizeof(double) * (size_t)(nsrcs + 1));
	if (!a)
		return;
	for (int p = 0; p < NFITKEYS + nfams; p++) {
		int n = 0;
		for (int s = 0; s < nsrcs; s++)
			if (fold_has[s])
				a[n++] = fit_fold[s].x[p];
		double med = cv_median(a, n), lo = cv_quantile(a, n, 0), hi = cv_quantile(a, n, 1);
		char v[5][40];
		const char *note = n && med > 0 && (hi - lo) / med > 0.25 ? "spread" : "";
		if (p < NFITKEYS) {
			fmt_value(v[0], sizeof v[0], p, key_default[p]);
			fmt_value(v[1], sizeof v[1], p, fit_all.x[p]);
			fmt_value(v[2], sizeof v[2], p, med);
			fmt_value(v[3], sizeof v[3], p, lo);
			fmt_value(v[4], sizeof v[4], p, hi);
			fprintf(f, "| `%s` | %s | %s | %s | %s .. %s | %s |\n", fitkeys[p].key, v[0], v[1], v[2], v[3],
			        v[4], note);
		} else {
			int fm = p - NFITKEYS;
			fprintf(f, "| pJ/MAC, %s | %.3g | %.3g%s | %.3g | %.3g .. %.3g | %s |\n", fams[fm],
			        fam_default[fm], fit_all.x[p], fit_all.fitted[fm] ? "" : " (no GEMM row: prior)", med,
			        lo, hi, note);
		}
	}
	free(a);
	fprintf(f,
	        "\nMean absolute log error of the fit rows at the fitted values: %.4f. Folds (source left out: "
	        "its rows, the error of the other rows at the fold's fit):",
	        fit_all.err);
	for (int s = 0, first = 1; s < nsrcs; s++)
		if (fold_has[s]) {
			fprintf(f, "%s %s (%d rows, %.4f)", first ? "" : ";", srcs[s],
			        fit_all.nrows - fit_fold[s].nrows, fit_fold[s].err);
			first = 0;
		}
	fprintf(f, ".\n\n");
	write_loco(f);
}

int fit_families_fitted(void)
{
	int n = 0;
	for (int f = 0; f < nfams; f++)
		n += fit_all.fitted[f];
	return n;
}

int fit_folds(void)
{
	int n = 0;
	for (int s = 0; s < nsrcs && fold_has; s++)
		n += fold_has[s];
	return n;
}

int fit_nkeys(void)
{
	return NFITKEYS;
}

void fit_free(void)
{
	free(cb);
	free(fit_fold);
	free(fold_has);
	cb = NULL, fit_fold = NULL, fold_has = NULL;
}
