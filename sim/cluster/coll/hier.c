/*
 * hier.c -- hierarchical all-reduce: reduce-scatter inside each node (a
 * ring over its k members), an all-reduce of each member's 1/k share across
 * nodes (one ring per rail), then all-gather inside the node. Three phases
 * on the engine. All-reduce (and barrier) on two nodes or more with two
 * members or more per node.
 */
#include "coll_int.h"

static int hier_cost(const struct coll_args *a, double *lat, double *bw)
{
	const struct topo *t = a->t;
	double S = a->S;
	int n = a->s.n, m = a->s.m, k = a->s.k;
	if (m < 2 || k < 2)
		return 0;
	double bi = coll_intra_bw(t, a->s.deg) * a->pf, bn = coll_inter_bw(t, 1) * a->pf;
	double v1 = (double)(k - 1) / k * S, v2 = 2.0 * (m - 1) / m * S / k;
	*lat = a->base + 2 * (k - 1) * coll_intra_hop(a, 0) + 2 * (m - 1) * coll_hop(t, HW_NET, a->p, 0) +
	       coll_fill(t, S, n, 2 * (k - 1), bi) + coll_fill(t, S / k, m, 2 * (m - 1), bn);
	*bw = 2 * v1 / bi + v2 / bn;
	return 1;
}

static int hier_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	int m = a->s.m, k = starts[1] - starts[0], rc = 0;
	double S = a->S, pf = a->pf;
	double v1 = (double)(k - 1) / k * S / pf, v2 = 2.0 * (m - 1) / m * S / k / pf;
	for (int b = 0; b < m && !rc; b++) /* intra reduce-scatter, then all-gather */
		rc = coll_ring_flows(a->t, mem + starts[b], (int[]){0, starts[b + 1] - starts[b]}, 1, v1, &f[0]);
	for (int j = 0; j < k && !rc; j++) /* one ring per rail across nodes */
		for (int b = 0; b < m && !rc; b++)
			if (starts[b] + j < starts[b + 1] && starts[(b + 1) % m] + j < starts[(b + 1) % m + 1])
				rc = coll_fl_add(&f[1], mem[starts[b] + j], mem[starts[(b + 1) % m] + j], v2);
	for (int i = 0; i < f[0].n && !rc; i++)
		rc = coll_fl_add(&f[2], f[0].v[i].src, f[0].v[i].dst, f[0].v[i].bytes);
	return rc ? -1 : 3;
}

const struct coll_algo_ops coll_hier = {
    .name = "hier",
    .summary = "reduce-scatter in each node, all-reduce per rail across nodes, all-gather (all-reduce on two nodes "
               "or more)",
    .colls = COLL_BIT(CO_ALLREDUCE) | COLL_BIT(CO_BARRIER),
    .protos = COLL_BIT(PR_LL) | COLL_BIT(PR_LL128) | COLL_BIT(PR_SIMPLE),
    .base_us = {6.6, 14.0, 8.4},
    .cost = hier_cost,
    .flows = hier_flows,
};
