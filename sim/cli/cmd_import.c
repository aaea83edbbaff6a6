/*
 * cmd_import.c -- `sim import kineto|chakra TRACE... -o JOB.trace [--report]`
 *
 * Turns measured PyTorch profiler (Kineto) traces or Chakra execution
 * traces, one per rank, into a simtrace 1 job (sim/import/). The output is
 * written under a temporary name and renamed: complete or absent.
 */
#include "cli.h"
#include "import.h"
#include "outfile.h"
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_import_help[] = "usage: sim import kineto TRACE.json[.gz] [MORE_RANKS.json[.gz]...] -o JOB.trace\n"
                               "                  [--ranks N] [--report] [--carry NAME]... [--all-measured]\n"
                               "                  [--recorded-on CONFIG] [--host recorded|graph]\n"
                               "                  [--profiler-overhead TIME] [--max-bytes N] [--max-events N]\n"
                               "       sim import chakra ET[.gz] [MORE_RANKS.et[.gz]...] -o JOB.trace\n"
                               "                  [--ranks N] [--comm-groups FILE.json] [--report]\n"
                               "                  [--carry NAME]... [--all-measured] [--recorded-on CONFIG]\n"
                               "                  [--max-bytes N] [--max-events N]\n"
                               "\n"
                               "Turns measured traces, one file per rank, into a simtrace 1 job\n"
                               "(docs/trace-format.md) that `sim run CONFIG JOB.trace` replays on any chip\n"
                               "(docs/import.md).\n"
                               "\n"
                               "kineto: PyTorch profiler traces. GEMMs, attention, elementwise ops and\n"
                               "reductions become ops the device model times, with shapes from the CPU op\n"
                               "that launched each kernel (record_shapes=True); copies and memsets become\n"
                               "copies; NCCL/RCCL kernels become collectives when every rank of their group\n"
                               "is imported. Any other kernel keeps its measured duration (a delay on its\n"
                               "stream). The host's time between launches is kept as delays on a stream\n"
                               "`host`: a faster GPU does not speed up the host. Kernels launched before the\n"
                               "profiler's window are left out.\n"
                               "\n"
                               "chakra: Chakra execution traces (protobuf, MLCommons Chakra's et_def.proto;\n"
                               "rank R from a name NAME.R.et). The nodes keep their data dependencies; GPU\n"
                               "kernels become ops from the shapes their CPU op recorded, as for kineto;\n"
                               "collectives become collectives over the job's ranks; CPU ops and every\n"
                               "other node keep their recorded duration.\n"
                               "\n"
                               "The trace's first comment lines, and stderr with --report, say how much of\n"
                               "the measured GPU time the model now times and how much is carried as\n"
                               "measured, per kernel family (gemm, attention, elementwise, memcpy, nccl,\n"
                               "other): a replay of carried time is not a prediction.\n"
                               "\n"
                               "options:\n"
                               "  -o FILE          the job trace (- for stdout)\n"
                               "  --ranks N        one file: the job has N ranks, each running the file's\n"
                               "                   work (a data-parallel job by symmetry), so collectives\n"
                               "                   of all N ranks are collectives (2 to 1048576)\n"
                               "  --comm-groups F  chakra: ASTRA-sim's communicator group file ({\"PG_NAME\":\n"
                               "                   [ranks...]}): a collective naming a group there by\n"
                               "                   pg_name runs on that group\n"
                               "  --report         the coverage table on stderr as well\n"
                               "  --carry NAME     kernels whose name contains NAME keep their measured time,\n"
                               "                   with the rest of their CPU op's kernels (repeatable, 16)\n"
                               "  --all-measured   every kernel keeps its measured time: a replay of the\n"
                               "                   recording itself, which checks the import's scheduling\n"
                               "  --recorded-on CONFIG\n"
                               "                   the chip the trace was recorded on: a carried kernel\n"
                               "                   then scales on another chip, elementwise and memcpy\n"
                               "                   with device-memory bandwidth, gemm and attention with\n"
                               "                   the fp16 matrix peak (delay scale=); without it every\n"
                               "                   carried kernel keeps its measured time\n"
                               "  --host recorded|graph\n"
                               "                   kineto: recorded (default) keeps the host's time between\n"
                               "                   launches, so a host-bound step stays host-bound; graph\n"
                               "                   drops it, as replaying the step from a CUDA graph does\n"
                               "                   (the GPU's own launch gaps remain; syncs still wait)\n"
                               "  --profiler-overhead TIME\n"
                               "                   kineto: the host time the profiler added to each CPU\n"
                               "                   op it recorded (record_shapes: 2.3-3.4 us on the lent\n"
                               "                   H200's host, docs/import.md); each gap between launches\n"
                               "                   loses TIME per CPU op begun in it, so the replay is of\n"
                               "                   the unprofiled step (default 0: the host as recorded)\n"
                               "  --max-bytes N    largest file, uncompressed (default: Kineto 4294967296,\n"
                               "                   read as a stream; Chakra 536870912, read whole; exit 65)\n"
                               "  --max-events N   most traceEvents (kineto) or nodes (chakra) in a file\n"
                               "                   (default 20000000; exit 65)\n"
                               "\n"
                               "exit codes: 0 ok, 2 usage, 65 bad input (not JSON, not gzip, not a Kineto\n"
                               "trace, a kernel without a correlation id, a rank twice, a protobuf that does\n"
                               "not decode, an unknown Chakra schema version, a cycle of dependencies, a bad\n"
                               "communicator group file), 66 a file or the --recorded-on config cannot be\n"
                               "read, 73 cannot write the output, 78 a bad --recorded-on config (nothing is\n"
                               "written on any error).\n"
                               "\n"
                               "examples:\n"
                               "  sim import kineto traces/kineto/kineto_small_mb8.json.gz -o small.trace --report\n"
                               "  sim import kineto rank0.json.gz rank1.json.gz -o job.trace\n"
                               "  sim import chakra tests/import/chakra_feeder_test.0.et.gz --ranks 2 -o job.trace\n";

static int parse_count(const char *v, long long *out)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < 1)
		return -1;
	*out = x;
	return 0;
}

int cmd_import(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("import", "expected a format: kineto or chakra");
	int chakra = !strcmp(argv[1], "chakra");
	if (strcmp(argv[1], "kineto") && !chakra)
		return cli_usage_error("import", "unknown format '%s' (expected kineto or chakra)", argv[1]);
	struct imp_options o = {0};
	const char *outpath = NULL;
	int report = 0, n = 0;
	const char *recorded_on = NULL;
	const char **paths = calloc((size_t)argc, sizeof *paths);
	if (!paths) {
		fprintf(stderr, "sim import: out of memory\n");
		return SIM_EXIT_INTERNAL;
	}
	int rc = 0;
	for (int i = 2; i < argc && !rc; i++) {
		const char *a = argv[i];
		int takes = !strcmp(a, "-o") || !strcmp(a, "--carry") || !strcmp(a, "--max-bytes") ||
		            !strcmp(a, "--max-events") || !strcmp(a, "--ranks") || !strcmp(a, "--comm-groups") ||
		            !strcmp(a, "--recorded-on") || !strcmp(a, "--host") || !strcmp(a, "--profiler-overhead");
		if (takes && i + 1 >= argc) {
			rc = cli_usage_error("import", "%s needs a value", a);
			break;
		}
		if (!strcmp(a, "-o"))
			outpath = argv[++i];
		else if (!strcmp(a, "--report"))
			report = 1;
		else if (!strcmp(a, "--all-measured"))
			o.all_measured = 1;
		else if (!strcmp(a, "--carry")) {
			if (o.ncarry == IMP_MAX_CARRY)
				rc = cli_usage_error("import", "--carry: at most %d", IMP_MAX_CARRY);
			else if (!*argv[i + 1])
				rc = cli_usage_error("import", "--carry: expected a part of a kernel name");
			else
				o.carry[o.ncarry++] = argv[++i];
		} else if (!strcmp(a, "--max-bytes")) {
			if (parse_count(argv[++i], &o.max_bytes) || o.max_bytes > (1LL << 40))
				rc = cli_usage_error(
				    "import", "--max-bytes %s: expected a number of bytes from 1 to 2^40", argv[i]);
		} else if (!strcmp(a, "--recorded-on"))
			recorded_on = argv[++i];
		else if (!strcmp(a, "--host") || !strcmp(a, "--profiler-overhead")) {
			char bad[256];
			if (chakra)
				rc = cli_usage_error("import", "%s: only for kineto", a);
			else if (imp_host_option(&o, a, argv[++i], bad, sizeof bad))
				rc = cli_usage_error("import", "%s", bad);
		} else if (!strcmp(a, "--comm-groups")) {
			if (!chakra)
				rc = cli_usage_error("import", "--comm-groups: only for chakra");
			else
				o.comm_groups = argv[++i];
		} else if (!strcmp(a, "--ranks")) {
			long long v;
			if (parse_count(argv[++i], &v) || v < 2 || v > 1048576)
				rc = cli_usage_error(
				    "import", "--ranks %s: expected a number of ranks from 2 to 1048576", argv[i]);
			else
				o.ranks = (int)v;
		} else if (!strcmp(a, "--max-events")) {
			if (parse_count(argv[++i], &o.max_events) || o.max_events > 1000000000)
				rc = cli_usage_error("import", "--max-events %s: expected a number from 1 to 1e9",
				                     argv[i]);
		} else if (a[0] == '-' && a[1])
			rc = cli_unknown_option("import", cmd_import_help, a);
		else
			paths[n++] = a;
	}
	if (!rc && !n)
		rc = cli_usage_error("import", "expected at least one trace file");
	if (!rc && !outpath)
		rc = cli_usage_error("import", "expected -o FILE (the job trace; - for stdout)");
	if (!rc && o.ranks && n > 1)
		rc = cli_usage_error(
		    "import", "--ranks %d: only with one file (it fills the job from that file's graph)", o.ranks);
	if (!rc && n > IMP_MAX_FILES)
		rc = cli_usage_error("import", "%d files: at most %d ranks", n, IMP_MAX_FILES);
	if (!rc)
		rc = out_check_inputs("import", &outpath, 1, paths, n);
	if (!rc && o.comm_groups)
		rc = out_check_inputs("import", &outpath, 1, &o.comm_groups, 1);
	char chip_name[80] = "";
	if (!rc && recorded_on) { /* the recording chip's figures, derived from its config as for any chip */
		struct cli_common none = {0};
		struct arch_chip *c = cli_load(recorded_on, &none, &rc);
		if (c) {
			o.ref_dram_Bps = c->dram.bw_Bps;
			o.ref_matrix_flops = arch_peak_matrix(c, DT_FP16, 0);
			snprintf(chip_name, sizeof chip_name, "%s", c->name);
			o.ref_name = chip_name;
			if (!(o.ref_dram_Bps > 0) || !(o.ref_matrix_flops > 0)) {
				fprintf(stderr, "sim import: --recorded-on %s: %s has no %s\n", recorded_on, c->path,
				        o.ref_dram_Bps > 0 ? "fp16 matrix units" : "device-memory bandwidth");
				rc = SIM_EXIT_CONFIG;
			}
			arch_free(c);
		}
	}
	if (rc) {
		free(paths);
		return rc;
	}
	struct out_file of;
	char why[1024];
	FILE *f = out_open(outpath, &of, why, sizeof why);
	if (!f) {
		fprintf(stderr, "sim import: cannot write %s: %s\n", outpath, why);
		free(paths);
		return SIM_EXIT_CANTCREAT;
	}
	struct imp_stats st;
	struct progress prog;
	progress_start(&prog, "import");
	o.progress = &prog;
	rc = chakra ? imp_chakra(paths, n, &o, f, &st, why, sizeof why)
	            : imp_kineto(paths, n, &o, f, &st, why, sizeof why);
	progress_end(&prog);
	free(paths);
	if (rc) {
		out_abort(&of);
		fprintf(stderr, "%s\n", why);
		return rc;
	}
	if (ferror(f) || (of.tmp[0] == 0 && fflush(f))) {
		out_abort(&of);
		fprintf(stderr, "sim import: cannot write %s: %s\n", outpath, strerror(errno ? errno : EIO));
		return SIM_EXIT_CANTCREAT;
	}
	if (out_commit(&of, why, sizeof why)) {
		fprintf(stderr, "sim import: cannot write %s: %s\n", outpath, why);
		return SIM_EXIT_CANTCREAT;
	}
	if (report)
		imp_report(stderr, &st, "");
	return SIM_EXIT_OK;
}
