/*
 * kernels.c -- the GEMM kernels the libraries ran, where a measurement's note names one: the name read for its tile
 * (kernel_of_note, as cases.c reads each measurement), and the report's section "GEMM kernels: the library's tile
 * and the model's" (write_kernels), which sets that tile beside the one the model's kernel search picked for the
 * row's op when validate.c predicted it. It scores nothing.
 */
#include "validate_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first `<digits>x<digits>` at or after p whose digits start a number: a tile's two sides. */
static int tile_after(const char *p, int *a, int *b)
{
	for (const char *q = p; *q; q++) {
		if (!isdigit((unsigned char)*q) || (q > p && isdigit((unsigned char)q[-1])))
			continue;
		char *e;
		long x = strtol(q, &e, 10);
		if (*e != 'x' || !isdigit((unsigned char)e[1]))
			continue;
		long y = strtol(e + 1, NULL, 10);
		if (x > 0 && y > 0 && x <= 1024 && y <= 1024) {
			*a = (int)x, *b = (int)y;
			return 1;
		}
	}
	return 0;
}

void kernel_of_note(const char *note, struct meas *m)
{
	/* the families whose names carry the tile, and where in the name it follows */
	static const char *const prefix[] = {"nvjet_", "cutlass_", "ampere_", "sm80_xmma_gemm", "sm90_xmma_gemm"};
	static const char *const after[] = {"_tst_", "gemm", "gemm", "tilesize", "tilesize"};
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
		const char *k = strstr(note, prefix[i]);
		if (!k)
			continue;
		size_t len = strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		char name[sizeof m->kernel];
		snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), k);
		const char *t = strstr(name, after[i]);
		int a, b;
		if (!t || !tile_after(t, &a, &b))
			continue;
		snprintf(m->kernel, sizeof m->kernel, "%s", name);
		m->lib_tile_m = b, m->lib_tile_n = a; /* column-major names: their first side is the op's n */
		return;
	}
}

/* The "GEMM kernels: the library's tile and the model's" section: the rows whose note names the kernel the
   library ran (its tile is in the name), beside the tile the model's kernel search picks for the same op. */
void write_kernels(FILE *f)
{
	int n = 0, same = 0, turned = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			if (!n)
				return;
			fprintf(f, "## GEMM kernels: the library's tile and the model's\n\n");
			fprintf(
			    f,
			    "A GEMM is timed as the kernel the model's search picks (sim/device/model_gemm.c: every "
			    "tile, stage count and split-K that fits, the fastest at the clock its power allows), "
			    "standing for the one the library picks. Where a row's note names the kernel the library "
			    "ran and the name gives its tile (cuBLAS's `nvjet_sm90_tst_...`, its CUTLASS "
			    "`cutlass_80_tensorop_..._256x128_...` and `ampere_...` kernels, "
			    "`sm80_xmma_gemm_..._tilesize...`; the names are column-major, so their first side is the "
			    "row-major op's n), the two are compared: %d rows, the same tile for %d, the same turned "
			    "for %d (which a square op cannot tell apart), another for %d. The library's tiles "
			    "that the search does not have show what it lacks.\n\n",
			    n, same, turned, n - same - turned);
			fprintf(f,
			        "| id | device | op | the library's kernel | its tile of C (m x n) | the model's | |\n"
			        "|---|---|---|---|---|---|---|\n");
		}
		for (int i = 0; i < nvs; i++) {
			const struct vcase *v = &vs[i];
			const struct meas *m = &ms[v->meas];
			if (!v->ok || v->gen || v->nops != 1 || v->coll[0].on || v->ops[0].kind != OP_GEMM ||
			    !m->kernel[0] || v->ops[0].tile_m > 0)
				continue;
			int tm = v->kern.tile_m, tn = v->kern.tile_n;
			int is_same = tm == m->lib_tile_m && tn == m->lib_tile_n;
			int is_turned = !is_same && tm == m->lib_tile_n && tn == m->lib_tile_m;
			if (pass == 0) {
				n++, same += is_same, turned += is_turned;
				continue;
			}
			fprintf(f, "| %s | ", v->id);
			md_cell(f, m->device, 40);
			fprintf(f, " | `%s` | `", v->op_text[0]);
			md_cell(f, m->kernel, 60);
			fprintf(f, "` | %dx%d | %dx%d | %s |\n", m->lib_tile_m, m->lib_tile_n, tm, tn,
			        is_same     ? "same"
			        : is_turned ? "turned"
			                    : "");
		}
	}
	fprintf(f, "\n");
}
