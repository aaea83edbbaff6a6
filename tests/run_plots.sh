#!/usr/bin/env bash
# Readable plots (issue 21): a roofline of four chips whose roofs crowd
# together writes no label over another (boxes at 6 px a character, inside
# what sim/report/plot.c reserves); --dtype keeps the roofs of one dtype in
# the table, the JSON and the plot; every plot axis has its unit.
# usage: run_plots.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"
# overlaps SVG: the pairs of coloured labels in the plot area (x < 770 px, y <= 590 px of a 1100 x 650 roofline)
overlaps() {
	grep -o '<text x="[0-9.]*" y="[0-9.]*" text-anchor="[a-z]*" fill="[^"]*">[^<]*<' "$1" |
		sed -E 's/<text x="([0-9.]+)" y="([0-9.]+)" text-anchor="([a-z]+)" fill="[^"]*">([^<]*)</\1 \2 \3 \4/' |
		awk '$1 < 770 && $2 <= 590 {
			t = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", t); w = 6 * length(t)
			x0 = $3 == "start" ? $1 : $3 == "middle" ? $1 - w / 2 : $1 - w
			n++; X0[n] = x0; X1[n] = x0 + w; Y0[n] = $2 - 10; Y1[n] = $2 + 1; T[n] = t
		}
		END {
			for (i = 1; i <= n; i++)
				for (j = 1; j < i; j++)
					if (X0[i] < X1[j] && X0[j] < X1[i] && Y0[i] < Y1[j] && Y0[j] < Y1[i])
						print "\"" T[j] "\" and \"" T[i] "\""
			print n " labels" > "/dev/stderr"
		}'
}
chips=(configs/h100.cfg configs/h200.cfg configs/b200.cfg configs/mi300x.cfg)
"$sim" roofline "${chips[@]}" --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' -o "$tmp/all.svg" >/dev/null ||
	fail "roofline of four chips exited $?"
o=$(overlaps "$tmp/all.svg" 2>"$tmp/n")
[ -n "$o" ] && fail "labels written over each other in the roofline of four chips: $(head -n 3 <<<"$o")"
[ "$(cut -d' ' -f1 "$tmp/n")" -ge 20 ] || fail "only $(cat "$tmp/n") in the roofline of four chips"
grep -q 'labels\{0,1\} left out (no room)' "$tmp/all.svg" && ! grep -q '>[0-9]* labels\{0,1\} left out (no room)<' "$tmp/all.svg" &&
	fail "the legend's count of labels left out is malformed"

# --dtype: one dtype's roofs only, everywhere
"$sim" roofline "${chips[@]}" --dtype bf16 -o "$tmp/bf16.svg" >"$tmp/bf16.txt" || fail "--dtype bf16 exited $?"
o=$(overlaps "$tmp/bf16.svg" 2>/dev/null)
[ -n "$o" ] && fail "labels over each other with --dtype bf16: $o"
grep -q "left out" "$tmp/bf16.svg" && fail "--dtype bf16 still leaves labels out"
grep -Eq '^  (matrix|vector) (fp8|fp32|tf32|fp64|fp16) ' "$tmp/bf16.txt" && fail "--dtype bf16: the table lists other dtypes"
[ "$(grep -c '^  matrix bf16 ' "$tmp/bf16.txt")" = 4 ] || fail "--dtype bf16: not one matrix bf16 roof per chip"
grep -o '>[a-z]* [a-z0-9/]* [0-9.]*[kMGTP]<' "$tmp/bf16.svg" | grep -v 'bf16' | grep -q . &&
	fail "--dtype bf16: the plot labels other dtypes: $(grep -o '>[a-z]* [a-z0-9/]* [0-9.]*[kMGTP]<' "$tmp/bf16.svg" | grep -v bf16 | head -n 2)"
if command -v jq >/dev/null; then
	d=$("$sim" roofline configs/h100.cfg --dtype fp8,bf16 --json | jq -r '[.chips[0].roofs[].dtype] | unique | join(",")')
	[ "$d" = "bf16,fp8" ] || fail "--dtype fp8,bf16 --json: roofs of $d"
fi
"$sim" roofline configs/h100.cfg --dtype bf17 >/dev/null 2>"$tmp/e"
rc=$?
{ [ $rc = 2 ] && grep -q "unknown dtype 'bf17' (did you mean 'bf16'?" "$tmp/e"; } || fail "--dtype bf17: exit $rc, $(cat "$tmp/e")"

# units on every axis: the roofline's, and a sweep's (x in the unit its values were read in)
grep -q '>arithmetic intensity (FLOP/byte of device memory)<' "$tmp/all.svg" || fail "roofline x axis without its unit"
grep -q 'rotate(-90)" text-anchor="middle">FLOP/s<' "$tmp/all.svg" || fail "roofline y axis without its unit"
"$sim" sweep configs/h100.cfg --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' --set 'memory.device.bandwidth=2TB/s,3.35TB/s' \
	--plot "$tmp/sw.svg" --metric tflops -o "$tmp/sw.csv" || fail "sweep exited $?"
grep -q '>memory.device.bandwidth (B/s)<' "$tmp/sw.svg" || fail "sweep x axis without its unit (B/s)"
grep -q 'rotate(-90)" text-anchor="middle">TFLOP/s (per device)<' "$tmp/sw.svg" || fail "sweep y axis without its unit"
"$sim" sweep configs/h100.cfg --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' --set 'compute.sm.clock=1GHz,1.98GHz' \
	--plot "$tmp/sw2.svg" -o "$tmp/sw2.csv" || fail "sweep of the clock exited $?"
grep -q '>compute.sm.clock (Hz)<' "$tmp/sw2.svg" || fail "sweep x axis of the clock without (Hz)"
grep -q 'rotate(-90)" text-anchor="middle">time (s)<' "$tmp/sw2.svg" || fail "sweep time axis without (s)"
finish plots
