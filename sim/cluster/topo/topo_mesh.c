/*
 * topo_mesh.c -- full_mesh: a direct link between every two devices of a node
 * (AMD MI300X's xGMI), each 1/(devices - 1) of the device's links; every
 * peer is one hop away, so one-shot kernels and direct one-shot reductions
 * run on it.
 */
#include "topo_int.h"

static void mesh_setup(struct topo *t, const struct topo_in *in)
{
	topo_setup_pairs(t, in, t->dpn - 1);
}

static int mesh_linked(const struct topo *t, int la, int lb)
{
	(void)t, (void)la, (void)lb;
	return 1;
}

const struct topo_ops topo_mesh = {
    .name = "full_mesh",
    .describe = "full mesh",
    .inside = "a full mesh",
    .max_dpn = 64,
    .all_pairs = 1,
    .private_links = 1,
    .one_shot = 1,
    .setup = mesh_setup,
    .linked = mesh_linked,
    .intra_bw = topo_pairs_bw,
};
