/*
 * coll.h -- collectives: the topology a cluster exposes to them, the cost
 * model a collective library (NCCL, RCCL, HCCL) uses to choose an algorithm
 * and protocol, and the flows each algorithm puts on the links.
 *
 * Each algorithm (ring, tree, nvls, hier, direct) is one file under
 * sim/cluster/coll/ behind `struct coll_algo_ops` (coll_int.h), listed in
 * one table in coll.c and picked by name: traces name them in algo=, plans
 * and reports carry their index in that table.
 *
 * Split of the work: coll_plan() gives a collective's latency term
 * (launch + per-step hop latencies, by protocol and link class) and its
 * bandwidth phases as lists of flows; the replay engine (sim/cluster/replay.c) runs
 * each phase as one SimGrid parallel task, so concurrent collectives and
 * transfers share links by max-min fairness. On an idle platform a phase
 * takes exactly its analytic bandwidth time (tests/test_coll.c pins it).
 */
#ifndef SIM_COLL_H
#define SIM_COLL_H

#include "arch.h"
#include "topo.h"
#include "trace.h"

enum hw_class { HW_NVLINK, HW_PCI, HW_NET, HW_COUNT };
enum coll_proto { PR_LL, PR_LL128, PR_SIMPLE, PR_COUNT };

/* What collectives see of a cluster (sim/cluster/platform.c fills it from a config). */
struct topo {
	int ranks;                  /* devices in use */
	int dpn;                    /* ranks per node: devices of a node in use */
	int node_devices;           /* devices a node has (system.devices_per_node): dpn or more */
	int nodes;                  /* nodes in use */
	const struct topo_ops *ops; /* intra-node topology (topo.h) */
	enum hw_class intra_hw;
	double port_bw;        /* switch, pcie: a device's port, per direction (B/s, after link_eff) */
	double pair_bw;        /* mesh, cube, ring: one neighbour link, per direction */
	double nic_bw;         /* a device's NICs together, per direction; 0 = none */
	double uplink_bw;      /* a node's share of an oversubscribed fabric; 0 = non-blocking */
	int nvls;              /* switch reduces in the network */
	double nvls_eff;       /* in-switch reduction throughput / port bandwidth (system.nvls_*) */
	double lat_scale;      /* model.coll_latency_scale */
	double net_plugin_s;   /* system.nic_latency: added to a network step (Simple: twice) */
	double chunk;          /* model.coll_chunk */
	const char *link_name; /* for reports: "nvlink", "xgmi", "pcie" */
};

struct flow {
	int src, dst; /* ranks */
	double bytes;
};

/* Algorithms by index in the table (0 .. coll_algo_count() - 1). */
#define COLL_AUTO    (-1) /* coll_plan picks, as NCCL's tuner does */
#define COLL_UNKNOWN (-2) /* coll_algo_find: no such name */
int coll_algo_count(void);
const char *coll_algo_name(int a);    /* "ring" ...; "auto" for COLL_AUTO; "?" otherwise */
const char *coll_algo_summary(int a); /* one line: what it does, where it runs */
int coll_algo_find(const char *name); /* index, COLL_AUTO for "auto", or COLL_UNKNOWN */
/* Resolves trace t's algo= names (tr_algo_name): map[i] (tr_nalgos(t)
   entries) gets the index of name i. A name no algorithm has is a trace
   error: -1 with "path:line: coll: algo=NAME is not one of auto, ring, ..."
   in why. */
int coll_algo_resolve(const struct trace *t, int *map, char *why, size_t whylen);

#define COLL_MAX_PHASES 3
struct coll_plan {
	int algo; /* index of the algorithm (coll_algo_name) */
	enum coll_proto proto;
	double lat_s;     /* launch + per-step latencies, paid once */
	double bw_s;      /* analytic bandwidth time on an idle platform (all phases) */
	double bus_bytes; /* bytes one member moves, as nccl-tests' bus bandwidth counts them */
	int nphases;
	int nflows[COLL_MAX_PHASES];
	struct flow *flows[COLL_MAX_PHASES]; /* owned; coll_plan_free */
};

/*
 * Plans collective c of `bytes` (nccl-tests convention, trace.h) over the
 * sorted member ranks; route (NULL, or topk 0: none) makes an all-to-all an
 * MoE dispatch that moves each token once per member and node it reaches
 * (struct tr_route). algo COLL_AUTO picks the fastest allowed (algorithm,
 * protocol) by the cost model, as NCCL's tuner does; a forced algo that the
 * topology cannot run (nvls without an in-switch reduction, tree or hier in
 * one node) returns -1 with the reason in why. want_flows = 0 skips building
 * the flow lists (cost only).
 */
int coll_plan(const struct topo *t, enum tr_coll c, int algo, double bytes, const struct tr_route *route,
              const int *members, int n, int want_flows, struct coll_plan *p, char *why, size_t whylen);
void coll_plan_free(struct coll_plan *p);

/* Whether devices a and b (ranks) of one node share a direct link (mesh,
   hybrid cube mesh, ring topologies; 0 for switch and PCIe): the ops'
   linked (sim/cluster/topo.c). */
int topo_linked(const struct topo *t, int a, int b);

/* Point-to-point: latency and the idle bandwidth of the route src -> dst. */
double p2p_latency(const struct topo *t, int src, int dst);
double p2p_bandwidth(const struct topo *t, int src, int dst);

const char *coll_proto_name(enum coll_proto p);
/* nccl-tests bus-bandwidth factor: busbw = algbw x factor. */
double coll_busbw_factor(enum tr_coll c, int n);

#endif
