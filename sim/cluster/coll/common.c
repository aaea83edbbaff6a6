/*
 * common.c -- what the collective algorithms share (sim/cluster/coll_int.h):
 * the bandwidth a group reaches (inside a node: its topology's ops), NCCL's per-step hop
 * latencies, the pipeline fill, growing flow lists, and a ring's flows. A
 * leaf: the algorithms (the files of sim/cluster/coll/) and coll.c call it, it calls
 * neither, so the table in coll.c, the algorithms and these pieces form no
 * circle.
 */
#include "coll_int.h"

#include <math.h>
#include <stdlib.h>

/* Per-step hop latencies in microseconds, from NCCL's tuning model
   (src/graph/tuning.cc, NVIDIA/nccl @01afd20a), by link class (ring steps;
   tree steps use tree_hop_us). Launch latencies are each algorithm's
   base_us. */
static const double hop_us[HW_COUNT][PR_COUNT] = {
    [HW_NVLINK] = {0.47, 1.9, 3.4}, [HW_PCI] = {1.0, 2.5, 5.7}, [HW_NET] = {2.7, 4.0, 9.6}};
static const double tree_hop_us[HW_COUNT][PR_COUNT] = {
    [HW_NVLINK] = {0.52, 1.2, 4.0}, [HW_PCI] = {1.0, 1.9, 5.7}, [HW_NET] = {5.0, 8.5, 14.0}};

double coll_intra_bw(const struct topo *t, int deg)
{
	return t->ops->intra_bw(t, deg);
}

double coll_inter_bw(const struct topo *t, int k)
{
	double b = t->nic_bw * k; /* one rail per member of a node */
	if (t->uplink_bw > 0 && t->uplink_bw < b)
		b = t->uplink_bw;
	return b;
}

double coll_ring_bw(const struct topo *t, struct shape s)
{
	double b = s.k > 1 ? coll_intra_bw(t, s.deg) : INFINITY;
	if (s.m > 1) {
		double e = coll_inter_bw(t, s.k);
		if (e < b)
			b = e;
	}
	return b;
}

/* A step's latency over link class h; a step that crosses the network also pays the latency the network plugin
   reports (system.nic_latency), twice with Simple (NCCL's tuning.cc: interLat = hwLat[NET] + latencyInter, and
   once more for Simple's flush). */
double coll_hop(const struct topo *t, enum hw_class h, enum coll_proto p, int tree)
{
	double plugin_s = h == HW_NET ? t->net_plugin_s * (p == PR_SIMPLE ? 2 : 1) : 0;
	return (tree ? tree_hop_us : hop_us)[h][p] * 1e-6 * t->lat_scale + plugin_s;
}

/* A step inside a node of a group that spans nodes takes 1.8 times its latency with the LL protocol (NCCL's tuning
   model, the commit hop_us cites: `if (nNodes > 1 && p == LL) intraLat *= 1.8`). NCCL's model of today
   (src/tuning/ring.cc) has instead a floor under a multi-node ring's every step, the proxy's network overhead (1 us
   a step, 3 with Simple; twice that on AMD hosts), and a plateau of 1.4 rather than 1.9 on sm80 and later (ring.c):
   moving the whole table to one current version is left to do. */
double coll_intra_hop(const struct coll_args *a, int tree)
{
	double h = coll_hop(a->t, a->t->intra_hw, a->p, tree);
	return a->s.m > 1 && a->p == PR_LL ? 1.8 * h : h;
}

double coll_fill(const struct topo *t, double S, int n, int steps, double bw)
{
	double chunk = S / n < t->chunk ? S / n : t->chunk;
	return steps * chunk / bw;
}

int coll_fl_add(struct fl *f, int src, int dst, double bytes)
{
	if (src == dst || bytes <= 0)
		return 0;
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 64;
		struct flow *v = realloc(f->v, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = (struct flow){src, dst, bytes};
	return 0;
}

/* V bytes from each member spread over its direct links to the other
   members of its node (rings over every link of a mesh, cube or ring). */
static int spread_intra(const struct topo *t, const int *mem, int lo, int hi, double V, struct fl *f)
{
	for (int i = lo; i < hi; i++) {
		int deg = 0;
		for (int j = lo; j < hi; j++)
			deg += j != i && topo_linked(t, mem[i], mem[j]);
		for (int j = lo; j < hi && deg; j++)
			if (j != i && topo_linked(t, mem[i], mem[j]) && coll_fl_add(f, mem[i], mem[j], V / deg))
				return -1;
	}
	return 0;
}

/* A ring moving V bytes per member: a chain inside each node through its
   switch (or V spread over the direct links of a mesh, cube or ring), and
   one rail per member across node boundaries. */
int coll_ring_flows(const struct topo *t, const int *mem, const int *starts, int m, double V, struct fl *f)
{
	return coll_chain_flows(t, mem, starts, m, V, V, f);
}

int coll_chain_flows(const struct topo *t, const int *mem, const int *starts, int m, double V, double Vnet,
                     struct fl *f)
{
	int direct = !t->ops->port;
	for (int b = 0; b < m; b++) {
		int lo = starts[b], hi = starts[b + 1];
		if (direct) {
			if (spread_intra(t, mem, lo, hi, V, f))
				return -1;
		} else {
			for (int i = lo; i + 1 < hi; i++)
				if (coll_fl_add(f, mem[i], mem[i + 1], V))
					return -1;
			if (m == 1 && coll_fl_add(f, mem[hi - 1], mem[lo], V))
				return -1;
		}
		if (m == 1)
			break;
		int nb = (b + 1) % m, k = hi - lo, k2 = starts[nb + 1] - starts[nb];
		int rails = k < k2 ? k : k2;
		for (int j = 0; j < rails; j++)
			if (coll_fl_add(f, mem[lo + j], mem[starts[nb] + j], Vnet / rails))
				return -1;
	}
	return 0;
}
