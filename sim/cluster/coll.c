/*
 * coll.c -- collective algorithms: cost model, choice, and flows.
 *
 * The cost of one (algorithm, protocol) follows the structure of NCCL's own
 * tuning model (NVIDIA/nccl src/graph/tuning.cc): a launch latency per
 * algorithm and protocol, a hop latency per step by link class (NVLink-class,
 * PCIe, network), and a bandwidth term of the bytes each member moves over
 * the slowest hop, discounted by the protocol's payload share (LL carries 8
 * bytes of data per 16-byte line with flags, LL128 120 of 128). On top, a
 * pipeline-fill term: every step of a ring moves one chunk before the next
 * step may start, so a collective pays steps x min(bytes per step,
 * model.coll_chunk) / bandwidth once. The latencies are NCCL's published
 * model values; model.coll_latency_scale scales them per chip.
 *
 * Invariants: a plan's flows, run alone on an idle platform, take bw_s
 * (tests/test_coll.c checks it through SimGrid for ring, nvls and direct);
 * bus_bytes x n / (2(n-1)) = bytes for allreduce, as nccl-tests counts.
 */
#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Latencies in microseconds, from NCCL's tuning model (src/graph/tuning.cc,
   NVIDIA/nccl @01afd20a): launch per algorithm and protocol ... */
static const double base_us[AL_COUNT][PR_COUNT] = {
    [AL_RING] = {6.6, 14.0, 8.4}, [AL_TREE] = {6.8, 14.0, 8.4},   [AL_NVLS] = {0, 0, 25.0},
    [AL_HIER] = {6.6, 14.0, 8.4}, [AL_DIRECT] = {6.6, 14.0, 8.4},
};
/* ... and per step, by link class (ring steps; tree steps use tree_hop_us). */
static const double hop_us[HW_COUNT][PR_COUNT] = {
    [HW_NVLINK] = {0.47, 1.9, 3.4}, [HW_PCI] = {1.0, 2.5, 5.7}, [HW_NET] = {2.7, 4.0, 9.6}};
static const double tree_hop_us[HW_COUNT][PR_COUNT] = {
    [HW_NVLINK] = {0.52, 1.2, 4.0}, [HW_PCI] = {1.0, 1.9, 5.7}, [HW_NET] = {5.0, 8.5, 14.0}};
/* Payload share of the link bandwidth per protocol (NCCL's model: LL a
   quarter for reductions, LL128 0.92). */
static const double proto_bw[PR_COUNT] = {0.25, 0.92, 1.0};
/* Tree bandwidth relative to the ring's (NCCL's model: 0.9). */
#define TREE_BW 0.9

const char *coll_proto_name(enum coll_proto p)
{
	static const char *n[PR_COUNT] = {"LL", "LL128", "Simple"};
	return (unsigned)p < PR_COUNT ? n[p] : "?";
}

double coll_busbw_factor(enum tr_coll c, int n)
{
	if (n <= 1)
		return 1;
	switch (c) {
	case CO_ALLREDUCE: return 2.0 * (n - 1) / n;
	case CO_ALLGATHER:
	case CO_REDUCESCATTER:
	case CO_ALLTOALL: return (double)(n - 1) / n;
	default: return 1;
	}
}

/* The shape of a group: members, nodes spanned, members per node (max). */
struct shape {
	int n, m, k;
	int deg; /* fewest direct links a member has to other members of its node (mesh, cube, ring) */
};

/* Direct links inside a node: every pair in a mesh; the DGX-1 hybrid cube
   mesh (two fully connected quads, device i to i+4); neighbours on a ring. */
int topo_linked(const struct topo *t, int a, int b)
{
	int la = a % t->dpn, lb = b % t->dpn;
	switch (t->intra) {
	case TI_MESH: return 1;
	case TI_CUBE: return la / 4 == lb / 4 || la % 4 == lb % 4;
	case TI_RING: return (la + 1) % t->dpn == lb || (lb + 1) % t->dpn == la;
	default: return 0;
	}
}

static struct shape group_shape(const struct topo *t, const int *mem, int n)
{
	struct shape s = {n, 0, 0, 0};
	int prev = -1, run = 0;
	for (int i = 0; i < n; i++) {
		int node = mem[i] / t->dpn;
		if (node != prev) {
			s.m++;
			prev = node;
			run = 0;
		}
		if (++run > s.k)
			s.k = run;
	}
	s.deg = s.k - 1;
	if (t->intra == TI_CUBE || t->intra == TI_RING)
		for (int i = 0; i < n; i++) {
			int d = 0;
			for (int j = 0; j < n; j++)
				if (j != i && mem[j] / t->dpn == mem[i] / t->dpn && topo_linked(t, mem[i], mem[j]))
					d++;
			if (d < s.deg)
				s.deg = d;
		}
	return s;
}

/* Bandwidth of a ring's hop inside a node: a switch port, or rings over
   every direct link a member has to the others (deg of them). */
static double intra_ring_bw(const struct topo *t, int deg)
{
	if (t->intra == TI_SWITCH || t->intra == TI_PCIE)
		return t->port_bw;
	return t->pair_bw * (deg > 0 ? deg : 1);
}

static double inter_bw(const struct topo *t, int k)
{
	double b = t->nic_bw * k; /* one rail per member of a node */
	if (t->uplink_bw > 0 && t->uplink_bw < b)
		b = t->uplink_bw;
	return b;
}

/* Bandwidth of the slowest hop of a ring over the group. */
static double ring_bw(const struct topo *t, struct shape s)
{
	double b = s.k > 1 ? intra_ring_bw(t, s.deg) : INFINITY;
	if (s.m > 1) {
		double e = inter_bw(t, s.k);
		if (e < b)
			b = e;
	}
	return b;
}

static int ring_steps(enum tr_coll c, int n)
{
	switch (c) {
	case CO_ALLREDUCE:
	case CO_BARRIER: return 2 * (n - 1);
	default: return n - 1;
	}
}

/* Bytes each member sends in a ring algorithm (the bus bytes). */
static double ring_volume(enum tr_coll c, double S, int n)
{
	switch (c) {
	case CO_ALLREDUCE:
	case CO_BARRIER: return 2.0 * (n - 1) / n * S;
	case CO_ALLGATHER:
	case CO_REDUCESCATTER: return (double)(n - 1) / n * S;
	default: /* broadcast, reduce: pipelined along the ring */ return S;
	}
}

static double hop(const struct topo *t, enum hw_class h, enum coll_proto p, int tree)
{
	return (tree ? tree_hop_us : hop_us)[h][p] * 1e-6 * t->lat_scale;
}

static double fill(const struct topo *t, double S, int n, int steps, double bw)
{
	double chunk = S / n < t->chunk ? S / n : t->chunk;
	return steps * chunk / bw;
}

/* Cost of one (algorithm, protocol): latency and bandwidth terms. Returns
   0 when the algorithm cannot run there. */
static int cost(const struct topo *t, enum tr_coll c, enum tr_algo a, enum coll_proto p, double S, struct shape s,
                double *lat, double *bw)
{
	int n = s.n, m = s.m, k = s.k;
	double pf = proto_bw[p];
	enum hw_class ih = t->intra_hw;
	double base = base_us[a][p] * 1e-6 * t->lat_scale;
	if (p == PR_LL128 && (ih != HW_NVLINK || a == AL_DIRECT))
		return 0; /* LL128 needs NVLink-class ordering */
	switch (a) {
	case AL_RING: {
		if (c == CO_ALLTOALL)
			return 0;
		int steps = ring_steps(c, n);
		int inter = m > 1 ? (c == CO_ALLREDUCE || c == CO_BARRIER ? 2 * (m - 1) : m - 1) : 0;
		double b = ring_bw(t, s) * pf;
		*lat =
		    base + (steps - inter) * hop(t, ih, p, 0) + inter * hop(t, HW_NET, p, 0) + fill(t, S, n, steps, b);
		*bw = ring_volume(c, S, n) / b;
		return 1;
	}
	case AL_TREE: {
		if ((c != CO_ALLREDUCE && c != CO_BARRIER) || m < 2)
			return 0;
		double b = ring_bw(t, s) * pf * TREE_BW;
		int lg = (int)ceil(log2((double)m));
		*lat = base + 2 * ((k - 1) * hop(t, ih, p, 1) + lg * hop(t, HW_NET, p, 1)) +
		       fill(t, S, n, 2 * (k - 1 + lg), b);
		*bw = 2.0 * S / b;
		return 1;
	}
	case AL_NVLS: {
		if ((c != CO_ALLREDUCE && c != CO_BARRIER) || !t->nvls || t->intra != TI_SWITCH || m > 1 ||
		    p != PR_SIMPLE)
			return 0;
		double b = t->port_bw * t->nvls_eff;
		/* the buffer crosses the switch in n-1 chunks each way (reduce-scatter, all-gather) */
		*lat = base + 2 * hop(t, ih, p, 0) + fill(t, S, n, n - 1, b);
		*bw = S / b;
		return 1;
	}
	case AL_HIER: {
		if ((c != CO_ALLREDUCE && c != CO_BARRIER) || m < 2 || k < 2)
			return 0;
		double bi = intra_ring_bw(t, s.deg) * pf, bn = inter_bw(t, 1) * pf;
		double v1 = (double)(k - 1) / k * S, v2 = 2.0 * (m - 1) / m * S / k;
		*lat = base + 2 * (k - 1) * hop(t, ih, p, 0) + 2 * (m - 1) * hop(t, HW_NET, p, 0) +
		       fill(t, S, n, 2 * (k - 1), bi) + fill(t, S / k, m, 2 * (m - 1), bn);
		*bw = 2 * v1 / bi + v2 / bn;
		return 1;
	}
	case AL_DIRECT: {
		/* every member sends its share to every other member at once */
		double share = c == CO_ALLTOALL ? S / n : c == CO_ALLREDUCE || c == CO_BARRIER ? 2 * S / n : S / n;
		if (c == CO_BROADCAST || c == CO_REDUCE)
			return 0;
		if (c != CO_ALLTOALL && (t->intra != TI_MESH || m > 1))
			return 0; /* one-shot reductions need a direct link to every peer */
		double ti = 0, tn = 0;
		if (k > 1)
			ti = t->intra == TI_MESH ? share / (t->pair_bw * pf)
			                         : (k - 1) * share / (intra_ring_bw(t, s.deg) * pf);
		if (m > 1)
			tn = (n - k) * share / (inter_bw(t, k) / k * pf);
		int steps = c == CO_ALLTOALL ? 1 : 2;
		*lat = base + steps * hop(t, m > 1 ? HW_NET : ih, p, 0) +
		       fill(t, S, n, steps, (t->intra == TI_MESH ? t->pair_bw : intra_ring_bw(t, s.deg)) * pf);
		*bw = ti > tn ? ti : tn;
		return 1;
	}
	default: return 0;
	}
}

/* ---- flows ---- */

struct fl {
	struct flow *v;
	int n, cap;
};

static int fl_add(struct fl *f, int src, int dst, double bytes)
{
	if (src == dst || bytes <= 0)
		return 0;
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 64;
		struct flow *v = realloc(f->v, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = (struct flow){src, dst, bytes};
	return 0;
}

/* Members grouped by node: starts[i]..starts[i+1] are node i's members. */
static int node_starts(const struct topo *t, const int *mem, int n, int *starts)
{
	int m = 0, prev = -1;
	for (int i = 0; i < n; i++) {
		int node = mem[i] / t->dpn;
		if (node != prev)
			starts[m++] = i;
		prev = node;
	}
	starts[m] = n;
	return m;
}

/* Every member sends `each` bytes to every other member of its node. */
static int all_pairs_intra(const int *mem, const int *starts, int m, double each, struct fl *f)
{
	for (int b = 0; b < m; b++)
		for (int i = starts[b]; i < starts[b + 1]; i++)
			for (int j = starts[b]; j < starts[b + 1]; j++)
				if (i != j && fl_add(f, mem[i], mem[j], each))
					return -1;
	return 0;
}

/* V bytes from each member spread over its direct links to the other
   members of its node (rings over every link of a mesh, cube or ring). */
static int spread_intra(const struct topo *t, const int *mem, int lo, int hi, double V, struct fl *f)
{
	for (int i = lo; i < hi; i++) {
		int deg = 0;
		for (int j = lo; j < hi; j++)
			deg += j != i && topo_linked(t, mem[i], mem[j]);
		for (int j = lo; j < hi && deg; j++)
			if (j != i && topo_linked(t, mem[i], mem[j]) && fl_add(f, mem[i], mem[j], V / deg))
				return -1;
	}
	return 0;
}

/* A ring moving V bytes per member: a chain inside each node through its
   switch (or V spread over the direct links of a mesh, cube or ring), and
   one rail per member across node boundaries. */
static int ring_flows(const struct topo *t, const int *mem, const int *starts, int m, double V, struct fl *f)
{
	int direct = t->intra == TI_MESH || t->intra == TI_CUBE || t->intra == TI_RING;
	for (int b = 0; b < m; b++) {
		int lo = starts[b], hi = starts[b + 1];
		if (direct) {
			if (spread_intra(t, mem, lo, hi, V, f))
				return -1;
		} else {
			for (int i = lo; i + 1 < hi; i++)
				if (fl_add(f, mem[i], mem[i + 1], V))
					return -1;
			if (m == 1 && fl_add(f, mem[hi - 1], mem[lo], V))
				return -1;
		}
		if (m == 1)
			break;
		int nb = (b + 1) % m, k = hi - lo, k2 = starts[nb + 1] - starts[nb];
		int rails = k < k2 ? k : k2;
		for (int j = 0; j < rails; j++)
			if (fl_add(f, mem[lo + j], mem[starts[nb] + j], V / rails))
				return -1;
	}
	return 0;
}

static int build_flows(const struct topo *t, enum tr_coll c, enum tr_algo a, enum coll_proto p, double S,
                       const int *mem, int n, struct coll_plan *pl)
{
	int *starts = malloc(((size_t)n + 1) * sizeof *starts);
	struct fl f[COLL_MAX_PHASES] = {{0}};
	int rc = -1, np = 1;
	if (!starts)
		return -1;
	int m = node_starts(t, mem, n, starts);
	double pf = proto_bw[p];
	switch (a) {
	case AL_RING: rc = ring_flows(t, mem, starts, m, ring_volume(c, S, n) / pf, &f[0]); break;
	case AL_TREE: rc = ring_flows(t, mem, starts, m, 2.0 * S / (pf * TREE_BW), &f[0]); break;
	case AL_NVLS: rc = all_pairs_intra(mem, starts, m, S / (n - 1) / t->nvls_eff, &f[0]); break;
	case AL_HIER: {
		int k = starts[1] - starts[0];
		double v1 = (double)(k - 1) / k * S / pf, v2 = 2.0 * (m - 1) / m * S / k / pf;
		np = 3;
		rc = 0;
		for (int b = 0; b < m && !rc; b++) /* intra reduce-scatter, then all-gather */
			rc = ring_flows(t, mem + starts[b], (int[]){0, starts[b + 1] - starts[b]}, 1, v1, &f[0]);
		for (int j = 0; j < k && !rc; j++) /* one ring per rail across nodes */
			for (int b = 0; b < m && !rc; b++)
				if (starts[b] + j < starts[b + 1] && starts[(b + 1) % m] + j < starts[(b + 1) % m + 1])
					rc = fl_add(&f[1], mem[starts[b] + j], mem[starts[(b + 1) % m] + j], v2);
		for (int i = 0; i < f[0].n && !rc; i++)
			rc = fl_add(&f[2], f[0].v[i].src, f[0].v[i].dst, f[0].v[i].bytes);
		break;
	}
	case AL_DIRECT: {
		double share = c == CO_ALLTOALL ? S / n : c == CO_ALLREDUCE || c == CO_BARRIER ? 2 * S / n : S / n;
		rc = 0;
		for (int i = 0; i < n && !rc; i++)
			for (int j = 0; j < n && !rc; j++)
				rc = fl_add(&f[0], mem[i], mem[j], share / pf);
		break;
	}
	default: break;
	}
	free(starts);
	if (rc) {
		for (int i = 0; i < COLL_MAX_PHASES; i++)
			free(f[i].v);
		return -1;
	}
	pl->nphases = np;
	for (int i = 0; i < np; i++) {
		pl->flows[i] = f[i].v;
		pl->nflows[i] = f[i].n;
	}
	return 0;
}

int coll_plan(const struct topo *t, enum tr_coll c, enum tr_algo algo, double bytes, const int *members, int n,
              int want_flows, struct coll_plan *p, char *why, size_t whylen)
{
	memset(p, 0, sizeof *p);
	if (c == CO_BARRIER)
		bytes = 4; /* a barrier is a one-word all-reduce, as torch.distributed does it */
	p->algo = algo;
	p->bus_bytes = bytes * coll_busbw_factor(c, n);
	if (n <= 1)
		return 0;
	struct shape s = group_shape(t, members, n);
	double best = INFINITY;
	for (int a = AL_RING; a < AL_COUNT; a++) {
		if (algo != AL_AUTO && a != (int)algo)
			continue;
		for (int pr = 0; pr < PR_COUNT; pr++) {
			double lat, bw;
			if (!cost(t, c, a, pr, bytes, s, &lat, &bw))
				continue;
			if (lat + bw < best) {
				best = lat + bw;
				p->algo = a;
				p->proto = pr;
				p->lat_s = lat;
				p->bw_s = bw;
			}
		}
	}
	if (!isfinite(best)) {
		snprintf(why, whylen, "algo=%s cannot run %s on this group (%d ranks on %d node%s, %s inside a node%s)",
		         tr_algo_name(algo), tr_coll_name(c), s.n, s.m, s.m == 1 ? "" : "s",
		         t->intra == TI_SWITCH ? "a switch"
		         : t->intra == TI_MESH ? "a full mesh"
		                               : "no switch",
		         t->nvls ? "" : ", no in-switch reduction");
		return -1;
	}
	if (want_flows && build_flows(t, c, p->algo, p->proto, bytes, members, n, p)) {
		snprintf(why, whylen, "out of memory planning %s over %d ranks", tr_coll_name(c), n);
		return -1;
	}
	return 0;
}

void coll_plan_free(struct coll_plan *p)
{
	for (int i = 0; i < COLL_MAX_PHASES; i++) {
		free(p->flows[i]);
		p->flows[i] = NULL;
	}
	p->nphases = 0;
}

double p2p_latency(const struct topo *t, int src, int dst)
{
	enum hw_class h = src / t->dpn == dst / t->dpn ? t->intra_hw : HW_NET;
	return (base_us[AL_RING][PR_SIMPLE] * 1e-6 * t->lat_scale) + hop(t, h, PR_SIMPLE, 0);
}

double p2p_bandwidth(const struct topo *t, int src, int dst)
{
	if (src / t->dpn != dst / t->dpn)
		return inter_bw(t, 1);
	return t->intra == TI_SWITCH || t->intra == TI_PCIE ? t->port_bw : t->pair_bw;
}
