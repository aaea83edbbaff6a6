/*
 * trace_query.c -- what callers ask of a parsed trace (trace.h): names of
 * enums, streams, labels, marks, algorithms and communicators, a rank's
 * coordinates, a communicator's group for a rank, the dims the ranks are
 * symmetric in.
 */
#include "trace_int.h"

static const char *const kind_names[TK_COUNT] = {"op", "coll", "send", "recv", "delay", "mark", "memory"};

const char *tr_dim_name(enum tr_dim d)
{
	return (int)d >= 0 && d < DIM_COUNT ? tp_dim_names[d] : "?";
}
const char *tr_coll_name(enum tr_coll c)
{
	return (int)c >= 0 && c < CO_COUNT ? tp_coll_names[c] : "?";
}
const char *tr_kind_name(enum tr_kind k)
{
	return (int)k >= 0 && k < TK_COUNT ? kind_names[k] : "?";
}

const char *tr_path(const struct trace *t)
{
	return t ? t->path : "?";
}
int tr_ranks(const struct trace *t)
{
	return t ? t->ranks : 0;
}
int tr_dim_size(const struct trace *t, enum tr_dim d)
{
	return t && (int)d >= 0 && d < DIM_COUNT ? t->size[d] : 1;
}
int tr_coord(const struct trace *t, int rank, enum tr_dim d)
{
	if (!t || (int)d < 0 || d >= DIM_COUNT || rank < 0 || rank >= t->ranks)
		return 0;
	return rank / t->stride[d] % t->size[d];
}
int tr_nstreams(const struct trace *t)
{
	return t ? t->streams.n : 0;
}
const char *tr_stream_name(const struct trace *t, int i)
{
	return t ? names_get(&t->streams, i) : "?";
}
int tr_nlabels(const struct trace *t)
{
	return t ? t->labels.n : 0;
}
const char *tr_label_name(const struct trace *t, int i)
{
	return t ? names_get(&t->labels, i) : "?";
}
int tr_nmarks(const struct trace *t)
{
	return t ? t->marks.n : 0;
}
const char *tr_mark_name(const struct trace *t, int i)
{
	return t ? names_get(&t->marks, i) : "?";
}
int tr_nalgos(const struct trace *t)
{
	return t ? t->algos.n : 0;
}
const char *tr_algo_name(const struct trace *t, int i)
{
	if (i == TR_ALGO_AUTO)
		return "auto";
	return t ? names_get(&t->algos, i) : "?";
}
int tr_algo_line(const struct trace *t, int i)
{
	return t && i >= 0 && i < t->algos.n ? t->algos.line[i] : 0;
}
int tr_ncomms(const struct trace *t)
{
	return t ? t->commnames.n : 0;
}
const char *tr_comm_name(const struct trace *t, int i)
{
	return t ? names_get(&t->commnames, i) : "?";
}
int tr_comm_line(const struct trace *t, int i)
{
	return t && i >= 0 && i < t->commnames.n ? t->commnames.line[i] : 0;
}

/* Whether rank lies in one of n sorted, disjoint ranges. */
static int in_ranges(const struct ival *v, int n, int rank)
{
	int lo = 0, hi = n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (rank < v[mid].lo)
			hi = mid - 1;
		else if (rank > v[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

int tr_comm_group(const struct trace *t, int comm, int rank, int *members, int max, int *group_id)
{
	if (group_id)
		*group_id = -1;
	if (!t || comm < 0 || comm >= t->commnames.n || rank < 0 || rank >= t->ranks)
		return 0;
	if (!members)
		max = 0;
	const struct comm *c = &t->comms[comm];
	if (c->kind == CK_WORLD) {
		for (int i = 0; i < max && i < t->ranks; i++)
			members[i] = i;
		if (group_id)
			*group_id = 0;
		return t->ranks;
	}
	if (c->kind == CK_RANKS) {
		if (!in_ranges(c->iv, c->niv, rank))
			return 0;
		int k = 0;
		for (int i = 0; i < c->niv && k < max; i++)
			for (int r = c->iv[i].lo; r <= c->iv[i].hi && k < max; r++)
				members[k++] = r;
		if (group_id)
			*group_id = c->iv[0].lo;
		return c->n;
	}
	/* the dims of the group, fastest first (increasing stride) */
	int d[DIM_COUNT], nd = 0, size = 1, base = rank;
	for (int i = 0; i < DIM_COUNT; i++) {
		int dim = t->order[i];
		if (!(c->dims & (1u << dim)))
			continue;
		d[nd++] = dim;
		size *= t->size[dim];
		base -= tr_coord(t, rank, (enum tr_dim)dim) * t->stride[dim];
	}
	if (group_id)
		*group_id = base;
	/* an odometer, fastest dim first: since each stride is at least the
	   span of the faster dims, this counts in increasing rank order */
	int cnt[DIM_COUNT] = {0}, r = base;
	for (int i = 0; i < max && i < size; i++) {
		members[i] = r;
		for (int j = 0; j < nd; j++) {
			if (++cnt[j] < t->size[d[j]]) {
				r += t->stride[d[j]];
				break;
			}
			r -= (t->size[d[j]] - 1) * t->stride[d[j]];
			cnt[j] = 0;
		}
	}
	return size;
}

/* The size of every group of a communicator. */
int tp_comm_size(const struct trace *t, int comm)
{
	const struct comm *c = &t->comms[comm];
	if (c->kind == CK_WORLD)
		return t->ranks;
	if (c->kind == CK_RANKS)
		return c->n;
	int size = 1;
	for (int d = 0; d < DIM_COUNT; d++)
		if (c->dims & (1u << d))
			size *= t->size[d];
	return size;
}

unsigned tr_symmetric_dims(const struct trace *t)
{
	unsigned mask = 0;
	for (int d = 0; d < DIM_COUNT; d++)
		if (t->size[d] > 1)
			mask |= 1u << d;
	for (int i = 0; i < t->nsels; i++) {
		if (t->sels[i].key < 0)
			return 0; /* rank= picks single ranks */
		mask &= ~(1u << t->sels[i].key);
	}
	for (int i = 0; i < t->commnames.n; i++)
		if (t->comms[i].kind == CK_RANKS)
			return 0;
	for (int i = 0; i < t->nevs; i++) {
		const struct evnode *en = &t->evs[i];
		if (en->ev.kind != TK_SEND && en->ev.kind != TK_RECV)
			continue;
		if (en->peer_dim < 0)
			return 0; /* an absolute peer or rank+K */
		mask &= ~(1u << en->peer_dim);
	}
	return mask;
}

int tr_comm_stream(const struct trace *t, int comm)
{
	int stream = -1;
	for (int i = 0; i < t->nevs; i++) {
		const struct tr_event *ev = &t->evs[i].ev;
		if (ev->kind != TK_COLL || ev->comm != comm)
			continue;
		if (stream >= 0 && ev->stream != stream)
			return -2;
		stream = ev->stream;
	}
	return stream;
}

int tr_p2p_dims(const struct trace *t)
{
	int mask = 0;
	for (int i = 0; i < t->nevs; i++) {
		const struct evnode *en = &t->evs[i];
		if (en->ev.kind != TK_SEND && en->ev.kind != TK_RECV)
			continue;
		if (en->peer_dim < 0)
			return -1;
		mask |= 1 << en->peer_dim;
	}
	return mask;
}

const struct tr_workload *tr_workload(const struct trace *t)
{
	return t && t->has_workload ? &t->workload : NULL;
}

const char *tr_mem_name(enum tr_mem m)
{
	return m >= 0 && m < MEM_COUNT ? tp_mem_names[m] : "?";
}
