#!/usr/bin/env bash
# Golden outputs: tests/golden/NAME.cmd holds the arguments of `sim` (run
# from the repository root); its stdout must equal NAME.out byte for byte.
# usage: run_golden.sh SIM REPO_ROOT [--update]
set -u
sim=$1 root=$2 update=${3:-}
cd "$root" || exit 1
# progress lines depend on the wall clock (a slow sanitizer build): none here
export SIM_PROGRESS=0
fails=0 n=0
for cmd in tests/golden/*.cmd; do
	n=$((n + 1))
	want=${cmd%.cmd}.out
	eval "set -- $(cat "$cmd")"
	# (without ASan's note about SimGrid's context switches, sanitizer builds only)
	got=$({ "$sim" "$@" 2>&1; echo "exit $?"; } |
		grep -Ev '^==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return|^False positive error reports may follow$|^For details see https://github.com/google/sanitizers/issues/189$')
	if [ "$update" = --update ]; then
		printf '%s\n' "$got" >"$want"
		continue
	fi
	if ! diff -u "$want" <(printf '%s\n' "$got") >/tmp/golden_diff.$$; then
		fails=$((fails + 1))
		echo "FAIL $cmd (run with --update after checking the change):"
		head -n 40 /tmp/golden_diff.$$
	fi
done
rm -f /tmp/golden_diff.$$
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
