#!/usr/bin/env bash
# sim plan's search (issue 20's target: LLaMA-3 70B on 256 H100s, seq 8192,
# global batch 512, ranked in under 60 s on 2 cores): wall-clock and CPU
# seconds of the whole search and the layouts it listed, replayed, left out
# as dominated (a lighter recompute fits) and found not to fit; then the same
# with --jobs 1. Prints figures; never fails on a slow machine.
# usage: bench/plan_search.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%6s %8s %8s %8s %9s %10s %10s\n' jobs wall_s cpu_s listed replayed dominated no_fit
for jobs in "$(nproc)" 1; do
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" "$sim" plan configs/h100.cfg llama3-70b --gpus 256 --seq 8192 \
		--global-batch 512 --jobs "$jobs" --json >"$tmp/plan.json" 2>/dev/null
	read -r e u s <"$tmp/time"
	printf '%6d %8.1f %8.1f %8d %9d %10d %10d\n' "$jobs" "$e" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" \
		"$(jq .layouts_count.listed "$tmp/plan.json")" "$(jq .layouts_count.replayed "$tmp/plan.json")" \
		"$(jq .layouts_count.dominated "$tmp/plan.json")" "$(jq .layouts_count.do_not_fit "$tmp/plan.json")"
done
echo "best: $(jq -r '.layouts[0] | "tp \(.tp) pp \(.pp) dp \(.dp) mb \(.micro_batch) \(.recompute) zero-\(.zero): \(.step_s) s, MFU \(.mfu)"' "$tmp/plan.json")"
