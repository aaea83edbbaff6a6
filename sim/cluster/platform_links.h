/*
 * platform_links.h -- the SimGrid platform of a topology as links and
 * routes: what platform.c computes and platform_sg.cpp (the only C++ file,
 * which includes no other header of sim) makes in SimGrid. Part of
 * platform.h's API; kept apart so that the C++ file sees plain C
 * declarations only.
 */
#ifndef SIM_PLATFORM_LINKS_H
#define SIM_PLATFORM_LINKS_H

#include <simgrid/forward.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct topo;

/*
 * The SimGrid platform of a topology: its links in the order they are made
 * (per node, per device: its port, or its direct links to higher devices,
 * then its NIC; then the fabric's core and uplinks) and the route between
 * any two devices as a list of (link, direction), computed on demand in
 * O(1) (O(devices per node^2) inside a mesh node without a direct link):
 *   - switch / pcie_host: port_a UP, port_b DOWN;
 *   - direct links: the link of each hop of a shortest path over the node's
 *     links (breadth first, the lowest device first), UP from the lower
 *     device to the higher;
 *   - between nodes: nic_a UP, the core (FATPIPE) twice or up_x UP and
 *     up_y DOWN (oversubscribed), nic_b DOWN.
 * These are the links, bandwidths (latency 0) and routes of the XML of
 * platform_write_xml, which SimGrid resolves through one zone per node and a
 * fabric zone; tests/test_platform.c checks that every route agrees.
 */
enum { PH_UP, PH_DOWN, PH_BOTH }; /* a hop's direction: SPLITDUPLEX halves, or the FATPIPE core */
struct plink {
	char name[32]; /* port5, pair8_9, nic5, corelink, up1 */
	double bw;     /* B/s, per direction */
	int fatpipe;   /* 1: one FATPIPE link (every flow gets bw); 0: SPLITDUPLEX, UP and DOWN halves */
};
struct phop {
	int link; /* index into platform.links */
	int dir;  /* PH_UP, PH_DOWN; PH_BOTH for a FATPIPE link */
};
#define PLATFORM_MAX_HOPS 68 /* 63 hops inside a node of 64, or 4 between nodes */

struct platform {
	const struct topo *t;
	int ndev; /* devices (t->ranks): hosts dev0 .. dev<ndev - 1> */
	int nlinks;
	struct plink *links;
	int *port; /* per rank: its port link, -1 (direct-link topologies) */
	int *nic;  /* per rank: its NIC link, -1 (one node) */
	int *pair; /* per rank and local device: the direct link between them, -1 */
	int core;  /* the fabric's FATPIPE link, -1 (one node) */
	int *up;   /* per node: its uplink (oversubscribed), or NULL */
};

/* The platform of t (which it keeps a pointer to), or NULL when memory runs
   out. */
struct platform *platform_new(const struct topo *t);
void platform_free(struct platform *p);
/* The route from device a to device b (a != b) into hops (PLATFORM_MAX_HOPS);
   returns the number of hops. */
int platform_route(const struct platform *p, int a, int b, struct phop *hops);

/*
 * Makes p's platform in SimGrid's engine (after simgrid_init and its
 * settings, instead of loading a file): one zone holding the devices
 * (hosts dev0 .. devN-1, 1 Gflop/s) and every link, whose routes are
 * platform_route's. Set-up is linear in devices and links and a route costs
 * what platform_route costs, where zones per node cost SimGrid 3.32
 * O(hosts x zones) to build and seal and a linear search of the fabric per
 * route. Fills hosts[rank]. Returns 0, or -1 with SimGrid's reason in why.
 */
int platform_build(const struct platform *p, sg_host_t *hosts, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif
