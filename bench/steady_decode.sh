#!/usr/bin/env bash
# Steady states (docs/architecture.md, sim/cluster/replay_steady.c): wall time of
# `sim run` with the steady states derived (the default) and with --exact (every
# iteration played), the speed-up, and whether the two reports agree (the engine
# line aside), for
#   - the decode of 8192 tokens of LLaMA-3 70B on 8 H100s (tp 8, batch 64,
#     prompt 128: 8.5 M ops, 8 context buckets of about 1024 decode steps
#     each; target: at most 1 s),
#   - the README's GPT-3 175B step on 1024 H100s (1F1B over 16 stages, 192
#     micro-batches: a pipeline's steady state; target: at most 0.3 s),
#   - a Llama 3.1 405B step on 512 GB200s with tp 8, pp 16, dp 4 (1F1B, 128
#     micro-batches per pipeline of 8192 tokens),
#   - the same model on 256 GB200s as Megatron-Bridge's MXFP8 recipe lays it
#     out (validation row T270: tp 4, pp 16, dp 4, interleaved over 8 virtual
#     stages, 384 micro-batches per pipeline; an op may wait for the next
#     iteration of another stage).
# Prints figures; never fails on a slow machine.
# usage: bench/steady_decode.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
runs=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$sim" gen llama3-70b --mode infer --tp 8 --batch 64 --input-len 128 --output-len 8192 -o "$tmp/decode.trace"
"$sim" gen llama3-405b --tp 8 --pp 16 --dp 4 --micro-batch 1 --global-batch 512 --seq 8192 \
	--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split -o "$tmp/405b.trace"
"$sim" gen llama3-405b --seq 8192 --micro-batch 1 --global-batch 1536 --schedule interleaved --sp --zero 1 \
	--dtype fp8 --attn-impl cudnn --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
	--tp 4 --pp 16 --dp 4 --virtual-stages 8 --fp8-recipe mxfp8 -o "$tmp/405b_vp8.trace"
run() { # label config trace out [options]: the median wall time of RUNS runs
	local label=$1 cfg=$2 trace=$3 out=$4 times="" t0 t1
	shift 4
	for _ in $(seq "$runs"); do
		t0=$(date +%s.%N)
		"$sim" run "$cfg" "$trace" "$@" >"$tmp/$out" 2>/dev/null || [ $? = 3 ] # exit 3: it does not fit (timed all the same)
		t1=$(date +%s.%N)
		times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	done
	printf '%s\n' $times | sort -g | sed -n "$(((runs + 1) / 2))p" >"$tmp/$out.wall"
	printf '  %-34s %8.3f s  (median of %d)  %s\n' "$label" "$(cat "$tmp/$out.wall")" "$runs" \
		"$(grep '^  replayed ' "$tmp/$out" | sed 's/^  //')"
}
case_() { # name config trace target_s [options]
	local name=$1 cfg=$2 trace=$3 target=$4
	shift 4
	echo "$name"
	run "steady states derived (default)" "$cfg" "$trace" steady.txt "$@"
	run "every iteration played (--exact)" "$cfg" "$trace" exact.txt --exact "$@"
	awk -v s="$(cat "$tmp/steady.txt.wall")" -v e="$(cat "$tmp/exact.txt.wall")" -v t="$target" \
		'BEGIN { printf "  speed-up %.1fx%s\n", e / s, (t > 0 ? sprintf("; target (at most %g s): %s", t, (s <= t ? "met" : "missed")) : "") }'
	if diff <(grep -v '^  replayed ' "$tmp/steady.txt") <(grep -v '^  replayed ' "$tmp/exact.txt") >/dev/null; then
		echo "  reports: the same (engine line aside)"
	else
		echo "  reports differ:"
		diff <(grep -v '^  replayed ' "$tmp/steady.txt") <(grep -v '^  replayed ' "$tmp/exact.txt") | head -20
	fi
	grep -E '^  (step time|workload)|time to first token' "$tmp/steady.txt" | sed 's/^/  /'
}
case_ "LLaMA-3 70B decode of 8192 tokens, 8 H100s" configs/h100.cfg "$tmp/decode.trace" 1
case_ "GPT-3 175B step, 1024 H100s (traces/gpt3.trace)" configs/h100.cfg traces/gpt3.trace 0.3
case_ "Llama 3.1 405B step, tp 8 pp 16 dp 4, 512 GB200s" configs/gb200.cfg "$tmp/405b.trace" 0
case_ "Llama 3.1 405B step, tp 4 pp 16 vp 8 dp 4, 256 GB200s" configs/gb200.cfg "$tmp/405b_vp8.trace" 0 --ranks-per-node 64
