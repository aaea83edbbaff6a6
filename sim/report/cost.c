/*
 * cost.c -- energy, cost and performance per watt and per dollar of a run
 * (sim/report/cost.h). Pure arithmetic: no chip is loaded, nothing is printed.
 *
 * Invariants: a result is a finite, non-negative number or COST_UNKNOWN;
 * an unpublished input (0) gives COST_UNKNOWN, never 0 or infinity.
 */
#include "cost.h"

#include "model.h"

static int pos(double v)
{
	return isfinite(v) && v > 0;
}

double cost_div(double a, double b)
{
	if (!isfinite(a) || !pos(b))
		return COST_UNKNOWN;
	return a / b;
}

double cost_energy_tdp_j(double tdp_w, double time_s, int devices)
{
	if (!pos(tdp_w) || !isfinite(time_s) || time_s < 0 || devices < 1)
		return COST_UNKNOWN;
	return tdp_w * time_s * devices;
}

double cost_energy_activity_j(double tdp_w, double static_share, double mac_pj, double mac_scale, double flops,
                              double time_s, int devices)
{
	double cap = cost_energy_tdp_j(tdp_w, time_s, devices);
	if (!cost_known(cap) || !pos(mac_pj) || !pos(mac_scale) || !isfinite(flops) || flops < 0 ||
	    !isfinite(static_share) || static_share < 0)
		return COST_UNKNOWN;
	double e = static_share * cap + flops / 2 * mac_pj * 1e-12 * mac_scale;
	return e < cap ? e : cap;
}

double cost_mac_scale(int dt)
{
	return dt >= 0 && dt < DT_COUNT ? mac_energy_scale(dt) : 0;
}

double cost_mac_pj(const struct arch_chip *c, int dt)
{
	if (dt < 0 || dt >= DT_COUNT)
		return 0;
	for (int g = 0; g < c->nunits; g++) {
		const struct arch_unit *u = &c->units[g];
		if (u->mat_units > 0 && u->mat[dt] > 0 && u->mat_pj > 0)
			return u->mat_pj;
	}
	return 0;
}

double cost_usd_per_hour(double price_usd, double power_w, const struct cost_params *p)
{
	if (!pos(price_usd) || !pos(power_w) || !pos(p->years) || !isfinite(p->usd_per_kwh) || p->usd_per_kwh < 0)
		return COST_UNKNOWN;
	return price_usd / (p->years * COST_HOURS_PER_YEAR) + power_w / 1000 * p->usd_per_kwh;
}

double cost_usd_of_run(double usd_per_hour, int devices, double time_s)
{
	if (!cost_known(usd_per_hour) || usd_per_hour < 0 || devices < 1 || !isfinite(time_s) || time_s < 0)
		return COST_UNKNOWN;
	return usd_per_hour * devices * time_s / 3600;
}
