/*
 * plot.c -- a small deterministic SVG writer (see plot.h).
 *
 * Layout: the plot area on the left, the legend in a column on the right.
 * Elements are kept in data coordinates and placed at write time; lines
 * are clipped to the plot area by an SVG clipPath, points and text outside
 * the axes' ranges are left out. Every number is printed with "%.2f", so
 * the output is the same bytes for the same calls.
 */
#include "plot.h"

#include "outfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EL_LINE, EL_POINT, EL_TEXT, EL_NOTE };

struct elem {
	int type;
	int color;
	enum plot_dash dash;
	enum plot_anchor anchor;
	double r, dx, dy;
	int n;      /* points of a line */
	double *xy; /* x0 y0 x1 y1 ... */
	char *text; /* legend, label or text; may be NULL */
};

struct axis {
	double lo, hi;
	int log;
	char *label;
};

struct plot {
	int w, h;
	char *title;
	struct axis ax[2];
	int n, cap;
	struct elem *el;
};

/* plot area and legend column, pixels */
#define MARGIN_L 80.0
#define MARGIN_T 40.0
#define MARGIN_B 60.0
#define LEGEND_W 330.0
/* label placement (place_labels): estimated width of a character, step and farthest move, px */
#define LABEL_CHAR_W   7.2
#define LABEL_STEP     3
#define LABEL_MAX_MOVE 24

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define NPALETTE (int)(sizeof palette / sizeof palette[0])

const char *plot_color(int i)
{
	if (i < 0)
		return "#000000";
	return palette[i % NPALETTE];
}

static char *sdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

struct plot *plot_new(int width, int height, const char *title)
{
	struct plot *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->w = width;
	p->h = height;
	p->title = sdup(title);
	for (int a = 0; a < 2; a++)
		p->ax[a] = (struct axis){0, 1, 0, NULL};
	return p;
}

void plot_free(struct plot *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		free(p->el[i].xy);
		free(p->el[i].text);
	}
	free(p->el);
	free(p->title);
	free(p->ax[0].label);
	free(p->ax[1].label);
	free(p);
}

void plot_axis(struct plot *p, int axis, double lo, double hi, int log, const char *label)
{
	struct axis *a = &p->ax[axis ? 1 : 0];
	if (log && !(lo > 0))
		lo = hi > 0 ? hi / 10 : 1;
	if (!(hi > lo))
		hi = log ? lo * 10 : lo + 1;
	a->lo = lo;
	a->hi = hi;
	a->log = log;
	free(a->label);
	a->label = sdup(label);
}

static struct elem *add(struct plot *p, int type, const char *text)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		struct elem *e = realloc(p->el, (size_t)cap * sizeof *e);
		if (!e)
			return NULL;
		p->el = e;
		p->cap = cap;
	}
	struct elem *e = &p->el[p->n];
	memset(e, 0, sizeof *e);
	e->type = type;
	if (text && !(e->text = sdup(text)))
		return NULL;
	p->n++;
	return e;
}

int plot_line(struct plot *p, const double *x, const double *y, int n, int color, enum plot_dash dash,
              const char *legend)
{
	double *xy = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *xy);
	if (!xy)
		return -1;
	struct elem *e = add(p, EL_LINE, legend);
	if (!e) {
		free(xy);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		xy[2 * i] = x[i];
		xy[2 * i + 1] = y[i];
	}
	e->xy = xy;
	e->n = n;
	e->color = color;
	e->dash = dash;
	return 0;
}

static int add_at(struct plot *p, int type, double x, double y, const char *text, struct elem **out)
{
	double *xy = malloc(2 * sizeof *xy);
	if (!xy)
		return -1;
	struct elem *e = add(p, type, text);
	if (!e) {
		free(xy);
		return -1;
	}
	xy[0] = x;
	xy[1] = y;
	e->xy = xy;
	e->n = 1;
	*out = e;
	return 0;
}

int plot_point(struct plot *p, double x, double y, double r, int color, const char *label)
{
	struct elem *e;
	if (add_at(p, EL_POINT, x, y, label, &e))
		return -1;
	e->r = r;
	e->color = color;
	return 0;
}

int plot_text(struct plot *p, double x, double y, double dx, double dy, enum plot_anchor a, int color, const char *text)
{
	struct elem *e;
	if (add_at(p, EL_TEXT, x, y, text, &e))
		return -1;
	e->dx = dx;
	e->dy = dy;
	e->anchor = a;
	e->color = color;
	return 0;
}

int plot_note(struct plot *p, const char *text)
{
	return add(p, EL_NOTE, text) ? 0 : -1;
}

void plot_si(double v, char *buf, size_t len)
{
	static const char *const big[] = {"", "k", "M", "G", "T", "P", "E"};
	static const char *const small[] = {"", "m", "u", "n", "p"};
	if (v == 0 || !isfinite(v)) {
		snprintf(buf, len, "%g", v == 0 ? 0.0 : v);
		return;
	}
	/* round to 3 significant digits first, so 999.7 becomes 1k, not 1e+03 */
	char tmp[32];
	snprintf(tmp, sizeof tmp, "%.2e", v);
	double r = strtod(tmp, NULL), a = fabs(r);
	int k = 0;
	if (a >= 1000) {
		while (a >= 1000 && k < 6) {
			a /= 1000;
			r /= 1000;
			k++;
		}
		snprintf(buf, len, "%.3g%s", r, big[k]);
	} else if (a >= 0.01) {
		snprintf(buf, len, "%.3g", r);
	} else {
		while (a < 1 && k < 4) {
			a *= 1000;
			r *= 1000;
			k++;
		}
		snprintf(buf, len, "%.3g%s", r, small[k]);
	}
}

/* Two decimals, and never "-0.00". */
static void num(FILE *f, double v)
{
	if (fabs(v) < 0.005)
		v = 0;
	fprintf(f, "%.2f", v);
}

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

struct frame {
	double x0, x1, y0, y1; /* plot area, pixels (y0 top) */
};

static double tr(const struct axis *a, double v)
{
	return a->log ? log10(v) : v;
}

static int inside(const struct axis *a, double v)
{
	if (!isfinite(v) || (a->log && v <= 0))
		return 0;
	double lo = a->lo, hi = a->hi, eps = (tr(a, hi) - tr(a, lo)) * 1e-9;
	return tr(a, v) >= tr(a, lo) - eps && tr(a, v) <= tr(a, hi) + eps;
}

static double px(const struct plot *p, const struct frame *fr, double x)
{
	const struct axis *a = &p->ax[0];
	return fr->x0 + (tr(a, x) - tr(a, a->lo)) / (tr(a, a->hi) - tr(a, a->lo)) * (fr->x1 - fr->x0);
}

static double py(const struct plot *p, const struct frame *fr, double y)
{
	const struct axis *a = &p->ax[1];
	return fr->y1 - (tr(a, y) - tr(a, a->lo)) / (tr(a, a->hi) - tr(a, a->lo)) * (fr->y1 - fr->y0);
}

static const char *dash_attr(enum plot_dash d)
{
	return d == PLOT_DASHED ? " stroke-dasharray=\"8,4\"" : d == PLOT_DOTTED ? " stroke-dasharray=\"2,3\"" : "";
}

/* One grid line and its tick label; major lines are darker. */
static void tick(FILE *f, const struct plot *p, const struct frame *fr, int axis, double v, int major)
{
	char lab[32];
	plot_si(v, lab, sizeof lab);
	const char *col = major ? "#cccccc" : "#eeeeee";
	if (axis == 0) {
		double x = px(p, fr, v);
		fputs("<line x1=\"", f);
		num(f, x);
		fputs("\" y1=\"", f);
		num(f, fr->y0);
		fputs("\" x2=\"", f);
		num(f, x);
		fputs("\" y2=\"", f);
		num(f, fr->y1);
		fprintf(f, "\" stroke=\"%s\"/>\n", col);
		if (major) {
			fputs("<text x=\"", f);
			num(f, x);
			fputs("\" y=\"", f);
			num(f, fr->y1 + 16);
			fprintf(f, "\" text-anchor=\"middle\">%s</text>\n", lab);
		}
	} else {
		double y = py(p, fr, v);
		fputs("<line x1=\"", f);
		num(f, fr->x0);
		fputs("\" y1=\"", f);
		num(f, y);
		fputs("\" x2=\"", f);
		num(f, fr->x1);
		fputs("\" y2=\"", f);
		num(f, y);
		fprintf(f, "\" stroke=\"%s\"/>\n", col);
		if (major) {
			fputs("<text x=\"", f);
			num(f, fr->x0 - 6);
			fputs("\" y=\"", f);
			num(f, y + 4);
			fprintf(f, "\" text-anchor=\"end\">%s</text>\n", lab);
		}
	}
}

static void ticks(FILE *f, const struct plot *p, const struct frame *fr, int axis)
{
	const struct axis *a = &p->ax[axis];
	if (a->log) {
		int d0 = (int)floor(log10(a->lo) + 1e-9), d1 = (int)ceil(log10(a->hi) - 1e-9);
		int minor = d1 - d0 <= 10;
		for (int d = d0; d <= d1; d++)
			for (int m = 1; m <= (minor ? 9 : 1); m++) {
				double v = m * pow(10, d);
				if (inside(a, v))
					tick(f, p, fr, axis, v, m == 1);
			}
		return;
	}
	double span = a->hi - a->lo, raw = span / 6, mag = pow(10, floor(log10(raw))), step = mag;
	if (raw / mag > 5)
		step = 10 * mag;
	else if (raw / mag > 2)
		step = 5 * mag;
	else if (raw / mag > 1)
		step = 2 * mag;
	for (double k = ceil(a->lo / step - 1e-9); k * step <= a->hi + step * 1e-9; k++) {
		double v = k * step;
		if (fabs(v) < step * 1e-9)
			v = 0;
		tick(f, p, fr, axis, v, 1);
	}
}

static void write_line(FILE *f, const struct plot *p, const struct frame *fr, const struct elem *e)
{
	int open = 0;
	for (int i = 0; i < e->n; i++) {
		double x = e->xy[2 * i], y = e->xy[2 * i + 1];
		int ok = isfinite(x) && isfinite(y) && (!p->ax[0].log || x > 0) && (!p->ax[1].log || y > 0);
		if (!ok) {
			if (open)
				fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
				        plot_color(e->color), dash_attr(e->dash));
			open = 0;
			continue;
		}
		fputs(open ? " " : "<polyline clip-path=\"url(#area)\" points=\"", f);
		num(f, px(p, fr, x));
		fputc(',', f);
		num(f, py(p, fr, y));
		open = 1;
	}
	if (open)
		fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", plot_color(e->color),
		        dash_attr(e->dash));
}

/* color -2: no fill of its own (a halo's, from its group) */
static void write_text(FILE *f, double x, double y, enum plot_anchor a, int color, const char *s)
{
	static const char *const anchor[] = {"start", "middle", "end"};
	fputs("<text x=\"", f);
	num(f, x);
	fputs("\" y=\"", f);
	num(f, y);
	fprintf(f, "\" text-anchor=\"%s\"", anchor[a]);
	if (color != -2)
		fprintf(f, " fill=\"%s\"", plot_color(color));
	fputc('>', f);
	esc(f, s);
	fputs("</text>\n", f);
}

/* Where element e's label goes, before placement: its anchor in pixels. */
static void label_at(const struct plot *p, const struct frame *fr, const struct elem *e, double *x, double *y,
                     enum plot_anchor *a)
{
	*x = px(p, fr, e->xy[0]);
	*y = py(p, fr, e->xy[1]);
	if (e->type == EL_POINT) {
		*x += e->r + 2;
		*y -= e->r + 1;
		*a = PLOT_START;
	} else {
		*x += e->dx;
		*y += e->dy;
		*a = e->anchor;
	}
}

static int has_label(const struct plot *p, const struct elem *e)
{
	return (e->type == EL_TEXT || (e->type == EL_POINT && e->text)) && inside(&p->ax[0], e->xy[0]) &&
	       inside(&p->ax[1], e->xy[1]);
}

/* The box a 12 px sans-serif label covers: 0.6 em a character (UTF-8 continuation bytes not counted), from 11 px
   above the baseline to 3 below. */
static void label_box(double x, double y, enum plot_anchor a, const char *s, double box[4])
{
	double chars = 0;
	for (; *s; s++)
		chars += ((unsigned char)*s & 0xC0) != 0x80;
	double w = chars * LABEL_CHAR_W;
	box[0] = a == PLOT_START ? x : a == PLOT_MIDDLE ? x - w / 2 : x - w;
	box[2] = box[0] + w;
	box[1] = y - 11;
	box[3] = y + 3;
}

static int boxes_meet(const double *a, const double *b)
{
	return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

/*
 * Labels placed apart. Each label, in the order drawn, keeps its place if it
 * meets none placed before it, else moves up or down by the least whole
 * LABEL_STEP that frees it, staying in the plot area (at most LABEL_MAX_MOVE
 * px). A label with the same text at the same place as one placed (two
 * chips with the same roof) is drawn once; one that finds no free place is
 * left out and counted. Deterministic: the same calls give the same places.
 * Fills shift[i] (px) and hide[i] for each element; returns the labels left
 * out, or -1 when out of memory (then nothing moves).
 */
static int place_labels(const struct plot *p, const struct frame *fr, double *shift, char *hide)
{
	double(*placed)[4] = malloc((size_t)(p->n ? p->n : 1) * sizeof *placed);
	int *who = malloc((size_t)(p->n ? p->n : 1) * sizeof *who);
	if (!placed || !who) {
		free(placed);
		free(who);
		return -1;
	}
	int np = 0, left_out = 0;
	for (int i = 0; i < p->n; i++) {
		const struct elem *e = &p->el[i];
		if (!has_label(p, e))
			continue;
		double x, y, box[4];
		enum plot_anchor a;
		label_at(p, fr, e, &x, &y, &a);
		label_box(x, y, a, e->text, box);
		int twin = 0;
		for (int j = 0; j < np && !twin; j++)
			twin = !strcmp(p->el[who[j]].text, e->text) && fabs(placed[j][0] - box[0]) < 1 &&
			       fabs(placed[j][1] - box[1]) < 1;
		hide[i] = 1;
		if (twin)
			continue;
		for (int k = 0; k <= 2 * LABEL_MAX_MOVE / LABEL_STEP; k++) {
			double d = (k + 1) / 2 * LABEL_STEP * (k % 2 ? 1 : -1);
			label_box(x, y + d, a, e->text, box);
			if (k && (box[1] < fr->y0 || box[3] > fr->y1))
				continue;
			int free_here = 1;
			for (int j = 0; j < np && free_here; j++)
				free_here = !boxes_meet(box, placed[j]);
			if (free_here) {
				shift[i] = d;
				hide[i] = 0;
				who[np] = i;
				memcpy(placed[np++], box, sizeof box);
				break;
			}
		}
		left_out += hide[i];
	}
	free(placed);
	free(who);
	return left_out;
}

/* An element's marks: a line, or a point's circle. */
static void write_marks(FILE *f, const struct plot *p, const struct frame *fr, const struct elem *e)
{
	if (e->type == EL_LINE) {
		write_line(f, p, fr, e);
	} else if (e->type == EL_POINT && inside(&p->ax[0], e->xy[0]) && inside(&p->ax[1], e->xy[1])) {
		fputs("<circle cx=\"", f);
		num(f, px(p, fr, e->xy[0]));
		fputs("\" cy=\"", f);
		num(f, py(p, fr, e->xy[1]));
		fputs("\" r=\"", f);
		num(f, e->r);
		fprintf(f, "\" fill=\"%s\" stroke=\"#000000\" stroke-width=\"0.5\"/>\n", plot_color(e->color));
	}
}

static void write_legend(FILE *f, const struct plot *p, const struct frame *fr, int left_out)
{
	double x = fr->x1 + 20, y = fr->y0 + 10;
	for (int i = 0; i < p->n; i++) {
		const struct elem *e = &p->el[i];
		if (e->type != EL_LINE || !e->text)
			continue;
		fputs("<line x1=\"", f);
		num(f, x);
		fputs("\" y1=\"", f);
		num(f, y);
		fputs("\" x2=\"", f);
		num(f, x + 24);
		fputs("\" y2=\"", f);
		num(f, y);
		fprintf(f, "\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", plot_color(e->color), dash_attr(e->dash));
		write_text(f, x + 30, y + 4, PLOT_START, -1, e->text);
		y += 18;
	}
	for (int i = 0; i < p->n; i++)
		if (p->el[i].type == EL_NOTE) {
			write_text(f, x, y + 4, PLOT_START, -1, p->el[i].text);
			y += 18;
		}
	if (left_out) {
		char note[96];
		snprintf(note, sizeof note, "%d label%s left out (no room)", left_out, left_out > 1 ? "s" : "");
		write_text(f, x, y + 4, PLOT_START, -1, note);
	}
}

int plot_write(const struct plot *p, FILE *f)
{
	struct frame fr = {MARGIN_L, p->w - LEGEND_W, MARGIN_T, p->h - MARGIN_B};
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	        "font-family=\"sans-serif\" font-size=\"12\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
	        p->w, p->h, p->w, p->h);
	fputs("<defs><clipPath id=\"area\"><rect x=\"", f);
	num(f, fr.x0);
	fputs("\" y=\"", f);
	num(f, fr.y0);
	fputs("\" width=\"", f);
	num(f, fr.x1 - fr.x0);
	fputs("\" height=\"", f);
	num(f, fr.y1 - fr.y0);
	fputs("\"/></clipPath></defs>\n", f);
	if (p->title) {
		fputs("<text x=\"", f);
		num(f, (fr.x0 + fr.x1) / 2);
		fputs("\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">", f);
		esc(f, p->title);
		fputs("</text>\n", f);
	}
	ticks(f, p, &fr, 0);
	ticks(f, p, &fr, 1);
	fputs("<rect x=\"", f);
	num(f, fr.x0);
	fputs("\" y=\"", f);
	num(f, fr.y0);
	fputs("\" width=\"", f);
	num(f, fr.x1 - fr.x0);
	fputs("\" height=\"", f);
	num(f, fr.y1 - fr.y0);
	fputs("\" fill=\"none\" stroke=\"#000000\"/>\n", f);
	if (p->ax[0].label)
		write_text(f, (fr.x0 + fr.x1) / 2, fr.y1 + 40, PLOT_MIDDLE, -1, p->ax[0].label);
	if (p->ax[1].label) {
		double x = 20, y = (fr.y0 + fr.y1) / 2;
		fputs("<text transform=\"translate(", f);
		num(f, x);
		fputc(',', f);
		num(f, y);
		fputs(") rotate(-90)\" text-anchor=\"middle\">", f);
		esc(f, p->ax[1].label);
		fputs("</text>\n", f);
	}
	/* marks first, then the labels over them, each on a white halo so that a line under it does not strike it */
	for (int i = 0; i < p->n; i++)
		write_marks(f, p, &fr, &p->el[i]);
	double *shift = calloc((size_t)(p->n ? p->n : 1), sizeof *shift);
	char *hide = calloc((size_t)(p->n ? p->n : 1), 1);
	int left_out = shift && hide ? place_labels(p, &fr, shift, hide) : -1;
	if (left_out < 0) { /* out of memory: every label where it was asked */
		free(shift);
		free(hide);
		shift = NULL;
		hide = NULL;
		left_out = 0;
	}
	/* each label twice: a white halo (stroked), then its colour over it, so that no line strikes it through */
	for (int pass = 0; pass < 2; pass++) {
		if (!pass)
			fputs("<g fill=\"#ffffff\" stroke=\"#ffffff\" stroke-width=\"4\" stroke-linejoin=\"round\">\n",
			      f);
		for (int i = 0; i < p->n; i++) {
			const struct elem *e = &p->el[i];
			if (!has_label(p, e) || (hide && hide[i]))
				continue;
			double x, y;
			enum plot_anchor a;
			label_at(p, &fr, e, &x, &y, &a);
			write_text(f, x, y + (shift ? shift[i] : 0), a, pass ? e->color : -2, e->text);
		}
		if (!pass)
			fputs("</g>\n", f);
	}
	free(shift);
	free(hide);
	write_legend(f, p, &fr, left_out);
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}

int plot_save(const struct plot *p, const char *path)
{
	struct out_file o;
	FILE *f = out_open(path, &o, NULL, 0);
	if (!f)
		return -1;
	if (plot_write(p, f)) {
		int err = errno ? errno : EIO;
		out_abort(&o);
		errno = err;
		return -1;
	}
	return out_commit(&o, NULL, 0);
}
