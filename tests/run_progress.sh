#!/usr/bin/env bash
# Progress on stderr for every command that runs long (issue 21), under the
# policy of sim/base/progress.h: SIM_PROGRESS=S asks for a line every S s;
# by default a log gets none for work under 10 s; a terminal gets one line
# rewritten in place and cleared at the end; stdout never changes.
# usage: run_progress.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"
# has FILE REGEX WHAT
has() { grep -qE "$2" "$1" || { fail "$3"; head -n 5 "$1"; }; }

# run: lines while the replay goes, the report on stdout unchanged (docs/cli.md's command)
SIM_PROGRESS=0.05 "$sim" run configs/h100.cfg traces/gpt3.trace >"$tmp/run.out" 2>"$tmp/run.err" || fail "run exited $?"
has "$tmp/run.err" '^sim run: [0-9.]+ s wall, [0-9]+ ops replayed, simulated time ' "sim run printed no progress line"
SIM_PROGRESS=0 "$sim" run configs/h100.cfg traces/gpt3.trace >"$tmp/run0.out" 2>"$tmp/run0.err"
cmp -s "$tmp/run.out" "$tmp/run0.out" || fail "progress changed sim run's stdout"
# (a line of sim's own: the sanitizer build adds ASan's notes to stderr)
grep -q '^sim ' "$tmp/run0.err" && fail "SIM_PROGRESS=0 still printed: $(grep -m1 '^sim ' "$tmp/run0.err")"
# the default in a log: nothing for a run of a second
env -u SIM_PROGRESS "$sim" run configs/h100.cfg traces/allreduce_8.trace >/dev/null 2>"$tmp/def.err"
grep -q '^sim ' "$tmp/def.err" && fail "a short run wrote to a log: $(grep -m1 '^sim ' "$tmp/def.err")"
# a value that is not a number is the default (no error, no line for a short run)
SIM_PROGRESS=fast "$sim" run configs/h100.cfg traces/allreduce_8.trace >/dev/null 2>"$tmp/bad.err" || fail "SIM_PROGRESS=fast failed the run"
grep -q '^sim ' "$tmp/bad.err" && fail "SIM_PROGRESS=fast printed: $(grep -m1 '^sim ' "$tmp/bad.err")"

# compare over chips: a line per replayed chip when asked
SIM_PROGRESS=0.000001 "$sim" compare configs/h100.cfg configs/a100.cfg traces/allreduce_8.trace >/dev/null 2>"$tmp/cmp.err" ||
	fail "compare exited $?"
has "$tmp/cmp.err" '^sim compare: 2/2 chips replayed' "sim compare printed no progress"

# sweep: points done (a line at each: a point of two takes about a millisecond)
SIM_PROGRESS=0.000001 "$sim" sweep configs/h100.cfg --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' \
	--set compute.sm.count=66,132 -o "$tmp/s.csv" 2>"$tmp/sw.err" || fail "sweep exited $?"
has "$tmp/sw.err" '^sim sweep: 2/2 points' "sim sweep printed no progress"

# serve: the rate search, one line per run of it
SIM_PROGRESS=0.001 "$sim" serve configs/h100.cfg llama3-8b --requests 200 --find-rate --slo-ttft 500ms \
	--slo-tpot 50ms >/dev/null 2>"$tmp/sv.err" || fail "serve exited $?"
has "$tmp/sv.err" '^sim serve: rate search, run 2: between [0-9.e+]+ and [0-9.e+]+ requests/s' "sim serve --find-rate printed no progress"

# a terminal (script(1)'s pseudo-terminal): the line is rewritten in place and cleared
if command -v script >/dev/null; then
	SIM_PROGRESS=0.05 script -qec "'$sim' run configs/h100.cfg traces/gpt3.trace >/dev/null" /dev/null >"$tmp/tty" </dev/null
	if ! grep -q $'\r\033\\[Ksim run: ' "$tmp/tty"; then
		fail "on a terminal, sim run did not rewrite its progress line"
	fi
	# the last thing on the terminal erases the line (nothing left over the report)
	tail -c 4 "$tmp/tty" | od -c | grep -q '\\r 033   \[   K' || fail "the terminal's progress line was not cleared"
else
	echo "(script(1) missing: terminal case not run)"
fi
finish progress
