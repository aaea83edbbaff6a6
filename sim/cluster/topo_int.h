/*
 * topo_int.h -- private to the topologies (sim/cluster/topo.c and the files
 * of sim/cluster/topo/); sim/cluster/topo.h is their API.
 */
#ifndef SIM_TOPO_INT_H
#define SIM_TOPO_INT_H

#include "coll.h"

/* The topologies (one file each under sim/cluster/topo/). */
extern const struct topo_ops topo_switch, topo_mesh, topo_cube, topo_ring, topo_torus, topo_pcie;

/* Helpers the topologies share (topo/topo_common.c, a leaf). */
enum hw_class topo_link_class(const char *kind);
/* A port of links p (NULL: 16 GB/s of PCIe) into the node's switch or
   host bridge: port_bw, intra_hw, link_name. */
void topo_setup_port(struct topo *t, const struct arch_link *p, double eff);
/* Direct links to `peers` neighbours sharing the device's links (system.link,
   else its PCIe): pair_bw each, port_bw all together. */
void topo_setup_pairs(struct topo *t, const struct topo_in *in, int peers);
/* intra_bw of a port topology (its port) and of a direct one (deg links). */
double topo_port_bw(const struct topo *t, int deg);
double topo_pairs_bw(const struct topo *t, int deg);

#endif
