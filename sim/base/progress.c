/*
 * progress.c -- progress lines on stderr (policy in progress.h).
 */
#include "progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void progress_start(struct progress *p, const char *cmd)
{
	*p = (struct progress){.cmd = cmd, .tty = isatty(2)};
	double first_s = p->tty ? 1 : 10;
	p->every_s = p->tty ? 0.2 : 10;
	const char *e = getenv("SIM_PROGRESS");
	if (e && *e) {
		char *end;
		double s = strtod(e, &end);
		if (!*end && isfinite(s) && s >= 0)
			p->every_s = first_s = s;
	}
	p->t0_s = now_s();
	p->next_s = p->t0_s + first_s;
}

int progress_due(struct progress *p)
{
	return p->cmd && p->every_s > 0 && now_s() >= p->next_s;
}

double progress_elapsed_s(const struct progress *p)
{
	return now_s() - p->t0_s;
}

void progress_print(struct progress *p, const char *fmt, ...)
{
	p->next_s = now_s() + p->every_s;
	fprintf(stderr, "%ssim %s: ", p->tty ? "\r\033[K" : "", p->cmd);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(p->tty ? "" : "\n", stderr);
	fflush(stderr);
	p->shown = p->tty;
	p->lines++;
}

void progress_end(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
	p->cmd = NULL;
}
