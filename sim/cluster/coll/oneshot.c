/*
 * oneshot.c -- one-shot all-reduce: every member sends its whole buffer to
 * every other member at once and each sums what it receives, in one step
 * (TensorRT-LLM's custom all-reduce, AllReduceStrategy.ONESHOT, for small
 * messages inside a node). It moves n-1 buffers per member where a ring
 * moves about two, so it pays only where latency rules. One node whose
 * devices reach each other directly: through a switch (a member's port
 * carries (n-1) x S each way) or a full mesh (each pair link carries S).
 *
 * Only when a trace names it (algo=oneshot): NCCL's tuner, which algo=auto
 * follows, has no such algorithm. Launch latency: NCCL's ring launch, the
 * nearest figure of the model (TensorRT-LLM's kernel starts sooner).
 */
#include "coll_int.h"

static int oneshot_cost(const struct coll_args *a, double *lat, double *bw)
{
	const struct topo *t = a->t;
	int n = a->s.n;
	if (a->s.m > 1 || !t->ops->one_shot)
		return 0;
	/* the bandwidth one member's buffer gets towards each peer */
	double b = (t->ops->port ? t->port_bw / (n - 1) : t->pair_bw) * a->pf;
	*lat = a->base + coll_hop(t, t->intra_hw, a->p, 0) + coll_fill(t, a->S, n, 1, b);
	*bw = a->S / b;
	return 1;
}

static int oneshot_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	(void)starts;
	for (int i = 0; i < a->s.n; i++)
		for (int j = 0; j < a->s.n; j++)
			if (coll_fl_add(&f[0], mem[i], mem[j], a->S / a->pf)) /* skips i == j */
				return -1;
	return 1;
}

const struct coll_algo_ops coll_oneshot = {
    .name = "oneshot",
    .summary = "all-reduce in one step, every buffer to every member (one node, switch or full mesh; by name only)",
    .colls = COLL_BIT(CO_ALLREDUCE),
    .protos = COLL_BIT(PR_SIMPLE),
    .by_name_only = 1,
    .base_us = {6.6, 14.0, 8.4},
    .cost = oneshot_cost,
    .flows = oneshot_flows,
};
