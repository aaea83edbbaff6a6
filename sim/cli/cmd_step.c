/*
 * cmd_step.c -- `sim step CONFIG --kernel 'OP' [--sm N] [--policy P]
 * [--cycles N] [--from C] [--summary] [--interactive] [--set path=value]...`
 *
 * Steps the warps of one compute unit through the main loop of the kernel the
 * device model picks for OP (sim/step/step.h): a cycle trace with each
 * scheduler's issue and each warp's stall reason, a per-warp Gantt and a
 * summary; or the summary of a whole CTA; or an interactive session reading
 * commands from stdin (a terminal, tmux, or a pipe).
 */
#include "cli.h"
#include "step.h"

#include <editline/readline.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_step_help[] =
    "usage: sim step CONFIG --kernel 'OP' [--sm N] [--policy lrr|gto|two-level]\n"
    "                [--cycles N] [--from C] [--summary] [--interactive] [--set path=value]...\n"
    "\n"
    "Steps the warps of one SM (compute unit) through the main loop of the\n"
    "kernel the device model picks for OP, cycle by cycle: per cycle and warp\n"
    "scheduler the warp that issued and its instruction, and every other warp's\n"
    "state: dep (waits for a result on the scoreboard), mem (waits for memory),\n"
    "pipe:X (its pipe X is busy: alu, sfu, tensor, smem), bar (barrier), done\n"
    "(no instruction left), sel (ready, another warp was picked). Then a\n"
    "per-warp Gantt of those cycles and a summary: IPC, issue-slot use, the\n"
    "breakdown of warp states, pipe use, and the cycles per main-loop iteration\n"
    "beside the device model's (`sim op`) cost of the same iteration.\n"
    "\n"
    "OP is an op line as `sim op` reads it; the stepper runs\n"
    "  gemm (and conv, as its implicit GEMM): cp.async + ldmatrix + mma.sync\n"
    "       pipelines, or TMA + wgmma (warp-specialized) on Hopper-class units,\n"
    "       or FFMA on vector lanes when no matrix unit has the dtype\n"
    "  attn impl=flash2|flash3 dir=fwd: FlashAttention-2 (mma.sync) and -3\n"
    "       (TMA, wgmma, two consumer warpgroups): S = QK^T, the online softmax\n"
    "       (exp on the SFU), O += PV\n"
    "  elem: vector loads, the op's lane and SFU work, vector stores\n"
    "\n"
    "options:\n"
    "  --kernel 'OP'       the op (required)\n"
    "  --sm N              which SM (default 0); its CTAs are N, N + SMs, ...\n"
    "  --policy P          warp scheduling: lrr (loose round robin, default),\n"
    "                      gto (greedy then oldest), two-level (an active set of\n"
    "                      4 warps per scheduler; warps waiting for memory leave it)\n"
    "  --cycles N          cycles to print (default 64)\n"
    "  --from C            first cycle printed (default 0)\n"
    "  --summary           run the SM's CTAs to the end (all iterations), print\n"
    "                      only the summary\n"
    "  --interactive       read commands from stdin:\n"
    "                        step [N]          advance N cycles (default 1), printing them\n"
    "                        continue [C]      run to cycle C (or the end, or a breakpoint)\n"
    "                        break warp W      stop when warp W issues\n"
    "                        break inst NAME   stop when an instruction named NAME... issues\n"
    "                        delete            remove the breakpoints\n"
    "                        warp W            show warp W: next instruction, registers in\n"
    "                                          flight (scoreboard), async groups, barrier\n"
    "                        gantt [N]         the Gantt of the last N cycles (default 64)\n"
    "                        program           instruction counts of the loop\n"
    "                        summary           the summary so far\n"
    "                        help, quit\n"
    "  --set path=value    override a config parameter (repeatable)\n"
    "\n"
    "Latencies come from compute.*.latency.* (alu, sfu, shared, mma, barrier),\n"
    "pipe rates from the vector, sfu and matrix parameters, memory from the\n"
    "model's loaded latencies and this SM's share of L2 and device bandwidth.\n"
    "The output is deterministic.\n"
    "\n"
    "exit codes: 0 ok, 2 usage (unknown option, bad number, unknown policy, SM\n"
    "out of range or without a CTA), 65 bad op (the op parser's message, or an\n"
    "op the stepper has no main loop for), 66 config missing, 78 bad config,\n"
    "70 internal error.\n"
    "\n"
    "examples:\n"
    "  sim step configs/a100.cfg --kernel 'gemm m=4096 n=4096 k=4096 dtype=fp16' --cycles 48\n"
    "  sim step configs/h100.cfg --kernel 'attn b=4 h=16 sq=4096 skv=4096 d=128 dtype=bf16 impl=flash3' --summary\n"
    "  sim step configs/a100.cfg --kernel 'elem op=gelu n=67108864 dtype=fp16' --policy gto --from 800\n";

/* A non-negative integer option value; -1 (message printed) if it is not one. */
static long long num(const char *opt, const char *v, long long max)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (!*v || *end || errno || x < 0 || x > max) {
		cli_usage_error("step", "%s '%s' is not an integer from 0 to %lld", opt, v, max);
		return -1;
	}
	return x;
}

/* The value of an option at argv[*i] ("--x v" or "--x=v"); NULL (message printed) if missing. */
static const char *optval(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (*i + 1 >= argc) {
		cli_usage_error("step", "%s needs a value", opt);
		return NULL;
	}
	return argv[++*i];
}

static int is_opt(const char *a, const char *opt)
{
	size_t n = strlen(opt);
	return !strncmp(a, opt, n) && (a[n] == '\0' || a[n] == '=');
}

/* Prints ticks until cycle `end` (or the end of the kernel). */
static int trace(struct step_sim *s, long long end, FILE *f)
{
	while (step_now(s) < end) {
		long long first = step_now(s);
		long long span = step_tick(s, end - first);
		if (span < 0)
			return -1;
		if (span == 0)
			break;
		step_print_tick(s, first, span, f);
	}
	return 0;
}

#define MAX_BREAKS 16

struct breaks {
	int n;
	int warp[MAX_BREAKS]; /* -1: an instruction name */
	char name[MAX_BREAKS][64];
};

static int hit(const struct step_sim *s, const struct breaks *b)
{
	for (int i = 0; i < b->n; i++)
		if (b->warp[i] >= 0 ? step_issued_warp(s, b->warp[i]) : step_issued_name(s, b->name[i]))
			return i + 1;
	return 0;
}

/* The next command into line: on a terminal through libedit (line editing, history; an empty line repeats the
   last command, as gdb does), else a line of stdin echoed after the prompt. 0 at the end of the input. */
static int read_command(struct step_sim *s, FILE *f, int tty, char *line, size_t len, char *last, size_t lastlen)
{
	char prompt[48];
	snprintf(prompt, sizeof prompt, "(step %lld) ", step_now(s));
	if (tty) {
		fflush(f);
		char *l = readline(prompt);
		if (!l) {
			fputc('\n', f);
			return 0;
		}
		if (l[strspn(l, " \t")]) {
			add_history(l);
			snprintf(last, lastlen, "%s", l);
		}
		snprintf(line, len, "%s", l[strspn(l, " \t")] ? l : last);
		free(l);
		return 1;
	}
	fputs(prompt, f);
	fflush(f);
	if (!fgets(line, (int)len, stdin)) {
		fputc('\n', f);
		return 0;
	}
	line[strcspn(line, "\r\n")] = '\0';
	fprintf(f, "%s\n", line);
	return 1;
}

static int interactive(struct step_sim *s, FILE *f)
{
	struct breaks br = {0};
	char line[256], last[256] = "";
	int tty = isatty(0) && isatty(1);
	fprintf(f,
	        "commands: step [N], continue [C], break warp W, break inst NAME, delete, warp W, gantt [N], "
	        "program, summary, help, quit%s\n",
	        tty ? " (arrows edit and recall; an empty line repeats the last command)" : "");
	for (;;) {
		if (!read_command(s, f, tty, line, sizeof line, last, sizeof last))
			return 0;
		char cmd[32] = "", a1[64] = "", a2[64] = "";
		int na = sscanf(line, "%31s %63s %63s", cmd, a1, a2);
		if (na <= 0)
			continue;
		char *end;
		if (!strcmp(cmd, "q") || !strcmp(cmd, "quit") || !strcmp(cmd, "exit"))
			return 0;
		if (!strcmp(cmd, "h") || !strcmp(cmd, "help")) {
			fputs("  step [N]          advance N cycles (default 1), printing them\n"
			      "  continue [C]      run to cycle C, the end, or a breakpoint\n"
			      "  break warp W      stop when warp W issues; break inst NAME: when an instruction\n"
			      "                    whose name starts with NAME issues; break: list\n"
			      "  delete            remove the breakpoints\n"
			      "  warp W            warp W: next instruction, registers in flight, groups, barrier\n"
			      "  gantt [N]         the Gantt of the last N cycles (default 64)\n"
			      "  program           instruction counts of the loop\n"
			      "  summary           the summary so far\n"
			      "  quit\n",
			      f);
		} else if (!strcmp(cmd, "s") || !strcmp(cmd, "step")) {
			long long n = na > 1 ? strtoll(a1, &end, 10) : 1;
			if (na > 1 && (*end || n < 1)) {
				fprintf(f, "step: '%s' is not a positive number of cycles\n", a1);
				continue;
			}
			if (step_done(s))
				fprintf(f, "every warp has finished (cycle %lld)\n", step_now(s));
			else if (trace(s, step_now(s) + n, f))
				return -1;
		} else if (!strcmp(cmd, "c") || !strcmp(cmd, "continue")) {
			long long to = LLONG_MAX;
			if (na > 1) {
				to = strtoll(a1, &end, 10);
				if (*end || to < 0) {
					fprintf(f, "continue: '%s' is not a cycle\n", a1);
					continue;
				}
			}
			int b = 0;
			while (step_now(s) < to && !step_done(s)) {
				long long first = step_now(s);
				long long span = step_tick(s, to - first);
				if (span < 0)
					return -1;
				if (br.n && (b = hit(s, &br))) {
					fprintf(f, "breakpoint %d at cycle %lld\n", b, first);
					step_print_tick(s, first, span, f);
					break;
				}
			}
			if (!b) {
				if (step_done(s))
					fprintf(f, "every warp has finished at cycle %lld\n", step_now(s));
				else
					fprintf(f, "at cycle %lld\n", step_now(s));
			}
		} else if (!strcmp(cmd, "b") || !strcmp(cmd, "break")) {
			if (na == 1) {
				if (!br.n)
					fprintf(f, "no breakpoints\n");
				for (int i = 0; i < br.n; i++)
					if (br.warp[i] >= 0)
						fprintf(f, "  %d: warp %d issues\n", i + 1, br.warp[i]);
					else
						fprintf(f, "  %d: an instruction named %s... issues\n", i + 1,
						        br.name[i]);
				continue;
			}
			if (br.n == MAX_BREAKS) {
				fprintf(f, "break: at most %d breakpoints\n", MAX_BREAKS);
				continue;
			}
			if (!strcmp(a1, "warp") && na == 3) {
				long w = strtol(a2, &end, 10);
				if (*end || w < 0 || w >= step_nwarps(s)) {
					fprintf(f, "break: warp '%s' is not one of 0 to %d\n", a2, step_nwarps(s) - 1);
					continue;
				}
				br.warp[br.n] = (int)w;
				fprintf(f, "breakpoint %d: warp %ld issues\n", br.n + 1, w);
				br.n++;
			} else if ((!strcmp(a1, "inst") || !strcmp(a1, "instruction")) && na == 3) {
				br.warp[br.n] = -1;
				snprintf(br.name[br.n], sizeof br.name[0], "%s", a2);
				fprintf(f, "breakpoint %d: an instruction named %s... issues\n", br.n + 1, a2);
				br.n++;
			} else
				fprintf(f, "break: expected 'break warp W' or 'break inst NAME'\n");
		} else if (!strcmp(cmd, "delete")) {
			br.n = 0;
			fprintf(f, "breakpoints removed\n");
		} else if (!strcmp(cmd, "w") || !strcmp(cmd, "warp") || !strcmp(cmd, "show")) {
			const char *v = !strcmp(cmd, "show") ? (strcmp(a1, "warp") ? "" : a2) : a1;
			long w = strtol(v, &end, 10);
			if (!*v || *end || step_print_warp(s, (int)w, f))
				fprintf(f, "warp: '%s' is not one of 0 to %d\n", v, step_nwarps(s) - 1);
		} else if (!strcmp(cmd, "g") || !strcmp(cmd, "gantt")) {
			long long n = na > 1 ? strtoll(a1, &end, 10) : 64;
			if (na > 1 && (*end || n < 1)) {
				fprintf(f, "gantt: '%s' is not a positive number of cycles\n", a1);
				continue;
			}
			long long to = step_now(s), from = to - n > 0 ? to - n : 0;
			step_print_gantt(s, from, to, f);
		} else if (!strcmp(cmd, "program") || !strcmp(cmd, "list")) {
			step_print_program(s, f);
		} else if (!strcmp(cmd, "summary")) {
			step_print_summary(s, f);
		} else
			fprintf(f, "unknown command '%s' (help lists them)\n", cmd);
	}
}

int cmd_step(int argc, char **argv)
{
	struct cli_common o = {.nsets = 0};
	const char *path = NULL, *kernel = NULL;
	struct step_opts so = {0};
	so.policy = STEP_LRR;
	long long cycles = 64, from = 0;
	int summary = 0, inter = 0;
	const long long maxc = 1000000000LL;
	for (int i = 1; i < argc; i++) {
		int r = cli_common_opt(&o, argc, argv, &i, "step");
		if (r < 0)
			return SIM_EXIT_USAGE;
		if (r) {
			if (o.json)
				return cli_usage_error("step", "unknown option '--json'");
			continue;
		}
		const char *a = argv[i], *v;
		if (is_opt(a, "--kernel")) {
			if (!(kernel = optval(argc, argv, &i, "--kernel")))
				return SIM_EXIT_USAGE;
		} else if (is_opt(a, "--sm")) {
			long long x;
			if (!(v = optval(argc, argv, &i, "--sm")) || (x = num("--sm", v, INT_MAX)) < 0)
				return SIM_EXIT_USAGE;
			so.sm = (int)x;
		} else if (is_opt(a, "--policy")) {
			if (!(v = optval(argc, argv, &i, "--policy")))
				return SIM_EXIT_USAGE;
			so.policy = step_policy_parse(v);
			if (so.policy < 0)
				return cli_usage_error("step", "unknown policy '%s' (expected %s)", v,
				                       step_policy_list());
		} else if (is_opt(a, "--cycles")) {
			if (!(v = optval(argc, argv, &i, "--cycles")) || (cycles = num("--cycles", v, maxc)) < 0)
				return SIM_EXIT_USAGE;
		} else if (is_opt(a, "--from")) {
			if (!(v = optval(argc, argv, &i, "--from")) || (from = num("--from", v, maxc)) < 0)
				return SIM_EXIT_USAGE;
		} else if (!strcmp(a, "--summary")) {
			summary = 1;
		} else if (!strcmp(a, "--interactive")) {
			inter = 1;
		} else if (a[0] == '-' && a[1]) {
			return cli_unknown_option("step", cmd_step_help, a);
		} else if (!path) {
			path = a;
		} else
			return cli_usage_error("step", "unexpected argument '%s' (the op goes in --kernel 'OP')", a);
	}
	if (!path)
		return cli_usage_error("step", "missing CONFIG");
	if (!kernel)
		return cli_usage_error("step",
		                       "missing --kernel 'OP', e.g. --kernel 'gemm m=4096 n=4096 k=4096 dtype=fp16'");
	if (summary && inter)
		return cli_usage_error("step", "--summary and --interactive exclude each other");
	struct op op;
	char why[512];
	if (op_parse(kernel, NULL, &op, why, sizeof why)) {
		fprintf(stderr, "sim step: %s\n", why);
		return SIM_EXIT_TRACE;
	}
	int code = SIM_EXIT_OK;
	struct arch_chip *c = cli_load(path, &o, &code);
	if (!c)
		return code;
	so.record = !summary;
	struct step_sim *s = step_new(c, &op, &so, why, sizeof why, &code);
	if (!s) {
		fprintf(stderr, "sim step: %s\n", why);
		arch_free(c);
		return code;
	}
	char canon[OP_TEXT_MAX];
	op_format(&op, canon, sizeof canon);
	int rc = 0;
	if (summary) {
		rc = step_run(s, LLONG_MAX);
		if (!rc) {
			printf("%s on %s, SM %d, policy %s\n", canon, c->name, so.sm, step_policy_name(so.policy));
			step_print_summary(s, stdout);
		}
	} else {
		step_print_header(s, c, canon, stdout);
		step_print_program(s, stdout);
		if (inter) {
			rc = interactive(s, stdout);
		} else {
			rc = step_run(s, from);
			if (!rc) {
				printf("\ntrace     cycles %lld-%lld\n", from, from + cycles - 1);
				rc = trace(s, from + cycles, stdout);
			}
			if (!rc) {
				long long to = step_now(s);
				printf("\n");
				step_print_gantt(s, from, to, stdout);
				printf("\n");
				step_print_summary(s, stdout);
			}
		}
	}
	if (rc)
		fprintf(stderr, "sim step: internal error: no warp can ever issue again at cycle %lld (deadlock)\n",
		        step_now(s));
	step_free(s);
	arch_free(c);
	if (rc)
		return SIM_EXIT_INTERNAL;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sim step: cannot write output\n");
		return SIM_EXIT_CANTCREAT;
	}
	return SIM_EXIT_OK;
}
