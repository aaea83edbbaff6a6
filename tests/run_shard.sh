#!/usr/bin/env bash
# `sim sweep --shard I/N` and `sim merge` (issue 20): a sweep run as N shards
# (one per process, node or batch job) merges into the CSV one process
# writes, byte for byte: 4 shards of a 6-point op grid (uneven: 2, 2, 1, 1
# points), 8 shards of it (two empty), 4 shards of a trace sweep with --model
# and --gen, the files in any order; a missing, doubled or foreign shard, a
# file that is no shard, one cut short, are refused with one line and exit
# 65, and no output is written; --shard with --plot or a malformed I/N is a
# usage error. A plan in 4 shards (`sim plan --shard`) merges into the CSV
# and the plot one process writes; a plan whose config changed since is
# refused.
# usage: run_shard.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"
op='gemm m=4096 n=4096 k=4096 dtype=bf16'
grid=(--set compute.sm.count=66,100,132 --set 'memory.device.bandwidth=2TB/s,3.35TB/s')

"$sim" sweep configs/h100.cfg --op "$op" "${grid[@]}" -o "$tmp/full.csv" 2>/dev/null || fail "sweep"
for n in 4 8; do
	files=()
	for ((i = n - 1; i >= 0; i--)); do
		"$sim" sweep configs/h100.cfg --op "$op" "${grid[@]}" --shard "$i/$n" -o "$tmp/s$n.$i.csv" 2>/dev/null ||
			fail "sweep --shard $i/$n"
		files+=("$tmp/s$n.$i.csv")
	done
	"$sim" merge "${files[@]}" -o "$tmp/m$n.csv" || fail "merge of $n shards"
	cmp -s "$tmp/m$n.csv" "$tmp/full.csv" || fail "$n shards merged differ from one process's CSV"
done
grep -Eq '^# sim sweep shard 2/4 of 6 points, sweep [0-9a-f]{16}$' "$tmp/s4.2.csv" || fail "shard line: $(head -n 1 "$tmp/s4.2.csv")"
[ "$(cut -d, -f1 "$tmp/s4.1.csv" | tail -n +3 | tr '\n' ' ')" = "1 5 " ] || fail "shard 1/4 holds points $(cut -d, -f1 "$tmp/s4.1.csv" | tail -n +3 | tr '\n' ' ')"
[ "$(wc -l <"$tmp/s8.7.csv")" = 2 ] || fail "shard 7/8 of 6 points is not empty"

# a trace sweep with a workload grid
model='llama3-8b --layers 2 --dp 2 --global-batch 4'
"$sim" sweep configs/h100.cfg --model "$model" --gen tp=1,2 --set compute.sm.count=66,132 -o "$tmp/tfull.csv" \
	2>/dev/null || fail "sweep --model"
for i in 0 1 2 3; do
	"$sim" sweep configs/h100.cfg --model "$model" --gen tp=1,2 --set compute.sm.count=66,132 --shard "$i/4" \
		-o "$tmp/t.$i.csv" 2>/dev/null || fail "sweep --model --shard $i/4"
done
"$sim" merge "$tmp"/t.{2,0,3,1}.csv | cmp -s - "$tmp/tfull.csv" || fail "the --model sweep's shards merged differ"

# refusals: one line, exit 65, nothing written
refused() { # want-exit want-message merge-args...
	local want=$1 msg=$2
	shift 2
	rm -f "$tmp/out.csv"
	"$sim" merge "$@" -o "$tmp/out.csv" 2>"$tmp/err"
	local rc=$?
	[ "$rc" = "$want" ] || fail "merge $*: exit $rc, expected $want ($(cat "$tmp/err"))"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "$msg" "$tmp/err" || fail "merge $*: '$(cat "$tmp/err")', expected '$msg'"
	[ ! -e "$tmp/out.csv" ] || fail "merge $*: wrote an output"
}
refused 65 'shard 3/4 is missing (3 files for 4 shards)' "$tmp"/s4.{0,1,2}.csv
refused 65 's4.1.csv:1: shard 1/4 twice' "$tmp"/s4.{0,1,1,2,3}.csv
refused 65 'shard 1/8 of 6 points of sweep [0-9a-f]*, but .* is of 4 shards of 6 points' "$tmp"/s4.{0,1,2,3}.csv "$tmp/s8.1.csv"
# the same keys and number of points, other values: another sweep
"$sim" sweep configs/h100.cfg --op "$op" --set compute.sm.count=60,100,132 --set 'memory.device.bandwidth=2TB/s,3.35TB/s' \
	--shard 3/4 -o "$tmp/other.csv" 2>/dev/null || fail "sweep (other values)"
refused 65 'other.csv:1: .*: not the same sweep' "$tmp"/s4.{0,1,2}.csv "$tmp/other.csv"
# the same fingerprint cannot tell a header edited by hand: the header is compared too
sed '2s/time_s/time/' "$tmp/s4.3.csv" >"$tmp/edited.csv"
refused 65 'edited.csv:2: its header is not the first file.s' "$tmp"/s4.{0,1,2}.csv "$tmp/edited.csv"
refused 65 "full.csv:1: expected '# sim sweep shard I/N of P points, sweep ID'" "$tmp/full.csv"
head -c "$(($(wc -c <"$tmp/s4.0.csv") - 3))" "$tmp/s4.0.csv" >"$tmp/cut.csv"
refused 65 'cut.csv:4: the last row has no line break' "$tmp/cut.csv" "$tmp"/s4.{1,2,3}.csv
refused 66 'no_such.csv: cannot read' "$tmp/no_such.csv"
"$sim" sweep configs/h100.cfg --op "$op" "${grid[@]}" --shard 0/2 --plot "$tmp/p.svg" 2>"$tmp/err"
[ $? = 2 ] && grep -q -- '--plot needs every point' "$tmp/err" || fail "--shard with --plot: $(cat "$tmp/err")"
for bad in 2/2 -1/2 1 1/0 a/b 0/2x; do
	"$sim" sweep configs/h100.cfg --op "$op" "${grid[@]}" --shard "$bad" 2>"$tmp/err" >/dev/null
	[ $? = 2 ] && grep -q -- "--shard $bad: expected I/N" "$tmp/err" || fail "--shard $bad: $(cat "$tmp/err")"
done

# a plan in shards (sim plan --shard I/N, merged by sim merge): the CSV one process writes, byte for byte, with 4
# shards of 6 replays (uneven: 2, 2, 1, 1) given in any order; each shard holds its replays I, I + 4, ...
cp configs/h100.cfg "$tmp/chip.cfg"
plan=("$tmp/chip.cfg" llama3-8b --layers 2 --gpus 8 --seq 2048 --global-batch 16 --tp 1,2,4 --pp 1,2 --micro-batch 2
	--recompute none --zero 1)
"$sim" plan "${plan[@]}" --csv "$tmp/pfull.csv" --plot "$tmp/pfull.svg" --jobs 1 >/dev/null 2>&1 || fail "plan"
[ "$(grep -c ',replayed,' "$tmp/pfull.csv")" = 6 ] || fail "the plan replays $(grep -c ',replayed,' "$tmp/pfull.csv") layouts, expected 6"
for i in 3 1 0 2; do
	"$sim" plan "${plan[@]}" --shard "$i/4" --csv "$tmp/p.$i.csv" --jobs 1 2>/dev/null || fail "plan --shard $i/4"
done
"$sim" merge "$tmp"/p.{2,0,3,1}.csv -o "$tmp/pmerged.csv" --plot "$tmp/pmerged.svg" || fail "merge of the plan's shards"
cmp -s "$tmp/pmerged.csv" "$tmp/pfull.csv" || fail "the plan's 4 shards merged differ from one process's CSV"
cmp -s "$tmp/pmerged.svg" "$tmp/pfull.svg" || fail "the plan's 4 shards merged plot differently from one process"
grep -Eq '^# sim plan shard 1/4 of 6 replays, plan [0-9a-f]{16}$' "$tmp/p.1.csv" || fail "plan shard line: $(head -n 1 "$tmp/p.1.csv")"
[ "$(grep -v '^#' "$tmp/p.1.csv" | cut -d, -f1 | tail -n +2 | tr '\n' ' ')" = "1 5 " ] ||
	fail "plan shard 1/4 holds replays $(grep -v '^#' "$tmp/p.1.csv" | cut -d, -f1 | tail -n +2 | tr '\n' ' ')"
grep -q -- '^# arg --jobs' "$tmp/p.1.csv" && fail "a shard keeps --jobs (it does not change a replay)"
refused 65 'sim merge: shard 2/4 is missing' "$tmp"/p.{0,1,3}.csv
refused 65 'p.3.csv:1: shard 3/4 twice' "$tmp"/p.{0,1,2,3,3}.csv
"$sim" plan "${plan[@]}" --micro-batch 1 --shard 0/4 --csv "$tmp/pother.csv" --jobs 1 2>/dev/null || fail "plan --shard (other)"
refused 65 'pother.csv:1: .*: not the same plan' "$tmp"/p.{1,2,3}.csv "$tmp/pother.csv"
head -c "$(($(wc -c <"$tmp/p.0.csv") - 3))" "$tmp/p.0.csv" >"$tmp/pcut.csv"
refused 65 'pcut.csv:[0-9]*: the last line has no line break' "$tmp/pcut.csv" "$tmp"/p.{1,2,3}.csv
sed -i 's/^\( *count *= *\)132;/\1130;/' "$tmp/chip.cfg"
refused 65 'p.0.csv:1: plan .*: the config changed since the shards ran' "$tmp"/p.{0,1,2,3}.csv
"$sim" merge "$tmp"/s4.{0,1,2,3}.csv --plot "$tmp/s.svg" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q -- '--plot is for a plan' "$tmp/err" && [ ! -e "$tmp/s.svg" ] || fail "merge --plot of a sweep: $(cat "$tmp/err")"
"$sim" plan "${plan[@]}" --shard 0/2 --json >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q -- '--shard writes one shard' "$tmp/err" || fail "plan --shard with --json: $(cat "$tmp/err")"
[ "$fails" = 0 ] && echo "ok shard"
[ "$fails" = 0 ]
