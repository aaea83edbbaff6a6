#!/usr/bin/env bash
# The decode steps' attention kernels (sim gen --decode-impl, docs/workloads.md):
#  1. auto: impl=flash2_decode without --paged, impl=paged page=16 with it; each choice writes its impl on every
#     decode attention line (and page= only for paged), none on the prefill's;
#  2. sim serve takes the same flag: its decode attention is the one sim gen writes (a burst served once with
#     each choice gives different times, the same requests);
#  3. --decode-impl is refused in training and for a value it does not know (exit 2, one line);
#  4. --engine vllm replays the decode steps from CUDA graphs, whose paged kernels keep the capture's launch:
#     maxkv= min(8192, the model's context) (llama3-8b 8192, llama2-7b 4096) on every decode line of vLLM's
#     PagedAttention or of FlashAttention through the block table (--paged), none without the engine, with
#     --enforce-eager, over a contiguous cache, or past the 256 sequences vLLM captures;
#  5. --engine vllm's sampler in the head and its KV cache write in each layer, neither without it.
# usage: run_decode_impl.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"

g='llama3-8b --mode infer --batch 2 --input-len 64 --output-len 3'
check() { # args: expected impl, expected page (0/1), gen flags...
	local impl=$1 page=$2
	shift 2
	"$sim" gen $g "$@" -o "$tmp/t.trace" || { fail "sim gen $*"; return; }
	awk -v impl="$impl" -v page="$page" '/^ *attn .* sq=1 / { n++; ok += ($0 ~ " impl=" impl "( |$)") && ((/ page=/ ? 1 : 0) == page) }
		/^ *attn .* sq=64 / { p++; pok += / impl=flash2( |$)/ }
		END { exit !(n > 0 && ok == n && p > 0 && pok == p) }' "$tmp/t.trace" ||
		fail "sim gen $*: decode attention not impl=$impl (page= $page) on every line, or the prefill's changed"
}
# 1
check flash2_decode 0
check paged 1 --paged
check flash2_decode 0 --paged --decode-impl flash2_decode
check decode 0 --decode-impl decode
check paged 1 --decode-impl paged
check mmha 0 --decode-impl mmha
# 2
s='configs/h100.cfg llama3-8b --burst --requests 8 --input-len 256 --output-len 32'
"$sim" serve $s --json >"$tmp/p.json" || fail "sim serve"
"$sim" serve $s --decode-impl flash2_decode --json >"$tmp/f.json" || fail "sim serve --decode-impl flash2_decode"
jq -n -e --slurpfile p "$tmp/p.json" --slurpfile f "$tmp/f.json" \
	'$p[0].requests == $f[0].requests and $p[0].duration_s != $f[0].duration_s' >/dev/null ||
	fail "sim serve --decode-impl: the same time as its default, or other requests"
# 3
"$sim" gen llama3-8b --decode-impl paged >/dev/null 2>"$tmp/e" && fail "--decode-impl in training accepted"
[ "$(wc -l <"$tmp/e")" = 1 ] && grep -q -- '--decode-impl belongs to --mode infer' "$tmp/e" || fail "training: $(cat "$tmp/e")"
"$sim" gen $g --decode-impl xqa >/dev/null 2>"$tmp/e"
[ $? = 2 ] && grep -q 'expected auto|flash2_decode|paged|decode|mmha' "$tmp/e" || fail "--decode-impl xqa: $(cat "$tmp/e")"
# 4
maxkv() { # args: expected maxkv (0: none), gen args...
	local want=$1
	shift
	"$sim" gen "$@" -o "$tmp/m.trace" || { fail "sim gen $*"; return; }
	awk -v want="$want" '/^ *attn .* sq=1 / { n++; m = match($0, / maxkv=[0-9]+/) ? substr($0, RSTART + 7, RLENGTH - 7) : 0
		ok += (m == want) } END { exit !(n > 0 && ok == n) }' "$tmp/m.trace" ||
		fail "sim gen $*: decode attention not maxkv=$want on every line"
}
maxkv 8192 $g --paged --engine vllm
maxkv 4096 llama2-7b --mode infer --batch 2 --input-len 64 --output-len 3 --paged --engine vllm
maxkv 0 $g --paged
maxkv 0 $g --paged --engine vllm --enforce-eager
maxkv 0 $g --engine vllm --decode-impl flash2_decode
maxkv 8192 $g --engine vllm --paged --decode-impl flash2_decode
maxkv 0 llama3-8b --mode infer --batch 300 --input-len 64 --output-len 3 --paged --engine vllm
# 5. --engine vllm samples each step's logits as vLLM's V0 sampler does (workloads/gen_blocks.c, vllm_sampler): the
#    logits gathered over tp, then 12 passes over batch x vocabulary (Llama-3: 128256) in the head, in place of
#    the vocabulary-parallel softmax and its all-reduce
"$sim" gen llama3-8b --mode infer --tp 2 --batch 4 --input-len 64 --output-len 3 --paged --engine vllm \
	-o "$tmp/s.trace" || fail "sim gen --engine vllm"
awk '/^def decode_head_fwd/ { h = 1; next } h && /^}/ { h = 0 } h && / n=513024 / { n++ } h && /allgather comm=tp/ { g++ }
	h && /allreduce/ { r++ } END { exit !(n == 12 && g == 1 && r == 0) }' "$tmp/s.trace" ||
	fail "--engine vllm: the decode head is not the sampler's 12 passes over 4 x 128256 after one all-gather"
# and writes each step's keys and values into its paged cache with a kernel of their own: 4 x 2 x 4 KV heads (8 over
# tp 2) x 128 elements a decode layer, after RoPE; no such copy without the engine
for f in s s0; do
	[ $f = s0 ] && { "$sim" gen llama3-8b --mode infer --tp 2 --batch 4 --input-len 64 --output-len 3 --paged \
		-o "$tmp/s0.trace" || fail "sim gen without an engine"; }
	awk -v want=$([ $f = s ] && echo 1 || echo 0) '/^def decode_dense_pre/ { h = 1; next } h && /^}/ { h = 0 }
		h && /rope/ { r = 1 } h && r && /elem op=copy n=4096 / { c++ } END { exit !(c == want) }' "$tmp/$f.trace" ||
		fail "trace $f: the decode layer's KV cache write not as expected"
done
awk '/^def decode_head_fwd/ { h = 1; next } h && /^}/ { h = 0 } h && /softmax n=256512 / { s++ }
	h && /allreduce comm=tp/ { r++ } END { exit !(s == 1 && r == 1) }' "$tmp/s0.trace" ||
	fail "without an engine: the decode head is not a vocabulary-parallel softmax and its all-reduce"
finish decode_impl
