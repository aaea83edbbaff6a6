/*
 * model.c -- the device model: kernel timing from the microarchitecture.
 *
 * Every op is lowered to one or more kernels. A kernel is a grid of CTAs;
 * the model picks its shape (for GEMMs: the fastest of many candidates, as
 * cuBLAS's heuristics do), computes the occupancy (CTAs per compute unit
 * from shared memory, registers and warps), dispatches the CTAs in waves
 * onto the units and times each wave by the slowest of its resources:
 *
 *   matrix / vector / special-function pipes of the units that are busy,
 *   L2 and device-memory bandwidth shared by the CTAs running in that wave,
 *   Little's law: a unit cannot stream faster than bytes-in-flight / latency,
 *   and on a chip of several dies the die-to-die links the wave's remote
 *   bytes cross (dies_of below; docs/architecture.md, "Chiplets").
 *
 * plus the fixed costs of a kernel (launch gap, pipeline prologue, epilogue).
 * Nothing here is specific to a chip: everything comes from struct
 * arch_chip, including the fitted constants of its `model` section.
 */
#include "model_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const bound_names[B_COUNT] = {"matrix",  "vector", "sfu",  "dram", "l2",
                                                 "latency", "launch", "link", "d2d"};
const char *dm_bound_name(enum dm_bound b)
{
	return b < B_COUNT ? bound_names[b] : "?";
}

/* ------------------------------------------------------------------ */
/* helpers                                                              */

void xp(FILE *f, const char *fmt, ...)
{
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

double dt_bytes(int dt)
{
	switch (dt) {
	case DT_FP64: return 8;
	case DT_FP32:
	case DT_TF32:
	case DT_INT32: return 4;
	case DT_FP16:
	case DT_BF16: return 2;
	case DT_FP8:
	case DT_INT8: return 1;
	case DT_FP4:
	case DT_INT4: return 0.5;
	}
	return 4;
}

/*
 * Chiplets. The n nodes of the die-to-die network are the compute dies, or
 * the I/O dies they sit on (topology via_io: MI300X's XCDs reach memory and
 * each other through 4 IODs). Interleaved memory puts (n-1)/n of a uniform
 * stream's bytes on another node. Traffic spread evenly over the ordered
 * pairs loads each of the topology's L directed links with hops/L of it, so
 * the network moves bytes at L x d2d_bandwidth / hops, and a remote access
 * pays hops x d2d_latency more (scaled to load as the memory latency is).
 */
static void d2d_graph(const char *topo, long n, double *links, double *hops)
{
	if (n == 2 || !strcmp(topo, "pair")) {
		*links = 2, *hops = 1; /* a pair; more dies on a "pair" are taken as fully connected */
		if (n > 2)
			*links = (double)n * (n - 1);
	} else if (!strcmp(topo, "full")) {
		*links = (double)n * (n - 1), *hops = 1;
	} else if (!strcmp(topo, "ring")) {
		double sum = 0;
		for (long k = 1; k < n; k++)
			sum += (double)(k < n - k ? k : n - k);
		*links = 2.0 * n, *hops = sum / (double)(n - 1);
	} else { /* mesh, via_io: the squarest r x q grid */
		long r = 1;
		for (long d = 1; d * d <= n; d++)
			if (n % d == 0)
				r = d;
		long q = n / r;
		double sum = 0;
		for (long a = 0; a < n; a++)
			for (long b = 0; b < n; b++)
				sum += (double)(labs(a / q - b / q) + labs(a % q - b % q));
		*links = 2.0 * (double)(r * (q - 1) + q * (r - 1)), *hops = sum / ((double)n * (n - 1));
	}
}

static void dies_of(const struct arch_chip *c, struct memsys *m)
{
	const struct arch_dies *d = &c->dies;
	m->dies = 1, m->l2_die = 0, m->dedup = 0, m->remote = 0, m->d2d_bw = 0, m->d2d_hops = 0, m->lat_d2d = 0;
	if (d->count <= 1)
		return;
	m->dies = (int)d->count;
	m->l2_die = c->l2.present ? c->l2.size_bytes / (double)d->count : 0;
	m->dedup = (c->llc.present && c->llc.size_bytes > 0) || !strcmp(d->l2, "shared");
	if (!strcmp(d->memory, "local"))
		return;
	long n = !strcmp(d->topology, "via_io") && d->io_count > 1 ? d->io_count : d->count;
	double links, hops;
	d2d_graph(d->topology, n, &links, &hops);
	m->remote = (double)(n - 1) / (double)n;
	m->d2d_hops = hops;
	m->d2d_bw = links * d->d2d_bw_Bps / hops;
	m->lat_d2d = m->remote * hops * d->d2d_latency_s * c->model.loaded_latency;
	m->lat_dram += m->lat_d2d;
}

void memsys_of(const struct arch_chip *c, struct memsys *m)
{
	const struct arch_model *k = &c->model;
	m->dram_bw = c->dram.bw_Bps * k->dram_eff;
	m->l2_bw = c->l2.present ? c->l2.bw_Bps * k->l2_eff : 0;
	double ld = c->dram.latency_s > 0 ? c->dram.latency_s : k->dram_latency_s;
	double l2 = c->l2.present && c->l2.latency_s > 0 ? c->l2.latency_s : k->l2_latency_s;
	if (l2 > ld)
		l2 = ld;
	m->lat_dram = ld * k->loaded_latency;
	m->lat_l2 = l2 * k->loaded_latency;
	m->cache = dmax(c->l2.present ? c->l2.size_bytes : 0, c->llc.present ? c->llc.size_bytes : 0);
	dies_of(c, m);
}

void memsys_of_one(const struct arch_chip *c, struct memsys *m)
{
	struct arch_chip one = *c;
	one.dies.count = 1;
	memsys_of(&one, m);
}

/* The unit group and pipe that run dtype dt: the best matrix unit, else the
   best vector unit. Returns the group index or -1. */
int pick_unit(const struct arch_chip *c, int dt, int *matrix, double *macs_per_clk, double *clock)
{
	int best = -1, bm = 0;
	double bestrate = 0, bmacs = 0, bclk = 0;
	for (int pass = 0; pass < 2 && best < 0; pass++) {
		for (int g = 0; g < c->nunits; g++) {
			const struct arch_unit *u = &c->units[g];
			double macs = pass == 0 ? u->mat_units * u->mat[dt] : u->vec[dt];
			if (macs <= 0)
				continue;
			double clk =
			    (pass == 0 && dt != DT_FP64 && u->tensor_clock_hz > 0) ? u->tensor_clock_hz : u->clock_hz;
			double rate = macs * clk * u->count;
			if (rate > bestrate) {
				bestrate = rate, best = g, bm = pass == 0, bmacs = macs, bclk = clk;
			}
		}
	}
	if (best >= 0) {
		*matrix = bm;
		*macs_per_clk = bmacs;
		*clock = bclk;
	}
	return best;
}

/* pick_unit, or a reason naming the chip and dtype. */
int need_unit(const struct arch_chip *c, int dt, int *matrix, double *macs_per_clk, double *clock, char *why, size_t wl)
{
	int gi = pick_unit(c, dt, matrix, macs_per_clk, clock);
	if (gi < 0)
		snprintf(why, wl, "%s has no matrix or vector unit for %s", c->name, arch_dtype_name(dt));
	return gi;
}

/* The group that runs elementwise work: the one with the most fp32 lanes. */
int pick_vector_unit(const struct arch_chip *c)
{
	int best = 0;
	double br = -1;
	for (int g = 0; g < c->nunits; g++) {
		const struct arch_unit *u = &c->units[g];
		double r = u->vec[DT_FP32] * u->count * u->clock_hz;
		if (r > br)
			br = r, best = g;
	}
	return best;
}

double unit_threads(const struct arch_unit *u)
{
	return (double)u->max_warps * (double)u->warp_size;
}

/* ------------------------------------------------------------------ */
/* waves: CTAs of equal work dispatched onto units x occupancy slots     */

/* Time of a wave of w CTAs; adds each resource's time to t[]. */
static double wave_time(long long w, long units, const struct wave_cost *k, const struct memsys *m, double *t,
                        enum dm_bound pipe)
{
	double per_unit = (double)cdiv(w, units); /* CTAs on the busiest unit */
	double tp = per_unit * k->mma_s;
	double tl2 = m->l2_bw > 0 ? (double)w * k->l2_B / m->l2_bw : 0;
	double tdr = (double)w * k->dram_B / m->dram_bw;
	/* Little's law on the busiest unit: its CTAs' bytes in flight cover the latency */
	double tlat = k->fly_B > 0 ? per_unit * k->l2_B * k->lat / (per_unit * k->fly_B) : 0;
	double tdd = m->d2d_bw > 0 ? (double)w * k->d2d_B / m->d2d_bw : 0;
	double tw = dmax(dmax(tp, tl2), dmax(dmax(tdr, tdd), tlat));
	t[B_D2D] += tdd;
	t[pipe] += tp;
	t[B_L2] += tl2;
	t[B_DRAM] += tdr;
	t[B_LATENCY] += tlat;
	return tw + k->fixed_s;
}

/* Full waves plus the tail. */
double waves_time(long long ctas, long units, int occ, const struct wave_cost *k, const struct memsys *m, double *t,
                  enum dm_bound pipe)
{
	long long slots = (long long)units * occ;
	long long full = ctas / slots, tail = ctas % slots;
	double tt = 0;
	if (full > 0)
		tt += (double)full * wave_time(slots, units, k, m, t, pipe);
	if (full > 0)
		for (int i = 0; i < B_COUNT; i++)
			t[i] *= (double)full;
	if (tail > 0)
		tt += wave_time(tail, units, k, m, t, pipe);
	return tt;
}

enum dm_bound bound_of(const double *t, double launch, double total)
{
	if (launch > 0.5 * total)
		return B_LAUNCH;
	enum dm_bound b = B_MATRIX;
	for (int i = 0; i < B_COUNT; i++)
		if (i != B_LAUNCH && t[i] > t[b])
			b = (enum dm_bound)i;
	return b;
}

/* ------------------------------------------------------------------ */
/* copies                                                               */

/* Payload share of PCIe transaction packets: 128-byte payloads (the usual
   max payload size of a GPU's root port) behind ~24 bytes of TLP header,
   sequence number, LCRC and framing. */
#define PCIE_PAYLOAD      128.0
#define PCIE_TLP_OVERHEAD 24.0

int copy_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	double t[B_COUNT] = {0};
	struct memsys ms;
	memsys_of(c, &ms);
	double launch = c->model.launch_s;
	if (op->src == PLACE_HOST && op->dst == PLACE_HOST) {
		snprintf(why, wl, "host to host does not involve the device");
		return -1;
	}
	if (op->src == PLACE_HBM && op->dst == PLACE_HBM) {
		t[B_DRAM] = op->bytes * (1 + c->model.write_cost) / ms.dram_bw;
		r->bytes_dram = 2 * op->bytes;
		r->bytes_d2d = ms.remote * 2 * op->bytes; /* source and destination both interleaved */
		t[B_D2D] = ms.d2d_bw > 0 ? r->bytes_d2d / ms.d2d_bw : 0;
		r->time_s = launch + ms.lat_dram + dmax(t[B_DRAM], t[B_D2D]);
		r->bound = bound_of(t, launch + ms.lat_dram, r->time_s);
		xp(ex, "device copy: %.4g MB read and written at %.0f GB/s\n", op->bytes / 1e6, ms.dram_bw / 1e9);
	} else {
		const struct arch_link *l = NULL;
		for (int i = 0; i < c->nlinks; i++)
			if (!strcmp(c->links[i].kind, "pcie"))
				l = &c->links[i];
		if (!l) {
			snprintf(why, wl, "%s has no PCIe link to the host (links.* of kind pcie)", c->name);
			return -1;
		}
		double raw = arch_link_bw(l) * (double)l->count;
		double bw = raw * PCIE_PAYLOAD / (PCIE_PAYLOAD + PCIE_TLP_OVERHEAD);
		double lat = l->latency_s > 0 ? l->latency_s : 1e-6;
		t[B_LINK] = op->bytes / bw;
		r->bytes_link = op->bytes;
		r->bytes_dram = op->bytes;
		r->time_s = launch + lat + t[B_LINK];
		r->bound = bound_of(t, launch + lat, r->time_s);
		xp(ex, "host copy over PCIe gen %ld x%ld: %.1f GB/s raw, %.1f GB/s of payload (%.0f-byte TLPs)\n",
		   l->pcie_gen, l->pcie_lanes, raw / 1e9, bw / 1e9, PCIE_PAYLOAD);
	}
	t[B_LAUNCH] = launch;
	memcpy(r->t_res, t, sizeof t);
	r->clock_hz = c->units[0].clock_hz;
	snprintf(r->kern.name, sizeof r->kern.name, "memcpy_%s_to_%s", op->src == PLACE_HOST ? "host" : "hbm",
	         op->dst == PLACE_HOST ? "host" : "hbm");
	r->kern.kernels = 1;
	return 0;
}

/* ------------------------------------------------------------------ */

/* The GEMM a gemm op is, or a conv's implicit GEMM: M = n p q, N = k, K = c r s, reading its input once
   (not an im2col copy). */
static struct gemm_in gemm_in_of(const struct op *op)
{
	if (op->kind == OP_GEMM)
		return (struct gemm_in){op->m,         op->n, op->k,    op->batch,   op->dtype,
		                        op->acc_dtype, 0,     op->warm, op->epilogue};
	long long p = (op->ih + 2 * op->pad - op->r) / op->stride + 1;
	long long q = (op->iw + 2 * op->pad - op->s) / op->stride + 1;
	struct gemm_in g = {op->batch * p * q, op->cout, op->cin * op->r * op->s, 1, op->dtype, op->acc_dtype, 0,
	                    op->warm,          EPI_NONE};
	g.a_bytes = (double)op->batch * op->cin * op->ih * op->iw * dt_bytes(op->dtype);
	return g;
}

static int predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	memset(r, 0, sizeof *r);
	int rc = 0;
	switch (op->kind) {
	case OP_GEMM: {
		struct gemm_in g = gemm_in_of(op);
		rc = gemm_time(c, &g, r, ex, why, wl);
		break;
	}
	case OP_CONV: {
		struct gemm_in g = gemm_in_of(op);
		xp(ex,
		   "implicit GEMM: M = n*p*q = %lld, N = k = %lld, K = c*r*s = %lld (input read once, not "
		   "im2col)\n",
		   g.m, g.n, g.k);
		rc = gemm_time(c, &g, r, ex, why, wl);
		break;
	}
	case OP_ATTN:
		if (op->impl == ATTN_DECODE || op->impl == ATTN_PAGED)
			rc = attn_decode(c, op, r, ex, why, wl);
		else if (op->impl == ATTN_NAIVE)
			rc = attn_naive(c, op, r, ex, why, wl);
		else if (op->impl == ATTN_FLASH1)
			rc = attn_flash1(c, op, r, ex, why, wl);
		else
			rc = attn_flash(c, op, r, ex, why, wl);
		break;
	case OP_ELEM: elem_time(c, op, r, ex); break;
	case OP_EMBED: {
		double e = dt_bytes(op->dtype), rows = (double)op->tokens, row = (double)op->dim * e;
		struct stream_in s = {0};
		s.rd = rows * row + rows * 4, s.wr = rows * row; /* gathered rows, the token ids, the output */
		s.threads = rows * dmin(1024, ceil(row / c->model.bytes_per_thread));
		s.fly_per_thread = c->model.bytes_per_thread;
		stream_time(c, &s, r, ex);
		snprintf(r->kern.name, sizeof r->kern.name, "embedding_gather");
		break;
	}
	case OP_COPY: rc = copy_time(c, op, r, ex, why, wl); break;
	case OP_KIND_COUNT: snprintf(why, wl, "unknown op kind"); return -1;
	}
	if (rc)
		return rc;
	r->flops = op_flops(op);
	r->tflops = r->time_s > 0 ? r->flops / r->time_s / 1e12 : 0;
	r->peak_frac = r->peak_flops > 0 && r->flops > 0 ? r->flops / r->time_s / r->peak_flops : 0;
	return 0;
}

int dm_predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *explain, char *why,
               size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	return predict(c, op, r, explain, why, whylen);
}

int dm_iteration(const struct arch_chip *c, const struct op *op, struct dm_iter *it, char *why, size_t whylen)
{
	struct dm_result r;
	memset(&r, 0, sizeof r);
	memset(it, 0, sizeof *it);
	if (why && whylen)
		why[0] = '\0';
	switch (op->kind) {
	case OP_GEMM: {
		struct gemm_in g = gemm_in_of(op);
		return gemm_time_it(c, &g, &r, NULL, why, whylen, it);
	}
	case OP_CONV: {
		struct gemm_in g = gemm_in_of(op);
		return gemm_time_it(c, &g, &r, NULL, why, whylen, it);
	}
	case OP_ATTN:
		if (op->dropout > 0) {
			snprintf(why, whylen,
			         "attn dropout=%g: the warp-level model has no integer pipe for the dropout's random "
			         "numbers yet (step the op without dropout=)",
			         op->dropout);
			return -1;
		}
		if (op->impl == ATTN_FLASH2 || op->impl == ATTN_FLASH3)
			return attn_flash_it(c, op, &r, NULL, why, whylen, it);
		snprintf(why, whylen, "attn impl=%s has no main loop to step (use impl=flash2 or flash3)",
		         op_attn_impl_name(op->impl));
		return -1;
	case OP_ELEM: elem_time_it(c, op, &r, NULL, it); return 0;
	default:
		snprintf(why, whylen, "%s has no main loop to step (gemm, conv, attn and elem do)",
		         op_kind_name(op->kind));
		return -1;
	}
}

/* ------------------------------------------------------------------ */
/* memo: open addressing on (chip, canonical op text)                   */

struct memo {
	const struct arch_chip *chip;
	uint64_t h;
	char *key;
	struct dm_result r;
};
static struct memo *memo_tab;
static size_t memo_cap, memo_n;

static uint64_t fnv(const char *s, const void *p)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)p;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int memo_grow(void)
{
	size_t cap = memo_cap ? memo_cap * 2 : 1024;
	struct memo *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < memo_cap; i++)
		if (memo_tab[i].key) {
			size_t j = memo_tab[i].h & (cap - 1);
			while (t[j].key)
				j = (j + 1) & (cap - 1);
			t[j] = memo_tab[i];
		}
	free(memo_tab);
	memo_tab = t, memo_cap = cap;
	return 0;
}

int dm_predict_cached(const struct arch_chip *c, const struct op *op, struct dm_result *r, char *why, size_t whylen)
{
	char key[512];
	op_format(op, key, sizeof key);
	uint64_t h = fnv(key, c);
	if (memo_cap) {
		for (size_t j = h & (memo_cap - 1); memo_tab[j].key; j = (j + 1) & (memo_cap - 1))
			if (memo_tab[j].h == h && memo_tab[j].chip == c && !strcmp(memo_tab[j].key, key)) {
				*r = memo_tab[j].r;
				return 0;
			}
	}
	if (dm_predict(c, op, r, NULL, why, whylen))
		return -1;
	if ((memo_n + 1) * 2 > memo_cap && memo_grow())
		return 0; /* no room to remember: still a valid answer */
	size_t j = h & (memo_cap - 1);
	while (memo_tab[j].key)
		j = (j + 1) & (memo_cap - 1);
	memo_tab[j].key = strdup(key);
	if (!memo_tab[j].key)
		return 0;
	memo_tab[j].chip = c, memo_tab[j].h = h, memo_tab[j].r = *r;
	memo_n++;
	return 0;
}

void dm_cache_clear(void)
{
	for (size_t i = 0; i < memo_cap; i++)
		free(memo_tab[i].key);
	free(memo_tab);
	memo_tab = NULL, memo_cap = memo_n = 0;
}
