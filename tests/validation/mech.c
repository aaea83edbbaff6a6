/*
 * mech.c -- what each mechanism of the step model contributes to the
 * training and inference rows: the rows it applies to replayed (a serving
 * row: served) again with it switched off,
 * their errors set beside the errors with it on (docs/validation.md, "What
 * each mechanism contributes"). A mechanism that helps moves the rows
 * towards their measurements; one whose removal helps is suspect.
 *
 * A mechanism is a row of `mechs`: the rows it applies to and how `sim gen`
 * turns it off, which constant of the device model it zeroes in a copy of
 * the chip, or which option of `sim import` it drops (the recorded step is
 * imported again without it). Adding one: a predicate, a switch, a line.
 */
#include "import.h"
#include "validate_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mech {
	const char *name; /* as the report names it */
	const char *off;  /* what the replay without it runs */
	int (*applies)(const struct vcase *v);
	void (*switch_off)(struct gen_config *c);  /* a `sim gen` option (the trace changes), or */
	void (*chip_off)(struct arch_chip *c);     /* a constant of the device model (the chip changes), or */
	void (*import_off)(struct imp_options *o); /* an option of `sim import` (the imported trace changes) */
};

static int fp8_quant(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	return c->mode == GEN_TRAIN && c->p.dtype == GEN_FP8 && c->p.fp8_recipe != GEN_FP8_NONE;
}

static void fp8_quant_off(struct gen_config *c)
{
	c->p.fp8_recipe = GEN_FP8_NONE;
}

static int engine_host(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	return c->mode == GEN_INFER && c->inf.engine != GEN_ENGINE_NONE;
}

static void engine_host_off(struct gen_config *c)
{
	c->inf.engine = GEN_ENGINE_NONE;
}

/* DDP's gradient buckets reduced on their own stream as the backward frees them (Megatron-Core's
   --overlap-grad-reduce), against all of them after the backward */
static int grad_overlap(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	long long cp = c->p.cp > 0 ? c->p.cp : 1;
	return c->mode == GEN_TRAIN && c->p.grad_sync == GEN_GS_OVERLAP && c->p.zero < 2 && c->p.dp * cp > 1;
}

static void grad_overlap_off(struct gen_config *c)
{
	c->p.grad_sync = GEN_GS_AFTER;
}

/* the gap between back-to-back kernels of a stream: every step, training or inference */
static int any_step(const struct vcase *v)
{
	(void)v;
	return 1;
}

static void launch_off(struct arch_chip *c)
{
	c->model.launch_s = 0;
}

/* kernels replayed from CUDA graphs (sim gen --launch graph, sim import --host graph): the graph's gap */
static int graph_launch(const struct vcase *v)
{
	return v->import_path[0] ? v->import_opts.host_graph : v->gc.launch == GEN_LAUNCH_GRAPH;
}

static void graph_gap_off(struct arch_chip *c)
{
	c->model.graph_gap_s = c->model.launch_gap_s;
}

/* an imported step timed unprofiled: the profiler's own host time per CPU op taken out of the host's gaps */
static int unprofiled(const struct vcase *v)
{
	return v->import_path[0] && v->import_opts.profiler_ns > 0;
}

static void unprofiled_off(struct imp_options *o)
{
	o->profiler_ns = 0;
}

/* vLLM's PagedAttention kernels decode (--decode-impl paged, or auto with --paged): a CTA a query head, so the
   query heads of one KV head each read it; against FlashAttention-2's decode kernels, one CTA a KV head */
static int paged_decode(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	return c->mode == GEN_INFER && gen_decode_attn(c) == ATTN_PAGED;
}

static void paged_decode_off(struct gen_config *c)
{
	c->inf.decode_impl = GEN_DEC_FLASH2;
}

/* vLLM's CUDA graphs (--engine vllm): the decode attention through the block table launched for the capture's keys
   (maxkv=) */
static int capture_launch(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	return c->mode == GEN_INFER && gen_decode_max_keys(c, 1, 1) > 0; /* one sequence of one key: any capture */
}

static void capture_launch_off(struct gen_config *c)
{
	c->inf.enforce_eager = 1;
}

/* TensorRT-LLM's generation kernels with multi_block_mode off (--decode-impl mmha): a sequence's keys never split
   over CTAs; against the generic split-KV kernel that fills the chip */
static int mmha_decode(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	return c->mode == GEN_INFER && gen_decode_attn(c) == ATTN_MMHA;
}

static void mmha_decode_off(struct gen_config *c)
{
	c->inf.decode_impl = GEN_DEC_GENERIC;
}

/* TensorRT-LLM's checkpoint (--engine trtllm): the embedding table whole on every tensor-parallel rank, its memory
   (which on a full device leaves fewer sequences' KV) and no all-reduce after the lookup */
static int trt_embedding(const struct vcase *v)
{
	const struct gen_config *c = &v->gc;
	return c->mode == GEN_INFER && c->inf.engine == GEN_ENGINE_TRTLLM && c->p.tp > 1;
}

static void trt_embedding_off(struct gen_config *c)
{
	c->inf.engine = GEN_ENGINE_NONE;
}

/* a batch of one prompt decoded greedily (--same-prompt): an MoE decode step's tokens are one, on the top-k experts
   (a dense model's rows do not change: not counted) */
static int same_prompt(const struct vcase *v)
{
	return v->gc.mode == GEN_INFER && v->gc.inf.same_prompt && v->gc.m.experts > 0;
}

static void same_prompt_off(struct gen_config *c)
{
	c->inf.same_prompt = 0;
}

static const struct mech mechs[] = {
    {"fp8 quantization kernels (--fp8-recipe)", "--fp8-recipe none: the fp8 GEMMs alone", fp8_quant, fp8_quant_off,
     NULL, NULL},
    {"gradient reduction overlapped with the backward (--grad-sync overlap)",
     "--grad-sync after: every gradient reduced after the backward", grad_overlap, grad_overlap_off, NULL, NULL},
    {"vLLM's V0 engine: its host time per step, its sampler, its KV-cache writes, its graphs' launch (--engine vllm)",
     "--engine none: the device's work alone, the logits' softmax for a sampler", engine_host, engine_host_off, NULL,
     NULL},
    {"vLLM's PagedAttention decode, a CTA a query head (--decode-impl paged)",
     "--decode-impl flash2_decode: FlashAttention-2's decode kernels, a CTA a KV head", paged_decode, paged_decode_off,
     NULL, NULL},
    {"vLLM's CUDA graphs: the decode attention through the block table launched for the capture's keys (--engine "
     "vllm, maxkv=)",
     "--enforce-eager: launched for the step's own keys", capture_launch, capture_launch_off, NULL, NULL},
    {"TensorRT-LLM's decode with multi_block_mode off, the keys never split (--decode-impl mmha)",
     "--decode-impl decode: a split-KV kernel that fills the chip", mmha_decode, mmha_decode_off, NULL, NULL},
    {"TensorRT-LLM's embedding table whole on every tensor-parallel rank (--engine trtllm)",
     "--engine none: the table split over the ranks, an all-reduce after the lookup", trt_embedding, trt_embedding_off,
     NULL, NULL},
    {"one prompt B times, decoded greedily (--same-prompt)",
     "distinct sequences: an MoE decode step's tokens spread over every expert", same_prompt, same_prompt_off, NULL,
     NULL},
    {"kernel launch gaps (model.launch_overhead)", "model.launch_overhead 0: kernels back to back", any_step, NULL,
     launch_off, NULL},
    {"CUDA graphs' launch gap (launch=graph: sim gen --launch graph, sim import --host graph)",
     "model.graph_launch_gap = model.launch_gap: the graph's kernels as far apart as those launched one by one",
     graph_launch, NULL, graph_gap_off, NULL},
    {"the profiler's host time taken out of an imported step (sim import --profiler-overhead)",
     "--profiler-overhead 0: the host as the profiled step recorded it", unprofiled, NULL, NULL, unprofiled_off},
};
#define NMECHS ((int)(sizeof mechs / sizeof mechs[0]))

/* per mechanism and case: the error with the mechanism off (NAN: not run) */
static double *err_off[NMECHS];

/* The most engine activities (SimGrid sleeps and parallel tasks: the work
   of a replay, which a steady state's derived iterations do not add to)
   a step's replay may take to be replayed again here. The largest steps of
   the suite (Llama 3.1 405B's interleaved pipelines on 256 GPUs: 10 to 20 s
   a replay, 0.5 to 2 M activities) would be replayed again by three
   mechanisms each, half of the suite's time, which has to leave the
   README's test command under ten minutes on two cores. The table names the
   rows it leaves out (mech_write). */
#define MECH_MAX_ACTIVITIES 500000L

/* Mechanism m applies to row v: a step the suite predicts that m applies to; a mechanism that switches a
   `sim gen` option off has none to switch in a recorded (imported) step. */
static int mech_applies(const struct mech *m, const struct vcase *v)
{
	return v->gen && v->ok && !v->cond && (!v->import_path[0] || !m->switch_off) && m->applies(v);
}

/* Row v is replayed (or served) without mechanism m. */
static int mech_row(const struct mech *m, const struct vcase *v)
{
	return mech_applies(m, v) && v->activities <= MECH_MAX_ACTIVITIES;
}

void mech_run(const char *root)
{
	for (int k = 0; k < NMECHS; k++) {
		err_off[k] = malloc((size_t)(nvs > 0 ? nvs : 1) * sizeof *err_off[k]);
		if (!err_off[k]) {
			fprintf(stderr, "validate: out of memory\n");
			exit(1);
		}
		for (int i = 0; i < nvs; i++)
			err_off[k][i] = NAN;
		int n = 0, any = 0; /* rows to replay; rows at all (served ones too) */
		for (int i = 0; i < nvs; i++)
			if (mech_row(&mechs[k], &vs[i]))
				any++, n += !vs[i].serve;
		if (!any)
			continue;
		struct vgen_set set;
		vgen_set_init(&set, n);
		struct arch_chip *copies = calloc((size_t)(n > 0 ? n : 1), sizeof *copies);
		if (!copies) {
			fprintf(stderr, "validate: out of memory\n");
			exit(1);
		}
		for (int i = 0; i < nvs; i++) {
			struct vcase *v = &vs[i];
			if (!mech_row(&mechs[k], v))
				continue;
			struct gen_config c = v->gc;
			struct arch_chip served = *chips[v->chip].c; /* the chip without the mechanism */
			if (mechs[k].switch_off)
				mechs[k].switch_off(&c);
			else if (mechs[k].chip_off)
				mechs[k].chip_off(&served);
			if (v->serve) { /* served again here: no trace to replay */
				double t, tok;
				char why[WHYLEN];
				if (vserve_run(&served, &c, &v->so, &t, &tok, why, sizeof why))
					fail("%s: served without %s: %s", v->id, mechs[k].name, why);
				else
					err_off[k][i] = (gen_metric(v, t) - ms[v->meas].value) / ms[v->meas].value;
				continue;
			}
			char cmd[480];
			snprintf(cmd, sizeof cmd, "%s (%s)", v->op_text[0] + 4, mechs[k].off);
			if (mechs[k].switch_off) {
				set.texts[set.m] = vgen_trace(&c, cmd, v->attn[0] ? v->attn : NULL, v->nomem);
				set.chips[set.m] = chips[v->chip].c;
			} else if (mechs[k].import_off) { /* imported again without the option */
				struct imp_options o = v->import_opts;
				struct imp_stats st;
				char why[WHYLEN];
				const char *files[1] = {v->import_path};
				mechs[k].import_off(&o);
				if (vimport_kineto(root, files, 1, &o, &set.texts[set.m], &st, why, sizeof why))
					fail("%s: imported without %s: %s", v->id, mechs[k].name, why);
				set.chips[set.m] = chips[v->chip].c;
			} else { /* the row's own trace (an imported one too) on the changed chip */
				set.texts[set.m] = vcase_trace(v, &v->gc, cmd);
				copies[set.m] = served;
				set.chips[set.m] = &copies[set.m];
			}
			set.rpn[set.m] = v->rpn;
			set.cost[set.m] = (double)v->activities;
			set.idx[set.m++] = i;
		}
		vgen_set_run(&set);
		for (int j = 0; j < set.m; j++) {
			struct vcase *v = &vs[set.idx[j]];
			if (set.res[j].rc)
				fail("%s: replay without %s: %s", v->id, mechs[k].name, set.res[j].why);
			else
				err_off[k][set.idx[j]] =
				    (gen_metric(v, set.res[j].time_s) - ms[v->meas].value) / ms[v->meas].value;
		}
		vgen_set_free(&set);
		free(copies);
	}
}

void mech_write(FILE *f)
{
	fprintf(f, "## What each mechanism contributes\n\n"
	           "The training and inference rows a mechanism of the step model applies to, replayed (or served) "
	           "again with it switched off (the same constants, but for the one a mechanism of the device model "
	           "sets to zero), by source: mean absolute error and mean error "
	           "with it and without it. A mechanism earns its place when the rows move towards their "
	           "measurements with it.\n\n"
	           "| mechanism | without it the replay runs | source | rows | MAPE with | MAPE without | bias with | "
	           "bias without |\n|---|---|---|---:|---:|---:|---:|---:|\n");
	for (int k = 0; k < NMECHS; k++)
		for (int s = 0; s < nsrcs; s++) {
			int n = 0;
			double a_on = 0, a_off = 0, b_on = 0, b_off = 0;
			for (int i = 0; i < nvs; i++) {
				if (vs[i].src != s || !err_off[k] || isnan(err_off[k][i]))
					continue;
				n++;
				a_on += fabs(vs[i].err), b_on += vs[i].err;
				a_off += fabs(err_off[k][i]), b_off += err_off[k][i];
			}
			if (!n)
				continue;
			char p1[32], p2[32], p3[32], p4[32];
			pct(p1, sizeof p1, a_on / n);
			pct(p2, sizeof p2, a_off / n);
			spct(p3, sizeof p3, b_on / n);
			spct(p4, sizeof p4, b_off / n);
			fprintf(f, "| %s | %s | %s | %d | %s | %s | %s | %s |\n", mechs[k].name, mechs[k].off, srcs[s],
			        n, p1, p2, p3, p4);
		}
	int nout = 0;
	for (int i = 0; i < nvs; i++) {
		int out = 0;
		for (int k = 0; k < NMECHS; k++)
			out |= mech_applies(&mechs[k], &vs[i]) && !mech_row(&mechs[k], &vs[i]);
		if (!out)
			continue;
		if (!nout++)
			fprintf(
			    f,
			    "\nLeft out of the table, to keep the suite's time bounded: the rows whose replay takes "
			    "more than %.1f M engine activities (SimGrid sleeps and parallel tasks; 8 to 20 s each on "
			    "this project's machine), which the mechanisms that apply would replay once more each. "
			    "Their own replays are scored as every row's. Activities of each: ",
			    MECH_MAX_ACTIVITIES / 1e6);
		else
			fprintf(f, ", ");
		fprintf(f, "%s %.2f M", vs[i].id, vs[i].activities / 1e6);
	}
	fprintf(f, nout ? ".\n\n" : "\n");
}

void mech_free(void)
{
	for (int k = 0; k < NMECHS; k++) {
		free(err_off[k]);
		err_off[k] = NULL;
	}
}
