/*
 * test_cost.c -- the cost and energy arithmetic (sim/report/cost.c) against sums
 * done by hand, and the unknowns: an unpublished (0) or negative TDP or
 * price gives COST_UNKNOWN, never a division by zero or a made-up number.
 */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int fails;

static void near(const char *what, double got, double want)
{
	if (!cost_known(got) || fabs(got - want) > 1e-9 * fabs(want) + 1e-15) {
		printf("FAIL %s: %.17g (want %.17g)\n", what, got, want);
		fails++;
	}
}

static void unknown(const char *what, double got)
{
	if (cost_known(got)) {
		printf("FAIL %s: %.17g (want unknown)\n", what, got);
		fails++;
	}
}

int main(void)
{
	struct cost_params p = {COST_YEARS_DEFAULT, COST_USD_PER_KWH_DEFAULT};

	/* 700 W for 2 s on 8 devices: 700 x 2 x 8 = 11200 J */
	near("energy at TDP", cost_energy_tdp_j(700, 2, 8), 11200);
	unknown("energy, TDP unpublished", cost_energy_tdp_j(0, 2, 8));
	unknown("energy, TDP negative", cost_energy_tdp_j(-5, 2, 8));
	unknown("energy, no devices", cost_energy_tdp_j(700, 2, 0));
	near("energy of no time", cost_energy_tdp_j(700, 0, 1), 0);

	/* 400 W, static share 0.3, 1 s, 1 device: static 120 J; 1e14 FLOPs of
	   bf16 = 5e13 MACs x 2 pJ x 1 (a 16-bit MAC) = 100 J; 220 J under the 400 J cap */
	near("activity energy", cost_energy_activity_j(400, 0.3, 2, 1, 1e14, 1, 1), 220);
	/* a MAC at half the energy of a 16-bit one: 120 + 50 */
	near("activity energy, half a MAC", cost_energy_activity_j(400, 0.3, 2, 0.5, 1e14, 1, 1), 170);
	/* 1e15 FLOPs would need 1120 J in 1 s: capped at the TDP's 400 J */
	near("activity energy capped", cost_energy_activity_j(400, 0.3, 2, 2, 1e15, 1, 1), 400);
	unknown("activity, no MAC energy", cost_energy_activity_j(400, 0.3, 0, 2, 1e14, 1, 1));
	unknown("activity, TDP unpublished", cost_energy_activity_j(0, 0.3, 2, 2, 1e14, 1, 1));

	/* $25000 over 4 years (35040 h) = 0.71347 $/h; 700 W at 0.08 $/kWh =
	   0.056 $/h; together 0.76947 $/h */
	near("$/h", cost_usd_per_hour(25000, 700, &p), 25000.0 / 35040 + 0.056);
	near("$/h by hand", cost_usd_per_hour(25000, 700, &p), 0.7694703196347032);
	struct cost_params free_power = {3, 0};
	near("$/h, free power, 3 years", cost_usd_per_hour(8760 * 3, 700, &free_power), 1);
	unknown("$/h, price unpublished", cost_usd_per_hour(0, 700, &p));
	unknown("$/h, TDP unpublished", cost_usd_per_hour(25000, 0, &p));
	struct cost_params no_years = {0, 0.08};
	unknown("$/h, no amortization period", cost_usd_per_hour(25000, 700, &no_years));

	/* 8 devices x 0.9 $/h x 1800 s = 3.6 $ */
	near("$ per run", cost_usd_of_run(0.9, 8, 1800), 3.6);
	unknown("$ per run, $/h unknown", cost_usd_of_run(COST_UNKNOWN, 8, 1800));

	/* per watt and per dollar: 989 TFLOP/s / 700 W; and the unknowns */
	near("TFLOP/s per W", cost_div(989, 700), 989.0 / 700);
	unknown("per W, TDP 0", cost_div(989, 0));
	unknown("per W, TDP unknown", cost_div(989, COST_UNKNOWN));
	unknown("per $, perf unknown", cost_div(COST_UNKNOWN, 0.77));
	unknown("per $, negative", cost_div(1, -1));

	/* a MAC's energy against a 16-bit one, from Horowitz's 45 nm table (ISSCC 2014): an 8-bit multiply 0.2 pJ,
	   a 16-bit float multiply 1.1 pJ, a 32-bit float add (the accumulation) 0.9 pJ: fp8 (0.2 + 0.9) / (1.1 +
	   0.9) = 0.55, within a percent */
	near("MAC energy of bf16", cost_mac_scale(DT_BF16), 1);
	if (fabs(cost_mac_scale(DT_FP8) - 0.55) > 0.0055) {
		printf("FAIL MAC energy of fp8: %g, Horowitz's table gives 0.55\n", cost_mac_scale(DT_FP8));
		fails++;
	}
	if (!(cost_mac_scale(DT_FP4) < cost_mac_scale(DT_FP8) && cost_mac_scale(DT_FP8) < 1 &&
	      cost_mac_scale(DT_FP32) > 1 && cost_mac_scale(DT_FP32) < 2)) {
		printf("FAIL MAC energy not ordered by width: fp4 %g, fp8 %g, fp32 %g\n", cost_mac_scale(DT_FP4),
		       cost_mac_scale(DT_FP8), cost_mac_scale(DT_FP32));
		fails++;
	}
	near("MAC energy of no dtype", cost_mac_scale(-1), 0);

	/* the MAC energy of the unit group with a matrix unit for the dtype */
	struct arch_chip c;
	memset(&c, 0, sizeof c);
	c.nunits = 2;
	c.units[0].mat_units = 0; /* vector-only group */
	c.units[1].mat_units = 4;
	c.units[1].mat[DT_BF16] = 512;
	c.units[1].mat_pj = 0.9;
	near("MAC energy bf16", cost_mac_pj(&c, DT_BF16), 0.9);
	if (cost_mac_pj(&c, DT_FP64) != 0 || cost_mac_pj(&c, -1) != 0) {
		printf("FAIL MAC energy of a dtype without a matrix unit is not 0\n");
		fails++;
	}

	printf("%s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
