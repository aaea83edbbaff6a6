#!/usr/bin/env python3
"""flush.py -- what a benchmark's L2 flush adds to the time it measures.

triton.testing.do_bench (measure.py's timer, and many published harnesses') empties the L2 before every timed call
by writing a 256 MB buffer (`cache.zero_()`). The L2 is then full of dirty lines: the timed kernel's reads evict
them, so its device memory also writes back up to an L2 of them while it runs. This times the same kernels three
ways, each the median of 50 calls between CUDA events:

  dirty   the L2 flushed as do_bench does: 256 MB written before each call
  clean   the L2 flushed by reading 256 MB instead (a sum): it then holds clean lines, nothing to write back
  warm    no flush: what the previous call left in the L2 stays

Run by hand on a GPU (CI has none); writes $OUT/flush.tsv: op line (workloads/op.h), the three medians in us, and
the bytes the kernel reads from device memory when cold. tests/validation/measured/README.md says what it found.
"""

import os

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from measure import event_median_ms

OUT = os.environ.get("OUT") or os.path.abspath("gpu-out")
os.makedirs(OUT, exist_ok=True)
DEV = torch.device("cuda")
FLUSH = torch.empty(256 << 20, dtype=torch.int8, device=DEV)
FLUSH_F = torch.empty(64 << 20, dtype=torch.float32, device=DEV)


def r(*s, dtype=torch.bfloat16):
    return torch.randn(*s, device=DEV, dtype=torch.float32).to(dtype)


def median_us(fn, before, n=50):
    for _ in range(3):
        fn()
    return event_median_ms(fn, n, before) * 1e3


def dirty():
    FLUSH.zero_()


def clean():
    FLUSH_F.sum()


def decode(b, h, hkv, skv):
    q, k, v = r(b, h, 1, 128), r(b, hkv, skv, 128), r(b, hkv, skv, 128)

    def fn():
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, k, v, enable_gqa=h != hkv)

    return (f"attn b={b} h={h} hkv={hkv} sq=1 skv={skv} d=128 causal=0 dtype=bf16 impl=flash2_decode", fn,
            2 * b * hkv * skv * 128 * 2)


def gemm(m, n, k, batch=1, tn=False):
    if batch == 1:
        a, w = r(m, k), r(k, n)
        fn = lambda: torch.mm(a, w)  # noqa: E731
        op = f"gemm m={m} n={n} k={k} dtype=bf16"
    else:
        x, dy = r(batch, k, m), r(batch, k, n)
        fn = lambda: torch.bmm(x.transpose(1, 2), dy)  # noqa: E731
        op = f"gemm m={m} n={n} k={k} batch={batch} dtype=bf16 trans=tn"
    return op, fn, (m * k + k * n) * batch * 2


def add(n):
    x, y = r(n), r(n)
    return f"elem op=add n={n} dtype=bf16", (lambda: x + y), 2 * n * 2


def main():
    cases = [decode(1, 8, 1, 32768), decode(1, 32, 8, 8192), decode(4, 32, 8, 2048), decode(16, 32, 8, 512),
             decode(16, 32, 8, 2048), decode(64, 8, 1, 512), decode(64, 8, 1, 2048), decode(64, 32, 8, 2048),
             decode(256, 32, 8, 2048),
             gemm(256, 256, 256), gemm(1024, 1024, 1024), gemm(2048, 2048, 2048), gemm(4096, 4096, 4096),
             gemm(8, 8192, 8192), gemm(128, 8192, 8192), gemm(2048, 1536, 128, batch=16),
             gemm(7168, 4096, 128, batch=4), add(1 << 20), add(1 << 23), add(1 << 26)]
    rows = []
    for op, fn, nbytes in cases:
        d, c, w = median_us(fn, dirty), median_us(fn, clean), median_us(fn, None)
        rows.append((op, d, c, w, nbytes))
        print(f"{op:80s} dirty {d:9.2f}  clean {c:9.2f}  warm {w:9.2f} us  ({nbytes / 1e6:.1f} MB)", flush=True)
    with open(os.path.join(OUT, "flush.tsv"), "w") as f:
        f.write("op\tdirty_us\tclean_us\twarm_us\tbytes\n")
        for op, d, c, w, nbytes in rows:
            f.write(f"{op}\t{d:.3f}\t{c:.3f}\t{w:.3f}\t{nbytes}\n")


if __name__ == "__main__":
    main()
