/*
 * test_trace_bad.c -- every refusal of the `simtrace 1` trace with its line:
 * at load time (strings here, files in tests/trace_bad/ with
 * tests/trace_bad/expected.tsv, a missing file, a directory) and at expansion
 * time (a rank's events that cannot be produced), each one line naming the
 * file, the line and what was expected.
 *
 * usage: test_trace_bad TESTS_DIR
 */
#include "trace_test.h"

/* ---- load-time refusals ---- */

static const struct {
	const char *text, *msg;
} bad[] = {
    {"", "t.trace:1: empty trace: expected the header 'simtrace 1'"},
    {"# only a comment\n\n", "t.trace:2: empty trace"},
    {"simtrace 2\n", "t.trace:1: unsupported trace version 2 (this sim reads simtrace 1)"},
    {"simtrace 10\nranks 1\n", "t.trace:1: unsupported trace version 10 (this sim reads simtrace 1)"},
    {"simtrace one\n", "t.trace:1: the header must be exactly 'simtrace 1'"},
    {"simtrace 1 extra\n", "t.trace:1: the header must be exactly 'simtrace 1'"},
    {"simtrace\n", "t.trace:1: the header must be exactly 'simtrace 1'"},
    {"ranks 8\nsimtrace 1\n", "t.trace:1: expected the header 'simtrace 1' on the first line (not 'ranks')"},
    {"simtrace 1\nsimtrace 1\n", "t.trace:2: a second header"},
    {"simtrace 1\n", "t.trace:1: missing 'ranks N'"},
    {"simtrace 1\ngemm m=1 n=1 k=1 dtype=fp16\nranks 2\n", "t.trace:2: 'gemm' before 'ranks N'"},
    {"simtrace 1\nlayout tp=2\nranks 2\n", "t.trace:2: 'layout' before 'ranks N'"},
    {"simtrace 1\nranks 0\n", "t.trace:2: ranks 0: expected an integer from 1 to 1048576"},
    {"simtrace 1\nranks 1048577\n", "t.trace:2: ranks 1048577: expected an integer from 1 to 1048576"},
    {"simtrace 1\nranks -1\n", "t.trace:2: ranks -1: expected an integer"},
    {"simtrace 1\nranks 8 9\n", "t.trace:2: ranks: expected 'ranks N'"},
    {"simtrace 1\nranks 8\nranks 8\n", "t.trace:3: ranks given twice (first at line 2)"},
    {"simtrace 1\nranks 1024\nlayout tp=8 pp=16 dp=4\n",
     "t.trace:3: layout: tp=8 dp=4 pp=16 makes 512 ranks, but ranks is 1024"},
    {"simtrace 1\nranks 8\nlayout tp=1048576 pp=1048576\n", "t.trace:3: layout: tp=1048576 pp=1048576 makes more"},
    {"simtrace 1\nranks 8\nlayout tp=0 dp=8\n", "t.trace:3: layout: tp=0 must be an integer from 1 to 1048576"},
    {"simtrace 1\nranks 8\nlayout tp=8\nlayout tp=8\n", "t.trace:4: layout given twice (first at line 3)"},
    {"simtrace 1\nranks 8\ndelay time=1us\nlayout tp=8\n",
     "t.trace:4: layout must come before the first op, comm, def or block (line 3)"},
    {"simtrace 1\nranks 8\nlayout tp=2 dp=4 order=tp,pp\n", "t.trace:3: layout: order= leaves out dp (dp=4)"},
    {"simtrace 1\nranks 8\nlayout tp=2 dp=4 order=tp,dp,tp\n", "t.trace:3: layout: order= names tp twice"},
    {"simtrace 1\nranks 8\nlayout tp=2 dp=4 order=tp,xp\n", "t.trace:3: layout: order=tp,xp: 'xp' is not a dim"},
    {"simtrace 1\nranks 8\nlayout tp=2 dp=4 mp=1\n", "t.trace:3: layout: unknown key 'mp' (expected tp, cp, ep, dp"},
    {"simtrace 1\nranks 8\nlayout tp=2 tp=4\n", "t.trace:3: layout: tp= given twice"},
    {"simtrace 1\nranks 8\ncomm a dims=tp\ncomm a ranks=1\n", "t.trace:4: comm a is already defined at line 3"},
    {"simtrace 1\nranks 8\ncomm dp dims=tp\n", "t.trace:3: comm dp: the name of a built-in communicator"},
    {"simtrace 1\nranks 8\ncomm a dims=tp ranks=1\n", "t.trace:3: comm a: give dims= or ranks=, not both"},
    {"simtrace 1\nranks 8\ncomm a\n", "t.trace:3: comm: expected 'comm NAME dims=DIM,...' or"},
    {"simtrace 1\nranks 8\ncomm a dims=tp,tp\n", "t.trace:3: comm a: dims= names tp twice"},
    {"simtrace 1\nranks 8\ncomm a dims=tp,world\n", "t.trace:3: comm a: dims=tp,world: 'world' is not a dim"},
    {"simtrace 1\nranks 8\ncomm a ranks=0-8\n", "t.trace:3: comm a: ranks=0-8: rank 8 is out of range (ranks 8: 0-7)"},
    {"simtrace 1\nranks 8\ncomm a ranks=5-2\n", "t.trace:3: comm a: ranks=5-2: the range 5-2 runs backwards"},
    {"simtrace 1\nranks 8\ncomm a ranks=1,,2\n", "t.trace:3: comm a: ranks=1,,2 has an empty item"},
    {"simtrace 1\nranks 8\ncomm a rank=1\n", "t.trace:3: comm a: unknown key 'rank' (expected dims, ranks)"},
    {"simtrace 1\nranks 8\nrepeat 2 {\ncomm a dims=tp\n}\n", "t.trace:4: comm belongs at the top level"},
    {"simtrace 1\nranks 8\ndef a {\n}\ndef a {\n}\n", "t.trace:5: def a is already defined at line 3"},
    {"simtrace 1\nranks 8\ndef a {\ndef b {\n}\n}\n", "t.trace:4: def belongs at the top level"},
    {"simtrace 1\nranks 8\ndef a\n", "t.trace:3: def: expected 'def NAME {'"},
    {"simtrace 1\nranks 8\ncall a\n",
     "t.trace:3: call a: no def a before this line (a def must come before its calls)"},
    {"simtrace 1\nranks 8\ncall a\ndef a {\n}\n",
     "t.trace:3: call a: def a is at line 4, after this call (a def must come before its calls)"},
    {"simtrace 1\nranks 8\ndef a {\n repeat 2 {\n  call a\n }\n}\n",
     "t.trace:5: call a inside def a: a def cannot call itself (cycle a -> a)"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytse=1GiB\n",
     "t.trace:3: coll: unknown key 'bytse' (expected op, comm, bytes, algo, root, topk, experts, groups, group_topk, "
     "stream, id, after)"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 steam=x\n", "t.trace:3: gemm: unknown key 'steam'"},
    {"simtrace 1\nranks 8\nsend peer=1 bytes=1 tga=3\n", "t.trace:3: send: unknown key 'tga'"},
    {"simtrace 1\nranks 8\ndelay time=1us duration=2us\n", "t.trace:3: delay: unknown key 'duration'"},
    {"simtrace 1\nranks 8\nmark name=a id=b\n", "t.trace:3: mark: unknown key 'id' (expected name)"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=1GiB bytes=2GiB\n",
     "t.trace:3: coll: bytes= given twice"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 stream=a stream=b\n", "t.trace:3: gemm: stream= given twice"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 m=1 k=1 dtype=fp16\n", "t.trace:3: gemm: m= given twice"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 id=\n", "t.trace:3: gemm: id= has no value"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=\n", "t.trace:3: coll: bytes= has no value"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world 1GiB\n", "t.trace:3: coll: '1GiB' is not key=value"},
    {"simtrace 1\nranks 8\nrepeat 0 {\n}\n", "t.trace:3: repeat 0: the count must be an integer from 1 to 1000000000"},
    {"simtrace 1\nranks 8\nrepeat 1000000001 {\n}\n", "t.trace:3: repeat 1000000001: the count must be"},
    {"simtrace 1\nranks 8\nrepeat 2.5 {\n}\n", "t.trace:3: repeat 2.5: the count must be"},
    {"simtrace 1\nranks 8\nrepeat 2\n", "t.trace:3: repeat: expected 'repeat N {'"},
    {"simtrace 1\nranks 8\nrepeat 2 { gemm m=1 n=1 k=1 dtype=fp16 }\n", "t.trace:3: repeat: expected 'repeat N {'"},
    {"simtrace 1\nranks 8\n}\n", "t.trace:3: '}' without an open block"},
    {"simtrace 1\nranks 8\nrepeat 2 {\n}\n}\n", "t.trace:5: '}' without an open block"},
    {"simtrace 1\nranks 8\nrepeat 2 {\n} x\n", "t.trace:4: '}' must be alone on its line"},
    {"simtrace 1\nranks 8\nrepeat 2 {\n gemm m=1 n=1 k=1 dtype=fp16\n",
     "t.trace:4: unexpected end of file: the block opened at line 3 is not closed by '}'"},
    {"simtrace 1\nranks 8\ndef a {\n on rank=1 {\n  repeat 3 {\n  }\n\n# end\n",
     "t.trace:8: unexpected end of file: the block opened at line 4 is not closed by '}'"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 after=x\n",
     "t.trace:3: after=x: no op before line 3 has id=x (after= waits only for ops issued earlier, so edges cannot "
     "form a cycle)"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 id=x after=x\n", "t.trace:3: after=x: no op before line 3"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 id=a after=b\ngemm m=1 n=1 k=1 dtype=fp16 id=b after=a\n",
     "t.trace:3: after=b: no op before line 3 has id=b; the op at line 4 comes later, and waiting forward would "
     "allow a cycle of after= edges"},
    {"simtrace 1\nranks 8\nrepeat 2 {\n delay time=1us after=y\n coll op=barrier comm=world id=y\n}\n",
     "t.trace:4: after=y: no op before line 4 has id=y; the op at line 5 comes later"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 id=a\ndelay time=1us after=a,a,a,a,a,a,a,a,a\n",
     "t.trace:4: delay: after= lists more than 8 labels"},
    {"simtrace 1\nranks 8\nlayout pp=4 dp=2\non pp=4 {\n}\n",
     "t.trace:4: on: pp=4: 4 is out of range (the layout has pp=4: 0-3)"},
    {"simtrace 1\nranks 8\nlayout pp=4 dp=2\non pp!=0-7 {\n}\n",
     "t.trace:4: on: pp!=0-7: 7 is out of range (the layout has pp=4: 0-3)"},
    {"simtrace 1\nranks 8\non tp=1 {\n}\n", "t.trace:3: on: tp=1: 1 is out of range (the layout has tp=1: 0-0)"},
    {"simtrace 1\nranks 8\non rank=8 {\n}\n", "t.trace:3: on: rank=8: rank 8 is out of range (ranks 8: 0-7)"},
    {"simtrace 1\nranks 8\non ranks=0,x {\n}\n",
     "t.trace:3: on: ranks=0,x: 'x' is not a number, a range A-B or 'last'"},
    {"simtrace 1\nranks 8\non rank!=1-last,3-2 {\n}\n",
     "t.trace:3: on: rank!=1-last,3-2: the range 3-2 runs backwards"},
    {"simtrace 1\nranks 8\non rank= {\n}\n", "t.trace:3: on: rank= has no value"},
    {"simtrace 1\nranks 8\non rank=-1 {\n}\n", "t.trace:3: on: rank=-1: '-1' is not a number"},
    {"simtrace 1\nranks 8\non stage=1 {\n}\n", "t.trace:3: on: unknown key 'stage' (expected rank, ranks, tp"},
    {"simtrace 1\nranks 8\non pp=0 pp!=0 {\n}\n", "t.trace:3: on: pp given twice"},
    {"simtrace 1\nranks 8\non rank=0 ranks=1 {\n}\n", "t.trace:3: on: rank given twice"},
    {"simtrace 1\nranks 8\non pp {\n}\n", "t.trace:3: on: 'pp' is not a selector"},
    {"simtrace 1\nranks 8\non {\n}\n", "t.trace:3: on: expected 'on SELECTOR... {'"},
    {"simtrace 1\nranks 8\non rank=0\n", "t.trace:3: on: expected 'on SELECTOR... {'"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 stream=a/b\n", "t.trace:3: gemm: stream='a/b' is not a name"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 k=1 dtype=fp16 id=abcdefghijabcdefghijabcdefghijabcdefghijabcdefgh\n",
     "t.trace:3: gemm: id='abcdefghijabcdefghijabcdefghijabcdefghij...' is not a name (1 to 47"},
    {"simtrace 1\nranks 8\nmark name=\xff\n", "t.trace:3: mark: name='?' is not a name"},
    {"simtrace 1\nranks 8\ncomm a.b! dims=tp\n", "t.trace:3: comm: 'a.b!' is not a name"},
    {"simtrace 1\nranks 8\nsend peer=1 bytes=1 after=,\n", "t.trace:3: send: after= label '' is not a name"},
    {"simtrace 1\nranks 8\ngem m=1\n", "t.trace:3: unknown statement 'gem' (expected gemm|attn|elem|copy|conv"},
    {"simtrace 1\nranks 8\ngemm m=1 n=1 dtype=fp16\n", "t.trace:3: gemm: missing k="},
    {"simtrace 1\nranks 8\nattn b=1 h=3 hkv=2 sq=1 skv=1 d=1 dtype=fp16 impl=flash2\n",
     "t.trace:3: attn: hkv=2 must divide h=3"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=foo bytes=1\n",
     "t.trace:3: coll op=allreduce: comm=foo is not a communicator"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=a bytes=1\ncomm a dims=tp\n",
     "t.trace:3: coll op=allreduce: comm=a is not a communicator"},
    {"simtrace 1\nranks 8\ncoll op=allsum comm=world bytes=1\n", "t.trace:3: coll: op=allsum is not one of allreduce|"},
    {"simtrace 1\nranks 8\ncoll comm=world bytes=1\n", "t.trace:3: coll: missing op="},
    {"simtrace 1\nranks 8\ncoll op=allreduce bytes=1\n", "t.trace:3: coll op=allreduce: missing comm="},
    {"simtrace 1\nranks 8\ncoll op=allgather comm=world\n", "t.trace:3: coll op=allgather: missing bytes="},
    {"simtrace 1\nranks 8\ncoll op=alltoall comm=world bytes=0\n",
     "t.trace:3: coll op=alltoall: bytes=0 must be positive (only op=barrier moves no data)"},
    {"simtrace 1\nranks 8\ncoll op=barrier comm=world bytes=1KiB\n", "t.trace:3: coll op=barrier moves no data"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=5GHz\n",
     "t.trace:3: coll op=allreduce: bytes=5GHz: \"5GHz\" is a frequency; expected a size"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=1.5\n", "is not a whole number of bytes"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=-1KB\n",
     "t.trace:3: coll op=allreduce: bytes=-1KB must not"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=8EiB\n", "unknown unit"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=1e30B\n", "is too large (must be below 2^62 bytes)"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=1 algo=st*r\n",
     "t.trace:3: coll op=allreduce: algo='st*r' is not a name"},
    {"simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=1 root=0\n",
     "t.trace:3: coll op=allreduce: root= applies only to op=broadcast|reduce"},
    {"simtrace 1\nranks 8\nlayout tp=4 dp=2\ncoll op=broadcast comm=tp bytes=1 root=4\n",
     "t.trace:4: coll op=broadcast: root=4 must be below the size of the group (comm tp has 4 ranks)"},
    {"simtrace 1\nranks 8\ncomm c ranks=1,3\ncoll op=reduce comm=c bytes=1 root=2\n",
     "t.trace:4: coll op=reduce: root=2 must be below the size of the group (comm c has 2 ranks)"},
    {"simtrace 1\nranks 8\ncoll op=reduce comm=world bytes=1 root=-1\n", "root=-1 must be a non-negative integer"},
    {"simtrace 1\nranks 8\nsend peer=8 bytes=1\n", "t.trace:3: send: peer=8 is out of range (ranks 8: 0-7)"},
    {"simtrace 1\nranks 8\nrecv peer=99999999999999 bytes=1\n", "t.trace:3: recv: peer=99999999999999 is out of range"},
    {"simtrace 1\nranks 8\nlayout pp=8\nsend peer=pp+8 bytes=1\n",
     "t.trace:4: send: peer=pp+8 is out of range for every rank (pp has 8: 0-7)"},
    {"simtrace 1\nranks 8\nsend peer=tp+1 bytes=1\n", "t.trace:3: send: peer=tp+1 is out of range for every rank"},
    {"simtrace 1\nranks 8\nsend peer=pp+0 bytes=1\n", "t.trace:3: send: peer=pp+0 is the rank itself"},
    {"simtrace 1\nranks 8\nsend peer=next bytes=1\n", "t.trace:3: send: peer=next: expected a rank, or DIM+K"},
    {"simtrace 1\nranks 8\nsend peer=xp+1 bytes=1\n", "t.trace:3: send: peer=xp+1: expected a rank, or DIM+K"},
    {"simtrace 1\nranks 8\nsend peer=pp+ bytes=1\n", "t.trace:3: send: peer=pp+: expected a rank"},
    {"simtrace 1\nranks 8\nsend bytes=1\n", "t.trace:3: send: missing peer="},
    {"simtrace 1\nranks 8\nrecv peer=1\n", "t.trace:3: recv: missing bytes="},
    {"simtrace 1\nranks 8\nrecv peer=1 bytes=0\n", "t.trace:3: recv: bytes=0 must be positive"},
    {"simtrace 1\nranks 8\nrecv peer=1 bytes=1 tag=-1\n", "t.trace:3: recv: tag=-1 must be an integer from 0 to"},
    {"simtrace 1\nranks 8\ndelay time=5\n",
     "t.trace:3: delay: time=5: \"5\" has no unit; expected a time such as \"1 us\""},
    {"simtrace 1\nranks 8\ndelay time=5MiB\n", "t.trace:3: delay: time=5MiB: \"5MiB\" is a size"},
    {"simtrace 1\nranks 8\ndelay time=-5us\n", "t.trace:3: delay: time=-5us must not be negative"},
    {"simtrace 1\nranks 8\ndelay\n", "t.trace:3: delay: missing time="},
    {"simtrace 1\nranks 8\ndelay time=5us scale=dram\n", "t.trace:3: delay: scale= and ref= go together"},
    {"simtrace 1\nranks 8\ndelay time=5us ref=2TB/s\n", "t.trace:3: delay: scale= and ref= go together"},
    {"simtrace 1\nranks 8\ndelay time=5us scale=l2 ref=2TB/s\n", "t.trace:3: delay: scale=l2: expected dram or matrix"},
    {"simtrace 1\nranks 8\ndelay time=5us scale=dram ref=312TFLOPS\n", "t.trace:3: delay: ref=312TFLOPS: "},
    {"simtrace 1\nranks 8\ndelay time=5us scale=matrix ref=2TB/s\n", "t.trace:3: delay: ref=2TB/s: "},
    {"simtrace 1\nranks 8\ndelay time=5us scale=dram ref=0TB/s\n", "t.trace:3: delay: ref=0TB/s must be above 0"},
    {"simtrace 1\nranks 8\nmark\n", "t.trace:3: mark: missing name="},
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char why[TR_MSG_MAX] = "";
		struct trace *t = tr_parse_string(bad[i].text, "t.trace", why, sizeof why);
		CHECK(!t, "accepted (want '%s')", bad[i].msg);
		CHECK(t || (strstr(why, bad[i].msg) && !strchr(why, '\n')), "\n  message '%s'\n  want    '%s'", why,
		      bad[i].msg);
		tr_free(t);
	}

	/* a line of 4096 characters is fine, 4097 is not */
	static char text[8192];
	int n = snprintf(text, sizeof text, "simtrace 1\nranks 1\n");
	memset(text + n, ' ', 4096);
	memcpy(text + n, "delay time=1us", 14);
	strcpy(text + n + 4096, "\n");
	struct trace *t = parse(text);
	tr_free(t);
	memset(text + n, ' ', 4097);
	memcpy(text + n, "delay time=1us", 14);
	strcpy(text + n + 4097, "\n");
	char why[TR_MSG_MAX] = "";
	t = tr_parse_string(text, "t.trace", why, sizeof why);
	CHECK(!t && strstr(why, "t.trace:3: line is longer than 4096 characters"), "long line: %s", why);
	tr_free(t);

	/* 64 levels of blocks are fine, 65 are not; nor are calls that reach 65 */
	n = snprintf(text, sizeof text, "simtrace 1\nranks 1\n");
	for (int i = 0; i < 65; i++)
		n += snprintf(text + n, sizeof text - (size_t)n, "repeat 2 {\n");
	t = tr_parse_string(text, "t.trace", why, sizeof why);
	CHECK(!t && strstr(why, "t.trace:67: blocks nest deeper than 64"), "65 levels: %s", why);
	tr_free(t);
	n = snprintf(text, sizeof text, "simtrace 1\nranks 1\ndef d {\n");
	for (int i = 0; i < 60; i++)
		n += snprintf(text + n, sizeof text - (size_t)n, "on rank=0 {\n");
	for (int i = 0; i < 61; i++)
		n += snprintf(text + n, sizeof text - (size_t)n, "}\n");
	n += snprintf(text + n, sizeof text - (size_t)n,
	              "repeat 1 {\nrepeat 1 {\nrepeat 1 {\nrepeat 1 {\ncall d\n}\n}\n}\n}\n");
	t = tr_parse_string(text, "t.trace", why, sizeof why);
	CHECK(!t && strstr(why, "t.trace:129: call d: blocks nest deeper than 64 here (def d at line 3 nests 61 deep)"),
	      "deep call: %s", why);
	tr_free(t);

	/* no message text runs past the buffer, however small */
	char small[16];
	t = tr_parse_string("simtrace 7\n", "a-long-path-name.trace", small, sizeof small);
	CHECK(!t && strlen(small) == sizeof small - 1, "small buffer: '%s'", small);
	t = tr_parse_string(NULL, "x", why, sizeof why);
	CHECK(!t && why[0], "NULL text");
}

/* tests/trace_bad/: each file refused through tr_load, with exit 65 and the
   message expected.tsv gives. */
static void test_bad_files(const char *dir)
{
	char path[2048], line[1024], why[TR_MSG_MAX];
	int code, n = 0;
	snprintf(path, sizeof path, "%s/trace_bad/expected.tsv", dir);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "cannot open %s", path);
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		char *tab = strchr(line, '\t');
		CHECK(tab != NULL, "expected.tsv: no tab in '%s'", line);
		if (!tab)
			continue;
		*tab = '\0';
		snprintf(path, sizeof path, "%s/trace_bad/%s", dir, line);
		why[0] = '\0';
		code = -1;
		struct trace *t = tr_load(path, 0, &code, why, sizeof why);
		CHECK(!t && code == 65, "%s: accepted or exit %d (%s)", line, code, why);
		CHECK(strstr(why, tab + 1) && !strchr(why, '\n'), "%s:\n  message '%s'\n  want    '%s'", line, why,
		      tab + 1);
		tr_free(t);
		n++;
	}
	fclose(f);
	CHECK(n >= 30, "only %d files in trace_bad", n);

	snprintf(path, sizeof path, "%s/trace_bad/no-such-file.trace", dir);
	struct trace *t = tr_load(path, 0, &code, why, sizeof why);
	CHECK(!t && code == 66 && strstr(why, "no-such-file.trace: cannot read"), "missing file: %d %s", code, why);
	t = tr_load(dir, 0, &code, why, sizeof why); /* a directory */
	CHECK(!t && (code == 66 || code == 65), "a directory: %d %s", code, why);
	tr_free(t);
}

/* ---- expansion-time refusals ---- */

static const struct {
	const char *text;
	int rank;
	const char *msg;
	int ok_rank; /* a rank that expands without error, -1 if none */
} xbad[] = {
    {"simtrace 1\nranks 8\nlayout pp=4 dp=2\nsend peer=pp+1 bytes=1MiB\n", 6,
     "t.trace:4: rank 6: send peer=pp+1 is out of range (this rank is pp 3; pp has 4: 0-3)", 0},
    {"simtrace 1\nranks 8\nlayout pp=4 dp=2\nrecv peer=pp-2 bytes=1MiB\n", 3,
     "t.trace:4: rank 3: recv peer=pp-2 is out of range (this rank is pp 1; pp has 4: 0-3)", 5},
    {"simtrace 1\nranks 8\nrecv peer=rank-1 bytes=1\n", 0, "t.trace:3: rank 0: recv peer=rank-1 is out of range", 7},
    {"simtrace 1\nranks 8\nsend peer=3 bytes=1MiB\n", 3, "t.trace:3: rank 3: send to itself (peer=3 is this rank)", 2},
    {"simtrace 1\nranks 8\ncomm half ranks=0-3\ncoll op=allgather comm=half bytes=1MiB\n", 5,
     "t.trace:4: rank 5: coll op=allgather comm=half: this rank is not in comm half (line 3 lists 4 ranks)", 3},
    {"simtrace 1\nranks 8\non rank=0 {\n gemm m=1 n=1 k=1 dtype=fp16 id=x\n}\ngemm m=1 n=1 k=1 dtype=fp16 after=x\n", 1,
     "t.trace:6: rank 1: after=x: this rank has issued no op with id=x yet (line 4, which has it", 0},
    {"simtrace 1\nranks 2\ndef d {\n delay time=1us id=x\n}\ndelay time=1us after=x\ncall d\n", 0,
     "t.trace:6: rank 0: after=x: this rank has issued no op with id=x yet", -1},
};

static void test_expansion_errors(void)
{
	for (size_t i = 0; i < sizeof xbad / sizeof xbad[0]; i++) {
		struct trace *t = parse(xbad[i].text);
		if (!t)
			continue;
		struct tr_cursor *c = tr_cursor_new(t, xbad[i].rank);
		struct tr_event ev;
		char why[TR_MSG_MAX] = "";
		int r;
		while ((r = tr_next(c, &ev, why, sizeof why)) == 1)
			;
		CHECK(r == -1 && strstr(why, xbad[i].msg) && !strchr(why, '\n'), "\n  message '%s'\n  want    '%s'",
		      why, xbad[i].msg);
		CHECK(tr_next(c, &ev, why, sizeof why) == -1, "an error sticks");
		tr_cursor_free(c);
		if (xbad[i].ok_rank >= 0) {
			char w2[TR_MSG_MAX];
			struct tr_event e2[8];
			int n = expand(t, xbad[i].ok_rank, e2, 8, w2, sizeof w2);
			CHECK(n >= 0, "rank %d of case %zu: %s", xbad[i].ok_rank, i, w2);
		}
		tr_free(t);
	}
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	test_bad();
	test_bad_files(dir);
	test_expansion_errors();
	printf("%d checks: %d passed, %d failed\n", checks, checks - fails, fails);
	return fails != 0;
}
