/*
 * gen_check.c -- whether a `sim gen` config can be laid out (gen_check): the model's shape against the
 * parallelism (heads, FFN and experts over tp, windows, routing groups), the pipeline's split and layout, the
 * parallel dimensions and Megatron-Core's own refusals, training's and the hybrid models' limits. Each refusal
 * is one line naming the flag and what was expected; tests/bad/cases.tsv holds them to it.
 */
#include "gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int check_shape(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	if (m->heads % p->tp)
		return fail(
		    why, len,
		    "--heads %lld is not divisible by --tp %lld (each tensor-parallel rank holds heads/tp heads)",
		    m->heads, p->tp);
	if (m->kv_heads > m->heads || m->heads % m->kv_heads)
		return fail(why, len,
		            "--kv-heads %lld must divide --heads %lld (query heads share key/value heads in groups)",
		            m->kv_heads, m->heads);
	if (m->attn == GEN_MHA && m->kv_heads % p->tp && p->tp % m->kv_heads)
		return fail(why, len,
		            "--kv-heads %lld and --tp %lld: one must divide the other (kv heads are split over tp, or "
		            "replicated when tp > kv heads)",
		            m->kv_heads, p->tp);
	if (m->ffn % p->tp)
		return fail(why, len, "--ffn %lld is not divisible by --tp %lld (the FFN is split by columns over tp)",
		            m->ffn, p->tp);
	if (m->window && p->cp > 1)
		return fail(
		    why, len,
		    "--window with --cp %lld: ring attention over a sliding window is not modelled (use --cp 1)",
		    p->cp);
	if (m->experts && m->expert_ffn % p->tp)
		return fail(why, len, "expert FFN %lld is not divisible by --tp %lld", m->expert_ffn, p->tp);
	if (m->moe_latent && !m->experts)
		return fail(why, len, "--moe-latent %lld: a latent width of the experts needs --experts",
		            m->moe_latent);
	if (m->experts && (m->topk < 1 || m->topk > m->experts))
		return fail(why, len, "--topk %lld: expected 1 to --experts %lld", m->topk, m->experts);
	if (m->experts && (m->router_groups > 0 || m->router_group_topk > 0)) {
		long long G = m->router_groups, g = m->router_group_topk;
		if (G < 1 || g < 1)
			return fail(why, len,
			            "--router-groups and --router-group-topk go together (group-limited routing)");
		if (m->experts % G)
			return fail(why, len, "--router-groups %lld does not divide --experts %lld", G, m->experts);
		if (g > G)
			return fail(why, len, "--router-group-topk %lld is more than --router-groups %lld", g, G);
		if (m->topk > g * (m->experts / G))
			return fail(why, len,
			            "--topk %lld is more than the %lld experts of --router-group-topk %lld groups",
			            m->topk, g * (m->experts / G), g);
	}
	if (!m->experts && (p->moe_imbalance > 0 || p->moe_capacity > 0))
		return fail(why, len, "%s: the model has no experts (an MoE preset, or --experts)",
		            p->moe_imbalance > 0 ? "--moe-imbalance" : "--moe-capacity-factor");
	/* Megatron-Core's own checks (megatron/training/arguments.py) */
	if (p->moe_overlap && (!m->experts || p->ep < 2))
		return fail(why, len,
		            "--moe-a2a-overlap overlaps expert-parallel all-to-alls: it needs --ep 2 or more");
	if (p->moe_overlap && p->dispatcher == GEN_DISP_ALLGATHER)
		return fail(why, len, "--moe-a2a-overlap works with --moe-dispatcher alltoall or flex, not allgather");
	if (p->moe_overlap && p->recompute == GEN_RC_FULL)
		return fail(why, len, "--moe-a2a-overlap: not with --recompute full (Megatron-Core refuses it)");
	if (p->moe_overlap && p->sched == GEN_GPIPE)
		return fail(why, len,
		            "--moe-a2a-overlap pairs 1F1B's forwards and backwards: not with --schedule gpipe");
	if (m->experts && p->dispatcher == GEN_DISP_FLEX && m->topk > 256)
		return fail(why, len, "--moe-dispatcher flex: --topk %lld, at most 256 (the trace's coll topk=)",
		            m->topk);
	if (m->experts && p->dispatcher == GEN_DISP_ALLGATHER && p->tp > 1)
		return fail(
		    why, len,
		    "--moe-dispatcher allgather with --tp %lld: it gathers over tp x ep, which sim gen does not "
		    "lay out (use alltoall or flex)",
		    p->tp);
	if (m->dense_layers > m->layers)
		return fail(why, len, "%lld dense layers but only --layers %lld", m->dense_layers, m->layers);
	if (m->window_skip && !m->window)
		return fail(why, len, "--window-skip-freq %lld needs --window (the keys a windowed layer sees)",
		            m->window_skip);
	long long runs = 0;
	for (long long l = 0; l < m->layers && m->window; l++)
		runs += l == 0 || gen_layer_is_windowed(m, l) != gen_layer_is_windowed(m, l - 1) ||
		        gen_layer_is_moe(m, l) != gen_layer_is_moe(m, l - 1);
	if (runs > GEN_RUNS_MAX)
		return fail(
		    why, len,
		    "--window-skip-freq %lld over %lld layers: %lld runs of windowed and full layers, at most %d",
		    m->window_skip, m->layers, runs, GEN_RUNS_MAX);
	return 0;
}

/* a --pipeline-layout against the model and the pipeline, as Megatron-Core's
   PipelineParallelLayerLayout.validate_layer_layout checks it */
static int check_layout(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_layout *L = &c->p.layout;
	const struct gen_parallel *p = &c->p;
	const char *x = L->text;
	long long t = 0, mtp = c->mode == GEN_TRAIN ? c->m.mtp : 0;
	for (int q = 0; q < L->chunks; q++)
		t += L->layers[q];
	if (p->first_layers || p->last_layers || p->split_embedding || p->split_loss)
		return fail(why, len,
		            "--pipeline-layout and --decoder-first/last-pipeline-num-layers or "
		            "--account-for-embedding/loss-in-pipeline-split exclude each other (as in Megatron-Core)");
	if (L->chunks != p->pp * p->vstages)
		return fail(why, len,
		            "--pipeline-layout '%s' names %d model chunks, expected --pp %lld x %lld virtual stages", x,
		            L->chunks, p->pp, p->vstages);
	if (L->emb != 1 || L->emb_at != 0 || L->emb_chunk != 0)
		return fail(why, len,
		            "--pipeline-layout '%s': the embedding (E) must be named once, first in the first chunk",
		            x);
	if (L->loss != 1 || L->loss_at != L->elements - 1 || L->loss_chunk != L->chunks - 1)
		return fail(why, len, "--pipeline-layout '%s': the loss (L) must be named once, last in the last chunk",
		            x);
	if (t != c->m.layers)
		return fail(why, len, "--pipeline-layout '%s' names %lld transformer layers (t), the model has %lld", x,
		            t, c->m.layers);
	if (L->mtp != mtp)
		return fail(why, len,
		            "--pipeline-layout '%s' names %d MTP modules (m), the model has %lld (--mtp-num-layers)", x,
		            L->mtp, mtp);
	if (L->mtp && (L->mtp_split || !L->mtp_after || L->mtp_chunk / p->pp != p->vstages - 1))
		return fail(why, len,
		            "--pipeline-layout '%s': the MTP modules (m) must share one chunk, after every transformer "
		            "layer, in the last virtual stage of their pipeline stage (as Megatron-Core requires)",
		            x);
	return 0;
}

/* the layers split over stages and chunks (gen_chunk_layers) */
static int check_split(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	long long v = p->vstages, chunks = p->pp * v, F = p->first_layers, L = p->last_layers;
	int uneven = F || L, acct = p->split_embedding || p->split_loss;
	if (p->layout.chunks)
		return check_layout(c, why, len);
	if ((uneven || acct) && p->pp < 2)
		return fail(why, len, "%s needs --pp 2 or more",
		            F                    ? "--decoder-first-pipeline-num-layers"
		            : L                  ? "--decoder-last-pipeline-num-layers"
		            : p->split_embedding ? "--account-for-embedding-in-pipeline-split"
		                                 : "--account-for-loss-in-pipeline-split");
	if (uneven && acct)
		return fail(
		    why, len,
		    "--decoder-first/last-pipeline-num-layers and --account-for-embedding/loss-in-pipeline-split "
		    "exclude each other (as in Megatron-Core)");
	if (uneven) {
		long long middle = p->pp - (F > 0) - (L > 0), rest = m->layers - F - L;
		if (F % v || L % v)
			return fail(why, len,
			            "--decoder-%s-pipeline-num-layers %lld is not divisible by --virtual-stages %lld",
			            F % v ? "first" : "last", F % v ? F : L, v);
		if (rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && rest % (middle * v)))
			return fail(
			    why, len,
			    "--layers %lld minus the first and last stages' %lld is not divisible by the %lld middle "
			    "stages%s",
			    m->layers, F + L, middle, v > 1 ? " x --virtual-stages" : "");
		return 0;
	}
	long long slots = m->layers + p->split_embedding + p->split_loss;
	if (slots % chunks) {
		char vs_n[96] = "";
		if (v > 1)
			snprintf(vs_n, sizeof vs_n, " x --virtual-stages %lld = %lld model chunks", v, chunks);
		return fail(
		    why, len,
		    "--layers %lld%s is not divisible by --pp %lld%s (every model chunk holds the same number of "
		    "layers unless --decoder-first/last-pipeline-num-layers or "
		    "--account-for-embedding/loss-in-pipeline-split say otherwise)",
		    m->layers,
		    !acct                                 ? ""
		    : p->split_embedding && p->split_loss ? " + 2 (embedding, loss)"
		    : p->split_embedding                  ? " + 1 (embedding)"
		                                          : " + 1 (loss)",
		    p->pp, vs_n);
	}
	return 0;
}

static int check_parallel(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	long long v = p->vstages;
	if (p->sched == GEN_INTERLEAVED && p->pp < 2)
		return fail(why, len, "--schedule interleaved needs --pp 2 or more");
	if (p->sched != GEN_INTERLEAVED && v != 1)
		return fail(why, len, "--virtual-stages %lld needs --schedule interleaved", v);
	if (check_split(c, why, len))
		return -1;
	if (p->ep > 1 && !m->experts)
		return fail(why, len, "--ep %lld needs a model with experts (--experts)", p->ep);
	if (m->experts && m->experts % p->ep)
		return fail(why, len, "--experts %lld is not divisible by --ep %lld", m->experts, p->ep);
	if (p->dp % p->ep && (p->tp < 2 || p->ep % p->tp || p->dp % (p->ep / p->tp) || !p->sp || p->cp > 1 ||
	                      c->mode != GEN_TRAIN || p->dispatcher == GEN_DISP_ALLGATHER))
		return fail(
		    why, len,
		    "--ep %lld does not divide --dp %lld (expert parallelism splits the data-parallel ranks; in "
		    "training with --tp, --sp, --cp 1 and an all-to-all or flex dispatcher it may span the tp x dp "
		    "ranks, Megatron-Core's MoE parallel folding: --tp divides --ep and --ep / --tp divides --dp)",
		    p->ep, p->dp);
	double ranks = (double)p->tp * (double)p->cp * (double)p->pp * (double)p->dp;
	if (ranks > 1048576)
		return fail(why, len, "--tp x --cp x --pp x --dp is %.0f ranks; at most 1048576", ranks);
	if (p->cp > 16)
		return fail(why, len, "--cp %lld: at most 16 (each layer writes out every step of the ring)", p->cp);
	if (p->cp > 1 && c->seq % (2 * p->cp))
		return fail(
		    why, len,
		    "--cp %lld: --seq %lld is not divisible by 2 x --cp = %lld (each rank holds two chunks of the "
		    "sequence, for causal load balance)",
		    p->cp, c->seq, 2 * p->cp);
	if (p->cp > 1 && c->attn_impl == GEN_NAIVE)
		return fail(why, len, "--cp %lld needs a fused attention (--attn-impl flash2, flash3 or flash1)",
		            p->cp);
	if (p->cp > 1 && p->cp_comm == GEN_CP_A2A) {
		/* the all-to-alls split a rank's heads over the cp ranks (Transformer Engine asserts it for Q and K) */
		long long hl = c->m.heads / p->tp, kvl = c->m.kv_heads >= p->tp ? c->m.kv_heads / p->tp : 1;
		if (hl % p->cp || kvl % p->cp)
			return fail(
			    why, len,
			    "--cp %lld --cp-comm-type a2a: the %lld query and %lld key/value heads of a "
			    "tensor-parallel "
			    "rank are not both divisible by --cp (the all-to-alls split them over the cp ranks)",
			    p->cp, hl, kvl);
	}
	if (p->sp && gen_seq_local(c) % p->tp)
		return fail(why, len,
		            "--sp: the %lld tokens of a rank (--seq %lld / --cp %lld) are not divisible by --tp %lld",
		            gen_seq_local(c), c->seq, p->cp, p->tp);
	if (p->tp_overlap && p->tp > 1 && !p->sp) /* (with --tp 1 there is nothing to overlap: it changes nothing) */
		return fail(why, len,
		            "--tp-comm-overlap: needs --sp (it overlaps sequence parallelism's all-gathers and "
		            "reduce-scatters with the GEMMs, as Megatron-Core requires)");
	return 0;
}

static int check_train(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_parallel *p = &c->p;
	if (p->global_batch % (p->micro_batch * p->dp))
		return fail(
		    why, len,
		    "--global-batch %lld is not divisible by --micro-batch %lld x --dp %lld (every data-parallel "
		    "rank runs whole micro-batches)",
		    p->global_batch, p->micro_batch, p->dp);
	long long mb = p->global_batch / (p->micro_batch * p->dp);
	if (p->sched == GEN_INTERLEAVED && mb % p->pp)
		return fail(why, len,
		            "--schedule interleaved: %lld micro-batches per pipeline is not a multiple of --pp %lld",
		            mb, p->pp);
	if (p->grad_sync == GEN_GS_AFTER && p->zero >= 2)
		return fail(why, len,
		            "--grad-sync after with --zero %d: ZeRO-%d reduce-scatters every micro-batch's gradients "
		            "(use --zero 0 or 1)",
		            p->zero, p->zero);
	if (p->zero == 3 && p->pp > 1)
		return fail(why, len,
		            "--zero 3 with --pp %lld: ZeRO-3 is not supported with pipeline parallelism (use --zero 1 "
		            "or 2, or --pp 1)",
		            p->pp);
	return 0;
}

/* a hybrid pattern (m->hybrid) against the model, the mode and the layout */
static int check_hybrid(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	const char *x = m->hybrid;
	if (!x[0])
		return 0;
	size_t bad = strspn(x, "M*-E");
	if (x[bad])
		return fail(why, len,
		            "--hybrid-pattern '%s': '%c' at %zu is not a layer (M Mamba-2, * attention, - MLP, E "
		            "mixture of experts)",
		            x, x[bad], bad + 1);
	if ((long long)strlen(x) != m->layers)
		return fail(why, len, "--hybrid-pattern names %zu layers, --layers says %lld", strlen(x), m->layers);
	if (strchr(x, 'E') && !m->experts)
		return fail(why, len, "--hybrid-pattern '%s': its 'E' layers need --experts", x);
	if (!strchr(x, 'E') && m->experts)
		return fail(why, len, "--experts %lld: the hybrid pattern '%s' has no 'E' layer to hold them",
		            m->experts, x);
	if (strchr(x, 'M')) {
		if (!m->mamba_heads || !m->mamba_head_dim || !m->mamba_state || !m->mamba_groups)
			return fail(why, len,
			            "--hybrid-pattern: its Mamba layers need --mamba-heads, --mamba-head-dim, "
			            "--mamba-state and --mamba-groups");
		if (m->mamba_heads % m->mamba_groups)
			return fail(why, len, "--mamba-groups %lld does not divide --mamba-heads %lld", m->mamba_groups,
			            m->mamba_heads);
		if (m->mamba_groups % p->tp)
			return fail(
			    why, len,
			    "--mamba-groups %lld is not divisible by --tp %lld (each tensor-parallel rank holds "
			    "groups/tp groups and their heads)",
			    m->mamba_groups, p->tp);
	}
	if (c->mode != GEN_TRAIN)
		return fail(why, len,
		            "%s is a hybrid Mamba model (--hybrid-pattern), written for training only: a Mamba layer's "
		            "decode step (its recurrent state update) is not modelled",
		            m->name);
	if ((m->mtp && !m->experts) || m->window || m->dense_layers || m->attn != GEN_MHA)
		return fail(
		    why, len,
		    "--hybrid-pattern with %s: a hybrid model's layers are its pattern's (no sliding windows, "
		    "leading dense layers, MLA or compressed attention; an MTP module is an attention and an MoE "
		    "sublayer, \"*E\", so it needs --experts)",
		    m->mtp && !m->experts ? "--mtp-num-layers"
		    : m->window           ? "--window"
		    : m->dense_layers     ? "--dense-layers"
		    : m->attn == GEN_MLA  ? "MLA"
		                          : "compressed attention");
	if (p->cp > 1)
		return fail(why, len,
		            "--hybrid-pattern with --cp %lld: context parallelism over Mamba layers is not "
		            "modelled (use --cp 1)",
		            p->cp);
	return 0;
}

/* DeepSeek-V4's compressed attention (gen_csa.c): training on one rank's whole sequence, every layer MoE, its own
   shape whole, no more alternating layers than a chunk's runs hold */
static int check_csa(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	if (m->attn != GEN_CSA)
		return 0;
	if (c->mode != GEN_TRAIN)
		return fail(
		    why, len,
		    "DeepSeek-V4's compressed attention is written for training only: its decode (the compressed "
		    "key cache, the indexer's pick at each step) is not modelled (use --mode train)");
	if (c->p.tp > 1 || c->p.cp > 1)
		return fail(why, len,
		            "--%s %lld with DeepSeek-V4's compressed attention: its one key/value head, compressor and "
		            "indexer are modelled on one rank's whole sequence (use --tp 1 --cp 1)",
		            c->p.tp > 1 ? "tp" : "cp", c->p.tp > 1 ? c->p.tp : c->p.cp);
	if (m->dense_layers || !m->experts)
		return fail(why, len,
		            "DeepSeek-V4's compressed attention is written for models whose every layer is "
		            "a mixture of experts (no --dense-layers)");
	if (m->kv_heads != 1 || m->window_skip || m->qk_norm)
		return fail(why, len,
		            "DeepSeek-V4's compressed attention has one key/value head, a window on every layer and no "
		            "QK-norm (not with --kv-heads, --window-skip-freq or --qk-norm)");
	if (m->o_groups < 1 || m->heads % m->o_groups || m->o_lora < 1 || m->q_lora < 1 || m->window < 1 ||
	    m->csa_ratio < 1 || m->hca_ratio < 1 || m->idx_heads < 1 || m->idx_dim < 1 || m->idx_topk < 1 ||
	    m->rope_dim < 1 || m->rope_dim > m->head_dim)
		return fail(why, len,
		            "DeepSeek-V4's compressed attention: its shape is inconsistent (heads in whole "
		            "output groups, a window, both ratios and the indexer)");
	long long runs = 0; /* of layers of one compression ratio (the trace writes each run as one repeat) */
	for (long long l = 0; l < m->layers; l++)
		runs += l == 0 || gen_layer_compress(m, l) != gen_layer_compress(m, l - 1);
	if (runs > GEN_RUNS_MAX)
		return fail(
		    why, len,
		    "--layers %lld: DeepSeek-V4's layers alternate CSA and HCA, %lld runs of one kind, at most %d",
		    m->layers, runs, GEN_RUNS_MAX);
	if (c->seq < m->hca_ratio)
		return fail(
		    why, len,
		    "--seq %lld is shorter than the %lld keys DeepSeek-V4's heavily compressed layers pool into one",
		    c->seq, m->hca_ratio);
	return 0;
}

int gen_check(const struct gen_config *c, char *why, size_t len)
{
	if (check_hybrid(c, why, len) || check_shape(c, why, len) || check_parallel(c, why, len) ||
	    check_csa(c, why, len))
		return -1;
	if (!(c->dropout >= 0 && c->dropout < 1))
		return fail(why, len, "--dropout %g: expected a probability from 0 up to (not including) 1",
		            c->dropout);
	if (c->dropout > 0 && c->mode != GEN_TRAIN)
		return fail(why, len, "--dropout belongs to --mode train");
	if (c->dropout > 0 && (c->attn_impl == GEN_FLASH3 || c->attn_impl == GEN_CUDNN))
		return fail(why, len, "--dropout with --attn-impl %s: %s has no dropout (use flash2)",
		            gen_attn_impl_name(c->attn_impl),
		            c->attn_impl == GEN_FLASH3 ? "FlashAttention-3" : "the model's cuDNN kernel");
	long long hd = c->m.attn == GEN_MLA ? c->m.nope_dim + c->m.rope_dim : c->m.head_dim; /* of Q and K */
	if (c->attn_impl == GEN_FLASH1 && (hd > 128 || hd % 8))
		return fail(why, len,
		            "--attn-impl flash1: head dim %lld: the original FlashAttention has kernels for head dims "
		            "that are multiples of 8 up to 128 (use flash2)",
		            hd);
	if (c->mode == GEN_TRAIN)
		return check_train(c, why, len);
	return 0;
}
