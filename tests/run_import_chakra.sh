#!/usr/bin/env bash
# sim import chakra (sim/import/chakra*.c, docs/import.md "Chakra execution traces") on a real Chakra ET
# (tests/import/chakra_feeder_test.0.et.gz: MLCommons Chakra's feeder test trace, a CNN's training step on one
# GPU of a data-parallel job, with cuDNN convolutions, elementwise kernels, copies and NCCL collectives):
#  1. it imports, twice to the same bytes; --report prints the table the trace's comments hold, which adds up;
#     its 42 forward convolutions become conv ops and its 53 convolution_backward nodes `conv ... dir=bwd` (the first
#     layer's `dir=wgrad`: its output_mask, a list of booleans in the ET, asks no input gradient);
#  2. every recorded node is written (the GPU ones as ops, collectives or delays, a covered kernel as part of
#     its CPU op's op) and the job replays on the A100 it was recorded on (an sm_80 cuDNN), an H100, an
#     MI300X and a hypothetical two-chiplet H100;
#  3. replayed as recorded (--all-measured: every node keeps its duration), the step lies between the busiest
#     stream's summed durations (a stream runs in order) and the sum of every duration (nothing overlapped):
#     the dependencies lose no work and do not serialize the whole graph;
#  4. --ranks 2: the data-parallel job's collectives become allreduce/broadcast on world with the recorded
#     comm_size, and the two ranks replay;
#  5. refusals: a truncated gzip, a JSON file, --ranks with two files, bad communicator group files: one
#     line, exit 65 or 2, no output;
#  6. sim export chakra: a job exported as ETs (with its communicator group file) and imported back replays
#     to the same step time as the job itself (pipeline sends, data-parallel and tensor-parallel groups): the
#     ETs hold every op, its time on the chip and every dependency, read back with Chakra's schema; an export
#     into a missing directory writes nothing.
# usage: run_import_chakra.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"
et=tests/import/chakra_feeder_test.0.et.gz

# 1
"$sim" import chakra "$et" -o "$tmp/a.trace" --report 2>"$tmp/a.report" || fail "import $et"
"$sim" import chakra "$et" -o "$tmp/b.trace" || fail "import $et (again)"
cmp -s "$tmp/a.trace" "$tmp/b.trace" || fail "two imports differ"
coverage_adds_up chakra "$tmp/a.trace" || fails=$((fails + 1))
grep '^# family' -A 20 "$tmp/a.trace" | sed 's/^# //' | head -n "$(wc -l <"$tmp/a.report")" |
	diff -q - "$tmp/a.report" >/dev/null || fail "--report differs from the trace's table"
[ "$(grep -Ec '^conv .* dtype=fp32 stream=' "$tmp/a.trace")" = 42 ] || fail "not 42 forward convolutions"
[ "$(grep -Ec '^conv .* dir=bwd stream=' "$tmp/a.trace")" = 52 ] || fail "not 52 convolution backwards (dir=bwd)"
[ "$(grep -Ec '^conv .* dir=wgrad stream=' "$tmp/a.trace")" = 1 ] || fail "not the first convolution's wgrad alone"

# 2: the file holds 3664 nodes, 1216 of them GPU nodes (is_cpu_op false); each is one line of the job, or is
# covered by its CPU op's op
nodes=$(grep -c '  # ' "$tmp/a.trace")
gpu_lines=$(grep -Ec '  # (gemm|attention|elementwise|memcpy|nccl|other) ' "$tmp/a.trace")
kernels=$(awk '/^# total / { print $3 }' "$tmp/a.trace")
[ "$kernels" = 1216 ] || fail "expected 1216 GPU nodes in the table, not $kernels"
modelled=$(awk '/  # (gemm|attention|elementwise|memcpy|nccl|other) modelled / { n++ } END { print n + 0 }' "$tmp/a.trace")
[ "$gpu_lines" -le 1216 ] && [ $((nodes - gpu_lines)) = $((3664 - 1216)) ] ||
	fail "expected the 2448 CPU nodes as lines and at most 1216 GPU lines: $nodes lines, $gpu_lines GPU"
[ "$modelled" -gt 400 ] || fail "only $modelled GPU nodes modelled"
grep -q "^copy bytes=256 src=hbm dst=hbm stream=s7 after=n1049 " "$tmp/a.trace" ||
	fail "the first DtoD copy under aten::copy_ (node 1049, 64 fp32) is not copy bytes=256 src=hbm dst=hbm"
for c in a100 h100 mi300x hypothetical/h100_2chiplet; do
	"$sim" run "configs/$c.cfg" "$tmp/a.trace" >"$tmp/$(basename $c).run" || fail "sim run configs/$c.cfg"
done

# 3
step_ms() { awk '/^  step time/ { v = $3; u = $4; if (u == "s") v *= 1000; if (u == "us") v /= 1000; print v }' "$1"; }
"$sim" import chakra "$et" -o "$tmp/m.trace" --all-measured || fail "import --all-measured"
grep -Eq '^(gemm|attn|elem|copy|coll) ' "$tmp/m.trace" && fail "--all-measured still wrote a modelled op"
"$sim" run configs/a100.cfg "$tmp/m.trace" >"$tmp/m.run" || fail "sim run (--all-measured)"
awk -v step="$(step_ms "$tmp/m.run")" -v model="$(step_ms "$tmp/a100.run")" '
	/^delay time=/ { t = $2; sub(/^time=/, "", t); sub(/us$/, "", t); s = $3; sub(/^stream=/, "", s)
		per[s] += t / 1e3; all += t / 1e3 }
	END { for (s in per) if (per[s] > busiest) busiest = per[s]
		printf "  --all-measured on a100: step %.2f ms; busiest stream %.2f ms, every duration %.2f ms; with the model %.2f ms\n", step, busiest, all, model
		if (step < busiest - 0.01 || step > all + 0.01) { print "FAIL the replay of the recording is outside [busiest stream, sum]"; exit 1 } }' \
	"$tmp/m.trace" || fails=$((fails + 1))

# 4
"$sim" import chakra "$et" --ranks 2 -o "$tmp/r2.trace" || fail "import --ranks 2"
grep -q '^ranks 2$' "$tmp/r2.trace" || fail "--ranks 2: no ranks 2 line"
[ "$(grep -c '^coll op=allreduce comm=world ' "$tmp/r2.trace")" = 5 ] &&
	[ "$(grep -c '^coll op=broadcast comm=world ' "$tmp/r2.trace")" = 2 ] ||
	fail "--ranks 2: expected the 5 allreduces and 2 broadcasts on world"
grep -q '^coll op=broadcast comm=world bytes=212480 ' "$tmp/r2.trace" ||
	fail "--ranks 2: the first broadcast's comm_size (212480) is not its bytes"
"$sim" run configs/a100.cfg "$tmp/r2.trace" >/dev/null || fail "sim run (--ranks 2)"

# 5
head -c 20000 "$et" >"$tmp/cut.et.gz"
"$sim" import chakra "$tmp/cut.et.gz" -o "$tmp/out.trace" 2>"$tmp/err"
rc=$?
[ "$rc" = 65 ] && [ ! -e "$tmp/out.trace" ] && [ "$(sim_err "$tmp/err" | wc -l)" = 1 ] &&
	grep -q "cut.et.gz: truncated gzip" "$tmp/err" || fail "truncated gzip: exit $rc, $(cat "$tmp/err")"
printf '{"traceEvents": []}\n' >"$tmp/k.json"
"$sim" import chakra "$tmp/k.json" -o "$tmp/out.trace" 2>"$tmp/err"
rc=$?
[ "$rc" = 65 ] && [ ! -e "$tmp/out.trace" ] && grep -q "k.json: message 0 (byte 0): " "$tmp/err" ||
	fail "JSON as an ET: exit $rc, $(cat "$tmp/err")"
"$sim" import chakra "$et" "$et" --ranks 2 -o "$tmp/out.trace" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && [ ! -e "$tmp/out.trace" ] || fail "--ranks with two files: exit $rc"
"$sim" help import | grep -q 'sim import chakra' || fail "sim help import does not show chakra"
printf '{"1": [0, 1], "2": [1, 1]}\n' >"$tmp/g.json"
"$sim" import chakra "$et" --comm-groups "$tmp/g.json" -o "$tmp/out.trace" 2>"$tmp/err"
rc=$?
[ "$rc" = 65 ] && [ ! -e "$tmp/out.trace" ] && grep -q "g.json: group '2': rank 1 twice" "$tmp/err" ||
	fail "a group with a rank twice: exit $rc, $(cat "$tmp/err")"
printf '{"1": [0, "a"]}\n' >"$tmp/g.json"
"$sim" import chakra "$et" --comm-groups "$tmp/g.json" -o "$tmp/out.trace" 2>"$tmp/err"
rc=$?
[ "$rc" = 65 ] && grep -q "g.json: group '1': member 1 is not a rank" "$tmp/err" ||
	fail "a group member that is not a rank: exit $rc, $(cat "$tmp/err")"

# 6
for tr in pipeline_4 dp_step_16 llama3_8b_train; do
	n=$(awk '/^ranks / { print $2; exit }' "traces/$tr.trace")
	"$sim" export chakra configs/h100.cfg "traces/$tr.trace" -o "$tmp/$tr" 2>"$tmp/err" || fail "export $tr: $(cat "$tmp/err")"
	files=$(seq 0 $((n - 1)) | sed "s|.*|$tmp/$tr.&.et|")
	groups=""
	[ -e "$tmp/$tr.json" ] && groups="--comm-groups $tmp/$tr.json"
	# shellcheck disable=SC2086
	"$sim" import chakra $files $groups -o "$tmp/$tr.re.trace" || fail "import the export of $tr"
	a=$("$sim" run configs/h100.cfg "traces/$tr.trace" | awk '/^  step time/ { print $3, $4 }')
	b=$("$sim" run configs/h100.cfg "$tmp/$tr.re.trace" | awk '/^  step time/ { print $3, $4 }')
	echo "  $tr: step $a, exported and imported back $b"
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); d = x[1] / y[1] - 1; if (d < 0) d = -d
		exit !(x[2] == y[2] && d < 0.002) }' || fail "$tr: the export imported back replays to $b, not $a"
done
grep -q '"1": \[' "$tmp/dp_step_16.json" || fail "dp_step_16: no communicator group file"
mkdir "$tmp/empty"
"$sim" export chakra configs/h100.cfg traces/pipeline_4.trace -o "$tmp/empty/no/such" 2>"$tmp/err"
rc=$?
[ "$rc" = 73 ] && [ -z "$(ls "$tmp/empty")" ] || fail "export into a missing directory: exit $rc"
# --recorded-on: a carried GPU node scales (its family's rule), a CPU op never does
"$sim" import chakra "$et" -o "$tmp/ref.trace" --recorded-on configs/a100.cfg || fail "--recorded-on"
grep -q '^delay time=[0-9]*us scale=dram ref=2.039e+12B/s .*# elementwise carried' "$tmp/ref.trace" ||
	fail "--recorded-on: no carried elementwise node scales with the A100's 2.039 TB/s"
grep 'scale=' "$tmp/ref.trace" | grep -q '# cpu ' && fail "--recorded-on: a CPU op scales"

finish import_chakra
