/*
 * test_coll.c -- the collective model against closed forms, and the
 * replay (SimGrid) against the model.
 *
 * usage: test_coll ROOT CONFIG RANKS ALGO BYTES
 *
 * 1. The table of algorithms (names unique and found by name). Closed
 *    forms, no SimGrid: a ring all-reduce's bandwidth term is
 *    2(n-1)/n x S / B with B the device's switch port (links x per-link
 *    bandwidth x model.link_efficiency); bus bandwidth factors; a forced
 *    algorithm the topology cannot run is refused; bigger messages never
 *    finish sooner; oneshot's bandwidth term, and auto never picks it.
 * 2. One replay of `coll op=allreduce comm=world bytes=BYTES algo=ALGO` on
 *    RANKS ranks: the step time equals the plan's latency + bandwidth terms
 *    to 1e-9 (SimGrid's flows on an idle platform reproduce the model
 *    exactly; one replay per process, as SimGrid allows).
 */
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

static void closed_forms(const struct arch_chip *c)
{
	char why[512];
	struct topo t;
	struct coll_plan p;
	int *m = iota(8);
	CHECK(!platform_topo(c, 8, &t, why, sizeof why), "%s", why);
	if (t.intra == TI_SWITCH) {
		const struct arch_link *l = arch_find_link(c, c->sys.link);
		double B = arch_link_bw(l) * (double)l->count * c->model.link_eff, S = 1 << 30;
		CHECK(!coll_plan(&t, CO_ALLREDUCE, coll_algo_find("ring"), S, m, 8, 1, &p, why, sizeof why), "%s", why);
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
			CHECK(coll_plan(&t, CO_ALLREDUCE, coll_algo_find("nvls"), S, m, 8, 0, &p, why, sizeof why) &&
			          strstr(why, "nvls"),
			      "nvls without in-switch reduction must be refused (%s)", why);
	}
	CHECK(coll_plan(&t, CO_ALLREDUCE, coll_algo_find("tree"), 1e6, m, 8, 0, &p, why, sizeof why) != 0,
	      "a tree inside one node must be refused");
	CHECK(fabs(coll_busbw_factor(CO_ALLREDUCE, 8) - 1.75) < 1e-15, "allreduce busbw factor");
	CHECK(fabs(coll_busbw_factor(CO_ALLGATHER, 8) - 0.875) < 1e-15, "allgather busbw factor");
	/* oneshot: each member's buffer to the 7 others, through its switch port */
	int one = coll_algo_find("oneshot");
	if (t.intra == TI_SWITCH) {
		CHECK(!coll_plan(&t, CO_ALLREDUCE, one, 1e6, m, 8, 0, &p, why, sizeof why), "%s", why);
		double want = 7 * 1e6 / t.port_bw;
		CHECK(fabs(p.bw_s - want) <= 1e-12 * want, "oneshot bandwidth term %.12g s, closed form %.12g s", p.bw_s,
		      want);
	}
	double prev = 0;
	for (double S = 8; S <= 16.0 * (1 << 30); S *= 4) {
		CHECK(!coll_plan(&t, CO_ALLREDUCE, COLL_AUTO, S, m, 8, 0, &p, why, sizeof why), "%s", why);
		CHECK(p.algo != one, "algo=auto picked oneshot, which runs by name only");
		double tt = p.lat_s + p.bw_s;
		CHECK(tt >= prev, "%g B takes %g s, less than a smaller message (%g s)", S, tt, prev);
		prev = tt;
	}
	free(m);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: test_coll ROOT CONFIG RANKS ALGO BYTES\n");
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
	closed_forms(c);
	int n = atoi(argv[3]);
	snprintf(text, sizeof text, "simtrace 1\nranks %d\ncoll op=allreduce comm=world bytes=%s algo=%s\n", n, argv[5],
	         argv[4]);
	struct trace *t = tr_parse_string(text, "test.trace", why, sizeof why);
	CHECK(t != NULL, "%s", why);
	if (!t)
		return 1;
	struct topo tp;
	struct coll_plan p;
	int *m = iota(n);
	CHECK(!platform_topo(c, n, &tp, why, sizeof why), "%s", why);
	struct tr_cursor *cur = tr_cursor_new(t, 0);
	struct tr_event ev;
	CHECK(tr_next(cur, &ev, why, sizeof why) == 1, "%s", why);
	tr_cursor_free(cur);
	int algo = coll_algo_find(argv[4]);
	CHECK(algo != COLL_UNKNOWN, "no algorithm %s", argv[4]);
	CHECK(ev.algo == (algo == COLL_AUTO ? TR_ALGO_AUTO : 0), "the trace keeps algo=%s", argv[4]);
	CHECK(!coll_plan(&tp, CO_ALLREDUCE, algo, ev.bytes, m, n, 0, &p, why, sizeof why), "%s", why);
	struct rp_options o = {0, 1, 0, 0, 0, 0};
	struct rp_result r;
	int rc = rp_run(c, t, &o, &r, why, sizeof why);
	CHECK(rc == 0, "%s", why);
	double want = p.lat_s + p.bw_s;
	CHECK(fabs(r.time_s - want) <= 1e-9 * want, "replay %.12g s, model %.12g s (rel %.3g)", r.time_s, want,
	      (r.time_s - want) / want);
	printf("%s %d ranks %s %s: %s/%s replay %.9g s, model %.9g s\n", argv[2], n, argv[4], argv[5],
	       coll_algo_name(p.algo), coll_proto_name(p.proto), r.time_s, want);
	rp_result_free(&r);
	free(m);
	tr_free(t);
	arch_free(c);
	return failures ? 1 : 0;
}
