/*
 * topo.c -- the table of intra-node topologies (topo.h), in the order of
 * system.topology's list in arch/params.c, and the links they give a node.
 * Adding one: its file under sim/cluster/topo/, a line here, its extern in
 * topo_int.h, its file in sim/CMakeLists.txt, its name in arch/params.c and
 * a row in tests/test_coll.c (docs/architecture.md, "How to add ...").
 */
#include "topo_int.h"

#include <string.h>

static const struct topo_ops *const topos[] = {
    &topo_switch, &topo_mesh, &topo_cube, &topo_ring, &topo_torus, &topo_pcie,
};
#define NTOPOS ((int)(sizeof topos / sizeof topos[0]))

int topo_count(void)
{
	return NTOPOS;
}

const struct topo_ops *topo_at(int i)
{
	return i >= 0 && i < NTOPOS ? topos[i] : NULL;
}

const struct topo_ops *topo_find(const char *name)
{
	for (int i = 0; i < NTOPOS; i++)
		if (!strcmp(topos[i]->name, name))
			return topos[i];
	return NULL;
}

int topo_linked(const struct topo *t, int a, int b)
{
	return t->ops->linked ? t->ops->linked(t, a % t->dpn, b % t->dpn) : 0;
}
