/*
 * validate_int.h -- private to tests/validation: what validate.c (reading,
 * predicting, checking), validate_report.c (the statistics and
 * the report), fit.c (the fit of the model's constants and its out-of-sample
 * scores) and the sections of their own (guards.c, rows.c, traces.c, mech.c) share: the rows,
 * the cases, the chip entries, and the few helpers they call.
 */
#ifndef SIM_VALIDATION_INT_H
#define SIM_VALIDATION_INT_H

#include "arch.h"
#include "coll.h"
#include "gen_case.h"
#include "model.h"
#include "op.h"

#include <stddef.h>
#include <stdio.h>

#define MAX_OPS  8
#define MAX_SETS 12
#define NWORST   5
#define WHYLEN   1024 /* reasons; composed ones cut their parts with %.Ns */

struct meas {
	char id[32];
	char cat[32];
	char device[160];
	char value_text[32];
	double value;
	char unit[32];
	char source[640];
	int line;
	int in_cases, in_skipped;
	int lent; /* from an --also file: measured by this project on lent hardware */
	/* the GEMM kernel the library ran, where the note names one whose name gives its tile (nvjet_sm90_tst_...,
	   cutlass_80_tensorop_..., ampere_..., sm80_xmma_gemm_...tilesize...): its name, and its tile of C as the
	   row-major op sees it (the names are column-major: their first dimension is the op's n); 0: none */
	char kernel[96];
	int lib_tile_m, lib_tile_n;
};
/* kernels.c: the library kernel a measurement's note names (struct meas: kernel, lib_tile_m, lib_tile_n), and the
   report's section that sets its tile beside the model's */
void kernel_of_note(const char *note, struct meas *m);
void write_kernels(FILE *f);

enum metric {
	M_TFLOPS,
	M_MS,
	M_US,
	M_GBPS,
	M_GELEMS,
	M_BUSBW,
	M_MEGATRON,
	M_MFU,
	M_TOKENS,
	M_LATENCY,
	M_MCORE,
	M_MHZ, /* the clock the device model runs the op's kernel at (sim op --explain), against a sustained SM clock */
	M_COUNT
};
static const char *const metric_unit[] = {"TFLOP/s",
                                          "ms",
                                          "us",
                                          "GB/s",
                                          "G elements/s",
                                          "GB/s busbw",
                                          "TFLOP/s per GPU",
                                          "% MFU",
                                          "tokens/s",
                                          "s (end-to-end batch latency)",
                                          "model TFLOP/s per GPU",
                                          "MHz"};
_Static_assert(sizeof metric_unit / sizeof metric_unit[0] == M_COUNT, "a unit per metric");
/* metrics of a `gen` case (a replayed step), not of op lines */
#define GEN_METRIC(m) ((m) == M_MEGATRON || (m) == M_MFU || (m) == M_TOKENS || (m) == M_LATENCY || (m) == M_MCORE)

/* A collective among a case's ops: `coll op=allreduce bytes=1MiB ranks=8
   [algo=ring]`, timed as it runs alone on an idle system (coll_plan: the
   latency term plus the bandwidth term, which is what the replay's SimGrid
   flows take on an idle platform; tests/test_coll.c checks that). */
struct vcoll {
	int on;
	enum tr_coll c;
	double bytes;
	int ranks;
	int algo; /* COLL_AUTO or an algorithm's index (coll_algo_find) */
};

struct vcase {
	char id[32];
	int meas; /* index into ms[] */
	int line;
	char config[256];
	char sets_text[640];
	char sets[MAX_SETS][320];
	int nsets;
	enum metric metric;
	double metric_arg;
	int kernel_time; /* metric " kernel": each op's time less its launch gap, as a profiler times the kernel */
	char ops_text[2048];
	char op_text[MAX_OPS][320];
	struct op ops[MAX_OPS];
	struct vcoll coll[MAX_OPS];
	int nops;
	int chip; /* index into chips[] */
	int ok;   /* parsed and predicted */
	double pred, err;
	struct dm_kernel kern; /* the kernel of its first op, as shipped (an op case) */
	char why[WHYLEN];
	/* a `gen` case: the ops column is a `sim gen` command whose trace is
	   replayed (a training step or an inference batch) */
	int gen;
	struct gen_config gc;
	/* a serving case (also gen): the ops column is a `sim serve` command
	   (what follows `sim serve CONFIG`), served in-process */
	int serve;
	struct sv_options so;
	double served_tokens; /* output tokens of the served stream */
	char attn[16];        /* case option attn=IMPL: the attention kernels the source ran, "" = as generated */
	/* an imported case (also gen): `import PATH [--host graph] [--profiler-overhead TIME] ; gen ...`, the step
	   a PyTorch profiler recorded, replayed as `sim import kineto PATH` with those options writes it; the gen
	   command says what the step computes (its tokens) */
	char import_path[256];          /* relative to the repository root; "" = not imported */
	struct imp_options import_opts; /* its --host and --profiler-overhead */
	char *imported;                 /* the job trace, once imported (vcase_import) */
	int nomem;                      /* case option memory=unchecked: the trace's memory statements are dropped */
	int rpn; /* case option ranks_per_node=N (sim run --ranks-per-node); 0: all a node's devices */
	double step_s, wall_s;
	/* an import case: the modelled ops' replayed time and their kernels' measured time per family (gen_case.h) */
	double fam_replay_s[IF_COUNT], fam_meas_s[IF_COUNT];
	int ranks, nrep;
	long activities; /* SimGrid activities its step replay ran (sleeps, parallel tasks): the work of it */
	/* a conditioned row: its case sets a constant of the model (a per-call
	   overhead of its harness, which only that harness's own measurements
	   give); reported apart, in no category score and not fitted */
	int cond;
	/* a replayed, unscored row: in skipped.tsv as well (its reason says why it is not scored), replayed with the
	   case's best reading of the run and reported apart with its error; cond is set too, so that no score, fit,
	   ratio or mechanism counts it */
	int unscored;
	int src;               /* its source (fit.c's leave-one-out unit): index into srcs[] */
	double err_in, err_cv; /* errors with the constants fitted on all rows, and on the other sources */
};

/* A category checked: the shipped MAPE it aims for and the guards of its cross-validated figures (--fit; NAN:
   none); validate.c's cats[] says why each is what it is. */
struct vcat {
	const char *name;
	double target;                   /* MAPE of the rows as shipped */
	double cv_mape, cv_bias, cv_p90; /* guards of the cross-validated figures */
};
#define NCATS 11
extern const struct vcat cats[NCATS];

/* What the cross-validated figures of every category aim for (issue 16). */
static const double cv_target_mape = 0.08, cv_target_bias = 0.04, cv_target_p90 = 0.20;
/* What the ratios between chips aim for (issue 7). */
static const double ratio_target = 0.10;

/* A category's statistics as shipped (scored rows), and cross-validated (--fit). */
struct catstat {
	int n;
	double mape, bias, sd;
};
struct cvstat {
	int n;
	double mape_in, mape_cv, bias_cv, p90_cv;
};

/* validate.c */
extern struct ratio *rs; /* ratios.tsv's pairs */
extern int nrs;
extern struct skip *sk; /* skipped.tsv's rows */
extern int nsk;
int cat_index(const char *name); /* index into cats[], -1: none */
int find_meas(const char *id);   /* index into ms[], -1: none */
double ratio_mape(int *n);       /* the ratios' MAPE over the n pairs scored */

/* validate_report.c: the statistics and docs/validation.md */
struct catstat stats_of(int cat);  /* category cat's scored rows as shipped (-1: all) */
struct cvstat cvstats_of(int cat); /* ... in-sample and cross-validated (--fit) */
int rows_in(int cat);              /* its rows, scored or not */
int cv_within(const struct cvstat *s, double mape, double bias, double p90);   /* within those bounds */
const char *verdict(int c, const struct catstat *cs, const struct cvstat *cv); /* the result cell's words */
int cmp_worst(const void *pa, const void *pb); /* qsort: vs[] indexes by descending |error| */
void write_report(FILE *f, const struct catstat *cs, const struct catstat *all, const int *order, int nok,
                  const struct cvstat *cv, const struct cvstat *cvall);

/* guards.c: the per-source guards */
int guard_failed(const char *cat); /* a source of cat passed its guard */
void check_guards(void);           /* fail() for each source past its guard */
void write_guards(FILE *f);        /* the report's "Guards" section */

struct chipent {
	char config[256];
	char sets_text[640];
	struct arch_chip *c;
};

struct skip {
	char id[32];
	char reason[2048];
};

/* A pair of ratios.tsv: one workload measured on two chips. */
struct ratio {
	char a[32], b[32];
	char chips[96];
	char work[160];
	char basis[400];
	int line;
	int va, vb; /* indexes into vs[], -1 when unknown */
	int ok, skipped;
	int cond; /* a conditioned row is one of the two: reported, not in the MAPE */
	double meas, pred, err;
};

/* The suite's state (validate.c), read by fit.c. */
extern struct meas *ms;
extern int nms;
extern struct vcase *vs;
extern int nvs;
extern struct chipent *chips;
extern int nchips;
extern int no_steps; /* --no-steps: the training and inference replays are not run */

/* Sources: the first word of a row's source column (a repository or a
   paper), the unit the cross-validation leaves out. */
#define MAX_SRCS 64
extern char srcs[MAX_SRCS][96];
extern int nsrcs;

/* validate.c */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int predict(const struct arch_chip *c, const struct vcase *v, double *out, struct dm_kernel *kern, char *why,
            size_t whylen);
double gen_metric(const struct vcase *v, double t);
void md_cell(FILE *f, const char *s, size_t max); /* Markdown cell text: '|' escaped, cut to max characters */
void pct(char *buf, size_t len, double x);
void spct(char *buf, size_t len, double x);
/* Splits a line in place at tabs (its line end dropped); returns the number of fields (<= max). */
int split_tabs(char *line, char **f, int max);
/* Splits `text` at `sep` into trimmed pieces; returns their number, -1 if
   more than max or one is empty or too long. */
int split_list(const char *text, char sep, char (*out)[320], int max, size_t outlen);

/* cases.c: the inputs (a problem is a fail() line naming file and line) */
/* the rows of a measurements file (lent: this project's own, held out of the fit) */
int read_measurements(const char *path, int lent);
/* ROOT/tests/validation/cases.tsv, skipped.tsv and ratios.tsv */
void read_cases(const char *root);
void read_skipped(const char *root);
void read_ratios(const char *root);
/* every row of a checked category in exactly one of cases.tsv and skipped.tsv */
void check_coverage(void);
/* 1 when a measurement's unit is a time (a ratio of times inverts), else 0 */
int time_unit(const char *unit);

/* fit.c: fits the model's constants on all fit rows, per source left out
   and per chip left out, and sets every row's err_in and err_cv (gen rows
   replayed again unless no_steps) */
void fit_and_score(void);
/* whether a case is a fit row: predicted, op-level, not conditioned */
int fit_row(const struct vcase *v);
/* microarchitectures whose energy the full fit constrained; folds fitted */
int fit_families_fitted(void);
int fit_folds(void);
/* the constants count (the `model` keys fitted) */
int fit_nkeys(void);
/* the "Fitted constants" section of the report */
void fit_write(FILE *f);
void fit_free(void);

/* seconds on a monotonic clock (the suite's own timings, on stderr) */
double wall_now(void);

/* mech.c: the training rows replayed again with each mechanism of the step
   model switched off (after the gen rows are predicted, unless no_steps),
   and the report's section on what each contributes */
void mech_run(const char *root);
void mech_write(FILE *f);
void mech_free(void);

/* traces.c: third-party profiler traces (traces.tsv) imported and replayed on the chip that recorded them and on
   others, and the report's section on them; a replay on the recording chip off its trace's measured span by more
   than 10% is a failure */
/* rows.c: the rows as a table (--rows) and the rows that moved against an earlier table (--baseline) */
void rows_write(FILE *f, int fit);
int rows_compare(const char *path, int fit, FILE *out); /* 0, or -1 with a line on stderr */

void traces_run(const char *root);
void traces_write(FILE *f);
void traces_free(void);

#endif
