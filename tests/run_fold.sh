#!/usr/bin/env bash
# Folding symmetric ranks must not change the answer: for each trace, the
# replay with folding and with --no-fold agree on the step time, per-rank
# means, memory, workload figures and communication per communicator.
# usage: run_fold.sh SIM ROOT CONFIG TRACE...
set -u
sim=$1 root=$2 cfg=$3
shift 3
fail=0
for t in "$@"; do
	a=$("$sim" run "$root/$cfg" "$root/$t" --json) || { echo "FAIL $t: folded run failed"; fail=1; continue; }
	b=$("$sim" run "$root/$cfg" "$root/$t" --json --no-fold) || { echo "FAIL $t: --no-fold run failed"; fail=1; continue; }
	q='[.time_s, .flops, .rank_mean, .rank_max, .workload, .memory, .comm_by_communicator, .marks, .by_kind]'
	fa=$(jq -c "$q" <<<"$a") fb=$(jq -c "$q" <<<"$b")
	folded=$(jq '.fold.ranks_per_replayed' <<<"$a")
	if [ "$folded" -le 1 ]; then
		echo "FAIL $t: expected the trace to fold (ranks_per_replayed $folded)"
		fail=1
	elif [ "$fa" != "$fb" ]; then
		echo "FAIL $t: folded and unfolded replays differ"
		diff <(jq "$q" <<<"$a") <(jq "$q" <<<"$b") | head -20
		fail=1
	else
		echo "ok $t on $cfg (each replayed rank stands for $folded)"
	fi
done
exit $fail
