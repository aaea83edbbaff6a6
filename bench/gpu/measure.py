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
  kineto_*.json.gz   PyTorch profiler (Kineto) traces of training steps of
                 the GPT models of `sim gen gpt` (docs/workloads.md), for the
                 importer (issue 19)
  et_*.json.gz   PyTorch execution traces (the input of Chakra's converter)

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
        row("gemm", op, ms, f"{note}; {gemm_flops(m, n, k) / ms / 1e9:.1f} TFLOP/s")
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
        g, u = self.gate_up(self.n2(x)).chunk(2, -1)
        return x + self.down(F.silu(g) * u)


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
        row("training", f"llama --layers {layers} --hidden {h} --heads {heads} --kv-heads {kv} --ffn {ffn} "
            f"--vocab {vocab} --seq {seq} --micro-batch {mb}", ms,
            f"{name}: {params} parameters; eager PyTorch, bf16 weights, fused AdamW, RMSNorm, RoPE, SwiGLU, "
            f"SDPA causal GQA; one GPU; median of 10 steps (events), {mb * seq / ms * 1e3:.0f} tokens/s")
        profile_step(step, os.path.join(OUT, f"kineto_{name}_mb{mb}.json"))
        del model, step
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
            if mb == 8:
                tag = f"{name}_mb{mb}"
                profile_step(step, os.path.join(OUT, f"kineto_{tag}.json"))
                if name == "small":
                    etp = os.path.join(OUT, f"et_{tag}.json")
                    et = ExecutionTraceObserver().register_callback(etp)
                    et.start()
                    step()
                    et.stop()
                    et.unregister_callback()
                    gz(etp, etp + ".gz")
            del model, step
            torch.cuda.empty_cache()


def env():
    lines = [f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
             f"python {sys.version.split()[0]}", f"torch {torch.__version__}",
             f"cuda {torch.version.cuda}", f"cudnn {torch.backends.cudnn.version()}",
             f"device {torch.cuda.get_device_name()}"]
    p = torch.cuda.get_device_properties(0)
    lines.append(f"sms {p.multi_processor_count} memory_bytes {p.total_memory}")
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
    for section in (gemms, attention, memory, training, training_llama):
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
