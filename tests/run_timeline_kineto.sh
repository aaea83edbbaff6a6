#!/usr/bin/env bash
# sim run --timeline-kineto DIR (sim/report/timeline_kineto.c): the replay as PyTorch profiler (Kineto)
# traces, read back with jq against what Holistic Trace Analysis reads of a measured trace:
#  1. one file per rank (DIR/rank_R.json), each with distributedInfo.rank = R and world_size, deviceProperties,
#     traceEvents; --timeline-ranks picks the files;
#  2. GPU events on pid 0 with tid = args.stream, cat kernel or gpu_memcpy, every one inside the step, and none
#     overlapping another of its stream (a CUDA stream runs one kernel at a time);
#  3. the rank's collectives and transfers are NCCL kernels (names with "nccl", as HTA tells communication
#     apart), as many as the rank ran (ops.csv of --csv), and its device ops as many kernels;
#  4. an imported Kineto trace's streams keep their ids (s7 -> stream 7);
#  5. a folded rank's file holds its representative's ops and says so (otherData.replayed_as_rank);
#  6. a kernel lasts what a profiler would time: its op's time less the launch gap before it, model.launch_gap a
#     kernel, 1.5 us with the defaults (docs/config-reference.md), none with launch_gap 0: in the Kineto events
#     against ops.csv, and in sim op's profiled_s and launch_gap_s; launched from a CUDA graph (launch=graph) the
#     gap is model.graph_launch_gap (0.1 us) and the op that much shorter, its kernel as long;
#  7. each collective is named as NCCL names its kernel: an all-reduce ncclDevKernel_AllReduce_Sum_ and the
#     algorithm it ran, an all-to-all and a ring step (op=shift, point-to-point in NCCL) ncclDevKernel_SendRecv.
# usage: run_timeline_kineto.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"

"$sim" run configs/h100.cfg traces/pipeline_4.trace --timeline-kineto "$tmp/k" --csv "$tmp/csv" >/dev/null ||
	fail "sim run --timeline-kineto"
[ "$(ls "$tmp/k" | tr '\n' ' ')" = "rank_0.json rank_1.json rank_2.json rank_3.json " ] ||
	fail "expected rank_0..3.json, got $(ls "$tmp/k")"
for r in 0 1 2 3; do
	f=$tmp/k/rank_$r.json
	jq -e --argjson r "$r" '.distributedInfo.rank == $r and .distributedInfo.world_size == 4 and
		(.deviceProperties | length) == 1 and (.traceEvents | length) > 0' "$f" >/dev/null ||
		fail "rank $r: distributedInfo, deviceProperties or traceEvents missing"
	jq -e '[.traceEvents[] | select(.ph == "X" and .pid == 0)] | all(.tid == .args.stream and
		(.cat == "kernel" or .cat == "gpu_memcpy") and .ts >= 0 and .dur >= 0)' "$f" >/dev/null ||
		fail "rank $r: a GPU event off its stream's track, or of another category"
	# no overlap on a stream, all inside the step (1 ns of rounding)
	jq -e --argjson step "$(jq '.otherData.step_time_s * 1e6' "$f")" '[.traceEvents[] | select(.ph == "X" and .pid == 0)] as $all
		| ($all | all(.ts + .dur <= $step + 0.001)) and ($all | group_by(.tid)
		| all(sort_by(.ts) | . as $e | [range(1; length)] | all($e[.].ts >= $e[. - 1].ts + $e[. - 1].dur - 0.001)))' \
		"$f" >/dev/null ||
		fail "rank $r: two kernels of one stream overlap, or one ends after the step"
	# ops.csv's kind: the device op's kind, the collective's name, send, recv or delay
	comm=$(awk -F, -v r="$r" 'NR > 1 && $1 == r && $4 ~ /^(send|recv|allreduce|allgather|reducescatter|alltoall|broadcast|reduce|barrier|shift)$/ { n++ }
		END { print n + 0 }' "$tmp/csv/ops.csv")
	ops=$(awk -F, -v r="$r" 'NR > 1 && $1 == r && $4 ~ /^(gemm|attn|elem|copy|conv|embedding)$/ { n++ } END { print n + 0 }' "$tmp/csv/ops.csv")
	kc=$(jq '[.traceEvents[] | select(.ph == "X" and (.name | test("nccl")))] | length' "$f")
	kops=$(jq '[.traceEvents[] | select(.ph == "X" and .pid == 0 and (.name | test("nccl") | not))] | length' "$f")
	[ "$comm" -gt 0 ] && [ "$kc" = "$comm" ] && [ "$kops" = "$ops" ] ||
		fail "rank $r: $kc NCCL kernels for $comm transfers, $kops kernels for $ops device ops"
done
"$sim" run configs/h100.cfg traces/pipeline_4.trace --timeline-kineto "$tmp/k2" --timeline-ranks 1,3 >/dev/null ||
	fail "--timeline-ranks 1,3"
[ "$(ls "$tmp/k2" | tr '\n' ' ')" = "rank_1.json rank_3.json " ] || fail "--timeline-ranks 1,3 wrote $(ls "$tmp/k2")"

# 4: an imported trace's Kineto streams
"$sim" import kineto traces/kineto/kineto_small_mb8.json.gz -o "$tmp/small.trace" || fail "import"
"$sim" run configs/h100.cfg "$tmp/small.trace" --timeline-kineto "$tmp/k3" >/dev/null || fail "run the import"
jq -e '[.traceEvents[] | select(.ph == "X" and .pid == 0) | .tid] | unique == [7]' "$tmp/k3/rank_0.json" >/dev/null ||
	fail "the import's stream s7 is not stream 7"
jq -e '[.traceEvents[] | select(.ph == "X" and .pid == 1)] | length > 0 and all(.cat == "cpu_op")' "$tmp/k3/rank_0.json" \
	>/dev/null || fail "the host's delays are not cpu_ops of the host process"

# 5: a folded rank
"$sim" run configs/h100.cfg traces/dp_step_16.trace --timeline-kineto "$tmp/k4" --timeline-ranks 5 >/dev/null 2>&1 ||
	fail "dp_step_16 --timeline-ranks 5"
jq -e '.distributedInfo.rank == 5 and (.otherData.replayed_as_rank | type) == "number"' "$tmp/k4/rank_5.json" \
	>/dev/null || fail "a folded rank's file does not name the rank it replays"
# 6
gaps=$(awk -F, 'NR > 1 && $1 == 0 && $4 == "gemm" { s += $8; n++ } END { printf "%.9f %d", s * 1e6, n }' "$tmp/csv/ops.csv")
kdur=$(jq '[.traceEvents[] | select(.ph == "X" and .pid == 0 and (.name | test("nccl") | not)) | .dur] | add' "$tmp/k/rank_0.json")
awk -v a="${gaps% *}" -v n="${gaps#* }" -v b="$kdur" 'BEGIN { d = (a - b) / n - 1.5; exit !(n == 24 && d < 1e-3 && d > -1e-3) }' ||
	fail "rank 0: its 24 GEMM kernels last ${kdur} us in the Kineto trace, their ops ${gaps% *} us: not 1.5 us less each"
op='gemm m=4096 n=4096 k=4096 dtype=bf16'
"$sim" op configs/h100.cfg "$op" --json >"$tmp/eager.json" || fail "sim op"
jq -e '(.launch_gap_s - 1.5e-6 | if . < 0 then -. else . end) < 1e-15
	and (.time_s - .launch_gap_s - .profiled_s | if . < 0 then -. else . end) < 1e-15' "$tmp/eager.json" >/dev/null ||
	fail "sim op --json: launch_gap_s is not 1.5 us, or profiled_s not time_s less it"
"$sim" op configs/h100.cfg "$op" --json --set "model.launch_gap=0 us" >"$tmp/nogap.json" || fail "sim op --set launch_gap"
jq -e '.launch_gap_s == 0 and .profiled_s == .time_s' "$tmp/nogap.json" >/dev/null ||
	fail "sim op --set model.launch_gap=0 us: a launch gap is left"
"$sim" op configs/h100.cfg "$op launch=graph" --json >"$tmp/graph.json" || fail "sim op launch=graph"
jq -e --slurpfile e "$tmp/eager.json" '
	def near(a; b): (a - b | if . < 0 then -. else . end) < 1e-15;
	near(.launch_gap_s; 1e-7) and near(.profiled_s; $e[0].profiled_s) and near($e[0].time_s - .time_s; 1.4e-6)' \
	"$tmp/graph.json" >/dev/null || fail "sim op launch=graph: not a 0.1 us gap, the same kernel, 1.4 us less in all"

# 7: NCCL's kernel names, in the order the trace runs them
printf 'simtrace 1\nranks 8\ncoll op=allreduce comm=world bytes=64MiB algo=ring\ncoll op=alltoall comm=world bytes=8MiB\ncoll op=shift comm=world bytes=8MiB\n' >"$tmp/nccl.trace"
"$sim" run configs/h100.cfg "$tmp/nccl.trace" --timeline-kineto "$tmp/k5" --timeline-ranks 0 >/dev/null ||
	fail "sim run the collectives' trace"
names=$(jq -r '[.traceEvents[] | select(.ph == "X" and .pid == 0)] | sort_by(.ts) | map(.name) | join(" ")' \
	"$tmp/k5/rank_0.json")
[ "$names" = "ncclDevKernel_AllReduce_Sum_RING ncclDevKernel_SendRecv ncclDevKernel_SendRecv" ] ||
	fail "NCCL kernel names: got '$names'"
finish timeline_kineto
