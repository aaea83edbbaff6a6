/*
 * platform.c -- the cluster of a config's `system` section, as the topology
 * collectives reason about and as a SimGrid platform.
 *
 * The node's topology is its ops (sim/cluster/topo.h), found by the name
 * system.topology gives; its setup fills the node's links. The platform, per
 * device, by the ops' `port`:
 *   - switch / pcie_host: a SPLITDUPLEX port link into the node's switch or
 *     host bridge; device a -> b is port_a UP, port_b DOWN;
 *   - full_mesh / hybrid_cube_mesh / ring / torus: one SPLITDUPLEX link per
 *     connected pair; a route follows direct links (via an intermediate
 *     device on the cube and the ring when there is no direct link);
 *   - a SPLITDUPLEX NIC link (all the device's NICs) when there are nodes.
 * Nodes meet through a FATPIPE core; with oversubscription > 1 each node
 * also crosses an uplink of (NIC bandwidth of the node) / oversubscription.
 *
 * platform_new lists these links and platform_route computes a route
 * (platform_links.h); platform_sg.cpp makes them in SimGrid as one zone. The
 * same platform as XML (platform_write_xml: a zone per node with explicit
 * routes, a fabric zone between them) is the reference tests/test_platform.c
 * compares SimGrid's routes against.
 */
#include "platform.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The devices of one node of the system, and the name of its topology (a chip without a system section: one
   device on a PCIe host) */
static int node_devices(const struct arch_system *s)
{
	return s->present && s->devices_per_node > 0 ? (int)s->devices_per_node : 1;
}

static const char *node_topology(const struct arch_system *s)
{
	return s->present ? s->topology : "pcie_host";
}

int platform_ranks_per_node(const struct arch_chip *c, int n, char *why, size_t whylen)
{
	int dpn = node_devices(&c->sys);
	const struct topo_ops *ops = topo_find(node_topology(&c->sys));
	if (n < 1 || n > dpn) {
		snprintf(why, whylen,
		         "%d ranks per node: expected 1 to %d, the devices of a node (system.devices_per_node in %s)",
		         n, dpn, c->path);
		return -1;
	}
	if (n < dpn && ops && !ops->port && !ops->all_pairs) {
		snprintf(
		    why, whylen,
		    "%d ranks per node: a %s node of %d devices (system.topology in %s) routes through devices a job "
		    "with fewer ranks per node leaves idle; expected %d",
		    n, ops->describe, dpn, c->path, dpn);
		return -1;
	}
	return 0;
}

int platform_topo(const struct arch_chip *c, int ranks, int ranks_per_node, struct topo *t, char *why, size_t whylen)
{
	const struct arch_system *s = &c->sys;
	memset(t, 0, sizeof *t);
	t->ranks = ranks;
	t->dpn = t->node_devices = node_devices(s);
	if (ranks_per_node > 0) {
		if (platform_ranks_per_node(c, ranks_per_node, why, whylen))
			return -1;
		t->dpn = ranks_per_node;
	}
	t->nodes = (ranks + t->dpn - 1) / t->dpn;
	t->lat_scale = c->model.coll_lat_scale > 0 ? c->model.coll_lat_scale : 1;
	t->net_plugin_s = s->present ? s->nic_lat_s : 0;
	/* an in-switch all-reduce at the library's efficiency for the generation, one of its channels kept for
	   synchronisation (NCCL's NVLS model, src/tuning/nvls.cc: nvlsEfficiency x (nChannels - 1) / nChannels) */
	t->nvls_eff = s->present && s->in_switch_reduction
	                  ? s->nvls_eff * (double)(s->nvls_channels - 1) / (double)s->nvls_channels
	                  : 0;
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
	const char *topo = node_topology(s);
	t->ops = topo_find(topo);
	if (!t->ops) { /* arch/params.c validates the name against the same list */
		snprintf(why, whylen, "%s: system.topology \"%s\" is not a topology of sim/cluster/topo.c", c->path,
		         topo);
		return -1;
	}
	struct topo_in in = {.link = l, .pcie = pcie, .eff = eff, .in_switch_reduction = s->in_switch_reduction};
	int used = t->dpn; /* a mesh's links are the node's: set up with all its devices */
	t->dpn = t->node_devices;
	t->ops->setup(t, &in);
	t->dpn = used;
	if (t->ops->max_dpn && t->node_devices > t->ops->max_dpn) {
		snprintf(why, whylen, "%s: system.topology \"%s\" is modelled for at most %d devices per node, not %d",
		         c->path, topo, t->ops->max_dpn, t->node_devices);
		return -1;
	}
	if (s->present && s->nics_per_device > 0 && s->nic_bw_Bps > 0)
		t->nic_bw = (double)s->nics_per_device * s->nic_bw_Bps * c->model.nic_eff;
	if (s->present && s->oversubscription > 1)
		t->uplink_bw = t->nic_bw * t->node_devices / s->oversubscription; /* all the node's NICs */
	if (t->nodes > 1 && t->nic_bw <= 0) {
		snprintf(why, whylen,
		         "the trace needs %d ranks, more than one node of %d device%s, but %s has no inter-node fabric "
		         "(system.nics_per_device and system.nic_bandwidth)",
		         ranks, t->dpn, t->dpn == 1 ? "" : "s", c->path);
		return -1;
	}
	return 0;
}

/* ---- the platform as links and routes (platform_links.h) ---- */

static int add_link(struct platform *p, int cap, const char *name, double bw, int fatpipe)
{
	assert(p->nlinks < cap);
	(void)cap;
	struct plink *l = &p->links[p->nlinks];
	snprintf(l->name, sizeof l->name, "%s", name);
	l->bw = bw;
	l->fatpipe = fatpipe;
	return p->nlinks++;
}

struct platform *platform_new(const struct topo *t)
{
	struct platform *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->t = t;
	p->ndev = t->ranks;
	p->core = -1;
	size_t n = (size_t)t->ranks, dpn = (size_t)t->dpn;
	/* at most: a port or dpn - 1 direct links and a NIC per device, the
	   core and an uplink per node */
	int cap = (int)(n * (t->ops->port ? 1 : dpn) + n + 1 + (size_t)t->nodes);
	p->links = malloc((size_t)cap * sizeof *p->links);
	p->port = malloc(n * sizeof *p->port);
	p->nic = malloc(n * sizeof *p->nic);
	p->pair = t->ops->port ? NULL : malloc(n * dpn * sizeof *p->pair);
	p->up = t->nodes > 1 && t->uplink_bw > 0 ? malloc((size_t)t->nodes * sizeof *p->up) : NULL;
	if (!p->links || !p->port || !p->nic || (!t->ops->port && !p->pair) ||
	    (t->nodes > 1 && t->uplink_bw > 0 && !p->up)) {
		platform_free(p);
		return NULL;
	}
	if (p->pair)
		for (size_t i = 0; i < n * dpn; i++)
			p->pair[i] = -1;
	char name[32];
	/* the order of platform_write_xml's links */
	for (int node = 0; node < t->nodes; node++) {
		int base = node * t->dpn, k = t->ranks - base < t->dpn ? t->ranks - base : t->dpn;
		for (int a = 0; a < k; a++) {
			p->port[base + a] = p->nic[base + a] = -1;
			if (t->ops->port) {
				snprintf(name, sizeof name, "port%d", base + a);
				p->port[base + a] = add_link(p, cap, name, t->port_bw, 0);
			} else {
				for (int b = a + 1; b < k; b++)
					if (topo_linked(t, base + a, base + b)) {
						snprintf(name, sizeof name, "pair%d_%d", base + a, base + b);
						int l = add_link(p, cap, name, t->pair_bw, 0);
						p->pair[(size_t)(base + a) * dpn + (size_t)b] = l;
						p->pair[(size_t)(base + b) * dpn + (size_t)a] = l;
					}
			}
			if (t->nodes > 1) {
				snprintf(name, sizeof name, "nic%d", base + a);
				p->nic[base + a] = add_link(p, cap, name, t->nic_bw, 0);
			}
		}
	}
	if (t->nodes > 1) {
		p->core = add_link(p, cap, "corelink", 1e18, 1);
		for (int node = 0; p->up && node < t->nodes; node++) {
			snprintf(name, sizeof name, "up%d", node);
			p->up[node] = add_link(p, cap, name, t->uplink_bw, 0);
		}
	}
	return p;
}

void platform_free(struct platform *p)
{
	if (!p)
		return;
	free(p->links);
	free(p->port);
	free(p->nic);
	free(p->pair);
	free(p->up);
	free(p);
}

/* The hop over the direct link between devices a and b of one node: UP
   from the lower to the higher. */
static struct phop pair_step(const struct platform *p, int a, int b)
{
	struct phop h = {p->pair[(size_t)a * (size_t)p->t->dpn + (size_t)(b % p->t->dpn)], a < b ? PH_UP : PH_DOWN};
	assert(h.link >= 0);
	return h;
}

/* Inside a node without a port: the direct link, or a shortest path over
   the node's links (breadth first from a, lower devices first). */
static int node_path(const struct platform *p, int a, int b, struct phop *hops)
{
	const struct topo *t = p->t;
	int base = a - a % t->dpn, k = t->ranks - base < t->dpn ? t->ranks - base : t->dpn;
	int la = a - base, lb = b - base;
	if (t->ops->all_pairs || p->pair[(size_t)a * (size_t)t->dpn + (size_t)lb] >= 0) {
		hops[0] = pair_step(p, a, b);
		return 1;
	}
	int prev[64], queue[64], head = 0, tail = 0;
	for (int x = 0; x < k; x++)
		prev[x] = -1;
	prev[la] = la;
	queue[tail++] = la;
	while (head < tail && prev[lb] < 0) {
		int x = queue[head++];
		for (int y = 0; y < k; y++)
			if (prev[y] < 0 && p->pair[(size_t)(base + x) * (size_t)t->dpn + (size_t)y] >= 0) {
				prev[y] = x;
				queue[tail++] = y;
			}
	}
	assert(prev[lb] >= 0); /* a node's devices are connected */
	int path[64], np = 0, n = 0;
	for (int x = lb; x != la && np < 64; x = prev[x])
		path[np++] = x;
	for (int x = la; np > 0; x = path[np])
		hops[n++] = pair_step(p, base + x, base + path[--np]);
	return n;
}

int platform_route(const struct platform *p, int a, int b, struct phop *hops)
{
	const struct topo *t = p->t;
	assert(a != b && a >= 0 && b >= 0 && a < t->ranks && b < t->ranks);
	int na = a / t->dpn, nb = b / t->dpn;
	if (na == nb) {
		if (!t->ops->port)
			return node_path(p, a, b, hops);
		hops[0] = (struct phop){p->port[a], PH_UP};
		hops[1] = (struct phop){p->port[b], PH_DOWN};
		return 2;
	}
	hops[0] = (struct phop){p->nic[a], PH_UP};
	if (p->up) {
		hops[1] = (struct phop){p->up[na], PH_UP};
		hops[2] = (struct phop){p->up[nb], PH_DOWN};
	} else {
		hops[1] = hops[2] = (struct phop){p->core, PH_BOTH};
	}
	hops[3] = (struct phop){p->nic[b], PH_DOWN};
	return 4;
}

/* ---- the same platform as SimGrid XML (the tests' reference) ---- */

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
	char of[32] = "";
	if (t->node_devices > t->dpn)
		snprintf(of, sizeof of, " (of %d)", t->node_devices);
	int n = snprintf(buf, len, "%d x %s in %d node%s of %d%s: %s, %s %s %s%s", t->ranks, c->name, t->nodes,
	                 t->nodes == 1 ? "" : "s", t->dpn, of, t->ops->describe, t->link_name ? t->link_name : "pcie",
	                 bw, t->ops->port ? "per device" : "per pair", t->nvls ? ", in-switch reduction" : "");
	if (t->nodes > 1 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; NICs %s per device%s", nic,
		         t->uplink_bw > 0 ? ", oversubscribed" : "");
}
