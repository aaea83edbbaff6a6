/*
 * engine_static.c -- the engine linked in (the tests, the validation suite):
 * nothing to load (engine.h).
 */
#include "engine.h"

#include <simgrid/forward.h> /* SG_BEGIN_DECL, needed by version.h */
#include <simgrid/version.h>

int rp_engine_load(char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	return 0;
}

int rp_engine_simgrid_version(int *major, int *minor, int *patch, char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	sg_version_get(major, minor, patch);
	return 0;
}
