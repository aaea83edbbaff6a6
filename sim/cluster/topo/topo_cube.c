/*
 * topo_cube.c -- hybrid_cube_mesh: the DGX-1's NVLink wiring, two fully
 * connected quads with device i linked to i + 4; each device's links split
 * between its 4 neighbours. A route between unlinked devices goes through
 * one of them, so devices share links (no folding).
 */
#include "topo_int.h"

static void cube_setup(struct topo *t, const struct topo_in *in)
{
	topo_setup_pairs(t, in, 4);
}

static int cube_linked(const struct topo *t, int la, int lb)
{
	(void)t;
	return la / 4 == lb / 4 || la % 4 == lb % 4;
}

const struct topo_ops topo_cube = {
    .name = "hybrid_cube_mesh",
    .describe = "hybrid cube mesh",
    .inside = "no switch",
    .max_dpn = 64,
    .setup = cube_setup,
    .linked = cube_linked,
    .intra_bw = topo_pairs_bw,
};
