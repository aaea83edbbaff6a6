#!/usr/bin/env python3
"""flash_occupancy.py -- the launch resources of FlashAttention-2's kernels as torch SDPA's flash backend runs
them: run under Nsight Compute, which reads each kernel's registers per thread, shared memory per CTA and the
occupancy limits (CTAs per SM by registers, shared memory and warps), the figures the attention model's
occupancy (sim/device/model_attn.c, flash_occupancy) assumes. Run by hand on a GPU (CI has none):

  ncu --kernel-name regex:flash --csv --metrics launch__registers_per_thread,launch__block_size,\
launch__grid_size,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,\
launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,\
sm__warps_active.avg.pct_of_peak_sustained_active python3 bench/gpu/flash_occupancy.py > flash_occupancy.csv

Kernels: the forward and backward at head dims 64 and 128 (non-causal and causal), and the decode path (one
query, GQA 32/8) with and without a key split.
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def r(*s, grad=False):
    return torch.randn(*s, device="cuda", dtype=torch.bfloat16).requires_grad_(grad)


with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    for d in (64, 128):
        for causal in (False, True):
            q, k, v = (r(4, 2048 // d * 2, 2048, d, grad=True) for _ in range(3))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            o.backward(torch.randn_like(o))
    for b, skv in ((1, 8192), (64, 4096)):  # one split and several
        q, k, v = r(b, 32, 1, 128), r(b, 8, skv, 128), r(b, 8, skv, 128)
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
torch.cuda.synchronize()
print("done")
