/*
 * trace_events.c -- the statements of a trace that add an event (trace.c
 * dispatches to them): op lines (gemm, attn, elem, ... through op_parse),
 * coll, send and recv, delay, mark, memory and workload, with their
 * stream=, id= and after= scheduling keys.
 */
#include "trace_parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* stream=, id=, after= of an op line into ev. */
static int sched(struct parser *P, const char *stmt, struct span stream, struct span id, struct span after,
                 struct tr_event *ev)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	ev->stream = 0;
	ev->label = -1;
	ev->nafter = 0;
	if (stream.p) {
		if (!tp_name_ok(stream))
			return tp_bad_name(P, stmt, "stream=", stream);
		int i = tp_names_find(&t->streams, stream.p, stream.n);
		if (i < 0 && (i = tp_names_add(&t->streams, stream.p, stream.n, P->line)) < 0)
			return tp_oom(P);
		ev->stream = i;
	}
	if (after.p) { /* before id=: a line's own id= is not earlier than itself */
		const char *p = after.p, *end = after.p + after.n;
		int count = 0;
		while (p <= end) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			struct span item = {p, (size_t)((c ? c : end) - p)};
			p = (c ? c : end) + 1;
			if (!tp_name_ok(item))
				return tp_bad_name(P, stmt, "after= label ", item);
			if (++count > TR_MAX_AFTER)
				return tp_perr(P, "%s: after= lists more than %d labels", stmt, TR_MAX_AFTER);
			int l = tp_names_find(&t->labels, item.p, item.n);
			if (l < 0) {
				int later = tp_later_line(P, 0, item);
				tp_show(s, item);
				if (later)
					return tp_perr(
					    P,
					    "after=%s: no op before line %d has id=%s; the op at line %d comes "
					    "later, and waiting forward would allow a cycle of after= edges "
					    "(after= waits only for ops issued earlier)",
					    s, P->line, s, later);
				return tp_perr(
				    P,
				    "after=%s: no op before line %d has id=%s (after= waits only for ops issued "
				    "earlier, so edges cannot form a cycle)",
				    s, P->line, s);
			}
			int dup = 0;
			for (int j = 0; j < ev->nafter; j++)
				dup |= ev->after[j] == l;
			if (!dup)
				ev->after[ev->nafter++] = l;
		}
	}
	if (id.p) {
		if (!tp_name_ok(id))
			return tp_bad_name(P, stmt, "id=", id);
		int i = tp_names_find(&t->labels, id.p, id.n);
		if (i < 0 && (i = tp_names_add(&t->labels, id.p, id.n, P->line)) < 0)
			return tp_oom(P);
		ev->label = i;
	}
	return 0;
}

int tp_st_op(struct parser *P)
{
	static const char *const extra[] = {"stream", "after", "id", NULL};
	char opwhy[256];
	struct evnode en;
	tp_init_event(&en, TK_OP);
	if (op_parse(P->buf, extra, &en.ev.op, opwhy, sizeof opwhy))
		return tp_perr(P, "%s", opwhy);
	struct span v[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
	const char *kn = op_kind_name(en.ev.op.kind);
	for (int i = 1; i < P->ntok; i++) {
		struct span tk = P->tok[i];
		const char *eq = memchr(tk.p, '=', tk.n);
		if (!eq)
			continue; /* op_parse refused those */
		struct span k = {tk.p, (size_t)(eq - tk.p)};
		int idx = tp_choice(k, extra);
		if (idx < 0)
			continue;
		if (v[idx].p)
			return tp_perr(P, "%s: %s= given twice", kn, extra[idx]);
		if (tk.n == k.n + 1)
			return tp_perr(P, "%s: %s= has no value", kn, extra[idx]);
		v[idx] = (struct span){eq + 1, tk.n - k.n - 1};
	}
	if (sched(P, kn, v[0], v[2], v[1], &en.ev))
		return -1;
	return tp_add_event(P, &en);
}

/* An MoE dispatch's routing (struct tr_route): v holds topk=, experts=,
   groups=, group_topk= in that order. */
static int route_keys(struct parser *P, const char *stmt, int size, const struct span *v, struct tr_route *r)
{
	static const char *const names[] = {"topk", "experts", "groups", "group_topk"};
	static const long long most[] = {256, 65536, 65536, 65536}; /* bound the replay's work (coll/direct.c) */
	long long x[4] = {0, 0, 1, 1};
	char s[SHOW_MAX + 4];
	if (!v[0].p || !v[1].p)
		return tp_perr(
		    P, "%s: an MoE dispatch needs both topk= and experts= (groups= and group_topk= are optional)",
		    stmt);
	if (!v[2].p != !v[3].p)
		return tp_perr(P, "%s: groups= and group_topk= go together (group-limited routing)", stmt);
	for (int i = 0; i < 4; i++)
		if (v[i].p && (tp_parse_uint(v[i], most[i], &x[i]) || x[i] < 1))
			return tp_perr(P, "%s: %s=%s must be a positive integer, at most %lld", stmt, names[i],
			               tp_show(s, v[i]), most[i]);
	if (x[1] % size)
		return tp_perr(P,
		               "%s: experts=%lld must be a multiple of the group size %d (each member holds as many)",
		               stmt, x[1], size);
	if (x[1] % x[2])
		return tp_perr(P, "%s: groups=%lld must divide experts=%lld", stmt, x[2], x[1]);
	if (x[3] > x[2])
		return tp_perr(P, "%s: group_topk=%lld must be at most groups=%lld", stmt, x[3], x[2]);
	if (x[0] > x[3] * (x[1] / x[2]))
		return tp_perr(P, "%s: topk=%lld is more experts than the %lld of group_topk=%lld groups", stmt, x[0],
		               x[3] * (x[1] / x[2]), x[3]);
	*r = (struct tr_route){(int)x[0], (int)x[1], (int)x[2], (int)x[3]};
	return 0;
}

int tp_st_coll(struct parser *P)
{
	static const char *const keys[] = {"op",     "comm",       "bytes",  "algo", "root",  "topk", "experts",
	                                   "groups", "group_topk", "stream", "id",   "after", NULL};
	enum { K_OP, K_COMM, K_BYTES, K_ALGO, K_ROOT, K_TOPK, K_EXPERTS, K_GROUPS, K_GTOPK, K_STREAM, K_ID, K_AFTER };
	struct trace *t = P->t;
	char s[SHOW_MAX + 4], list[160];
	struct span v[12];
	struct evnode en;
	tp_init_event(&en, TK_COLL);
	if (tp_parse_keys(P, "coll", 1, P->ntok, keys, v))
		return -1;
	tp_choice_list(list, sizeof list, tp_coll_names);
	if (!v[K_OP].p)
		return tp_perr(P, "coll: missing op= (expected %s)", list);
	int op = tp_choice(v[K_OP], tp_coll_names);
	if (op < 0)
		return tp_perr(P, "coll: op=%s is not one of %s", tp_show(s, v[K_OP]), list);
	en.ev.coll = (enum tr_coll)op;
	char stmt[48];
	snprintf(stmt, sizeof stmt, "coll op=%s", tp_coll_names[op]);
	if (!v[K_COMM].p)
		return tp_perr(P, "%s: missing comm= (world, tp, cp, ep, dp, pp or a comm name)", stmt);
	int c = tp_names_find(&t->commnames, v[K_COMM].p, v[K_COMM].n);
	if (c < 0)
		return tp_perr(
		    P,
		    "%s: comm=%s is not a communicator (world, tp, cp, ep, dp, pp or one a comm line defines "
		    "earlier)",
		    stmt, tp_show(s, v[K_COMM]));
	en.ev.comm = c;
	if (v[K_BYTES].p && tp_parse_bytes(P, stmt, v[K_BYTES], &en.ev.bytes))
		return -1;
	if (op == CO_BARRIER && en.ev.bytes > 0)
		return tp_perr(P, "%s moves no data: leave out bytes= (or write bytes=0)", stmt);
	if (op != CO_BARRIER && !v[K_BYTES].p)
		return tp_perr(P, "%s: missing bytes=", stmt);
	if (op != CO_BARRIER && en.ev.bytes <= 0)
		return tp_perr(P, "%s: bytes=%s must be positive (only op=barrier moves no data)", stmt,
		               tp_show(s, v[K_BYTES]));
	if (v[K_ALGO].p && !(v[K_ALGO].n == 4 && !memcmp(v[K_ALGO].p, "auto", 4))) {
		/* kept as written: the simulator knows which algorithms exist */
		if (!tp_name_ok(v[K_ALGO]))
			return tp_bad_name(P, stmt, "algo=", v[K_ALGO]);
		int a = tp_names_find(&t->algos, v[K_ALGO].p, v[K_ALGO].n);
		if (a < 0 && (a = tp_names_add(&t->algos, v[K_ALGO].p, v[K_ALGO].n, P->line)) < 0)
			return tp_oom(P);
		en.ev.algo = a;
	}
	if (v[K_ROOT].p) {
		if (op != CO_BROADCAST && op != CO_REDUCE)
			return tp_perr(P, "%s: root= applies only to op=broadcast|reduce", stmt);
		long long r;
		if (tp_parse_uint(v[K_ROOT], TR_MAX_RANKS, &r))
			return tp_perr(P, "%s: root=%s must be a non-negative integer", stmt, tp_show(s, v[K_ROOT]));
		int size = tp_comm_size(t, c); /* every group of a communicator has this size */
		if (r >= size)
			return tp_perr(P, "%s: root=%lld must be below the size of the group (comm %s has %d ranks)",
			               stmt, r, names_get(&t->commnames, c), size);
		en.ev.root = (int)r;
	}
	if (v[K_TOPK].p || v[K_EXPERTS].p || v[K_GROUPS].p || v[K_GTOPK].p) {
		if (op != CO_ALLTOALL)
			return tp_perr(P, "%s: topk=, experts=, groups= and group_topk= apply only to op=alltoall",
			               stmt);
		if (route_keys(P, stmt, tp_comm_size(t, c), v + K_TOPK, &en.ev.route))
			return -1;
	}
	if (sched(P, stmt, v[K_STREAM], v[K_ID], v[K_AFTER], &en.ev))
		return -1;
	return tp_add_event(P, &en);
}

int tp_st_p2p(struct parser *P, enum tr_kind kind)
{
	static const char *const keys[] = {"peer", "bytes", "tag", "stream", "id", "after", NULL};
	static const char *const peer_dims[] = {"tp", "cp", "ep", "dp", "pp", "rank", NULL};
	enum { K_PEER, K_BYTES, K_TAG, K_STREAM, K_ID, K_AFTER };
	struct trace *t = P->t;
	const char *stmt = kind == TK_SEND ? "send" : "recv";
	char s[SHOW_MAX + 4];
	struct span v[6];
	struct evnode en;
	tp_init_event(&en, kind);
	if (tp_parse_keys(P, stmt, 1, P->ntok, keys, v))
		return -1;
	if (!v[K_PEER].p)
		return tp_perr(P, "%s: missing peer= (a rank, or DIM+K / DIM-K with DIM rank|tp|cp|ep|dp|pp)", stmt);
	struct span pv = v[K_PEER];
	tp_show(s, pv);
	long long x;
	int r = tp_parse_uint(pv, (long long)INT_MAX, &x);
	if (r == 0 || r == -2) {
		if (r == -2 || x >= t->ranks)
			return tp_perr(P, "%s: peer=%s is out of range (ranks %d: 0-%d)", stmt, s, t->ranks,
			               t->ranks - 1);
		en.ev.peer = (int)x;
	} else {
		size_t i = 0;
		while (i < pv.n && pv.p[i] != '+' && pv.p[i] != '-')
			i++;
		int d = tp_choice((struct span){pv.p, i}, peer_dims);
		if (d < 0 || i == pv.n)
			return tp_perr(P, "%s: peer=%s: expected a rank, or DIM+K / DIM-K with DIM rank|tp|cp|ep|dp|pp",
			               stmt, s);
		int size = d == DIM_COUNT ? t->ranks : t->size[d];
		r = tp_parse_uint((struct span){pv.p + i + 1, pv.n - i - 1}, (long long)INT_MAX, &x);
		if (r == -1)
			return tp_perr(P, "%s: peer=%s: expected a rank, or DIM+K / DIM-K with DIM rank|tp|cp|ep|dp|pp",
			               stmt, s);
		if (r == 0 && x == 0)
			return tp_perr(P, "%s: peer=%s is the rank itself (a %s needs another rank)", stmt, s, stmt);
		if (r == -2 || x >= size)
			return tp_perr(P, "%s: peer=%s is out of range for every rank (%s has %d: 0-%d)", stmt, s,
			               peer_dims[d], size, size - 1);
		en.peer_dim = d == DIM_COUNT ? PEER_RANK : d;
		en.peer_k = pv.p[i] == '-' ? -x : x;
	}
	if (!v[K_BYTES].p)
		return tp_perr(P, "%s: missing bytes=", stmt);
	if (tp_parse_bytes(P, stmt, v[K_BYTES], &en.ev.bytes))
		return -1;
	if (en.ev.bytes <= 0)
		return tp_perr(P, "%s: bytes=%s must be positive", stmt, tp_show(s, v[K_BYTES]));
	if (v[K_TAG].p) {
		if (tp_parse_uint(v[K_TAG], TAG_MAX, &x))
			return tp_perr(P, "%s: tag=%s must be an integer from 0 to %ld", stmt, tp_show(s, v[K_TAG]),
			               TAG_MAX);
		en.ev.tag = (long)x;
	}
	if (sched(P, stmt, v[K_STREAM], v[K_ID], v[K_AFTER], &en.ev))
		return -1;
	return tp_add_event(P, &en);
}

int tp_st_delay(struct parser *P)
{
	static const char *const keys[] = {"time", "stream", "id", "after", "scale", "ref", NULL};
	char s[SHOW_MAX + 4];
	struct span v[6];
	struct evnode en;
	tp_init_event(&en, TK_DELAY);
	if (tp_parse_keys(P, "delay", 1, P->ntok, keys, v))
		return -1;
	if (!v[0].p)
		return tp_perr(P, "delay: missing time= (a time such as 5us)");
	if (tp_parse_quantity(P, "delay", "time", v[0], UNIT_TIME, &en.ev.seconds))
		return -1;
	if (!isfinite(en.ev.seconds) || en.ev.seconds < 0)
		return tp_perr(P, "delay: time=%s must not be negative", tp_show(s, v[0]));
	if (!v[4].p != !v[5].p)
		return tp_perr(P,
		               "delay: scale= and ref= go together (scale=dram ref=2TB/s, scale=matrix ref=312TFLOPS)");
	if (v[4].p) {
		int dram = tp_is(v[4], "dram");
		if (!dram && !tp_is(v[4], "matrix"))
			return tp_perr(P, "delay: scale=%s: expected dram or matrix", tp_show(s, v[4]));
		en.ev.scale = dram ? TR_SCALE_DRAM : TR_SCALE_MATRIX;
		if (tp_parse_quantity(P, "delay", "ref", v[5], dram ? UNIT_BANDWIDTH : UNIT_FLOPS, &en.ev.scale_ref))
			return -1;
		if (!isfinite(en.ev.scale_ref) || !(en.ev.scale_ref > 0))
			return tp_perr(P, "delay: ref=%s must be above 0", tp_show(s, v[5]));
	}
	if (sched(P, "delay", v[1], v[2], v[3], &en.ev))
		return -1;
	return tp_add_event(P, &en);
}

int tp_st_mark(struct parser *P)
{
	static const char *const keys[] = {"name", NULL};
	struct trace *t = P->t;
	struct span v[1];
	struct evnode en;
	tp_init_event(&en, TK_MARK);
	if (tp_parse_keys(P, "mark", 1, P->ntok, keys, v))
		return -1;
	if (!v[0].p)
		return tp_perr(P, "mark: missing name=");
	if (!tp_name_ok(v[0]))
		return tp_bad_name(P, "mark", "name=", v[0]);
	int i = tp_names_find(&t->marks, v[0].p, v[0].n);
	if (i < 0 && (i = tp_names_add(&t->marks, v[0].p, v[0].n, P->line)) < 0)
		return tp_oom(P);
	en.ev.mark = i;
	return tp_add_event(P, &en);
}

int tp_st_memory(struct parser *P)
{
	struct span v[MEM_COUNT];
	struct evnode en;
	tp_init_event(&en, TK_MEM);
	if (tp_parse_keys(P, "memory", 1, P->ntok, tp_mem_names, v))
		return -1;
	for (int c = 0; c < MEM_COUNT; c++) {
		if (!v[c].p)
			continue;
		if (tp_parse_size(P, "memory", tp_mem_names[c], v[c], &en.ev.mem[c]))
			return -1;
		en.ev.mem_set |= 1u << c;
	}
	if (!en.ev.mem_set)
		return tp_perr(
		    P, "memory: expected at least one of params=, grads=, optimizer=, activations=, kv=, workspace=");
	return tp_add_event(P, &en);
}

int tp_st_workload(struct parser *P)
{
	static const char *const keys[] = {"name", "kind", "model_flops", "tokens", "decode_steps", NULL};
	static const char *const kinds[] = {"train", "infer", NULL};
	struct trace *t = P->t;
	struct tr_workload *w = &t->workload;
	char s[SHOW_MAX + 4], list[64];
	struct span v[5];
	if (t->has_workload)
		return tp_perr(P, "workload given twice (first at line %d)", w->line);
	if (P->depth)
		return tp_perr(P, "workload belongs at the top level (not inside a block)");
	if (P->body_line)
		return tp_perr(P, "workload must come before the first op, comm, def or block (line %d)", P->body_line);
	if (tp_parse_keys(P, "workload", 1, P->ntok, keys, v))
		return -1;
	if (!v[0].p)
		return tp_perr(P, "workload: missing name=");
	if (!tp_name_ok(v[0]))
		return tp_bad_name(P, "workload", "name=", v[0]);
	memcpy(w->name, v[0].p, v[0].n);
	w->name[v[0].n] = '\0';
	w->kind = WK_TRAIN;
	if (v[1].p) {
		int k = 0;
		while (kinds[k] && !tp_is(v[1], kinds[k]))
			k++;
		tp_choice_list(list, sizeof list, kinds);
		if (!kinds[k])
			return tp_perr(P, "workload: kind=%s: expected %s", tp_show(s, v[1]), list);
		w->kind = (enum tr_wkind)k;
	}
	if (v[2].p && tp_parse_count(P, "workload", "model_flops", v[2], 1e30, &w->model_flops))
		return -1;
	if (v[3].p && tp_parse_count(P, "workload", "tokens", v[3], 1e18, &w->tokens))
		return -1;
	if (v[4].p) {
		double n;
		if (tp_parse_count(P, "workload", "decode_steps", v[4], 1e9, &n))
			return -1;
		if (n != floor(n))
			return tp_perr(P, "workload: decode_steps=%s must be a whole number", tp_show(s, v[4]));
		if (w->kind != WK_INFER)
			return tp_perr(P, "workload: decode_steps= belongs to kind=infer");
		w->decode_steps = (long)n;
	}
	w->line = P->line;
	t->has_workload = 1;
	return 0;
}
