/*
 * memsys.c -- the memory of a chip as a kernel sees it (struct memsys):
 * reachable bandwidths and loaded latencies of device memory and L2, the
 * cache a GEMM's panels can live in, and for a chip of several dies the
 * die-to-die network. A leaf: it calls nothing else in sim/device/.
 *
 * Invariants: bandwidths and latencies are >= 0 and finite; lat_l2 <= lat_dram
 * (an L2 hit is never slower than a miss); dies >= 1; 0 <= remote < 1.
 */
#include "model_int.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	double lat_dram_idle_s = c->dram.latency_s > 0 ? c->dram.latency_s : k->dram_latency_s;
	double lat_l2_idle_s = c->l2.present && c->l2.latency_s > 0 ? c->l2.latency_s : k->l2_latency_s;
	if (lat_l2_idle_s > lat_dram_idle_s) /* a config's figures, not an invariant of the model: kept as a clamp */
		lat_l2_idle_s = lat_dram_idle_s;
	m->lat_dram = lat_dram_idle_s * k->loaded_latency;
	m->lat_l2 = lat_l2_idle_s * k->loaded_latency;
	m->cache = dmax(c->l2.present ? c->l2.size_bytes : 0, c->llc.present ? c->llc.size_bytes : 0);
	dies_of(c, m);
	assert(m->dram_bw > 0 && isfinite(m->dram_bw) && dm_ok(m->l2_bw) && dm_ok(m->cache));
	assert(dm_ok(m->lat_l2) && m->lat_l2 <= m->lat_dram && isfinite(m->lat_dram));
	assert(m->dies >= 1 && m->remote >= 0 && m->remote < 1 && dm_ok(m->d2d_bw) && dm_ok(m->lat_d2d));
}

void memsys_of_one(const struct arch_chip *c, struct memsys *m)
{
	struct arch_chip one = *c;
	one.dies.count = 1;
	memsys_of(&one, m);
}
