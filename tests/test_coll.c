/*
 * test_coll.c -- the collective model against closed forms, and the
 * replay (SimGrid) against the model.
 *
 * usage: test_coll ROOT CONFIG RANKS ALGO BYTES
 *
 * 1. The table of algorithms (names unique and found by name). The table of
 *    topologies: the same names as system.topology's list in arch/params.c,
 *    and each one's links in a node of 8 against a row of `want` below (a
 *    new topology needs its row). Closed
 *    forms, no SimGrid: a ring all-reduce's bandwidth term is
 *    2(n-1)/n x S / B with B the device's switch port (links x per-link
 *    bandwidth x model.link_efficiency), an in-switch one's S / (B x
 *    system.nvls_efficiency x (nvls_channels - 1) / nvls_channels);
 *    bus bandwidth factors; a forced
 *    algorithm the topology cannot run is refused; bigger messages never
 *    finish sooner; oneshot's bandwidth term, and auto never picks it. On a
 *    config with NICs, the latency a network plugin reports
 *    (system.nic_latency, L): a ring all-reduce over m nodes crosses the
 *    network 2(m-1) times and a tree 2 ceil(log2 m) times, each step L
 *    later (2L with Simple, NCCL's flush; a ring's Simple all-reduce of
 *    nRanks/16 x 64 KiB or more 1.9 times that, NCCL's plateau), the
 *    bandwidth term unchanged. NCCL's other refinements across nodes: the
 *    LL protocol's steps inside a node take 1.8 times their latency, and
 *    the plateau multiplies a ring's whole latency.
 * 2. One replay of `coll op=allreduce comm=world bytes=BYTES algo=ALGO` on
 *    RANKS ranks: the step time equals the plan's latency + bandwidth terms
 *    to 1e-9 (SimGrid's flows on an idle platform reproduce the model
 *    exactly; one replay per process, as SimGrid allows).
 */
#include "arch_int.h" /* arch_sections: system.topology's names */
#include "coll.h"
#include "platform.h"
#include "replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                       \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

static int *iota(int n)
{
	int *m = malloc((size_t)n * sizeof *m);
	for (int i = 0; i < n; i++)
		m[i] = i;
	return m;
}

/* The table of algorithms: names unique, found by name, "auto" apart. */
static void algo_table(void)
{
	CHECK(coll_algo_count() >= 5, "%d algorithms", coll_algo_count());
	for (int a = 0; a < coll_algo_count(); a++) {
		CHECK(coll_algo_find(coll_algo_name(a)) == a, "algorithm %d (%s) is found by its name", a,
		      coll_algo_name(a));
		CHECK(strcmp(coll_algo_name(a), "auto") && *coll_algo_summary(a), "algorithm %d: name and summary", a);
	}
	CHECK(coll_algo_find("auto") == COLL_AUTO && !strcmp(coll_algo_name(COLL_AUTO), "auto"), "auto");
	CHECK(coll_algo_find("star") == COLL_UNKNOWN && !strcmp(coll_algo_name(coll_algo_count()), "?"), "unknown");
}

/* The topologies: arch/ validates system.topology against the table's
   names; in a node of 8 devices with 4 links of 25 GB/s each, every device
   has `deg` direct links (0: a port), of 100 GB/s together. */
static void topo_table(void)
{
	static const struct {
		const char *name, *describe; /* describe: after setup (torus is modelled as a switch) */
		int deg;
	} want[] = {
	    {"switch", "switch", 0}, {"full_mesh", "full mesh", 7}, {"hybrid_cube_mesh", "hybrid cube mesh", 4},
	    {"ring", "ring", 2},     {"torus", "switch", 0},        {"pcie_host", "PCIe host bridge", 0},
	};
	char names[256] = "";
	for (int i = 0; i < topo_count(); i++)
		snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "|" : "", topo_at(i)->name);
	const char *choices = NULL;
	for (int s = 0; s < arch_nsections; s++)
		for (int k = 0; k < arch_sections[s].nparams; k++)
			if (!strcmp(arch_sections[s].prefix, "system") &&
			    !strcmp(arch_sections[s].params[k].key, "topology"))
				choices = arch_sections[s].params[k].choices;
	CHECK(choices && !strcmp(choices, names), "system.topology in arch/params.c lists %s, sim/cluster/topo.c %s",
	      choices ? choices : "nothing", names);
	CHECK(topo_find("star") == NULL && topo_at(topo_count()) == NULL, "unknown topology");
	struct arch_link l = {.name = "nvlink", .kind = "nvlink", .count = 4, .bw_Bps = 25e9};
	struct topo_in in = {.link = &l, .eff = 1, .in_switch_reduction = 1};
	for (int i = 0; i < topo_count(); i++) {
		const struct topo_ops *o = topo_at(i);
		int r = 0;
		while (r < (int)(sizeof want / sizeof want[0]) && strcmp(want[r].name, o->name))
			r++;
		CHECK(topo_find(o->name) == o, "%s is not found by its name", o->name);
		if (r == (int)(sizeof want / sizeof want[0])) {
			CHECK(0, "topology %s has no row in test_coll.c's topo_table", o->name);
			continue;
		}
		struct topo t = {.ranks = 8, .dpn = 8, .nodes = 1, .ops = o, .lat_scale = 1, .chunk = 1048576};
		o->setup(&t, &in);
		CHECK(!strcmp(t.ops->describe, want[r].describe), "%s is described as %s", o->name, t.ops->describe);
		CHECK(!t.nvls || t.ops->switch_reduce, "%s reduces in a switch it does not have", o->name);
		for (int a = 0; a < 8; a++) {
			int deg = 0;
			for (int b = 0; b < 8; b++) {
				CHECK(topo_linked(&t, a, b) == topo_linked(&t, b, a), "%s: link %d-%d one way", o->name,
				      a, b);
				deg += a != b && topo_linked(&t, a, b);
			}
			CHECK(deg == want[r].deg, "%s: device %d has %d direct links, want %d", o->name, a, deg,
			      want[r].deg);
		}
		double total = t.ops->port ? t.port_bw : t.pair_bw * want[r].deg;
		CHECK(fabs(total - 100e9) < 1, "%s: a device's links carry %g B/s, want 100 GB/s", o->name, total);
		CHECK(fabs(t.ops->intra_bw(&t, want[r].deg) - 100e9) < 1, "%s: intra bandwidth %g B/s", o->name,
		      t.ops->intra_bw(&t, want[r].deg));
		CHECK(!t.ops->all_pairs || want[r].deg == 7, "%s: all pairs linked, but %d links", o->name,
		      want[r].deg);
		FILE *f = tmpfile();
		CHECK(f && !platform_write_xml(&t, f), "%s: platform XML", o->name);
		if (f)
			fclose(f);
	}
}

/* The chance that member j of 8 (2 of 16 experts each) gets a token whose 3 experts are drawn among those of 2 of
   4 groups of 4, by counting every draw (6 group pairs x 56 expert triples, equally likely). */
static double routed_brute(int j)
{
	int hit = 0, all = 0;
	for (int g1 = 0; g1 < 4; g1++)
		for (int g2 = g1 + 1; g2 < 4; g2++)
			for (int a = 0; a < 8; a++)
				for (int b = a + 1; b < 8; b++)
					for (int d = b + 1; d < 8; d++) {
						int x[3] = {a, b, d}, h = 0;
						for (int i = 0; i < 3; i++) {
							int e =
							    x[i] < 4 ? g1 * 4 + x[i] : g2 * 4 + x[i] - 4; /* expert */
							h |= e / 2 == j;
						}
						hit += h;
						all++;
					}
	return (double)hit / all;
}

/* A routed all-to-all (an MoE dispatch) in one switch node: member i sends member j the S / topk x P(j) bytes of
   the tokens that reach j, as one flow of its 7 peers' share to i + 1 (every port carries the same), so the
   bandwidth term is 7 S / topk P / port; P from counting every draw. */
static void routed_closed_form(const struct topo *t, const int *m)
{
	char why[512];
	struct coll_plan p;
	struct tr_route r = {3, 16, 4, 2};
	double S = 96e6, P = routed_brute(0);
	for (int j = 1; j < 8; j++)
		CHECK(fabs(routed_brute(j) - P) < 1e-15, "member %d's chance %.15g, member 0's %.15g", j,
		      routed_brute(j), P);
	CHECK(fabs(P - 0.5 * (1 - 20.0 / 56)) < 1e-15,
	      "a member's chance of a token %.15g: its group drawn (3 of 6 "
	      "pairs), then not both of its 2 missed (C(6,3) / C(8,3))",
	      P);
	CHECK(!coll_plan(t, CO_ALLTOALL, coll_algo_find("direct"), S, &r, m, 8, 1, &p, why, sizeof why), "%s", why);
	double want = 7 * S / 3 * P / t->port_bw;
	CHECK(fabs(p.bw_s - want) <= 1e-12 * want, "routed all-to-all bandwidth term %.12g s, closed form %.12g s",
	      p.bw_s, want);
	CHECK(p.nphases == 1 && p.nflows[0] == 8, "a routed all-to-all of 8 in a switch is 8 flows, got %d",
	      p.nflows[0]);
	for (int i = 0; i < p.nflows[0]; i++)
		CHECK(fabs(p.flows[0][i].bytes - 7 * S / 3 * P) < 1e-6 * S, "flow %d carries %g B", i,
		      p.flows[0][i].bytes);
	coll_plan_free(&p);
	struct coll_plan q;
	CHECK(!coll_plan(t, CO_ALLTOALL, coll_algo_find("direct"), S, NULL, m, 8, 0, &q, why, sizeof why), "%s", why);
	CHECK(p.bw_s < q.bw_s, "the dispatch (%g s) moves less than the plain all-to-all (%g s)", p.bw_s, q.bw_s);
	/* the largest routing a trace may give (C(4096, 2048) overflows a double: log space) */
	struct tr_route big = {256, 65536, 4096, 2048};
	CHECK(!coll_plan(t, CO_ALLTOALL, coll_algo_find("direct"), S, &big, m, 8, 1, &p, why, sizeof why), "%s", why);
	CHECK(isfinite(p.bw_s) && p.bw_s > 0 && p.bw_s <= q.bw_s, "the largest routing: bandwidth term %g s", p.bw_s);
	coll_plan_free(&p);
}

static void closed_forms(const struct arch_chip *c)
{
	char why[512];
	struct topo t;
	struct coll_plan p;
	int *m = iota(8);
	CHECK(!platform_topo(c, 8, 0, &t, why, sizeof why), "%s", why);
	if (t.ops == topo_find("switch")) {
		const struct arch_link *l = arch_find_link(c, c->sys.link);
		double B = arch_link_bw(l) * (double)l->count * c->model.link_eff, S = 1 << 30;
		CHECK(!coll_plan(&t, CO_ALLREDUCE, coll_algo_find("ring"), S, NULL, m, 8, 1, &p, why, sizeof why), "%s",
		      why);
		CHECK(p.proto == PR_SIMPLE, "1 GiB should use Simple, got %s", coll_proto_name(p.proto));
		double want = 2.0 * 7 / 8 * S / B;
		CHECK(fabs(p.bw_s - want) <= 1e-12 * want, "ring bandwidth term %.12g s, closed form %.12g s", p.bw_s,
		      want);
		CHECK(p.nphases == 1 && p.nflows[0] == 8, "a ring of 8 in a switch is 8 flows, got %d", p.nflows[0]);
		for (int i = 0; i < p.nflows[0]; i++)
			CHECK(fabs(p.flows[0][i].bytes - 2.0 * 7 / 8 * S) < 1, "flow %d carries %g B", i,
			      p.flows[0][i].bytes);
		coll_plan_free(&p);
		if (!t.nvls)
			CHECK(coll_plan(&t, CO_ALLREDUCE, coll_algo_find("nvls"), S, NULL, m, 8, 0, &p, why,
			                sizeof why) &&
			          strstr(why, "nvls"),
			      "nvls without in-switch reduction must be refused (%s)", why);
		else {
			/* NCCL's NVLS model from the config's own figures: the port's usable bandwidth x
			   system.nvls_efficiency x (system.nvls_channels - 1) / system.nvls_channels */
			double ch = (double)c->sys.nvls_channels, bn = B * c->sys.nvls_eff * (ch - 1) / ch;
			CHECK(
			    !coll_plan(&t, CO_ALLREDUCE, coll_algo_find("nvls"), S, NULL, m, 8, 0, &p, why, sizeof why),
			    "%s", why);
			CHECK(fabs(p.bw_s - S / bn) <= 1e-12 * S / bn,
			      "nvls bandwidth term %.12g s, closed form %.12g s", p.bw_s, S / bn);
		}
	}
	CHECK(coll_plan(&t, CO_ALLREDUCE, coll_algo_find("tree"), 1e6, NULL, m, 8, 0, &p, why, sizeof why) != 0,
	      "a tree inside one node must be refused");
	CHECK(fabs(coll_busbw_factor(CO_ALLREDUCE, 8) - 1.75) < 1e-15, "allreduce busbw factor");
	CHECK(fabs(coll_busbw_factor(CO_ALLGATHER, 8) - 0.875) < 1e-15, "allgather busbw factor");
	/* oneshot: each member's buffer to the 7 others, through its switch port */
	int one = coll_algo_find("oneshot");
	if (t.ops == topo_find("switch")) {
		CHECK(!coll_plan(&t, CO_ALLREDUCE, one, 1e6, NULL, m, 8, 0, &p, why, sizeof why), "%s", why);
		double want = 7 * 1e6 / t.port_bw;
		CHECK(fabs(p.bw_s - want) <= 1e-12 * want, "oneshot bandwidth term %.12g s, closed form %.12g s",
		      p.bw_s, want);
	}
	/* shift: each member's buffer to the next member alone, through its switch port (by the link's figures,
	   not the topology's field), one flow a member; no other algorithm serves it */
	if (t.ops == topo_find("switch")) {
		const struct arch_link *l = arch_find_link(c, c->sys.link);
		double B = arch_link_bw(l) * (double)l->count * c->model.link_eff, S = 1 << 24;
		CHECK(!coll_plan(&t, CO_SHIFT, COLL_AUTO, S, NULL, m, 8, 1, &p, why, sizeof why), "%s", why);
		CHECK(p.algo == coll_algo_find("ring") && p.proto == PR_SIMPLE, "a 16 MiB shift runs as ring/Simple");
		CHECK(fabs(p.bw_s - S / B) <= 1e-12 * S / B, "shift bandwidth term %.12g s, closed form %.12g s",
		      p.bw_s, S / B);
		CHECK(fabs(p.bus_bytes - S) < 1, "a shift's bus bytes are its buffer: %g", p.bus_bytes);
		CHECK(p.nphases == 1 && p.nflows[0] == 8, "a shift of 8 is 8 flows, got %d", p.nflows[0]);
		for (int i = 0; i < p.nflows[0]; i++)
			CHECK(p.flows[0][i].dst == (p.flows[0][i].src + 1) % 8 && fabs(p.flows[0][i].bytes - S) < 1,
			      "flow %d: %d to %d, %g B", i, p.flows[0][i].src, p.flows[0][i].dst, p.flows[0][i].bytes);
		coll_plan_free(&p);
		CHECK(coll_plan(&t, CO_SHIFT, coll_algo_find("direct"), S, NULL, m, 8, 0, &p, why, sizeof why) != 0,
		      "direct does not serve a shift");
	}
	if (t.ops == topo_find("switch"))
		routed_closed_form(&t, m);
	double prev = 0;
	for (double S = 8; S <= 16.0 * (1 << 30); S *= 4) {
		CHECK(!coll_plan(&t, CO_ALLREDUCE, COLL_AUTO, S, NULL, m, 8, 0, &p, why, sizeof why), "%s", why);
		CHECK(p.algo != one, "algo=auto picked oneshot, which runs by name only");
		double tt = p.lat_s + p.bw_s;
		CHECK(tt >= prev, "%g B takes %g s, less than a smaller message (%g s)", S, tt, prev);
		prev = tt;
	}
	free(m);
}

/* system.nic_latency against NCCL's tuning formula (interLat = hwLat[NET] + L, + L again for Simple) */
static void plugin_latency(const struct arch_chip *c)
{
	if (c->sys.nics_per_device <= 0)
		return;
	char why[512];
	struct topo t0, t1;
	struct coll_plan p0, p1;
	int n = 2 * (int)c->sys.devices_per_node, nodes = 2;
	int *m = iota(n);
	CHECK(!platform_topo(c, n, 0, &t0, why, sizeof why), "%s", why);
	t0.net_plugin_s = 0;
	t1 = t0;
	t1.net_plugin_s = 35e-6;
	const char *algos[] = {"ring", "tree"};
	const int net_steps[] = {2 * (nodes - 1), 2 * 1 /* ceil(log2 2) */};
	const double sizes[] = {4096, 1 << 20, 1 << 30};
	int simple = 0, other = 0;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++) {
			double S = sizes[j];
			int a = coll_algo_find(algos[i]);
			CHECK(!coll_plan(&t0, CO_ALLREDUCE, a, S, NULL, m, n, 0, &p0, why, sizeof why), "%s", why);
			CHECK(!coll_plan(&t1, CO_ALLREDUCE, a, S, NULL, m, n, 0, &p1, why, sizeof why), "%s", why);
			if (p0.proto != p1.proto) /* the plugin's latency may move the pick to another protocol */
				continue;
			*(p1.proto == PR_SIMPLE ? &simple : &other) += 1;
			double want = net_steps[i] * 35e-6 * (p1.proto == PR_SIMPLE ? 2 : 1);
			/* NCCL's plateau of a ring: a Simple all-reduce across nodes of at least nRanks/16 x 64 KiB
			   takes 1.9 times its whole latency, the plugin's included */
			if (i == 0 && p1.proto == PR_SIMPLE && S >= n / 16.0 * 65536)
				want *= 1.9;
			CHECK(fabs(p1.lat_s - p0.lat_s - want) <= 1e-12,
			      "%s %g B on %d nodes (%s): latency %.9g s, %.9g s without the plugin's, want +%.9g s",
			      algos[i], S, nodes, coll_proto_name(p1.proto), p1.lat_s, p0.lat_s, want);
			CHECK(p1.bw_s == p0.bw_s, "%s %g B: the plugin's latency moved the bandwidth term", algos[i],
			      S);
		}
	CHECK(simple > 0 && other > 0, "the plugin's latency checked on %d Simple and %d LL/LL128 plans", simple,
	      other);
	free(m);
}

/* NCCL's refinements across nodes against its formula with its published constants (src/graph/tuning.cc, the
   commit sim/cluster/coll/common.c cites: ring base latency LL 6.6, Simple 8.4 us; NVLink hop LL 0.47, Simple 3.4;
   network hop LL 2.7, Simple 9.6): a ring all-reduce on 2 nodes of k takes base + (2(n-1) - 2)
   x intra + 2 x net, its LL steps inside a node 1.8 times the NVLink hop, its Simple latency 1.9 times the whole
   for nRanks/16 x 64 KiB or more. The pipeline fill is taken out (a chunk of ~0 bytes) and the plugin's latency
   and model.coll_latency_scale set to 0 and 1. */
static void nccl_refinements(const struct arch_chip *c)
{
	if (c->sys.nics_per_device <= 0 || c->sys.devices_per_node < 2)
		return;
	char why[512];
	struct topo t;
	struct coll_plan p;
	int k = (int)c->sys.devices_per_node, n = 2 * k;
	int *m = iota(n);
	CHECK(!platform_topo(c, n, 0, &t, why, sizeof why), "%s", why);
	if (t.intra_hw != HW_NVLINK) {
		free(m);
		return;
	}
	t.net_plugin_s = 0;
	t.lat_scale = 1;
	t.chunk = 1e-30;
	int ring = coll_algo_find("ring");
	const struct {
		double S, base, intra, net;
		enum coll_proto proto;
		double plateau;
	} cases[] = {
	    {4096, 6.6, 1.8 * 0.47, 2.7, PR_LL, 1},
	    {1 << 30, 8.4, 3.4, 9.6, PR_SIMPLE, 1.9},
	};
	for (int i = 0; i < 2; i++) {
		CHECK(!coll_plan(&t, CO_ALLREDUCE, ring, cases[i].S, NULL, m, n, 0, &p, why, sizeof why), "%s", why);
		CHECK(p.proto == cases[i].proto, "ring all-reduce of %g B on 2 nodes runs %s, want %s", cases[i].S,
		      coll_proto_name(p.proto), coll_proto_name(cases[i].proto));
		if (p.proto != cases[i].proto)
			continue;
		int steps = 2 * (n - 1), inter = 2;
		double want =
		    (cases[i].base + (steps - inter) * cases[i].intra + inter * cases[i].net) * cases[i].plateau * 1e-6;
		CHECK(fabs(p.lat_s - want) <= 1e-12,
		      "ring %s all-reduce of %g B on 2 nodes of %d: latency %.9g s, want %.9g s",
		      coll_proto_name(p.proto), cases[i].S, k, p.lat_s, want);
	}
	free(m);
}

int main(int argc, char **argv)
{
	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: test_coll ROOT CONFIG RANKS ALGO BYTES [OP]\n");
		return 2;
	}
	char path[1024], why[4096], text[512];
	snprintf(path, sizeof path, "%s/%s", argv[1], argv[2]);
	struct arch_error err;
	struct arch_chip *c = arch_load(path, NULL, 0, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		return 1;
	}
	algo_table();
	topo_table();
	closed_forms(c);
	plugin_latency(c);
	nccl_refinements(c);
	int n = atoi(argv[3]);
	/* OP may carry keys, comma-separated (alltoall,topk=8,experts=256: an MoE dispatch) */
	char op[256];
	snprintf(op, sizeof op, "%s", argc == 7 ? argv[6] : "allreduce");
	for (char *q = op; *q; q++)
		*q = *q == ',' ? ' ' : *q;
	snprintf(text, sizeof text, "simtrace 1\nranks %d\ncoll op=%s comm=world bytes=%s algo=%s\n", n, op, argv[5],
	         argv[4]);
	struct trace *t = tr_parse_string(text, "test.trace", why, sizeof why);
	CHECK(t != NULL, "%s", why);
	if (!t)
		return 1;
	struct topo tp;
	struct coll_plan p;
	int *m = iota(n);
	CHECK(!platform_topo(c, n, 0, &tp, why, sizeof why), "%s", why);
	struct tr_cursor *cur = tr_cursor_new(t, 0);
	struct tr_event ev;
	CHECK(tr_next(cur, &ev, why, sizeof why) == 1, "%s", why);
	tr_cursor_free(cur);
	int algo = coll_algo_find(argv[4]);
	CHECK(algo != COLL_UNKNOWN, "no algorithm %s", argv[4]);
	CHECK(ev.algo == (algo == COLL_AUTO ? TR_ALGO_AUTO : 0), "the trace keeps algo=%s", argv[4]);
	CHECK(!coll_plan(&tp, ev.coll, algo, ev.bytes, &ev.route, m, n, 0, &p, why, sizeof why), "%s", why);
	struct rp_options o = {0, 1, 0, 0, 0, 0, 0, 0, 0};
	struct rp_result r;
	int rc = rp_run(c, t, &o, &r, why, sizeof why);
	CHECK(rc == 0, "%s", why);
	double want = p.lat_s + p.bw_s;
	CHECK(fabs(r.time_s - want) <= 1e-9 * want, "replay %.12g s, model %.12g s (rel %.3g)", r.time_s, want,
	      (r.time_s - want) / want);
	printf("%s %d ranks %s %s %s: %s/%s replay %.9g s, model %.9g s\n", argv[2], n, argv[4], argv[5], op,
	       coll_algo_name(p.algo), coll_proto_name(p.proto), r.time_s, want);
	rp_result_free(&r);
	free(m);
	tr_free(t);
	arch_free(c);
	return failures ? 1 : 0;
}
