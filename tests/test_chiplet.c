/*
 * test_chiplet.c -- the chiplet terms of the device model point the right way
 * and have a sensible size: h100.cfg against the same resources split into 2
 * and 4 dies (configs/hypothetical/h100_{2,4}chiplet.cfg), for a compute-bound
 * GEMM, a memory-bound elementwise op, FlashAttention and decode attention.
 *
 *  - a monolithic chip is never slower than its chiplet split;
 *  - the gap shrinks (never grows) as dies.d2d_bandwidth grows, and is gone
 *    with a very fast, zero-latency link;
 *  - 4 dies pay at least what 2 pay when each die has the same die-to-die
 *    bandwidth (a 2 x 2 mesh die has two links of half the bandwidth);
 *  - d2d latency matters for small, latency-bound ops and little for big ones;
 *  - dies.count = 1 gives exactly the monolithic answer.
 * It prints the gaps it checks (the numbers docs/dse.md quotes).
 * usage: test_chiplet ROOT
 */
#include "check.h"
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *root;

/* Time of op on configs/name with up to two --set overrides (NULL = none); -1 on error. */
static double t_of(const char *name, const char *set1, const char *set2, const char *line)
{
	char path[512];
	snprintf(path, sizeof path, "%s/configs/%s", root, name);
	const char *sets[2];
	int n = 0;
	if (set1)
		sets[n++] = set1;
	if (set2)
		sets[n++] = set2;
	struct arch_error err;
	struct arch_chip *c = arch_load(path, sets, n, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		fails++;
		return -1;
	}
	struct op op;
	struct dm_result r;
	char why[256];
	double t = -1;
	if (op_parse(line, NULL, &op, why, sizeof why) || dm_predict(c, &op, &r, NULL, why, sizeof why)) {
		printf("FAIL %s on %s: %s\n", line, name, why);
		fails++;
	} else
		t = r.time_s;
	arch_free(c);
	return t;
}

static const char *const ops[] = {
    "gemm m=8192 n=8192 k=8192 dtype=bf16",                            /* compute-bound */
    "elem op=add n=268435456 dtype=bf16",                              /* memory-bound, 1.6 GB */
    "attn b=8 h=16 sq=4096 skv=4096 d=128 dtype=bf16 impl=flash3",     /* compute-bound attention */
    "attn b=64 h=32 hkv=8 sq=1 skv=8192 d=128 dtype=bf16 impl=decode", /* KV-cache-bound attention */
};
#define NOPS (int)(sizeof ops / sizeof ops[0])
static const double bws[] = {0.1, 0.2, 0.5, 1, 2, 5, 10, 20}; /* TB/s per direction per die pair */
#define NBW (int)(sizeof bws / sizeof bws[0])

static const char *const chips[2] = {"hypothetical/h100_2chiplet.cfg", "hypothetical/h100_4chiplet.cfg"};

int main(int argc, char **argv)
{
	root = argc > 1 ? argv[1] : ".";
	char set[128], set4[128];
	printf("gap = chiplet time / h100.cfg time - 1; dies.d2d_latency 20 ns\n");
	for (int o = 0; o < NOPS; o++) {
		double mono = t_of("h100.cfg", NULL, NULL, ops[o]);
		printf("%s: h100 %.2f us\n", ops[o], mono * 1e6);
		/* one die: exactly the monolithic answer */
		double one = t_of(chips[0], "dies.count=1", NULL, ops[o]);
		CHECK(one == mono, "%s: dies.count=1 gives %.6g s, h100.cfg %.6g s", ops[o], one, mono);
		double gap[2][NBW], gap_eq4[NBW];
		for (int d = 0; d < 2; d++) {
			printf("  %-31s", chips[d] + 13);
			for (int b = 0; b < NBW; b++) {
				snprintf(set, sizeof set, "dies.d2d_bandwidth=%gTB/s", bws[b]);
				double t = t_of(chips[d], set, NULL, ops[o]);
				gap[d][b] = t / mono - 1;
				printf(" %g:%+.1f%%", bws[b], gap[d][b] * 100);
				CHECK(t >= mono * (1 - 1e-9),
				      "%s on %s at %g TB/s: %.6g s is faster than monolithic %.6g s", ops[o], chips[d],
				      bws[b], t, mono);
				if (b > 0)
					CHECK(gap[d][b] <= gap[d][b - 1] + 1e-9,
					      "%s on %s: the gap grows from %.4f to %.4f as d2d goes %g -> %g TB/s",
					      ops[o], chips[d], gap[d][b - 1], gap[d][b], bws[b - 1], bws[b]);
			}
			/* a very fast link with no latency: the chiplet split costs nothing */
			double inf = t_of(chips[d], "dies.d2d_bandwidth=1000TB/s", "dies.d2d_latency=0ns", ops[o]);
			printf("  inf/0ns:%+.2f%%\n", (inf / mono - 1) * 100);
			CHECK(inf / mono - 1 < 0.005, "%s on %s: %.2f%% slower with an unlimited d2d link", ops[o],
			      chips[d], (inf / mono - 1) * 100);
		}
		/* 4 dies whose two links each carry half of what the pair's one link does: equal d2d per die */
		printf("  %-31s", "4chiplet, same d2d per die");
		for (int b = 0; b < NBW; b++) {
			snprintf(set4, sizeof set4, "dies.d2d_bandwidth=%gTB/s", bws[b] / 2);
			gap_eq4[b] = t_of(chips[1], set4, NULL, ops[o]) / mono - 1;
			printf(" %g:%+.1f%%", bws[b], gap_eq4[b] * 100);
			CHECK(gap_eq4[b] >= gap[0][b] - 1e-9, "%s at %g TB/s per die: 4 dies %+.2f%% < 2 dies %+.2f%%",
			      ops[o], bws[b], gap_eq4[b] * 100, gap[0][b] * 100);
		}
		printf("\n");
	}

	/* latency: a small op feels d2d_latency, a big one hardly */
	const char *small = "elem op=add n=65536 dtype=bf16", *big = "elem op=add n=268435456 dtype=bf16";
	const double lats[] = {0, 20, 50, 100, 200};
	for (int d = 0; d < 2; d++) {
		double ms = t_of("h100.cfg", NULL, NULL, small), mb = t_of("h100.cfg", NULL, NULL, big);
		double prev = -1, gs = 0, gb = 0;
		printf("latency, %s (small %s / big %s):", chips[d] + 13, small + 8, big + 8);
		for (int l = 0; l < 5; l++) {
			snprintf(set, sizeof set, "dies.d2d_latency=%gns", lats[l]);
			gs = t_of(chips[d], set, "dies.d2d_bandwidth=20TB/s", small) / ms - 1;
			gb = t_of(chips[d], set, "dies.d2d_bandwidth=20TB/s", big) / mb - 1;
			printf(" %gns:%+.1f%%/%+.2f%%", lats[l], gs * 100, gb * 100);
			CHECK(gs >= prev - 1e-12, "small op: the gap shrinks as the latency grows");
			prev = gs;
		}
		printf("\n");
		CHECK(gs > 0.05, "%s: 200 ns per crossing costs a 64 Ki-element op only %.2f%%", chips[d], gs * 100);
		CHECK(gb < gs / 5, "%s: the big op pays %.2f%%, not much less than the small one's %.2f%%", chips[d],
		      gb * 100, gs * 100);
	}
	/* at the same per-link figures the 4-die mesh crosses more often: a latency-bound op pays more */
	double ms = t_of("h100.cfg", NULL, NULL, small);
	double g2 = t_of(chips[0], NULL, NULL, small) / ms - 1, g4 = t_of(chips[1], NULL, NULL, small) / ms - 1;
	printf("latency-bound op at the shipped 5 TB/s, 20 ns: 2 dies %+.2f%%, 4 dies %+.2f%%\n", g2 * 100, g4 * 100);
	CHECK(g4 > g2 && g2 > 0, "small op: 4 dies %+.2f%% should pay more than 2 dies %+.2f%% > 0", g4 * 100,
	      g2 * 100);

	printf("%s (%d failures)\n", fails ? "FAIL" : "ok", fails);
	return fails ? 1 : 0;
}
