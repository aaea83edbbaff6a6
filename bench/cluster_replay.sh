#!/usr/bin/env bash
# Speed of the cluster replay (prints figures; never fails on a slow machine):
# wall time, replayed ops per second and the simulator's peak memory (max RSS)
# of `sim run` for
#   - an 8-rank and a 1024-rank 1 GiB all-reduce (target: at most 0.2 s each),
#   - a 16-rank data-parallel step,
#   - the GPT-3 175B step on 1024 H100s, traces/gpt3.trace (target: at most
#     10 s, on the way to 1 s),
#   - a LLaMA-3 405B step on 16384 H100s (tp 8, dp 2048, ZeRO-3; target: runs
#     without exhausting memory),
#   - a Llama 3.1 405B step on 16384 H100s with tp 8, pp 16 (interleaved, 8
#     chunks a stage), cp 2 (issue 17's target: under 10 s on one core).
# usage: bench/cluster_replay.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
runs=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'simtrace 1\nranks 1024\ncoll op=allreduce comm=world bytes=1GiB\n' >"$tmp/ar1024.trace"
"$sim" gen llama3-405b --tp 8 --dp 2048 --micro-batch 1 --global-batch 4096 --seq 8192 --recompute full --zero 3 \
	-o "$tmp/llama3_405b_16k.trace"
"$sim" gen llama3-405b --tp 8 --pp 16 --cp 2 --dp 64 --sp --global-batch 2048 --seq 8192 --zero 1 \
	--schedule interleaved --virtual-stages 8 --account-for-embedding-in-pipeline-split \
	--account-for-loss-in-pipeline-split -o "$tmp/llama3_405b_cp2_16k.trace"
run() { # label config trace [runs]: the median wall time (jq's start-up not counted)
	local n=${4:-$runs} times="" rss=0 t0 t1 m ops
	for _ in $(seq "$n"); do
		t0=$(date +%s.%N)
		/usr/bin/time -f %M -o "$tmp/rss" "$sim" run "$2" "$3" --json >"$tmp/out.json"
		t1=$(date +%s.%N)
		times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
		m=$(cat "$tmp/rss")
		[ "$m" -gt "$rss" ] && rss=$m
	done
	ops=$(jq .engine.ops "$tmp/out.json")
	printf '%s\n' $times | sort -g | sed -n "$(((n + 1) / 2))p" | awk -v l="$1" -v o="$ops" -v k="$n" -v r="$rss" \
		'{ printf "%-40s %8.3f s  %9d ops  %10.0f ops/s  %6.0f MiB peak  (median of %d)\n", l, $1, o, o / $1, r / 1024, k }'
}
run "all-reduce, 8 ranks (H100)" configs/h100.cfg traces/allreduce_8.trace
run "all-reduce, 1024 ranks (H100)" configs/h100.cfg "$tmp/ar1024.trace"
run "DP step, 16 ranks (H100)" configs/h100.cfg traces/dp_step_16.trace
run "GPT-3 175B step, 1024 ranks (H100)" configs/h100.cfg traces/gpt3.trace 3
run "LLaMA-3 405B step, 16384 ranks (H100)" configs/h100.cfg "$tmp/llama3_405b_16k.trace" 1
run "LLaMA-3 405B tp8 pp16 cp2, 16384 ranks" configs/h100.cfg "$tmp/llama3_405b_cp2_16k.trace" 1
