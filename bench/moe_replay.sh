#!/usr/bin/env bash
# Speed of replaying MoE training steps (prints figures; never fails on a
# slow machine): wall time, engine activities and peak memory of `sim run`
# for DeepSeek-V3 with expert parallelism 64 (pp 8, 61 layers as 5 + 6 x 8
# + 8, ZeRO-1) on 512 and 2,048 H100s (issue 24's target: <= 10 s on one core at
# 2,048), the same model as Megatron-Bridge's B200 recipe lays it out (pp 8 x 2
# virtual stages of the layout Et*4|(t*4|)*14tmL with its MTP module, EP 32,
# 4,096 sequences on 256 B200s: the validation's row T151), GPT-OSS 120B on 64
# GB200s (EP 64, every other layer windowed: row T067), Qwen3 235B-A22B on 256
# GB300s as its recipe lays it out (PP 4 x 12 virtual stages, EP 32: rows T069,
# T085 ...) on 64 GPUs of each NVL72 rack (--ranks-per-node 64, as the
# validation places jobs of 128 GPUs and more) and 72 to a rack (EP groups
# across two racks: the ep and dp dims do not fold), and the Mixtral 8x7B EP
# trace the repository ships; and Qwen3 235B-A22B as its H100 recipe runs it, EP 32 folded over TP 2 x DP 16
# (Megatron-Core's MoE parallel folding: the validation's row T314); and DeepSeek-V4-Flash on 128 GB200s (EP 64,
# compressed attention and hyper-connections: row T065).
# usage: bench/moe_replay.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/.."
sim=${1:-build}/sim
runs=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dp in 64 256; do
	"$sim" gen deepseek-v3 --tp 1 --pp 8 --ep 64 --dp "$dp" --micro-batch 1 --global-batch $((dp * 4)) --zero 1 \
		--decoder-first-pipeline-num-layers 5 --decoder-last-pipeline-num-layers 8 -o "$tmp/dsv3_$dp.trace"
done
"$sim" gen deepseek-v3 --tp 1 --pp 8 --dp 32 --ep 32 --micro-batch 1 --global-batch 4096 --zero 1 --dtype fp8 \
	--fp8-recipe mxfp8 --attn-impl cudnn --pipeline-layout 'Et*4|(t*4|)*14tmL' -o "$tmp/dsv3_layout.trace"
"$sim" gen deepseek-v3 --tp 1 --pp 8 --dp 32 --ep 32 --micro-batch 1 --global-batch 4096 --zero 1 --dtype fp8 \
	--fp8-recipe mxfp8 --attn-impl cudnn --pipeline-layout 'Et*4|(t*4|)*14tmL' --moe-dispatcher flex --moe-a2a-overlap \
	-o "$tmp/dsv3_overlap.trace"
"$sim" gen gpt-oss-120b --dp 64 --ep 64 --micro-batch 4 --global-batch 1280 --zero 1 --dtype fp8 --fp8-recipe mxfp8 \
	--attn-impl cudnn -o "$tmp/gptoss.trace"
"$sim" gen qwen3-235b-a22b --seq 4096 --tp 1 --pp 4 --schedule interleaved --virtual-stages 12 --dp 64 --ep 32 \
	--micro-batch 2 --global-batch 8192 --zero 1 --dtype fp8 --fp8-recipe mxfp8 --attn-impl cudnn \
	--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split -o "$tmp/qwen235.trace"
"$sim" gen qwen3-235b-a22b --seq 4096 --tp 2 --sp --pp 8 --schedule interleaved --virtual-stages 4 --dp 16 --ep 32 \
	--micro-batch 1 --global-batch 2048 --zero 1 --dtype fp8 --fp8-recipe current --attn-impl cudnn --moe-a2a-overlap \
	--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split -o "$tmp/qwen235_fold.trace"
"$sim" gen deepseek-v4-flash --dp 128 --ep 64 --global-batch 2048 --zero 1 --dtype fp8 --fp8-recipe mxfp8 \
	--attn-impl cudnn --moe-dispatcher flex -o "$tmp/dsv4.trace"
run() { # label config trace [options]: the median wall time of RUNS
	local times="" rss=0 t0 t1 m
	for _ in $(seq "$runs"); do
		t0=$(date +%s.%N)
		# exit 3: a rank does not fit its device's memory; the step is timed all the same
		/usr/bin/time -f %M -o "$tmp/rss" "$sim" run "$2" "$3" --json "${@:4}" >"$tmp/out.json" 2>/dev/null || [ $? = 3 ]
		t1=$(date +%s.%N)
		times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
		m=$(tail -n 1 "$tmp/rss")
		[ "$m" -gt "$rss" ] && rss=$m
	done
	printf '%s\n' $times | sort -g | sed -n "$(((runs + 1) / 2))p" |
		awk -v l="$1" -v a="$(jq .engine.activities "$tmp/out.json")" -v r="$rss" -v k="$runs" \
			'{ printf "%-44s %8.3f s  %9d activities  %6.0f MiB peak  (median of %d)\n", l, $1, a, r / 1024, k }'
}
run "DeepSeek-V3 step, EP 64, 512 ranks (H100)" configs/h100.cfg "$tmp/dsv3_64.trace"
run "DeepSeek-V3 step, EP 64, 2048 ranks (H100)" configs/h100.cfg "$tmp/dsv3_256.trace"
run "DeepSeek-V3 recipe layout, EP 32, 256 B200s" configs/b200.cfg "$tmp/dsv3_layout.trace"
run "  the same, flex dispatch, all-to-all overlap" configs/b200.cfg "$tmp/dsv3_overlap.trace"
run "GPT-OSS 120B step, EP 64, 64 GB200s" configs/gb200.cfg "$tmp/gptoss.trace"
run "Qwen3 235B step, EP 32, 256 GB300s, 64/rack" configs/gb300.cfg "$tmp/qwen235.trace" --ranks-per-node 64
run "  the same, 72 to a rack" configs/gb300.cfg "$tmp/qwen235.trace"
run "Qwen3 235B, EP 32 folded over TP 2, 256 H100s" configs/h100.cfg "$tmp/qwen235_fold.trace"
run "Mixtral 8x7B step, EP 8, 64 ranks (H100)" configs/h100.cfg traces/mixtral_8x7b_ep.trace
run "DeepSeek-V4-Flash step, EP 64, 128 GB200s" configs/gb200.cfg "$tmp/dsv4.trace" --ranks-per-node 64
