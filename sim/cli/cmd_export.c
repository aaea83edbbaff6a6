/*
 * cmd_export.c -- `sim export chakra CONFIG JOB.trace -o PREFIX`
 *
 * Writes each rank of a simtrace 1 job as a Chakra execution trace
 * PREFIX.R.et (sim/export/), device ops timed on CONFIG's chip, and its
 * communicator groups as PREFIX.json. Each file
 * is written under a temporary name and renamed; when any rank fails, the
 * files already written by this run are removed: all or none.
 */
#include "cli.h"
#include "export.h"
#include "outfile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILES 4096

const char cmd_export_help[] = "usage: sim export chakra CONFIG JOB.trace -o PREFIX [--set PATH=VALUE]...\n"
                               "                  [--max-nodes N]\n"
                               "\n"
                               "Writes each rank R of a simtrace 1 job as a Chakra execution trace\n"
                               "PREFIX.R.et (protobuf, MLCommons Chakra's et_def.proto), the input of\n"
                               "ASTRA-sim (docs/import.md, \"Exporting a job as Chakra ETs\"). Device ops\n"
                               "become compute nodes with the device model's duration on CONFIG's chip (whole\n"
                               "microseconds, as Chakra records them) and their FLOPs and DRAM bytes\n"
                               "(num_ops, tensor_size); collectives, sends and receives become\n"
                               "communication nodes; delays become CPU nodes. Each node depends on the\n"
                               "previous node of its stream and on what its after= labels name. The\n"
                               "communicators other than world are written to PREFIX.json, the file\n"
                               "ASTRA-sim reads with --comm-group-configuration (and sim import chakra with\n"
                               "--comm-groups); each collective names its group there by pg_name.\n"
                               "\n"
                               "options:\n"
                               "  -o PREFIX        the files' prefix: PREFIX.0.et, PREFIX.1.et, ..., PREFIX.json\n"
                               "  --set PATH=VALUE override a config parameter (repeatable)\n"
                               "  --max-nodes N    most nodes in a rank's file (default 20000000; exit 65)\n"
                               "\n"
                               "exit codes: 0 ok, 2 usage, 65 bad trace (or more than 4096 ranks, or a rank\n"
                               "past --max-nodes), 66 a file cannot be read, 73 cannot write an output\n"
                               "(the files this run wrote are removed).\n"
                               "\n"
                               "examples:\n"
                               "  sim export chakra configs/h100.cfg traces/pipeline_4.trace -o /tmp/pipeline_4\n"
                               "  sim export chakra configs/mi300x.cfg traces/dp_step_16.trace -o /tmp/dp16\n";

int cmd_export(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("export", "expected a format: chakra");
	if (strcmp(argv[1], "chakra"))
		return cli_usage_error("export", "unknown format '%s' (expected chakra)", argv[1]);
	struct cli_common co = {0};
	const char *pos[2] = {NULL, NULL}, *prefix = NULL;
	long long max_nodes = 0;
	int np = 0;
	for (int i = 2; i < argc; i++) {
		int r = cli_common_opt(&co, argc, argv, &i, "export");
		if (r < 0)
			return SIM_EXIT_USAGE;
		if (r > 0)
			continue;
		const char *a = argv[i];
		if ((!strcmp(a, "-o") || !strcmp(a, "--max-nodes")) && i + 1 >= argc)
			return cli_usage_error("export", "%s needs a value", a);
		if (!strcmp(a, "-o"))
			prefix = argv[++i];
		else if (!strcmp(a, "--max-nodes")) {
			char *end;
			errno = 0;
			max_nodes = strtoll(argv[++i], &end, 10);
			if (errno || end == argv[i] || *end || max_nodes < 1 || max_nodes > 1000000000)
				return cli_usage_error("export", "--max-nodes %s: expected a number from 1 to 1e9",
				                       argv[i]);
		} else if (a[0] == '-' && a[1])
			return cli_unknown_option("export", cmd_export_help, a);
		else if (np < 2)
			pos[np++] = a;
		else
			return cli_usage_error("export", "unexpected argument '%s' (expected CONFIG JOB.trace)", a);
	}
	if (np < 2)
		return cli_usage_error("export", "expected CONFIG and JOB.trace");
	if (!prefix || !*prefix || !strcmp(prefix, "-"))
		return cli_usage_error("export", "expected -o PREFIX (the files are PREFIX.R.et)");
	int rc = 0;
	struct arch_chip *chip = cli_load(pos[0], &co, &rc);
	if (!chip)
		return rc;
	char why[1024];
	struct trace *t = tr_load(pos[1], 0, &rc, why, sizeof why);
	if (!t) {
		fprintf(stderr, "%s\n", why);
		arch_free(chip);
		return rc;
	}
	int n = tr_ranks(t);
	char(*paths)[PATH_MAX] = NULL;
	if (n > MAX_FILES) {
		fprintf(stderr, "sim export: %s has %d ranks: at most %d (one file each)\n", pos[1], n, MAX_FILES);
		rc = SIM_EXIT_TRACE;
	} else if (!(paths = calloc((size_t)n, sizeof *paths))) {
		fprintf(stderr, "sim export: out of memory\n");
		rc = SIM_EXIT_INTERNAL;
	}
	for (int r = 0; r < n && !rc; r++) {
		if (snprintf(paths[r], PATH_MAX, "%s.%d.et", prefix, r) >= PATH_MAX) {
			fprintf(stderr, "sim export: %s: the prefix is too long\n", prefix);
			rc = SIM_EXIT_USAGE;
		}
		const char *out = paths[r], *in[] = {pos[0], pos[1]};
		if (!rc)
			rc = out_check_inputs("export", &out, 1, in, 2);
	}
	struct dm *dm = dm_new();
	struct exp_stats st = {0};
	struct exp_groups G = {0};
	char gpath[PATH_MAX];
	if (!rc && snprintf(gpath, sizeof gpath, "%s.json", prefix) >= (int)sizeof gpath) {
		fprintf(stderr, "sim export: %s: the prefix is too long\n", prefix);
		rc = SIM_EXIT_USAGE;
	}
	if (!rc) {
		const char *out = gpath, *in[] = {pos[0], pos[1]};
		rc = out_check_inputs("export", &out, 1, in, 2);
	}
	if (!rc && (rc = exp_groups_build(t, &G, why, sizeof why)))
		fprintf(stderr, "sim export: %s\n", why);
	int groups_written = 0;
	if (!rc && G.count) { /* ASTRA-sim's communicator group file */
		struct out_file of;
		FILE *f = out_open(gpath, &of, why, sizeof why);
		if (!f || exp_groups_write(t, &G, f) || out_commit(&of, why, sizeof why)) {
			if (f)
				out_abort(&of);
			fprintf(stderr, "sim export: cannot write %s: %s\n", gpath, f ? why : strerror(errno));
			rc = SIM_EXIT_CANTCREAT;
		} else
			groups_written = 1;
	}
	struct progress prog;
	progress_start(&prog, "export");
	int written = 0;
	for (int r = 0; r < n && !rc; r++) {
		struct out_file of;
		FILE *f = out_open(paths[r], &of, why, sizeof why);
		if (!f) {
			fprintf(stderr, "sim export: cannot write %s: %s\n", paths[r], why);
			rc = SIM_EXIT_CANTCREAT;
			break;
		}
		rc = exp_chakra_rank(t, chip, dm, &G, r, max_nodes, f, &st, why, sizeof why);
		if (!rc && ferror(f))
			rc = SIM_EXIT_CANTCREAT;
		if (rc) {
			out_abort(&of);
			fprintf(stderr, "sim export: %s: %s\n", rc == SIM_EXIT_CANTCREAT ? paths[r] : pos[1], why);
			break;
		}
		if (out_commit(&of, why, sizeof why)) {
			fprintf(stderr, "sim export: cannot write %s: %s\n", paths[r], why);
			rc = SIM_EXIT_CANTCREAT;
			break;
		}
		written++;
		cli_progress_jobs(&prog, "ranks written", written, n);
	}
	if (rc) {
		for (int r = 0; r < written; r++)
			unlink(paths[r]);
		if (groups_written)
			unlink(gpath);
	} else
		fprintf(stderr,
		        "sim export: %d file%s %s.0.et ... (%ld nodes: %ld device ops, %ld collectives, %ld sends "
		        "and receives, %ld delays)%s%s\n",
		        n, n == 1 ? "" : "s", prefix, st.nodes, st.comp, st.colls, st.p2p, st.delays,
		        G.count ? "; communicator groups in " : "", G.count ? gpath : "");
	exp_groups_free(&G);
	dm_free(dm);
	free(paths);
	tr_free(t);
	arch_free(chip);
	return rc;
}
