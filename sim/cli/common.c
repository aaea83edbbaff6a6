/*
 * common.c -- what the subcommands share (sim/cli/cli.h): the options every
 * command that reads a config accepts, usage errors, loading a config with
 * its --set overrides. main.c dispatches to the commands; the commands call
 * only this file, never main.c.
 */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SIM_DATADIR
#define SIM_DATADIR "/usr/local/share/sim"
#endif

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "sim %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see sim help %s)\n", cmd);
	return SIM_EXIT_USAGE;
}

int cli_unknown_option(const char *cmd, const char *help, const char *opt)
{
	enum { MAXOPT = 128 };
	char words[MAXOPT][48];
	const char *cands[MAXOPT];
	int n = 0;
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(opt, "="), opt); /* --opt=value: the option */
	/* the options the help text names: every "--word" and "-x" token */
	for (const char *p = help; *p && n < MAXOPT; p++) {
		if (*p != '-' || (p > help && (isalnum((unsigned char)p[-1]) || p[-1] == '-')))
			continue;
		size_t k = strspn(p, "-abcdefghijklmnopqrstuvwxyz0123456789");
		if (k < 2 || k >= sizeof words[0] || p[1] == ' ' || (p[1] == '-' && k < 4))
			continue;
		snprintf(words[n], sizeof words[n], "%.*s", (int)k, p);
		cands[n] = words[n];
		n++;
		p += k - 1;
	}
	int near = arch_nearest(name, cands, n);
	if (near >= 0)
		return cli_usage_error(cmd, "unknown option '%s' (did you mean '%s'?)", name, cands[near]);
	return cli_usage_error(cmd, "unknown option '%s'", name);
}

int cli_flag_without_value(const char *help, const char *name)
{
	size_t k = strlen(name);
	for (const char *l = help; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		/* an option line: "  --json              print JSON", "  -h, --help  this help", "  --top N  ..." */
		if (strncmp(l, "  -", 3))
			continue;
		const char *p = l + 2;
		int named = 0;
		for (;;) { /* the aliases: "-h, --help", or a group over lines ending in "," */
			size_t w = strcspn(p, " ,\n");
			named |= w == k && !strncmp(p, name, k);
			p += w;
			if (p[0] == ',' && p[1] == ' ' && p[2] == '-')
				p += 2;
			else if (p[0] == ',' && p[1] == '\n' && !strncmp(p + 2, "  -", 3))
				p += 4;
			else
				break;
		}
		if (named)
			return !*p || *p == '\n' || (p[0] == ' ' && p[1] == ' ');
	}
	return 0;
}

int cli_common_opt(struct cli_common *o, int argc, char **argv, int *i, const char *cmd)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--json")) {
		o->json = 1;
		return 1;
	}
	if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
		const char *v = a[5] == '=' ? a + 6 : NULL;
		if (!v) {
			if (*i + 1 >= argc) {
				cli_usage_error(cmd, "--set needs path=value");
				return -1;
			}
			v = argv[++*i];
		}
		if (o->nsets == CLI_MAX_SETS) {
			cli_usage_error(cmd, "more than %d --set options", CLI_MAX_SETS);
			return -1;
		}
		o->sets[o->nsets++] = v;
		return 1;
	}
	return 0;
}

/* dir/name, or dir/name.cfg, when readable: into buf, 1; else 0 */
static int try_dir(const char *dir, size_t dirlen, const char *name, char *buf, size_t len)
{
	static const char *const ext[] = {"", ".cfg"};
	for (int e = 0; e < 2; e++) {
		int n = snprintf(buf, len, "%.*s%s%s%s", (int)dirlen, dir, dirlen ? "/" : "", name, ext[e]);
		if (n > 0 && (size_t)n < len && !access(buf, R_OK))
			return 1;
	}
	return 0;
}

/* the share/sim/configs beside the running program (bin/../share/sim/configs) */
static int exe_configs(char *dir, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	int w = snprintf(dir, len, "%s/../share/sim/configs", exe);
	return w > 0 && (size_t)w < len;
}

/* Calls fn on each directory a config name is looked up in, in order
   ($SIM_CONFIG_PATH's, the program's ../share/sim/configs, the prefix's,
   the source tree's), until it returns nonzero; returns that. */
static int each_config_dir(int (*fn)(const char *dir, size_t len, void *ctx), void *ctx)
{
	int r = 0;
	const char *sp = getenv("SIM_CONFIG_PATH");
	for (const char *p = sp; p && *p && !r;) {
		size_t n = strcspn(p, ":");
		if (n)
			r = fn(p, n, ctx);
		p += n + (p[n] == ':');
	}
	char dir[PATH_MAX + 32];
	if (!r && exe_configs(dir, sizeof dir))
		r = fn(dir, strlen(dir), ctx);
	if (!r)
		r = fn(SIM_DATADIR "/configs", strlen(SIM_DATADIR "/configs"), ctx);
#ifdef SIM_SOURCE_CONFIGS /* a program built and not installed: its source tree's */
	if (!r)
		r = fn(SIM_SOURCE_CONFIGS, strlen(SIM_SOURCE_CONFIGS), ctx);
#endif
	return r;
}

struct lookup {
	const char *name;
	char *buf;
	size_t len;
};

static int lookup_in(const char *dir, size_t len, void *ctx)
{
	struct lookup *l = ctx;
	return try_dir(dir, len, l->name, l->buf, l->len);
}

const char *cli_config(const char *name, char *buf, size_t len)
{
	if (!access(name, R_OK))
		return name;
	if (try_dir("", 0, name, buf, len))
		return buf;
	if (name[0] == '/' || !strncmp(name, "./", 2) || !strncmp(name, "../", 3))
		return name; /* a path: read as given, its error names it */
	struct lookup l = {name, buf, len};
	return each_config_dir(lookup_in, &l) ? buf : name;
}

/* The config names a "did you mean" chooses from: each search directory's
   .cfg files and those of its systems/, less .cfg. */
struct names {
	char (*pool)[96];
	const char **v;
	int n, max;
};

static void list_configs(const char *dir, size_t len, const char *sub, struct names *c)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%.*s%s%s", (int)len, dir, sub[0] ? "/" : "", sub);
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; c->n < c->max && (e = readdir(d));) {
		size_t k = strlen(e->d_name);
		if (k > 4 && k < 80 && !strcmp(e->d_name + k - 4, ".cfg")) {
			snprintf(c->pool[c->n], sizeof c->pool[0], "%s%s%.*s", sub, sub[0] ? "/" : "", (int)(k - 4),
			         e->d_name);
			c->v[c->n] = c->pool[c->n];
			c->n++;
		}
	}
	closedir(d);
}

static int list_in(const char *dir, size_t len, void *ctx)
{
	list_configs(dir, len, "", ctx);
	list_configs(dir, len, "systems", ctx);
	return 0; /* every directory */
}

/* A config name near name in the search path, for "did you mean"; "" if none. */
static void near_config(const char *name, char *out, size_t len)
{
	enum { MAXC = 1024 };
	const char *v[MAXC];
	struct names c = {malloc(MAXC * sizeof *c.pool), v, 0, MAXC};
	out[0] = '\0';
	if (!c.pool)
		return;
	each_config_dir(list_in, &c);
	char bare[96];
	size_t k = strlen(name);
	snprintf(bare, sizeof bare, "%.*s", (int)(k > 4 && !strcmp(name + k - 4, ".cfg") ? k - 4 : k), name);
	int near = arch_nearest(bare, v, c.n);
	snprintf(out, len, "%s", near >= 0 ? v[near] : "");
	free(c.pool);
}

struct arch_chip *cli_load(const char *path, const struct cli_common *o, int *exit_code)
{
	char buf[PATH_MAX + 64];
	const char *found = cli_config(path, buf, sizeof buf);
	if (found == path && access(path, F_OK) && path[0] != '/' && path[0] != '.') {
		char near[96], hint[128] = "";
		near_config(path, near, sizeof near);
		if (near[0])
			snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
		fprintf(stderr,
		        "%s: no such config%s (a path, or a name looked up in $SIM_CONFIG_PATH, the program's "
		        "../share/sim/configs, %s/configs and the source tree's configs/, with or without .cfg)\n",
		        path, hint, SIM_DATADIR);
		*exit_code = SIM_EXIT_NOINPUT;
		return NULL;
	}
	struct arch_error err;
	struct arch_chip *c = arch_load(found, o->sets, o->nsets, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		*exit_code = err.exit_code;
	}
	return c;
}

void cli_progress_jobs(struct progress *p, const char *what, long done, long n)
{
	/* a log that was told of the work is told it ended */
	if (progress_due(p) || (done == n && p->lines && !p->tty))
		progress_print(p, "%ld/%ld %s (%.0f s)", done, n, what, progress_elapsed_s(p));
	if (done == n)
		progress_end(p);
}

void cli_fnv(unsigned long long *h, const char *s)
{
	for (; s && *s; s++)
		*h = (*h ^ (unsigned char)*s) * 0x100000001b3ull;
	*h = (*h ^ 0xff) * 0x100000001b3ull;
}

int cli_parse_ranks_per_node(const char *cmd, const char *v, int *out)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < 1 || n > 65536)
		return cli_usage_error(cmd, "--ranks-per-node %s: expected an integer from 1 to 65536", v);
	*out = (int)n;
	return 0;
}

int cli_parse_shard(const char *cmd, const char *v, long max, long *i, long *n)
{
	char *end, *end2 = NULL;
	errno = 0;
	long si = strtol(v, &end, 10), sn = *end == '/' ? strtol(end + 1, &end2, 10) : 0;
	if (end == v || *end != '/' || !end2 || end2 == end + 1 || *end2 || errno || sn < 1 || sn > max || si < 0 ||
	    si >= sn)
		return cli_usage_error(cmd, "--shard %s: expected I/N, 0 <= I < N <= %ld", v, max);
	*i = si;
	*n = sn;
	return 0;
}
