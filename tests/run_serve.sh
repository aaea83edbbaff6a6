#!/usr/bin/env bash
# sim serve (sim/serve/, docs/serving.md): each check compares with a
# reference the serving code does not compute itself.
#  1. a burst served without chunked prefill is the static batch `sim gen
#     --mode infer` writes: its duration, TTFT and TPOT must match `sim run`
#     of that trace (trace text and the SimGrid replay) to 1%;
#  2. the per-request CSV against the JSON summary (counts, token sums, mean
#     TTFT exactly; p50/p99 to the histogram's 0.1% bins) and against
#     itself (TPOT = (finish - first token) / (output - 1), e2e >= ttft);
#  3. scheduler rules a hand can check: max_num_seqs 1 serves a burst one
#     after the other (each waits for the one before); prefix hits are whole
#     blocks; preemption under a small cache finishes every request;
#     chunked prefill keeps decode steps short where whole prompts stall them;
#  4. the rate search's answer meets its limits; disaggregated and pipeline
#     fleets run; the timeline is JSON with one step event per engine step;
#  5. bad input: one line, the documented code, no output file left behind;
#  6. the same inputs give byte-identical outputs.
# usage: run_serve.sh SIM REPO_ROOT
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

# 1. burst = static batch (gpt-oss-120b: its windowed layers, whose decode steps read their window's keys): the
# engine's budget takes the whole burst's prompts in one step (vLLM V0 then needs a context no longer than it)
while IFS=: read -r cfg model tp b in out; do
	s=$("$sim" serve "$cfg" "$model" --tp "$tp" --burst --requests "$b" --input-len "$in" --output-len "$out" \
		--no-chunked-prefill --max-batched-tokens $((b * in)) --max-model-len $((in + out)) --json |
		jq -r '[.duration_s, .ttft.mean_s, .tpot.mean_s] | @tsv')
	"$sim" gen "$model" --mode infer --tp "$tp" --batch "$b" --input-len "$in" --output-len "$out" --paged -o "$tmp/g.trace"
	r=$("$sim" run "$cfg" "$tmp/g.trace" --json | jq -r '[.time_s, .workload.ttft_s, .workload.tpot_s] | @tsv')
	read -r sd st sp <<<"$s"
	read -r rd rt rp <<<"$r"
	if close "$sd" "$rd" 0.01 && close "$st" "$rt" 0.01 && close "$sp" "$rp" 0.01; then ok; else
		bad "burst vs static batch $cfg $model tp$tp b$b $in/$out: serve $s, run $r"
	fi
done <<'EOF'
configs/h100.cfg:llama3-8b:1:16:512:128
configs/h100.cfg:llama3-70b:4:8:1024:64
configs/a100_40gb.cfg:llama2-7b:2:64:128:128
configs/mi300x.cfg:mixtral-8x7b:2:32:256:32
configs/h100.cfg:gpt-oss-120b:8:16:512:128
EOF

# 1b. vLLM's host work (--engine vllm, workloads/gen.c: 100 us a sequence before each step's forward): the
# replayed batch's host delays are exactly steps x sequences x 100 us (the prefill and 127 decode steps of 64
# sequences: 128 x 64 x 100 us = 0.8192 s), and the batch is longer than the GPU's alone by more than that (the
# engine's sampler, workloads/gen_blocks.c: vllm_sampler; with a contiguous KV cache, which the engine's CUDA
# graphs launch as it is: run_decode_impl.sh 4); the burst served matches the replay of the paged trace
g='llama2-7b --mode infer --batch 64 --input-len 128 --output-len 128'
"$sim" gen $g -o "$tmp/g0.trace"
"$sim" gen $g --engine vllm -o "$tmp/gf.trace"
"$sim" gen $g --paged --engine vllm -o "$tmp/gv.trace"
t0=$("$sim" run configs/a100_40gb.cfg "$tmp/g0.trace" --json | jq .time_s)
tf=$("$sim" run configs/a100_40gb.cfg "$tmp/gf.trace" --csv "$tmp/kf" --json | jq .time_s)
tv=$("$sim" run configs/a100_40gb.cfg "$tmp/gv.trace" --json | jq .time_s)
dl=$(awk -F, '$1 == "delay" { print $3 }' "$tmp/kf/kinds.csv")
d=$(awk -v a="$tf" -v b="$t0" 'BEGIN { printf "%.9g", a - b }')
close "$dl" 0.8192 1e-6 && awk -v d="$d" 'BEGIN { exit !(d > 0.8192) }' && ok ||
	bad "--engine vllm: host delays $dl s (want 128 x 64 x 100 us = 0.8192 s), the batch $d s longer (want more)"
sv=$("$sim" serve configs/a100_40gb.cfg llama2-7b --burst --requests 64 --input-len 128 --output-len 128 \
	--no-chunked-prefill --engine vllm --json | jq -r '[.duration_s, .engine.host] | @tsv')
read -r sd sh <<<"$sv"
close "$sd" "$tv" 0.01 && [ "$sh" = vllm ] && ok || bad "burst with --engine vllm: serve $sv, run $tv"

# 1c. TensorRT-LLM's executor (--engine trtllm): every tensor-parallel rank holds the whole embedding table
# (Llama-3-70B at tp 4: 128256 x 8192 bf16 values, 3/4 of them more than a quarter), its cache defaults apply
# unless given, the lookup needs no all-reduce, and the host adds nothing
tw() { "$sim" serve configs/h100.cfg llama3-70b --tp 4 --requests 4 "$@" --json |
	jq -r '[.memory_per_gpu.weights_bytes, .engine.capacity_policy, .engine.kv_free_fraction, .engine.host] | @tsv'; }
read -r w0 p0 f0 h0 <<<"$(tw)"
read -r w1 p1 f1 h1 <<<"$(tw --engine trtllm)"
read -r w2 p2 f2 h2 <<<"$(tw --engine trtllm --capacity-policy max-utilization --kv-free-fraction 0.5)"
close "$(awk -v a="$w1" -v b="$w0" 'BEGIN { printf "%.9g", a - b }')" $((128256 * 8192 * 2 * 3 / 4)) 1e-6 &&
	[ "$p0 $f0 $h0" = "max-utilization 0 none" ] && [ "$p1 $f1 $h1" = "guaranteed-no-evict 0.9 trtllm" ] &&
	[ "$p2 $f2 $w2" = "max-utilization 0.5 $w1" ] && ok ||
	bad "--engine trtllm: weights $w0 -> $w1 (want +$((128256 * 8192 * 2 * 3 / 4))), policy $p0/$p1/$p2, fraction $f0/$f1/$f2"
"$sim" gen llama3-70b --mode infer --tp 4 --batch 2 --input-len 64 --output-len 4 --engine trtllm -o "$tmp/trt.trace"
"$sim" gen llama3-70b --mode infer --tp 4 --batch 2 --input-len 64 --output-len 4 -o "$tmp/none.trace"
[ "$(grep -c 'coll op=allreduce' "$tmp/none.trace")" = $(($(grep -c 'coll op=allreduce' "$tmp/trt.trace") + 2)) ] &&
	! grep -q '^  delay' "$tmp/trt.trace" && ok ||
	bad "--engine trtllm: the embedding's all-reduce left in, or host delays in the trace"

# 2. CSV against JSON and itself
"$sim" serve configs/h100.cfg llama3-8b --rate 30 --requests 600 --input-len 64:1024 --output-len 8:256 \
	--csv "$tmp/r.csv" --timeline "$tmp/t.json" --json >"$tmp/r.json" || bad "serve with outputs failed"
rows=$(($(wc -l <"$tmp/r.csv") - 1))
[ "$rows" = 600 ] && [ "$(jq .finished "$tmp/r.json")" = 600 ] && ok || bad "600 requests: $rows CSV rows"
sums=$(awk -F, 'NR > 1 { i += $4; o += $5 } END { print i, o }' "$tmp/r.csv")
[ "$sums" = "$(jq -r '"\(.input_tokens) \(.output_tokens)"' "$tmp/r.json")" ] && ok || bad "token sums: CSV $sums"
m=$(awk -F, 'NR > 1 { s += $10 } END { printf "%.12g", s / (NR - 1) }' "$tmp/r.csv")
close "$m" "$(jq .ttft.mean_s "$tmp/r.json")" 1e-6 && ok || bad "mean TTFT: CSV $m"
# (the CSV prints 9 significant digits: first and finish each carry up to 5e-9 of their size, and so does
# their difference over out - 1 tokens)
awk -F, 'function off(a, b, ulp) { return (a > b ? a - b : b - a) > 1e-6 * (b > 0 ? b : -b) + ulp + 1e-9 }
	NR > 1 && ($10 < 0 || $12 < $10 || ($5 > 1 && off($11, ($9 - $8) / ($5 - 1), 1e-8 * $9 / ($5 - 1)))) { bad++ }
	END { exit bad > 0 }' "$tmp/r.csv" && ok || bad "CSV rows: ttft < 0, e2e < ttft or tpot not (finish - first) / (out - 1)"
for col in 10:ttft 12:e2e; do
	IFS=: read -r c k <<<"$col"
	for q in 50 99; do
		exact=$(awk -F, -v c="$c" 'NR > 1 { print $c }' "$tmp/r.csv" | sort -g | awk -v q="$q" '{ v[NR] = $1 }
			END { i = int(q / 100 * (NR - 1)) + 1; print v[i] }')
		est=$(jq ".$k.p${q}_s" "$tmp/r.json")
		close "$est" "$exact" 0.002 && ok || bad "$k p$q: histogram $est, exact $exact"
	done
done

# 4. the timeline: JSON, one step event per engine step, four slices per request
if jq -e . "$tmp/t.json" >/dev/null 2>&1; then
	st=$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$tmp/t.json")
	rq=$(jq '[.traceEvents[] | select(.ph == "b" and .name == "request")] | length' "$tmp/t.json")
	[ "$st" = "$(jq .steps.count "$tmp/r.json")" ] && [ "$rq" = 600 ] && ok || bad "timeline: $st steps, $rq requests"
else
	bad "timeline is not JSON"
fi

# 6. determinism
"$sim" serve configs/h100.cfg llama3-8b --rate 30 --requests 600 --input-len 64:1024 --output-len 8:256 \
	--csv "$tmp/r2.csv" --timeline "$tmp/t2.json" --json >"$tmp/r2.json"
cmp -s "$tmp/r.csv" "$tmp/r2.csv" && cmp -s "$tmp/t.json" "$tmp/t2.json" && cmp -s "$tmp/r.json" "$tmp/r2.json" && ok ||
	bad "two runs differ"
"$sim" serve configs/h100.cfg llama3-8b --rate 30 --requests 600 --input-len 64:1024 --output-len 8:256 --seed 2 \
	--json >"$tmp/r3.json"
cmp -s "$tmp/r.json" "$tmp/r3.json" && bad "--seed 2 gives the same run" || ok

# 3. scheduler rules
"$sim" serve configs/h100.cfg llama3-8b --burst --requests 3 --input-len 100 --output-len 10 --max-num-seqs 1 \
	--csv "$tmp/s.csv" >/dev/null
awk -F, 'NR > 1 { s[$1] = $7; f[$1] = $9 } END { exit !(s[0] == 0 && s[1] == f[0] && s[2] == f[1]) }' "$tmp/s.csv" &&
	ok || bad "max-num-seqs 1: each request must start when the one before finishes"
"$sim" serve configs/h100.cfg llama3-8b --rate 5 --requests 50 --input-len 1000 --output-len 20 --prefix-hit 0.5 \
	--json >"$tmp/p.json"
[ "$(jq .cached_tokens "$tmp/p.json")" = $((50 * 496)) ] && ok ||
	bad "prefix hit 0.5 of 1000 tokens: whole blocks of 16 = 496 each, got $(jq .cached_tokens "$tmp/p.json")/50"
"$sim" serve configs/h100.cfg llama3-8b --rate 5 --requests 50 --input-len 1000 --output-len 20 --json >"$tmp/p0.json"
awk -v a="$(jq .ttft.mean_s "$tmp/p.json")" -v b="$(jq .ttft.mean_s "$tmp/p0.json")" 'BEGIN { exit !(a < b) }' && ok ||
	bad "prefix hits must shorten TTFT"
for mode in recompute swap; do
	"$sim" serve configs/h100.cfg llama3-8b --rate 50 --requests 400 --gpu-memory-utilization 0.23 \
		--preempt "$mode" --json >"$tmp/pre.json" || bad "preempt $mode failed"
	[ "$(jq .finished "$tmp/pre.json")" = 400 ] && [ "$(jq .steps.preemptions "$tmp/pre.json")" -gt 0 ] && ok ||
		bad "preempt $mode: $(jq -c '[.finished, .steps.preemptions]' "$tmp/pre.json")"
done
[ "$(jq .steps.swaps "$tmp/pre.json")" -gt 0 ] && ok || bad "preempt swap: no swap"
# a loaded engine: whole prompts stall every decode behind them (p99 TPOT), chunks do not
"$sim" serve configs/h100.cfg llama3-8b --rate 12 --requests 300 --input-len 3000 --output-len 64 --json >"$tmp/c1.json"
"$sim" serve configs/h100.cfg llama3-8b --rate 12 --requests 300 --input-len 3000 --output-len 64 --no-chunked-prefill \
	--max-batched-tokens 8192 --json >"$tmp/c0.json"
awk -v a="$(jq .itl.p99_s "$tmp/c1.json")" -v b="$(jq .itl.p99_s "$tmp/c0.json")" 'BEGIN { exit !(a < b) }' && ok ||
	bad "chunked prefill must cut the p99 inter-token latency: $(jq .itl.p99_s "$tmp/c1.json") vs $(jq .itl.p99_s "$tmp/c0.json")"

# 4. the rate search, disaggregation, pipelines
"$sim" serve configs/h100.cfg llama3-8b --find-rate --slo-ttft 200ms --slo-tpot 20ms --requests 200 --json >"$tmp/f.json"
rate=$(jq .max_rate_per_s "$tmp/f.json")
awk -v r="$rate" -v t="$(jq .ttft.p99_s "$tmp/f.json")" -v p="$(jq .tpot.p99_s "$tmp/f.json")" \
	'BEGIN { exit !(r > 0 && t <= 0.2 && p <= 0.02) }' && ok || bad "find-rate: rate $rate misses its limits"
"$sim" serve configs/h100.cfg llama3-8b --rate "$(awk -v r="$rate" 'BEGIN { print r * 1.5 }')" --requests 200 \
	--json >"$tmp/f2.json"
awk -v t="$(jq .ttft.p99_s "$tmp/f2.json")" -v p="$(jq .tpot.p99_s "$tmp/f2.json")" \
	'BEGIN { exit !(t > 0.2 || p > 0.02) }' && ok || bad "find-rate: 1.5 x the rate $rate still meets the limits"
"$sim" serve configs/h100.cfg llama3-8b --replicas 3 --prefill-replicas 1 --rate 20 --requests 300 --json >"$tmp/d.json"
jq -e '.finished == 300 and .fleet.kv_transfer_mean_s > 0 and .fleet.gpus == 3' "$tmp/d.json" >/dev/null && ok ||
	bad "disaggregated fleet: $(jq -c .fleet "$tmp/d.json")"
"$sim" serve configs/h100.cfg llama3-70b --tp 4 --pp 2 --rate 2 --requests 100 --json >"$tmp/pp.json" &&
	jq -e '.finished == 100 and .fleet.gpus == 8' "$tmp/pp.json" >/dev/null && ok || bad "tp 4 pp 2 fleet"

# 5. bad input
printf 'arrival_s,input_len,output_len\n0,100,10\n0.5,abc,10\n' >"$tmp/bad.csv"
printf '0,100,10\n1,100,10\n0.5,100,10\n' >"$tmp/order.csv"
while IFS='|' read -r code want args; do
	rm -f "$tmp/out.csv"
	eval "set -- $args"
	"$sim" serve "$@" --csv "$tmp/out.csv" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = "$code" ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q -- "$want" "$tmp/e" && [ ! -e "$tmp/out.csv" ] &&
		[ ! -s "$tmp/o" ]; then ok; else
		bad "serve $args: exit $rc (want $code), stderr: $(head -c 300 "$tmp/e"), csv left: $(ls "$tmp/out.csv" 2>/dev/null)"
	fi
done <<EOF
2|--rate 0|configs/h100.cfg llama3-8b --rate 0
2|--input-len|configs/h100.cfg llama3-8b --input-len 10:5
2|longer than the context|configs/h100.cfg llama3-8b --input-len 8000 --output-len 1000 --requests 3
2|not a serve option|configs/h100.cfg llama3-8b --batch 4
2|needs --slo|configs/h100.cfg llama3-8b --find-rate
2|--prefill-replicas|configs/h100.cfg llama3-8b --replicas 2 --prefill-replicas 2
2|unknown|configs/h100.cfg llama3-8b --rat 3
3|no KV cache fits|configs/a100_40gb.cfg llama3-70b
65|bad.csv:3:|configs/h100.cfg llama3-8b --requests-csv $tmp/bad.csv
65|order.csv:3:|configs/h100.cfg llama3-8b --requests-csv $tmp/order.csv
66|nope.csv|configs/h100.cfg llama3-8b --requests-csv $tmp/nope.csv
73|input|configs/h100.cfg llama3-8b --timeline configs/h100.cfg
EOF
# 6b. option combinations (a seeded draw of 40, the same every run): each run finishes, or refuses in one line
# with a documented exit code (2 usage, 3 does not fit, 78 the chip lacks a unit the options ask for, fp8 on an
# A100) and writes nothing; never an internal error (70), as --no-chunked-prefill with a budget below the
# context once gave
awk 'BEGIN {
	srand(20261203)
	split("configs/h100.cfg configs/mi300x.cfg configs/a100_40gb.cfg configs/ascend910b.cfg configs/h200.cfg", cf, " ")
	split("llama3-8b llama2-7b llama3-70b mixtral-8x7b qwen3-30b-a3b", md, " ")
	n = split("--tp=2|--tp=4|--pp=2|--rate=50|--burst|--input-len=1|--input-len=3000|--input-len=1:4000|" \
		"--output-len=1|--output-len=2000|--max-num-seqs=1|--max-batched-tokens=16|--max-batched-tokens=100000|" \
		"--max-model-len=64|--max-model-len=2048|--block-size=1|--block-size=256|--no-chunked-prefill|" \
		"--gpu-memory-utilization=0.2|--kv-free-fraction=0.1|--preempt=swap|--capacity-policy=guaranteed-no-evict|" \
		"--prefix-hit=1|--replicas=2|--prefill-replicas=1|--engine=vllm|--engine=trtllm|--dtype=fp8|" \
		"--decode-impl=mmha|--decode-impl=paged", op, "|")
	for (i = 0; i < 40; i++) {
		line = cf[int(rand() * 5) + 1] " " md[int(rand() * 5) + 1] " --requests " (int(rand() * 3) == 0 ? 1 : 30)
		k = int(rand() * 7)
		for (j = 0; j < k; j++)
			line = line " " op[int(rand() * n) + 1]
		print line
	}
}' >"$tmp/combos"
while read -r -a args; do
	rm -f "$tmp/out.csv"
	"$sim" serve "${args[@]}" --csv "$tmp/out.csv" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = 0 ] || { { [ "$rc" = 2 ] || [ "$rc" = 3 ] || [ "$rc" = 78 ]; } && [ "$(wc -l <"$tmp/e")" = 1 ] &&
		[ ! -s "$tmp/o" ] && [ ! -e "$tmp/out.csv" ]; }; then ok; else
		bad "serve ${args[*]}: exit $rc, stderr: $(head -c 300 "$tmp/e")"
	fi
done <"$tmp/combos"

echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
