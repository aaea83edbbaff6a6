/*
 * engine.h -- how a program gets the cluster engine: the replay on SimGrid
 * (rp_run, replay.h; replay.c, replay_plan.c, replay_steady.c, replay_fold.c
 * and platform_sg.cpp).
 *
 * Loading SimGrid costs about 50 ms of every process that links it, before
 * main() runs: Debian's libsimgrid pulls in 17 ns-3 libraries and their
 * static initializers. Most `sim` commands never replay (op, info, gen, help,
 * import, export, step, roofline, serve), and the test suite runs `sim` some
 * thousands of times. So two builds of the same interface:
 *  - the `sim` program loads the engine as a module on first use
 *    (engine_dl.c): sim-engine.so beside the program (the build tree), else
 *    in lib/sim/ of its installation. The module holds only the engine's own
 *    files; everything else it calls (the device model, the collectives, the
 *    platform, output files, progress lines) is the program's, exported to
 *    it (one copy of each: the program's signal handlers and temporary-file
 *    registry are the ones the replay re-asserts).
 *  - the tests and the validation suite link the engine in (engine_static.c),
 *    where rp_engine_load() has nothing to do.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include "replay.h"

#include <stddef.h>

/* Loads the engine unless it is loaded: 0, or -1 with a one-line reason in
   why (the module missing, or of another build). rp_run() loads it when it
   must; a command that forks workers calls this first, so that every child
   inherits the loaded engine instead of loading its own. */
int rp_engine_load(char *why, size_t whylen);

/* SimGrid's version as the engine runs it (loading the engine): 0, or -1
   with rp_engine_load()'s reason. */
int rp_engine_simgrid_version(int *major, int *minor, int *patch, char *why, size_t whylen);

/* What the module exports (engine_module.c), under RP_ENGINE_SYMBOL: the
   loader refuses a table whose abi or struct sizes differ from its own. */
#define RP_ENGINE_ABI    1
#define RP_ENGINE_SYMBOL "sim_engine"
#define RP_ENGINE_FILE   "sim-engine.so"
struct rp_engine {
	int abi;
	size_t result_bytes, options_bytes, span_bytes; /* sizeof of the structs the two sides share */
	int (*run)(const struct arch_chip *c, const struct trace *t, const struct rp_options *o, struct rp_result *r,
	           char *why, size_t whylen);
	void (*simgrid_version)(int *major, int *minor, int *patch);
};

#endif
