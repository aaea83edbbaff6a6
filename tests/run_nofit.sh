#!/usr/bin/env bash
# A step that does not fit its device is still timed (issue 21): the report
# on stdout with its step time and a DOES NOT FIT line, the JSON with
# memory.fits false, one line on stderr naming file, line and rank, exit 3.
# Usage: run_nofit.sh SIM ROOT
set -u
sim=$1 root=$2
cd "$root/tests/bad" || exit 1
fail=0
out=$("$sim" run ../../configs/h100.cfg memory_too_big.trace 2>/tmp/nofit.$$)
rc=$?
# less ASan's note about SimGrid's context switches (sanitizer builds only)
err=$(grep -Ev '^==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return|^False positive error reports may follow$|^For details see https://github.com/google/sanitizers/issues/189$' /tmp/nofit.$$)
rm -f /tmp/nofit.$$
want='memory_too_big.trace:7: rank 16 does not fit: it needs 80.0 GiB of device memory but ../../configs/h100.cfg has 79.6 GiB (activations 50.0 GiB, optimizer 20.0 GiB, params 10.0 GiB)'
[ "$rc" = 3 ] || { echo "FAIL exit $rc, want 3"; fail=1; }
[ "$err" = "$want" ] || { echo "FAIL stderr: $err"; fail=1; }
grep -q '^  step time ' <<<"$out" || { echo "FAIL no step time in the report"; fail=1; }
grep -qF "  DOES NOT FIT $want (timed as if it did)" <<<"$out" || { echo "FAIL no DOES NOT FIT line"; fail=1; }
json=$("$sim" run ../../configs/h100.cfg memory_too_big.trace --json 2>/dev/null)
[ "$(jq -r '.memory.fits, (.time_s > 0)' <<<"$json" | tr '\n' ' ')" = "false true " ] ||
	{ echo "FAIL json: $(jq -c .memory <<<"$json")"; fail=1; }
[ $fail = 0 ] && echo "ok a step that does not fit is timed, marked, and exits 3"
exit $fail
