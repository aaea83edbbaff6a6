/*
 * topo_switch.c -- switch: every device has one port (all its system.link links)
 * into a switch of the node (NVSwitch); a route goes up the source's port
 * and down the destination's. The switch may reduce in the network (NVLS,
 * system.in_switch_reduction). Without system.link the devices meet at the
 * host bridge instead: the node is a pcie_host one (topo_pcie.c).
 */
#include "topo_int.h"

static void switch_setup(struct topo *t, const struct topo_in *in)
{
	if (!in->link) {
		t->ops = &topo_pcie;
		topo_setup_port(t, in->pcie, in->eff);
		return;
	}
	topo_setup_port(t, in->link, in->eff);
	t->nvls = in->in_switch_reduction;
}

const struct topo_ops topo_switch = {
    .name = "switch",
    .describe = "switch",
    .inside = "a switch",
    .port = 1,
    .private_links = 1,
    .switch_reduce = 1,
    .one_shot = 1,
    .setup = switch_setup,
    .intra_bw = topo_port_bw,
};
