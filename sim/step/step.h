/*
 * step.h -- the warp-level stepper: the warps of one compute unit (SM) issuing
 * the instruction stream of a kernel's main loop, cycle by cycle.
 *
 * The device model (sim/device/model.h) picks the kernel (CTA tile, stages, warps,
 * occupancy) and costs one main-loop iteration from resource rates; the
 * stepper replays the same iteration as instructions (async copies to shared
 * memory, ldmatrix, mma / wgmma, softmax math on the lanes and the SFU,
 * barriers) through the unit's warp schedulers, with a scoreboard, pipe
 * occupancies and latencies from the same config. Its steady-state cycles per
 * iteration are checked against the model's (tests/test_step.c): one engine
 * seen at two levels. `sim step` (sim/cli/cmd_step.c) is its command line.
 *
 *   step.c          the engine: warps, scoreboard, pipes, barriers, memory port, policies
 *   step_kernels.c  instruction streams: GEMM (mma.sync or wgmma), FlashAttention-2/-3, elementwise
 *   step_print.c    the cycle trace, the per-warp Gantt, the summary, a warp's scoreboard
 *   step_int.h      private to those three files
 */
#ifndef SIM_STEP_H
#define SIM_STEP_H

#include "arch.h"
#include "model.h"
#include "op.h"

#include <stdio.h>

/* Warp scheduling policies (an ops table in step.c). */
enum step_policy { STEP_LRR, STEP_GTO, STEP_TWO_LEVEL, STEP_NPOLICIES };
const char *step_policy_name(int p);
int step_policy_parse(const char *name); /* -1 if unknown */
/* "lrr|gto|two-level" */
const char *step_policy_list(void);

/* What a warp did in a cycle: issued, or why not. */
enum step_state {
	SS_ISSUED, /* issued an instruction */
	SS_DEP,    /* waits for a short-latency result (scoreboard: ALU, SFU, shared memory, MMA) */
	SS_MEM,    /* waits for a long-latency memory result (global load, async copy, TMA) */
	SS_PIPE,   /* its instruction's pipe is busy */
	SS_BAR,    /* waits at a barrier (CTA barrier, or a TMA producer waiting for a free stage) */
	SS_NONE,   /* no instruction: the warp has finished */
	SS_SEL,    /* ready, but the scheduler picked another warp */
	SS_COUNT
};
const char *step_state_name(int s);

/* Pipes an instruction occupies. */
enum step_pipe { SP_NONE, SP_ALU, SP_SFU, SP_TENSOR, SP_LSU, SP_MEM, SP_COUNT };
const char *step_pipe_name(int p);

struct step_opts {
	int sm;          /* unit index (which CTAs it runs) */
	int policy;      /* enum step_policy */
	int ctas;        /* resident CTAs; 0 = the model's occupancy */
	long long iters; /* main-loop iterations per CTA; 0 = the kernel's */
	int record;      /* keep a per-warp history for the Gantt and the trace */
};

struct step_stats {
	long long cycles;               /* simulated so far */
	long long issued;               /* warp instructions issued */
	long long state[SS_COUNT];      /* warp-cycles in each state */
	long long pipe_stall[SP_COUNT]; /* warp-cycles of SS_PIPE, by pipe */
	double pipe_busy[SP_COUNT];     /* cycles each pipe was busy (all schedulers' pipes summed) */
	int schedulers, warps, ctas;
	double ipc;           /* issued / cycles */
	double slot_use;      /* issued / (cycles x schedulers) */
	double cyc_iter;      /* steady state: unit cycles per CTA-iteration (0: too few iterations) */
	long long iters_done; /* main-loop iterations completed by the first CTA */
	int done;             /* every warp has finished */
};

struct step_sim;

/*
 * A stepper for op on unit o->sm of chip c. Returns NULL with a one-line
 * reason in why, and *code the exit code it maps to (65: the op; 2: an option).
 */
struct step_sim *step_new(const struct arch_chip *c, const struct op *op, const struct step_opts *o, char *why,
                          size_t wl, int *code);
void step_free(struct step_sim *s);

/* The model's iteration the stepper replays. */
const struct dm_iter *step_model(const struct step_sim *s);
/* Current cycle (the next to simulate). */
long long step_now(const struct step_sim *s);
int step_done(const struct step_sim *s);

/*
 * Simulates from the current cycle: one cycle, or, when no warp can issue, up
 * to the next cycle when one might (never past cap cycles). Returns the cycles
 * advanced (0 when every warp has finished, -1 on an internal deadlock).
 */
long long step_tick(struct step_sim *s, long long cap);
/* Runs until cycle `until` (or the end); no output. Returns -1 on a deadlock. */
int step_run(struct step_sim *s, long long until);
void step_stats(const struct step_sim *s, struct step_stats *st);

/* Output (step_print.c). */
void step_print_header(const struct step_sim *s, const struct arch_chip *c, const char *optext, FILE *f);
/* The last tick as trace lines (first = its first cycle, span = its length). */
void step_print_tick(const struct step_sim *s, long long first, long long span, FILE *f);
/* The per-warp Gantt of cycles [from, to) (from the recorded history). */
void step_print_gantt(const struct step_sim *s, long long from, long long to, FILE *f);
void step_print_summary(const struct step_sim *s, FILE *f);
/* One warp: its next instruction, iteration, registers in flight, async groups, barrier. */
int step_print_warp(const struct step_sim *s, int w, FILE *f);
/* Instruction counts of the loop body per warp role. */
void step_print_program(const struct step_sim *s, FILE *f);

/* Breakpoints (interactive mode): did the last tick issue from warp w / an instruction named like name? */
int step_issued_warp(const struct step_sim *s, int w);
int step_issued_name(const struct step_sim *s, const char *prefix);
int step_nwarps(const struct step_sim *s);

#endif
