#!/usr/bin/env bash
# The step breakdown adds up (issue 21): for each trace, the compute per region
# (or all compute), the exposed time per communicator and the idle time of
# `sim run --json` sum to the step time, and the communicators' exposed shares
# to the rank's exposed time, within 0.1% (a rank's concurrent transfers, a
# send beside its recv or a tp collective beside a p2p one, are one exposed
# instant, not two).
# usage: run_breakdown.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
cd "$root" || exit 1
fails=0
for t in gpt3 llama3_8b_train dp_step_16 mixtral_8x7b_ep pipeline_4; do
	json=$("$sim" run configs/h100.cfg "traces/$t.trace" --json) || {
		echo "FAIL $t: sim run"
		fails=$((fails + 1))
		continue
	}
	echo "$json" | jq -r --arg t "$t" '
		def abs: if . < 0 then -. else . end;
		(if (.marks | length) > 0 then ([.marks[].compute_s] | add) else .rank_mean.compute_s end) as $c
		| ([.comm_by_communicator[].exposed_s] | add // 0) as $x
		| ($c + $x + .rank_mean.idle_s) as $sum
		| "\($t): step \(.time_s) s = compute \($c) + exposed \($x) + idle \(.rank_mean.idle_s) = \($sum)",
		  if (($sum - .time_s) | abs) > 1e-3 * .time_s then "FAIL \($t): the breakdown adds up to \($sum) s, not the step time \(.time_s) s" else empty end,
		  if (($x - .rank_mean.exposed_comm_s) | abs) > 1e-3 * .time_s then "FAIL \($t): the communicators expose \($x) s, the rank \(.rank_mean.exposed_comm_s) s" else empty end' |
		tee /dev/stderr | grep -q '^FAIL' && fails=$((fails + 1))
done
[ "$fails" = 0 ] && echo "ok breakdown"
[ "$fails" = 0 ]
