/*
 * waves.c -- CTAs of equal work dispatched onto units x occupancy slots in
 * waves (full waves, then the tail), each wave timed by the slowest of its
 * resources, and the bound of a kernel from its resources' times; the split
 * count a kernel's launcher picks to fill its waves. A leaf: it calls nothing
 * else in sim/device/.
 *
 * Invariants: a wave's time >= each of its resources' times; the full waves
 * and the tail dispatch every CTA (full x slots + tail = ctas).
 */
#include "model_int.h"

#include <assert.h>
#include <math.h>

/* ------------------------------------------------------------------ */
/* waves: CTAs of equal work dispatched onto units x occupancy slots     */

/* Time of a wave of w CTAs; adds each resource's time to t[]. */
static double wave_time(long long w, long units, const struct wave_cost *k, const struct memsys *m, double *t,
                        enum dm_bound pipe)
{
	double ctas_busiest = (double)cdiv(w, units); /* CTAs on the busiest unit */
	double pipe_s = ctas_busiest * k->mma_s;
	double l2_s = m->l2_bw > 0 ? (double)w * k->l2_B / m->l2_bw : 0;
	double dram_s = (double)w * k->dram_B / m->dram_bw;
	/* Little's law on the busiest unit: its CTAs' bytes in flight cover the latency */
	double lat_s = k->fly_B > 0 ? ctas_busiest * k->l2_B * k->lat / (ctas_busiest * k->fly_B) : 0;
	double d2d_s = m->d2d_bw > 0 ? (double)w * k->d2d_B / m->d2d_bw : 0;
	double wave_s = dmax(dmax(pipe_s, l2_s), dmax(dmax(dram_s, d2d_s), lat_s));
	assert(dm_ok(pipe_s) && dm_ok(l2_s) && dm_ok(dram_s) && dm_ok(lat_s) && dm_ok(d2d_s) && dm_ok(k->fixed_s));
	t[B_D2D] += d2d_s;
	t[pipe] += pipe_s;
	t[B_L2] += l2_s;
	t[B_DRAM] += dram_s;
	t[B_LATENCY] += lat_s;
	return wave_s + k->fixed_s;
}

/* Full waves plus the tail. */
double waves_time(long long ctas, long units, int occ, const struct wave_cost *k, const struct memsys *m, double *t,
                  enum dm_bound pipe)
{
	long long slots = (long long)units * occ;
	assert(units >= 1 && occ >= 1 && ctas >= 0);
	long long full = ctas / slots, tail = ctas % slots;
	assert((full + (tail > 0)) * slots >= ctas && full * slots + tail == ctas); /* every CTA has a slot */
	double total_s = 0;
	if (full > 0)
		total_s += (double)full * wave_time(slots, units, k, m, t, pipe);
	if (full > 0)
		for (int i = 0; i < B_COUNT; i++)
			t[i] *= (double)full;
	if (tail > 0)
		total_s += wave_time(tail, units, k, m, t, pipe);
	for (int i = 0; i < B_COUNT; i++) /* the waves take at least what each resource alone would */
		assert(i == B_LAUNCH || dm_le(t[i], total_s));
	return total_s;
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

/* The split count the FlashAttention kernels' launchers pick: the fewest s in 1..most (at most 128) whose waves of
   blocks x s CTAs on `slots` are within `within` of the best count's wave efficiency (strictly above it when
   strict). With n_blocks > 0, a count that leaves each split as many of the n_blocks as one split fewer is not
   eligible (FlashAttention-2's num_splits_heuristic). */
long long waves_split_count(long long blocks, long long slots, long long most, double within, int strict,
                            long long n_blocks)
{
	double best = 0, eff[128] = {0};
	if (most > 128)
		most = 128;
	for (long long s = 1; s <= most; s++) {
		if (n_blocks > 0 && s > 1 && cdiv(n_blocks, s) == cdiv(n_blocks, s - 1))
			continue;
		double waves = (double)(blocks * s) / (double)slots;
		eff[s - 1] = waves / ceil(waves);
		best = dmax(best, eff[s - 1]);
	}
	for (long long s = 1; s <= most; s++)
		if (eff[s - 1] > 0 && (strict ? eff[s - 1] > within * best : eff[s - 1] >= within * best))
			return s;
	return 1;
}
