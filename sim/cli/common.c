/*
 * common.c -- what the subcommands share (sim/cli/cli.h): the options every
 * command that reads a config accepts, usage errors, loading a config with
 * its --set overrides. main.c dispatches to the commands; the commands call
 * only this file, never main.c.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

struct arch_chip *cli_load(const char *path, const struct cli_common *o, int *exit_code)
{
	struct arch_error err;
	struct arch_chip *c = arch_load(path, o->sets, o->nsets, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		*exit_code = err.exit_code;
	}
	return c;
}
