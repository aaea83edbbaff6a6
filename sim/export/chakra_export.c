/*
 * chakra_export.c -- one rank of a simtrace 1 job as a Chakra ET (export.h
 * says what becomes what). The stream of messages is Chakra's: each
 * message's length as a varint, then the message packed by protobuf-c.
 */
#include "et_def.pb-c.h"
#include "export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_NODES 20000000LL

static int put_msg(FILE *f, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	unsigned char head[10], stack[4096], *buf = n <= sizeof stack ? stack : malloc(n);
	if (!buf)
		return -1;
	protobuf_c_message_pack(m, buf);
	int k = 0;
	size_t v = n;
	do {
		head[k] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			head[k] |= 0x80;
		k++;
	} while (v);
	int rc = fwrite(head, 1, (size_t)k, f) == (size_t)k && fwrite(buf, 1, n, f) == n ? 0 : -1;
	if (buf != stack)
		free(buf);
	return rc;
}

static int coll_type(enum tr_coll c)
{
	switch (c) {
	case CO_ALLREDUCE: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE;
	case CO_ALLGATHER: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER;
	case CO_REDUCESCATTER: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER;
	case CO_ALLTOALL: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL;
	case CO_BROADCAST: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST;
	case CO_REDUCE: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE;
	default: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER;
	}
}

/* The attributes of one node; at most NATTR. */
#define NATTR 8
struct attrs {
	ChakraProtoMsg__AttributeProto a[NATTR], *p[NATTR];
	int n;
};

static ChakraProtoMsg__AttributeProto *attr(struct attrs *A, const char *name)
{
	ChakraProtoMsg__AttributeProto *a = &A->a[A->n];
	chakra_proto_msg__attribute_proto__init(a);
	a->name = (char *)name;
	A->p[A->n++] = a;
	return a;
}

static void attr_int(struct attrs *A, const char *name, long long v)
{
	ChakraProtoMsg__AttributeProto *a = attr(A, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
	a->int64_val = v;
}

static void attr_uint(struct attrs *A, const char *name, double v)
{
	ChakraProtoMsg__AttributeProto *a = attr(A, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
	a->uint64_val = v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

static void attr_bool(struct attrs *A, const char *name, int v)
{
	ChakraProtoMsg__AttributeProto *a = attr(A, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
	a->bool_val = v != 0;
}

static void attr_str(struct attrs *A, const char *name, const char *v)
{
	ChakraProtoMsg__AttributeProto *a = attr(A, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
	a->string_val = (char *)v;
}

static uint64_t micros(double s)
{
	double us = s * 1e6;
	return us <= 0 ? 0 : us >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(us);
}

int exp_groups_build(const struct trace *t, struct exp_groups *G, char *why, size_t whylen)
{
	int nc = tr_ncomms(t), n = tr_ranks(t);
	memset(G, 0, sizeof *G);
	G->ncomms = nc;
	G->ranks = n;
	G->id = calloc((size_t)nc * (size_t)n + 1, sizeof *G->id);
	int *first = malloc(((size_t)n + 1) * sizeof *first); /* per group id (lowest rank): its number */
	if (!G->id || !first) {
		free(first);
		exp_groups_free(G);
		snprintf(why, whylen, "out of memory");
		return SIM_EXIT_INTERNAL;
	}
	for (int c = 1; c < nc; c++) { /* 0 is world */
		for (int r = 0; r < n; r++)
			first[r] = 0;
		for (int r = 0; r < n; r++) {
			int gid, size = tr_comm_group(t, c, r, NULL, 0, &gid);
			if (size < 1 || size == n || gid < 0)
				continue; /* no group, or every rank: world */
			if (!first[gid])
				first[gid] = ++G->count;
			G->id[(size_t)c * (size_t)n + (size_t)r] = first[gid];
		}
	}
	free(first);
	return 0;
}

void exp_groups_free(struct exp_groups *G)
{
	free(G->id);
	memset(G, 0, sizeof *G);
}

int exp_groups_write(const struct trace *t, const struct exp_groups *G, FILE *f)
{
	int n = G->ranks, written = 0;
	int *members = malloc(((size_t)n + 1) * sizeof *members);
	if (!members)
		return -1;
	fputs("{", f);
	for (int c = 1; c < G->ncomms; c++)
		for (int r = 0; r < n; r++) {
			int id = G->id[(size_t)c * (size_t)n + (size_t)r];
			if (id != written + 1)
				continue; /* none, or written already (ids rise in this order) */
			int m = tr_comm_group(t, c, r, members, n, NULL);
			fprintf(f, "%s\n  \"%d\": [", written ? "," : "", id);
			for (int q = 0; q < m; q++)
				fprintf(f, "%s%d", q ? ", " : "", members[q]);
			fputs("]", f);
			written++;
		}
	fputs("\n}\n", f);
	free(members);
	return ferror(f) ? -1 : 0;
}

int exp_chakra_rank(const struct trace *t, const struct arch_chip *c, struct dm *dm, const struct exp_groups *G,
                    int rank, long long max_nodes, FILE *f, struct exp_stats *st, char *why, size_t whylen)
{
	if (max_nodes <= 0)
		max_nodes = DEFAULT_MAX_NODES;
	double ops = tr_ops_of_rank(t, rank);
	if (!(ops <= (double)max_nodes)) {
		snprintf(why, whylen, "%s: rank %d issues %.3g ops, more than %lld nodes (--max-nodes)", tr_path(t),
		         rank, ops, max_nodes);
		return SIM_EXIT_TRACE;
	}
	double matrix_fp16 = arch_peak_matrix(c, DT_FP16, 0); /* what a delay scale=matrix scales by */
	int ns = tr_nstreams(t), nl = tr_nlabels(t);
	long long *stream_last = malloc((size_t)(ns + 1) * sizeof *stream_last);
	long long *label_last = malloc((size_t)(nl + 1) * sizeof *label_last);
	struct tr_cursor *cur = tr_cursor_new(t, rank);
	if (!stream_last || !label_last || !cur) {
		free(stream_last);
		free(label_last);
		tr_cursor_free(cur);
		snprintf(why, whylen, "out of memory");
		return SIM_EXIT_INTERNAL;
	}
	for (int i = 0; i <= ns; i++)
		stream_last[i] = -1;
	for (int i = 0; i <= nl; i++)
		label_last[i] = -1;
	ChakraProtoMsg__AttributeProto ga;
	ChakraProtoMsg__AttributeProto *gap = &ga;
	chakra_proto_msg__attribute_proto__init(&ga);
	ga.name = "exporter";
	ga.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
	ga.string_val = "sim export chakra";
	ChakraProtoMsg__GlobalMetadata g = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
	g.version = "0.0.4";
	g.attr = &gap;
	g.n_attr = 1;
	int rc = put_msg(f, &g.base) ? SIM_EXIT_CANTCREAT : 0;
	if (rc)
		snprintf(why, whylen, "cannot write");
	uint64_t id = 0;
	struct tr_event ev;
	char text[1024];
	int got;
	while (!rc && (got = tr_next(cur, &ev, why, whylen)) != 0) {
		if (got < 0) {
			rc = SIM_EXIT_TRACE;
			break;
		}
		if (ev.kind == TK_MARK || ev.kind == TK_MEM)
			continue;
		ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
		struct attrs A = {.n = 0};
		uint64_t deps[TR_MAX_AFTER + 1];
		char pg[16]; /* the pg_name attr points here until the node is written */
		size_t nd = 0;
		if (stream_last[ev.stream] >= 0)
			deps[nd++] = (uint64_t)stream_last[ev.stream];
		for (int k = 0; k < ev.nafter; k++) {
			long long d = label_last[ev.after[k]];
			int seen = 0;
			for (size_t q = 0; q < nd && !seen; q++)
				seen = deps[q] == (uint64_t)d;
			if (d >= 0 && !seen)
				deps[nd++] = (uint64_t)d;
		}
		tr_event_format(t, &ev, text, sizeof text);
		n.id = id;
		n.name = text;
		n.data_deps = deps;
		n.n_data_deps = nd;
		attr_int(&A, "stream", ev.stream);
		switch (ev.kind) {
		case TK_OP: {
			struct dm_result r;
			if (dm_predict_cached(dm, c, &ev.op, &r, why, whylen)) {
				rc = SIM_EXIT_TRACE;
				break;
			}
			n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
			n.duration_micros = micros(r.time_s);
			attr_bool(&A, "is_cpu_op", 0);
			attr_uint(&A, "num_ops", r.flops);
			attr_uint(&A, "tensor_size", r.bytes_dram);
			st->comp++;
			break;
		}
		case TK_COLL:
			if (ev.coll == CO_SHIFT) { /* a ring step: Chakra's collective types have none */
				snprintf(why, whylen,
				         "%s:%d: coll op=shift has no Chakra collective type (sim gen writes it for "
				         "--tp-comm-overlap; a trace without it exports)",
				         tr_path(t), ev.line);
				rc = SIM_EXIT_TRACE;
				break;
			}
			n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
			attr_bool(&A, "is_cpu_op", 0);
			attr_int(&A, "comm_type", coll_type(ev.coll));
			attr_uint(&A, "comm_size", ev.bytes);
			int gid = G ? G->id[(size_t)ev.comm * (size_t)G->ranks + (size_t)rank] : 0;
			if (gid) {
				snprintf(pg, sizeof pg, "%d", gid);
				attr_str(&A, "pg_name", pg);
			}
			st->colls++;
			break;
		case TK_SEND:
		case TK_RECV:
			n.type = ev.kind == TK_SEND ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE
			                            : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
			attr_bool(&A, "is_cpu_op", 0);
			attr_int(&A, ev.kind == TK_SEND ? "comm_dst" : "comm_src", ev.peer);
			attr_uint(&A, "comm_size", ev.bytes);
			attr_int(&A, "comm_tag", ev.tag);
			st->p2p++;
			break;
		default: /* TK_DELAY: the host's time */
			n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
			n.duration_micros = micros(tr_delay_seconds(&ev, c->dram.bw_Bps, matrix_fp16));
			attr_bool(&A, "is_cpu_op", 1);
			st->delays++;
			break;
		}
		if (rc)
			break;
		n.attr = A.p;
		n.n_attr = (size_t)A.n;
		if (put_msg(f, &n.base)) {
			snprintf(why, whylen, "cannot write");
			rc = SIM_EXIT_CANTCREAT;
			break;
		}
		stream_last[ev.stream] = (long long)id;
		if (ev.label >= 0)
			label_last[ev.label] = (long long)id;
		id++;
		st->nodes++;
	}
	tr_cursor_free(cur);
	free(stream_last);
	free(label_last);
	return rc;
}
