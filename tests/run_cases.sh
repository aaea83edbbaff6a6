#!/usr/bin/env bash
# Runs a bad-input manifest: each case must exit with its code, print exactly
# one line on stderr matching its regex, and nothing on stdout.
# usage: run_cases.sh SIM MANIFEST DIR
set -u
sim=$1 manifest=$2 dir=$3
manifest=$(cd "$(dirname "$manifest")" && pwd)/$(basename "$manifest")
cd "$dir" || exit 1
fails=0 n=0
while IFS=$'\t' read -r code regex args; do
	case "$code" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	eval "set -- $args"
	out=$("$sim" "$@" 2>/tmp/sim_case_err.$$)
	rc=$?
	# ASan's note about SimGrid's context switches (sanitizer builds only;
	# google/sanitizers#189) is not sim's output
	err=$(grep -Ev '^==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return|^False positive error reports may follow$|^For details see https://github.com/google/sanitizers/issues/189$' /tmp/sim_case_err.$$)
	lines=$(printf '%s' "$err" | grep -c '')
	why=""
	[ "$rc" = "$code" ] || why="exit $rc, want $code"
	[ "$lines" = 1 ] || why="$why; $lines stderr lines, want 1"
	printf '%s\n' "$err" | head -n 1 | grep -Eq -- "$regex" || why="$why; stderr does not match /$regex/"
	[ -z "$out" ] || why="$why; stdout not empty"
	case "$err" in *AddressSanitizer*|*runtime\ error*) why="$why; sanitizer report" ;; esac
	if [ -n "$why" ]; then
		fails=$((fails + 1))
		printf 'FAIL sim %s: %s\n     stderr: %s\n' "$args" "$why" "$err"
	fi
done <"$manifest"
rm -f /tmp/sim_case_err.$$
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
