/*
 * topo_torus.c -- torus: a node of a torus (TPU pods), its links into the node's
 * neighbours modelled as a switch without in-switch reduction: setup hands
 * the node to topo_switch.c (or, without system.link, topo_pcie.c), so the other
 * fields below, a switch's, are never asked.
 */
#include "topo_int.h"

static void torus_setup(struct topo *t, const struct topo_in *in)
{
	t->ops = &topo_switch;
	topo_switch.setup(t, in);
	t->nvls = 0;
}

const struct topo_ops topo_torus = {
    .name = "torus",
    .describe = "switch",
    .inside = "a switch",
    .port = 1,
    .private_links = 1,
    .one_shot = 1,
    .setup = torus_setup,
    .intra_bw = topo_port_bw,
};
