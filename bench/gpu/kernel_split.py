#!/usr/bin/env python3
"""kernel_split.py -- where the time of a timed call goes, kernel by kernel, for the rows whose residuals the
model cannot yet explain: FlashAttention-2's backward (torch SDPA's flash backend runs three kernels:
flash_bwd_dot_do_o, flash_bwd_dq_dk_dv_loop_seqk_parallel and flash_bwd_convert_dq) and forward, and GEMMs
under 20 us, where a CUDA-event measurement (triton's do_bench, which measure.py uses) may hold time that is
not the kernel's. Run by hand on a GPU (CI has none); writes under OUTDIR (default $OUT, else ./gpu-out):

  kernels.tsv   one line per GPU kernel of every profiled call: section, op line (workloads/op.h), call index,
                kernel name, duration (us, from the PyTorch profiler's CUPTI records), grid, block, registers
                per thread, shared memory per CTA (bytes)
  calls.tsv     section, op line, median of the per-call sums of kernel durations (us), the call's median
                between CUDA events as measure.py times it (us), kernels per call

  python3 bench/gpu/kernel_split.py [attn] [gemm] [small] [decode] [naive]  # attn and gemm by default;
                               # small: the floors; decode: LA105-LA107; naive: A020/A021's PyTorch attention
  python3 bench/gpu/kernel_split.py ncu                # one call per shape, for Nsight Compute:
  ncu --clock-control none --kernel-name regex:flash_ --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --csv --page details python3 bench/gpu/kernel_split.py ncu > ncu.csv

Shapes are those of the lent H100 rows LA001-LA052 (tests/validation/measurements-lent.tsv) and LG rows
under 20 us. Nothing here is fitted.
"""

import json
import os
import statistics
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

OUT = os.environ.get("OUT") or os.path.abspath("gpu-out")
os.makedirs(OUT, exist_ok=True)
DEV = torch.device("cuda")
FLUSH = None
CALLS = 8

# (b, h, hkv, s, d, causal): LA001-LA052's shapes (hidden 2048 at batch x seq = 16k; Llama-3 8B GQA)
ATTN = [(16384 // s, 2048 // d, 2048 // d, s, d, c) for d in (64, 128) for s in (512, 1024, 2048, 4096, 8192, 16384)
        for c in (0, 1)] + [(4, 32, 8, 8192, 128, 1), (1, 32, 8, 32768, 128, 1)]
GEMM = [(256, "bf16"), (512, "bf16"), (1024, "bf16"), (2048, "bf16"), (256, "fp16"), (512, "fp16"),
        (1024, "fp16"), (1024, "tf32")]
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32}


def randn(*shape, dtype=torch.bfloat16, grad=False):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype).requires_grad_(grad)


def flush():
    FLUSH.zero_()


def attn_line(b, h, hkv, s, d, c, direction):
    return f"attn b={b} h={h} hkv={hkv} sq={s} skv={s} d={d} causal={c} dtype=bf16 dir={direction}"


def attn_calls(b, h, hkv, s, d, c):
    """(op line, function) pairs: the forward, and the backward alone (torch.autograd.grad), as measure.py
    times them."""
    q, k, v = randn(b, h, s, d, grad=True), randn(b, hkv, s, d, grad=True), randn(b, hkv, s, d, grad=True)
    gqa = hkv != h

    def fwd():
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(c), enable_gqa=gqa)

    o = fwd()
    g = torch.randn_like(o)

    def bwd():
        torch.autograd.grad(o, (q, k, v), g, retain_graph=True)

    return [(attn_line(b, h, hkv, s, d, c, "fwd"), fwd), (attn_line(b, h, hkv, s, d, c, "bwd"), bwd)]


def gemm_calls(n, dt):
    a, bm = randn(n, n, dtype=DT[dt]), randn(n, n, dtype=DT[dt])
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    return [(f"gemm m={n} n={n} k={n} dtype={dt}", lambda: torch.mm(a, bm))]


def small_calls():
    """The floors: one elementwise kernel from 1 to 2^24 elements, square GEMMs from 64 to 768, the decode GEMVs,
    and the strided copy torch SDPA's backward makes (a (b,h,s,d) tensor made contiguous as (b,s,h,d)) beside a
    contiguous copy of the same size (a contiguous clone is a cudaMemcpyAsync: the profiler's gpu_memcpy record)."""
    calls = []
    for n in (1, 1024, 65536, 1 << 20, 1 << 24):  # one read and one write per element, as op=relu counts them
        x = torch.zeros(n, device=DEV, dtype=torch.float32)
        calls.append((f"elem op=relu n={n} dtype=fp32", lambda x=x: x.relu_()))
    for n in (64, 128, 192, 384, 768):
        a, bm = randn(n, n), randn(n, n)
        calls.append((f"gemm m={n} n={n} k={n} dtype=bf16", lambda a=a, bm=bm: torch.mm(a, bm)))
    for m in (1, 8, 32):
        a, bm = randn(m, 8192), randn(8192, 8192)
        calls.append((f"gemm m={m} n=8192 k=8192 dtype=bf16", lambda a=a, bm=bm: torch.mm(a, bm)))
    for n in (1 << 20, 1 << 23, 1 << 25, 1 << 27):
        t = randn(n // (16 * 1024 * 64), 16, 1024, 64).transpose(1, 2)
        calls.append((f"copy strided n={n} dtype=bf16", lambda t=t: t.contiguous()))
        c = randn(n)
        calls.append((f"copy contiguous n={n} dtype=bf16", lambda c=c: c.clone()))
    return calls


def decode_calls():
    """The decode rows LA105-LA107: one query token a sequence against a K/V cache, torch SDPA's flash backend (its
    split-KV kernel and the combine kernel)."""
    calls = []
    for b, h, hkv, skv in ((1, 32, 8, 8192), (64, 32, 8, 4096), (256, 64, 8, 2048)):
        q, k, v = randn(b, h, 1, 128), randn(b, hkv, skv, 128), randn(b, hkv, skv, 128)

        def fn(q=q, k=k, v=v):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

        calls.append((f"attn b={b} h={h} hkv={hkv} sq=1 skv={skv} d=128 causal=0 dtype=bf16 dir=fwd "
                      "impl=flash2_decode", fn))
    return calls


def naive_calls():
    """The PyTorch attention the FlashAttention-2 benchmark compares against (rows A020, A021: its
    attention_pytorch in benchmarks/benchmark_flash_attention.py, written again here): Q K^T by baddbmm with the
    scale, an additive causal mask, softmax, P V by einsum; forward, and the backward alone by autograd."""
    calls = []
    for b, s, h, d, c in ((2, 8192, 16, 128, 0), (2, 8192, 32, 64, 1)):
        qkv = torch.randn(b, s, 3, h, d, device=DEV, dtype=torch.float16, requires_grad=True)

        def fwd(qkv=qkv, b=b, s=s, h=h, d=d, c=c):
            q, k, v = qkv.unbind(dim=2)
            qf = q.permute(0, 2, 1, 3).reshape(b * h, s, d)
            kf = k.permute(0, 2, 3, 1).reshape(b * h, d, s)
            scores = torch.empty(b * h, s, s, dtype=qkv.dtype, device=DEV)
            scores = torch.baddbmm(scores, qf, kf, beta=0, alpha=d ** -0.5).view(b, h, s, s)
            if c:
                mask = torch.triu(torch.full((s, s), -10000.0, device=DEV), 1)
                scores = scores + mask.to(dtype=scores.dtype)
            p = torch.softmax(scores, dim=-1)
            return torch.einsum("bhts,bshd->bthd", p, v)

        o = fwd()
        g = torch.randn_like(o)

        def bwd(o=o, g=g, qkv=qkv):
            torch.autograd.grad(o, qkv, g, retain_graph=True)

        line = f"attn b={b} h={h} hkv={h} sq={s} skv={s} d={d} causal={c} dtype=fp16 impl=naive"
        calls += [(line + " dir=fwd", fwd), (line + " dir=bwd", bwd)]
    return calls


def event_median_us(fn, n=30):
    times = []
    for _ in range(n):
        flush()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3)
    return statistics.median(times)


def profile(section, line, fn, kout, cout):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for i in range(CALLS):
            flush()
            with torch.profiler.record_function(f"call{i}"):
                fn()
            torch.cuda.synchronize()
    path = tempfile.mktemp(suffix=".json", dir=OUT)
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    os.unlink(path)
    kernels = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                     key=lambda e: e["ts"])
    # a call's kernels: those after the L2 flush (an int8 fill: FillFunctor<signed char>) that starts it;
    # every kernel is written, the flushes with call -1
    calls = []
    for e in kernels:
        is_flush = "FillFunctor<signed char>" in e["name"] or "FillFunctor<char>" in e["name"]
        if is_flush:
            calls.append([])
        elif calls:
            calls[-1].append(e)
        a = e.get("args", {})
        kout.write("\t".join([section, line, str(-1 if is_flush else len(calls) - 1), e["name"][:200],
                              f"{e['dur']:.3f}", str(a.get("grid")), str(a.get("block")),
                              str(a.get("registers per thread")), str(a.get("shared memory")),
                              str(a.get("est. achieved occupancy %"))]) + "\n")
    sums = [sum(e["dur"] for e in c) for c in calls if c]
    ev = event_median_us(fn)
    n = statistics.median([len(c) for c in calls]) if calls else 0
    cout.write(f"{section}\t{line}\t{statistics.median(sums) if sums else float('nan'):.3f}\t{ev:.3f}\t{n}\n")
    cout.flush()
    print(f"{line}: kernels {statistics.median(sums) if sums else float('nan'):.1f} us, events {ev:.1f} us, "
          f"{n} kernels/call", flush=True)


def main():
    global FLUSH
    FLUSH = torch.empty(256 << 20, dtype=torch.int8, device=DEV)
    args = set(sys.argv[1:]) or {"attn", "gemm"}
    if "ncu" in args:  # four shapes: the forward that builds the graph, then one forward and one backward
        for shape in (ATTN[0], ATTN[10], ATTN[12], ATTN[22]):
            for _, fn in attn_calls(*shape):
                fn()
                torch.cuda.synchronize()
        return
    with open(os.path.join(OUT, "kernels.tsv"), "w") as kout, open(os.path.join(OUT, "calls.tsv"), "w") as cout:
        kout.write("section\top\tcall\tkernel\tdur_us\tgrid\tblock\tregisters\tshared_B\tocc_pct\n")
        cout.write("section\top\tkernels_us\tevents_us\tkernels_per_call\n")
        if "small" in args:
            for line, fn in small_calls():
                profile("small", line, fn, kout, cout)
        if "decode" in args:
            for line, fn in decode_calls():
                profile("decode", line, fn, kout, cout)
        if "naive" in args:
            for line, fn in naive_calls():
                profile("naive", line, fn, kout, cout)
            torch.cuda.empty_cache()
        if "gemm" in args:
            for n, dt in GEMM:
                for line, fn in gemm_calls(n, dt):
                    profile("gemm", line, fn, kout, cout)
        if "attn" in args:
            for shape in ATTN:
                for line, fn in attn_calls(*shape):
                    profile("attn", line, fn, kout, cout)
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
