#!/usr/bin/env bash
# A replay that needs more SimGrid actors than two memory mappings each allow
# (issue 22): an unfoldable point-to-point chain over 33000 ranks, one actor
# each. Each actor's stack with its guard page took two of the 65530 mappings
# Linux allows a process (vm.max_map_count), so past about 32,700 actors
# SimGrid aborted with a backtrace (exit 134); the stacks now go without
# guard pages when the actors would not fit. It must finish, exit 0, and time
# the chain: every transfer waits for the next rank's, 32999 in a row.
# With thread contexts (SIM_SANITIZE builds, third argument "sanitize") each
# actor is a thread with mappings of its own: the replay is refused before it
# starts, with one line and exit 65 (tests/bad holds the other refusals).
# Usage: run_many_actors.sh SIM ROOT [sanitize]
set -u
sim=$1 root=$2 mode=${3:-}
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
chain() { # ranks file
	printf 'simtrace 1\nranks %d\nlayout pp=%d\non pp!=last {\n  send peer=pp+1 bytes=1MiB\n}\non pp!=0 {\n  recv peer=pp-1 bytes=1MiB\n}\n' "$1" "$1" >"$2"
}
chain 33000 "$tmp/ring.trace"
fail=0
out=$("$sim" run "$root/configs/h100.cfg" "$tmp/ring.trace" --json 2>"$tmp/err")
rc=$?
err=$(grep -Ev '^==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return|^False positive error reports may follow$|^For details see https://github.com/google/sanitizers/issues/189$' "$tmp/err")
if [ "$mode" = sanitize ]; then
	[ "$rc" = 65 ] || { echo "FAIL exit $rc, want 65 (thread contexts)"; fail=1; }
	grep -Eq "ring\.trace: the replay would need [0-9]+ SimGrid actors, more than this build's thread contexts can map \(vm\.max_map_count [0-9]+; a build without SIM_SANITIZE runs it\)$" <<<"$err" ||
		{ echo "FAIL stderr: $err"; fail=1; }
	[ $fail = 0 ] && echo "ok 33000 actors are refused with thread contexts, one line, exit 65"
	exit $fail
fi
[ "$rc" = 0 ] || { echo "FAIL exit $rc: $err"; fail=1; }
[ -z "$err" ] || { echo "FAIL stderr: $err"; fail=1; }
[ "$(jq '.engine.ops' <<<"$out")" = 65998 ] || { echo "FAIL ops: $(jq -c .engine <<<"$out")"; fail=1; }
# 32999 transfers one after the other, 4124 of them between nodes (nodes of
# 8): the step is 28875 transfers inside a node and 4124 between, whose times
# chains of 8 ranks (7 inside) and 9 (one more, between) give
chain 8 "$tmp/c8.trace"
chain 9 "$tmp/c9.trace"
t8=$("$sim" run "$root/configs/h100.cfg" "$tmp/c8.trace" --json 2>/dev/null | jq '.time_s')
t9=$("$sim" run "$root/configs/h100.cfg" "$tmp/c9.trace" --json 2>/dev/null | jq '.time_s')
t=$(jq '.time_s' <<<"$out")
awk -v t="$t" -v a="$t8" -v b="$t9" 'BEGIN { w = 28875 * a / 7 + 4124 * (b - a); exit !(t > 0 && (t - w) / w < 1e-6 && (w - t) / w < 1e-6) }' ||
	{ echo "FAIL step time $t s for the chain of 33000, want 28875 x $t8/7 + 4124 x ($t9 - $t8)"; fail=1; }
[ $fail = 0 ] && echo "ok a chain over 33000 ranks (33000 actors) replays: $t s"
exit $fail
