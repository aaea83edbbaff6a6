/*
 * gen_case.c -- the training and inference rows of the validation suite
 * (gen_case.h).
 *
 * A case's ops column holds a `sim gen` command; the suite reads it exactly
 * as the command does, with the command's own parser (gen_parse_args,
 * workloads/gen_args.c).
 */
#include "gen_case.h"
#include "cli.h"
#include "replay.h"
#include "trace.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 96

int vgen_config(const char *args, struct gen_config *c, char *why, size_t len)
{
	char buf[2048], *argv[MAX_ARGS + 1], *save = NULL;
	int argc = 0;
	if (strlen(args) >= sizeof buf) {
		snprintf(why, len, "sim gen: arguments longer than %zu characters", sizeof buf - 1);
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", args);
	argv[argc++] = (char *)"gen";
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (argc == MAX_ARGS) {
			snprintf(why, len, "sim gen: more than %d arguments", MAX_ARGS - 1);
			return -1;
		}
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	struct gen_args a;
	char msg[1280];
	if (gen_parse_args(argc, argv, c, &a, msg, sizeof msg)) {
		snprintf(why, len, "sim gen: %s", msg);
		return -1;
	}
	if (a.outpath) {
		snprintf(why, len, "sim gen: -o has no place in a case");
		return -1;
	}
	return 0;
}

/* Replaces every `from` in text (malloc'd; freed) by `to`. */
static char *replace_all(char *text, const char *from, const char *to)
{
	size_t hits = 0, lf = strlen(from), lt = strlen(to);
	for (const char *p = text; (p = strstr(p, from)) != NULL; p += lf)
		hits++;
	if (!hits)
		return text;
	char *out = malloc(strlen(text) + hits * lt + 1), *o = out;
	if (!out) {
		free(text);
		return NULL;
	}
	const char *p = text;
	for (const char *q; (q = strstr(p, from)) != NULL; p = q + lf) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, lt);
		o += lt;
	}
	strcpy(o, p);
	free(text);
	return out;
}

/* Turns every statement that starts with word (after a line's indentation)
   into a comment, in place: its first two characters become "# " when it
   is indented, else the line's first character becomes '#' (a statement
   keyword is longer than one character, so nothing else is lost). */
static void comment_out(char *text, const char *word)
{
	size_t lw = strlen(word);
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *p = l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, word, lw))
			continue;
		if (p - l >= 2)
			p[-2] = '#';
		else
			*l = '#';
	}
}

char *vgen_trace(const struct gen_config *c, const char *cmdline, const char *attn, int nomem)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return NULL;
	int bad = gen_write(f, c, cmdline);
	if (fclose(f) || bad) {
		free(text);
		return NULL;
	}
	if (text && attn) {
		char to[64];
		snprintf(to, sizeof to, "impl=%s", attn);
		text = replace_all(text, "impl=flash2", to);
	}
	if (text && nomem)
		comment_out(text, "memory ");
	return text;
}

/* The child: parse, replay, send the result up the pipe, exit. */
static void child(const char *text, const struct arch_chip *c, int fd)
{
	struct vgen_result res;
	memset(&res, 0, sizeof res);
	struct trace *t = tr_parse_string(text, "case.trace", res.why, sizeof res.why);
	if (!t) {
		res.rc = SIM_EXIT_TRACE;
	} else {
		struct rp_options o = {0, 1, 0, 0};
		struct rp_result r;
		memset(&r, 0, sizeof r);
		res.rc = rp_run(c, t, &o, &r, res.why, sizeof res.why);
		if (!res.rc) {
			res.time_s = r.time_s;
			res.ranks = r.ranks;
			res.nrep = r.nrep;
			rp_result_free(&r);
		}
		tr_free(t);
	}
	ssize_t w = write(fd, &res, sizeof res);
	_exit(w == (ssize_t)sizeof res ? 0 : 1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct slot {
	pid_t pid;
	int fd, idx;
	double t0;
};

static void finish(struct slot *s, int status, struct vgen_result *res)
{
	struct vgen_result *r = &res[s->idx];
	ssize_t got = read(s->fd, r, sizeof *r);
	close(s->fd);
	if (got != (ssize_t)sizeof *r || !WIFEXITED(status) || WEXITSTATUS(status)) {
		memset(r, 0, sizeof *r);
		r->rc = -1;
		if (WIFSIGNALED(status))
			snprintf(r->why, sizeof r->why, "the replay's child process died of signal %d (%s)",
			         WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(r->why, sizeof r->why, "the replay's child process failed");
	}
	r->wall_s = now_s() - s->t0;
	s->pid = 0;
}

void vgen_replay_all(const char *const *texts, const struct arch_chip *const *chips, int n, int jobs,
                     struct vgen_result *res)
{
	struct slot *sl = calloc((size_t)(jobs > 0 ? jobs : 1), sizeof *sl);
	if (!sl) {
		for (int i = 0; i < n; i++) {
			res[i].rc = -1;
			snprintf(res[i].why, sizeof res[i].why, "out of memory");
		}
		return;
	}
	if (jobs < 1)
		jobs = 1;
	int next = 0, running = 0;
	while (next < n || running > 0) {
		while (running < jobs && next < n) {
			int i = next++, p[2];
			memset(&res[i], 0, sizeof res[i]);
			if (!texts[i] || !chips[i]) {
				res[i].rc = -1;
				snprintf(res[i].why, sizeof res[i].why, "no trace or no chip");
				continue;
			}
			fflush(NULL); /* the child must not write the parent's buffers again */
			if (pipe(p)) {
				res[i].rc = -1;
				snprintf(res[i].why, sizeof res[i].why, "pipe: %s", strerror(errno));
				continue;
			}
			double t0 = now_s();
			pid_t pid = fork();
			if (pid < 0) {
				res[i].rc = -1;
				snprintf(res[i].why, sizeof res[i].why, "fork: %s", strerror(errno));
				close(p[0]);
				close(p[1]);
				continue;
			}
			if (pid == 0) {
				close(p[0]);
				child(texts[i], chips[i], p[1]);
			}
			close(p[1]);
			for (int k = 0; k < jobs; k++)
				if (!sl[k].pid) {
					sl[k] = (struct slot){pid, p[0], i, t0};
					break;
				}
			running++;
		}
		if (!running)
			break;
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; /* no children left: cannot happen while running > 0 */
		}
		for (int k = 0; k < jobs; k++)
			if (sl[k].pid == pid) {
				finish(&sl[k], status, res);
				running--;
				break;
			}
	}
	free(sl);
}
