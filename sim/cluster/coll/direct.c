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
	if (m > 1)
		tn = (n - k) * share / (coll_inter_bw(t, k) / k * pf);
	int steps = c == CO_ALLTOALL ? 1 : 2;
	*lat = a->base + steps * coll_hop(t, m > 1 ? HW_NET : t->intra_hw, a->p, 0) +
	       coll_fill(t, a->S, n, steps, (t->ops->all_pairs ? t->pair_bw : coll_intra_bw(t, a->s.deg)) * pf);
	*bw = ti > tn ? ti : tn;
	return 1;
}

static int direct_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	(void)starts;
	int n = a->s.n;
	double share = direct_share(a->c, a->S, n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (coll_fl_add(&f[0], mem[i], mem[j], share / a->pf))
				return -1;
	return 1;
}

const struct coll_algo_ops coll_direct = {
    .name = "direct",
    .summary = "every member to every other at once: all-to-all anywhere, one-shot reductions on a full mesh",
    .colls = COLL_ALL & ~(COLL_BIT(CO_BROADCAST) | COLL_BIT(CO_REDUCE)),
    .protos = COLL_BIT(PR_LL) | COLL_BIT(PR_SIMPLE),
    .base_us = {6.6, 14.0, 8.4},
    .cost = direct_cost,
    .flows = direct_flows,
};
