#!/usr/bin/env python3
"""to_validation.py -- measure.py's rows.tsv as validation rows.

usage: to_validation.py RUN_DIR CONFIG PREFIX

RUN_DIR holds measure.py's rows.tsv and env.txt (tests/validation/measured/
<device>-<date>/). Prints, on stdout, the rows in the ten columns of
tests/validation/measurements-*.tsv, and on stderr the cases.tsv and
skipped.tsv lines for them (the ids are PREFIX + measure.py's own id), to
be appended by hand after review:
  - GEMM, FlashAttention-2 (torch SDPA flash backend), decode attention,
    elementwise and copy rows: cases (metric us) on CONFIG;
  - cuDNN attention rows and eager-PyTorch training steps: skipped, with the
    reason (no model of cuDNN's kernels; a step of unfused eager PyTorch is not
    what `sim gen` writes: `sim import kineto` replays those).
"""

import os
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    run, config, prefix = sys.argv[1:]
    env = dict(line.split(" ", 1) for line in open(os.path.join(run, "env.txt")).read().splitlines()
               if " " in line and not line[0].isdigit())
    date = env["date"].split()[0]
    lines = open(os.path.join(run, "env.txt")).read().splitlines()
    smi_vals = lines[lines.index(next(l for l in lines if l.startswith("nvidia-smi "))) + 1].split(", ")
    device = f"{smi_vals[0]} SXM5 (lent machine; {smi_vals[3]} power limit, driver {smi_vals[1]})"
    cudnn = int(env["cudnn"])  # 91900: 9.19.0
    cudnn = f"{cudnn // 10000}.{cudnn // 100 % 100}.{cudnn % 100}"
    software = (f"PyTorch {env['torch']}, CUDA {env['cuda']}, cuDNN {cudnn}, Triton {env['triton']} "
                f"(do_bench: CUDA events, L2 flushed, median)")
    source = (f"bench/gpu/measure.py (this repository), run {date} on a lent GPU; raw output "
              f"{run.rstrip('/')}/rows.tsv")
    cases, skipped = [], []
    for line in open(os.path.join(run, "rows.tsv")).read().splitlines()[1:]:
        rid, kind, op, value, unit, note = line.split("\t")
        mid = prefix + rid
        impl = note.rsplit("impl=", 1)[1] if "impl=" in note else ""
        cat = {"gemm": "gemm", "attention": "attention", "memory": "memory", "training": "training"}[kind]
        if kind == "gemm":
            workload = "dense GEMM " + note.split(";")[0].split(",")[0]
        elif kind == "attention":
            workload = "attention " + ("decode " if impl == "decode" else "") + (
                "forward" if "dir=fwd" in op else "backward") + ", " + note.split(";")[0]
        elif kind == "memory":
            workload = ("copy " if op.startswith("copy") else "elementwise ") + note.split(";")[0]
        else:
            workload = "training step, " + note.split(":")[0]
            value = f"{float(note.rsplit(', ', 1)[1].split()[0]):.0f}"
            unit = "tokens/s"
        print("\t".join([mid, cat, device, software, workload, op, value, unit, source, note]))
        if kind == "training":
            skipped.append(f"{mid}\tan eager PyTorch step (autocast casts of fp32 weights, unfused norms and "
                           f"elementwise kernels, fp32 cross-entropy): not the step `sim gen` writes; "
                           f"`sim import kineto` replays the profiled step (traces/kineto/)")
        elif impl == "cudnn":
            skipped.append(f"{mid}\tcuDNN's fused attention (torch SDPA cuDNN backend): the model has no "
                           f"kernel of cuDNN's (impl=flash3 is FlashAttention-3's, a different kernel)")
        else:
            ops = op + (f" impl={impl}" if impl in ("flash2", "decode") else "")
            cases.append(f"{mid}\t{config}\t-\tus\t{ops}")
    sys.stderr.write("\n".join(cases) + "\n\n" + "\n".join(skipped) + "\n")


if __name__ == "__main__":
    main()
