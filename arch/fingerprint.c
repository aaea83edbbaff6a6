/*
 * fingerprint.c -- a 64-bit hash of a chip's content: every resolved
 * parameter a simulation can read (units, memories, dies, links, system,
 * the model's constants, TDP and price, the names), field by field, so that
 * two chips loaded from the same file at different addresses have the same
 * fingerprint and a chip changed by --set (or by the fit of the validation
 * suite) has another. What only documents a chip is left out: the path it
 * was loaded from, its notes, the published figures and the text of its
 * --set overrides (the values they set are in).
 *
 * Fields are hashed by value, never as the struct's bytes: padding and the
 * bytes after a string's end are not content. -0.0 hashes as 0.0.
 * A field added to struct arch_chip must be added here (tests/test_loader.c
 * perturbs each field of the model, the memories and a unit and checks that
 * the fingerprint moves).
 */
#include "arch_int.h"

#include <string.h>

struct fp {
	uint64_t h;
};

/* splitmix64's finalizer on each word, folded into the state */
static void fp_word(struct fp *f, uint64_t w)
{
	w += 0x9e3779b97f4a7c15ull;
	w = (w ^ (w >> 30)) * 0xbf58476d1ce4e5b9ull;
	w = (w ^ (w >> 27)) * 0x94d049bb133111ebull;
	w ^= w >> 31;
	f->h = (f->h ^ w) * 0x100000001b3ull;
	f->h ^= f->h >> 29;
}

static void fp_double(struct fp *f, double v)
{
	uint64_t w;
	if (v == 0)
		v = 0; /* -0.0 and 0.0 are the same parameter */
	memcpy(&w, &v, sizeof w);
	fp_word(f, w);
}

static void fp_long(struct fp *f, long v)
{
	fp_word(f, (uint64_t)v);
}

static void fp_str(struct fp *f, const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	fp_word(f, (uint64_t)n);
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;
		memcpy(&w, s + i, n - i < 8 ? n - i : 8);
		fp_word(f, w);
	}
}

#define FP_STR(f, s) fp_str((f), (s), sizeof(s))

static void fp_doubles(struct fp *f, const double *v, int n)
{
	for (int i = 0; i < n; i++)
		fp_double(f, v[i]);
}

static void fp_unit(struct fp *f, const struct arch_unit *u)
{
	FP_STR(f, u->name);
	FP_STR(f, u->kind);
	fp_long(f, u->count);
	fp_double(f, u->clock_hz);
	fp_double(f, u->tensor_clock_hz);
	fp_long(f, u->warp_size);
	fp_long(f, u->schedulers);
	fp_long(f, u->max_warps);
	fp_long(f, u->max_ctas);
	fp_double(f, u->regfile_bytes);
	fp_double(f, u->smem_bytes);
	fp_doubles(f, u->vec, DT_COUNT);
	fp_double(f, u->sfu);
	fp_long(f, u->mat_units);
	fp_doubles(f, u->mat, DT_COUNT);
	fp_double(f, u->mat_fp16_acc16);
	fp_double(f, u->sparsity);
	fp_double(f, u->mat_pj);
	fp_long(f, u->mat_async);
	fp_double(f, u->mat_sync_frac);
	fp_double(f, u->mat_narrow_clk);
	fp_double(f, u->mat_narrow_st_clk);
	fp_double(f, u->smem_Bpc);
	fp_double(f, u->lat_alu);
	fp_double(f, u->lat_sfu);
	fp_double(f, u->lat_smem);
	fp_double(f, u->lat_mma);
	fp_double(f, u->lat_bar);
}

static void fp_mem(struct fp *f, const struct arch_mem *m)
{
	fp_long(f, m->present);
	FP_STR(f, m->type);
	fp_double(f, m->size_bytes);
	fp_double(f, m->bw_Bps);
	fp_double(f, m->latency_s);
	fp_double(f, m->bus_bits);
	fp_double(f, m->data_rate_bps);
	fp_double(f, m->bytes_per_clk);
	fp_double(f, m->clock_hz);
}

static void fp_link(struct fp *f, const struct arch_link *l)
{
	FP_STR(f, l->name);
	FP_STR(f, l->kind);
	FP_STR(f, l->version);
	fp_long(f, l->count);
	fp_double(f, l->bw_Bps);
	fp_double(f, l->latency_s);
	fp_long(f, l->pcie_gen);
	fp_long(f, l->pcie_lanes);
}

static void fp_dies(struct fp *f, const struct arch_dies *d)
{
	fp_long(f, d->count);
	fp_long(f, d->io_count);
	FP_STR(f, d->topology);
	fp_double(f, d->d2d_bw_Bps);
	fp_double(f, d->d2d_latency_s);
	FP_STR(f, d->memory);
	FP_STR(f, d->l2);
}

static void fp_system(struct fp *f, const struct arch_system *s)
{
	fp_long(f, s->present);
	fp_long(f, s->devices_per_node);
	FP_STR(f, s->topology);
	FP_STR(f, s->link);
	fp_long(f, s->in_switch_reduction);
	fp_double(f, s->nvls_eff);
	fp_long(f, s->nvls_channels);
	fp_long(f, s->nics_per_device);
	fp_double(f, s->nic_bw_Bps);
	fp_double(f, s->nic_lat_s);
	fp_long(f, s->nodes);
	fp_double(f, s->oversubscription);
}

static void fp_model(struct fp *f, const struct arch_model *k)
{
	fp_double(f, k->launch_s);
	fp_double(f, k->launch_gap_s);
	fp_double(f, k->graph_gap_s);
	fp_double(f, k->dram_eff);
	fp_double(f, k->write_cost);
	fp_double(f, k->static_power);
	fp_double(f, k->l2_eff);
	fp_double(f, k->mma_eff);
	fp_double(f, k->sync_eff);
	fp_double(f, k->loaded_latency);
	fp_double(f, k->bytes_per_thread);
	fp_double(f, k->dram_latency_s);
	fp_double(f, k->l2_latency_s);
	fp_double(f, k->link_eff);
	fp_double(f, k->nic_eff);
	fp_double(f, k->coll_lat_scale);
	fp_double(f, k->coll_chunk);
}

uint64_t arch_chip_fingerprint(const struct arch_chip *c)
{
	struct fp f = {0xcbf29ce484222325ull};
	FP_STR(&f, c->vendor);
	FP_STR(&f, c->name);
	FP_STR(&f, c->archname);
	FP_STR(&f, c->process);
	FP_STR(&f, c->form);
	fp_long(&f, c->year);
	fp_double(&f, c->tdp_w);
	fp_double(&f, c->price_usd);
	fp_dies(&f, &c->dies);
	fp_long(&f, c->nunits);
	for (int i = 0; i < c->nunits && i < ARCH_MAX_UNITS; i++)
		fp_unit(&f, &c->units[i]);
	fp_mem(&f, &c->dram);
	fp_mem(&f, &c->l2);
	fp_mem(&f, &c->llc);
	fp_long(&f, c->nlinks);
	for (int i = 0; i < c->nlinks && i < ARCH_MAX_LINKS; i++)
		fp_link(&f, &c->links[i]);
	fp_system(&f, &c->sys);
	fp_model(&f, &c->model);
	return f.h;
}
