/*
 * topo.h -- the intra-node topology of a node (system.topology): how the
 * devices of one node are wired to each other.
 *
 * Each topology is one `const struct topo_ops` in a file of its own under
 * sim/cluster/topo/ (topo_switch.c, topo_mesh.c, topo_cube.c, topo_ring.c,
 * topo_torus.c, topo_pcie.c: prefixed, as tests/run_layering.sh tells a
 * library's objects apart by file name and coll/ has a ring.c), listed once in the table of sim/cluster/topo.c and
 * found by the name a config spells (arch/params.c validates system.topology against the same names; tests/test_coll.c
 * checks that the two lists agree). The platform builder (platform.c), the collectives (coll.c, coll/) and the replay's
 * folding (replay_fold.c) ask a node's ops (struct topo's `ops`) instead of
 * testing which topology it is. Helpers the topologies share live in the
 * leaf sim/cluster/topo/topo_common.c (topo_int.h), so the table, the topologies
 * and the helpers call each other in no circle.
 */
#ifndef SIM_TOPO_H
#define SIM_TOPO_H

struct arch_link;
struct topo;

/* What a topology's setup reads of the config. */
struct topo_in {
	const struct arch_link *link; /* system.link's links.* group, or NULL */
	const struct arch_link *pcie; /* the chip's PCIe links.* group, or NULL */
	double eff;                   /* model.link_efficiency */
	int in_switch_reduction;      /* system.in_switch_reduction */
};

struct topo_ops {
	const char *name;     /* system.topology, as a config spells it: "full_mesh" */
	const char *describe; /* for reports (platform_describe): "full mesh" */
	const char *inside;   /* what a node has inside, for coll_plan's refusal: "a switch", "no switch" */
	/* 1: each device has one port (t->port_bw, per device) into a switch or
	   host bridge shared by the node, a route goes up one port and down
	   another; 0: direct links to some peers (t->pair_bw each, per pair),
	   a route follows them (via other devices where two are not linked). */
	int port;
	int max_dpn;       /* devices per node it is modelled for; 0 = any (direct links: at most 64, the routes) */
	int all_pairs;     /* every two devices of a node share a direct link (full mesh) */
	int private_links; /* no two devices share a link: ranks may fold (replay_fold.c) */
	int switch_reduce; /* its switch can reduce in the network (NVLS) where the config says so */
	int one_shot;      /* one-shot kernels reach every peer in one hop (oneshot.c) */
	/* Fills t's intra-node fields (port_bw or pair_bw, intra_hw, link_name,
	   nvls) from the config; t->ops is this topology on entry and may be
	   handed to another (a switch without system.link is a PCIe node). */
	void (*setup)(struct topo *t, const struct topo_in *in);
	/* Whether local devices la != lb (0 .. t->dpn - 1) share a direct
	   link; NULL: none do (port topologies). */
	int (*linked)(const struct topo *t, int la, int lb);
	/* The bandwidth a member reaches inside the node, per direction, with
	   deg direct links to other members (port topologies: its port). */
	double (*intra_bw)(const struct topo *t, int deg);
};

/* The topology a config names, or NULL. */
const struct topo_ops *topo_find(const char *name);
/* The table, in the order of arch/params.c's list: 0 .. topo_count() - 1. */
int topo_count(void);
const struct topo_ops *topo_at(int i);

#endif
