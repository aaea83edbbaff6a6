/*
 * platform.c -- the cluster of a config's `system` section, as the topology
 * collectives reason about and as a SimGrid platform.
 *
 * The node's topology is its ops (sim/cluster/topo.h), found by the name
 * system.topology gives; its setup fills the node's links. SimGrid layout:
 * one zone per node (routing Full, explicit routes), each with its devices
 * (hosts devR), a gateway router, and per device, by the ops' `port`:
 *   - switch / pcie_host: a SPLITDUPLEX port link into the node's switch or
 *     host bridge; device a -> b is port_a UP, port_b DOWN;
 *   - full_mesh / hybrid_cube_mesh / ring: one SPLITDUPLEX link per
 *     connected pair; a route follows direct links (via an intermediate
 *     device on the cube and the ring when there is no direct link);
 *   - a SPLITDUPLEX NIC link to the gateway (all the device's NICs).
 * Nodes meet through a FATPIPE core; with oversubscription > 1 each node
 * also crosses an uplink of (NIC bandwidth of the node) / oversubscription.
 */
#include "platform.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int platform_topo(const struct arch_chip *c, int ranks, struct topo *t, char *why, size_t whylen)
{
	const struct arch_system *s = &c->sys;
	memset(t, 0, sizeof *t);
	t->ranks = ranks;
	t->dpn = s->present && s->devices_per_node > 0 ? (int)s->devices_per_node : 1;
	t->nodes = (ranks + t->dpn - 1) / t->dpn;
	t->lat_scale = c->model.coll_lat_scale > 0 ? c->model.coll_lat_scale : 1;
	t->nvls_eff = c->model.nvls_eff;
	t->chunk = c->model.coll_chunk > 0 ? c->model.coll_chunk : 1048576;
	double eff = c->model.link_eff;
	if (s->present && s->nodes > 0 && t->nodes > s->nodes) {
		snprintf(
		    why, whylen,
		    "the trace needs %d ranks but the system has %ld node%s x %d devices = %ld (system.nodes in %s)",
		    ranks, s->nodes, s->nodes == 1 ? "" : "s", t->dpn, s->nodes * t->dpn, c->path);
		return -1;
	}
	const struct arch_link *l = s->present && s->link[0] ? arch_find_link(c, s->link) : NULL;
	const struct arch_link *pcie = NULL;
	for (int i = 0; i < c->nlinks; i++)
		if (!strcmp(c->links[i].kind, "pcie"))
			pcie = &c->links[i];
	const char *topo = s->present ? s->topology : "pcie_host";
	t->ops = topo_find(topo);
	if (!t->ops) { /* arch/params.c validates the name against the same list */
		snprintf(why, whylen, "%s: system.topology \"%s\" is not a topology of sim/cluster/topo.c", c->path,
		         topo);
		return -1;
	}
	struct topo_in in = {.link = l, .pcie = pcie, .eff = eff, .in_switch_reduction = s->in_switch_reduction};
	t->ops->setup(t, &in);
	if (t->ops->max_dpn && t->dpn > t->ops->max_dpn) {
		snprintf(why, whylen, "%s: system.topology \"%s\" is modelled for at most %d devices per node, not %d",
		         c->path, topo, t->ops->max_dpn, t->dpn);
		return -1;
	}
	if (s->present && s->nics_per_device > 0 && s->nic_bw_Bps > 0)
		t->nic_bw = (double)s->nics_per_device * s->nic_bw_Bps * eff;
	if (s->present && s->oversubscription > 1)
		t->uplink_bw = t->nic_bw * t->dpn / s->oversubscription;
	if (t->nodes > 1 && t->nic_bw <= 0) {
		snprintf(why, whylen,
		         "the trace needs %d ranks, more than one node of %d device%s, but %s has no inter-node fabric "
		         "(system.nics_per_device and system.nic_bandwidth)",
		         ranks, t->dpn, t->dpn == 1 ? "" : "s", c->path);
		return -1;
	}
	return 0;
}

static void link_dir(FILE *f, const char *name, int a, int b, int up)
{
	fprintf(f, "<link_ctn id=\"%s%d_%d\" direction=\"%s\"/>", name, a, b, up ? "UP" : "DOWN");
}

/* The direct link between local devices a and b (a != b). */
static void pair_hop(FILE *f, int base, int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	link_dir(f, "pair", base + lo, base + hi, a < b);
}

static void node_route(FILE *f, const struct topo *t, int base, int k, int a, int b)
{
	fprintf(f, "   <route src=\"dev%d\" dst=\"dev%d\" symmetrical=\"NO\">", base + a, base + b);
	if (t->ops->port) {
		fprintf(f, "<link_ctn id=\"port%d\" direction=\"UP\"/><link_ctn id=\"port%d\" direction=\"DOWN\"/>",
		        base + a, base + b);
	} else if (t->ops->all_pairs) {
		pair_hop(f, base, a, b);
	} else {
		/* shortest path over the node's direct links (breadth first) */
		int prev[64], queue[64], head = 0, tail = 0;
		for (int x = 0; x < k; x++)
			prev[x] = -1;
		prev[a] = a;
		queue[tail++] = a;
		while (head < tail && prev[b] < 0) {
			int x = queue[head++];
			for (int y = 0; y < k; y++)
				if (prev[y] < 0 && topo_linked(t, base + x, base + y)) {
					prev[y] = x;
					queue[tail++] = y;
				}
		}
		int path[64], np = 0;
		for (int x = b; x != a && np < 64; x = prev[x])
			path[np++] = x;
		for (int x = a; np > 0; x = path[np])
			pair_hop(f, base, x, path[--np]);
	}
	fprintf(f, "</route>\n");
}

int platform_write_xml(const struct topo *t, FILE *f)
{
	fprintf(f,
	        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
	        "<platform version=\"4.1\">\n<zone id=\"cluster\" routing=\"%s\">\n",
	        t->nodes > 1 ? "DijkstraCache" : "Full");
	/* Every link lives in a first zone of its own: SimGrid finds a route's
	   link by searching the zone tree in order, so links kept in the node
	   zones would cost a walk over all earlier nodes per reference
	   (quadratic in nodes). */
	fprintf(f, " <zone id=\"links\" routing=\"None\">\n");
	for (int node = 0; node < t->nodes; node++) {
		int base = node * t->dpn, k = t->ranks - base < t->dpn ? t->ranks - base : t->dpn;
		for (int a = 0; a < k; a++) {
			if (t->ops->port)
				fprintf(f,
				        " <link id=\"port%d\" bandwidth=\"%.17gBps\" latency=\"0s\" "
				        "sharing_policy=\"SPLITDUPLEX\"/>\n",
				        base + a, t->port_bw);
			else
				for (int b = a + 1; b < k; b++)
					if (topo_linked(t, base + a, base + b))
						fprintf(f,
						        " <link id=\"pair%d_%d\" bandwidth=\"%.17gBps\" latency=\"0s\" "
						        "sharing_policy=\"SPLITDUPLEX\"/>\n",
						        base + a, base + b, t->pair_bw);
			if (t->nodes > 1)
				fprintf(f,
				        " <link id=\"nic%d\" bandwidth=\"%.17gBps\" latency=\"0s\" "
				        "sharing_policy=\"SPLITDUPLEX\"/>\n",
				        base + a, t->nic_bw);
		}
	}
	if (t->nodes > 1) {
		fprintf(f,
		        " <link id=\"corelink\" bandwidth=\"1e18Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n");
		for (int node = 0; node < t->nodes && t->uplink_bw > 0; node++)
			fprintf(f,
			        " <link id=\"up%d\" bandwidth=\"%.17gBps\" latency=\"0s\" "
			        "sharing_policy=\"SPLITDUPLEX\"/>\n",
			        node, t->uplink_bw);
	}
	fprintf(f, " </zone>\n");
	for (int node = 0; node < t->nodes; node++) {
		int base = node * t->dpn, k = t->ranks - base < t->dpn ? t->ranks - base : t->dpn;
		fprintf(f, " <zone id=\"node%d\" routing=\"Full\">\n", node);
		for (int a = 0; a < k; a++)
			fprintf(f, "  <host id=\"dev%d\" speed=\"1Gf\"/>\n", base + a);
		if (t->nodes > 1)
			fprintf(f, "  <router id=\"gw%d\"/>\n", node);
		for (int a = 0; a < k; a++)
			for (int b = 0; b < k; b++)
				if (a != b)
					node_route(f, t, base, k, a, b);
		if (t->nodes > 1)
			for (int a = 0; a < k; a++) {
				fprintf(
				    f,
				    "   <route src=\"dev%d\" dst=\"gw%d\" symmetrical=\"NO\"><link_ctn id=\"nic%d\" "
				    "direction=\"UP\"/></route>\n",
				    base + a, node, base + a);
				fprintf(
				    f,
				    "   <route src=\"gw%d\" dst=\"dev%d\" symmetrical=\"NO\"><link_ctn id=\"nic%d\" "
				    "direction=\"DOWN\"/></route>\n",
				    node, base + a, base + a);
			}
		fprintf(f, " </zone>\n");
	}
	if (t->nodes > 1) {
		/* the fabric: a core zone every node zone routes through (Dijkstra
		   over 2 x nodes zone routes, not one route per pair of nodes) */
		fprintf(f, " <zone id=\"fabric\" routing=\"Full\">\n  <router id=\"core\"/>\n </zone>\n");
		for (int node = 0; node < t->nodes; node++) {
			char id[32] = "corelink";
			if (t->uplink_bw > 0)
				snprintf(id, sizeof id, "up%d", node);
			fprintf(f,
			        " <zoneRoute src=\"node%d\" dst=\"fabric\" gw_src=\"gw%d\" gw_dst=\"core\" "
			        "symmetrical=\"NO\">"
			        "<link_ctn id=\"%s\"%s/></zoneRoute>\n",
			        node, node, id, t->uplink_bw > 0 ? " direction=\"UP\"" : "");
			fprintf(f,
			        " <zoneRoute src=\"fabric\" dst=\"node%d\" gw_src=\"core\" gw_dst=\"gw%d\" "
			        "symmetrical=\"NO\">"
			        "<link_ctn id=\"%s\"%s/></zoneRoute>\n",
			        node, node, id, t->uplink_bw > 0 ? " direction=\"DOWN\"" : "");
		}
	}
	fprintf(f, "</zone>\n</platform>\n");
	return ferror(f) ? -1 : 0;
}

void platform_describe(const struct arch_chip *c, const struct topo *t, char *buf, size_t len)
{
	char bw[32], nic[32];
	units_format(t->ops->port ? t->port_bw : t->pair_bw, UNIT_BANDWIDTH, bw, sizeof bw);
	units_format(t->nic_bw, UNIT_BANDWIDTH, nic, sizeof nic);
	int n = snprintf(buf, len, "%d x %s in %d node%s of %d: %s, %s %s %s%s", t->ranks, c->name, t->nodes,
	                 t->nodes == 1 ? "" : "s", t->dpn, t->ops->describe, t->link_name ? t->link_name : "pcie", bw,
	                 t->ops->port ? "per device" : "per pair", t->nvls ? ", in-switch reduction" : "");
	if (t->nodes > 1 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; NICs %s per device%s", nic,
		         t->uplink_bw > 0 ? ", oversubscribed" : "");
}
