/*
 * test_loader.c -- inheritance merges key by key, --set comes last and is
 * recorded, derived bandwidths (memory bus, PCIe lanes), defaults, the
 * peaks formula on a config small enough to check by hand, and that every
 * row of the parameter table names the model that reads it.
 *
 * usage: test_loader TESTS_DIR
 */
#include "arch_int.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b);
}

/* The fingerprint moves when any one parameter of the model, a memory level, the dies or a unit moves. */
#define MOVES(field)                                                                                                   \
	do {                                                                                                           \
		struct arch_chip *m = malloc(sizeof *m);                                                               \
		if (m) {                                                                                               \
			*m = *c;                                                                                       \
			m->field = m->field * 2 + 1;                                                                   \
			CHECK(arch_chip_fingerprint(m) != fp0, "fingerprint ignores " #field);                         \
			free(m);                                                                                       \
		}                                                                                                      \
	} while (0)

static void fingerprint_checks(const char *path)
{
	struct arch_error err;
	struct arch_chip *c = arch_load(path, NULL, 0, &err), *c2 = arch_load(path, NULL, 0, &err);
	const char *set[] = {"model.dram_efficiency=0.5"}, *same[] = {"chip.notes=\"other notes\""};
	struct arch_chip *cs = arch_load(path, set, 1, &err), *cn = arch_load(path, same, 1, &err);
	CHECK(c && c2 && cs && cn, "fingerprint: loads");
	if (c && c2 && cs && cn) {
		uint64_t fp0 = arch_chip_fingerprint(c);
		CHECK(c != c2 && fp0 == arch_chip_fingerprint(c2), "two loads of one file: the same fingerprint");
		CHECK(fp0 != arch_chip_fingerprint(cs), "a --set that changes a value changes the fingerprint");
		CHECK(fp0 == arch_chip_fingerprint(cn), "notes are not content");
		/* every field of the model section (all doubles) */
		for (size_t i = 0; i < sizeof c->model / sizeof(double); i++) {
			struct arch_chip *m = malloc(sizeof *m);
			if (!m)
				break;
			*m = *c;
			((double *)&m->model)[i] += 1;
			CHECK(arch_chip_fingerprint(m) != fp0, "fingerprint ignores model field %zu", i);
			free(m);
		}
		MOVES(tdp_w);
		MOVES(dies.count);
		MOVES(dies.d2d_bw_Bps);
		MOVES(dram.bw_Bps);
		MOVES(dram.latency_s);
		MOVES(l2.size_bytes);
		MOVES(l2.bw_Bps);
		MOVES(llc.size_bytes);
		MOVES(units[0].count);
		MOVES(units[0].clock_hz);
		MOVES(units[0].tensor_clock_hz);
		MOVES(units[0].max_warps);
		MOVES(units[0].max_ctas);
		MOVES(units[0].schedulers);
		MOVES(units[0].regfile_bytes);
		MOVES(units[0].smem_bytes);
		MOVES(units[0].smem_Bpc);
		MOVES(units[0].sfu);
		MOVES(units[0].mat_units);
		MOVES(units[0].mat[DT_FP16]);
		MOVES(units[0].vec[DT_FP32]);
		MOVES(units[0].mat_fp16_acc16);
		MOVES(units[0].mat_pj);
		MOVES(units[0].mat_async);
		MOVES(units[0].lat_mma);
		MOVES(links[0].bw_Bps);
		MOVES(links[0].pcie_lanes);
		/* bytes past a string's end are not content */
		struct arch_chip *m = malloc(sizeof *m);
		if (m) {
			*m = *c;
			m->name[sizeof m->name - 1] = 'x';
			m->name[strlen(m->name) + 1] = 'y';
			m->name[sizeof m->name - 1] = '\0';
			CHECK(arch_chip_fingerprint(m) == fp0, "bytes after the name's end changed the fingerprint");
			free(m);
		}
	}
	arch_free(c);
	arch_free(c2);
	arch_free(cs);
	arch_free(cn);
}

int main(int argc, char **argv)
{
	char path[1024];
	struct arch_error err;
	snprintf(path, sizeof path, "%s/loader/child.cfg", argc > 1 ? argv[1] : ".");

	struct arch_chip *c = arch_load(path, NULL, 0, &err);
	CHECK(c != NULL, "child.cfg does not load: %s:%d: %s", err.file, err.line, err.msg);
	if (!c)
		return 1;
	const struct arch_unit *u = &c->units[0];
	CHECK(!strcmp(c->name, "Child"), "child overrides chip.name, got %s", c->name);
	CHECK(!strcmp(c->vendor, "Test"), "chip.vendor inherited, got %s", c->vendor);
	CHECK(c->tdp_w == 300, "tdp inherited");
	CHECK(u->count == 50 && u->clock_hz == 1.5e9, "count overridden, clock inherited");
	CHECK(u->tensor_clock_hz == 1.2e9, "tensor clock set by the child");
	CHECK(u->warp_size == 32 && u->max_warps == 64 && u->schedulers == 4, "defaults apply");
	CHECK(c->dies.count == 1, "one die by default");
	/* dense fp16 = 50 x 4 x 256 x 2 x 1.2 GHz; sparse x2; vector fp32 = 50 x 128 x 2 x 1.5 GHz */
	CHECK(near(arch_peak_matrix(c, DT_FP16, 0), 50.0 * 4 * 256 * 2 * 1.2e9), "matrix fp16 peak");
	CHECK(near(arch_peak_matrix(c, DT_FP16, 1), 2 * 50.0 * 4 * 256 * 2 * 1.2e9), "sparse peak");
	CHECK(near(arch_peak_vector(c, DT_FP32), 50.0 * 128 * 2 * 1.5e9), "vector fp32 peak");
	CHECK(arch_peak_matrix(c, DT_FP8, 0) == 0, "no fp8 unit");
	CHECK(near(arch_peak(c, DT_FP32), arch_peak_vector(c, DT_FP32)), "best of matrix and vector");
	/* 5120 bits x 5.2 Gb/s / 8 = 3.328 TB/s */
	CHECK(near(c->dram.bw_Bps, 5120 * 5.2e9 / 8), "bandwidth from bus, got %g", c->dram.bw_Bps);
	CHECK(near(arch_ridge(c, DT_FP16, &c->dram), arch_peak(c, DT_FP16) / c->dram.bw_Bps), "ridge vs HBM");
	CHECK(near(arch_ridge(c, DT_FP16, &c->l2), arch_peak(c, DT_FP16) / 6e12), "ridge vs L2");
	const struct arch_link *pcie = arch_find_link(c, "pcie");
	CHECK(pcie && near(arch_link_bw(pcie), 16 * 16e9 * 128 / 130 / 8), "PCIe gen4 x16 = 31.5 GB/s");
	CHECK(arch_find_link(c, "nvlink") && arch_find_link(c, "nvlink")->count == 12, "links kept in order");
	CHECK(c->nlinks == 2 && !strcmp(c->links[0].name, "pcie"), "link order is file order");
	arch_free(c);

	/* --set comes after inheritance, later ones win, and they are recorded */
	const char *sets[] = {"compute.sm.count=20", "compute.sm.count=10", "memory.device.bandwidth=\"2 TB/s\"",
	                      "chip.name=Set"};
	c = arch_load(path, sets, 4, &err);
	CHECK(c != NULL, "--set load: %s", err.msg);
	if (c) {
		CHECK(c->units[0].count == 10, "last --set wins, got %ld", c->units[0].count);
		CHECK(c->dram.bw_Bps == 2e12, "quoted --set quantity");
		CHECK(!strcmp(c->name, "Set"), "--set of a string");
		CHECK(c->nsets == 4 && !strcmp(c->sets[0], "compute.sm.count=20"), "overrides recorded");
		arch_free(c);
	}

	/* the same from a string, inherits resolved against a base directory */
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/loader", argc > 1 ? argv[1] : ".");
	c = arch_load_string("inherits = \"parent.cfg\"; chip = { name = \"S\"; };", "<string>", dir, NULL, 0, &err);
	CHECK(c && !strcmp(c->name, "S") && c->units[0].count == 100, "load from a string");
	arch_free(c);
	/* cache bandwidth derived from bytes per clock at the first unit group's clock */
	c = arch_load_string(
	    "chip = { vendor = \"T\"; name = \"L2\"; };"
	    "compute = { sm = { kind = \"sm\"; count = 4; clock = \"1.5 GHz\"; vector = { fp32 = 64.0; }; }; };"
	    "memory = { device = { type = \"HBM3\"; capacity = \"16 GB\"; bandwidth = \"1 TB/s\"; };"
	    "  l2 = { size = \"64 MiB\"; bytes_per_clock = 4096.0; }; };",
	    "<string>", dir, NULL, 0, &err);
	CHECK(c && near(c->l2.bw_Bps, 4096 * 1.5e9), "l2 bandwidth from bytes per clock: %s", c ? "" : err.msg);
	arch_free(c);
	c = arch_load_string("chip = {", "<string>", dir, NULL, 0, &err);
	CHECK(!c && err.exit_code == 78 && err.line == 1, "syntax error in a string: line %d", err.line);

	/* a hypothetical design keeps none of its parent's product facts (published figures, year, price) but
	   what its own file states; everything else is inherited (issue 21) */
	{
		char h100[1024], base[1024];
		snprintf(base, sizeof base, "%s/..", argc > 1 ? argv[1] : ".");
		snprintf(h100, sizeof h100, "%s/../configs/h100.cfg", argc > 1 ? argv[1] : ".");
		struct arch_chip *p = arch_load(h100, NULL, 0, &err);
		CHECK(p && p->pub.mat[DT_BF16] > 0 && p->year == 2022 && p->price_usd > 0 && !p->hypothetical,
		      "h100.cfg's published figures, year and price");
		struct arch_chip *d =
		    arch_load_string("inherits = \"configs/h100.cfg\"; chip = { name = \"D\"; hypothetical = true; };",
		                     "<string>", base, NULL, 0, &err);
		CHECK(d && d->hypothetical && d->pub.mat[DT_BF16] == 0 && !d->pub.source[0] && d->year == 0 &&
		          d->price_usd == 0,
		      "a hypothetical design inherits no published figure, year or price");
		CHECK(d && p && d->units[0].count == p->units[0].count && d->dram.bw_Bps == p->dram.bw_Bps &&
		          d->tdp_w == p->tdp_w &&
		          near(arch_peak_matrix(d, DT_BF16, 0), arch_peak_matrix(p, DT_BF16, 0)),
		      "a hypothetical design inherits everything else");
		arch_free(d);
		d = arch_load_string(
		    "inherits = \"configs/h100.cfg\"; chip = { name = \"D\"; hypothetical = true; year = "
		    "2030; }; published = { matrix = { bf16 = \"2 PFLOPS\"; }; };",
		    "<string>", base, NULL, 0, &err);
		CHECK(d && d->year == 2030 && d->pub.mat[DT_BF16] > 0 && d->pub.mat[DT_FP16] == 0,
		      "a hypothetical design keeps the facts it states: %s", d ? "" : err.msg);
		arch_free(d);
		const char *hs[] = {"chip.hypothetical=true"}, *h1[] = {"chip.hypothetical=\"yes\""},
		           *h0[] = {"chip.hypothetical=1", "chip.hypothetical=false"};
		d = arch_load(h100, hs, 1, &err);
		CHECK(d && d->hypothetical && d->pub.mat[DT_BF16] == 0 && d->year == 0, "--set chip.hypothetical=true");
		arch_free(d);
		d = arch_load(h100, h1, 1, &err);
		CHECK(d && d->hypothetical && d->year == 0, "--set chip.hypothetical=\"yes\"");
		arch_free(d);
		d = arch_load(h100, h0, 2, &err);
		CHECK(d && !d->hypothetical && d->year == 2022, "the last --set of chip.hypothetical wins");
		arch_free(d);
		arch_free(p);
	}

	/* the parameter table says, for every key, which model reads it */
	for (int i = 0; i < arch_nsections; i++)
		for (int k = 0; k < arch_sections[i].nparams; k++) {
			const struct arch_param *p = &arch_sections[i].params[k];
			CHECK(p->desc && p->desc[0], "%s.%s: no description", arch_sections[i].prefix, p->key);
			CHECK(p->reader && p->reader[0], "%s.%s: no reader (which model reads it?)",
			      arch_sections[i].prefix, p->key);
		}

	fingerprint_checks(path);
	printf("%d checks: %d passed, %d failed\n", checks, checks - fails, fails);
	return fails != 0;
}
