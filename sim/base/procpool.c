/*
 * procpool.c -- forked child processes, a few at a time (procpool.h).
 */
#include "procpool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct slot {
	pid_t pid;
	int fd;
	long idx;
	double t0;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int pp_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

void pp_describe(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "did not send its result");
}

static void child(long i, size_t size, pp_work work, void *ctx, int fd, pid_t parent)
{
#ifdef __linux__
	/* A job does not outlive sim: when the parent dies (SIGINT, SIGTERM,
	   anything), the job gets SIGTERM (sim/base/outfile.c's handler: its own
	   temporary files removed, exit 143 without a word). */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
#else
	(void)parent;
#endif
	void *out = calloc(1, size ? size : 1);
	if (!out)
		_exit(1);
	work(i, ctx, out);
	ssize_t w = write(fd, out, size);
	_exit(w == (ssize_t)size ? 0 : 1);
}

static void reap(struct slot *s, int status, size_t size, char *results, pp_done done, void *ctx)
{
	char *out = results + (size_t)s->idx * size;
	ssize_t got = read(s->fd, out, size);
	close(s->fd);
	int ok = got == (ssize_t)size && WIFEXITED(status) && !WEXITSTATUS(status);
	if (!ok)
		memset(out, 0, size);
	long idx = s->idx;
	double wall = now_s() - s->t0;
	s->pid = 0;
	if (done)
		done(idx, ctx, ok, status, wall);
}

static int start(struct slot *s, long i, size_t size, pp_work work, void *ctx)
{
	int p[2];
	fflush(NULL); /* the child must not write the parent's buffers again */
	if (pipe(p))
		return -1;
	double t0 = now_s();
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child(i, size, work, ctx, p[1], parent);
	}
	close(p[1]);
	*s = (struct slot){pid, p[0], i, t0};
	return 0;
}

int pp_run(long n, int jobs, size_t size, void *results, pp_work work, pp_done done, void *ctx)
{
	if (size > PP_MAX_RESULT) {
		errno = EINVAL;
		return -1;
	}
	if (jobs < 1)
		jobs = 1;
	struct slot *sl = calloc((size_t)jobs, sizeof *sl);
	if (!sl)
		return -1;
	long next = 0;
	int running = 0, rc = 0;
	while ((next < n && !rc) || running) {
		while (!rc && running < jobs && next < n) {
			int k = 0;
			while (sl[k].pid)
				k++;
			if (start(&sl[k], next, size, work, ctx)) {
				rc = -1;
				break;
			}
			next++;
			running++;
		}
		if (!running)
			break;
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < jobs; k++)
			if (sl[k].pid == pid) {
				reap(&sl[k], status, size, results, done, ctx);
				running--;
				break;
			}
	}
	int e = errno;
	free(sl);
	errno = e;
	return rc;
}
