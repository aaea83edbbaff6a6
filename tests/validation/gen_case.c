/*
 * gen_case.c -- the training and inference rows of the validation suite
 * (gen_case.h).
 *
 * A case's ops column holds a `sim gen` command; the suite reads it exactly
 * as the command does, with the command's own parser (gen_parse_args,
 * workloads/gen_args.c).
 */
#include "gen_case.h"
#include "import.h"
#include "procpool.h"
#include "replay.h"
#include "trace.h"
#include "validate_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 96

/* A case's argument text split at blanks into argv after the words of
   lead (the command's name first, then what the case's columns stand for);
   buf holds the words. argc, or -1 with why set ("sim CMD: ..."). */
static int split_args(const char *args, const char *const *lead, int nlead, char *buf, size_t blen, char **argv,
                      char *why, size_t len)
{
	char *save = NULL;
	int argc = 0;
	if (strlen(args) >= blen) {
		snprintf(why, len, "sim %s: arguments longer than %zu characters", lead[0], blen - 1);
		return -1;
	}
	snprintf(buf, blen, "%s", args);
	while (argc < nlead)
		argv[argc] = (char *)lead[argc], argc++;
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (argc == MAX_ARGS) {
			snprintf(why, len, "sim %s: more than %d arguments", lead[0], MAX_ARGS - nlead);
			return -1;
		}
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	return argc;
}

int vgen_config(const char *args, struct gen_config *c, char *why, size_t len)
{
	static const char *const lead[] = {"gen"};
	char buf[2048], *argv[MAX_ARGS + 1];
	int argc = split_args(args, lead, 1, buf, sizeof buf, argv, why, len);
	if (argc < 0)
		return -1;
	struct gen_args a;
	char msg[1280];
	if (gen_parse_args(argc, argv, c, &a, msg, sizeof msg)) {
		snprintf(why, len, "sim gen: %s", msg);
		return -1;
	}
	if (a.outpath) {
		snprintf(why, len, "sim gen: -o has no place in a case");
		return -1;
	}
	return 0;
}

int vserve_config(const char *args, struct sv_options *o, struct gen_config *c, char *why, size_t len)
{
	static const char *const lead[] = {"serve", "CONFIG"}; /* CONFIG: the case's config column */
	char buf[2048], *argv[MAX_ARGS + 1];
	int argc = split_args(args, lead, 2, buf, sizeof buf, argv, why, len);
	if (argc < 0)
		return -1;
	struct sv_args a;
	const char *unknown;
	char msg[1280];
	if (sv_parse_args(argc, argv, &a, o, c, &unknown, msg, sizeof msg)) {
		snprintf(why, len, "sim serve: %s", msg);
		return -1;
	}
	if (a.csv || a.timeline || a.nsets || a.find_rate || o->requests_csv || o->lengths_csv) {
		snprintf(why, len, "sim serve: a case takes no outputs, --set, --find-rate or CSV inputs");
		return -1;
	}
	return 0;
}

int vserve_run(const struct arch_chip *c, const struct gen_config *g, const struct sv_options *o, double *time_s,
               double *out_tokens, char *why, size_t len)
{
	struct sv_result r;
	int gpus = o->replicas * (int)(g->p.tp * g->p.pp);
	struct sv_model *m = sv_model_new(c, g, gpus, why, len);
	if (!m)
		return SIM_EXIT_CONFIG;
	int rc = sv_run(m, o, &r, why, len);
	sv_model_free(m);
	*time_s = r.duration_s;
	*out_tokens = (double)r.out_tokens;
	return rc;
}

/* Replaces every `from` in text (malloc'd; freed) by `to`. */
static char *replace_all(char *text, const char *from, const char *to)
{
	size_t hits = 0, lf = strlen(from), lt = strlen(to);
	for (const char *p = text; (p = strstr(p, from)) != NULL; p += lf)
		hits++;
	if (!hits)
		return text;
	char *out = malloc(strlen(text) + hits * lt + 1), *o = out;
	if (!out) {
		free(text);
		return NULL;
	}
	const char *p = text;
	for (const char *q; (q = strstr(p, from)) != NULL; p = q + lf) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, lt);
		o += lt;
	}
	strcpy(o, p);
	free(text);
	return out;
}

/* Turns every statement that starts with word (after a line's indentation)
   into a comment, in place: its first two characters become "# " when it
   is indented, else the line's first character becomes '#' (a statement
   keyword is longer than one character, so nothing else is lost). */
static void comment_out(char *text, const char *word)
{
	size_t lw = strlen(word);
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *p = l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, word, lw))
			continue;
		if (p - l >= 2)
			p[-2] = '#';
		else
			*l = '#';
	}
}

char *vgen_trace(const struct gen_config *c, const char *cmdline, const char *attn, int nomem)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return NULL;
	int bad = gen_write(f, c, cmdline);
	if (fclose(f) || bad) {
		free(text);
		return NULL;
	}
	if (text && attn) {
		char to[64];
		snprintf(to, sizeof to, "impl=%s", attn);
		text = replace_all(text, "impl=flash2", to);
	}
	if (text && nomem)
		comment_out(text, "memory ");
	return text;
}

struct vgen_batch {
	const char *const *texts;
	const struct arch_chip *const *chips;
	const int *rpn; /* ranks per node of each (0: all the node's devices) */
	struct vgen_result *res;
};

/* In the child: parse, replay (SimGrid runs one simulation per process). */
char *vcase_trace(const struct vcase *v, const struct gen_config *c, const char *cmdline)
{
	if (v->import_path[0])
		return v->imported ? strdup(v->imported) : NULL;
	return vgen_trace(c, cmdline, v->attn[0] ? v->attn : NULL, v->nomem);
}

int vimport_kineto(const char *root, const char *const *files, int nfiles, const struct imp_options *opts, char **text,
                   struct imp_stats *st, char *why, size_t len)
{
	char paths[VIMPORT_MAX][PATH_MAX];
	const char *p[VIMPORT_MAX];
	if (nfiles < 1 || nfiles > VIMPORT_MAX) {
		snprintf(why, len, "import: %d files (1 to %d)", nfiles, VIMPORT_MAX);
		return SIM_EXIT_INTERNAL;
	}
	for (int k = 0; k < nfiles; k++) {
		snprintf(paths[k], sizeof paths[k], "%s/%s", root, files[k]);
		p[k] = paths[k];
	}
	struct imp_options o;
	memset(&o, 0, sizeof o);
	if (opts)
		o = *opts;
	size_t n = 0;
	*text = NULL;
	FILE *f = open_memstream(text, &n);
	if (!f) {
		snprintf(why, len, "import: out of memory");
		return SIM_EXIT_INTERNAL;
	}
	int rc = imp_kineto(p, nfiles, &o, f, st, why, len);
	if (fclose(f) && !rc) {
		snprintf(why, len, "import: out of memory");
		rc = SIM_EXIT_INTERNAL;
	}
	if (rc) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

int vcase_import(struct vcase *v, const char *root, char *why, size_t len)
{
	const char *files[1] = {v->import_path};
	struct imp_stats st;
	return vimport_kineto(root, files, 1, &v->import_opts, &v->imported, &st, why, len);
}

/* An imported trace's modelled ops against the kernels they stand for, per family: each device op's replayed
   time as a profiler times its kernel (its spans less their launch gaps, every replayed rank) beside the measured
   time its line's comment gives ("  # gemm modelled 42.154us ...", sim/import/kineto_emit.c). */
static void import_families(const char *text, const struct rp_result *r, struct vgen_result *res)
{
	static const char head[] = "simtrace 1\n# imported by `sim import";
	if (strncmp(text, head, sizeof head - 1))
		return;
	long nlines = 1;
	for (const char *p = text; *p; p++)
		nlines += *p == '\n';
	signed char *fam = malloc((size_t)nlines + 1);
	double *meas = malloc(((size_t)nlines + 1) * sizeof *meas);
	if (!fam || !meas) {
		free(fam);
		free(meas);
		return;
	}
	long line = 1;
	for (const char *p = text; *p; line++) {
		const char *nl = strchr(p, '\n'), *c = strstr(p, "  # ");
		fam[line] = -1;
		if (c && (!nl || c < nl)) {
			char name[32], how[16];
			double us;
			if (sscanf(c + 4, "%31s %15s %lfus", name, how, &us) == 3 && !strcmp(how, "modelled"))
				for (int f = 0; f < IF_COUNT; f++)
					if (!strcmp(name, imp_family_name((enum imp_family)f)))
						fam[line] = (signed char)f, meas[line] = us * 1e-6;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	for (long i = 0; i < r->nspans; i++) {
		const struct rp_span *s = &r->spans[i];
		if (s->line < 1 || s->line > line || fam[s->line] < 0)
			continue;
		res->fam_replay_s[fam[s->line]] += s->t1 - s->t0 - s->gap_s; /* the kernel as a profiler times it */
		res->fam_meas_s[fam[s->line]] += meas[s->line];
	}
	free(fam);
	free(meas);
}

static void replay_one(long i, void *ctx, void *out)
{
	const struct vgen_batch *b = ctx;
	struct vgen_result *res = out;
	if (!b->texts[i] || !b->chips[i]) {
		res->rc = -1;
		snprintf(res->why, sizeof res->why, "no trace or no chip");
		return;
	}
	struct trace *t = tr_parse_string(b->texts[i], "case.trace", res->why, sizeof res->why);
	if (!t) {
		res->rc = SIM_EXIT_TRACE;
		return;
	}
	struct rp_options o = {0, 1, 0, 0, 0, 0, 0, 0, 0};
	o.ranks_per_node = b->rpn[i];
	struct rp_result r;
	memset(&r, 0, sizeof r);
	res->rc = rp_run(b->chips[i], t, &o, &r, res->why, sizeof res->why);
	if (!res->rc && r.nofit[0]) { /* the source ran it: a row that does not fit is a failure */
		res->rc = SIM_EXIT_NOFIT;
		snprintf(res->why, sizeof res->why, "%.500s", r.nofit);
		rp_result_free(&r);
	}
	if (!res->rc) {
		res->time_s = r.time_s;
		res->ranks = r.ranks;
		res->nrep = r.nrep;
		res->activities = r.sg_activities;
		import_families(b->texts[i], &r, res);
		rp_result_free(&r);
	}
	tr_free(t);
}

/* In the parent, when row i's child has ended. */
static void replayed(long i, void *ctx, int ok, int status, double wall_s)
{
	struct vgen_result *r = &((const struct vgen_batch *)ctx)->res[i];
	if (!ok) {
		char d[160];
		pp_describe(status, d, sizeof d);
		r->rc = -1;
		snprintf(r->why, sizeof r->why, "the replay's child process %s", d);
	}
	r->wall_s = wall_s;
}

static const double *order_cost;
static int by_cost_desc(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;
	if (order_cost[a] != order_cost[b])
		return order_cost[a] > order_cost[b] ? -1 : 1;
	return (a > b) - (a < b);
}

void vgen_replay_all(const char *const *texts, const struct arch_chip *const *on, const int *rpn, const double *cost,
                     int n, int jobs, struct vgen_result *res)
{
	/* the same trace on the same chip (rows of one configuration measured in
	   several releases) is replayed once: first[i] is its first occurrence
	   (of the u distinct ones). The same chip: one pointer, or a copy with
	   the same fields (the fit's copies with one fold's constants) */
	size_t k = (size_t)(n > 0 ? n : 1);
	int *first = malloc(k * sizeof *first), *uidx = malloc(k * sizeof *uidx), *urpn = malloc(k * sizeof *urpn);
	const char **utexts = malloc(k * sizeof *utexts);
	const struct arch_chip **uchips = malloc(k * sizeof *uchips);
	double *ucost = calloc(k, sizeof *ucost);
	struct vgen_result *ures = calloc(k, sizeof *ures), *back = calloc(k, sizeof *back);
	if (!first || !uidx || !urpn || !utexts || !uchips || !ucost || !ures || !back) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	int u = 0;
	for (int i = 0; i < n; i++) {
		first[i] = u;
		for (int j = 0; j < u; j++) {
			int f = uidx[j];
			if ((on[f] == on[i] || !memcmp(on[f], on[i], sizeof *on[i])) && rpn[f] == rpn[i] && texts[i] &&
			    texts[f] && !strcmp(texts[f], texts[i])) {
				first[i] = j;
				break;
			}
		}
		if (first[i] == u) {
			ucost[u] = cost ? cost[i] : 0;
			uidx[u++] = i;
		}
	}
	/* the distinct ones, costliest first: job j is distinct one ord[j] */
	int *ord = malloc(k * sizeof *ord);
	if (!ord) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	for (int j = 0; j < u; j++)
		ord[j] = j;
	order_cost = ucost;
	qsort(ord, (size_t)u, sizeof *ord, by_cost_desc);
	for (int j = 0; j < u; j++) {
		utexts[j] = texts[uidx[ord[j]]];
		uchips[j] = on[uidx[ord[j]]];
		urpn[j] = rpn[uidx[ord[j]]];
	}
	struct vgen_batch b = {utexts, uchips, urpn, ures};
	if (pp_run(u, jobs, sizeof *ures, ures, replay_one, replayed, &b))
		for (int j = 0; j < u; j++)
			if (!ures[j].rc && !ures[j].time_s) {
				ures[j].rc = -1;
				snprintf(ures[j].why, sizeof ures[j].why, "cannot start a process: %s",
				         strerror(errno));
			}
	for (int j = 0; j < u; j++)
		back[ord[j]] = ures[j];
	for (int i = 0; i < n; i++)
		res[i] = back[first[i]];
	free(first);
	free(uidx);
	free(urpn);
	free(utexts);
	free(uchips);
	free(ucost);
	free(ures);
	free(back);
	free(ord);
}

void vgen_set_init(struct vgen_set *s, int n)
{
	size_t k = (size_t)(n > 0 ? n : 1);
	s->m = 0;
	s->texts = calloc(k, sizeof *s->texts);
	s->chips = calloc(k, sizeof *s->chips);
	s->idx = calloc(k, sizeof *s->idx);
	s->rpn = calloc(k, sizeof *s->rpn);
	s->cost = calloc(k, sizeof *s->cost);
	s->res = calloc(k, sizeof *s->res);
	if (!s->texts || !s->chips || !s->idx || !s->rpn || !s->cost || !s->res) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
}

void vgen_set_run(struct vgen_set *s)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	vgen_replay_all((const char *const *)s->texts, s->chips, s->rpn, s->cost, s->m,
	                cpus < 1   ? 1
	                : cpus > 8 ? 8
	                           : (int)cpus,
	                s->res);
}

void vgen_set_free(struct vgen_set *s)
{
	for (int j = 0; j < s->m; j++)
		free(s->texts[j]);
	free(s->texts);
	free(s->chips);
	free(s->idx);
	free(s->rpn);
	free(s->cost);
	free(s->res);
	memset(s, 0, sizeof *s);
}
