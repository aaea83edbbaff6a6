/*
 * common.c -- the helpers every kernel family of the device model shares: the
 * size of a dtype, the unit group and pipe that run it, the bound's names and
 * the explanation's printf. A leaf: it calls nothing else in sim/device/.
 *
 * Invariants: pick_unit returns -1 or a group whose pipe has macs_per_clk > 0
 * at clock > 0; dt_bytes(dt) > 0 for every dtype.
 */
#include "model_int.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
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

/* The energy of a MAC of dtype dt relative to a 16-bit one: (operand bytes / 2)^0.86. A multiplier's energy grows
   faster than its operands' width, but the fp32 accumulation and the operand delivery do not shrink with them:
   Horowitz (ISSCC 2014, "Computing's energy problem", 45 nm) gives 0.2 pJ for an 8-bit integer multiply, 1.1 pJ for
   a 16-bit float multiply and 0.9 pJ for a 32-bit float add, so an 8-bit MAC into fp32 costs (0.2 + 0.9) / (1.1 +
   0.9) = 0.55 of a 16-bit one, 0.5^0.86. */
double mac_energy_scale(int dt)
{
	return pow(dt_bytes(dt) / 2, 0.86);
}

/* The share of a unit's matrix rate the synchronous warp-level instruction (mma.sync) sustains in a kernel:
   matrix.sync_fraction (its peak, a loop of it alone), times model.sync_efficiency where the unit's native
   matrix path is asynchronous (Hopper: the legacy instruction beside the kernel's loads and lane work). */
double sync_rate_frac(const struct arch_chip *c, const struct arch_unit *u)
{
	return u->mat_sync_frac * (u->mat_async ? c->model.sync_eff : 1);
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
		assert(bmacs > 0 && bclk > 0);
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

double int_lanes(const struct arch_unit *u)
{
	return u->vec[DT_INT32] > 0 ? u->vec[DT_INT32] : u->vec[DT_FP32];
}
