/*
 * test_trace.c -- the `simtrace 1` trace: the minimal trace, layout
 * coordinates and communicator groups (against a brute-force scan), `on`
 * selectors, repeat and def/call counts, after=/id= resolution, scheduling
 * keys, stops at repeat iterations, and the canonical text of events parsing
 * back to the same events (the refusals: test_trace_bad.c).
 *
 * usage: test_trace TESTS_DIR
 */
#include "trace_test.h"

#include <time.h>

/* ---- the minimal trace ---- */

static void test_minimal(void)
{
	struct trace *t = parse("simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=1GiB\n");
	if (!t)
		return;
	CHECK(tr_ranks(t) == 8, "ranks %d", tr_ranks(t));
	for (int r = 0; r < 8; r++) {
		struct tr_event ev[4];
		char why[TR_MSG_MAX] = "";
		int n = expand(t, r, ev, 4, why, sizeof why);
		CHECK(n == 1, "rank %d: %d events (%s)", r, n, why);
		if (n != 1)
			continue;
		CHECK(ev[0].kind == TK_COLL && ev[0].coll == CO_ALLREDUCE && ev[0].algo == TR_ALGO_AUTO,
		      "rank %d: kind %d coll %d", r, ev[0].kind, ev[0].coll);
		CHECK(ev[0].bytes == 1073741824.0, "rank %d: bytes %.17g", r, ev[0].bytes);
		CHECK(ev[0].comm == 0 && !strcmp(tr_comm_name(t, ev[0].comm), "world"), "comm %d", ev[0].comm);
		CHECK(ev[0].line == 3 && ev[0].stream == 0 && ev[0].label == -1 && ev[0].nafter == 0,
		      "line %d stream %d label %d", ev[0].line, ev[0].stream, ev[0].label);
	}
	/* built-in names */
	static const char *const comms[] = {"world", "tp", "cp", "ep", "dp", "pp"};
	CHECK(tr_ncomms(t) == 6, "ncomms %d", tr_ncomms(t));
	for (int i = 0; i < 6; i++)
		CHECK(!strcmp(tr_comm_name(t, i), comms[i]) && tr_comm_line(t, i) == 0, "comm %d is %s", i,
		      tr_comm_name(t, i));
	CHECK(tr_nstreams(t) == 1 && !strcmp(tr_stream_name(t, 0), "0"), "stream 0");
	CHECK(!strcmp(tr_path(t), "t.trace"), "path %s", tr_path(t));
	CHECK(tr_dim_size(t, DIM_TP) == 1 && tr_coord(t, 5, DIM_PP) == 0, "no layout: dims of size 1");
	CHECK(tr_cursor_new(t, 8) == NULL && tr_cursor_new(t, -1) == NULL, "cursor for a rank out of range");
	CHECK(!strcmp(tr_kind_name(TK_DELAY), "delay") && !strcmp(tr_coll_name(CO_REDUCESCATTER), "reducescatter") &&
	          !strcmp(tr_algo_name(t, TR_ALGO_AUTO), "auto") && tr_nalgos(t) == 0 &&
	          !strcmp(tr_dim_name(DIM_EP), "ep"),
	      "enum names");
	tr_free(t);

	/* algo= names are kept as written (sim/cluster/coll.c knows which exist) */
	t = parse("simtrace 1\nranks 2\ncoll op=allreduce comm=world bytes=1 algo=star\n"
	          "coll op=allreduce comm=world bytes=1 algo=auto\ncoll op=allreduce comm=world bytes=1 algo=star\n");
	if (t) {
		struct tr_event ev[4];
		char why[TR_MSG_MAX] = "";
		int n = expand(t, 1, ev, 4, why, sizeof why);
		CHECK(n == 3 && ev[0].algo == 0 && ev[1].algo == TR_ALGO_AUTO && ev[2].algo == 0, "algo= indices (%s)",
		      why);
		CHECK(tr_nalgos(t) == 1 && !strcmp(tr_algo_name(t, 0), "star") && tr_algo_line(t, 0) == 3,
		      "algo= names: %d", tr_nalgos(t));
		tr_free(t);
	}

	/* comments, blank lines, tabs, CRLF; no trailing newline */
	t = parse("# a comment\n\n  simtrace 1   # the header\r\nranks\t2\r\n\tgemm m=1 n=1 k=1 dtype=fp16 # x=y\r\n"
	          "delay time=1us");
	if (t) {
		CHECK(count(t, 0) == 2 && count(t, 1) == 2, "comments and white space");
		tr_free(t);
	}
	/* an empty body is fine */
	t = parse("simtrace 1\nranks 3\n");
	if (t) {
		CHECK(count(t, 2) == 0, "no ops");
		tr_free(t);
	}
}

/* ---- layout and communicators ---- */

static void check_group(const struct trace *t, int comm, int rank, const int *want, int nwant)
{
	int m[2048], gid = -7;
	int n = tr_comm_group(t, comm, rank, m, 2048, &gid);
	int ok = n == nwant;
	for (int i = 0; ok && i < n && i < 2048; i++)
		ok = m[i] == want[i];
	CHECK(ok, "comm %s rank %d: size %d (want %d), first %d (want %d)", tr_comm_name(t, comm), rank, n, nwant,
	      n ? m[0] : -1, nwant ? want[0] : -1);
	CHECK(gid == (nwant ? want[0] : gid), "comm %s rank %d: group id %d", tr_comm_name(t, comm), rank, gid);
}

/* Every group of every communicator against a scan of all ranks by coordinates. */
static void brute_force_groups(const struct trace *t, const unsigned *dims_of_comm)
{
	int n = tr_ranks(t), want[256], got[256];
	for (int c = 1; c < tr_ncomms(t); c++) {
		if (!dims_of_comm[c])
			continue;
		for (int r = 0; r < n; r++) {
			int nw = 0;
			for (int q = 0; q < n; q++) {
				int same = 1;
				for (int d = 0; d < DIM_COUNT; d++)
					if (!(dims_of_comm[c] & (1u << d)) &&
					    tr_coord(t, q, (enum tr_dim)d) != tr_coord(t, r, (enum tr_dim)d))
						same = 0;
				if (same)
					want[nw++] = q;
			}
			int gid;
			int ng = tr_comm_group(t, c, r, got, 256, &gid);
			int ok = ng == nw && gid == want[0];
			for (int i = 0; ok && i < ng; i++)
				ok = got[i] == want[i];
			CHECK(ok, "comm %s rank %d: %d members, want %d", tr_comm_name(t, c), r, ng, nw);
		}
	}
}

static void test_layout(void)
{
	struct trace *t = parse("simtrace 1\nranks 1024\nlayout tp=8 pp=16 dp=8\ncomm dpp dims=dp,pp\n"
	                        "comm fixed ranks=0-7,12,9-9,3\n");
	if (!t)
		return;
	CHECK(tr_dim_size(t, DIM_TP) == 8 && tr_dim_size(t, DIM_PP) == 16 && tr_dim_size(t, DIM_DP) == 8 &&
	          tr_dim_size(t, DIM_CP) == 1 && tr_dim_size(t, DIM_EP) == 1,
	      "dim sizes");
	/* rank = tp + 8 * (dp + 8 * pp) */
	for (int r = 0; r < 1024; r += 37) {
		int tp = tr_coord(t, r, DIM_TP), dp = tr_coord(t, r, DIM_DP), pp = tr_coord(t, r, DIM_PP);
		CHECK(r == tp + 8 * (dp + 8 * pp) && tr_coord(t, r, DIM_CP) == 0, "rank %d: tp %d dp %d pp %d", r, tp,
		      dp, pp);
	}
	CHECK(tr_coord(t, 100, DIM_TP) == 4 && tr_coord(t, 100, DIM_DP) == 4 && tr_coord(t, 100, DIM_PP) == 1,
	      "rank 100");
	CHECK(tr_coord(t, 1023, DIM_PP) == 15 && tr_coord(t, 1023, DIM_TP) == 7, "rank 1023");
	int want[1024], n;
	for (n = 0; n < 8; n++)
		want[n] = 96 + n;
	check_group(t, 1 + DIM_TP, 100, want, 8);
	for (n = 0; n < 8; n++)
		want[n] = 68 + 8 * n;
	check_group(t, 1 + DIM_DP, 100, want, 8);
	for (n = 0; n < 16; n++)
		want[n] = 36 + 64 * n;
	check_group(t, 1 + DIM_PP, 100, want, 16);
	want[0] = 100;
	check_group(t, 1 + DIM_CP, 100, want, 1);
	check_group(t, 1 + DIM_EP, 100, want, 1);
	for (n = 0; n < 1024; n++)
		want[n] = n;
	check_group(t, 0, 100, want, 1024);
	for (n = 0; n < 128; n++)
		want[n] = 4 + 8 * n; /* every rank with tp=4 */
	check_group(t, 6, 100, want, 128);
	CHECK(tr_ncomms(t) == 8 && !strcmp(tr_comm_name(t, 6), "dpp") && tr_comm_line(t, 6) == 4 &&
	          !strcmp(tr_comm_name(t, 7), "fixed") && tr_comm_line(t, 7) == 5,
	      "user comms after the built-ins");
	static const int fixed[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 12};
	check_group(t, 7, 12, fixed, 10);
	check_group(t, 7, 0, fixed, 10);
	int gid = 5;
	CHECK(tr_comm_group(t, 7, 8, want, 1024, &gid) == 0 && gid == -1, "rank 8 is not in comm fixed");
	CHECK(tr_comm_group(t, 1 + DIM_PP, 100, NULL, 0, NULL) == 16, "size only");
	/* a short buffer: the size is still the whole group */
	int few[3];
	CHECK(tr_comm_group(t, 1 + DIM_PP, 100, few, 3, NULL) == 16 && few[2] == 36 + 128, "cut at max");
	tr_free(t);

	/* another order; every group checked against a scan */
	t = parse("simtrace 1\nranks 48\nlayout tp=2 cp=3 ep=2 dp=2 pp=2 order=dp,tp,pp,cp,ep\ncomm a dims=tp,pp\n"
	          "comm b dims=ep,cp,dp\ncomm c dims=tp,cp,ep,dp,pp\n");
	if (t) {
		/* rank = dp + 2 * (tp + 2 * (pp + 2 * (cp + 3 * ep))) */
		for (int r = 0; r < 48; r++)
			CHECK(r == tr_coord(t, r, DIM_DP) +
			               2 * (tr_coord(t, r, DIM_TP) +
			                    2 * (tr_coord(t, r, DIM_PP) +
			                         2 * (tr_coord(t, r, DIM_CP) + 3 * tr_coord(t, r, DIM_EP)))),
			      "order=: rank %d", r);
		static const unsigned dims[] = {0, 1, 2, 4, 8, 16, 1 | 16, 2 | 4 | 8, 31};
		brute_force_groups(t, dims);
		tr_free(t);
	}
	/* ranks= lists: unordered, overlapping, adjacent */
	t = parse("simtrace 1\nranks 16\ncomm m ranks=5,0-3,4,10-12,11-last,2\ncomm one ranks=last\n");
	if (t) {
		static const int m[] = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15};
		check_group(t, 6, 11, m, 12);
		check_group(t, 6, 0, m, 12);
		static const int last[] = {15};
		check_group(t, 7, 15, last, 1);
		CHECK(tr_comm_group(t, 6, 7, NULL, 0, NULL) == 0 && tr_comm_group(t, 7, 14, NULL, 0, NULL) == 0,
		      "ranks outside a list");
		tr_free(t);
	}
	/* a long list of whole ranges on 1M ranks stays cheap */
	static char text[8192];
	int len = snprintf(text, sizeof text, "simtrace 1\nranks 1048576\ncomm all ranks=0-last");
	while (len < 4000)
		len += snprintf(text + len, sizeof text - (size_t)len, ",0-last");
	snprintf(text + len, sizeof text - (size_t)len, "\n");
	clock_t c0 = clock();
	t = parse(text);
	if (t) {
		int g;
		CHECK(tr_comm_group(t, 6, 123456, NULL, 0, &g) == 1048576 && g == 0, "comm all");
		tr_free(t);
	}
	CHECK((double)(clock() - c0) / CLOCKS_PER_SEC < 1, "a long ranks= list took %.2f s",
	      (double)(clock() - c0) / CLOCKS_PER_SEC);

	/* order= may leave out dims of size 1 */
	t = parse("simtrace 1\nranks 8\nlayout tp=2 dp=4 order=dp,tp\n");
	if (t) {
		CHECK(tr_coord(t, 5, DIM_DP) == 1 && tr_coord(t, 5, DIM_TP) == 1 && tr_coord(t, 3, DIM_DP) == 3,
		      "order=dp,tp");
		tr_free(t);
	}

	/* 1M ranks: groups by arithmetic, not by a scan */
	t = parse("simtrace 1\nranks 1048576\nlayout tp=8 dp=1024 pp=128\ncomm x dims=tp,pp\n");
	if (t) {
		clock_t t0 = clock();
		long long sum = 0;
		static int m[1024];
		for (int r = 0; r < 1048576; r++) {
			sum += tr_comm_group(t, 1 + DIM_TP, r, m, 1024, NULL);
			sum += tr_comm_group(t, 1 + DIM_DP, r, NULL, 0, NULL);
		}
		for (int r = 0; r < 1048576; r += 1021)
			sum += tr_comm_group(t, 1 + DIM_PP, r, m, 1024, NULL) + tr_comm_group(t, 6, r, m, 1024, NULL);
		double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
		CHECK(sum == 1048576LL * (8 + 1024) + 1028LL * (128 + 1024), "1M ranks: sum %lld", sum);
		CHECK(s < 10, "1M ranks: %.2f s for the groups", s);
		CHECK(tr_comm_group(t, 1 + DIM_PP, 1048575, m, 1024, NULL) == 128 && m[127] == 1048575 &&
		          m[0] == 1048575 - 127 * 8192,
		      "last pp group");
		tr_free(t);
	}
}

/* ---- on, repeat, def, call ---- */

static void test_blocks(void)
{
	struct trace *t = parse("simtrace 1\nranks 8\nlayout tp=2 pp=4\n"
	                        "on pp=last {\n gemm m=1 n=1 k=1 dtype=fp16\n}\n"
	                        "on pp!=0 {\n delay time=1us\n}\n"
	                        "on ranks=0-2,7 {\n delay time=2us\n}\n"
	                        "on rank=last {\n delay time=3us\n}\n"
	                        "on tp=1 pp=0-1 {\n delay time=4us\n}\n"
	                        "on pp!=0,last {\n on tp=0 {\n  delay time=5us\n }\n}\n");
	if (t) {
		/* pp = rank / 2, tp = rank % 2 */
		for (int r = 0; r < 8; r++) {
			int pp = r / 2, tp = r % 2;
			int want = (pp == 3) + (pp != 0) + (r <= 2 || r == 7) + (r == 7) + (tp == 1 && pp <= 1) +
			           (pp != 0 && pp != 3 && tp == 0);
			CHECK(count(t, r) == want, "selectors: rank %d issues %d, want %d", r, count(t, r), want);
		}
		tr_free(t);
	}

	t = parse("simtrace 1\nranks 2\n"
	          "def inner {\n elem op=add n=8 dtype=fp16\n repeat 3 {\n  copy bytes=1KiB\n }\n}\n"
	          "def outer {\n call inner\n call inner\n mark name=m\n}\n"
	          "repeat 4 {\n call outer\n}\n"
	          "on rank=1 {\n repeat 10 {\n  call inner\n }\n}\n");
	if (t) {
		CHECK(count(t, 0) == 4 * (2 * 4 + 1), "def/call/repeat: rank 0 %d", count(t, 0));
		CHECK(count(t, 1) == 4 * (2 * 4 + 1) + 40, "def/call/repeat: rank 1 %d", count(t, 1));
		CHECK(tr_nmarks(t) == 1 && !strcmp(tr_mark_name(t, 0), "m"), "mark names");
		tr_free(t);
	}

	/* the order of a rank's events */
	t = parse("simtrace 1\nranks 1\nrepeat 2 {\n mark name=a\n repeat 2 {\n  mark name=b\n }\n}\nmark name=c\n");
	if (t) {
		struct tr_event ev[16];
		char why[TR_MSG_MAX];
		int n = expand(t, 0, ev, 16, why, sizeof why);
		char seq[17] = "";
		for (int i = 0; i < n && i < 16; i++)
			seq[i] = tr_mark_name(t, ev[i].mark)[0];
		CHECK(n == 7 && !strcmp(seq, "abbabbc"), "order: %s", seq);
		tr_free(t);
	}

	/* a rank that a huge repeat leaves out costs nothing; so does an
	   exponential chain of calls of an empty def */
	static char chain[8192];
	size_t len = (size_t)snprintf(chain, sizeof chain,
	                              "simtrace 1\nranks 4\nrepeat 1000000000 {\n repeat 1000000000 {\n  on rank=1 {\n"
	                              "   gemm m=1 n=1 k=1 dtype=fp16\n  }\n }\n}\n"
	                              "def d0 {\n on rank=2 {\n  delay time=1us\n }\n}\n");
	for (int i = 1; i <= 60; i++)
		len += (size_t)snprintf(chain + len, sizeof chain - len, "def d%d {\n call d%d\n call d%d\n}\n", i,
		                        i - 1, i - 1);
	snprintf(chain + len, sizeof chain - len, "call d60\ngemm m=2 n=2 k=2 dtype=fp16\n");
	t = parse(chain);
	if (t) {
		clock_t t0 = clock();
		CHECK(count(t, 0) == 1 && count(t, 3) == 1, "empty repeats and calls");
		struct tr_cursor *c = tr_cursor_new(t, 1);
		struct tr_event ev;
		char why[TR_MSG_MAX];
		int n = 0;
		while (n < 100000 && tr_next(c, &ev, why, sizeof why) == 1)
			n++;
		CHECK(n == 100000 && ev.op.m == 1, "rank 1 issues the repeat's gemms");
		tr_cursor_free(c);
		double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
		CHECK(s < 5, "empty expansion took %.2f s", s);
		tr_free(t);
	}

	/* 64 levels are fine, calls included */
	static char deep[8192];
	len = (size_t)snprintf(deep, sizeof deep, "simtrace 1\nranks 1\ndef d {\n");
	for (int i = 0; i < 63; i++)
		len += (size_t)snprintf(deep + len, sizeof deep - len, "repeat 2 {\n");
	len += (size_t)snprintf(deep + len, sizeof deep - len, "mark name=x\n");
	for (int i = 0; i < 64; i++)
		len += (size_t)snprintf(deep + len, sizeof deep - len, "}\n");
	snprintf(deep + len, sizeof deep - len, "call d\n");
	t = parse(deep);
	if (t) {
		struct tr_cursor *c = tr_cursor_new(t, 0);
		struct tr_event ev;
		char why[TR_MSG_MAX];
		int n = 0;
		while (n < 1000 && tr_next(c, &ev, why, sizeof why) == 1)
			n++;
		CHECK(n == 1000 && ev.kind == TK_MARK, "64 levels deep");
		tr_cursor_free(c);
		tr_free(t);
	}
}

/* ---- scheduling keys ---- */

static void test_sched(void)
{
	struct trace *t = parse("simtrace 1\nranks 2\n"
	                        "gemm m=8 n=8 k=8 dtype=bf16 id=a\n"
	                        "gemm m=8 n=8 k=8 dtype=bf16 id=b after=a stream=s1\n"
	                        "coll op=allreduce comm=world bytes=1MiB stream=comm after=a,b,a id=a\n"
	                        "delay time=1ms after=a stream=s1\n"
	                        "send peer=rank+1 bytes=4 tag=7 after=b\n"
	                        "on rank=0 {\n gemm m=1 n=1 k=1 dtype=fp16 id=only0\n}\n"
	                        "on rank=0 {\n delay time=1us after=only0\n}\n");
	if (!t)
		return;
	struct tr_event ev[8];
	char why[TR_MSG_MAX] = "";
	int n = expand(t, 0, ev, 8, why, sizeof why);
	CHECK(n == 7, "rank 0: %d events (%s)", n, why);
	CHECK(tr_nlabels(t) == 3 && !strcmp(tr_label_name(t, 0), "a") && !strcmp(tr_label_name(t, 1), "b") &&
	          !strcmp(tr_label_name(t, 2), "only0"),
	      "labels");
	CHECK(tr_nstreams(t) == 3 && !strcmp(tr_stream_name(t, 1), "s1") && !strcmp(tr_stream_name(t, 2), "comm"),
	      "streams");
	if (n == 7) {
		CHECK(ev[0].label == 0 && ev[0].nafter == 0 && ev[0].stream == 0, "op a");
		CHECK(ev[1].label == 1 && ev[1].nafter == 1 && ev[1].after[0] == 0 && ev[1].stream == 1, "op b");
		CHECK(ev[2].label == 0 && ev[2].nafter == 2 && ev[2].after[0] == 0 && ev[2].after[1] == 1 &&
		          ev[2].stream == 2,
		      "coll: after=a,b,a waits for a and b");
		CHECK(ev[3].kind == TK_DELAY && ev[3].seconds == 1e-3 && ev[3].stream == 1, "delay");
		CHECK(ev[4].kind == TK_SEND && ev[4].peer == 1 && ev[4].tag == 7 && ev[4].bytes == 4, "send");
		CHECK(ev[6].nafter == 1 && ev[6].after[0] == 2, "after= in an on block");
	}
	/* rank 1 sends to rank 2, which does not exist */
	n = expand(t, 1, ev, 8, why, sizeof why);
	CHECK(n == -1 && strstr(why, "t.trace:7: rank 1: send peer=rank+1 is out of range"), "rank 1: %s", why);
	tr_free(t);
}

/* ---- canonical text ---- */

static int same_event(const struct tr_event *a, const struct tr_event *b)
{
	if (a->kind != b->kind || a->stream != b->stream || a->label != b->label || a->nafter != b->nafter)
		return 0;
	for (int i = 0; i < a->nafter; i++)
		if (a->after[i] != b->after[i])
			return 0;
	switch (a->kind) {
	case TK_OP: return memcmp(&a->op, &b->op, sizeof a->op) == 0;
	case TK_COLL:
		return a->coll == b->coll && a->algo == b->algo && a->comm == b->comm && a->root == b->root &&
		       a->bytes == b->bytes;
	case TK_SEND:
	case TK_RECV: return a->peer == b->peer && a->bytes == b->bytes && a->tag == b->tag;
	case TK_DELAY: return a->seconds == b->seconds && a->scale == b->scale && a->scale_ref == b->scale_ref;
	case TK_MARK: return a->mark == b->mark;
	default: return 0;
	}
}

/* A carried kernel's time on another chip: time x ref / the chip's own figure (bandwidth or matrix peak), and
   unchanged without scale= or where the chip's figure is 0. */
static void test_delay_scale(void)
{
	struct trace *t = parse("simtrace 1\nranks 1\ndelay time=10us scale=dram ref=2TB/s\n"
	                        "delay time=6us scale=matrix ref=300TFLOPS\ndelay time=4us\n");
	if (!t)
		return;
	static struct tr_event ev[4];
	char why[TR_MSG_MAX] = "";
	int n = expand(t, 0, ev, 4, why, sizeof why);
	CHECK(n == 3, "%d events (%s)", n, why);
	if (n == 3) {
		CHECK(ev[0].scale == TR_SCALE_DRAM && ev[0].scale_ref == 2e12, "scale=dram ref=2TB/s read as %d %g",
		      ev[0].scale, ev[0].scale_ref);
		CHECK(ev[1].scale == TR_SCALE_MATRIX && ev[1].scale_ref == 300e12, "scale=matrix read as %d %g",
		      ev[1].scale, ev[1].scale_ref);
		CHECK(fabs(tr_delay_seconds(&ev[0], 4e12, 1e15) - 5e-6) < 1e-18, "10 us at twice the bandwidth");
		CHECK(fabs(tr_delay_seconds(&ev[1], 4e12, 1e15) - 1.8e-6) < 1e-18, "6 us at 1000/300 the peak");
		CHECK(tr_delay_seconds(&ev[0], 0, 1e15) == 10e-6, "no figure: kept");
		CHECK(tr_delay_seconds(&ev[2], 4e12, 1e15) == 4e-6, "no scale=: kept");
	}
	tr_free(t);
}

static void test_format(void)
{
	/* the events of rank R, formatted, then appended to the same trace in an
	   `on rank=R` block: that block must expand to the same events */
	static const char base[] =
	    "simtrace 1\nranks 16\nlayout tp=2 pp=4 dp=2\ncomm g ranks=1-15\n"
	    "gemm m=4096 n=1024 k=512 dtype=bf16 id=g1\n"
	    "gemm m=1 n=2 k=3 batch=4 dtype=int8 trans=tn epilogue=bias_relu warm=1 stream=s2 after=g1\n"
	    "attn b=8 h=32 hkv=8 sq=2048 skv=2048 d=128 causal=1 dtype=bf16 impl=flash2 dir=bwd id=at\n"
	    "attn b=64 h=32 sq=1 skv=4096 d=128 dtype=fp16 impl=paged page=32\n"
	    "elem op=layernorm n=67108864 cols=4096 dtype=fp16 after=at,g1\n"
	    "elem op=cast n=10 dtype=fp32 to=fp8\n"
	    "copy bytes=1.5KB src=host\n"
	    "conv n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=fp16\n"
	    "embedding tokens=16384 dim=12288 vocab=50257 dtype=fp16 stream=emb\n"
	    "coll op=allreduce comm=dp bytes=1GiB stream=comm after=g1 id=ar\n"
	    "coll op=allgather comm=tp bytes=48MiB algo=ring\n"
	    "coll op=reducescatter comm=world bytes=3 algo=nvls\n"
	    "coll op=alltoall comm=pp bytes=1e9 algo=direct\n"
	    "coll op=broadcast comm=g bytes=1KiB root=14 algo=tree\n"
	    "coll op=reduce comm=tp bytes=7 root=1 algo=hier\n"
	    "coll op=barrier comm=world\n"
	    "coll op=barrier comm=cp bytes=0\n"
	    "on pp!=last {\n send peer=pp+1 bytes=1MiB tag=3\n}\non pp!=0 {\n recv peer=pp-1 bytes=1MiB\n}\n"
	    "send peer=rank-1 bytes=9 stream=p2p\n"
	    "delay time=5us\ndelay time=1.5ms\ndelay time=3s\ndelay time=0.1ns\ndelay time=123.456789us\n"
	    "delay time=0s\ndelay time=0.333333333333333314829616256247390992939472198486328125s after=ar\n"
	    "delay time=10us scale=dram ref=2TB/s\ndelay time=7us scale=matrix ref=312.5TFLOPS stream=s3\n"
	    "mark name=step.1\n";
	static const int ranks[] = {1, 5, 9, 15};
	for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++) {
		int rank = ranks[k];
		struct trace *t = parse(base);
		if (!t)
			return;
		static struct tr_event ev[64], ev2[128];
		char why[TR_MSG_MAX] = "";
		int n = expand(t, rank, ev, 64, why, sizeof why);
		int pp = rank / 4; /* rank = tp + 2 * (dp + 2 * pp) */
		CHECK(n == 28 + (pp != 3) + (pp != 0), "rank %d: %d events (%s)", rank, n, why);
		static char text[65536];
		size_t len = (size_t)snprintf(text, sizeof text, "%son rank=%d {\n", base, rank);
		for (int i = 0; i < n && i < 64; i++) {
			char line[1024];
			size_t m = tr_event_format(t, &ev[i], line, sizeof line);
			CHECK(m == strlen(line) && m < sizeof line && !strchr(line, '\n'), "format length %zu", m);
			CHECK(tr_event_format(t, &ev[i], NULL, 0) == m, "format length without a buffer");
			len += (size_t)snprintf(text + len, sizeof text - len, "%s\n", line);
		}
		snprintf(text + len, sizeof text - len, "}\n");
		struct trace *t2 = parse(text);
		if (t2) {
			int n2 = expand(t2, rank, ev2, 128, why, sizeof why);
			CHECK(n2 == 2 * n, "round trip: %d events (%s)", n2, why);
			for (int i = 0; i < n && n2 == 2 * n; i++) {
				char a[1024], b[1024];
				tr_event_format(t, &ev[i], a, sizeof a);
				tr_event_format(t2, &ev2[n + i], b, sizeof b);
				CHECK(same_event(&ev[i], &ev2[n + i]) && same_event(&ev[i], &ev2[i]) && !strcmp(a, b),
				      "round trip of '%s' gave '%s'", a, b);
			}
			tr_free(t2);
		}
		tr_free(t);
	}

	/* some canonical texts */
	struct trace *t = parse(base);
	if (!t)
		return;
	static struct tr_event ev[64];
	char why[TR_MSG_MAX];
	int n = expand(t, 0, ev, 64, why, sizeof why);
	static const char *const want[] = {
	    "gemm m=4096 n=1024 k=512 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0 id=g1",
	    "gemm m=1 n=2 k=3 batch=4 dtype=int8 acc=int32 trans=tn epilogue=bias_relu warm=1 stream=s2 after=g1",
	    NULL,
	    NULL,
	    "elem op=layernorm n=67108864 cols=4096 dtype=fp16 warm=0 after=at,g1",
	    NULL,
	    "copy bytes=1500 src=host dst=hbm",
	    NULL,
	    NULL,
	    "coll op=allreduce comm=dp bytes=1073741824 algo=auto stream=comm id=ar after=g1",
	    "coll op=allgather comm=tp bytes=50331648 algo=ring",
	    NULL,
	    NULL,
	    NULL, /* rank 0 is not in comm g: see below */
	};
	CHECK(n == -1 && strstr(why, "rank 0: coll op=broadcast comm=g: this rank is not in comm g"), "rank 0: %s",
	      why);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char line[1024];
		if (!want[i])
			continue;
		tr_event_format(t, &ev[i], line, sizeof line);
		CHECK(!strcmp(line, want[i]), "\n  format '%s'\n  want   '%s'", line, want[i]);
	}
	n = expand(t, 1, ev, 64, why, sizeof why);
	static const char *const want1[] = {
	    "coll op=broadcast comm=g bytes=1024 algo=tree root=14",
	    "coll op=reduce comm=tp bytes=7 algo=hier root=1",
	    "coll op=barrier comm=world algo=auto",
	    "coll op=barrier comm=cp algo=auto",
	    "send peer=5 bytes=1048576 tag=3",
	    "send peer=0 bytes=9 tag=0 stream=p2p",
	    "delay time=5us",
	    "delay time=1.5ms",
	    "delay time=3s",
	    "delay time=0.1ns",
	    "delay time=123.456789us",
	    "delay time=0s",
	    "delay time=333.3333333333333ms after=ar",
	    "delay time=10us scale=dram ref=2000000000000B/s",
	    "delay time=7us scale=matrix ref=312500000000000FLOPS stream=s3",
	    "mark name=step.1",
	};
	CHECK(n == 29, "rank 1 (pp 0): %d events", n);
	for (size_t i = 0; i < sizeof want1 / sizeof want1[0] && n == 29; i++) {
		char line[1024];
		tr_event_format(t, &ev[13 + i], line, sizeof line);
		CHECK(!strcmp(line, want1[i]), "\n  format '%s'\n  want   '%s'", line, want1[i]);
	}
	/* cut like snprintf */
	char small[8];
	size_t m = tr_event_format(t, &ev[0], small, sizeof small);
	CHECK(m > sizeof small && strlen(small) == sizeof small - 1, "cut: %zu '%s'", m, small);
	tr_free(t);
}

/* Every complete trace in docs/trace-format.md (a ```text block that starts
   with the header) reads and expands on every rank; the data-parallel
   example issues what the page says. */
static void test_doc(const char *dir)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/../docs/trace-format.md", dir);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "cannot open %s", path);
	if (!f)
		return;
	static char doc[1 << 17];
	size_t len = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[len] = '\0';
	int found = 0;
	for (char *p = doc; (p = strstr(p, "```text\nsimtrace 1\n"));) {
		p += 8;
		char *end = strstr(p, "```");
		if (!end)
			break;
		*end = '\0';
		struct trace *t = parse(p);
		for (int r = 0; t && r < tr_ranks(t); r++)
			count(t, r);
		if (t && tr_ranks(t) == 8 && strstr(p, "layout dp=8")) {
			struct tr_event ev[64];
			char why[TR_MSG_MAX];
			int n = expand(t, 0, ev, 64, why, sizeof why);
			CHECK(n == 28 && ev[0].kind == TK_MARK && ev[9].op.kind == OP_ELEM && ev[26].kind == TK_COLL &&
			          ev[26].bytes == 1073741824.0 && ev[26].nafter == 1 &&
			          ev[26].after[0] == ev[25].label &&
			          !strcmp(tr_stream_name(t, ev[26].stream), "comm") && ev[27].nafter == 1 &&
			          ev[27].after[0] == ev[26].label,
			      "the data-parallel example: %d events", n);
			found++;
		}
		tr_free(t);
		p = end + 3;
	}
	CHECK(found == 1, "the data-parallel example is not in the page");
}

/* ---- stops at the iterations of repeats, and skipping them ---- */

/* Expands rank 0 with stops, skipping `skip` iterations at iteration `at` of
   the repeat on line `line`; writes one letter per step into out: L (a
   stop, with its iteration), E (a repeat's end), the line of each event. */
static void walk_stops(const struct trace *t, int line, long long at, long long skip, char *out, size_t len)
{
	struct tr_cursor *c = tr_cursor_new(t, 0);
	struct tr_event ev;
	char why[TR_MSG_MAX];
	size_t n = 0;
	out[0] = '\0';
	tr_cursor_stops(c, 1);
	int r;
	while ((r = tr_next(c, &ev, why, sizeof why)) > 0 && n + 32 < len) {
		const struct tr_loop *l = tr_cursor_loop(c);
		if (r == TR_LOOP) {
			n += (size_t)snprintf(out + n, len - n, "L%d.%lld/%lld:%d ", l->line, l->iter, l->count,
			                      l->depth);
			if (l->line == line && l->iter == at)
				CHECK(tr_cursor_skip(c, skip) == 0, "skip %lld at %lld", skip, at);
		} else if (r == TR_LOOP_END) {
			n += (size_t)snprintf(out + n, len - n, "E%d ", l->line);
		} else {
			n += (size_t)snprintf(out + n, len - n, "%d ", ev.line);
		}
	}
	CHECK(r == 0, "walk ends cleanly (%d: %s)", r, why);
	CHECK(tr_cursor_skip(c, 1) == -1, "no skip outside a stop");
	tr_cursor_free(c);
}

static void test_stops(void)
{
	struct trace *t = parse("simtrace 1\nranks 2\n"
	                        "def d {\n  repeat 2 {\n    delay time=1us\n  }\n}\n"      /* 3-7 */
	                        "repeat 4 {\n  call d\n  gemm m=1 n=1 k=1 dtype=fp16\n}\n" /* 8-11 */
	                        "on rank=1 {\n  repeat 3 {\n    delay time=2us\n  }\n}\n"  /* 12-16 */
	                        "delay time=3us\n");
	if (!t)
		return;
	char got[1024];
	walk_stops(t, 0, 0, 0, got, sizeof got);
	const char *want = "L8.0/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 L8.1/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 "
	                   "L8.2/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 L8.3/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 E8 17 ";
	CHECK(!strcmp(got, want), "stops:\n got  %s\n want %s", got, want);
	walk_stops(t, 8, 1, 2, got, sizeof got); /* iterations 1 and 2 skipped: 3 follows, no stop */
	want = "L8.0/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 L8.1/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 E8 17 ";
	CHECK(!strcmp(got, want), "skip 2 of 4:\n got  %s\n want %s", got, want);
	walk_stops(t, 8, 2, 2, got, sizeof got); /* the last two: the repeat ends */
	want = "L8.0/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 L8.1/4:1 L4.0/2:3 5 L4.1/2:3 5 E4 10 L8.2/4:1 E8 17 ";
	CHECK(!strcmp(got, want), "skip the rest:\n got  %s\n want %s", got, want);
	struct tr_cursor *c = tr_cursor_new(t, 0);
	struct tr_event ev;
	char why[TR_MSG_MAX];
	tr_cursor_stops(c, 1);
	CHECK(tr_next(c, &ev, why, sizeof why) == TR_LOOP && tr_cursor_skip(c, 5) == -1,
	      "cannot skip more than is left");
	tr_cursor_free(c);
	CHECK(count(t, 1) == 4 * 3 + 3 + 1, "without stops, nothing changes");
	tr_free(t);
}

/* The repeat of each rank that issues the most, as its first stop names it. */
static void test_largest_repeat(void)
{
	struct trace *t =
	    parse("simtrace 1\nranks 3\n"
	          "repeat 4 {\n  repeat 2 {\n    delay time=1us\n  }\n  delay time=1us\n}\n" /* 3-8: 12 ops */
	          "on rank=1 {\n  repeat 20 {\n    delay time=2us\n  }\n}\n"                 /* 9-13: 20 */
	          "on rank=2 {\n  repeat 12 {\n    delay time=2us\n  }\n}\n");               /* 14-18: a tie */
	if (!t)
		return;
	int want_line[3] = {3, 10, 3};
	for (int rank = 0; rank < 3; rank++) {
		struct tr_loop l = {0};
		CHECK(tr_largest_repeat(t, rank, &l) == 1 && l.line == want_line[rank] && l.iter == 0,
		      "rank %d: the largest repeat is on line %d (got %d)", rank, want_line[rank], l.line);
		/* the cursor's stop at its first iteration describes it alike */
		struct tr_cursor *c = tr_cursor_new(t, rank);
		struct tr_event ev;
		char why[TR_MSG_MAX];
		int r, met = 0;
		tr_cursor_stops(c, 1);
		while ((r = tr_next(c, &ev, why, sizeof why)) > 0)
			if (r == TR_LOOP && tr_cursor_loop(c)->line == l.line && tr_cursor_loop(c)->iter == 0) {
				const struct tr_loop *s = tr_cursor_loop(c);
				met = s->body == l.body && s->depth == l.depth && s->count == l.count;
			}
		CHECK(met, "rank %d: the stop names the largest repeat as tr_largest_repeat does", rank);
		tr_cursor_free(c);
	}
	tr_free(t);
	t = parse("simtrace 1\nranks 1\ndelay time=1us\n");
	struct tr_loop l;
	CHECK(t && tr_largest_repeat(t, 0, &l) == 0, "no repeat: none");
	tr_free(t);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	test_minimal();
	test_layout();
	test_blocks();
	test_sched();
	test_stops();
	test_largest_repeat();
	test_format();
	test_delay_scale();
	test_doc(dir);
	printf("%d checks: %d passed, %d failed\n", checks, checks - fails, fails);
	return fails != 0;
}
