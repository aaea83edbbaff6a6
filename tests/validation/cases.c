/*
 * cases.c -- the validation suite's inputs, read and checked before
 * anything is predicted: the measurements (MEASUREMENTS_TSV and each
 * --also file), how each is simulated (cases.tsv: its config and
 * overrides, metric, and op lines, or a gen, serve or import case), the
 * rows skipped with their reasons (skipped.tsv) and the chip pairs whose
 * speed-ups are compared (ratios.tsv). Every problem is one line through
 * fail(), naming the file and line; check_coverage() requires each row of
 * a checked category in exactly one of cases.tsv and skipped.tsv.
 * validate.c predicts what these describe.
 */
#include "validate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int source_index(const char *source)
{
	char key[96];
	size_t n = strcspn(source, " \t");
	snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), source);
	for (int i = 0; i < nsrcs; i++)
		if (!strcmp(srcs[i], key))
			return i;
	if (nsrcs == MAX_SRCS)
		return MAX_SRCS - 1;
	snprintf(srcs[nsrcs], sizeof srcs[nsrcs], "%s", key);
	return nsrcs++;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		fprintf(stderr, "validate: out of memory\n");
		exit(1);
	}
	return q;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

int split_tabs(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;
	size_t len = strlen(p);
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
		p[--len] = '\0';
	while (n < max) {
		f[n++] = p;
		char *t = strchr(p, '\t');
		if (!t)
			break;
		*t = '\0';
		p = t + 1;
	}
	return n;
}

int cat_index(const char *name)
{
	for (int i = 0; i < NCATS; i++)
		if (!strcmp(cats[i].name, name))
			return i;
	return -1;
}

int find_meas(const char *id)
{
	for (int i = 0; i < nms; i++)
		if (!strcmp(ms[i].id, id))
			return i;
	return -1;
}

int read_measurements(const char *path, int lent)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "validate: cannot open %s\n", path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		char *fl[10];
		if (lineno == 1)
			continue; /* header */
		if (!trim(line)[0])
			continue;
		int n = split_tabs(line, fl, 10);
		if (n < 9) {
			fail("%s:%d: expected 10 tab-separated columns, found %d", path, lineno, n);
			continue;
		}
		if (find_meas(fl[0]) >= 0) {
			fail("%s:%d: %s: duplicate id", path, lineno, fl[0]);
			continue;
		}
		ms = xrealloc(ms, (size_t)(nms + 1) * sizeof *ms);
		struct meas *m = &ms[nms++];
		memset(m, 0, sizeof *m);
		snprintf(m->id, sizeof m->id, "%s", fl[0]);
		snprintf(m->cat, sizeof m->cat, "%s", fl[1]);
		snprintf(m->device, sizeof m->device, "%s", fl[2]);
		snprintf(m->value_text, sizeof m->value_text, "%s", fl[6]);
		snprintf(m->unit, sizeof m->unit, "%s", fl[7]);
		snprintf(m->source, sizeof m->source, "%s", fl[8]);
		m->line = lineno;
		m->lent = lent;
		if (n >= 10)
			kernel_of_note(fl[9], m);
		char *end;
		m->value = strtod(fl[6], &end);
		if (end == fl[6] || *end || !(m->value > 0))
			fail("%s:%d: %s: value '%s' is not a positive number", path, lineno, m->id, fl[6]);
	}
	free(line);
	fclose(f);
	return 0;
}

/* The metric column: a metric, then optionally " kernel": the source timed each kernel as a profiler does (CUPTI,
   DeepGEMM's bench_kineto), so an op's time is the prediction less the launch gap before its kernel (dm_result's
   gap_s). Without it an op's time is the whole of a launch, as a harness timing calls with events sees it. */
static int parse_metric(const char *text, struct vcase *v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%s", text);
	size_t len = strlen(buf);
	v->kernel_time = len > 7 && !strcmp(buf + len - 7, " kernel");
	if (v->kernel_time)
		buf[len - 7] = '\0';
	text = buf;
	static const char *const names[] = {"tflops",   "ms",   "us",     "GBps=",   "Gelems=", "busbw",
	                                    "megatron", "mfu=", "tokens", "latency", "mcore",   "mhz"};
	_Static_assert(sizeof names / sizeof names[0] == M_COUNT, "a name per metric");
	for (int i = 0; i < M_COUNT; i++) {
		size_t n = strlen(names[i]);
		if (names[i][n - 1] != '=') {
			if (!strcmp(text, names[i])) {
				v->metric = (enum metric)i;
				v->metric_arg = 0;
				return 0;
			}
			continue;
		}
		if (strncmp(text, names[i], n))
			continue;
		char *end;
		double a = strtod(text + n, &end);
		if (end == text + n || *end || !(a > 0))
			return -1;
		v->metric = (enum metric)i;
		v->metric_arg = a;
		return 0;
	}
	return -1;
}

int split_list(const char *text, char sep, char (*out)[320], int max, size_t outlen)
{
	char buf[2048];
	snprintf(buf, sizeof buf, "%s", text);
	int n = 0;
	char *p = buf;
	for (;;) {
		char *s = strchr(p, sep);
		if (s)
			*s = '\0';
		char *t = trim(p);
		if (!t[0] || n >= max || strlen(t) >= outlen)
			return -1;
		snprintf(out[n++], outlen, "%s", t);
		if (!s)
			break;
		p = s + 1;
	}
	return n;
}

/* Whether the measurement's unit is the metric's: tokens/s also matches
   "tokens/s (8 GPUs total)". */
static int unit_ok(enum metric m, const char *unit)
{
	if (m == M_TOKENS)
		return !strncmp(unit, "tokens/s", 8) && (!unit[8] || unit[8] == ' ');
	return !strcmp(metric_unit[m], unit);
}

/* A serving case: `serve ARGS` alone (no options after ';'). 0, or -1 with why. */
static int parse_serve_case(struct vcase *v, char *why, size_t len)
{
	if (v->nops > 1) {
		snprintf(why, len, "a serve case takes no options after ';'");
		return -1;
	}
	return vserve_config(v->op_text[0] + 6, &v->so, &v->gc, why, len);
}

/* An import case's `PATH [--host graph] [--profiler-overhead TIME]`: the options of `sim import kineto` that
   describe how the measurement was taken (a CUDA graph's replay; unprofiled steps), never a figure of it. */
static int parse_import(struct vcase *v, const char *text, char *why, size_t whylen)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", text);
	char *save = NULL, *tok = strtok_r(buf, " ", &save);
	if (!tok) {
		snprintf(why, whylen, "import: expected a path");
		return -1;
	}
	snprintf(v->import_path, sizeof v->import_path, "%s", tok);
	while ((tok = strtok_r(NULL, " ", &save))) {
		const char *val = strtok_r(NULL, " ", &save);
		char bad[256];
		int rc = val ? imp_host_option(&v->import_opts, tok, val, bad, sizeof bad) : 1;
		if (rc) {
			snprintf(why, whylen, "import: %s",
			         rc < 0 ? bad : "expected --host graph|recorded or --profiler-overhead TIME");
			return -1;
		}
	}
	return 0;
}

/* A `gen` case's ops column: `gen ARGS` (what follows `sim gen`), then
   options separated by ';': attn=IMPL runs every attention of the trace
   with that kernel (naive: the separate kernels of an eager framework);
   memory=unchecked drops the trace's memory statements; ranks_per_node=N
   places N ranks on each node (sim run --ranks-per-node). */
static int parse_gen_case(struct vcase *v, char *why, size_t whylen)
{
	int first = 0; /* the gen command's place in the ops list */
	if (!strncmp(v->op_text[0], "import ", 7)) {
		/* `import PATH [OPTIONS] ; gen ...`: the recorded step, and what it computes */
		if (parse_import(v, v->op_text[0] + 7, why, whylen))
			return -1;
		if (v->nops == 1 && v->metric == M_MS) /* the step time: nothing to count */
			return 0;
		if (v->nops != 2 || strncmp(v->op_text[1], "gen ", 4)) {
			snprintf(why, whylen,
			         "an import case is 'import PATH ; gen ARGS' (the gen command gives its tokens), or "
			         "'import PATH' alone with metric ms (its step time)");
			return -1;
		}
		first = 1;
	}
	for (int i = first + 1; i < v->nops; i++) {
		const char *o = v->op_text[i];
		if (!strncmp(o, "attn=", 5) && (!strcmp(o + 5, "naive") || !strcmp(o + 5, "flash3"))) {
			snprintf(v->attn, sizeof v->attn, "%s", o + 5);
			continue;
		}
		if (!strcmp(o, "memory=unchecked")) {
			v->nomem = 1;
			continue;
		}
		if (!strncmp(o, "ranks_per_node=", 15)) {
			char *end;
			long n = strtol(o + 15, &end, 10);
			if (*end || n < 1 || n > 65536) {
				snprintf(why, whylen, "gen case option '%.200s': expected an integer from 1 to 65536",
				         o);
				return -1;
			}
			v->rpn = (int)n;
			continue;
		}
		snprintf(
		    why, whylen,
		    "unknown gen case option '%.200s' (expected attn=naive|flash3, memory=unchecked, ranks_per_node=N)",
		    o);
		return -1;
	}
	return vgen_config(v->op_text[first] + 4, &v->gc, why, whylen);
}

static int parse_coll(const char *text, struct vcoll *vc, char *why, size_t whylen)
{
	char buf[320], *save = NULL;
	snprintf(buf, sizeof buf, "%s", text + 5);
	memset(vc, 0, sizeof *vc);
	vc->on = 1;
	vc->c = CO_COUNT;
	vc->algo = COLL_AUTO;
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '=');
		if (!eq) {
			snprintf(why, whylen, "coll: '%s' is not key=value", w);
			return -1;
		}
		*eq++ = '\0';
		if (!strcmp(w, "op")) {
			for (int c = 0; c < CO_COUNT; c++)
				if (!strcmp(eq, tr_coll_name((enum tr_coll)c)))
					vc->c = (enum tr_coll)c;
		} else if (!strcmp(w, "bytes")) {
			if (units_parse(eq, UNIT_BYTES, &vc->bytes, why, whylen))
				return -1;
		} else if (!strcmp(w, "ranks")) {
			vc->ranks = atoi(eq);
		} else if (!strcmp(w, "algo")) {
			vc->algo = coll_algo_find(eq);
			if (vc->algo == COLL_UNKNOWN) {
				snprintf(why, whylen, "coll: unknown algo=%s", eq);
				return -1;
			}
		} else {
			snprintf(why, whylen, "coll: unknown key %s (expected op bytes ranks algo)", w);
			return -1;
		}
	}
	if (vc->c == CO_COUNT || !(vc->bytes > 0) || vc->ranks < 2) {
		snprintf(why, whylen, "coll: needs op=, bytes= and ranks= (at least 2)");
		return -1;
	}
	return 0;
}

static int find_chip(const char *config, const char *sets_text)
{
	for (int i = 0; i < nchips; i++)
		if (!strcmp(chips[i].config, config) && !strcmp(chips[i].sets_text, sets_text))
			return i;
	return -1;
}

/* Reads tests/validation/NAME: row(fields, line) for every line that is not
   blank or a comment and has exactly ncols tab-separated fields; another
   count is an error naming the columns. */
static void read_tsv(const char *root, const char *name, int ncols, const char *cols,
                     void (*row)(char **fl, int lineno))
{
	char path[1200];
	snprintf(path, sizeof path, "%s/tests/validation/%s", root, name);
	FILE *f = fopen(path, "r");
	if (!f) {
		fail("cannot open %s", path);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		char *t = trim(line);
		if (!t[0] || t[0] == '#')
			continue;
		char *fl[8];
		int n = split_tabs(line, fl, 8);
		if (n != ncols)
			fail("%s:%d: expected %d tab-separated columns (%s), found %d", name, lineno, ncols, cols, n);
		else
			row(fl, lineno);
	}
	free(line);
	fclose(f);
}

static void case_row(char **fl, int lineno)
{
	vs = xrealloc(vs, (size_t)(nvs + 1) * sizeof *vs);
	struct vcase *v = &vs[nvs];
	memset(v, 0, sizeof *v);
	v->line = lineno;
	v->chip = -1;
	snprintf(v->id, sizeof v->id, "%s", trim(fl[0]));
	v->meas = find_meas(v->id);
	if (v->meas < 0) {
		fail("cases.tsv:%d: %s: no such id in the measurements file", lineno, v->id);
		return;
	}
	struct meas *m = &ms[v->meas];
	if (m->in_cases) {
		fail("cases.tsv:%d: %s: listed twice", lineno, v->id);
		return;
	}
	m->in_cases = 1;
	if (cat_index(m->cat) < 0) {
		fail("cases.tsv:%d: %s: category '%s' is not validated here", lineno, v->id, m->cat);
		return;
	}
	snprintf(v->config, sizeof v->config, "%s", trim(fl[1]));
	snprintf(v->sets_text, sizeof v->sets_text, "%s", trim(fl[2]));
	if (strcmp(v->sets_text, "-")) {
		v->nsets = split_list(v->sets_text, ';', v->sets, MAX_SETS, sizeof v->sets[0]);
		if (v->nsets < 0) {
			fail("cases.tsv:%d: %s: bad sets '%s' (expected - or path=value;path=value, at most %d)",
			     lineno, v->id, v->sets_text, MAX_SETS);
			return;
		}
	}
	for (int i = 0; i < v->nsets; i++) {
		size_t klen = strcspn(v->sets[i], "=");
		const char *leaf = v->sets[i];
		for (size_t j = 0; j < klen; j++)
			if (v->sets[i][j] == '.')
				leaf = v->sets[i] + j + 1;
		if (!strncmp(leaf, "clock", 5) || !strncmp(leaf, "tensor_clock", 12)) {
			fail("cases.tsv:%d: %s: sets %.*s: a clock measured during the run is not an input of its "
			     "prediction (the power model derives the clock under load)",
			     lineno, v->id, (int)klen, v->sets[i]);
			return;
		}
		if (!strncmp(v->sets[i], "model.", 6))
			v->cond = 1;
	}
	v->src = source_index(m->source);
	if (parse_metric(trim(fl[3]), v)) {
		fail("cases.tsv:%d: %s: bad metric '%s' (expected "
		     "tflops|ms|us|GBps=<bytes>|Gelems=<n>|busbw|megatron|mfu=<peak TFLOP/s>|tokens|latency|mcore, "
		     "op metrics optionally followed by ' kernel')",
		     lineno, v->id, fl[3]);
		return;
	}
	if (!unit_ok(v->metric, m->unit)) {
		fail("cases.tsv:%d: %s: metric %s gives %s but the measurement is in %s", lineno, v->id, trim(fl[3]),
		     metric_unit[v->metric], m->unit);
		return;
	}
	snprintf(v->ops_text, sizeof v->ops_text, "%s", trim(fl[4]));
	v->nops = split_list(v->ops_text, ';', v->op_text, MAX_OPS, sizeof v->op_text[0]);
	if (v->nops < 0) {
		fail("cases.tsv:%d: %s: bad ops list (1 to %d ops separated by ' ; ')", lineno, v->id, MAX_OPS);
		return;
	}
	v->serve = !strncmp(v->op_text[0], "serve ", 6);
	v->gen = v->serve || !strncmp(v->op_text[0], "gen ", 4) || !strncmp(v->op_text[0], "import ", 7);
	/* ms: the op lines' summed time, or an imported step's time */
	if (v->gen != GEN_METRIC(v->metric) && !(v->metric == M_MS && !strncmp(v->op_text[0], "import ", 7))) {
		fail("cases.tsv:%d: %s: metric %s is for %s", lineno, v->id, trim(fl[3]),
		     v->gen ? "op lines, not a gen case" : "a gen case, not op lines");
		return;
	}
	if (v->kernel_time && (v->gen || v->metric == M_BUSBW)) {
		fail("cases.tsv:%d: %s: ' kernel' (a profiler's kernel time) is for op lines, not %s", lineno, v->id,
		     v->gen ? "a gen case" : "a collective's bus bandwidth");
		return;
	}
	int bad = 0;
	if (v->gen) {
		char why[WHYLEN];
		if (v->serve ? parse_serve_case(v, why, sizeof why) : parse_gen_case(v, why, sizeof why)) {
			fail("%s: %s", v->id, why);
			snprintf(v->why, sizeof v->why, "%.900s", why);
			bad = 1;
		} else if (!strcmp(m->cat, "training") && v->import_path[0]) {
			/* a recorded eager step replayed is scored on its own */
			snprintf(m->cat, sizeof m->cat, "training_import");
		} else if (!strcmp(m->cat, "training") && v->gc.m.experts) {
			/* mixture-of-experts training is scored on its own */
			snprintf(m->cat, sizeof m->cat, "training_moe");
		}
		if (!bad && v->gc.mode != GEN_TRAIN &&
		    (v->metric == M_MCORE || v->metric == M_MEGATRON || v->metric == M_MFU)) {
			fail("cases.tsv:%d: %s: metric %s counts the FLOPs of a training step (the case is --mode "
			     "infer)",
			     lineno, v->id,
			     v->metric == M_MCORE      ? "mcore"
			     : v->metric == M_MEGATRON ? "megatron"
			                               : "mfu=");
			bad = 1;
		}
	}
	for (int i = 0; i < v->nops && !bad && !v->gen; i++) {
		char why[WHYLEN];
		if (!strncmp(v->op_text[i], "coll ", 5) ? parse_coll(v->op_text[i], &v->coll[i], why, sizeof why)
		                                        : op_parse(v->op_text[i], NULL, &v->ops[i], why, sizeof why)) {
			fail("%s: op '%s': %s", v->id, v->op_text[i], why);
			snprintf(v->why, sizeof v->why, "op does not parse: %.900s", why);
			bad = 1;
		}
	}
	nvs++;
	if (bad)
		return;
	v->chip = find_chip(v->config, v->sets_text);
	if (v->chip < 0) {
		chips = xrealloc(chips, (size_t)(nchips + 1) * sizeof *chips);
		struct chipent *ce = &chips[nchips];
		memset(ce, 0, sizeof *ce);
		snprintf(ce->config, sizeof ce->config, "%s", v->config);
		snprintf(ce->sets_text, sizeof ce->sets_text, "%s", v->sets_text);
		v->chip = nchips++;
	}
}

void read_cases(const char *root)
{
	read_tsv(root, "cases.tsv", 5, "id config sets metric ops", case_row);
}

static void skipped_row(char **fl, int lineno)
{
	if (!trim(fl[1])[0]) {
		fail("skipped.tsv:%d: expected 2 tab-separated columns (id reason)", lineno);
		return;
	}
	int mi = find_meas(trim(fl[0]));
	if (mi < 0) {
		fail("skipped.tsv:%d: %s: no such id in the measurements file", lineno, trim(fl[0]));
		return;
	}
	if (ms[mi].in_skipped) {
		fail("skipped.tsv:%d: %s: listed twice", lineno, ms[mi].id);
		return;
	}
	if (cat_index(ms[mi].cat) < 0) {
		fail("skipped.tsv:%d: %s: category '%s' is not validated here", lineno, ms[mi].id, ms[mi].cat);
		return;
	}
	if (strlen(trim(fl[1])) >= sizeof sk->reason) {
		fail("skipped.tsv:%d: %s: reason of %zu characters (at most %zu)", lineno, ms[mi].id,
		     strlen(trim(fl[1])), sizeof sk->reason - 1);
		return;
	}
	ms[mi].in_skipped = 1;
	sk = xrealloc(sk, (size_t)(nsk + 1) * sizeof *sk);
	snprintf(sk[nsk].id, sizeof sk[nsk].id, "%s", ms[mi].id);
	snprintf(sk[nsk].reason, sizeof sk[nsk].reason, "%s", trim(fl[1]));
	nsk++;
}

void read_skipped(const char *root)
{
	read_tsv(root, "skipped.tsv", 2, "id reason", skipped_row);
}

static int find_case(const char *id)
{
	for (int i = 0; i < nvs; i++)
		if (!strcmp(vs[i].id, id))
			return i;
	return -1;
}

/* Whether a unit is a time (a ratio of two times is inverted): ms, us, or
   seconds ("s", "s (end-to-end batch latency)"). */
int time_unit(const char *unit)
{
	return !strcmp(unit, "ms") || !strcmp(unit, "us") || !strcmp(unit, "s") || !strncmp(unit, "s (", 3);
}

static void ratio_row(char **fl, int lineno)
{
	rs = xrealloc(rs, (size_t)(nrs + 1) * sizeof *rs);
	struct ratio *r = &rs[nrs++];
	memset(r, 0, sizeof *r);
	r->line = lineno;
	snprintf(r->a, sizeof r->a, "%s", trim(fl[0]));
	snprintf(r->b, sizeof r->b, "%s", trim(fl[1]));
	snprintf(r->chips, sizeof r->chips, "%s", trim(fl[2]));
	snprintf(r->work, sizeof r->work, "%s", trim(fl[3]));
	snprintf(r->basis, sizeof r->basis, "%s", trim(fl[4]));
	r->va = find_case(r->a);
	r->vb = find_case(r->b);
	if (r->va < 0 || r->vb < 0) {
		fail("ratios.tsv:%d: %s: not a case of cases.tsv", lineno, r->va < 0 ? r->a : r->b);
		return;
	}
	if (r->va == r->vb) {
		fail("ratios.tsv:%d: %s: a pair of one row", lineno, r->a);
		return;
	}
	const struct meas *ma = &ms[vs[r->va].meas], *mb = &ms[vs[r->vb].meas];
	if (strcmp(ma->unit, mb->unit)) {
		fail("ratios.tsv:%d: %s/%s: units differ (%s, %s)", lineno, r->a, r->b, ma->unit, mb->unit);
		r->va = r->vb = -1;
	}
}

void read_ratios(const char *root)
{
	read_tsv(root, "ratios.tsv", 5, "a b chips workload basis", ratio_row);
}

/* Each pair's measured and predicted speed-up of a over b (> 1: a is faster)
   and the ratio's error. */
void check_coverage(void)
{
	for (int i = 0; i < nms; i++) {
		if (cat_index(ms[i].cat) < 0)
			continue;
		if (ms[i].in_cases && ms[i].in_skipped) {
			/* replayed, not scored: the case is the best reading of the run, the reason why it is not
			 * scored */
			for (int j = 0; j < nvs; j++)
				if (vs[j].meas == i)
					vs[j].unscored = vs[j].cond = 1;
		} else if (!ms[i].in_cases && !ms[i].in_skipped)
			fail("%s (%s): in neither cases.tsv nor skipped.tsv", ms[i].id, ms[i].cat);
	}
}
