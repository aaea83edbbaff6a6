/*
 * rows.c -- the suite's rows as a table (validate --rows FILE.tsv) and the rows that moved against an earlier
 * one (--baseline FILE.tsv).
 *
 * The table holds what docs/validation.md prints for each row, one line a row in the order of cases.tsv, tab
 * separated, for a spreadsheet or awk: id, category, status (scored, conditioned, replayed: in skipped.tsv too and
 * scored nowhere, failed: not predicted), source, config, predicted, measured, unit and the errors in percent as
 * shipped, in-sample and cross-validated (empty without --fit or where none). Its figures are printed as the
 * report prints them, so that it is as reproducible as the report (docs/validation-rows.tsv is the committed
 * copy, checked by the tests like docs/validation.md).
 *
 * The comparison is the rule "a change that helps one row and hurts ten is a regression" made countable: for
 * each category, the rows scored in both tables whose absolute error (cross-validated where both tables have
 * it, else as shipped) fell or rose by more than half a point, the category's MAPE over those rows before and
 * after, and the rows that moved most either way. It is printed, not written into the report: the report
 * depends on the inputs alone.
 */
#include "validate_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char rows_header[] = "id\tcategory\tstatus\tsource\tconfig\tpredicted\tmeasured\tunit\terror_pct\t"
                                  "in_sample_pct\tcross_validated_pct";
enum { RF_ID, RF_CAT, RF_STATUS, RF_SRC, RF_CFG, RF_PRED, RF_MEAS, RF_UNIT, RF_ERR, RF_IN, RF_CV, RF_COUNT };

static const char *status_of(const struct vcase *v)
{
	if (!v->ok)
		return "failed";
	if (v->unscored)
		return "replayed";
	return v->cond ? "conditioned" : "scored";
}

/* A percentage cell: the report's figure without its sign of percent; empty where there is none. */
static void pct_cell(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "\t%+.1f", 100 * x);
	else
		fputs("\t", f);
}

/* A text cell: tabs and line ends would break the table, so they become spaces. */
static void text_cell(FILE *f, const char *s)
{
	fputc('\t', f);
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

void rows_write(FILE *f, int fit)
{
	fprintf(f, "%s\n", rows_header);
	for (int i = 0; i < nvs; i++) {
		const struct vcase *v = &vs[i];
		const struct meas *m = &ms[v->meas];
		if (no_steps && v->gen)
			continue;
		fputs(v->id, f);
		text_cell(f, m->cat);
		text_cell(f, status_of(v));
		text_cell(f, v->src >= 0 && v->src < nsrcs ? srcs[v->src] : "");
		text_cell(f, v->config);
		if (v->ok)
			fprintf(f, "\t%.4g", v->pred);
		else
			fputs("\t", f);
		text_cell(f, m->value_text);
		text_cell(f, m->unit);
		pct_cell(f, v->ok ? v->err : NAN);
		pct_cell(f, v->ok && fit ? v->err_in : NAN);
		pct_cell(f, v->ok && fit ? v->err_cv : NAN);
		fputc('\n', f);
	}
}

/* One row of a baseline table: its id, category, whether it was scored, its error (percent; NAN: none). */
struct brow {
	char id[32];
	int cat;
	int scored;
	double err, cv;
};

/* A percentage cell read back: NAN for an empty cell, -1 (and *bad set) for one that is not a number. */
static double read_pct(const char *s, int *bad)
{
	if (!*s)
		return NAN;
	char *end;
	double x = strtod(s, &end);
	if (end == s || *end || !isfinite(x))
		*bad = 1;
	return x / 100;
}

/* Reads a table rows_write wrote: its rows in *out (n in *nout); 0, or -1 with a line on stderr naming the file,
   the line and what was expected. */
static int read_baseline(const char *path, struct brow **out, int *nout)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "validate: --baseline %s: cannot open it\n", path);
		return -1;
	}
	struct brow *b = NULL;
	int n = 0, cap = 0, lineno = 0, rc = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	while ((len = getline(&line, &lcap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (lineno == 1) {
			if (strcmp(line, rows_header)) {
				fprintf(stderr,
				        "validate: %s:1: expected the header of a table validate --rows writes (id, "
				        "category, "
				        "status ...)\n",
				        path);
				rc = -1;
				break;
			}
			continue;
		}
		char *fl[RF_COUNT + 1];
		int bad = 0;
		if (split_tabs(line, fl, RF_COUNT + 1) != RF_COUNT) {
			fprintf(stderr, "validate: %s:%d: expected %d tab-separated fields\n", path, lineno, RF_COUNT);
			rc = -1;
			break;
		}
		struct brow r = {0};
		snprintf(r.id, sizeof r.id, "%s", fl[RF_ID]);
		r.cat = cat_index(fl[RF_CAT]);
		r.scored = !strcmp(fl[RF_STATUS], "scored");
		r.err = read_pct(fl[RF_ERR], &bad);
		r.cv = read_pct(fl[RF_CV], &bad);
		if (bad || !r.id[0]) {
			fprintf(stderr, "validate: %s:%d: %s: expected an id and errors that are numbers or empty\n",
			        path, lineno, r.id[0] ? r.id : "(no id)");
			rc = -1;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			struct brow *nb = realloc(b, (size_t)cap * sizeof *nb);
			if (!nb) {
				fprintf(stderr, "validate: out of memory\n");
				rc = -1;
				break;
			}
			b = nb;
		}
		b[n++] = r;
	}
	free(line);
	fclose(f);
	if (!rc && lineno == 0) {
		fprintf(stderr,
		        "validate: %s:1: expected the header of a table validate --rows writes, found an empty file\n",
		        path);
		rc = -1;
	}
	if (rc) {
		free(b);
		return -1;
	}
	*out = b;
	*nout = n;
	return 0;
}

/* A row that moved: its index into vs[] and its absolute error before and after. */
struct moved {
	int vi;
	double before, after;
};

static int by_delta_desc(const void *pa, const void *pb)
{
	const struct moved *a = pa, *b = pb;
	double da = a->after - a->before, db = b->after - b->before;
	if (da != db)
		return da < db ? 1 : -1;
	return strcmp(vs[a->vi].id, vs[b->vi].id);
}

int rows_compare(const char *path, int fit, FILE *out)
{
	struct brow *b;
	int nb;
	if (read_baseline(path, &b, &nb))
		return -1;
	/* the column compared: cross-validated where this run and the baseline both have it */
	int use_cv = fit;
	for (int j = 0; j < nb && use_cv; j++)
		if (b[j].scored && !isfinite(b[j].cv))
			use_cv = 0;
	struct moved *mv = malloc(sizeof *mv * (size_t)(nvs + 1));
	if (!mv) {
		free(b);
		fprintf(stderr, "validate: out of memory\n");
		return -1;
	}
	int nmv = 0, only_new = 0, only_old = 0;
	const double step = 0.005; /* half a point */
	for (int i = 0; i < nvs; i++) {
		const struct vcase *v = &vs[i];
		if (!v->ok || v->cond || (no_steps && v->gen))
			continue;
		const struct brow *o = NULL;
		for (int j = 0; j < nb && !o; j++)
			if (!strcmp(b[j].id, v->id))
				o = &b[j];
		double now = use_cv ? v->err_cv : v->err, then = o ? (use_cv ? o->cv : o->err) : NAN;
		if (!o || !o->scored || !isfinite(then) || !isfinite(now)) {
			only_new++;
			continue;
		}
		mv[nmv++] = (struct moved){i, fabs(then), fabs(now)};
	}
	for (int j = 0; j < nb; j++) {
		if (!b[j].scored)
			continue;
		int found = 0;
		for (int i = 0; i < nvs && !found; i++)
			found = vs[i].ok && !vs[i].cond && !strcmp(vs[i].id, b[j].id);
		only_old += !found;
	}
	fprintf(out, "\nrows against %s (%s error, moved by more than half a point):\n", path,
	        use_cv ? "cross-validated" : "shipped");
	fprintf(out, "%-15s %5s %7s %7s %11s %11s\n", "category", "rows", "better", "worse", "MAPE before",
	        "MAPE after");
	for (int c = -1; c < NCATS; c++) {
		int n = 0, better = 0, worse = 0;
		double sb = 0, sa = 0;
		for (int k = 0; k < nmv; k++) {
			if (c >= 0 && cat_index(ms[vs[mv[k].vi].meas].cat) != c)
				continue;
			n++;
			sb += mv[k].before, sa += mv[k].after;
			better += mv[k].after < mv[k].before - step;
			worse += mv[k].after > mv[k].before + step;
		}
		if (!n)
			continue;
		fprintf(out, "%-15s %5d %7d %7d %10.1f%% %10.1f%%\n", c < 0 ? "all" : cats[c].name, n, better, worse,
		        100 * sb / n, 100 * sa / n);
	}
	qsort(mv, (size_t)nmv, sizeof *mv, by_delta_desc);
	enum { NSHOW = 5 };
	for (int side = 0; side < 2; side++) {
		int shown = 0;
		for (int k = 0; k < nmv && shown < NSHOW; k++) {
			const struct moved *x = &mv[side ? nmv - 1 - k : k];
			double d = x->after - x->before;
			if (side ? d >= -step : d <= step)
				break;
			if (!shown++)
				fprintf(out, "  %s:\n", side ? "most improved" : "most worsened");
			fprintf(out, "    %-8s %-15s |error| %5.1f%% -> %5.1f%%\n", vs[x->vi].id,
			        ms[vs[x->vi].meas].cat, 100 * x->before, 100 * x->after);
		}
	}
	if (only_new || only_old)
		fprintf(out, "  %d scored rows not scored in the baseline, %d of its scored rows not scored now\n",
		        only_new, only_old);
	free(mv);
	free(b);
	return 0;
}
