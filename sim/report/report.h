/*
 * report.h -- what `sim run` prints: the summary derived once from the
 * replay's spans (step time, per-rank busy/idle, compute vs exposed
 * communication, time per op kind and per mark region, TFLOP/s and MFU,
 * top bottlenecks, critical path) as text, JSON, CSV files, and a
 * Perfetto / Chrome timeline.
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include "replay.h"

#include <stdio.h>

struct rep_rank {
	double busy, compute, comm, exposed, wait, idle; /* seconds */
};

struct rep_group { /* one row of a "time by ..." table */
	char name[96];
	long count;
	double time_s; /* summed over ranks */
	double extra;  /* kinds: -; collectives: mean bus bandwidth B/s; top: share of all op time */
	int algo, proto, bound;
};

#define REP_TOP       10
#define REP_CRIT      12
#define REP_GROUPS    16
#define REP_PLACE_MAX 8

/* A communicator whose groups could each sit inside one node but some span
   two or more (placement.c) */
struct rep_place {
	char comm[32];
	int groups, spanning; /* its groups, and those with members in more than one node */
	int size;             /* members of its largest group */
	int suggest;          /* ranks per node that put every group in one node (0: none) */
};

struct report {
	const struct arch_chip *chip;
	const struct trace *trace;
	const struct rp_result *r;
	/* provenance the saved outputs record (the caller sets them after
	   report_build; NULL/0: not recorded): sim's version, the command's
	   arguments after `sim` */
	const char *version;
	int argc;
	char *const *argv;
	struct rep_rank *rank; /* per rank */
	struct rep_rank mean, max;
	double flops;      /* useful work, all ranks */
	double peak;       /* per device, of the dominant dtype */
	double tflops_dev; /* achieved per device */
	double hfu;        /* hardware FLOPs utilization: executed FLOPs (recompute included) / (time x ranks x peak) */
	int nkinds;
	struct rep_group kinds[TK_COUNT + OP_KIND_COUNT + CO_COUNT];
	int ncolls;
	struct rep_group *colls;
	int nmarks;
	struct rep_group *marks; /* time_s: longest region span over ranks; extra: compute share */
	int ntop;
	struct rep_group top[REP_TOP];
	double total_op_time;
	/* critical path */
	double crit_compute, crit_comm, crit_wait, crit_other;
	int ncrit;
	int no_memory; /* a part of the report could not be computed for want of memory: report_build fails */
	struct rp_span crit[REP_CRIT]; /* the longest spans on the path (derived ones too) */
	double crit_d[REP_CRIT];       /* their durations */
	long crit_len;
	/* report_work.c: the trace's workload line */
	int has_workload;
	double tokens_per_s, model_tflops_dev, model_mfu, ttft_s, tpot_s;
	/* its memory lines */
	int mem_rank; /* the rank that needs the most, -1 = no memory lines */
	double mem_peak, mem_mean, mem_device;
	/* communication per communicator ("p2p" for send/recv): time_s mean per
	   rank, extra the exposed part (not overlapped by the rank's compute) */
	int ngroups;
	struct rep_group cgroups[REP_GROUPS];
	/* placement.c: communicators whose groups the nodes split */
	int nplace;
	struct rep_place place[REP_PLACE_MAX];
};

/* "1.234 ms": a duration with the unit that suits it (s, ms, us). */
void report_tfmt(double s, char *buf, size_t len);
/* A span's label in BUF (32 bytes): a device op's first word (gemm, attn ...), a collective's op= (allreduce ...),
   else its kind's name (send, recv, delay). */
const char *report_span_label(const struct rp_span *s, const struct rp_result *r, char buf[32]);
/* "184.7 k": a count or rate with an SI prefix (k M G T P), 4 significant digits; the unit follows it. Under
   0.001 in fixed point ("0.00004484"): never an exponent. */
void report_nfmt(double v, char *buf, size_t len);

struct json;
/* report_work.c (called by report.c) */
/* idx: the recorded spans by rank and start; copies[i]: the iterations a
   steady state derived from span i (replay.h), NULL when none */
void report_work_build(struct report *rep, const long *idx, long n, const long *copies);
/* The run's steady state of a pipeline (replay.h: rp_steady.stagger), NULL when it has none. */
const struct rp_steady *report_stagger(const struct rp_result *r);
/* For such a run: out[0..dim) = f(the spans of one rank, idx[0..n) (by start), with every derived copy among them, by
   start), for an f that adds up over time, without listing every copy (stagger.c says how); -1 when memory runs out. */
int report_stagger_eval(const struct report *rep, const long *idx, long n, const long *copies, int dim,
                        int (*f)(const struct report *, const struct rp_span *, long, double *, void *), void *arg,
                        double *out);
void report_work_text(const struct report *rep, FILE *f);
void report_work_text_groups(const struct report *rep, FILE *f);
void report_work_json(const struct report *rep, struct json *j);
/* placement.c (called by report.c): fills rep->place from the trace's groups and the run's nodes; one
   "  placement ..." line per entry */
void rep_placement(struct report *rep);
void rep_placement_text(const struct report *rep, FILE *f);

int report_build(struct report *rep, const struct arch_chip *c, const struct trace *t, const struct rp_result *r);
void report_free(struct report *rep);

void report_text(const struct report *rep, const char *config_path, FILE *f);
void report_json(const struct report *rep, const char *config_path, FILE *f);
/* Writes ranks.csv, ops.csv (one row per op executed) and kinds.csv into dir. */
int report_csv(const struct report *rep, const char *dir, char *why, size_t whylen);
/* Chrome / Perfetto JSON; keep[] (NULL = all) selects ranks. */
int report_timeline(const struct report *rep, FILE *f, const char *keep);
/* One rank's timeline as a PyTorch profiler (Kineto) trace, for Holistic
   Trace Analysis and Perfetto beside measured traces (timeline_kineto.c);
   0, or -1 when f fails. */
int report_timeline_kineto(const struct report *rep, FILE *f, int rank);

#endif
