/*
 * gen_csa.c -- the arithmetic of DeepSeek-V4's hybrid attention for `sim gen` (attn = GEN_CSA): which layers
 * compress their keys and how much, the keys a query attends to, the weights of such a layer, the tensors it
 * keeps, and its FLOPs as Megatron-Bridge counts them (training/utils/flop_utils.py, transformer_flops, the
 * dsv4_hybrid branch). The layer's kernels are gen_blocks.c's (build_attn_csa); docs/workloads.md describes both.
 *
 * The layer (DeepSeek-V4 report; Megatron-Core's experimental_attention_variant "dsv4_hybrid", configured by
 * Megatron-Bridge's DeepSeekV4ModelConfig): the queries come from a low-rank q_lora as MLA's do, and attend as MQA
 * to one key/value head of head_dim (the key is the value); every query sees the last `window` keys, and past them
 * the keys of its layer's compressor: none (ratio 0), every csa_ratio keys pooled to one of which a lightning
 * indexer picks idx_topk for each query (CSA), or every hca_ratio keys pooled to one, all of them seen (HCA).
 * The output goes down to o_lora by groups of heads and back up to h.
 */
#include "gen.h"

long long gen_layer_compress(const struct gen_model *m, long long layer)
{
	if (m->attn != GEN_CSA || layer < m->csa_first || layer >= m->layers)
		return 0;
	return (layer - m->csa_first) % 2 == 0 ? m->csa_ratio : m->hca_ratio;
}

/* whether a layer of that ratio has the indexer */
static int indexed(const struct gen_model *m, long long ratio)
{
	return ratio > 0 && ratio == m->csa_ratio;
}

/* The mean keys of one query at sequence length s, as flop_utils.py takes them: the window, and the compressed
   keys: CSA's topk e = min(idx_topk, s / ratio) less the share the first queries cannot see yet,
   e (1 - e ratio / (2 s)); HCA's s / ratio compressed keys, half of them seen on average (causal). */
double gen_csa_keys(const struct gen_model *m, long long ratio, double s)
{
	double w = (double)m->window;
	if (ratio <= 0)
		return w;
	double n = (double)((long long)s / ratio);
	if (!indexed(m, ratio))
		return w + n / 2;
	double e = (double)m->idx_topk < n ? (double)m->idx_topk : n;
	return w + e * (1 - e * (double)ratio / (2 * s));
}

/* the weights of one layer's attention: wq_a, the query norm, wq_b, wkv and its norm, the grouped wo_a and wo_b;
   the compressor's key and gate projections (two sets of each where CSA's windows overlap); the indexer's query
   projection from the query latent, its head weights and its own compressor */
double gen_csa_attn_params(const struct gen_model *m, long long ratio)
{
	double h = (double)m->hidden, d = (double)m->head_dim, a = (double)m->heads, ql = (double)m->q_lora;
	double ol = (double)m->o_lora, og = (double)m->o_groups;
	double n = h * ql + ql + ql * a * d + h * d + d + a * d * ol + og * ol * h;
	if (ratio > 0)
		n += h * 2 * d * (indexed(m, ratio) ? 2 : 1);
	if (indexed(m, ratio))
		n += ql * (double)(m->idx_heads * m->idx_dim) + h * (double)m->idx_heads + h * 4 * (double)m->idx_dim;
	return n;
}

/* the hyper-connections' mixing weights of one sublayer: (2 + hc) hc coefficients a token from h */
double gen_hc_params(const struct gen_model *m)
{
	return m->hc > 1 ? (double)((2 + m->hc) * m->hc * m->hidden) : 0;
}

/* bytes a token of one layer's attention keeps for the backward (q: the bytes of a quantized copy, as
   attn_act_token in gen.c): the query latent, the queries before and after their norm, the key/value head before
   and after its norm, the attention's output (and its quantized copy for wo_a), wo_a's output (and its copy), the
   compressor's output, and the indexer's queries, head weights, compressed keys and the picked indices (4 bytes
   each) */
double gen_csa_act_token(const struct gen_model *m, long long ratio, double q)
{
	double copy = q < 2 ? q : 0, d = (double)m->head_dim, a = (double)m->heads;
	double n = 2.0 * m->q_lora + 4 * a * d + 4 * d + (2 + copy) * a * d + (2 + copy) * m->o_groups * m->o_lora;
	if (ratio > 0)
		n += 2 * 2 * d * (indexed(m, ratio) ? 2 : 1);
	if (indexed(m, ratio))
		n += 2.0 * m->idx_heads * m->idx_dim + 2.0 * m->idx_heads + 2 * 4.0 * m->idx_dim + 4.0 * m->idx_topk;
	return n;
}

/* Forward FLOPs of the attention core of one sequence of s tokens over the layers and `mtp` MTP modules: the
   scores and the weighted values over each query's keys (gen_csa_keys), and the indexer's scores of each query
   against every compressed key of its sequence (the indexer's kernel scores them all; the causal ones count). */
double gen_csa_core_flops(const struct gen_model *m, double s, long long mtp)
{
	double f = 0, pair = 2.0 * (double)m->heads * 2 * (double)m->head_dim;
	for (long long l = 0; l < m->layers + mtp; l++) {
		long long r = gen_layer_compress(m, l);
		f += pair * s * gen_csa_keys(m, r, s);
		if (indexed(m, r))
			f += 2.0 * (double)(m->idx_heads * m->idx_dim) * s * (double)((long long)s / r);
	}
	return f;
}

/* Megatron-Bridge's count of the attention of a token (multiply-adds; the caller multiplies by 6 for the forward
   and backward), the dsv4_hybrid branch: the projections q_lora (h + a d + 1) + h d + d + a d o_lora +
   o_groups o_lora h a layer (MTP modules too), each layer's sparse attention a (keys) d 2, its compressor
   h 2 d 2 (CSA) or h d 2 (HCA), and the indexer h 2 d_i 2 + q_lora a_i d_i + h a_i + a_i d_i s / ratio. */
double gen_csa_mcore_attn(const struct gen_config *c)
{
	const struct gen_model *m = &c->m;
	double s = (double)c->seq, h = (double)m->hidden, d = (double)m->head_dim, a = (double)m->heads;
	double ql = (double)m->q_lora, ai = (double)m->idx_heads, di = (double)m->idx_dim, n = 0;
	double proj =
	    ql * (h + a * d + 1) + h * d + d + a * d * (double)m->o_lora + (double)(m->o_groups * m->o_lora) * h;
	for (long long l = 0; l < m->layers + m->mtp; l++) {
		long long r = gen_layer_compress(m, l);
		n += proj + a * gen_csa_keys(m, r, s) * d * 2;
		if (r > 0)
			n += h * d * 2 * (indexed(m, r) ? 2 : 1);
		if (indexed(m, r))
			n += h * 2 * di * 2 + ql * ai * di + h * ai + ai * di * (double)((long long)s / r);
	}
	return n;
}
