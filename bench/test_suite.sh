#!/usr/bin/env bash
# The README's test command on a built tree (BUILD, default build): its wall
# time, the five longest tests, and the longest stretch in which the console
# showed no new line (targets, issue 21: under 10 minutes on 2 cores, nothing
# silent for more than a minute). Prints figures; never fails on a slow machine.
# usage: bench/test_suite.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the README's command, each console line stamped with the seconds since the start
t0=$(date +%s.%N)
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" 2>&1 |
	while IFS= read -r line; do printf '%s\t%s\n' "$(date +%s.%N)" "$line"; done >"$tmp/log"
t1=$(date +%s.%N)
awk -F'\t' -v t0="$t0" -v t1="$t1" -v cpus="$(nproc)" '
	{ gap = $1 - prev; if (NR > 1 && gap > maxgap) { maxgap = gap; after = $2 }; prev = $1 }
	/Test +#[0-9]+: / { n++ }
	END {
		printf "wall %.0f s on %d processors, %d tests\n", t1 - t0, cpus, n
		printf "longest silence %.0f s, ended by: %s\n", maxgap, after
	}' "$tmp/log"
echo "longest tests:"
sed -n 's/.*Test  *#[0-9]*: \([^ ]*\) .*Passed *\([0-9.]*\) sec.*/\2 \1/p; s/.*Test  *#[0-9]*: \([^ ]*\) .*\*\*\*.* \([0-9.]*\) sec.*/\2 \1 (FAILED)/p' \
	"$tmp/log" | sort -rn | head -5 | awk '{ printf "  %7.1f s  %s\n", $1, $2 }'
