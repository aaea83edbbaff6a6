#!/usr/bin/env bash
# Speed of the cluster replay (prints figures; never fails on a slow machine):
# wall time and replayed ops per second of `sim run` for an 8-rank and a
# 1024-rank 1 GiB all-reduce (target: at most 0.2 s each) and a 16-rank
# data-parallel step.
# usage: bench/cluster_replay.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'simtrace 1\nranks 1024\ncoll op=allreduce comm=world bytes=1GiB\n' >"$tmp/ar1024.trace"
run() { # label config trace: the median wall time of 5 runs (jq's start-up not counted)
	local t0 t1 ops times=""
	for _ in 1 2 3 4 5; do
		t0=$(date +%s.%N)
		"$sim" run "$2" "$3" --json >"$tmp/out.json"
		t1=$(date +%s.%N)
		times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	done
	ops=$(jq .engine.ops "$tmp/out.json")
	printf '%s\n' $times | sort -g | sed -n 3p | awk -v l="$1" -v n="$ops" \
	    '{ printf "%-34s %8.3f s  %9d ops  %10.0f ops/s (median of 5)\n", l, $1, n, n / $1 }'
}
run "all-reduce, 8 ranks (H100)" configs/h100.cfg traces/allreduce_8.trace
run "all-reduce, 1024 ranks (H100)" configs/h100.cfg "$tmp/ar1024.trace"
run "DP step, 16 ranks (H100)" configs/h100.cfg traces/dp_step_16.trace
