#!/usr/bin/env bash
# `sim op` answers for every op kind on every config: for each config, a
# dtype it has a unit for (bf16, else fp16, else fp32, else int8), and every
# op kind; the JSON must carry a positive finite time_s and a bound, and a
# second run must print the same bytes. flash3 only where matrix.async.
# With I/N, only the configs whose index (in sorted order) is I modulo N: ctest
# runs it as N tests so that none is silent for minutes.
# usage: run_op_all.sh SIM ROOT [I/N]
set -u
sim=$1 root=$2 shard=${3:-0/1}
cd "$root" || exit 1
fails=0 n=0
mapfile -t all < <(find configs -name '*.cfg' | LC_ALL=C sort)
cfgs=()
for i in "${!all[@]}"; do
	[ $((i % ${shard#*/})) = "${shard%/*}" ] && cfgs+=("${all[$i]}")
done
for c in "${cfgs[@]}"; do
	info=$("$sim" info "$c" --json) || { echo "FAIL $c: sim info"; fails=$((fails + 1)); continue; }
	dt=""
	for d in bf16 fp16 fp32 int8; do
		if [ "$(jq -r --arg d $d '(.peak_tflops.matrix[$d] // 0) + (.peak_tflops.vector[$d] // 0) > 0' <<<"$info")" = true ]; then
			dt=$d
			break
		fi
	done
	[ -n "$dt" ] || { echo "FAIL $c: no dtype found"; fails=$((fails + 1)); continue; }
	ops=("gemm m=4096 n=4096 k=4096 dtype=$dt"
		"gemm m=8 n=8192 k=8192 dtype=$dt"
		"attn b=4 h=16 sq=2048 skv=2048 d=128 causal=1 dtype=$dt impl=flash2"
		"attn b=4 h=16 sq=2048 skv=2048 d=128 dtype=$dt impl=flash2 dir=bwd"
		"attn b=2 h=16 sq=1024 skv=1024 d=64 dtype=$dt impl=naive"
		"attn b=16 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=$dt impl=decode"
		"attn b=16 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=$dt impl=paged"
		"elem op=softmax n=16777216 cols=4096 dtype=$dt"
		"elem op=adam n=1000000 dtype=fp32"
		"copy bytes=256MiB"
		"conv n=8 c=64 h=56 w=56 k=128 r=3 s=3 pad=1 dtype=$dt"
		"embedding tokens=4096 dim=4096 vocab=32000 dtype=$dt")
	if [ "$(jq -r '[.. | objects | select(has("matrix_async")) | .matrix_async] | any' <<<"$info" 2>/dev/null)" = true ]; then
		ops+=("attn b=4 h=16 sq=2048 skv=2048 d=128 dtype=$dt impl=flash3")
	fi
	if jq -e '.links[] | select(.kind == "pcie")' <<<"$info" >/dev/null; then
		ops+=("copy bytes=256MiB src=host dst=hbm")
	fi
	for o in "${ops[@]}"; do
		n=$((n + 1))
		a=$("$sim" op "$c" "$o" --json 2>&1)
		rc=$?
		b=$("$sim" op "$c" "$o" --json 2>&1)
		if [ $rc != 0 ]; then
			echo "FAIL $c '$o': exit $rc: $a"
			fails=$((fails + 1))
		elif ! jq -e '(.time_s > 0) and (.time_s < 1e6) and (.bound | length > 0)' <<<"$a" >/dev/null; then
			echo "FAIL $c '$o': bad JSON: $a"
			fails=$((fails + 1))
		elif [ "$a" != "$b" ]; then
			echo "FAIL $c '$o': two runs differ"
			fails=$((fails + 1))
		fi
	done
done
echo "$((n - fails)) of $n op runs passed over ${#cfgs[@]} configs"
[ $fails = 0 ]
