#!/usr/bin/env bash
# The validator's own rules, on a small suite in a temporary root:
# - a case that sets a clock is refused, naming the case (a clock measured
#   during the run is not an input of its prediction);
# - a case that sets a model constant is conditioned: reported apart and in
#   no category score;
# - rows of a source without a guard fail, naming the source;
# - the mcore metric (Megatron's formula for multi-head and grouped-query attention) is refused on a model
#   with multi-head latent attention;
# - a serving case that writes an output is refused;
# - an imported case without its gen command, or whose trace is missing, is refused, naming it;
# - a gen case option ranks_per_node= that is not a count is refused;
# - a row in both cases.tsv and skipped.tsv is replayed but not scored: reported with its error and first blocker
#   in its own table, in no category score or table;
# - a skip reason too long to keep whole is refused, naming the row;
# - a note naming the GEMM kernel the library ran puts its tile, as the row-major op sees it, beside the
#   model's in the report's kernel table.
# - a kernel-timed case (metric "tflops kernel") is predicted from the kernel's time as `sim op` prints it
#   ("profiled": the launch less the gap before the kernel), and " kernel" is refused on a collective;
# - --rows writes each row's figures as the report's, --baseline counts the rows that moved against such a table
#   and names them, and refuses a file that is not one (exit 2, naming the file and line).
# usage: run_bad_cases.sh VALIDATE REPO_ROOT SIM
set -u
validate=$1 root=$(cd "$2" && pwd) sim=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/validation"
ln -s "$root/configs" "$tmp/configs"
m="$root/tests/validation/measurements-public.tsv"
fails=0 n=0
check() { # name, condition result
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
{ head -1 "$m"; grep -P '^(G021|G026|G057)\t' "$m"; } >"$tmp/m.tsv"
: >"$tmp/tests/validation/skipped.tsv"
: >"$tmp/tests/validation/ratios.tsv"
printf 'G026\tconfigs/a100.cfg\t-\ttflops\tgemm m=1024 n=1024 k=1024 dtype=fp16\n' >"$tmp/tests/validation/cases.tsv"

# 1. a clock
printf 'G021\tconfigs/mi300x.cfg\tcompute.cu.clock=1207MHz\ttflops\tgemm m=4096 n=4864 k=32896 dtype=bf16\n' \
	>>"$tmp/tests/validation/cases.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q '^validate: cases.tsv:2: G021: sets compute.cu.clock: a clock measured during the run is not an input' "$tmp/err"
check "a clock is refused (rc $rc)" $(( $? || rc != 1 ))

# 2. a harness constant: conditioned
sed -i '$d' "$tmp/tests/validation/cases.tsv"
printf 'G057\tconfigs/a100.cfg\tmodel.launch_overhead=21us\tms\tgemm m=64 n=12288 k=12288 dtype=fp16\n' \
	>>"$tmp/tests/validation/cases.tsv"
printf 'G021\tnot expressible here\n' >"$tmp/tests/validation/skipped.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" >"$tmp/out" 2>"$tmp/err"
grep -q '^gemm  *1 ' "$tmp/out"
check "a conditioned row is in no category score" $?
sed -n '/^## Conditioned rows/,/^## /p' "$tmp/out.md" | grep -q '^| G057 | gemm |'
check "a conditioned row is reported in its own table" $?
sed -n '/^## gemm/,/^## /p' "$tmp/out.md" | grep -q '^| G057 '
check "a conditioned row is not in its category's table" $(( ! $? ))

# 3. a source without a guard
awk -F'\t' 'BEGIN { OFS = "\t" } NR > 1 && $1 == "G026" { $9 = "Nobody/unguarded " $9 } { print }' "$tmp/m.tsv" >"$tmp/m2.tsv"
"$validate" "$tmp" "$tmp/m2.tsv" "$tmp/out.md" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q '^validate: gemm: the 1 rows of Nobody/unguarded have no guard' "$tmp/err"
check "a source without a guard fails (rc $rc)" $(( $? || rc != 1 ))

# refused WHAT MEASUREMENTS PATTERN: the validator (--no-steps) on the case file as it is now exits 1 with a
# stderr line matching PATTERN
refused() {
	"$validate" "$tmp" "$2" "$tmp/out.md" --no-steps >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	grep -q -- "$3" "$tmp/err"
	check "$1 (rc $rc)" $(( $? || rc != 1 ))
}

# 4. a FLOP metric of training steps (mcore, megatron, mfu=) on an inference case
{ head -1 "$m"; grep -P '^T093\t' "$m"; } >"$tmp/m3.tsv"
printf 'T093\tconfigs/gb300.cfg\t-\tmcore\tgen llama3-8b --mode infer --batch 8\n' \
	>"$tmp/tests/validation/cases.tsv"
: >"$tmp/tests/validation/skipped.tsv"
refused "a training FLOP metric on an inference case is refused" "$tmp/m3.tsv" \
	'^validate: cases.tsv:1: T093: metric mcore counts the FLOPs of a training step (the case is --mode infer)'

# 5. a serving case takes no outputs: the case is the stream, not what a run writes
{ head -1 "$m"; grep -P '^I120\t' "$m"; } >"$tmp/m4.tsv"
printf 'I120\tconfigs/a100_40gb.cfg\t-\tlatency\tserve llama2-7b --burst --requests 64 --csv /tmp/x.csv\n' \
	>"$tmp/tests/validation/cases.tsv"
refused "a serving case with an output is refused" "$tmp/m4.tsv" '^validate: I120: sim serve: a case takes no outputs'

# 6. an imported case names the recorded trace and, after ' ; ', the gen command of what it computes
lent="$root/tests/validation/measurements-lent.tsv"
{ head -1 "$m"; grep -P '^LT002\t' "$lent"; } >"$tmp/m5.tsv"
printf 'LT002\tconfigs/h100.cfg\t-\ttokens\timport traces/kineto/kineto_gpt3-125m_mb8.json.gz\n' \
	>"$tmp/tests/validation/cases.tsv"
refused "an import case without its gen command is refused" "$tmp/m5.tsv" \
	"^validate: LT002: an import case is 'import PATH ; gen ARGS'"

# 7. ... and a trace that is not there is named
printf 'LT002\tconfigs/h100.cfg\t-\ttokens\timport traces/kineto/none.json.gz ; gen gpt --layers 12 --hidden 768 --heads 12 --seq 2048 --micro-batch 8\n' \
	>"$tmp/tests/validation/cases.tsv"
refused "an import case whose trace is missing names it" "$tmp/m5.tsv" "^validate: LT002: .*traces/kineto/none.json.gz"

# 8. a gen case's placement option takes a count of ranks
printf 'T093\tconfigs/gb300.cfg\t-\tmcore\tgen llama3-8b --tp 8 --pp 1 --dp 32 ; ranks_per_node=0\n' \
	>"$tmp/tests/validation/cases.tsv"
refused "a gen case with ranks_per_node=0 is refused" "$tmp/m3.tsv" \
	"^validate: .*T093: gen case option 'ranks_per_node=0': expected an integer from 1 to 65536"

# 9. in both files: replayed, not scored
printf 'G026\tconfigs/a100.cfg\t-\ttflops\tgemm m=1024 n=1024 k=1024 dtype=fp16\n' >"$tmp/tests/validation/cases.tsv"
printf 'G021\tconfigs/mi300x.cfg\t-\ttflops\tgemm m=4096 n=4864 k=32896 dtype=bf16\n' >>"$tmp/tests/validation/cases.tsv"
printf 'G021\tthe clock of this run is in doubt: a test reason\nG057\tnot here\n' >"$tmp/tests/validation/skipped.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" >"$tmp/out" 2>"$tmp/err"
grep -q 'G021' "$tmp/err"
check "a row in both files is no problem" $(( ! $? ))
grep -q '^gemm  *1 ' "$tmp/out"
check "a replayed, unscored row is in no category score" $?
sed -n '/^## Replayed, not scored/,/^## /p' "$tmp/out.md" |
	grep -q '^| G021 | gemm | .* | [0-9.]* | 708 | TFLOP/s | [-+][0-9.]*% | the clock of this run is in doubt |$'
check "a replayed, unscored row is reported with its error and first blocker" $?
sed -n '/^## gemm/,/^## /p' "$tmp/out.md" | grep -q '^| G021 '
check "a replayed, unscored row is not in its category's table" $(( ! $? ))
grep -q '^| G021 | gemm | .* | the clock of this run is in doubt (replayed, not scored) |$' "$tmp/out.md"
check "the skipped rows' table marks it replayed" $?

# 10. a reason longer than the report keeps is refused, not cut
printf 'G021\t%s\n' "$(head -c 2100 /dev/zero | tr '\0' x)" >"$tmp/tests/validation/skipped.tsv"
refused "a skip reason too long to keep is refused" "$tmp/m.tsv" \
	'^validate: skipped.tsv:1: G021: reason of 2100 characters (at most 2047)'

# 11. a note naming the library's GEMM kernel: its tile, read as the row-major op's (the names are column-major)
printf 'G026\tconfigs/h100.cfg\t-\ttflops\tgemm m=1024 n=1024 k=1024 dtype=fp16\n' >"$tmp/tests/validation/cases.tsv"
: >"$tmp/tests/validation/skipped.tsv"
kernel_row() { # the note of G026, then the row of the report's kernel table expected
	awk -F'\t' -v note="$1" 'BEGIN { OFS = "\t" } NR > 1 && $1 == "G026" { $10 = note } NR == 1 || $1 == "G026" { print }' \
		"$m" >"$tmp/m4.tsv"
	"$validate" "$tmp" "$tmp/m4.tsv" "$tmp/out.md" >"$tmp/out" 2>"$tmp/err"
	sed -n "/^## GEMM kernels/,/^## [^G]/p" "$tmp/out.md" | grep -q "$2"
}
kernel_row 'cuBLAS ran nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT (CUPTI)' \
	'^| G026 | .* | `nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT` | 128x256 | [0-9]*x[0-9]* |'
check "a nvjet kernel's tile is read turned (its first side is the op's n)" $?
kernel_row 'kernel: cutlass_80_tensorop_bf16_s16816gemm_bf16_64x256_32x3_nt_align8, 2 launches' \
	'^| G026 | .* | `cutlass_80_tensorop_bf16_s16816gemm_bf16_64x256_.*` | 256x64 | '
check "a CUTLASS kernel's tile is the one after gemm, not the instruction shape" $?
kernel_row 'sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x32x8_stage3_warpsize2x2x1_ffma' \
	'^| G026 | .* | 32x128 | '
check "an xmma kernel's tile is its tilesize" $?
kernel_row 'splitKreduce_kernel and gemvx only' '^| G026 '
check "a note without a tiled kernel name has no row" $(( ! $? ))

# 12. a source that timed the kernel alone (a profiler's duration): the op's time less its launch gap
printf 'G026\tconfigs/a100.cfg\t-\ttflops kernel\tgemm m=1024 n=1024 k=1024 dtype=fp16\n' \
	>"$tmp/tests/validation/cases.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" --no-steps >"$tmp/out" 2>"$tmp/err"
pred=$(sed -n '/^## gemm/,/^## /p' "$tmp/out.md" | awk -F' [|] ' '$1 == "| G026" { print $5 }')
prof=$("$sim" op "$root/configs/a100.cfg" 'gemm m=1024 n=1024 k=1024 dtype=fp16' | awk '$1 == "profiled" { print $2, $3 }')
awk -v p="$pred" -v t="$prof" 'BEGIN {
	split(t, a, " "); s = a[1] * (a[2] == "us" ? 1e-6 : a[2] == "ms" ? 1e-3 : 1)
	want = 2 * 1024 ^ 3 / s / 1e12; exit !(s > 0 && p > 0 && (p - want) / want < 0.001 && (want - p) / want < 0.001) }'
check "a kernel-timed case is the op's profiled time ($pred TFLOP/s; sim op: profiled $prof)" $?
grep -q '^| G026 | .* | `gemm m=1024 n=1024 k=1024 dtype=fp16`, kernel time (less the launch gap) |' "$tmp/out.md"
check "the report says a row compares the kernel's time" $?
{ head -1 "$m"; grep -P '^C040\t' "$m"; } >"$tmp/m6.tsv"
printf 'C040\tconfigs/a100.cfg\t-\tbusbw kernel\tcoll op=allreduce bytes=1MiB ranks=8\n' >"$tmp/tests/validation/cases.tsv"
refused "a kernel time on a collective's bus bandwidth is refused" "$tmp/m6.tsv" \
	"^validate: cases.tsv:1: C040: ' kernel' (a profiler's kernel time) is for op lines"

# 13. the rows as a table (--rows) and the rows that moved against an earlier table (--baseline)
printf 'G026\tconfigs/a100.cfg\t-\ttflops\tgemm m=1024 n=1024 k=1024 dtype=fp16\n' >"$tmp/tests/validation/cases.tsv"
printf 'G057\tconfigs/a100.cfg\t-\tms\tgemm m=64 n=12288 k=12288 dtype=fp16\n' >>"$tmp/tests/validation/cases.tsv"
printf 'G021\tnot expressible here\n' >"$tmp/tests/validation/skipped.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" --no-steps --rows "$tmp/rows.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?
err=$(sed -n '/^## gemm/,/^## /p' "$tmp/out.md" | awk -F' [|] ' '$1 == "| G026" { print $8 }')
awk -F'\t' -v e="${err%\%}" 'NR == 1 { ok = $1 == "id" && $9 == "error_pct" } NR > 1 { n++ }
	$1 == "G026" { ok = ok && $2 == "gemm" && $3 == "scored" && $5 == "configs/a100.cfg" && $9 == e }
	END { exit !(ok && n == 2) }' "$tmp/rows.tsv"
check "--rows writes a row a case, its error as the report's ($err, rc $rc)" $?
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" --no-steps --baseline "$tmp/rows.tsv" >"$tmp/out" 2>"$tmp/err"
grep -q '^gemm  *2  *0  *0 ' "$tmp/out"
check "against its own table no row moved" $?
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "G026" { $9 = "+0.0" } { print }' "$tmp/rows.tsv" >"$tmp/rows2.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" --no-steps --baseline "$tmp/rows2.tsv" >"$tmp/out" 2>"$tmp/err"
grep -q '^gemm  *2  *0  *1 ' "$tmp/out" && grep -q '^    G026  *gemm  *|error|   0.0% -> ' "$tmp/out"
check "a row that was exact before is counted worse and named" $?
printf 'id\tcategory\n' >"$tmp/rows3.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" --no-steps --baseline "$tmp/rows3.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "^validate: $tmp/rows3.tsv:1: expected the header of a table validate --rows writes" "$tmp/err"
check "a baseline that is not such a table is refused, naming the file and line (rc $rc)" $(( $? || rc != 2 ))
: >"$tmp/rows5.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" --no-steps --baseline "$tmp/rows5.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "^validate: $tmp/rows5.tsv:1: expected the header of a table validate --rows writes, found an empty file" "$tmp/err"
check "an empty baseline is refused (rc $rc)" $(( $? || rc != 2 ))
{ head -1 "$tmp/rows.tsv"; printf 'G026\tgemm\tscored\n'; } >"$tmp/rows4.tsv"
"$validate" "$tmp" "$tmp/m.tsv" "$tmp/out.md" --no-steps --baseline "$tmp/rows4.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "^validate: $tmp/rows4.tsv:2: expected 11 tab-separated fields" "$tmp/err"
check "a baseline row cut short is refused, naming the line (rc $rc)" $(( $? || rc != 2 ))

echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
