/*
 * direct.c -- direct: every member sends its share to every other member
 * at once, in one step (all-to-all, as MoE dispatch does) or two (one-shot
 * reduce-scatter then all-gather: all-reduce, all-gather, reduce-scatter on
 * a full mesh, where every peer is one link away). Not LL128.
 */
#include "coll_int.h"

/* Bytes a member sends to each other member. */
static double direct_share(enum tr_coll c, double S, int n)
{
	return c == CO_ALLTOALL ? S / n : c == CO_ALLREDUCE || c == CO_BARRIER ? 2 * S / n : S / n;
}

static int direct_cost(const struct coll_args *a, double *lat, double *bw)
{
	const struct topo *t = a->t;
	enum tr_coll c = a->c;
	int n = a->s.n, m = a->s.m, k = a->s.k;
	double share = direct_share(c, a->S, n), pf = a->pf;
	if (c != CO_ALLTOALL && (!t->ops->all_pairs || m > 1))
		return 0; /* one-shot reductions need a direct link to every peer */
	double ti = 0, tn = 0;
	if (k > 1)
		ti =
		    t->ops->all_pairs ? share / (t->pair_bw * pf) : (k - 1) * share / (coll_intra_bw(t, a->s.deg) * pf);
	/* A member of the fullest node sends (n - k) shares over its NIC, its
	   node k (n - k) over the uplink (the most of any node, as x (n - x) is
	   at most k (n - k) for every node's x members); a member of the
	   emptiest node sends n - kmin over its NIC. */
	if (m > 1) {
		tn = (n - k) * share / (coll_inter_bw(t, k) / k * pf);
		if (c == CO_ALLTOALL && (n - a->s.kmin) * share / (t->nic_bw * pf) > tn)
			tn = (n - a->s.kmin) * share / (t->nic_bw * pf);
	}
	int steps = c == CO_ALLTOALL ? 1 : 2;
	*lat = a->base + steps * coll_hop(t, m > 1 ? HW_NET : t->intra_hw, a->p, 0) +
	       coll_fill(t, a->S, n, steps, (t->ops->all_pairs ? t->pair_bw : coll_intra_bw(t, a->s.deg)) * pf);
	*bw = ti > tn ? ti : tn;
	return 1;
}

/*
 * Flows. Inside a node every member sends to every other directly. Between
 * two nodes of k members each, an all-to-all moves one flow per rail: member
 * i of node A sends member i of node B the k shares A's member i has for all
 * of B, as NCCL's PXN routes it (the data meets the rail of its destination
 * inside the source node, over NVLink, so it crosses the network once on one
 * rail). Every NIC and node uplink carries the same bytes as with k x k flows
 * (k shares out of each member, k in), so the phase alone takes the same time
 * (tests/test_coll.c checks it through SimGrid), with k times fewer engine
 * activities; under contention the merged flow takes one max-min share where
 * k flows would take k. Nodes holding different numbers of members keep one
 * flow per pair of members. Likewise inside a node whose devices each have
 * one port into a switch or host bridge (and no other path), member i sends
 * its k - 1 shares as one flow to member i + 1: every port carries the same
 * bytes each way as with a flow per pair.
 */
static int direct_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	int n = a->s.n, m = a->s.m;
	double share = direct_share(a->c, a->S, n) / a->pf;
	for (int A = 0; A < m; A++)
		for (int B = 0; B < m; B++) {
			int a0 = starts[A], ka = starts[A + 1] - a0, b0 = starts[B], kb = starts[B + 1] - b0;
			if (A == B && ka > 2 && a->c == CO_ALLTOALL && a->t->ops->port) {
				for (int i = 0; i < ka; i++)
					if (coll_fl_add(&f[0], mem[a0 + i], mem[a0 + (i + 1) % ka], (ka - 1) * share))
						return -1;
				continue;
			}
			if (A != B && ka == kb && a->c == CO_ALLTOALL) {
				for (int i = 0; i < ka; i++)
					if (coll_fl_add(&f[0], mem[a0 + i], mem[b0 + i], kb * share))
						return -1;
				continue;
			}
			for (int i = a0; i < a0 + ka; i++)
				for (int j = b0; j < b0 + kb; j++)
					if (coll_fl_add(&f[0], mem[i], mem[j], share))
						return -1;
		}
	return 1;
}

const struct coll_algo_ops coll_direct = {
    .name = "direct",
    .summary = "every member to every other at once: all-to-all anywhere, one-shot reductions on a full mesh",
    .colls = COLL_ALL & ~(COLL_BIT(CO_BROADCAST) | COLL_BIT(CO_REDUCE) | COLL_BIT(CO_SHIFT)),
    .protos = COLL_BIT(PR_LL) | COLL_BIT(PR_SIMPLE),
    .base_us = {6.6, 14.0, 8.4},
    .cost = direct_cost,
    .flows = direct_flows,
};
