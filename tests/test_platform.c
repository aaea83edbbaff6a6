/*
 * test_platform.c -- the platform the replay builds (platform_build: one
 * zone, routes computed by platform_route) against the XML of
 * platform_write_xml as SimGrid itself resolves it (a zone per node, a
 * fabric zone, zone routes between nodes): between every two devices, the
 * same links in the same order, with the same bandwidths, latencies and
 * sharing. SimGrid runs one platform per process, so each is made in a
 * child process that writes every route to a file; the files must be equal.
 * usage: test_platform ROOT CONFIG RANKS [OVERSUBSCRIPTION]
 */
#include "check.h"
#include "platform.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/config.h>
#include <xbt/dynar.h>
#include <xbt/log.h>

static void engine(void)
{
	int argc = 1;
	char arg0[] = "test_platform", *argv[] = {arg0, NULL};
	simgrid_init(&argc, argv);
	/* the replay's settings (sim/cluster/replay.c, engine_init) */
	sg_cfg_set_string("network/model", "CM02");
	sg_cfg_set_boolean("network/crosstraffic", "no");
	sg_cfg_set_double("network/TCP-gamma", 0.0);
	sg_cfg_set_string("host/model", "ptask_L07");
	xbt_log_control_set("root.thres:critical");
}

/* Every route between two devices, one line each. */
static void dump(FILE *out, int n, sg_host_t *h)
{
	xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++) {
			if (a == b)
				continue;
			xbt_dynar_reset(links);
			sg_host_get_route(h[a], h[b], links);
			fprintf(out, "%s -> %s (latency %.17g):", sg_host_get_name(h[a]), sg_host_get_name(h[b]),
			        sg_host_get_route_latency(h[a], h[b]));
			for (unsigned long i = 0; i < xbt_dynar_length(links); i++) {
				sg_link_t l = xbt_dynar_get_as(links, i, sg_link_t);
				fprintf(out, " %s/%.17g/%.17g/%s", sg_link_get_name(l), sg_link_get_bandwidth(l),
				        sg_link_get_latency(l), sg_link_is_shared(l) ? "shared" : "fatpipe");
			}
			fprintf(out, "\n");
		}
	xbt_dynar_free(&links);
}

struct dumpjob {
	FILE *out;
	int n;
	sg_host_t *h;
};

/* An actor: routes are asked once the engine runs (it seals the platform). */
static void dump_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct dumpjob *j = sg_actor_self_get_data();
	fprintf(j->out, "%zu links, %zu hosts\n", sg_link_count(), sg_host_count());
	dump(j->out, j->n, j->h);
}

/* In a child: makes the platform one way and writes its routes to path. */
static int child(const struct topo *t, int xml, const char *path)
{
	FILE *out = fopen(path, "w");
	if (!out)
		return 1;
	engine();
	sg_host_t *h = calloc((size_t)t->ranks, sizeof *h);
	if (!h)
		return 1;
	if (xml) {
		char xp[] = "/tmp/test-platform-XXXXXX.xml";
		int fd = mkstemps(xp, 4);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f || platform_write_xml(t, f) || fclose(f))
			return 1;
		simgrid_load_platform(xp);
		unlink(xp);
		for (int i = 0; i < t->ranks; i++) {
			char name[32];
			snprintf(name, sizeof name, "dev%d", i);
			h[i] = sg_host_by_name(name);
		}
	} else {
		char why[512];
		struct platform *p = platform_new(t);
		if (!p || platform_build(p, h, why, sizeof why)) {
			fprintf(stderr, "platform_build: %s\n", p ? why : "out of memory");
			return 1;
		}
		/* p stays: the zone routes through it until the process ends */
	}
	struct dumpjob j = {out, t->ranks, h};
	sg_actor_t a = sg_actor_init("dump", h[0]);
	sg_actor_set_data(a, &j);
	sg_actor_start(a, dump_main, 0, NULL);
	simgrid_run();
	return fclose(out) ? 1 : 0;
}

static int run_child(const struct topo *t, int xml, const char *path)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(child(t, xml, path));
	int st = 0;
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	/* rpn=N: N ranks on each node (sim run --ranks-per-node), the node's other devices idle */
	int rpn = 0;
	if (argc >= 5 && !strncmp(argv[argc - 1], "rpn=", 4))
		rpn = atoi(argv[--argc] + 4);
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: test_platform ROOT CONFIG RANKS [OVERSUBSCRIPTION] [rpn=N]\n");
		return 2;
	}
	char path[1024], why[512];
	snprintf(path, sizeof path, "%s/%s", argv[1], argv[2]);
	struct arch_error err;
	struct arch_chip *c = arch_load(path, NULL, 0, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		return 1;
	}
	struct topo t;
	int n = atoi(argv[3]);
	CHECK(!platform_topo(c, n, rpn, &t, why, sizeof why), "%s", why);
	if (argc == 5 && t.nodes > 1)
		t.uplink_bw = t.nic_bw * t.node_devices / atof(argv[4]); /* all the node's NICs, in use or not */
	if (rpn) {
		/* the placement: rpn ranks per node, the node's links as it has them with all its devices */
		struct topo full;
		CHECK(!platform_topo(c, n, 0, &full, why, sizeof why), "%s", why);
		CHECK(t.dpn == rpn && t.node_devices == full.dpn && t.nodes == (n + rpn - 1) / rpn,
		      "rpn=%d: %d ranks per node of %d, %d nodes", rpn, t.dpn, t.node_devices, t.nodes);
		CHECK(t.port_bw == full.port_bw && t.pair_bw == full.pair_bw && t.nic_bw == full.nic_bw,
		      "rpn=%d: links %g %g %g, with every device %g %g %g", rpn, t.port_bw, t.pair_bw, t.nic_bw,
		      full.port_bw, full.pair_bw, full.nic_bw);
		CHECK(platform_ranks_per_node(c, full.dpn + 1, why, sizeof why) && strstr(why, "expected 1 to"),
		      "more ranks per node than devices: %s", why);
	}

	/* the routes as platform_route gives them */
	struct platform *p = platform_new(&t);
	CHECK(p != NULL, "platform_new");
	for (int a = 0; p && a < n; a++)
		for (int b = 0; b < n; b++) {
			if (a == b)
				continue;
			struct phop hops[PLATFORM_MAX_HOPS];
			int k = platform_route(p, a, b, hops);
			CHECK(k >= 1 && k <= PLATFORM_MAX_HOPS, "%d -> %d: %d hops", a, b, k);
			for (int i = 0; i < k; i++)
				CHECK(hops[i].link >= 0 && hops[i].link < p->nlinks &&
				          (hops[i].dir == PH_BOTH) == p->links[hops[i].link].fatpipe,
				      "%d -> %d: hop %d", a, b, i);
		}
	platform_free(p);

	/* SimGrid's routes, both ways */
	char fx[] = "/tmp/test-platform-xml-XXXXXX", fb[] = "/tmp/test-platform-build-XXXXXX";
	int dx = mkstemp(fx), db = mkstemp(fb);
	CHECK(dx >= 0 && db >= 0, "temporary files");
	if (dx >= 0 && db >= 0) {
		close(dx);
		close(db);
		CHECK(!run_child(&t, 1, fx), "the XML platform failed");
		CHECK(!run_child(&t, 0, fb), "platform_build failed");
		FILE *x = fopen(fx, "r"), *b = fopen(fb, "r");
		char lx[8192], lb[8192];
		int line = 0, routes = 0;
		while (x && b) {
			char *gx = fgets(lx, sizeof lx, x), *gb = fgets(lb, sizeof lb, b);
			line++;
			if (!gx || !gb) {
				CHECK(!gx && !gb, "line %d: one file ends first", line);
				break;
			}
			if (line == 1) /* link and host counts: the XML has routers and zones too */
				continue;
			routes++;
			if (strcmp(lx, lb)) {
				CHECK(0, "line %d differs:\n  XML:   %s  build: %s", line, lx, lb);
				break;
			}
		}
		CHECK(routes == n * (n - 1), "%d routes compared, want %d", routes, n * (n - 1));
		if (x)
			fclose(x);
		if (b)
			fclose(b);
		unlink(fx);
		unlink(fb);
	}
	printf("%s, %d ranks%s%s%s: %d checks, %d failed\n", argv[2], n, argc == 5 ? ", oversubscription " : "",
	       argc == 5 ? argv[4] : "", rpn ? ", ranks per node set" : "", checks, fails);
	arch_free(c);
	return fails != 0;
}
