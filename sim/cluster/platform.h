/*
 * platform.h -- from a config's `system` section to the cluster a trace
 * runs on: the topology collectives see (struct topo) and the SimGrid
 * platform, built in the engine by platform_build (platform_sg.cpp).
 *
 * Ranks map to devices in order: rank r is device r % n of node r / n, n
 * the ranks a node holds (system.devices_per_node, or fewer where the job
 * leaves devices of every node idle: `sim run --ranks-per-node`). Links carry bandwidth only (latency 0): the
 * latencies of collectives and transfers are the protocol model's
 * (sim/cluster/coll.c), so SimGrid's part is the sharing of bandwidth between
 * concurrent flows (max-min fairness, exact with the settings in
 * platform_load). That is why `system` has no switch, NIC or fabric-hop
 * latencies: the per-step latencies of the collective library's table
 * (NCCL's, by link class) already hold the path's hardware hops, and a hop
 * latency added on a link would count them twice.
 */
#ifndef SIM_PLATFORM_H
#define SIM_PLATFORM_H

#include "arch.h"
#include "coll.h"
#include "platform_links.h"

#include <stdio.h>

/*
 * Fills *t for `ranks` devices of chip c's system, ranks_per_node of each
 * node (0: all its devices). Returns 0, or -1 with a one-line reason (more
 * ranks than a fixed system.nodes allows, several nodes without a fabric or
 * NICs, no intra-node link, a ranks_per_node platform_ranks_per_node refuses).
 */
int platform_topo(const struct arch_chip *c, int ranks, int ranks_per_node, struct topo *t, char *why, size_t whylen);

/*
 * Whether a job may place n ranks on each node of chip c's system, leaving
 * the node's other devices idle: 0, or -1 with a one-line reason. n must
 * be 1 .. system.devices_per_node, and the node's topology one whose links
 * between two devices do not depend on which others are in use (a switch
 * or host bridge: a port per device; a full mesh: a link per pair); on a
 * ring, torus or hybrid cube-mesh, routes pass through the idle devices.
 */
int platform_ranks_per_node(const struct arch_chip *c, int n, char *why, size_t whylen);

/* Writes the same platform as SimGrid XML (hosts dev0..devN-1), one zone per
   node under a fabric zone: the reference tests/test_platform.c checks
   platform_build's routes against. */
int platform_write_xml(const struct topo *t, FILE *f);

/* One line describing the system, for reports. */
void platform_describe(const struct arch_chip *c, const struct topo *t, char *buf, size_t len);

#endif
