#!/usr/bin/env bash
# Steady states (sim/cluster/replay_steady.c) must not change the answer: for
# each case, `sim run` with the steady states derived and with --exact (every
# iteration played) print
#   - the same text report, to the last printed digit, but for the engine line
#     (engine activities differ; the derived ops are named there),
#   - the same JSON: every string, count and structure equal, every number to
#     one unit in its tenth (last printed) digit (a derived iteration's times
#     are the template's plus k periods where playing adds the ops' times one
#     by one: a relative difference around 1e-15 that rounding the tenth digit
#     can show), and the same engine.ops (derived ops counted);
# and a case marked
#   steady:  must derive ops (the shortcut is taken),
#   played:  must derive none (it must not be taken: iterations overlap, or
#            --jitter draws every op's time).
# Two cases also compare ops.csv and the timeline: the same rows, the same
# events with the same numbers (to the same bound).
# usage: run_steady.sh SIM ROOT [PART]: PART 1 or 2 runs half of the cases (ctest runs them as steady_1 and
# steady_2, so that neither runs a minute alone on the console); without it, every case.
set -u
sim=$1 root=$2 part=${3:-0}
in_part() { [ "$part" = 0 ] || [ "$part" = "$1" ]; }
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# Generated traces: a LLaMA-3 70B decode (8 context buckets of 16 steps), a
# pipelined LLaMA-3 8B decode (4 stages, micro-batches in flight), a training
# step (7 micro-batches of 1, tensor and data parallel), and pipelined
# training steps (4 stages, 1F1B and GPipe: each stage its own repeat, the
# iterations overlapping on the engine; replay_stagger.c, the pipeline case), and
# interleaved ones (2 and 8 virtual stages: an op of a stage's iteration may
# wait for one of its neighbour's next iteration).
"$sim" gen llama3-70b --mode infer --tp 8 --batch 64 --input-len 128 --output-len 128 -o "$tmp/decode.trace" &&
	"$sim" gen llama3-70b --mode infer --tp 8 --batch 64 --input-len 128 --output-len 64 -o "$tmp/decode64.trace" &&
	"$sim" gen llama3-8b --mode infer --tp 2 --pp 4 --batch 16 --input-len 128 --output-len 64 \
		-o "$tmp/decode_pp.trace" &&
	"$sim" gen llama3-8b --tp 2 --dp 4 --micro-batch 1 --global-batch 32 -o "$tmp/train.trace" &&
	"$sim" gen llama3-8b --tp 2 --pp 4 --dp 2 --micro-batch 1 --global-batch 64 -o "$tmp/pipe.trace" &&
	"$sim" gen llama3-8b --tp 2 --pp 4 --dp 2 --micro-batch 1 --global-batch 64 --schedule gpipe \
		-o "$tmp/pipe_gpipe.trace" &&
	"$sim" gen llama3-8b --tp 2 --pp 4 --dp 2 --micro-batch 1 --global-batch 128 --schedule interleaved \
		--virtual-stages 2 -o "$tmp/pipe_vp2.trace" &&
	"$sim" gen llama3-8b --tp 2 --pp 2 --dp 2 --micro-batch 1 --global-batch 64 --schedule interleaved \
		--virtual-stages 8 -o "$tmp/pipe_vp8.trace" ||
	{
		echo "FAIL sim gen"
		exit 1
	}

# JSON leaves as "path<TAB>value", the provenance (it holds the command line)
# and the engine's activities left out.
leaves() {
	jq -r 'del(.provenance, .engine.activities) | paths(scalars) as $p |
		[($p | map(tostring) | join(".")), (getpath($p) | if type == "number" then "n:\(.)" else "s:\(.)" end)] |
		@tsv'
}
# Pairs of leaves agree: same paths and strings, numbers to 2e-9 relative.
agree() {
	paste "$1" "$2" | awk -F'\t' '
		$1 != $3 { print "  path " $1 " vs " $3; bad = 1; exit }
		substr($2, 1, 2) == "n:" && substr($4, 1, 2) == "n:" {
			a = substr($2, 3) + 0; b = substr($4, 3) + 0; m = (a < 0 ? -a : a); n = (b < 0 ? -b : b)
			if (n > m) m = n
			d = a - b; if (d < 0) d = -d
			if (d > 2e-9 * m) { printf "  %s: %.17g vs %.17g\n", $1, a, b; bad = 1 }
			next
		}
		$2 != $4 { print "  " $1 ": " $2 " vs " $4; bad = 1 }
		END { exit bad }' && [ "$(wc -l <"$1")" = "$(wc -l <"$2")" ]
}

check() { # [steady:|played:]TRACE [options]
	local arg=$1 t=${1#*:} want=none
	shift
	case "$arg" in steady:*) want=some ;; played:*) want=zero ;; esac
	local name
	name="$(basename "$t") $*"
	run() { "$sim" run configs/h100.cfg "$t" "$@" 2>"$tmp/err"; } # exit 3: it does not fit, and is reported
	local a b ja jb ra rb
	a=$(run "$@")
	ra=$?
	b=$(run "$@" --exact)
	rb=$?
	if [ $ra != $rb ] || { [ $ra != 0 ] && [ $ra != 3 ]; }; then
		echo "FAIL $name: exit $ra, with --exact $rb: $(grep -v '^==\|^False positive\|^For details' "$tmp/err" | head -1)"
		fail=1
		return
	fi
	if [ "$(grep -v '^  replayed ' <<<"$a")" != "$(grep -v '^  replayed ' <<<"$b")" ]; then
		echo "FAIL $name: text reports differ with and without --exact"
		diff <(grep -v '^  replayed ' <<<"$a") <(grep -v '^  replayed ' <<<"$b") | head -10
		fail=1
		return
	fi
	ja=$("$sim" run configs/h100.cfg "$t" "$@" --json 2>/dev/null)
	jb=$("$sim" run configs/h100.cfg "$t" "$@" --json --exact 2>/dev/null)
	leaves <<<"$ja" | grep -v '^engine\.\(derived_ops\|steady_states\)' >"$tmp/a.tsv"
	leaves <<<"$jb" >"$tmp/b.tsv"
	if ! agree "$tmp/a.tsv" "$tmp/b.tsv"; then
		echo "FAIL $name: JSON reports differ with and without --exact"
		fail=1
		return
	fi
	local derived
	derived=$(jq '.engine.derived_ops // 0' <<<"$ja")
	if [ "$want" = some ] && [ "$derived" -eq 0 ]; then
		echo "FAIL $name: expected the replay to derive a steady state (it played every iteration)"
		fail=1
	elif [ "$want" = zero ] && [ "$derived" -ne 0 ]; then
		echo "FAIL $name: expected every iteration played, but $derived ops were derived"
		fail=1
	else
		echo "ok $name: the same report with and without --exact ($derived of $(jq .engine.ops <<<"$ja") ops" \
			"derived; engine activities $(jq .engine.activities <<<"$ja") and $(jq .engine.activities <<<"$jb"))"
	fi
}

# ops.csv and the timeline list the derived ops too: the same rows (their
# times aside, which the timeline holds) and the same events, their numbers
# to the bound above (timestamps are microseconds with 6 decimals).
check_files() {
	local t=$1 m
	shift
	for m in steady exact; do
		opt=()
		[ $m = exact ] && opt=(--exact)
		"$sim" run configs/h100.cfg "$t" "$@" "${opt[@]}" --csv "$tmp/csv_$m" --timeline "$tmp/tl_$m.json" \
			>/dev/null || { echo "FAIL files: run failed"; fail=1; return; }
		awk '{ gsub(/[0-9]+\.[0-9]+(e[-+][0-9]+)?/, "#"); print }' "$tmp/csv_$m/ops.csv" | sort >"$tmp/ops_$m.csv"
	done
	local same
	same=$(jq -n --slurpfile a "$tmp/tl_steady.json" --slurpfile b "$tmp/tl_exact.json" '
		def close($x; $y): if ($x | type) == "object" then ($x | keys) == ($y | keys) and
				all($x | keys[]; . as $k | close($x[$k]; $y[$k]))
			elif ($x | type) == "number" then ($y | type) == "number" and
				(($x - $y) | fabs) <= 2e-9 * ([($x | fabs), ($y | fabs)] | max) + 2e-6
			else $x == $y end;
		def events: [.traceEvents[] | select(.ph == "X")] | sort_by(.pid, .tid, .ts, .name);
		($a[0] | events) as $x | ($b[0] | events) as $y |
		($x | length) == ($y | length) and all(range(0; $x | length); close($x[.]; $y[.]))')
	if ! cmp -s "$tmp/ops_steady.csv" "$tmp/ops_exact.csv" || [ "$same" != true ]; then
		echo "FAIL $(basename "$t") $*: ops.csv or the timeline differ with and without --exact"
		diff "$tmp/ops_steady.csv" "$tmp/ops_exact.csv" | head -6
		fail=1
	else
		echo "ok $(basename "$t") $*: ops.csv ($(($(wc -l <"$tmp/ops_steady.csv") - 1)) ops) and the timeline are" \
			"the same with and without --exact"
	fi
}

if in_part 1; then
	check_files "$tmp/decode64.trace"
	check_files tests/steady/two_streams.trace --no-fold
	check_files "$tmp/pipe.trace"
	check_files "$tmp/pipe_vp2.trace"
	check steady:"$tmp/decode.trace"
	check steady:"$tmp/decode.trace" --no-fold
	check steady:"$tmp/train.trace"
fi
if in_part 2; then
	check steady:"$tmp/decode64.trace" --no-fold --no-memo
	check "$tmp/decode_pp.trace"
	check steady:traces/llama3_8b_train.trace
	check steady:tests/steady/two_streams.trace
	check steady:tests/steady/two_streams.trace --no-fold
	check steady:tests/steady/pipeline_sync.trace --no-fold
	check steady:tests/steady/nested.trace
	check steady:"$tmp/pipe.trace"
	check steady:"$tmp/pipe.trace" --no-fold --no-memo
	check steady:"$tmp/pipe_gpipe.trace"
	check steady:"$tmp/pipe_vp2.trace"
	check steady:"$tmp/pipe_vp8.trace" --no-fold
	check steady:traces/gpt3.trace
	check played:tests/steady/overlap.trace
	check played:"$tmp/decode64.trace" --jitter 0.05 --seed 3
	check played:tests/steady/two_streams.trace --jitter 0.1
fi
exit $fail
