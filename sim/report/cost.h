/*
 * cost.h -- energy, cost and performance per watt and per dollar of a run:
 * the arithmetic behind `sim compare` (docs/dse.md, "Cost and energy").
 *
 * Every function is pure and returns COST_UNKNOWN (NaN) where an input it
 * needs is unpublished (a TDP or price of 0), zero or negative: a ratio is
 * never divided by zero and an unknown figure never becomes a number.
 * cost_known() tells the two apart; json_num() prints NaN as null.
 *
 * Units: seconds, joules, watts, USD, FLOP/s.
 */
#ifndef SIM_COST_H
#define SIM_COST_H

#include "arch.h"

#include <math.h>

#define COST_UNKNOWN NAN

/* Straight-line amortization of the purchase price, running 24/7. */
#define COST_YEARS_DEFAULT 4.0
/* US average retail price of electricity to industrial customers, 2023:
   8.06 cents/kWh (EIA, Electric Power Annual 2023). */
#define COST_USD_PER_KWH_DEFAULT 0.08
#define COST_HOURS_PER_YEAR      8760.0

struct cost_params {
	double years;       /* amortization period of the purchase price */
	double usd_per_kwh; /* price of electricity */
};

static inline int cost_known(double v)
{
	return isfinite(v);
}

/* a / b, or unknown when either is unknown or b is not positive. */
double cost_div(double a, double b);

/* Energy of `devices` boards at their TDP for time_s: the upper bound a
   power limiter enforces. Unknown without a TDP. */
double cost_energy_tdp_j(double tdp_w, double time_s, int devices);

/*
 * Energy from activity: the static share of the TDP for the whole time
 * (leakage, memory, uncore: model.static_power) plus the matrix units'
 * dynamic energy, flops / 2 MACs at mac_pj per 16-bit MAC times mac_scale
 * (a MAC of the dtype relative to a 16-bit one: cost_mac_scale, as the
 * device model's power limit takes it), capped at the TDP energy (the board's
 * power limit). Unknown without a TDP or a MAC energy (mac_pj 0).
 */
double cost_energy_activity_j(double tdp_w, double static_share, double mac_pj, double mac_scale, double flops,
                              double time_s, int devices);

/* The MAC energy (pJ per 16-bit MAC) of the unit group that runs dtype dt on
   its matrix units, 0 where none has one. */
double cost_mac_pj(const struct arch_chip *c, int dt);
/* The energy of a MAC of dtype dt relative to a 16-bit one (0 for no dtype). */
double cost_mac_scale(int dt);

/*
 * Dollars per hour of one device: price / (years x 8760 h) plus the
 * electricity of power_w. Unknown without a price, a power or a period.
 */
double cost_usd_per_hour(double price_usd, double power_w, const struct cost_params *p);

/* Dollars of `devices` devices for time_s at usd_per_hour each. */
double cost_usd_of_run(double usd_per_hour, int devices, double time_s);

#endif
