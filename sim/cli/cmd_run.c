/*
 * cmd_run.c -- `sim run CONFIG TRACE [--json] [--timeline FILE]
 * [--timeline-ranks LIST] [--timeline-kineto DIR] [--csv DIR] [--jitter SIGMA]
 * [--seed N] [--exact] [--ranks-per-node N] [--set ...]`
 *
 * Loads the chip and the trace, replays the trace on the chip's system
 * (sim/cluster/replay.c) and reports where the time went (sim/report/report.c). Output
 * files are written whole or not at all; nothing is written when the
 * replay fails.
 */
#include "cli.h"
#include "outfile.h"
#include "platform.h"
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cmd_run_help[] =
    "usage: sim run CONFIG TRACE [--json] [--timeline FILE] [--timeline-ranks LIST]\n"
    "               [--timeline-kineto DIR] [--csv DIR] [--jitter SIGMA] [--seed N] [--no-fold] [--no-memo]\n"
    "               [--exact] [--ranks-per-node N] [--max-ops N] [--max-actors N]\n"
    "               [--max-trace-bytes N] [--set path=value]...\n"
    "\n"
    "Replays a workload trace (simtrace 1, docs/trace-format.md) on the system of\n"
    "CONFIG: its standard node of devices and, when the trace has more ranks than\n"
    "a node holds, a multi-node fabric of such nodes. Device ops take the device\n"
    "model's time (as `sim op`); collectives and send/recv are planned as NCCL\n"
    "plans them (ring, tree, in-switch reduction, hierarchical, direct; LL, LL128,\n"
    "Simple) and their transfers share links in SimGrid.\n"
    "\n"
    "Prints the step time, per-rank busy and idle time, compute against exposed\n"
    "communication, time per op kind and per mark region, collective bus\n"
    "bandwidths, achieved TFLOP/s and MFU, the top bottlenecks and the critical\n"
    "path. With the trace's `workload` line: tokens/s, model FLOPs utilization,\n"
    "and for inference time to first token and per output token; with its\n"
    "`memory` lines: peak device memory per rank (a step whose rank does not\n"
    "fit its device is still timed and reported, marked DOES NOT FIT, exit 3).\n"
    "\n"
    "Ranks that run the same program and use disjoint links (the trace has no\n"
    "selector, peer or fixed group along a dim; a switch, mesh or PCIe node; the\n"
    "dim's groups placed alike in the nodes) are replayed once: one\n"
    "representative stands for each such set (`folded` in the report).\n"
    "--no-fold replays every rank. A collective on a communicator that alone\n"
    "moves data inside nodes (or between them), from one stream, runs\n"
    "alone on its links: it is played on the engine once per size and its time\n"
    "reused after. A folded ring step over more than 64 members in as many nodes,\n"
    "or an all-to-all over whole nodes of more than 64 flows, plays only the\n"
    "flows that touch a replayed member and one of each other kind.\n"
    "--no-memo plays every call and every flow (same results, slower).\n"
    "\n"
    "A repeat whose iterations start only after the one before has ended on every\n"
    "replayed rank (nothing in flight between them), two in a row the same op for\n"
    "op, one period apart, has reached a steady state: every later iteration is the\n"
    "same again. Its remaining iterations are then derived, not played: the clock\n"
    "moves on by their number x the period and the report counts them as played\n"
    "(the last line says how many ops were derived). --exact plays every\n"
    "iteration (the same report but for rounding in the last bit; slower). Not\n"
    "derived: runs with --jitter, repeats whose iterations overlap (pipeline\n"
    "stages with micro-batches in flight) or that ranks enter differently.\n"
    "\n"
    "options:\n"
    "  --json                 the report as JSON (schema_version 1; time_s, ...)\n"
    "  --timeline FILE        a Chrome / Perfetto trace: one process per rank, one\n"
    "                         track per stream, op text and bound in args\n"
    "  --timeline-ranks LIST  only these ranks in the timeline (0-7,64); a folded\n"
    "                         rank shows its representative's ops\n"
    "  --timeline-kineto DIR  the timeline as PyTorch profiler (Kineto) traces,\n"
    "                         DIR/rank_R.json per rank (of --timeline-ranks; at\n"
    "                         most 1024 without it), for Holistic Trace Analysis\n"
    "                         and Perfetto beside measured traces\n"
    "  --csv DIR              ranks.csv, ops.csv and kinds.csv into DIR\n"
    "  --jitter SIGMA         device-op times vary by a lognormal factor\n"
    "                         exp(N(0, SIGMA)) drawn per rank (default 0: off)\n"
    "  --seed N               seed of the jitter's random streams (default 1)\n"
    "  --no-fold              replay every rank, even symmetric ones\n"
    "  --no-memo              play every collective and every flow on the engine\n"
    "  --exact                play every iteration of every repeat (no steady state)\n"
    "  --ranks-per-node N     place N ranks on each node and leave its other\n"
    "                         devices idle (default: system.devices_per_node),\n"
    "                         as Slurm's block scheduling with --segment places a\n"
    "                         job on NVL72 racks (segments of 16 trays: 64 GPUs\n"
    "                         of each 72); a switch or full-mesh node only\n"
    "  --max-ops N            most ops the replayed ranks may run together,\n"
    "                         bounded from the trace before anything runs (derived\n"
    "                         ops count)\n"
    "                         (default 5e7, about 3.6 GB of spans; exit 65 past it)\n"
    "  --max-actors N         most SimGrid actors the replay may need (one per\n"
    "                         replayed rank, one per stream of a rank with\n"
    "                         several), bounded before anything runs (default\n"
    "                         1e6, 64 KiB of stack each; exit 65 past it)\n"
    "  --max-trace-bytes N    largest trace file read (default 1073741824; exit 65)\n"
    "  --set path=value       override a config parameter (repeatable)\n"
    "\n"
    "exit codes: 0 ok, 2 usage, 3 a rank does not fit its device's memory (the\n"
    "report is printed), "
    "65 bad trace (syntax, a collective a rank never joins,\n"
    "a deadlock, more ranks than the system has, past --max-ops or\n"
    "--max-actors), 66 file missing,\n"
    "73 cannot write output (or an output is the CONFIG or the TRACE),\n"
    "78 bad config, 130/143 interrupted/terminated.\n"
    "\n"
    "examples:\n"
    "  sim run configs/h100.cfg traces/allreduce_8.trace\n"
    "  sim run configs/h100.cfg traces/dp_step_16.trace --timeline step.json\n"
    "  sim run configs/h100.cfg traces/pipeline_4.trace --timeline-kineto kineto/\n"
    "  sim run configs/mi300x.cfg traces/allreduce_8.trace --json\n"
    "  sim run configs/gb200.cfg traces/gpt3.trace --ranks-per-node 64\n";

/* "0-7,12" -> keep[r] = 1; returns -1 on a malformed list. */
static int parse_ranks(const char *s, int n, char *keep)
{
	while (*s) {
		char *end;
		errno = 0;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || errno || a < 0)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(++s, &end, 10);
			if (end == s || b < a)
				return -1;
			s = end;
		}
		for (long r = a; r <= b && r < n; r++)
			keep[r] = 1;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return 0;
}

/* The timeline (rank < 0), or one rank's Kineto-form file. */
static int write_file(const char *path, const struct report *rep, const char *keep, int rank)
{
	struct out_file o;
	FILE *f = out_open(path, &o, NULL, 0);
	if (!f)
		return -1;
	if (rank >= 0 ? report_timeline_kineto(rep, f, rank) : report_timeline(rep, f, keep)) {
		int err = errno ? errno : EIO;
		out_abort(&o);
		errno = err;
		return -1;
	}
	return out_commit(&o, NULL, 0);
}

/* DIR/rank_R.json for each rank kept (all when keep is NULL); a failure
   removes the files written so far (one line on stderr). */
static int write_kineto(const char *dir, const struct report *rep, const char *keep, int n)
{
	char path[PATH_MAX + 32];
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "sim run: cannot create directory %s: %s\n", dir, strerror(errno));
		return -1;
	}
	int r = 0;
	for (; r < n; r++) {
		if (keep && !keep[r])
			continue;
		snprintf(path, sizeof path, "%s/rank_%d.json", dir, r);
		if (write_file(path, rep, NULL, r)) {
			fprintf(stderr, "sim run: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
			break;
		}
	}
	if (r == n)
		return 0;
	for (int q = 0; q < r; q++)
		if (!keep || keep[q]) {
			snprintf(path, sizeof path, "%s/rank_%d.json", dir, q);
			unlink(path);
		}
	return -1;
}

/* An output that is the config or the trace: exit 73 before anything runs. */
static int check_outputs(const char *const *pos, const char *timeline, const char *csv)
{
	char paths[3][PATH_MAX + 16];
	const char *outs[4] = {timeline, NULL, NULL, NULL};
	static const char *const names[3] = {"ranks.csv", "ops.csv", "kinds.csv"};
	for (int i = 0; csv && i < 3; i++) {
		snprintf(paths[i], sizeof paths[i], "%s/%s", csv, names[i]);
		outs[1 + i] = paths[i];
	}
	return out_check_inputs("run", outs, 4, pos, 2);
}

int cmd_run(int argc, char **argv)
{
	struct cli_common o = {0};
	const char *pos[2] = {NULL, NULL}, *timeline = NULL, *tl_ranks = NULL, *csv = NULL, *kineto = NULL;
	struct rp_options ro = {0, 1, 1, 0, 0, 0, 0, 0, 0};
	long long max_bytes = 0;
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		int rc = cli_common_opt(&o, argc, argv, &i, "run");
		if (rc < 0)
			return SIM_EXIT_USAGE;
		if (rc)
			continue;
		const char *a = argv[i];
		const char **val = !strcmp(a, "--timeline")          ? &timeline
		                   : !strcmp(a, "--timeline-ranks")  ? &tl_ranks
		                   : !strcmp(a, "--timeline-kineto") ? &kineto
		                   : !strcmp(a, "--csv")             ? &csv
		                                                     : NULL;
		if (val || !strcmp(a, "--jitter") || !strcmp(a, "--seed") || !strcmp(a, "--max-ops") ||
		    !strcmp(a, "--max-actors") || !strcmp(a, "--max-trace-bytes") || !strcmp(a, "--ranks-per-node")) {
			if (i + 1 >= argc)
				return cli_usage_error("run", "%s needs a value", a);
			const char *v = argv[++i];
			if (val) {
				*val = v;
				continue;
			}
			char *end;
			errno = 0;
			if (!strcmp(a, "--jitter")) {
				ro.jitter = strtod(v, &end);
				if (*end || errno || !(ro.jitter >= 0 && ro.jitter <= 2))
					return cli_usage_error("run", "--jitter %s: expected a number from 0 to 2", v);
			} else if (!strcmp(a, "--max-ops")) {
				ro.max_ops = strtod(v, &end);
				if (*end || errno || !(ro.max_ops >= 1 && ro.max_ops <= 1e15))
					return cli_usage_error("run", "--max-ops %s: expected a number from 1 to 1e15",
					                       v);
			} else if (!strcmp(a, "--max-actors")) {
				ro.max_actors = strtod(v, &end);
				if (*end || errno || !(ro.max_actors >= 1 && ro.max_actors <= 1e9))
					return cli_usage_error("run",
					                       "--max-actors %s: expected a number from 1 to 1e9", v);
			} else if (!strcmp(a, "--max-trace-bytes")) {
				double b = strtod(v, &end);
				if (*end || errno || !(b >= 1 && b <= 1e15))
					return cli_usage_error(
					    "run", "--max-trace-bytes %s: expected a number from 1 to 1e15", v);
				max_bytes = (long long)b;
			} else if (!strcmp(a, "--ranks-per-node")) {
				if (cli_parse_ranks_per_node("run", v, &ro.ranks_per_node))
					return SIM_EXIT_USAGE;
			} else {
				ro.seed = strtoul(v, &end, 10);
				if (*end || errno || *v == '-' || !*v)
					return cli_usage_error("run", "--seed %s: expected a non-negative integer", v);
			}
			continue;
		}
		if (!strcmp(a, "--no-fold")) {
			ro.no_fold = 1;
			continue;
		}
		if (!strcmp(a, "--no-memo")) {
			ro.no_memo = 1;
			continue;
		}
		if (!strcmp(a, "--exact")) {
			ro.exact = 1;
			continue;
		}
		if (a[0] == '-' && a[1])
			return cli_unknown_option("run", cmd_run_help, a);
		if (npos == 2)
			return cli_usage_error("run", "unexpected argument %s (expected CONFIG TRACE)", a);
		pos[npos++] = a;
	}
	if (npos < 2)
		return cli_usage_error("run", "expected CONFIG TRACE");
	char config_buf[PATH_MAX + 64];
	pos[0] = cli_config(pos[0], config_buf, sizeof config_buf);
	int code = check_outputs(pos, timeline, csv);
	/* a path that cannot be written is found now, not after the replay */
	if (!code && timeline && out_probe(timeline, 0)) {
		fprintf(stderr, "sim run: cannot write the timeline %s: %s\n", timeline, strerror(errno));
		code = SIM_EXIT_CANTCREAT;
	}
	if (!code && csv && out_probe(csv, 1)) {
		fprintf(stderr, "sim run: cannot create directory %s: %s\n", csv, strerror(errno));
		code = SIM_EXIT_CANTCREAT;
	}
	if (!code && kineto && out_probe(kineto, 1)) {
		fprintf(stderr, "sim run: cannot create directory %s: %s\n", kineto, strerror(errno));
		code = SIM_EXIT_CANTCREAT;
	}
	if (code)
		return code;
	struct arch_chip *c = cli_load(pos[0], &o, &code);
	if (!c)
		return code;
	char why[4096];
	if (ro.ranks_per_node && platform_ranks_per_node(c, ro.ranks_per_node, why, sizeof why)) {
		arch_free(c);
		return cli_usage_error("run", "--ranks-per-node: %s", why);
	}
	struct trace *t = tr_load(pos[1], max_bytes, &code, why, sizeof why);
	if (!t) {
		fprintf(stderr, "%s\n", why);
		arch_free(c);
		return code;
	}
	char *keep = NULL;
	if (tl_ranks) {
		keep = calloc((size_t)tr_ranks(t), 1);
		if (!keep || parse_ranks(tl_ranks, tr_ranks(t), keep)) {
			free(keep);
			tr_free(t);
			arch_free(c);
			return cli_usage_error("run", "--timeline-ranks %s: expected a list like 0-7,12", tl_ranks);
		}
	}
	if (kineto && !keep && tr_ranks(t) > 1024) {
		int n = tr_ranks(t);
		tr_free(t);
		arch_free(c);
		return cli_usage_error(
		    "run", "--timeline-kineto: %d ranks, a file each: name at most 1024 with --timeline-ranks", n);
	}
	ro.progress = 1;
	struct rp_result r;
	int rc = rp_run(c, t, &ro, &r, why, sizeof why);
	if (rc) {
		fprintf(stderr, "%s\n", why);
		goto out;
	}
	if (keep && r.rep_of) { /* ranks asked for that were folded: their tracks are their representatives' */
		int asked = 0, folded = 0, one = -1;
		for (int k = 0; k < tr_ranks(t); k++)
			if (keep[k]) {
				asked++;
				if (r.rep_of[k] != k && folded++ == 0)
					one = k;
			}
		if (folded)
			fprintf(
			    stderr,
			    "sim run: note: %d of the %d ranks of --timeline-ranks were not replayed (folded: each is "
			    "a "
			    "symmetric copy of a replayed rank, rank %d of rank %d); their tracks show that rank's ops "
			    "(args.replayed_as); --no-fold replays every rank\n",
			    folded, asked, one, r.rep_of[one]);
	}
	struct report rep;
	if (report_build(&rep, c, t, &r)) {
		fprintf(stderr, "sim run: out of memory building the report\n");
		rc = SIM_EXIT_INTERNAL;
		goto out;
	}
	rep.version = SIM_VERSION;
	rep.argc = argc;
	rep.argv = argv;
	if (timeline && write_file(timeline, &rep, keep, -1)) {
		fprintf(stderr, "sim run: cannot write the timeline %s: %s\n", timeline, strerror(errno ? errno : EIO));
		rc = SIM_EXIT_CANTCREAT;
	} else if (kineto && write_kineto(kineto, &rep, keep, tr_ranks(t))) {
		rc = SIM_EXIT_CANTCREAT;
	} else if (csv && report_csv(&rep, csv, why, sizeof why)) {
		fprintf(stderr, "%s\n", why);
		rc = SIM_EXIT_CANTCREAT;
	} else {
		if (o.json)
			report_json(&rep, pos[0], stdout);
		else
			report_text(&rep, pos[0], stdout);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "sim run: cannot write output\n");
			rc = SIM_EXIT_CANTCREAT;
		} else if (r.nofit[0]) { /* timed and reported, and still an error */
			fprintf(stderr, "%s\n", r.nofit);
			rc = SIM_EXIT_NOFIT;
		}
	}
	report_free(&rep);
out:
	rp_result_free(&r);
	free(keep);
	tr_free(t);
	arch_free(c);
#ifndef SIM_SANITIZE_BUILD
	/* Everything is written; skip SimGrid's engine teardown at exit (a
	   few milliseconds per thousand ranks). Sanitizer builds exit normally
	   so that LeakSanitizer still checks sim's own memory. */
	if (!fflush(NULL))
		_exit(rc);
#endif
	return rc;
}
