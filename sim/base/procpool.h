/*
 * procpool.h -- runs jobs in forked child processes, a few at a time.
 *
 * SimGrid runs one simulation per process, so `sim sweep`, `sim compare`
 * and the validation suite replay each trace in a child of its own. Job i's
 * child calls work(i, ctx, out), which fills `out` (size bytes, zeroed
 * first); the pool sends it up a pipe into results + i * size. When the
 * child has ended, the parent calls done(i, ctx, ok, status, wall_s): ok is
 * 1 when the result arrived and the child exited 0; otherwise the result is
 * zeroed and pp_describe(status, ...) says what happened. Jobs start in
 * index order; done() comes in completion order.
 */
#ifndef SIM_PROCPOOL_H
#define SIM_PROCPOOL_H

#include <stddef.h>

typedef void (*pp_work)(long i, void *ctx, void *out);
typedef void (*pp_done)(long i, void *ctx, int ok, int status, double wall_s);

/* Largest result a child may send (a pipe's capacity: the child writes it
   whole before the parent reads it). */
#define PP_MAX_RESULT 65536

/* Runs jobs 0..n-1, at most `jobs` at once (below 1: one). Returns 0, or -1
   when a process or pipe cannot be made or size is above PP_MAX_RESULT
   (errno says why; the jobs already started are waited for). */
int pp_run(long n, int jobs, size_t size, void *results, pp_work work, pp_done done, void *ctx);

/* "died of signal 11 (Segmentation fault)", "exited with status 3" or
   "did not send its result", for a job whose done() had ok 0. */
void pp_describe(int status, char *buf, size_t len);

/* The processors online (at least 1). */
int pp_cpus(void);

#endif
