#!/usr/bin/env bash
# Steady states (docs/architecture.md, sim/cluster/replay_steady.c): wall time of
# `sim run` on the decode of 8192 tokens of LLaMA-3 70B on 8 H100s (tp 8, batch
# 64, prompt 128: 8.5 M ops, 8 context buckets of about 1024 decode steps each),
# with the steady states derived (the default; target: at most 1 s) and with
# --exact (every iteration played), and whether the two reports agree (the
# engine line aside). Prints figures; never fails on a slow machine.
# usage: bench/steady_decode.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
runs=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$sim" gen llama3-70b --mode infer --tp 8 --batch 64 --input-len 128 --output-len 8192 -o "$tmp/decode.trace"
run() { # label out [options]: the median wall time of RUNS runs
	local label=$1 out=$2 times="" t0 t1
	shift 2
	for _ in $(seq "$runs"); do
		t0=$(date +%s.%N)
		"$sim" run configs/h100.cfg "$tmp/decode.trace" "$@" >"$tmp/$out"
		t1=$(date +%s.%N)
		times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	done
	printf '%s\n' $times | sort -g | sed -n "$(((runs + 1) / 2))p" >"$tmp/$out.wall"
	printf '%-34s %8.3f s  (median of %d)  %s\n' "$label" "$(cat "$tmp/$out.wall")" "$runs" \
		"$(grep '^  replayed ' "$tmp/$out" | sed 's/^  //')"
}
run "steady states derived (default)" steady.txt
run "every iteration played (--exact)" exact.txt --exact
awk -v s="$(cat "$tmp/steady.txt.wall")" -v e="$(cat "$tmp/exact.txt.wall")" \
	'BEGIN { printf "speed-up %.0fx; target (at most 1 s): %s\n", e / s, s <= 1 ? "met" : "missed" }'
if diff <(grep -v '^  replayed ' "$tmp/steady.txt") <(grep -v '^  replayed ' "$tmp/exact.txt") >/dev/null; then
	echo "reports: the same (engine line aside)"
else
	echo "reports differ:"
	diff <(grep -v '^  replayed ' "$tmp/steady.txt") <(grep -v '^  replayed ' "$tmp/exact.txt") | head -20
fi
grep -E '^  (step time|workload)|time to first token' "$tmp/steady.txt"
