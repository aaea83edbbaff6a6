/*
 * coll_int.h -- private to the collectives (sim/cluster/coll.c and the
 * algorithms in sim/cluster/coll/); sim/cluster/coll.h is their API.
 *
 * An algorithm is one `const struct coll_algo_ops` in a file of its own
 * under sim/cluster/coll/, listed once in coll.c's table (docs/adding-a-
 * collective.md walks through adding one). coll_plan() asks every algorithm
 * of the table that serves the collective, for every protocol it allows, for
 * its cost, keeps the fastest (or the one algo= names), then asks that one
 * for its flows.
 */
#ifndef SIM_COLL_INT_H
#define SIM_COLL_INT_H

#include "coll.h"

#define COLL_BIT(x) (1u << (x))
#define COLL_ALL    (COLL_BIT(CO_COUNT) - 1u) /* every enum tr_coll */

/* The shape of a group: members, nodes spanned, members per node (most
   and fewest of the nodes it spans). */
struct shape {
	int n, m, k, kmin;
	int deg; /* fewest direct links a member has to other members of its node (mesh, cube, ring) */
};

/* One collective as an algorithm sees it. */
struct coll_args {
	const struct topo *t;
	enum tr_coll c;
	enum coll_proto p;
	double S;       /* bytes, nccl-tests convention (trace.h); 4 for a barrier */
	struct shape s; /* the group */
	double base;    /* launch latency of this (algorithm, protocol), s: base_us x 1e-6 x model.coll_latency_scale */
	double pf;      /* payload share of the link bandwidth under protocol p */
	double scale;   /* the flows' bytes x this: a protocol's bandwidth cap (coll.c), 1 when none binds */
	const struct tr_route *route; /* an MoE dispatch's routing (all-to-all), NULL: none (direct.c) */
};

/* A growing flow list (one per phase). */
struct fl {
	struct flow *v;
	int n, cap;
};

struct coll_algo_ops {
	const char *name;         /* algo= in traces, "algo" in reports */
	const char *summary;      /* one line: what it does, where it runs (coll_algo_summary) */
	unsigned colls;           /* bit per enum tr_coll it can run (COLL_BIT) */
	unsigned protos;          /* bit per enum coll_proto it can use (LL128 also needs NVLink-class links) */
	int by_name_only;         /* 1: only when algo= names it; algo=auto (NCCL's tuner) never picks it */
	double base_us[PR_COUNT]; /* launch latency per protocol, us (NCCL's tuning model) */
	/* Latency and bandwidth terms of collective a on an idle platform
	   (seconds); 0 when the algorithm cannot run it there (too few nodes,
	   no in-switch reduction, ...). */
	int (*cost)(const struct coll_args *a, double *lat, double *bw);
	/* The flows of its bandwidth phases over mem (the sorted members,
	   a->s.n of them; starts[i]..starts[i+1] are node i's, a->s.m nodes),
	   whose times alone add up to cost's bw. Returns the number of phases
	   (1 to COLL_MAX_PHASES), or -1 when memory runs out. */
	int (*flows)(const struct coll_args *a, const int *mem, const int *starts, struct fl f[COLL_MAX_PHASES]);
};

/* The algorithms (one file each under sim/cluster/coll/). */
extern const struct coll_algo_ops coll_ring, coll_tree, coll_nvls, coll_hier, coll_direct;
extern const struct coll_algo_ops coll_oneshot;

/* Helpers the algorithms share (coll.c). */
int coll_fl_add(struct fl *f, int src, int dst, double bytes);
/* Per-step hop latency (s) on link class h under protocol p; tree steps
   have their own table. */
double coll_hop(const struct topo *t, enum hw_class h, enum coll_proto p, int tree);
/* The hop inside a node of a's group, 1.8 times as long with LL when the group spans nodes (NCCL's model). */
double coll_intra_hop(const struct coll_args *a, int tree);
/* Pipeline fill: steps x one chunk (S / n, at most model.coll_chunk) at bw. */
double coll_fill(const struct topo *t, double S, int n, int steps, double bw);
/* Bandwidth of a ring's hop inside a node (deg direct links per member),
   across nodes (k members of a node, one rail each), and the slowest hop
   of a ring over the group. */
double coll_intra_bw(const struct topo *t, int deg);
double coll_inter_bw(const struct topo *t, int k);
double coll_ring_bw(const struct topo *t, struct shape s);
/* A ring moving V bytes per member over m nodes (see coll.c). */
int coll_ring_flows(const struct topo *t, const int *mem, const int *starts, int m, double V, struct fl *f);
/* The same with Vnet bytes leaving each node over its rails (V inside). */
int coll_chain_flows(const struct topo *t, const int *mem, const int *starts, int m, double V, double Vnet,
                     struct fl *f);

#endif
