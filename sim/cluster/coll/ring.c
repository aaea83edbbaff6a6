/*
 * ring.c -- ring: every member sends to the next one, 2(n-1) steps for an
 * all-reduce (reduce-scatter then all-gather), n-1 for the others; broadcast
 * and reduce are pipelined along the ring; a shift is one step of it, each
 * member's buffer to the next member (Transformer Engine's ring exchange).
 * Inside a node the ring is a chain
 * through the switch, or the bytes spread over every direct link of a mesh,
 * hybrid cube mesh or ring (as RCCL's multiple rings do); across nodes one
 * rail per member. NCCL's default for large messages.
 */
#include "coll_int.h"

#include <math.h>

static int ring_steps(enum tr_coll c, int n)
{
	switch (c) {
	case CO_ALLREDUCE:
	case CO_BARRIER: return 2 * (n - 1);
	default: return n - 1;
	}
}

/* Bytes each member sends (the bus bytes). */
static double ring_volume(enum tr_coll c, double S, int n)
{
	switch (c) {
	case CO_ALLREDUCE:
	case CO_BARRIER: return 2.0 * (n - 1) / n * S;
	case CO_ALLGATHER:
	case CO_REDUCESCATTER: return (double)(n - 1) / n * S;
	default: /* broadcast, reduce: pipelined along the ring; shift: one step of it */ return S;
	}
}

/* A shift: each member's buffer straight to the next member, through the
   switch (a port each way) or over the direct link of a mesh, and from a
   node's last member to the next node's first over one rail: the slowest of
   those hops. */
static double shift_bw(const struct coll_args *a)
{
	const struct topo *t = a->t;
	double b = a->s.k > 1 ? (t->ops->port ? t->port_bw : t->pair_bw) : INFINITY;
	if (a->s.m > 1 && coll_inter_bw(t, 1) < b)
		b = coll_inter_bw(t, 1);
	return b * a->pf;
}

/* Each step crosses the slowest hop; the steps that cross node boundaries
   pay the network's hop latency. */
static int ring_cost(const struct coll_args *a, double *lat, double *bw)
{
	const struct topo *t = a->t;
	enum tr_coll c = a->c;
	if (c == CO_SHIFT) {
		double b = shift_bw(a);
		*lat = a->base + coll_hop(t, a->s.m > 1 ? HW_NET : t->intra_hw, a->p, 0) + coll_fill(t, a->S, 1, 1, b);
		*bw = a->S / b;
		return 1;
	}
	int n = a->s.n, m = a->s.m;
	int steps = ring_steps(c, n);
	int inter = m > 1 ? (c == CO_ALLREDUCE || c == CO_BARRIER ? 2 * (m - 1) : m - 1) : 0;
	double b = coll_ring_bw(t, a->s) * a->pf;
	double l = a->base + (steps - inter) * coll_intra_hop(a, 0) + inter * coll_hop(t, HW_NET, a->p, 0);
	/* NCCL's "plateau effect of ring": a Simple all-reduce across nodes of nRanks/16 x 64 KiB or more takes
	   1.9 times its latency (tuning.cc, ncclTopoGetAlgoTime, at the commit common.c's hop_us cites) */
	if (m > 1 && a->p == PR_SIMPLE && c == CO_ALLREDUCE && a->S >= n / 16.0 * 65536)
		l *= 1.9;
	*lat = l + coll_fill(t, a->S, n, steps, b);
	*bw = ring_volume(c, a->S, n) / b;
	return 1;
}

static int ring_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	if (a->c == CO_SHIFT) {
		for (int i = 0; i < a->s.n; i++)
			if (coll_fl_add(&f[0], mem[i], mem[(i + 1) % a->s.n], a->S / a->pf))
				return -1;
		return 1;
	}
	if (coll_ring_flows(a->t, mem, starts, a->s.m, ring_volume(a->c, a->S, a->s.n) / a->pf, &f[0]))
		return -1;
	return 1;
}

const struct coll_algo_ops coll_ring = {
    .name = "ring",
    .summary = "a ring through every member: a chain through the switch or over every direct link in a node, one "
               "rail per member across nodes",
    .colls = COLL_ALL & ~COLL_BIT(CO_ALLTOALL),
    .protos = COLL_BIT(PR_LL) | COLL_BIT(PR_LL128) | COLL_BIT(PR_SIMPLE),
    .base_us = {6.6, 14.0, 8.4},
    .cost = ring_cost,
    .flows = ring_flows,
};
