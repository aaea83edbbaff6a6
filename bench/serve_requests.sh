#!/usr/bin/env bash
# sim serve at scale (issue 18's target: 100,000 requests on an 8-GPU replica
# in under 10 s on one core, memory flat in the number of requests): CPU
# seconds and peak resident memory of LLaMA-3 70B on 8 H100s (tp 8), Poisson
# arrivals at 10 requests/s (below the replica's capacity), prompts of 128 to
# 2048 tokens and outputs of 16 to 512, for 1,000, 10,000 and 100,000
# requests. Prints figures; never fails on a slow machine.
# usage: bench/serve_requests.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%10s %10s %10s %12s %14s\n' requests cpu_s peak_MiB steps finished
for n in 1000 10000 100000; do
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" "$sim" serve configs/h100.cfg llama3-70b --tp 8 --rate 10 \
		--requests "$n" --input-len 128:2048 --output-len 16:512 --json >"$tmp/out.json"
	read -r u s kb <"$tmp/time"
	printf '%10d %10.2f %10.1f %12d %14s\n' "$n" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" \
		"$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" "$(jq .steps.count "$tmp/out.json")" \
		"$(jq -r '.finished' "$tmp/out.json")"
done
