#!/usr/bin/env bash
# Speed of the warp-level stepper (prints figures; never fails on a slow
# machine): simulated warp instructions per second of `sim step --summary`
# running a whole CTA of a large GEMM (A100, 128x128 tiles, 1024 k-tiles:
# 1.5 M warp instructions) and of FlashAttention-2 (512 blocks of keys: 3.8 M),
# the median of 5 runs, process start and config load included.
# Target: at least 5 million warp instructions per second on 2 cores. (A
# Hopper GEMM issues few, long wgmma instructions: its run is mostly start-up;
# its simulated cycles per second is the figure to watch.)
# usage: bench/warp_step.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
run() { # label config op
	local t0 t1 n c times=""
	for _ in 1 2 3 4 5; do
		t0=$(date +%s.%N)
		"$sim" step "$2" --kernel "$3" --summary >/tmp/warp_step.$$
		t1=$(date +%s.%N)
		times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	done
	n=$(awk '/^  issued/ { print $2 }' /tmp/warp_step.$$)
	c=$(awk '/^summary/ { split($3, a, "-"); print a[2] }' /tmp/warp_step.$$)
	rm -f /tmp/warp_step.$$
	printf '%s\n' $times | sort -g | sed -n 3p | awk -v l="$1" -v n="$n" -v c="$c" \
	    '{ printf "%-38s %6.3f s  %8d warp instructions %5.1f M/s, %8d cycles %6.1f M/s (median of 5)\n", l, $1, n, n / $1 / 1e6, c, c / $1 / 1e6 }'
}
run "GEMM CTA 8192x8192x65536 bf16 (A100)" configs/a100.cfg 'gemm m=8192 n=8192 k=65536 dtype=bf16'
run "FlashAttention-2 CTA, 32k keys (A100)" configs/a100.cfg 'attn b=1 h=16 sq=32768 skv=32768 d=128 dtype=fp16 impl=flash2'
run "GEMM CTA 8192x8192x65536 bf16 (H100)" configs/h100.cfg 'gemm m=8192 n=8192 k=65536 dtype=bf16'
