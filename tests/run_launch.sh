#!/usr/bin/env bash
# How kernels are launched (the op key launch=, docs/cli.md; sim gen --launch, docs/workloads.md; sim import
# kineto --host graph, docs/import.md):
#  1. sim gen --mode infer --launch graph writes launch=graph on every device op of the decode steps (their defs
#     and their attention lines) and on none of the prefill; eager (the default) on none;
#  2. sim gen --launch graph in training: on every device op of the step, on no collective;
#  3. replayed, the graph decode is shorter than the eager one by model.launch_gap - model.graph_launch_gap
#     (1.4 us with the defaults) a kernel: the difference over 1.4 us is a whole number, at least the device ops
#     the decode region ran (ops.csv; one kernel or more each) and at most twice them; the prefill is the same;
#  4. sim import kineto --host graph writes launch=graph on the ops it models and on no delay (the kernels it
#     carries keep their measured time), and the recorded host (the default) on none.
# usage: run_launch.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"

g='llama3-8b --mode infer --batch 4 --input-len 256 --output-len 4'
# 1
"$sim" gen $g --launch graph -o "$tmp/graph.trace" || fail "sim gen --launch graph"
"$sim" gen $g -o "$tmp/eager.trace" || fail "sim gen (eager)"
ops='^ *(gemm|attn|elem|copy|conv|embedding) '
awk -v ops="$ops" '/^def / { d = $2 } $0 ~ ops { n[d ~ /^decode/]++; g[d ~ /^decode/] += / launch=graph/ }
	/^ *attn .*sq=1 / { a++; ga += / launch=graph/ }
	END { exit !(n[1] > 0 && g[1] == n[1] && n[0] > 0 && g[0] == 0 && a > 0 && ga == a) }' "$tmp/graph.trace" ||
	fail "--launch graph: not every decode op (and decode attention) has launch=graph, or a prefill op has it"
! grep -q 'launch=' "$tmp/eager.trace" || fail "the eager trace has a launch= key"
# 2
"$sim" gen gpt3-125m --dp 2 --launch graph -o "$tmp/train.trace" || fail "sim gen gpt3-125m --launch graph"
awk -v ops="$ops" '$0 ~ ops { n++; g += / launch=graph/ } /^ *coll / { c++; gc += / launch=/ }
	END { exit !(n > 0 && g == n && c > 0 && gc == 0) }' "$tmp/train.trace" ||
	fail "training --launch graph: a device op without launch=graph, or a collective with a launch= key"
# 3
for m in graph eager; do
	"$sim" run configs/h100.cfg "$tmp/$m.trace" --json --csv "$tmp/$m" >"$tmp/$m.json" || fail "sim run the $m trace"
done
nops=$(awk -F, 'NR > 1 && $4 ~ /^(gemm|attn|elem|copy|conv|embedding)$/ && $(NF - 1) ~ /decode/ { n++ } END { print n + 0 }' \
	"$tmp/graph/ops.csv")
jq -n -e --slurpfile e "$tmp/eager.json" --slurpfile gr "$tmp/graph.json" --argjson nops "$nops" '
	(($e[0].time_s - $gr[0].time_s) / 1.4e-6) as $k
	| ($k - ($k | round) | fabs) < 1e-3 and $k >= $nops and $k <= 2 * $nops' >/dev/null ||
	fail "the graph decode is not shorter by a whole number of 1.4 us, from one to two a decode op ($nops ops)"
jq -n -e --slurpfile e "$tmp/eager.json" --slurpfile gr "$tmp/graph.json" '
	def pre(x): x.marks[] | select(.name == "prefill") | .time_s;
	(pre($e[0]) - pre($gr[0]) | fabs) < 1e-12' >/dev/null || fail "the prefill region differs between the two"
# 4
k=traces/kineto/h200-2026-11-30/kineto_host_tiny_s256_mb1.json.gz
"$sim" import kineto "$k" --host graph -o "$tmp/ig.trace" 2>/dev/null || fail "import --host graph"
"$sim" import kineto "$k" -o "$tmp/ir.trace" 2>/dev/null || fail "import"
awk '/launch=graph/ { l++ } /^delay .*launch=/ { bad++ } /# [a-z]+ modelled/ { m++ }
	END { exit !(l > 0 && l == m && bad == 0) }' "$tmp/ig.trace" ||
	fail "import --host graph: launch=graph not on exactly the modelled ops"
! grep -q 'launch=' "$tmp/ir.trace" || fail "import (recorded host): a launch= key"
finish launch
