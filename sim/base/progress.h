/*
 * progress.h -- progress lines on stderr for the commands that run long.
 *
 * One policy for every command (run, serve, sweep, compare, plan, import):
 *   SIM_PROGRESS unset  on a terminal, one line rewritten in place once the
 *                       work has run 1 s, at most every 0.2 s, cleared when
 *                       it ends; otherwise (a log, a pipe) a line every 10 s
 *                       once the work has run 10 s
 *   SIM_PROGRESS=0      no progress
 *   SIM_PROGRESS=S      a line every S seconds once the work has run S s
 *                       (a terminal still rewrites its line)
 * Progress never goes to stdout and never changes what a command writes
 * there or in its files. A bad SIM_PROGRESS (not a number >= 0) is the
 * default.
 */
#ifndef SIM_PROGRESS_H
#define SIM_PROGRESS_H

struct progress {
	const char *cmd; /* "run": lines start "sim run: " */
	int tty;         /* stderr is a terminal: rewrite one line */
	double every_s;  /* 0: off */
	double t0_s, next_s;
	long lines; /* printed so far */
	int shown;  /* a line is on the terminal (tty) */
};

/* Starts the clock of cmd's work under the policy above. */
void progress_start(struct progress *p, const char *cmd);

/* 1 when a line is due now (cheap: one clock read). */
int progress_due(struct progress *p); /* 0 for a zeroed struct */

/* The line: "sim CMD: " + the text; call when progress_due() said so. */
void progress_print(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Seconds since progress_start. */
double progress_elapsed_s(const struct progress *p);

/* Ends the work: a terminal's line is cleared. */
void progress_end(struct progress *p);

#endif
