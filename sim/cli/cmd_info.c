/*
 * cmd_info.c -- `sim info CONFIG [--json] [--set path=value]...`
 *
 * Describes a chip as the model sees it: compute units, clocks, memory
 * hierarchy, links, the system it sits in, and the derived peaks per dtype
 * beside the published figure the config cites, with the difference, and
 * the ridge points against device memory and L2.
 */
#include "cli.h"
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char cmd_info_help[] =
    "usage: sim info CONFIG [--json] [--set path=value]...\n"
    "\n"
    "Describes the chip of CONFIG: compute units and clocks, vector lanes and\n"
    "matrix units, memory hierarchy, links, the node and cluster it sits in,\n"
    "TDP and price; then its peaks per dtype, derived from the microarchitecture\n"
    "(units x MACs/clk x 2 x clock), beside the published figure the config\n"
    "cites and the difference; and its ridge points (FLOP/byte) against device\n"
    "memory and L2.\n"
    "\n"
    "options:\n"
    "  --json              print JSON instead (TFLOP/s, bytes, bytes/s; null\n"
    "                      where the chip has no unit for a dtype)\n"
    "  --set path=value    override a config parameter (repeatable), e.g.\n"
    "                      --set compute.sm.count=114 --set memory.device.bandwidth=\"4 TB/s\"\n"
    "\n"
    "examples:\n"
    "  sim info configs/h100.cfg\n"
    "  sim info configs/mi300x.cfg --json\n";

static const enum arch_dtype mat_dts[] = {DT_FP64, DT_FP32, DT_TF32, DT_FP16, DT_BF16,
                                          DT_FP8,  DT_FP4,  DT_INT8, DT_INT4};
static const enum arch_dtype vec_dts[] = {DT_FP64, DT_FP32, DT_FP16, DT_BF16, DT_INT32, DT_INT8};
static const enum arch_dtype ridge_dts[] = {DT_FP64, DT_FP32, DT_TF32, DT_FP16, DT_BF16, DT_FP8, DT_INT8};
#define NMAT   (int)(sizeof mat_dts / sizeof mat_dts[0])
#define NRIDGE (int)(sizeof ridge_dts / sizeof ridge_dts[0])
#define NVEC   (int)(sizeof vec_dts / sizeof vec_dts[0])

static const char *fmtq(double v, enum unit_kind k, char *buf, size_t len)
{
	units_format(v, k, buf, len);
	return buf;
}

static const char *tf(double flops, enum arch_dtype dt, char *buf, size_t len)
{
	if (flops <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f %s", flops / 1e12, arch_dtype_is_int(dt) ? "TOPS" : "TFLOPS");
	return buf;
}

static void print_rates(const char *label, const double *r, const enum arch_dtype *dts, int n)
{
	int any = 0;
	for (int i = 0; i < n; i++) {
		if (r[dts[i]] <= 0)
			continue;
		printf("%s%s %g", any ? ", " : label, arch_dtype_name(dts[i]), r[dts[i]]);
		any = 1;
	}
	if (any)
		printf("\n");
}

static void print_unit(const struct arch_unit *u)
{
	char a[32], b[32], c[32];
	printf("compute    %s: %ld x %s, clock %s", u->name, u->count, u->kind, fmtq(u->clock_hz, UNIT_FREQ, a, 32));
	if (u->tensor_clock_hz != u->clock_hz)
		printf(", tensor clock %s", fmtq(u->tensor_clock_hz, UNIT_FREQ, a, 32));
	printf("\n           warp %ld, %ld schedulers, %ld warps, %ld CTAs", u->warp_size, u->schedulers, u->max_warps,
	       u->max_ctas);
	if (u->regfile_bytes > 0)
		printf(", registers %s", fmtq(u->regfile_bytes, UNIT_BYTES, b, 32));
	if (u->smem_bytes > 0)
		printf(", shared %s", fmtq(u->smem_bytes, UNIT_BYTES, c, 32));
	printf("\n");
	print_rates("           vector lanes/clk per unit: ", u->vec, vec_dts, NVEC);
	if (u->sfu > 0)
		printf("           special-function results/clk per unit: %g\n", u->sfu);
	if (u->mat_units > 0) {
		char label[96];
		snprintf(label, sizeof label, "           matrix: %ld per unit, dense MACs/clk each: ", u->mat_units);
		print_rates(label, u->mat, mat_dts, NMAT);
		if (u->mat_fp16_acc16 != u->mat[DT_FP16])
			printf("           fp16 with fp16 accumulate: %g MACs/clk\n", u->mat_fp16_acc16);
		if (u->sparsity > 1)
			printf("           2:4 sparsity: x%g\n", u->sparsity);
	}
}

static void print_mem(const char *label, const struct arch_mem *m, int is_dram)
{
	char a[32], b[32], c[32];
	if (!m->present)
		return;
	printf("           %-7s %s %s", label, m->type[0] ? m->type : "", fmtq(m->size_bytes, UNIT_BYTES, a, 32));
	if (m->bw_Bps > 0)
		printf(", %s", fmtq(m->bw_Bps, UNIT_BANDWIDTH, b, 32));
	if (is_dram && m->bus_bits > 0)
		printf(", %g-bit", m->bus_bits);
	if (m->latency_s > 0)
		printf(", latency %s", fmtq(m->latency_s, UNIT_TIME, c, 32));
	printf("\n");
}

static void print_links(const struct arch_chip *c)
{
	char a[32], b[32], d[32];
	for (int i = 0; i < c->nlinks; i++) {
		const struct arch_link *l = &c->links[i];
		double bw = arch_link_bw(l);
		printf("%s %-7s %s", i ? "          " : "links     ", l->name, l->kind);
		if (l->version[0])
			printf(" %s", l->version);
		if (!strcmp(l->kind, "pcie") && l->pcie_gen)
			printf(" gen%ld x%ld", l->pcie_gen, l->pcie_lanes);
		printf(": %ld x %s per direction", l->count, fmtq(bw, UNIT_BANDWIDTH, a, 32));
		if (l->count > 1)
			printf(" (%s per direction, %s both)", fmtq(bw * (double)l->count, UNIT_BANDWIDTH, b, 32),
			       fmtq(2 * bw * (double)l->count, UNIT_BANDWIDTH, d, 32));
		if (l->latency_s > 0)
			printf(", latency %s", fmtq(l->latency_s, UNIT_TIME, a, 32));
		printf("\n");
	}
}

static void print_system(const struct arch_system *s)
{
	char a[32];
	if (!s->present)
		return;
	printf("system     %ld devices per node, %s", s->devices_per_node, s->topology);
	if (s->link[0])
		printf(" over %s", s->link);
	if (s->in_switch_reduction)
		printf(", in-switch reduction (NVLS at %.2f on %ld channels, one kept)", s->nvls_eff, s->nvls_channels);
	printf("\n");
	if (s->nics_per_device > 0) {
		printf("           %ld NIC%s per device x %s per direction", s->nics_per_device,
		       s->nics_per_device > 1 ? "s" : "", fmtq(s->nic_bw_Bps, UNIT_BANDWIDTH, a, 32));
		if (s->nic_lat_s > 0)
			printf(", the network plugin reports %s a step", fmtq(s->nic_lat_s, UNIT_TIME, a, 32));
		printf("\n");
		printf("           fabric oversubscription %g:1", s->oversubscription);
		if (s->nodes > 0)
			printf(", %ld nodes (%ld devices)", s->nodes, s->nodes * s->devices_per_node);
		else
			printf(", nodes as the trace needs");
		printf("\n");
	}
}

static void print_peak_row(const char *cls, enum arch_dtype dt, double derived, double pub, double sparse)
{
	char a[32], b[32], s[32], diff[32];
	if (pub > 0 && derived > 0) {
		double e = 100.0 * (derived - pub) / pub;
		snprintf(diff, sizeof diff, "%+.1f%%", fabs(e) < 0.05 ? 0.0 : e);
	} else
		snprintf(diff, sizeof diff, "-");
	printf("  %-6s %-5s %16s %16s %8s %16s\n", cls, arch_dtype_name(dt), tf(derived, dt, a, 32), tf(pub, dt, b, 32),
	       diff, sparse > derived ? tf(sparse, dt, s, 32) : "-");
}

static void print_text(const struct arch_chip *c)
{
	char a[32], b[32];
	printf("%s  (%s", c->name, c->vendor);
	const char *extra[] = {c->archname, c->process, c->form};
	for (int i = 0; i < 3; i++)
		if (extra[i][0])
			printf(", %s", extra[i]);
	if (c->year)
		printf(", %ld", c->year);
	if (c->hypothetical)
		printf("; a hypothetical design: no published figures but its own");
	printf(")\nconfig     %s\n", c->path);
	for (int i = 0; i < c->nsets; i++)
		printf("override   %s\n", c->sets[i]);
	if (c->notes[0])
		printf("notes      %s\n", c->notes);
	printf("dies       %ld", c->dies.count);
	if (c->dies.io_count)
		printf(" compute dies on %ld I/O dies", c->dies.io_count);
	if (c->dies.count > 1) {
		printf(", %s, die-to-die %s per direction", c->dies.topology,
		       fmtq(c->dies.d2d_bw_Bps, UNIT_BANDWIDTH, a, 32));
		if (c->dies.d2d_latency_s > 0)
			printf(", +%s per crossing", fmtq(c->dies.d2d_latency_s, UNIT_TIME, b, 32));
	}
	printf("\n");
	for (int i = 0; i < c->nunits; i++)
		print_unit(&c->units[i]);
	printf("memory\n");
	print_mem("device", &c->dram, 1);
	print_mem("l2", &c->l2, 0);
	print_mem("llc", &c->llc, 0);
	print_links(c);
	print_system(&c->sys);
	if (c->tdp_w > 0 || c->price_usd > 0) {
		printf("power      ");
		if (c->tdp_w > 0)
			printf("%s TDP", fmtq(c->tdp_w, UNIT_POWER, a, 32));
		if (c->price_usd > 0)
			printf("%sprice %.0f USD", c->tdp_w > 0 ? "; " : "", c->price_usd);
		printf("\n");
	}

	printf("\npeaks (dense)        derived        published     diff           sparse\n");
	for (int i = 0; i < NMAT; i++) {
		enum arch_dtype dt = mat_dts[i];
		double d = arch_peak_matrix(c, dt, 0), p = c->pub.mat[dt];
		if (d > 0 || p > 0)
			print_peak_row("matrix", dt, d, p, arch_peak_matrix(c, dt, 1));
	}
	for (int i = 0; i < NVEC; i++) {
		enum arch_dtype dt = vec_dts[i];
		double d = arch_peak_vector(c, dt), p = c->pub.vec[dt];
		if (d > 0 || p > 0)
			print_peak_row("vector", dt, d, p, 0);
	}
	if (c->pub.source[0])
		printf("  published: %s\n", c->pub.source);

	printf("\nridge points (FLOP/byte)   device memory        L2\n");
	for (int i = 0; i < NRIDGE; i++) {
		enum arch_dtype dt = ridge_dts[i];
		if (arch_peak(c, dt) <= 0)
			continue;
		double rl2 = arch_ridge(c, dt, &c->l2);
		printf("  %-5s %26.1f %12s\n", arch_dtype_name(dt), arch_ridge(c, dt, &c->dram),
		       rl2 > 0 ? (snprintf(a, sizeof a, "%.1f", rl2), a) : "-");
	}
}

static void json_mem(struct json *j, const char *key, const struct arch_mem *m)
{
	if (!m->present) {
		json_nil(j, key);
		return;
	}
	json_obj(j, key);
	json_str(j, "type", m->type);
	json_num(j, "size_bytes", m->size_bytes);
	json_num_or_null(j, "bandwidth_Bps", m->bw_Bps);
	json_num_or_null(j, "latency_s", m->latency_s);
	json_obj_end(j);
}

static void json_peaks(struct json *j, const char *key, const struct arch_chip *c, int sparse, int published)
{
	json_obj(j, key);
	json_obj(j, "matrix");
	for (int i = 0; i < NMAT; i++) {
		enum arch_dtype dt = mat_dts[i];
		double v = published ? c->pub.mat[dt] : arch_peak_matrix(c, dt, sparse);
		json_num_or_null(j, arch_dtype_name(dt), v / 1e12);
	}
	json_obj_end(j);
	json_obj(j, "vector");
	for (int i = 0; i < NVEC; i++) {
		enum arch_dtype dt = vec_dts[i];
		double v = published ? c->pub.vec[dt] : sparse ? 0 : arch_peak_vector(c, dt);
		json_num_or_null(j, arch_dtype_name(dt), v / 1e12);
	}
	json_obj_end(j);
	json_obj_end(j);
}

static void print_json(const struct arch_chip *c)
{
	struct json j;
	json_begin(&j, stdout, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 1);
	json_str(&j, "config", c->path);
	json_arr(&j, "overrides");
	for (int i = 0; i < c->nsets; i++)
		json_str(&j, NULL, c->sets[i]);
	json_arr_end(&j);
	json_str(&j, "name", c->name);
	json_str(&j, "vendor", c->vendor);
	json_str(&j, "arch", c->archname);
	json_str(&j, "process", c->process);
	json_bool(&j, "hypothetical", c->hypothetical);
	json_int(&j, "dies", c->dies.count);
	json_num_or_null(&j, "d2d_bandwidth_Bps", c->dies.count > 1 ? c->dies.d2d_bw_Bps : 0);
	json_arr(&j, "compute");
	for (int i = 0; i < c->nunits; i++) {
		const struct arch_unit *u = &c->units[i];
		json_obj(&j, NULL);
		json_str(&j, "name", u->name);
		json_str(&j, "kind", u->kind);
		json_int(&j, "count", u->count);
		json_num(&j, "clock_hz", u->clock_hz);
		json_num(&j, "tensor_clock_hz", u->tensor_clock_hz);
		json_int(&j, "warp_size", u->warp_size);
		json_int(&j, "matrix_units", u->mat_units);
		json_num(&j, "sparsity", u->sparsity);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_peaks(&j, "peak_tflops", c, 0, 0);
	json_peaks(&j, "peak_tflops_sparse", c, 1, 0);
	json_peaks(&j, "published_tflops", c, 0, 1);
	json_obj(&j, "memory");
	json_str(&j, "type", c->dram.type);
	json_num(&j, "capacity_bytes", c->dram.size_bytes);
	json_num(&j, "bandwidth_Bps", c->dram.bw_Bps);
	json_mem(&j, "l2", &c->l2);
	json_mem(&j, "llc", &c->llc);
	json_obj_end(&j);
	json_obj(&j, "ridge_flop_per_byte");
	for (int i = 0; i < NRIDGE; i++) {
		json_obj(&j, arch_dtype_name(ridge_dts[i]));
		json_num_or_null(&j, "device", arch_ridge(c, ridge_dts[i], &c->dram));
		json_num_or_null(&j, "l2", arch_ridge(c, ridge_dts[i], &c->l2));
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_arr(&j, "links");
	for (int i = 0; i < c->nlinks; i++) {
		const struct arch_link *l = &c->links[i];
		json_obj(&j, NULL);
		json_str(&j, "name", l->name);
		json_str(&j, "kind", l->kind);
		json_int(&j, "count", l->count);
		json_num(&j, "bandwidth_per_direction_Bps", arch_link_bw(l));
		json_num_or_null(&j, "latency_s", l->latency_s);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	if (c->sys.present) {
		json_obj(&j, "system");
		json_int(&j, "devices_per_node", c->sys.devices_per_node);
		json_str(&j, "topology", c->sys.topology);
		json_str(&j, "link", c->sys.link);
		json_int(&j, "nics_per_device", c->sys.nics_per_device);
		json_num_or_null(&j, "nic_bandwidth_Bps", c->sys.nic_bw_Bps);
		json_num(&j, "nic_latency_s", c->sys.nic_lat_s);
		json_int(&j, "nodes", c->sys.nodes);
		json_obj_end(&j);
	} else {
		json_nil(&j, "system");
	}
	json_num_or_null(&j, "tdp_w", c->tdp_w);
	json_num_or_null(&j, "price_usd", c->price_usd);
	json_obj_end(&j);
	json_end(&j);
}

int cmd_info(int argc, char **argv)
{
	struct cli_common o = {.nsets = 0};
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		int r = cli_common_opt(&o, argc, argv, &i, "info");
		if (r < 0)
			return SIM_EXIT_USAGE;
		if (r)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return cli_unknown_option("info", cmd_info_help, argv[i]);
		if (path)
			return cli_usage_error("info", "one CONFIG expected, got '%s' and '%s'", path, argv[i]);
		path = argv[i];
	}
	if (!path)
		return cli_usage_error("info", "missing CONFIG");
	int code = SIM_EXIT_OK;
	struct arch_chip *c = cli_load(path, &o, &code);
	if (!c)
		return code;
	if (o.json)
		print_json(c);
	else
		print_text(c);
	arch_free(c);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sim info: cannot write output\n");
		return SIM_EXIT_CANTCREAT;
	}
	return SIM_EXIT_OK;
}
