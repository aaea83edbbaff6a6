/*
 * test_chakra.c -- sim import chakra (sim/import/chakra*.c) on Chakra ETs
 * built here with protobuf-c from Chakra's schema (the library the
 * importer reads them with, and the format Chakra's own tools write: a
 * varint length before each message). Checked against what the schema and
 * docs/import.md say each node becomes, not against the importer's output:
 *  - a GEMM kernel under aten::mm with recorded shapes becomes its gemm op,
 *    the CPU op's second kernel is covered, a kernel of an unknown CPU op
 *    keeps its duration; the coverage adds up;
 *  - data_deps order the nodes (a node listed before its dependency is
 *    written after it), after= names the latest dependency of each other
 *    stream, nine streams are joined by a zero delay first; ctrl_deps do
 *    not order (they name the launcher);
 *  - a collective is a coll on world with --ranks, carried without; a
 *    send/recv between two files' ranks is a send/recv;
 *  - a convolution split into pieces that share an rf_id is one conv op,
 *    read from either argument order (conv2d's, cudnn_convolution's);
 *  - refusals: a cycle, an id twice, an unknown schema version, a message
 *    cut short, bytes that are not protobuf, a rank twice;
 *  - the Python-literal reader of IOInfo strings.
 * Every job written is read back by the trace parser.
 */
#include "arch.h"
#include "chakra_int.h"
#include "check.h"
#include "et_def.pb-c.h"
#include "import.h"
#include "import_int.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
	unsigned char c[10];
	int n = 0;
	do {
		c[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			c[n] |= 0x80;
		n++;
	} while (v);
	put(b, c, (size_t)n);
}

static void put_msg(struct buf *b, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	unsigned char *tmp = malloc(n + 1);
	protobuf_c_message_pack(m, tmp);
	put_varint(b, n);
	put(b, tmp, n);
	free(tmp);
}

static void meta(struct buf *b, const char *version)
{
	ChakraProtoMsg__GlobalMetadata g = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
	g.version = (char *)version;
	put_msg(b, &g.base);
}

/* A node: attrs is_cpu_op, stream, and the comm ones when comm_type >= 0. */
struct nspec {
	uint64_t id;
	const char *name;
	int type, cpu;
	long long stream, dur;
	uint64_t ctrl[2], data[12];
	int nctrl, ndata;
	const char *shapes, *types, *values;
	long long rf; /* rf_id attr when > 0 */
	int comm_type;
	long long comm_size, peer;
};

static void node(struct buf *b, const struct nspec *s)
{
	ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
	n.id = s->id;
	n.name = (char *)s->name;
	n.type = (ChakraProtoMsg__NodeType)s->type;
	n.duration_micros = (uint64_t)s->dur;
	n.ctrl_deps = (uint64_t *)s->ctrl;
	n.n_ctrl_deps = (size_t)s->nctrl;
	n.data_deps = (uint64_t *)s->data;
	n.n_data_deps = (size_t)s->ndata;
	ChakraProtoMsg__IOInfo in = CHAKRA_PROTO_MSG__IOINFO__INIT;
	if (s->shapes) {
		in.shapes = (char *)s->shapes;
		in.types = (char *)s->types;
		if (s->values)
			in.values = (char *)s->values;
		n.inputs = &in;
	}
	ChakraProtoMsg__AttributeProto a[6], *ap[6];
	int na = 0;
	for (int i = 0; i < 6; i++) {
		chakra_proto_msg__attribute_proto__init(&a[i]);
		ap[i] = &a[i];
	}
	a[na].name = "is_cpu_op";
	a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
	a[na++].bool_val = s->cpu;
	a[na].name = s->cpu ? "tid" : "stream";
	a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
	a[na++].int64_val = s->stream;
	if (s->comm_type >= 0 && s->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE) {
		a[na].name = "comm_type";
		a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
		a[na++].int64_val = s->comm_type;
	}
	if (s->comm_size) {
		a[na].name = "comm_size";
		a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
		a[na++].int64_val = s->comm_size;
	}
	if (s->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE ||
	    s->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE) {
		a[na].name = s->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE ? "comm_dst" : "comm_src";
		a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
		a[na++].int64_val = s->peer;
	}
	if (s->rf > 0) {
		a[na].name = "rf_id";
		a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
		a[na++].int64_val = s->rf;
	}
	n.attr = ap;
	n.n_attr = (size_t)na;
	put_msg(b, &n.base);
}

enum { COMP = 4, SEND = 5, RECV = 6, COLL = 7 };

/* Imports b as one rank; the job text (NULL on a refusal, why set). */
static char *import(const struct buf *b, const struct imp_options *o, struct imp_stats *st, int *rc, char *why,
                    size_t whylen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	*rc = imp_chakra_buf(b->p, b->n, "t.et", o, f, st, why, whylen);
	fclose(f);
	if (*rc) {
		CHECK(len == 0, "a refusal wrote %zu bytes", len);
		free(text);
		return NULL;
	}
	struct trace *t = tr_parse_string(text, "t.trace", why, whylen);
	CHECK(t != NULL, "the job does not parse: %s", why);
	tr_free(t);
	return text;
}

static const char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	if (!p)
		return NULL;
	while (p > text && p[-1] != '\n')
		p--;
	return p;
}

static int line_has(const char *text, const char *needle, const char *also)
{
	const char *l = line_with(text, needle);
	if (!l)
		return 0;
	const char *e = strchr(l, '\n');
	size_t n = e ? (size_t)(e - l) : strlen(l);
	char tmp[1024];
	snprintf(tmp, sizeof tmp, "%.*s", (int)n, l);
	return strstr(tmp, also) != NULL;
}

static void test_ops_and_order(void)
{
	struct buf b = {0};
	meta(&b, "0.0.4");
	/* node 5 depends on node 9, listed after it: written after it */
	node(&b, &(struct nspec){.id = 5,
	                         .name = "aten::mm(0)",
	                         .type = COMP,
	                         .cpu = 1,
	                         .stream = 1,
	                         .dur = 30,
	                         .data = {9},
	                         .ndata = 1,
	                         .comm_type = -1});
	node(&b,
	     &(struct nspec){
	         .id = 9, .name = "aten::relu(0)", .type = COMP, .cpu = 1, .stream = 1, .dur = 10, .comm_type = -1});
	node(&b, &(struct nspec){.id = 10,
	                         .name = "sm90_xmma_gemm_bf16",
	                         .type = COMP,
	                         .stream = 7,
	                         .dur = 100,
	                         .ctrl = {5},
	                         .nctrl = 1,
	                         .data = {5},
	                         .ndata = 1,
	                         .shapes = "[[4096, 1024], [1024, 2048]]",
	                         .types = "['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)']",
	                         .comm_type = -1});
	node(&b, &(struct nspec){.id = 11,
	                         .name = "splitKreduce_kernel",
	                         .type = COMP,
	                         .stream = 7,
	                         .dur = 20,
	                         .ctrl = {5},
	                         .nctrl = 1,
	                         .data = {10},
	                         .ndata = 1,
	                         .shapes = "[[4096, 1024], [1024, 2048]]",
	                         .types = "['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)']",
	                         .comm_type = -1});
	/* a kernel of a CPU op the mapper does not know, on another stream,
	   after the GEMM's covered kernel (its cover, node 10) and the CPU op;
	   ctrl_deps name node 12's launcher only */
	node(&b, &(struct nspec){.id = 12,
	                         .name = "aten::embedding(0)",
	                         .type = COMP,
	                         .cpu = 1,
	                         .stream = 1,
	                         .dur = 5,
	                         .ctrl = {10},
	                         .nctrl = 1,
	                         .comm_type = -1});
	node(&b, &(struct nspec){.id = 13,
	                         .name = "indexSelectLargeIndex",
	                         .type = COMP,
	                         .stream = 8,
	                         .dur = 40,
	                         .ctrl = {12},
	                         .nctrl = 1,
	                         .data = {12, 11, 404},
	                         .ndata = 3,
	                         .comm_type = -1});
	node(&b, &(struct nspec){.id = 14,
	                         .name = "ncclKernel_AllReduce_RING_LL_Sum_float",
	                         .type = COLL,
	                         .stream = 20,
	                         .dur = 300,
	                         .data = {13},
	                         .ndata = 1,
	                         .comm_type = 0,
	                         .comm_size = 1 << 20});
	struct imp_stats st;
	char why[512] = "";
	int rc;
	char *t = import(&b, &(struct imp_options){0}, &st, &rc, why, sizeof why);
	CHECK(t && rc == 0, "import: rc %d %s", rc, why);
	if (t) {
		CHECK(line_has(t, "gemm m=4096 n=2048 k=1024 dtype=bf16", "stream=s7"),
		      "aten::mm [4096,1024]x[1024,2048] bf16 is not a gemm on s7:\n%s", t);
		CHECK(line_has(t, "gemm m=4096", "after=n5"), "the GEMM does not wait for its CPU op n5");
		CHECK(!strstr(t, "splitKreduce"), "the covered kernel wrote a line");
		CHECK(strstr(t, "relu(0)") < strstr(t, "aten::mm(0)"), "node 5 written before node 9 it depends on");
		CHECK(line_has(t, "indexSelectLargeIndex", "delay time=40us stream=s8 id=n13 after=n10,n12"),
		      "the unknown kernel: expected its duration on s8 after the GEMM (the covered kernel's cover) and "
		      "its CPU op:\n%s",
		      t);
		CHECK(line_has(t, "ncclKernel", "delay time=300us stream=s20"),
		      "one rank: the collective keeps its duration");
		CHECK(strstr(t, "left out: 1 dependencies on nodes the trace does not hold"), "the missing dep 404");
		CHECK(st.items[IF_GEMM] == 2 && st.modelled_items[IF_GEMM] == 2 && st.gpu_us[IF_GEMM] == 120 &&
		          st.modelled_us[IF_GEMM] == 120,
		      "gemm coverage: %ld/%ld items %.0f/%.0f us", st.modelled_items[IF_GEMM], st.items[IF_GEMM],
		      st.modelled_us[IF_GEMM], st.gpu_us[IF_GEMM]);
		CHECK(st.ops == 1 && st.colls == 0 && st.delays == 2, "lines: %ld ops %ld colls %ld delays", st.ops,
		      st.colls, st.delays);
	}
	free(t);
	t = import(&b, &(struct imp_options){.ranks = 4}, &st, &rc, why, sizeof why);
	CHECK(t && strstr(t, "\nranks 4\n") && line_has(t, "ncclKernel", "coll op=allreduce comm=world bytes=1048576"),
	      "--ranks 4: expected ranks 4 and the allreduce on world");
	CHECK(st.colls == 1 && st.modelled_us[IF_NCCL] == 300, "--ranks 4: the collective counts as modelled");
	free(t);
	t = import(&b, &(struct imp_options){.all_measured = 1}, &st, &rc, why, sizeof why);
	CHECK(t && !strstr(t, "\ngemm ") && st.ops == 0, "--all-measured still models");
	free(t);
	free(b.p);
}

/* A convolution as Chakra's converter records it: the CPU op split into
   pieces conv2d(0), conv2d(1) (one rf_id), each launching a kernel, with
   cudnn_convolution's arguments (input, weight, padding, stride, dilation,
   groups) under conv2d's name; and one in conv2d's own order with a bias. */
static void test_conv(void)
{
	const char *cudnn_shapes = "[[32, 3, 224, 224], [64, 3, 7, 7], [[], []], [[], []], [[], []], []]";
	const char *cudnn_types = "['Tensor(float)', 'Tensor(float)', 'GenericList[Int,Int]', 'GenericList[Int,Int]', "
	                          "'GenericList[Int,Int]', 'Int']";
	const char *cudnn_values = "[[1, 2, 0, 4816896, 4, 'cuda:0'], [3, 4, 0, 9408, 4, 'cuda:0'], [3, 3], [2, 2], "
	                           "[1, 1], 1]";
	struct buf b = {0};
	meta(&b, "0.0.4");
	node(&b,
	     &(struct nspec){
	         .id = 1, .name = "aten::conv2d(0)", .type = COMP, .cpu = 1, .stream = 1, .rf = 7, .comm_type = -1});
	node(&b, &(struct nspec){.id = 2,
	                         .name = "computeOffsetsKernel",
	                         .type = COMP,
	                         .stream = 7,
	                         .dur = 4,
	                         .ctrl = {1},
	                         .nctrl = 1,
	                         .data = {1},
	                         .ndata = 1,
	                         .shapes = cudnn_shapes,
	                         .types = cudnn_types,
	                         .values = cudnn_values,
	                         .comm_type = -1});
	node(&b, &(struct nspec){.id = 3,
	                         .name = "aten::conv2d(1)",
	                         .type = COMP,
	                         .cpu = 1,
	                         .stream = 1,
	                         .rf = 7,
	                         .data = {1},
	                         .ndata = 1,
	                         .comm_type = -1});
	node(&b, &(struct nspec){.id = 4,
	                         .name = "scudnn_128x64_relu_large_nn_v1",
	                         .type = COMP,
	                         .stream = 7,
	                         .dur = 1600,
	                         .ctrl = {3},
	                         .nctrl = 1,
	                         .data = {3},
	                         .ndata = 1,
	                         .shapes = cudnn_shapes,
	                         .types = cudnn_types,
	                         .values = cudnn_values,
	                         .comm_type = -1});
	node(&b, &(struct nspec){.id = 5,
	                         .name = "aten::conv2d(0)",
	                         .type = COMP,
	                         .cpu = 1,
	                         .stream = 1,
	                         .rf = 8,
	                         .data = {3},
	                         .ndata = 1,
	                         .comm_type = -1});
	node(&b,
	     &(struct nspec){.id = 6,
	                     .name = "implicit_convolve_sgemm",
	                     .type = COMP,
	                     .stream = 7,
	                     .dur = 300,
	                     .ctrl = {5},
	                     .nctrl = 1,
	                     .data = {5},
	                     .ndata = 1,
	                     .shapes = "[[8, 64, 56, 56], [128, 64, 3, 3], [128], [[], []], [[], []], [[], []], []]",
	                     .types = "['Tensor(c10::Half)', 'Tensor(c10::Half)', 'Tensor(c10::Half)', "
	                              "'GenericList[Int,Int]', 'GenericList[Int,Int]', 'GenericList[Int,Int]', 'Int']",
	                     .values = "[[1, 2, 0, 1, 2, 'cuda:0'], [3, 4, 0, 1, 2, 'cuda:0'], [5, 6, 0, 128, 2, "
	                               "'cuda:0'], [2, 2], [1, 1], [1, 1], 1]",
	                     .comm_type = -1});
	struct imp_stats st;
	char why[512];
	int rc;
	char *t = import(&b, NULL, &st, &rc, why, sizeof why);
	CHECK(t && strstr(t, "\nconv n=32 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=fp32 stream=s7"),
	      "conv2d(0)/(1) with cudnn_convolution's arguments: expected one conv 7x7 stride 2 pad 3:\n%s",
	      t ? t : why);
	CHECK(t && !strstr(t, "scudnn_128x64"),
	      "the second piece's kernel wrote a line of its own (the same conv twice)");
	CHECK(t && strstr(t, "\nconv n=8 c=64 h=56 w=56 k=128 r=3 s=3 stride=2 pad=1 dtype=fp16"),
	      "conv2d in its own order (bias, stride, padding): expected conv 3x3 stride 2 pad 1:\n%s", t ? t : why);
	CHECK(st.modelled_us[IF_OTHER] + st.modelled_us[IF_GEMM] == 1904, "the convs stand for 1904 us, not %.0f",
	      st.modelled_us[IF_OTHER] + st.modelled_us[IF_GEMM]);
	free(t);
	free(b.p);
}

static void test_join(void)
{
	struct buf b = {0};
	meta(&b, "");
	struct nspec last = {.id = 100, .name = "k", .type = COMP, .stream = 99, .dur = 1, .comm_type = -1};
	for (int s = 0; s < 10; s++) {
		node(&b, &(struct nspec){
		             .id = (uint64_t)s + 1, .name = "k", .type = COMP, .stream = s, .dur = 1, .comm_type = -1});
		last.data[last.ndata++] = (uint64_t)s + 1;
	}
	node(&b, &last);
	struct imp_stats st;
	char why[512];
	int rc;
	char *t = import(&b, &(struct imp_options){0}, &st, &rc, why, sizeof why);
	CHECK(t && strstr(t, "delay time=0us stream=s99 after=n1,n2,n3,n4,n5,n6,n7,n8\n") &&
	          strstr(t, "delay time=1us stream=s99 after=n9,n10"),
	      "ten streams: expected a zero delay joining eight, then the node after two:\n%s", t ? t : why);
	free(t);
	free(b.p);
}

static void test_refusals(void)
{
	struct imp_stats st;
	char why[512];
	int rc;
	struct buf b = {0};
	meta(&b, "0.0.4");
	node(&b,
	     &(struct nspec){.id = 1, .name = "a", .type = COMP, .cpu = 1, .data = {2}, .ndata = 1, .comm_type = -1});
	node(&b,
	     &(struct nspec){.id = 2, .name = "b", .type = COMP, .cpu = 1, .data = {1}, .ndata = 1, .comm_type = -1});
	CHECK(!import(&b, NULL, &st, &rc, why, sizeof why) && rc == 65 && strstr(why, "t.et: node 1 'a'") &&
	          strstr(why, "cycle"),
	      "a cycle: %d %s", rc, why);
	b.n = 0;
	meta(&b, "0.0.4");
	node(&b, &(struct nspec){.id = 1, .name = "a", .type = COMP, .cpu = 1, .comm_type = -1});
	node(&b, &(struct nspec){.id = 1, .name = "b", .type = COMP, .cpu = 1, .comm_type = -1});
	CHECK(!import(&b, NULL, &st, &rc, why, sizeof why) && rc == 65 && strstr(why, "t.et: node id 1 twice"),
	      "an id twice: %d %s", rc, why);
	b.n = 0;
	meta(&b, "9.1");
	CHECK(!import(&b, NULL, &st, &rc, why, sizeof why) && rc == 65 &&
	          strstr(why, "t.et: GlobalMetadata.version '9.1': an unknown Chakra schema version"),
	      "unknown version: %d %s", rc, why);
	b.n = 0;
	meta(&b, "0.0.4");
	node(&b, &(struct nspec){.id = 1, .name = "aten::mm", .type = COMP, .cpu = 1, .comm_type = -1});
	size_t whole = b.n;
	b.n = whole - 3;
	CHECK(!import(&b, NULL, &st, &rc, why, sizeof why) && rc == 65 && strstr(why, "t.et: message 1 (byte ") &&
	          strstr(why, "cut short"),
	      "a message cut short: %d %s", rc, why);
	b.n = 0;
	put(&b, "{\"traceEvents\": []}", 19);
	CHECK(!import(&b, NULL, &st, &rc, why, sizeof why) && rc == 65 && !strncmp(why, "t.et: ", 6) &&
	          !strchr(why, '\n'),
	      "JSON given as an ET: %d %s", rc, why);
	b.n = 0;
	CHECK(!import(&b, NULL, &st, &rc, why, sizeof why) && rc == 65 && strstr(why, "t.et: empty"),
	      "an empty file: %d %s", rc, why);
	free(b.p);
}

static void test_pylit(void)
{
	json_t *v = chk_pylit("[[8, 2048, 768], [], (1,), 'cuda:0', True, None, -1.5e-3, \"x\"]");
	CHECK(json_is_array(v) && json_array_size(v) == 8, "pylit list");
	CHECK(json_integer_value(json_array_get(json_array_get(v, 0), 1)) == 2048, "pylit nested int");
	CHECK(json_array_size(json_array_get(v, 2)) == 1, "pylit 1-tuple");
	CHECK(!strcmp(json_string_value(json_array_get(v, 3)), "cuda:0"), "pylit string");
	CHECK(json_is_true(json_array_get(v, 4)) && json_is_null(json_array_get(v, 5)), "pylit True None");
	CHECK(json_real_value(json_array_get(v, 6)) == -1.5e-3, "pylit real");
	json_decref(v);
	const char *bad[] = {
	    "[1, 2", "[1 2]", "'open", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	    "Tru",   "[1] x", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		v = chk_pylit(bad[i]);
		CHECK(!v, "pylit accepted '%s'", bad[i]);
		json_decref(v);
	}
	json_t *a = chk_args("[[2, 3], []]", "['Tensor(c10::Half)', 'Bool']", "[[1, 2, 0, 6, 2, 'cuda:0'], False]");
	CHECK(a && !strcmp(json_string_value(json_array_get(json_object_get(a, "Input type"), 0)), "c10::Half") &&
	          !strcmp(json_string_value(json_array_get(json_object_get(a, "Concrete Inputs"), 1)), "False") &&
	          !strcmp(json_string_value(json_array_get(json_object_get(a, "Concrete Inputs"), 0)), ""),
	      "chk_args: Input type / Concrete Inputs");
	json_decref(a);
}

static void test_send_recv(void)
{
	/* two ranks, each its own file (as buffers through imp_chakra's files) */
	char dir[] = "/tmp/sim-chakra-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char p0[64], p1[64];
	snprintf(p0, sizeof p0, "%s/job.0.et", dir);
	snprintf(p1, sizeof p1, "%s/job.1.et", dir);
	for (int r = 0; r < 2; r++) {
		struct buf b = {0};
		meta(&b, "0.0.4");
		node(&b, &(struct nspec){.id = 1,
		                         .name = r ? "recv" : "send",
		                         .type = r ? RECV : SEND,
		                         .stream = 3,
		                         .dur = 50,
		                         .comm_type = -1,
		                         .comm_size = 4096,
		                         .peer = 1 - r});
		FILE *f = fopen(r ? p1 : p0, "wb");
		fwrite(b.p, 1, b.n, f);
		fclose(f);
		free(b.p);
	}
	const char *paths[] = {p1, p0}; /* out of order: the names say the ranks */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct imp_stats st;
	char why[512] = "";
	int rc = imp_chakra(paths, 2, NULL, f, &st, why, sizeof why);
	fclose(f);
	CHECK(rc == 0 && strstr(text, "on rank=0 {\nsend peer=1 bytes=4096 tag=0 stream=s3") &&
	          strstr(text, "on rank=1 {\nrecv peer=0 bytes=4096 tag=0 stream=s3"),
	      "send/recv between two ranks: %d %s\n%s", rc, why, text ? text : "");
	free(text);
	const char *twice[] = {p0, p0};
	f = open_memstream(&text, &len);
	rc = imp_chakra(twice, 2, NULL, f, &st, why, sizeof why);
	fclose(f);
	CHECK(rc == 65 && strstr(why, "rank 0 twice"), "a rank twice: %d %s", rc, why);
	free(text);
	remove(p0);
	remove(p1);
	remove(dir);
}

/* A communicator line longer than a trace line is refused, not written
   unreadable: every 2nd of 2048 ranks is 1024 runs; the first 64 ranks one. */
static void test_group_line(void)
{
	int r[1024];
	char why[512] = "";
	for (int i = 0; i < 1024; i++)
		r[i] = 2 * i;
	CHECK(imp_check_group(3, r, 1024, 0, why, sizeof why) == SIM_EXIT_TRACE, "a 1024-run group passed");
	CHECK(strstr(why, "pg3: its 1024 ranks fall in 1024 separate runs") != NULL, "why: %s", why);
	for (int i = 0; i < 1024; i++)
		r[i] = i;
	CHECK(imp_check_group(3, r, 1024, 84, why, sizeof why) == 0, "0-1023 refused: %s", why);
	for (int i = 0; i < 300; i++) /* 300 runs of about 10 characters: near the limit */
		r[i] = 3 * i;
	int rc = imp_check_group(0, r, 300, 0, why, sizeof why);
	long chars = (long)strlen("comm pg0 ranks=");
	for (int i = 0; i < 300; i++)
		chars += snprintf(NULL, 0, "%s%d", i ? "," : "", r[i]);
	CHECK((rc == 0) == (chars <= TR_LINE_MAX), "%ld characters, rc %d", chars, rc);
}

int main(void)
{
	test_ops_and_order();
	test_join();
	test_conv();
	test_refusals();
	test_pylit();
	test_send_recv();
	test_group_line();
	printf("%d checks, %d failed\n", checks, fails);
	return fails != 0;
}
