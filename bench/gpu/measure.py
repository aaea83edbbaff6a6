#!/usr/bin/env python3
"""measure.py -- measurements of one NVIDIA GPU that the validation lacks.

Run by hand on a machine with a GPU, PyTorch and Triton (never by the tests:
CI has no GPU). Writes, under OUTDIR (default $OUT, else ./gpu-out):

  rows.tsv       one line per measurement: id kind op value unit note, where
                 `op` is the simulator's op line (workloads/op.h) that the
                 measurement times, so tests/validation/cases.tsv can take it
                 as is; value is the median of triton.testing.do_bench (CUDA
                 events, L2 flushed before every call, warm-up excluded)
  env.txt        GPU, driver, clocks and every software version, then the
                 wall-clock start of each phase, to read smi.csv by phase
  smi.csv        nvidia-smi samples (SM clock, power, temperature) every
                 200 ms
  kineto_*.json.gz   PyTorch profiler (Kineto) traces of the training steps
                 timed (GPT models as `sim gen gpt` writes them, docs/workloads.md,
                 and Llama-style ones), for the importer (issue 19)
  et_*.json.gz   PyTorch execution traces (the input of Chakra's converter)

Sections (all by default, or those named as arguments): gemms, attention,
memory, training, training_llama, inference (Llama-3 8B batches served from
CUDA graphs: the device alone, as `sim gen --mode infer` describes it),
inference_trace (profiler traces of its decode steps), sm_share (a GEMM given
fewer SMs through cuBLASLt's SM count target, and beside a copy kernel that
holds some SMs: issue 17), conv (ResNet-50's convolutions forward, dgrad and
wgrad through cuDNN, and batch norm), resnet (ResNet-50 training steps, with
their profiler traces), dvfs (the SM clock and board power while a GEMM runs
for seconds on all SMs or fewer), moe_gemms (the local experts' GEMMs of MoE
layers, batched and grouped, bf16 and fp8), decode_attn (one query token
against KV caches of 512 to 32768 tokens), launch (kernel launch gaps and a
device-to-host round trip, figures in env.txt), training_moe (eager MoE
steps with their profiler traces), host_bound (training steps so small that
the host's launches set their time, eager with profiler traces and replayed
from a CUDA graph of the whole step), gemm_floor (small square GEMMs timed
three ways: CUPTI, one call, a loop), pinned_copies (4 KiB to 64 MiB between
pinned host memory and the device), profiler_cost (the host time the
profiler adds per CPU op it records, figures in env.txt), latency_load (the
latency of device-memory loads against the load: 1 to 528 CTAs streaming with
2, 8 or 32 KiB in flight each, figures in env.txt).

Nothing here is fitted: the rows are compared with the model's predictions
from the config alone (docs/validation.md, "Measured here").
"""

import functools
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from triton.testing import do_bench as _triton_bench
except Exception:  # noqa: BLE001 - any import failure falls back to events
    _triton_bench = None

OUT = os.environ.get("OUT") or os.path.abspath("gpu-out")
os.makedirs(OUT, exist_ok=True)
DEV = torch.device("cuda")
ROWS = []
ENV = []
PHASES = []
T0 = time.time()


def phase(name):
    PHASES.append((time.time(), name))
    print(f"[{time.time() - T0:7.1f} s] {name}", flush=True)


def bench_ms(fn):
    """Median time of fn in ms: CUDA events, L2 flushed before each call."""
    if _triton_bench is not None:
        return float(_triton_bench(fn, warmup=25, rep=100, return_mode="median"))
    flush = torch.empty(256 << 20, dtype=torch.int8, device=DEV)
    for _ in range(5):
        fn()
    return event_median_ms(fn, 30, flush.zero_)


def event_median_ms(fn, n, before=None):
    """Median of n calls of fn in ms, each between two CUDA events; before() runs ahead of each call."""
    times = []
    for _ in range(n):
        if before is not None:
            before()
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def graph_ms(fn, n=50):
    """Median time of fn in ms replayed from a CUDA graph (the host's launch cost out of the figure: an op whose
    Python and dispatch take longer than do_bench's flush shows host time in bench_ms), after the L2 is flushed
    as do_bench flushes it (256 MB written)."""
    flush = torch.empty(256 << 20, dtype=torch.int8, device=DEV)
    g = capture(fn)
    for _ in range(3):
        g.replay()
    return event_median_ms(g.replay, n, flush.zero_)


def capture(fn):
    """fn captured in a CUDA graph, on a side stream after one eager call there (its warm-up)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    return g


def row(kind, op, ms, note):
    rid = f"{kind[0].upper()}{len([r for r in ROWS if r[1] == kind]) + 1:03d}"
    ROWS.append((rid, kind, op, ms * 1e3, "us", note))
    print(f"  {rid} {op}: {ms * 1e3:.2f} us  {note}", flush=True)


def guarded(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        try:
            fn(*a, **k)
        except Exception:  # noqa: BLE001 - one failed section must not lose the others
            traceback.print_exc()
            print(f"section {fn.__name__} failed", flush=True)

    return wrapper


def randn(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)


# ---------------------------------------------------------------- GEMM
SQUARE = [256, 512, 1024, 2048, 4096, 8192, 16384]
# Llama-3 8B (h 4096, ffn 14336, GQA 8) and 70B at TP 8 (h 8192, ffn 28672),
# 8192 tokens: QKV, output projection, gate+up, down.
LLM = [
    (8192, 6144, 4096), (8192, 4096, 4096), (8192, 28672, 4096), (8192, 4096, 14336),
    (8192, 1280, 8192), (8192, 8192, 1024), (8192, 7168, 8192), (8192, 8192, 3584),
]
DECODE = [(1, 8192, 8192), (8, 8192, 8192), (32, 8192, 8192), (128, 8192, 8192), (512, 8192, 8192)]


def gemm_flops(m, n, k):
    return 2.0 * m * n * k


@guarded
def gemms():
    phase("gemm")
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = [("bf16", s) for s in [(x, x, x) for x in SQUARE] + LLM + DECODE]
    cases += [("fp16", (x, x, x)) for x in SQUARE]
    cases += [("tf32", (x, x, x)) for x in SQUARE[2:]]
    cases += [("fp32", (x, x, x)) for x in (1024, 4096, 8192)]
    cases += [("fp8", s) for s in [(x, x, x) for x in SQUARE] + LLM]
    for dt, (m, n, k) in cases:
        torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
        if dt == "fp8":
            a = randn(m, k, dtype=torch.float32).to(torch.float8_e4m3fn)
            bt = randn(n, k, dtype=torch.float32).to(torch.float8_e4m3fn)
            one = torch.ones((), device=DEV)
            fn = lambda a=a, bt=bt, one=one: torch._scaled_mm(  # noqa: E731
                a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            op = f"gemm m={m} n={n} k={k} dtype=fp8 trans=nt"
            note = "torch._scaled_mm (cuBLASLt), e4m3 x e4m3, per-tensor scales, bf16 out"
        else:
            tdt = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(dt, torch.float32)
            a = randn(m, k, dtype=tdt)
            b = randn(k, n, dtype=tdt)
            fn = lambda a=a, b=b: torch.mm(a, b)  # noqa: E731
            op = f"gemm m={m} n={n} k={k} dtype={dt}"
            note = "torch.mm (cuBLAS), row-major A[m,k] B[k,n]" + (
                ", allow_tf32" if dt == "tf32" else "")
        ms = bench_ms(fn)
        # the kernels cuBLAS picked (the tile, split-K and reduction kernels of the skinny and tiny shapes)
        row("gemm", op, ms, f"{note}; {gemm_flops(m, n, k) / ms / 1e9:.1f} TFLOP/s; kernels {kernel_launches(fn)}")
        del a, fn
    torch.backends.cuda.matmul.allow_tf32 = False


# ---------------------------------------------------------------- attention
def attn_flops(b, h, sq, skv, d, causal):
    f = 4.0 * b * h * sq * skv * d
    return f / 2 if causal else f


@guarded
def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    phase("attention")
    shapes = []
    # FlashAttention-2's benchmark: hidden 2048, batch x seqlen = 16k.
    for d in (64, 128):
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            for causal in (0, 1):
                shapes.append((16384 // s, 2048 // d, 2048 // d, s, s, d, causal))
    # Llama-3 8B's attention (GQA 32/8, d 128), 4 x 8192 tokens
    shapes.append((4, 32, 8, 8192, 8192, 128, 1))
    shapes.append((1, 32, 8, 32768, 32768, 128, 1))
    backends = [("flash2", SDPBackend.FLASH_ATTENTION, "torch SDPA flash backend (FlashAttention-2 kernels)"),
                ("cudnn", SDPBackend.CUDNN_ATTENTION, "torch SDPA cuDNN backend (cuDNN fused flash attention)")]
    for impl, be, what in backends:
        for (b, h, hkv, s, skv, d, causal) in shapes:
            try:
                q = randn(b, h, s, d).requires_grad_()
                k = randn(b, hkv, skv, d).requires_grad_()
                v = randn(b, hkv, skv, d).requires_grad_()
                gqa = h != hkv
                with sdpa_kernel([be]):
                    fwd = lambda: F.scaled_dot_product_attention(  # noqa: E731
                        q, k, v, is_causal=bool(causal), enable_gqa=gqa)
                    ms_f = bench_ms(fwd)
                    out = fwd()
                    go = torch.randn_like(out)
                    bwd = lambda: torch.autograd.grad(out, (q, k, v), go, retain_graph=True)  # noqa: E731
                    ms_b = bench_ms(bwd)
            except Exception as e:  # noqa: BLE001 - a backend may refuse a shape
                print(f"  {impl} b={b} h={h} s={s} d={d}: {e}".splitlines()[0], flush=True)
                continue
            base = f"attn b={b} h={h} hkv={hkv} sq={s} skv={skv} d={d} causal={causal} dtype=bf16"
            fl = attn_flops(b, h, s, skv, d, causal)
            row("attention", f"{base} dir=fwd", ms_f, f"{what}; {fl / ms_f / 1e9:.1f} TFLOP/s; impl={impl}")
            row("attention", f"{base} dir=bwd", ms_b,
                f"{what}; torch.autograd.grad only; {2.5 * fl / ms_b / 1e9:.1f} TFLOP/s; impl={impl}")
            del q, k, v, out, go
    # decode: one query token against a long KV cache (flash backend)
    for (b, h, hkv, skv) in ((1, 32, 8, 8192), (64, 32, 8, 4096), (256, 64, 8, 2048)):
        try:
            q = randn(b, h, 1, 128)
            k = randn(b, hkv, skv, 128)
            v = randn(b, hkv, skv, 128)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                ms = bench_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
        except Exception as e:  # noqa: BLE001
            print(f"  decode b={b}: {e}".splitlines()[0], flush=True)
            continue
        kv_bytes = 2 * b * hkv * skv * 128 * 2
        row("attention", f"attn b={b} h={h} hkv={hkv} sq=1 skv={skv} d=128 causal=0 dtype=bf16 dir=fwd", ms,
            f"torch SDPA flash backend, one query token; KV {kv_bytes / ms / 1e6:.0f} GB/s; impl=decode")


# ---------------------------------------------------------------- MoE expert GEMMs
# The local experts' GEMMs of one MoE layer under balanced routing, as `sim gen` writes them: one
# `gemm ... batch=E` per projection, E equal groups. Weights stored [E, out, in] as Megatron-Core's grouped
# linear layers hold them (so the forward is `trans=nt`), the weight gradient X^T dY (`trans=tn`). Timed as
# torch.bmm (cuBLAS's strided-batched GEMM) and as torch._grouped_mm (the grouped kernel with per-expert
# offsets that eager MoE implementations call), fp8 as torch._scaled_grouped_mm (row-wise scales).
# name, hidden, expert ffn (SwiGLU: fc1 is 2 x ffn wide), local experts (the presets' expert parallelism)
MOE = [("qwen3-30b-a3b ep8", 2048, 768, 16), ("qwen3-235b-a22b ep32", 4096, 1536, 4),
       ("deepseek-v3 ep64", 7168, 2048, 4), ("gpt-oss-120b ep8", 2880, 2880, 16), ("mixtral-8x7b ep2", 4096, 14336, 4)]
MOE_TOKENS = (128, 512, 2048, 8192)  # tokens each local expert receives


def _grouped(x, w_t, offs, fp8, fast=False):
    if not fp8:
        return lambda: torch._grouped_mm(x, w_t, offs=offs, out_dtype=torch.bfloat16)
    xa = x.to(torch.float8_e4m3fn)
    wb = w_t.to(torch.float8_e4m3fn)
    sa = torch.ones(x.shape[0], device=DEV, dtype=torch.float32)
    sb = torch.ones(w_t.shape[0], w_t.shape[2], device=DEV, dtype=torch.float32)
    return lambda: torch._scaled_grouped_mm(xa, wb, sa, sb, offs=offs, out_dtype=torch.bfloat16,
                                            use_fast_accum=fast)


@guarded
def moe_gemms():
    phase("moe_gemms")
    for name, h, f, e in MOE:
        for t in MOE_TOKENS:
            for proj, n, k in (("fc1", 2 * f, h), ("fc2", h, f)):
                if e * t * max(n, k) * 2 > (6 << 30):
                    continue
                x = randn(e * t, k)
                w = randn(e, n, k)  # [E, out, in]
                offs = torch.arange(1, e + 1, device=DEV, dtype=torch.int32) * t
                base = f"gemm m={t} n={n} k={k} batch={e}"
                what = f"{name} {proj}, {e} experts x {t} tokens"
                fl = gemm_flops(t, n, k) * e
                ms = bench_ms(lambda x=x, w=w: torch.bmm(x.view(e, t, k), w.transpose(1, 2)))
                row("gemm", f"{base} dtype=bf16 trans=nt", ms,
                    f"torch.bmm (cuBLAS strided batched), weights [E,n,k]; {what}; {fl / ms / 1e9:.1f} TFLOP/s; impl=bmm")
                # fp8 twice: PyTorch's default (no fast accumulation: the partial sums promoted every 128 of K,
                # sim op promote=128) and use_fast_accum=True, whose kernels do not promote; the kernels each ran
                # (ScaledGroupMM.cu picks a tile by shape and accumulation) are recorded in the note
                for fp8, fast in ((False, False), (True, False), (True, True)):
                    try:
                        fn = _grouped(x, w.transpose(1, 2), offs, fp8, fast)
                        fn()
                        ms = bench_ms(fn)
                        kern = kernel_launches(fn)
                    except Exception as ex:  # noqa: BLE001 - a build may lack the grouped kernels
                        print(f"  grouped{' fp8' if fp8 else ''} {base}: {ex}".splitlines()[0], flush=True)
                        continue
                    dt = "fp8" if fp8 else "bf16"
                    row("gemm", f"{base} dtype={dt} trans=nt", ms,
                        f"torch.{'_scaled' if fp8 else ''}_grouped_mm, equal offsets, weights [E,n,k]"
                        f"{', e4m3, row-wise scales, bf16 out' if fp8 else ''}"
                        f"{', use_fast_accum=True' if fast else ''}; {what}; {fl / ms / 1e9:.1f} TFLOP/s; "
                        f"kernels {kern}; impl=grouped")
                if proj == "fc1":  # the weight gradient of fc1: dW[E, h, 2f] = X^T dY
                    dy = randn(e, t, n)
                    ms = bench_ms(lambda x=x, dy=dy: torch.bmm(x.view(e, t, k).transpose(1, 2), dy))
                    row("gemm", f"gemm m={k} n={n} k={t} batch={e} dtype=bf16 trans=tn", ms,
                        f"torch.bmm, X^T dY (weight gradient); {what}; {fl / ms / 1e9:.1f} TFLOP/s; impl=bmm")
                    del dy
                del x, w
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- decode attention
@guarded
def decode_attn():
    """One query token per sequence against a contiguous KV cache (torch SDPA's flash backend), the shapes a
    serving engine's decode steps run: Llama-3 8B's heads (32 / 8 KV) and 70B's at TP 1 and 8."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    phase("decode_attn")
    for h, hkv in ((32, 8), (64, 8), (8, 1)):
        for b in (1, 4, 16, 64, 256):
            for skv in (512, 2048, 8192, 32768):
                kv_bytes = 2 * b * hkv * skv * 128 * 2
                if kv_bytes > (8 << 30):
                    continue
                try:
                    q = randn(b, h, 1, 128)
                    k = randn(b, hkv, skv, 128)
                    v = randn(b, hkv, skv, 128)
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=h != hkv)  # noqa: E731
                        ms_b = bench_ms(fn)
                        ms = graph_ms(fn)
                except Exception as e:  # noqa: BLE001
                    print(f"  decode b={b} h={h} skv={skv}: {e}".splitlines()[0], flush=True)
                    continue
                row("attention", f"attn b={b} h={h} hkv={hkv} sq=1 skv={skv} d=128 causal=0 dtype=bf16 dir=fwd", ms,
                    f"torch SDPA flash backend, one query token, replayed from a CUDA graph after do_bench's L2 "
                    f"flush (do_bench itself: {ms_b * 1e3:.2f} us, host time included where SDPA's dispatch outlasts "
                    f"the flush); KV {kv_bytes / ms / 1e6:.0f} GB/s; impl=decode")
                del q, k, v
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- launch gaps
@guarded
def launch():
    """What a kernel launch costs, three ways (not rows: figures for model.launch_overhead, in env.txt):
    the device's gap between queued tiny kernels (launched while a long kernel holds the stream, so the host
    is never the limit), the same from a CUDA graph, the host's time to issue one eager op, and a
    device-to-host round trip (`.item()`: what Megatron-Core's all-to-all dispatcher pays once per MoE layer)."""
    phase("launch")
    n = 1000
    x = torch.zeros(1, device=DEV)
    big = randn(16384, 16384)

    def chain():
        for _ in range(n):
            x.add_(1.0)

    def queued():
        torch.mm(big, big)  # ~11 ms: the host queues the whole chain meanwhile
        chain()

    for _ in range(3):
        queued()
    torch.cuda.synchronize()
    t_mm = event_median_ms(lambda: torch.mm(big, big), 11)
    t_q = event_median_ms(queued, 11)
    t0 = time.perf_counter()
    chain()
    t_host = (time.perf_counter() - t0) * 1e3
    torch.cuda.synchronize()
    g = capture(chain)
    t_g = event_median_ms(g.replay, 11)
    rt = []
    for _ in range(200):
        t0 = time.perf_counter()
        x.item()
        rt.append(time.perf_counter() - t0)
    rt.sort()
    lines = [f"launch queued_gap_us {(t_q - t_mm) / n * 1e3:.3f} (eager x.add_ on 1 element, {n} queued behind a "
             f"{t_mm:.3f} ms GEMM: (chain - GEMM) / n)",
             f"launch graph_gap_us {t_g / n * 1e3:.3f} (the same {n} kernels replayed from a CUDA graph)",
             f"launch host_issue_us {t_host / n * 1e3:.3f} (host wall time per eager x.add_ call, not synchronized)",
             f"launch item_roundtrip_us {rt[len(rt) // 2] * 1e6:.1f} (median of 200 x.item() on an idle stream)"]
    ENV.extend(lines)
    print("\n".join("  " + l for l in lines), flush=True)
    del big, g


# ---------------------------------------------------------------- memory
@guarded
def memory():
    phase("memory")
    n = 1 << 28  # bf16: 512 MiB per tensor, 10x the L2
    x = randn(n)
    y = randn(n)
    z = torch.empty_like(x)
    elems = [
        ("add", lambda: torch.add(x, y, out=z), 3),
        ("mul", lambda: torch.mul(x, y, out=z), 3),
        ("gelu", lambda: F.gelu(x, approximate="tanh"), 2),
        ("silu", lambda: F.silu(x), 2),
        ("relu", lambda: F.relu(x), 2),
        ("copy", lambda: z.copy_(x), 2),
    ]
    for name, fn, streams in elems:
        ms = bench_ms(fn)
        row("memory", f"elem op={name} n={n} dtype=bf16", ms,
            f"torch eager kernel; {streams * n * 2 / ms / 1e6:.0f} GB/s counting {streams} bf16 streams")
    xf = x.float()
    ms = bench_ms(lambda: xf.to(torch.bfloat16))
    row("memory", f"elem op=cast n={n} dtype=fp32 to=bf16", ms, f"torch .to(); {n * 6 / ms / 1e6:.0f} GB/s")
    del xf
    for cols in (1024, 4096, 8192):
        rows_ = n // cols
        x2 = x.view(rows_, cols)
        w = randn(cols)
        bb = randn(cols)
        for name, fn in (("layernorm", lambda: F.layer_norm(x2, (cols,), w, bb)),
                         ("rmsnorm", lambda: F.rms_norm(x2, (cols,), w)),
                         ("softmax", lambda: torch.softmax(x2, dim=-1))):
            ms = bench_ms(fn)
            row("memory", f"elem op={name} n={n} cols={cols} dtype=bf16", ms,
                f"torch eager kernel; {2 * n * 2 / ms / 1e6:.0f} GB/s counting one read and one write")
    del x, y, z
    # copies: device to device, host to device and back (pinned and pageable)
    for size in (1 << 20, 64 << 20, 1 << 30):
        a = torch.empty(size, dtype=torch.uint8, device=DEV)
        b = torch.empty(size, dtype=torch.uint8, device=DEV)
        ms = bench_ms(lambda: b.copy_(a))
        row("memory", f"copy bytes={size} src=hbm dst=hbm", ms,
            f"cudaMemcpy device to device via copy_; {2 * size / ms / 1e6:.0f} GB/s read+write")
        h = torch.empty(size, dtype=torch.uint8).pin_memory()
        ms = bench_ms(lambda: a.copy_(h))
        row("memory", f"copy bytes={size} src=host dst=hbm", ms,
            f"host (pinned) to device; {size / ms / 1e6:.0f} GB/s")
        ms = bench_ms(lambda: h.copy_(a))
        row("memory", f"copy bytes={size} src=hbm dst=host", ms,
            f"device to host (pinned); {size / ms / 1e6:.0f} GB/s")
        del a, b, h


# ---------------------------------------------------------------- training steps
class Block(nn.Module):
    """GPT block as `sim gen gpt` describes it: pre-LayerNorm, MHA, GELU (tanh), ffn 4h."""

    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, h, heads, seq, vocab=50257):
        super().__init__()
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(seq, h)
        self.blocks = nn.ModuleList([Block(h, heads) for _ in range(layers)])
        self.lnf = nn.LayerNorm(h)

    def forward(self, idx, target):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.lnf(x), self.wte.weight)  # tied embeddings
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), target.view(-1))


class LlamaBlock(nn.Module):
    """Llama block: pre-RMSNorm, GQA attention with rotary embeddings, SwiGLU FFN, no biases."""

    def __init__(self, h, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv, self.d = heads, kv_heads, h // heads
        self.n1 = nn.RMSNorm(h)
        self.qkv = nn.Linear(h, (heads + 2 * kv_heads) * self.d, bias=False)
        self.o = nn.Linear(h, h, bias=False)
        self.n2 = nn.RMSNorm(h)
        self.gate_up = nn.Linear(h, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)

    def forward(self, x, cos, sin):
        b, s, h = x.shape
        q, k, v = self.qkv(self.n1(x)).split([self.heads * self.d, self.kv * self.d, self.kv * self.d], -1)
        q = q.view(b, s, self.heads, self.d).transpose(1, 2)
        k = k.view(b, s, self.kv, self.d).transpose(1, 2)
        v = v.view(b, s, self.kv, self.d).transpose(1, 2)

        def rope(t):
            t1, t2 = t.chunk(2, -1)
            return torch.cat([t1 * cos - t2 * sin, t2 * cos + t1 * sin], -1)

        a = F.scaled_dot_product_attention(rope(q), rope(k), v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, h))
        return x + self.mlp(self.n2(x))

    def mlp(self, y):
        g, u = self.gate_up(y).chunk(2, -1)
        return self.down(F.silu(g) * u)


class Llama(nn.Module):
    def __init__(self, layers, h, heads, kv_heads, ffn, seq, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, h)
        self.blocks = nn.ModuleList([LlamaBlock(h, heads, kv_heads, ffn) for _ in range(layers)])
        self.norm = nn.RMSNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)
        d = h // heads
        inv = 1.0 / (10000 ** (torch.arange(0, d // 2, dtype=torch.float32) / (d // 2)))
        ang = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def forward(self, idx, target):
        x = self.emb(idx)
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), target.view(-1))


@guarded
def training_llama():
    """Eager Llama-style steps (vocabulary 32000: every GEMM's leading dimensions aligned): bf16 parameters
    and fused AdamW (no fp32 master copy), RMSNorm, rotary embeddings, SwiGLU, GQA attention."""
    phase("training_llama")
    seq, vocab = 2048, 32000
    for name, layers, h, heads, kv, ffn, mb in (("llama-1b", 8, 2048, 16, 4, 5632, 4),
                                                ("llama-small", 4, 1024, 8, 2, 2816, 8)):
        torch.manual_seed(0)
        model = Llama(layers, h, heads, kv, ffn, seq, vocab).to(DEV, torch.bfloat16)
        step = train_step(model, vocab, mb, seq, autocast=False)
        ms = step_ms(step)
        params = sum(p.numel() for p in model.parameters())
        row("training", f"gen llama3-8b --layers {layers} --hidden {h} --heads {heads} --kv-heads {kv} --ffn {ffn} "
            f"--vocab {vocab} --seq {seq} --micro-batch {mb}", ms,
            f"{name}: {params} parameters; eager PyTorch, bf16 weights, fused AdamW, RMSNorm, RoPE, SwiGLU, "
            f"SDPA causal GQA; one GPU; median of 10 steps (events), {mb * seq / ms * 1e3:.0f} tokens/s")
        profile_step(step, os.path.join(OUT, f"kineto_{name}_mb{mb}.json"))
        del model, step
        torch.cuda.empty_cache()


class MoE(nn.Module):
    """A dropless top-k MoE MLP as eager implementations write it (torchtitan's): router, softmax, top-k, the
    token copies sorted by expert (argsort, gather), both SwiGLU projections as torch._grouped_mm over the
    experts' offsets, the copies weighted and summed back (index_add_)."""

    def __init__(self, h, experts, topk, ffn):
        super().__init__()
        self.e, self.k = experts, topk
        self.router = nn.Linear(h, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, 2 * ffn, h) * h ** -0.5)  # [E, out, in]
        self.w2 = nn.Parameter(torch.randn(experts, h, ffn) * ffn ** -0.5)

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        p, idx = self.router(x).float().softmax(-1).topk(self.k, -1)
        flat = idx.view(-1)
        order = flat.argsort(stable=True)
        offs = torch.bincount(flat, minlength=self.e).cumsum(0).to(torch.int32)
        tok = order // self.k
        g, u = torch._grouped_mm(x[tok], self.w1.transpose(1, 2), offs=offs).chunk(2, -1)
        y = torch._grouped_mm(F.silu(g) * u, self.w2.transpose(1, 2), offs=offs)
        y = y * p.view(-1)[order].unsqueeze(-1).to(y.dtype)
        return torch.zeros_like(x).index_add_(0, tok, y).view(shape)


class MoEBlock(LlamaBlock):
    """LlamaBlock with its MLP a MoE."""

    def __init__(self, h, heads, kv_heads, experts, topk, ffn):
        super().__init__(h, heads, kv_heads, 8)
        del self.gate_up, self.down
        self.moe = MoE(h, experts, topk, ffn)

    def mlp(self, y):
        return self.moe(y)


@guarded
def training_moe():
    """Eager Llama-style MoE steps (every MLP a MoE: MoE above, 16-32 experts, top 4), bf16 weights, fused
    AdamW; their profiler traces for the importer (grouped GEMMs, the router's sort and the gathers)."""
    phase("training_moe")
    seq, vocab = 2048, 32000
    for name, layers, h, heads, kv, e, k, f, mb in (("moe-small", 4, 1024, 8, 2, 16, 4, 512, 4),
                                                    ("moe-1b", 4, 2048, 16, 4, 32, 4, 768, 2)):
        torch.manual_seed(0)
        model = Llama(layers, h, heads, kv, 8, seq, vocab)
        model.blocks = nn.ModuleList([MoEBlock(h, heads, kv, e, k, f) for _ in range(layers)])
        model = model.to(DEV, torch.bfloat16)
        step = train_step(model, vocab, mb, seq, autocast=False)
        ms = step_ms(step)
        params = sum(p.numel() for p in model.parameters())
        row("training", f"gen llama3-8b --layers {layers} --hidden {h} --heads {heads} --kv-heads {kv} "
            f"--experts {e} --topk {k} --expert-ffn {f} --vocab {vocab} --seq {seq} --micro-batch {mb}", ms,
            f"{name}: {params} parameters; eager PyTorch MoE (torch._grouped_mm, top-{k} of {e} experts, "
            f"learned router, dropless), bf16 weights, fused AdamW, RMSNorm, RoPE, SDPA causal GQA; one GPU; "
            f"median of 10 steps (events), {mb * seq / ms * 1e3:.0f} tokens/s")
        profile_step(step, os.path.join(OUT, f"kineto_{name}_mb{mb}.json"))
        del model, step
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- inference
# Llama-3 8B served as `sim gen llama3-8b --mode infer` describes a static batch: the prefill of batch x
# input-len tokens, then output-len - 1 decode steps over a growing KV cache, with the kernels vLLM fuses
# (RMSNorm, rotary embedding, SwiGLU) as one Triton kernel each. Every step replays a CUDA graph captured for
# its own context length, so no host time is in the figures: what is timed is what `--engine none` models.
try:
    import triton
    import triton.language as tl

    @triton.jit
    def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
        r = tl.program_id(0).to(tl.int64)
        c = tl.arange(0, BLOCK)
        m = c < cols
        x = tl.load(x_ptr + r * cols + c, mask=m, other=0.0).to(tl.float32)
        inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
        w = tl.load(w_ptr + c, mask=m, other=0.0).to(tl.float32)
        tl.store(y_ptr + r * cols + c, (x * inv * w).to(tl.bfloat16), mask=m)

    @triton.jit
    def _swiglu_kernel(gu_ptr, y_ptr, ffn, BLOCK: tl.constexpr):
        r = tl.program_id(0).to(tl.int64)
        c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = c < ffn
        g = tl.load(gu_ptr + r * 2 * ffn + c, mask=m, other=0.0).to(tl.float32)
        u = tl.load(gu_ptr + r * 2 * ffn + ffn + c, mask=m, other=0.0).to(tl.float32)
        tl.store(y_ptr + r * ffn + c, (g / (1.0 + tl.exp(-g)) * u).to(tl.bfloat16), mask=m)

    @triton.jit
    def _rope_kernel(qkv_ptr, cos_ptr, sin_ptr, pos_ptr, row_elems, heads, HALF: tl.constexpr, HP: tl.constexpr):
        t = tl.program_id(0).to(tl.int64)
        p = tl.load(pos_ptr + t).to(tl.int64)
        hh = tl.arange(0, HP)[:, None]
        i = tl.arange(0, HALF)[None, :]
        m = hh < heads
        base = qkv_ptr + t * row_elems + hh * (2 * HALF) + i
        x1 = tl.load(base, mask=m, other=0.0).to(tl.float32)
        x2 = tl.load(base + HALF, mask=m, other=0.0).to(tl.float32)
        c = tl.load(cos_ptr + p * HALF + i)
        s = tl.load(sin_ptr + p * HALF + i)
        tl.store(base, (x1 * c - x2 * s).to(tl.bfloat16), mask=m)
        tl.store(base + HALF, (x2 * c + x1 * s).to(tl.bfloat16), mask=m)

    _TRITON = True
except Exception:  # noqa: BLE001 - the section falls back to PyTorch's own kernels
    _TRITON = False


class Fused:
    """RMSNorm, SwiGLU and the rotary embedding as one kernel each (Triton), or PyTorch's kernels."""

    def __init__(self, use_triton):
        self.triton = use_triton

    def rmsnorm(self, x, w, eps=1e-5):
        if not self.triton:
            return F.rms_norm(x, (x.shape[-1],), w, eps)
        y = torch.empty_like(x)
        cols = x.shape[-1]
        _rmsnorm_kernel[(x.numel() // cols,)](x, w, y, cols, eps, BLOCK=triton.next_power_of_2(cols))
        return y

    def swiglu(self, gu):
        ffn = gu.shape[-1] // 2
        if not self.triton:
            g, u = gu.chunk(2, -1)
            return F.silu(g) * u
        y = torch.empty(gu.shape[0], ffn, device=gu.device, dtype=gu.dtype)
        _swiglu_kernel[(gu.shape[0], triton.cdiv(ffn, 1024))](gu, y, ffn, BLOCK=1024)
        return y

    def rope(self, qkv, cos, sin, pos, heads, d):
        """In place on the first `heads` heads (queries, then keys) of each row of qkv [T, (h + 2 hkv) d]."""
        if not self.triton:
            x = qkv[:, :heads * d].view(-1, heads, d)
            c, s = cos[pos][:, None, :], sin[pos][:, None, :]
            x1, x2 = x[..., :d // 2].float(), x[..., d // 2:].float()
            x.copy_(torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(x.dtype))
            return
        _rope_kernel[(qkv.shape[0],)](qkv, cos, sin, pos, qkv.shape[1], heads, HALF=d // 2,
                                      HP=triton.next_power_of_2(heads))


def fused_kernels_check():
    """Triton's kernels against PyTorch's on small tensors; False (PyTorch's kernels are used) on any doubt."""
    if not _TRITON:
        return False
    try:
        t, f = Fused(True), Fused(False)
        x = randn(5, 4096)
        w = randn(4096)
        gu = randn(5, 2 * 1024)
        qkv = randn(5, 48 * 128)
        qkv2 = qkv.clone()
        ang = torch.rand(16, 64, device=DEV) * 6.0
        cos, sin = ang.cos(), ang.sin()
        pos = torch.tensor([0, 3, 7, 9, 15], device=DEV, dtype=torch.int32)
        t.rope(qkv, cos, sin, pos, 40, 128)
        f.rope(qkv2, cos, sin, pos.long(), 40, 128)
        ok = (torch.allclose(t.rmsnorm(x, w).float(), f.rmsnorm(x, w).float(), atol=0.05, rtol=0.02)
              and torch.allclose(t.swiglu(gu).float(), f.swiglu(gu).float(), atol=0.05, rtol=0.02)
              and torch.allclose(qkv.float(), qkv2.float(), atol=0.05, rtol=0.02))
        print(f"  fused kernels check: {'ok' if ok else 'MISMATCH (PyTorch kernels used)'}", flush=True)
        return bool(ok)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return False


class LlamaServe:
    """Llama-3 8B's shapes with random bf16 weights, a contiguous KV cache [B, hkv, max_len, d] per layer."""

    def __init__(self, fused, layers=32, h=4096, heads=32, kv=8, ffn=14336, vocab=128256):
        self.f, self.L, self.h, self.heads, self.kv, self.ffn, self.vocab = fused, layers, h, heads, kv, ffn, vocab
        self.d = h // heads

        def w(*s):
            return torch.randn(*s, device=DEV, dtype=torch.bfloat16) * 0.02

        qkv_out = (heads + 2 * kv) * self.d
        self.emb = w(vocab, h)
        self.head = w(vocab, h)
        self.norm = torch.ones(h, device=DEV, dtype=torch.bfloat16)
        self.layers = [dict(n1=torch.ones(h, device=DEV, dtype=torch.bfloat16), qkv=w(qkv_out, h), o=w(h, h),
                            n2=torch.ones(h, device=DEV, dtype=torch.bfloat16), gu=w(2 * ffn, h), down=w(h, ffn))
                       for _ in range(layers)]
        inv = 1.0 / (500000.0 ** (torch.arange(0, self.d // 2, dtype=torch.float32, device=DEV) / (self.d // 2)))
        ang = torch.outer(torch.arange(16384, dtype=torch.float32, device=DEV), inv)
        self.cos, self.sin = ang.cos().contiguous(), ang.sin().contiguous()

    def alloc(self, b, max_len):
        self.kc = [torch.zeros(b, self.kv, max_len, self.d, device=DEV, dtype=torch.bfloat16) for _ in range(self.L)]
        self.vc = [torch.zeros(b, self.kv, max_len, self.d, device=DEV, dtype=torch.bfloat16) for _ in range(self.L)]

    def forward(self, ids, pos, start, n):
        """ids [b, n] at positions start..start+n-1 (pos: those positions per token, int32); returns next ids [b, 1]."""
        b = ids.shape[0]
        hq, hk, d = self.heads, self.kv, self.d
        x = F.embedding(ids.view(-1), self.emb)
        for i, p in enumerate(self.layers):
            qkv = F.linear(self.f.rmsnorm(x, p["n1"]), p["qkv"])
            self.f.rope(qkv, self.cos, self.sin, pos, hq + hk, d)
            q = qkv[:, :hq * d].view(b, n, hq, d).transpose(1, 2)
            k = qkv[:, hq * d:(hq + hk) * d].view(b, n, hk, d).transpose(1, 2)
            v = qkv[:, (hq + hk) * d:].view(b, n, hk, d).transpose(1, 2)
            self.kc[i][:, :, start:start + n].copy_(k)
            self.vc[i][:, :, start:start + n].copy_(v)
            if n > 1:
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            else:
                a = F.scaled_dot_product_attention(q, self.kc[i][:, :, :start + 1], self.vc[i][:, :, :start + 1],
                                                   enable_gqa=True)
            x = x + F.linear(a.transpose(1, 2).reshape(b * n, hq * d), p["o"])
            x = x + F.linear(self.f.swiglu(F.linear(self.f.rmsnorm(x, p["n2"]), p["gu"])), p["down"])
        last = self.f.rmsnorm(x, self.norm).view(b, n, self.h)[:, -1]
        logits = F.linear(last, self.head)
        return torch.softmax(logits, -1, dtype=torch.float32).argmax(-1, keepdim=True).to(ids.dtype)


@guarded
def inference():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile

    phase("inference")
    fused = Fused(fused_kernels_check())
    model = LlamaServe(fused)
    for b, lin, lout in ((1, 128, 128), (8, 512, 128), (32, 1024, 64), (16, 2048, 32), (128, 512, 32),
                         (256, 256, 32)):
        torch.manual_seed(0)
        model.alloc(b, lin + lout)
        prompt = torch.randint(0, model.vocab, (b, lin), device=DEV)
        ppos = torch.arange(lin, device=DEV, dtype=torch.int32).repeat(b)
        tok = torch.zeros(b, 1, device=DEV, dtype=torch.long)
        dpos = [torch.full((b,), lin + i, device=DEV, dtype=torch.int32) for i in range(lout - 1)]
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            # warm-up (Triton's compilation, cuBLAS's heuristics) outside any capture
            tok.copy_(model.forward(prompt, ppos, 0, lin))
            tok.copy_(model.forward(tok, dpos[0], lin, 1))
            torch.cuda.synchronize()
            if b == 8:
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    model.forward(tok, dpos[0], lin, 1)
                    torch.cuda.synchronize()
                names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
                print(f"  decode step b={b}: {len(names)} kernels; first layer's:", flush=True)
                for nm in names[1:1 + len(names) // model.L]:
                    print(f"    {nm[:150]}", flush=True)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            graphs = []
            with torch.cuda.stream(s):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, stream=s):
                    tok.copy_(model.forward(prompt, ppos, 0, lin))
                graphs.append(g)
                for i in range(lout - 1):
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g, pool=graphs[0].pool(), stream=s):
                        tok.copy_(model.forward(tok, dpos[i], lin + i, 1))
                    graphs.append(g)
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()

        def generate():
            for g in graphs:
                g.replay()

        generate()  # warm-up
        total = event_median_ms(generate, 5)
        prefill = event_median_ms(graphs[0].replay, 5)
        args = f"gen llama3-8b --mode infer --tp 1 --batch {b} --input-len {lin} --dtype bf16"
        kernels = "Triton-fused RMSNorm, RoPE, SwiGLU" if fused.triton else "PyTorch RMSNorm/RoPE/SwiGLU kernels"
        what = (f"Llama-3 8B shapes, random bf16 weights, one GPU; {kernels}, SDPA flash backend, contiguous KV "
                f"cache; every step a CUDA graph (no host time)")
        row("inference", f"{args} --output-len {lout}", total,
            f"{what}; prefill + {lout - 1} decode steps, median of 5 (events); "
            f"{b * lout / total * 1e3:.0f} tokens/s")
        row("inference", f"{args} --output-len 1", prefill,
            f"{what}; the prefill alone (first token), median of 5 (events)")
        del graphs, prompt, tok, dpos
        model.kc = model.vc = None
        torch.cuda.empty_cache()


@guarded
def inference_trace():
    """Profiler traces of Llama-3 8B decode steps (context 512) replayed from a CUDA graph, for the importer and
    for each kernel's time inside a step: kineto_decode_b<B>.json.gz, and a table of kernel times on stdout."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile

    phase("inference_trace")
    model = LlamaServe(Fused(fused_kernels_check()))
    lin = 512
    for b in (1, 64):
        model.alloc(b, lin + 8)
        prompt = torch.randint(0, model.vocab, (b, lin), device=DEV)
        ppos = torch.arange(lin, device=DEV, dtype=torch.int32).repeat(b)
        tok = torch.zeros(b, 1, device=DEV, dtype=torch.long)
        dpos = torch.full((b,), lin, device=DEV, dtype=torch.int32)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            tok.copy_(model.forward(prompt, ppos, 0, lin))
            tok.copy_(model.forward(tok, dpos, lin, 1))
            torch.cuda.synchronize()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, stream=s):
                    tok.copy_(model.forward(tok, dpos, lin, 1))
            torch.cuda.current_stream().wait_stream(s)
            for _ in range(3):
                g.replay()
            torch.cuda.synchronize()
            ms = event_median_ms(g.replay, 20)
            path = os.path.join(OUT, f"kineto_decode_b{b}.json")
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
                g.replay()
                torch.cuda.synchronize()
                model.forward(tok, dpos, lin, 1)  # the same step eagerly: CPU ops with shapes
                torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        gz(path, path + ".gz")
        ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        per = {}
        for e in ev:
            k = e.name[:60]
            n, t = per.get(k, (0, 0.0))
            per[k] = (n + 1, t + e.time_range.elapsed_us())
        print(f"  decode step b={b} skv={lin + 1}: {ms * 1e3:.1f} us from its graph; kernels (graph + eager):")
        for k, (n, t) in sorted(per.items(), key=lambda x: -x[1][1])[:16]:
            print(f"    {n:5d} x {t / n:8.2f} us  {k}")
        del g, prompt, tok
        model.kc = model.vc = None
        torch.cuda.empty_cache()


def gz(src, dst):
    with open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(src)


def train_step(model, vocab, mb, seq, autocast):
    """A training step of model on random tokens: forward (under bf16 autocast if asked), backward, fused AdamW."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, vocab, (mb, seq), device=DEV)
    tgt = torch.randint(0, vocab, (mb, seq), device=DEV)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = model(idx, tgt)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def step_ms(step):
    """Median of 10 steps (CUDA events) after 3 warm-up steps, in ms."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    return event_median_ms(step, 10)


def profile_step(step, path):
    """One step under the PyTorch profiler (shapes recorded), after one warm-up, written gzipped to path.gz."""
    from torch.profiler import ProfilerActivity, profile, schedule

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=1, repeat=1)) as prof:
        for _ in range(2):
            step()
            prof.step()
    prof.export_chrome_trace(path)
    gz(path, path + ".gz")


@guarded
def training():
    from torch.profiler import ExecutionTraceObserver

    phase("training")
    models = [("gpt3-125m", 12, 768, 12), ("gpt3-350m", 24, 1024, 16), ("small", 2, 512, 8)]
    seq = 2048
    for name, layers, h, heads in models:
        for mb in ((8,) if name == "small" else (4, 8)):
            torch.manual_seed(0)
            model = GPT(layers, h, heads, seq).to(DEV)
            step = train_step(model, 50257, mb, seq, autocast=True)
            ms = step_ms(step)
            params = sum(p.numel() for p in model.parameters())
            row("training", f"gen gpt --layers {layers} --hidden {h} --heads {heads} --seq {seq} "
                f"--micro-batch {mb}", ms,
                f"{name}: {params} parameters; eager PyTorch, autocast bf16, fp32 weights, fused AdamW, "
                f"SDPA causal, tied embeddings; one GPU; median of 10 steps (events), "
                f"{mb * seq / ms * 1e3:.0f} tokens/s")
            tag = f"{name}_mb{mb}"
            profile_step(step, os.path.join(OUT, f"kineto_{tag}.json"))
            if mb == 8 and name == "small":
                etp = os.path.join(OUT, f"et_{tag}.json")
                et = ExecutionTraceObserver().register_callback(etp)
                et.start()
                step()
                et.stop()
                et.unregister_callback()
                gz(etp, etp + ".gz")
            del model, step
            torch.cuda.empty_cache()



# ---------------------------------------------------------------- host-bound steps
HOST_MODELS = [("tiny", 2, 256, 4, 256, 1), ("tiny", 2, 256, 4, 256, 8), ("gpt3-125m", 12, 768, 12, 256, 1),
               ("gpt3-125m", 12, 768, 12, 1024, 4)]


def graph_step(model, vocab, mb, seq):
    """The whole training step (forward under bf16 autocast, backward, AdamW) captured in one CUDA graph, as
    PyTorch's whole-network capture recipe does it (static inputs, capturable optimizer, autocast cache off)."""
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True, capturable=True)
    except Exception:  # noqa: BLE001 - an older fused AdamW without capturable
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True, capturable=True)
    idx = torch.randint(0, vocab, (mb, seq), device=DEV)
    tgt = torch.randint(0, vocab, (mb, seq), device=DEV)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            loss = model(idx, tgt)
        loss.backward()
        opt.step()

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        step()
    torch.cuda.synchronize()
    return g.replay


def host_ms(step, n=10):
    """Median host wall time of one step() call in ms (no synchronization inside: the time to issue it)."""
    t = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        t.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
    t.sort()
    return t[len(t) // 2]


def kernel_count(step):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


@guarded
def host_bound():
    """Training steps of models small enough that the host's launches set the step time (issue 17 item 7):
    each eager (a row, its profiler trace for the importer, its host time and kernel count in the note) and
    the same step replayed from a CUDA graph of the whole step (a row: the host out of the figure)."""
    phase("host_bound")
    vocab = 50304  # a multiple of 128, as Megatron pads it: no misaligned logits GEMM in these rows
    for name, layers, h, heads, seq, mb in HOST_MODELS:
        torch.manual_seed(0)
        model = GPT(layers, h, heads, seq, vocab).to(DEV)
        step = train_step(model, vocab, mb, seq, autocast=True)
        ms = step_ms(step)
        hms = host_ms(step)
        nk = kernel_count(step)
        tag = f"host_{name}_s{seq}_mb{mb}"
        row("training", f"gen gpt --layers {layers} --hidden {h} --heads {heads} --seq {seq} --micro-batch {mb} "
            f"--vocab {vocab}", ms,
            f"{name}: eager PyTorch, autocast bf16, fp32 weights, fused AdamW, SDPA causal, tied embeddings; one "
            f"GPU; median of 10 steps (events); host issue time {hms:.3f} ms per step for {nk} kernels "
            f"({hms / nk * 1e3:.2f} us a kernel); trace kineto_{tag}.json.gz")
        profile_step(step, os.path.join(OUT, f"kineto_{tag}.json"))
        try:
            gms = event_median_ms(graph_step(model, vocab, mb, seq), 20)
            row("training", f"gen gpt --layers {layers} --hidden {h} --heads {heads} --seq {seq} "
                f"--micro-batch {mb} --vocab {vocab} (CUDA graph)", gms,
                f"{name}: the step above captured whole in one CUDA graph (autocast cache off, capturable fused "
                f"AdamW), replayed; median of 20 replays (events); eager/graph = {ms / gms:.2f}")
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        del model, step
        torch.cuda.empty_cache()


@guarded
def gemm_floor():
    """Small bf16 GEMMs three ways: the kernel's own duration (CUPTI, profiler), one call between events after
    an L2 flush (do_bench), and a loop of 100 back-to-back calls between two events (per call): the harness
    question of the small-GEMM floor."""
    from torch.profiler import ProfilerActivity, profile

    phase("gemm_floor")
    for n in (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096):
        a, b = randn(n, n), randn(n, n)
        one = bench_ms(lambda: torch.mm(a, b))
        for _ in range(10):
            torch.mm(a, b)
        loop = event_median_ms(lambda: [torch.mm(a, b) for _ in range(100)], 5) / 100
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                torch.mm(a, b)
            torch.cuda.synchronize()
        ks = sorted(e.device_time for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        names = {e.name[:60] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
        cupti = ks[len(ks) // 2] / 1e3 if ks else float("nan")
        row("gemm", f"gemm m={n} n={n} k={n} dtype=bf16", one,
            f"torch.mm one call after an L2 flush (do_bench median); loop of 100 back-to-back {loop * 1e3:.2f} us "
            f"a call; CUPTI kernel median {cupti * 1e3:.2f} us ({len(ks)} kernels of 20 calls: "
            f"{'; '.join(sorted(names))})")
        del a, b


@guarded
def pinned_copies():
    """Host-to-device and back from pinned memory, 4 KiB to 64 MiB: the fixed cost and the rate."""
    phase("pinned_copies")
    for size in (4 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20):
        d = torch.empty(size, dtype=torch.uint8, device=DEV)
        h = torch.empty(size, dtype=torch.uint8).pin_memory()
        for direction, fn in (("src=host dst=hbm", lambda: d.copy_(h, non_blocking=True)),
                              ("src=hbm dst=host", lambda: h.copy_(d, non_blocking=True))):
            for _ in range(5):
                fn()
            ms = event_median_ms(fn, 30)
            loop = event_median_ms(lambda: [fn() for _ in range(20)], 5) / 20
            row("memory", f"copy bytes={size} {direction}", ms,
                f"pinned, non_blocking copy_ between events (median of 30); 20 back-to-back: {loop * 1e3:.2f} us "
                f"each; {size / ms / 1e6:.1f} GB/s")
        del d, h



@guarded
def profiler_cost():
    """What the PyTorch profiler, as profile_step runs it (CPU and CUDA activities, record_shapes), adds to the
    host's time: chains of eager ops timed on the host without it and under it, and the CPU ops and runtime
    calls it records per call (figures in env.txt, not rows)."""
    from torch.profiler import ProfilerActivity, profile

    phase("profiler_cost")
    x = torch.zeros(1, device=DEV)
    a, b = randn(64, 64), randn(64, 64)
    lin = nn.Linear(256, 256).to(DEV)
    inp = torch.randn(8, 256, device=DEV, requires_grad=True)
    chains = [("add_", lambda: x.add_(1.0)), ("mm", lambda: torch.mm(a, b)),
              ("linear_fwd_bwd", lambda: lin(inp).sum().backward())]
    n = 400

    def host_per_call(fn):
        ts = []
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            ts.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        return sorted(ts)[2] / n * 1e6

    for name, fn in chains:
        for _ in range(50):
            fn()
        plain = host_per_call(fn)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
            profd = host_per_call(fn)
        path = os.path.join(OUT, "prof_cost.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            ev = json.load(f)["traceEvents"]
        os.remove(path)
        ncpu = sum(1 for e in ev if e.get("cat") == "cpu_op") / (5 * n)
        nrt = sum(1 for e in ev if e.get("cat") == "cuda_runtime") / (5 * n)
        line = (f"profiler_cost {name} plain_us {plain:.2f} profiled_us {profd:.2f} cpu_ops {ncpu:.2f} "
                f"runtime_calls {nrt:.2f} per_cpu_op_us {(profd - plain) / max(ncpu, 1e-9):.2f}")
        ENV.append(line)
        print("  " + line, flush=True)


# ---------------------------------------------------------------- SMs shared
# A GEMM beside a communication kernel (issue 17): Transformer Engine's bulk
# overlap gives the GEMM fewer SMs through cuBLASLt's SM count target (what
# torch._C._set_sm_carveout_experimental sets); an NCCL kernel on another
# stream instead holds its SMs while a GEMM that does not know of it runs.
SHARE = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 7168, 8192), (8192, 8192, 3584), (16384, 1280, 8192),
         (2048, 2048, 2048)]
CARVE = [0, 8, 16, 24, 32, 66]
HOGS = [8, 16, 32]


def kernel_launches(fn):
    """(name, grid) of every kernel fn launches, from the profiler's launch records."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            out.append(e.name[:90])
    return out


@guarded
def sm_share():
    import triton
    import triton.language as tl

    phase("sm_share")

    @triton.jit
    def _hog_copy(src, dst, n_blocks, step, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        for b in range(pid, n_blocks, step):
            offs = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            tl.store(dst + offs, tl.load(src + offs))

    p = torch.cuda.get_device_properties(0)
    sms = p.multi_processor_count
    ENV.append(f"sm_share sms {sms}")
    has_carve = hasattr(torch._C, "_set_sm_carveout_experimental")
    print(f"  carveout api: {has_carve}; blas backend {torch.backends.cuda.preferred_blas_library()}", flush=True)
    block = 8192
    # the copy kernels alone: bandwidth from C CTAs of 512 threads (one an SM: a
    # CTA of NCCL's size), 1 GiB each way
    src = torch.empty(1 << 29, dtype=torch.bfloat16, device=DEV)
    src.uniform_()
    dst = torch.empty_like(src)
    bw = {}
    for c in HOGS + [sms]:
        nb = src.numel() // block
        ms = bench_ms(lambda: _hog_copy[(c,)](src, dst, nb, c, BLOCK=block, num_warps=16))
        bw[c] = 2 * src.numel() * 2 / (ms * 1e-3)
        row("memory", f"copy bytes={src.numel() * 2} src=hbm dst=hbm ctas={c}", ms,
            f"a grid-stride copy kernel (Triton) of {c} CTAs of 512 threads, 1 GiB; "
            f"{bw[c] / 1e12:.2f} TB/s read+write")
    del src, dst
    torch.cuda.empty_cache()
    for m, n, k in SHARE:
        a = randn(m, k)
        b = randn(k, n)
        fl = gemm_flops(m, n, k)
        base = bench_ms(lambda: torch.mm(a, b))
        print(f"  gemm {m}x{n}x{k}: {base * 1e3:.1f} us alone ({fl / base / 1e9:.0f} TFLOP/s)", flush=True)
        if has_carve:
            torch.backends.cuda.preferred_blas_library("cublaslt")
            for cv in CARVE:
                torch._C._set_sm_carveout_experimental(cv)
                ms = bench_ms(lambda: torch.mm(a, b))
                names = kernel_launches(lambda: torch.mm(a, b)) if (m, n, k) == SHARE[0] else []
                torch._C._set_sm_carveout_experimental(None)
                row("gemm", f"gemm m={m} n={n} k={k} dtype=bf16 units={sms - cv}", ms,
                    f"torch.mm through cuBLASLt with an SM carveout of {cv} "
                    f"(torch._C._set_sm_carveout_experimental: CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, "
                    f"as Transformer Engine's comm-overlap GEMMs set it); {fl / ms / 1e9:.1f} TFLOP/s; "
                    f"alone (default backend) {base * 1e3:.1f} us" + (f"; kernels {names}" if names else ""))
            torch.backends.cuda.preferred_blas_library("cublas")
        # beside a copy kernel of C CTAs on a high-priority stream, launched first
        reps = max(1, int(round(8.0 / base)))
        side = torch.cuda.Stream(priority=-1)
        for c in HOGS:
            loop_ms = base * reps
            nbytes = int(min(bw[c] * loop_ms * 3e-3 / 2, 8 << 30))
            nel = (nbytes // 2 // block) * block
            src = torch.empty(nel, dtype=torch.bfloat16, device=DEV)
            dst = torch.empty_like(src)
            nb = nel // block
            times = []
            for it in range(4):
                e = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
                torch.cuda.synchronize()
                start = torch.cuda.Event()
                start.record()
                side.wait_event(start)
                with torch.cuda.stream(side):
                    e[0].record()
                    _hog_copy[(c,)](src, dst, nb, c, BLOCK=block, num_warps=16)
                    e[1].record()
                torch.cuda._sleep(20000)  # the copy's CTAs reach their SMs first
                e[2].record()
                for _ in range(reps):
                    torch.mm(a, b)
                e[3].record()
                torch.cuda.synchronize()
                g = e[2].elapsed_time(e[3]) / reps
                cp = e[0].elapsed_time(e[1])
                covered = e[0].elapsed_time(e[3]) <= cp
                if it:
                    times.append((g, cp, covered))
            times.sort()
            g, cp, covered = times[len(times) // 2]
            alone_cp = 2 * nel * 2 / bw[c] * 1e3
            row("gemm", f"gemm m={m} n={n} k={k} dtype=bf16 busy={c}", g,
                f"torch.mm (cuBLAS, default) repeated {reps} times while a {c}-CTA copy kernel (512 threads a CTA, "
                f"{2 * nel * 2 / 2**30:.2f} GiB moved) runs on a high-priority stream; alone {base * 1e3:.1f} us; "
                f"the copy took {cp:.2f} ms beside it, {alone_cp:.2f} ms alone; "
                f"copy {'covered' if covered else 'did NOT cover'} the GEMMs; median of 3")
            del src, dst
            torch.cuda.empty_cache()
        del a, b


# ---------------------------------------------------------------- latency under load
# How long a load from device memory takes against how busy the memory is: C
# CTAs of 512 threads each stream a buffer with one block of B bytes in flight
# a loop iteration (no software pipelining: num_stages=1), reading only (one
# float out a CTA). One iteration's time is the latency of the loads at that
# load (Little's law: B / (bytes a CTA moves per second)). The configs give the
# idle latency (memory.dram.latency + memory.l2.latency for a miss) and the
# model multiplies it by model.loaded_latency at any load; the copy rows
# LSM001-LSM003 (16 KiB a CTA, 8 to 32 CTAs) moved at the idle one. Figures in
# env.txt (`latency_load`), no rows: an op line has no key for a kernel's grid.
LOAD_CTAS = [1, 2, 4, 8, 16, 32, 66, 132, 264, 528]
LOAD_BLOCKS = [1024, 4096, 16384]  # bf16 elements a CTA an iteration: 2, 8 and 32 KiB


@guarded
def latency_load():
    import triton
    import triton.language as tl

    phase("latency_load")

    @triton.jit
    def _stream_read(src, out, n_blocks, step, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for b in range(pid, n_blocks, step):
            offs = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            acc += tl.load(src + offs).to(tl.float32)
        tl.store(out + pid, tl.sum(acc, axis=0))

    src = torch.empty(1 << 30, dtype=torch.bfloat16, device=DEV)  # 2 GiB, far past the L2
    src.uniform_()
    out = torch.empty(max(LOAD_CTAS), dtype=torch.float32, device=DEV)
    ENV.append("latency_load block_bytes ctas read_GBps us_per_iteration")
    for block in LOAD_BLOCKS:
        nb = src.numel() // block
        for c in LOAD_CTAS:
            ms = bench_ms(lambda: _stream_read[(c,)](src, out, nb, c, BLOCK=block, num_warps=16, num_stages=1))
            gbps = src.numel() * 2 / (ms * 1e-3) / 1e9
            iters = math.ceil(nb / c)
            line = f"latency_load {block * 2} {c} {gbps:.1f} {ms * 1e3 / iters:.3f}"
            ENV.append(line)
            print("  " + line, flush=True)
    del src, out
    torch.cuda.empty_cache()


# ---------------------------------------------------------------- convolutions
# ResNet-50's convolutions at batch 64, 224x224 (He et al. 2016, torchvision's
# resnet50: stride on the 3x3), channels_last bf16 as a training script runs
# them with cudnn.benchmark: n, c, h, w, k, r, stride, pad.
RESNET_CONVS = [
    (64, 3, 224, 224, 64, 7, 2, 3), (64, 64, 56, 56, 64, 1, 1, 0), (64, 64, 56, 56, 64, 3, 1, 1),
    (64, 64, 56, 56, 256, 1, 1, 0), (64, 256, 56, 56, 64, 1, 1, 0), (64, 128, 56, 56, 128, 3, 2, 1),
    (64, 128, 28, 28, 128, 3, 1, 1), (64, 512, 28, 28, 128, 1, 1, 0), (64, 256, 14, 14, 256, 3, 1, 1),
    (64, 1024, 14, 14, 256, 1, 1, 0), (64, 256, 14, 14, 1024, 1, 1, 0), (64, 512, 7, 7, 512, 3, 1, 1),
    (64, 2048, 7, 7, 512, 1, 1, 0), (64, 512, 7, 7, 2048, 1, 1, 0),
]
BN_SHAPES = [(64, 64, 112, 112), (64, 256, 56, 56), (64, 512, 28, 28), (64, 1024, 14, 14), (64, 2048, 7, 7)]


@guarded
def conv():
    phase("conv")
    torch.backends.cudnn.benchmark = True
    for n, c, h, w, k, r, st, pad in RESNET_CONVS:
        x = randn(n, c, h, w).to(memory_format=torch.channels_last)
        wt = randn(k, c, r, r).to(memory_format=torch.channels_last)
        y = F.conv2d(x, wt, stride=st, padding=pad)
        dy = randn(*y.shape).to(memory_format=torch.channels_last)
        p, q = y.shape[2], y.shape[3]
        fl = 2.0 * n * k * p * q * c * r * r
        op = f"conv n={n} c={c} h={h} w={w} k={k} r={r} s={r} stride={st} pad={pad} dtype=bf16"
        shape = f"NHWC bf16, output {p}x{q}"
        ms = bench_ms(lambda: F.conv2d(x, wt, stride=st, padding=pad))
        row("conv", op, ms, f"F.conv2d (cuDNN, benchmark mode), {shape}; {fl / ms / 1e9:.1f} TFLOP/s")
        for mask, d in (((True, False, False), "dgrad"), ((False, True, False), "wgrad"),
                        ((True, True, False), "bwd")):
            if d != "wgrad" and c == 3:
                continue  # the stem's input (the image) needs no gradient
            fn = lambda mask=mask: torch.ops.aten.convolution_backward(  # noqa: E731
                dy, x, wt, None, [st, st], [pad, pad], [1, 1], False, [0, 0], 1, list(mask))
            ms = bench_ms(fn)
            names = kernel_launches(fn)
            mult = sum(mask)
            row("conv", f"{op} dir={d}", ms,
                f"aten.convolution_backward output_mask {list(mask)} (cuDNN), {shape}; "
                f"{mult * fl / ms / 1e9:.1f} TFLOP/s; kernels {names}")
        del x, wt, y, dy
    for n, c, h, w in BN_SHAPES:
        x = randn(n, c, h, w).to(memory_format=torch.channels_last)
        wt = torch.ones(c, device=DEV)
        bs = torch.zeros(c, device=DEV)
        rm = torch.zeros(c, device=DEV)
        rv = torch.ones(c, device=DEV)
        el = n * c * h * w
        ms = bench_ms(lambda: F.batch_norm(x, rm, rv, wt, bs, training=True))
        names = kernel_launches(lambda: F.batch_norm(x, rm, rv, wt, bs, training=True))
        row("memory", f"elem op=batchnorm n={el} channels={c} dtype=bf16", ms,
            f"F.batch_norm training mode, NHWC bf16 ({n}, {c}, {h}, {w}), fp32 weights; "
            f"{2 * el * 2 / ms / 1e6:.0f} GB/s counting one read and one write; kernels {names}")
        xr = x.detach().requires_grad_()
        y = F.batch_norm(xr, rm, rv, wt.requires_grad_(), bs.requires_grad_(), training=True)
        dy = torch.randn_like(y)
        ms = bench_ms(lambda: torch.autograd.grad(y, (xr, wt, bs), dy, retain_graph=True))
        row("memory", f"elem op=batchnorm n={el} channels={c} dtype=bf16 dir=bwd", ms,
            f"F.batch_norm's backward (autograd.grad for x, weight, bias), NHWC bf16 ({n}, {c}, {h}, {w}); "
            f"{3 * el * 2 / ms / 1e6:.0f} GB/s counting x and dy read and dx written once")
        wt.requires_grad_(False)
        bs.requires_grad_(False)
        del x, xr, y, dy
    torch.cuda.empty_cache()


@guarded
def resnet():
    import torchvision

    phase("resnet")
    torch.backends.cudnn.benchmark = True
    for mb in (64, 128):
        torch.manual_seed(0)
        model = torchvision.models.resnet50().to(DEV).to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=True)
        x = randn(mb, 3, 224, 224, dtype=torch.float32).to(memory_format=torch.channels_last)
        tgt = torch.randint(0, 1000, (mb,), device=DEV)

        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(x), tgt)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        ms = step_ms(step)
        row("training", f"resnet50 batch={mb} image=224", ms,
            f"torchvision resnet50, eager, channels_last, autocast bf16, fp32 weights, SGD momentum (foreach), "
            f"cudnn.benchmark; one GPU; median of 10 steps (events), {mb / ms * 1e3:.0f} images/s")
        profile_step(step, os.path.join(OUT, f"kineto_resnet50_mb{mb}.json"))
        del model, opt, x
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- clock under the power limit
def sustain(fn, hnd, seconds=2.5):
    """fn back to back for `seconds` (about 100 ms of calls queued at a time, two batches at most), NVML samples
    of the SM clock and the board power while they run: ms a call, the calls, and the samples after the first
    third (the clock settling), sorted."""
    import pynvml

    est = bench_ms(fn)  # one call, to size the batches
    per = max(1, int(100.0 / est))
    clocks, watts = [], []
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    calls, prev = 0, None
    t_end = time.time() + seconds
    e0.record()
    while time.time() < t_end:
        for _ in range(per):
            fn()
        calls += per
        done = torch.cuda.Event()
        done.record()
        # sample while the batch before runs (two batches queued at most, one always)
        for _ in range(3):
            time.sleep(0.02)
            clocks.append(pynvml.nvmlDeviceGetClockInfo(hnd, pynvml.NVML_CLOCK_SM))
            watts.append(pynvml.nvmlDeviceGetPowerUsage(hnd) / 1000.0)
        if prev is not None:
            prev.synchronize()
        prev = done
    e1.record()
    torch.cuda.synchronize()
    third = len(clocks) // 3
    return e0.elapsed_time(e1) / calls, calls, sorted(clocks[third:]), sorted(watts[third:])


def clock_note(what, calls, seconds, clocks, watts, rate):
    """A clock row's note: what ran, the median SM clock and power (to_validation.py reads the clock from it)."""
    return (f"sustained {calls} calls over {seconds} s {what}: SM clock median {clocks[len(clocks) // 2]} MHz "
            f"(range {clocks[0]}-{clocks[-1]}), board power median {watts[len(watts) // 2]:.0f} W; {rate}")


def carveout_rows(fn, hnd, op, carveouts, rate):
    """A clock row of fn sustained with each SM carveout (PyTorch's, which cuBLAS(Lt)'s kernels keep off that
    many SMs): the op with units=, rate(ms) its throughput in the note."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for cv in carveouts:
        torch._C._set_sm_carveout_experimental(cv)
        try:
            ms, calls, c_s, w_s = sustain(fn, hnd)
        finally:
            torch._C._set_sm_carveout_experimental(None)
        row("clock", f"{op} units={sms - cv}", ms,
            clock_note(f"through cuBLASLt with an SM carveout of {cv}", calls, 2.5, c_s, w_s, rate(ms)))


# The SM clock and the board power while one GEMM runs for seconds on all SMs or on fewer (the SM carveout):
# how the clock rises as the SMs drawing power are fewer is the exponent of the DVFS curve near the power limit
# (P ~ N f^a), which the device model's power limit assumes.
@guarded
def dvfs():
    import pynvml

    phase("dvfs")
    pynvml.nvmlInit()
    hnd = pynvml.nvmlDeviceGetHandleByIndex(0)
    torch.backends.cuda.preferred_blas_library("cublaslt")
    m = n = k = 8192
    for dt in ("bf16", "fp8"):
        if dt == "fp8":
            a = randn(m, k, dtype=torch.float32).to(torch.float8_e4m3fn)
            b = randn(n, k, dtype=torch.float32).to(torch.float8_e4m3fn).t()
            one = torch.ones((), device=DEV)
            fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        else:
            a = randn(m, k)
            b = randn(k, n)
            fn = lambda: torch.mm(a, b)  # noqa: E731
        tr = " trans=nt" if dt == "fp8" else ""
        carveout_rows(fn, hnd, f"gemm m={m} n={n} k={k} dtype={dt}{tr}", (0, 16, 33, 50, 66, 88, 100),
                      lambda ms: f"{2.0 * m * n * k / ms / 1e9:.1f} TFLOP/s")
        del a, b
    torch.backends.cuda.preferred_blas_library("cublas")
    pynvml.nvmlShutdown()


@guarded
def clocks():
    """The SM clock kernels other than a large GEMM sustain, as dvfs measures it, for what the model's clock
    rules leave open (tests/validation/measured/README.md, "Open questions"): fused attention (FlashAttention-2
    through torch SDPA's flash backend, cuDNN's through its cuDNN backend; forward and backward), which the model
    runs at the rated tensor clock without a power limit; an fp32 GEMM on the CUDA cores, which it runs at the
    top clock without one; a small bf16 GEMM; and cuBLAS's GEMV (m = 8, the weights 8192 x 8192) on all SMs and
    on 99, 66 and 32 of them (SM carveout), whose read bandwidth (69-70% of the HBM peak on all SMs) the model
    puts at 92%. Each is a clock row and a timed row (to_validation.py: the op's kind)."""
    import pynvml
    from torch.nn.attention import SDPBackend, sdpa_kernel

    phase("clocks")
    pynvml.nvmlInit()
    hnd = pynvml.nvmlDeviceGetHandleByIndex(0)
    b, h, s, d = 4, 16, 4096, 128
    fl = attn_flops(b, h, s, s, d, 1)
    base = f"attn b={b} h={h} hkv={h} sq={s} skv={s} d={d} causal=1 dtype=bf16"
    for impl, be in (("flash2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        q, k, v = (randn(b, h, s, d).requires_grad_() for _ in range(3))
        with sdpa_kernel([be]):
            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
            out = fwd()
            go = torch.randn_like(out)
            bwd = lambda: torch.autograd.grad(out, (q, k, v), go, retain_graph=True)  # noqa: E731
            for direction, fn, mult in (("fwd", fwd, 1.0), ("bwd", bwd, 2.5)):
                ms, calls, c_s, w_s = sustain(fn, hnd)
                row("clock", f"{base} impl={impl} dir={direction}", ms,
                    clock_note(f"of torch SDPA's {impl} backend", calls, 2.5, c_s, w_s,
                               f"{mult * fl / ms / 1e9:.1f} TFLOP/s; what=attention {direction} ({impl})"))
        del q, k, v, out, go
    for dt, m in (("fp32", 8192), ("bf16", 1024)):
        a = randn(m, m, dtype=torch.float32 if dt == "fp32" else torch.bfloat16)
        bm = randn(m, m, dtype=torch.float32 if dt == "fp32" else torch.bfloat16)
        ms, calls, c_s, w_s = sustain(lambda: torch.mm(a, bm), hnd)
        row("clock", f"gemm m={m} n={m} k={m} dtype={dt}", ms,
            clock_note("of torch.mm (cuBLAS)", calls, 2.5, c_s, w_s,
                       f"{2.0 * m ** 3 / ms / 1e9:.1f} TFLOP/s; what=dense GEMM torch.mm"))
        del a, bm
    torch.backends.cuda.preferred_blas_library("cublaslt")
    x = randn(8, 8192)
    w = randn(8192, 8192)
    carveout_rows(lambda: torch.mm(x, w), hnd, "gemm m=8 n=8192 k=8192 dtype=bf16", (0, 33, 66, 100),
                  lambda ms: f"{8192 * 8192 * 2 / ms / 1e6:.0f} GB/s of weights; what=GEMV torch.mm (cuBLASLt)")
    del x, w
    torch.backends.cuda.preferred_blas_library("cublas")
    pynvml.nvmlShutdown()


def env():
    lines = [f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
             f"python {sys.version.split()[0]}", f"torch {torch.__version__}",
             f"cuda {torch.version.cuda}", f"cudnn {torch.backends.cudnn.version()}",
             f"device {torch.cuda.get_device_name()}"]
    p = torch.cuda.get_device_properties(0)
    lines.append(f"sms {p.multi_processor_count} memory_bytes {p.total_memory} l2_bytes {p.L2_cache_size}")
    try:
        import triton
        lines.append(f"triton {triton.__version__}")
    except Exception:  # noqa: BLE001
        lines.append("triton absent")
    try:
        lines.append("torch_cuda_compiled " + str(torch._C._cuda_getCompiledVersion()))
        import importlib.metadata as md
        lines.append("nvidia-cublas " + md.version("nvidia-cublas"))
    except Exception:  # noqa: BLE001
        pass
    q = ("name,driver_version,pci.bus_id,power.limit,power.default_limit,clocks.max.sm,clocks.max.mem,"
         "clocks.applications.graphics,ecc.mode.current,compute_mode,persistence_mode")
    try:
        lines.append("nvidia-smi " + q)
        lines.append(subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                                    capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:  # noqa: BLE001
        lines.append(f"nvidia-smi failed: {e}")
    ENV.extend(lines)
    print("\n".join(lines), flush=True)


def main():
    smi = None
    try:
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,"
                                "utilization.gpu", "--format=csv,noheader,nounits", "-lms", "200"],
                               stdout=open(os.path.join(OUT, "smi.csv"), "w"), stderr=subprocess.DEVNULL)
    except Exception:  # noqa: BLE001
        pass
    env()
    only = set(sys.argv[1:])
    for section in (gemms, attention, memory, training, training_llama, inference, inference_trace, sm_share,
                    conv, resnet, dvfs, clocks, moe_gemms, decode_attn, launch, training_moe, host_bound, gemm_floor, pinned_copies, profiler_cost,
                    latency_load):
        if not only or section.__name__ in only:
            section()
    phase("end")
    if smi:
        smi.terminate()
    with open(os.path.join(OUT, "rows.tsv"), "w") as f:
        f.write("id\tkind\top\tvalue\tunit\tnote\n")
        for r in ROWS:
            f.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]:.3f}\t{r[4]}\t{r[5]}\n")
    with open(os.path.join(OUT, "env.txt"), "w") as f:
        f.write("\n".join(ENV) + "\n")
        for t, name in PHASES:
            f.write(f"{time.strftime('%Y/%m/%d %H:%M:%S', time.localtime(t))}.{int(t * 1000) % 1000:03d}\t{name}\n")
    print(f"{len(ROWS)} rows in {time.time() - T0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
