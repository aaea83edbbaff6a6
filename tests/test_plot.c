/*
 * test_plot.c -- the SVG writer (sim/report/plot.c): SI tick labels, placement on
 * log and linear axes, escaping, deterministic bytes, whole-or-nothing
 * files; and the seeds' RTX 3080 roofline example (FP32 ridge point 39.2
 * FLOP/byte = 29.77 TFLOP/s / 760 GB/s) against what configs/rtx3080.cfg
 * derives, which `sim roofline` prints.
 * usage: test_plot REPO_ROOT
 */
#include "arch.h"
#include "check.h"
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void si(double v, const char *want)
{
	char buf[32];
	plot_si(v, buf, sizeof buf);
	CHECK(!strcmp(buf, want), "plot_si(%g) = %s, want %s", v, buf, want);
}

static char *render(const struct plot *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f && !plot_write(p, f), "plot_write failed");
	fclose(f);
	return buf;
}

static struct plot *sample(void)
{
	struct plot *p = plot_new(1100, 600, "a <roof> & \"slopes\"");
	plot_axis(p, 0, 1, 100, 1, "FLOP/byte");
	plot_axis(p, 1, 1e9, 1e15, 1, "FLOP/s");
	double x[3] = {1, 10, 100}, y[3] = {1e10, 1e11, 1e11};
	CHECK(!plot_line(p, x, y, 3, 0, PLOT_SOLID, "chip <A>"), "plot_line");
	CHECK(!plot_point(p, 10, 1e12, 3, 1, "1"), "plot_point");
	CHECK(!plot_point(p, 1000, 1e12, 3, 1, "outside"), "plot_point");
	CHECK(!plot_text(p, 100, 1e11, -4, -4, PLOT_END, 0, "fp32 100G"), "plot_text");
	CHECK(!plot_note(p, "dashed: vector"), "plot_note");
	return p;
}

static void test_svg(void)
{
	struct plot *p = sample();
	char *a = render(p), *b = render(p);
	CHECK(a && b && !strcmp(a, b), "two writes of one plot differ");
	/* x = 10 is half-way along a log axis from 1 to 100: the plot area spans 80 to 1100 - 330 px */
	CHECK(strstr(a, "<circle cx=\"425.00\""), "point at x=10 not at 425.00 px");
	CHECK(!strstr(a, "outside"), "a point outside the axes was drawn");
	CHECK(strstr(a, "a &lt;roof&gt; &amp; &quot;slopes&quot;"), "title not escaped");
	CHECK(strstr(a, ">chip &lt;A&gt;</text>"), "legend entry missing");
	CHECK(strstr(a, ">dashed: vector</text>"), "note missing");
	CHECK(strstr(a, ">fp32 100G</text>"), "text missing");
	const char *ticks[] = {">1</text>", ">10</text>", ">100</text>", ">1G</text>", ">1T</text>", ">1P</text>"};
	for (int i = 0; i < 6; i++)
		CHECK(strstr(a, ticks[i]), "tick label %s missing", ticks[i]);
	CHECK(strstr(a, "</svg>\n"), "document not closed");
	free(a);
	free(b);
	/* linear axis: ticks on a 1-2-5 step */
	plot_axis(p, 1, 0, 700, 0, "TFLOP/s");
	a = render(p);
	CHECK(strstr(a, ">0</text>") && strstr(a, ">100</text>") && strstr(a, ">600</text>") &&
	          !strstr(a, ">700</text>"),
	      "linear ticks (0, 200, ... 600)");
	free(a);

	char dir[] = "/tmp/test_plot_XXXXXX";
	CHECK(mkdtemp(dir), "mkdtemp");
	char path[256];
	snprintf(path, sizeof path, "%s/roof.svg", dir);
	CHECK(!plot_save(p, path), "plot_save to %s: %s", path, strerror(errno));
	CHECK(!access(path, R_OK), "saved file missing");
	snprintf(path, sizeof path, "%s/no/such/dir/roof.svg", dir);
	errno = 0;
	CHECK(plot_save(p, path) == -1 && errno == ENOENT, "plot_save into a missing directory must fail with ENOENT");
	snprintf(path, sizeof path, "rm -rf %s", dir);
	CHECK(!system(path), "cleanup");
	plot_free(p);
}

/* The labels' boxes in an SVG of plot_write: the coloured <text> of the plot area (x < 770 px, the legend right of
   it; y <= 540 px, the x axis's title under it: a 1100 x 600 plot),
   measured with 6 px a character and 11 px high: inside any box plot.c reserves. Returns how many. */
static int label_boxes(const char *svg, double (*box)[4], int max)
{
	int n = 0;
	for (const char *t = strstr(svg, "<text x=\""); t && n < max; t = strstr(t + 1, "<text x=\"")) {
		double x, y;
		char anchor[16];
		int end = 0; /* the halo's copy has no fill of its own */
		if (sscanf(t, "<text x=\"%lf\" y=\"%lf\" text-anchor=\"%15[a-z]\" fill=%n", &x, &y, anchor, &end) !=
		        3 ||
		    !end || x >= 770 || y > 540)
			continue;
		const char *a = strchr(t, '>') + 1, *b = strchr(a, '<');
		double w = 6.0 * (double)(b - a);
		double x0 = !strcmp(anchor, "start") ? x : !strcmp(anchor, "middle") ? x - w / 2 : x - w;
		box[n][0] = x0;
		box[n][1] = y - 10;
		box[n][2] = x0 + w;
		box[n][3] = y + 1;
		n++;
	}
	return n;
}

/* Labels asked at one place (several chips' roofs) are written apart, the same label at the same place once, and
   what finds no room is left out and counted in the legend. */
static void test_labels(void)
{
	struct plot *p = plot_new(1100, 600, NULL);
	plot_axis(p, 0, 1, 100, 1, "FLOP/byte");
	plot_axis(p, 1, 1e9, 1e15, 1, "FLOP/s");
	char lab[64];
	for (int i = 0; i < 10; i++) {
		snprintf(lab, sizeof lab, "matrix roof %d", i);
		CHECK(!plot_text(p, 100, 1e12, -4, -4, PLOT_END, i, lab), "plot_text");
	}
	CHECK(!plot_text(p, 100, 1e12, -4, -4, PLOT_END, 3, "matrix roof 0"), "plot_text (a twin)");
	char *svg = render(p);
	double box[32][4];
	int n = label_boxes(svg, box, 32);
	CHECK(n >= 2 && n < 10, "%d of 10 crowded labels drawn (at least two fit; not all ten within the move)", n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			CHECK(!(box[i][0] < box[j][2] && box[j][0] < box[i][2] && box[i][1] < box[j][3] &&
			        box[j][1] < box[i][3]),
			      "labels %d and %d overlap", j, i);
	CHECK(strstr(svg, ">matrix roof 0</text>") && strstr(svg, ">matrix roof 1</text>"),
	      "the first labels keep a place");
	snprintf(lab, sizeof lab, ">%d labels left out (no room)<", 10 - n);
	CHECK(strstr(svg, lab), "the legend does not say '%s' (the twin is not left out, it is drawn once)", lab + 1);
	free(svg);
	plot_free(p);
}

static void test_rtx3080(const char *root)
{
	/* The seed: "RTX 3080 ... FP32 ... 39.2 FLOPs/byte": peak FP32 over memory bandwidth. */
	double seed = 29.77e12 / 760e9;
	CHECK(fabs(seed - 39.17) < 0.01, "seed arithmetic %.3f", seed);
	char path[1024];
	snprintf(path, sizeof path, "%s/configs/rtx3080.cfg", root);
	struct arch_error err;
	struct arch_chip *c = arch_load(path, NULL, 0, &err);
	CHECK(c, "%s: %s", path, err.msg);
	if (!c)
		return;
	double peak = arch_peak_vector(c, DT_FP32), ridge = arch_ridge(c, DT_FP32, &c->dram);
	printf("rtx3080: fp32 %.2f TFLOP/s / %.0f GB/s = %.2f FLOP/byte (seed: 39.2)\n", peak / 1e12,
	       c->dram.bw_Bps / 1e9, ridge);
	CHECK(fabs(peak - 29.77e12) < 0.01e12, "fp32 peak %.4g, the seed's 29.77 TFLOP/s", peak);
	CHECK(fabs(c->dram.bw_Bps - 760e9) < 1, "bandwidth %.4g, the seed's 760 GB/s", c->dram.bw_Bps);
	char r[16];
	snprintf(r, sizeof r, "%.1f", ridge);
	CHECK(!strcmp(r, "39.2"), "ridge %s, the seed's 39.2", r);
	arch_free(c);
	/* with the seed's inputs forced through --set, the same arithmetic */
	const char *sets[] = {"compute.sm.count=68", "compute.sm.clock=1710MHz", "memory.device.bandwidth=760GB/s"};
	c = arch_load(path, sets, 3, &err);
	CHECK(c && fabs(arch_ridge(c, DT_FP32, &c->dram) - seed) < 0.01, "ridge with --set");
	if (c)
		arch_free(c);
}

int main(int argc, char **argv)
{
	si(0, "0");
	si(1, "1");
	si(0.1, "0.1");
	si(39.17, "39.2");
	si(1000, "1k");
	si(999.7, "1k");
	si(2.5e-3, "2.5m");
	si(1.979e15, "1.98P");
	si(29.77e12, "29.8T");
	test_svg();
	test_labels();
	if (argc > 1)
		test_rtx3080(argv[1]);
	printf("%s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
