/*
 * common.c -- what the subcommands share (sim/cli/cli.h): the options every
 * command that reads a config accepts, usage errors, loading a config with
 * its --set overrides. main.c dispatches to the commands; the commands call
 * only this file, never main.c.
 */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The options a command's help text names (every "--word" and "-x" token),
   its own source of truth for what the command takes. */
static const char *help_of(const char *cmd)
{
	static const struct {
		const char *name, *help;
	} h[] = {{"info", cmd_info_help},         {"op", cmd_op_help},          {"run", cmd_run_help},
	         {"gen", cmd_gen_help},           {"step", cmd_step_help},      {"sweep", cmd_sweep_help},
	         {"roofline", cmd_roofline_help}, {"compare", cmd_compare_help}};
	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
		if (!strcmp(h[i].name, cmd))
			return h[i].help;
	return "";
}

int cli_unknown_option(const char *cmd, const char *opt)
{
	enum { MAXOPT = 128 };
	char words[MAXOPT][48];
	const char *cands[MAXOPT];
	int n = 0;
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(opt, "="), opt); /* --opt=value: the option */
	for (const char *p = help_of(cmd); *p && n < MAXOPT; p++) {
		if (*p != '-' || (p > help_of(cmd) && (isalnum((unsigned char)p[-1]) || p[-1] == '-')))
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

const char *cli_config(const char *name, char *buf, size_t len)
{
	if (!access(name, R_OK))
		return name;
	if (try_dir("", 0, name, buf, len))
		return buf;
	if (name[0] == '/' || !strncmp(name, "./", 2) || !strncmp(name, "../", 3))
		return name; /* a path: read as given, its error names it */
	const char *sp = getenv("SIM_CONFIG_PATH");
	for (const char *p = sp; p && *p;) {
		size_t n = strcspn(p, ":");
		if (n && try_dir(p, n, name, buf, len))
			return buf;
		p += n + (p[n] == ':');
	}
	char dir[PATH_MAX + 32];
	if (exe_configs(dir, sizeof dir) && try_dir(dir, strlen(dir), name, buf, len))
		return buf;
	if (try_dir(SIM_DATADIR "/configs", strlen(SIM_DATADIR "/configs"), name, buf, len))
		return buf;
#ifdef SIM_SOURCE_CONFIGS /* a program built and not installed: its source tree's */
	if (try_dir(SIM_SOURCE_CONFIGS, strlen(SIM_SOURCE_CONFIGS), name, buf, len))
		return buf;
#endif
	return name;
}

/* The names of the configs in dir (and its systems/), less .cfg, appended
   to names[*n..max), their text in pool. */
static void list_configs(const char *dir, const char *sub, char (*pool)[96], const char **names, int *n, int max)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s%s%s", dir, sub[0] ? "/" : "", sub);
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; *n < max && (e = readdir(d));) {
		size_t k = strlen(e->d_name);
		if (k > 4 && k < 80 && !strcmp(e->d_name + k - 4, ".cfg")) {
			snprintf(pool[*n], sizeof pool[*n], "%s%s%.*s", sub, sub[0] ? "/" : "", (int)(k - 4),
			         e->d_name);
			names[*n] = pool[*n];
			++*n;
		}
	}
	closedir(d);
}

/* A config name near name in the search path, for "did you mean"; "" if none. */
static void near_config(const char *name, char *out, size_t len)
{
	enum { MAXC = 1024 };
	char(*pool)[96] = malloc(MAXC * sizeof *pool);
	const char *names[MAXC];
	int n = 0;
	char dirs[5][PATH_MAX + 32];
	int nd = 0;
	const char *sp = getenv("SIM_CONFIG_PATH");
	for (const char *p = sp; p && *p && nd < 2;) {
		size_t k = strcspn(p, ":");
		if (k)
			snprintf(dirs[nd++], sizeof dirs[0], "%.*s", (int)k, p);
		p += k + (p[k] == ':');
	}
	if (exe_configs(dirs[nd], sizeof dirs[nd]))
		nd++;
	snprintf(dirs[nd++], sizeof dirs[0], "%s/configs", SIM_DATADIR);
#ifdef SIM_SOURCE_CONFIGS
	snprintf(dirs[nd++], sizeof dirs[0], "%s", SIM_SOURCE_CONFIGS);
#endif
	out[0] = '\0';
	if (!pool)
		return;
	for (int i = 0; i < nd; i++) {
		list_configs(dirs[i], "", pool, names, &n, MAXC);
		list_configs(dirs[i], "systems", pool, names, &n, MAXC);
	}
	char bare[96];
	size_t k = strlen(name);
	snprintf(bare, sizeof bare, "%.*s", (int)(k > 4 && !strcmp(name + k - 4, ".cfg") ? k - 4 : k), name);
	int near = arch_nearest(bare, names, n);
	snprintf(out, len, "%s", near >= 0 ? names[near] : "");
	free(pool);
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
