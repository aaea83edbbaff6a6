/*
 * topo_common.c -- what the topologies share (sim/cluster/topo_int.h): the class
 * of a link kind, a port into a switch or host bridge, direct links split
 * between neighbours, and the bandwidth a member reaches over either. A
 * leaf: the topologies (the files of sim/cluster/topo/) call it, it calls
 * none of them, nor the table in topo.c.
 */
#include "topo_int.h"

#include <string.h>

enum hw_class topo_link_class(const char *kind)
{
	if (!strcmp(kind, "pcie"))
		return HW_PCI;
	if (!strcmp(kind, "roce") || !strcmp(kind, "ethernet") || !strcmp(kind, "infiniband"))
		return HW_NET;
	return HW_NVLINK; /* nvlink, xgmi, hccs, mlulink ...: point-to-point GPU links */
}

void topo_setup_port(struct topo *t, const struct arch_link *p, double eff)
{
	t->port_bw = p ? arch_link_bw(p) * (double)p->count * eff : 16e9 * eff;
	t->intra_hw = p ? topo_link_class(p->kind) : HW_PCI;
	t->link_name = p ? p->name : "pcie";
}

void topo_setup_pairs(struct topo *t, const struct topo_in *in, int peers)
{
	const struct arch_link *p = in->link ? in->link : in->pcie;
	double total = p ? arch_link_bw(p) * (double)p->count * in->eff : 16e9 * in->eff;
	if (peers < 1)
		peers = 1;
	t->pair_bw = total / peers;
	t->port_bw = total;
	t->intra_hw = p ? topo_link_class(p->kind) : HW_PCI;
	t->link_name = p ? p->name : "pcie";
}

double topo_port_bw(const struct topo *t, int deg)
{
	(void)deg;
	return t->port_bw;
}

double topo_pairs_bw(const struct topo *t, int deg)
{
	return t->pair_bw * (deg > 0 ? deg : 1);
}
