/*
 * coll.c -- collectives: the table of algorithms, the choice of one, and
 * point-to-point (the pieces the algorithms share: coll/common.c).
 *
 * The cost of one (algorithm, protocol) follows the structure of NCCL's own
 * tuning model (NVIDIA/nccl src/graph/tuning.cc): a launch latency per
 * algorithm and protocol, a hop latency per step by link class (NVLink-class,
 * PCIe, network), and a bandwidth term of the bytes each member moves over
 * the slowest hop, discounted by the protocol's payload share (LL carries 8
 * bytes of data per 16-byte line with flags, LL128 120 of 128), with NCCL's
 * refinements across nodes (LL's steps inside a node 1.8 times their
 * latency, the ring's Simple plateau: common.c, ring.c). On top, a
 * pipeline-fill term: every step of a ring moves one chunk before the next
 * step may start, so a collective pays steps x min(bytes per step,
 * model.coll_chunk) / bandwidth once. The latencies are NCCL's published
 * model values; model.coll_latency_scale scales them per chip. Each
 * algorithm's own terms and flows are in its file under sim/cluster/coll/.
 *
 * Invariants: a plan's flows, run alone on an idle platform, take bw_s
 * (tests/test_coll.c checks it through SimGrid for ring, nvls and direct);
 * bus_bytes x n / (2(n-1)) = bytes for allreduce, as nccl-tests counts.
 */
#include "coll_int.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every algorithm, in the order the tuner tries them: on a tie (the same
   latency + bandwidth time) the earlier one wins. Adding one: its file
   under sim/cluster/coll/, a line here, its extern in coll_int.h, its file
   in sim/CMakeLists.txt (docs/adding-a-collective.md). */
static const struct coll_algo_ops *const algos[] = {
    &coll_ring, &coll_tree, &coll_nvls, &coll_hier, &coll_direct, &coll_oneshot,
};
#define NALGOS ((int)(sizeof algos / sizeof algos[0]))

/* Payload share of the link bandwidth per protocol (NCCL's model: LL a
   quarter for reductions, LL128 0.92). */
static const double proto_bw[PR_COUNT] = {0.25, 0.92, 1.0};

/* Across nodes NCCL's model caps the LL protocol's bus bandwidth whatever
   the links (src/graph/tuning.cc, llMaxBws, the row for Intel hosts: 39 GB/s
   on two nodes, 20.4 GB/s on more): its 8-byte flag-and-data stores go
   through the proxy one line at a time. */
static double ll_net_cap(int nodes)
{
	return nodes <= 1 ? INFINITY : nodes == 2 ? 39e9 : 20.4e9;
}

int coll_algo_count(void)
{
	return NALGOS;
}

const char *coll_algo_name(int a)
{
	if (a == COLL_AUTO)
		return "auto";
	return a >= 0 && a < NALGOS ? algos[a]->name : "?";
}

const char *coll_algo_summary(int a)
{
	if (a == COLL_AUTO)
		return "the fastest the group's topology allows, by the cost model";
	return a >= 0 && a < NALGOS ? algos[a]->summary : "?";
}

int coll_algo_find(const char *name)
{
	if (!strcmp(name, "auto"))
		return COLL_AUTO;
	for (int a = 0; a < NALGOS; a++)
		if (!strcmp(name, algos[a]->name))
			return a;
	return COLL_UNKNOWN;
}

int coll_algo_resolve(const struct trace *t, int *map, char *why, size_t whylen)
{
	for (int i = 0; i < tr_nalgos(t); i++) {
		map[i] = coll_algo_find(tr_algo_name(t, i));
		if (map[i] >= 0)
			continue;
		int n = snprintf(why, whylen, "%s:%d: coll: algo=%s is not one of auto", tr_path(t), tr_algo_line(t, i),
		                 tr_algo_name(t, i));
		for (int a = 0; a < NALGOS && n > 0 && (size_t)n < whylen; a++)
			n += snprintf(why + n, whylen - (size_t)n, ", %s", algos[a]->name);
		return -1;
	}
	return 0;
}

const char *coll_proto_name(enum coll_proto p)
{
	static const char *const n[PR_COUNT] = {"LL", "LL128", "Simple"};
	return (unsigned)p < PR_COUNT ? n[p] : "?";
}

double coll_busbw_factor(enum tr_coll c, int n)
{
	if (n <= 1)
		return 1;
	switch (c) {
	case CO_ALLREDUCE: return 2.0 * (n - 1) / n;
	case CO_ALLGATHER:
	case CO_REDUCESCATTER:
	case CO_ALLTOALL: return (double)(n - 1) / n;
	default: return 1;
	}
}

static struct shape group_shape(const struct topo *t, const int *mem, int n)
{
	struct shape s = {n, 0, 0, n, 0};
	int prev = -1, run = 0;
	for (int i = 0; i <= n; i++) {
		int node = i < n ? mem[i] / t->dpn : -1;
		if (node != prev) {
			if (run && run < s.kmin)
				s.kmin = run;
			s.m += i < n;
			prev = node;
			run = 0;
		}
		if (i < n && ++run > s.k)
			s.k = run;
	}
	s.deg = s.k - 1;
	if (t->ops->linked && !t->ops->all_pairs)
		for (int i = 0; i < n; i++) {
			int d = 0;
			for (int j = 0; j < n; j++)
				if (j != i && mem[j] / t->dpn == mem[i] / t->dpn && topo_linked(t, mem[i], mem[j]))
					d++;
			if (d < s.deg)
				s.deg = d;
		}
	return s;
}

/* Whether algorithm al may try protocol p for collective c here. */
static int allowed(const struct coll_algo_ops *al, const struct topo *t, enum tr_coll c, enum coll_proto p)
{
	if (!(al->colls & COLL_BIT(c)) || !(al->protos & COLL_BIT(p)))
		return 0;
	return p != PR_LL128 || t->intra_hw == HW_NVLINK; /* LL128 needs NVLink-class ordering */
}

/* ---- flows ---- */

/* Members grouped by node: starts[i]..starts[i+1] are node i's members. */
static int node_starts(const struct topo *t, const int *mem, int n, int *starts)
{
	int m = 0, prev = -1;
	for (int i = 0; i < n; i++) {
		int node = mem[i] / t->dpn;
		if (node != prev)
			starts[m++] = i;
		prev = node;
	}
	starts[m] = n;
	return m;
}

static int build_flows(const struct coll_algo_ops *al, const struct coll_args *a, const int *mem, struct coll_plan *pl)
{
	int *starts = malloc(((size_t)a->s.n + 1) * sizeof *starts);
	struct fl f[COLL_MAX_PHASES] = {{0}};
	int np = -1;
	if (!starts)
		return -1;
	int m = node_starts(a->t, mem, a->s.n, starts);
	assert(m == a->s.m); /* group_shape counts nodes the same way */
	(void)m;
	np = al->flows(a, mem, starts, f);
	free(starts);
	assert(np < 0 || (np >= 1 && np <= COLL_MAX_PHASES));
	if (np < 0) {
		for (int i = 0; i < COLL_MAX_PHASES; i++)
			free(f[i].v);
		return -1;
	}
	pl->nphases = np;
	for (int i = 0; i < np; i++) {
		pl->flows[i] = f[i].v;
		pl->nflows[i] = f[i].n;
		for (int j = 0; j < f[i].n; j++)
			f[i].v[j].bytes *= a->scale;
	}
	return 0;
}

int coll_plan(const struct topo *t, enum tr_coll c, int algo, double bytes, const struct tr_route *route,
              const int *members, int n, int want_flows, struct coll_plan *p, char *why, size_t whylen)
{
	memset(p, 0, sizeof *p);
	assert(algo == COLL_AUTO || (algo >= 0 && algo < NALGOS));
	if (c == CO_BARRIER)
		bytes = 4; /* a barrier is a one-word all-reduce, as torch.distributed does it */
	p->algo = algo;
	p->bus_bytes = bytes * coll_busbw_factor(c, n);
	if (n <= 1)
		return 0;
	struct coll_args best_args = {0};
	struct coll_args args = {.t = t, .c = c, .S = bytes, .s = group_shape(t, members, n)};
	if (route && route->topk > 0) {
		assert(c == CO_ALLTOALL && route->experts % n == 0); /* the trace parser's checks */
		args.route = route;
	}
	double best = INFINITY;
	for (int a = 0; a < NALGOS; a++) {
		if (algo == COLL_AUTO ? algos[a]->by_name_only : a != algo)
			continue;
		for (int pr = 0; pr < PR_COUNT; pr++) {
			double lat, bw;
			if (!allowed(algos[a], t, c, pr))
				continue;
			args.p = pr;
			args.pf = proto_bw[pr];
			args.base = algos[a]->base_us[pr] * 1e-6 * t->lat_scale;
			if (!algos[a]->cost(&args, &lat, &bw))
				continue;
			args.scale = 1;
			if (pr == PR_LL && bw > 0 && p->bus_bytes / bw > ll_net_cap(args.s.m)) {
				double capped = p->bus_bytes / ll_net_cap(args.s.m);
				args.scale = capped / bw;
				bw = capped;
			}
			if (lat + bw < best) {
				best = lat + bw;
				p->algo = a;
				p->proto = pr;
				p->lat_s = lat;
				p->bw_s = bw;
				best_args = args;
			}
		}
	}
	if (!isfinite(best)) {
		snprintf(why, whylen, "algo=%s cannot run %s on this group (%d ranks on %d node%s, %s inside a node%s)",
		         coll_algo_name(algo), tr_coll_name(c), args.s.n, args.s.m, args.s.m == 1 ? "" : "s",
		         t->ops->inside, t->nvls ? "" : ", no in-switch reduction");
		return -1;
	}
	assert(p->lat_s >= 0 && p->bw_s >= 0);
	if (want_flows && build_flows(algos[p->algo], &best_args, members, p)) {
		snprintf(why, whylen, "out of memory planning %s over %d ranks", tr_coll_name(c), n);
		return -1;
	}
	return 0;
}

void coll_plan_free(struct coll_plan *p)
{
	for (int i = 0; i < COLL_MAX_PHASES; i++) {
		free(p->flows[i]);
		p->flows[i] = NULL;
	}
	p->nphases = 0;
}

/* A transfer between two devices is launched like a ring step. */
double p2p_latency(const struct topo *t, int src, int dst)
{
	enum hw_class h = src / t->dpn == dst / t->dpn ? t->intra_hw : HW_NET;
	return (coll_ring.base_us[PR_SIMPLE] * 1e-6 * t->lat_scale) + coll_hop(t, h, PR_SIMPLE, 0);
}

double p2p_bandwidth(const struct topo *t, int src, int dst)
{
	if (src / t->dpn != dst / t->dpn)
		return coll_inter_bw(t, 1);
	return t->ops->port ? t->port_bw : t->pair_bw;
}
