/*
 * step_int.h -- private to the warp-level stepper (sim/step/step*.c); sim/step/step.h
 * is its API.
 *
 * State is arrays of plain structs allocated once in step_new: the inner
 * loop (step_tick) allocates nothing and prints nothing.
 *
 * Invariants:
 *  - a warp issues at most one instruction per cycle, a scheduler at most one
 *    per cycle, from its own warps;
 *  - a pipe's free time only grows; a register's ready time is set when its
 *    producer issues and only the producer's warp reads it;
 *  - when no warp issues in a cycle, every warp's state holds until the
 *    earliest `until` of them (the engine skips to it: the same result as
 *    stepping each cycle, tests/test_step.c checks it).
 */
#ifndef SIM_STEP_INT_H
#define SIM_STEP_INT_H

#include "step.h"

#include <stdint.h>

#define STEP_MAX_REGS   256 /* virtual registers a warp's program names */
#define STEP_MAX_GROUPS 16  /* outstanding commit groups tracked (cp.async, wgmma) */
#define STEP_MAX_STAGES 8
#define STEP_MAX_NAMES  48
#define STEP_HIST       1024 /* cycles of per-warp history kept for the Gantt */
#define STEP_NEVER      INT64_MAX
/* Cycles of shared-memory work a scheduler's MIO queue holds before a warp's
   shared-memory instruction stalls ("MIO throttle"): two ldmatrix.x4. */
#define STEP_LSU_QUEUE 8

/* Operations (what issue does); the name shown comes from the program's table. */
enum step_op {
	I_ALU,      /* lane instruction: dst <- srcs after latency.alu */
	I_SFU,      /* special function (exp, conversion) */
	I_SHFL,     /* warp shuffle (through the shared-memory pipe, latency.shared) */
	I_MMA,      /* synchronous matrix instruction (mma.sync, MFMA): dst after occupancy + latency.mma */
	I_WGMMA,    /* asynchronous matrix instruction (wgmma): joins the open wgmma group; with arg != 0 it
	               belongs to tile iter+arg and is a no-op outside the tiles */
	I_WGCOMMIT, /* closes the open wgmma group */
	I_WGWAIT,   /* waits until at most arg wgmma groups are pending */
	I_LDS,      /* shared-memory load (ldmatrix, LDS) of `bytes` */
	I_LDG,      /* global load of `bytes`: dst is a long-latency result */
	I_STG,      /* global store of `bytes` */
	I_CPASYNC,  /* async copy global -> shared of `bytes` for tile iter+arg (none past the last tile) */
	I_CPCOMMIT, /* closes the open cp.async group */
	I_CPWAIT,   /* waits until at most arg cp.async groups are pending */
	I_BAR,      /* CTA barrier (bar.sync) */
	I_TMA,      /* TMA load of `bytes` for tile iter+arg into channel ch: waits for the stage to be free */
	I_MBWAIT,   /* waits for channel ch's stage of tile iter+arg to be full */
	I_MBARRIVE, /* releases channel ch's stage of tile iter+arg (skipped outside 0..iters-1) */
	I_PPWAIT,   /* ping-pong (FlashAttention-3): waits for its warpgroup's turn to issue GEMMs */
	I_PPARRIVE, /* ... has issued them: when the whole warpgroup has, the other one's turn */
	I_BRA,      /* loop branch */
	I_EXIT
};

struct step_inst {
	uint8_t op;   /* enum step_op */
	uint8_t pipe; /* enum step_pipe */
	uint8_t cls;  /* Gantt letter */
	uint8_t name; /* index in the program's name table */
	uint8_t ch;   /* TMA / mbarrier channel */
	int16_t dst;  /* register, -1 = none */
	int16_t src[3];
	int16_t arg; /* tile offset or group count */
	float ii;    /* cycles the pipe is busy */
	float lat;   /* issue to result */
	float bytes;
};

/* One warp's program: prologue [0, body), loop body [body, end) run `iters` times, epilogue [end, n). */
struct step_prog {
	struct step_inst *in;
	int n, cap, body, end;
	int nreg;
	int nnames;
	char names[STEP_MAX_NAMES][28];
	char role[24]; /* "consumer", "producer", "" */
};

struct step_warp {
	int prog, cta, sched, gid, wid; /* gid: index on the unit (launch order); wid: in its CTA */
	int pc;
	long long iter, iters;
	int done;
	int marker; /* records its CTA's iteration starts */
	int wg;     /* ping-pong warpgroup (0 or 1) */
	/* scoreboard */
	int64_t *rdy;   /* STEP_MAX_REGS ready cycles */
	uint8_t *rlong; /* 1: long-latency (memory) producer */
	int16_t *rprod; /* producing instruction (pc) */
	/* commit groups */
	int64_t cp_grp[STEP_MAX_GROUPS], cp_open;
	long long cp_n;
	int64_t wg_grp[STEP_MAX_GROUPS], wg_open;
	long long wg_n;
	/* CTA barrier */
	int bar_wait;
	unsigned bar_gen;
	/* the last evaluation */
	uint8_t state, spipe;
	int last_pc; /* instruction issued in the last tick, -1 */
	int64_t until;
	long long issued;
};

struct step_cta {
	int64_t start_at; /* cycle its warps start */
	int nwarps;       /* warps that take part in its barriers */
	int arrived;
	unsigned gen;
	int64_t release_at;
	long long iters;
	int consumers; /* warps that release TMA stages */
	/* TMA stages per channel: fills issued, completion of the last fill, releases, arrivals of this round */
	long long filled[2][STEP_MAX_STAGES], released[2][STEP_MAX_STAGES];
	int64_t full_at[2][STEP_MAX_STAGES];
	int rel_count[2][STEP_MAX_STAGES];
	int64_t *it_start; /* cycle each main-loop iteration began (iters + 1) */
	long long pp_turn; /* ping-pong: turn n j + g belongs to warpgroup g of n in iteration j */
	int pp_count;      /* warps of the warpgroup whose turn it is that have arrived */
	int pp_warps;      /* warps per warpgroup */
};

struct step_sched {
	int n;                 /* warps */
	int *w;                /* their gids, in the order the policy keeps */
	int last;              /* gid issued last, -1 */
	double free[SP_COUNT]; /* when its pipes are free: ALU, SFU, tensor; SP_LSU: when the unit's
	                          shared-memory pipe has served this scheduler's queued requests */
	int active;            /* two-level: size of the active set (the first `active` of w) */
};

struct step_policy_ops {
	const char *name;
	const char *desc;
	/* picks one of the ready warps (ready[i] for sc->w[i]); returns the index in sc->w, -1 if none */
	int (*pick)(struct step_sched *sc, const struct step_sim *s, const uint8_t *ready);
};

struct step_sim {
	const struct arch_chip *chip;
	const struct arch_unit *unit;
	struct dm_iter it;
	struct step_opts o;
	const struct step_policy_ops *pol;
	int64_t now;
	int nsched, nwarps, nctas, nprogs;
	struct step_prog progs[3];
	struct step_warp *warps;
	struct step_cta *ctas;
	struct step_sched *sched;
	int stages;
	/* unit-wide pipes */
	double lsu_free; /* shared memory: bytes at smem_Bpc per cycle */
	double mem_free; /* this unit's port to L2 / device memory */
	double l2_Bpc, dram_Bpc, miss, lat_mem, write_cost;
	/* statistics */
	long long issued, state[SS_COUNT], pipe_stall[SP_COUNT];
	double pipe_busy[SP_COUNT];
	int finished;
	/* history for the Gantt: STEP_HIST cycles x warps, ring indexed by cycle */
	uint8_t *hist;
	/* text of the kernel for the header */
	char kname[96];
	char shape[256];
	int ctas_here; /* CTAs this unit runs */
	/* a CTA's warps (set by step_build) */
	int cta_nw;        /* warps */
	int cta_barw;      /* warps taking part in bar.sync */
	int cta_consumers; /* warps releasing TMA stages */
	int marker_wid;    /* the warp whose iterations are timed */
	uint8_t wprog[64]; /* program of each warp of a CTA */
	uint8_t wwg[64];   /* ping-pong warpgroup of each warp of a CTA */
	int pp_groups;     /* warpgroups taking turns (0: none) */
	uint8_t *ready;    /* scratch of step_tick, one per warp */
};

/* step_kernels.c: fills s->progs, s->nprogs, warps' programs and CTA parameters. */
int step_build(struct step_sim *s, const struct op *op, char *why, size_t wl);
/* Program builder helpers. */
int prog_name(struct step_prog *p, const char *name);
int prog_emit(struct step_prog *p, int op, int pipe, int cls, const char *name, int dst, int s0, int s1, int s2,
              double ii, double lat, int arg, double bytes);

/* Gantt letter of a warp's state (for issued: the instruction's class). */
int step_gantt_char(const struct step_sim *s, const struct step_warp *w);

#endif
