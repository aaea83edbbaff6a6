/*
 * test_peaks.c -- derived dense peaks of every config against the vendors'
 * published figures.
 *
 * The table is tests/peaks/\*.tsv: config, class (matrix|vector), dtype,
 * published TFLOP/s (TOP/s for ints), source. A row fails when the derived
 * peak differs from it by more than 1%, or when the config's own `published`
 * block cites a different figure. Every config in configs/ (but the
 * hypothetical designs) must have at least one row. The seeds' arithmetic
 * (A100: 9.7 FP64, 78 FP16 vector, 312 FP16 tensor; H100 SXM: 989.4 BF16)
 * is checked on its own as well.
 *
 * With --markdown FILE it also writes the table of every row (derived,
 * published, difference, source) as Markdown: docs/peaks.md is that file.
 *
 * usage: test_peaks REPO_ROOT [--markdown FILE]
 */
#include "arch.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOL 0.01

static int fails, rows;
static char root[1024];
static FILE *md; /* --markdown output, or NULL */

struct seen {
	char name[600];
	int rows;
};
static struct seen configs[512];
static int nconfigs;

static void collect(const char *rel)
{
	char dir[2048];
	snprintf(dir, sizeof dir, "%s/configs%s%s", root, rel[0] ? "/" : "", rel);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char names[512][256]; /* per level: collect() recurses */
	int n = 0;
	while ((e = readdir(d)) && n < 512)
		if (e->d_name[0] != '.')
			snprintf(names[n++], 256, "%.255s", e->d_name);
	closedir(d);
	for (int i = 0; i < n; i++) {
		char relp[512], full[2600];
		struct stat st;
		snprintf(relp, sizeof relp, "%.200s%s%.255s", rel, rel[0] ? "/" : "", names[i]);
		snprintf(full, sizeof full, "%s/configs/%s", root, relp);
		if (stat(full, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (strcmp(names[i], "hypothetical"))
				collect(relp);
		} else if (strlen(relp) > 4 && !strcmp(relp + strlen(relp) - 4, ".cfg") && nconfigs < 512) {
			snprintf(configs[nconfigs++].name, sizeof configs[0].name, "%s", relp);
		}
	}
}

static void check(const char *cfg, const char *cls, const char *dtn, double pub_tf, const char *src)
{
	char path[2048];
	struct arch_error err;
	int dt = arch_dtype_parse(dtn);
	snprintf(path, sizeof path, "%s/configs/%s", root, cfg);
	rows++;
	for (int i = 0; i < nconfigs; i++)
		if (!strcmp(configs[i].name, cfg))
			configs[i].rows++;
	struct arch_chip *c = arch_load(path, NULL, 0, &err);
	if (!c) {
		printf("FAIL %s: does not load: ", cfg);
		arch_error_print(&err, stdout);
		fails++;
		return;
	}
	int matrix = !strcmp(cls, "matrix");
	if (dt < 0 || (!matrix && strcmp(cls, "vector"))) {
		printf("FAIL %s: bad row (class %s, dtype %s)\n", cfg, cls, dtn);
		fails++;
	} else {
		double derived = (matrix ? arch_peak_matrix(c, dt, 0) : arch_peak_vector(c, dt)) / 1e12;
		double cited = (matrix ? c->pub.mat[dt] : c->pub.vec[dt]) / 1e12;
		double e = fabs(derived - pub_tf) / pub_tf;
		if (md)
			fprintf(md, "| %s | %s | %s | %.2f | %.2f | %+.2f%% | %s |\n", cfg, cls, dtn, derived, pub_tf,
			        100 * (derived - pub_tf) / pub_tf, src);
		if (!(e <= TOL)) {
			printf("FAIL %-24s %s %-5s derived %10.2f published %10.2f (%+.2f%%) [%s]\n", cfg, cls, dtn,
			       derived, pub_tf, 100 * (derived - pub_tf) / pub_tf, src);
			fails++;
		}
		if (cited > 0 && fabs(cited - pub_tf) > 1e-6 * pub_tf) {
			printf("FAIL %-24s %s %-5s config cites %.2f, table %.2f\n", cfg, cls, dtn, cited, pub_tf);
			fails++;
		}
	}
	arch_free(c);
}

static void read_table(const char *file)
{
	char path[2048], line[2048];
	snprintf(path, sizeof path, "%.1000s/tests/peaks/%.255s", root, file);
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("FAIL cannot open %s\n", path);
		fails++;
		return;
	}
	int ln = 0;
	while (fgets(line, sizeof line, f)) {
		ln++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || line[0] == '#' || !strncmp(line, "config\t", 7))
			continue;
		char *cols[5] = {0};
		char *save = NULL, *p = line;
		int n = 0;
		for (char *t; n < 5 && (t = strtok_r(p, "\t", &save)); p = NULL)
			cols[n++] = t;
		char *end;
		double v = n >= 4 ? strtod(cols[3], &end) : 0;
		if (n < 5 || *end || v <= 0) {
			printf("FAIL %s:%d: expected config, class, dtype, published, source\n", file, ln);
			fails++;
			continue;
		}
		check(cols[0], cols[1], cols[2], v, cols[4]);
	}
	fclose(f);
}

/* The seeds' arithmetic, independent of the tables. */
static void seed_check(const char *cfg, int matrix, enum arch_dtype dt, double want_tf)
{
	char path[2048];
	struct arch_error err;
	snprintf(path, sizeof path, "%s/configs/%s", root, cfg);
	struct arch_chip *c = arch_load(path, NULL, 0, &err);
	if (!c) {
		printf("FAIL seed check: %s does not load\n", cfg);
		fails++;
		return;
	}
	double got = (matrix ? arch_peak_matrix(c, dt, 0) : arch_peak_vector(c, dt)) / 1e12;
	/* the seeds round to the digits they print */
	if (fabs(got - want_tf) > 0.006 * want_tf) {
		printf("FAIL seed arithmetic %s %s %s: %.2f, seed says %.1f\n", cfg, matrix ? "matrix" : "vector",
		       arch_dtype_name(dt), got, want_tf);
		fails++;
	}
	arch_free(c);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

int main(int argc, char **argv)
{
	snprintf(root, sizeof root, "%s", argc > 1 ? argv[1] : ".");
	collect("");
	char dir[1100];
	snprintf(dir, sizeof dir, "%s/tests/peaks", root);
	DIR *d = opendir(dir);
	if (!d) {
		printf("FAIL no %s\n", dir);
		return 1;
	}
	struct dirent *e;
	char files[64][256];
	int nf = 0;
	while ((e = readdir(d)) && nf < 64)
		if (strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".tsv"))
			snprintf(files[nf++], 256, "%.255s", e->d_name);
	closedir(d);
	qsort(files, (size_t)nf, sizeof files[0], cmp_names);
	if (argc > 3 && !strcmp(argv[2], "--markdown")) {
		md = fopen(argv[3], "w");
		if (!md) {
			printf("FAIL cannot write %s\n", argv[3]);
			return 1;
		}
		fprintf(md,
		        "# Derived peaks against published figures\n\n"
		        "Generated by `test_peaks . --markdown docs/peaks.md` from `tests/peaks/*.tsv`; do not edit.\n"
		        "Derived: from each config's microarchitecture (units x MACs/clk x 2 x clock). Published: the\n"
		        "vendor's dense figure (TFLOP/s, TOP/s for integers). The `peaks` test fails above 1%%.\n\n"
		        "| config | class | dtype | derived | published | difference | source |\n"
		        "|---|---|---|---|---|---|---|\n");
	}
	for (int i = 0; i < nf; i++)
		read_table(files[i]);
	if (md)
		fclose(md);
	for (int i = 0; i < nconfigs; i++) {
		if (!configs[i].rows) {
			printf("FAIL configs/%s has no row in tests/peaks/*.tsv\n", configs[i].name);
			fails++;
		}
	}
	seed_check("a100.cfg", 0, DT_FP64, 9.7);
	seed_check("a100.cfg", 0, DT_FP16, 78);
	seed_check("a100.cfg", 1, DT_FP16, 312);
	seed_check("h100.cfg", 1, DT_BF16, 989.4);
	printf("%d configs, %d rows: %d passed, %d failed\n", nconfigs, rows, rows - fails > 0 ? rows - fails : 0,
	       fails);
	return fails != 0;
}
