#!/usr/bin/env bash
# Wall time of `sim sweep` over 100 points: an op (device model only), the
# LLaMA-3 8B training step and the GPT-3 175B step on 1024 GPUs (SimGrid
# replays, one child process per point, --jobs = CPUs). The issue's target:
# 100 configurations of the GPT-3 step in at most a minute on 2 cores.
# usage: bench/sweep.sh [BUILD] [POINTS_GPT3]
#   POINTS_GPT3: points of the GPT-3 sweep (default 100; fewer for a quick look)
set -u
build=${1:-build}
gpt3_points=${2:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
sim=$(cd "$build" && pwd)/sim
cd "$root" || exit 1
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)

# 10 x 10 values: SM count and device-memory bandwidth
sms=$(seq -s, 80 8 152)
bws=$(seq 20 4 56 | awk '{printf "%s%.1fTB/s", (NR > 1 ? "," : ""), $1 / 10}')
# n values of the bandwidth for a trace sweep of n points (n <= 100: 10 x n/10, or 1 x n)
trace_sets() {
	local n=$1
	if [ "$n" -ge 10 ] && [ $((n % 10)) = 0 ]; then
		echo "--set compute.sm.count=$sms --set memory.device.bandwidth=$(seq 20 1 $((20 + n / 10 - 1)) | awk '{printf "%s%.1fTB/s", (NR > 1 ? "," : ""), $1 / 10}')"
	else
		echo "--set memory.device.bandwidth=$(seq 1 "$n" | awk '{printf "%s%.2fTB/s", (NR > 1 ? "," : ""), 2 + $1 / 100}')"
	fi
}

run() { # name points args...
	local name=$1 points=$2
	shift 2
	local t0 t1
	t0=$(date +%s.%N)
	"$sim" sweep "$@" -o /tmp/sweep_bench.$$.csv 2>/dev/null
	local rc=$?
	t1=$(date +%s.%N)
	local rows errs
	rows=$(($(wc -l </tmp/sweep_bench.$$.csv) - 1))
	errs=$(awk -F, 'NR > 1 && $NF != ""' /tmp/sweep_bench.$$.csv | wc -l)
	awk -v n="$name" -v p="$points" -v r="$rows" -v e="$errs" -v a="$t0" -v b="$t1" -v j="$jobs" -v rc="$rc" \
		'BEGIN { t = b - a; printf "%-34s %4d points  %8.2f s  %7.3f s/point  (%d jobs, %d rows, %d with errors, exit %d)\n", n, p, t, t / p, j, r, e, rc }'
	rm -f /tmp/sweep_bench.$$.csv
}

echo "sim sweep, 100 points unless said ($jobs CPUs)"
run "op: gemm 8192^3 bf16 on h100" 100 configs/h100.cfg --op 'gemm m=8192 n=8192 k=8192 dtype=bf16' \
	--set compute.sm.count="$sms" --set memory.device.bandwidth="$bws"
run "trace: llama3_8b_train on h100" 100 configs/h100.cfg traces/llama3_8b_train.trace $(trace_sets 100)
t0=$(date +%s.%N)
"$sim" run configs/h100.cfg traces/gpt3.trace >/dev/null
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%-34s %4d point   %8.2f s  (sim run, for reference)\n", "one gpt3 step replay", 1, b - a }'
run "trace: gpt3 (1024 ranks) on h100" "$gpt3_points" configs/h100.cfg traces/gpt3.trace $(trace_sets "$gpt3_points")
