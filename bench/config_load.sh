#!/usr/bin/env bash
# Prints how fast `sim info` loads, checks and describes configs: every
# config in configs/ is described REPS times (default 20) as text and JSON.
# A figure to watch, not a test: nothing here fails on a slow machine.
# usage: bench/config_load.sh [SIM] [REPS]
set -eu
sim=${1:-./build/sim}
reps=${2:-20}
mapfile -t cfgs < <(find configs -name '*.cfg' | LC_ALL=C sort)
start=$(date +%s.%N)
for ((r = 0; r < reps; r++)); do
	for c in "${cfgs[@]}"; do
		"$sim" info "$c" >/dev/null
		"$sim" info "$c" --json >/dev/null
	done
done
end=$(date +%s.%N)
n=$((2 * reps * ${#cfgs[@]}))
# the same number of bare process starts (sim --version), to separate start-up from loading
s0=$(date +%s.%N)
for ((i = 0; i < n; i++)); do "$sim" --version >/dev/null; done
e0=$(date +%s.%N)
awk -v n="$n" -v s="$start" -v e="$end" -v s0="$s0" -v e0="$e0" -v k="${#cfgs[@]}" 'BEGIN {
	t = e - s; t0 = e0 - s0
	printf "configs: %d, runs: %d, %.3f s, %.0f runs/s, %.2f ms per run\n", k, n, t, n / t, 1000 * t / n
	printf "process start alone: %.2f ms; load + check + describe: %.2f ms per run\n", 1000 * t0 / n, 1000 * (t - t0) / n
}'
