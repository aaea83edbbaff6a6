/*
 * tree.c -- double binary tree across nodes (NCCL's tree): a chain inside
 * each node, then a binary tree of depth ceil(log2(nodes)) between them, up
 * (reduce) and down (broadcast), pipelined; two trees share the bytes.
 * All-reduce (and barrier) on two nodes or more.
 *
 * Bytes: each member sends 2S over its chain (S up, S down). Across nodes
 * each tree carries S/2: a node interior to one tree (a parent and two
 * children) and a leaf of the other sends 2S over its NICs; on two nodes
 * each node is the root of one tree and the leaf of the other and sends S,
 * half a ring's 2(n-1)/n S. That is why NCCL's tuning model takes a tree's
 * bandwidth on two nodes from the intra-node graph (src/graph/tuning.cc:
 * `nNodes <= 2 ? bwIntra : bwInter`). Chain and network are pipelined: the
 * slower one sets the time.
 */
#include "coll_int.h"

#include <math.h>

/* Tree bandwidth relative to the ring's (NCCL's model: 0.9). */
#define TREE_BW 0.9

/* NCCL's own correction of the tree's bandwidth for medium messages
   (src/graph/tuning.cc, treeCorrectionFactor: "trees are not perfectly
   sticking to the model for medium sizes"), by protocol and log2(bytes /
   64), 64 B to 256 MiB; 1 beyond. */
static const float tree_correction[PR_COUNT][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

/* The tree's share of the link bandwidth: protocol payload, NCCL's 0.9 and
   its medium-size correction. */
static double tree_eff(const struct coll_args *a)
{
	int lg = -1;
	for (double b = a->S / 64; b >= 1 && lg < 23; b /= 2)
		lg++;
	double corr = lg >= 0 && lg < 23 ? tree_correction[a->p][lg] : 1.0;
	return a->pf * TREE_BW * corr;
}

/* Bytes a member sends over its chain and a node over its NICs (see above). */
static void tree_bytes(const struct coll_args *a, double *v_in, double *v_net)
{
	*v_in = a->s.k > 1 ? 2.0 * a->S : 0;
	*v_net = (a->s.m == 2 ? 1.0 : 2.0) * a->S;
}

static int tree_cost(const struct coll_args *a, double *lat, double *bw)
{
	const struct topo *t = a->t;
	int n = a->s.n, m = a->s.m, k = a->s.k;
	if (m < 2)
		return 0;
	double v_in, v_net, eff = tree_eff(a);
	tree_bytes(a, &v_in, &v_net);
	double t_in = v_in > 0 ? v_in / (coll_intra_bw(t, a->s.deg) * eff) : 0;
	double t_net = v_net / (coll_inter_bw(t, k) * eff);
	*bw = t_in > t_net ? t_in : t_net;
	int lg = (int)ceil(log2((double)m));
	*lat = a->base + 2 * ((k - 1) * coll_intra_hop(a, 1) + lg * coll_hop(t, HW_NET, a->p, 1)) +
	       coll_fill(t, a->S, n, 2 * (k - 1 + lg), 2.0 * a->S / *bw);
	return 1;
}

/* A chain in each node and a ring of nodes with the tree's bytes (its
   bandwidth share folded into them): each link carries what the tree puts
   on it, so the phase alone takes the cost's bandwidth term. */
static int tree_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	double v_in, v_net, eff = tree_eff(a);
	tree_bytes(a, &v_in, &v_net);
	if (coll_chain_flows(a->t, mem, starts, a->s.m, v_in / eff, v_net / eff, &f[0]))
		return -1;
	return 1;
}

const struct coll_algo_ops coll_tree = {
    .name = "tree",
    .summary = "double binary tree across nodes (all-reduce on two nodes or more)",
    .colls = COLL_BIT(CO_ALLREDUCE) | COLL_BIT(CO_BARRIER),
    .protos = COLL_BIT(PR_LL) | COLL_BIT(PR_LL128) | COLL_BIT(PR_SIMPLE),
    .base_us = {6.8, 14.0, 8.4},
    .cost = tree_cost,
    .flows = tree_flows,
};
