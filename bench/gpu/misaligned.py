#!/usr/bin/env python3
"""misaligned.py -- cuBLAS GEMMs whose leading dimensions are not a multiple
of 16 bytes, beside their aligned neighbours, with the kernel cuBLAS picked.

A GPT's vocabulary (50257 for GPT-2 and GPT-3) is odd: the logits GEMM and its
two backward GEMMs have a leading dimension of 50257 elements, which no
TMA/wgmma kernel takes. Megatron pads the vocabulary to a multiple of 128
(--make-vocab-size-divisible-by) for this; eager PyTorch does not. Run by hand
on a GPU (CI has none); writes $OUT/misaligned.tsv: id, op line (workloads/op.h,
trans as the row-major layout in memory), median us (triton do_bench, L2
flushed), TFLOP/s, the kernel's name. With `grid`: leading dimensions of S - 1,
S - 2, S - 4 and S elements in bf16, fp16 and fp32 (tf32 off), and Llama's
vocabulary of 32000 against 32001 ($OUT/misaligned_grid.tsv).
"""

import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench

OUT = os.environ.get("OUT") or os.path.abspath("gpu-out")
os.makedirs(OUT, exist_ok=True)
dev = torch.device("cuda")


def r(*s):
    return torch.randn(*s, device=dev, dtype=torch.float32).to(torch.bfloat16)


def kernel_of(fn):
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return max(names, key=len) if names else "?"


rows = []
cases = []
tokens = 16384
for h in (768, 1024):
    for v in (50257, 50264, 50304):
        # forward logits = x @ W^T (W: [v, h]); backward dX = g @ W; dW = g^T @ x
        cases.append((f"gemm m={tokens} n={v} k={h} dtype=bf16 trans=nt", lambda h=h, v=v: (r(tokens, h), r(v, h)),
                      lambda a, b: a @ b.t()))
        cases.append((f"gemm m={tokens} n={h} k={v} dtype=bf16", lambda h=h, v=v: (r(tokens, v), r(v, h)),
                      lambda a, b: a @ b))
        cases.append((f"gemm m={v} n={h} k={tokens} dtype=bf16 trans=tn", lambda h=h, v=v: (r(tokens, v), r(tokens, h)),
                      lambda a, b: a.t() @ b))
for m, n, k in ((4096, 4096, 4096), (4096, 4096, 4095), (4096, 4095, 4096), (4095, 4096, 4096),
                (4096, 4096, 4092), (4096, 4092, 4096), (4096, 4096, 4088)):
    cases.append((f"gemm m={m} n={n} k={k} dtype=bf16", lambda m=m, n=n, k=k: (r(m, k), r(k, n)), lambda a, b: a @ b))

if "grid" in sys.argv[1:]:
    # alignment classes: a leading dimension of S - 1, S - 2, S - 4 elements (2, 4, 8 bytes in 16 bits) and S
    cases = []
    for dt, sizes in (("bf16", (2048, 8192)), ("fp16", (8192,)), ("fp32", (4096,))):
        tdt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dt]
        for S in sizes:
            for d in ((1, 2, 4, 0) if dt != "fp32" else (1, 2, 0)):
                for dim in ("k", "n"):
                    m, n, k = S, S - d if dim == "n" else S, S - d if dim == "k" else S
                    if d == 0 and dim == "n":
                        continue
                    mk = (lambda m=m, n=n, k=k, t=tdt: (torch.randn(m, k, device=dev).to(t),
                                                        torch.randn(k, n, device=dev).to(t)))
                    cases.append((f"gemm m={m} n={n} k={k} dtype={dt}", mk, lambda a, b: a @ b))
    for v in (32001, 32000):  # Llama's vocabulary, and one more (an added special token)
        cases.append((f"gemm m=8192 n={v} k=4096 dtype=bf16 trans=nt", lambda v=v: (r(8192, 4096), r(v, 4096)),
                      lambda a, b: a @ b.t()))
        cases.append((f"gemm m=8192 n=4096 k={v} dtype=bf16", lambda v=v: (r(8192, v), r(v, 4096)),
                      lambda a, b: a @ b))
        cases.append((f"gemm m={v} n=4096 k=8192 dtype=bf16 trans=tn", lambda v=v: (r(8192, v), r(8192, 4096)),
                      lambda a, b: a.t() @ b))
    torch.backends.cuda.matmul.allow_tf32 = False
    OUTNAME = "misaligned_grid.tsv"
else:
    OUTNAME = "misaligned.tsv"

for i, (op, make, fn) in enumerate(cases, 1):
    a, b = make()
    ms = do_bench(lambda: fn(a, b), warmup=25, rep=100, return_mode="median")
    kern = kernel_of(lambda: fn(a, b))
    m, n, k = (int(x.split("=")[1]) for x in op.split()[1:4])
    tf = 2.0 * m * n * k / ms / 1e9
    rows.append(f"{'Y' if OUTNAME != 'misaligned.tsv' else 'X'}{i:03d}\t{op}\t{ms * 1e3:.3f}\t{tf:.1f}\t{kern}")
    print(rows[-1], flush=True)
    del a, b
with open(os.path.join(OUT, OUTNAME), "w") as f:
    f.write("id\top\tus\ttflops\tkernel\n" + "\n".join(rows) + "\n")
