/*
 * cmd_plan_int.h -- private to `sim plan` (sim/cli/cmd_plan.c: options,
 * the search, shards; cmd_plan_out.c: its outputs and the serving plan).
 */
#ifndef SIM_CMD_PLAN_INT_H
#define SIM_CMD_PLAN_INT_H

#include "cli.h"
#include "gen.h"
#include "mpi_ranks.h"
#include "outfile.h"
#include "plan.h"
#include "plot.h"

#include <stdio.h>

/* the command line as parsed */
struct pl_args {
	const char *config;
	long long gpus;
	int top, json, jobs, nsets;
	const char *csv, *plot;
	const char *sets[CLI_MAX_SETS];
	struct pl_space sp;
	int gen_argc;
	char *gen_argv[256];
	int argc; /* the command line, for provenance */
	char **argv;
	long shard_i, shard_n; /* --shard I/N; shard_n 0: every replay, ranked */
	int serve;             /* --mode serve */
	int train_lists;       /* a training-only option was given */
	int serve_lists;       /* a serving-only search list was given (--max-num-seqs) */
	struct sv_options so;  /* --mode serve: the stream, engine and limits (sim serve's) */
};

/* ---- cmd_plan_out.c ---- */

/* pl_progress_fn over the command line's progress (its ctx the progress line, struct progress) */
void cp_progress(long done, long n, void *ctx);

/* a training plan: the ranked table on stdout (with the search's wall time), every layout as CSV, the JSON */
void cp_text_table(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g,
                   const struct pl_plan *p, double wall_s);
void cp_write_csv(FILE *f, const struct pl_plan *p);
void cp_write_json(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g,
                   const struct pl_plan *p);
/* an output file opened beside its final path and put in place when complete (sim/base/outfile.h): 0, or 73 with
   the message printed */
int cp_open_out(const char *path, struct out_file *o, FILE **f);
int cp_close_out(const char *path, struct out_file *o, FILE *f);
/* the plot's title; the plot written to path (0, or an exit code with the message printed) */
void cp_plot_title(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g, char *t, size_t len);
int cp_save_plot(const char *path, struct plot *pl);
/* --mode serve: the whole search and its outputs (an exit code) */
int cp_run_serve(const struct arch_chip *c, const struct pl_args *A, const struct gen_config *g);
/* MPI ranks: the points every rank replayed, gathered on rank 0 (0, or an exit code) */
int cp_gather_plan(const struct sim_mpi *mp, struct pl_plan *p);

#endif
