#!/usr/bin/env bash
# One MFU (issue 21): `mfu` is the workload's model FLOPs over step time x
# devices x peak in every output, `hfu` the executed FLOPs over the same;
# sweep's CSV and compare's JSON use the same two keys.
# Usage: run_mfu.sh SIM ROOT
set -u
sim=$1 root=$2
cd "$root" || exit 1
fail=0
ok() { if [ "$2" = true ]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
j=$("$sim" run configs/h100.cfg traces/llama3_8b_train.trace --json 2>/dev/null)
ok "run: mfu = model FLOPs / (time x devices x peak)" "$(jq '(.workload.model_flops / (.time_s * .ranks * .peak_tflops * 1e12)) as $m | ((.mfu - $m) | fabs) < 1e-9 * $m' <<<"$j")"
ok "run: hfu = executed FLOPs / (time x devices x peak)" "$(jq '(.flops / (.time_s * .ranks * .peak_tflops * 1e12)) as $h | ((.hfu - $h) | fabs) < 1e-9 * $h' <<<"$j")"
ok "run: no workload line, no mfu" "$("$sim" run configs/h100.cfg traces/dp_step_16.trace --json 2>/dev/null | jq '.mfu == null and .hfu > 0')"
c=$("$sim" compare configs/h100.cfg configs/a100.cfg traces/llama3_8b_train.trace --json 2>/dev/null)
ok "compare: the same mfu and hfu" "$(jq --argjson m "$(jq .mfu <<<"$j")" --argjson h "$(jq .hfu <<<"$j")" \
	'.columns[0] | ((.mfu - $m) | fabs) < 1e-6 and ((.hfu - $h) | fabs) < 1e-6' <<<"$c")"
hdr=$("$sim" sweep configs/h100.cfg traces/llama3_8b_train.trace --set compute.sm.count=132 2>/dev/null | head -1)
ok "sweep: mfu and hfu columns" "$([[ "$hdr" == *",mfu,hfu,"* ]] && echo true)"
exit $fail
