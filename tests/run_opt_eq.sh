#!/usr/bin/env bash
# Every command takes `--opt=value` as well as `--opt value` (issue 21): each pair
# below gives the same bytes on stdout (sim/cli/main.c splits the first form
# before the command parses it); a flag given a value (`--json=x`) is a
# usage error that says so.
# usage: run_opt_eq.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"
same() { # ARGS-WITH-SPACE -- ARGS-WITH-EQUALS
	local a=() b=() side=a
	for x in "$@"; do
		if [ "$x" = "::" ]; then side=b; continue; fi
		if [ $side = a ]; then a+=("$x"); else b+=("$x"); fi
	done
	# stdout only: the sanitizer build's notes on stderr carry the process id
	if ! "$sim" "${a[@]}" >"$tmp/a" 2>"$tmp/ea" || ! "$sim" "${b[@]}" >"$tmp/b" 2>"$tmp/eb" ||
		! cmp -s "$tmp/a" "$tmp/b"; then
		echo "FAIL sim ${b[*]} differs from sim ${a[*]}"
		fails=$((fails + 1))
	fi
}
same info configs/h100.cfg --set compute.sm.count=100 --json :: info configs/h100.cfg --set=compute.sm.count=100 --json
same op configs/h100.cfg 'gemm m=1024 n=1024 k=1024 dtype=bf16' --set memory.device.bandwidth=4TB/s :: \
	op configs/h100.cfg 'gemm m=1024 n=1024 k=1024 dtype=bf16' --set=memory.device.bandwidth=4TB/s
same run configs/h100.cfg traces/allreduce_8.trace --timeline-ranks 0-1 --set compute.sm.count=100 :: \
	run configs/h100.cfg traces/allreduce_8.trace --timeline-ranks=0-1 --set=compute.sm.count=100
same sweep configs/h100.cfg --op 'gemm m=1024 n=1024 k=1024 dtype=bf16' --set compute.sm.count=66,132 :: \
	sweep configs/h100.cfg --op 'gemm m=1024 n=1024 k=1024 dtype=bf16' --set=compute.sm.count=66,132
same gen llama3-8b --tp 2 --dp 4 -o - :: gen llama3-8b --tp=2 --dp=4 -o -
same compare configs/h100.cfg configs/a100.cfg --op 'gemm m=1024 n=1024 k=1024 dtype=bf16' --years 3 :: \
	compare configs/h100.cfg configs/a100.cfg --op 'gemm m=1024 n=1024 k=1024 dtype=bf16' --years=3
# a flag given a value is a usage error naming the flag, whichever command and however its help groups aliases
flag_value() { # WANT-FLAG ARGS...
	local want=$1
	shift
	"$sim" "$@" >/dev/null 2>"$tmp/e"
	local rc=$?
	if [ $rc != 2 ] || ! grep -q "^sim [a-z]*: $want takes no value (got '$want=" "$tmp/e"; then
		echo "FAIL sim $* (exit $rc): $(head -n 1 "$tmp/e")"
		fails=$((fails + 1))
	fi
}
flag_value --json run configs/h100.cfg traces/allreduce_8.trace --json=x
flag_value --json info configs/h100.cfg --json=yes
flag_value --no-fold run configs/h100.cfg traces/allreduce_8.trace --no-fold=1
flag_value --find-rate serve configs/h100.cfg llama3-8b --find-rate=1
flag_value --account-for-embedding-in-pipeline-split gen llama3-8b --account-for-embedding-in-pipeline-split=1
flag_value --account-for-loss-in-pipeline-split gen llama3-8b --account-for-loss-in-pipeline-split=1
finish opt_eq
