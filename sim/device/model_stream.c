/*
 * model_stream.c -- memory-bound kernels: elementwise and row ops, the
 * embedding gather and copies (device to device, host to device over PCIe),
 * timed by bytes, pipes and Little's law.
 *
 * Invariants (asserted in Debug builds): a stream's device-memory bytes are at
 * most its L2 bytes; its time is at least each resource's time alone (the
 * slowest of them, plus launch and latency); a kernel has at least one CTA.
 */
#include "model_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* memory-bound kernels                                                 */

/* The device-memory bandwidth a written byte of a stream takes, in read bytes: model.dram_write_cost where
   reads and writes mix (each switch of the bus's direction costs a turnaround), fewer switches where writes
   outnumber reads, none for a stream that only writes (a memset, a fill: at 98-99% of peak on the lent H100 and
   H200, traces/kineto/, where a copy's reads and writes reach 88-90%: rows LM023, LHM023). */
static double write_cost_of(const struct arch_chip *c, double rd, double wr)
{
	return wr > 0 ? 1 + (c->model.write_cost - 1) * fmin(1, rd / wr) : c->model.write_cost;
}

void stream_time(const struct arch_chip *c, const struct stream_in *s, struct dm_result *r, FILE *ex)
{
	struct memsys ms;
	memsys_of(c, &ms);
	int gi = pick_vector_unit(c);
	const struct arch_unit *u = &c->units[gi];
	double units = (double)u->count;
	double resident = dmin(s->threads, units * unit_threads(u));
	int in_l2 = s->warm && c->l2.present && s->rd <= 0.5 * c->l2.size_bytes;
	double lat_s = in_l2 ? ms.lat_l2 : ms.lat_dram;
	double fly_B = resident * s->fly_per_thread;
	double little_Bps = fly_B / lat_s;
	double bw_Bps = in_l2 && ms.l2_bw > 0 ? ms.l2_bw : ms.dram_bw;
	double rd_dram = in_l2 ? 0 : s->rd;
	double t[B_COUNT] = {0};
	if (in_l2)
		t[B_L2] = (s->rd + s->wr) / bw_Bps;
	else {
		t[B_DRAM] = (s->rd + s->wr * write_cost_of(c, s->rd, s->wr)) / ms.dram_bw;
		if (ms.l2_bw > 0)
			t[B_L2] = (s->rd + s->wr + s->l2_extra) / ms.l2_bw;
	}
	t[B_LATENCY] = (s->rd + s->wr) / little_Bps;
	/* chiplets: an interleaved stream reads and writes (n-1)/n of its bytes on other dies */
	double d2d = in_l2 ? 0 : ms.remote * (s->rd + s->wr);
	t[B_D2D] = ms.d2d_bw > 0 ? d2d / ms.d2d_bw : 0;
	double lanes = 0, sfu = 0, ints = 0;
	int int_pipe = 1;
	for (int g = 0; g < c->nunits; g++) {
		const struct arch_unit *v = &c->units[g];
		lanes += v->vec[DT_FP32] * v->count * v->clock_hz;
		sfu += v->sfu * v->count * v->clock_hz;
		ints += int_lanes(v) * v->count * v->clock_hz;
		int_pipe &= v->vec[DT_INT32] > 0;
	}
	/* a chip whose config declares no vector lanes (a TPU, an LPU): arithmetic is not a limit here; integer
	   operations run beside the fp32 ones on a pipe of their own (vector.int32 lanes), else on the same lanes */
	double vec_s = lanes > 0 ? s->vec_ops / lanes : 0, int_s = ints > 0 ? s->int_ops / ints : 0;
	t[B_VECTOR] = int_pipe ? dmax(vec_s, int_s) : vec_s + int_s;
	t[B_SFU] = sfu > 0 ? s->sfu_ops / sfu : lanes > 0 ? s->sfu_ops * 4 / lanes : 0; /* no SFU: ~4 lane ops */
	double body = 0;
	for (int i = 0; i < B_COUNT; i++)
		body = dmax(body, t[i]);
	double launch = c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + lat_s + body;
	memcpy(r->t_res, t, sizeof t);
	r->bytes_dram = rd_dram + (in_l2 ? 0 : s->wr);
	r->bytes_l2 = s->rd + s->wr + s->l2_extra;
	r->bytes_smem = 0;
	r->bytes_d2d = d2d;
	r->clock_hz = u->clock_hz;
	r->unit_group = gi;
	r->uses_matrix = 0;
	r->peak_flops = 2 * lanes;
	r->bound = bound_of(t, launch + lat_s, r->time_s);
	assert(r->bytes_dram <= r->bytes_l2 && body <= r->time_s && dm_ok(r->time_s));
	struct dm_kernel *k = &r->kern;
	long long ctas = (long long)ceil(s->threads / 256);
	snprintf(k->name, sizeof k->name, "stream_256t");
	assert(ctas >= 1); /* threads >= 1: op sizes are positive */
	k->ctas = ctas;
	k->ctas_per_unit = (int)dmax(1, dmin((double)u->max_ctas, unit_threads(u) / 256));
	k->waves = (double)k->ctas / (units * k->ctas_per_unit);
	k->kernels = 1;
	if (ex) {
		xp(ex, "memory-bound kernel on %ld x %s: reads %.4g MB, writes %.4g MB%s\n", u->count, u->name,
		   s->rd / 1e6, s->wr / 1e6, in_l2 ? " (input resident in L2)" : "");
		xp(ex,
		   "bandwidth: %s %.0f GB/s reachable; bytes in flight %.0f KiB (%.0f threads x %.0f B) / "
		   "latency %.0f ns = %.0f GB/s (Little's law)\n",
		   in_l2 ? "L2" : "device memory", bw_Bps / 1e9, fly_B / 1024, resident, s->fly_per_thread, lat_s * 1e9,
		   little_Bps / 1e9);
		if (ms.dies > 1)
			xp(ex,
			   "chiplets: %d dies, %.0f%% of memory on other dies: %.4g MB cross at %.0f GB/s (%.2f us)\n",
			   ms.dies, ms.remote * 100, d2d / 1e6, ms.d2d_bw / 1e9, t[B_D2D] * 1e6);
		xp(ex, "pipes: %.4g G lane ops (%.2f us), %.4g G special-function ops (%.2f us)\n", s->vec_ops / 1e9,
		   vec_s * 1e6, s->sfu_ops / 1e9, t[B_SFU] * 1e6);
		if (s->int_ops > 0)
			xp(ex, "index arithmetic: %.4g G integer ops (%.2f us on %s)\n", s->int_ops / 1e9, int_s * 1e6,
			   int_pipe ? "the int32 lanes" : "the fp32 lanes");
	}
}

/* Per element of an elementwise op: bytes read and written (in units of the
   element size, plus fp32 state for adam), lane ops, SFU ops and integer ops. */
struct elem_cost {
	double rd, wr, vec, sfu, ints;
};

/* A permute (`x.transpose(1, 2).contiguous()`, as torch SDPA's backward makes its inputs contiguous), and any
   pointwise op whose operands are not contiguous or are broadcast (strided=1), runs as PyTorch's TensorIterator
   runs them (aten/src/ATen/native/cuda/Loops.cuh: gpu_kernel_impl takes the vectorized kernel only when every
   operand is contiguous, else elementwise_kernel<128, 4>): each thread takes 4 elements, and finds each one's
   address in every operand with an OffsetCalculator (aten/src/ATen/cuda/detail/OffsetCalculator.cuh) over the 4
   dims, which do not coalesce. Per dim: IntDivider's divmod (IntegerDivider.cuh: a high multiply, an add and a
   shift for the quotient, a multiply-subtract for the remainder), a multiply-add per operand for its offset, the
   loop's compare-and-branch: 5 + operands. Per element: its linear index (1), a 64-bit address per operand (2
   each), the bound check (2). A copy (2 operands): 4 x 7 + 7 = 35 integer operations. */
#define STRIDED_DIMS       4
#define STRIDED_PER_THREAD 4 /* elements a thread loads before it stores (thread_work_size) */

static double strided_int_ops(double operands)
{
	return STRIDED_DIMS * (5 + operands) + 3 + 2 * operands;
}

static struct elem_cost elem_cost_of(const struct op *op)
{
	double e = dt_bytes(op->dtype);
	struct elem_cost k = {e, e, 1, 0, 0};
	switch (op->elem) {
	case EL_ADD:
	case EL_MUL: k.rd = 2 * e; break;
	case EL_GELU: k.vec = 25, k.sfu = 0; break; /* exact erf-based GELU (the framework default): ~20-op erff */
	case EL_SILU: k.vec = 12, k.sfu = 2; break; /* accurate expf (~8 ops + ex2) and a division */
	case EL_SWIGLU: k.rd = 2 * e, k.vec = 13, k.sfu = 2; break;
	case EL_RELU: break;
	case EL_LAYERNORM: k.vec = 14; break; /* Welford mean/variance, normalise, scale and shift, conversions */
	case EL_RMSNORM: k.vec = 8; break;
	case EL_SOFTMAX: k.vec = 30, k.sfu = 2; break; /* max, sum of exp, exp again to write: 2 accurate expf */
	case EL_ROPE: k.vec = 4; break;
	case EL_CAST: k.wr = dt_bytes(op->to_dtype >= 0 ? op->to_dtype : DT_FP32); break;
	case EL_CAST_TRANSPOSE: /* two copies; scaling and the amax of the output: 2 lane ops */
		k.wr = 2 * dt_bytes(op->to_dtype >= 0 ? op->to_dtype : DT_FP32), k.vec = 2;
		break;
	case EL_ADAM: k.rd = e + 12, k.wr = 12 + e, k.vec = 12, k.sfu = 2; break;
	case EL_READ: k.wr = 0; break;
	case EL_TRIAD: k.rd = 2 * e, k.vec = 1; break;
	case EL_COPY: k.vec = 0; break;
	case EL_PERMUTE: k.vec = 0; break;
	case EL_FILL: k.rd = 0, k.vec = 0; break;
	/* the backward of a norm, per element: x - mean and its scale (2), dy times the weight (1), the two row sums
	   (2), dx from them (3), the weight gradient's partial sums (2), conversions (2); RMSNorm has no mean */
	case EL_LAYERNORM_BWD: k.rd = 2 * e, k.vec = 12; break;
	case EL_RMSNORM_BWD: k.rd = 2 * e, k.vec = 9; break;
	case EL_SOFTMAX_BWD: k.rd = 2 * e, k.vec = 4; break; /* dy times y, its row sum, (dy - sum) times y */
	case EL_COUNT: break;
	}
	if (op->elem == EL_PERMUTE || op->strided) /* the inputs and the output */
		k.ints += strided_int_ops(k.rd / e + 1);
	return k;
}

/* A second kernel of an op, run after the first: its time, bytes and resources add to r's. */
static void add_kernel(struct dm_result *r, const struct dm_result *k)
{
	r->time_s += k->time_s;
	r->bytes_dram += k->bytes_dram, r->bytes_l2 += k->bytes_l2, r->bytes_d2d += k->bytes_d2d;
	for (int i = 0; i < B_COUNT; i++)
		r->t_res[i] += k->t_res[i];
	r->kern.kernels += k->kern.kernels;
}

/* A norm's weight gradient (the sums over rows of dy * x-hat, and of dy for LayerNorm's bias), the kernel after
   the input gradient's. Transformer Engine's and Apex's fused backward (ln_bwd / rmsnorm_bwd kernels, then
   ln_bwd_finalize) keep per-CTA partial sums in the input gradient's pass and reduce them in a small kernel,
   about one partial row per unit; PyTorch's (layer_norm_kernel.cu: the grad-input kernel, then
   GammaBetaBackward; split=1) reads x and dy again in a column reduction of its own. */
static void norm_wgrad(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex)
{
	double n = (double)op->elems, cols = (double)op->cols, e = dt_bytes(op->dtype);
	double weights = op->elem == EL_LAYERNORM_BWD ? 2 : 1, fp32 = 4;
	const struct arch_unit *u = &c->units[pick_vector_unit(c)];
	struct stream_in s = {0};
	if (op->split) {
		s.rd = 2 * n * e, s.vec_ops = n * (weights + 2);
		s.threads = ceil(n / (c->model.bytes_per_thread / e));
		s.fly_per_thread = 2 * c->model.bytes_per_thread;
	} else {
		double parts = (double)u->count * weights * cols; /* just written: read from L2 */
		s.rd = parts * fp32, s.vec_ops = parts, s.warm = 1;
		s.threads = ceil(s.rd / c->model.bytes_per_thread);
		s.fly_per_thread = c->model.bytes_per_thread;
	}
	s.wr = weights * cols * e;
	struct dm_result w;
	memset(&w, 0, sizeof w);
	stream_time(c, &s, &w, NULL);
	add_kernel(r, &w);
	if (ex)
		xp(ex, "weight gradient: %s, %.4g MB read (%.2f us)\n",
		   op->split ? "a column reduction that reads x and dy again (split=1)"
		             : "the partial sums of the input gradient's CTAs reduced",
		   s.rd / 1e6, w.time_s * 1e6);
}

/* PyTorch's own softmax kernels (aten/src/ATen/native/cuda/SoftMax.cu; eager=1), a CTA per row: a row that fits
   the 48 KiB of shared memory a CTA may take without opting in (sharedMemPerBlock) is read once into it
   (cunn_SoftMaxForwardSmem, cunn_SoftMaxBackwardSmem); a longer one is read again from memory for each pass:
   the forward (cunn_SoftMaxForward) reads its input for the maximum, for the sum of exponentials and to write,
   three reads; the backward (cunn_SoftMaxBackward) reads the output gradient for its row sum and again with the
   output to write, three tensor reads where the fused kernel reads two (log_softmax's, as cross-entropy runs it;
   softmax's backward first multiplies the gradient by the output in a kernel of its own, not counted here). The passes
   after the first hit L2 when the rows in flight (a CTA per row on every unit, as many as its threads allow) fit half
   of it, else they come from device memory again. */
#define EAGER_SMEM_B 49152.0
static void eager_softmax(const struct arch_chip *c, const struct op *op, double tpr, struct stream_in *s, FILE *ex)
{
	double e = dt_bytes(op->dtype), n = (double)op->elems, row_B = (double)op->cols * e;
	int bwd = op->elem == EL_SOFTMAX_BWD;
	if (row_B < EAGER_SMEM_B) { /* the row in shared memory: one read of each input, as the fused kernel */
		if (ex)
			xp(ex, "PyTorch's softmax kernel, the row (%.0f B) in shared memory: one read\n", row_B);
		return;
	}
	double reads = 3, tensors = bwd ? 2 : 1; /* tensor reads per element; the inputs each pass touches */
	s->rd = n * e;                           /* the first pass: the input (the backward's product) */
	double again_B = n * e * (reads - 1);    /* the passes after it */
	const struct arch_unit *u = &c->units[pick_vector_unit(c)];
	double rows_fly = (double)u->count * dmax(1, floor(unit_threads(u) / tpr));
	double fly_B = rows_fly * row_B * tensors;
	int hit = c->l2.present && fly_B <= 0.5 * c->l2.size_bytes;
	if (hit)
		s->l2_extra = again_B;
	else
		s->rd += again_B;
	if (ex)
		xp(ex,
		   "PyTorch's softmax kernel, rows (%.0f KiB) past shared memory: %.0f reads of each element, the "
		   "later ones from %s (%.0f rows in flight, %.1f MiB)\n",
		   row_B / 1024, reads, hit ? "L2" : "device memory", rows_fly, fly_B / 1048576);
}

void elem_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex)
{
	elem_time_it(c, op, r, ex, NULL);
}

void elem_time_it(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, struct dm_iter *it)
{
	struct elem_cost k = elem_cost_of(op);
	double n = (double)op->elems, e = dt_bytes(op->dtype);
	struct stream_in s = {0};
	s.rd = n * k.rd, s.wr = n * k.wr, s.vec_ops = n * k.vec, s.sfu_ops = n * k.sfu, s.int_ops = n * k.ints;
	s.warm = op->warm;
	/* elements a thread takes: one vector load per input stream, or the element loads of a strided op */
	int strided = op->elem == EL_PERMUTE || op->strided;
	double per_thread = strided ? STRIDED_PER_THREAD : c->model.bytes_per_thread / e;
	s.threads = ceil(n / per_thread);
	/* bytes a thread has in flight: a vector load per input stream, or a strided op's element loads (a fill: its
	   one store stream) */
	double streams = k.rd > 0 ? k.rd / e : k.wr / e;
	s.fly_per_thread = strided ? STRIDED_PER_THREAD * streams * e : c->model.bytes_per_thread * streams;
	int rowop = op_elem_is_row(op->elem);
	if (rowop) {
		double rows = n / (double)op->cols;
		double tpr = dmin(1024, ceil((double)op->cols / per_thread)); /* a CTA per row */
		s.threads = rows * tpr;
		/* a row too long for registers is read again from L2 */
		double row_bytes = (double)op->cols * e;
		if (op->eager)
			eager_softmax(c, op, tpr, &s, ex);
		else if (row_bytes > 1024 * per_thread * e)
			s.l2_extra = s.rd;
		s.sfu_ops += rows; /* rsqrt or reciprocal per row */
	}
	stream_time(c, &s, r, ex);
	if (it) { /* a CTA of 256 threads, each one vector load per input stream: the model's time per CTA */
		int gi = pick_vector_unit(c);
		const struct arch_unit *u = &c->units[gi];
		struct memsys ms;
		memsys_of(c, &ms);
		double cta_its = s.threads / 256, per = (double)u->count * u->clock_hz / cta_its;
		memset(it, 0, sizeof *it);
		it->kind = OP_ELEM, it->unit_group = gi, it->matrix = 0, it->dtype = op->dtype;
		it->clock_hz = u->clock_hz, it->macs_clk = u->vec[DT_FP32];
		it->tile_m = (int)per_thread, it->tile_n = 256, it->tile_k = 0, it->stages = 1;
		it->warps = (int)dmax(1, 256 / (double)u->warp_size);
		it->ctas_per_unit = (int)dmax(1, dmin((double)u->max_ctas, unit_threads(u) / 256));
		it->ctas = (long long)ceil(cta_its);
		it->iters = 1;
		it->bytes_it = s.rd / cta_its, it->wbytes_it = s.wr / cta_its;
		it->hit = s.warm && c->l2.present && s.rd <= 0.5 * c->l2.size_bytes;
		it->lat_l2 = ms.lat_l2 * u->clock_hz, it->lat_dram = ms.lat_dram * u->clock_hz;
		it->l2_Bpc = ms.l2_bw > 0 ? ms.l2_bw / (double)u->count / u->clock_hz : 0;
		it->dram_Bpc = ms.dram_bw / (double)u->count / u->clock_hz;
		it->write_cost = write_cost_of(c, s.rd, s.wr);
		it->lane_item = k.vec, it->sfu_item = k.sfu;
		it->c_vector = r->t_res[B_VECTOR] * per, it->c_sfu = r->t_res[B_SFU] * per;
		it->c_l2 = r->t_res[B_L2] * per, it->c_dram = r->t_res[B_DRAM] * per;
		it->c_latency = r->t_res[B_LATENCY] * per;
		it->c_total = dmax(dmax(it->c_vector, it->c_sfu), dmax(dmax(it->c_l2, it->c_dram), it->c_latency));
	}
	if (ex && rowop)
		xp(ex, "row op: %lld rows of %lld, one CTA per row\n", op->elems / op->cols, op->cols);
	/* a norm's backward: its weight gradient's kernel after the pass above (the iteration is that pass's) */
	if (op->elem == EL_LAYERNORM_BWD || op->elem == EL_RMSNORM_BWD)
		norm_wgrad(c, op, r, ex);
}

/* ------------------------------------------------------------------ */
/* embedding                                                            */

/* A gather of op->tokens rows of op->dim elements: the rows, the token ids (4 B each), the output. */
void embed_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex)
{
	double e = dt_bytes(op->dtype), rows = (double)op->tokens, row = (double)op->dim * e;
	struct stream_in s = {0};
	s.rd = rows * row + rows * 4, s.wr = rows * row; /* gathered rows, the token ids, the output */
	s.threads = rows * dmin(1024, ceil(row / c->model.bytes_per_thread));
	s.fly_per_thread = c->model.bytes_per_thread;
	stream_time(c, &s, r, ex);
	snprintf(r->kern.name, sizeof r->kern.name, "embedding_gather");
}

/* ------------------------------------------------------------------ */
/* copies                                                               */

/* Payload share of PCIe transaction packets: 128-byte payloads (the usual
   max payload size of a GPU's root port) behind ~24 bytes of TLP header,
   sequence number, LCRC and framing. */
#define PCIE_PAYLOAD      128.0
#define PCIE_TLP_OVERHEAD 24.0

int copy_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	double t[B_COUNT] = {0};
	struct memsys ms;
	memsys_of(c, &ms);
	double launch = c->model.launch_s;
	if (op->src == PLACE_HOST && op->dst == PLACE_HOST) {
		snprintf(why, wl, "host to host does not involve the device");
		return -1;
	}
	if (op->src == PLACE_HBM && op->dst == PLACE_HBM) {
		t[B_DRAM] = op->bytes * (1 + c->model.write_cost) / ms.dram_bw;
		r->bytes_dram = 2 * op->bytes;
		r->bytes_d2d = ms.remote * 2 * op->bytes; /* source and destination both interleaved */
		t[B_D2D] = ms.d2d_bw > 0 ? r->bytes_d2d / ms.d2d_bw : 0;
		r->time_s = launch + ms.lat_dram + dmax(t[B_DRAM], t[B_D2D]);
		r->bound = bound_of(t, launch + ms.lat_dram, r->time_s);
		xp(ex, "device copy: %.4g MB read and written at %.0f GB/s\n", op->bytes / 1e6, ms.dram_bw / 1e9);
	} else {
		const struct arch_link *l = NULL;
		for (int i = 0; i < c->nlinks; i++)
			if (!strcmp(c->links[i].kind, "pcie"))
				l = &c->links[i];
		if (!l) {
			snprintf(why, wl, "%s has no PCIe link to the host (links.* of kind pcie)", c->name);
			return -1;
		}
		double raw_Bps = arch_link_bw(l) * (double)l->count;
		double payload_Bps = raw_Bps * PCIE_PAYLOAD / (PCIE_PAYLOAD + PCIE_TLP_OVERHEAD);
		double lat_s = l->latency_s > 0 ? l->latency_s : 1e-6;
		t[B_LINK] = op->bytes / payload_Bps;
		r->bytes_link = op->bytes;
		r->bytes_dram = op->bytes;
		r->time_s = launch + lat_s + t[B_LINK];
		r->bound = bound_of(t, launch + lat_s, r->time_s);
		xp(ex, "host copy over PCIe gen %ld x%ld: %.1f GB/s raw, %.1f GB/s of payload (%.0f-byte TLPs)\n",
		   l->pcie_gen, l->pcie_lanes, raw_Bps / 1e9, payload_Bps / 1e9, PCIE_PAYLOAD);
	}
	t[B_LAUNCH] = launch;
	memcpy(r->t_res, t, sizeof t);
	r->clock_hz = c->units[0].clock_hz;
	snprintf(r->kern.name, sizeof r->kern.name, "memcpy_%s_to_%s", op->src == PLACE_HOST ? "host" : "hbm",
	         op->dst == PLACE_HOST ? "host" : "hbm");
	r->kern.kernels = 1;
	return 0;
}
