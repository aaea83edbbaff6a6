/*
 * nvls.c -- in-switch reduction (NVLink SHARP, NCCL's NVLS): each member
 * sends its buffer into the switch, which reduces and multicasts the result,
 * at the library's efficiency for the GPU generation of the port's usable
 * bandwidth (system.nvls_efficiency x (nvls_channels - 1) / nvls_channels,
 * NCCL's src/tuning/nvls.cc; sim/cluster/platform.c). All-reduce inside one
 * node whose switch reduces (system.in_switch_reduction), Simple protocol
 * only.
 */
#include "coll_int.h"

static int nvls_cost(const struct coll_args *a, double *lat, double *bw)
{
	const struct topo *t = a->t;
	int n = a->s.n;
	if (!t->nvls || !t->ops->switch_reduce || a->s.m > 1)
		return 0;
	double b = t->port_bw * t->nvls_eff;
	/* the buffer crosses the switch in n-1 chunks each way (reduce-scatter, all-gather) */
	*lat = a->base + 2 * coll_hop(t, t->intra_hw, a->p, 0) + coll_fill(t, a->S, n, n - 1, b);
	*bw = a->S / b;
	return 1;
}

/* On the engine: every member sends S/(n-1) to every other through its
   port, which takes S / port bandwidth; the reduction's efficiency is folded
   into the bytes. */
static int nvls_flows(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES])
{
	double each = a->S / (a->s.n - 1) / a->t->nvls_eff;
	for (int b = 0; b < a->s.m; b++)
		for (int i = starts[b]; i < starts[b + 1]; i++)
			for (int j = starts[b]; j < starts[b + 1]; j++)
				if (i != j && coll_fl_add(&f[0], mem[i], mem[j], each))
					return -1;
	return 1;
}

const struct coll_algo_ops coll_nvls = {
    .name = "nvls",
    .summary = "in-switch reduction (NVLink SHARP): all-reduce inside a node whose switch reduces",
    .colls = COLL_BIT(CO_ALLREDUCE) | COLL_BIT(CO_BARRIER),
    .protos = COLL_BIT(PR_SIMPLE),
    .base_us = {0, 0, 25.0},
    .cost = nvls_cost,
    .flows = nvls_flows,
};
