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
# Configs with many keys (issue 22: the loader's own work is linear in keys,
# and libconfig's, quadratic in a group's size, is bounded by the 4096
# settings a file may hold): a shipped config plus 4,000 settings in one
# group (the loader stops at the first unknown key, after reading and
# merging them all), 800 link groups of 5 keys, and 50,000 settings (refused
# before parsing).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 4000 50000; do
	{
		cat configs/h100.cfg
		printf 'extra = {'
		for ((i = 0; i < n; i++)); do printf ' k%d = 1;' "$i"; done
		printf ' };\n'
	} >"$tmp/keys$n.cfg"
done
{
	printf 'inherits = "%s/configs/h100.cfg";\nlinks = {' "$PWD"
	for ((i = 0; i < 800; i++)); do printf ' l%d = { kind = "nvlink"; bandwidth = "1 GB/s"; a = 1; b = 2; c = 3; };' "$i"; done
	printf ' };\n'
} >"$tmp/links4000.cfg"
for f in keys4000 links4000 keys50000; do
	s=$(date +%s.%N)
	"$sim" info "$tmp/$f.cfg" >/dev/null 2>&1 || true
	e=$(date +%s.%N)
	awk -v f="$f" -v s="$s" -v e="$e" 'BEGIN { printf "%-10s %.3f s\n", f, e - s }'
done
