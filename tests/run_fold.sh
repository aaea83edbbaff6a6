#!/usr/bin/env bash
# Folding symmetric ranks must not change the answer, nor must reusing the
# time of collectives that run alone on their links (--no-memo turns that
# off): for each trace, the replays folded, with --no-fold and with
# --no-fold --no-memo agree on the step time, per-rank means, memory,
# workload figures and communication per communicator. A trace written as
# memo:PATH must also take fewer engine activities than with --no-memo (the
# shortcut is in use); one written as prune:PATH must take fewer folded than
# folded with --no-memo (the flows of folded members are pruned from its
# phases, replay_plan.c).
# usage: run_fold.sh SIM ROOT CONFIG [memo:|prune:]TRACE...
set -u
sim=$1 root=$2 cfg=$3
shift 3
fail=0
q='[.time_s, .flops, .rank_mean, .rank_max, .workload, .memory, .comm_by_communicator, .marks, .by_kind]'
for arg in "$@"; do
	t=${arg#memo:}
	t=${t#prune:}
	run() { "$sim" run "$root/$cfg" "$root/$t" --json "$@"; }
	a=$(run) || { echo "FAIL $t: folded run failed"; fail=1; continue; }
	b=$(run --no-fold) || { echo "FAIL $t: --no-fold run failed"; fail=1; continue; }
	c=$(run --no-fold --no-memo) || { echo "FAIL $t: --no-memo run failed"; fail=1; continue; }
	fa=$(jq -c "$q" <<<"$a") fb=$(jq -c "$q" <<<"$b") fc=$(jq -c "$q" <<<"$c")
	folded=$(jq '.fold.ranks_per_replayed' <<<"$a")
	if [ "$folded" -le 1 ]; then
		echo "FAIL $t: expected the trace to fold (ranks_per_replayed $folded)"
		fail=1
	elif [ "$fa" != "$fb" ]; then
		echo "FAIL $t: folded and unfolded replays differ"
		diff <(jq "$q" <<<"$a") <(jq "$q" <<<"$b") | head -20
		fail=1
	elif [ "$fb" != "$fc" ]; then
		echo "FAIL $t: replays with and without --no-memo differ"
		diff <(jq "$q" <<<"$b") <(jq "$q" <<<"$c") | head -20
		fail=1
	elif [ "${arg#memo:}" != "$arg" ] && [ "$(jq .engine.activities <<<"$b")" -ge "$(jq .engine.activities <<<"$c")" ]; then
		echo "FAIL $t: the replay did not reuse any collective's time (engine activities" \
			"$(jq .engine.activities <<<"$b") with, $(jq .engine.activities <<<"$c") without --no-memo)"
		fail=1
	elif [ "${arg#prune:}" != "$arg" ] &&
		d=$(run --no-memo | jq .engine.activities) && [ "$(jq .engine.activities <<<"$a")" -ge "$d" ]; then
		echo "FAIL $t: the folded replay pruned no flow (engine activities" \
			"$(jq .engine.activities <<<"$a") with, $d without --no-memo)"
		fail=1
	else
		echo "ok $t on $cfg (each replayed rank stands for $folded; engine activities" \
			"$(jq .engine.activities <<<"$a") folded, $(jq .engine.activities <<<"$c") with neither)"
	fi
done
exit $fail
