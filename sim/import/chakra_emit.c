/*
 * chakra_emit.c -- what each node of a Chakra ET becomes, and the job
 * written from the ranks chakra.c read (docs/import.md, "Chakra").
 *
 *  - A GPU node (is_cpu_op false) launched by a CPU op the op mapper knows
 *    (its ctrl_dep, else the latest CPU op it depends on; kineto_ops.c's table, with the shapes
 *    the node recorded) becomes that op; the CPU op's later GPU nodes are
 *    covered by it. COMM_COLL_NODEs become collectives on `world` when the
 *    job's ranks are known (several files, or --ranks) and the node names no
 *    process group and no subset of the network's dims; COMM_SEND/RECV
 *    nodes become send/recv between the imported ranks. Everything else
 *    keeps its recorded duration (a delay).
 *  - CPU ops are delays of their recorded (exclusive) duration on a stream
 *    `cpuT` per thread T; GPU nodes run on a stream `sS` per CUDA stream S.
 *  - The nodes are written in topological order; a node waits (after=) for
 *    the latest node it depends on on each other stream (the earlier ones
 *    of that stream end before it). More than eight such streams are joined
 *    by zero-time delays on the node's own stream first.
 */
#include "arch.h"
#include "chakra_int.h"
#include "et_def.pb-c.h"
#include "import_int.h"

#include <stdlib.h>
#include <string.h>

#define CHK_TEXT 320

static const char *coll_name(int t)
{
	switch (t) {
	case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE: return "allreduce";
	case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE: return "reduce";
	case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER: return "allgather";
	case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST: return "broadcast";
	case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL: return "alltoall";
	case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER: return "reducescatter";
	case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER: return "barrier";
	default: return NULL; /* gather, scatter, reduce_scatter_block: no simtrace op */
	}
}

static int is_gpu(const struct chk_node *n)
{
	return !n->cpu && n->type != CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE &&
	       n->type != CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE;
}

static enum imp_family family(const struct chk_node *n)
{
	if (n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE ||
	    n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE ||
	    n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE)
		return IF_NCCL;
	const char *cat = !strncmp(n->name, "Memcpy", 6)   ? "gpu_memcpy"
	                  : !strncmp(n->name, "Memset", 6) ? "gpu_memset"
	                                                   : "kernel";
	return kin_family(cat, n->name);
}

/* The CPU op that launched GPU node i: its ctrl_dep (Chakra's converter
   makes the launcher the parent), else the latest CPU node it depends on. */
static long parent(const struct chk_rank *r, long i)
{
	long best = r->nd[i].ctrl;
	if (best >= 0 && !is_gpu(&r->nd[best]))
		return best;
	best = -1;
	for (long q = r->dstart[i]; q < r->dstart[i + 1]; q++) {
		long d = r->dep[q];
		if (!is_gpu(&r->nd[d]) && (best < 0 || r->pos[d] > r->pos[best]))
			best = d;
	}
	return best;
}

/* "aten::mm(0)" -> "aten::mm": Chakra's converter numbers the pieces of a
   CPU op it splits. */
static void op_name(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", s);
	size_t n = strlen(buf);
	if (n > 2 && buf[n - 1] == ')') {
		size_t k = n - 2;
		while (k > 0 && buf[k] >= '0' && buf[k] <= '9')
			k--;
		if (k < n - 2 && buf[k] == '(')
			buf[k] = 0;
	}
}

static int set_text(struct chk_node *n, const char *s)
{
	n->text = strdup(s);
	return n->text ? 0 : -1;
}

/* The group of pg_name in G that the job can hold: its index, -2 when it
   is every rank (world), -1 when not known or not in the job with self. */
static int group_of(const struct chk_groups *G, const char *pg, int self, int nranks)
{
	for (int g = 0; G && g < G->count; g++) {
		if (strcmp(G->name[g], pg))
			continue;
		int in = 0;
		for (int q = 0; q < G->n[g]; q++) {
			if (G->ranks[g][q] >= nranks)
				return -1;
			in |= G->ranks[g][q] == self;
		}
		if (!in)
			return -1;
		return G->n[g] == nranks ? -2 : g;
	}
	return -1;
}

/* A collective or a send/recv between the job's ranks; 1, 0 (carried), -1
   out of memory. used[g] is set for a group a collective names. */
static int comm_node(struct chk_node *n, int self, int nranks, int symmetric, const struct chk_groups *G,
                     unsigned char *used)
{
	char buf[CHK_TEXT];
	if (n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE) {
		const char *op = n->has_comm_type ? coll_name(n->comm_type) : NULL;
		int barrier = op && !strcmp(op, "barrier");
		int g = n->pg ? group_of(G, n->pg, self, nranks) : -2;
		if (!op || g == -1 || (symmetric && g != -2) || n->partial || nranks < 2 ||
		    (!barrier && n->comm_size <= 0) || n->comm_size > (1LL << 50))
			return 0;
		char comm[32] = "world";
		if (g >= 0) {
			snprintf(comm, sizeof comm, "pg%d", g);
			used[g] = 1;
		}
		if (barrier)
			snprintf(buf, sizeof buf, "coll op=barrier comm=%s", comm);
		else
			snprintf(buf, sizeof buf, "coll op=%s comm=%s bytes=%lld", op, comm, n->comm_size);
		n->how = CH_COLL;
		return set_text(n, buf) ? -1 : 1;
	}
	if (n->type != CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE &&
	    n->type != CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE)
		return 0; /* an NCCL kernel recorded as a compute node: its collective is not known */
	int send = n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE;
	long long peer = send ? n->dst : n->src;
	if (symmetric || !(send ? n->has_dst : n->has_src) || peer < 0 || peer >= nranks || peer == self ||
	    n->comm_size <= 0 || n->comm_size > (1LL << 50))
		return 0;
	long long tag = n->tag < 0 || n->tag > 2147483647LL ? 0 : n->tag;
	snprintf(buf, sizeof buf, "%s peer=%lld bytes=%lld tag=%lld", send ? "send" : "recv", peer, n->comm_size, tag);
	n->how = send ? CH_SEND : CH_RECV;
	return set_text(n, buf) ? -1 : 1;
}

/* canon[i]: the first piece of the CPU op node i is a piece of (Chakra's
   converter splits a CPU op into "op(0)", "op(1)", ... that share its
   rf_id); i itself otherwise. A CPU op's kernels are one op whichever
   piece launched them. */
struct rf_key {
	long long rf;
	long pos, i;
};

static int rf_cmp(const void *a, const void *b)
{
	const struct rf_key *x = a, *y = b;
	if (x->rf != y->rf)
		return x->rf < y->rf ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static long *op_pieces(const struct chk_rank *r)
{
	long n = r->n, k = 0;
	long *canon = malloc((size_t)(n + 1) * sizeof *canon);
	struct rf_key *key = malloc((size_t)(n + 1) * sizeof *key);
	if (!canon || !key) {
		free(canon);
		free(key);
		return NULL;
	}
	for (long i = 0; i < n; i++) {
		canon[i] = i;
		if (!is_gpu(&r->nd[i]) && r->nd[i].rf_id >= 0)
			key[k++] = (struct rf_key){r->nd[i].rf_id, r->pos[i], i};
	}
	qsort(key, (size_t)k, sizeof *key, rf_cmp);
	char a[128], b[128];
	for (long q = 1; q < k; q++) {
		if (key[q].rf != key[q - 1].rf)
			continue;
		long first = canon[key[q - 1].i];
		op_name(r->nd[first].name, a, sizeof a);
		op_name(r->nd[key[q].i].name, b, sizeof b);
		if (!strcmp(a, b))
			canon[key[q].i] = first;
	}
	free(key);
	return canon;
}

/* Decides every node of rank r (invariant 3) and counts its share of the
   coverage. cstate per node as a CPU op: 0 not looked at, 1 its op is
   written (later GPU nodes covered), 2 it cannot be modelled, 3 carried by
   --carry. */
static int decide(struct chk_rank *r, const struct imp_options *o, int nranks, int symmetric,
                  const struct chk_groups *G, unsigned char *used)
{
	long n = r->n;
	signed char *cstate = calloc((size_t)n + 1, 1);
	long *first = malloc((size_t)(n + 1) * sizeof *first), *kernel = malloc((size_t)(n + 1) * sizeof *kernel);
	long *canon = op_pieces(r);
	if (!cstate || !first || !kernel || !canon) {
		free(cstate);
		free(first);
		free(kernel);
		free(canon);
		return -1;
	}
	for (long i = 0; i < n; i++)
		first[i] = kernel[i] = -1;
	/* --carry takes a CPU op's every GPU node; the kernel that picks an
	   attention's implementation is its first attention or GEMM one, else
	   its first that is not a copy */
	for (long k = 0; k < n; k++) {
		long i = r->order[k];
		struct chk_node *nd = &r->nd[i];
		nd->cover = -1;
		nd->fam = is_gpu(nd) ? family(nd) : IF_OTHER;
		long p = is_gpu(nd) ? parent(r, i) : -1;
		if (p < 0)
			continue;
		p = canon[p];
		if (imp_carry_named(o, nd->name))
			cstate[p] = 3;
		int main_kernel = nd->fam == IF_ATTN || nd->fam == IF_GEMM;
		if (nd->fam != IF_MEMCPY && (kernel[p] < 0 || (main_kernel && r->nd[kernel[p]].fam != IF_ATTN &&
		                                               r->nd[kernel[p]].fam != IF_GEMM)))
			kernel[p] = i;
	}
	int rc = 0;
	for (long k = 0; k < n && !rc; k++) {
		long i = r->order[k];
		struct chk_node *nd = &r->nd[i];
		nd->how = CH_CARRIED;
		if (!is_gpu(nd))
			continue;
		if ((o && o->all_measured) || imp_carry_named(o, nd->name))
			continue;
		if (nd->fam == IF_NCCL) {
			rc = comm_node(nd, r->job_rank, nranks, symmetric, G, used) < 0;
			continue;
		}
		long p = parent(r, i);
		if (p >= 0)
			p = canon[p];
		if (p < 0 || cstate[p] == 3 || cstate[p] == 2)
			continue;
		if (cstate[p] == 1) {
			struct chk_node *c = &r->nd[first[p]];
			nd->how = CH_COVERED;
			nd->cover = first[p];
			c->op_us += nd->dur_us;
			continue;
		}
		cstate[p] = 2;
		char name[128], buf[CHK_TEXT];
		op_name(r->nd[p].name, name, sizeof name);
		json_t *args = chk_args(nd->shapes, nd->types, nd->values);
		/* a CPU op that launched only copies (a .to(device), a zero_) is a copy: its first stands for all */
		int ok = args && (kernel[p] >= 0 ? kin_cpu_op(name, args, r->nd[kernel[p]].name, buf, sizeof buf)
		                                 : kin_copy_op(nd->name, NULL, name, args,
		                                               !strncmp(nd->name, "Memset", 6), buf, sizeof buf));
		if (ok) {
			cstate[p] = 1;
			first[p] = i;
			nd->how = CH_MODELLED;
			nd->op_us = nd->dur_us;
			rc = set_text(nd, buf);
		}
		json_decref(args);
	}
	/* the coverage: a node an op stands for counts in the op's family */
	for (long i = 0; i < n; i++) {
		const struct chk_node *nd = &r->nd[i];
		if (!is_gpu(nd))
			continue;
		enum imp_family f = nd->how == CH_COVERED ? r->nd[nd->cover].fam : nd->fam;
		r->st.items[f]++;
		r->st.gpu_us[f] += (double)nd->dur_us;
		if (nd->how != CH_CARRIED) {
			r->st.modelled_items[f]++;
			r->st.modelled_us[f] += (double)nd->dur_us;
		}
	}
	free(cstate);
	free(first);
	free(kernel);
	free(canon);
	return rc ? -1 : 0;
}

/* ---- streams and edges ---- */

struct streams {
	long long *key; /* value * 2 + (1 for a CPU thread) */
	int n, cap;
};

static int stream_of(struct streams *S, const struct chk_node *nd)
{
	long long key = nd->stream * 2 + (is_gpu(nd) ? 0 : 1);
	for (int i = 0; i < S->n; i++)
		if (S->key[i] == key)
			return i;
	if (S->n == S->cap) {
		int cap = S->cap ? 2 * S->cap : 16;
		long long *p = realloc(S->key, (size_t)cap * sizeof *p);
		if (!p)
			return -1;
		S->key = p;
		S->cap = cap;
	}
	S->key[S->n] = key;
	return S->n++;
}

static void stream_name(const struct chk_node *nd, char *buf, size_t len)
{
	snprintf(buf, len, "%s%lld", is_gpu(nd) ? "s" : "cpu", nd->stream);
}

/* The node that writes the line standing for i (itself, or its cover). */
static long line_of(const struct chk_rank *r, long i)
{
	return r->nd[i].how == CH_COVERED ? r->nd[i].cover : i;
}

struct edges {
	long *from; /* per dependency stream: the latest node (line) waited for */
	int *sid;
	int n;
};

/* The lines node i waits for with after=: per other stream, its latest
   dependency there, in the order they were written. */
static void edges_of(const struct chk_rank *r, long i, const int *sid, struct edges *E)
{
	E->n = 0;
	long self = line_of(r, i);
	for (long q = r->dstart[i]; q < r->dstart[i + 1]; q++) {
		long d = line_of(r, r->dep[q]);
		if (d == self || sid[d] == sid[self])
			continue;
		int k = 0;
		while (k < E->n && E->sid[k] != sid[d])
			k++;
		if (k == E->n) {
			E->sid[E->n] = sid[d];
			E->from[E->n++] = d;
		} else if (r->pos[d] > r->pos[E->from[k]])
			E->from[k] = d;
	}
	for (int a = 1; a < E->n; a++) /* in the order they were written */
		for (int k = a; k > 0 && r->pos[E->from[k]] < r->pos[E->from[k - 1]]; k--) {
			long t = E->from[k];
			E->from[k] = E->from[k - 1];
			E->from[k - 1] = t;
			int u = E->sid[k];
			E->sid[k] = E->sid[k - 1];
			E->sid[k - 1] = u;
		}
}

static void write_after(FILE *f, const struct chk_rank *r, const long *from, int n)
{
	for (int k = 0; k < n; k++)
		fprintf(f, "%sn%llu", k ? "," : " after=", (unsigned long long)r->nd[from[k]].id);
}

static int emit_rank(FILE *f, struct chk_rank *r, int in_block, const struct imp_options *o)
{
	long n = r->n;
	struct streams S = {0};
	int *sid = malloc((size_t)(n + 1) * sizeof *sid);
	unsigned char *label = calloc((size_t)n + 1, 1);
	struct edges E = {malloc((size_t)(n + 1) * sizeof(long)), malloc((size_t)(n + 1) * sizeof(int)), 0};
	int rc = sid && label && E.from && E.sid ? 0 : -1;
	for (long i = 0; i < n && !rc; i++)
		if ((sid[i] = stream_of(&S, &r->nd[i])) < 0)
			rc = -1;
	/* which lines another stream waits for: they get id= */
	for (long k = 0; k < n && !rc; k++) {
		long i = r->order[k];
		if (r->nd[i].how == CH_COVERED)
			continue;
		edges_of(r, i, sid, &E);
		for (int e = 0; e < E.n; e++)
			label[E.from[e]] = 1;
	}
	if (!rc && in_block)
		fprintf(f, "on rank=%d {\n", r->job_rank);
	for (long k = 0; k < n && !rc; k++) {
		long i = r->order[k];
		const struct chk_node *nd = &r->nd[i];
		if (nd->how == CH_COVERED)
			continue; /* it waits as its cover does: they are the same CPU op's */
		char sname[32];
		stream_name(nd, sname, sizeof sname);
		edges_of(r, i, sid, &E);
		int e = 0;
		for (; E.n - e > 8; e += 8) { /* join the rest first, eight at a time */
			fprintf(f, "delay time=0us stream=%s", sname);
			write_after(f, r, E.from + e, 8);
			fputc('\n', f);
		}
		if (nd->how == CH_CARRIED) {
			fprintf(f, "delay time=%lldus", nd->dur_us);
			if (is_gpu(nd))
				imp_write_scale(f, o, nd->fam);
		} else
			fputs(nd->text, f);
		fprintf(f, " stream=%s", sname);
		if (label[i])
			fprintf(f, " id=n%llu", (unsigned long long)nd->id);
		write_after(f, r, E.from + e, E.n - e);
		if (is_gpu(nd))
			fprintf(f, "  # %s %s %lldus %.80s\n", imp_family_name(nd->fam),
			        nd->how == CH_CARRIED ? "carried" : "modelled",
			        nd->how == CH_MODELLED ? nd->op_us : nd->dur_us, nd->name);
		else
			fprintf(f, "  # cpu %.80s\n", nd->name);
	}
	if (!rc && in_block)
		fprintf(f, "}\n");
	free(S.key);
	free(sid);
	free(label);
	free(E.from);
	free(E.sid);
	return rc;
}

static void count_lines(const struct chk_rank *r, struct imp_stats *st)
{
	for (long i = 0; i < r->n; i++) {
		const struct chk_node *nd = &r->nd[i];
		if (nd->how == CH_MODELLED)
			st->ops++;
		else if (nd->how == CH_COLL || nd->how == CH_SEND || nd->how == CH_RECV)
			st->colls++;
		else if (nd->how == CH_CARRIED && is_gpu(nd))
			st->delays++;
	}
}

/* The measured GPU span (start times recorded) and the CPU ops' time. */
static void spans(struct chk_rank *r)
{
	long long lo = -1, hi = 0;
	double cpu = 0;
	for (long i = 0; i < r->n; i++) {
		const struct chk_node *nd = &r->nd[i];
		if (!is_gpu(nd)) {
			cpu += (double)nd->dur_us;
			continue;
		}
		if (!nd->start_us)
			continue;
		if (lo < 0 || nd->start_us < lo)
			lo = nd->start_us;
		if (nd->start_us + nd->dur_us > hi)
			hi = nd->start_us + nd->dur_us;
	}
	r->st.span_us = lo < 0 ? 0 : (double)(hi - lo);
	r->st.host_us = cpu;
}

static int job_cmp(const void *a, const void *b)
{
	const struct chk_rank *x = a, *y = b;
	return (x->job_rank > y->job_rank) - (x->job_rank < y->job_rank);
}

int chk_emit(FILE *out, struct chk_rank *ranks, int n, const struct imp_options *o, const struct chk_groups *G,
             struct imp_stats *st, char *why, size_t whylen)
{
	qsort(ranks, (size_t)n, sizeof *ranks, job_cmp);
	for (int i = 1; i < n; i++)
		if (ranks[i].job_rank == ranks[i - 1].job_rank) {
			snprintf(why, whylen, "%s: rank %d twice: %s is rank %d too (expected one file per rank)",
			         ranks[i].path, ranks[i].job_rank, ranks[i - 1].path, ranks[i].job_rank);
			return SIM_EXIT_TRACE;
		}
	for (int i = 0; i < n; i++)
		if (ranks[i].job_rank >= n) {
			snprintf(why, whylen,
			         "%s: rank %d, but %d file%s given (expected ranks 0 to %d, one file each)",
			         ranks[i].path, ranks[i].job_rank, n, n == 1 ? "" : "s", n - 1);
			return SIM_EXIT_TRACE;
		}
	int symmetric = n == 1 && o && o->ranks > 1;
	int nranks = symmetric ? o->ranks : n;
	unsigned char *used = calloc((size_t)(G ? G->count : 0) + 1, 1);
	if (!used) {
		snprintf(why, whylen, "out of memory");
		return SIM_EXIT_INTERNAL;
	}
	memset(st, 0, sizeof *st);
	st->chakra = 1;
	if (o && o->ref_name)
		snprintf(st->ref, sizeof st->ref, "%s", o->ref_name);
	st->ranks = nranks;
	for (int r = 0; r < n; r++) {
		if (decide(&ranks[r], o, nranks, symmetric, G, used)) {
			snprintf(why, whylen, "%s: out of memory", ranks[r].path);
			free(used);
			return SIM_EXIT_INTERNAL;
		}
		spans(&ranks[r]);
		struct imp_stats *a = &ranks[r].st;
		for (int f = 0; f < IF_COUNT; f++) {
			st->items[f] += a->items[f];
			st->modelled_items[f] += a->modelled_items[f];
			st->gpu_us[f] += a->gpu_us[f];
			st->modelled_us[f] += a->modelled_us[f];
		}
		if (a->span_us > st->span_us)
			st->span_us = a->span_us;
		if (a->host_us > st->host_us)
			st->host_us = a->host_us;
		st->missing_deps += ranks[r].missing_deps;
		st->self_deps += ranks[r].self_deps;
		count_lines(&ranks[r], st);
	}
	for (int g = 0; G && g < G->count; g++)
		if (used[g]) {
			int rc = imp_check_group(g, G->ranks[g], G->n[g], 2 + 2 + 80 + 1, why, whylen);
			if (rc) {
				free(used);
				return rc;
			}
		}
	fprintf(out, "simtrace 1\n# imported by `sim import chakra` (docs/import.md) from:\n");
	for (int r = 0; r < n; r++)
		fprintf(out, "#   rank %d: %s%s\n", ranks[r].job_rank, ranks[r].path,
		        symmetric ? " (every rank of the job runs this graph: --ranks)" : "");
	fprintf(out, "# Recorded GPU time and what the model now times (the rest keeps its recorded time):\n");
	imp_report(out, st, "# ");
	fprintf(out, "ranks %d\n", nranks);
	for (int g = 0; G && g < G->count; g++)
		if (used[g]) {
			fprintf(out, "comm pg%d ranks=", g);
			imp_write_ranks(out, G->ranks[g], G->n[g]);
			fprintf(out, "  # %.80s\n", G->name[g]);
		}
	free(used);
	for (int r = 0; r < n; r++)
		if (emit_rank(out, &ranks[r], n > 1, o)) {
			snprintf(why, whylen, "%s: out of memory", ranks[r].path);
			return SIM_EXIT_INTERNAL;
		}
	return 0;
}
