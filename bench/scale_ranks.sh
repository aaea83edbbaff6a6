#!/usr/bin/env bash
# Replay cost against the number of ranks (issues 22 and 24; prints figures,
# never fails on a slow machine): wall time, CPU time (user + system) and peak
# memory (max RSS) of `sim run` on configs/h100.cfg for
#   - a 1 GiB world all-reduce with no layout, which cannot fold: one SimGrid
#     actor per rank (`simtrace 1 / ranks N / coll op=allreduce comm=world`),
#   - the same with `layout dp=N`, folded to one replayed rank,
#   - a LLaMA-3 70B training step with ZeRO-1 (`sim gen llama3-70b --tp 8
#     --dp N/8 --zero 1 --micro-batch 1 --global-batch N/8 --seq 8192`),
# at 4096, 16384 and 65536 ranks, the ratio of each size's CPU time to the
# previous one's (linear: 4.0), and the GPT-3 175B step of the README
# (traces/gpt3.trace, 1024 ranks). Targets: the all-reduce and the ZeRO-1 step
# at 16384 ranks within 2 s and 3 s, time at most linear from 4096 to 65536
# ranks, the GPT-3 step within 0.3 s.
# With --405b it also replays a LLaMA-3 405B ZeRO-3 step on 16384 ranks with
# --no-fold (49 k actors, 95 M ops): it runs (it aborted before issue 22), but
# takes more than 20 minutes and 16 GB on 2 cores, as SimGrid's ptask model
# revisits every running action at each instant and an unfolded replay has
# actions on every rank (it grows as ranks^2: 13 s CPU at 512 ranks, 77 s at
# 2048).
# usage: bench/scale_ranks.sh [BUILD_DIR] [RUNS] [--405b]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
runs=${2:-3}
big=${3:-}
cfg=configs/h100.cfg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sizes="4096 16384 65536"
for n in $sizes; do
	printf 'simtrace 1\nranks %d\ncoll op=allreduce comm=world bytes=1GiB\n' "$n" >"$tmp/ar$n.trace"
	printf 'simtrace 1\nranks %d\nlayout dp=%d\ncoll op=allreduce comm=world bytes=1GiB\n' "$n" "$n" >"$tmp/ardp$n.trace"
	"$sim" gen llama3-70b --tp 8 --dp $((n / 8)) --zero 1 --micro-batch 1 --global-batch $((n / 8)) --seq 8192 \
		-o "$tmp/z1_$n.trace"
done
# label trace [args...]: the run with the least CPU time of $runs (its wall time
# and memory); sets $cpu
run() {
	local label=$1 trace=$2 best="" line
	shift 2
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$sim" run "$cfg" "$trace" "$@" >/dev/null 2>"$tmp/err" ||
			[ $? = 3 ] || { echo "$label: $(tail -n 1 "$tmp/err")"; cpu=""; return; }
		# (GNU time writes "Command exited with non-zero status 3" first: a
		# ZeRO-1 step does not fit an H100's memory, exit 3, and is still timed)
		line=$(tail -n 1 "$tmp/time" | awk '{ printf "%.3f %.3f %.0f", $1, $2 + $3, $4 / 1024 }')
		if [ -z "$best" ] || awk -v a="${line#* }" -v b="${best#* }" 'BEGIN { exit !(a + 0 < b + 0) }'; then
			best=$line
		fi
	done
	cpu=$(echo "$best" | awk '{ print $2 }')
	echo "$best" | awk -v l="$label" -v k="$runs" \
		'{ printf "%-56s %7.2f s wall %7.2f s CPU %6.0f MiB peak  (least CPU of %d)\n", l, $1, $2, $3, k }'
}
series() { # name file-prefix [args...]
	local name=$1 prefix=$2 prev="" n
	shift 2
	for n in $sizes; do
		run "$name, $n ranks" "$tmp/$prefix$n.trace" "$@"
		[ -n "$prev" ] && [ -n "$cpu" ] && awk -v a="$cpu" -v b="$prev" 'BEGIN { printf "%56s x%.2f CPU for x4 ranks\n", "", a / b }'
		prev=$cpu
	done
}
series "world all-reduce 1 GiB, no layout" ar
series "world all-reduce 1 GiB, layout dp (folded)" ardp
series "LLaMA-3 70B ZeRO-1 step" z1_
run "GPT-3 175B step, 1024 ranks" traces/gpt3.trace
if [ "$big" = --405b ]; then
	"$sim" gen llama3-405b --tp 8 --dp 2048 --micro-batch 1 --global-batch 2048 --seq 8192 --recompute full \
		--zero 3 -o "$tmp/l405.trace"
	runs=1 run "LLaMA-3 405B ZeRO-3 step, 16384 ranks, --no-fold" "$tmp/l405.trace" --no-fold --max-ops 1e8
fi
