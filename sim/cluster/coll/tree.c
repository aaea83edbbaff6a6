/*
 * tree.c -- double binary tree across nodes (NCCL's tree): a chain inside
 * each node, then a binary tree of depth ceil(log2(nodes)) between them, up
 * (reduce) and down (broadcast); two trees share the bytes, so each member
 * moves 2S at the ring's hop bandwidth x TREE_BW. All-reduce (and barrier)
 * on two nodes or more.
 */
#include "coll_int.h"

#include <math.h>

/* Tree bandwidth relative to the ring's (NCCL's model: 0.9). */
#define TREE_BW 0.9

static int tree_cost(const struct coll_args *a, double *lat, double *bw)
{
	const struct topo *t = a->t;
	int n = a->s.n, m = a->s.m, k = a->s.k;
	if (m < 2)
		return 0;
	double b = coll_ring_bw(t, a->s) * a->pf * TREE_BW;
	int lg = (int)ceil(log2((double)m));
	*lat = a->base + 2 * ((k - 1) * coll_hop(t, t->intra_hw, a->p, 1) + lg * coll_hop(t, HW_NET, a->p, 1)) +
	       coll_fill(t, a->S, n, 2 * (k - 1 + lg), b);
	*bw = 2.0 * a->S / b;
	return 1;
}

/* Its links carry what a ring's would, 2S per member (the tree's bandwidth
   share folded into the bytes). */
static int tree_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	if (coll_ring_flows(a->t, mem, starts, a->s.m, 2.0 * a->S / (a->pf * TREE_BW), &f[0]))
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
