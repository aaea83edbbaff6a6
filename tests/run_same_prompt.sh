#!/usr/bin/env bash
# sim gen --same-prompt (docs/workloads.md): a batch of one prompt B times, decoded greedily.
#  1. Mixtral-8x7B (8 experts, top 2), batch 16 on tp 4: without the flag a decode step's expert GEMMs run the 8
#     experts on 16 x 2 / 8 = 4 tokens each (batch=8, m=4); with it the two experts its one token picks take all
#     16 (batch=2, m=16), and the prefill (64 positions, 128 assignments over 8 experts) is written unchanged;
#     with --moe-capacity-factor 1 each keeps the balanced share, 4 (the rest dropped); a 2-token prompt's prefill
#     runs on 2 x 2 = 4 experts;
#  2. with --ep 2 over --dp 2 the decode step's two experts are one on each rank, which takes both ranks' 16
#     tokens (m=32, one expert: no batch=);
#  3. a dense model's trace does not change (the same text past its command line);
#  4. the decode step gets faster with it (fewer expert weights read), the prefill's time does not change;
#  5. refused in training and by sim serve (exit 2, one line).
# usage: run_same_prompt.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"

g='mixtral-8x7b --mode infer --tp 4 --batch 16 --input-len 64 --output-len 9'
experts() { # the expert GEMM lines (n = the ffn share on tp 4 x 2, or k = it) of a def, in a trace
	sed -n "/^def $2 {/,/^}/p" "$1" | grep -E '^ *gemm .*(n=7168 k=4096|n=4096 k=3584)'
}
# 1
"$sim" gen $g -o "$tmp/a.trace" || fail "sim gen $g"
"$sim" gen $g --same-prompt -o "$tmp/s.trace" || fail "sim gen $g --same-prompt"
[ "$(experts "$tmp/a.trace" decode_moe_post | grep -c ' m=4 .* batch=8 ')" = 2 ] ||
	fail "without --same-prompt: decode experts not m=4 batch=8: $(experts "$tmp/a.trace" decode_moe_post)"
[ "$(experts "$tmp/s.trace" decode_moe_post | grep -c ' m=16 .* batch=2 ')" = 2 ] ||
	fail "--same-prompt: decode experts not m=16 batch=2: $(experts "$tmp/s.trace" decode_moe_post)"
cmp -s <(sed -n '/^def prefill_moe_fwd {/,/^}/p' "$tmp/a.trace") <(sed -n '/^def prefill_moe_fwd {/,/^}/p' "$tmp/s.trace") ||
	fail "--same-prompt changed the prefill"
# a prompt of 2 tokens at batch 16: its 2 positions take 4 of the 8 experts, 16 x 2 x 2 / 4 = 16 tokens each
"$sim" gen mixtral-8x7b --mode infer --tp 4 --batch 16 --input-len 2 --output-len 3 --same-prompt -o "$tmp/p.trace" ||
	fail "sim gen --input-len 2 --same-prompt"
[ "$(experts "$tmp/p.trace" prefill_moe_fwd | grep -c ' m=16 .* batch=4 ')" = 2 ] ||
	fail "--same-prompt, 2-token prompt: prefill experts not m=16 batch=4: $(experts "$tmp/p.trace" prefill_moe_fwd)"
# 2
"$sim" gen mixtral-8x7b --mode infer --dp 2 --ep 2 --batch 16 --input-len 64 --output-len 3 --same-prompt \
	-o "$tmp/e.trace" || fail "sim gen --ep 2 --same-prompt"
sed -n '/^def decode_moe_post {/,/^}/p' "$tmp/e.trace" | grep -E '^ *gemm m=32 n=28672 k=4096 dtype' >/dev/null ||
	fail "--ep 2 --same-prompt: the busiest rank's expert is not one GEMM of 32 tokens"
"$sim" gen $g --same-prompt --moe-capacity-factor 1 -o "$tmp/c.trace" || fail "sim gen --moe-capacity-factor 1"
[ "$(experts "$tmp/c.trace" decode_moe_post | grep -c ' m=4 .* batch=2 ')" = 2 ] ||
	fail "--same-prompt --moe-capacity-factor 1: the two experts do not keep the balanced 4 tokens each"
# 3
d='llama3-8b --mode infer --batch 16 --input-len 64 --output-len 9'
"$sim" gen $d -o "$tmp/d.trace" && "$sim" gen $d --same-prompt -o "$tmp/ds.trace" || fail "sim gen $d"
cmp -s <(tail -n +2 "$tmp/d.trace") <(tail -n +2 "$tmp/ds.trace") || fail "--same-prompt changed a dense model"
# 4
"$sim" run configs/a100_40gb.cfg "$tmp/a.trace" --json >"$tmp/a.json" || fail "sim run (all experts)"
"$sim" run configs/a100_40gb.cfg "$tmp/s.trace" --json >"$tmp/s.json" || fail "sim run (--same-prompt)"
jq -n -e --slurpfile a "$tmp/a.json" --slurpfile s "$tmp/s.json" '
	def region($j; $n): [$j.marks[] | select(.name == $n)][0].time_s;
	region($s[0]; "decode") < region($a[0]; "decode") and region($s[0]; "prefill") == region($a[0]; "prefill")' \
	>/dev/null || fail "--same-prompt: decode not faster, or the prefill's time changed"
# 5
"$sim" gen mixtral-8x7b --same-prompt >/dev/null 2>"$tmp/e1"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e1")" = 1 ] && grep -q -- '--same-prompt belongs to --mode infer' "$tmp/e1" ||
	fail "training: $(cat "$tmp/e1")"
"$sim" serve configs/h100.cfg mixtral-8x7b --same-prompt >/dev/null 2>"$tmp/e2"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e2")" = 1 ] && grep -q -- '--same-prompt is not a serve option' "$tmp/e2" ||
	fail "serve: $(cat "$tmp/e2")"
finish same_prompt
