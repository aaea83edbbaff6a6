/*
 * engine_dl.c -- the engine as a module the `sim` program loads on first use
 * (engine.h says why): sim-engine.so beside the program (a build tree), else
 * in lib/sim/ of the installation the program is in (bin/../lib/sim), else
 * where the build would install it (SIM_ENGINE_DIR).
 */
#include "engine.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* the module, loaded once per process (dlopen's handles are process-wide); forked children inherit it */
static const struct rp_engine *loaded; /* static-ok: one module a process */

#ifndef SIM_ENGINE_DIR
#define SIM_ENGINE_DIR "/usr/local/lib/sim"
#endif

/* The directory of the running program, or "" when /proc cannot say. */
static void program_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	dir[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
}

int rp_engine_load(char *why, size_t whylen)
{
	if (loaded)
		return 0;
	char dir[PATH_MAX], path[3][PATH_MAX + 64];
	program_dir(dir, sizeof dir);
	snprintf(path[0], sizeof path[0], "%s/" RP_ENGINE_FILE, dir);
	snprintf(path[1], sizeof path[1], "%s/../lib/sim/" RP_ENGINE_FILE, dir);
	snprintf(path[2], sizeof path[2], "%s/" RP_ENGINE_FILE, SIM_ENGINE_DIR);
	for (int i = dir[0] ? 0 : 2; i < 3; i++) {
		if (access(path[i], F_OK))
			continue;
		void *h = dlopen(path[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(why, whylen, "the cluster engine %s cannot be loaded: %s", path[i], dlerror());
			return -1;
		}
		const struct rp_engine *e = dlsym(h, RP_ENGINE_SYMBOL);
		if (!e || e->abi != RP_ENGINE_ABI || e->result_bytes != sizeof(struct rp_result) ||
		    e->options_bytes != sizeof(struct rp_options) || e->span_bytes != sizeof(struct rp_span)) {
			snprintf(why, whylen,
			         "the cluster engine %s is not the one this program was built with (rebuild or "
			         "reinstall sim)",
			         path[i]);
			dlclose(h);
			return -1;
		}
		loaded = e;
		return 0;
	}
	snprintf(why, whylen,
	         "the cluster engine " RP_ENGINE_FILE " is neither beside the program (%s) nor in %s%s (reinstall sim)",
	         dir[0] ? dir : "?", dir[0] ? "../lib/sim beside it or " : "", SIM_ENGINE_DIR);
	return -1;
}

int rp_engine_simgrid_version(int *major, int *minor, int *patch, char *why, size_t whylen)
{
	if (rp_engine_load(why, whylen))
		return -1;
	loaded->simgrid_version(major, minor, patch);
	return 0;
}

int rp_run(const struct arch_chip *c, const struct trace *t, const struct rp_options *o, struct rp_result *r, char *why,
           size_t whylen)
{
	memset(r, 0, sizeof *r);
	char e[PATH_MAX + 256];
	if (rp_engine_load(e, sizeof e)) {
		snprintf(why, whylen, "sim: %s", e);
		return SIM_EXIT_INTERNAL;
	}
	return loaded->run(c, t, o, r, why, whylen);
}
