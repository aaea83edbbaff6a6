/*
 * derive.c -- figures derived from the microarchitecture, and the checks
 * that relate one field to another once a config is bound.
 *
 *   matrix peak(dt) = sum over unit groups of
 *                     units x matrix units per unit x MACs/clk(dt) x 2 x clock
 *   vector peak(dt) = sum of units x lanes(dt) x 2 x clock
 *   ridge(dt, level) = peak(dt) / bandwidth(level)          [FLOP/byte]
 *
 * The clock of tf32-and-narrower matrix peaks is the unit's tensor clock (a
 * lower one on H100 and L40S); fp64 matrix and vector peaks use `clock`.
 */
#include "arch_int.h"

#include <string.h>

static const char *dtype_names[DT_COUNT] = {"fp64", "fp32", "tf32",  "fp16", "bf16",
                                            "fp8",  "fp4",  "int32", "int8", "int4"};

const char *arch_dtype_name(enum arch_dtype dt)
{
	return dt < DT_COUNT ? dtype_names[dt] : "?";
}

int arch_dtype_parse(const char *name)
{
	for (int i = 0; i < DT_COUNT; i++)
		if (!strcmp(dtype_names[i], name))
			return i;
	return -1;
}

int arch_dtype_is_int(enum arch_dtype dt)
{
	return dt == DT_INT32 || dt == DT_INT8 || dt == DT_INT4;
}

static double matrix_clock(const struct arch_unit *u, enum arch_dtype dt)
{
	return dt == DT_FP64 ? u->clock_hz : u->tensor_clock_hz;
}

double arch_peak_matrix(const struct arch_chip *c, enum arch_dtype dt, int sparse)
{
	double sum = 0;
	for (int i = 0; i < c->nunits; i++) {
		const struct arch_unit *u = &c->units[i];
		/* 2:4 sparsity speeds up tf32 and narrower types, not fp64 or fp32 */
		double s = (sparse && dt != DT_FP64 && dt != DT_FP32) ? u->sparsity : 1.0;
		sum += (double)u->count * (double)u->mat_units * u->mat[dt] * 2.0 * matrix_clock(u, dt) * s;
	}
	return sum;
}

double arch_peak_vector(const struct arch_chip *c, enum arch_dtype dt)
{
	double sum = 0;
	for (int i = 0; i < c->nunits; i++)
		sum += (double)c->units[i].count * c->units[i].vec[dt] * 2.0 * c->units[i].clock_hz;
	return sum;
}

double arch_peak(const struct arch_chip *c, enum arch_dtype dt)
{
	double m = arch_peak_matrix(c, dt, 0), v = arch_peak_vector(c, dt);
	return m > v ? m : v;
}

double arch_ridge(const struct arch_chip *c, enum arch_dtype dt, const struct arch_mem *mem)
{
	if (!mem->present || mem->bw_Bps <= 0)
		return 0;
	return arch_peak(c, dt) / mem->bw_Bps;
}

/* Per lane, per direction, after line coding (PCI-SIG: 8b/10b to gen 2,
 * 128b/130b for gen 3-5, FLIT mode with 242/256 efficiency from gen 6). */
double arch_pcie_lane_Bps(long gen)
{
	switch (gen) {
	case 1: return 2.5e9 * 8 / 10 / 8;
	case 2: return 5e9 * 8 / 10 / 8;
	case 3: return 8e9 * 128 / 130 / 8;
	case 4: return 16e9 * 128 / 130 / 8;
	case 5: return 32e9 * 128 / 130 / 8;
	case 6: return 64e9 * 242 / 256 / 8;
	case 7: return 128e9 * 242 / 256 / 8;
	default: return 0;
	}
}

double arch_link_bw(const struct arch_link *l)
{
	if (l->bw_Bps > 0)
		return l->bw_Bps;
	return arch_pcie_lane_Bps(l->pcie_gen) * (double)l->pcie_lanes;
}

const struct arch_link *arch_find_link(const struct arch_chip *c, const char *name)
{
	for (int i = 0; i < c->nlinks; i++)
		if (!strcmp(c->links[i].name, name))
			return &c->links[i];
	return NULL;
}

long arch_total_units(const struct arch_chip *c)
{
	long n = 0;
	for (int i = 0; i < c->nunits; i++)
		n += c->units[i].count;
	return n;
}

#define FAIL(path, ...)                                                                                                \
	do {                                                                                                           \
		const char *f_;                                                                                        \
		int l_;                                                                                                \
		kv_where(m, path, &f_, &l_);                                                                           \
		arch_errorf(err, f_, l_, SIM_EXIT_CONFIG, __VA_ARGS__);                                                \
		return -1;                                                                                             \
	} while (0)

static int check_unit(struct kvmap *m, struct arch_unit *u, struct arch_error *err)
{
	char p[256];
	int any_mat = 0, any_vec = u->sfu > 0;
	if (u->tensor_clock_hz == 0)
		u->tensor_clock_hz = u->clock_hz;
	if (u->mat_fp16_acc16 == 0)
		u->mat_fp16_acc16 = u->mat[DT_FP16];
	for (int d = 0; d < DT_COUNT; d++) {
		any_mat |= u->mat[d] > 0;
		any_vec |= u->vec[d] > 0;
	}
	if (any_mat && u->mat_units == 0) {
		snprintf(p, sizeof p, "compute.%s.matrix.units", u->name);
		FAIL(p,
		     "compute.%s: matrix MACs are given but matrix.units is 0; expected the number of "
		     "matrix units per %s (e.g. 4 tensor cores per SM)",
		     u->name, u->kind);
	}
	if (!any_mat && u->mat_units > 0) {
		snprintf(p, sizeof p, "compute.%s.matrix.units", u->name);
		FAIL(p, "compute.%s: matrix.units is %ld but no matrix.<dtype> MACs per clock are given", u->name,
		     u->mat_units);
	}
	if (!any_mat && !any_vec) {
		snprintf(p, sizeof p, "compute.%s.count", u->name);
		FAIL(p,
		     "compute.%s: no vector lanes and no matrix MACs; expected at least one of "
		     "vector.<dtype> or matrix.<dtype>",
		     u->name);
	}
	if (u->tensor_clock_hz > u->clock_hz * 2) {
		snprintf(p, sizeof p, "compute.%s.tensor_clock", u->name);
		FAIL(p, "compute.%s: tensor_clock is more than twice the clock; expected at most %g MHz", u->name,
		     u->clock_hz * 2 / 1e6);
	}
	return 0;
}

int arch_check(struct kvmap *m, struct arch_chip *c, struct arch_error *err)
{
	for (int i = 0; i < c->nunits; i++) {
		if (check_unit(m, &c->units[i], err))
			return -1;
		if (c->units[i].count % c->dies.count) {
			FAIL("dies.count", "compute.%s.count: %ld units do not split evenly over %ld dies",
			     c->units[i].name, c->units[i].count, c->dies.count);
		}
	}
	if (c->dies.count > 1 && c->dies.d2d_bw_Bps <= 0)
		FAIL("dies.d2d_bandwidth", "dies: %ld dies need dies.d2d_bandwidth (per direction, e.g. \"5 TB/s\")",
		     c->dies.count);
	struct arch_mem *d = &c->dram;
	if (d->bw_Bps == 0) {
		if (d->bus_bits > 0 && d->data_rate_bps > 0)
			d->bw_Bps = d->bus_bits * d->data_rate_bps; /* data_rate is bytes/s per pin */
		else
			FAIL("memory.device.bandwidth",
			     "memory.device: missing 'bandwidth' (e.g. \"3.35 TB/s\"), or bus_width and data_rate to "
			     "derive it from");
	}
	struct arch_mem *caches[] = {&c->l2, &c->llc};
	for (int i = 0; i < 2; i++) {
		struct arch_mem *k = caches[i];
		if (k->clock_hz == 0)
			k->clock_hz = c->units[0].clock_hz;
		if (k->bw_Bps == 0 && k->bytes_per_clk > 0)
			k->bw_Bps = k->bytes_per_clk * k->clock_hz;
	}
	for (int i = 0; i < c->nlinks; i++) {
		struct arch_link *l = &c->links[i];
		char p[256];
		snprintf(p, sizeof p, "links.%s.bandwidth", l->name);
		if (!strcmp(l->kind, "pcie") && l->bw_Bps == 0 && (l->pcie_gen == 0 || l->pcie_lanes == 0))
			FAIL(p, "links.%s: a pcie link needs gen and lanes (or bandwidth)", l->name);
		if (strcmp(l->kind, "pcie") && l->bw_Bps == 0)
			FAIL(p, "links.%s: missing 'bandwidth' (per link, per direction, e.g. \"25 GB/s\")", l->name);
		if (strcmp(l->kind, "pcie") && (l->latency_s > 0 || l->pcie_gen || l->pcie_lanes)) {
			const char *k = l->latency_s > 0 ? "latency" : l->pcie_gen ? "gen" : "lanes";
			snprintf(p, sizeof p, "links.%s.%s", l->name, k);
			FAIL(p, "links.%s: %s is read only for kind pcie (host copies); this link is kind %s", l->name,
			     k, l->kind);
		}
	}
	if (c->sys.present) {
		if (c->sys.link[0] && !arch_find_link(c, c->sys.link))
			FAIL("system.link", "system.link: no links.%s group in this config", c->sys.link);
		if (c->sys.in_switch_reduction && c->sys.nvls_eff <= 0)
			FAIL(
			    "system.nvls_efficiency",
			    "system: in_switch_reduction is true but nvls_efficiency is not given (the collective "
			    "library's in-switch all-reduce efficiency for the GPU generation: NCCL's 0.85 Hopper, %s)",
			    "0.74 Blackwell");
		if (c->sys.in_switch_reduction && c->sys.nvls_channels < 2)
			FAIL("system.nvls_channels",
			     "system: in_switch_reduction is true but nvls_channels is not given (the channels the "
			     "library runs it on: NCCL's 16 Hopper, 24 Blackwell)");
		if (c->sys.nics_per_device > 0 && c->sys.nic_bw_Bps <= 0)
			FAIL("system.nic_bandwidth", "system: nics_per_device is %ld but nic_bandwidth is not given",
			     c->sys.nics_per_device);
		if (!strcmp(c->sys.topology, "switch") && c->sys.devices_per_node > 1 && !c->sys.link[0])
			FAIL("system.link", "system: topology \"switch\" needs system.link (the links.* group into the "
			                    "switch)");
	}
	return 0;
}
