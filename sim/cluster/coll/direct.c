/*
 * direct.c -- direct: every member sends its share to every other member
 * at once, in one step (all-to-all, as MoE dispatch does) or two (one-shot
 * reduce-scatter then all-gather: all-reduce, all-gather, reduce-scatter on
 * a full mesh, where every peer is one link away). Not LL128.
 *
 * An all-to-all with routing (coll topk= experts=, struct tr_route) is an
 * MoE token dispatch or combine as DeepEP's and HybridEP's kernels run it
 * (Megatron-Core's flex dispatcher): a token moves once to each member that
 * holds one of its experts, and between nodes once to each node that holds
 * one, to the member of its sender's rail there, which forwards it over the
 * node's links to the members that need it (DeepEP's internode dispatch:
 * RDMA to the same local rank, then NVLink). The bytes follow from the
 * chance that a token hits a member or a node under uniform routing (the
 * force-balanced routing of the published benchmark runs).
 */
#include "coll_int.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

/* log C(n, k); -INFINITY outside 0 <= k <= n. Exact products up to n = 1000 (C(1000, 500) < 1e300), lgamma
   above, where the products would overflow. */
static double lchoose(int n, int k)
{
	if (k < 0 || k > n)
		return -INFINITY;
	if (n > 1000)
		return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
	k = k < n - k ? k : n - k; /* C(n, k) = C(n, n - k): the shorter product */
	double r = 1;
	for (int i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return log(r);
}

/* The chance that none of m given experts is among K drawn without
   replacement from N: C(N - m, K) / C(N, K). */
static double none_drawn(double N, double m, int K)
{
	double p = 1;
	for (int i = 0; i < K && p > 0; i++)
		p = N - m - i > 0 ? p * (N - m - i) / (N - i) : 0;
	return p;
}

/* The chance that a token's topk experts include one of experts [lo, hi):
   its group_topk groups drawn uniformly from the groups (contiguous, of
   experts / groups each), then its topk experts uniformly among theirs.
   The range covers f whole groups and at most two parts of others (c[]);
   the sum runs over which parts and how many whole groups were drawn. */
static double route_hit(const struct tr_route *r, long lo, long hi)
{
	int G = r->groups, g = r->group_topk, K = r->topk;
	long gs = r->experts / G, g0 = lo / gs, g1 = (hi - 1) / gs;
	int f = 0, np = 0;
	long c[2];
	for (long q = g0; q <= g1; q++) {
		long a = q * gs > lo ? q * gs : lo, b = (q + 1) * gs < hi ? (q + 1) * gs : hi;
		if (b - a == gs)
			f++;
		else
			c[np++] = b - a;
	}
	assert(np <= 2 && lo < hi);
	double miss = 0, all = lchoose(G, g);
	for (int A = 0; A < 1 << np; A++) {
		int na = 0;
		long m = 0;
		for (int j = 0; j < np; j++)
			if (A >> j & 1)
				na++, m += c[j];
		for (int i = 0; i <= f; i++)
			miss += exp(lchoose(f, i) + lchoose(G - f - np, g - i - na) - all) *
			        none_drawn((double)g * gs, (double)(m + i * gs), K);
	}
	return 1 - miss;
}

/* Member j's chance of a token (n members), and that of the members
   [lo, hi) together (a node's). */
static double member_hit(const struct tr_route *r, int n, int j)
{
	return route_hit(r, (long)j * (r->experts / n), (long)(j + 1) * (r->experts / n));
}

static double span_hit(const struct tr_route *r, int n, int lo, int hi)
{
	return route_hit(r, (long)lo * (r->experts / n), (long)hi * (r->experts / n));
}

/* A routed all-to-all on an idle platform: inside a node each member sends
   each other member the tokens it needs, its own and those it forwards for
   the other m - 1 nodes' rails, (S / topk) m P(member); across nodes each
   member sends the member of its rail in each other node (S / topk) P(node),
   which receives that from each member of the other nodes that maps to it
   (one of each with nodes of equal size). Nodes taken as blocks of k members
   in member order, as group_shape counts them. */
static void routed_cost(const struct coll_args *a, double *ti, double *tn)
{
	const struct topo *t = a->t;
	const struct tr_route *r = a->route;
	int n = a->s.n, m = a->s.m, k = a->s.k;
	double tok = a->S / r->topk, pm = 0, sum = 0, least = 1, down = 0;
	for (int j = 0; j < n; j++) {
		double p = member_hit(r, n, j);
		pm = p > pm ? p : pm;
	}
	*ti = *tn = 0;
	if (k > 1)
		*ti = t->ops->all_pairs ? tok * m * pm / (t->pair_bw * a->pf)
		                        : (k - 1) * tok * m * pm / (coll_intra_bw(t, a->s.deg) * a->pf);
	if (m < 2)
		return;
	for (int b = 0; b < m; b++) {
		int lo = b * k, kb = n - lo < k ? n - lo : k;
		double p = span_hit(r, n, lo, lo + kb), from = 0;
		for (int q = 0; q < m; q++) /* flows into one member of node b: ceil(kq / kb) from each other node */
			if (q != b)
				from += (double)(((n - q * k < k ? n - q * k : k) + kb - 1) / kb);
		sum += p;
		least = p < least ? p : least;
		down = from * p > down ? from * p : down;
	}
	/* a member sends to every node but its own: at most all but the least likely */
	double up = sum - least;
	*tn = tok * (up > down ? up : down) / (coll_inter_bw(t, k) / k * a->pf);
}

/* The flows of a routed all-to-all: inside a node member i's tokens for its
   k - 1 peers (and those it forwards) as one flow to member i + 1 through a
   port, or a flow per peer; across nodes one flow per rail and node. The
   chances are taken once per member and node (route_hit costs the groups a
   range covers times topk: all of them together the groups plus the members,
   times topk). */
static int routed_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl *f)
{
	const struct tr_route *r = a->route;
	int n = a->s.n, m = a->s.m, rc = 0;
	double tok = a->S / r->topk / a->pf;
	double *pm = malloc(((size_t)n + (size_t)m) * sizeof *pm), *pn = pm + n;
	if (!pm)
		return -1;
	for (int j = 0; j < n; j++)
		pm[j] = member_hit(r, n, j);
	for (int B = 0; B < m; B++)
		pn[B] = span_hit(r, n, starts[B], starts[B + 1]);
	for (int A = 0; A < m && !rc; A++) {
		int a0 = starts[A], ka = starts[A + 1] - a0;
		for (int i = a0; i < a0 + ka && !rc; i++) {
			double sum = 0;
			for (int j = a0; j < a0 + ka && !rc; j++)
				if (j != i) {
					sum += tok * m * pm[j];
					if (!a->t->ops->port || ka <= 2)
						rc = coll_fl_add(f, mem[i], mem[j], tok * m * pm[j]);
				}
			if (!rc && a->t->ops->port && ka > 2)
				rc = coll_fl_add(f, mem[i], mem[a0 + (i - a0 + 1) % ka], sum);
		}
		for (int B = 0; B < m && !rc; B++) {
			int b0 = starts[B], kb = starts[B + 1] - b0;
			for (int i = 0; i < ka && B != A && !rc; i++)
				rc = coll_fl_add(f, mem[a0 + i], mem[b0 + i % kb], tok * pn[B]);
		}
	}
	free(pm);
	return rc ? -1 : 1;
}

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
	if (a->route)
		routed_cost(a, &ti, &tn);
	else if (k > 1)
		ti =
		    t->ops->all_pairs ? share / (t->pair_bw * pf) : (k - 1) * share / (coll_intra_bw(t, a->s.deg) * pf);
	/* A member of the fullest node sends (n - k) shares over its NIC, its
	   node k (n - k) over the uplink (the most of any node, as x (n - x) is
	   at most k (n - k) for every node's x members); a member of the
	   emptiest node sends n - kmin over its NIC. */
	if (m > 1 && !a->route) {
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
	if (a->route)
		return routed_flows(a, mem, starts, &f[0]);
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
