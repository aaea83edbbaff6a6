/*
 * topo_pcie.c -- pcie_host: every device has one port (system.link's links, else
 * its PCIe links, else 16 GB/s) into the host bridge; a route goes up the
 * source's port and down the destination's. The default where a config
 * has no system section.
 */
#include "topo_int.h"

static void pcie_setup(struct topo *t, const struct topo_in *in)
{
	topo_setup_port(t, in->link ? in->link : in->pcie, in->eff);
}

const struct topo_ops topo_pcie = {
    .name = "pcie_host",
    .describe = "PCIe host bridge",
    .inside = "no switch",
    .port = 1,
    .private_links = 1,
    .setup = pcie_setup,
    .intra_bw = topo_port_bw,
};
