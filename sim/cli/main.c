/*
 * main.c -- the `sim` command line: subcommand dispatch, help, version.
 *
 * Every subcommand reports errors on stderr as one line "path:line: message"
 * (or "sim CMD: message" for usage errors) and exits with a documented code
 * (see `sim --help`); stdout carries only the requested report.
 */
#include "cli.h"
#include "engine.h"
#include "mpi_ranks.h"
#include "outfile.h"

#include <ctype.h>
#include <gsl/gsl_version.h>
#include <histedit.h>
#include <jansson.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef SIM_VERSION
#define SIM_VERSION "0.0.0"
#endif

static int cmd_help(int argc, char **argv);

static const char cmd_help_help[] = "usage: sim help [COMMAND | config [--markdown] | units]\n"
                                    "\n"
                                    "Prints help on a command, the config parameter reference (generated from\n"
                                    "the parameter tables; --markdown writes docs/config-reference.md), or the\n"
                                    "units a quantity may be written in.\n";

struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
	const char *help;
};

static const struct command commands[] = {
    {"info", cmd_info, "describe a chip: units, memory, links, system, derived peaks", cmd_info_help},
    {"op", cmd_op, "predict one op (gemm, attn, elem, copy, conv, embedding) and what bounds it", cmd_op_help},
    {"run", cmd_run, "replay a workload trace on a cluster and report where the time goes", cmd_run_help},
    {"gen", cmd_gen, "write the trace of a training step or inference batch of a transformer", cmd_gen_help},
    {"import", cmd_import, "turn PyTorch profiler (Kineto) or Chakra traces into a trace sim run replays",
     cmd_import_help},
    {"export", cmd_export, "write a trace's ranks as Chakra execution traces for ASTRA-sim", cmd_export_help},
    {"serve", cmd_serve, "serve a request stream on replicas: continuous batching, TTFT/TPOT percentiles",
     cmd_serve_help},
    {"plan", cmd_plan, "search a training run's parallel layouts: ranked step times, memory", cmd_plan_help},
    {"step", cmd_step, "step the warps of one SM through a kernel's main loop, cycle by cycle", cmd_step_help},
    {"compare", cmd_compare, "compare chips side by side: time, energy, cost, perf/W and perf/$", cmd_compare_help},
    {"sweep", cmd_sweep, "predict an op or replay a trace over a grid of config values", cmd_sweep_help},
    {"merge", cmd_merge, "join the CSVs of a sweep run in shards (sweep --shard I/N) into one", cmd_merge_help},
    {"roofline", cmd_roofline, "a chip's roofs, bandwidth slopes and ridge points, with ops placed", cmd_roofline_help},
    {"help", cmd_help, "help on a command, the config reference, or units", cmd_help_help},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: sim COMMAND [ARGS]\n"
	           "\n"
	           "sim predicts how GPUs and accelerators run AI workloads from a description of\n"
	           "their microarchitecture (configs/*.cfg).\n"
	           "\n"
	           "commands:\n");
	for (int i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n"
	           "options:\n"
	           "  -h, --help     this help (sim help COMMAND for a command's)\n"
	           "  -V, --version  version of sim and of the libraries it uses\n"
	           "\n"
	           "examples:\n"
	           "  sim info configs/h100.cfg\n"
	           "  sim info configs/a100.cfg --json\n"
	           "  sim info configs/h100.cfg --set compute.sm.count=114\n"
	           "  sim help config\n"
	           "\n"
	           "exit codes:\n"
	           "  0 ok, 2 usage error, 3 the workload does not fit the device memory,\n"
	           "  65 bad trace, 66 input file missing, 70 internal error,\n"
	           "  73 cannot write output (or an output is one of the inputs), 78 bad config,\n"
	           "  130 interrupted (SIGINT), 143 terminated (SIGTERM)\n"
	           "\n"
	           "environment:\n"
	           "  SIM_CONFIG_PATH  directories (colon-separated) where config names are looked up\n"
	           "  SIM_PROGRESS     progress lines on stderr: 0 none, S a line every S seconds\n"
	           "                   (default: on a terminal from 1 s on, otherwise every 10 s)\n");
}

static void units_help(void)
{
	printf("Quantities are written as a number and a unit, in quotes in a config:\n"
	       "  size        B KB MB GB TB PB (powers of 1000), KiB MiB GiB TiB PiB (powers of 1024)\n"
	       "  bandwidth   B/s KB/s MB/s GB/s TB/s PB/s, KiB/s ... TiB/s, GBps TBps;\n"
	       "              bits: b/s kb/s Mb/s Gb/s Tb/s, bps Mbps Gbps Tbps (1 B = 8 b)\n"
	       "  frequency   Hz kHz MHz GHz\n"
	       "  time        s ms us ns ps\n"
	       "  power       W kW mW\n"
	       "  throughput  FLOPS GFLOPS TFLOPS PFLOPS, FLOP/s ... PFLOP/s, OPS GOPS TOPS POPS\n"
	       "  price       USD\n"
	       "Examples: \"3.35 TB/s\", \"1830 MHz\", \"50 MiB\", \"400 Gb/s\", \"1 us\", \"700 W\".\n"
	       "Decimal prefixes are exact powers of ten: \"3.35 TB/s\" is 3.35e12 bytes/s.\n");
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return SIM_EXIT_OK;
	}
	if (argc > 3 || (argc == 3 && strcmp(argv[1], "config")))
		return cli_usage_error("help", "too many arguments");
	if (!strcmp(argv[1], "config")) {
		if (argc == 3 && strcmp(argv[2], "--markdown"))
			return cli_usage_error("help", "unknown option '%s'", argv[2]);
		arch_params_help(stdout, argc == 3);
		return SIM_EXIT_OK;
	}
	if (!strcmp(argv[1], "units")) {
		units_help();
		return SIM_EXIT_OK;
	}
	for (int i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			fputs(commands[i].help, stdout);
			return SIM_EXIT_OK;
		}
	}
	return cli_usage_error("help", "no command or topic '%s' (commands: info, help; topics: config, units)",
	                       argv[1]);
}

/* Runs a command with every "--opt=value" written as "--opt" "value" (as getopt_long reads it), so that each
   command's parser takes both spellings; a "--" ends the options. A flag its help lists without a value
   ("--json=x") is a usage error. */
static int run_split(const struct command *c, int argc, char **argv)
{
	int (*fn)(int, char **) = c->fn;
	char **v = malloc(((size_t)argc * 2 + 1) * sizeof *v);
	char **names = malloc(((size_t)argc + 1) * sizeof *names);
	if (!v || !names) {
		free(v);
		free(names);
		return fn(argc, argv);
	}
	int n = 0, nn = 0, opts = 1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		if (i > 0 && !strcmp(a, "--"))
			opts = 0;
		if (i > 0 && opts && !strncmp(a, "--", 2) && isalpha((unsigned char)a[2]) && eq) {
			char *name = strndup(a, (size_t)(eq - a));
			if (name && cli_flag_without_value(c->help, name)) {
				cli_usage_error(c->name, "%s takes no value (got '%s')", name, a);
				free(name);
				for (int k = 0; k < nn; k++)
					free(names[k]);
				free(names);
				free(v);
				return SIM_EXIT_USAGE;
			}
			if (name) {
				names[nn++] = name;
				v[n++] = name;
				v[n++] = (char *)eq + 1;
				continue;
			}
		}
		v[n++] = argv[i];
	}
	v[n] = NULL;
	int rc = fn(n, v);
	for (int i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(v);
	return rc;
}

int main(int argc, char **argv)
{
	out_signals_install();
	if (argc < 2) {
		usage(stderr);
		return SIM_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return SIM_EXIT_OK;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		int maj, min, patch;
		char sg[600], why[512];
		if (rp_engine_simgrid_version(&maj, &min, &patch, why, sizeof why))
			snprintf(sg, sizeof sg, "SimGrid not loaded: %s", why);
		else
			snprintf(sg, sizeof sg, "SimGrid %d.%d.%d", maj, min, patch);
		char mpi[64];
		printf("sim %s (%s, libconfig %d.%d, GSL %s, jansson %s, zlib %s, libedit API %d.%d, %s)\n",
		       SIM_VERSION, sg, LIBCONFIG_VER_MAJOR, LIBCONFIG_VER_MINOR, GSL_VERSION, JANSSON_VERSION,
		       zlibVersion(), LIBEDIT_MAJOR, LIBEDIT_MINOR, sim_mpi_version(mpi, sizeof mpi));
		return SIM_EXIT_OK;
	}
	for (int i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(cmd, commands[i].name)) {
			/* `sim CMD --help` is `sim help CMD` */
			for (int k = 2; k < argc; k++) {
				if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
					fputs(commands[i].help, stdout);
					return SIM_EXIT_OK;
				}
			}
			if (commands[i].fn == cmd_help)
				return cmd_help(argc - 1, argv + 1);
			return run_split(&commands[i], argc - 1, argv + 1);
		}
	}
	const char *names[NCOMMANDS];
	for (int i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	int near = arch_nearest(cmd, names, NCOMMANDS);
	if (near >= 0)
		fprintf(stderr, "sim: unknown command '%s' (did you mean '%s'?) (see sim --help)\n", cmd, names[near]);
	else
		fprintf(stderr, "sim: unknown command '%s' (see sim --help)\n", cmd);
	return SIM_EXIT_USAGE;
}
