#!/usr/bin/env python3
"""to_validation.py -- a lent GPU's raw output as validation rows.

usage: to_validation.py RUN_DIR CONFIG PREFIX [TRACE_DIR]

RUN_DIR holds what bench/gpu/measure.py wrote (env.txt, and rows.tsv where it
ran) and, where bench/gpu/misaligned.py ran, its misaligned*.tsv
(tests/validation/measured/<device>-<date>/). Prints, on stdout, the rows in
the ten columns of tests/validation/measurements-*.tsv, and on stderr the
cases.tsv and skipped.tsv lines for them (the ids are PREFIX + the script's own
id), to be appended by hand after review:
  - GEMM (misaligned ones too), FlashAttention-2 (torch SDPA flash backend),
    decode attention, elementwise and copy rows: cases (metric us) on CONFIG;
  - inference batches (Llama-3 8B from CUDA graphs): gen cases, metric latency;
  - eager-PyTorch training steps: import cases of their profiler traces where
    TRACE_DIR (relative to the repository root) holds them, as
    `kineto_<model>_mb<N>.json.gz`; skipped otherwise (`sim gen` writes a
    Megatron-style step, not this one);
  - cuDNN attention rows: cases of impl=cudnn; PyTorch's eager row kernels
    (LayerNorm, RMSNorm, softmax): skipped, with the reason;
  - the local experts' GEMMs of MoE layers (batch=): torch.bmm's cases as
    measured, torch._grouped_mm's with the tile PyTorch's grouped kernel
    runs (tile=), torch._scaled_grouped_mm's (fp8) with its tile and, without
    use_fast_accum, promote=128, but for that 128x256 kernel (skipped, with the
    reason);
  - GEMMs given fewer SMs (units=, the SM carveout) or beside a copy kernel
    that holds some (busy=; measure.py of 2026-11-28 wrote them sms= and
    beside=copy:): cases; convolutions (cuDNN forward, dgrad, wgrad, both):
    cases of category conv; the copy kernels of a few CTAs and batch norm:
    skipped, with the reason; ResNet-50 steps: skipped (an import case gives
    tokens, which an image model has none of);
  - host_bound steps: import cases (metric ms) of the eager step's trace,
    with --profiler-overhead (the steps were timed unprofiled) for the eager
    row and --host graph for its CUDA graph's; pinned copies: cases where
    one call and 20 back-to-back ones agree within 20%, skipped (host-bound)
    otherwise; small GEMMs (gemm_floor): cases like any GEMM;
  - sustained GEMMs with the SM clock they ran at (measure.py dvfs): a gemm
    row of their time (id PREFIX G...) and a clock row of the clock (PREFIX
    C...), cases of both (metric us, and mhz: the clock the model runs the
    kernel at).
"""

import glob
import os
import re
import sys


ROW_KERNEL = ("PyTorch's eager row kernel (LayerNorm, RMSNorm, softmax), which reads each row more than once: "
              "`elem op=layernorm|rmsnorm|softmax` is the single-pass fused kernel of Transformer Engine and Apex "
              "that `sim gen`'s steps run (tests/validation/measured/README.md)")


FP8_GROUPED_SPILL = ("torch._scaled_grouped_mm's 128x256 kernel without fast accumulation (ScaledGroupMM.cu runs it "
                     "when no two of a group's M, N and K reach 2048 and neither M nor N is at most 128): its two sets "
                     "of fp32 accumulators, 2 x 128 a thread, do not fit the registers and spill to local memory "
                     "(3.3-4.1x the model's time of the same kernel without promotion), which the model does not time: "
                     "`sim op` refuses the promoted tile (docs/cli.md, promote=)")


def scaled_grouped_tile(m, n, k, fast):
    """torch._scaled_grouped_mm's kernel on Hopper, from a group's M, N and K and use_fast_accum
    (aten/src/ATen/native/cuda/ScaledGroupMM.cu, dispatch_fp8_grouped_gemm_on_tile_size): ping-pong 64x128 when M
    or N is at most 128; when two of M, N and K are at least 2048, 256x128 with fast accumulation, 128x128 without;
    else 128x256 (K 64). Without fast accumulation (PyTorch's default) the kernels promote their partial sums every
    128 of K: ' promote=128'. None for the 128x256 one without fast accumulation, whose accumulators spill."""
    promote = "" if fast else " promote=128"
    if min(m, n) <= 128:
        return "64x128" + promote
    if (m >= 2048 and k >= 2048) or (m >= 2048 and n >= 2048) or (k >= 2048 and n >= 2048):
        return ("256x128" if fast else "128x128") + promote
    return "128x256" if fast else None


# The host time PyTorch's profiler (record_shapes) adds per CPU op it records: the mean of its three chains in
# tests/validation/measured/h200-2026-11-30b/env.txt (2.28, 3.40, 3.25 us), a run of its own.
PROFILER_OVERHEAD = "3us"

HOST_BOUND_COPY = ("a pinned copy whose one call between events takes over 20% more than each of 20 back-to-back "
                   "ones: the host's issue of copy_ (10-11 us a call on this host), not the copy, sets both figures; "
                   "`sim op` times the device's work alone")


def env_of(run):
    """env.txt's `key value` lines, and the device column built from nvidia-smi's line."""
    lines = open(os.path.join(run, "env.txt")).read().splitlines()
    env = dict(line.split(" ", 1) for line in lines if " " in line and not line[0].isdigit())
    smi = lines[lines.index(next(l for l in lines if l.startswith("nvidia-smi "))) + 1].split(", ")
    device = f"{smi[0]} SXM5 (lent machine; {smi[3]} power limit, driver {smi[1]})"
    cudnn = int(env["cudnn"])  # 91900: 9.19.0
    software = (f"PyTorch {env['torch']}, CUDA {env['cuda']}, cuDNN {cudnn // 10000}.{cudnn // 100 % 100}."
                f"{cudnn % 100}, Triton {env['triton']} (do_bench: CUDA events, L2 flushed, median)")
    return env["date"].split()[0], device, software


def source(script, date, path):
    return f"bench/gpu/{script} (this repository), run {date} on a lent GPU; raw output {path}"


def measure_rows(run, config, prefix, traces, date, device, software, out, cases, skipped):
    path = os.path.join(run, "rows.tsv")
    prev_trace = None
    for line in open(path).read().splitlines()[1:]:
        rid, kind, op, value, unit, note = line.split("\t")
        mid = prefix + rid
        impl = note.rsplit("impl=", 1)[1] if "impl=" in note else ""
        cat = kind
        op = re.sub(r" beside=copy:(\d+)", r" busy=\1", op.replace(" sms=", " units="))
        if kind == "clock":
            mhz = note.split("SM clock median ")[1].split()[0]
            # what ran (measure.py clocks: "what=..."; dvfs: the dense GEMMs), and the timed row's kind
            what = note.rsplit("what=", 1)[1] if "what=" in note else \
                "dense GEMM torch.mm / torch._scaled_mm (cuBLASLt)"
            timed = "attention" if op.startswith("attn") else "gemm"
            for k, v, u, w in ((timed, value, "us", f"{what}, sustained for 2.5 s"),
                               ("clock", mhz, "MHz", f"SM clock (NVML, median) under a sustained {what}")):
                rid2 = prefix + (("A" if timed == "attention" else "G") + rid[1:] if k != "clock" else rid)
                sw = software.replace("(do_bench: CUDA events, L2 flushed, median)",
                                      "(CUDA events over 2.5 s of back-to-back calls; NVML clock samples)")
                out.append("\t".join([rid2, k, device, sw, w, op, v, u, source("measure.py", date, path),
                                      note]))
                cases.append(f"{rid2}\t{config}\t-\t{'mhz' if k == 'clock' else 'us'}\t{op}")
            continue
        if kind == "gemm":
            workload = "dense GEMM " + note.split(";")[0].split(",")[0]
            if " batch=" in op:
                workload = "MoE local experts' GEMMs " + note.split(";")[0].split(",")[0]
            elif " units=" in op:
                workload = "dense GEMM torch.mm (cuBLASLt) given fewer SMs (SM carveout)"
            elif " busy=" in op:
                workload = "dense GEMM torch.mm (cuBLAS) beside a copy kernel holding some SMs"
        elif kind == "conv":
            d = op.split("dir=")[1] if "dir=" in op else "forward"
            workload = f"convolution {d} (cuDNN), " + note.split(";")[0].split("), ", 1)[1]
        elif kind == "attention":
            workload = "attention " + ("decode " if impl == "decode" else "") + (
                "forward" if "dir=fwd" in op else "backward") + ", " + note.split(";")[0].split(" (do_bench")[0]
        elif kind == "memory":
            workload = ("copy " if op.startswith("copy") else "elementwise ") + note.split(";")[0]
        elif kind == "inference":
            workload = "inference batch (prefill and decode), " + note.split(";")[0]
            value, unit = f"{float(value) / 1e6:.6f}", "s (end-to-end batch latency)"
        elif op.startswith("resnet") or "--vocab 50304" in op:  # measure.py's host_bound steps time the step
            workload = "training step, " + note.split(";")[0]
            value, unit = f"{float(value) / 1e3:.3f}", "ms"
            op = op.replace(" (CUDA graph)", "")
        else:
            workload = "training step, " + note.split(":")[0]
            value = f"{float(note.rsplit(', ', 1)[1].split()[0]):.0f}"
            unit = "tokens/s"
            if not op.startswith("gen "):  # measure.py before the llama rows said `gen llama3-8b`
                op = "gen llama3-8b " + op.split(" ", 1)[1]
        sw = software
        if "replayed from a CUDA graph" in note:  # measure.py's graph_ms (decode_attn since 2026-11-29b)
            sw = software.replace("(do_bench: CUDA events, L2 flushed, median)",
                                  "(a CUDA graph's replays between CUDA events, L2 flushed as do_bench does, median)")
        out.append("\t".join([mid, cat, device, sw, workload, op, value, unit,
                              source("measure.py", date, path), note]))
        graph = "captured whole in one CUDA graph" in note
        if kind == "training" and "host issue time" in note or graph:
            # host_bound: the eager step replayed with the profiler's cost per CPU op taken out of the recorded host
            # (the steps were timed unprofiled; PROFILER_OVERHEAD from a run of its own), its graph replay with no
            # host at all; the trace is the eager step's either way
            trace = traces and os.path.join(traces, note.split("trace ")[1] if not graph else "")
            if graph:
                trace = prev_trace
            prev_trace = trace
            how = "--host graph" if graph else f"--profiler-overhead {PROFILER_OVERHEAD}"
            cases.append(f"{mid}\t{config}\t-\tms\timport {trace} {how}")
        elif kind == "memory" and "back-to-back" in note:
            loop = float(note.split("20 back-to-back: ")[1].split()[0])
            if abs(float(value) - loop) > 0.2 * loop:
                skipped.append(f"{mid}\t{HOST_BOUND_COPY}")
            else:
                cases.append(f"{mid}\t{config}\t-\tus\t{op}")
        elif kind == "training" and op.startswith("resnet"):
            skipped.append(f"{mid}\ta ResNet-50 step (eager, host-bound at these batches): an import case "
                           f"counts tokens, which an image model has none of; its trace is in the repository")
        elif kind == "training":
            mb = op.split("--micro-batch ")[1].split()[0]
            trace = traces and os.path.join(traces, f"kineto_{note.split(':')[0]}_mb{mb}.json.gz")
            if trace and os.path.exists(trace):
                cases.append(f"{mid}\t{config}\t-\ttokens\timport {trace} ; {op}")
            else:
                skipped.append(f"{mid}\tan eager PyTorch step whose profiler trace is not in the repository; "
                               f"`sim gen` writes a Megatron-style step, not this one")
        elif kind == "inference":
            cases.append(f"{mid}\t{config}\t-\tlatency\t{op}")
        elif kind == "memory" and any(f"op={k} " in op for k in ("layernorm", "rmsnorm", "softmax")):
            skipped.append(f"{mid}\t{ROW_KERNEL}")
        elif kind == "memory" and " ctas=" in op:
            skipped.append(f"{mid}\ta copy kernel of a few CTAs (the bandwidth a few SMs reach, as an NCCL "
                           f"kernel's channels do): `copy` has no key for a kernel's grid")
        elif kind == "memory" and "op=batchnorm" in op:
            skipped.append(f"{mid}\tPyTorch's batch norm (statistics, then the transform; the backward's "
                           f"reductions): the model has no batch-norm op")
        elif kind == "gemm" and impl == "grouped" and "dtype=fp8" in op:
            m, n, k = (int(re.search(rf" {d}=(\d+)", op).group(1)) for d in ("m", "n", "k"))
            tile = scaled_grouped_tile(m, n, k, "use_fast_accum=True" in note)
            if tile:
                cases.append(f"{mid}\t{config}\t-\tus\t{op} tile={tile}")
            else:
                skipped.append(f"{mid}\t{FP8_GROUPED_SPILL}")
        elif kind == "gemm" and impl == "grouped":
            # PyTorch's grouped GEMM runs one CUTLASS kernel of a fixed tile (aten/src/ATen/native/cuda/GroupMM.cu):
            # 64x128 when a group's M or N is at most 128, else 128x256 (on Hopper)
            m, n = (int(re.search(rf" {k}=(\d+)", op).group(1)) for k in ("m", "n"))
            cases.append(f"{mid}\t{config}\t-\tus\t{op} tile={'64x128' if min(m, n) <= 128 else '128x256'}")
        else:
            # torch SDPA's flash backend runs FlashAttention-2: its own decode path for one query token;
            # its cuDNN backend cuDNN's fused attention
            ops = op + {"flash2": " impl=flash2", "decode": " impl=flash2_decode", "cudnn": " impl=cudnn"}.get(impl, "")
            cases.append(f"{mid}\t{config}\t-\tus\t{ops}")


def misaligned_rows(run, config, prefix, date, device, software, out, cases):
    for path in sorted(glob.glob(os.path.join(run, "misaligned*.tsv"))):
        for line in open(path).read().splitlines()[1:]:
            rid, op, us, tflops, kernel = line.split("\t")
            mid = prefix + rid
            kernel = kernel.replace("void cutlass::Kernel2<", "").split(">")[0]
            out.append("\t".join([mid, "gemm", device, software,
                                  "dense GEMM torch.mm (cuBLAS), leading dimensions a multiple of 16 bytes or not",
                                  op, us, "us", source("misaligned.py", date, path),
                                  f"kernel {kernel}; {tflops} TFLOP/s"]))
            cases.append(f"{mid}\t{config}\t-\tus\t{op}")


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    run, config, prefix = sys.argv[1:4]
    traces = sys.argv[4] if len(sys.argv) == 5 else None
    date, device, software = env_of(run)
    out, cases, skipped = [], [], []
    if os.path.exists(os.path.join(run, "rows.tsv")):
        measure_rows(run, config, prefix, traces, date, device, software, out, cases, skipped)
    misaligned_rows(run, config, prefix, date, device, software, out, cases)
    print("\n".join(out))
    sys.stderr.write("\n".join(cases) + "\n\n" + "\n".join(skipped) + "\n")


if __name__ == "__main__":
    main()
