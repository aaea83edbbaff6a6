/*
 * placement.c -- how the trace's communicator groups fall on the nodes, for
 * the report: a group that could sit inside one node but spans two while
 * others of its communicator do not (expert-parallel groups of 32 on NVL72
 * racks of 72 GPUs: groups 64-95 cross the racks' NICs, and every other
 * group waits for them) is a performance cliff of the placement, not of the
 * hardware; the report names it and the ranks per node that would avoid it
 * (sim run --ranks-per-node).
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* The ranks per node, at most node_devices, that put every group of span
   consecutive ranks (a group's stride x size) inside one node: the largest
   multiple of span; 0 when a group is wider than a node. */
static int suggest(int span, int node_devices)
{
	return span > 0 && span <= node_devices ? node_devices / span * span : 0;
}

void rep_placement(struct report *rep)
{
	const struct trace *t = rep->trace;
	const struct topo *tp = &rep->r->topo;
	int n = tr_ranks(t), dpn = tp->dpn;
	rep->nplace = 0;
	if (tp->nodes <= 1 || dpn <= 0)
		return;
	char *seen = malloc((size_t)n);
	int *m = NULL, cap = 0;
	if (!seen) {
		rep->no_memory = 1;
		return;
	}
	for (int c = 0; c < tr_ncomms(t) && rep->nplace < REP_PLACE_MAX; c++) {
		if (tr_comm_stream(t, c) == -1) /* no collective uses it */
			continue;
		memset(seen, 0, (size_t)n);
		int groups = 0, spanning = 0, size = 0, span = 0, fits = 1;
		for (int a = 0; a < n; a++) {
			int gid, k = tr_comm_group(t, c, a, NULL, 0, &gid);
			if (k < 2 || gid < 0 || gid >= n || seen[gid])
				continue;
			seen[gid] = 1;
			if (k > cap) {
				int *v = realloc(m, (size_t)k * sizeof *v);
				if (!v) {
					rep->no_memory = 1;
					goto out;
				}
				m = v;
				cap = k;
			}
			tr_comm_group(t, c, a, m, k, NULL);
			groups++;
			size = k > size ? k : size;
			/* members in increasing order: the group spans nodes when its ends do */
			spanning += m[0] / dpn != m[k - 1] / dpn;
			long stride = (m[k - 1] - m[0]) / (k - 1), s = stride * k;
			if ((m[k - 1] - m[0]) % (k - 1) || s > tp->node_devices)
				fits = 0; /* no stride from its ends, or wider than a node: it cannot sit in one */
			else if (s > span)
				span = (int)s;
		}
		if (!spanning || !fits)
			continue;
		struct rep_place *p = &rep->place[rep->nplace++];
		snprintf(p->comm, sizeof p->comm, "%s", tr_comm_name(t, c));
		p->groups = groups, p->spanning = spanning, p->size = size;
		p->suggest = suggest(span, tp->node_devices);
	}
out:
	free(m);
	free(seen);
}

void rep_placement_text(const struct report *rep, FILE *f)
{
	for (int i = 0; i < rep->nplace; i++) {
		const struct rep_place *p = &rep->place[i];
		fprintf(f, "  placement    %s: %d of %d groups of %d span two nodes or more (%d ranks per node)",
		        p->comm, p->spanning, p->groups, p->size, rep->r->topo.dpn);
		if (p->suggest && p->suggest != rep->r->topo.dpn)
			fprintf(f, "; --ranks-per-node %d puts each in one node", p->suggest);
		fputc('\n', f);
	}
}
