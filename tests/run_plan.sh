#!/usr/bin/env bash
# sim plan (sim/plan/, docs/plan.md) against references the planner does not
# compute itself:
#  1. exhaustive search by hand: every layout of a small space written by
#     `sim gen` and replayed by `sim run`, one process each; the plan's best
#     layout must be the best of those, its step time equal to 1e-6, and
#     every layout the plan replayed must have `sim run`'s step time and peak
#     memory; a layout the plan says does not fit must make `sim run` exit 3,
#     one it replayed must fit;
#  2. the ranking: timed rows in ascending step time, then the rest; the
#     JSON's counts match the CSV's rows; a row's compute, exposed and idle
#     times add up to its step, compute and idle are sim run's, and its
#     bottleneck is the largest part after compute;
#  3. recompute dominance: a layout not replayed has the same layout with a
#     lighter recompute that fits;
#  4. the same inputs give byte-identical CSV, JSON and plot; the plot's
#     Pareto front is the CSV's; context parallelism and sim gen's
#     pipeline-split options against sim gen + sim run;
#  5. serving layouts (two --max-num-seqs each): the rate the plan found
#     keeps each fleet within the limits when `sim serve` runs it alone with
#     that max-num-seqs; rates descend down the ranking.
# usage: run_plan.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
ok() { n=$((n + 1)); }
bad() {
	n=$((n + 1))
	fails=$((fails + 1))
	echo "FAIL $*"
}
# close A B TOL: |A - B| <= TOL x |B|
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= t * m + 1e-12) }'; }

cfg=configs/h100.cfg
run=(llama3-8b --seq 2048 --global-batch 32)
space=(--tp 1,2,4 --pp 1,2 --micro-batch 1,2 --recompute none,full --zero 0,1)
"$sim" plan "$cfg" "${run[@]}" --gpus 8 "${space[@]}" --csv "$tmp/plan.csv" --jobs 2 >"$tmp/plan.txt" 2>/dev/null ||
	bad "sim plan exited $?"
"$sim" plan "$cfg" "${run[@]}" --gpus 8 "${space[@]}" --json --jobs 2 >"$tmp/plan.json" 2>/dev/null ||
	bad "sim plan --json exited $?"

# 1. by hand: sim gen + sim run over the same space
best=
for tp in 1 2 4; do for pp in 1 2; do for mb in 1 2; do for rc in none full; do for z in 0 1; do
	dp=$((8 / (tp * pp)))
	sp=
	[ "$tp" -gt 1 ] && sp=--sp
	if ! "$sim" gen "${run[@]}" --tp $tp --pp $pp --dp $dp --micro-batch $mb --recompute $rc --zero $z $sp \
		-o "$tmp/l.trace" 2>/dev/null; then
		grep -q "^[^,]*,[^,]*,$tp,$pp,1,$dp,1,$mb,$rc,$z," "$tmp/plan.csv" && bad "plan lists tp$tp pp$pp mb$mb $rc zero-$z, which sim gen refuses"
		continue
	fi
	"$sim" run "$cfg" "$tmp/l.trace" --json >"$tmp/l.json" 2>/dev/null
	code=$?
	row=$(grep "^[^,]*,[^,]*,$tp,$pp,1,$dp,1,$mb,$rc,$z," "$tmp/plan.csv")
	state=$(cut -d, -f2 <<<"$row")
	[ -n "$row" ] || { bad "tp$tp pp$pp mb$mb $rc zero-$z: sim gen lays it out, the plan does not list it"; continue; }
	case $state in
	does-not-fit) [ "$code" = 3 ] && ok || bad "tp$tp pp$pp mb$mb $rc zero-$z: plan says it does not fit, sim run exits $code" ;;
	replayed)
		t=$(jq .time_s "$tmp/l.json")
		mem=$(jq '.memory.peak_bytes / 1073741824' "$tmp/l.json")
		if [ "$code" = 0 ] && close "$(cut -d, -f13 <<<"$row")" "$t" 1e-5 && close "$(cut -d, -f12 <<<"$row")" "$mem" 1e-4; then ok; else
			bad "tp$tp pp$pp mb$mb $rc zero-$z: plan $row; sim run exit $code, step $t s, memory $mem GiB"
		fi
		# compute and idle time per rank as sim run's report has them
		close "$(cut -d, -f16 <<<"$row")" "$(jq .rank_mean.compute_s "$tmp/l.json")" 1e-5 &&
			close "$(cut -d, -f23 <<<"$row")" "$(jq .rank_mean.idle_s "$tmp/l.json")" 1e-5 && ok ||
			bad "tp$tp pp$pp mb$mb $rc zero-$z: plan compute, idle $(cut -d, -f16,23 <<<"$row"); sim run $(jq -c .rank_mean "$tmp/l.json")" ;;
	dominated) [ "$code" = 0 ] && ok || bad "tp$tp pp$pp mb$mb $rc zero-$z: not replayed as dominated, yet sim run exits $code" ;;
	*) bad "tp$tp pp$pp mb$mb $rc zero-$z: state '$state'" ;;
	esac
	if [ "$code" = 0 ]; then
		t=$(jq .time_s "$tmp/l.json")
		best=$(awk -v a="$t" -v b="${best:-inf}" 'BEGIN { print (b == "inf" || a < b) ? a : b }')
	fi
done; done; done; done; done
top=$(awk -F, 'NR == 2 { print $13 }' "$tmp/plan.csv")
close "$top" "$best" 1e-6 && ok || bad "the plan's best step $top s, the exhaustive search's $best s"

# 2. the ranking and the counts
awk -F, 'NR > 1 && $1 != "" { if (seen_untimed || ($13 + 0) < last) bad = 1; last = $13 + 0 }
	NR > 1 && $1 == "" { seen_untimed = 1 } END { exit bad }' "$tmp/plan.csv" && ok ||
	bad "CSV: timed rows not first or not in ascending step time"
for s in replayed:replayed dominated:dominated does-not-fit:do_not_fit; do
	IFS=: read -r st key <<<"$s"
	c=$(awk -F, -v s="$st" 'NR > 1 && ($2 == s || (s == "replayed" && $2 == "failed")) { n++ } END { print n + 0 }' "$tmp/plan.csv")
	[ "$c" = "$(jq ".layouts_count.$key" "$tmp/plan.json")" ] && ok || bad "$st: $c CSV rows, JSON $(jq ".layouts_count.$key" "$tmp/plan.json")"
done
[ "$(jq '.layouts | length' "$tmp/plan.json")" = "$(($(wc -l <"$tmp/plan.csv") - 1))" ] && ok || bad "JSON and CSV list different layouts"
grep -q '^ *1 ' "$tmp/plan.txt" && ok || bad "the table has no rank 1: $(head -3 "$tmp/plan.txt")"

# 2b. the step's parts: compute + exposed per communicator + idle make the step; the bottleneck is the largest part
# after compute (a communicator's exposed time, or idle)
awk -F, 'NR == 1 { for (k = 17; k <= 23; k++) name[k] = k == 23 ? "idle" : substr($k, 9, length($k) - 10) }
	NR > 1 && $1 != "" { sum = $16; big = 23; for (k = 17; k <= 23; k++) { sum += $k; if ($k > $big) big = k }
		d = sum - $13; if (d < 0) d = -d; if (d > 1e-4 * $13 || $24 != name[big]) { print; bad = 1 } }
	END { exit bad }' "$tmp/plan.csv" && ok || bad "CSV: the step's parts do not add up, or the bottleneck is not the largest"
[ "$(jq -r '.layouts[0].bottleneck' "$tmp/plan.json")" = "$(awk -F, 'NR == 2 { print $24 }' "$tmp/plan.csv")" ] && ok ||
	bad "JSON and CSV name different bottlenecks"

# 3. dominance: the same layout with a lighter recompute fits
awk -F, 'NR > 1 { key = $3 "," $4 "," $5 "," $6 "," $7 "," $8 "," $10; if ($2 != "does-not-fit") fit[key "," $9] = 1; if ($2 == "dominated") dom[key] = $9 }
	END { for (k in dom) if (!fit[k ",none"] && !(dom[k] == "full" && fit[k ",selective"])) bad = 1; exit bad }' "$tmp/plan.csv" &&
	ok || bad "a dominated layout without a lighter recompute that fits"

# 4. determinism
"$sim" plan "$cfg" "${run[@]}" --gpus 8 "${space[@]}" --csv "$tmp/plan2.csv" --jobs 1 >/dev/null 2>&1
cmp -s "$tmp/plan.csv" "$tmp/plan2.csv" && ok || bad "two runs (2 jobs and 1) give different CSVs"
"$sim" plan "$cfg" "${run[@]}" --gpus 8 "${space[@]}" --json --jobs 1 2>/dev/null | jq -S 'del(.provenance.command)' >"$tmp/p2.json"
jq -S 'del(.provenance.command)' "$tmp/plan.json" | cmp -s - "$tmp/p2.json" && ok ||
	bad "two runs give different JSON (besides the command line)"

# 4a. the Pareto plot (--plot): an SVG whose front (the larger red markers) is the layouts no other beats on both
# step time and memory, found here from the CSV; the best layout is on it; the same plan gives the same bytes
"$sim" plan "$cfg" "${run[@]}" --gpus 8 "${space[@]}" --plot "$tmp/plan.svg" --jobs 2 >/dev/null 2>&1 ||
	bad "sim plan --plot exited $?"
front=$(awk -F, 'NR > 1 && $1 != "" { print $12 "," $13 "," $1 }' "$tmp/plan.csv" | sort -t, -k1,1g -k3,3n |
	awk -F, 'BEGIN { best = -1 } best < 0 || $2 + 0 < best { best = $2 + 0; n++ } END { print n + 0 }')
grep -q "^<svg " "$tmp/plan.svg" && [ "$(grep -c 'r="4.00" fill="#d62728"' "$tmp/plan.svg")" = "$front" ] &&
	[ "$front" -ge 2 ] && ok || bad "plot: $(grep -c 'r="4.00"' "$tmp/plan.svg") front markers, the CSV's front has $front"
b=$(awk -F, 'NR == 2 { printf "tp%s pp%s dp%s mb%s", $3, $4, $6, $8 }' "$tmp/plan.csv")
grep -q ">$b" "$tmp/plan.svg" && ok || bad "plot: the best layout ($b) is not labelled on the front"
"$sim" plan "$cfg" "${run[@]}" --gpus 8 "${space[@]}" --plot "$tmp/plan2.svg" --jobs 1 >/dev/null 2>&1
cmp -s "$tmp/plan.svg" "$tmp/plan2.svg" && ok || bad "two runs give different plots"

# 4b. context parallelism (--cp): each layout of a small space with cp 1 and 2 against sim gen --cp + sim run, the
# ring's hops counted as cp's exposed time (none without cp)
ctx=(llama3-8b --seq 8192 --global-batch 8)
"$sim" plan "$cfg" "${ctx[@]}" --gpus 8 --tp 1,2 --pp 1 --cp 1,2 --micro-batch 1 --recompute none --zero 1 \
	--csv "$tmp/cp.csv" --jobs 2 >/dev/null 2>&1 || bad "sim plan --cp exited $?"
hdr=$(head -1 "$tmp/cp.csv")
[ "$(cut -d, -f5 <<<"$hdr")" = cp ] && [ "$(cut -d, -f19 <<<"$hdr")" = exposed_cp_s ] && ok || bad "cp CSV header: $hdr"
ncp=0
for tp in 1 2; do for cp in 1 2; do
	dp=$((8 / (tp * cp)))
	sp=
	[ "$tp" -gt 1 ] && sp=--sp
	row=$(grep "^[^,]*,[^,]*,$tp,1,$cp,$dp,1,1,none,1," "$tmp/cp.csv")
	"$sim" gen "${ctx[@]}" --tp $tp --pp 1 --cp $cp --dp $dp --micro-batch 1 --recompute none --zero 1 $sp \
		-o "$tmp/c.trace" 2>/dev/null || { bad "sim gen refuses tp$tp cp$cp"; continue; }
	"$sim" run "$cfg" "$tmp/c.trace" --json >"$tmp/c.json" 2>/dev/null
	code=$?
	if [ "$(cut -d, -f2 <<<"$row")" = does-not-fit ]; then
		[ "$code" = 3 ] && ok || bad "tp$tp cp$cp: plan says it does not fit, sim run exits $code"
		continue
	fi
	[ "$code" = 0 ] && [ "$(cut -d, -f2 <<<"$row")" = replayed ] || { bad "tp$tp cp$cp: sim run $code, plan row '$row'"; continue; }
	close "$(cut -d, -f13 <<<"$row")" "$(jq .time_s "$tmp/c.json")" 1e-5 && ok ||
		bad "tp$tp cp$cp: plan step $(cut -d, -f13 <<<"$row") s, sim run $(jq .time_s "$tmp/c.json") s"
	e=$(cut -d, -f19 <<<"$row")
	if [ "$cp" = 1 ]; then [ "$e" = 0 ] && ok || bad "tp$tp cp1: exposed cp $e"; else
		awk -v e="$e" 'BEGIN { exit !(e > 0) }' && ok || bad "tp$tp cp$cp: no exposed cp ($e)"
		ncp=$((ncp + 1))
	fi
done; done
[ "$ncp" = 2 ] && ok || bad "cp: $ncp layouts with cp 2 checked, 2 expected"
"$sim" plan "$cfg" llama3-8b --gpus 4 --mode serve --slo-ttft 1s --cp 1,2 >/dev/null 2>&1
[ $? = 2 ] && ok || bad "--cp with --mode serve: not a usage error"

# 4c. sim gen's pipeline-split options apply to the layouts with pp > 1 (sim gen refuses them with one stage): the
# plan lists pp 1 without them and pp 2 with them, its step as sim gen + sim run give it
ps=(llama3-8b --layers 6 --seq 2048 --global-batch 16 --account-for-embedding-in-pipeline-split
	--account-for-loss-in-pipeline-split)
"$sim" plan "$cfg" "${ps[@]}" --gpus 8 --tp 1 --pp 1,2 --micro-batch 1 --recompute none --zero 1 --csv "$tmp/ps.csv" \
	--jobs 2 >/dev/null 2>&1 || bad "sim plan with pipeline-split options exited $?"
grep -q "^[^,]*,replayed,1,1,1,8,1,1,none,1," "$tmp/ps.csv" && ok || bad "pipeline-split options: no pp 1 layout"
"$sim" gen "${ps[@]}" --tp 1 --pp 2 --dp 4 --micro-batch 1 --zero 1 -o "$tmp/ps.trace" 2>/dev/null &&
	"$sim" run "$cfg" "$tmp/ps.trace" --json >"$tmp/ps.json" 2>/dev/null || bad "sim gen/run with pipeline-split options"
close "$(grep "^[^,]*,replayed,1,2,1,4,1,1,none,1," "$tmp/ps.csv" | cut -d, -f13)" "$(jq .time_s "$tmp/ps.json")" 1e-5 &&
	ok || bad "pipeline-split pp 2: plan $(grep "^[^,]*,replayed,1,2,1,4," "$tmp/ps.csv" | cut -d, -f13) s, sim run $(jq .time_s "$tmp/ps.json") s"

# 5. serving: each layout's fleet at the rate the plan found keeps within the limits when sim serve runs it
# alone; rates descend down the ranking; a layout whose weights leave no KV cache makes sim serve exit 3
sv=(llama3-8b --mode serve --slo-ttft 500ms --slo-tpot 40ms --requests 200 --input-len 128:1024 --output-len 128)
"$sim" plan "$cfg" "${sv[@]}" --gpus 4 --tp 1,2,4 --pp 1,2 --max-num-seqs 16,256 --csv "$tmp/serve.csv" \
	--plot "$tmp/serve.svg" --jobs 2 >/dev/null 2>&1 || bad "sim plan --mode serve exited $?"
[ "$(awk -F, 'NR > 1 && $1 != "" && $6 == 16' "$tmp/serve.csv" | wc -l)" -ge 1 ] &&
	[ "$(awk -F, 'NR > 1 && $1 != "" && $6 == 256' "$tmp/serve.csv" | wc -l)" -ge 1 ] && ok ||
	bad "serve CSV: not both --max-num-seqs values served"
# the plot's front: each layout that no layout of as few devices a replica (or fewer) beats on rate, from the CSV
front=$(awk -F, 'NR > 1 && $1 != "" { d[NR] = $3 * $4; r[NR] = $7 + 0; k[NR] = $1 + 0 }
	END { for (i in d) { on = 1; for (j in d) if (j != i && d[j] <= d[i] && (r[j] > r[i] || (r[j] == r[i] && k[j] < k[i]))) on = 0; n += on }
		print n + 0 }' "$tmp/serve.csv")
[ "$(grep -c 'r="4.00" fill="#d62728"' "$tmp/serve.svg")" = "$front" ] && [ "$front" -ge 1 ] && ok ||
	bad "serve plot: $(grep -c 'r="4.00"' "$tmp/serve.svg") front markers, the CSV's front has $front"
awk -F, 'NR > 1 && $1 != "" { if (NR > 2 && $7 + 0 > last) bad = 1; last = $7 + 0 } END { exit bad }' "$tmp/serve.csv" &&
	ok || bad "serve CSV: rates not descending"
[ "$(awk -F, 'NR > 1 && $1 != ""' "$tmp/serve.csv" | wc -l)" -ge 3 ] && ok || bad "serve CSV: fewer than 3 layouts served"
while IFS=, read -r rank state tp pp reps ms rate rest; do
	[ "$state" = served ] || continue
	awk -v r="$rate" 'BEGIN { exit !(r > 0) }' || continue
	out=$("$sim" serve "$cfg" llama3-8b --tp "$tp" --pp "$pp" --replicas "$reps" --max-num-seqs "$ms" --rate "$rate" --requests 200 \
		--input-len 128:1024 --output-len 128 --json | jq -r '[.ttft.p99_s, .tpot.p99_s] | @tsv')
	read -r t p <<<"$out"
	awk -v t="$t" -v p="$p" 'BEGIN { exit !(t <= 0.5 && p <= 0.040) }' && ok ||
		bad "serve tp$tp pp$pp x$reps max-num-seqs $ms at $rate/s: p99 TTFT $t s, TPOT $p s over the limits"
done < <(tail -n +2 "$tmp/serve.csv")

echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
