#!/usr/bin/env bash
# Placement on nodes (sim run --ranks-per-node, the report's placement line):
# - EP groups of 32 on NVL72 racks of 72 GPUs: two of the four groups span
#   both racks, and the report says so with the ranks per node that keep each
#   in one (64); placed 64 to a rack, no group spans and the report is silent;
# - 64 ranks on each 72-GPU switch node take the time a node of 64 devices
#   takes (--set system.devices_per_node=64: the same switch with 64 ports),
#   the reference being the config's own smaller node;
# - sim sweep --ranks-per-node: every point placed so, a point whose nodes
#   are too small a row with the error; sim compare --ranks-per-node: every
#   column placed so;
# - groups that cannot fit in a node (data-parallel groups across nodes of 8)
#   are not flagged.
# usage: run_placement.sh SIM ROOT
set -u
sim=$1 root=$2
cd "$root" || exit 1
fails=0 n=0
check() { # name, condition result
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
t=tests/fold/moe_tp2_ep32_nvl72_128.trace
txt=$("$sim" run configs/gb200.cfg "$t")
grep -qx '  placement    ep: 2 of 4 groups of 32 span two nodes or more (72 ranks per node); --ranks-per-node 64 puts each in one node' <<<"$txt"
check "72 to a rack: the report names the EP groups that span two racks" $?
j72=$("$sim" run configs/gb200.cfg "$t" --json)
[ "$(jq -c '[.placement[0].comm, .placement[0].spanning, .placement[0].suggest_ranks_per_node, .ranks_per_node]' <<<"$j72")" = '["ep",2,64,72]' ]
check "72 to a rack: JSON placement and ranks_per_node" $?
j64=$("$sim" run configs/gb200.cfg "$t" --json --ranks-per-node 64)
[ "$(jq -c '[.placement, .ranks_per_node, .nodes]' <<<"$j64")" = '[[],64,2]' ]
check "64 to a rack: no group spans two racks" $?
"$sim" run configs/gb200.cfg "$t" --ranks-per-node 64 | grep -q '^  placement' 
check "64 to a rack: no placement line" $(( ! $? ))
ref=$("$sim" run configs/gb200.cfg "$t" --json --set system.devices_per_node=64)
[ "$(jq .time_s <<<"$j64")" = "$(jq .time_s <<<"$ref")" ]
check "64 of 72 devices per node: the step of a 64-device node ($(jq .time_s <<<"$j64") s, $(jq .time_s <<<"$ref") s)" $?
awk -v a="$(jq .time_s <<<"$j64")" -v b="$(jq .time_s <<<"$j72")" 'BEGIN { exit !(a < b) }'
check "64 to a rack is faster than 72 to a rack ($(jq .time_s <<<"$j64") s, $(jq .time_s <<<"$j72") s)" $?
csv=$("$sim" sweep configs/gb200.cfg "$t" --ranks-per-node 64 --set system.devices_per_node=32,72 --jobs 1)
[ "$(sed -n 3p <<<"$csv" | cut -d, -f1,2)" = "72,$(printf '%.6g' "$(jq .time_s <<<"$j64")")" ]
check "sim sweep --ranks-per-node 64: each point replays as sim run --ranks-per-node 64 does" $?
sed -n 2p <<<"$csv" | grep -q '^32,.*"--ranks-per-node: 64 ranks per node: expected 1 to 32'
check "sim sweep --ranks-per-node 64: a point with nodes of 32 is a row with the error" $?
[ "$("$sim" compare configs/gb200.cfg configs/gb300.cfg "$t" --ranks-per-node 64 --json | jq '.columns[0].time_s')" = "$(jq .time_s <<<"$j64")" ]
check "sim compare --ranks-per-node 64: a column replays as sim run --ranks-per-node 64 does" $?
[ "$("$sim" run configs/h100.cfg traces/gpt3.trace --json | jq -c .placement)" = '[]' ]
check "GPT-3 on nodes of 8: data-parallel groups across nodes are not flagged" $?
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
