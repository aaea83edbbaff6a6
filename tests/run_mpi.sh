#!/usr/bin/env bash
# `mpirun -n N sim sweep|plan ...` (issue 20; sim/cli/mpi_ranks.c): run as 2 and 3 local MPI ranks, the sweep deals
# its points out by rank (rank r runs r, r+N, ...: shard r/N) and rank 0 gathers the rows and writes the output,
# byte for byte what one process writes: an op grid to a file, with --plot, and to stdout (where no other rank
# writes); a trace sweep with --model and --gen (SimGrid in each rank's point processes); a point whose value
# the config refuses is its row on any number of ranks. sim plan deals out its layouts' replays the same way: its
# CSV and JSON layouts are one process's; --mode serve as ranks is refused. --shard as one of several ranks is
# refused by every rank (exit 2) and writes nothing; an output rank 0 cannot open ends every rank (exit 73). Skipped (77) when sim was built without MPI or MPIEXEC is not there.
# usage: run_mpi.sh SIM REPO_ROOT MPIEXEC
set -u
sim=$1 root=$2 mpiexec=${3:-mpirun}
. "$(dirname "$0")/lib.sh"
"$sim" --version | grep -q ', MPI [0-9]' || { echo "skip: sim built without MPI"; exit 77; }
command -v "$mpiexec" >/dev/null || { echo "skip: no $mpiexec"; exit 77; }
# The sanitizer build: LeakSanitizer matches Open MPI's own leaks (tests/fuzz/lsan.supp) only on whole stacks,
# which the fast unwinder does not give through Open MPI's frames
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
# Open MPI: more ranks than cores on a small machine, and CI runs as root
flags=(--oversubscribe)
[ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
mpi() { # N ARGS...: sim ARGS as N ranks
	local n=$1
	shift
	"$mpiexec" "${flags[@]}" -n "$n" "$sim" "$@"
}
op='gemm m=4096 n=4096 k=4096 dtype=bf16'
grid=(--set compute.sm.count=66,100,132 --set 'memory.device.bandwidth=2TB/s,3.35TB/s,5GB')
model='gpt --layers 2 --hidden 1024 --heads 16 --vocab 32000 --seq 1024 --dp 2 --global-batch 4'

"$sim" sweep configs/h100.cfg --op "$op" "${grid[@]}" -o "$tmp/one.csv" --plot "$tmp/one.svg" 2>/dev/null ||
	fail "sweep in one process"
grep -q ',5GB,.*is a size' "$tmp/one.csv" || fail "the refused value is not its point's row"
"$sim" sweep configs/h100.cfg --model "$model" --gen tp=1,2 --set compute.sm.count=66,132 -o "$tmp/tone.csv" \
	2>/dev/null || fail "sweep --model in one process"
for n in 2 3; do
	mpi "$n" sweep configs/h100.cfg --op "$op" "${grid[@]}" -o "$tmp/n$n.csv" --plot "$tmp/n$n.svg" \
		2>"$tmp/n$n.err" || fail "$n ranks: sweep: $(head -c 300 "$tmp/n$n.err")"
	cmp -s "$tmp/one.csv" "$tmp/n$n.csv" || fail "$n ranks: the CSV differs from one process's"
	cmp -s "$tmp/one.svg" "$tmp/n$n.svg" || fail "$n ranks: the plot differs from one process's"
	mpi "$n" sweep configs/h100.cfg --op "$op" "${grid[@]}" >"$tmp/n$n.stdout" 2>/dev/null ||
		fail "$n ranks: sweep to stdout"
	cmp -s "$tmp/one.csv" "$tmp/n$n.stdout" || fail "$n ranks: stdout is not one process's CSV (once)"
	mpi "$n" sweep configs/h100.cfg --model "$model" --gen tp=1,2 --set compute.sm.count=66,132 \
		-o "$tmp/tn$n.csv" 2>/dev/null || fail "$n ranks: sweep --model"
	cmp -s "$tmp/tone.csv" "$tmp/tn$n.csv" || fail "$n ranks: the --model CSV differs from one process's"
done
# sim plan: the layouts' replays dealt out, the ranking and its outputs rank 0's
plan=(plan configs/h100.cfg llama3-8b --layers 2 --gpus 8 --seq 1024 --global-batch 32 --tp 1,2 --micro-batch 1,2)
"$sim" "${plan[@]}" --csv "$tmp/plan1.csv" --json >"$tmp/plan1.json" 2>/dev/null || fail "plan in one process"
for n in 2 3; do
	mpi "$n" "${plan[@]}" --csv "$tmp/plan$n.csv" --json >"$tmp/plan$n.json" 2>/dev/null || fail "$n ranks: plan"
	cmp -s "$tmp/plan1.csv" "$tmp/plan$n.csv" || fail "$n ranks: the plan's CSV differs from one process's"
	[ "$(jq -c .layouts "$tmp/plan1.json")" = "$(jq -c .layouts "$tmp/plan$n.json")" ] ||
		fail "$n ranks: the plan's layouts (JSON) differ from one process's"
done
mpi 2 plan configs/h100.cfg llama3-8b --gpus 8 --mode serve --slo-ttft 500ms >/dev/null 2>"$tmp/serve.err"
rc=$?
[ "$rc" = 2 ] && grep -q 'mode serve runs in one process' "$tmp/serve.err" ||
	fail "plan --mode serve as 2 ranks: exit $rc, $(head -c 200 "$tmp/serve.err")"
mpi 2 sweep configs/h100.cfg --op "$op" "${grid[@]}" --shard 0/2 -o "$tmp/shard.csv" 2>"$tmp/shard.err"
rc=$?
[ "$rc" = 2 ] || fail "--shard as one of 2 ranks: exit $rc, expected 2"
[ "$(grep -o 'shard 0/2 as one of 2 MPI ranks' "$tmp/shard.err" | wc -l)" = 2 ] || # the ranks' lines may interleave
	fail "--shard as one of 2 ranks: expected the line from each rank: $(head -c 300 "$tmp/shard.err")"
[ -e "$tmp/shard.csv" ] && fail "--shard as one of 2 ranks: wrote its output"
# an output that only rank 0 opens and cannot: every rank exits 73 (none left waiting in a collective)
timeout 120 "$mpiexec" "${flags[@]}" -n 2 "$sim" sweep configs/h100.cfg --op "$op" "${grid[@]}" \
	-o "$tmp/no/such/dir.csv" >/dev/null 2>"$tmp/open.err"
rc=$?
[ "$rc" = 73 ] || fail "an output rank 0 cannot open, as 2 ranks: exit $rc, expected 73"
ls "$tmp" | grep -q '\.tmp' && fail "a temporary file is left: $(ls "$tmp")"
finish mpi
