/*
 * replay_fold.c -- what the replay may skip, decided from the trace and
 * the topology before anything runs.
 *
 *  - Symmetric ranks (rp_fold_ranks): ranks that differ only in dims along
 *    which every rank runs the same program, over links of their own, do
 *    the same thing at the same time; one representative replays for all.
 *  - Collectives that run alone (rp_exclusive_comms): a communicator that
 *    is all that moves data in the link domains its groups reach; each of
 *    its plans is timed once on the engine, then replayed as a sleep.
 *
 * Both only save work: tests/run_fold.sh checks that the report is the
 * same with --no-fold and --no-memo.
 */
#include "replay_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Symmetric ranks: when the trace runs the same program along some dims
 * (tr_symmetric_dims), the platform gives every device its own links
 * (switch, full mesh or PCIe node; fabric not oversubscribed) and the
 * dims' groups sit alike in the nodes, the ranks that differ only in those
 * dims do the same thing at the same time over disjoint links, so one
 * representative (coordinate 0 in each folded dim) replays for all of
 * them. Jitter draws per rank, so it turns folding off.
 */
int rp_fold_ranks(struct run *R, const struct trace *t, const struct rp_options *o)
{
	struct rp_result *r = R->r;
	const struct topo *tp = &R->topo;
	r->fold = 1;
	r->nrep = R->nranks;
	unsigned dims = tr_symmetric_dims(t);
	if (o->no_fold || o->jitter > 0 || !dims || tp->uplink_bw > 0 || !tp->ops->private_links)
		return 0;
	long stride[DIM_COUNT] = {0};
	for (int i = 0; i < R->nranks; i++)
		for (int d = 0; d < DIM_COUNT; d++) {
			int k = 0, one = tr_coord(t, i, d) == 1;
			for (int e = 0; e < DIM_COUNT && one; e++)
				k += e != d && tr_coord(t, i, e) != 0;
			if (one && !k)
				stride[d] = i;
		}
	/* A dim folds only where its ranks sit alike in their nodes, so that a
	   step along it carries every group to one placed as the
	   representative's is: the step moves by whole nodes (the stride a
	   multiple of the ranks per node), or it moves inside node-sized blocks
	   (the stride divides the ranks per node) and the dim with the dims
	   inside it (stride x size) tiles a node or spans whole nodes; or there
	   is one node. Else (EP groups of 32 on nodes of 72) a group has members
	   in two nodes where the representative's has all in one, and does not
	   take its time. */
	long dpn = tp->dpn;
	for (int d = 0; d < DIM_COUNT; d++) {
		long s = stride[d], span = s * tr_dim_size(t, (enum tr_dim)d);
		if ((dims & (1u << d)) && tp->nodes > 1 &&
		    !(s > 0 && (s % dpn == 0 || (dpn % s == 0 && (dpn % span == 0 || span % dpn == 0)))))
			dims &= ~(1u << d);
	}
	if (!dims)
		return 0;
	R->is_rep = calloc((size_t)R->nranks, 1);
	r->rep_of = malloc((size_t)R->nranks * sizeof *r->rep_of);
	if (!R->is_rep || !r->rep_of)
		return -1;
	r->nrep = 0;
	for (int i = 0; i < R->nranks; i++) {
		long rep = i;
		for (int d = 0; d < DIM_COUNT; d++)
			if (dims & (1u << d))
				rep -= tr_coord(t, i, d) * stride[d];
		r->rep_of[i] = (int)rep;
		R->is_rep[i] = rep == i;
		r->nrep += rep == i;
	}
	r->fold = R->nranks / r->nrep;
	r->fold_dims = dims;
	return 0;
}

/* Where the groups of communicator comm move data: REACH_IN when a group
   has two members in one node, REACH_OUT when one has members in two. */
enum { REACH_IN = 1, REACH_OUT = 2 };
static int comm_reach(struct run *R, const struct trace *t, int comm, char *seen, int **buf, int *cap)
{
	int reach = 0, dpn = R->topo.dpn;
	memset(seen, 0, (size_t)R->nranks);
	for (int a = 0; a < R->nranks && reach != (REACH_IN | REACH_OUT); a++) {
		int gid, n = tr_comm_group(t, comm, a, NULL, 0, &gid);
		if (n < 2 || gid < 0 || gid >= R->nranks || seen[gid])
			continue;
		seen[gid] = 1;
		if (n > *cap) {
			int *v = realloc(*buf, (size_t)n * sizeof *v);
			if (!v)
				return -1;
			*buf = v;
			*cap = n;
		}
		tr_comm_group(t, comm, a, *buf, n, &gid);
		for (int i = 1; i < n; i++) /* members in increasing order: a node's are adjacent */
			reach |= (*buf)[i] / dpn == (*buf)[i - 1] / dpn ? REACH_IN : REACH_OUT;
	}
	return reach;
}

/* The built-in communicator of layout dim d (the ranks that differ only in d). */
static int dim_comm(const struct trace *t, int d)
{
	for (int c = 0; c < tr_ncomms(t); c++)
		if (!strcmp(tr_comm_name(t, c), tr_dim_name((enum tr_dim)d)))
			return c;
	return -1;
}

/*
 * Communicators whose collectives own the links they use. Links fall in
 * two domains: inside a node (private device links: switch or PCIe ports,
 * full-mesh pairs; traffic between two devices of a node crosses only
 * theirs) and between nodes (each device's NICs and a non-blocking fabric).
 * When one communicator is all that moves data in each domain its groups
 * reach (no other communicator's group, no send/recv peer, reaches it) and
 * its collectives come from one stream (a group's calls never overlap),
 * every call runs alone on its links and takes the same time each time:
 * exec_coll measures it once, and later calls are one sleep, or with every
 * other member folded, part of a batch of device ops. --no-memo turns this
 * off.
 */
int rp_exclusive_comms(struct run *R, const struct trace *t, const struct rp_options *o)
{
	const struct topo *tp = &R->topo;
	int nc = tr_ncomms(t), p2p = tr_p2p_dims(t), users[4] = {0}, *buf = NULL, cap = 0, rc = 0;
	if (o->no_memo || p2p < 0)
		return 0;
	int *reach = calloc((size_t)nc, sizeof *reach);
	char *seen = malloc((size_t)R->nranks);
	R->excl_comm = calloc((size_t)nc, 1);
	if (!reach || !seen || !R->excl_comm) {
		rc = -1;
		goto out;
	}
	int peers = 0; /* where send/recv can go */
	for (int d = 0; d < DIM_COUNT && rc >= 0; d++) {
		int c = p2p & (1 << d) ? dim_comm(t, d) : -1;
		if (c >= 0 && (rc = comm_reach(R, t, c, seen, &buf, &cap)) > 0)
			peers |= rc;
	}
	for (int c = 0; c < nc && rc >= 0; c++)
		if (tr_comm_stream(t, c) != -1 && (rc = reach[c] = comm_reach(R, t, c, seen, &buf, &cap)) > 0)
			for (int k = REACH_IN; k <= REACH_OUT; k++)
				users[k] += (rc & k) != 0;
	if (rc < 0)
		goto out;
	rc = 0;
	users[REACH_IN] += (peers & REACH_IN) != 0;
	users[REACH_OUT] += (peers & REACH_OUT) != 0;
	int in_ok = tp->ops->private_links;
	int out_ok = tp->uplink_bw <= 0;
	for (int c = 0; c < nc; c++)
		R->excl_comm[c] = reach[c] && tr_comm_stream(t, c) >= 0 &&
		                  (!(reach[c] & REACH_IN) || (in_ok && users[REACH_IN] == 1)) &&
		                  (!(reach[c] & REACH_OUT) || (out_ok && users[REACH_OUT] == 1));
out:
	free(reach);
	free(seen);
	free(buf);
	return rc;
}
