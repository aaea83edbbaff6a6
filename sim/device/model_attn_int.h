/*
 * model_attn_int.h -- private to the attention kernels (model_attn.c: the
 * table, decode, paged, naive and FlashAttention-1; model_flash.c:
 * FlashAttention-2/-3 and cuDNN's fused attention): the costs they share and
 * model_flash.c's entry points, which model_attn.c's table names.
 */
#ifndef SIM_MODEL_ATTN_INT_H
#define SIM_MODEL_ATTN_INT_H

#include "model_int.h"

#include <stdio.h>

/* Dropout inside a FlashAttention kernel (Dao et al. 2022, section 3.1): each score's keep bit comes from a
   counter-based Philox4x32 generator of 7 rounds (the kernels' philox.cuh, as Apex's FMHA; Dao in
   flash-attention issue #56), drawn again in the backward instead of stored. A call gives 128 random bits;
   FlashAttention-1 compares 16 of them per score (apply_dropout_16bits in fmha/softmax.h),
   FlashAttention-2 8. Integer lane ops: a round is two 32x32->64-bit multiplies (two multiply-adds each)
   and two three-input xors, 6 ops; a call is 7 rounds and the counter's setup (2 ops); per score, its bits
   unpacked and compared with the threshold (2 ops). */
#define PHILOX_ROUNDS    7
#define PHILOX_ROUND_OPS 6
#define PHILOX_CALL_OPS  (PHILOX_ROUNDS * PHILOX_ROUND_OPS + 2)

static inline double dropout_int_ops(const struct op *op, int bits_per_score)
{
	return op->dropout > 0 ? PHILOX_CALL_OPS / (128.0 / bits_per_score) + 2 : 0;
}

/* the select that zeroes a dropped score, a lane op: forward on P, backward on P and dP */
static inline double dropout_lane_ops(const struct op *op)
{
	return op->dropout > 0 ? (op->dir == DIR_BWD ? 2 : 1) : 0;
}

/* An inner step's time from its pipes' times (matrix, shared memory, exp and lane ops, integer ops: the
   integer pipe is one of its own): the longest, plus the share 1 - ov of the others that the warps do not overlap
   with it */
static inline double step_overlap(double t_mma, double t_smem, double other, double t_int, double ov)
{
	double tmax = dmax(dmax(t_mma, t_int), dmax(t_smem, other));
	return tmax + (1 - ov) * (t_mma + t_smem + other + t_int - tmax);
}

/* the explanation's words for the dropout's integer work ("" without dropout) */
static inline const char *drop_txt(const struct op *op, double t_int, char *buf, size_t len)
{
	buf[0] = '\0';
	if (op->dropout > 0)
		snprintf(buf, len, ", dropout %g: Philox on the integer pipe %.0f ns", op->dropout, t_int * 1e9);
	return buf;
}

/* With a window, the queries that see a key before key_end (exclusive): none past key_end - 1's window. */
static inline long long window_query_end(const struct op *op, long long key_end)
{
	return (long long)dmin((double)op->sq, (double)(key_end - (op->skv - op->sq) + op->window - 1));
}

/* model_flash.c: FlashAttention-2 (impl=flash2) and -3 (flash3), cuDNN's fused attention (cudnn), forward and
   backward; the iteration of one CTA's main loop for the stepper (flash2, flash3); FlashAttention-2's decode
   (flash2_decode: split-KV and the combine kernel) */
int flash2_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl);
int flash3_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl);
int cudnn_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl);
int flash2_iter(const struct arch_chip *c, const struct op *op, struct dm_result *r, struct dm_iter *it, char *why,
                size_t wl);
int flash3_iter(const struct arch_chip *c, const struct op *op, struct dm_result *r, struct dm_iter *it, char *why,
                size_t wl);
int flash2_decode_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                       size_t wl);

#endif
