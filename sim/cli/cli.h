/*
 * cli.h -- what the subcommands share: option parsing helpers and the
 * command table entries (sim/cli/main.c dispatches; the helpers are in
 * sim/cli/common.c).
 */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include "arch.h"
#include "progress.h"

#define CLI_MAX_SETS 16

/* Options every subcommand that reads a config accepts. */
struct cli_common {
	const char *sets[CLI_MAX_SETS]; /* --set path=value, in order */
	int nsets;
	int json;
};

/*
 * Consumes a common option at argv[*i] (advancing *i past its value).
 * Returns 1 if consumed, 0 if not a common option, -1 on a usage error
 * (message printed).
 */
int cli_common_opt(struct cli_common *o, int argc, char **argv, int *i, const char *cmd);
/* "sim CMD: unknown option 'OPT'", with the option of CMD's help text
   (its own source of truth for what it takes) nearest it when one is a
   likely slip ("did you mean '--timeline'?"); returns SIM_EXIT_USAGE. */
int cli_unknown_option(const char *cmd, const char *help, const char *opt);
/* 1 when help's option lines name the option `name` ("--json") as a flag: nothing after it but the description
   (two spaces or more). */
int cli_flag_without_value(const char *help, const char *name);
/* Prints "sim CMD: msg" and a pointer to help; returns SIM_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The file a config argument names: NAME itself when readable, else
   NAME.cfg, else (a name, not a path starting with /, ./ or ../) NAME or
   NAME.cfg in each directory of $SIM_CONFIG_PATH (colon-separated), in the
   share/sim/configs beside the program (bin/../share/sim/configs: any
   install prefix), in SIM_DATADIR/configs (the configured prefix), then in
   the source tree's configs/ (a program run from its build tree). Written
   into buf when found elsewhere; NAME when nothing is found. */
const char *cli_config(const char *name, char *buf, size_t len);
/* Loads a config (cli_config resolves the name) with the overrides,
   printing the error; NULL on failure. */
struct arch_chip *cli_load(const char *path, const struct cli_common *o, int *exit_code);

/* Jobs done of n as a progress line, "sim CMD: 3/40 WHAT (9 s)" (progress.h
   says when; a log that got a line also gets the last); the last job ends
   the progress. */
void cli_progress_jobs(struct progress *p, const char *what, long done, long n);

/* FNV-1a of s into h, then a separator (("ab","c") is not ("a","bc")); h starts at CLI_FNV_START. A run in shards
   fingerprints what it runs with it, so that `sim merge` refuses shards of another run. */
#define CLI_FNV_START 0xcbf29ce484222325ull
void cli_fnv(unsigned long long *h, const char *s);

/* "--shard I/N" (0 <= I < N <= max) into *i, *n; 0 or a usage error of cmd. */
int cli_parse_shard(const char *cmd, const char *v, long max, long *i, long *n);
/* --ranks-per-node's value, 1 to 65536, into *out; 0, or a usage error (exit 2) naming cmd. */
int cli_parse_ranks_per_node(const char *cmd, const char *v, int *out);

/* The first line of a `sim sweep --shard` CSV, before "I/N of P points" (cmd_merge.c reads it). */
#define SWEEP_SHARD_LINE "# sim sweep shard "
/* Joins the N shard files of a `sim plan --shard` run (their first line: PL_SHARD_LINE of plan.h) into the plan's
   CSV at out (NULL: stdout), and its Pareto plot at plot (NULL: none) (cmd_plan.c); an exit code. */
int cli_plan_merge(const char *const *paths, int n, const char *out, const char *plot);
int cmd_merge(int argc, char **argv);
extern const char cmd_merge_help[];
int cmd_info(int argc, char **argv);
extern const char cmd_info_help[];
int cmd_op(int argc, char **argv);
extern const char cmd_op_help[];
int cmd_run(int argc, char **argv);
extern const char cmd_run_help[];
int cmd_gen(int argc, char **argv);
extern const char cmd_gen_help[];
int cmd_step(int argc, char **argv);
extern const char cmd_step_help[];
int cmd_sweep(int argc, char **argv);
extern const char cmd_sweep_help[];
int cmd_roofline(int argc, char **argv);
extern const char cmd_roofline_help[];
int cmd_serve(int argc, char **argv);
extern const char cmd_serve_help[];
int cmd_plan(int argc, char **argv);
extern const char cmd_plan_help[];
int cmd_compare(int argc, char **argv);
extern const char cmd_compare_help[];
int cmd_import(int argc, char **argv);
extern const char cmd_import_help[];
int cmd_export(int argc, char **argv);
extern const char cmd_export_help[];

#endif
