#!/usr/bin/env bash
# `sim sweep --model ... --gen opt=v1,v2` (issue 20): workload layouts swept
# next to config keys. A point replays what `sim gen` writes for the model
# with its values, so its step time is the one `sim gen` + `sim run` give; a
# layout sim gen refuses is that point's row with sim gen's message; bad
# --gen/--model arguments are usage errors (exit 2) before anything runs.
# usage: run_sweep_gen.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"
model='llama3-8b --layers 4 --dp 2 --global-batch 8'

# a grid of a gen option and a config key, in the order given, the last fastest
"$sim" sweep configs/h100.cfg --model "$model" --gen tp=1,2,3 --set compute.sm.count=66,132 \
	-o "$tmp/s.csv" 2>"$tmp/err" || fail "sweep --model exited $?: $(cat "$tmp/err")"
[ "$(head -n 1 "$tmp/s.csv" | cut -d, -f1-3)" = "gen.tp,compute.sm.count,time_s" ] ||
	fail "header: $(head -n 1 "$tmp/s.csv")"
[ "$(wc -l <"$tmp/s.csv")" = 7 ] || fail "expected 6 points: $(cat "$tmp/s.csv")"
awk -F, 'NR > 1 && NR <= 5 && !($3 > 0) { exit 1 }' "$tmp/s.csv" || fail "tp 1 and 2 rows without a time"
grep -q '^3,66,,,,,,,,,"\{0,1\}sim gen: --heads 32 is not divisible by --tp 3' "$tmp/s.csv" ||
	fail "tp 3: not the row of sim gen's refusal: $(grep '^3,66' "$tmp/s.csv")"

# a point is what sim gen + sim run give
"$sim" gen $model --tp 2 -o "$tmp/t2.trace" || fail "sim gen"
want=$("$sim" run configs/h100.cfg "$tmp/t2.trace" --set compute.sm.count=132 --json | jq -r '.time_s')
got=$(awk -F, '$1 == 2 && $2 == 132 { print $3 }' "$tmp/s.csv")
[ "$(printf '%.6g' "$want")" = "$got" ] || fail "tp 2 on 132 SMs: sweep $got s, sim run $want s"

# a switch takes 0 or 1
"$sim" sweep configs/h100.cfg --model "llama3-8b --layers 4 --tp 2 --dp 2 --global-batch 8" --gen sp=0,1 \
	-o "$tmp/sp.csv" 2>"$tmp/err" || fail "sweep --gen sp=0,1 exited $?"
[ "$(awk -F, 'NR > 1 && $2 > 0' "$tmp/sp.csv" | wc -l)" = 2 ] || fail "sp=0,1: $(cat "$tmp/sp.csv")"

# usage errors, one line each, exit 2, before any point runs
bad() { # WANT-PATTERN ARGS...
	local want=$1
	shift
	"$sim" sweep configs/h100.cfg "$@" >"$tmp/o" 2>"$tmp/e"
	local rc=$?
	if [ $rc != 2 ] || [ "$(wc -l <"$tmp/e")" != 1 ] || ! grep -q -- "$want" "$tmp/e" || [ -s "$tmp/o" ]; then
		fail "sim sweep $* (exit $rc): $(cat "$tmp/e")"
	fi
}
bad "--gen tp needs --model" --op 'gemm m=64 n=64 k=64 dtype=bf16' --gen tp=1,2
bad "sim gen has no option --tpp" --model "$model" --gen tpp=1,2
bad "a switch takes 0 or 1, not '2'" --model "$model" --gen sp=0,2
bad "--model 'nosuch-model': " --model nosuch-model --gen tp=1,2
bad "one of them" traces/allreduce_8.trace --model "$model" --gen tp=1,2
bad "the model takes no output file" --model "$model -o $tmp/x.trace" --gen tp=1,2
finish sweep_gen
