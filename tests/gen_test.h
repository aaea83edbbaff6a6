/*
 * gen_test.h -- what tests/test_gen.c, test_gen_mech.c and test_gen_par.c share: a preset
 * with the defaults `sim gen` fills in, a layout, a generated trace's text, the
 * checks every generated trace passes (test_trace), a refused configuration and
 * a refused command line. Static in each test (CHECK counts per file, check.h).
 */
#ifndef SIM_TESTS_GEN_TEST_H
#define SIM_TESTS_GEN_TEST_H

#include "arch.h"
#include "check.h"
#include "gen.h"
#include "trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

/* a preset with the defaults `sim gen` fills in */
static inline void config(struct gen_config *c, const char *preset)
{
	memset(c, 0, sizeof *c);
	gen_defaults(c);
	c->m = *gen_preset(preset);
	c->seq = c->m.seq;
	c->inf.input_len = 512;
}

static inline void layout(struct gen_config *c, long long tp, long long pp, long long dp, long long mb, long long gb)
{
	c->p.tp = tp;
	c->p.pp = pp;
	c->p.dp = dp;
	c->p.micro_batch = mb;
	c->p.global_batch = gb;
}

static inline void refuse(struct gen_config *c, const char *flag)
{
	char why[512] = "";
	int rc = gen_check(c, why, sizeof why);
	CHECK(rc == -1 && strstr(why, flag) && !strchr(why, '\n'), "want a refusal naming %s, got %d '%s'", flag, rc,
	      why);
}

static inline char *text_of(const struct gen_config *c, const char *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = gen_write(f, c, cmd);
	fclose(f);
	CHECK(rc == 0, "gen_write failed");
	return buf;
}

/* FLOPs of every rank's device ops (ranks of one pp stage, tp and dp
   symmetric, counted once and multiplied) */
static inline double trace_flops(const struct trace *t)
{
	double sum = 0;
	int pp = tr_dim_size(t, DIM_PP), per = tr_ranks(t) / pp;
	char why[TR_MSG_MAX];
	for (int s = 0; s < pp; s++) {
		struct tr_cursor *cur = tr_cursor_new(t, s * per);
		struct tr_event ev;
		int rc;
		while ((rc = tr_next(cur, &ev, why, sizeof why)) == 1)
			if (ev.kind == TK_OP && ev.op.kind == OP_GEMM)
				sum += per * op_flops(&ev.op);
		CHECK(rc == 0, "expansion: %s", why);
		tr_cursor_free(cur);
	}
	return sum;
}

static inline void test_trace(const struct gen_config *c, const char *what, double gemm_share)
{
	char *a = text_of(c, what), *b = text_of(c, what), why[TR_MSG_MAX];
	CHECK(a && b && !strcmp(a, b), "%s: the same config gives different text", what);
	struct trace *t = a ? tr_parse_string(a, what, why, sizeof why) : NULL;
	CHECK(t != NULL, "%s does not parse: %s", what, why);
	if (t) {
		const struct tr_workload *w = tr_workload(t);
		CHECK(w && near(w->model_flops, gen_model_flops(c), 1e-15), "%s: workload line", what);
		/* model FLOPs count the vocabulary as given; the LM head's GEMMs run on the padded one (forward 2,
		   backward 4 FLOPs a token, hidden element and padded row) */
		double pad = 6.0 * (double)c->p.global_batch * (double)c->seq * (double)c->m.hidden *
		             (double)(gen_vocab_padded(c) - c->m.vocab);
		double f = trace_flops(t), want = gemm_share * gen_model_flops(c) + pad;
		CHECK(near(f, want, 0.002), "%s: GEMMs do %.4g FLOPs, %.3g x model FLOPs is %.4g (ratio %.4f)", what, f,
		      gemm_share, want, f / want);
		tr_free(t);
	}
	free(a);
	free(b);
}

/* gen_parse_args: the command line `sim gen` reads */
static inline int parse(const char *line, struct gen_config *c, struct gen_args *a, char *why, size_t len)
{
	char buf[512], *argv[40], *save = NULL;
	int argc = 0;
	snprintf(buf, sizeof buf, "%s", line);
	argv[argc++] = (char *)"gen";
	for (char *w = strtok_r(buf, " ", &save); w && argc < 39; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	int rc = gen_parse_args(argc, argv, c, a, why, len);
	static char model[64];
	if (!rc && a->model) { /* a->model points into buf */
		snprintf(model, sizeof model, "%s", a->model);
		a->model = model;
	}
	return rc;
}

/* a command line `sim gen` must refuse, and a part of the one line that says why */
struct refusal {
	const char *line, *msg;
};

static inline void check_refusals(const struct refusal *bad, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct gen_config c;
		struct gen_args a;
		char why[1280] = "";
		int rc = parse(bad[i].line, &c, &a, why, sizeof why);
		CHECK(rc == -1 && strstr(why, bad[i].msg) && !strchr(why, '\n'), "%s: rc %d, '%s'; want '%s'",
		      bad[i].line, rc, why, bad[i].msg);
	}
}

#endif
