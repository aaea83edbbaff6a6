#!/usr/bin/env bash
# `sim run --timeline-ranks` on a folded replay (issue 21): the timeline holds every rank asked for. A rank that was
# not replayed (a symmetric copy of a representative) gets its representative's ops, marked args.replayed_as, and a
# note on stderr says so; its track equals the one `--no-fold` replays for it (the reference: every rank replayed).
# A rank that is a representative has no replayed_as and no note.
# usage: run_timeline_ranks.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
. "$(dirname "$0")/lib.sh"

tr=traces/dp_step_16.trace # the docs' example (docs/cli.md): 16 data-parallel ranks, folded onto one
"$sim" run configs/h100.cfg $tr --timeline "$tmp/fold.json" --timeline-ranks 0-7 >/dev/null 2>"$tmp/fold.err" ||
	fail "sim run --timeline-ranks 0-7"
"$sim" run configs/h100.cfg $tr --timeline "$tmp/all.json" --timeline-ranks 0-7 --no-fold >/dev/null 2>"$tmp/all.err" ||
	fail "sim run --timeline-ranks 0-7 --no-fold"
[ "$(jq -c '[.traceEvents[] | select(.ph == "X") | .pid] | unique' "$tmp/fold.json")" = "[0,1,2,3,4,5,6,7]" ] ||
	fail "folded: the timeline does not hold ranks 0-7"
# a rank's track: its events by start (the file's order is the order the replay recorded them, which is not the
# same folded and not folded where two streams of a rank end at one instant; a trace viewer orders by time)
track() { jq -c --argjson p "$2" '[.traceEvents[] | select(.ph == "X" and .pid == $p) | [.name, .ts, .dur, .args.op]] | sort_by(.[1], .[0], .[3])' "$1"; }
for p in 0 5 7; do
	[ "$(track "$tmp/fold.json" $p)" = "$(track "$tmp/all.json" $p)" ] || fail "rank $p: folded track differs from --no-fold's"
	[ "$(track "$tmp/fold.json" $p)" != "[]" ] || fail "rank $p: empty track"
done
[ "$(jq '[.traceEvents[] | select(.ph == "X" and .pid == 5) | .args.replayed_as] | unique' -c "$tmp/fold.json")" = "[0]" ] ||
	fail "rank 5: not marked replayed_as 0"
[ "$(jq '[.traceEvents[] | select(.ph == "X" and .pid == 0) | .args.replayed_as] | unique' -c "$tmp/fold.json")" = "[null]" ] ||
	fail "rank 0 (replayed) marked replayed_as"
sim_err "$tmp/fold.err" | grep -q '^sim run: note: 7 of the 8 ranks of --timeline-ranks were not replayed' ||
	fail "no note for the folded ranks: $(sim_err "$tmp/fold.err")"
[ -z "$(sim_err "$tmp/all.err")" ] || fail "--no-fold printed: $(sim_err "$tmp/all.err")"
# only representatives asked for: no note (SIM_PROGRESS=0: the sanitizer build is slow enough to print progress)
SIM_PROGRESS=0 "$sim" run configs/h100.cfg traces/gpt3.trace --timeline "$tmp/g.json" --timeline-ranks 0,64 >/dev/null 2>"$tmp/g.err" ||
	fail "sim run gpt3 --timeline-ranks 0,64"
[ -z "$(sim_err "$tmp/g.err")" ] || fail "representatives only: $(sim_err "$tmp/g.err")"
finish timeline_ranks
