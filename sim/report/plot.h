/*
 * plot.h -- a small deterministic SVG writer for `sim roofline` and
 * `sim sweep --plot`: one plot area with a linear or log x and y axis
 * (ticks, grid, labels), polylines, point markers, text and a legend.
 *
 * Elements are recorded in data coordinates and placed when the plot is
 * written, so the axes may be set last. The output depends only on the
 * calls made (coordinates are printed with two decimals, no dates, no
 * random ids): the same plot is the same bytes.
 */
#ifndef SIM_PLOT_H
#define SIM_PLOT_H

#include <stdio.h>

enum plot_dash { PLOT_SOLID, PLOT_DASHED, PLOT_DOTTED };
enum plot_anchor { PLOT_START, PLOT_MIDDLE, PLOT_END };

struct plot;

/* A plot of width x height pixels with a title (may be NULL). NULL if out of memory. */
struct plot *plot_new(int width, int height, const char *title);
void plot_free(struct plot *p);

/*
 * Axis 0 is x, 1 is y: its range in data units, log (1: log10 scale, lo > 0)
 * and a label. Tick labels use SI prefixes (1k, 10M, 2.5m).
 */
void plot_axis(struct plot *p, int axis, double lo, double hi, int log, const char *label);

/* Colours of a fixed palette, cycled: "#1f77b4", ... */
const char *plot_color(int i);

/*
 * A polyline through n points in data coordinates (clipped to the plot
 * area); legend (NULL = none) adds an entry with its colour and dash.
 * Points with a non-finite coordinate break the line. Returns 0, -1 when
 * out of memory.
 */
int plot_line(struct plot *p, const double *x, const double *y, int n, int color, enum plot_dash dash,
              const char *legend);
/* A filled circle of radius r pixels at (x, y), with label (may be NULL) beside it. */
int plot_point(struct plot *p, double x, double y, double r, int color, const char *label);
/* Text at (x, y) in data coordinates, shifted dx, dy pixels; color < 0 is black. */
int plot_text(struct plot *p, double x, double y, double dx, double dy, enum plot_anchor a, int color,
              const char *text);
/* A line of text under the legend entries (notes on dashes, markers). */
int plot_note(struct plot *p, const char *text);

/* Writes the SVG document to f. Returns 0, or -1 if f reports an error. */
int plot_write(const struct plot *p, FILE *f);
/*
 * Writes the SVG to path whole or not at all (a temporary file in the same
 * directory, renamed). Returns 0, or -1 with errno set.
 */
int plot_save(const struct plot *p, const char *path);

/* "1k", "2.5M", "10T", "0.1", "2.5m": v with an SI prefix, 3 significant digits. */
void plot_si(double v, char *buf, size_t len);

#endif
