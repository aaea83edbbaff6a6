/*
 * gen_case.h -- the training and inference rows of the validation suite:
 * a `sim gen` argument list to its struct gen_config and trace text, and
 * the replay of that trace in a child process (SimGrid runs one simulation
 * per process).
 */
#ifndef SIM_VALIDATION_GEN_CASE_H
#define SIM_VALIDATION_GEN_CASE_H

#include "arch.h"
#include "gen.h"
#include "import.h"
#include "serve.h"

#include <stddef.h>

/* Parses args (what follows `sim gen`: "gpt --layers 24 ...") exactly as
   `sim gen` does. Returns 0, or -1 with the command's message in why. */
int vgen_config(const char *args, struct gen_config *c, char *why, size_t len);

/* The trace `sim gen` writes for c, with every `impl=flash2` attention
   replaced by `impl=<attn>` when attn is not NULL, and with its `memory`
   statements commented out when nomem is set (the replay then does not
   check that the ranks fit); malloc'd, NULL when out of memory. */
char *vgen_trace(const struct gen_config *c, const char *cmdline, const char *attn, int nomem);

/* A serving row: args is what follows `sim serve CONFIG` ("llama2-7b
   --burst ..."), read by the command's own parser (sv_parse_args). Returns
   0, or -1 with the command's message in why. */
int vserve_config(const char *args, struct sv_options *o, struct gen_config *c, char *why, size_t len);
/* Serves o's stream on chip c (in this process: serving makes no SimGrid
   call): *time_s gets the first arrival to the last token, *out_tokens the
   tokens generated. 0, or the exit code with why set. */
int vserve_run(const struct arch_chip *c, const struct gen_config *g, const struct sv_options *o, double *time_s,
               double *out_tokens, char *why, size_t len);

/* The trace a `gen` case replays: an imported case's trace (a copy), else the one `sim gen` writes for c (as
   vgen_trace). malloc'd, NULL when out of memory. */
struct vcase;
char *vcase_trace(const struct vcase *v, const struct gen_config *c, const char *cmdline);

/* Imports the Kineto traces ROOT/files[0..nfiles) (one per rank, at most VIMPORT_MAX) as `sim import kineto`
   does: *text gets the job (malloc'd), *st its figures. 0, or an exit code with why set (*text NULL). */
#define VIMPORT_MAX 4
struct imp_stats;
int vimport_kineto(const char *root, const char *const *files, int nfiles, const struct imp_options *opts, char **text,
                   struct imp_stats *st, char *why, size_t len);
/* Imports an imported case's Kineto trace (ROOT/v->import_path) into v->imported, as vimport_kineto. */
int vcase_import(struct vcase *v, const char *root, char *why, size_t len);

/* What the replay of one trace gave. */
struct vgen_result {
	int rc;          /* 0, or rp_run's exit code (-1: the child died) */
	double time_s;   /* step time */
	int ranks, nrep; /* ranks of the trace, representatives replayed */
	long activities; /* SimGrid activities the replay ran (sleeps, parallel tasks): its work */
	double wall_s;   /* wall-clock time of the child */
	/* an imported trace (`sim import kineto`): per kernel family (enum imp_family), the replayed time of the
	   modelled ops, all ranks, and the measured time of the kernels they stand for (the trace's comments) */
	double fam_replay_s[IF_COUNT], fam_meas_s[IF_COUNT];
	char why[512];
};

/* Replays each of n traces on its chip (on[i]) with rpn[i] ranks per node
   (0: all its devices; sim run --ranks-per-node), at most jobs at a time,
   each in a forked child; fills res[i]. A trace equal to an earlier one on
   the same chip and placement is replayed once (both get its result). With
   cost (else NULL), the costliest start first, so that the last to end is
   a short one. The caller has made no SimGrid call. */
void vgen_replay_all(const char *const *texts, const struct arch_chip *const *on, const int *rpn, const double *cost,
                     int n, int jobs, struct vgen_result *res);

/* A batch of replays: m traces (owned), each on its chip, each for the
   caller's item idx[j]; res[j] once run. */
struct vgen_set {
	int m;
	char **texts;
	const struct arch_chip **chips;
	int *rpn;     /* ranks per node of each (0: all the node's devices) */
	double *cost; /* the work of each, roughly (0: unknown): the longest start first */
	int *idx;
	struct vgen_result *res;
};
/* Room for n replays (the program exits when there is none). */
void vgen_set_init(struct vgen_set *s, int n);
/* Replays texts[0..m) with vgen_replay_all, as many at a time as there are
   processors (at most 8). */
void vgen_set_run(struct vgen_set *s);
void vgen_set_free(struct vgen_set *s);

#endif
